// What every compare kernel (numeric kernels.h, string str_kernels.h) returns: a 2048-bit row
// mask and how it was obtained.
#pragma once
#include <cstdint>

#include "cells/cell.h"
#include "util/bits.h"

namespace tet::cells {

// AllTrue: every present row matches and AllFalse: none does, both settled without decoding the
// payload (zone map, Constant / Sequence bounds, a dictionary); Decoded: the rows were looked at.
enum class Resolved : uint8_t { AllTrue, AllFalse, Decoded };

// One bit per row of a block (bit i % 64 of word i / 64 = row i matches); bits at and past len are 0.
struct BlockMask {
  uint64_t words[kBlockLanes / 64] = {};
  bool test(uint32_t i) const { return (words[i >> 6] >> (i & 63)) & 1; }
  void set(uint32_t i) { words[i >> 6] |= uint64_t(1) << (i & 63); }
  uint64_t count() const {
    uint64_t n = 0;
    for (uint64_t w : words) n += static_cast<uint64_t>(tet::popcount64(w));
    return n;
  }
};

}  // namespace tet::cells
