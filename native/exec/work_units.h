// The work decomposition of the streaming folds as plain data: a pure function of the plan and
// the selection (and so of neither the thread count nor the ISA), which makes the block
// structure of every sum, the merge order and the shard split the same on every run.
//
// Scalar folds: units of at most kUnitElems selected elements of one tile (tile-local row-major
// order), one state each, merged in unit order.
// Partial folds: groups (touched chunk positions on the kept axes, each owning a disjoint output
// box), the group's tiles in row-major order of their reduced-axis positions cut into units, and
// tasks: a group's units cut into a fixed number of segments with private box states, merged in
// segment order. Tasks are the smallest state the engine merges, so they are the shard units.
#pragma once
#include <cstdint>
#include <vector>

#include "exec/output_box.h"
#include "exec/selection.h"
#include "tet/plan.h"

namespace tet {
namespace exec {

// Elements per work unit. Fixed, so the block structure of every sum is independent of threads.
constexpr uint64_t kUnitElems = uint64_t(1) << 17;
// Partial folds: groups with fewer tasks than this are cut into segments, while segments x the
// output's state bytes stay under kSegmentStateCap.
constexpr uint64_t kPartialTaskTarget = 64;
constexpr uint64_t kSegmentStateCap = uint64_t(512) << 20;

struct ScalarUnit {
  uint64_t tile;        // selection tile index
  uint64_t e0, e1;      // tile-local selected-element ordinals
  uint32_t tile_units;  // units of this tile (> 1 => several units read the same tile)
};

std::vector<ScalarUnit> scalar_units(const Selection& sel);
uint64_t scalar_unit_count(const Selection& sel);

struct PartialUnit {
  Axes piece;  // the tile, by its position in each axis' piece list
  uint64_t e0, e1;
  uint32_t tile_units;
};

struct PartialTask {
  uint64_t group;
  uint64_t u0, u1;  // [u0, u1) in PartialUnits::units
  uint32_t seg, segs;
};

struct PartialUnits {
  uint32_t nd = 0, last = 0;
  std::vector<uint32_t> kept, reduced;  // axes, ascending
  Axes out_stride{}, fib_stride{};      // row-major strides of the output (kept) and fibers (reduced)
  uint64_t out_len = 1, fib_len = 1;
  bool last_reduced = false;
  uint64_t n_groups = 1, tiles_per_group = 1;
  std::vector<PartialUnit> units;
  std::vector<uint64_t> group_begin;  // units of group g: [group_begin[g], group_begin[g + 1])
  uint64_t segs = 1;                  // segments per group (fewer when a group has fewer units)
  uint64_t max_box = 1;
  std::vector<PartialTask> tasks;
  // group_by (plan GROUP): the group axis is one of `reduced`; each box holds `groups` slabs of
  // its kept-axis elements (element j = group id x Box::inner + box_index), the output is
  // [groups, ...kept] (out_len = groups x out_inner). gid: the plan's id per selection index of
  // the axis; gcount: positions per group; fib_other: elements per position along the group
  // axis (the other reduced axes), so a group's output element reduces gcount x fib_other.
  uint64_t groups = 0;  // 0: not grouped
  uint32_t group_axis = 0;
  const uint32_t* gid = nullptr;
  std::vector<uint64_t> gcount;
  uint64_t out_inner = 1, fib_other = 1;
  // Elements reduced into output element j of a box (j < box.len).
  uint64_t fib_of(const Box& bx, uint64_t j) const { return groups ? gcount[j / bx.inner] * fib_other : fib_len; }

  // Piece position of tile r (row-major over the reduced axes) of group g.
  Axes group_tile(const Selection& sel, uint64_t g, uint64_t r) const;
  Box box_of(const Selection& sel, uint64_t g) const;
};

// `state_bytes`: bytes of partial state per output element (fold::partial_state_bytes), which
// caps the segment count. partial_units(plan, sel) takes it from the registry.
PartialUnits partial_units(const QueryPlan& plan, const Selection& sel, uint64_t state_bytes);
PartialUnits partial_units(const QueryPlan& plan, const Selection& sel);

// Shard i of n owns units [shard_begin(U, i, n), shard_begin(U, i + 1, n)): balanced, contiguous.
inline uint64_t shard_begin(uint64_t units, uint64_t i, uint64_t n) {
  return uint64_t((unsigned __int128)units * i / n);
}

}  // namespace exec
}  // namespace tet
