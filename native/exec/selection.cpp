#include "exec/selection.h"

#include <algorithm>

#include "tet/error.h"

namespace tet {
namespace exec {

Selection::Selection(const DatasetInfo& d, const QueryPlan& p) : dataset(d), ndim(d.ndim) {
  if (ndim < 1 || ndim > kMaxNdim) fail("TET_INTERNAL", "selection rank " + std::to_string(ndim) + " outside 1..8");
  for (uint32_t a = 0; a < 8; ++a) {
    start[a] = a < ndim ? p.start[a] : 0;
    step[a] = a < ndim && p.kind[a] == AxisKind::Box ? p.step[a] : 1;
    count[a] = a < ndim ? p.count[a] : 1;
  }
  for (int a = int(ndim) - 1; a >= 0; --a) {
    sel_stride[a] = elements;
    elements *= count[a];
  }
  for (uint32_t a = 0; a < ndim; ++a) {
    const uint64_t cs = d.chunk_shape[a];
    if (cs == 0) fail("TET_INTERNAL", "chunk shape 0 on axis " + std::to_string(a));
    if (p.kind[a] != AxisKind::Box) {
      build_run_axis(a, p.runs[a]);
      tiles *= pieces[a].size();
      continue;
    }
    if (count[a] == 0 || step[a] == 0 || start[a] + (count[a] - 1) * step[a] >= d.shape[a])
      fail("TET_INTERNAL", "selection on axis " + std::to_string(a) + " is not validated");
    full = full && start[a] == 0 && step[a] == 1 && count[a] == d.shape[a];
    uint64_t i = 0;
    while (i < count[a]) {
      const uint64_t pos = start[a] + i * step[a];
      const uint64_t c = pos / cs;
      const uint64_t chunk_end = c * cs + cs - 1;  // last position inside chunk c
      uint64_t hi = (chunk_end - start[a]) / step[a];
      if (hi > count[a] - 1) hi = count[a] - 1;
      pieces[a].push_back(AxisPiece{c, i, hi - i + 1, pos - c * cs, 0, 0});
      i = hi + 1;
    }
    tiles *= pieces[a].size();
  }
}

// Index / run axis: cut the (ascending, disjoint, merged) unit-step runs at chunk boundaries; the
// positions landing in one chunk form one piece (consecutive selection indices) of >= 1 runs.
void Selection::build_run_axis(uint32_t a, const std::vector<AxisRun>& runs) {
  const uint64_t cs = dataset.chunk_shape[a], extent = dataset.shape[a];
  uint64_t sel = 0, prev_end = 0;
  std::vector<PieceRun>& pr = piece_runs[a];
  for (const AxisRun& r : runs) {
    if (r.count == 0 || r.start >= extent || r.count > extent - r.start || (sel > 0 && r.start < prev_end))
      fail("TET_INTERNAL", "run list on axis " + std::to_string(a) + " is not validated");
    prev_end = r.start + r.count;
    uint64_t pos = r.start, left = r.count;
    while (left > 0) {
      const uint64_t c = pos / cs, take = std::min(left, (c + 1) * cs - pos);
      if (pieces[a].empty() || pieces[a].back().chunk != c)
        pieces[a].push_back(AxisPiece{c, sel, 0, pos - c * cs, pr.size(), 0});
      AxisPiece& pc = pieces[a].back();
      pr.push_back(PieceRun{sel - pc.sel0, pos - c * cs, take});
      pc.n += take, ++pc.nruns;
      sel += take, pos += take, left -= take;
    }
  }
  if (sel != count[a]) fail("TET_INTERNAL", "run list on axis " + std::to_string(a) + " disagrees with its count");
  full = full && runs.size() == 1 && runs[0].start == 0 && runs[0].count == extent;
}

TileSelection Selection::tile(uint64_t t) const {
  Axes piece{};
  for (int a = int(ndim) - 1; a >= 0; --a) {
    piece[a] = t % pieces[a].size();
    t /= pieces[a].size();
  }
  return tile_at(piece);
}

TileSelection Selection::tile_at(const Axes& piece) const {
  TileSelection ts;
  ts.piece = piece;
  std::array<uint64_t, 8> coords{};
  ts.elems = 1;
  for (uint32_t a = 0; a < 8; ++a) {
    if (a >= ndim) {
      ts.n[a] = 1, ts.step[a] = 1, ts.tile_shape[a] = 1;
      continue;
    }
    const AxisPiece& pc = pieces[a][piece[a]];
    coords[a] = pc.chunk;
    ts.sel0[a] = pc.sel0, ts.n[a] = pc.n, ts.local0[a] = pc.local0, ts.step[a] = step[a];
    if (pc.nruns > 1) ts.runs[a] = piece_runs[a].data() + pc.run0, ts.nruns[a] = pc.nruns, ts.multi = true;
    ts.elems *= pc.n;
    ts.min_logical += pc.sel0 * sel_stride[a];
  }
  ts.tile_shape = tile_shape(dataset, coords);
  uint64_t linear = 0, stride = 1;
  for (int a = int(ndim) - 1; a >= 0; --a) {
    linear += coords[a] * stride;
    stride *= dataset.grid[a];
    ts.tile_stride[a] = a == int(ndim) - 1 ? 1 : ts.tile_stride[a + 1] * ts.tile_shape[a + 1];
  }
  ts.linear_chunk = linear;
  ts.tile_elems = ts.tile_stride[0] * ts.tile_shape[0];
  for (uint32_t a = 0; a < ndim; ++a) ts.first_offset += ts.local0[a] * ts.tile_stride[a];
  // Dense when inner axes are whole, one axis is a unit-step range and outer axes are single.
  int a = int(ndim) - 1;
  while (a >= 0 && ts.n[a] == ts.tile_shape[a]) --a;
  bool dense = true;
  if (a >= 0) {
    dense = (ts.n[a] == 1 || ts.step[a] == 1) && ts.nruns[a] <= 1;
    for (--a; a >= 0 && dense; --a) dense = ts.n[a] == 1;
  }
  ts.contiguous = dense;
  return ts;
}

}  // namespace exec
}  // namespace tet
