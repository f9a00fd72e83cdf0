// decode_plan / encode_plan: round trip and every validation rule (TET_PLAN_INVALID).
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
  p.count[0] = 10, p.count[1] = 6;
  p.op = Op::Sum;
  p.reduce_mask = 3;
  return p;
}
void expect_invalid(const QueryPlan& p) {
  const auto w = encode_plan(p);
  EXPECT_CODE(decode_plan(w.data(), w.size(), source().catalog()), "TET_PLAN_INVALID");
}
void put32(std::vector<uint8_t>& w, size_t off, uint32_t v) { std::memcpy(&w[off], &v, 4); }
}  // namespace

TEST_CASE("round trip keeps every field") {
  QueryPlan p = base();
  p.start[0] = 1, p.step[0] = 3, p.count[0] = 3;  // 1, 4, 7
  p.start[1] = 5, p.step[1] = 9, p.count[1] = 1;
  p.op = Op::Histogram, p.reduce_mask = 1, p.bins = 12, p.hist_range = true, p.hist_min = -2, p.hist_max = 8;
  p.strategy = Strategy::TempSpillMaterialize, p.temp_dir = "/tmp/x", p.io_mode = IoMode::SequentialChunks;
  p.threads = 3, p.preview_max = 77, p.spill_path = "abc";
  p.has_fill = true, p.fill = 9.5, p.q = 0.25;
  const auto w = encode_plan(p);
  CHECK(w.size() == 288 + 3 + 6);
  const QueryPlan d = decode_plan(w.data(), w.size(), source().catalog());
  CHECK(d.start == p.start && d.step[0] == 3 && d.count[0] == 3 && d.count[1] == 1);
  CHECK(d.step[2] == 1 && d.count[7] == 1);
  CHECK(d.op == Op::Histogram && d.reduce_mask == 1 && d.bins == 12 && d.hist_range && d.hist_min == -2 && d.hist_max == 8);
  CHECK(d.strategy == Strategy::TempSpillMaterialize && d.temp_dir == "/tmp/x" && d.spill_path == "abc");
  CHECK(d.io_mode == IoMode::SequentialChunks && d.threads == 3 && d.preview_max == 77);
  CHECK(d.has_fill && d.fill == 9.5 && d.q == 0.25);
}

TEST_CASE("header errors") {
  auto w = encode_plan(base());
  const Catalog& c = source().catalog();
  EXPECT_CODE(decode_plan(w.data(), 100, c), "TET_PLAN_INVALID");
  EXPECT_CODE(decode_plan(nullptr, 0, c), "TET_PLAN_INVALID");
  auto bad = w;
  put32(bad, 0, 0x12345678);
  EXPECT_CODE(decode_plan(bad.data(), bad.size(), c), "TET_PLAN_INVALID");
  bad = w;
  put32(bad, 4, 2);
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

TEST_MAIN()
