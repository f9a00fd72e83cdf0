// The compiled query plan: the one structure lib/ (TypeScript) hands to the native core.
// Wire form (little-endian, encoded by lib/plan/encode.ts, decoded + validated by decode_plan):
//   0 u32 magic "TPLN"(0x4E4C5054)  4 u32 version(1)   8 u32 dataset_id   12 u32 ndim
//  16 u32 op                        20 u32 reduce_mask 24 u32 bins        28 u32 flags
//        (flags bit0 = hist_range, bit1 = has_fill)
//  32 f64 q   40 f64 hist_min   48 f64 hist_max   56 f64 fill
//  64 u32 obs_axis   68 u32 strategy   72 u32 io_mode   76 u32 threads   80 u64 preview_max
//  88 u64 start[8]   152 u64 step[8]   216 u64 count[8]
// 280 u32 spill_path_len   284 u32 temp_dir_len   288 spill_path bytes, then temp_dir bytes
// Total length must be exactly 288 + spill_path_len + temp_dir_len.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tet/catalog.h"

namespace tet {

enum class Op : uint32_t {
  None = 0,  // preview / spill only
  Sum = 1, Mean = 2, Min = 3, Max = 4, Count = 5, Var = 6, Std = 7, Product = 8,
  NormL1 = 9, NormL2 = 10, AllFinite = 11, AnyNan = 12, AnyInf = 13, ArgMin = 14, ArgMax = 15,
  NanCount = 16, InfCount = 17, NullCount = 18, NanMean = 19, NanStd = 20,
  Median = 21, Quantile = 22, Histogram = 23, Covariance = 24, Correlation = 25,
};

enum class Strategy : uint32_t {
  StreamingFold = 0, InMemoryMaterialize = 1, TempSpillMaterialize = 2, MmapSpill = 3, CappedInMemory = 4,
};

enum class IoMode : uint32_t { ParallelChunks = 0, SequentialChunks = 1, LinearScan = 2 };

constexpr uint32_t kPlanMagic = 0x4E4C5054;  // "TPLN"
constexpr uint32_t kPlanVersion = 1;

struct QueryPlan {
  uint32_t dataset_id = 0;
  uint32_t ndim = 0;
  // Selected positions along axis a: start[a] + i * step[a], 0 <= i < count[a] (all in range).
  std::array<uint64_t, 8> start{}, step{}, count{};
  Op op = Op::None;
  uint32_t reduce_mask = 0;    // bit a set => axis a is reduced (scalar ops: all ndim bits)
  double q = 0.5;              // quantile
  uint32_t bins = 0;           // histogram
  bool hist_range = false;     // caller-supplied [hist_min, hist_max]
  double hist_min = 0, hist_max = 0;
  bool has_fill = false;       // null_count fill value
  double fill = 0;
  uint32_t obs_axis = 0;       // covariance/correlation observation axis (rank 2)
  Strategy strategy = Strategy::StreamingFold;
  IoMode io_mode = IoMode::ParallelChunks;
  uint32_t threads = 0;        // 0 = all cores of the pool
  uint64_t preview_max = 0;    // elements of the row-major preview to return
  std::string spill_path;      // MmapSpill target (already allow-listed by lib/)
  std::string temp_dir;        // TempSpillMaterialize directory (already allow-listed)
};

// Decode + validate the wire form against the catalog. Throws tet::Error (TET_PLAN_*).
QueryPlan decode_plan(const uint8_t* bytes, uint64_t len, const Catalog& catalog);
std::vector<uint8_t> encode_plan(const QueryPlan& plan);  // for C++ tests and fuzz seeds

enum class ValueKind : uint32_t { F64 = 0, I64 = 1, U64 = 2, Bool = 3 };

struct ResultArray {
  ValueKind kind = ValueKind::F64;
  uint64_t length = 0;
  std::vector<uint8_t> bytes;  // length * 8 (F64/I64/U64) or length (Bool)
};

struct ExecStats {
  Strategy strategy = Strategy::StreamingFold;
  IoMode io_mode = IoMode::ParallelChunks;
  uint32_t threads_used = 1;
  const char* simd = "scalar";     // "avx512" | "avx2" | "neon" | "scalar"
  uint64_t chunks_read = 0;
  uint64_t stored_bytes_read = 0;
  uint64_t spill_bytes = 0;        // MmapSpill: bytes written to spill_path
  double seconds = 0;
};

struct QueryResult {
  // Reduced output shape: kept axes in ascending order; empty for scalar results.
  std::vector<uint64_t> reduced_shape;
  // Main values. Scalar: length 1. Partial: product(reduced_shape). Histogram: out_len * bins
  // counts (U64). Covariance/correlation: order*order (F64). Counts / indices: U64.
  // Min/Max keep the dtype: F64 for floats, I64 for signed and U64 for unsigned integers.
  ResultArray values;
  std::vector<double> hist_edges;  // scalar histogram: bins + 1 edges
  uint64_t cov_order = 0;
  std::vector<uint8_t> preview;    // first preview_max logical elements, dtype-native LE
                                   // (f16 previews are widened to f32)
  uint64_t preview_length = 0;
  ExecStats stats;
};

}  // namespace tet
