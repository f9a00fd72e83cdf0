// Tile input for exec/: validated fetches through ChunkSource (with I/O stats), a shared cache
// for tiles that several tasks fold at once (a huge tile split into units is decoded once), the
// sequential reader of linear scans (windows of the dataset's stored extent read through
// ChunkSource::read_range, with the source's access hints), and dtype loading (f16 widened
// through a table built from tet::f16_to_f32).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "exec/selection.h"
#include "tet/chunk_source.h"
#include "tet/error.h"
#include "tet/query.h"
#include "util/io.h"

namespace tet {
namespace exec {

const float* f16_table();  // 65536 entries

inline void check_cancel(const ExecContext& ctx) {
  if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed))
    fail("TET_CANCELLED", "query cancelled");
}

// Sets the run's progress total (query.h: Progress) before its first tile; a no-op without one.
inline void start_progress(const ExecContext& ctx, uint64_t total_bytes) {
  if (ctx.progress != nullptr) ctx.progress->total.store(total_bytes, std::memory_order_relaxed);
}

// Every counted tile read goes through count(): the I/O stats and the run's progress (the tile's
// selected logical bytes, one relaxed add per tile; nothing when the run has no Progress).
class TileFetcher {
 public:
  TileFetcher(const ChunkSource& src, uint32_t dataset_id, size_t elem_size, Progress* progress = nullptr)
      : src_(src), dataset_id_(dataset_id), elem_size_(elem_size), progress_(progress) {}

  TileView fetch(const TileSelection& ts, ScratchBytes& scratch) {
    const TileView v = view(ts, scratch);
    count(ts);
    return v;
  }
  // The tile's bytes without counting it (a caller reading a tile in parts counts it once).
  TileView view(const TileSelection& ts, ScratchBytes& scratch) const {
    TileView v = src_.tile(dataset_id_, ts.linear_chunk, scratch);
    const uint64_t want = ts.tile_elems * elem_size_;
    if (v.data == nullptr || v.bytes != want)
      fail("TET_INTERNAL", "tile " + std::to_string(ts.linear_chunk) + " has " + std::to_string(v.bytes) +
                               " decoded bytes; expected " + std::to_string(want));
    return v;
  }
  void count(const TileSelection& ts) {
    const uint64_t linear_chunk = ts.linear_chunk;
    chunks_.fetch_add(1, std::memory_order_relaxed);
    if (progress_ != nullptr) progress_->done.fetch_add(ts.elems * elem_size_, std::memory_order_relaxed);
    const Catalog& cat = src_.catalog();
    const DatasetInfo& d = cat.datasets[dataset_id_];
    if (linear_chunk < d.chunk_to_entry.size() && d.chunk_to_entry[linear_chunk] < cat.entries.size())
      stored_.fetch_add(cat.entries[d.chunk_to_entry[linear_chunk]].stored_byte_len, std::memory_order_relaxed);
  }
  uint64_t chunks() const { return chunks_.load(); }
  uint64_t stored_bytes() const { return stored_.load(); }
  const ChunkSource& source() const { return src_; }

 private:
  const ChunkSource& src_;
  uint32_t dataset_id_;
  size_t elem_size_;
  Progress* progress_;
  std::atomic<uint64_t> chunks_{0}, stored_{0};
};

// Tiles acquired by several tasks: decoded once, freed when the last user releases them.
class TileCache {
 public:
  explicit TileCache(TileFetcher& f) : fetcher_(f) {}

  struct Entry {
    std::mutex mu;
    bool ready = false;
    ScratchBytes scratch;
    TileView view;
    uint32_t users = 0;
  };

  // `uses`: how many acquire() calls this tile will receive in total.
  TileView acquire(const TileSelection& ts, uint32_t uses) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto& slot = map_[ts.linear_chunk];
      if (!slot) slot = std::make_shared<Entry>(), slot->users = uses;
      e = slot;
    }
    std::lock_guard<std::mutex> g(e->mu);
    if (!e->ready) {
      e->view = fetcher_.fetch(ts, e->scratch);
      e->ready = true;
    }
    return e->view;
  }
  void release(uint64_t linear_chunk) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(linear_chunk);
    if (it != map_.end() && --it->second->users == 0) map_.erase(it);
  }

 private:
  TileFetcher& fetcher_;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Entry>> map_;
};

// Linear-scan input (IoMode::LinearScan): the dataset's tiles stored raw and back to back are
// one extent of the source's byte space, read in windows of at most kWindowBytes into one
// page-aligned buffer (sequential hint for the scan, will-need hint for the next window).
class SequentialReader {
 public:
  static constexpr uint64_t kWindowBytes = uint64_t(64) << 20;

  // The extent when a linear scan applies: the selection covers the whole dataset and the source
  // can scan it (ChunkSource::stored_extent). Otherwise the scan reads tiles.
  static bool layout(const ChunkSource& src, const Selection& sel, uint32_t dataset_id, StoredExtent& ext) {
    return sel.full && src.stored_extent(dataset_id, ext);
  }

  SequentialReader(const ChunkSource& src, const StoredExtent& ext, uint64_t window_cap)
      : src_(src), ext_(ext), cap_(window_cap), window_(std::max<uint64_t>(window_cap, 4096), 4096) {
    src_.advise(ext_.offset, ext_.bytes, ReadAdvice::Sequential);
  }
  ~SequentialReader() { src_.advise(ext_.offset, ext_.bytes, ReadAdvice::Normal); }
  SequentialReader(const SequentialReader&) = delete;
  SequentialReader& operator=(const SequentialReader&) = delete;

  uint64_t capacity() const { return cap_; }
  // Reads stored bytes [offset, offset + len) (len <= capacity) into the window and hints the
  // next window. The returned bytes stay valid until the next read.
  const uint8_t* read(uint64_t offset, uint64_t len) {
    if (len > cap_) fail("TET_INTERNAL", "linear-scan window of " + std::to_string(len) + " bytes exceeds its buffer");
    src_.read_range(offset, len, window_.data());
    src_.advise(offset + len, cap_, ReadAdvice::WillNeed);
    return window_.data();
  }

 private:
  const ChunkSource& src_;
  StoredExtent ext_;
  uint64_t cap_;
  AlignedBuffer window_;
};

// Loads n elements of storage type S at byte address p with element stride `stride` into T.
template <class S, class T> inline void load_elems(const uint8_t* p, uint64_t stride, uint64_t n, T* out) {
  if (std::is_same<S, uint16_t>::value && std::is_same<T, float>::value) {  // f16
    const float* tab = f16_table();
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + i * stride * 2, 2);
      out[i] = tab[h];
    }
    return;
  }
  if (stride == 1) {
    if (n > 8) {
      std::memcpy(out, p, n * sizeof(S));
      return;
    }
    // A few values (an index list's runs are often one value long): fixed-size copies the
    // compiler turns into moves, not a call to memcpy per run.
    unsigned char* o = reinterpret_cast<unsigned char*>(out);
    for (uint64_t i = 0; i < n; ++i) std::memcpy(o + i * sizeof(S), p + i * sizeof(S), sizeof(S));
    return;
  }
  for (uint64_t i = 0; i < n; ++i) std::memcpy(out + i, p + i * stride * sizeof(S), sizeof(S));
}

// Gathers n values of a tile row (bytes at `row`) at tile positions loc[0, n) (element stride `ls`
// along the last axis) into out[0, n), as T: one row of an index / run list on the last axis.
template <class S, class T>
inline void gather_row(const uint8_t* row, const uint64_t* loc, uint64_t ls, uint64_t n, T* out) {
  for (uint64_t c = 0; c < n; ++c) load_elems<S, T>(row + loc[c] * ls * sizeof(S), 1, 1, out + c);
}

// Every row of tile `ts` (bytes at `base`) whose last axis holds an index / run list (nruns > 1),
// in selection order: fn(row, loc, ls, n, o) with the row's n selected elements at tile positions
// loc[0, n) (stride ls, bytes at `row`; gather_row reads them) and o the logical index of its first
// (the others follow it: the last axis has logical stride 1).
template <class S, class F>
inline void for_each_list_row(const Selection& sel, const TileSelection& ts, const uint8_t* base, F&& fn) {
  thread_local std::vector<uint64_t> loc;
  Selection::last_axis_positions(ts, sel.ndim, loc);
  const uint64_t ls = ts.tile_stride[sel.ndim - 1];
  Selection::for_each_row(ts, sel.ndim, 0, ts.elems, [&](uint64_t off, uint64_t c0, uint64_t c1, const Axes& idx) {
    fn(base + off * sizeof(S), static_cast<const uint64_t*>(loc.data() + c0), ls, c1 - c0, sel.logical_of(ts, idx));
  });
}

// The selected elements [e0, e1) of tile `ts` (tile bytes at `base`) as T, in selection order,
// into out[0, e1 - e0). An index / run list on the last axis is gathered a row at a time through
// its tile positions (`loc`, the caller's reusable buffer), not run by run: its runs are often one
// value long.
template <class S, class T>
inline void gather_elems(const TileSelection& ts, uint32_t nd, uint64_t e0, uint64_t e1, const uint8_t* base, T* out,
                         std::vector<uint64_t>& loc) {
  const uint32_t last = nd - 1;
  if (ts.nruns[last] > 1) {
    Selection::last_axis_positions(ts, nd, loc);
    const uint64_t ls = ts.tile_stride[last];
    uint64_t n = 0;
    Selection::for_each_row(ts, nd, e0, e1, [&](uint64_t off, uint64_t c0, uint64_t c1, const Axes&) {
      gather_row<S, T>(base + off * sizeof(S), loc.data() + c0, ls, c1 - c0, out + n);
      n += c1 - c0;
    });
    return;
  }
  uint64_t n = 0;
  const uint64_t step = ts.step[last];
  Selection::for_each_run(ts, nd, e0, e1, [&](uint64_t off, uint64_t m, const Axes&) {
    load_elems<S, T>(base + off * sizeof(S), step, m, out + n);
    n += m;
  });
}

// A pointer to n T values at p: in place when the storage is T and aligned, else loaded into buf.
template <class S, class T> inline const T* dense_elems(const uint8_t* p, uint64_t n, std::vector<T>& buf) {
  if (std::is_same<S, T>::value && reinterpret_cast<uintptr_t>(p) % alignof(T) == 0)
    return reinterpret_cast<const T*>(p);
  if (buf.size() < n) buf.resize(n);
  load_elems<S, T>(p, 1, n, buf.data());
  return buf.data();
}

}  // namespace exec
}  // namespace tet
