#include "cells/bitpack.h"

#include <array>
#include <cstring>
#include <utility>

namespace tet::cells {

void pack_residuals(const uint64_t* residuals, uint32_t n, unsigned w, uint64_t* out) {
  if (w == 0) return;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t* g = out + uint64_t(i / kGroupLanes) * w;
    const unsigned bit = (i % kGroupLanes) * w, s = bit & 63;
    uint64_t* p = g + (bit >> 6);
    p[0] |= residuals[i] << s;
    if (s + w > 64) p[1] |= residuals[i] >> (64 - s);
  }
}

namespace {

template <unsigned W, class Lane>
void unpack_groups_w(const uint64_t* __restrict words, uint32_t g0, uint32_t ng, Lane* __restrict out) {
  const uint64_t* __restrict in = words + uint64_t(g0) * W;
  for (uint32_t g = 0; g < ng; ++g, in += W, out += kGroupLanes) {
    if constexpr (W == 0) {
      std::memset(out, 0, kGroupLanes * sizeof(Lane));
    } else {
#pragma GCC unroll 64
      for (unsigned j = 0; j < kGroupLanes; ++j) {
        const unsigned bit = j * W, s = bit & 63;
        const uint64_t* p = in + (bit >> 6);
        uint64_t v = p[0] >> s;
        if (s + W > 64) v |= p[1] << (64 - s);
        if constexpr (W < 64) v &= (uint64_t(1) << W) - 1;
        out[j] = static_cast<Lane>(v);
      }
    }
  }
}

template <class Lane>
using UnpackFn = void (*)(const uint64_t*, uint32_t, uint32_t, Lane*);

// Only widths the lane can hold get an entry (the others would truncate).
template <unsigned W, class Lane>
constexpr UnpackFn<Lane> unpack_entry() {
  if constexpr (W <= 8 * sizeof(Lane)) return &unpack_groups_w<W, Lane>;
  else return nullptr;
}

template <class Lane, unsigned... W>
constexpr std::array<UnpackFn<Lane>, sizeof...(W)> unpack_table(std::integer_sequence<unsigned, W...>) {
  return {unpack_entry<W, Lane>()...};
}

template <class Lane>
UnpackFn<Lane> unpacker(unsigned w) {
  static constexpr auto kTable = unpack_table<Lane>(std::make_integer_sequence<unsigned, kMaxPackWidth + 1>{});
  return kTable[w];
}

}  // namespace

template <class Lane>
void unpack_groups(const uint64_t* words, unsigned w, uint32_t g0, uint32_t ng, Lane* out) {
  unpacker<Lane>(w)(words, g0, ng, out);
}

template <class Lane>
void unpack_range(const uint64_t* words, unsigned w, uint32_t start, uint32_t count, Lane* out) {
  if (count == 0) return;
  const UnpackFn<Lane> fn = unpacker<Lane>(w);
  Lane group[kGroupLanes];
  uint32_t row = start, left = count;
  const uint32_t head = row % kGroupLanes;
  if (head != 0 || left < kGroupLanes) {
    // A leading partial group goes through a one-group buffer.
    fn(words, row / kGroupLanes, 1, group);
    const uint32_t n = left < kGroupLanes - head ? left : kGroupLanes - head;
    std::memcpy(out, group + head, n * sizeof(Lane));
    out += n, row += n, left -= n;
  }
  const uint32_t full = left / kGroupLanes;
  if (full) {
    fn(words, row / kGroupLanes, full, out);
    out += uint64_t(full) * kGroupLanes, row += full * kGroupLanes, left -= full * kGroupLanes;
  }
  if (left) {
    fn(words, row / kGroupLanes, 1, group);
    std::memcpy(out, group, left * sizeof(Lane));
  }
}

template void unpack_groups<uint8_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint8_t*);
template void unpack_groups<uint16_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint16_t*);
template void unpack_groups<uint32_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint32_t*);
template void unpack_groups<uint64_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint64_t*);
template void unpack_range<uint8_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint8_t*);
template void unpack_range<uint16_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint16_t*);
template void unpack_range<uint32_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint32_t*);
template void unpack_range<uint64_t>(const uint64_t*, unsigned, uint32_t, uint32_t, uint64_t*);

}  // namespace tet::cells
