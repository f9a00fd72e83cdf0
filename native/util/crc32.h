// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320; the zlib / PNG checksum) of a byte
// range: the integrity check of shard partials and round requests (exec/shard.cpp,
// exec/order_rounds.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace tet {

inline uint32_t crc32(const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

}  // namespace tet
