// Internal to exec/: reading a selection into memory (materialize.cpp: the parallel scatter of
// tiles into a row-major buffer, the capped preview, caller-owned read() output) and the export
// spill (spill.cpp: the selection written to a file beside its target, synced, renamed into
// place). The scratch mappings of the materializing strategies are util/io's ScratchMapping.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "exec/selection.h"
#include "exec/tile_input.h"
#include "tet/error.h"
#include "tet/plan.h"
#include "tet/query.h"
#include "util/io.h"

namespace tet {
namespace exec {

// What the read plumbing works on: the query, its selection, its tiles and its result.
struct ReadInput {
  const QueryPlan& plan;
  const Selection& sel;
  const ExecContext& ctx;
  TileFetcher& fetcher;
  QueryResult& res;
  bool preview_to_output = false;  // read(): the preview is ExecContext::output
};

// Writes selection elements with logical index < limit into dest (row-major, elements of size
// sizeof(D)), converting storage S to D, on the pool (stats.threads_used grows to the parts used).
template <class S, class D> void scatter(const ReadInput& in, uint8_t* dest, uint64_t limit);

inline uint64_t preview_len(const QueryPlan& plan, const Selection& sel) {
  return std::min<uint64_t>(plan.preview_max, sel.elements);
}

// The first preview_len elements as T (f16 widened to f32, everything else native): into
// res.preview, or for a read (preview_to_output) straight into ExecContext::output.
template <class S, class T> void preview_capped(const ReadInput& in);

// The preview copied from an already materialized row-major buffer.
template <class T> void preview_from(const ReadInput& in, const T* values) {
  const uint64_t k = preview_len(in.plan, in.sel);
  in.res.preview.resize(k * sizeof(T));
  if (k > 0) std::memcpy(in.res.preview.data(), values, k * sizeof(T));  // data() may be null
  in.res.preview_length = k;
}

// Strategy::MmapSpill: the selection in storage type S at plan.spill_path, plus the preview.
template <class S, class T> void spill(const ReadInput& in);

// Names the tier-C code of execute.cpp uses for its scratch buffers.
using Mapping = ScratchMapping;
inline void map_file(Mapping& m, const std::string& path, uint64_t bytes) { map_shared_file(m, path, bytes); }
[[noreturn]] inline void io_fail(const char* code, const std::string& what, const std::string& path) {
  fail(code, what + " '" + path + "': " + std::strerror(errno));
}

// The (storage, value) type pairs of the dtypes, for explicit instantiations.
#define TET_EXEC_DTYPE_PAIRS(X)                                                                      \
  X(float, float) X(double, double) X(uint16_t, float) X(uint8_t, uint8_t) X(uint16_t, uint16_t)      \
  X(int16_t, int16_t) X(int32_t, int32_t) X(uint32_t, uint32_t) X(int64_t, int64_t) X(uint64_t, uint64_t)

}  // namespace exec
}  // namespace tet
