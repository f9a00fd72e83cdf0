// For (frame of reference): row i = base + residual_i, base = the smallest present value in
// meta[0], residuals bit-packed (bitpack.h) at the width of the block's actual range (meta[1],
// 0..64). A null row packs residual 0, so a sum over the packed residuals needs no mask.
#include <vector>

#include "cells/bitpack.h"
#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"

namespace tet::cells {

namespace {

bool for_legal(Physical p) { return p == Physical::Int; }

void for_validate(const Cell& c, const DecodeContext&) {
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "for");
  if (c.meta[1] > kMaxPackWidth) throw_invalid("for block residual width " + std::to_string(c.meta[1]) + " above 64");
  expect_data_bytes(c, packed_bytes(c.len, packed_width(c)), "for");
}

void for_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint64_t*>(out);
  unpack_range(payload_words(c), packed_width(c), start, count, o);
  const uint64_t base = c.meta[0];
  for (uint32_t i = 0; i < count; ++i) o[i] += base;  // wraps like i64 addition
  zero_null_rows(c.validity(), start, count, o);
}

struct Frame {
  uint64_t base;
  unsigned width;
};

Frame frame_of(const Staged& s) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    const int64_t v = as_i64(s.lanes[i]);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (lo > hi) return {0, 0};  // every row null
  return {bits_of(lo), bit_width(bits_of(hi) - bits_of(lo))};
}

}  // namespace

const EncodingOps kForOps{Enc::For, for_legal, for_validate, for_decode};

uint64_t for_fit(const Staged& s) {
  if (s.physical() != Physical::Int) return kNoFit;
  return packed_bytes(s.len, frame_of(s).width);
}

CellRef for_encode(const Staged& s) {
  if (s.physical() != Physical::Int) throw Error(Code::TET_INTERNAL, "cells: for holds int-stored kinds only");
  const Frame f = frame_of(s);
  CellRef c = new_block(s, Enc::For, packed_bytes(s.len, f.width));
  uint64_t residuals[kBlockLanes];
  for (uint32_t i = 0; i < s.len; ++i) residuals[i] = s.row_valid(i) ? s.lanes[i] - f.base : 0;
  pack_residuals(residuals, s.len, f.width, block_words(c));
  Cell* m = c.mutable_cell();
  m->meta[0] = f.base;
  m->meta[1] = f.width;
  return c;
}

}  // namespace tet::cells
