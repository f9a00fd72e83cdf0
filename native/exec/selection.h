// Geometry of a selection over a chunked dataset: which tiles it touches (a chunk is touched
// only when a selected position lands in it), and, per touched tile, where its selected elements
// sit in the tile and in the logical row-major selection. A box axis selects start + i*step; an
// index-list / run-list axis is a list of unit-step runs, so in one chunk it is one or more runs
// (PieceRun) and for_each_run stays the one iterator over both.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "tet/catalog.h"
#include "tet/plan.h"

namespace tet {
namespace exec {

using Axes = std::array<uint64_t, 8>;

struct PieceRun {      // unit-step run of selected positions of an index/run axis in one chunk
  uint64_t s0 = 0;      // piece-local selection ordinal of its first position
  uint64_t local0 = 0;  // tile-local position of its first position
  uint64_t n = 0;
};

struct AxisPiece {      // one touched chunk along one axis
  uint64_t chunk = 0;   // chunk index along the axis
  uint64_t sel0 = 0;    // first selection index i landing in it
  uint64_t n = 0;       // how many selection indices land in it (consecutive selection indices)
  uint64_t local0 = 0;  // tile-local position of the first one
  uint64_t run0 = 0;    // index/run axes: its runs are Selection::piece_runs[a][run0, run0 + nruns)
  uint64_t nruns = 0;   // 0 for box axes; > 1 => the positions are not one progression
};

struct TileSelection {
  uint64_t linear_chunk = 0;
  Axes piece{};           // position in each axis' piece list
  Axes sel0{}, n{}, local0{}, step{};
  Axes tile_shape{}, tile_stride{};  // elements
  uint64_t tile_elems = 0;
  uint64_t elems = 0;                // selected elements in this tile
  bool contiguous = false;           // selected elements are one dense run in the tile
  uint64_t first_offset = 0;         // tile element offset of the first selected element
  uint64_t min_logical = 0;          // smallest logical index of its elements
  // Axes whose piece holds several runs (else the piece is local0 + i*step): nruns[a] > 1.
  std::array<const PieceRun*, 8> runs{};
  Axes nruns{};
  bool multi = false;                // some axis has nruns > 1
};

class Selection {
 public:
  Selection(const DatasetInfo& d, const QueryPlan& p);

  const DatasetInfo& dataset;
  uint32_t ndim;
  Axes start{}, step{}, count{};  // index/run axes: start = first position, step 1
  std::array<std::vector<PieceRun>, 8> piece_runs;  // index/run axes: runs of all pieces, in order
  Axes sel_stride{};  // logical row-major strides over count
  uint64_t elements = 1;
  std::array<std::vector<AxisPiece>, 8> pieces;
  uint64_t tiles = 1;  // product of pieces[a].size(); touched tiles are row-major over pieces
  bool full = true;    // every axis fully selected (all positions 0..shape-1 in order)

  TileSelection tile(uint64_t t) const;
  // Row-major logical index (over count) of the element at tile-local selection indices idx.
  uint64_t logical_of(const TileSelection& ts, const Axes& idx) const {
    uint64_t o = 0;
    for (uint32_t a = 0; a < ndim; ++a) o += (ts.sel0[a] + idx[a]) * sel_stride[a];
    return o;
  }
  TileSelection tile_at(const Axes& piece) const;

  // Calls fn(tile_offset, len, idx) for each run of selected elements along the last axis whose
  // tile-local ordinals fall in [e0, e1); idx = tile-local selection indices of the run start.
  // The run's elements sit at tile_offset + k*ts.step[last], 0 <= k < len (step 1 on index axes).
  template <class F> static void for_each_run(const TileSelection& ts, uint32_t ndim, uint64_t e0, uint64_t e1, F&& fn) {
    if (e0 >= e1) return;
    if (ts.multi) return for_each_run_multi(ts, ndim, e0, e1, fn);
    const uint32_t last = ndim - 1;
    Axes idx{};
    uint64_t rem = e0;
    for (int a = int(last); a >= 0; --a) idx[a] = rem % ts.n[a], rem /= ts.n[a];
    uint64_t e = e0;
    while (e < e1) {
      uint64_t off = 0;
      for (uint32_t a = 0; a < ndim; ++a) off += (ts.local0[a] + idx[a] * ts.step[a]) * ts.tile_stride[a];
      uint64_t len = ts.n[last] - idx[last];
      if (len > e1 - e) len = e1 - e;
      fn(off, len, idx);
      e += len;
      idx[last] += len;
      for (uint32_t a = last; a > 0 && idx[a] >= ts.n[a]; --a) idx[a] = 0, ++idx[a - 1];
    }
  }

  // Tile-local positions along the last axis of its selection ordinals 0..ts.n[last]-1 (what
  // for_each_row's rows index), into `loc`.
  static void last_axis_positions(const TileSelection& ts, uint32_t ndim, std::vector<uint64_t>& loc) {
    const uint32_t last = ndim - 1;
    loc.resize(ts.n[last]);
    if (ts.nruns[last] > 1) {
      for (uint64_t r = 0; r < ts.nruns[last]; ++r)
        for (uint64_t i = 0; i < ts.runs[last][r].n; ++i) loc[ts.runs[last][r].s0 + i] = ts.runs[last][r].local0 + i;
    } else {
      for (uint64_t i = 0; i < ts.n[last]; ++i) loc[i] = ts.local0[last] + i * ts.step[last];
    }
  }

  // last_axis_positions of the tile last asked for, kept while the next ask is the same tile (one
  // per pool slot of one fold: a tile's units come one after another). Valid for one selection:
  // never keep one across queries (another selection's tile may share the linear chunk).
  struct LastAxisCache {
    std::vector<uint64_t> loc;
    uint64_t tile = 0;  // linear_chunk + 1 of the tile `loc` holds (0: none)
    const uint64_t* of(const TileSelection& ts, uint32_t ndim) {
      if (tile != ts.linear_chunk + 1) last_axis_positions(ts, ndim, loc), tile = ts.linear_chunk + 1;
      return loc.data();
    }
  };

  // Calls fn(row_offset, c0, c1, idx) for each row (a fixed index on every axis but the last) of
  // the tile-local ordinals [e0, e1): its selected elements are ordinals c0..c1-1 along the last
  // axis, at tile offsets row_offset + loc[c] * ts.tile_stride[last] (loc: last_axis_positions);
  // idx = the row's selection indices with idx[last] = c0. The rows for_each_run's runs make up,
  // in the same order, for a gather of a whole row at once.
  template <class F> static void for_each_row(const TileSelection& ts, uint32_t ndim, uint64_t e0, uint64_t e1, F&& fn) {
    if (e0 >= e1) return;
    const uint32_t last = ndim - 1;
    Axes idx{}, ri{};
    uint64_t rem = e0;
    for (int a = int(last); a >= 0; --a) idx[a] = rem % ts.n[a], rem /= ts.n[a];
    for (uint32_t a = 0; a < last; ++a)
      if (ts.nruns[a] > 1) ri[a] = find_run(ts.runs[a], ts.nruns[a], idx[a]);
    auto run_end = [&](uint32_t a) { return ts.runs[a][ri[a]].s0 + ts.runs[a][ri[a]].n; };
    uint64_t e = e0;
    while (e < e1) {
      uint64_t off = 0;
      for (uint32_t a = 0; a < last; ++a) {
        const uint64_t pos = ts.nruns[a] > 1 ? ts.runs[a][ri[a]].local0 + (idx[a] - ts.runs[a][ri[a]].s0)
                                             : ts.local0[a] + idx[a] * ts.step[a];
        off += pos * ts.tile_stride[a];
      }
      uint64_t len = ts.n[last] - idx[last];
      if (len > e1 - e) len = e1 - e;
      fn(off, idx[last], idx[last] + len, idx);
      e += len;
      idx[last] += len;
      for (uint32_t a = last; a > 0 && idx[a] >= ts.n[a]; --a) {  // ri[last] is not used here
        idx[a] = 0, ri[a] = 0, ++idx[a - 1];
        if (ts.nruns[a - 1] > 1 && idx[a - 1] < ts.n[a - 1] && idx[a - 1] >= run_end(a - 1)) ++ri[a - 1];
      }
    }
  }

 private:
  void build_run_axis(uint32_t a, const std::vector<AxisRun>& runs);
  // The run of a multi-run axis holding piece-local ordinal i.
  static uint64_t find_run(const PieceRun* r, uint64_t n, uint64_t i) {
    uint64_t lo = 0, hi = n;  // largest k with r[k].s0 <= i
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (r[mid].s0 <= i ? lo : hi) = mid;
    }
    return lo;
  }
  // for_each_run where some axis has several runs: the rows of for_each_row, each cut at the
  // runs of the last axis when it has several (else the row is one run).
  template <class F> static void for_each_run_multi(const TileSelection& ts, uint32_t ndim, uint64_t e0, uint64_t e1, F& fn) {
    const uint32_t last = ndim - 1;
    const uint64_t ls = ts.tile_stride[last];
    for_each_row(ts, ndim, e0, e1, [&](uint64_t off, uint64_t c0, uint64_t c1, const Axes& row) {
      if (ts.nruns[last] <= 1) {
        fn(off + (ts.local0[last] + c0 * ts.step[last]) * ls, c1 - c0, row);
        return;
      }
      Axes idx = row;
      const PieceRun* runs = ts.runs[last];
      for (uint64_t r = c0 == 0 ? 0 : find_run(runs, ts.nruns[last], c0), c = c0; c < c1; ++r) {
        const uint64_t len = std::min(runs[r].s0 + runs[r].n, c1) - c;
        idx[last] = c;
        fn(off + (runs[r].local0 + (c - runs[r].s0)) * ls, len, idx);
        c += len;
      }
    });
  }
};

}  // namespace exec
}  // namespace tet
