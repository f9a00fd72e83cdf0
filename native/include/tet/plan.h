// The compiled query plan: the one structure lib/ (TypeScript) hands to the native core.
//
// Wire v2 (little-endian; lib/plan/encode.ts emits it, decode_plan validates it):
//   header  0 u32 magic "TPLN"(0x4E4C5054)  4 u32 version(2)  8 u32 dataset_id  12 u32 ndim
//   then sections back to back, each: u32 tag, u32 payload_len, payload. Tags strictly ascending
//   (each at most once); SELECT, AGG, OUTPUT and EXEC are required, SHARD and DEVICE optional; the
//   last section ends exactly at the end of the plan.
//   1 SELECT  per axis 0..ndim-1: u32 kind, u32 0, then
//               kind 0 box     u64 start, u64 step, u64 count
//               kind 1 indices u64 n (1..2^24), n x u64 positions (strictly ascending, < shape)
//               kind 2 runs    u64 n (1..2^24), n x (u64 start, u64 count) unit-step runs,
//                              ascending and disjoint (start >= previous start + count), count >= 1
//   2 AGG     u32 n (0 = none: preview / spill; 1..kMaxAggs), u32 0, then n x 48 bytes:
//               u32 op (1..25), u32 flags (bit0 hist_range, bit1 has_fill), u32 bins, u32 obs_axis,
//               f64 q, f64 hist_min, f64 hist_max, f64 fill
//             n > 1 (the `reductions` extension): distinct streaming ops of one scalar fold
//             (every axis reduced), answered from one pass; no GROUP, SHARD or DEVICE gpu.
//   3 OUTPUT  u32 reduce_mask, u32 flags (bit 0: f16 as stored binary16 bits), u64 preview_max
//   4 EXEC    u32 strategy, u32 io_mode, u32 threads, u32 spill_path_len, u32 temp_dir_len, u32 0,
//             spill_path bytes, temp_dir bytes
//   5 SHARD   u64 begin, u64 end, u64 of: the unit range [begin, end) of `of` units (default whole)
//   6 DEVICE  u32 device (0 cpu, 1 gpu), u32 ordinal
//   7 GROUP   u32 axis, u32 groups G (1..2^24), u64 n (= the axis's selected count), n x u32 group
//             id (< G) of each selected position of the axis, in selection order. group_by on a
//             tensor: the axis is reduced within each group (its REDUCE bit must be set), the
//             result is [G, ...kept axes]; streaming ops other than arg_min / arg_max only.
//
// Wire v1 (still decoded into the same QueryPlan; encode_plan_v1 writes it for tests and seeds):
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
#include <utility>
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
constexpr uint32_t kPlanVersion = 2;     // what encode_plan writes
constexpr uint32_t kPlanVersionV1 = 1;   // still decoded
constexpr uint64_t kMaxIndexList = uint64_t(1) << 24;  // entries of one index / run list

enum class SectionTag : uint32_t { Select = 1, Agg = 2, Output = 3, Exec = 4, Shard = 5, Device = 6, Group = 7 };
constexpr uint64_t kMaxGroups = uint64_t(1) << 24;  // GROUP: groups of one plan
constexpr uint32_t kMaxAggs = 32;                    // AGG: aggregates of one plan

// How one axis is selected. Box: start + i*step. Indices / Runs: `runs` holds the selected
// positions as ascending, disjoint, non-adjacent unit-step runs (an index list is merged into
// runs of consecutive positions); start = first position, step = 1, count = total positions.
enum class AxisKind : uint32_t { Box = 0, Indices = 1, Runs = 2 };

struct AxisRun {
  uint64_t start = 0, count = 0;
  bool operator==(const AxisRun& o) const { return start == o.start && count == o.count; }
};

struct AggSpec {  // one aggregate of the AGG section
  Op op = Op::None;
  uint32_t bins = 0, obs_axis = 0;
  bool hist_range = false, has_fill = false;
  double q = 0.5, hist_min = 0, hist_max = 0, fill = 0;
};

struct ShardRange {  // unit range [begin, end) of `of` units; [0, 1) of 1 = the whole plan
  uint64_t begin = 0, end = 1, of = 1;
  bool whole() const { return begin == 0 && end == of; }
  // Exact sharded execution (tet/shard.h): shard `index` of `count` (count 0 = not a shard run)
  // and the round request of a later tier-C round (empty = round 1). SHARD section form 2.
  uint32_t index = 0, count = 0;
  std::vector<uint8_t> round;
  bool plain() const { return begin == 0 && end == 1 && of == 1 && count == 0 && round.empty(); }
};
constexpr uint64_t kMaxShardRoundBytes = uint64_t(1) << 20;

enum class Device : uint32_t { Cpu = 0, Gpu = 1 };

struct QueryPlan {
  uint32_t dataset_id = 0;
  uint32_t ndim = 0;
  uint32_t version = kPlanVersion;  // wire version it was decoded from
  // Selected positions along axis a: start[a] + i * step[a], 0 <= i < count[a] (all in range),
  // unless kind[a] is Indices / Runs: then runs[a] lists them (count[a] = their total).
  std::array<uint64_t, 8> start{}, step{}, count{};
  std::array<AxisKind, 8> kind{};
  std::array<std::vector<AxisRun>, 8> runs;
  // The aggregate the executor runs (the AGG list's first entry; Op::None when the list is empty).
  Op op = Op::None;
  // AGG entries 2..n: more streaming ops folded in the same pass as `op` (scalar plans only).
  std::vector<AggSpec> more;
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
  bool f16_raw = false;        // OUTPUT flag 1: an f16 read/preview keeps the stored binary16 bits (u16), not f32
  std::string spill_path;      // MmapSpill target (already allow-listed by lib/)
  std::string temp_dir;        // TempSpillMaterialize directory (already allow-listed)
  ShardRange shard;            // SHARD (carried; executing shards is not this build's job)
  Device device = Device::Cpu;  // DEVICE
  uint32_t device_ordinal = 0;
  // GROUP (group_by): groups = 0 when the plan is not grouped; else group_ids[i] is the group of
  // the i-th selected position of group_axis.
  uint32_t group_axis = 0, groups = 0;
  std::vector<uint32_t> group_ids;

  bool grouped() const { return groups > 0; }
  bool has_index_axes() const {
    for (uint32_t a = 0; a < ndim && a < 8; ++a)
      if (kind[a] != AxisKind::Box) return true;
    return false;
  }
  // Sets axis a to the sorted unique positions `idx` (kind Indices), merging consecutive ones.
  void set_indices(uint32_t a, const std::vector<uint64_t>& idx);
  // Sets axis a to unit-step runs (kind Runs), merging adjacent ones.
  void set_runs(uint32_t a, const std::vector<AxisRun>& r);
  // The selected positions of an Indices / Runs axis, ascending.
  std::vector<uint64_t> positions(uint32_t a) const;
  // The AGG list: {} for Op::None, else the aggregate above and then `more`.
  std::vector<AggSpec> aggs() const;
};

// Decode + validate the wire form against the catalog. Throws tet::Error (TET_PLAN_*).
// Decodes wire v2 and v1 alike.
QueryPlan decode_plan(const uint8_t* bytes, uint64_t len, const Catalog& catalog);
std::vector<uint8_t> encode_plan(const QueryPlan& plan);     // v2; for C++ tests and fuzz seeds
std::vector<uint8_t> encode_plan_v1(const QueryPlan& plan);  // v1 (box axes only; throws otherwise)

enum class ValueKind : uint32_t { F64 = 0, I64 = 1, U64 = 2, Bool = 3 };

struct ResultArray {
  ValueKind kind = ValueKind::F64;
  uint64_t length = 0;
  std::vector<uint8_t> bytes;  // length * 8 (F64/I64/U64) or length (Bool)
};

struct ExecStats {
  Strategy strategy = Strategy::StreamingFold;
  IoMode io_mode = IoMode::ParallelChunks;
  bool read_pread = false;  // parallel chunks read by pread (ReadPath), not through the mapping
  // Where a scan read by pread: the file byte ranges it read (ascending, merged), whose mapping
  // pages a later scan of them (through the mapping) would fault in. The binding populates them
  // after posting the answer (File::populate), off the query's path. Empty otherwise, and when
  // there would be more than kMaxPreadSpans.
  std::vector<std::pair<uint64_t, uint64_t>> pread_spans;
  static constexpr size_t kMaxPreadSpans = size_t(1) << 16;
  uint32_t threads_used = 1;
  const char* simd = "scalar";     // "avx512" | "avx2" | "neon" | "scalar"
  uint64_t chunks_read = 0;
  uint64_t stored_bytes_read = 0;
  uint64_t spill_bytes = 0;        // MmapSpill: bytes written to spill_path
  double seconds = 0;
  // Device (plan DEVICE section): where the fold ran ("cpu", "cuda:N", "cuda:multi"), and when a
  // GPU plan fell back to the CPU at run time, why (gpu_runtime_error, gpu_vram_exceeded, ...)
  // with the device's message.
  std::string device_used = "cpu";
  std::string device_fallback_reason, device_error;
  bool device_gpu_pipeline = false, device_gpu_multi = false;
};

struct QueryResult {
  // Reduced output shape: kept axes in ascending order; empty for scalar results.
  std::vector<uint64_t> reduced_shape;
  // Main values. Scalar: length 1. Partial: product(reduced_shape). Histogram: out_len * bins
  // counts (U64). Covariance/correlation: order*order (F64). Counts / indices: U64.
  // Min/Max keep the dtype: F64 for floats, I64 for signed and U64 for unsigned integers.
  ResultArray values;
  std::vector<ResultArray> more_values;  // one per QueryPlan::more entry, in order
  std::vector<double> hist_edges;  // scalar histogram: bins + 1 edges
  uint64_t cov_order = 0;
  std::vector<uint8_t> preview;    // first preview_max logical elements, dtype-native LE
                                   // (f16 previews are widened to f32); empty when the
                                   // preview went to ExecContext::output
  uint64_t preview_length = 0;
  ExecStats stats;
};

}  // namespace tet
