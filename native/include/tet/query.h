// Execution entry point: run a validated plan against a chunk source on the process-wide
// thread pool. Cancellation is cooperative (checked between tiles).
#pragma once
#include <atomic>

#include "tet/chunk_source.h"
#include "tet/plan.h"

namespace tet {

// How far one run has got, read by another thread while it runs (napi/ `progressOf`, polled by
// lib/engine.ts). `total` is stored once before the first tile: the selection's logical bytes
// (elements x dtype size; a shard: its share of the units). `done` grows by a tile's selected
// logical bytes when the tile is first read: one relaxed add per tile, in TileFetcher, the same
// first pass the I/O stats count (later passes of a multi-pass op and re-reads add nothing), so
// `done` may reach `total` before the run ends (and, with a preview read before a fold, pass
// it by the preview's tiles: readers clamp). Relaxed: a reader wants a recent value, no order.
struct Progress {
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> total{0};
};

// How a scalar fold over a whole dataset of raw tiles stored back to back reads them when it
// runs as parallel chunks: through the file's mapping, by pread into per-thread buffers, or
// (Auto) by measurement on the dataset's first scan through the source (exec/fold_driver_impl.h).
enum class ReadPath : uint8_t { Auto, Mapped, Pread };

struct ExecContext {
  const std::atomic<bool>* cancel = nullptr;  // set => throw Error("TET_CANCELLED")
  ReadPath read_path = ReadPath::Auto;
  // Auto: how much cheaper per byte pread must be, in both measured pairs, to be chosen (0: the
  // engine's kPreadMargin, 1.25). Tests set a tiny or a huge one to take either way.
  double pread_margin = 0;
  Progress* progress = nullptr;                // null => no counting (one branch per tile)
  // Caller-owned output, for two kinds of plan (any other fails TET_PLAN_INVALID):
  // * read() (Op::None, in-memory strategy): the preview is scattered straight into these bytes
  //   by the pool threads and QueryResult::preview stays empty (preview_length still says how
  //   many elements were written). It must hold exactly preview_length elements of the preview
  //   type (f16 widened to f32).
  // * a partial reduction of a streaming op with f64 / u64 / i64 values: the finalized values
  //   (row-major over the kept axes) are written here and QueryResult::values keeps only its
  //   kind and length (bytes empty); a preview, if any, still goes to QueryResult::preview. It
  //   must hold exactly values.length * 8 bytes.
  // A wrong size fails TET_PLAN_INVALID before reading a tile. The caller keeps the memory alive
  // until execute returns; elements are written once each, nothing else in it is touched.
  bool has_output = false;
  uint8_t* output = nullptr;  // may be null when output_bytes is 0
  uint64_t output_bytes = 0;
};

QueryResult execute(const ChunkSource& source, const QueryPlan& plan, const ExecContext& ctx = {});

// Starts the process-wide pool's threads now if they are not running yet (they start on first
// use otherwise). Called by the addon's open job, off the JS thread, so that a fresh process's
// first query does not pay for creating them while the JS side is still planning it.
void start_workers();

}  // namespace tet
