#include "exec/work_units.h"

#include <algorithm>

#include "fold/registry.h"

namespace tet {
namespace exec {

std::vector<ScalarUnit> scalar_units(const Selection& sel) {
  std::vector<ScalarUnit> units;
  for (uint64_t t = 0; t < sel.tiles; ++t) {
    const TileSelection ts = sel.tile(t);
    const uint64_t k = (ts.elems + kUnitElems - 1) / kUnitElems;
    for (uint64_t i = 0; i < k; ++i)
      units.push_back(ScalarUnit{t, i * kUnitElems, std::min(ts.elems, (i + 1) * kUnitElems),
                                 uint32_t(std::min<uint64_t>(k, UINT32_MAX))});
  }
  return units;
}

uint64_t scalar_unit_count(const Selection& sel) {
  uint64_t n = 0;
  for (uint64_t t = 0; t < sel.tiles; ++t) n += (sel.tile(t).elems + kUnitElems - 1) / kUnitElems;
  return n;
}

Axes PartialUnits::group_tile(const Selection& sel, uint64_t g, uint64_t r) const {
  Axes piece{};
  for (int i = int(reduced.size()) - 1; i >= 0; --i)
    piece[reduced[i]] = r % sel.pieces[reduced[i]].size(), r /= sel.pieces[reduced[i]].size();
  for (int i = int(kept.size()) - 1; i >= 0; --i)
    piece[kept[i]] = g % sel.pieces[kept[i]].size(), g /= sel.pieces[kept[i]].size();
  return piece;
}

Box PartialUnits::box_of(const Selection& sel, uint64_t g) const {
  Box b;
  const Axes piece = group_tile(sel, g, 0);
  for (int i = int(kept.size()) - 1; i >= 0; --i) {
    const AxisPiece& pc = sel.pieces[kept[i]][piece[kept[i]]];
    b.origin[kept[i]] = pc.sel0;
    b.extent[kept[i]] = pc.n;
    b.stride[kept[i]] = b.len;
    b.len *= pc.n;
  }
  b.inner = b.len;
  if (groups) b.len *= groups;
  return b;
}

PartialUnits partial_units(const QueryPlan& plan, const Selection& sel, uint64_t state_bytes) {
  PartialUnits p;
  p.nd = sel.ndim;
  p.last = sel.ndim - 1;
  for (uint32_t a = 0; a < p.nd; ++a) ((plan.reduce_mask >> a) & 1 ? p.reduced : p.kept).push_back(a);
  for (int i = int(p.kept.size()) - 1; i >= 0; --i) p.out_stride[p.kept[i]] = p.out_len, p.out_len *= sel.count[p.kept[i]];
  for (int i = int(p.reduced.size()) - 1; i >= 0; --i)
    p.fib_stride[p.reduced[i]] = p.fib_len, p.fib_len *= sel.count[p.reduced[i]];
  p.last_reduced = (plan.reduce_mask >> p.last) & 1;
  p.out_inner = p.out_len;
  if (plan.grouped()) {
    p.groups = plan.groups;
    p.group_axis = plan.group_axis;
    p.gid = plan.group_ids.data();
    p.gcount.assign(p.groups, 0);
    for (uint32_t g : plan.group_ids) ++p.gcount[g];
    for (uint32_t a : p.reduced)
      if (a != p.group_axis) p.fib_other *= sel.count[a];
    p.out_len *= p.groups;
  }
  for (uint32_t a : p.kept) p.n_groups *= sel.pieces[a].size();
  for (uint32_t a : p.reduced) p.tiles_per_group *= sel.pieces[a].size();
  p.group_begin.assign(p.n_groups + 1, 0);
  for (uint64_t g = 0; g < p.n_groups; ++g) {
    p.group_begin[g] = p.units.size();
    for (uint64_t r = 0; r < p.tiles_per_group; ++r) {
      const Axes piece = p.group_tile(sel, g, r);
      uint64_t elems = 1;
      for (uint32_t a = 0; a < p.nd; ++a) elems *= sel.pieces[a][piece[a]].n;
      const uint64_t k = (elems + kUnitElems - 1) / kUnitElems;
      for (uint64_t i = 0; i < k; ++i)
        p.units.push_back(PartialUnit{piece, i * kUnitElems, std::min(elems, (i + 1) * kUnitElems),
                                      uint32_t(std::min<uint64_t>(k, UINT32_MAX))});
    }
  }
  p.group_begin[p.n_groups] = p.units.size();
  for (uint64_t g = 0; g < p.n_groups; ++g) p.max_box = std::max(p.max_box, p.box_of(sel, g).len);
  if (p.n_groups < kPartialTaskTarget) {
    p.segs = (kPartialTaskTarget + p.n_groups - 1) / p.n_groups;
    const uint64_t bytes = p.out_len * std::max<uint64_t>(1, state_bytes);
    while (p.segs > 1 && p.segs * bytes > kSegmentStateCap) --p.segs;
  }
  for (uint64_t g = 0; g < p.n_groups; ++g) {
    const uint64_t nu = p.group_begin[g + 1] - p.group_begin[g];
    const uint64_t s = std::max<uint64_t>(1, std::min(p.segs, nu));
    for (uint64_t i = 0; i < s; ++i)
      p.tasks.push_back(PartialTask{g, p.group_begin[g] + nu * i / s, p.group_begin[g] + nu * (i + 1) / s, uint32_t(i),
                                    uint32_t(s)});
  }
  return p;
}

PartialUnits partial_units(const QueryPlan& plan, const Selection& sel) {
  return partial_units(plan, sel, fold::partial_state_bytes(plan.op, sel.dataset.dtype));
}

}  // namespace exec
}  // namespace tet
