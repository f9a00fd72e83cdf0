// Delta: successive differences, themselves frame-of-reference packed. meta[0] = row 0's value,
// meta[1] = residual width; payload word 0 = the smallest difference (the differences' base),
// then the len - 1 residuals (difference_i - base, i = 1..len-1) bit-packed (bitpack.h). Row i =
// row i-1 + base + residual_{i-1}, all wrapping like i64 addition. Null rows carry the previous
// present value (numeric.h carry_fill) so they neither widen the differences nor break the
// drift; decode zeroes them.
#include <algorithm>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"

namespace tet::cells {

namespace {

uint64_t delta_bytes(uint64_t len, unsigned w) { return 8 + packed_bytes(len - 1, w); }

bool delta_legal(Physical p) { return p == Physical::Int; }

void delta_validate(const Cell& c, const DecodeContext&) {
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "delta");
  if (c.meta[1] > kMaxPackWidth) throw_invalid("delta block residual width " + std::to_string(c.meta[1]) + " above 64");
  expect_data_bytes(c, delta_bytes(c.len, packed_width(c)), "delta");
}

void delta_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint64_t*>(out);
  delta_scan(c, start + count, [&](uint32_t row, uint64_t v) {
    if (row >= start) o[row - start] = v;
  });
  zero_null_rows(c.validity(), start, count, o);
}

struct Steps {
  uint64_t base;
  unsigned width;
};

Steps steps_of(const uint64_t* filled, uint32_t len) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 1; i < len; ++i) {
    const int64_t d = as_i64(filled[i] - filled[i - 1]);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  if (len < 2) return {0, 0};
  return {bits_of(lo), bit_width(bits_of(hi) - bits_of(lo))};
}

}  // namespace

const EncodingOps kDeltaOps{Enc::Delta, delta_legal, delta_validate, delta_decode};

uint64_t delta_fit(const Staged& s) {
  if (s.physical() != Physical::Int) return kNoFit;
  uint64_t filled[kBlockLanes];
  carry_fill(s, filled);
  return delta_bytes(s.len, steps_of(filled, s.len).width);
}

CellRef delta_encode(const Staged& s) {
  if (s.physical() != Physical::Int) throw Error(Code::TET_INTERNAL, "cells: delta holds int-stored kinds only");
  uint64_t filled[kBlockLanes];
  carry_fill(s, filled);
  const Steps st = steps_of(filled, s.len);
  CellRef c = new_block(s, Enc::Delta, delta_bytes(s.len, st.width));
  uint64_t* words = block_words(c);
  words[0] = st.base;
  uint64_t residuals[kBlockLanes];
  for (uint32_t i = 1; i < s.len; ++i) residuals[i - 1] = filled[i] - filled[i - 1] - st.base;
  pack_residuals(residuals, s.len - 1, st.width, words + 1);
  Cell* m = c.mutable_cell();
  m->meta[0] = filled[0];
  m->meta[1] = st.width;
  return c;
}

}  // namespace tet::cells
