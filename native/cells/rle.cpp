// Rle: runs of one value. meta[0] = run count n; payload = n run values (i64 / f64 lanes, or one
// byte each for bool; padded to 8 bytes) then n run ends as u16 (the exclusive end row of each
// run: strictly increasing, the last = len; padded to 8). Ends rather than lengths make a decode
// at a random row one binary search instead of a prefix scan. Null rows carry a neighbour's
// value (numeric.h carry_fill) so they do not break runs; decode zeroes them.
#include <algorithm>
#include <cstring>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

size_t run_value_bytes(Physical p) { return p == Physical::Bool ? 1 : 8; }

uint64_t values_bytes(Physical p, uint64_t runs) { return align8(runs * run_value_bytes(p)); }
uint64_t rle_bytes(Physical p, uint64_t runs) { return values_bytes(p, runs) + align8(runs * 2); }

const uint16_t* run_ends(const Cell& c) {
  return reinterpret_cast<const uint16_t*>(c.payload + values_bytes(physical_of(c.kind_v()), c.meta[0]));
}

bool rle_legal(Physical p) { return p == Physical::Bool || p == Physical::Int || p == Physical::Float; }

void rle_validate(const Cell& c, const DecodeContext&) {
  const Physical p = physical_of(c.kind_v());
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "rle");
  const uint64_t runs = c.meta[0];
  if (runs == 0 || runs > c.len)
    throw_invalid("rle block of " + std::to_string(c.len) + " rows claims " + std::to_string(runs) + " runs");
  expect_data_bytes(c, rle_bytes(p, runs), "rle");
  if (p == Physical::Float) expect_nan_count_bound(c, "rle");
  else expect_meta_zero(c, 1, 1, "rle");
  const uint16_t* ends = run_ends(c);
  uint64_t prev = 0;
  for (uint64_t k = 0; k < runs; ++k) {
    if (ends[k] <= prev) throw_invalid("rle run ends do not increase at run " + std::to_string(k));
    prev = ends[k];
  }
  if (prev != c.len)
    throw_invalid("rle runs cover " + std::to_string(prev) + " rows of a " + std::to_string(c.len) + "-row block");
  if (p == Physical::Bool)
    for (uint64_t k = 0; k < runs; ++k)
      if (c.payload[k] > 1) throw_invalid("rle bool run value is neither 0 nor 1");
}

void rle_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  if (count == 0) return;
  const Physical p = physical_of(c.kind_v());
  const uint16_t* ends = run_ends(c);
  const uint64_t runs = c.meta[0];
  uint64_t k = static_cast<uint64_t>(std::upper_bound(ends, ends + runs, start) - ends);  // first run ending past start
  const uint32_t stop = start + count;
  uint32_t row = start;
  if (p == Physical::Bool) {
    auto* o = static_cast<uint8_t*>(out);
    const uint8_t* values = c.payload;
    const uint8_t* v = c.validity();
    for (; row < stop; ++k) {
      const uint32_t e = std::min<uint32_t>(ends[k], stop);
      std::memset(o + (row - start), values[k], e - row);
      row = e;
    }
    for (uint32_t i = 0; i < count; ++i) o[i] &= static_cast<uint8_t>(row_valid(v, start + i));
    return;
  }
  auto* o = static_cast<uint64_t*>(out);
  const uint64_t* values = payload_words(c);
  for (; row < stop; ++k) {
    const uint32_t e = std::min<uint32_t>(ends[k], stop);
    std::fill(o + (row - start), o + (e - start), values[k]);
    row = e;
  }
  zero_null_rows(c.validity(), start, count, o);
}

uint64_t run_count(const uint64_t* filled, uint32_t len) {
  uint64_t runs = len ? 1 : 0;
  for (uint32_t i = 1; i < len; ++i) runs += filled[i] != filled[i - 1];
  return runs;
}

}  // namespace

const EncodingOps kRleOps{Enc::Rle, rle_legal, rle_validate, rle_decode};

uint64_t rle_fit(const Staged& s) {
  if (!rle_legal(s.physical())) return kNoFit;
  uint64_t filled[kBlockLanes];
  carry_fill(s, filled);
  return rle_bytes(s.physical(), run_count(filled, s.len));
}

CellRef rle_encode(const Staged& s) {
  if (!rle_legal(s.physical())) throw Error(Code::TET_INTERNAL, "cells: rle cannot hold this kind");
  uint64_t filled[kBlockLanes];
  carry_fill(s, filled);
  const Physical p = s.physical();
  const uint64_t runs = run_count(filled, s.len);
  CellRef c = new_block(s, Enc::Rle, rle_bytes(p, runs));
  uint8_t* data = owned_payload(c);
  auto* ends = reinterpret_cast<uint16_t*>(data + values_bytes(p, runs));
  uint64_t k = 0;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (i > 0 && filled[i] != filled[i - 1]) ++k;
    if (p == Physical::Bool) data[k] = static_cast<uint8_t>(filled[i] != 0);
    else reinterpret_cast<uint64_t*>(data)[k] = filled[i];
    ends[k] = static_cast<uint16_t>(i + 1);
  }
  c.mutable_cell()->meta[0] = runs;
  return c;
}

}  // namespace tet::cells
