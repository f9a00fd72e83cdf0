// The device backend's shared arithmetic (cuda/fold_arith.h), compiled here with the host
// compiler, against the CPU fold families (fold/ops/*.h) bit for bit: every device op x every
// dtype (f16 through its stored bits), scalar unit folds and partial row batches / last-axis
// runs, on random data with NaN, +-inf, -0, subnormals and the integer extremes, at lengths that
// hit every lane tail, the var sub-block edges and a whole unit. States are compared through the
// families' own encode (every field bit for bit; an f64 field NaN on both sides matches whatever
// its payload, see same_state) and through finalize.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../cuda/fold_arith.h"
#include "check.h"
#include "exec/work_units.h"
#include "fold/registry.h"
#include "tet/file.h"

using namespace tet;
namespace ops = tet::fold::ops;

namespace {

const uint32_t kDevOps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 20};

// Random values of T with specials (floats: NaN, +-inf, -0, subnormals, huge; integers: the
// type's extremes), in runs so that some lanes / sub-blocks are special-free.
template <class T> std::vector<T> values(size_t n, uint64_t seed, int mode) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  using L = std::numeric_limits<T>;
  for (size_t i = 0; i < n; ++i) {
    const int r = int(rng() % 64);
    if (std::is_floating_point<T>::value) {
      std::uniform_real_distribution<double> u(-1e3, 1e3);
      T x = T(u(rng));
      if (mode == 1) x = T(1e6 + u(rng) * 1e-3);  // large offset, tiny spread: the var redo path
      if (mode == 2) {
        if (r == 0) x = L::quiet_NaN();
        if (r == 1) x = L::infinity();
        if (r == 2) x = -L::infinity();
        if (r == 3) x = L::denorm_min() * T(rng() % 1000);
        if (r == 4 || r == 5) x = -T(0);
        if (r == 6 || r == 7) x = T(0);
        if (r == 8) x = L::max() / T(4);
      }
      v[i] = x;
    } else {
      T x = T(rng());
      if (mode == 1) x = T(L::max() - T(rng() % 7));
      if (mode == 2) {
        if (r < 4) x = L::max();
        else if (r < 8) x = L::lowest();
        else if (r < 10) x = T(0);
      }
      v[i] = x;
    }
  }
  return v;
}

bool same_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

// Encoded states / finalized values, bit for bit, except that an f64 field that is NaN on both
// sides matches whatever its sign and payload: IEEE 754 leaves them open (x86 propagates one
// operand's NaN, and which one depends on operand order the compiler may commute; GPUs return a
// canonical NaN), as registry_test and the shard tests treat f64 results. `f64_at` lists the byte
// offsets of the f64 fields.
bool same_state(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, std::initializer_list<size_t> f64_at) {
  if (a.size() != b.size()) return false;
  std::vector<uint8_t> x = a, y = b;
  for (size_t off : f64_at) {
    if (off + 8 > x.size()) continue;
    double p, q;
    std::memcpy(&p, x.data() + off, 8), std::memcpy(&q, y.data() + off, 8);
    if (p != p && q != q) std::memset(x.data() + off, 0, 8), std::memset(y.data() + off, 0, 8);
  }
  return x == y;
}

// Device state -> the family's State, then the family's encode.
template <class T> typename ops::Sum<T>::State to_cpu(const dev::SumState& d) {
  typename ops::Sum<T>::State a;
  a.n = d.n, a.s = d.s, a.c = d.c, a.isum = d.isum;
  return a;
}
template <class T> typename ops::Extrema<T>::State to_cpu(const dev::ExtState<T>& d) {
  typename ops::Extrema<T>::State a;
  a.lo = d.lo, a.hi = d.hi, a.nan = d.nan;
  return a;
}
template <class T> typename ops::Moments<T>::State to_cpu_m(const dev::MomState& d) {
  typename ops::Moments<T>::State a;
  a.n = d.n, a.mean = d.mean, a.m2 = d.m2;
  return a;
}
template <class T> typename ops::Counts<T>::State to_cpu_c(const dev::CountState& d) {
  typename ops::Counts<T>::State a;
  a.n = d.n, a.cnt = d.cnt;
  return a;
}
template <class T> typename ops::Product<T>::State to_cpu_p(const dev::ProdState& d) {
  typename ops::Product<T>::State a;
  a.prod = d.prod;
  return a;
}

template <class F> std::vector<uint8_t> enc(const typename F::State& s) {
  std::vector<uint8_t> b(F::kEncodedBytes);
  F::encode(s, b.data());
  return b;
}
template <class F, class T> std::vector<uint8_t> fin(const fold::OpCfg<T>& k, const typename F::State& s) {
  std::vector<uint8_t> b(8, 0);
  F::finalize(k, s, b.data());
  return b;
}

int g_compared = 0;

void dump(const char* tag, const std::vector<uint8_t>& b) {
  std::printf("    %s:", tag);
  for (size_t i = 0; i + 8 <= b.size(); i += 8) {
    double d;
    uint64_t u;
    std::memcpy(&d, b.data() + i, 8), std::memcpy(&u, b.data() + i, 8);
    std::printf(" %.17g(%016llx)", d, (unsigned long long)u);
  }
  std::printf("\n");
}

// One unit: the CPU family's consume (on each ISA) against the device fold of the same values.
template <class T> void check_unit(uint32_t opw, const T* x, size_t n, const char* what) {
  const Op op = Op(opw);
  for (fold::Isa isa : {fold::Isa::Scalar, fold::best_isa()}) {
    const fold::OpCfg<T> k = fold::make_cfg<T>(op, isa, false, 0);
    bool ok = true;
    switch (dev::family_of(opw)) {
      case dev::Family::Sum: {
        using F = ops::Sum<T>;
        typename F::State a;
        F::consume(k, a, x, n);
        const auto d = to_cpu<T>(dev::sum_unit<T>(opw, x, n));
        ok = same_state(enc<F>(a), enc<F>(d), {8, 16}) && same_state(fin<F>(k, a), fin<F>(k, d), {0});
        if (!ok && getenv("TET_DUMP")) dump("cpu", enc<F>(a)), dump("dev", enc<F>(d));
        break;
      }
      case dev::Family::Extrema: {
        using F = ops::Extrema<T>;
        typename F::State a;
        F::consume(k, a, x, n);
        const auto d = to_cpu<T>(dev::ext_unit<T>(x, n));
        ok = same_bytes(enc<F>(a), enc<F>(d)) && same_state(fin<F>(k, a), fin<F>(k, d), {0});
        break;
      }
      case dev::Family::Moments: {
        using F = ops::Moments<T>;
        typename F::State a;
        F::consume(k, a, x, n);
        const auto d = to_cpu_m<T>(dev::mom_unit<T>(opw, x, n));
        ok = same_state(enc<F>(a), enc<F>(d), {8, 16}) && same_state(fin<F>(k, a), fin<F>(k, d), {0});
        if (!ok && getenv("TET_DUMP")) dump("cpu", enc<F>(a)), dump("dev", enc<F>(d));
        break;
      }
      case dev::Family::Counts: {
        using F = ops::Counts<T>;
        typename F::State a;
        F::consume(k, a, x, n);
        const auto d = to_cpu_c<T>(dev::count_unit<T>(opw, x, n));
        ok = same_bytes(enc<F>(a), enc<F>(d)) && same_bytes(fin<F>(k, a), fin<F>(k, d));
        break;
      }
      case dev::Family::Product: {
        using F = ops::Product<T>;
        typename F::State a;
        F::consume(k, a, x, n);
        const auto d = to_cpu_p<T>(dev::prod_unit<T>(x, n));
        ok = same_state(enc<F>(a), enc<F>(d), {0}) && same_state(fin<F>(k, a), fin<F>(k, d), {0});
        break;
      }
      default: ok = false; break;
    }
    ++g_compared;
    if (!ok) {
      std::printf("  unit mismatch: op %s, %s, n=%zu, isa %s\n", fold::op_traits(op).name, what, n, fold::isa_name(isa));
      CHECK(ok);
      return;
    }
  }
}

const size_t kLens[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 4095, 4096, 4097, 8192 + 33,
                        size_t(dev::kUnitElems)};

template <class T> void scalar_suite(const char* name) {
  uint64_t seed = 1;
  for (int mode = 0; mode < 3; ++mode)
    for (size_t n : kLens) {
      const std::vector<T> v = values<T>(n, seed++, mode);
      for (uint32_t op : kDevOps) check_unit<T>(op, v.data(), n, name);
    }
}

// f16: the stored bits widen on the device (dev::f16_to_f32); the CPU widens through its table.
void scalar_suite_f16() {
  uint64_t seed = 99;
  for (size_t n : kLens) {
    std::mt19937_64 rng(seed++);
    std::vector<float> cpu(n), devv(n);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = uint16_t(rng());
      cpu[i] = tet::f16_to_f32(h);
      devv[i] = dev::f16_to_f32(h);
    }
    CHECK(std::memcmp(cpu.data(), devv.data(), n * 4) == 0);
    for (uint32_t op : kDevOps) check_unit<float>(op, devv.data(), n, "f16");
  }
}

// ---------------------------------------------------------------------------------------------
// Partial folds: the CPU family's consume_rows + flush over a box of n elements, batches of k
// rows (k = 1..8), several units, against the device per-element arithmetic.

template <class T> void check_rows(uint32_t opw, size_t n, uint64_t seed, int mode, const char* what) {
  const Op op = Op(opw);
  const dev::Family fam = dev::family_of(opw);
  std::mt19937_64 rng(seed);
  const int units = 3;
  std::vector<std::vector<std::vector<T>>> batches;  // units x batches-in-unit x (k rows of n)
  std::vector<std::vector<uint32_t>> ks;
  for (int u = 0; u < units; ++u) {
    batches.emplace_back(), ks.emplace_back();
    const int nb = 1 + int(rng() % 4);
    for (int b = 0; b < nb; ++b) {
      const uint32_t k = 1 + uint32_t(rng() % dev::kMaxRows);
      ks.back().push_back(k);
      batches.back().push_back(values<T>(k * n, rng(), mode));
    }
  }
  for (fold::Isa isa : {fold::Isa::Scalar, fold::best_isa()}) {
    const fold::OpCfg<T> k = fold::make_cfg<T>(op, isa, false, 0);
    bool ok = true;
    auto run_cpu = [&](auto f) {
      using F = decltype(f);
      typename F::Soa st;
      fold::RowScratch blk;
      F::init(k, st, n);
      if (F::blocked(k)) F::reserve(k, blk, n);
      for (int u = 0; u < units; ++u) {
        for (size_t b = 0; b < batches[u].size(); ++b) {
          const T* xs[dev::kMaxRows];
          uint64_t fibs[dev::kMaxRows] = {};
          for (uint32_t i = 0; i < ks[u][b]; ++i) xs[i] = batches[u][b].data() + i * n;
          F::consume_rows(k, st, blk, 0, xs, fibs, ks[u][b], n);
        }
        if (F::blocked(k)) F::flush(k, st, blk);
      }
      std::vector<std::vector<uint8_t>> out;
      uint64_t fib = 0;
      for (int u = 0; u < units; ++u)
        for (uint32_t kk : ks[u]) fib += kk;
      for (size_t j = 0; j < n; ++j) out.push_back(enc<F>(F::get(k, st, j, fib)));
      return out;
    };
    std::vector<std::vector<uint8_t>> cpu, devs;
    uint64_t fib = 0;
    for (int u = 0; u < units; ++u)
      for (uint32_t kk : ks[u]) fib += kk;
    for (size_t j = 0; j < n; ++j) {
      // The device's per-element loop: rows in order, the unit flush after each unit.
      switch (fam) {
        case dev::Family::Sum: {
          using F = ops::Sum<T>;
          dev::SumState s;
          double block = 0, bn = 0, sn = 0;
          const bool exact = dev::sum_exact_int<T>(opw);
          for (int u = 0; u < units; ++u) {
            for (size_t b = 0; b < batches[u].size(); ++b)
              for (uint32_t i = 0; i < ks[u][b]; ++i) {
                const T v = batches[u][b][i * n + j];
                if (exact) s.isum += static_cast<__int128>(v);
                else if (std::is_floating_point<T>::value && opw == 19) dev::row_add_nan(block, bn, double(v));
                else dev::row_add(block, double(v), dev::sum_xform(opw));
              }
            if (!exact) {
              dev::flush_sum(s.s, s.c, block);
              sn += bn, bn = 0;
            }
          }
          s.n = std::is_floating_point<T>::value && opw == 19 ? uint64_t(sn) : fib;
          devs.push_back(enc<F>(to_cpu<T>(s)));
          if (j == 0) cpu = run_cpu(F());
          break;
        }
        case dev::Family::Extrema: {
          using F = ops::Extrema<T>;
          const bool mn = opw == 3;
          T e = mn ? dev::highest<T>() : dev::lowest<T>();
          uint8_t f = 0;
          for (int u = 0; u < units; ++u)
            for (size_t b = 0; b < batches[u].size(); ++b)
              for (uint32_t i = 0; i < ks[u][b]; ++i) dev::row_ext(e, f, batches[u][b][i * n + j], mn);
          dev::ExtState<T> s;
          s.lo = s.hi = e, s.nan = std::is_floating_point<T>::value && f != 0;
          devs.push_back(enc<F>(to_cpu<T>(s)));
          if (j == 0) cpu = run_cpu(F());
          break;
        }
        case dev::Family::Moments: {
          using F = ops::Moments<T>;
          double c = 0, m = 0, q = 0;
          for (int u = 0; u < units; ++u)
            for (size_t b = 0; b < batches[u].size(); ++b) {
              double v[dev::kMaxRows];
              for (uint32_t i = 0; i < ks[u][b]; ++i) v[i] = double(batches[u][b][i * n + j]);
              dev::row_var_batch(c, m, q, v, ks[u][b], std::is_floating_point<T>::value && opw == 20);
            }
          dev::MomState s;
          s.n = uint64_t(c), s.mean = m, s.m2 = q;
          devs.push_back(enc<F>(to_cpu_m<T>(s)));
          if (j == 0) cpu = run_cpu(F());
          break;
        }
        case dev::Family::Counts: {
          using F = ops::Counts<T>;
          dev::CountState s;
          s.n = fib;
          for (int u = 0; u < units; ++u)
            for (size_t b = 0; b < batches[u].size(); ++b)
              for (uint32_t i = 0; i < ks[u][b]; ++i) s.cnt += opw == 5 ? 0 : dev::count_pred(opw, batches[u][b][i * n + j]);
          devs.push_back(enc<F>(to_cpu_c<T>(s)));
          if (j == 0) cpu = run_cpu(F());
          break;
        }
        case dev::Family::Product: {
          using F = ops::Product<T>;
          dev::ProdState s;
          for (int u = 0; u < units; ++u)
            for (size_t b = 0; b < batches[u].size(); ++b)
              for (uint32_t i = 0; i < ks[u][b]; ++i) s.prod *= double(batches[u][b][i * n + j]);
          devs.push_back(enc<F>(to_cpu_p<T>(s)));
          if (j == 0) cpu = run_cpu(F());
          break;
        }
        default: ok = false; break;
      }
    }
    for (size_t j = 0; j < n && ok; ++j)
      ok = fam == dev::Family::Sum || fam == dev::Family::Moments ? same_state(cpu[j], devs[j], {8, 16})
           : fam == dev::Family::Product                          ? same_state(cpu[j], devs[j], {0})
                                                                  : same_bytes(cpu[j], devs[j]);
    ++g_compared;
    if (!ok) {
      std::printf("  rows mismatch: op %s, %s, n=%zu, isa %s\n", fold::op_traits(op).name, what, n, fold::isa_name(isa));
      CHECK(ok);
      return;
    }
  }
}

template <class T> void partial_suite(const char* name) {
  uint64_t seed = 7;
  for (int mode = 0; mode < 3; ++mode)
    for (size_t n : {size_t(1), size_t(5), size_t(33), size_t(100)})
      for (uint32_t op : kDevOps) check_rows<T>(op, n, seed++, mode, name);
}

// Last axis reduced: each run is a dense consume into a fresh state merged into the element's
// state (fold_driver run_tasks). Device: the unit fold of the run, then the family merge.
template <class T> void last_reduced_suite(const char* name) {
  std::mt19937_64 rng(5);
  for (uint32_t opw : {1u, 2u, 3u, 4u, 9u, 10u, 19u}) {
    const Op op = Op(opw);
    const fold::OpCfg<T> k = fold::make_cfg<T>(op, fold::best_isa(), false, 0);
    std::vector<std::vector<T>> runs;
    for (int r = 0; r < 6; ++r) runs.push_back(values<T>(1 + rng() % 300, rng(), int(r % 3)));
    bool ok;
    if (dev::family_of(opw) == dev::Family::Sum) {
      using F = ops::Sum<T>;
      typename F::Soa st;
      F::init(k, st, 1);
      dev::SumState d;
      for (auto& x : runs) {
        typename F::State b;
        F::consume(k, b, x.data(), x.size());
        ops::soa_merge_state<F, T>(k, st, 0, b);
        dev::sum_merge<T>(opw, d, dev::sum_unit<T>(opw, x.data(), x.size()));
      }
      uint64_t len = 0;
      for (auto& x : runs) len += x.size();
      typename F::State c = F::get(k, st, 0, len), dd = to_cpu<T>(d);
      if (F::kind(op) == F::Kind::F64) dd.n = len;  // the layout keeps no count (fib_len stands in)
      ok = same_state(enc<F>(c), enc<F>(dd), {8, 16}) && same_state(fin<F>(k, c), fin<F>(k, dd), {0});
    } else {
      using F = ops::Extrema<T>;
      typename F::Soa st;
      F::init(k, st, 1);
      dev::ExtState<T> d;
      for (auto& x : runs) {
        typename F::State b;
        F::consume(k, b, x.data(), x.size());
        ops::soa_merge_state<F, T>(k, st, 0, b);
        dev::ext_merge(d, dev::ext_unit<T>(x.data(), x.size()));
      }
      const typename F::State c = F::get(k, st, 0, 0);
      ok = same_state(fin<F>(k, c), fin<F>(k, to_cpu<T>(d)), {0});
    }
    ++g_compared;
    if (!ok) std::printf("  last-reduced mismatch: op %s, %s\n", fold::op_traits(op).name, name);
    CHECK(ok);
  }
}

}  // namespace

TEST_CASE("device op codes and families agree with the registry") {
  for (uint32_t w = 0; w < fold::kOpCount; ++w) {
    const fold::OpTraits& t = fold::op_traits(Op(w));
    const dev::Family d = dev::family_of(w);
    switch (t.family) {
      case fold::Family::Sum: CHECK(d == dev::Family::Sum); break;
      case fold::Family::Extrema: CHECK(d == dev::Family::Extrema); break;
      case fold::Family::Moments: CHECK(d == dev::Family::Moments); break;
      case fold::Family::Product: CHECK(d == dev::Family::Product); break;
      // null_count needs the fill check of make_cfg: CPU only for now (routed gpu_unsupported_op).
      case fold::Family::Counts: CHECK(d == (Op(w) == Op::NullCount ? dev::Family::None : dev::Family::Counts)); break;
      default: CHECK(d == dev::Family::None); break;  // arg (index bookkeeping), tier C
    }
  }
  CHECK(uint32_t(dev::Op::NanStd) == uint32_t(Op::NanStd) && uint32_t(dev::Op::InfCount) == uint32_t(Op::InfCount));
  CHECK(dev::kUnitElems == exec::kUnitElems && dev::kMaxRows == fold::kMaxRows && dev::kLanes == fold::kLanes);
}

TEST_CASE("f16 widening equals tet::f16_to_f32 for all 65536 patterns") {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = tet::f16_to_f32(uint16_t(h)), b = dev::f16_to_f32(uint16_t(h));
    bad += std::memcmp(&a, &b, 4) != 0;
  }
  CHECK(bad == 0);
}

TEST_CASE("scalar unit folds: device arithmetic == CPU families, every op x dtype") {
  scalar_suite<float>("f32");
  scalar_suite<double>("f64");
  scalar_suite_f16();
  scalar_suite<uint8_t>("u8");
  scalar_suite<uint16_t>("u16");
  scalar_suite<int16_t>("i16");
  scalar_suite<int32_t>("i32");
  scalar_suite<uint32_t>("u32");
  scalar_suite<int64_t>("i64");
  scalar_suite<uint64_t>("u64");
}

TEST_CASE("partial row batches: device per-element arithmetic == CPU row kernels") {
  partial_suite<float>("f32");
  partial_suite<double>("f64");
  partial_suite<uint8_t>("u8");
  partial_suite<uint16_t>("u16");
  partial_suite<int16_t>("i16");
  partial_suite<int32_t>("i32");
  partial_suite<uint32_t>("u32");
  partial_suite<int64_t>("i64");
  partial_suite<uint64_t>("u64");
}

TEST_CASE("partial, last axis reduced: device run folds + merges == CPU") {
  last_reduced_suite<float>("f32");
  last_reduced_suite<double>("f64");
  last_reduced_suite<int32_t>("i32");
  last_reduced_suite<int64_t>("i64");
  last_reduced_suite<uint64_t>("u64");
}

TEST_CASE("min/max keep the CPU's choice between -0 and +0") {
  // Lane order decides which zero wins a tie; hand-built: lane 0 sees +0, lane 1 sees -0.
  std::vector<float> x(64, 1.0f);
  x[0] = 0.0f, x[1] = -0.0f, x[40] = -0.0f;
  const dev::MinMax<float> m = dev::min_max(x.data(), x.size());
  const fold::MinMax<float> c = fold::min_max(x.data(), x.size(), fold::Isa::Scalar);
  CHECK(std::signbit(m.lo) == std::signbit(c.lo) && !std::signbit(m.lo));  // lane 0's +0 stays
  CHECK(m.hi == 1.0f && c.hi == 1.0f);
}

TEST_CASE("integer sums are exact at the extremes") {
  // Hand-computed: 2^17 copies of INT64_MAX sum to (2^63 - 1) * 2^17.
  std::vector<int64_t> x(dev::kUnitElems, std::numeric_limits<int64_t>::max());
  const dev::SumState s = dev::sum_unit<int64_t>(1, x.data(), x.size());
  CHECK(s.isum == static_cast<__int128>(std::numeric_limits<int64_t>::max()) * static_cast<__int128>(dev::kUnitElems));
  std::vector<uint64_t> u(1000, std::numeric_limits<uint64_t>::max());
  const dev::SumState t = dev::sum_unit<uint64_t>(1, u.data(), u.size());
  CHECK(t.isum == static_cast<__int128>(std::numeric_limits<uint64_t>::max()) * 1000);
  std::printf("  %d state comparisons\n", g_compared);
}

TEST_MAIN()
