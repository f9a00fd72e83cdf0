// Output boxes of partial folds. A group of tiles (one touched chunk position on the kept axes)
// owns a disjoint box of the output: its origin and extent on the kept axes, with box-local
// row-major strides. `box_runs` walks box elements as runs along the last kept axis (contiguous
// in the box and in the row-major output); `box_index` places a tile element in its box.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "exec/selection.h"

namespace tet {
namespace exec {

struct Box {
  Axes origin{}, stride{}, extent{};  // kept axes only (selection indices, box-local strides)
  uint64_t len = 1;                   // elements
  uint64_t inner = 1;                 // elements of one group slab (group_by: len = groups x inner; else len)
};

// The box element of a tile element at tile-local selection indices `idx` (tile origin sel0).
inline uint64_t box_index(const Box& bx, const std::vector<uint32_t>& kept, const Axes& sel0, const Axes& idx) {
  uint64_t o = 0;
  for (uint32_t a : kept) o += (sel0[a] + idx[a] - bx.origin[a]) * bx.stride[a];
  return o;
}

// fn(box_index, out_index, len) over box elements [a, b): runs along the last kept axis.
// `out_stride` are the row-major strides of the output over the kept axes.
template <class F>
void box_runs(const Box& bx, const std::vector<uint32_t>& kept, const Axes& out_stride, uint64_t a, uint64_t b, F&& fn) {
  const uint32_t last_kept = kept.back();
  const uint64_t E = bx.extent[last_kept];
  uint64_t le = a;
  while (le < b) {
    const uint64_t off = le % E, len = std::min(E - off, b - le);
    uint64_t rem = le / E, gi = bx.origin[last_kept] + off;
    for (int i = int(kept.size()) - 2; i >= 0; --i) {
      const uint32_t ax = kept[i];
      gi += (bx.origin[ax] + rem % bx.extent[ax]) * out_stride[ax];
      rem /= bx.extent[ax];
    }
    fn(le, gi, len);
    le += len;
  }
}

}  // namespace exec
}  // namespace tet
