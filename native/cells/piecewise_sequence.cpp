// PiecewiseSequence (int-stored): k arithmetic segments (1..kMaxSegments). meta[0] = k, meta[1]
// = 0; payload = k u64 firsts, k u64 steps, then k u16 segment start rows (the first 0, strictly
// increasing, each < len), zero-padded to 8. Row i of segment j (start_j ≤ i < start_{j+1}) is
// first_j + (i - start_j) * step_j modulo 2^64; a null row decodes 0. A column of ascending
// runs that wrap (obs `station_id` = i mod 10^4) has blocks of one or two segments: 40 bytes
// where For packs 14 bits a row. Zone map as every non-derived Int block (builders.h).
#include <algorithm>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

uint64_t segments_bytes(uint64_t k) { return 16 * k + align8(2 * k); }

struct SegmentsView {
  const uint64_t* firsts;
  const uint64_t* steps;
  const uint16_t* starts;
  uint64_t k;
};
SegmentsView view_of(const Cell& c) {
  const uint64_t k = c.meta[0];
  const uint64_t* w = payload_words(c);
  return {w, w + k, reinterpret_cast<const uint16_t*>(w + 2 * k), k};
}

bool piecewise_legal(Physical p) { return p == Physical::Int; }

void piecewise_validate(const Cell& c, const DecodeContext&) {
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "piecewise_sequence");
  expect_meta_zero(c, 1, 1, "piecewise_sequence");
  const uint64_t k = c.meta[0];
  if (k == 0 || k > kMaxSegments || k > c.len)
    throw_invalid("piecewise_sequence block of " + std::to_string(c.len) + " rows claims " + std::to_string(k) + " segments");
  expect_data_bytes(c, segments_bytes(k), "piecewise_sequence");
  const SegmentsView s = view_of(c);
  if (s.starts[0] != 0) throw_invalid("piecewise_sequence first segment does not start at row 0");
  for (uint64_t j = 1; j < k; ++j)
    if (s.starts[j] <= s.starts[j - 1] || s.starts[j] >= c.len) throw_invalid("piecewise_sequence segment starts do not increase inside the block");
  for (uint64_t j = k; j < align8(2 * k) / 2; ++j)
    if (s.starts[j] != 0) throw_invalid("piecewise_sequence padding is not zero");
}

void piecewise_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  if (count == 0) return;
  auto* o = static_cast<uint64_t*>(out);
  const SegmentsView s = view_of(c);
  uint64_t j = static_cast<uint64_t>(std::upper_bound(s.starts, s.starts + s.k, start) - s.starts) - 1;
  const uint32_t stop = start + count;
  for (uint32_t row = start; row < stop; ++j) {
    const uint32_t end = j + 1 < s.k ? std::min<uint32_t>(s.starts[j + 1], stop) : stop;
    uint64_t v = s.firsts[j] + uint64_t(row - s.starts[j]) * s.steps[j];
    for (; row < end; ++row, v += s.steps[j]) o[row - start] = v;
  }
  zero_null_rows(c.validity(), start, count, o);
}

struct Segment {
  uint32_t start;  // row the segment starts at
  uint64_t first;  // value the progression gives that row
  uint64_t step;
};

// Greedy segments over the present rows: a segment's step is fixed by its first two present
// rows (across a gap of nulls the gap must divide the exact difference), and a present row off
// the progression starts the next segment. False past kMaxSegments or with no present row.
struct Segments {
  Segment g[kMaxSegments];
  uint32_t k = 0;
  bool empty() const { return k == 0; }
  Segment& back() { return g[k - 1]; }
};

bool find_segments(const Staged& s, Segments* out) {
  if (s.physical() != Physical::Int || s.valid == 0) return false;
  out->k = 0;
  uint32_t anchor = 0;   // the open segment's first present row
  bool stepped = false;  // whether a second present row has fixed its step
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    const uint64_t v = s.lanes[i];
    if (!out->empty()) {
      Segment& g = out->back();
      if (stepped) {
        if (v == g.first + uint64_t(i - g.start) * g.step) continue;  // on the progression
      } else {
        // The segment's second present row: it fixes the step when one fits.
        bool fits = false;
        uint64_t step = 0;
        if (i == anchor + 1) {
          step = v - s.lanes[anchor], fits = true;  // modulo 2^64: wrapping progressions fit too
        } else {
          const __int128 diff = __int128(as_i64(v)) - __int128(as_i64(s.lanes[anchor]));
          const __int128 gap = i - anchor, q = diff / gap;
          if (diff % gap == 0 && q >= INT64_MIN && q <= INT64_MAX) step = bits_of(static_cast<int64_t>(q)), fits = true;
        }
        if (fits) {
          g.step = step;
          g.first = s.lanes[anchor] - uint64_t(anchor - g.start) * step;
          stepped = true;
          continue;
        }
      }
    }
    if (out->k == kMaxSegments) return false;
    // A segment starts at its first present row (the first segment at row 0); until a second
    // present row fixes its step it is step 0, so `first` is that row's value.
    out->g[out->k] = Segment{out->empty() ? 0u : i, v, 0};
    ++out->k;
    anchor = i;
    stepped = false;
  }
  return true;
}

}  // namespace

const EncodingOps kPiecewiseSequenceOps{Enc::PiecewiseSequence, piecewise_legal, piecewise_validate, piecewise_decode};

uint64_t piecewise_sequence_fit(const Staged& s) {
  Segments g;
  return find_segments(s, &g) ? segments_bytes(g.k) : kNoFit;
}

CellRef piecewise_sequence_encode(const Staged& s) {
  Segments g;
  if (!find_segments(s, &g)) throw Error(Code::TET_INTERNAL, "cells: piecewise_sequence over rows of too many segments");
  CellRef c = new_block(s, Enc::PiecewiseSequence, segments_bytes(g.k));
  uint64_t* w = block_words(c);
  auto* starts = reinterpret_cast<uint16_t*>(w + 2 * g.k);
  for (uint32_t j = 0; j < g.k; ++j) {
    w[j] = g.g[j].first;
    w[g.k + j] = g.g[j].step;
    starts[j] = static_cast<uint16_t>(g.g[j].start);
  }
  c.mutable_cell()->meta[0] = g.k;
  return c;
}

}  // namespace tet::cells
