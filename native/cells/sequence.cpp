// Sequence: an arithmetic progression, row i = first + i * step (meta[0], meta[1]), no data
// payload. The progression wraps like i64 addition, so any rows whose successive differences
// are equal modulo 2^64 fit; such a wrapping block is legal and decodes wide (tiers.h).
#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"

namespace tet::cells {

namespace {

bool sequence_legal(Physical p) { return p == Physical::Int; }

void sequence_validate(const Cell& c, const DecodeContext&) {
  if (c.has(attr::kHasZonemap)) throw_invalid("sequence block carries a zone map (its bounds follow from first and step)");
  expect_meta_zero(c, 2, 3, "sequence");
  expect_data_bytes(c, 0, "sequence");
}

uint64_t row_value(const Cell& c, uint64_t row) { return c.meta[0] + row * c.meta[1]; }  // wraps mod 2^64

void sequence_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint64_t*>(out);
  uint64_t v = row_value(c, start);
  for (uint32_t i = 0; i < count; ++i, v += c.meta[1]) o[i] = v;
  zero_null_rows(c.validity(), start, count, o);
}

// first and step of the progression through the present rows, when there is one.
bool find_progression(const Staged& s, uint64_t* first, uint64_t* step) {
  if (s.physical() != Physical::Int) return false;
  uint32_t i0 = 0;
  while (i0 < s.len && !s.row_valid(i0)) ++i0;
  uint32_t i1 = i0 + 1;
  while (i1 < s.len && !s.row_valid(i1)) ++i1;
  if (i0 >= s.len) {
    *first = 0, *step = 0;
    return true;
  }
  if (i1 >= s.len) {
    *first = s.lanes[i0], *step = 0;
    return true;
  }
  if (i1 == i0 + 1) {
    *step = s.lanes[i1] - s.lanes[i0];  // modulo 2^64: wrapping progressions fit too
  } else {
    // Across a gap of nulls the step must divide the exact difference.
    const __int128 diff = __int128(as_i64(s.lanes[i1])) - __int128(as_i64(s.lanes[i0]));
    const __int128 gap = i1 - i0;
    if (diff % gap != 0) return false;
    const __int128 q = diff / gap;
    if (q < INT64_MIN || q > INT64_MAX) return false;
    *step = static_cast<uint64_t>(static_cast<int64_t>(q));
  }
  *first = s.lanes[i0] - uint64_t(i0) * *step;
  uint64_t v = *first;
  for (uint32_t i = 0; i < s.len; ++i, v += *step)
    if (s.row_valid(i) && s.lanes[i] != v) return false;
  return true;
}

}  // namespace

const EncodingOps kSequenceOps{Enc::Sequence, sequence_legal, sequence_validate, sequence_decode};

SequenceSpan sequence_span(const Cell& c) {
  const __int128 first = as_i64(c.meta[0]);
  const __int128 last = first + __int128(as_i64(c.meta[1])) * __int128(c.len - 1);
  SequenceSpan r;
  if (last < INT64_MIN || last > INT64_MAX) {
    r.wraps = true;
    return r;
  }
  r.lo = static_cast<int64_t>(first < last ? first : last);
  r.hi = static_cast<int64_t>(first < last ? last : first);
  return r;
}

uint64_t sequence_fit(const Staged& s) {
  uint64_t first, step;
  return find_progression(s, &first, &step) ? 0 : kNoFit;
}

CellRef sequence_encode(const Staged& s) {
  uint64_t first, step;
  if (!find_progression(s, &first, &step)) throw Error(Code::TET_INTERNAL, "cells: sequence over rows that are no progression");
  CellRef c = new_block(s, Enc::Sequence, 0);
  Cell* m = c.mutable_cell();
  m->meta[0] = first;
  m->meta[1] = step;
  return c;
}

}  // namespace tet::cells
