// Width tiers: an Int-stored block's rows decoded at the narrowest lane width that holds their
// range, as unsigned 8 / 16 / 32 / 64-bit lanes plus one offset per block (value = offset +
// lane). Integer kernels run on the tier, so narrow blocks touch fewer bytes per row.
//
//   Constant  8-bit zero lanes, offset = the value
//   Sequence  lanes = value - min, width by the block's span (128-bit checked); a wrapping
//             sequence decodes wide
//   For       the packed residuals straight into the lanes their width fits, offset = base
//   ForRadix  the residual digits into the lanes the radix fits, offset = base
//   Plain     64-bit lanes read in place from the payload (no copy), offset 0
//   Delta, Rle  decoded wide into the scratch, offset 0
//
// At 8 / 16 / 32 bits value = offset + lane holds exactly (no overflow); at 64 bits it wraps
// like i64 addition. A null row's lane is 0; kernels read validity from the cell.
#pragma once
#include <cstdint>

#include "cells/cell.h"

namespace tet::cells {

struct IntTier {
  unsigned bits = 64;           // 8, 16, 32 or 64
  int64_t offset = 0;
  const void* lanes = nullptr;  // count lanes of uint{bits}_t
  uint32_t count = 0;

  template <class Lane>
  const Lane* as() const { return static_cast<const Lane*>(lanes); }
  int64_t value(uint32_t i) const;  // offset + lane i (for tests and cold paths)
};

// Reusable decode space for one block; a caller keeps one and passes it to every block.
// Raw bytes, so that lanes of any width may live in it.
struct TierScratch {
  alignas(64) unsigned char bytes[kBlockLanes * 8];
  template <class Lane>
  Lane* as() { return reinterpret_cast<Lane*>(bytes); }
};

// The narrowest tier width (8, 16, 32, 64) that holds every lane in [0, span].
unsigned tier_bits(uint64_t span);

// Rows [start, start + count) of Int-stored block `c` (count ≤ len - start). The lanes point into
// `scratch` or, for Plain, into the payload; valid until `scratch` is reused or the cell dies.
IntTier decode_tier(const Cell& c, uint32_t start, uint32_t count, TierScratch& scratch);

}  // namespace tet::cells
