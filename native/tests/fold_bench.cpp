// Fold throughput bench (not a ctest): folds a dense in-memory array (MemSource, warm) and
// reports GB/s next to an in-process memory-bandwidth probe (f64-accumulating AVX2 sum over the
// same tile bytes on all pool threads, like bench/probe.c). Medians of REPS runs.
//
//   fold_bench [DTYPE=f32|f64|i32] [REPS=5] [OPS=all|comma list] [ROWS] [COLS] [TILE]
//
// Ops: sum mean min max var std argmax count (scalar), sum0 mean0 min0 var0 argmax0 (reduce
// axis 0), sum1 mean1 var1 (reduce axis 1), median quantile (in-memory materialize).
// Built only with -DTET_BENCH=ON.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/quantile.h"
#include "exec/thread_pool.h"
#include "mem_source.h"
#include "tet/plan.h"
#include "tet/query.h"

using namespace tet;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__attribute__((target("avx2"))) double probe_sum(const uint8_t* p, size_t bytes, DType dt) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  double tail = 0;
  size_t i = 0;
  if (dt == DType::F32) {
    const float* f = reinterpret_cast<const float*>(p);
    const size_t n = bytes / 4;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(f + i)));
      a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 4)));
      a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 8)));
      a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 12)));
    }
    for (; i < n; ++i) tail += f[i];
  } else if (dt == DType::F64) {
    const double* f = reinterpret_cast<const double*>(p);
    const size_t n = bytes / 8;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_loadu_pd(f + i));
      a1 = _mm256_add_pd(a1, _mm256_loadu_pd(f + i + 4));
      a2 = _mm256_add_pd(a2, _mm256_loadu_pd(f + i + 8));
      a3 = _mm256_add_pd(a3, _mm256_loadu_pd(f + i + 12));
    }
    for (; i < n; ++i) tail += f[i];
  } else {
    const int32_t* f = reinterpret_cast<const int32_t*>(p);
    const size_t n = bytes / 4;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f + i))));
      a1 = _mm256_add_pd(a1, _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f + i + 4))));
      a2 = _mm256_add_pd(a2, _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f + i + 8))));
      a3 = _mm256_add_pd(a3, _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(f + i + 12))));
    }
    for (; i < n; ++i) tail += f[i];
  }
  double l[4];
  _mm256_storeu_pd(l, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
  return l[0] + l[1] + l[2] + l[3] + tail;
}

struct OpSpec {
  const char* name;
  Op op;
  uint32_t mask;  // 0 = scalar
};

const OpSpec kOps[] = {
    {"sum", Op::Sum, 0},     {"mean", Op::Mean, 0},       {"min", Op::Min, 0},       {"max", Op::Max, 0},
    {"var", Op::Var, 0},     {"std", Op::Std, 0},         {"argmax", Op::ArgMax, 0}, {"count", Op::Count, 0},
    {"sum0", Op::Sum, 1},    {"mean0", Op::Mean, 1},      {"min0", Op::Min, 1},      {"var0", Op::Var, 1},
    {"argmax0", Op::ArgMax, 1}, {"sum1", Op::Sum, 2},     {"mean1", Op::Mean, 2},    {"var1", Op::Var, 2},
    {"median", Op::Median, 0}, {"quantile", Op::Quantile, 0},
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dts = argc > 1 ? argv[1] : "f32";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string ops = argc > 3 ? argv[3] : "all";
  const DType dt = dts == "f64" ? DType::F64 : dts == "i32" ? DType::I32 : DType::F32;
  const size_t es = dtype_size(dt);
  const uint64_t rows = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 16384;
  const uint64_t cols = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : (dt == DType::F64 ? 8192 : 16384);
  const uint64_t tile = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 2048;
  const uint64_t n = rows * cols;
  std::unique_ptr<tet_test::MemSource> src;
  {
    std::vector<uint8_t> dense(n * es);
    std::mt19937_64 rng(7);
    std::normal_distribution<double> nd(3.0, 2.0);
    for (uint64_t i = 0; i < n; ++i) {
      const double v = nd(rng);
      if (dt == DType::F32) { float f = float(v); std::memcpy(&dense[i * 4], &f, 4); }
      else if (dt == DType::F64) std::memcpy(&dense[i * 8], &v, 8);
      else { int32_t k = int32_t(v * 1000); std::memcpy(&dense[i * 4], &k, 4); }
    }
    src.reset(new tet_test::MemSource(dt, {rows, cols}, {tile, tile}, dense));
  }
  const Catalog& cat = src->catalog();
  const uint64_t tiles = cat.datasets[0].chunk_count;
  const double gb = double(n * es) / 1e9;
  exec::ThreadPool& pool = exec::ThreadPool::instance();

  // probe: same tile bytes, all pool threads
  auto probe_once = [&] {
    std::vector<double> sums(tiles);
    const double t0 = now();
    pool.parallel_for(tiles, 0, [&](uint64_t t, uint32_t) {
      tet::ScratchBytes s;
      const TileView v = src->tile(0, t, s);
      sums[t] = probe_sum(v.data, v.bytes, dt);
    });
    return now() - t0;
  };
  std::vector<double> pt;
  for (int r = 0; r < reps; ++r) pt.push_back(probe_once());
  const double probe = gb / median_of(pt);
  std::printf("dtype %s shape [%llu,%llu] tile %llu threads %u: probe %.2f GB/s (ratios: each run against a probe run "
              "next to it, median)\n", dts.c_str(), (unsigned long long)rows, (unsigned long long)cols,
              (unsigned long long)tile, pool.size(), probe);
  if (ops.find("select") != std::string::npos) {  // parallel_quantile alone on a dense buffer
    std::vector<uint8_t> dense(n * es);
    for (uint64_t t = 0; t < tiles; ++t) {
      tet::ScratchBytes s;
      const TileView v = src->tile(0, t, s);
      const uint64_t tr = t / ((cols + tile - 1) / tile), tc = t % ((cols + tile - 1) / tile);
      const uint64_t w = std::min(tile, cols - tc * tile), h = v.bytes / es / w;
      for (uint64_t r = 0; r < h; ++r)
        std::memcpy(&dense[((tr * tile + r) * cols + tc * tile) * es], v.data + r * w * es, w * es);
    }
    for (double q : {0.5, 0.3}) {
      std::vector<double> t, ratio;
      double val = 0;
      for (int r = 0; r < reps; ++r) {
        uint32_t used = 0;
        const double pr = probe_once();
        const double t0 = now();
        if (dt == DType::F32) val = exec::parallel_quantile(reinterpret_cast<const float*>(dense.data()), n, q, 0, {}, used);
        else if (dt == DType::F64) val = exec::parallel_quantile(reinterpret_cast<const double*>(dense.data()), n, q, 0, {}, used);
        else val = exec::parallel_quantile(reinterpret_cast<const int32_t*>(dense.data()), n, q, 0, {}, used);
        t.push_back(now() - t0);
        ratio.push_back(pr / t.back());
      }
      std::printf("select q=%.1f %8.4f s  %7.2f GB/s  %.2fx probe  (v %.10g)\n", q, median_of(t), gb / median_of(t),
                  median_of(ratio), val);
    }
  }
  for (const OpSpec& o : kOps) {
    if (ops != "all" && ("," + ops + ",").find("," + std::string(o.name) + ",") == std::string::npos) continue;
    QueryPlan p;
    p.ndim = 2;
    p.count[0] = rows, p.count[1] = cols;
    p.step[0] = p.step[1] = 1;
    p.op = o.op;
    p.reduce_mask = o.mask == 0 ? 3 : o.mask;
    p.q = 0.3;
    const bool tier_c = o.op == Op::Median || o.op == Op::Quantile;
    p.strategy = tier_c ? Strategy::InMemoryMaterialize : Strategy::StreamingFold;
    std::vector<double> t, ratio;
    double first = 0;
    for (int r = 0; r < (tier_c ? std::max(1, reps / 2) : reps); ++r) {
      const double pr = probe_once();
      const double t0 = now();
      QueryResult res = execute(*src, p, {});
      t.push_back(now() - t0);
      ratio.push_back(pr / t.back());
      if (r == 0) std::memcpy(&first, res.values.bytes.data(), 8);
    }
    const double s = median_of(t);
    std::printf("%-9s %8.4f s  %7.2f GB/s  %.2fx probe  (v0 %.10g)\n", o.name, s, gb / s, median_of(ratio), first);
    std::fflush(stdout);
  }
  return 0;
}
