// Reading a selection into memory: the parallel scatter of its tiles into a row-major buffer
// and the preview (capped in memory, or caller-owned output for read()).
#include <algorithm>
#include <cstring>

#include "exec/materialize.h"
#include "exec/thread_pool.h"

namespace tet {
namespace exec {

template <class S, class D> void scatter(const ReadInput& in, uint8_t* dest, uint64_t limit) {
  const Selection& sel = in.sel;
  ThreadPool& pool = ThreadPool::instance();
  std::vector<uint64_t> tiles;
  for (uint64_t t = 0; t < sel.tiles; ++t)
    if (sel.tile(t).min_logical < limit) tiles.push_back(t);
  const uint32_t parts = pool.participants(tiles.size(), in.plan.threads);
  in.res.stats.threads_used = std::max(in.res.stats.threads_used, parts);
  std::vector<ScratchBytes> scratch(parts);
  const uint32_t last = sel.ndim - 1;
  pool.parallel_for(tiles.size(), in.plan.threads, [&](uint64_t k, uint32_t slot) {
    check_cancel(in.ctx);
    const TileSelection ts = sel.tile(tiles[k]);
    const TileView v = in.fetcher.fetch(ts, scratch[slot]);
    if (ts.nruns[last] > 1) {
      // an index / run list on the last axis: a row at a time through its tile positions
      for_each_list_row<S>(sel, ts, v.data, [&](const uint8_t* row, const uint64_t* loc, uint64_t ls, uint64_t n, uint64_t o) {
        if (o >= limit) return;
        if (n > limit - o) n = limit - o;
        D tmp[256];  // dest need not be D-aligned
        for (uint64_t c = 0; c < n; c += 256) {
          const uint64_t m = std::min<uint64_t>(256, n - c);
          gather_row<S, D>(row, loc + c, ls, m, tmp);
          std::memcpy(dest + (o + c) * sizeof(D), tmp, m * sizeof(D));
        }
      });
      return;
    }
    Selection::for_each_run(ts, sel.ndim, 0, ts.elems, [&](uint64_t off, uint64_t n, const Axes& idx) {
      const uint64_t o = sel.logical_of(ts, idx);
      if (o >= limit) return;
      if (n > limit - o) n = limit - o;
      const uint8_t* p = v.data + off * sizeof(S);
      uint8_t* q = dest + o * sizeof(D);
      if (std::is_same<S, D>::value && ts.step[last] == 1) std::memcpy(q, p, n * sizeof(S));
      else if (std::is_same<S, D>::value) {
        for (uint64_t i = 0; i < n; ++i) std::memcpy(q + i * sizeof(S), p + i * ts.step[last] * sizeof(S), sizeof(S));
      } else {
        D tmp[256];
        for (uint64_t i = 0; i < n; i += 256) {
          const uint64_t m = std::min<uint64_t>(256, n - i);
          load_elems<S, D>(p + i * ts.step[last] * sizeof(S), ts.step[last], m, tmp);
          std::memcpy(q + i * sizeof(D), tmp, m * sizeof(D));
        }
      }
    });
  });
}

template <class S, class T> void preview_capped(const ReadInput& in) {
  const uint64_t k = preview_len(in.plan, in.sel);
  const ExecContext& ctx = in.ctx;
  in.res.preview_length = k;
  if (in.preview_to_output) {
    // Caller-owned output (read()): the pool threads write each element once, in place.
    if (ctx.output_bytes != k * sizeof(T) || (k > 0 && ctx.output == nullptr))
      fail("TET_PLAN_INVALID", "output holds " + std::to_string(ctx.output_bytes) + " bytes; the plan's preview is " +
                                   std::to_string(k) + " elements of " + std::to_string(sizeof(T)) + " bytes");
    if (k > 0) scatter<S, T>(in, ctx.output, k);
    return;
  }
  in.res.preview.assign(k * sizeof(T), 0);
  if (k > 0) scatter<S, T>(in, in.res.preview.data(), k);
}

#define TET_MATERIALIZE_INSTANTIATE(S, T)                                  \
  template void scatter<S, T>(const ReadInput&, uint8_t*, uint64_t);       \
  template void preview_capped<S, T>(const ReadInput&);
TET_EXEC_DTYPE_PAIRS(TET_MATERIALIZE_INSTANTIATE)
#undef TET_MATERIALIZE_INSTANTIATE

}  // namespace exec
}  // namespace tet
