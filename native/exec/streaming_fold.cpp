// Scalar folds: one partial accumulator per unit, merged in unit order. Partial folds: tiles are
// grouped by their chunk position on the kept axes (groups own disjoint output boxes); a group
// with too little parallelism is cut into a fixed number of segments with private accumulators,
// merged in segment order. Either way the arithmetic order is a function of the plan only.
#include "exec/streaming_fold.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "exec/thread_pool.h"
#include "fold/accumulator.h"
#include "fold/partial.h"
#include "tet/file.h"

namespace tet {
namespace exec {
namespace {

constexpr uint64_t kWindowBytes = uint64_t(64) << 20;
constexpr uint64_t kPartialTaskTarget = 64;
constexpr uint64_t kSegmentAccCap = uint64_t(512) << 20;

struct Unit {
  uint64_t tile;
  uint64_t e0, e1;
  uint32_t tile_units;  // units of this tile (> 1 => fetched through the shared cache)
};

bool is_arg(Op op) { return op == Op::ArgMin || op == Op::ArgMax; }

uint64_t logical_index(const Selection& sel, const TileSelection& ts, uint64_t e) {
  uint64_t out = 0;
  for (int a = int(sel.ndim) - 1; a >= 0; --a) {
    out += (ts.sel0[a] + e % ts.n[a]) * sel.sel_stride[a];
    e /= ts.n[a];
  }
  return out;
}

std::vector<Unit> make_units(const Selection& sel) {
  std::vector<Unit> units;
  for (uint64_t t = 0; t < sel.tiles; ++t) {
    const TileSelection ts = sel.tile(t);
    const uint64_t k = (ts.elems + kUnitElems - 1) / kUnitElems;
    for (uint64_t i = 0; i < k; ++i)
      units.push_back(Unit{t, i * kUnitElems, std::min(ts.elems, (i + 1) * kUnitElems), uint32_t(std::min<uint64_t>(k, UINT32_MAX))});
  }
  return units;
}

// Fold one unit's elements (tile bytes at `base`) into a fresh accumulator.
template <class S, class T>
fold::Acc<T> fold_unit(const fold::FoldOp<T>& op, const Selection& sel, const TileSelection& ts, const uint8_t* base,
                       uint64_t e0, uint64_t e1, std::vector<T>& buf) {
  const uint64_t len = e1 - e0;
  const T* x;
  if (ts.contiguous) {
    x = dense_elems<S, T>(base + (ts.first_offset + e0) * sizeof(S), len, buf);
  } else {
    if (buf.size() < len) buf.resize(len);
    uint64_t k = 0;
    const uint64_t step = ts.step[sel.ndim - 1];
    Selection::for_each_run(ts, sel.ndim, e0, e1, [&](uint64_t off, uint64_t n, const Axes&) {
      load_elems<S, T>(base + off * sizeof(S), step, n, buf.data() + k);
      k += n;
    });
    x = buf.data();
  }
  fold::Acc<T> a;
  op.block(a, x, len);
  if (is_arg(op.op()) && a.idx != UINT64_MAX) a.idx = logical_index(sel, ts, e0 + a.idx);
  return a;
}

// Linear scan applies to a full, raw, back-to-back payload layout read through a real file.
bool linear_scan_layout(const Selection& sel, const ChunkSource& src, uint32_t dataset_id, size_t esize,
                        std::string& path) {
  const File* file = dynamic_cast<const File*>(&src);
  if (file == nullptr || file->path().empty() || !sel.full) return false;
  const Catalog& cat = src.catalog();
  const DatasetInfo& d = cat.datasets[dataset_id];
  uint64_t expect_off = 0;
  for (uint64_t t = 0; t < d.chunk_count; ++t) {
    if (t >= d.chunk_to_entry.size() || d.chunk_to_entry[t] >= cat.entries.size()) return false;
    const ChunkEntry& e = cat.entries[d.chunk_to_entry[t]];
    const TileSelection ts = sel.tile(t);
    if (e.codec != Codec::Raw || e.stored_byte_len != e.raw_byte_len || e.raw_byte_len != ts.tile_elems * esize)
      return false;
    if (t > 0 && e.payload_offset != expect_off) return false;
    expect_off = e.payload_offset + e.stored_byte_len;
  }
  path = file->path();
  return true;
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

template <class S, class T>
void linear_scan(FoldRun& run, const fold::FoldOp<T>& op, const std::vector<Unit>& units, uint64_t u0, uint64_t u1,
                 std::vector<fold::Acc<T>>& partials, const std::string& path, uint32_t& threads_used) {
  const Catalog& cat = run.fetcher.source().catalog();
  const DatasetInfo& d = cat.datasets[run.plan.dataset_id];
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("TET_IO_OPEN", "cannot open '" + path + "' for linear scan: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || uint64_t(st.st_size) != cat.file_len)
    fail("TET_IO_READ", "'" + path + "' changed size since open (expected " + std::to_string(cat.file_len) + " bytes)");
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  auto unit_offset = [&](const Unit& u) {
    return cat.entries[d.chunk_to_entry[u.tile]].payload_offset + u.e0 * sizeof(S);
  };
  const uint64_t total = d.logical_bytes;
  const uint64_t cap = std::min(total, kWindowBytes);
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, std::max<uint64_t>(cap, 4096)) != 0) throw std::bad_alloc();
  std::unique_ptr<void, AlignedFree> window(raw);
  uint8_t* buf = static_cast<uint8_t*>(raw);
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
    uint64_t got = 0;
    while (got < bytes) {
      const ssize_t r = ::pread(fd, buf + got, bytes - got, off_t(off + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        fail("TET_IO_READ", "read of '" + path + "' at offset " + std::to_string(off + got) + " failed: " +
                                (r == 0 ? std::string("unexpected end of file") : std::string(std::strerror(errno))));
      got += uint64_t(r);
    }
#ifdef POSIX_FADV_WILLNEED
    ::posix_fadvise(fd, off_t(off + bytes), off_t(cap), POSIX_FADV_WILLNEED);
#endif
    threads_used = std::max(threads_used, pool.participants(j - i, run.threads));
    pool.parallel_for(j - i, run.threads, [&](uint64_t k, uint32_t slot) {
      const Unit& u = units[i + k];
      const TileSelection ts = run.sel.tile(u.tile);
      const uint8_t* base = buf + (unit_offset(u) - off) - (ts.first_offset + u.e0) * sizeof(S);
      partials[i + k] = fold_unit<S, T>(op, run.sel, ts, base, u.e0, u.e1, bufs[slot]);
    });
    for (uint64_t k = i; k < j; ++k)
      if (units[k].e0 == 0) run.fetcher.count(run.sel.tile(units[k].tile).linear_chunk);
    i = j;
  }
}


// Folds units [u0, u1) of `units` into partials[u0..u1); the rest are left untouched.
template <class S, class T>
void fold_scalar_units(FoldRun& run, const fold::FoldOp<T>& op, const std::vector<Unit>& units, uint64_t u0, uint64_t u1,
                       std::vector<fold::Acc<T>>& partials, IoMode& mode_out, uint32_t& threads_used_out) {
  const QueryPlan& plan = run.plan;
  const Selection& sel = run.sel;
  IoMode mode = plan.io_mode;
  std::string path;
  if (mode == IoMode::LinearScan && !linear_scan_layout(sel, run.fetcher.source(), plan.dataset_id, sizeof(S), path))
    mode = IoMode::SequentialChunks;
  uint32_t threads_used = 1;
  if (mode == IoMode::LinearScan) {
    linear_scan<S, T>(run, op, units, u0, u1, partials, path, threads_used);
  } else {
    std::vector<uint64_t> order(u1 - u0);
    std::iota(order.begin(), order.end(), u0);
    uint32_t threads = run.threads;
    if (mode == IoMode::SequentialChunks) {
      threads = 1;
      if (sel.full) {  // visit payloads in file order
        const Catalog& cat = run.fetcher.source().catalog();
        const DatasetInfo& d = cat.datasets[plan.dataset_id];
        auto offset_of = [&](uint64_t u) {
          const uint64_t lc = sel.tile(units[u].tile).linear_chunk;
          return lc < d.chunk_to_entry.size() && d.chunk_to_entry[lc] < cat.entries.size()
                     ? cat.entries[d.chunk_to_entry[lc]].payload_offset : 0;
        };
        std::vector<uint64_t> key(units.size());
        for (uint64_t u = u0; u < u1; ++u) key[u] = offset_of(u);
        std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return key[a] < key[b]; });
      }
    }
    // Tasks over `order`: a compressed tile split into several units is one task (decoded once
    // into the thread's scratch, all its units folded there), so threads decode different tiles
    // at once; raw tiles keep one task per unit (their views are zero-copy). Units, and so the
    // partials and their merge order, are the same whoever folds them.
    const Catalog& cat = run.fetcher.source().catalog();
    const DatasetInfo& dinfo = cat.datasets[plan.dataset_id];
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
    for (uint64_t k = 0; k < order.size();) {
      const Unit& u = units[order[k]];
      uint64_t j = k + 1;
      const bool whole = u.tile_units > 1 && decoded(sel.tile(u.tile).linear_chunk);
      if (whole)
        while (j < order.size() && units[order[j]].tile == u.tile) ++j;
      tasks.push_back(Task{k, j, whole});
      k = j;
    }
    ThreadPool& pool = ThreadPool::instance();
    const uint32_t parts = pool.participants(tasks.size(), threads);
    threads_used = parts;
    std::vector<std::vector<T>> bufs(parts);
    std::vector<std::vector<uint8_t>> scratch(parts);
    TileCache cache(run.fetcher);
    pool.parallel_for(tasks.size(), threads, [&](uint64_t t, uint32_t slot) {
      check_cancel(run.ctx);
      const Task& task = tasks[t];
      const Unit& u = units[order[task.k0]];
      const TileSelection ts = sel.tile(u.tile);
      if (task.whole_tile || u.tile_units == 1) {
        const TileView v = run.fetcher.fetch(ts, scratch[slot]);
        for (uint64_t k = task.k0; k < task.k1; ++k) {
          if (k != task.k0) check_cancel(run.ctx);
          const Unit& w = units[order[k]];
          partials[order[k]] = fold_unit<S, T>(op, sel, ts, v.data, w.e0, w.e1, bufs[slot]);
        }
        return;
      }
      struct Release {
        TileCache& c;
        uint64_t lc;
        ~Release() { c.release(lc); }
      } release{cache, ts.linear_chunk};
      const TileView v = cache.acquire(ts, u.tile_units);
      partials[order[task.k0]] = fold_unit<S, T>(op, sel, ts, v.data, u.e0, u.e1, bufs[slot]);
    });
  }
  mode_out = mode;
  threads_used_out = threads_used;
}

// The canonical left fold of the unit states in unit order, then finalize: the one compiled
// merge/finalize path of scalar folds, shared by fold_scalar and the shard coordinator (so even
// NaN payloads agree).
template <class T>
__attribute__((noinline)) void merge_finalize_scalar(const fold::FoldOp<T>& op, const fold::Acc<T>* parts, uint64_t n,
                                                     DType dt, QueryResult& res) {
  fold::Acc<T> total;
  for (uint64_t u = 0; u < n; ++u) op.merge(total, parts[u]);
  const ValueKind kind = fold::value_kind(op.op(), dt);
  res.values.kind = kind;
  res.values.length = 1;
  res.values.bytes.assign(fold::value_size(kind), 0);
  op.finalize(total, res.values.bytes.data());
}

}  // namespace

template <class S, class T> void fold_scalar(FoldRun& run, QueryResult& res) {
  const QueryPlan& plan = run.plan;
  const fold::FoldOp<T> op(plan.op, run.isa, plan.has_fill, plan.fill);
  const std::vector<Unit> units = make_units(run.sel);
  std::vector<fold::Acc<T>> partials(units.size());
  IoMode mode = plan.io_mode;
  uint32_t threads_used = 1;
  fold_scalar_units<S, T>(run, op, units, 0, units.size(), partials, mode, threads_used);
  merge_finalize_scalar<T>(op, partials.data(), partials.size(), run.sel.dataset.dtype, res);
  res.stats.io_mode = mode;
  res.stats.threads_used = threads_used;
}

uint64_t scalar_unit_count(const Selection& sel) {
  uint64_t n = 0;
  for (uint64_t t = 0; t < sel.tiles; ++t) n += (sel.tile(t).elems + kUnitElems - 1) / kUnitElems;
  return n;
}

template <class S, class T>
void fold_scalar_states(FoldRun& run, uint64_t u0, uint64_t u1, std::vector<uint8_t>& out, QueryResult& res) {
  const QueryPlan& plan = run.plan;
  const fold::FoldOp<T> op(plan.op, run.isa, plan.has_fill, plan.fill);
  const std::vector<Unit> units = make_units(run.sel);
  if (u0 > u1 || u1 > units.size()) fail("TET_INTERNAL", "shard unit range out of bounds");
  std::vector<fold::Acc<T>> partials(units.size());
  IoMode mode = plan.io_mode;
  uint32_t threads_used = 1;
  fold_scalar_units<S, T>(run, op, units, u0, u1, partials, mode, threads_used);
  const size_t sb = op.state_bytes();
  out.assign((u1 - u0) * sb, 0);
  for (uint64_t u = u0; u < u1; ++u) op.encode(partials[u], out.data() + (u - u0) * sb);
  res.stats.io_mode = mode;
  res.stats.threads_used = threads_used;
}

template <class S, class T>
void finish_scalar(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t n, QueryResult& res) {
  const fold::FoldOp<T> op(plan.op, fold::best_isa(), plan.has_fill, plan.fill);
  const size_t sb = op.state_bytes();
  std::vector<fold::Acc<T>> partials(n);
  for (uint64_t u = 0; u < n; ++u) partials[u] = op.decode(states + u * sb);
  merge_finalize_scalar<T>(op, partials.data(), n, sel.dataset.dtype, res);
}


namespace {

// The geometry of a partial fold (a function of the plan and selection only): groups (touched
// chunk positions on the kept axes, owning disjoint output boxes), units per group, and tasks
// (a group's units cut into a fixed number of segments with private states, merged in segment
// order). Tasks are the work units of a sharded partial fold.
template <class S, class T> struct PartialFold {
  struct PUnit {
    Axes piece;
    uint64_t e0, e1;
    uint32_t tile_units;
  };
  // A group's output box: origin and extent on the kept axes, box-local row-major strides.
  struct Box {
    Axes origin{}, stride{}, extent{};
    uint64_t len = 1;
  };
  struct Task {
    uint64_t group, u0, u1;
    uint32_t seg, segs;
  };

  const QueryPlan& plan;
  const Selection& sel;
  const fold::PartialOp<T> pop;
  uint32_t nd, last;
  std::vector<uint32_t> kept, reduced;
  Axes out_stride{}, fib_stride{};
  uint64_t out_len = 1, fib_len = 1;
  bool last_reduced;
  uint32_t last_kept;
  uint64_t n_groups = 1, tiles_per_group = 1;
  std::vector<PUnit> units;
  std::vector<uint64_t> group_begin;
  uint64_t segs = 1, max_box = 1;
  std::vector<Task> tasks;
  ValueKind kind;
  size_t vs;

  PartialFold(const QueryPlan& p, const Selection& s, fold::Isa isa)
      : plan(p), sel(s), pop(p.op, isa, p.has_fill, p.fill), nd(s.ndim), last(s.ndim - 1) {
    for (uint32_t a = 0; a < nd; ++a) ((plan.reduce_mask >> a) & 1 ? reduced : kept).push_back(a);
    for (int i = int(kept.size()) - 1; i >= 0; --i) out_stride[kept[i]] = out_len, out_len *= sel.count[kept[i]];
    for (int i = int(reduced.size()) - 1; i >= 0; --i) fib_stride[reduced[i]] = fib_len, fib_len *= sel.count[reduced[i]];
    last_reduced = (plan.reduce_mask >> last) & 1;
    last_kept = kept.back();
    // Groups = touched chunk positions on the kept axes; tiles of a group in row-major order of
    // their reduced-axis positions.
    for (uint32_t a : kept) n_groups *= sel.pieces[a].size();
    for (uint32_t a : reduced) tiles_per_group *= sel.pieces[a].size();
    group_begin.assign(n_groups + 1, 0);
    for (uint64_t g = 0; g < n_groups; ++g) {
      group_begin[g] = units.size();
      for (uint64_t r = 0; r < tiles_per_group; ++r) {
        const Axes piece = group_tile(g, r);
        uint64_t elems = 1;
        for (uint32_t a = 0; a < nd; ++a) elems *= sel.pieces[a][piece[a]].n;
        const uint64_t k = (elems + kUnitElems - 1) / kUnitElems;
        for (uint64_t i = 0; i < k; ++i)
          units.push_back(PUnit{piece, i * kUnitElems, std::min(elems, (i + 1) * kUnitElems), uint32_t(std::min<uint64_t>(k, UINT32_MAX))});
      }
    }
    group_begin[n_groups] = units.size();
    // Segments per group (a function of the plan only).
    for (uint64_t g = 0; g < n_groups; ++g) max_box = std::max(max_box, box_of(g).len);
    if (n_groups < kPartialTaskTarget) {
      segs = (kPartialTaskTarget + n_groups - 1) / n_groups;
      const uint64_t state_bytes = out_len * std::max<uint64_t>(1, pop.state_bytes());
      while (segs > 1 && segs * state_bytes > kSegmentAccCap) --segs;
    }
    for (uint64_t g = 0; g < n_groups; ++g) {
      const uint64_t nu = group_begin[g + 1] - group_begin[g];
      const uint64_t s = std::max<uint64_t>(1, std::min(segs, nu));
      for (uint64_t i = 0; i < s; ++i)
        tasks.push_back(Task{g, group_begin[g] + nu * i / s, group_begin[g] + nu * (i + 1) / s, uint32_t(i), uint32_t(s)});
    }
    kind = fold::value_kind(plan.op, sel.dataset.dtype);
    vs = fold::value_size(kind);
  }

  Axes group_tile(uint64_t g, uint64_t r) const {
    Axes piece{};
    for (int i = int(reduced.size()) - 1; i >= 0; --i) piece[reduced[i]] = r % sel.pieces[reduced[i]].size(), r /= sel.pieces[reduced[i]].size();
    for (int i = int(kept.size()) - 1; i >= 0; --i) piece[kept[i]] = g % sel.pieces[kept[i]].size(), g /= sel.pieces[kept[i]].size();
    return piece;
  }
  Box box_of(uint64_t g) const {
    Box b;
    const Axes piece = group_tile(g, 0);
    for (int i = int(kept.size()) - 1; i >= 0; --i) {
      const AxisPiece& pc = sel.pieces[kept[i]][piece[kept[i]]];
      b.origin[kept[i]] = pc.sel0;
      b.extent[kept[i]] = pc.n;
      b.stride[kept[i]] = b.len;
      b.len *= pc.n;
    }
    return b;
  }
  // fn(box_index, out_index, len) over box elements [a, b): runs along the last kept axis
  // (contiguous in the box and in the output).
  template <class F> void box_runs(const Box& bx, uint64_t a, uint64_t b, F&& fn) const {
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

  void init_result(QueryResult& res) const {
    res.values.kind = kind;
    res.values.length = out_len;
    res.values.bytes.assign(out_len * vs, 0);
    res.reduced_shape.clear();
    for (uint32_t a : kept) res.reduced_shape.push_back(sel.count[a]);
  }

  // The one compiled finalize of a box range, shared by the engine and the shard coordinator.
  __attribute__((noinline)) void finalize_range(const fold::PState<T>& st, const Box& bx, uint64_t a, uint64_t b,
                                                uint8_t* outb) const {
    box_runs(bx, a, b, [&](uint64_t le, uint64_t gi, uint64_t len) {
      for (uint64_t k = 0; k < len; ++k) pop.finalize(st, le + k, fib_len, outb + (gi + k) * vs);
    });
  }

  // Merges the segments of every multi-segment group in order into the first one and
  // finalizes the box (single-segment tasks were finalized by the caller).
  __attribute__((noinline)) void merge_segments(std::vector<fold::PState<T>>& states, uint32_t threads, uint8_t* outb) const {
    ThreadPool& pool = ThreadPool::instance();
    for (uint64_t ti = 0; ti < tasks.size();) {
      const Task& first = tasks[ti];
      if (first.segs == 1) { ++ti; continue; }
      const Box bx = box_of(first.group);
      constexpr uint64_t kBlock = 4096;
      const uint64_t blocks_n = (bx.len + kBlock - 1) / kBlock;
      pool.parallel_for(blocks_n, threads, [&](uint64_t b, uint32_t) {
        const uint64_t a = b * kBlock, e = std::min(bx.len, a + kBlock);
        for (uint32_t s = 1; s < first.segs; ++s) pop.merge(states[ti], a, states[ti + s], a, e - a);
        finalize_range(states[ti], bx, a, e, outb);
      });
      for (uint32_t s = 0; s < first.segs; ++s) pop.release(states[ti + s]);
      ti += first.segs;
    }
  }

  // Encoded bytes of task ti's state (box elements x the op's encoded state).
  uint64_t task_state_bytes(uint64_t ti) const { return box_of(tasks[ti].group).len * pop.fold_op().state_bytes(); }

  // Folds tasks [t0, t1) into states[t0..t1); done(ti, state) at the end of each task.
  template <class Done>
  void run_tasks(FoldRun& run, uint64_t t0, uint64_t t1, std::vector<fold::PState<T>>& states, IoMode& mode_out,
                 uint32_t& parts_out, Done&& done) {
    const fold::FoldOp<T>& op = pop.fold_op();
    ThreadPool& pool = ThreadPool::instance();
    IoMode mode = plan.io_mode == IoMode::ParallelChunks ? IoMode::ParallelChunks : IoMode::SequentialChunks;
    const uint32_t threads = mode == IoMode::SequentialChunks ? 1 : run.threads;
    const uint32_t parts = pool.participants(t1 - t0, threads);
    std::vector<std::vector<T>> bufs(parts);
    std::vector<std::vector<uint8_t>> scratch(parts);
    std::vector<fold::PBlock> blocks(parts);
    uint64_t max_run = 1;  // longest run along the last axis in one tile
    for (const AxisPiece& pc : sel.pieces[last]) max_run = std::max(max_run, pc.n);
    TileCache cache(run.fetcher);
    const bool arg = is_arg(plan.op);
    const bool blocked = !last_reduced && pop.blocked();

    pool.parallel_for(t1 - t0, threads, [&](uint64_t tk, uint32_t slot) {
      const uint64_t ti = t0 + tk;
      const Task& task = tasks[ti];
      const Box bx = box_of(task.group);
      fold::PState<T>& st = states[ti];
      pop.init(st, bx.len);
      fold::PBlock& blk = blocks[slot];
      if (blocked) pop.reserve_block(blk, max_box);
      std::vector<T>& buf = bufs[slot];
      uint64_t u = task.u0;
      while (u < task.u1) {
        check_cancel(run.ctx);
        const TileSelection ts = sel.tile_at(units[u].piece);
        const bool shared = task.segs > 1 && units[u].tile_units > 1;
        TileView v;
        if (shared) v = cache.acquire(ts, units[u].tile_units);
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
        auto box_index = [&](const Axes& idx) {
          uint64_t o = 0;
          for (uint32_t a : kept) o += (ts.sel0[a] + idx[a] - bx.origin[a]) * bx.stride[a];
          return o;
        };
        // Runs with the same box range are batched (fiber order kept) for the row kernels.
        const T* xs[fold::kMaxRows];
        uint64_t fibs[fold::kMaxRows];
        size_t bk = 0;
        uint64_t bj0 = 0, bn = 0;
        auto flush_batch = [&] {
          if (bk == 0) return;
          pop.rows(st, blk, bj0, xs, fibs, bk, bn);
          bk = 0;
        };
        auto scan = [&](uint64_t e0, uint64_t e1) {
          Selection::for_each_run(ts, nd, e0, e1, [&](uint64_t off, uint64_t n, const Axes& idx) {
            const uint64_t j0 = box_index(idx);
            if (bk > 0 && (bk == fold::kMaxRows || j0 != bj0 || n != bn)) flush_batch();
            uint64_t fib = 0;
            for (uint32_t a : reduced) fib += (ts.sel0[a] + idx[a]) * fib_stride[a];
            xs[bk] = load(off, n, bk);
            fibs[bk] = fib;
            bj0 = j0, bn = n, ++bk;
          });
          flush_batch();
        };
        // every unit of this tile inside this task
        uint64_t w = u;
        try {
          for (; w < task.u1 && units[w].piece == units[u].piece; ++w) {
            if (last_reduced) {
              Selection::for_each_run(ts, nd, units[w].e0, units[w].e1, [&](uint64_t off, uint64_t n, const Axes& idx) {
                uint64_t fib = 0;
                for (uint32_t a : reduced) fib += (ts.sel0[a] + idx[a]) * fib_stride[a];
                fold::Acc<T> b;
                op.block(b, load(off, n, 0), n);
                if (arg && b.idx != UINT64_MAX) b.idx += fib;
                pop.merge_acc(st, box_index(idx), b);
              });
            } else {
              scan(units[w].e0, units[w].e1);
            }
            if (blocked) pop.flush(st, blk);
            if (shared) cache.release(ts.linear_chunk);
          }
        } catch (...) {
          if (shared)
            for (; w < task.u1 && units[w].piece == units[u].piece; ++w) cache.release(ts.linear_chunk);
          throw;
        }
        u = w;
      }
      done(ti, st);
    });
    mode_out = mode;
    parts_out = parts;
  }
};

}  // namespace

template <class S, class T> void fold_partial(FoldRun& run, QueryResult& res) {
  PartialFold<S, T> pf(run.plan, run.sel, run.isa);
  pf.init_result(res);
  uint8_t* const outb = res.values.bytes.data();
  std::vector<fold::PState<T>> states(pf.tasks.size());
  IoMode mode = IoMode::ParallelChunks;
  uint32_t parts = 1;
  pf.run_tasks(run, 0, pf.tasks.size(), states, mode, parts, [&](uint64_t ti, fold::PState<T>& st) {
    if (pf.tasks[ti].segs == 1) {
      pf.finalize_range(st, pf.box_of(pf.tasks[ti].group), 0, st.len, outb);
      pf.pop.release(st);
    }
  });
  pf.merge_segments(states, mode == IoMode::SequentialChunks ? 1 : run.threads, outb);
  res.stats.io_mode = mode;
  res.stats.threads_used = parts;
}

template <class S, class T> uint64_t partial_unit_count(const QueryPlan& plan, const Selection& sel) {
  return PartialFold<S, T>(plan, sel, fold::best_isa()).tasks.size();
}

template <class S, class T>
uint64_t partial_states_bytes(const QueryPlan& plan, const Selection& sel, uint64_t t0, uint64_t t1) {
  const PartialFold<S, T> pf(plan, sel, fold::best_isa());
  uint64_t n = 0;
  for (uint64_t ti = t0; ti < t1 && ti < pf.tasks.size(); ++ti) n += pf.task_state_bytes(ti);
  return n;
}

template <class S, class T>
void fold_partial_states(FoldRun& run, uint64_t t0, uint64_t t1, std::vector<uint8_t>& out, QueryResult& res) {
  PartialFold<S, T> pf(run.plan, run.sel, run.isa);
  if (t0 > t1 || t1 > pf.tasks.size()) fail("TET_INTERNAL", "shard unit range out of bounds");
  std::vector<uint64_t> at(t1 - t0 + 1, 0);
  for (uint64_t ti = t0; ti < t1; ++ti) at[ti - t0 + 1] = at[ti - t0] + pf.task_state_bytes(ti);
  out.assign(at.back(), 0);
  std::vector<fold::PState<T>> states(pf.tasks.size());
  IoMode mode = IoMode::ParallelChunks;
  uint32_t parts = 1;
  const size_t sb = pf.pop.fold_op().state_bytes();
  pf.run_tasks(run, t0, t1, states, mode, parts, [&](uint64_t ti, fold::PState<T>& st) {
    uint8_t* p = out.data() + at[ti - t0];
    for (uint64_t j = 0; j < st.len; ++j) pf.pop.encode(st, j, pf.fib_len, p + j * sb);
    pf.pop.release(st);
  });
  res.stats.io_mode = mode;
  res.stats.threads_used = parts;
}

template <class S, class T>
void finish_partial(const QueryPlan& plan, const Selection& sel, const uint8_t* states, uint64_t len, uint32_t threads,
                    QueryResult& res) {
  PartialFold<S, T> pf(plan, sel, fold::best_isa());
  const size_t sb = pf.pop.fold_op().state_bytes();
  pf.init_result(res);
  uint8_t* const outb = res.values.bytes.data();
  std::vector<fold::PState<T>> st(pf.tasks.size());
  uint64_t at = 0;
  for (uint64_t ti = 0; ti < pf.tasks.size(); ++ti) {
    const fold::PartialOp<T>& pop = pf.pop;
    const uint64_t box = pf.box_of(pf.tasks[ti].group).len;
    if (at + box * sb > len) fail("TET_SHARD_CORRUPT", "shard states end before task " + std::to_string(ti));
    pop.init(st[ti], box);
    for (uint64_t j = 0; j < box; ++j) pop.decode(st[ti], j, states + at + j * sb);
    at += box * sb;
    if (pf.tasks[ti].segs == 1) {
      pf.finalize_range(st[ti], pf.box_of(pf.tasks[ti].group), 0, box, outb);
      pop.release(st[ti]);
    }
  }
  if (at != len) fail("TET_SHARD_CORRUPT", "shard states hold " + std::to_string(len - at) + " bytes past the last task");
  pf.merge_segments(st, threads, outb);
}

#define TET_FOLD_INSTANTIATE(S, T)                                                                       \
  template void fold_scalar<S, T>(FoldRun&, QueryResult&);                                               \
  template void fold_partial<S, T>(FoldRun&, QueryResult&);                                              \
  template void fold_scalar_states<S, T>(FoldRun&, uint64_t, uint64_t, std::vector<uint8_t>&, QueryResult&); \
  template void finish_scalar<S, T>(const QueryPlan&, const Selection&, const uint8_t*, uint64_t, QueryResult&); \
  template uint64_t partial_unit_count<S, T>(const QueryPlan&, const Selection&);                       \
  template uint64_t partial_states_bytes<S, T>(const QueryPlan&, const Selection&, uint64_t, uint64_t);  \
  template void fold_partial_states<S, T>(FoldRun&, uint64_t, uint64_t, std::vector<uint8_t>&, QueryResult&); \
  template void finish_partial<S, T>(const QueryPlan&, const Selection&, const uint8_t*, uint64_t, uint32_t, QueryResult&);
TET_FOLD_INSTANTIATE(float, float)
TET_FOLD_INSTANTIATE(double, double)
TET_FOLD_INSTANTIATE(uint16_t, float)  // f16
TET_FOLD_INSTANTIATE(uint8_t, uint8_t)
TET_FOLD_INSTANTIATE(uint16_t, uint16_t)
TET_FOLD_INSTANTIATE(int16_t, int16_t)
TET_FOLD_INSTANTIATE(int32_t, int32_t)
TET_FOLD_INSTANTIATE(uint32_t, uint32_t)
TET_FOLD_INSTANTIATE(int64_t, int64_t)
TET_FOLD_INSTANTIATE(uint64_t, uint64_t)

}  // namespace exec
}  // namespace tet
