// Plan wire codec: decode_plan validates every field of the compact plan lib/ sends against the
// catalog before execution sees it, so exec/ can trust geometry (no out-of-range positions).
#include <cmath>
#include <cstring>
#include <string>

#include "tet/error.h"
#include "tet/plan.h"

namespace tet {
namespace {

constexpr uint64_t kHeaderBytes = 288;   // v1 fixed part
constexpr uint64_t kHeaderV2 = 16;       // v2 header
constexpr uint64_t kSectionHead = 8;     // u32 tag, u32 payload_len
constexpr uint64_t kAggBytes = 48;
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

std::string str(uint64_t v) { return std::to_string(v); }

// Bounds-checked little-endian reader over one section payload.
class Reader {
 public:
  Reader(const uint8_t* p, uint64_t n, const char* what) : p_(p), n_(n), what_(what) {}
  uint64_t left() const { return n_ - at_; }
  void need(uint64_t k, const char* field) const {
    if (k > left())
      invalid(std::string(what_) + ": " + field + " needs " + str(k) + " bytes at offset " + str(at_) +
              " but the section has " + str(left()) + " left");
  }
  uint32_t u32(const char* field) { need(4, field); const uint32_t v = rd32(p_ + at_); at_ += 4; return v; }
  uint64_t u64(const char* field) { need(8, field); const uint64_t v = rd64(p_ + at_); at_ += 8; return v; }
  double f64(const char* field) { need(8, field); const double v = rdf64(p_ + at_); at_ += 8; return v; }
  const uint8_t* bytes(uint64_t k, const char* field) { need(k, field); const uint8_t* q = p_ + at_; at_ += k; return q; }
  void zero32(const char* field) {
    const uint32_t v = u32(field);
    if (v != 0) invalid(std::string(what_) + ": reserved field " + field + " must be 0; found " + str(v));
  }
  void end() const {
    if (left() != 0) invalid(std::string(what_) + ": " + str(left()) + " trailing bytes after the last field");
  }

 private:
  const uint8_t* p_;
  uint64_t n_, at_ = 0;
  const char* what_;
};

// Little-endian writer for encode_plan.
struct Writer {
  std::vector<uint8_t> b;
  void u32(uint32_t v) { const size_t o = b.size(); b.resize(o + 4); wr32(b.data() + o, v); }
  void u64(uint64_t v) { const size_t o = b.size(); b.resize(o + 8); wr64(b.data() + o, v); }
  void f64(double v) { const size_t o = b.size(); b.resize(o + 8); wrf64(b.data() + o, v); }
  void raw(const std::string& s) { b.insert(b.end(), s.begin(), s.end()); }
  size_t begin_section(SectionTag t) { u32(uint32_t(t)); u32(0); return b.size(); }
  void end_section(size_t at) {
    const uint64_t n = b.size() - at;
    if (n > UINT32_MAX) invalid("plan section of " + str(n) + " bytes exceeds the u32 length field");
    wr32(b.data() + at - 4, uint32_t(n));
  }
};

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



void validate_box(QueryPlan& p, uint32_t a, const DatasetInfo& d) {
  const std::string ax = "axis " + str(a);
  if (p.count[a] < 1) invalid(ax + ": count must be >= 1; found 0");
  if (p.step[a] < 1) invalid(ax + ": step must be >= 1; found 0");
  if (p.start[a] >= d.shape[a])
    invalid(ax + ": start " + str(p.start[a]) + " must be < shape " + str(d.shape[a]));
  // last = start + (count-1)*step, overflow-safe: (count-1) <= (shape-1-start)/step
  if ((p.count[a] - 1) > (d.shape[a] - 1 - p.start[a]) / p.step[a])
    invalid(ax + ": last position start + (count-1)*step (start " + str(p.start[a]) + ", step " +
            str(p.step[a]) + ", count " + str(p.count[a]) + ") must be < shape " + str(d.shape[a]));
}

// Everything after the wire has been read: geometry is validated per axis by the readers;
// these are the op / mask / strategy rules common to v1 and v2.
void validate_common(QueryPlan& p, const DatasetInfo& d) {
  const uint32_t op = uint32_t(p.op);
  const uint32_t all_axes = (1u << p.ndim) - 1;
  if (p.reduce_mask & ~all_axes)
    invalid("reduce_mask " + str(p.reduce_mask) + " names axes beyond rank " + str(p.ndim));
  const bool needs_axes = p.op != Op::None && p.op != Op::Covariance && p.op != Op::Correlation;
  if (needs_axes && p.reduce_mask == 0) invalid("reduce_mask must select at least one axis for op " + str(op));
  if (p.op == Op::Quantile && !(p.q >= 0.0 && p.q <= 1.0))
    invalid("quantile q must be in [0, 1]; found " + std::to_string(p.q));
  if (p.op == Op::Histogram) {
    if (p.bins < 1 || p.bins > kMaxBins)
      invalid("histogram bins must be 1.." + str(kMaxBins) + "; found " + str(p.bins));
    if (p.hist_range && !(std::isfinite(p.hist_min) && std::isfinite(p.hist_max) && p.hist_min < p.hist_max))
      invalid("histogram range needs finite min < max; found [" + std::to_string(p.hist_min) + ", " +
              std::to_string(p.hist_max) + "]");
  }
  if (p.op == Op::Covariance || p.op == Op::Correlation) {
    if (p.ndim != 2) invalid("covariance/correlation need a rank-2 dataset; '" + d.name + "' has rank " + str(p.ndim));
    if (p.obs_axis > 1) invalid("obs_axis must be 0 or 1; found " + str(p.obs_axis));
  }
  if (p.op == Op::NullCount && !p.has_fill) invalid("null_count needs a fill value (flags bit 1 unset)");
  if (!p.more.empty()) {
    // Several aggregates: one scalar streaming fold over the whole selection.
    if (p.reduce_mask != all_axes) invalid("AGG: several aggregates need every axis reduced (a scalar fold)");
    if (p.grouped() || !p.shard.plain() || p.device != Device::Cpu)
      invalid("AGG: several aggregates take no GROUP, SHARD or gpu DEVICE section");
    uint64_t seen = uint64_t(1) << uint32_t(p.op);
    for (const AggSpec& g : p.more) {
      for (Op o : {p.op, g.op})
        if (is_tier_c(o) || o == Op::None)
          invalid("AGG: several aggregates must all be streaming ops; found op " + str(uint32_t(o)));
      if (seen & (uint64_t(1) << uint32_t(g.op))) invalid("AGG: op " + str(uint32_t(g.op)) + " is listed twice");
      seen |= uint64_t(1) << uint32_t(g.op);
      if (g.op == Op::NullCount && !g.has_fill) invalid("null_count needs a fill value (flags bit 1 unset)");
    }
  }
  if (p.spill_path.find('\0') != std::string::npos || p.temp_dir.find('\0') != std::string::npos)
    invalid("spill_path / temp_dir must not contain NUL bytes");
  validate_strategy(p);
  if (p.grouped()) {
    const uint32_t a = p.group_axis;
    if (p.op == Op::None || is_tier_c(p.op) || p.op == Op::ArgMin || p.op == Op::ArgMax)
      invalid("GROUP: group_by takes the streaming reductions except arg_min / arg_max; found op " + str(op));
    if (!((p.reduce_mask >> a) & 1)) invalid("GROUP: the group axis " + str(a) + " must be reduced (reduce_mask bit)");
    if (p.group_ids.size() != p.count[a])
      invalid("GROUP: " + str(p.group_ids.size()) + " group ids for the " + str(p.count[a]) + " selected positions of axis " + str(a));
    // Each group holds at least one position (lib/ sends the groups present): more groups than
    // positions would be output cells no position reaches (a fuzzed plan asked for 16 M).
    if (p.groups > p.count[a])
      invalid("GROUP: " + str(p.groups) + " groups for the " + str(p.count[a]) + " selected positions of axis " + str(a));
    for (uint32_t g : p.group_ids)
      if (g >= p.groups) invalid("GROUP: group id " + str(g) + " must be < the group count " + str(p.groups));
  }
}

const DatasetInfo& header_dataset(QueryPlan& p, const uint8_t* bytes, const Catalog& catalog) {
  p.dataset_id = rd32(bytes + 8);
  if (p.dataset_id >= catalog.datasets.size())
    invalid("dataset_id " + str(p.dataset_id) + " out of range (catalog has " + str(catalog.datasets.size()) +
            " datasets)");
  const DatasetInfo& d = catalog.datasets[p.dataset_id];
  p.ndim = rd32(bytes + 12);
  if (p.ndim != d.ndim || p.ndim < 1 || p.ndim > kMaxNdim)
    invalid("plan ndim must equal dataset '" + d.name + "' rank " + str(d.ndim) + "; found " + str(p.ndim));
  for (uint32_t a = p.ndim; a < 8; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = 1;
  return d;
}

QueryPlan decode_v1(const uint8_t* bytes, uint64_t len, const Catalog& catalog) {
  if (len < kHeaderBytes)
    invalid("plan v1 must be at least " + str(kHeaderBytes) + " bytes; found " + str(len));
  const uint64_t spill_len = rd32(bytes + 280), temp_len = rd32(bytes + 284);
  if (len != kHeaderBytes + spill_len + temp_len)
    invalid("plan length must be 288 + spill_path_len (" + str(spill_len) + ") + temp_dir_len (" + str(temp_len) +
            ") = " + str(kHeaderBytes + spill_len + temp_len) + "; found " + str(len));
  QueryPlan p;
  p.version = kPlanVersionV1;
  const DatasetInfo& d = header_dataset(p, bytes, catalog);
  const uint32_t op = rd32(bytes + 16);
  if (op > uint32_t(Op::Correlation)) invalid("op code must be 0..25; found " + str(op));
  p.op = Op(op);
  p.reduce_mask = rd32(bytes + 20);
  p.bins = rd32(bytes + 24);
  const uint32_t flags = rd32(bytes + 28);
  if (flags & ~kKnownFlags) invalid("plan flags must use bits 0..1 only; found " + str(flags));
  p.hist_range = flags & 1;
  p.has_fill = flags & 2;
  p.q = rdf64(bytes + 32);
  p.hist_min = rdf64(bytes + 40);
  p.hist_max = rdf64(bytes + 48);
  p.fill = rdf64(bytes + 56);
  p.obs_axis = rd32(bytes + 64);
  const uint32_t strategy = rd32(bytes + 68), io = rd32(bytes + 72);
  if (strategy > uint32_t(Strategy::CappedInMemory)) invalid("strategy code must be 0..4; found " + str(strategy));
  if (io > uint32_t(IoMode::LinearScan)) invalid("io_mode code must be 0..2; found " + str(io));
  p.strategy = Strategy(strategy);
  p.io_mode = IoMode(io);
  p.threads = rd32(bytes + 76);
  p.preview_max = rd64(bytes + 80);
  p.spill_path.assign(reinterpret_cast<const char*>(bytes + kHeaderBytes), spill_len);
  p.temp_dir.assign(reinterpret_cast<const char*>(bytes + kHeaderBytes + spill_len), temp_len);
  if (p.spill_path.find('\0') != std::string::npos || p.temp_dir.find('\0') != std::string::npos)
    invalid("spill_path / temp_dir must not contain NUL bytes");
  for (uint32_t a = 0; a < p.ndim; ++a) {
    p.start[a] = rd64(bytes + 88 + 8 * a);
    p.step[a] = rd64(bytes + 152 + 8 * a);
    p.count[a] = rd64(bytes + 216 + 8 * a);
    validate_box(p, a, d);
  }
  validate_common(p, d);
  return p;
}

void read_select(QueryPlan& p, Reader& r, const DatasetInfo& d) {
  for (uint32_t a = 0; a < p.ndim; ++a) {
    const std::string ax = "SELECT axis " + str(a);
    const uint32_t kind = r.u32("axis kind");
    r.zero32("axis reserved");
    if (kind == uint32_t(AxisKind::Box)) {
      p.kind[a] = AxisKind::Box;
      p.start[a] = r.u64("box start");
      p.step[a] = r.u64("box step");
      p.count[a] = r.u64("box count");
      validate_box(p, a, d);
      continue;
    }
    if (kind != uint32_t(AxisKind::Indices) && kind != uint32_t(AxisKind::Runs))
      invalid(ax + ": kind must be 0 (box), 1 (indices) or 2 (runs); found " + str(kind));
    const uint64_t n = r.u64("list length");
    const char* what = kind == 1 ? "index list" : "run list";
    if (n < 1 || n > kMaxIndexList)
      invalid(ax + ": " + what + " length must be 1.." + str(kMaxIndexList) + "; found " + str(n));
    const uint64_t entry = kind == 1 ? 8 : 16;
    if (n > r.left() / entry)
      invalid(ax + ": " + what + " of " + str(n) + " entries needs " + str(n * entry) + " bytes but the section has " +
              str(r.left()) + " left");
    const uint8_t* q = r.bytes(n * entry, "list entries");
    std::vector<AxisRun>& runs = p.runs[a];
    runs.clear();
    uint64_t total = 0;
    if (kind == 1) {
      p.kind[a] = AxisKind::Indices;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t v = rd64(q + 8 * i);
        if (v >= d.shape[a])
          invalid(ax + ": index " + str(v) + " at position " + str(i) + " must be < shape " + str(d.shape[a]));
        if (i > 0 && v <= rd64(q + 8 * (i - 1)))
          invalid(ax + ": indices must be strictly ascending; position " + str(i) + " holds " + str(v) +
                  " after " + str(rd64(q + 8 * (i - 1))));
        if (!runs.empty() && runs.back().start + runs.back().count == v) ++runs.back().count;
        else runs.push_back(AxisRun{v, 1});
      }
      total = n;
    } else {
      p.kind[a] = AxisKind::Runs;
      uint64_t prev_end = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t s = rd64(q + 16 * i), c = rd64(q + 16 * i + 8);
        if (c < 1) invalid(ax + ": run " + str(i) + " count must be >= 1; found 0");
        if (s >= d.shape[a] || c > d.shape[a] - s)
          invalid(ax + ": run " + str(i) + " [" + str(s) + ", +" + str(c) + ") must end within shape " + str(d.shape[a]));
        if (i > 0 && s < prev_end)
          invalid(ax + ": runs must be ascending and disjoint; run " + str(i) + " starts at " + str(s) +
                  " before the previous run's end " + str(prev_end));
        if (!runs.empty() && prev_end == s) runs.back().count += c;
        else runs.push_back(AxisRun{s, c});
        prev_end = s + c;
        total += c;  // <= shape: runs are disjoint within [0, shape)
      }
    }
    p.start[a] = runs.front().start;
    p.step[a] = 1;
    p.count[a] = total;
  }
}

void read_agg(QueryPlan& p, Reader& r) {
  const uint32_t n = r.u32("aggregate count");
  r.zero32("AGG reserved");
  if (n > kMaxAggs) invalid("AGG: at most " + str(kMaxAggs) + " aggregates per plan; found " + str(n));
  if (n > r.left() / kAggBytes)
    invalid("AGG: " + str(n) + " aggregates need " + str(uint64_t(n) * kAggBytes) + " bytes; the section has " +
            str(r.left()) + " left");
  p.op = Op::None;
  p.more.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t op = r.u32("op");
    if (op < 1 || op > uint32_t(Op::Correlation))
      invalid("AGG: aggregate " + str(i) + " op code must be 1..25 (an empty list means none); found " + str(op));
    const uint32_t flags = r.u32("flags");
    if (flags & ~kKnownFlags) invalid("AGG: aggregate " + str(i) + " flags must use bits 0..1 only; found " + str(flags));
    AggSpec g;
    g.op = Op(op);
    g.hist_range = flags & 1;
    g.has_fill = flags & 2;
    g.bins = r.u32("bins");
    g.obs_axis = r.u32("obs_axis");
    g.q = r.f64("q");
    g.hist_min = r.f64("hist_min");
    g.hist_max = r.f64("hist_max");
    g.fill = r.f64("fill");
    if (i > 0) {
      p.more.push_back(g);
      continue;
    }
    p.op = g.op;
    p.hist_range = g.hist_range, p.has_fill = g.has_fill;
    p.bins = g.bins, p.obs_axis = g.obs_axis;
    p.q = g.q, p.hist_min = g.hist_min, p.hist_max = g.hist_max, p.fill = g.fill;
  }
}

void read_output(QueryPlan& p, Reader& r) {
  p.reduce_mask = r.u32("reduce_mask");
  const uint32_t flags = r.u32("OUTPUT flags");
  if (flags & ~1u) invalid("OUTPUT: flags must be 0 or 1 (f16 as stored bits); found " + str(flags));
  p.f16_raw = flags & 1u;
  p.preview_max = r.u64("preview_max");
}

void read_exec(QueryPlan& p, Reader& r) {
  const uint32_t strategy = r.u32("strategy"), io = r.u32("io_mode");
  if (strategy > uint32_t(Strategy::CappedInMemory)) invalid("EXEC: strategy code must be 0..4; found " + str(strategy));
  if (io > uint32_t(IoMode::LinearScan)) invalid("EXEC: io_mode code must be 0..2; found " + str(io));
  p.strategy = Strategy(strategy);
  p.io_mode = IoMode(io);
  p.threads = r.u32("threads");
  const uint64_t spill_len = r.u32("spill_path_len"), temp_len = r.u32("temp_dir_len");
  r.zero32("EXEC reserved");
  if (spill_len + temp_len != r.left())
    invalid("EXEC: spill_path_len (" + str(spill_len) + ") + temp_dir_len (" + str(temp_len) + ") must equal the " +
            str(r.left()) + " bytes left in the section");
  const uint8_t* s = r.bytes(spill_len, "spill_path");
  p.spill_path.assign(reinterpret_cast<const char*>(s), spill_len);
  const uint8_t* t = r.bytes(temp_len, "temp_dir");
  p.temp_dir.assign(reinterpret_cast<const char*>(t), temp_len);
}

void read_shard(QueryPlan& p, Reader& r) {
  p.shard.begin = r.u64("shard begin");
  p.shard.end = r.u64("shard end");
  p.shard.of = r.u64("shard of");
  if (p.shard.of < 1 || p.shard.begin >= p.shard.end || p.shard.end > p.shard.of)
    invalid("SHARD: unit range [" + str(p.shard.begin) + ", " + str(p.shard.end) + ") of " + str(p.shard.of) +
            " must satisfy begin < end <= of, of >= 1");
  if (r.left() == 0) return;  // form 1: the unit range only
  // form 2: + shard index, shard count, round request length, reserved, the round request
  p.shard.index = r.u32("shard index");
  p.shard.count = r.u32("shard count");
  const uint32_t round_len = r.u32("round request length");
  r.zero32("shard reserved");
  if (p.shard.count < 1 || p.shard.index >= p.shard.count)
    invalid("SHARD: shard " + str(p.shard.index) + " of " + str(p.shard.count) + " must satisfy index < count, count >= 1");
  if (round_len > kMaxShardRoundBytes)
    invalid("SHARD: round request of " + str(round_len) + " bytes exceeds " + str(kMaxShardRoundBytes));
  const uint8_t* q = r.bytes(round_len, "round request");
  p.shard.round.assign(q, q + round_len);
}

void read_group(QueryPlan& p, Reader& r) {
  p.group_axis = r.u32("group axis");
  p.groups = r.u32("group count");
  const uint64_t n = r.u64("group id count");
  if (p.group_axis >= p.ndim) invalid("GROUP: axis " + str(p.group_axis) + " must be < rank " + str(p.ndim));
  if (p.groups < 1 || p.groups > kMaxGroups) invalid("GROUP: group count must be 1.." + str(kMaxGroups) + "; found " + str(p.groups));
  if (n > kMaxIndexList || n > r.left() / 4) invalid("GROUP: " + str(n) + " group ids do not fit the section");
  const uint8_t* ids = r.bytes(n * 4, "group ids");
  p.group_ids.resize(n);
  for (uint64_t i = 0; i < n; ++i) p.group_ids[i] = rd32(ids + 4 * i);
}

void read_device(QueryPlan& p, Reader& r) {
  const uint32_t dev = r.u32("device");
  if (dev > uint32_t(Device::Gpu)) invalid("DEVICE: device must be 0 (cpu) or 1 (gpu); found " + str(dev));
  p.device = Device(dev);
  p.device_ordinal = r.u32("device ordinal");
}

const char* section_name(uint32_t tag) {
  switch (tag) {
    case 1: return "SELECT";
    case 2: return "AGG";
    case 3: return "OUTPUT";
    case 4: return "EXEC";
    case 5: return "SHARD";
    case 6: return "DEVICE";
    case 7: return "GROUP";
    default: return "?";
  }
}

QueryPlan decode_v2(const uint8_t* bytes, uint64_t len, const Catalog& catalog) {
  if (len < kHeaderV2) invalid("plan v2 must be at least " + str(kHeaderV2) + " bytes; found " + str(len));
  QueryPlan p;
  p.version = kPlanVersion;
  const DatasetInfo& d = header_dataset(p, bytes, catalog);
  uint64_t at = kHeaderV2;
  uint32_t last_tag = 0, seen = 0;
  while (at < len) {
    if (len - at < kSectionHead)
      invalid("plan section header at offset " + str(at) + " needs 8 bytes; " + str(len - at) + " left");
    const uint32_t tag = rd32(bytes + at);
    const uint64_t n = rd32(bytes + at + 4);
    at += kSectionHead;
    if (tag < uint32_t(SectionTag::Select) || tag > uint32_t(SectionTag::Group))
      invalid("plan section tag must be 1..7 (SELECT, AGG, OUTPUT, EXEC, SHARD, DEVICE, GROUP); found " + str(tag) +
              " at offset " + str(at - kSectionHead));
    if (tag <= last_tag)
      invalid(std::string("plan section ") + section_name(tag) + " (tag " + str(tag) +
              ") is out of order or repeated: sections must be in strictly ascending tag order");
    if (n > len - at)
      invalid(std::string("plan section ") + section_name(tag) + " length " + str(n) + " exceeds the " +
              str(len - at) + " bytes left in the plan");
    Reader r(bytes + at, n, section_name(tag));
    switch (SectionTag(tag)) {
      case SectionTag::Select: read_select(p, r, d); break;
      case SectionTag::Agg: read_agg(p, r); break;
      case SectionTag::Output: read_output(p, r); break;
      case SectionTag::Exec: read_exec(p, r); break;
      case SectionTag::Shard: read_shard(p, r); break;
      case SectionTag::Device: read_device(p, r); break;
      case SectionTag::Group: read_group(p, r); break;
    }
    r.end();
    at += n;
    last_tag = tag;
    seen |= 1u << tag;
  }
  for (uint32_t tag = 1; tag <= 4; ++tag)
    if (!(seen & (1u << tag))) invalid(std::string("plan v2 lacks the required ") + section_name(tag) + " section");
  validate_common(p, d);
  return p;
}

}  // namespace

void QueryPlan::set_indices(uint32_t a, const std::vector<uint64_t>& idx) {
  runs[a].clear();
  for (uint64_t v : idx) {
    if (!runs[a].empty() && runs[a].back().start + runs[a].back().count == v) ++runs[a].back().count;
    else runs[a].push_back(AxisRun{v, 1});
  }
  kind[a] = AxisKind::Indices;
  start[a] = idx.empty() ? 0 : idx.front();
  step[a] = 1;
  count[a] = idx.size();
}

void QueryPlan::set_runs(uint32_t a, const std::vector<AxisRun>& r) {
  runs[a].clear();
  uint64_t total = 0;
  for (const AxisRun& x : r) {
    if (!runs[a].empty() && runs[a].back().start + runs[a].back().count == x.start) runs[a].back().count += x.count;
    else runs[a].push_back(x);
    total += x.count;
  }
  kind[a] = AxisKind::Runs;
  start[a] = r.empty() ? 0 : r.front().start;
  step[a] = 1;
  count[a] = total;
}

std::vector<uint64_t> QueryPlan::positions(uint32_t a) const {
  std::vector<uint64_t> out;
  if (kind[a] == AxisKind::Box) {
    for (uint64_t i = 0; i < count[a]; ++i) out.push_back(start[a] + i * step[a]);
    return out;
  }
  for (const AxisRun& r : runs[a])
    for (uint64_t i = 0; i < r.count; ++i) out.push_back(r.start + i);
  return out;
}

std::vector<AggSpec> QueryPlan::aggs() const {
  if (op == Op::None) return {};
  AggSpec s;
  s.op = op, s.bins = bins, s.obs_axis = obs_axis, s.hist_range = hist_range, s.has_fill = has_fill;
  s.q = q, s.hist_min = hist_min, s.hist_max = hist_max, s.fill = fill;
  std::vector<AggSpec> out{s};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

QueryPlan decode_plan(const uint8_t* bytes, uint64_t len, const Catalog& catalog) {
  if (bytes == nullptr || len < 8) invalid("plan must be at least 8 bytes (magic, version); found " + str(bytes ? len : 0));
  if (rd32(bytes) != kPlanMagic) invalid("plan magic must be 0x4E4C5054 (\"TPLN\"); found " + str(rd32(bytes)));
  const uint32_t version = rd32(bytes + 4);
  if (version == kPlanVersionV1) return decode_v1(bytes, len, catalog);
  if (version == kPlanVersion) return decode_v2(bytes, len, catalog);
  invalid("plan version must be 1 or 2; found " + str(version));
}

std::vector<uint8_t> encode_plan(const QueryPlan& p) {
  Writer w;
  w.u32(kPlanMagic);
  w.u32(kPlanVersion);
  w.u32(p.dataset_id);
  w.u32(p.ndim);
  size_t s = w.begin_section(SectionTag::Select);
  for (uint32_t a = 0; a < p.ndim && a < 8; ++a) {
    w.u32(uint32_t(p.kind[a]));
    w.u32(0);
    if (p.kind[a] == AxisKind::Box) {
      w.u64(p.start[a]), w.u64(p.step[a]), w.u64(p.count[a]);
    } else if (p.kind[a] == AxisKind::Indices) {
      w.u64(p.count[a]);
      for (const AxisRun& r : p.runs[a])
        for (uint64_t i = 0; i < r.count; ++i) w.u64(r.start + i);
    } else {
      w.u64(p.runs[a].size());
      for (const AxisRun& r : p.runs[a]) w.u64(r.start), w.u64(r.count);
    }
  }
  w.end_section(s);
  s = w.begin_section(SectionTag::Agg);
  const std::vector<AggSpec> aggs = p.aggs();
  w.u32(uint32_t(aggs.size()));
  w.u32(0);
  for (const AggSpec& g : aggs) {
    w.u32(uint32_t(g.op));
    w.u32((g.hist_range ? 1u : 0u) | (g.has_fill ? 2u : 0u));
    w.u32(g.bins), w.u32(g.obs_axis);
    w.f64(g.q), w.f64(g.hist_min), w.f64(g.hist_max), w.f64(g.fill);
  }
  w.end_section(s);
  s = w.begin_section(SectionTag::Output);
  w.u32(p.reduce_mask), w.u32(p.f16_raw ? 1u : 0u), w.u64(p.preview_max);
  w.end_section(s);
  s = w.begin_section(SectionTag::Exec);
  w.u32(uint32_t(p.strategy)), w.u32(uint32_t(p.io_mode)), w.u32(p.threads);
  w.u32(uint32_t(p.spill_path.size())), w.u32(uint32_t(p.temp_dir.size())), w.u32(0);
  w.raw(p.spill_path), w.raw(p.temp_dir);
  w.end_section(s);
  if (!p.shard.plain()) {
    s = w.begin_section(SectionTag::Shard);
    w.u64(p.shard.begin), w.u64(p.shard.end), w.u64(p.shard.of);
    if (p.shard.count != 0 || !p.shard.round.empty()) {
      w.u32(p.shard.index), w.u32(p.shard.count), w.u32(uint32_t(p.shard.round.size())), w.u32(0);
      w.b.insert(w.b.end(), p.shard.round.begin(), p.shard.round.end());
    }
    w.end_section(s);
  }
  if (p.device != Device::Cpu || p.device_ordinal != 0) {
    s = w.begin_section(SectionTag::Device);
    w.u32(uint32_t(p.device)), w.u32(p.device_ordinal);
    w.end_section(s);
  }
  if (p.grouped()) {
    s = w.begin_section(SectionTag::Group);
    w.u32(p.group_axis), w.u32(p.groups), w.u64(p.group_ids.size());
    for (uint32_t g : p.group_ids) w.u32(g);
    w.end_section(s);
  }
  return w.b;
}

std::vector<uint8_t> encode_plan_v1(const QueryPlan& p) {
  if (p.has_index_axes()) invalid("plan v1 cannot encode index-list or run-list axes");
  if (p.grouped()) invalid("plan v1 cannot encode a GROUP section");
  if (!p.more.empty()) invalid("plan v1 cannot encode several aggregates");
  std::vector<uint8_t> b(kHeaderBytes + p.spill_path.size() + p.temp_dir.size(), 0);
  uint8_t* o = b.data();
  wr32(o + 0, kPlanMagic);
  wr32(o + 4, kPlanVersionV1);
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
