// What the tables-region tests share: a RegionWriter's bytes in memory, and a 64-aligned copy of
// them (the alignment a file mapping gives the region).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "cells/region.h"

namespace tet_test {

inline std::vector<uint8_t> region_bytes(tet::cells::RegionWriter& w) {
  std::vector<uint8_t> out;
  w.write([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

struct AlignedBytes {
  explicit AlignedBytes(const std::vector<uint8_t>& b) : buf(b.size() + 64) {
    p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t(63));
    if (!b.empty()) std::memcpy(p, b.data(), b.size());
    len = b.size();
  }
  std::vector<uint8_t> buf;
  uint8_t* p;
  uint64_t len;
};

}  // namespace tet_test
