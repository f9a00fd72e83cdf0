// Single-thread cost of the engine's own fold kernels (native/fold, compiled in unchanged),
// separated from scheduling and I/O: each op over one 512 KiB unit held in L2 (pure compute)
// and over a 256 MiB buffer (DRAM), plus the partial-axis `many()` path. Built and run by
// `node bench/diagnose.mjs --kernels [NPY]` (NPY: real f32 data, e.g. bench/data/256MiB/f32.npy;
// arg_max's second pass depends on where each unit's maximum sits).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "fold/registry.h"

using namespace tet;
using namespace tet::fold;

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double g_sink = 0;

template <class T> static void report(const char* where, const char* name, size_t bytes, double best) {
  std::printf("%-5s %-24s %8.2f ms %7.2f GB/s\n", where, name, best * 1e3, double(bytes) / best / 1e9);
}

// The finalized value as a double, for the sink.
template <class T, class F> static double sink_of(const OpCfg<T>& k, const typename F::State& s) {
  uint8_t out[8] = {};
  F::finalize(k, s, out);
  double d;
  std::memcpy(&d, out, 8);
  return d;
}

// Folds `x` in blocks of `unit` elements (as the engine's work units), merging block results:
// the family's consume + merge, as exec/fold_driver_impl.h calls them.
template <class T> static void blocks(const char* where, const char* name, Op op, const T* x, size_t n, size_t unit, int reps = 5) {
  const OpCfg<T> k = make_cfg<T>(op, best_isa(), false, 0);
  with_family<T>(op, [&](auto f) {
    using F = decltype(f);
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const double t0 = now();
      typename F::State tot;
      for (size_t u = 0; u < n; u += unit) {
        typename F::State a;
        F::consume(k, a, x + u, std::min(unit, n - u));
        F::merge(k, tot, a);
      }
      best = std::min(best, now() - t0);
      g_sink += sink_of<T, F>(k, tot);
    }
    report<T>(where, name, n * sizeof(T), best);
  });
}

// The same unit folded `times` times: compute cost with the data in L2.
template <class T> static void l2(const char* name, Op op, const T* x, size_t unit, int times) {
  const OpCfg<T> k = make_cfg<T>(op, best_isa(), false, 0);
  with_family<T>(op, [&](auto f) {
    using F = decltype(f);
    double best = 1e300;
    for (int r = 0; r < 5; ++r) {
      const double t0 = now();
      typename F::State tot;
      for (int i = 0; i < times; ++i) {
        typename F::State a;
        F::consume(k, a, x, unit);
        F::merge(k, tot, a);
      }
      best = std::min(best, now() - t0);
      g_sink += sink_of<T, F>(k, tot);
    }
    report<T>("L2", name, unit * sizeof(T) * size_t(times), best);
  });
}

// Partial reduction keeping the last axis: batches of kMaxRows rows into the family's box state
// (consume_rows, flushed once per pass), as the partial driver folds a kept inner axis.
template <class T> static void many(const char* name, Op op, const T* x, size_t n, size_t cols) {
  const OpCfg<T> k = make_cfg<T>(op, best_isa(), false, 0);
  with_family<T>(op, [&](auto f) {
    using F = decltype(f);
    typename F::Soa st;
    RowScratch blk;
    F::init(k, st, cols);
    F::reserve(k, blk, cols);
    double best = 1e300;
    for (int r = 0; r < 3; ++r) {
      const double t0 = now();
      const T* xs[kMaxRows];
      uint64_t fibs[kMaxRows];
      size_t rows = 0;
      for (size_t u = 0; u + cols <= n; u += cols) {
        xs[rows] = x + u, fibs[rows] = u / cols, ++rows;
        if (rows == kMaxRows) F::consume_rows(k, st, blk, 0, xs, fibs, rows, cols), rows = 0;
      }
      if (rows) F::consume_rows(k, st, blk, 0, xs, fibs, rows, cols);
      if (F::blocked(k)) F::flush(k, st, blk);
      best = std::min(best, now() - t0);
    }
    uint8_t out[8] = {};
    ops::soa_finalize<F, T>(k, st, 0, n / cols, out);
    double d;
    std::memcpy(&d, out, 8);
    g_sink += d;
    report<T>("DRAM", name, n * sizeof(T), best);
  });
}

int main(int argc, char** argv) {
  const size_t n = (size_t(256) << 20) / 4, unit = size_t(1) << 17;  // engine: kUnitElems
  std::vector<float> f32(n);
  bool loaded = false;
  if (argc > 1) {
    if (FILE* fp = std::fopen(argv[1], "rb")) {
      std::fseek(fp, 128, SEEK_SET);  // .npy v1 header written by bench/generate.mjs
      loaded = std::fread(f32.data(), 4, n, fp) == n;
      std::fclose(fp);
    }
  }
  if (!loaded) {
    uint32_t s = 1;
    for (size_t i = 0; i < n; ++i) s = s * 1664525u + 1013904223u, f32[i] = float((s >> 8) & 1023) / 64.f;
  }
  std::printf("isa %s, data: %s\n", isa_name(best_isa()), loaded ? argv[1] : "synthetic");
  for (auto [name, op] : {std::pair{"f32 sum", Op::Sum}, {"f32 var", Op::Var}, {"f32 max", Op::Max}, {"f32 arg_max", Op::ArgMax}})
    l2<float>(name, op, f32.data(), unit, 512);
  for (auto [name, op] : {std::pair{"f32 sum", Op::Sum}, {"f32 var", Op::Var}, {"f32 max", Op::Max}, {"f32 arg_max", Op::ArgMax}})
    blocks<float>("DRAM", name, op, f32.data(), n, unit);
  blocks<float>("DRAM", "f32 var, 2048-elem blocks", Op::Var, f32.data(), n, 2048);
  many<float>("f32 mean keep-last (2048)", Op::Mean, f32.data(), n, 2048);
  std::vector<int32_t> i32(n);
  for (size_t i = 0; i < n; ++i) i32[i] = int32_t(f32[i] * 64);
  for (auto [name, op] : {std::pair{"i32 sum", Op::Sum}, {"i32 var", Op::Var}, {"i32 max", Op::Max}})
    blocks<int32_t>("DRAM", name, op, i32.data(), n, unit);
  many<int32_t>("i32 mean keep-last (1024)", Op::Mean, i32.data(), n, 1024);
  std::vector<double> f64(n / 2);
  for (size_t i = 0; i < f64.size(); ++i) f64[i] = f32[i];
  for (auto [name, op] : {std::pair{"f64 sum", Op::Sum}, {"f64 var", Op::Var}, {"f64 max", Op::Max}, {"f64 arg_max", Op::ArgMax}})
    blocks<double>("DRAM", name, op, f64.data(), f64.size(), unit / 2);
  std::printf("(sink %g)\n", g_sink);
}
