// The device fold drivers (device_fold.h): internal to exec/, the definitions, included by the
// device_fold_<dtypes>.cpp files, each of which instantiates them (TET_DEVICE_INSTANTIATE) for two
// storage types. The partial driver instantiates PartialFold (fold_driver_impl.h) for every family
// of its dtypes: one translation unit for all ten took over 10 minutes (and ~3 GB) under ASan on
// 2 cores; split, its parts build beside the rest, as the fold drivers' do.
#pragma once
#include "exec/device_fold.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../../cuda/fold_arith.h"
#include "exec/device.h"
#include "exec/fold_driver_impl.h"
#include "exec/thread_pool.h"
#include "fold/registry.h"

namespace tet {
namespace exec {
namespace {

uint64_t fnv(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return h;
}

// The device tile cache key of a whole tile: the source object (its process-unique id: an open
// file, never a reused address) and the tile's catalog entry; 0 is "none". A file opened again is
// a new source (its tiles are read again; the old entries age out of the LRU).
uint64_t tile_key(const ChunkSource& src, uint32_t dataset_id, uint64_t lc) {
  const Catalog& cat = src.catalog();
  const DatasetInfo& d = cat.datasets[dataset_id];
  if (lc >= d.chunk_to_entry.size() || d.chunk_to_entry[lc] >= cat.entries.size()) return 0;
  const ChunkEntry& e = cat.entries[d.chunk_to_entry[lc]];
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, src.source_id()), h = fnv(h, cat.file_len), h = fnv(h, cat.chunk_index_offset);
  h = fnv(h, dataset_id), h = fnv(h, lc), h = fnv(h, e.payload_offset), h = fnv(h, e.stored_byte_len), h = fnv(h, e.raw_byte_len);
  return h == 0 ? 1 : h;
}

uint64_t cache_budget() {
  const char* v = std::getenv("TET_CUDA_CACHE_BYTES");
  return v != nullptr && *v ? std::strtoull(v, nullptr, 0) : kDeviceCacheDefaultBytes;
}

struct Job {
  uint64_t t0, t1;  // selection tiles [t0, t1)
  uint64_t u0, u1;  // their units
  uint64_t bytes;
};

bool backend_usable(const device::Backend& be, std::string& reason) {
  if (be.api != nullptr) return true;
  reason = be.unavailable.empty() ? "gpu_feature_disabled" : be.unavailable;
  return false;
}

// The devices a plan's jobs go to (cuda:multi: all of them, dealt round-robin).
bool device_ordinals(const QueryPlan& plan, const device::Backend& be, std::vector<uint32_t>& out, std::string& reason) {
  out.clear();
  if (plan.device_ordinal == device::kAllDevices) {
    for (const device::DeviceInfo& d : be.devices) out.push_back(d.ordinal);
  } else if (plan.device_ordinal < be.devices.size()) {
    out.push_back(plan.device_ordinal);
  }
  if (out.empty()) reason = "gpu_device_not_found";
  return !out.empty();
}

// The first device failure of a parallel run (its code and message); later ones are dropped.
struct DeviceFailure {
  std::atomic<int> rc{TET_CUDA_OK};
  std::mutex mu;
  std::string detail;
  bool any() const { return rc.load(std::memory_order_relaxed) != TET_CUDA_OK; }
  void set(int code, const char* err) {
    int expected = TET_CUDA_OK;
    if (code != TET_CUDA_OK && rc.compare_exchange_strong(expected, code)) {
      std::lock_guard<std::mutex> g(mu);
      detail = err;
    }
  }
  // The fallback reason (and the device's message into res).
  bool fell_back(QueryResult& res, std::string& reason) {
    if (!any()) return false;
    reason = rc.load() == TET_CUDA_ERR_VRAM ? "gpu_vram_exceeded" : "gpu_runtime_error";
    res.stats.device_error = detail;
    return true;
  }
};

// A tile's selected elements [e_lo, e_hi) to stage for a device job.
struct StagePart {
  TileSelection ts;
  uint64_t e_lo, e_hi;
};

// Stages parts (densified selected elements, stored type S) into the module's pinned staging
// memory (else `pageable`), one tet_cuda_tile each in `tiles`: a whole contiguous tile is keyed for
// the device tile cache and, when resident there, only counted (no read, no decode, host null).
template <class S>
void stage_parts(FoldRun& run, const device::Backend& be, uint32_t ordinal, const std::vector<StagePart>& parts,
                 std::vector<tet_cuda_tile>& tiles, ScratchBytes& pageable, ScratchBytes& scratch,
                 std::vector<uint64_t>& loc) {
  tiles.assign(parts.size(), tet_cuda_tile{});
  std::vector<uint64_t> at(parts.size() + 1, 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    const StagePart& sp = parts[i];
    tet_cuda_tile& tl = tiles[i];
    tl.elems = sp.e_hi - sp.e_lo;
    const bool whole = sp.e_lo == 0 && sp.e_hi == sp.ts.elems && sp.ts.elems == sp.ts.tile_elems && sp.ts.contiguous;
    tl.key = whole ? tile_key(run.fetcher.source(), run.plan.dataset_id, sp.ts.linear_chunk) : 0;
    const bool resident = tl.key != 0 && be.api->resident(ordinal, tl.key) != 0;
    at[i + 1] = at[i] + (resident ? 0 : tl.elems * sizeof(S));
  }
  uint8_t* stage = static_cast<uint8_t*>(be.api->staging(at.back()));
  if (stage == nullptr) {
    if (pageable.size() < at.back()) pageable.resize(at.back());
    stage = pageable.data();
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const StagePart& sp = parts[i];
    tet_cuda_tile& tl = tiles[i];
    if (at[i + 1] == at[i]) {  // resident on the device
      tl.host = nullptr;
      run.fetcher.count(sp.ts);
      continue;
    }
    const TileView v = run.fetcher.fetch(sp.ts, scratch);
    uint8_t* dst = stage + at[i];
    if (sp.ts.contiguous) std::memcpy(dst, v.data + (sp.ts.first_offset + sp.e_lo) * sizeof(S), tl.elems * sizeof(S));
    else gather_elems<S, S>(sp.ts, run.sel.ndim, sp.e_lo, sp.e_hi, v.data, reinterpret_cast<S*>(dst), loc);
    tl.host = dst;
  }
}

}  // namespace

template <class S, class T> bool fold_scalar_device(FoldRun& run, QueryResult& res, std::string& reason) {
  const device::Backend& be = device::backend();
  if (!backend_usable(be, reason)) return false;
  const QueryPlan& plan = run.plan;
  const Selection& sel = run.sel;
  const uint32_t opw = uint32_t(plan.op);
  if (dev::family_of(opw) == dev::Family::None) {
    reason = "gpu_unsupported_op";
    return false;
  }
  const uint64_t sb = dev::encoded_bytes<T>(opw);
  if (sb != fold::state_bytes<T>(plan.op)) {  // the ABI state is the family's encoded state
    reason = "gpu_unsupported_op";
    return false;
  }
  std::vector<uint32_t> ordinals;
  if (!device_ordinals(plan, be, ordinals, reason)) return false;

  const std::vector<ScalarUnit> units = scalar_units(sel);
  // Jobs: runs of whole tiles (a tile's units never split across jobs) of about kDeviceJobBytes.
  std::vector<Job> jobs;
  for (uint64_t u = 0; u < units.size();) {
    Job j{units[u].tile, units[u].tile, u, u, 0};
    while (u < units.size() && (j.bytes == 0 || j.bytes + sel.tile(units[u].tile).elems * sizeof(S) <= kDeviceJobBytes)) {
      const uint64_t t = units[u].tile;
      j.bytes += sel.tile(t).elems * sizeof(S);
      while (u < units.size() && units[u].tile == t) ++u;
      j.t1 = t + 1;
    }
    j.u1 = u;
    jobs.push_back(j);
  }

  std::vector<uint8_t> states(units.size() * sb);
  DeviceFailure failed;
  ThreadPool& pool = ThreadPool::instance();
  const uint64_t budget = cache_budget();
  const uint32_t parts = pool.participants(jobs.size(), run.threads);
  std::vector<ScratchBytes> scratch(parts), pageable(parts);
  std::vector<std::vector<uint64_t>> loc(parts);
  pool.parallel_for(jobs.size(), run.threads, [&](uint64_t ji, uint32_t slot) {
    if (failed.any()) return;
    check_cancel(run.ctx);
    const Job& job = jobs[ji];
    const uint32_t ordinal = ordinals[ji % ordinals.size()];
    // Stage the tiles that are not resident: densified selected elements, stored type S.
    std::vector<StagePart> sp;
    for (uint64_t t = job.t0; t < job.t1; ++t) {
      const TileSelection ts = sel.tile(t);
      sp.push_back(StagePart{ts, 0, ts.elems});
    }
    std::vector<tet_cuda_tile> tiles;
    stage_parts<S>(run, be, ordinal, sp, tiles, pageable[slot], scratch[slot], loc[slot]);
    std::vector<tet_cuda_unit> du(job.u1 - job.u0);
    for (uint64_t u = job.u0; u < job.u1; ++u)
      du[u - job.u0] = tet_cuda_unit{units[u].tile - job.t0, units[u].e0, units[u].e1 - units[u].e0};
    tet_cuda_scalar_job dj{};
    dj.struct_size = sizeof dj;
    dj.op = opw, dj.dtype = uint32_t(sel.dataset.dtype), dj.ordinal = ordinal;
    dj.tiles = tiles.data(), dj.n_tiles = tiles.size();
    dj.units = du.data(), dj.n_units = du.size();
    dj.states = states.data() + job.u0 * sb, dj.state_bytes = sb;
    dj.cache_budget = budget;
    char err[256] = {0};
    failed.set(be.api->scalar_fold(&dj, err, sizeof err), err);
  });
  if (failed.fell_back(res, reason)) return false;
  finish_scalar<S, T>(plan, sel, states.data(), units.size(), res);
  res.stats.io_mode = IoMode::ParallelChunks;
  res.stats.threads_used = parts;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Partial folds on the device. The work decomposition, box states, finalize and segment merge are
// the CPU's (PartialFold, fold_driver_impl.h): the pool runs the tasks, and each task's tiles go
// to the device in jobs of whole tiles (about kDeviceJobBytes staged), each job updating the task's
// box columns in place:
//   last axis kept     the CPU's row batches (scan_rows' rule: up to kMaxRows rows with the same
//                      box range), unit ends as flush events, turned into spans of box elements
//                      with their ordered events (tet_cuda_partial_job);
//   last axis reduced  every run (a tile row's selected elements, as the CPU folds it with
//                      F::consume) is a scalar unit on the device; its encoded state merges into
//                      its element here, in the CPU's order, through the family's own merge.
// So every element sees the CPU's operations in the CPU's order: the same bits.
namespace {

// The family's partial columns in the ABI's order (tet_cuda_partial_job).
template <class T, class F> void soa_cols(uint32_t op, typename F::Soa& s, void* col[4]) {
  using namespace fold::ops;
  uint32_t cb[4];
  dev::partial_col_bytes<T>(op, cb);
  col[0] = col[1] = col[2] = col[3] = nullptr;
  if constexpr (std::is_same<F, Sum<T>>::value) {
    if (cb[0] == 16) col[0] = s.isum.data();
    else col[0] = s.s.data(), col[1] = s.c.data(), col[2] = cb[2] ? s.n.data() : nullptr;
  } else if constexpr (std::is_same<F, Extrema<T>>::value) {
    col[0] = s.v.data(), col[1] = cb[1] ? s.f.data() : nullptr;
  } else if constexpr (std::is_same<F, Moments<T>>::value) {
    col[0] = s.n.data(), col[1] = s.mean.data(), col[2] = s.m2.data();
  } else if constexpr (std::is_same<F, Counts<T>>::value) {
    col[0] = cb[0] ? s.u.data() : nullptr;
  } else if constexpr (std::is_same<F, Product<T>>::value) {
    col[0] = s.p.data();
  }
}

// What a job's box range entry does to the elements it covers: a batch, or a unit's flush.
struct Entry {
  uint64_t j0, n;
  uint32_t ev;
};

// Entries (in order) -> spans of box elements that see the same entries, and their event lists.
void make_spans(const std::vector<Entry>& entries, std::vector<tet_cuda_span>& spans, std::vector<uint32_t>& events) {
  spans.clear(), events.clear();
  std::vector<uint64_t> cuts;
  cuts.reserve(entries.size() * 2);
  for (const Entry& e : entries) cuts.push_back(e.j0), cuts.push_back(e.j0 + e.n);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (cuts.size() < 2) return;
  const uint64_t ni = cuts.size() - 1;
  std::vector<uint64_t> at(ni + 1, 0);
  auto first_interval = [&](uint64_t j0) { return uint64_t(std::lower_bound(cuts.begin(), cuts.end(), j0) - cuts.begin()); };
  for (const Entry& e : entries)
    for (uint64_t i = first_interval(e.j0); i < ni && cuts[i] < e.j0 + e.n; ++i) ++at[i + 1];
  for (uint64_t i = 0; i < ni; ++i) at[i + 1] += at[i];
  events.resize(at[ni]);
  std::vector<uint64_t> fill(at.begin(), at.end() - 1);
  for (const Entry& e : entries)
    for (uint64_t i = first_interval(e.j0); i < ni && cuts[i] < e.j0 + e.n; ++i) events[fill[i]++] = e.ev;
  for (uint64_t i = 0; i < ni; ++i) {
    if (at[i] == at[i + 1]) continue;
    for (uint64_t x = cuts[i]; x < cuts[i + 1]; x += TET_CUDA_SPAN_MAX)
      spans.push_back(tet_cuda_span{x, std::min<uint64_t>(TET_CUDA_SPAN_MAX, cuts[i + 1] - x), at[i], at[i + 1]});
  }
}

template <class S, class T, class F> struct PartialDevice {
  using State = typename F::State;
  FoldRun& run;
  const device::Backend& be;
  const std::vector<uint32_t>& ordinals;
  const PartialFold<S, T, F> pf;
  const uint64_t budget = cache_budget();
  DeviceFailure failed;

  // Per pool slot: tile scratch, pageable staging when the module has no pinned memory, and the
  // job's tables.
  struct Slot {
    ScratchBytes scratch, pageable;
    std::vector<uint8_t> states;
    std::vector<uint64_t> loc;
    std::vector<tet_cuda_tile> tiles;
    std::vector<StagePart> to_stage;
    std::vector<tet_cuda_batch> batches;
    std::vector<tet_cuda_unit> units;
    std::vector<uint64_t> elems;  // last axis reduced: each run's box element
    std::vector<Entry> entries;
    std::vector<std::pair<uint64_t, uint64_t>> touched;
    std::vector<tet_cuda_span> spans;
    std::vector<uint32_t> events;
  };
  // One tile of a task: units [u0, u1) of wu.units, its selected elements [e_lo, e_hi).
  struct TilePart {
    uint64_t u0, u1, e_lo, e_hi;
  };

  PartialDevice(FoldRun& r, const device::Backend& b, const std::vector<uint32_t>& o)
      : run(r), be(b), ordinals(o), pf(r.plan, r.sel, r.isa) {}

  // Stages the tiles of parts [p0, p1) (densified selected elements, stored type) into slot.tiles;
  // resident whole tiles are only counted.
  void stage(const std::vector<TilePart>& parts, uint64_t p0, uint64_t p1, uint32_t ordinal, Slot& sl) {
    sl.to_stage.clear();
    for (uint64_t p = p0; p < p1; ++p)
      sl.to_stage.push_back(StagePart{run.sel.tile_at(pf.wu.units[parts[p].u0].piece), parts[p].e_lo, parts[p].e_hi});
    stage_parts<S>(run, be, ordinal, sl.to_stage, sl.tiles, sl.pageable, sl.scratch, sl.loc);
  }

  // fn(staged position, n, box element) for the CPU's rows of unit u (a tile row's selected
  // elements when the last axis has several runs, else each run), in the CPU's order.
  template <class Fn> void rows_of(uint64_t u, const TileSelection& ts, const Box& bx, uint64_t e_lo, Fn&& fn) const {
    const PartialUnit& un = pf.wu.units[u];
    uint64_t pos = un.e0 - e_lo;
    auto row = [&](uint64_t n, const Axes& idx) {
      fn(pos, n, pf.elem_of(bx, ts, idx));
      pos += n;
    };
    if (ts.nruns[pf.wu.last] > 1)
      Selection::for_each_row(ts, pf.wu.nd, un.e0, un.e1, [&](uint64_t, uint64_t c0, uint64_t c1, const Axes& idx) { row(c1 - c0, idx); });
    else
      Selection::for_each_run(ts, pf.wu.nd, un.e0, un.e1, [&](uint64_t, uint64_t n, const Axes& idx) { row(n, idx); });
  }

  // Last axis kept: batches, flush entries, spans; one partial job.
  void job_rows(const std::vector<TilePart>& parts, uint64_t p0, uint64_t p1, const Box& bx, BoxState<F>& st, uint32_t ordinal,
                Slot& sl) {
    stage(parts, p0, p1, ordinal, sl);
    sl.batches.clear(), sl.entries.clear();
    const bool blocked = F::blocked(pf.k);
    for (uint64_t p = p0; p < p1; ++p) {
      const TilePart& tp = parts[p];
      const TileSelection ts = run.sel.tile_at(pf.wu.units[tp.u0].piece);
      for (uint64_t u = tp.u0; u < tp.u1; ++u) {
        tet_cuda_batch cur{};
        cur.tile = uint32_t(p - p0);
        sl.touched.clear();
        auto flush_batch = [&] {
          if (cur.k == 0) return;
          sl.entries.push_back(Entry{cur.j0, cur.n, uint32_t(sl.batches.size())});
          if (blocked) sl.touched.emplace_back(cur.j0, cur.j0 + cur.n);
          sl.batches.push_back(cur);
          cur.k = 0;
        };
        rows_of(u, ts, bx, tp.e_lo, [&](uint64_t pos, uint64_t n, uint64_t j0) {
          if (cur.k > 0 && (cur.k == fold::kMaxRows || j0 != cur.j0 || n != cur.n)) flush_batch();
          cur.row[cur.k++] = pos;
          cur.j0 = j0, cur.n = n;
        });
        flush_batch();
        if (sl.touched.empty()) continue;
        // the unit's end: its touched ranges, coalesced as RowScratch::coalesce does
        std::sort(sl.touched.begin(), sl.touched.end());
        uint64_t a = sl.touched[0].first, b = sl.touched[0].second;
        for (size_t r = 1; r <= sl.touched.size(); ++r) {
          if (r < sl.touched.size() && sl.touched[r].first <= b) {
            b = std::max(b, sl.touched[r].second);
            continue;
          }
          sl.entries.push_back(Entry{a, b - a, TET_CUDA_FLUSH});
          if (r < sl.touched.size()) a = sl.touched[r].first, b = sl.touched[r].second;
        }
      }
    }
    if (sl.batches.size() >= TET_CUDA_FLUSH) fail("TET_INTERNAL", "device partial job with too many batches");
    make_spans(sl.entries, sl.spans, sl.events);
    tet_cuda_partial_job j{};
    j.struct_size = sizeof j;
    j.op = uint32_t(run.plan.op), j.dtype = uint32_t(run.sel.dataset.dtype), j.ordinal = ordinal;
    j.tiles = sl.tiles.data(), j.n_tiles = sl.tiles.size();
    j.batches = sl.batches.data(), j.n_batches = sl.batches.size();
    j.spans = sl.spans.data(), j.n_spans = sl.spans.size();
    j.events = sl.events.data(), j.n_events = sl.events.size();
    j.box_len = st.len;
    soa_cols<T, F>(j.op, st.soa, j.col);
    j.cache_budget = budget;
    char err[256] = {0};
    failed.set(be.api->partial_fold(&j, err, sizeof err), err);
  }

  // Last axis reduced: every row a scalar unit on the device, merged into its element here.
  void job_runs(const std::vector<TilePart>& parts, uint64_t p0, uint64_t p1, const Box& bx, BoxState<F>& st, uint32_t ordinal,
                Slot& sl) {
    stage(parts, p0, p1, ordinal, sl);
    sl.units.clear(), sl.elems.clear();
    for (uint64_t p = p0; p < p1; ++p) {
      const TilePart& tp = parts[p];
      const TileSelection ts = run.sel.tile_at(pf.wu.units[tp.u0].piece);
      for (uint64_t u = tp.u0; u < tp.u1; ++u)
        rows_of(u, ts, bx, tp.e_lo, [&](uint64_t pos, uint64_t n, uint64_t j) {
          sl.units.push_back(tet_cuda_unit{p - p0, pos, n});
          sl.elems.push_back(j);
        });
    }
    const uint64_t sb = F::kEncodedBytes;
    sl.states.assign(sl.units.size() * sb, 0);
    tet_cuda_scalar_job j{};
    j.struct_size = sizeof j;
    j.op = uint32_t(run.plan.op), j.dtype = uint32_t(run.sel.dataset.dtype), j.ordinal = ordinal;
    j.tiles = sl.tiles.data(), j.n_tiles = sl.tiles.size();
    j.units = sl.units.data(), j.n_units = sl.units.size();
    j.states = sl.states.data(), j.state_bytes = sb;
    j.cache_budget = budget;
    char err[256] = {0};
    const int rc = be.api->scalar_fold(&j, err, sizeof err);
    failed.set(rc, err);
    if (rc != TET_CUDA_OK) return;
    for (uint64_t r = 0; r < sl.units.size(); ++r)
      fold::ops::soa_merge_state<F, T>(pf.k, st.soa, sl.elems[r], F::decode(sl.states.data() + r * sb));
  }

  // Task ti into st: its tiles in jobs of about kDeviceJobBytes.
  void task(uint64_t ti, BoxState<F>& st, uint32_t ordinal, Slot& sl) {
    const PartialTask& tk = pf.wu.tasks[ti];
    const Box bx = pf.box_of(tk.group);
    std::vector<TilePart> parts;
    for (uint64_t u = tk.u0; u < tk.u1;) {
      uint64_t w = u + 1;
      while (w < tk.u1 && pf.wu.units[w].piece == pf.wu.units[u].piece) ++w;
      parts.push_back(TilePart{u, w, pf.wu.units[u].e0, pf.wu.units[w - 1].e1});
      u = w;
    }
    for (uint64_t p = 0; p < parts.size() && !failed.any();) {
      check_cancel(run.ctx);
      uint64_t q = p, bytes = 0;
      while (q < parts.size() && (q == p || bytes + (parts[q].e_hi - parts[q].e_lo) * sizeof(S) <= kDeviceJobBytes))
        bytes += (parts[q].e_hi - parts[q].e_lo) * sizeof(S), ++q;
      if (pf.wu.last_reduced) job_runs(parts, p, q, bx, st, ordinal, sl);
      else job_rows(parts, p, q, bx, st, ordinal, sl);
      p = q;
    }
  }

  bool fold(QueryResult& res, std::string& reason) {
    const PartialUnits& wu = pf.wu;
    if (wu.groups && wu.group_axis == wu.last) {  // the CPU's per-position scratch path
      reason = "gpu_unsupported_op";
      return false;
    }
    if (wu.last_reduced) {
      // a row is one scalar unit on the device, which holds at most kUnitElems elements
      for (const AxisPiece& pc : run.sel.pieces[wu.last])
        if (pc.n > kUnitElems) {
          reason = "gpu_unsupported_op";
          return false;
        }
      if (dev::encoded_bytes<T>(uint32_t(run.plan.op)) != F::kEncodedBytes) {
        reason = "gpu_unsupported_op";
        return false;
      }
    }
    uint8_t* const outb = pf.output(run.ctx, res);
    std::vector<BoxState<F>> states(wu.tasks.size());
    ThreadPool& pool = ThreadPool::instance();
    const uint32_t parts = pool.participants(wu.tasks.size(), run.threads);
    std::vector<Slot> slots(parts);
    pool.parallel_for(wu.tasks.size(), run.threads, [&](uint64_t ti, uint32_t slot) {
      if (failed.any()) return;
      check_cancel(run.ctx);
      BoxState<F>& st = states[ti];
      const Box bx = pf.box_of(wu.tasks[ti].group);
      pf.init(st, bx.len);
      task(ti, st, ordinals[ti % ordinals.size()], slots[slot]);
      if (!failed.any() && wu.tasks[ti].segs == 1) {
        pf.finalize_range(st, bx, 0, st.len, outb);
        pf.release(st);
      }
    });
    if (failed.fell_back(res, reason)) {
      for (BoxState<F>& st : states) pf.release(st);
      return false;
    }
    pf.merge_segments(states, parts > 1 ? run.threads : 1, outb);
    res.stats.io_mode = IoMode::ParallelChunks;
    res.stats.threads_used = parts;
    return true;
  }
};

}  // namespace

template <class S, class T> bool fold_partial_device(FoldRun& run, QueryResult& res, std::string& reason) {
  const device::Backend& be = device::backend();
  if (!backend_usable(be, reason)) return false;
  const uint32_t opw = uint32_t(run.plan.op);
  if (dev::family_of(opw) == dev::Family::None || opw >= 64 || ((be.caps.partial_op_mask >> opw) & 1) == 0) {
    reason = "gpu_unsupported_op";
    return false;
  }
  std::vector<uint32_t> ordinals;
  if (!device_ordinals(run.plan, be, ordinals, reason)) return false;
  bool folded = false;
  with_stream_family<T>(run.plan.op, [&](auto f) {
    using F = decltype(f);
    if constexpr (kIsArg<F, T>) reason = "gpu_unsupported_op";
    else folded = PartialDevice<S, T, F>(run, be, ordinals).fold(res, reason);
  });
  return folded;
}

#define TET_DEVICE_INSTANTIATE(S, T)                                                \
  template bool fold_scalar_device<S, T>(FoldRun&, QueryResult&, std::string&); \
  template bool fold_partial_device<S, T>(FoldRun&, QueryResult&, std::string&);

}  // namespace exec
}  // namespace tet
