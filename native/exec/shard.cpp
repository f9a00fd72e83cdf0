// Exact sharded execution (include/tet/shard.h): a shard folds its range of the plan's work
// units and encodes their states into a "TPS1" partial; merge_partials validates a complete set
// and replays the single-process merge in unit order (fold_driver.h: finish_scalar /
// finish_partial), or, for tier-C ops, rebuilds the selection from the shards' tiles and runs
// the engine's own tier-C code on it. Layout and rationale: exec/README.md.
#include "tet/shard.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "exec/dtype_dispatch.h"
#include "exec/order_rounds.h"
#include "exec/selection.h"
#include "exec/fold_driver.h"
#include "exec/thread_pool.h"
#include "exec/tile_input.h"
#include "exec/work_units.h"
#include "fold/registry.h"
#include "util/checked.h"
#include "util/crc32.h"
#include "tet/error.h"

namespace tet {
namespace {

constexpr size_t kHeaderBytes = 152;
constexpr uint32_t kKindScalar = 1, kKindPartial = 2, kKindTierC = 3;
// Caps on what a partial may describe (checked before any geometry is built from it).
constexpr uint64_t kMaxTiles = uint64_t(1) << 24;
constexpr uint64_t kMaxElements = uint64_t(1) << 50;

[[noreturn]] void corrupt(const std::string& what) { fail("TET_SHARD_CORRUPT", "shard partial is corrupt: " + what); }

// ---- little-endian writer / bounds-checked reader
struct Out {
  std::vector<uint8_t> b;
  template <class U> void put(U v) {
    uint8_t tmp[sizeof(U)];
    std::memcpy(tmp, &v, sizeof(U));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    std::reverse(tmp, tmp + sizeof(U));
#endif
    b.insert(b.end(), tmp, tmp + sizeof(U));
  }
  void bytes(const void* p, size_t n) {
    const uint8_t* q = static_cast<const uint8_t*>(p);
    b.insert(b.end(), q, q + n);
  }
};
struct In {
  const uint8_t* p;
  size_t n, at = 0;
  const char* what;
  void need(size_t k) const {
    if (k > n - at) corrupt(std::string(what) + " ends early");
  }
  template <class U> U get() {
    need(sizeof(U));
    uint8_t tmp[sizeof(U)];
    std::memcpy(tmp, p + at, sizeof(U));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    std::reverse(tmp, tmp + sizeof(U));
#endif
    at += sizeof(U);
    U v;
    std::memcpy(&v, tmp, sizeof(U));
    return v;
  }
  const uint8_t* take(size_t k) {
    need(k);
    const uint8_t* q = p + at;
    at += k;
    return q;
  }
};

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  template <class U> void val(U v) { add(reinterpret_cast<const uint8_t*>(&v), sizeof(U)); }
};

// ---- plan and dataset sections
// The semantic part of the plan (what the result depends on) is fingerprinted together with the
// query document; the execution part (threads, I/O mode, strategy) may differ between shards.
void put_semantic(Out& o, const QueryPlan& p) {
  o.put<uint32_t>(p.dataset_id), o.put<uint32_t>(p.ndim), o.put<uint32_t>(uint32_t(p.op)), o.put<uint32_t>(p.reduce_mask);
  o.put<uint32_t>(p.bins), o.put<uint32_t>((p.hist_range ? 1u : 0u) | (p.has_fill ? 2u : 0u)), o.put<uint32_t>(p.obs_axis);
  o.put<uint32_t>(0);
  o.put<double>(p.q), o.put<double>(p.hist_min), o.put<double>(p.hist_max), o.put<double>(p.fill);
  o.put<uint64_t>(p.preview_max);
  for (uint32_t a = 0; a < 8; ++a) o.put<uint64_t>(p.start[a]);
  for (uint32_t a = 0; a < 8; ++a) o.put<uint64_t>(p.step[a]);
  for (uint32_t a = 0; a < 8; ++a) o.put<uint64_t>(p.count[a]);
}
constexpr size_t kSemanticBytes = 8 * 4 + 4 * 8 + 8 + 24 * 8;
constexpr size_t kPlanBytes = kSemanticBytes + 12;

// The selection tail after the fixed plan fields: per axis u32 kind (0 box, 2 runs), and for runs
// u64 n then n x (u64 start, u64 count). Index-list axes (a `where`, `indices`) travel as their
// runs; a partial without the tail (written before it existed) has box axes only. Semantic: it
// is fingerprinted with the fixed semantic fields.
void put_selection(Out& o, const QueryPlan& p) {
  for (uint32_t a = 0; a < p.ndim; ++a) {
    const bool box = p.kind[a] == AxisKind::Box;
    o.put<uint32_t>(box ? 0u : 2u);
    if (box) continue;
    o.put<uint64_t>(p.runs[a].size());
    for (const AxisRun& r : p.runs[a]) o.put<uint64_t>(r.start), o.put<uint64_t>(r.count);
  }
}

// The group tail after the selection tail (group_by plans only; semantic, fingerprinted like the
// selection): u32 groups G, u32 axis, u64 n, n x u32 group id per selected position of the axis.
void put_group(Out& o, const QueryPlan& p) {
  if (!p.grouped()) return;
  o.put<uint32_t>(p.groups), o.put<uint32_t>(p.group_axis), o.put<uint64_t>(p.group_ids.size());
  for (uint32_t g : p.group_ids) o.put<uint32_t>(g);
}

void get_group(In& in, QueryPlan& p) {
  if (in.at == in.n) return;  // not grouped
  p.groups = in.get<uint32_t>(), p.group_axis = in.get<uint32_t>();
  const uint64_t n = in.get<uint64_t>();
  if (p.groups < 1 || p.groups > kMaxGroups || p.group_axis >= p.ndim || !((p.reduce_mask >> p.group_axis) & 1) ||
      n != p.count[p.group_axis] || n > (in.n - in.at) / 4 || fold::is_tier_c(p.op) || p.op == Op::ArgMin || p.op == Op::ArgMax)
    corrupt("group section");
  p.group_ids.resize(n);
  for (uint64_t i = 0; i < n; ++i)
    if ((p.group_ids[i] = in.get<uint32_t>()) >= p.groups) corrupt("group id " + std::to_string(p.group_ids[i]));
}

void put_plan(Out& o, const QueryPlan& p) {
  put_semantic(o, p);
  o.put<uint32_t>(p.threads), o.put<uint32_t>(uint32_t(p.io_mode)), o.put<uint32_t>(uint32_t(p.strategy));
  put_selection(o, p);
  put_group(o, p);
}

// Reads the selection tail into `p` (its fixed start / count must agree with the runs).
void get_selection(In& in, QueryPlan& p) {
  if (in.at == in.n) return;  // no tail: box axes only
  for (uint32_t a = 0; a < p.ndim; ++a) {
    const uint32_t kind = in.get<uint32_t>();
    if (kind == 0) continue;
    if (kind != 2) corrupt("selection kind " + std::to_string(kind) + " on axis " + std::to_string(a));
    const uint64_t n = in.get<uint64_t>();
    if (n == 0 || n > kMaxIndexList || n > (in.n - in.at) / 16) corrupt("a run list of " + std::to_string(n) + " runs on axis " + std::to_string(a));
    std::vector<AxisRun> runs(n);
    uint64_t end = 0;
    for (uint64_t k = 0; k < n; ++k) {
      runs[k].start = in.get<uint64_t>(), runs[k].count = in.get<uint64_t>();
      uint64_t e;
      if (runs[k].count == 0 || runs[k].start < end || add_overflows(runs[k].start, runs[k].count, &e))
        corrupt("the runs of axis " + std::to_string(a) + " are not ascending, disjoint and non-empty");
      end = e;
    }
    const uint64_t start = p.start[a], count = p.count[a];
    p.set_runs(a, runs);
    if (p.start[a] != start || p.count[a] != count) corrupt("the runs of axis " + std::to_string(a) + " disagree with its start / count");
  }
}

QueryPlan get_plan(In& in) {
  QueryPlan p;
  p.dataset_id = in.get<uint32_t>(), p.ndim = in.get<uint32_t>();
  const uint32_t op = in.get<uint32_t>();
  p.reduce_mask = in.get<uint32_t>(), p.bins = in.get<uint32_t>();
  const uint32_t flags = in.get<uint32_t>();
  p.obs_axis = in.get<uint32_t>();
  if (in.get<uint32_t>() != 0) corrupt("reserved plan field is not zero");
  p.q = in.get<double>(), p.hist_min = in.get<double>(), p.hist_max = in.get<double>(), p.fill = in.get<double>();
  p.preview_max = in.get<uint64_t>();
  for (uint32_t a = 0; a < 8; ++a) p.start[a] = in.get<uint64_t>();
  for (uint32_t a = 0; a < 8; ++a) p.step[a] = in.get<uint64_t>();
  for (uint32_t a = 0; a < 8; ++a) p.count[a] = in.get<uint64_t>();
  p.threads = in.get<uint32_t>();
  const uint32_t io = in.get<uint32_t>(), strat = in.get<uint32_t>();
  if (op == 0 || op >= fold::kOpCount) corrupt("op code " + std::to_string(op));
  if (flags > 3 || io > 2 || strat > 4) corrupt("plan flags / io mode / strategy out of range");
  p.op = Op(op), p.hist_range = flags & 1, p.has_fill = (flags & 2) != 0;
  p.io_mode = IoMode(io), p.strategy = Strategy(strat);
  if (p.ndim < 1 || p.ndim > kMaxNdim) corrupt("plan rank " + std::to_string(p.ndim));
  get_selection(in, p);
  get_group(in, p);
  if (in.at != in.n) corrupt("the plan section has trailing bytes");
  if ((p.reduce_mask >> p.ndim) != 0 || (p.reduce_mask == 0 && !fold::is_tier_c(p.op))) corrupt("reduce mask");
  if (fold::is_tier_c(p.op) && p.op == Op::Histogram && (p.bins == 0 || p.bins > (1u << 24))) corrupt("histogram bins");
  return p;
}

void put_dataset(Out& o, const DatasetInfo& d) {
  o.put<uint32_t>(uint32_t(d.name.size()));
  o.bytes(d.name.data(), d.name.size());
  o.put<uint32_t>(uint32_t(d.dtype)), o.put<uint32_t>(d.ndim);
  for (uint32_t a = 0; a < 8; ++a) o.put<uint64_t>(d.shape[a]);
  for (uint32_t a = 0; a < 8; ++a) o.put<uint64_t>(d.chunk_shape[a]);
}

DatasetInfo get_dataset(In& in) {
  DatasetInfo d;
  const uint32_t name_len = in.get<uint32_t>();
  const uint8_t* name = in.take(name_len);
  d.name.assign(reinterpret_cast<const char*>(name), name_len);
  const uint32_t dt = in.get<uint32_t>();
  if (dt < 1 || dt > 10) corrupt("dtype tag " + std::to_string(dt));
  d.dtype = DType(dt);
  d.ndim = in.get<uint32_t>();
  if (d.ndim < 1 || d.ndim > kMaxNdim) corrupt("dataset rank " + std::to_string(d.ndim));
  for (uint32_t a = 0; a < 8; ++a) d.shape[a] = in.get<uint64_t>();
  for (uint32_t a = 0; a < 8; ++a) d.chunk_shape[a] = in.get<uint64_t>();
  d.element_count = 1, d.chunk_count = 1;
  for (uint32_t a = 0; a < 8; ++a) {
    if (a >= d.ndim && (d.shape[a] != 1 || d.chunk_shape[a] != 1)) corrupt("unused dataset axes must be 1");
    if (d.shape[a] == 0 || d.chunk_shape[a] == 0 || d.shape[a] > kMaxElements || d.chunk_shape[a] > kMaxElements)
      corrupt("dataset shape");
    d.grid[a] = (d.shape[a] + d.chunk_shape[a] - 1) / d.chunk_shape[a];
    if (__builtin_mul_overflow(d.element_count, d.shape[a], &d.element_count) || d.element_count > kMaxElements)
      corrupt("dataset element count overflows");
  }
  d.logical_bytes = d.element_count * dtype_size(d.dtype);
  return d;
}

// The selection must fit the dataset, and the geometry a partial describes must stay small
// enough to rebuild (tiles touched, elements selected) before Selection is constructed.
void check_geometry(const QueryPlan& p, const DatasetInfo& d) {
  if (p.ndim != d.ndim) corrupt("plan rank differs from the dataset rank");
  uint64_t tiles = 1, elems = 1;
  for (uint32_t a = 0; a < p.ndim; ++a) {
    if (p.count[a] == 0 || p.step[a] == 0 || p.start[a] >= d.shape[a] || p.count[a] > d.shape[a] ||
        (p.count[a] - 1) > (d.shape[a] - 1 - p.start[a]) / p.step[a])
      corrupt("selection on axis " + std::to_string(a) + " is outside the dataset");
    if (p.kind[a] != AxisKind::Box && p.runs[a].back().start + p.runs[a].back().count > d.shape[a])
      corrupt("the runs of axis " + std::to_string(a) + " end outside the dataset");
    const uint64_t pieces = std::min(p.count[a], d.grid[a]);
    if (__builtin_mul_overflow(tiles, pieces, &tiles) || tiles > kMaxTiles) corrupt("selection touches too many tiles");
    if (__builtin_mul_overflow(elems, p.count[a], &elems)) corrupt("selection element count overflows");
  }
  if ((p.op == Op::Covariance || p.op == Op::Correlation) && (p.ndim != 2 || p.obs_axis > 1)) corrupt("covariance geometry");
  // streaming folds build one unit per kUnitElems elements of a tile
  if (!fold::is_tier_c(p.op) && elems / exec::kUnitElems + tiles > (uint64_t(1) << 26)) corrupt("selection has too many work units");
}

uint64_t file_identity(const ChunkSource& src, uint32_t dataset_id) {
  const Catalog& cat = src.catalog();
  const DatasetInfo& d = cat.datasets[dataset_id];
  Fnv h;
  h.val(cat.file_len), h.val(cat.chunk_index_offset), h.val(cat.chunk_index_length), h.val(cat.flags);
  Out ds;
  put_dataset(ds, d);
  h.add(ds.b.data(), ds.b.size());
  for (uint64_t lc = 0; lc < d.chunk_to_entry.size(); ++lc) {
    const uint32_t ei = d.chunk_to_entry[lc];
    if (ei >= cat.entries.size()) continue;
    const ChunkEntry& e = cat.entries[ei];
    h.val(lc), h.val(e.payload_offset), h.val(e.raw_byte_len), h.val(e.stored_byte_len), h.val(uint32_t(e.codec));
  }
  h.add(reinterpret_cast<const uint8_t*>(cat.footer.history_json.data()), cat.footer.history_json.size());
  h.add(reinterpret_cast<const uint8_t*>(cat.footer.metadata_json.data()), cat.footer.metadata_json.size());
  return h.h;
}

// `plan` is a plan section: its semantic fields, then (past kPlanBytes) the selection tail.
uint64_t fingerprint_of(const uint8_t* plan, size_t plan_len, const std::string& doc) {
  Fnv h;
  h.add(plan, kSemanticBytes);
  if (plan_len > kPlanBytes) h.add(plan + kPlanBytes, plan_len - kPlanBytes);
  h.val(uint64_t(doc.size()));
  h.add(reinterpret_cast<const uint8_t*>(doc.data()), doc.size());
  return h.h;
}

uint32_t kind_of(const QueryPlan& p, uint32_t ndim) {
  if (fold::is_tier_c(p.op)) return kKindTierC;
  return p.reduce_mask == (1u << ndim) - 1 && !p.grouped() ? kKindScalar : kKindPartial;
}

// Balanced contiguous split: shard i of n owns units [units*i/n, units*(i+1)/n).
uint64_t split(uint64_t units, uint32_t i, uint32_t n) { return exec::shard_begin(units, i, n); }

// Preview value size: f16 previews are widened to f32.
size_t preview_size(DType dt) { return dt == DType::F16 ? 4 : dtype_size(dt); }

// ---- typed dispatch
template <class Fn> void with_dtype(DType dt, Fn&& fn) {
  if (!exec::dispatch_dtype(dt, std::forward<Fn>(fn))) corrupt("dtype");
}

uint64_t unit_count(const QueryPlan& plan, const exec::Selection& sel, uint32_t kind) {
  if (kind == kKindTierC) return exec::rounds::unit_count(plan, sel);
  if (kind == kKindScalar) return exec::scalar_unit_count(sel);
  return exec::partial_units(plan, sel).tasks.size();
}

// Expected body bytes of units [u0, u1).
uint64_t body_bytes(const QueryPlan& plan, const exec::Selection& sel, uint32_t kind, uint64_t u0, uint64_t u1) {
  uint64_t n = 0;
  with_dtype(sel.dataset.dtype, [&](auto* s, auto* t) {
    using S = std::remove_pointer_t<decltype(s)>;
    using T = std::remove_pointer_t<decltype(t)>;
    if (kind == kKindScalar) {
      n = (u1 - u0) * fold::state_bytes<T>(plan.op);
    } else if (kind == kKindPartial) {
      n = exec::partial_states_bytes<S, T>(plan, sel, u0, u1);
    }
  });
  return n;
}

struct Parsed {
  PartialHeader h;
  const uint8_t* plan = nullptr;     // the plan section: kPlanBytes + the selection tail
  size_t plan_len = 0;
  const uint8_t* dataset = nullptr;  // dataset section
  size_t dataset_len = 0;
  const uint8_t* preview = nullptr;
  uint64_t preview_len = 0, preview_count = 0;
  const uint8_t* body = nullptr;
  uint64_t body_len = 0;
  uint64_t chunks_read = 0, stored_bytes_read = 0;
  uint32_t threads_used = 1, io_mode = 0, strategy = 0;
  const uint8_t* request = nullptr;  // the echoed round request (round > 1)
  uint32_t request_len = 0;
};

Parsed parse(const uint8_t* bytes, size_t len) {
  if (bytes == nullptr || len < kHeaderBytes + 4) corrupt("it holds " + std::to_string(len) + " bytes, fewer than the " + std::to_string(kHeaderBytes + 4) + "-byte header");
  In in{bytes, len - 4, 0, "the header"};
  if (in.get<uint32_t>() != kPartialMagic) corrupt("it does not start with 'TPS1'");
  const uint32_t version = in.get<uint32_t>();
  if (version != kPartialVersion) corrupt("layout version " + std::to_string(version) + " (this build reads " + std::to_string(kPartialVersion) + ")");
  const uint32_t state_version = in.get<uint32_t>();
  if (state_version != fold::kStateLayoutVersion)
    corrupt("state layout version " + std::to_string(state_version) + " (this build reads " + std::to_string(fold::kStateLayoutVersion) + ")");
  Parsed r;
  r.h.kind = in.get<uint32_t>();
  r.h.fingerprint = in.get<uint64_t>(), r.h.file_id = in.get<uint64_t>();
  r.h.shard = in.get<uint32_t>(), r.h.shards = in.get<uint32_t>();
  r.h.unit_begin = in.get<uint64_t>(), r.h.unit_end = in.get<uint64_t>(), r.h.units = in.get<uint64_t>();
  const uint32_t op = in.get<uint32_t>(), dt = in.get<uint32_t>();
  const uint32_t plan_len = in.get<uint32_t>(), dataset_len = in.get<uint32_t>();
  const uint32_t doc_len = in.get<uint32_t>(), context_len = in.get<uint32_t>();
  r.preview_len = in.get<uint64_t>(), r.preview_count = in.get<uint64_t>(), r.body_len = in.get<uint64_t>();
  r.chunks_read = in.get<uint64_t>(), r.stored_bytes_read = in.get<uint64_t>();
  r.threads_used = in.get<uint32_t>(), r.io_mode = in.get<uint32_t>(), r.strategy = in.get<uint32_t>();
  r.h.round = in.get<uint32_t>(), r.request_len = in.get<uint32_t>();
  if (in.get<uint32_t>() != 0) corrupt("reserved header field is not zero");
  const uint64_t total = uint64_t(kHeaderBytes) + plan_len + dataset_len + doc_len + context_len + r.request_len;
  if (r.preview_len > len || r.body_len > len || total + r.preview_len + r.body_len + 4 != len)
    corrupt("its length " + std::to_string(len) + " disagrees with the section lengths in its header");
  const uint32_t stored = uint32_t(bytes[len - 4]) | uint32_t(bytes[len - 3]) << 8 | uint32_t(bytes[len - 2]) << 16 |
                          uint32_t(bytes[len - 1]) << 24;
  if (crc32(bytes, len - 4) != stored) corrupt("checksum mismatch (the bytes were changed or truncated)");
  if (r.h.kind < kKindScalar || r.h.kind > kKindTierC) corrupt("kind " + std::to_string(r.h.kind));
  if (op == 0 || op >= fold::kOpCount) corrupt("op code " + std::to_string(op));
  if (dt < 1 || dt > 10) corrupt("dtype tag " + std::to_string(dt));
  if (r.h.shards == 0 || r.h.shard >= r.h.shards) corrupt("shard " + std::to_string(r.h.shard) + " of " + std::to_string(r.h.shards));
  if (r.h.unit_begin != split(r.h.units, r.h.shard, r.h.shards) || r.h.unit_end != split(r.h.units, r.h.shard + 1, r.h.shards))
    corrupt("its unit range is not shard " + std::to_string(r.h.shard) + "'s part of " + std::to_string(r.h.units) + " units");
  if (plan_len < kPlanBytes) corrupt("plan section of " + std::to_string(plan_len) + " bytes");
  if (r.threads_used == 0 || r.io_mode > 2 || r.strategy > 4) corrupt("stats fields");
  r.h.op = Op(op), r.h.dtype = DType(dt);
  r.plan = in.take(plan_len), r.plan_len = plan_len;
  r.dataset = in.take(dataset_len), r.dataset_len = dataset_len;
  const uint8_t* doc = in.take(doc_len);
  const uint8_t* ctx = in.take(context_len);
  r.h.doc.assign(reinterpret_cast<const char*>(doc), doc_len);
  r.h.context.assign(reinterpret_cast<const char*>(ctx), context_len);
  r.request = in.take(r.request_len);
  if (r.h.round < 1 || r.h.round > exec::rounds::kMaxRounds || (r.h.round == 1) != (r.request_len == 0) ||
      (r.h.round > 1 && r.h.kind != kKindTierC))
    corrupt("round " + std::to_string(r.h.round) + " with a " + std::to_string(r.request_len) + "-byte request");
  if (r.request_len) {
    const exec::rounds::Request q = exec::rounds::decode_request(r.request, r.request_len);
    if (q.round != r.h.round || q.fingerprint != r.h.fingerprint || q.file_id != r.h.file_id || q.shards != r.h.shards)
      corrupt("its round request does not belong to it");
  }
  r.preview = in.take(size_t(r.preview_len));
  r.body = in.take(size_t(r.body_len));
  if (r.preview_count > r.preview_len || r.preview_len != r.preview_count * preview_size(r.h.dtype)) corrupt("preview length");
  if (fingerprint_of(r.plan, r.plan_len, r.h.doc) != r.h.fingerprint) corrupt("the fingerprint does not match its plan and document");
  In ds{r.dataset, r.dataset_len, 0, "the dataset section"};
  const uint32_t name_len = ds.get<uint32_t>();
  r.h.dataset.assign(reinterpret_cast<const char*>(ds.take(name_len)), name_len);
  return r;
}

std::string shard_name(const PartialHeader& h) {
  return "shard " + std::to_string(h.shard) + "/" + std::to_string(h.shards);
}

}  // namespace

std::vector<uint8_t> execute_partial(const ChunkSource& src, const QueryPlan& plan, const PartialRequest& req,
                                     const ExecContext& ctx) {
  if (req.shards == 0 || req.shard >= req.shards)
    fail("TET_SHARD_MISMATCH", "shard " + std::to_string(req.shard) + " of " + std::to_string(req.shards) +
                                   ": the shard index must be in [0, shard count) and the count at least 1");
  if (plan.op == Op::None)
    fail("TET_QUERY_UNSUPPORTED", "only queries with an aggregate can run sharded (this one only reads / spills)");
  const Catalog& cat = src.catalog();
  if (plan.dataset_id >= cat.datasets.size()) fail("TET_PLAN_INVALID", "dataset_id out of range");
  const DatasetInfo& d = cat.datasets[plan.dataset_id];
  if (plan.ndim != d.ndim) fail("TET_PLAN_INVALID", "plan rank differs from the dataset rank");
  const exec::Selection sel(d, plan);
  const uint32_t kind = kind_of(plan, sel.ndim);
  const uint64_t units = unit_count(plan, sel, kind);
  const uint64_t u0 = split(units, req.shard, req.shards), u1 = split(units, req.shard + 1, req.shards);
  Out planb, dsb;
  put_plan(planb, plan);
  put_dataset(dsb, d);
  const uint64_t fingerprint = fingerprint_of(planb.b.data(), planb.b.size(), req.doc), file_id = file_identity(src, plan.dataset_id);
  exec::rounds::Request round;
  if (!req.round.empty()) {
    round = exec::rounds::decode_request(req.round.data(), req.round.size());
    if (kind != kKindTierC)
      fail("TET_SHARD_MISMATCH", "a round request was given, but this query runs in one round");
    if (round.fingerprint != fingerprint || round.file_id != file_id)
      fail("TET_SHARD_MISMATCH", "the round request belongs to another query or file (round " + std::to_string(round.round) + ")");
    if (round.shards != req.shards)
      fail("TET_SHARD_MISMATCH", "the round request splits the query into " + std::to_string(round.shards) +
                                     " shards, this shard is one of " + std::to_string(req.shards));
  }

  QueryResult res;
  res.stats.threads_used = 1;
  // Progress: the shard's share of the selection's bytes (its units' share; units are of about
  // equal size). Fibers and covariance shards reset it to the exact bytes of the sub-box they read.
  const uint64_t bytes = sel.elements * dtype_size(d.dtype);  // <= the dataset's checked logical bytes
  // In floating point: bytes * (u1 - u0) may not fit 64 bits, and a progress total needs no exactness.
  const double share = units == 0 ? 0.0 : double(bytes) * double(u1 - u0) / double(units);
  exec::start_progress(ctx, share >= double(bytes) ? bytes : uint64_t(share));
  // Shard 0 carries the preview (the same elements the single-process engine previews); its
  // tiles are not the shard's progress.
  if (req.shard == 0 && plan.preview_max > 0) {
    QueryPlan pp = plan;
    pp.op = Op::None, pp.strategy = Strategy::CappedInMemory, pp.spill_path.clear(), pp.temp_dir.clear();
    ExecContext pctx = ctx;
    pctx.progress = nullptr;
    QueryResult pr = execute(src, pp, pctx);
    res.preview = std::move(pr.preview), res.preview_length = pr.preview_length;
    res.stats.chunks_read += pr.stats.chunks_read, res.stats.stored_bytes_read += pr.stats.stored_bytes_read;
  }
  std::vector<uint8_t> body;
  exec::TileFetcher fetcher(src, plan.dataset_id, dtype_size(d.dtype), ctx.progress);
  IoMode io = plan.io_mode;
  with_dtype(d.dtype, [&](auto* s, auto* t) {
    using S = std::remove_pointer_t<decltype(s)>;
    using T = std::remove_pointer_t<decltype(t)>;
    exec::FoldRun fr{plan, sel, ctx, fetcher, fold::best_isa(), plan.threads};
    QueryResult tmp;
    if (kind == kKindScalar) exec::fold_scalar_states<S, T>(fr, u0, u1, body, tmp);
    else if (kind == kKindPartial) exec::fold_partial_states<S, T>(fr, u0, u1, body, tmp);
    else body = exec::rounds::shard_body(src, plan, sel, fetcher, u0, u1, round, ctx, tmp);
    if (kind != kKindTierC) io = tmp.stats.io_mode;
    res.stats.threads_used = std::max(res.stats.threads_used, tmp.stats.threads_used);
    if (kind == kKindTierC) res.stats.chunks_read += tmp.stats.chunks_read, res.stats.stored_bytes_read += tmp.stats.stored_bytes_read;
  });
  res.stats.chunks_read += fetcher.chunks(), res.stats.stored_bytes_read += fetcher.stored_bytes();

  Out o;
  o.put<uint32_t>(kPartialMagic), o.put<uint32_t>(kPartialVersion), o.put<uint32_t>(fold::kStateLayoutVersion);
  o.put<uint32_t>(kind);
  o.put<uint64_t>(fingerprint), o.put<uint64_t>(file_id);
  o.put<uint32_t>(req.shard), o.put<uint32_t>(req.shards);
  o.put<uint64_t>(u0), o.put<uint64_t>(u1), o.put<uint64_t>(units);
  o.put<uint32_t>(uint32_t(plan.op)), o.put<uint32_t>(uint32_t(d.dtype));
  o.put<uint32_t>(uint32_t(planb.b.size())), o.put<uint32_t>(uint32_t(dsb.b.size()));
  o.put<uint32_t>(uint32_t(req.doc.size())), o.put<uint32_t>(uint32_t(req.context.size()));
  o.put<uint64_t>(res.preview.size()), o.put<uint64_t>(res.preview_length), o.put<uint64_t>(body.size());
  o.put<uint64_t>(res.stats.chunks_read), o.put<uint64_t>(res.stats.stored_bytes_read);
  o.put<uint32_t>(res.stats.threads_used), o.put<uint32_t>(uint32_t(io)), o.put<uint32_t>(uint32_t(plan.strategy));
  o.put<uint32_t>(round.round), o.put<uint32_t>(uint32_t(round.bytes.size()));
  o.put<uint32_t>(0);
  if (o.b.size() != kHeaderBytes) fail("TET_INTERNAL", "shard header size");
  o.bytes(planb.b.data(), planb.b.size());
  o.bytes(dsb.b.data(), dsb.b.size());
  o.bytes(req.doc.data(), req.doc.size());
  o.bytes(req.context.data(), req.context.size());
  if (!round.bytes.empty()) o.bytes(round.bytes.data(), round.bytes.size());
  if (!res.preview.empty()) o.bytes(res.preview.data(), res.preview.size());
  if (!body.empty()) o.bytes(body.data(), body.size());
  o.put<uint32_t>(crc32(o.b.data(), o.b.size()));
  return std::move(o.b);
}

PartialHeader inspect_partial(const uint8_t* bytes, size_t len) { return parse(bytes, len).h; }

MergedPartials merge_partials(const std::vector<std::pair<const uint8_t*, size_t>>& parts, const ExecContext& ctx) {
  if (parts.empty()) fail("TET_SHARD_MISSING", "no shard partials to merge");
  std::vector<Parsed> ps;
  ps.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    try {
      ps.push_back(parse(parts[i].first, parts[i].second));
    } catch (const Error& e) {
      ErrorDetail det;
      fail("TET_SHARD_CORRUPT", "partial " + std::to_string(i) + ": " + e.what(), det);
    }
  }
  const PartialHeader& h0 = ps[0].h;
  for (size_t i = 1; i < ps.size(); ++i) {
    const PartialHeader& h = ps[i].h;
    ErrorDetail det;
    det.shard = h.shard;
    const std::string who = "partial " + std::to_string(i) + " (" + shard_name(h) + ")";
    if (h.file_id != h0.file_id || h.dataset != h0.dataset)
      fail("TET_SHARD_MISMATCH", who + " was computed on a different file or dataset than partial 0 (" + shard_name(h0) + ")", det);
    if (h.fingerprint != h0.fingerprint || h.kind != h0.kind || h.op != h0.op || h.dtype != h0.dtype || h.units != h0.units)
      fail("TET_SHARD_MISMATCH", who + " comes from a different query than partial 0 (" + shard_name(h0) + ")", det);
    if (h.shards != h0.shards)
      fail("TET_SHARD_MISMATCH", who + " splits the query into " + std::to_string(h.shards) + " shards, partial 0 into " +
                                     std::to_string(h0.shards), det);
    if (h.round != h0.round || ps[i].request_len != ps[0].request_len ||
        (ps[0].request_len && std::memcmp(ps[i].request, ps[0].request, ps[0].request_len) != 0))
      fail("TET_SHARD_MISMATCH", who + " answers round " + std::to_string(h.round) + ", partial 0 round " +
                                     std::to_string(h0.round) + (h.round == h0.round ? " of another round request" : "") +
                                     ": merge the partials of one round (the latest) only", det);
  }
  std::vector<int64_t> by_shard(h0.shards, -1);
  for (size_t i = 0; i < ps.size(); ++i) {
    const uint32_t s = ps[i].h.shard;
    if (by_shard[s] >= 0) {
      ErrorDetail det;
      det.shard = s;
      fail("TET_SHARD_DUPLICATE", "shard " + std::to_string(s) + "/" + std::to_string(h0.shards) + " is given twice (partials " +
                                      std::to_string(by_shard[s]) + " and " + std::to_string(i) + ")", det);
    }
    by_shard[s] = int64_t(i);
  }
  std::string missing;
  uint32_t n_missing = 0, first_missing = 0;
  for (uint32_t s = 0; s < h0.shards; ++s)
    if (by_shard[s] < 0) {
      if (n_missing == 0) first_missing = s;
      if (n_missing < 16) missing += (missing.empty() ? "" : ", ") + std::to_string(s);
      ++n_missing;
    }
  if (n_missing > 0) {
    ErrorDetail det;
    det.shard = first_missing;
    fail("TET_SHARD_MISSING", std::to_string(n_missing) + " of " + std::to_string(h0.shards) + " shards missing (" + missing +
                                  (n_missing > 16 ? ", ..." : "") + "): every shard must be merged exactly once", det);
  }
  // Shard order = unit order.
  std::vector<const Parsed*> ordered(h0.shards);
  for (uint32_t s = 0; s < h0.shards; ++s) ordered[s] = &ps[size_t(by_shard[s])];
  const Parsed& p0 = *ordered[0];
  In pin{p0.plan, p0.plan_len, 0, "the plan section"};
  QueryPlan plan = get_plan(pin);
  In din{p0.dataset, p0.dataset_len, 0, "the dataset section"};
  const DatasetInfo d = get_dataset(din);
  if (din.at != din.n) corrupt("dataset section has trailing bytes");
  if (d.dtype != h0.dtype || plan.op != h0.op) corrupt("header and plan disagree");
  check_geometry(plan, d);
  const exec::Selection sel(d, plan);
  const uint32_t kind = kind_of(plan, sel.ndim);
  if (kind != h0.kind) corrupt("kind disagrees with the plan");
  const uint64_t units = unit_count(plan, sel, kind);
  if (units != h0.units) corrupt("the plan has " + std::to_string(units) + " units, the header says " + std::to_string(h0.units));
  uint64_t total = 0;
  for (const Parsed* p : ordered) {
    if (kind == kKindTierC) continue;  // exec::rounds parses (and checks) tier-C bodies
    const uint64_t want = body_bytes(plan, sel, kind, p->h.unit_begin, p->h.unit_end);
    if (p->body_len != want)
      corrupt(shard_name(p->h) + " holds " + std::to_string(p->body_len) + " state bytes, its units need " + std::to_string(want));
    total += want;
  }
  std::vector<uint8_t> body(size_t(total), 0);
  if (kind != kKindTierC) {
    uint64_t at = 0;
    for (const Parsed* p : ordered) {
      if (p->body_len) std::memcpy(body.data() + at, p->body, size_t(p->body_len));
      at += p->body_len;
    }
  }
  exec::check_cancel(ctx);

  MergedPartials out;
  out.dtype = d.dtype, out.doc = h0.doc, out.context = p0.h.context;
  QueryResult& res = out.result;
  with_dtype(d.dtype, [&](auto* s, auto* t) {
    using S = std::remove_pointer_t<decltype(s)>;
    using T = std::remove_pointer_t<decltype(t)>;
    if (kind == kKindScalar) {
      exec::finish_scalar<S, T>(plan, sel, body.data(), units, res);
    } else if (kind == kKindPartial) {
      exec::finish_partial<S, T>(plan, sel, body.data(), body.size(), plan.threads, res);
    }
  });
  out.op = fold::op_traits(plan.op).name;
  if (kind == kKindTierC) {
    exec::rounds::Request req;
    if (p0.request_len) req = exec::rounds::decode_request(p0.request, p0.request_len);
    std::vector<exec::rounds::Body> bodies;
    for (const Parsed* p : ordered) bodies.push_back({p->body, size_t(p->body_len), p->h.unit_begin, p->h.unit_end});
    std::vector<uint8_t> next;
    out.done = exec::rounds::merge(plan, d, req, bodies, res, next);
    if (!out.done) {
      exec::rounds::Request nr;
      nr.round = req.round + 1, nr.fingerprint = h0.fingerprint, nr.file_id = h0.file_id, nr.shards = h0.shards;
      nr.mode = exec::rounds::mode_of(plan), nr.payload = std::move(next);
      if (nr.round > exec::rounds::kMaxRounds) corrupt("the query would need more than " + std::to_string(exec::rounds::kMaxRounds) + " rounds");
      out.next_round = exec::rounds::encode_request(nr);
      out.next_round_no = nr.round;
    }
  }
  res.preview.assign(p0.preview, p0.preview + p0.preview_len);
  res.preview_length = p0.preview_count;
  res.stats.strategy = Strategy(p0.strategy);
  res.stats.io_mode = IoMode(p0.io_mode);
  res.stats.simd = fold::isa_name(fold::best_isa());
  res.stats.threads_used = 1;
  for (const Parsed* p : ordered) {
    res.stats.chunks_read += p->chunks_read, res.stats.stored_bytes_read += p->stored_bytes_read;
    res.stats.threads_used = std::max(res.stats.threads_used, p->threads_used);
  }
  return out;
}

}  // namespace tet
