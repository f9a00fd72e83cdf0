// Scalar folds: one state per unit, merged in unit order. Partial folds: a group's tasks fold
// its tiles into private box states (row batches along the kept inner axis, or per-run states
// when the last axis is reduced), merged in segment order. Either way the arithmetic order is a
// function of the plan only (work_units.h). Each loop is instantiated per (storage type, fold
// type, state family) and calls the family's State / Soa functions directly.
//
// Internal to exec/: the definitions, included by the fold_driver_<dtypes>.cpp files, each of
// which instantiates them (TET_FOLD_INSTANTIATE) for two storage types. One translation unit for
// all ten took ~3.5 minutes to compile and held up a 2-core build; split, its parts build
// beside the rest.
#pragma once
#include "exec/fold_driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <type_traits>

#include "exec/output_box.h"
#include "exec/thread_pool.h"
#include "fold/registry.h"

namespace tet {
namespace exec {
namespace {

template <class F, class T> constexpr bool kIsArg = std::is_same<F, fold::ops::Arg<T>>::value;

// fn(fold::ops::<Family><T>{}) for the op's streaming family (the drivers are never asked to
// fold an op without one).
template <class T, class Fn> void with_stream_family(Op op, Fn&& fn) {
  switch (fold::op_traits(op).family) {
#define TET_DRIVER_FAMILY_CASE(Fam) case fold::Family::Fam: fn(fold::ops::Fam<T>()); return;
    TET_FOLD_FAMILIES(TET_DRIVER_FAMILY_CASE)
#undef TET_DRIVER_FAMILY_CASE
    default: fail("TET_INTERNAL", std::string("op ") + fold::op_traits(op).name + " has no streaming state");
  }
}

template <class T> fold::OpCfg<T> cfg_of(const QueryPlan& plan, fold::Isa isa) {
  return fold::make_cfg<T>(plan.op, isa, plan.has_fill, plan.fill);
}

inline uint64_t logical_index(const Selection& sel, const TileSelection& ts, uint64_t e) {
  uint64_t out = 0;
  for (int a = int(sel.ndim) - 1; a >= 0; --a) {
    out += (ts.sel0[a] + e % ts.n[a]) * sel.sel_stride[a];
    e /= ts.n[a];
  }
  return out;
}

}  // namespace

// Fold scratch kept between queries: box states and row-kernel scratch go back to a process-wide
// free list per type (and key) when a fold is done with them, and the next fold of the same
// kind takes them, so repeated queries reuse warm memory instead of faulting in fresh pages
// (first touch runs at a fraction of memory bandwidth). Contents are never relied on: every
// taker re-initialises what it uses. At most kRecycleCap bytes are held in all.
// (One store per type for the whole process: these live outside the anonymous namespace, so
// every translation unit that instantiates the drivers shares them.)
inline constexpr uint64_t kRecycleCap = uint64_t(64) << 20;
inline std::atomic<uint64_t> g_recycled_bytes{0};

template <class X> class Recycler {
 public:
  // A kept object of `key` into `out` (its bytes into `bytes`); false when none is kept.
  static bool take(uint64_t key, X& out, uint64_t& bytes) {
    Store& st = store();
    std::lock_guard<std::mutex> g(st.mu);
    for (size_t i = st.items.size(); i-- > 0;) {
      if (st.items[i].key != key) continue;
      out = std::move(st.items[i].x);
      bytes = st.items[i].bytes;
      st.items[i] = std::move(st.items.back());
      st.items.pop_back();
      g_recycled_bytes.fetch_sub(bytes);
      return true;
    }
    return false;
  }
  // Keeps x when the cap allows, else frees it.
  static void give(uint64_t key, X&& x, uint64_t bytes) {
    if (bytes == 0 || bytes > kRecycleCap) return;
    uint64_t held = g_recycled_bytes.load();
    do {
      if (held + bytes > kRecycleCap) return;
    } while (!g_recycled_bytes.compare_exchange_weak(held, held + bytes));
    Store& st = store();
    std::lock_guard<std::mutex> g(st.mu);
    st.items.push_back(Item{key, bytes, std::move(x)});
  }

 private:
  struct Item {
    uint64_t key, bytes;
    X x;
  };
  struct Store {
    std::mutex mu;
    std::vector<Item> items;
  };
  static Store& store() {
    static Store* s = new Store();  // never destroyed: pool workers may outlive statics
    return *s;
  }
};

namespace {

// Bytes a row scratch holds.
uint64_t scratch_bytes(const fold::RowScratch& b) {
  return (b.s.capacity() + b.n.capacity()) * sizeof(double) + b.i.capacity() * sizeof(int64_t) + b.e.capacity() +
         b.ef.capacity() + b.runs.capacity() * sizeof(b.runs[0]);
}

// One row scratch per pool slot, taken from and (after a fold that completed, so its blocks are
// all zero again) given back to the recycler under `key`.
struct SlotScratch {
  std::vector<fold::RowScratch> v;
  uint64_t key;
  SlotScratch(uint32_t parts, uint64_t k) : v(parts), key(k) {
    for (fold::RowScratch& b : v) {
      uint64_t bytes = 0;
      Recycler<fold::RowScratch>::take(key, b, bytes);
    }
  }
  fold::RowScratch& operator[](size_t i) { return v[i]; }
  void recycle() {
    for (fold::RowScratch& b : v) {
      const uint64_t bytes = scratch_bytes(b);
      Recycler<fold::RowScratch>::give(key, std::move(b), bytes);
    }
    v.clear();
  }
};

// ---------------------------------------------------------------------------------------------
// Scalar folds

// The units of a scalar fold, loaded and handed to a sink: sink(unit, tile, e0, x, len) with x the
// unit's `len` elements as T (zero-copy where the tile is dense and needs no conversion). The
// sink folds them into its state(s) for that unit: one op (ScalarFold), or several in the same
// pass over the loaded unit (fold_scalar_multi).
// A sink that can also fold a unit run by run: sink.by_runs, and sink.runs(u, ts, e0, e1, each)
// where each(fold_run) calls fold_run(x, m) for the unit's runs in order.
template <class K, class = void> constexpr bool kSinkRuns = false;
template <class K> constexpr bool kSinkRuns<K, std::void_t<decltype(&K::by_runs)>> = true;

// Whether op family F folds a unit run by run (F::RunAcc, runs_ok, begin_runs, consume_run,
// end_runs: fold/ops/sum.h).
template <class F, class = void> constexpr bool kFamilyRuns = false;
template <class F> constexpr bool kFamilyRuns<F, std::void_t<typename F::RunAcc>> = true;

template <class S, class T> struct ScalarScan {
  const FoldRun& run;
  const std::vector<ScalarUnit> units;

  explicit ScalarScan(const FoldRun& r) : run(r), units(scalar_units(r.sel)) {}
  mutable bool pread_used = false;  // the last scan read its tiles by pread (ReadPath)
  mutable std::vector<std::pair<uint64_t, uint64_t>> pread_spans;  // ExecStats::pread_spans of the last scan

  // The file byte ranges units [u0, u1) span (byte runs of raw tiles: byte_runs), merged, into
  // pread_spans; none past ExecStats::kMaxPreadSpans.
  void note_pread_spans(uint64_t u0, uint64_t u1) const {
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    for (uint64_t ui = u0; ui < u1 && runs.size() <= ExecStats::kMaxPreadSpans; ++ui) {
      const ScalarUnit& u = units[ui];
      const TileSelection ts = run.sel.tile(u.tile);
      const uint64_t payload = payload_offset(ts.linear_chunk);
      if (ts.contiguous) {
        runs.emplace_back(payload + (ts.first_offset + u.e0) * sizeof(S), (u.e1 - u.e0) * sizeof(S));
        continue;
      }
      Selection::for_each_run(ts, run.sel.ndim, u.e0, u.e1, [&](uint64_t off, uint64_t m, const Axes&) {
        runs.emplace_back(payload + off * sizeof(S), m * sizeof(S));
      });
    }
    pread_spans.clear();
    if (runs.size() > ExecStats::kMaxPreadSpans) return;
    std::sort(runs.begin(), runs.end());
    for (const auto& r : runs) {
      if (!pread_spans.empty() && r.first <= pread_spans.back().first + pread_spans.back().second)
        pread_spans.back().second = std::max(pread_spans.back().first + pread_spans.back().second, r.first + r.second) -
                                    pread_spans.back().first;
      else pread_spans.push_back(r);
    }
  }

  // One unit's elements (tile bytes at `base`) to the sink.
  template <class Sink>
  void unit(Sink& sink, uint64_t ui, const TileSelection& ts, const uint8_t* base, uint64_t e0, uint64_t e1,
            std::vector<T>& buf) const {
    const Selection& sel = run.sel;
    const uint64_t len = e1 - e0;
    const T* x;
    if (ts.contiguous) {
      x = dense_elems<S, T>(base + (ts.first_offset + e0) * sizeof(S), len, buf);
    } else {
      if constexpr (std::is_same<S, T>::value && kSinkRuns<Sink>) {
        // Row runs long enough to fold where they lie, for a sink that takes them one by one with
        // the bits of the gathered unit: no copy.
        if (sink.by_runs && byte_runs(ts)) {
          sink.runs(ui, ts, e0, e1, [&](auto&& fold_run) {
            Selection::for_each_run(ts, sel.ndim, e0, e1, [&](uint64_t off, uint64_t m, const Axes&) {
              fold_run(reinterpret_cast<const T*>(base + off * sizeof(S)), m);
            });
          });
          return;
        }
      }
      if (buf.size() < len) buf.resize(len);
      thread_local std::vector<uint64_t> loc;
      gather_elems<S, T>(ts, sel.ndim, e0, e1, base, buf.data(), loc);
      x = buf.data();
    }
    sink(ui, ts, e0, x, len);
  }

  // The file offset of a raw tile's payload (the tile's linear chunk index).
  uint64_t payload_offset(uint64_t linear_chunk) const {
    const Catalog& cat = run.fetcher.source().catalog();
    return cat.entries[cat.datasets[run.plan.dataset_id].chunk_to_entry[linear_chunk]].payload_offset;
  }

  // Linear scan: windows of the stored extent, the units of each window folded in parallel.
  template <class Sink>
  void linear_scan(const StoredExtent& ext, uint64_t u0, uint64_t u1, Sink& sink, uint32_t& threads_used) const {
    const Catalog& cat = run.fetcher.source().catalog();
    const DatasetInfo& d = cat.datasets[run.plan.dataset_id];
    auto unit_offset = [&](const ScalarUnit& u) { return payload_offset(u.tile) + u.e0 * sizeof(S); };
    SequentialReader reader(run.fetcher.source(), ext, std::min(d.logical_bytes, SequentialReader::kWindowBytes));
    const uint64_t cap = reader.capacity();
    ThreadPool& pool = ThreadPool::instance();
    std::vector<std::vector<T>> bufs(pool.size());
    uint64_t i = u0;
    threads_used = 1;
    while (i < u1) {
      check_cancel(run.ctx);
      uint64_t j = i, bytes = 0;
      while (j < u1 && (j == i || bytes + (units[j].e1 - units[j].e0) * sizeof(S) <= cap))
        bytes += (units[j].e1 - units[j].e0) * sizeof(S), ++j;
      const uint64_t off = unit_offset(units[i]);
      const uint8_t* buf = reader.read(off, bytes);
      threads_used = std::max(threads_used, pool.participants(j - i, run.threads));
      pool.parallel_for(j - i, run.threads, [&](uint64_t n, uint32_t slot) {
        const ScalarUnit& u = units[i + n];
        const TileSelection ts = run.sel.tile(u.tile);
        const uint8_t* base = buf + (unit_offset(u) - off) - (ts.first_offset + u.e0) * sizeof(S);
        unit(sink, i + n, ts, base, u.e0, u.e1, bufs[slot]);
      });
      for (uint64_t n = i; n < j; ++n)
        if (units[n].e0 == 0) run.fetcher.count(run.sel.tile(units[n].tile));
      i = j;
    }
  }

  // The fewest units a scan must have for reading by pread to be considered (the measurement
  // below takes four). A thread's buffer is fresh memory on its first use, on huge pages
  // (tet/scratch.h): ~0.15 ms, where 4 KiB pages cost ~1.5 ms for the 512 KiB of an f32 unit.
  static constexpr uint64_t kPreadMinUnits = 16;
  // How much faster per byte pread must be, in both measured pairs, to be chosen. A unit's time
  // shows neither what reading by pread costs the rest of the scan (each unit copied into a buffer
  // that the fold then reads again) nor what reading through the mapping gives the scans after it
  // (a warm mapping, nothing to populate): on the Intel Xeon VM, every 4th row of a 256 MiB f32
  // file took the engine 4.7-5.0 ms through the mapping and 5.4-6.1 by pread, where the second
  // pair had pread 3-14 % faster per byte (docs/performance.md). Where faults are dear (the AMD
  // EPYC VM: pread ~2x faster per byte), pread still wins by far more than this.
  static constexpr double kPreadMargin = 1.25;
  double pread_margin() const { return run.ctx.pread_margin > 0 ? run.ctx.pread_margin : kPreadMargin; }

  // This thread's pread buffer, at least `bytes` long, its pages touched (so that timing a read
  // into it measures the read, not the first touch of fresh memory).
  static std::unique_ptr<AlignedBuffer>& read_area() {
    thread_local std::unique_ptr<AlignedBuffer> area;
    return area;
  }
  static void reserve_read_area(uint64_t bytes) {
    std::unique_ptr<AlignedBuffer>& area = read_area();
    if (area && area->size() >= bytes) return;
    area = std::make_unique<AlignedBuffer>(bytes, 64);
    std::memset(area->data(), 0, bytes);
  }

  // The shortest run of a tile selection that is read by a pread of its own: below a page,
  // the call costs more than the bytes it saves.
  static constexpr uint64_t kPreadMinRun = 4096;

  // Whether a unit of tile selection ts is one byte range of its tile (contiguous), or a few
  // (its last axis selected as one run of at least kPreadMinRun bytes: a row run, rows with a
  // step, a column range): what reading by pread needs.
  bool byte_runs(const TileSelection& ts) const {
    if (ts.contiguous) return true;
    const uint32_t last = run.sel.ndim - 1;
    return ts.step[last] == 1 && ts.nruns[last] <= 1 && ts.n[last] * sizeof(S) >= kPreadMinRun;
  }

  // Unit ui (byte runs of a raw tile: byte_runs) to the sink, read through the mapping or by
  // pread, a call per run, into this thread's buffer (kept for the thread's later scans: fresh
  // memory is dear). Either way the unit's elements reach the sink in the same order. Counts no
  // tile: the rounds count a tile at its first unit, measured_scan each tile at the first unit
  // of it read either way.
  template <class Sink>
  void fold_unit_read(Sink& sink, uint64_t ui, const ScalarUnit& u, bool pread, ScratchBytes& scratch,
                      std::vector<T>& buf) const {
    const TileSelection ts = run.sel.tile(u.tile);
    if (!pread) {  // (the measurement's mapped units)
      const TileView v = run.fetcher.view(ts, scratch);
      unit(sink, ui, ts, v.data, u.e0, u.e1, buf);
      return;
    }
    const ChunkSource& src = run.fetcher.source();
    const uint64_t payload = payload_offset(ts.linear_chunk);
    const uint64_t len = u.e1 - u.e0, bytes = len * sizeof(S);
    reserve_read_area(bytes);
    uint8_t* area = read_area()->data();
    if (ts.contiguous) {
      const uint64_t at = (ts.first_offset + u.e0) * sizeof(S);  // the unit's bytes within its tile
      src.read_range(payload + at, bytes, area);
      unit(sink, ui, ts, area - at, u.e0, u.e1, buf);
    } else {
      uint8_t* to = area;
      Selection::for_each_run(ts, run.sel.ndim, u.e0, u.e1, [&](uint64_t off, uint64_t m, const Axes&) {
        src.read_range(payload + off * sizeof(S), m * sizeof(S), to);
        to += m * sizeof(S);
      });
      sink(ui, ts, u.e0, dense_elems<S, T>(area, len, buf), len);
    }
  }

  // A dataset's first scan over raw byte-run units (`list`, each unit once) on up to `parts`
  // threads, choosing its way of reading as it folds: the first thread to start times two units
  // read through the mapping, the next one two read by pread (pairs 0-1 and 2-3: side by side,
  // so both ways meet the same machine; with one thread, one after the other), each per byte,
  // the pread buffer readied before the clock starts; every other unit is read through
  // the mapping until the four are in, then the way chosen: pread where it was faster in both
  // pairs by the margin (kPreadMargin unless ExecContext::pread_margin says otherwise). Nobody
  // waits for the measurement (a fresh process's first pread buffer, a huge page to clear, cost a
  // 16 MiB row range ~0.4 ms when the other thread waited for it). Each tile is counted once, by
  // the first unit of it read either way. Returns whether pread was chosen.
  template <class Sink>
  bool measured_scan(Sink& sink, const std::vector<uint64_t>& list, uint32_t parts, std::vector<ScratchBytes>& scratch,
                     std::vector<std::vector<T>>& bufs) const {
    using clock = std::chrono::steady_clock;
    const double margin = pread_margin();
    enum : int { kUndecided = 0, kMapped = 1, kPread = 2 };
    std::atomic<int> way{kUndecided};
    // The two timing roles, each a thread's (-1: not taken): the first thread to start times two
    // units through the mapping, the next one two by pread. A thread that finished its mapped pair
    // while the pread role is still free (one thread only, the others not started) takes it too.
    // Each counter is touched only by its role's thread.
    std::atomic<int32_t> mapped_by{-1}, pread_by{-1};
    uint32_t mapped_timed = 0, pread_timed = 0;
    std::mutex mu;
    double per_byte[4] = {-1, -1, -1, -1};  // pairs (0, 1) and (2, 3): mapped, pread
    auto timed = [&](int pair0) { return per_byte[pair0] >= 0 && per_byte[pair0 + 1] >= 0; };
    // pread where it was cheaper by the margin in every pair timed (and one pair at least)
    auto chosen = [&] {
      return (timed(0) || timed(2)) && (!timed(0) || per_byte[1] * margin < per_byte[0]) &&
             (!timed(2) || per_byte[3] * margin < per_byte[2]);
    };
    uint64_t ntiles = 0;
    for (uint64_t ui : list) ntiles = std::max<uint64_t>(ntiles, uint64_t(units[ui].tile) + 1);
    std::unique_ptr<std::atomic<uint8_t>[]> counted(new std::atomic<uint8_t>[ntiles]());
    ThreadPool::instance().parallel_for(list.size(), parts, [&](uint64_t k, uint32_t slot) {
      check_cancel(run.ctx);
      const uint64_t ui = list[k];
      const ScalarUnit& u = units[ui];
      const uint64_t bytes = (u.e1 - u.e0) * sizeof(S);
      const int w = way.load(std::memory_order_acquire);
      bool pread = w == kPread;
      int sample = -1;
      if (w == kUndecided) {
        const int32_t me = int32_t(slot);
        auto mine = [me](std::atomic<int32_t>& role) {  // takes the role if free; whether it is ours
          int32_t owner = -1;
          return role.compare_exchange_strong(owner, me) || owner == me;
        };
        if (mine(mapped_by) && mapped_timed < 2) {
          sample = int(2 * mapped_timed++);
        } else if ((mapped_by.load() != me || mapped_timed == 2) && mine(pread_by) && pread_timed < 2) {
          sample = int(2 * pread_timed++ + 1), pread = true;
          reserve_read_area(bytes);
        }
      }
      const auto a = clock::now();
      fold_unit_read(sink, ui, u, pread, scratch[slot], bufs[slot]);
      if (sample >= 0) {
        const double pb = std::chrono::duration<double>(clock::now() - a).count() / double(bytes);
        std::lock_guard<std::mutex> g(mu);
        per_byte[sample] = pb;
        if (way.load(std::memory_order_relaxed) == kUndecided && timed(0) && timed(2))
          way.store(chosen() ? kPread : kMapped, std::memory_order_release);
      }
      if (counted[u.tile].exchange(1, std::memory_order_relaxed) == 0) run.fetcher.count(run.sel.tile(u.tile));
    });
    if (way.load() != kUndecided) return way.load() == kPread;
    // A role's thread got no further unit (a busy machine kept it off the cores): the pairs that
    // were timed decide (the pread role's first unit is always timed: its thread is folding it).
    return chosen();
  }

  // Units [u0, u1) to the sink (each exactly once, in any order and on any thread).
  template <class Sink>
  void scan(uint64_t u0, uint64_t u1, Sink& sink, IoMode& mode_out, uint32_t& threads_used_out) const {
    const QueryPlan& plan = run.plan;
    const Selection& sel = run.sel;
    IoMode mode = plan.io_mode;
    StoredExtent ext;
    if (mode == IoMode::LinearScan && !SequentialReader::layout(run.fetcher.source(), sel, plan.dataset_id, ext))
      mode = IoMode::SequentialChunks;
    uint32_t threads_used = 1;
    if (mode == IoMode::LinearScan) {
      linear_scan(ext, u0, u1, sink, threads_used);
    } else {
      std::vector<uint64_t> order(u1 - u0);
      std::iota(order.begin(), order.end(), u0);
      const Catalog& cat = run.fetcher.source().catalog();
      const DatasetInfo& dinfo = cat.datasets[plan.dataset_id];
      const bool sequential = mode == IoMode::SequentialChunks;
      if (sequential && sel.full) {  // visit payloads in file order
        auto offset_of = [&](uint64_t u) {
          const uint64_t lc = sel.tile(units[u].tile).linear_chunk;
          return lc < dinfo.chunk_to_entry.size() && dinfo.chunk_to_entry[lc] < cat.entries.size()
                     ? cat.entries[dinfo.chunk_to_entry[lc]].payload_offset : 0;
        };
        std::vector<uint64_t> key(units.size());
        for (uint64_t u = u0; u < u1; ++u) key[u] = offset_of(u);
        std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return key[a] < key[b]; });
      }
      // Tasks over `order`. Parallel chunks: a compressed tile split into several units is one
      // task (decoded once into the thread's scratch, all its units folded there), so threads
      // decode different tiles at once; raw tiles keep one task per unit (their views are
      // zero-copy). Sequential chunks: one task per unit, visited in rounds of whole tiles in
      // `order`, each round spread over the pool (a compressed tile is decoded once, shared
      // through the cache), so a one-tile selection still uses every core. Units, and so the
      // states and their merge order, are the same whoever folds them.
      auto decoded = [&](uint64_t lc) {
        return lc < dinfo.chunk_to_entry.size() && dinfo.chunk_to_entry[lc] < cat.entries.size() &&
               cat.entries[dinfo.chunk_to_entry[lc]].codec != Codec::Raw;
      };
      struct Task {
        uint64_t k0, k1;  // [k0, k1) in `order`
        bool whole_tile;
      };
      std::vector<Task> tasks;
      tasks.reserve(order.size());
      for (uint64_t n = 0; n < order.size();) {
        const ScalarUnit& u = units[order[n]];
        uint64_t j = n + 1;
        const bool whole = !sequential && u.tile_units > 1 && decoded(sel.tile(u.tile).linear_chunk);
        if (whole)
          while (j < order.size() && units[order[j]].tile == u.tile) ++j;
        tasks.push_back(Task{n, j, whole});
        n = j;
      }
      ThreadPool& pool = ThreadPool::instance();
      // Rounds [r0, r1) of tasks: everything at once, or (sequential) whole tiles in order, a
      // round closing at a tile boundary once it has a task per participant.
      std::vector<std::pair<uint64_t, uint64_t>> rounds;
      if (!sequential) {
        rounds.emplace_back(0, tasks.size());
      } else {
        const uint64_t want = pool.participants(UINT64_MAX, run.threads);  // >= 1
        for (uint64_t t = 0; t < tasks.size();) {
          uint64_t e = t + 1;
          while (e < tasks.size() && (e - t < want || units[order[tasks[e].k0]].tile == units[order[tasks[e - 1].k0]].tile))
            ++e;
          rounds.emplace_back(t, e);
          t = e;
        }
      }
      uint64_t widest = 0;
      for (const auto& r : rounds) widest = std::max(widest, r.second - r.first);
      const uint32_t parts = pool.participants(widest, run.threads);
      threads_used = parts;
      std::vector<std::vector<T>> bufs(parts);
      std::vector<ScratchBytes> scratch(parts);
      TileCache cache(run.fetcher);
      // Parallel chunks over raw tiles where each unit's elements are one byte range (the whole
      // dataset, a run of rows, ...) or a few (rows with a step, a wide column range): read
      // through the mapping, or by pread into a per-thread buffer (only the bytes selected). A
      // process that has not touched the mapping yet pays a page fault per few pages (on shared
      // VMs more than copying them out of the page cache); one that has reads it for free. On
      // the dataset's first scan through this source the scan measures both ways as it folds
      // (measured_scan: two units each way, timed per byte; the first pair also pays the fold's
      // and the buffer's first use) and reads the rest the way chosen; later scans read through
      // the mapping (populated by then, or worth populating once for the scans to come). Units
      // fold alike whichever way they are read, so the result's bits do not depend on the choice.
      const ChunkSource& src = run.fetcher.source();
      StoredExtent pext;
      bool by_pread = false;
      bool done = false;  // every unit folded already (by measured_scan)
      auto unit_ranges = [&] {  // every tile raw, every unit byte runs of its tile
        if (!src.stored_extent(plan.dataset_id, pext)) return false;
        for (const Task& t : tasks)
          if (!byte_runs(sel.tile(units[order[t.k0]].tile))) return false;
        return true;
      };
      if (run.ctx.read_path != ReadPath::Mapped && unit_ranges()) {
        if (run.ctx.read_path == ReadPath::Pread) {
          by_pread = true;
        } else if (tasks.size() >= kPreadMinUnits && src.first_scan(plan.dataset_id)) {
          std::vector<uint64_t> list(tasks.size());  // each task one unit here (raw tiles)
          for (size_t k = 0; k < tasks.size(); ++k) list[k] = order[tasks[k].k0];
          by_pread = measured_scan(sink, list, parts, scratch, bufs);
          done = true;
        }
      }
      pread_used = by_pread;
      if (by_pread) note_pread_spans(u0, u1);
      if (done) rounds.clear();
      for (const auto& r : rounds) {
        pool.parallel_for(r.second - r.first, run.threads, [&](uint64_t rt, uint32_t slot) {
          check_cancel(run.ctx);
          const Task& task = tasks[r.first + rt];
          const ScalarUnit& u = units[order[task.k0]];
          if (by_pread) {
            fold_unit_read(sink, order[task.k0], u, true, scratch[slot], bufs[slot]);
            if (u.e0 == 0) run.fetcher.count(sel.tile(u.tile));
            return;
          }
          const TileSelection ts = sel.tile(u.tile);
          if (task.whole_tile || u.tile_units == 1) {
            const TileView v = run.fetcher.fetch(ts, scratch[slot]);
            for (uint64_t n = task.k0; n < task.k1; ++n) {
              if (n != task.k0) check_cancel(run.ctx);
              const ScalarUnit& w = units[order[n]];
              unit(sink, order[n], ts, v.data, w.e0, w.e1, bufs[slot]);
            }
            return;
          }
          struct Release {
            TileCache& c;
            uint64_t lc;
            ~Release() { c.release(lc); }
          } release{cache, ts.linear_chunk};
          const TileView v = cache.acquire(ts, u.tile_units);
          unit(sink, order[task.k0], ts, v.data, u.e0, u.e1, bufs[slot]);
        });
      }
    }
    mode_out = mode;
    threads_used_out = threads_used;
  }
};

// One op's unit state from a loaded unit (arg ops: the index made logical).
template <class T, class F>
typename F::State consume_unit(const fold::OpCfg<T>& k, const Selection& sel, const TileSelection& ts, uint64_t e0,
                               const T* x, uint64_t len) {
  typename F::State a;
  F::consume(k, a, x, len);
  if constexpr (kIsArg<F, T>)
    if (a.idx != UINT64_MAX) a.idx = logical_index(sel, ts, e0 + a.idx);
  return a;
}

// One op's unit state from the unit's runs (each(fold_run) calls fold_run(x, m) for them in
// order; len elements in all), through the family's run interface (kFamilyRuns).
template <class T, class F, class Each>
typename F::State state_of_runs(const fold::OpCfg<T>& k, uint64_t len, Each&& each) {
  typename F::RunAcc acc;
  F::begin_runs(k, acc, len);
  uint64_t at = 0;
  each([&](const T* x, uint64_t m) { F::consume_run(k, acc, x, m, at), at += m; });
  typename F::State a = F::identity(k);
  F::end_runs(k, acc, a);
  return a;
}

template <class S, class T, class F> struct ScalarFold : ScalarScan<S, T> {
  using State = typename F::State;
  const fold::OpCfg<T> k;

  explicit ScalarFold(const FoldRun& r) : ScalarScan<S, T>(r), k(cfg_of<T>(r.plan, r.isa)) {}

  // A unit's state from its loaded elements, or run by run where F can (kFamilyRuns).
  struct UnitSink {
    const ScalarFold& f;
    std::vector<State>& states;
    bool by_runs;
    void operator()(uint64_t u, const TileSelection& ts, uint64_t e0, const T* x, uint64_t len) {
      states[u] = consume_unit<T, F>(f.k, f.run.sel, ts, e0, x, len);
    }
    template <class Each> void runs(uint64_t u, const TileSelection&, uint64_t e0, uint64_t e1, Each&& each) {
      if constexpr (kFamilyRuns<F>) states[u] = state_of_runs<T, F>(f.k, e1 - e0, each);
    }
  };

  // Folds units [u0, u1) into states[u0..u1); the rest are left untouched.
  void fold_units(uint64_t u0, uint64_t u1, std::vector<State>& states, IoMode& mode_out, uint32_t& threads_used_out) const {
    bool by_runs = false;
    if constexpr (kFamilyRuns<F>) by_runs = F::runs_ok(k);
    UnitSink sink{*this, states, by_runs};
    this->scan(u0, u1, sink, mode_out, threads_used_out);
  }
};

// The canonical left fold of the unit states in unit order, then finalize: the one compiled
// merge/finalize path of scalar folds, shared by fold_scalar and the shard coordinator (so even
// NaN payloads agree).
template <class T, class F>
__attribute__((noinline)) void merge_finalize_scalar(const fold::OpCfg<T>& k, const typename F::State* parts, uint64_t n,
                                                     DType dt, QueryResult& res) {
  typename F::State total;
  for (uint64_t u = 0; u < n; ++u) F::merge(k, total, parts[u]);
  const ValueKind kind = fold::value_kind(k.op, dt);
  res.values.kind = kind;
  res.values.length = 1;
  res.values.bytes.assign(fold::value_size(kind), 0);
  F::finalize(k, total, res.values.bytes.data());
}

// Several ops in one pass (QueryPlan::more, the `reductions` extension): each op is a lane of
// unit states, and the scan hands every loaded unit to each lane in turn, so the unit is read
// from memory once and is still in cache for the next lane. Ops of one family whose consume is
// the same (F::consume_class: min and max, sum and mean, var and std) share one lane's states,
// each finalizing them its own way. Every op's states merge and finalize exactly as a single-op
// fold of that op would (same units, same order), so the values are the same bits.
template <class F, class T, class = void> struct HasConsumeClass : std::false_type {};
template <class F, class T>
struct HasConsumeClass<F, T, std::void_t<decltype(F::consume_class(std::declval<const fold::OpCfg<T>&>()))>>
    : std::true_type {};
// Ops with equal classes (within one family) consume identically; a family without
// consume_class gives every op its own.
template <class F, class T> uint64_t consume_class(const fold::OpCfg<T>& k) {
  if constexpr (HasConsumeClass<F, T>::value) return F::consume_class(k);
  else return (uint64_t(1) << 32) | uint64_t(k.op);
}

template <class T> struct Lane {
  virtual ~Lane() = default;
  virtual void consume(uint64_t u, const Selection& sel, const TileSelection& ts, uint64_t e0, const T* x,
                       uint64_t len) = 0;
  virtual void finish(DType dt, QueryResult& res) const = 0;
  // Whether consume_runs can take this lane's units: its family folds run by run (or its states
  // are another lane's).
  virtual bool takes_runs() const = 0;
  // Unit u given as its runs in order (len elements in all).
  virtual void consume_runs(uint64_t u, const std::pair<const T*, uint64_t>* runs, size_t nruns, uint64_t len) = 0;
  // Takes the states of `other` when it is the same family and consume class; true if so.
  virtual bool share(Lane<T>& other) = 0;
  // One address per lane type (no RTTI needed to tell lanes apart).
  virtual const void* family() const = 0;
};

template <class T, class F> struct OpLane final : Lane<T> {
  const fold::OpCfg<T> k;
  const uint64_t cls;
  std::vector<typename F::State> states;  // empty when the states are `from`'s
  const OpLane* from = nullptr;           // the lane whose states this one finalizes (lanes outlive the fold)
  OpLane(const fold::OpCfg<T>& c, uint64_t units) : k(c), cls(consume_class<F, T>(c)), states(units) {}
  void consume(uint64_t u, const Selection& sel, const TileSelection& ts, uint64_t e0, const T* x,
               uint64_t len) override {
    if (!from) states[u] = consume_unit<T, F>(k, sel, ts, e0, x, len);
  }
  bool takes_runs() const override {
    if (from) return true;
    if constexpr (kFamilyRuns<F>) return F::runs_ok(k);
    return false;
  }
  void consume_runs(uint64_t u, const std::pair<const T*, uint64_t>* runs, size_t nruns, uint64_t len) override {
    if constexpr (kFamilyRuns<F>) {
      if (from) return;
      states[u] = state_of_runs<T, F>(k, len, [&](auto&& fold_run) {
        for (size_t i = 0; i < nruns; ++i) fold_run(runs[i].first, runs[i].second);
      });
    }
  }
  void finish(DType dt, QueryResult& res) const override {
    const std::vector<typename F::State>& s = from ? from->states : states;
    merge_finalize_scalar<T, F>(k, s.data(), s.size(), dt, res);
  }
  const void* family() const override {
    static const char tag = 0;
    return &tag;
  }
  bool share(Lane<T>& other) override {
    if (other.family() != family()) return false;
    const auto* o = static_cast<const OpLane<T, F>*>(&other);
    if (o->from || o->cls != cls) return false;
    from = o;
    states.clear();
    states.shrink_to_fit();
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// Partial folds

// One output box's state: the family's structure of arrays over box elements.
template <class F> struct BoxState {
  typename F::Soa soa;
  size_t len = 0;
  uint64_t bytes = 0;  // the Soa's size when it was (last) initialised, for the recycler
};

template <class S, class T, class F> struct PartialFold {
  using State = typename F::State;
  using Boxes = std::vector<BoxState<F>>;
  const QueryPlan& plan;
  const Selection& sel;
  const fold::OpCfg<T> k;
  const PartialUnits wu;
  const ValueKind kind;
  const size_t vs;

  PartialFold(const QueryPlan& p, const Selection& s, fold::Isa isa)
      : plan(p), sel(s), k(cfg_of<T>(p, isa)), wu(partial_units(p, s, F::soa_bytes(k))),
        kind(fold::value_kind(p.op, s.dataset.dtype)), vs(fold::value_size(kind)) {}

  Box box_of(uint64_t g) const { return wu.box_of(sel, g); }
  // [groups, ...kept counts] grouped, else the kept counts.
  void set_shape(QueryResult& res) const {
    res.reduced_shape.clear();
    if (wu.groups) res.reduced_shape.push_back(wu.groups);
    for (uint32_t a : wu.kept) res.reduced_shape.push_back(sel.count[a]);
  }
  // The box element of a tile element: box_index, plus its group's slab when grouped.
  uint64_t elem_of(const Box& bx, const TileSelection& ts, const Axes& idx) const {
    const uint64_t j = box_index(bx, wu.kept, ts.sel0, idx);
    return wu.groups ? j + uint64_t(wu.gid[ts.sel0[wu.group_axis] + idx[wu.group_axis]]) * bx.inner : j;
  }
  // fn(box element, output index, len, elements reduced into each) over box elements [a, b):
  // runs along the last kept axis, within one group slab when grouped.
  template <class Fn> void out_runs(const Box& bx, uint64_t a, uint64_t b, Fn&& fn) const {
    if (!wu.groups) {
      box_runs(bx, wu.kept, wu.out_stride, a, b, [&](uint64_t le, uint64_t gi, uint64_t len) { fn(le, gi, len, wu.fib_len); });
      return;
    }
    for (uint64_t le = a; le < b;) {
      const uint64_t slab = le / bx.inner, s0 = slab * bx.inner, e = std::min(b, s0 + bx.inner);
      const uint64_t fib = wu.gcount[slab] * wu.fib_other;
      if (wu.kept.empty()) fn(le, slab, e - le, fib);
      else
        box_runs(bx, wu.kept, wu.out_stride, le - s0, e - s0,
                 [&](uint64_t l, uint64_t gi, uint64_t len) { fn(s0 + l, slab * wu.out_inner + gi, len, fib); });
      le = e;
    }
  }
  void init(BoxState<F>& st, size_t len) const {
    if (st.bytes == 0) Recycler<typename F::Soa>::take(uint64_t(plan.op), st.soa, st.bytes);
    st.len = len;
    F::init(k, st.soa, len);
    st.bytes = std::max<uint64_t>(st.bytes, uint64_t(len) * F::soa_bytes(k));
  }
  // Done with st: its memory goes to the recycler for the next fold of this op.
  void release(BoxState<F>& st) const {
    Recycler<typename F::Soa>::give(uint64_t(plan.op), std::move(st.soa), st.bytes);
    st = BoxState<F>();
  }

  void init_result(QueryResult& res) const {
    res.values.kind = kind;
    res.values.length = wu.out_len;
    res.values.bytes.assign(wu.out_len * vs, 0);
    set_shape(res);
  }
  // Caller-owned values (ExecContext::output): exactly out_len 8-byte values, written once each
  // by finalize_range (the boxes cover the output); res.values keeps its kind and length only.
  uint8_t* bind_output(const ExecContext& ctx, QueryResult& res) const {
    if (vs != 8 || ctx.output_bytes != wu.out_len * vs || (wu.out_len > 0 && ctx.output == nullptr))
      fail("TET_PLAN_INVALID", "output holds " + std::to_string(ctx.output_bytes) + " bytes; the reduction writes " +
                                   std::to_string(wu.out_len) + " values of " + std::to_string(vs) + " bytes");
    res.values.kind = kind;
    res.values.length = wu.out_len;
    res.values.bytes.clear();
    set_shape(res);
    return ctx.output;
  }

  // Where finalize writes: the caller-owned output, else res.values (initialised here).
  uint8_t* output(const ExecContext& ctx, QueryResult& res) const {
    if (ctx.has_output) return bind_output(ctx, res);
    init_result(res);
    return res.values.bytes.data();
  }

  // The one compiled finalize of a box range, shared by the engine and the shard coordinator.
  __attribute__((noinline)) void finalize_range(const BoxState<F>& st, const Box& bx, uint64_t a, uint64_t b,
                                                uint8_t* outb) const {
    out_runs(bx, a, b, [&](uint64_t le, uint64_t gi, uint64_t len, uint64_t fib) {
      for (uint64_t n = 0; n < len; ++n) fold::ops::soa_finalize<F, T>(k, st.soa, le + n, fib, outb + (gi + n) * vs);
    });
  }

  // Merges the segments of every multi-segment group in order into the first one and
  // finalizes the box (single-segment tasks were finalized by the caller).
  __attribute__((noinline)) void merge_segments(Boxes& states, uint32_t threads, uint8_t* outb) const {
    ThreadPool& pool = ThreadPool::instance();
    for (uint64_t ti = 0; ti < wu.tasks.size();) {
      const PartialTask& first = wu.tasks[ti];
      if (first.segs == 1) { ++ti; continue; }
      const Box bx = box_of(first.group);
      constexpr uint64_t kBlock = 4096;
      const uint64_t blocks_n = (bx.len + kBlock - 1) / kBlock;
      pool.parallel_for(blocks_n, threads, [&](uint64_t b, uint32_t) {
        const uint64_t a = b * kBlock, e = std::min(bx.len, a + kBlock);
        for (uint32_t s = 1; s < first.segs; ++s) fold::ops::soa_merge<F, T>(k, states[ti].soa, a, states[ti + s].soa, a, e - a);
        finalize_range(states[ti], bx, a, e, outb);
      });
      for (uint32_t s = 0; s < first.segs; ++s) release(states[ti + s]);
      ti += first.segs;
    }
  }

  // Encoded bytes of task ti's state (box elements x the op's encoded state).
  uint64_t task_state_bytes(uint64_t ti) const { return box_of(wu.tasks[ti].group).len * F::kEncodedBytes; }
  void encode(const BoxState<F>& st, const Box& bx, size_t j, uint8_t* out) const {
    F::encode(F::get(k, st.soa, j, wu.fib_of(bx, j)), out);
  }
  void decode(BoxState<F>& st, size_t j, const uint8_t* in) const { F::put(k, st.soa, j, F::decode(in)); }

  // Folds tasks [t0, t1) into states[t0..t1); done(ti, state) at the end of each task.
  template <class Done>
  void run_tasks(const FoldRun& run, uint64_t t0, uint64_t t1, Boxes& states, IoMode& mode_out, uint32_t& parts_out,
                 Done&& done) const {
    ThreadPool& pool = ThreadPool::instance();
    const uint32_t nd = wu.nd, last = wu.last;
    IoMode mode = plan.io_mode == IoMode::ParallelChunks ? IoMode::ParallelChunks : IoMode::SequentialChunks;
    // Sequential chunks visit one tile after another; a selection inside one tile still spreads
    // its tasks (the segments of its one group) over the pool.
    const uint32_t threads = mode == IoMode::SequentialChunks && sel.tiles > 1 ? 1 : run.threads;
    const uint32_t parts = pool.participants(t1 - t0, threads);
    std::vector<std::vector<T>> bufs(parts);
    std::vector<ScratchBytes> scratch(parts);
    const uint64_t scratch_key = uint64_t(plan.op) << 8 | sizeof(T);
    SlotScratch blocks(parts, scratch_key);
    uint64_t max_run = 1;  // longest run along the last axis in one tile
    for (const AxisPiece& pc : sel.pieces[last]) max_run = std::max(max_run, pc.n);
    TileCache cache(run.fetcher);
    const bool blocked = !wu.last_reduced && F::blocked(k);
    const bool group_last = wu.groups && wu.group_axis == last;
    std::vector<BoxState<F>> gtmp(parts);  // group_last: per-slot tile scratch states
    // index / run lists on the last axis: per slot, the tile positions of the last tile's ordinals
    std::vector<Selection::LastAxisCache> locs(parts);
    SlotScratch gblk(parts, scratch_key);

    pool.parallel_for(t1 - t0, threads, [&](uint64_t tk, uint32_t slot) {
      const uint64_t ti = t0 + tk;
      const PartialTask& task = wu.tasks[ti];
      const Box bx = box_of(task.group);
      BoxState<F>& st = states[ti];
      init(st, bx.len);
      fold::RowScratch& blk = blocks[slot];
      if (blocked) F::reserve(k, blk, wu.max_box);
      std::vector<T>& buf = bufs[slot];
      uint64_t u = task.u0;
      while (u < task.u1) {
        check_cancel(run.ctx);
        const PartialUnit& unit = wu.units[u];
        const TileSelection ts = sel.tile_at(unit.piece);
        const bool shared = task.segs > 1 && unit.tile_units > 1;
        TileView v;
        if (shared) v = cache.acquire(ts, unit.tile_units);
        else v = run.fetcher.fetch(ts, scratch[slot]);
        // Rows are loaded in place when possible, else into buffer row `slot_row` (a batch holds
        // up to kMaxRows rows, so the buffer holds that many runs and is never resized mid-batch).
        if (buf.size() < fold::kMaxRows * max_run) buf.resize(fold::kMaxRows * max_run);
        auto load = [&](uint64_t off, uint64_t n, size_t slot_row) -> const T* {
          const uint8_t* p = v.data + off * sizeof(S);
          T* dst = buf.data() + slot_row * max_run;
          if (ts.step[last] == 1) {
            if (std::is_same<S, T>::value && reinterpret_cast<uintptr_t>(p) % alignof(T) == 0)
              return reinterpret_cast<const T*>(p);
            load_elems<S, T>(p, 1, n, dst);
            return dst;
          }
          load_elems<S, T>(p, ts.step[last], n, dst);
          return dst;
        };
        auto fiber_of = [&](const Axes& idx) {
          uint64_t fib = 0;
          for (uint32_t a : wu.reduced) fib += (ts.sel0[a] + idx[a]) * wu.fib_stride[a];
          return fib;
        };
        // Runs with the same box range are batched (fiber order kept) for the row kernels, into
        // `soa` (and its block scratch `rs`) at the element `j_of(idx)` of each run's first value.
        const T* xs[fold::kMaxRows];
        uint64_t fibs[fold::kMaxRows];
        auto scan_rows = [&](typename F::Soa& soa, fold::RowScratch& rs, uint64_t e0, uint64_t e1, auto&& j_of) {
          size_t bk = 0;
          uint64_t bj0 = 0, bn = 0;
          auto flush_batch = [&] {
            if (bk == 0) return;
            F::consume_rows(k, soa, rs, bj0, xs, fibs, bk, bn);
            bk = 0;
          };
          if (ts.nruns[last] > 1) {
            // An index / run list on the last axis: a row's selected elements (adjacent in
            // selection order, so in the box) are gathered into one buffer row through their
            // tile positions (computed once per tile) and fold as one run.
            const uint64_t* loc = locs[slot].of(ts, nd);
            const uint64_t ls = ts.tile_stride[last];
            Selection::for_each_row(ts, nd, e0, e1, [&](uint64_t off, uint64_t c0, uint64_t c1, const Axes& idx) {
              const uint64_t j0 = j_of(idx), pn = c1 - c0;
              if (bk > 0 && (bk == fold::kMaxRows || j0 != bj0 || pn != bn)) flush_batch();
              T* dst = buf.data() + bk * max_run;
              gather_row<S, T>(v.data + off * sizeof(S), loc + c0, ls, pn, dst);
              xs[bk] = dst;
              fibs[bk] = fiber_of(idx);
              bj0 = j0, bn = pn, ++bk;
            });
            flush_batch();
            return;
          }
          Selection::for_each_run(ts, nd, e0, e1, [&](uint64_t off, uint64_t n, const Axes& idx) {
            const uint64_t j0 = j_of(idx);
            if (bk > 0 && (bk == fold::kMaxRows || j0 != bj0 || n != bn)) flush_batch();
            xs[bk] = load(off, n, bk);
            fibs[bk] = fiber_of(idx);
            bj0 = j0, bn = n, ++bk;
          });
          flush_batch();
        };
        auto scan = [&](uint64_t e0, uint64_t e1) {
          scan_rows(st.soa, blk, e0, e1, [&](const Axes& idx) { return elem_of(bx, ts, idx); });
        };
        // group_by along the last axis: the tile's rows go through the row kernels into a scratch
        // state per (kept element, position along the axis), which then merges into the groups'
        // slabs position by position (one merge per position and kept element, not per value).
        const uint64_t ng = ts.n[last];
        BoxState<F>& gt = gtmp[slot];
        if (group_last) {
          init(gt, bx.inner * ng);
          if (F::blocked(k)) F::reserve(k, gblk[slot], bx.inner * ng);
        }
        auto group_scan = [&](uint64_t e0, uint64_t e1) {
          scan_rows(gt.soa, gblk[slot], e0, e1,
                    [&](const Axes& idx) { return box_index(bx, wu.kept, ts.sel0, idx) * ng + idx[last]; });
          if (F::blocked(k)) F::flush(k, gt.soa, gblk[slot]);
        };
        auto group_merge = [&] {
          const uint32_t* g = wu.gid + ts.sel0[last];
          for (uint64_t j = 0; j < bx.inner; ++j)
            for (uint64_t p = 0; p < ng; ++p)
              fold::ops::soa_merge<F, T>(k, st.soa, j + uint64_t(g[p]) * bx.inner, gt.soa, j * ng + p, 1);
        };
        // every unit of this tile inside this task
        uint64_t w = u;
        try {
          for (; w < task.u1 && wu.units[w].piece == unit.piece; ++w) {
            if (group_last) {
              group_scan(wu.units[w].e0, wu.units[w].e1);
            } else if (wu.last_reduced && ts.nruns[last] > 1) {
              // an index / run list along the reduced last axis: a row's elements, gathered, are
              // one run of its output element (as a box row is)
              const uint64_t* loc = locs[slot].of(ts, nd);
              const uint64_t ls = ts.tile_stride[last];
              Selection::for_each_row(ts, nd, wu.units[w].e0, wu.units[w].e1, [&](uint64_t off, uint64_t c0, uint64_t c1, const Axes& idx) {
                T* dst = buf.data();
                gather_row<S, T>(v.data + off * sizeof(S), loc + c0, ls, c1 - c0, dst);
                State b;
                F::consume(k, b, dst, c1 - c0);
                if constexpr (kIsArg<F, T>)  // the run's ordinals are consecutive, as a box run's
                  if (b.idx != UINT64_MAX) b.idx += fiber_of(idx);
                fold::ops::soa_merge_state<F, T>(k, st.soa, elem_of(bx, ts, idx), b);
              });
            } else if (wu.last_reduced) {
              Selection::for_each_run(ts, nd, wu.units[w].e0, wu.units[w].e1, [&](uint64_t off, uint64_t n, const Axes& idx) {
                State b;
                F::consume(k, b, load(off, n, 0), n);
                if constexpr (kIsArg<F, T>)
                  if (b.idx != UINT64_MAX) b.idx += fiber_of(idx);
                fold::ops::soa_merge_state<F, T>(k, st.soa, elem_of(bx, ts, idx), b);
              });
            } else {
              scan(wu.units[w].e0, wu.units[w].e1);
            }
            if (blocked) F::flush(k, st.soa, blk);
            if (shared) cache.release(ts.linear_chunk);
          }
        } catch (...) {
          if (shared)
            for (; w < task.u1 && wu.units[w].piece == unit.piece; ++w) cache.release(ts.linear_chunk);
          throw;
        }
        if (group_last) group_merge();
        u = w;
      }
      done(ti, st);
    });
    for (BoxState<F>& g : gtmp) release(g);
    blocks.recycle();
    gblk.recycle();
    mode_out = mode;
    parts_out = parts;
  }
};

}  // namespace

template <class S, class T> void fold_scalar(FoldRun& run, QueryResult& res) {
  with_stream_family<T>(run.plan.op, [&](auto f) {
    using F = decltype(f);
    const ScalarFold<S, T, F> sf(run);
    std::vector<typename F::State> states(sf.units.size());
    IoMode mode = run.plan.io_mode;
    uint32_t threads_used = 1;
    sf.fold_units(0, sf.units.size(), states, mode, threads_used);
    merge_finalize_scalar<T, F>(sf.k, states.data(), states.size(), run.sel.dataset.dtype, res);
    res.stats.io_mode = mode;
    res.stats.read_pread = sf.pread_used;
    res.stats.pread_spans = std::move(sf.pread_spans);
    res.stats.threads_used = threads_used;
  });
}

// fold_scalar_multi's sink: each unit to every lane while it is in cache; row runs read through
// the mapping go to the lanes as the runs themselves where every lane takes them (no gather
// copy). (At namespace scope: a local class cannot have the member template.)
template <class T> struct MultiSink {
  const std::vector<std::unique_ptr<Lane<T>>>& lanes;
  const Selection& sel;
  bool by_runs;
  void operator()(uint64_t u, const TileSelection& ts, uint64_t e0, const T* x, uint64_t len) {
    for (const auto& lane : lanes) lane->consume(u, sel, ts, e0, x, len);
  }
  template <class Each> void runs(uint64_t u, const TileSelection&, uint64_t e0, uint64_t e1, Each&& each) {
    thread_local std::vector<std::pair<const T*, uint64_t>> pieces;
    pieces.clear();
    each([&](const T* x, uint64_t m) { pieces.emplace_back(x, m); });
    for (const auto& lane : lanes) lane->consume_runs(u, pieces.data(), pieces.size(), e1 - e0);
  }
};

template <class S, class T> void fold_scalar_multi(FoldRun& run, QueryResult& res) {
  const ScalarScan<S, T> scan(run);
  std::vector<std::unique_ptr<Lane<T>>> lanes;
  for (const AggSpec& g : run.plan.aggs())
    with_stream_family<T>(g.op, [&](auto f) {
      using F = decltype(f);
      auto lane = std::make_unique<OpLane<T, F>>(fold::make_cfg<T>(g.op, run.isa, g.has_fill, g.fill), scan.units.size());
      for (const auto& l : lanes)
        if (lane->share(*l)) break;
      lanes.push_back(std::move(lane));
    });
  bool by_runs = true;
  for (const auto& lane : lanes) by_runs = by_runs && lane->takes_runs();
  MultiSink<T> sink{lanes, run.sel, by_runs};
  IoMode mode = run.plan.io_mode;
  uint32_t threads_used = 1;
  scan.scan(0, scan.units.size(), sink, mode, threads_used);
  const DType dt = run.sel.dataset.dtype;
  lanes.front()->finish(dt, res);
  res.more_values.clear();
  for (size_t i = 1; i < lanes.size(); ++i) {
    QueryResult r;
    lanes[i]->finish(dt, r);
    res.more_values.push_back(std::move(r.values));
  }
  res.stats.io_mode = mode;
  res.stats.read_pread = scan.pread_used;
  res.stats.pread_spans = std::move(scan.pread_spans);
  res.stats.threads_used = threads_used;
}

template <class S, class T>
void fold_scalar_states(FoldRun& run, uint64_t u0, uint64_t u1, std::vector<uint8_t>& out, QueryResult& res) {
  with_stream_family<T>(run.plan.op, [&](auto f) {
    using F = decltype(f);
    const ScalarFold<S, T, F> sf(run);
    if (u0 > u1 || u1 > sf.units.size()) fail("TET_INTERNAL", "shard unit range out of bounds");
    std::vector<typename F::State> states(sf.units.size());
    IoMode mode = run.plan.io_mode;
    uint32_t threads_used = 1;
    sf.fold_units(u0, u1, states, mode, threads_used);
    const size_t sb = F::kEncodedBytes;
    out.assign((u1 - u0) * sb, 0);
    for (uint64_t u = u0; u < u1; ++u) F::encode(states[u], out.data() + (u - u0) * sb);
    res.stats.io_mode = mode;
    res.stats.read_pread = sf.pread_used;
    res.stats.threads_used = threads_used;
  });
}

template <class S, class T>
void finish_scalar(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t n, QueryResult& res) {
  with_stream_family<T>(plan.op, [&](auto f) {
    using F = decltype(f);
    const fold::OpCfg<T> k = cfg_of<T>(plan, fold::best_isa());
    const size_t sb = F::kEncodedBytes;
    std::vector<typename F::State> parts(n);
    for (uint64_t u = 0; u < n; ++u) parts[u] = F::decode(states + u * sb);
    merge_finalize_scalar<T, F>(k, parts.data(), n, sel.dataset.dtype, res);
  });
}

template <class S, class T> void fold_partial(FoldRun& run, QueryResult& res) {
  with_stream_family<T>(run.plan.op, [&](auto f) {
    using F = decltype(f);
    const PartialFold<S, T, F> pf(run.plan, run.sel, run.isa);
    uint8_t* const outb = pf.output(run.ctx, res);
    std::vector<BoxState<F>> states(pf.wu.tasks.size());
    IoMode mode = IoMode::ParallelChunks;
    uint32_t parts = 1;
    pf.run_tasks(run, 0, pf.wu.tasks.size(), states, mode, parts, [&](uint64_t ti, BoxState<F>& st) {
      if (pf.wu.tasks[ti].segs == 1) {
        pf.finalize_range(st, pf.box_of(pf.wu.tasks[ti].group), 0, st.len, outb);
        pf.release(st);
      }
    });
    pf.merge_segments(states, parts > 1 ? run.threads : 1, outb);
    res.stats.io_mode = mode;
    res.stats.threads_used = parts;
  });
}

template <class S, class T>
uint64_t partial_states_bytes(const QueryPlan& plan, const Selection& sel, uint64_t t0, uint64_t t1) {
  const PartialUnits wu = partial_units(plan, sel);
  const uint64_t sb = fold::state_bytes<T>(plan.op);
  uint64_t n = 0;
  for (uint64_t ti = t0; ti < t1 && ti < wu.tasks.size(); ++ti) n += wu.box_of(sel, wu.tasks[ti].group).len * sb;
  return n;
}

template <class S, class T>
void fold_partial_states(FoldRun& run, uint64_t t0, uint64_t t1, std::vector<uint8_t>& out, QueryResult& res) {
  with_stream_family<T>(run.plan.op, [&](auto f) {
    using F = decltype(f);
    const PartialFold<S, T, F> pf(run.plan, run.sel, run.isa);
    if (t0 > t1 || t1 > pf.wu.tasks.size()) fail("TET_INTERNAL", "shard unit range out of bounds");
    std::vector<uint64_t> at(t1 - t0 + 1, 0);
    for (uint64_t ti = t0; ti < t1; ++ti) at[ti - t0 + 1] = at[ti - t0] + pf.task_state_bytes(ti);
    out.assign(at.back(), 0);
    std::vector<BoxState<F>> states(pf.wu.tasks.size());
    IoMode mode = IoMode::ParallelChunks;
    uint32_t parts = 1;
    const size_t sb = F::kEncodedBytes;
    pf.run_tasks(run, t0, t1, states, mode, parts, [&](uint64_t ti, BoxState<F>& st) {
      uint8_t* p = out.data() + at[ti - t0];
      const Box bx = pf.box_of(pf.wu.tasks[ti].group);
      for (uint64_t j = 0; j < st.len; ++j) pf.encode(st, bx, j, p + j * sb);
      pf.release(st);
    });
    res.stats.io_mode = mode;
    res.stats.threads_used = parts;
  });
}

template <class S, class T>
void finish_partial(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t len, uint32_t threads,
                    QueryResult& res) {
  with_stream_family<T>(plan.op, [&](auto f) {
    using F = decltype(f);
    const PartialFold<S, T, F> pf(plan, sel, fold::best_isa());
    const size_t sb = F::kEncodedBytes;
    pf.init_result(res);
    uint8_t* const outb = res.values.bytes.data();
    std::vector<BoxState<F>> st(pf.wu.tasks.size());
    uint64_t at = 0;
    for (uint64_t ti = 0; ti < pf.wu.tasks.size(); ++ti) {
      const Box bx = pf.box_of(pf.wu.tasks[ti].group);
      const uint64_t box = bx.len;
      if (at + box * sb > len) fail("TET_SHARD_CORRUPT", "shard states end before task " + std::to_string(ti));
      pf.init(st[ti], box);
      for (uint64_t j = 0; j < box; ++j) pf.decode(st[ti], j, states + at + j * sb);
      at += box * sb;
      if (pf.wu.tasks[ti].segs == 1) {
        pf.finalize_range(st[ti], bx, 0, box, outb);
        pf.release(st[ti]);
      }
    }
    if (at != len) fail("TET_SHARD_CORRUPT", "shard states hold " + std::to_string(len - at) + " bytes past the last task");
    pf.merge_segments(st, threads, outb);
  });
}

#define TET_FOLD_INSTANTIATE(S, T)                                                                       \
  template void fold_scalar<S, T>(FoldRun&, QueryResult&);                                               \
  template void fold_scalar_multi<S, T>(FoldRun&, QueryResult&);                                         \
  template void fold_partial<S, T>(FoldRun&, QueryResult&);                                              \
  template void fold_scalar_states<S, T>(FoldRun&, uint64_t, uint64_t, std::vector<uint8_t>&, QueryResult&); \
  template void finish_scalar<S, T>(const QueryPlan&, const Selection&, const uint8_t*, uint64_t, QueryResult&); \
  template uint64_t partial_states_bytes<S, T>(const QueryPlan&, const Selection&, uint64_t, uint64_t);  \
  template void fold_partial_states<S, T>(FoldRun&, uint64_t, uint64_t, std::vector<uint8_t>&, QueryResult&); \
  template void finish_partial<S, T>(const QueryPlan&, const Selection&, const uint8_t*, uint64_t, uint32_t, QueryResult&);

}  // namespace exec
}  // namespace tet
