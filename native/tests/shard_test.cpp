// Sharded execution (tet/shard.h): for every op x every dtype x k in {1, 2, 3, 7} shards
// (some of which get no units), scalar and partial reductions over full and strided selections,
// merge_partials(execute_partial(shard i of k)...) equals tet::execute byte for byte (NaN bits
// included). The partial codec: a truncation at every byte and a flipped byte anywhere are
// TET_SHARD_CORRUPT (never a crash); missing / duplicate shards, a different query, a different
// file and a different shard count are their TET_SHARD_* codes. Tier-C ops run their rounds
// (round requests from merge_partials); a truncated / bit-flipped round request is
// TET_SHARD_CORRUPT, a request of another query TET_SHARD_MISMATCH, partials of an earlier round
// mixed in TET_SHARD_MISMATCH.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "check.h"
#include "fold/registry.h"
#include "mem_source.h"
#include "tet/query.h"
#include "tet/shard.h"

using namespace tet;
using tet_test::MemSource;

namespace {

// 700 x 500 in 400 x 400 tiles: tile (0,0) has two work units, the others one (5 units).
constexpr uint64_t kRows = 700, kCols = 500, kChunk = 400;

template <class S> std::vector<uint8_t> data_for(DType dt, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<S> v(kRows * kCols);
  for (auto& x : v) {
    const uint64_t r = rng();
    if (dt == DType::F32 || dt == DType::F64) {
      const int k = int(r % 1999);
      const double u = double(int64_t(r >> 20) % 2000000) / 997.0 - 1000.0;
      x = S(k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY : u);
    } else if (dt == DType::F16) {
      const uint16_t h = uint16_t(r);
      x = S((h & 0x7c00) == 0x7c00 && (r >> 16) % 50 != 0 ? uint16_t(h & 0xbfff) : h);  // some NaN / inf
    } else {
      x = S(r >> (64 - 8 * sizeof(S)));
    }
  }
  std::vector<uint8_t> b(v.size() * sizeof(S));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> make_data(DType dt, uint64_t seed) {
  switch (dt) {
    case DType::F32: return data_for<float>(dt, seed);
    case DType::F64: return data_for<double>(dt, seed);
    case DType::F16: case DType::U16: return data_for<uint16_t>(dt, seed);
    case DType::U8: return data_for<uint8_t>(dt, seed);
    case DType::I16: return data_for<int16_t>(dt, seed);
    case DType::I32: return data_for<int32_t>(dt, seed);
    case DType::U32: return data_for<uint32_t>(dt, seed);
    case DType::I64: return data_for<int64_t>(dt, seed);
    default: return data_for<uint64_t>(dt, seed);
  }
}

QueryPlan base_plan(Op op, uint32_t mask, bool strided) {
  QueryPlan p;
  p.ndim = 2;
  if (strided) {
    p.start[0] = 3, p.step[0] = 2, p.count[0] = (kRows - 3 + 1) / 2;
    p.start[1] = 1, p.step[1] = 3, p.count[1] = (kCols - 1 + 2) / 3;
  } else {
    p.start[0] = p.start[1] = 0, p.step[0] = p.step[1] = 1, p.count[0] = kRows, p.count[1] = kCols;
  }
  p.op = op, p.reduce_mask = mask;
  p.strategy = fold::is_tier_c(op) ? Strategy::InMemoryMaterialize : Strategy::StreamingFold;
  p.q = 0.3, p.bins = 7;
  p.preview_max = 5;
  if (op == Op::NullCount) p.has_fill = true, p.fill = 0.0;
  if (op == Op::Covariance || op == Op::Correlation) {
    p.reduce_mask = 0, p.obs_axis = op == Op::Covariance ? 0 : 1;
    p.count[1] = std::min<uint64_t>(p.count[1], 40);  // 40 variables
  }
  return p;
}

std::vector<std::vector<uint8_t>> shard_all(const ChunkSource& src, const QueryPlan& p, uint32_t k, const std::string& doc,
                                            const std::vector<uint8_t>& round = {}) {
  std::vector<std::vector<uint8_t>> parts;
  for (uint32_t i = 0; i < k; ++i) {
    PartialRequest rq;
    rq.shard = i, rq.shards = k, rq.doc = doc, rq.context = "ctx", rq.round = round;
    parts.push_back(execute_partial(src, p, rq));
  }
  return parts;
}

MergedPartials merge1(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<std::pair<const uint8_t*, size_t>> v;
  for (const auto& p : parts) v.emplace_back(p.data(), p.size());
  return merge_partials(v);
}

// Round after round until done (the last round's partials in `last`).
MergedPartials run_rounds(const ChunkSource& src, const QueryPlan& p, uint32_t k, const std::string& doc,
                          std::vector<std::vector<uint8_t>>* last = nullptr, uint32_t* rounds = nullptr) {
  std::vector<uint8_t> round;
  for (uint32_t r = 1; r <= 8; ++r) {
    auto parts = shard_all(src, p, k, doc, round);
    MergedPartials m = merge1(parts);
    if (last) *last = parts;
    if (rounds) *rounds = r;
    if (m.done) return m;
    round = m.next_round;
  }
  fail("TET_INTERNAL", "more than 8 rounds");
}

MergedPartials merge(const std::vector<std::vector<uint8_t>>& parts) { return merge1(parts); }

bool same(const QueryResult& a, const QueryResult& b) {
  return a.values.kind == b.values.kind && a.values.length == b.values.length && a.values.bytes == b.values.bytes &&
         a.reduced_shape == b.reduced_shape && a.cov_order == b.cov_order && a.preview == b.preview &&
         a.preview_length == b.preview_length && a.hist_edges.size() == b.hist_edges.size() &&
         (a.hist_edges.empty() || std::memcmp(a.hist_edges.data(), b.hist_edges.data(), a.hist_edges.size() * 8) == 0);
}

const DType kDtypes[] = {DType::F32, DType::F64, DType::F16, DType::U8, DType::U16,
                         DType::I16, DType::I32, DType::U32, DType::I64, DType::U64};

}  // namespace

TEST_CASE("shard: every op x dtype x k merges to the unsharded result bit for bit") {
  uint64_t checked = 0, empty_shards = 0;
  for (DType dt : kDtypes) {
    const MemSource src(dt, {kRows, kCols}, {kChunk, kChunk}, make_data(dt, 11 + uint64_t(dt)));
    for (uint32_t op = 1; op < fold::kOpCount; ++op) {
      for (uint32_t mask : {3u, 1u, 2u}) {
        if ((Op(op) == Op::Covariance || Op(op) == Op::Correlation) && mask != 3) continue;
        for (bool strided : {false, true}) {
          for (bool range : {false, true}) {
            if (range && Op(op) != Op::Histogram) continue;
            QueryPlan p = base_plan(Op(op), mask, strided);
            if (range) p.hist_range = true, p.hist_min = -300, p.hist_max = 40000;
            const QueryResult want = execute(src, p);
            for (uint32_t k : {1u, 2u, 3u, 7u}) {
              std::vector<std::vector<uint8_t>> parts;
              const MergedPartials m = run_rounds(src, p, k, "{}", &parts);
              for (const auto& part : parts) {
                const PartialHeader h = inspect_partial(part.data(), part.size());
                if (h.unit_begin == h.unit_end) ++empty_shards;
              }
              const bool ok = same(m.result, want);
              if (!ok)
                std::printf("  %s %s mask %u strided %d k %u: merged differs\n", fold::op_traits(Op(op)).name, dtype_name(dt),
                            mask, int(strided), k);
              CHECK(ok);
              CHECK(m.dtype == dt && m.context == "ctx");
              if (k == 7) {  // any order of the parts
                std::vector<std::vector<uint8_t>> rev(parts.rbegin(), parts.rend());
                CHECK(same(merge(rev).result, want));
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  std::printf("  %llu merges checked, %llu empty shards\n", (unsigned long long)checked, (unsigned long long)empty_shards);
  CHECK(empty_shards > 0);
}

TEST_CASE("shard: codec errors are TET_SHARD_* codes, never crashes") {
  const MemSource src(DType::F64, {kRows, kCols}, {kChunk, kChunk}, make_data(DType::F64, 5));
  const QueryPlan p = base_plan(Op::Sum, 1, false);
  const auto parts = shard_all(src, p, 3, "{\"doc\":1}");
  CHECK(same(merge(parts).result, execute(src, p)));
  // truncation at every byte
  for (size_t n = 0; n < parts[1].size(); ++n) {
    auto bad = parts;
    bad[1].resize(n);
    CHECK_THROWS_CODE(merge(bad), "TET_SHARD_CORRUPT");
  }
  // a flipped bit anywhere
  for (size_t i = 0; i < parts[2].size(); i += 1 + i / 64) {
    auto bad = parts;
    bad[2][i] ^= 0x10;
    CHECK_THROWS_CODE(merge(bad), "TET_SHARD_CORRUPT");
  }
  CHECK_THROWS_CODE(merge({}), "TET_SHARD_MISSING");
  CHECK_THROWS_CODE(merge({parts[0], parts[2]}), "TET_SHARD_MISSING");
  CHECK_THROWS_CODE(merge({parts[0], parts[1], parts[1], parts[2]}), "TET_SHARD_DUPLICATE");
  // a different query (other op, other document), a different file, another shard count
  const auto other_op = shard_all(src, base_plan(Op::Mean, 1, false), 3, "{\"doc\":1}");
  CHECK_THROWS_CODE(merge({parts[0], other_op[1], parts[2]}), "TET_SHARD_MISMATCH");
  const auto other_doc = shard_all(src, p, 3, "{\"doc\":2}");
  CHECK_THROWS_CODE(merge({parts[0], other_doc[1], parts[2]}), "TET_SHARD_MISMATCH");
  std::vector<uint8_t> d2 = make_data(DType::F64, 5);
  const MemSource src2(DType::F64, {kRows, kCols}, {kChunk, 250}, d2);
  const auto other_file = shard_all(src2, p, 3, "{\"doc\":1}");
  CHECK_THROWS_CODE(merge({parts[0], other_file[1], parts[2]}), "TET_SHARD_MISMATCH");
  const auto two = shard_all(src, p, 2, "{\"doc\":1}");
  CHECK_THROWS_CODE(merge({parts[0], two[1], parts[2]}), "TET_SHARD_MISMATCH");
  // bad shard specs
  PartialRequest rq;
  rq.shard = 3, rq.shards = 3;
  CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_MISMATCH");
  rq.shard = 0, rq.shards = 0;
  CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_MISMATCH");
}

TEST_CASE("shard: round requests: corrupt, foreign and stale rounds are TET_SHARD_* codes") {
  // i64 (no NaN, 64-bit keys: a median takes 2..4 rounds)
  const MemSource src(DType::I64, {kRows, kCols}, {kChunk, kChunk}, make_data(DType::I64, 9));
  QueryPlan p = base_plan(Op::Median, 3, false);
  const QueryResult want = execute(src, p);
  const auto r1 = shard_all(src, p, 3, "{\"m\":1}");
  const MergedPartials m1 = merge(r1);
  CHECK(!m1.done && m1.next_round_no == 2 && !m1.next_round.empty());
  const std::vector<uint8_t>& req = m1.next_round;
  const auto r2 = shard_all(src, p, 3, "{\"m\":1}", req);
  uint32_t rounds = 0;
  std::vector<std::vector<uint8_t>> last;
  const MergedPartials done = run_rounds(src, p, 3, "{\"m\":1}", &last, &rounds);
  CHECK(done.done && same(done.result, want));
  CHECK(rounds >= 2 && rounds <= 4);
  // truncation of the request at every byte, a flipped bit anywhere
  PartialRequest rq;
  rq.shard = 1, rq.shards = 3, rq.doc = "{\"m\":1}", rq.context = "ctx";
  for (size_t n = 1; n < req.size(); ++n) {
    rq.round.assign(req.begin(), req.begin() + ptrdiff_t(n));
    CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_CORRUPT");
  }
  for (size_t i = 0; i < req.size(); ++i) {
    for (uint8_t bit : {uint8_t(0x01), uint8_t(0x80)}) {
      rq.round = req;
      rq.round[i] ^= bit;
      CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_CORRUPT");
    }
  }
  // a request of another query (other document, other op), another file, another shard count
  rq.round = req;
  rq.doc = "{\"m\":2}";
  CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_MISMATCH");
  rq.doc = "{\"m\":1}";
  QueryPlan q = p;
  q.op = Op::Quantile, q.q = 0.7;
  CHECK_THROWS_CODE(execute_partial(src, q, rq), "TET_SHARD_MISMATCH");
  const MemSource src2(DType::I64, {kRows, kCols}, {kChunk, 250}, make_data(DType::I64, 9));
  CHECK_THROWS_CODE(execute_partial(src2, p, rq), "TET_SHARD_MISMATCH");
  rq.shards = 4;
  CHECK_THROWS_CODE(execute_partial(src, p, rq), "TET_SHARD_MISMATCH");
  rq.shards = 3;
  // a one-round query given a round request
  CHECK_THROWS_CODE(execute_partial(src, base_plan(Op::Sum, 3, false), rq), "TET_SHARD_MISMATCH");
  // a partial of round 1 mixed into round 2
  CHECK_THROWS_CODE(merge({r2[0], r1[1], r2[2]}), "TET_SHARD_MISMATCH");
  // flipped bits in a round-2 partial (its echoed request included)
  for (size_t i = 0; i < r2[1].size(); i += 1 + i / 32) {
    auto bad = r2;
    bad[1][i] ^= 0x04;
    CHECK_THROWS_CODE(merge(bad), "TET_SHARD_CORRUPT");
  }
  // the small partials: every round's partial is far below the selection's bytes
  for (const auto& part : last) CHECK(part.size() < kRows * kCols * 8 / 20);
}

TEST_MAIN()
