// Plan wire codec: decode_plan validates every field of the compact plan lib/ sends against the
// catalog before execution sees it, so exec/ can trust geometry (no out-of-range positions).
#include <cmath>
#include <cstring>
#include <string>

#include "tet/error.h"
#include "tet/plan.h"

namespace tet {
namespace {

constexpr uint64_t kHeaderBytes = 288;
constexpr uint32_t kMaxBins = 1000000;
constexpr uint32_t kKnownFlags = 0x3;

uint32_t rd32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t rd64(const uint8_t* p) { return uint64_t(rd32(p)) | uint64_t(rd32(p + 4)) << 32; }
double rdf64(const uint8_t* p) {
  uint64_t u = rd64(p);
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
void wr32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void wr64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
void wrf64(uint8_t* p, double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  wr64(p, u);
}

[[noreturn]] void invalid(const std::string& msg) { fail("TET_PLAN_INVALID", msg); }

bool is_tier_c(Op op) {
  return op == Op::Median || op == Op::Quantile || op == Op::Histogram || op == Op::Covariance ||
         op == Op::Correlation;
}

void validate_strategy(const QueryPlan& p) {
  const Strategy s = p.strategy;
  if (p.op == Op::None) {
    if (s != Strategy::CappedInMemory && s != Strategy::MmapSpill)
      invalid("plan without an operation needs strategy mmap_spill (3) or capped_in_memory (4); "
              "found strategy " + std::to_string(uint32_t(s)));
    if (s == Strategy::MmapSpill && p.spill_path.empty())
      invalid("strategy mmap_spill needs a spill_path (spill_path_len is 0)");
    return;
  }
  if (is_tier_c(p.op)) {
    if (s != Strategy::InMemoryMaterialize && s != Strategy::TempSpillMaterialize)
      invalid("op " + std::to_string(uint32_t(p.op)) +
              " needs strategy in_memory_materialize (1) or temp_spill_materialize (2); found " +
              std::to_string(uint32_t(s)));
    if (s == Strategy::TempSpillMaterialize && p.temp_dir.empty())
      invalid("strategy temp_spill_materialize needs a temp_dir (temp_dir_len is 0)");
    return;
  }
  if (s != Strategy::StreamingFold)
    invalid("op " + std::to_string(uint32_t(p.op)) + " needs strategy streaming_fold (0); found " +
            std::to_string(uint32_t(s)));
}

}  // namespace

QueryPlan decode_plan(const uint8_t* bytes, uint64_t len, const Catalog& catalog) {
  if (bytes == nullptr || len < kHeaderBytes)
    invalid("plan must be at least " + std::to_string(kHeaderBytes) + " bytes; found " + std::to_string(len));
  if (rd32(bytes) != kPlanMagic) invalid("plan magic must be 0x4E4C5054 (\"TPLN\"); found " + std::to_string(rd32(bytes)));
  if (rd32(bytes + 4) != kPlanVersion)
    invalid("plan version must be 1; found " + std::to_string(rd32(bytes + 4)));
  const uint64_t spill_len = rd32(bytes + 280), temp_len = rd32(bytes + 284);
  if (len != kHeaderBytes + spill_len + temp_len)
    invalid("plan length must be 288 + spill_path_len (" + std::to_string(spill_len) + ") + temp_dir_len (" +
            std::to_string(temp_len) + ") = " + std::to_string(kHeaderBytes + spill_len + temp_len) +
            "; found " + std::to_string(len));

  QueryPlan p;
  p.dataset_id = rd32(bytes + 8);
  if (p.dataset_id >= catalog.datasets.size())
    invalid("dataset_id " + std::to_string(p.dataset_id) + " out of range (catalog has " +
            std::to_string(catalog.datasets.size()) + " datasets)");
  const DatasetInfo& d = catalog.datasets[p.dataset_id];
  p.ndim = rd32(bytes + 12);
  if (p.ndim != d.ndim || p.ndim < 1 || p.ndim > kMaxNdim)
    invalid("plan ndim must equal dataset '" + d.name + "' rank " + std::to_string(d.ndim) + "; found " +
            std::to_string(p.ndim));

  const uint32_t op = rd32(bytes + 16);
  if (op > uint32_t(Op::Correlation)) invalid("op code must be 0..25; found " + std::to_string(op));
  p.op = Op(op);
  p.reduce_mask = rd32(bytes + 20);
  p.bins = rd32(bytes + 24);
  const uint32_t flags = rd32(bytes + 28);
  if (flags & ~kKnownFlags) invalid("plan flags must use bits 0..1 only; found " + std::to_string(flags));
  p.hist_range = flags & 1;
  p.has_fill = flags & 2;
  p.q = rdf64(bytes + 32);
  p.hist_min = rdf64(bytes + 40);
  p.hist_max = rdf64(bytes + 48);
  p.fill = rdf64(bytes + 56);
  p.obs_axis = rd32(bytes + 64);
  const uint32_t strategy = rd32(bytes + 68), io = rd32(bytes + 72);
  if (strategy > uint32_t(Strategy::CappedInMemory)) invalid("strategy code must be 0..4; found " + std::to_string(strategy));
  if (io > uint32_t(IoMode::LinearScan)) invalid("io_mode code must be 0..2; found " + std::to_string(io));
  p.strategy = Strategy(strategy);
  p.io_mode = IoMode(io);
  p.threads = rd32(bytes + 76);
  p.preview_max = rd64(bytes + 80);
  p.spill_path.assign(reinterpret_cast<const char*>(bytes + kHeaderBytes), spill_len);
  p.temp_dir.assign(reinterpret_cast<const char*>(bytes + kHeaderBytes + spill_len), temp_len);
  if (p.spill_path.find('\0') != std::string::npos || p.temp_dir.find('\0') != std::string::npos)
    invalid("spill_path / temp_dir must not contain NUL bytes");

  for (uint32_t a = 0; a < 8; ++a) {
    p.start[a] = rd64(bytes + 88 + 8 * a);
    p.step[a] = rd64(bytes + 152 + 8 * a);
    p.count[a] = rd64(bytes + 216 + 8 * a);
    if (a >= p.ndim) {  // unused axes are normalized: one position at 0
      p.start[a] = 0, p.step[a] = 1, p.count[a] = 1;
      continue;
    }
    const std::string ax = "axis " + std::to_string(a);
    if (p.count[a] < 1) invalid(ax + ": count must be >= 1; found 0");
    if (p.step[a] < 1) invalid(ax + ": step must be >= 1; found 0");
    if (p.start[a] >= d.shape[a])
      invalid(ax + ": start " + std::to_string(p.start[a]) + " must be < shape " + std::to_string(d.shape[a]));
    // last = start + (count-1)*step, overflow-safe: (count-1) <= (shape-1-start)/step
    if ((p.count[a] - 1) > (d.shape[a] - 1 - p.start[a]) / p.step[a])
      invalid(ax + ": last position start + (count-1)*step (start " + std::to_string(p.start[a]) + ", step " +
              std::to_string(p.step[a]) + ", count " + std::to_string(p.count[a]) + ") must be < shape " +
              std::to_string(d.shape[a]));
  }

  const uint32_t all_axes = (1u << p.ndim) - 1;
  if (p.reduce_mask & ~all_axes)
    invalid("reduce_mask " + std::to_string(p.reduce_mask) + " names axes beyond rank " + std::to_string(p.ndim));
  const bool needs_axes = p.op != Op::None && p.op != Op::Covariance && p.op != Op::Correlation;
  if (needs_axes && p.reduce_mask == 0) invalid("reduce_mask must select at least one axis for op " + std::to_string(op));
  if (p.op == Op::Quantile && !(p.q >= 0.0 && p.q <= 1.0))
    invalid("quantile q must be in [0, 1]; found " + std::to_string(p.q));
  if (p.op == Op::Histogram) {
    if (p.bins < 1 || p.bins > kMaxBins)
      invalid("histogram bins must be 1.." + std::to_string(kMaxBins) + "; found " + std::to_string(p.bins));
    if (p.hist_range && !(std::isfinite(p.hist_min) && std::isfinite(p.hist_max) && p.hist_min < p.hist_max))
      invalid("histogram range needs finite min < max; found [" + std::to_string(p.hist_min) + ", " +
              std::to_string(p.hist_max) + "]");
  }
  if (p.op == Op::Covariance || p.op == Op::Correlation) {
    if (p.ndim != 2) invalid("covariance/correlation need a rank-2 dataset; '" + d.name + "' has rank " + std::to_string(p.ndim));
    if (p.obs_axis > 1) invalid("obs_axis must be 0 or 1; found " + std::to_string(p.obs_axis));
  }
  if (p.op == Op::NullCount && !p.has_fill) invalid("null_count needs a fill value (flags bit 1 unset)");
  validate_strategy(p);
  return p;
}

std::vector<uint8_t> encode_plan(const QueryPlan& p) {
  std::vector<uint8_t> b(kHeaderBytes + p.spill_path.size() + p.temp_dir.size(), 0);
  uint8_t* o = b.data();
  wr32(o + 0, kPlanMagic);
  wr32(o + 4, kPlanVersion);
  wr32(o + 8, p.dataset_id);
  wr32(o + 12, p.ndim);
  wr32(o + 16, uint32_t(p.op));
  wr32(o + 20, p.reduce_mask);
  wr32(o + 24, p.bins);
  wr32(o + 28, (p.hist_range ? 1u : 0u) | (p.has_fill ? 2u : 0u));
  wrf64(o + 32, p.q);
  wrf64(o + 40, p.hist_min);
  wrf64(o + 48, p.hist_max);
  wrf64(o + 56, p.fill);
  wr32(o + 64, p.obs_axis);
  wr32(o + 68, uint32_t(p.strategy));
  wr32(o + 72, uint32_t(p.io_mode));
  wr32(o + 76, p.threads);
  wr64(o + 80, p.preview_max);
  for (uint32_t a = 0; a < 8; ++a) {
    const bool used = a < p.ndim;
    wr64(o + 88 + 8 * a, used ? p.start[a] : 0);
    wr64(o + 152 + 8 * a, used ? p.step[a] : 1);
    wr64(o + 216 + 8 * a, used ? p.count[a] : 1);
  }
  wr32(o + 280, uint32_t(p.spill_path.size()));
  wr32(o + 284, uint32_t(p.temp_dir.size()));
  std::memcpy(o + kHeaderBytes, p.spill_path.data(), p.spill_path.size());
  std::memcpy(o + kHeaderBytes + p.spill_path.size(), p.temp_dir.data(), p.temp_dir.size());
  return b;
}

}  // namespace tet
