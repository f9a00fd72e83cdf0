// The work decomposition (exec/work_units.h) as plain data: scalar units tile each selected tile
// in kUnitElems pieces; partial groups own disjoint output boxes that cover the output exactly;
// tasks cut each group's units into contiguous, ordered segments under the state cap; and the
// whole decomposition is a pure function of (plan, selection): recomputing it, or computing it
// from the registry's state size, gives the same data. Shard ranges are balanced and contiguous.
#include <algorithm>
#include <vector>

#include "check.h"
#include "exec/selection.h"
#include "exec/work_units.h"
#include "fold/registry.h"
#include "tet/catalog.h"

using namespace tet;
using namespace tet::exec;

namespace {

DatasetInfo dataset(DType dt, std::vector<uint64_t> shape, std::vector<uint64_t> chunk) {
  DatasetInfo d;
  d.name = "d", d.dtype = dt, d.ndim = uint32_t(shape.size());
  d.element_count = 1, d.chunk_count = 1;
  for (uint32_t a = 0; a < 8; ++a) {
    d.shape[a] = a < d.ndim ? shape[a] : 1;
    d.chunk_shape[a] = a < d.ndim ? chunk[a] : 1;
    d.grid[a] = (d.shape[a] + d.chunk_shape[a] - 1) / d.chunk_shape[a];
    d.element_count *= d.shape[a], d.chunk_count *= d.grid[a];
  }
  d.logical_bytes = d.element_count * dtype_size(dt);
  return d;
}

QueryPlan plan(const DatasetInfo& d, Op op, uint32_t mask, std::vector<uint64_t> start = {}, std::vector<uint64_t> step = {},
               std::vector<uint64_t> count = {}) {
  QueryPlan p;
  p.ndim = d.ndim, p.op = op, p.reduce_mask = mask;
  for (uint32_t a = 0; a < d.ndim; ++a) {
    p.start[a] = a < start.size() ? start[a] : 0;
    p.step[a] = a < step.size() ? step[a] : 1;
    p.count[a] = a < count.size() ? count[a] : (d.shape[a] - p.start[a] + p.step[a] - 1) / p.step[a];
  }
  return p;
}

bool same_units(const PartialUnits& a, const PartialUnits& b) {
  if (a.units.size() != b.units.size() || a.tasks.size() != b.tasks.size() || a.group_begin != b.group_begin ||
      a.segs != b.segs || a.out_len != b.out_len || a.fib_len != b.fib_len || a.max_box != b.max_box)
    return false;
  for (size_t i = 0; i < a.units.size(); ++i)
    if (a.units[i].piece != b.units[i].piece || a.units[i].e0 != b.units[i].e0 || a.units[i].e1 != b.units[i].e1) return false;
  for (size_t i = 0; i < a.tasks.size(); ++i)
    if (a.tasks[i].group != b.tasks[i].group || a.tasks[i].u0 != b.tasks[i].u0 || a.tasks[i].u1 != b.tasks[i].u1 ||
        a.tasks[i].seg != b.tasks[i].seg || a.tasks[i].segs != b.tasks[i].segs)
      return false;
  return true;
}

void check_partial(const DatasetInfo& d, const QueryPlan& p) {
  const Selection sel(d, p);
  const PartialUnits wu = partial_units(p, sel);
  CHECK(same_units(wu, partial_units(p, sel)));
  CHECK(same_units(wu, partial_units(p, sel, fold::partial_state_bytes(p.op, d.dtype))));
  // groups x tiles per group = the selection's tiles; every tile's units cover its elements
  CHECK(wu.n_groups * wu.tiles_per_group == sel.tiles);
  CHECK(wu.group_begin.front() == 0 && wu.group_begin.back() == wu.units.size());
  uint64_t elems = 0;
  for (size_t i = 0; i < wu.units.size(); ++i) {
    const PartialUnit& u = wu.units[i];
    CHECK(u.e1 > u.e0 && u.e1 - u.e0 <= kUnitElems);
    const TileSelection ts = sel.tile_at(u.piece);
    CHECK(u.e1 <= ts.elems && u.tile_units == (ts.elems + kUnitElems - 1) / kUnitElems);
    if (u.e0 == 0 && i > 0) CHECK(wu.units[i - 1].e1 == sel.tile_at(wu.units[i - 1].piece).elems);
    elems += u.e1 - u.e0;
  }
  CHECK(elems == sel.elements);
  // boxes are disjoint and cover the output: every output element in exactly one box
  std::vector<uint32_t> hits(wu.out_len, 0);
  for (uint64_t g = 0; g < wu.n_groups; ++g) {
    const Box bx = wu.box_of(sel, g);
    uint64_t n = 0;
    box_runs(bx, wu.kept, wu.out_stride, 0, bx.len, [&](uint64_t le, uint64_t gi, uint64_t len) {
      CHECK(le == n);
      for (uint64_t k = 0; k < len; ++k) ++hits[gi + k];
      n += len;
    });
    CHECK(n == bx.len && bx.len <= wu.max_box);
    // every tile of the group lies in its box on the kept axes
    for (uint64_t r = 0; r < wu.tiles_per_group; ++r) {
      const Axes piece = wu.group_tile(sel, g, r);
      for (uint32_t a : wu.kept) CHECK(piece[a] == wu.group_tile(sel, g, 0)[a]);
    }
  }
  CHECK(std::all_of(hits.begin(), hits.end(), [](uint32_t h) { return h == 1; }));
  // tasks: per group, contiguous ordered segments of its units
  uint64_t t = 0;
  for (uint64_t g = 0; g < wu.n_groups; ++g) {
    const uint64_t nu = wu.group_begin[g + 1] - wu.group_begin[g];
    const uint32_t segs = wu.tasks[t].segs;
    CHECK(segs == std::max<uint64_t>(1, std::min<uint64_t>(wu.segs, nu)));
    uint64_t at = wu.group_begin[g];
    for (uint32_t s = 0; s < segs; ++s, ++t) {
      const PartialTask& task = wu.tasks[t];
      CHECK(task.group == g && task.seg == s && task.segs == segs && task.u0 == at && task.u1 >= task.u0);
      at = task.u1;
    }
    CHECK(at == wu.group_begin[g + 1]);
  }
  CHECK(t == wu.tasks.size());
  if (wu.n_groups < kPartialTaskTarget)
    CHECK(wu.segs == 1 || wu.segs * wu.out_len * std::max<uint64_t>(1, fold::partial_state_bytes(p.op, d.dtype)) <= kSegmentStateCap);
}

}  // namespace

TEST_CASE("scalar units: kUnitElems pieces of each tile, in tile order") {
  const DatasetInfo d = dataset(DType::F32, {1000, 900}, {400, 500});  // tiles of up to 200000 elements
  for (const QueryPlan& p : {plan(d, Op::Sum, 3), plan(d, Op::Sum, 3, {3, 7}, {2, 3}), plan(d, Op::Sum, 3, {999, 0}, {1, 1}, {1, 900})}) {
    const Selection sel(d, p);
    const std::vector<ScalarUnit> units = scalar_units(sel);
    CHECK(units.size() == scalar_unit_count(sel));
    uint64_t i = 0, elems = 0;
    for (uint64_t t = 0; t < sel.tiles; ++t) {
      const TileSelection ts = sel.tile(t);
      const uint64_t k = (ts.elems + kUnitElems - 1) / kUnitElems;
      for (uint64_t j = 0; j < k; ++j, ++i) {
        CHECK(units[i].tile == t && units[i].e0 == j * kUnitElems && units[i].e1 == std::min(ts.elems, (j + 1) * kUnitElems));
        CHECK(units[i].tile_units == k);
        elems += units[i].e1 - units[i].e0;
      }
    }
    CHECK(i == units.size() && elems == sel.elements);
  }
}

TEST_CASE("partial units: boxes cover the output, tasks segment the groups, pure function of the plan") {
  const DatasetInfo d2 = dataset(DType::F64, {1000, 900}, {400, 500});
  const DatasetInfo d3 = dataset(DType::I16, {40, 30, 700}, {16, 7, 300});
  for (Op op : {Op::Sum, Op::NanMean, Op::Var, Op::Min, Op::ArgMax, Op::Count, Op::NullCount, Op::Product}) {
    check_partial(d2, plan(d2, op, 1));
    check_partial(d2, plan(d2, op, 2));
    check_partial(d2, plan(d2, op, 1, {5, 3}, {3, 7}));
    for (uint32_t mask : {1u, 2u, 4u, 3u, 5u, 6u}) check_partial(d3, plan(d3, op, mask, {1, 0, 11}, {1, 2, 5}));
  }
  // few groups: segments multiply the tasks up to the target
  const QueryPlan p = plan(d2, Op::Sum, 1);
  const PartialUnits wu = partial_units(p, Selection(d2, p));
  CHECK(wu.n_groups == 2 && wu.segs == kPartialTaskTarget / 2);
  // a huge output state caps the segment count
  const PartialUnits capped = partial_units(p, Selection(d2, p), kSegmentStateCap / 900 / 2);
  CHECK(capped.segs >= 1 && capped.segs * 900 * (kSegmentStateCap / 900 / 2) <= kSegmentStateCap);
}

TEST_CASE("shard ranges: balanced, contiguous, cover every unit") {
  for (uint64_t units : {0ull, 1ull, 5ull, 64ull, 1000003ull}) {
    for (uint64_t n : {1ull, 2ull, 3ull, 7ull, 64ull}) {
      CHECK(shard_begin(units, 0, n) == 0 && shard_begin(units, n, n) == units);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t a = shard_begin(units, i, n), b = shard_begin(units, i + 1, n);
        CHECK(b >= a && b - a <= units / n + 1 && b - a + 1 >= units / n);
      }
    }
  }
}

TEST_MAIN()
