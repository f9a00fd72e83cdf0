// Geometry of a strided selection over a chunked dataset: which tiles it touches (a chunk is
// touched only when the progression start + i*step lands in it), and, per touched tile, where
// its selected elements sit in the tile and in the logical row-major selection.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "tet/catalog.h"
#include "tet/plan.h"

namespace tet {
namespace exec {

using Axes = std::array<uint64_t, 8>;

struct AxisPiece {      // one touched chunk along one axis
  uint64_t chunk = 0;   // chunk index along the axis
  uint64_t sel0 = 0;    // first selection index i landing in it
  uint64_t n = 0;       // how many selection indices land in it
  uint64_t local0 = 0;  // tile-local position of the first one
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
};

class Selection {
 public:
  Selection(const DatasetInfo& d, const QueryPlan& p);

  const DatasetInfo& dataset;
  uint32_t ndim;
  Axes start{}, step{}, count{};
  Axes sel_stride{};  // logical row-major strides over count
  uint64_t elements = 1;
  std::array<std::vector<AxisPiece>, 8> pieces;
  uint64_t tiles = 1;  // product of pieces[a].size(); touched tiles are row-major over pieces
  bool full = true;    // every axis fully selected (start 0, step 1, count = shape)

  TileSelection tile(uint64_t t) const;
  TileSelection tile_at(const Axes& piece) const;

  // Calls fn(tile_offset, len, idx) for each run of selected elements along the last axis whose
  // tile-local ordinals fall in [e0, e1); idx = tile-local selection indices of the run start.
  template <class F> static void for_each_run(const TileSelection& ts, uint32_t ndim, uint64_t e0, uint64_t e1, F&& fn) {
    if (e0 >= e1) return;
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
};

}  // namespace exec
}  // namespace tet
