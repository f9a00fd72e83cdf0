// decode_plan / encode_plan (v2) / encode_plan_v1: round trips and every validation rule
// (TET_PLAN_INVALID): v1 still decoded, v2 sections, index / run lists, truncation at every byte.
#include <cstring>
#include <vector>

#include "check.h"

// check.h's CHECK_THROWS_CODE names its parameter `code`, which collides with e.code().
#define EXPECT_CODE(expr, want) do { bool _t = false; try { expr; } catch (const tet::Error& _e) { _t = true; if (_e.code() != std::string(want)) { std::printf("  %s:%d code %s, want %s (%s)\n", __FILE__, __LINE__, _e.code().c_str(), want, _e.what()); ++tet_test::failures(); } } if (!_t) { std::printf("  %s:%d no throw: %s\n", __FILE__, __LINE__, #expr); ++tet_test::failures(); } } while (0)
#include "mem_source.h"
#include "tet/error.h"
#include "tet/plan.h"

using namespace tet;

namespace {
tet_test::MemSource& source() {
  static tet_test::MemSource s(DType::F32, {10, 6}, {4, 4}, std::vector<uint8_t>(240, 0));
  return s;
}
QueryPlan base() {
  QueryPlan p;
  p.ndim = 2;
  p.step.fill(1);
  p.count.fill(1);
  p.count[0] = 10, p.count[1] = 6;
  p.op = Op::Sum;
  p.reduce_mask = 3;
  return p;
}
void expect_invalid(const QueryPlan& p) {
  const auto w = encode_plan(p);
  EXPECT_CODE(decode_plan(w.data(), w.size(), source().catalog()), "TET_PLAN_INVALID");
  if (!p.has_index_axes()) {
    const auto w1 = encode_plan_v1(p);
    EXPECT_CODE(decode_plan(w1.data(), w1.size(), source().catalog()), "TET_PLAN_INVALID");
  }
}
void put32(std::vector<uint8_t>& w, size_t off, uint32_t v) { std::memcpy(&w[off], &v, 4); }
}  // namespace

TEST_CASE("v1 round trip keeps every field") {
  QueryPlan p = base();
  p.start[0] = 1, p.step[0] = 3, p.count[0] = 3;  // 1, 4, 7
  p.start[1] = 5, p.step[1] = 9, p.count[1] = 1;
  p.op = Op::Histogram, p.reduce_mask = 1, p.bins = 12, p.hist_range = true, p.hist_min = -2, p.hist_max = 8;
  p.strategy = Strategy::TempSpillMaterialize, p.temp_dir = "/tmp/x", p.io_mode = IoMode::SequentialChunks;
  p.threads = 3, p.preview_max = 77, p.spill_path = "abc";
  p.has_fill = true, p.fill = 9.5, p.q = 0.25;
  const auto w = encode_plan_v1(p);
  CHECK(w.size() == 288 + 3 + 6);
  const QueryPlan d = decode_plan(w.data(), w.size(), source().catalog());
  CHECK(d.start == p.start && d.step[0] == 3 && d.count[0] == 3 && d.count[1] == 1);
  CHECK(d.step[2] == 1 && d.count[7] == 1);
  CHECK(d.op == Op::Histogram && d.reduce_mask == 1 && d.bins == 12 && d.hist_range && d.hist_min == -2 && d.hist_max == 8);
  CHECK(d.strategy == Strategy::TempSpillMaterialize && d.temp_dir == "/tmp/x" && d.spill_path == "abc");
  CHECK(d.io_mode == IoMode::SequentialChunks && d.threads == 3 && d.preview_max == 77);
  CHECK(d.has_fill && d.fill == 9.5 && d.q == 0.25);
}

TEST_CASE("v1 header errors") {
  auto w = encode_plan_v1(base());
  const Catalog& c = source().catalog();
  EXPECT_CODE(decode_plan(w.data(), 100, c), "TET_PLAN_INVALID");
  EXPECT_CODE(decode_plan(nullptr, 0, c), "TET_PLAN_INVALID");
  auto bad = w;
  put32(bad, 0, 0x12345678);
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 4, 3);
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 280, 5);  // spill_path_len beyond the buffer
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  bad.push_back(0);  // trailing byte
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 28, 4);  // unknown flag
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 16, 26);  // op code
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 68, 5);  // strategy code
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 72, 3);  // io mode code
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
}

TEST_CASE("catalog and geometry errors") {
  QueryPlan p = base();
  p.dataset_id = 1;
  expect_invalid(p);
  p = base();
  p.ndim = 3, p.count[2] = 1;
  expect_invalid(p);
  p = base();
  p.count[0] = 0;
  expect_invalid(p);
  p = base();
  p.step[1] = 0;
  expect_invalid(p);
  p = base();
  p.count[0] = 11;
  expect_invalid(p);
  p = base();
  p.start[0] = 10, p.count[0] = 1;
  expect_invalid(p);
  p = base();
  p.start[0] = 1, p.step[0] = 3, p.count[0] = 4;  // 1 + 3*3 = 10 >= 10
  expect_invalid(p);
  p = base();
  p.start[0] = 1, p.step[0] = UINT64_MAX, p.count[0] = 2;  // overflow-safe
  expect_invalid(p);
}

TEST_CASE("op parameter errors") {
  QueryPlan p = base();
  p.reduce_mask = 4;
  expect_invalid(p);
  p = base();
  p.reduce_mask = 0;
  expect_invalid(p);
  p = base();
  p.op = Op::Quantile, p.q = 1.5, p.strategy = Strategy::InMemoryMaterialize;
  expect_invalid(p);
  p.q = std::nan("");
  expect_invalid(p);
  p = base();
  p.op = Op::Histogram, p.bins = 0, p.strategy = Strategy::InMemoryMaterialize;
  expect_invalid(p);
  p.bins = 1000001;
  expect_invalid(p);
  p.bins = 10, p.hist_range = true, p.hist_min = 3, p.hist_max = 3;
  expect_invalid(p);
  p = base();
  p.op = Op::NullCount;
  expect_invalid(p);  // no fill
  p = base();
  p.op = Op::Covariance, p.obs_axis = 2, p.strategy = Strategy::InMemoryMaterialize;
  expect_invalid(p);
}

TEST_CASE("strategy must fit the op") {
  QueryPlan p = base();
  p.strategy = Strategy::InMemoryMaterialize;  // streaming op
  expect_invalid(p);
  p = base();
  p.op = Op::Median;  // tier C with streaming_fold
  expect_invalid(p);
  p.strategy = Strategy::TempSpillMaterialize;  // no temp dir
  expect_invalid(p);
  p = base();
  p.op = Op::None, p.reduce_mask = 0, p.strategy = Strategy::MmapSpill;  // no spill path
  expect_invalid(p);
  p.strategy = Strategy::StreamingFold;
  expect_invalid(p);
  p.strategy = Strategy::CappedInMemory;
  const auto w = encode_plan(p);
  CHECK(decode_plan(w.data(), w.size(), source().catalog()).op == Op::None);
}

TEST_CASE("covariance needs rank 2") {
  tet_test::MemSource s3(DType::F32, {2, 2, 2}, {2, 2, 2}, std::vector<uint8_t>(32, 0));
  QueryPlan p;
  p.step.fill(1);
  p.ndim = 3, p.count[0] = 2, p.count[1] = 2, p.count[2] = 2, p.op = Op::Correlation, p.strategy = Strategy::InMemoryMaterialize;
  const auto w = encode_plan(p);
  EXPECT_CODE(decode_plan(w.data(), w.size(), s3.catalog()), "TET_PLAN_INVALID");
}


namespace {
uint32_t get32(const std::vector<uint8_t>& w, size_t off) { uint32_t v; std::memcpy(&v, &w[off], 4); return v; }
void put64(std::vector<uint8_t>& w, size_t off, uint64_t v) { std::memcpy(&w[off], &v, 8); }
// Offset of the header of section `tag` in a v2 plan (0 when absent).
size_t section_at(const std::vector<uint8_t>& w, uint32_t tag) {
  for (size_t at = 16; at + 8 <= w.size(); at += 8 + get32(w, at + 4))
    if (get32(w, at) == tag) return at;
  return 0;
}
bool decodes(const std::vector<uint8_t>& w, size_t len, const Catalog& c) {
  try {
    decode_plan(w.data(), len, c);
    return true;
  } catch (const tet::Error& e) {
    if (e.code() != std::string("TET_PLAN_INVALID")) {
      std::printf("  code %s (%s)\n", e.code().c_str(), e.what());
      ++tet_test::failures();
    }
    return false;
  }
}
QueryPlan indexed() {  // axis 0: indices 1,2,3,7,9; axis 1: runs [0,2) [2,3) [4,6)
  QueryPlan p = base();
  p.set_indices(0, {1, 2, 3, 7, 9});
  p.set_runs(1, {{0, 2}, {2, 1}, {4, 2}});
  p.reduce_mask = 2;
  return p;
}
bool same_plan(const QueryPlan& a, const QueryPlan& b) {
  bool ok = a.dataset_id == b.dataset_id && a.ndim == b.ndim && a.start == b.start && a.step == b.step &&
            a.count == b.count && a.kind == b.kind && a.op == b.op && a.reduce_mask == b.reduce_mask &&
            a.bins == b.bins && a.hist_range == b.hist_range && a.hist_min == b.hist_min &&
            a.hist_max == b.hist_max && a.has_fill == b.has_fill && a.fill == b.fill && a.q == b.q &&
            a.obs_axis == b.obs_axis && a.strategy == b.strategy && a.io_mode == b.io_mode &&
            a.threads == b.threads && a.preview_max == b.preview_max && a.spill_path == b.spill_path &&
            a.temp_dir == b.temp_dir && a.shard.begin == b.shard.begin && a.shard.end == b.shard.end &&
            a.shard.of == b.shard.of && a.shard.index == b.shard.index && a.shard.count == b.shard.count &&
            a.shard.round == b.shard.round && a.device == b.device && a.device_ordinal == b.device_ordinal;
  for (uint32_t x = 0; x < 8; ++x) ok = ok && a.runs[x] == b.runs[x];
  return ok;
}
}  // namespace

TEST_CASE("v2 round trip keeps every field, v1 decodes to the same plan") {
  QueryPlan p = base();
  p.start[0] = 1, p.step[0] = 3, p.count[0] = 3;
  p.start[1] = 5, p.step[1] = 9, p.count[1] = 1;
  p.op = Op::Histogram, p.reduce_mask = 1, p.bins = 12, p.hist_range = true, p.hist_min = -2, p.hist_max = 8;
  p.strategy = Strategy::TempSpillMaterialize, p.temp_dir = "/tmp/x", p.io_mode = IoMode::SequentialChunks;
  p.threads = 3, p.preview_max = 77, p.spill_path = "abc";
  p.has_fill = true, p.fill = 9.5, p.q = 0.25;
  const Catalog& c = source().catalog();
  const auto w = encode_plan(p);
  CHECK(get32(w, 4) == 2);
  const QueryPlan d = decode_plan(w.data(), w.size(), c);
  CHECK(d.version == 2);
  CHECK(same_plan(d, p));
  CHECK(d.aggs().size() == 1 && d.aggs()[0].op == Op::Histogram && d.aggs()[0].bins == 12);
  const auto w1 = encode_plan_v1(p);
  QueryPlan d1 = decode_plan(w1.data(), w1.size(), c);
  CHECK(d1.version == 1);
  CHECK(same_plan(d1, d));
  // shard and device sections
  p.shard = ShardRange{2, 5, 9};
  p.device = Device::Gpu, p.device_ordinal = 3;
  const auto w2 = encode_plan(p);
  CHECK(section_at(w2, 5) != 0 && section_at(w2, 6) != 0 && section_at(w, 5) == 0);
  const QueryPlan d2 = decode_plan(w2.data(), w2.size(), c);
  CHECK(same_plan(d2, p) && !d2.shard.whole() && d.shard.whole());
  EXPECT_CODE(encode_plan_v1(indexed()), "TET_PLAN_INVALID");
  // SHARD form 2: the shard (index, count) of an exact sharded run and its round request
  p.device = Device::Cpu, p.device_ordinal = 0;
  p.shard = ShardRange{};
  p.shard.index = 2, p.shard.count = 7, p.shard.round = {1, 2, 3, 4, 5};
  const auto w3 = encode_plan(p);
  const size_t at = section_at(w3, 5);
  CHECK(at != 0 && get32(w3, at + 4) == 40 + 5);
  const QueryPlan d3 = decode_plan(w3.data(), w3.size(), c);
  CHECK(same_plan(d3, p) && d3.shard.count == 7 && d3.shard.index == 2 && d3.shard.round.size() == 5);
  p.shard.round.clear();
  const auto w4 = encode_plan(p);
  CHECK(same_plan(decode_plan(w4.data(), w4.size(), c), p));
  // bad form-2 values: index >= count, count 0, nonzero reserved, a round length past the section
  for (int bad = 0; bad < 4; ++bad) {
    auto b = w3;
    const size_t f = at + 8 + 24;  // index, count, round length, reserved
    if (bad == 0) put32(b, f, 7);
    if (bad == 1) put32(b, f + 4, 0), put32(b, f, 0);
    if (bad == 2) put32(b, f + 12, 1);
    if (bad == 3) put32(b, f + 8, 6);
    CHECK(!decodes(b, b.size(), c));
  }
}

TEST_CASE("v2 index and run lists: merged into runs, round trip") {
  const Catalog& c = source().catalog();
  const QueryPlan p = indexed();
  CHECK(p.kind[0] == AxisKind::Indices && p.kind[1] == AxisKind::Runs);
  CHECK(p.count[0] == 5 && p.count[1] == 5 && p.start[0] == 1 && p.start[1] == 0);
  CHECK(p.runs[0].size() == 3 && p.runs[0][0] == (AxisRun{1, 3}) && p.runs[0][2] == (AxisRun{9, 1}));
  CHECK(p.runs[1].size() == 2 && p.runs[1][0] == (AxisRun{0, 3}) && p.runs[1][1] == (AxisRun{4, 2}));
  const auto w = encode_plan(p);
  const QueryPlan d = decode_plan(w.data(), w.size(), c);
  CHECK(same_plan(d, p));
  CHECK(d.positions(0) == (std::vector<uint64_t>{1, 2, 3, 7, 9}));
  CHECK(d.positions(1) == (std::vector<uint64_t>{0, 1, 2, 4, 5}));
  const auto w2 = encode_plan(d);
  CHECK(w2 == w);
}

TEST_CASE("v2 truncation at every byte is TET_PLAN_INVALID") {
  const Catalog& c = source().catalog();
  const auto w = encode_plan(indexed());
  CHECK(decodes(w, w.size(), c));
  for (size_t k = 0; k < w.size(); ++k) CHECK(!decodes(w, k, c));
  // With the optional sections a prefix may decode only where a section ends.
  QueryPlan p = indexed();
  p.shard = ShardRange{0, 1, 4};
  p.device = Device::Gpu;
  const auto v = encode_plan(p);
  const size_t shard = section_at(v, 5), device = section_at(v, 6);
  CHECK(shard != 0 && device != 0);
  for (size_t k = 0; k < v.size(); ++k) CHECK(decodes(v, k, c) == (k == shard || k == device));
  const auto v1 = encode_plan_v1(base());
  for (size_t k = 0; k < v1.size(); ++k) CHECK(!decodes(v1, k, c));
}

TEST_CASE("v2 bad section lengths, order, tags and missing sections") {
  const Catalog& c = source().catalog();
  const auto w = encode_plan(indexed());
  for (uint32_t tag = 1; tag <= 4; ++tag) {
    const size_t at = section_at(w, tag);
    CHECK(at != 0);
    const uint32_t n = get32(w, at + 4);
    for (uint32_t bad_len : {n - 1, n + 1, n + 8, 0u, 0xFFFFFFFFu, 0x80000000u}) {
      if (bad_len == n) continue;
      auto b = w;
      put32(b, at + 4, bad_len);
      CHECK(!decodes(b, b.size(), c));
    }
    // drop the section
    auto b = w;
    b.erase(b.begin() + long(at), b.begin() + long(at + 8 + n));
    CHECK(!decodes(b, b.size(), c));
    // repeat it
    b = w;
    b.insert(b.begin() + long(at + 8 + n), w.begin() + long(at), w.begin() + long(at + 8 + n));
    CHECK(!decodes(b, b.size(), c));
  }
  auto b = w;
  const size_t agg = section_at(w, 2);
  put32(b, agg, 7);  // unknown tag
  CHECK(!decodes(b, b.size(), c));
  b = w;
  put32(b, agg, 3);  // AGG relabelled OUTPUT: out of order / wrong size
  CHECK(!decodes(b, b.size(), c));
  b = w;
  b.push_back(0);  // trailing byte: a truncated section header
  CHECK(!decodes(b, b.size(), c));
  b = w;
  put32(b, 4, 3);  // unknown version
  CHECK(!decodes(b, b.size(), c));
  // AGG with two aggregates / op 0
  QueryPlan p = base();
  auto a = encode_plan(p);
  const size_t g = section_at(a, 2);
  b = a;
  put32(b, g + 8, 2);
  CHECK(!decodes(b, b.size(), c));
  b = a;
  put32(b, g + 16, 0);
  CHECK(!decodes(b, b.size(), c));
  b = a;
  put32(b, g + 12, 1);  // reserved
  CHECK(!decodes(b, b.size(), c));
  // SHARD / DEVICE values
  for (ShardRange bad : {ShardRange{1, 1, 4}, ShardRange{3, 2, 4}, ShardRange{0, 5, 4}, ShardRange{0, 1, 0}}) {
    p = base();
    p.shard = bad;
    auto sw = encode_plan(p);
    CHECK(!decodes(sw, sw.size(), c));
  }
  p = base();
  p.device = Device(2);
  auto dv = encode_plan(p);
  CHECK(!decodes(dv, dv.size(), c));
}

TEST_CASE("v2 index / run list validation") {
  const Catalog& c = source().catalog();
  auto bad_indices = [&](std::vector<uint64_t> idx) {
    QueryPlan p = base();
    p.set_indices(0, {1});
    auto w = encode_plan(p);
    // rewrite axis 0 as the raw list (set_indices would merge / accept anything)
    const size_t sel = section_at(w, 1);
    std::vector<uint8_t> payload(8 + 8 + 8 * idx.size());
    uint32_t kind = 1;
    std::memcpy(&payload[0], &kind, 4);
    uint64_t n = idx.size();
    std::memcpy(&payload[8], &n, 8);
    for (size_t i = 0; i < idx.size(); ++i) std::memcpy(&payload[16 + 8 * i], &idx[i], 8);
    const size_t axis0 = sel + 8, axis0_len = 8 + 8 + 8;
    w.erase(w.begin() + long(axis0), w.begin() + long(axis0 + axis0_len));
    w.insert(w.begin() + long(axis0), payload.begin(), payload.end());
    put32(w, sel + 4, get32(w, sel + 4) - uint32_t(axis0_len) + uint32_t(payload.size()));
    return !decodes(w, w.size(), c);
  };
  CHECK(!bad_indices({0, 3, 9}));  // valid control
  CHECK(bad_indices({}));
  CHECK(bad_indices({3, 3}));
  CHECK(bad_indices({4, 3}));
  CHECK(bad_indices({0, 10}));
  CHECK(bad_indices({UINT64_MAX}));
  // list length beyond the payload / beyond 2^24 / overflowing n * 8
  QueryPlan p = base();
  p.set_indices(0, {1});
  auto w = encode_plan(p);
  const size_t sel = section_at(w, 1);
  for (uint64_t n : {uint64_t(2), kMaxIndexList + 1, uint64_t(1) << 61, UINT64_MAX}) {
    auto b = w;
    put64(b, sel + 8 + 8, n);
    CHECK(!decodes(b, b.size(), c));
  }
  auto b = w;
  put32(b, sel + 8, 3);  // unknown axis kind
  CHECK(!decodes(b, b.size(), c));
  b = w;
  put32(b, sel + 12, 1);  // reserved
  CHECK(!decodes(b, b.size(), c));
  // run lists: count 0, overlap, beyond shape (overflow-safe)
  for (std::vector<AxisRun> runs : std::vector<std::vector<AxisRun>>{
           {{0, 0}}, {{0, 3}, {2, 1}}, {{4, 1}, {1, 1}}, {{8, 3}}, {{5, UINT64_MAX}}, {{10, 1}}}) {
    QueryPlan q = base();
    q.set_runs(1, {{0, 1}});
    auto r = encode_plan(q);
    const size_t s = section_at(r, 1);
    const size_t axis1 = s + 8 + 8 + 24;  // after axis 0's box
    std::vector<uint8_t> payload(16 + 16 * runs.size(), 0);
    uint32_t kind = 2;
    std::memcpy(&payload[0], &kind, 4);
    uint64_t n = runs.size();
    std::memcpy(&payload[8], &n, 8);
    for (size_t i = 0; i < runs.size(); ++i) {
      std::memcpy(&payload[16 + 16 * i], &runs[i].start, 8);
      std::memcpy(&payload[24 + 16 * i], &runs[i].count, 8);
    }
    r.erase(r.begin() + long(axis1), r.begin() + long(axis1 + 32));
    r.insert(r.begin() + long(axis1), payload.begin(), payload.end());
    put32(r, s + 4, get32(r, s + 4) - 32 + uint32_t(payload.size()));
    CHECK(!decodes(r, r.size(), c));
  }
}

TEST_MAIN()

TEST_CASE("v2 OUTPUT flags: bit 0 (f16 as stored bits) round trips; other bits are invalid") {
  QueryPlan p = base();
  p.op = Op::None, p.reduce_mask = 0, p.preview_max = 60, p.strategy = Strategy::CappedInMemory;
  p.f16_raw = true;
  const Catalog& c = source().catalog();
  auto w = encode_plan(p);
  const size_t out = section_at(w, 3);
  CHECK(out != 0 && get32(w, out + 12) == 1);  // [tag, length] then reduce_mask, flags
  CHECK(decode_plan(w.data(), w.size(), c).f16_raw);
  p.f16_raw = false;
  auto w0 = encode_plan(p);
  CHECK(!decode_plan(w0.data(), w0.size(), c).f16_raw);
  put32(w, out + 12, 3);
  EXPECT_CODE(decode_plan(w.data(), w.size(), c), "TET_PLAN_INVALID");
}

TEST_CASE("v2 AGG with several aggregates (reductions): round trip, and only distinct streaming ops of a scalar fold") {
  const Catalog& c = source().catalog();
  auto agg = [](Op op) {
    AggSpec g;
    g.op = op;
    return g;
  };
  QueryPlan p = base();
  p.op = Op::Min;
  p.more = {agg(Op::Max), agg(Op::Mean), agg(Op::Std), agg(Op::ArgMax)};
  const auto w = encode_plan(p);
  const size_t at = section_at(w, 2);
  CHECK(get32(w, at + 4) == 8 + 5 * 48 && get32(w, at + 8) == 5);
  const QueryPlan d = decode_plan(w.data(), w.size(), c);
  CHECK(d.op == Op::Min && d.more.size() == 4);
  CHECK(d.more[0].op == Op::Max && d.more[3].op == Op::ArgMax);
  CHECK(d.aggs().size() == 5 && d.aggs()[2].op == Op::Mean);
  EXPECT_CODE(encode_plan_v1(p), "TET_PLAN_INVALID");
  auto v2_invalid = [&](const QueryPlan& q) {
    const auto b = encode_plan(q);
    EXPECT_CODE(decode_plan(b.data(), b.size(), c), "TET_PLAN_INVALID");
  };
  QueryPlan q = p;
  q.more.push_back(agg(Op::Median));  // tier C
  v2_invalid(q);
  q = p;
  q.op = Op::Quantile;  // tier C first
  v2_invalid(q);
  q = p;
  q.more.push_back(agg(Op::Max));  // repeated
  v2_invalid(q);
  q = p;
  q.more.push_back(agg(Op::NullCount));  // no fill
  v2_invalid(q);
  q = p;
  q.reduce_mask = 1;  // partial
  v2_invalid(q);
  q = p;
  q.shard = ShardRange{0, 1, 2};
  v2_invalid(q);
  q = p;
  q.device = Device::Gpu;
  v2_invalid(q);
  q = p;
  q.more.assign(kMaxAggs, agg(Op::Max));  // 33 aggregates
  v2_invalid(q);
}
