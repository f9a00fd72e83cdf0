// Fold kernels: every SIMD build equals the scalar reference bit for bit (random data with NaN,
// +-inf, subnormals, tails shorter than a vector), accuracy of the canonical sum, accumulator
// merges, and the tier-C kernels on hand-computed cases.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "check.h"
#include "fold/registry.h"
#include "fold/kernels.h"
#include "fold/order_stats.h"
#include "fold/row_kernels.h"

using namespace tet;
using namespace tet::fold;

namespace {

// One op instance over dense blocks through its state family, as the scalar driver folds units.
template <class T, class F> struct Fold1 {
  OpCfg<T> k;
  using State = typename F::State;
  Fold1(Op op, Isa isa, bool has_fill = false, double fill = 0) : k(make_cfg<T>(op, isa, has_fill, fill)) {}
  void block(State& a, const T* x, size_t n) const { F::consume(k, a, x, n); }
  void one(State& a, T v, uint64_t i) const { F::consume_one(k, a, v, i); }
  void merge(State& a, const State& b) const { F::merge(k, a, b); }
  void finalize(const State& a, uint8_t* out) const { F::finalize(k, a, out); }
};

bool same_bits(double a, double b) {
  if (a != a || b != b) return (a != a) && (b != b);
  return std::memcmp(&a, &b, 8) == 0;
}

template <class T> std::vector<T> random_values(size_t n, uint64_t seed, bool specials) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if (std::is_floating_point<T>::value) {
      const int r = int(rng() % 16);
      std::uniform_real_distribution<double> u(-1e3, 1e3);
      x = T(u(rng));
      if (specials) {
        if (r == 0) x = std::numeric_limits<T>::quiet_NaN();
        if (r == 1) x = std::numeric_limits<T>::infinity();
        if (r == 2) x = -std::numeric_limits<T>::infinity();
        if (r == 3) x = std::numeric_limits<T>::denorm_min() * T(rng() % 1000);
        if (r == 4) x = -T(0);
      }
    } else {
      x = T(rng());
    }
  }
  return v;
}

const size_t kSizes[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4099};

template <class T> void check_isa_equivalence(Isa isa) {
  for (int specials = 0; specials < 2; ++specials)
    for (size_t n : kSizes)
      for (size_t offset : {size_t(0), size_t(1)}) {  // unaligned starts too
        const auto v = random_values<T>(n + offset, n * 7 + specials, specials);
        const T* x = v.data() + offset;
        for (Xform f : {Xform::Identity, Xform::Abs, Xform::Square, Xform::SquaredDeviation}) {
          const double a = lane_sum(x, n, f, 3.25, Isa::Scalar), b = lane_sum(x, n, f, 3.25, isa);
          if (!same_bits(a, b)) {
            ++tet_test::failures();
            std::printf("  lane_sum %s n=%zu xform %u: %.17g vs %.17g\n", isa_name(isa), n, unsigned(f), a, b);
          }
        }
        const MinMax<T> m0 = min_max(x, n, Isa::Scalar), m1 = min_max(x, n, isa);
        CHECK(m0.lo == m1.lo || (m0.lo != m0.lo && m1.lo != m1.lo));
        CHECK(m0.hi == m1.hi || (m0.hi != m0.hi && m1.hi != m1.hi));
        CHECK(m0.has_nan == m1.has_nan);
      }
}

template <class T> void check_int_sum(Isa isa) {
  for (size_t n : kSizes) {
    const auto v = random_values<T>(n, n + 5, false);
    __int128 want = 0;
    for (T x : v) want += static_cast<__int128>(x);
    CHECK(int_sum(v.data(), n, isa) == want);
    CHECK(int_sum(v.data(), n, Isa::Scalar) == want);
  }
}

// lane_feed over x cut into runs of random lengths (empty ones too), each at lane0 = its
// position, then lane_tree: the test's own canonical order (lane i % 32 in index order, the
// pairwise tree) and lane_sum, bit for bit.
template <class T> void check_lane_feed(Isa isa) {
  std::mt19937_64 rng(77);
  for (int specials = 0; specials < 2; ++specials)
    for (size_t n : kSizes) {
      const auto v = random_values<T>(n, n * 3 + 1 + specials, specials);
      for (Xform f : {Xform::Identity, Xform::Abs, Xform::Square, Xform::SquaredDeviation}) {
        double want[kLanes] = {};
        for (size_t i = 0; i < n; ++i) {
          const double d = double(v[i]);
          want[i % kLanes] += f == Xform::Identity ? d : f == Xform::Abs ? std::fabs(d) : f == Xform::Square ? d * d : (d - 3.25) * (d - 3.25);
        }
        for (size_t s = kLanes / 2; s > 0; s >>= 1)
          for (size_t j = 0; j < s; ++j) want[j] += want[j + s];
        for (int trial = 0; trial < 4; ++trial) {
          double lanes[kLanes] = {};
          size_t at = 0;
          do {
            const size_t m = std::min(n - at, size_t(rng() % (trial == 3 ? 80 : 40)));
            lane_feed(v.data() + at, m, f, 3.25, lanes, at, isa);
            at += m;
          } while (at < n);
          const double got = lane_tree(lanes);
          if (!same_bits(got, want[0]) || !same_bits(got, lane_sum(v.data(), n, f, 3.25, isa))) {
            ++tet_test::failures();
            std::printf("  lane_feed %s n=%zu xform %u: %.17g vs %.17g\n", isa_name(isa), n, unsigned(f), got, want[0]);
          }
        }
      }
    }
}

// A NaN's sign and payload are not part of a result (which operand an add's NaN comes from is
// the compiler's choice, as between the ISA builds: same_bits): the f64 words of encoded sum and
// moments states (at bytes 8 and 16) made one NaN.
void canonical_nans(uint8_t* enc, size_t bytes) {
  for (size_t at : {size_t(8), size_t(16)}) {
    if (at + 8 > bytes) continue;
    double d;
    std::memcpy(&d, enc + at, 8);
    if (d != d) d = std::numeric_limits<double>::quiet_NaN(), std::memcpy(enc + at, &d, 8);
  }
}

// F's run interface (fold/ops/sum.h) over v cut into runs at random equals F::consume over v:
// the encoded states byte for byte (min / max: which of +0 / -0 won too), NaNs as one.
template <class T, class F> void check_family_runs(Op op, const std::vector<T>& v, Isa isa, std::mt19937_64& rng) {
  constexpr bool kF64Words = std::is_same<F, ops::Sum<T>>::value || std::is_same<F, ops::Moments<T>>::value;
  const OpCfg<T> k = make_cfg<T>(op, isa, false, 0);
  if (!F::runs_ok(k)) return;
  typename F::State want = F::identity(k);
  F::consume(k, want, v.data(), v.size());
  uint8_t a[F::kEncodedBytes], b[F::kEncodedBytes];
  F::encode(want, a);
  if (kF64Words) canonical_nans(a, sizeof a);
  for (int trial = 0; trial < 4; ++trial) {
    typename F::RunAcc acc;
    F::begin_runs(k, acc, v.size());
    size_t at = 0;
    do {
      const size_t m = std::min(v.size() - at, size_t(rng() % (trial == 3 ? 9000 : trial == 2 ? 40 : 700)));
      F::consume_run(k, acc, v.data() + at, m, at);
      at += m;
    } while (at < v.size());
    typename F::State got = F::identity(k);
    F::end_runs(k, acc, got);
    F::encode(got, b);
    if (kF64Words) canonical_nans(b, sizeof b);
    if (std::memcmp(a, b, sizeof a) != 0) {
      ++tet_test::failures();
      std::printf("  runs of op %d, %s, T %zu%s, n=%zu, trial %d: states differ\n", int(op), isa_name(isa), sizeof(T),
                  std::is_floating_point<T>::value ? "f" : std::is_signed<T>::value ? "i" : "u", v.size(), trial);
      for (size_t q = 0; q < sizeof a; ++q) std::printf("%02x%s", a[q], q + 1 == sizeof a ? "\n" : "");
      for (size_t q = 0; q < sizeof a; ++q) std::printf("%02x%s", b[q], q + 1 == sizeof a ? "\n" : "");
    }
  }
}

template <class T> void check_runs_every_family(Isa isa) {
  std::mt19937_64 rng(5);
  for (size_t n : {size_t(0), size_t(1), size_t(31), size_t(33), size_t(100), size_t(4099), size_t(10007), size_t(131072)}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<T> v = random_values<T>(n, n + 11 * kind, kind == 1);
      if (kind == 2)  // ill-conditioned for the variance: the two-pass redo
        for (size_t i = 0; i < n; ++i) v[i] = T(std::is_floating_point<T>::value ? 1e7 + double(i % 5) : double(100000 + i % 5));
      if (kind == 3)  // ties: +0 / -0 (floats) among a few values
        for (size_t i = 0; i < n; ++i) {
          const int r = int(rng() % 4);
          v[i] = std::is_floating_point<T>::value ? T(r == 0 ? 0.0 : r == 1 ? -0.0 : r == 2 ? 1.0 : -1.0) : T(r % 2);
        }
      for (Op op : {Op::Sum, Op::Mean, Op::NormL1, Op::NormL2, Op::NanMean}) check_family_runs<T, ops::Sum<T>>(op, v, isa, rng);
      for (Op op : {Op::Min, Op::Max}) check_family_runs<T, ops::Extrema<T>>(op, v, isa, rng);
      for (Op op : {Op::Var, Op::Std, Op::NanStd}) check_family_runs<T, ops::Moments<T>>(op, v, isa, rng);
      for (Op op : {Op::NanCount, Op::Count}) check_family_runs<T, ops::Counts<T>>(op, v, isa, rng);
    }
  }
}

std::vector<Isa> isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon})
    if (isa_supported(i)) out.push_back(i);
  return out;
}

}  // namespace

TEST_CASE("every supported ISA matches the scalar reference bit for bit") {
  std::printf("  best isa: %s\n", isa_name(best_isa()));
  for (Isa isa : isas()) {
    check_isa_equivalence<float>(isa);
    check_isa_equivalence<double>(isa);
    check_isa_equivalence<int32_t>(isa);
    check_isa_equivalence<uint8_t>(isa);
    check_isa_equivalence<int64_t>(isa);
    check_isa_equivalence<uint64_t>(isa);
    check_isa_equivalence<uint16_t>(isa);
    check_isa_equivalence<int16_t>(isa);
    check_isa_equivalence<uint32_t>(isa);
    check_int_sum<uint8_t>(isa);
    check_int_sum<int16_t>(isa);
    check_int_sum<uint16_t>(isa);
    check_int_sum<int32_t>(isa);
    check_int_sum<uint32_t>(isa);
    check_int_sum<int64_t>(isa);
    check_int_sum<uint64_t>(isa);
  }
}

namespace {
// Row kernels: each ISA equals k single-row scalar folds (written out here) bit for bit.
template <class T> void check_row_kernels(Isa isa) {
  const size_t n = 77;
  for (size_t k = 1; k <= kMaxRows; ++k) {
    std::vector<std::vector<T>> rows;
    std::vector<const T*> xs;
    for (size_t i = 0; i < k; ++i) rows.push_back(random_values<T>(n, 900 + k * 10 + i, true));
    for (auto& r : rows) xs.push_back(r.data());
    const RowKernels<T>& rk = row_kernels<T>(isa);
    for (Xform f : {Xform::Identity, Xform::Abs, Xform::Square}) {
      std::vector<double> got(n, 0.5), want(n, 0.5);
      rk.add(got.data(), xs.data(), k, n, f);
      for (size_t i = 0; i < k; ++i)
        for (size_t j = 0; j < n; ++j) {
          const double v = double(rows[i][j]);
          want[j] += f == Xform::Abs ? std::fabs(v) : f == Xform::Square ? v * v : v;
        }
      for (size_t j = 0; j < n; ++j) CHECK(same_bits(got[j], want[j]));
    }
    std::vector<double> s(n, 1.0), c(n, 2.0), ws(n, 1.0), wc(n, 2.0);
    rk.add_nan(s.data(), c.data(), xs.data(), k, n);
    for (bool skip : {false, true}) {
      // state: element j starts empty (j % 3 == 0) or with (2, 1.5, 0.75)
      std::vector<double> gc(n), gm(n), g2(n);
      for (size_t j = 0; j < n; ++j) gc[j] = j % 3 ? 2.0 : 0.0, gm[j] = j % 3 ? 1.5 : 0.0, g2[j] = j % 3 ? 0.75 : 0.0;
      std::vector<double> wc2 = gc, wm = gm, w2 = g2;
      rk.var(gc.data(), gm.data(), g2.data(), xs.data(), k, n, skip);
      for (size_t j = 0; j < n; ++j) {
        double s1 = 0, c1 = 0;
        for (size_t i = 0; i < k; ++i) {
          const double v = double(rows[i][j]);
          if (!(skip && v != v)) s1 += v, c1 += 1;
        }
        const double mb = c1 > 0 ? s1 / c1 : 0.0;
        double q2 = 0;
        for (size_t i = 0; i < k; ++i) {
          const double v = double(rows[i][j]);
          if (!(skip && v != v)) q2 += (v - mb) * (v - mb);
        }
        if (c1 > 0) {
          if (wc2[j] == 0) wc2[j] = c1, wm[j] = mb, w2[j] = q2;
          else {
            const double nn = wc2[j] + c1, delta = mb - wm[j], w = c1 / nn;
            w2[j] = w2[j] + q2 + delta * delta * (wc2[j] * w);
            wm[j] = wm[j] + delta * w;
            wc2[j] = nn;
          }
        }
        CHECK(same_bits(gc[j], wc2[j]) && same_bits(gm[j], wm[j]) && same_bits(g2[j], w2[j]));
      }
    }
    for (size_t i = 0; i < k; ++i)
      for (size_t j = 0; j < n; ++j) {
        const double v = double(rows[i][j]);
        if (v == v) ws[j] += v, wc[j] += 1;
      }
    for (size_t j = 0; j < n; ++j) CHECK(same_bits(s[j], ws[j]) && same_bits(c[j], wc[j]));
    for (bool mn : {true, false}) {
      std::vector<T> e(n, T(3)), we(n, T(3));
      std::vector<uint8_t> fl(n, 0), wf(n, 0);
      rk.ext(e.data(), fl.data(), xs.data(), k, n, mn);
      for (size_t i = 0; i < k; ++i)
        for (size_t j = 0; j < n; ++j) {
          const T v = rows[i][j];
          if (v != v) wf[j] = 1;
          else if (mn ? v < we[j] : v > we[j]) we[j] = v;
        }
      for (size_t j = 0; j < n; ++j) CHECK(std::memcmp(&e[j], &we[j], sizeof(T)) == 0 && (fl[j] != 0) == (wf[j] != 0 && std::is_floating_point<T>::value));
    }
    if (std::is_integral<T>::value && sizeof(T) <= 4) {
      std::vector<int64_t> is(n, -5), wi(n, -5);
      rk.isum(is.data(), xs.data(), k, n);
      for (size_t i = 0; i < k; ++i)
        for (size_t j = 0; j < n; ++j) wi[j] += int64_t(rows[i][j]);
      CHECK(is == wi);
    }
  }
}
}  // namespace

TEST_CASE("lane_feed run by run equals the canonical lane sum bit for bit, every ISA") {
  for (Isa isa : isas()) {
    check_lane_feed<float>(isa);
    check_lane_feed<double>(isa);
    check_lane_feed<int32_t>(isa);
    check_lane_feed<uint8_t>(isa);
    check_lane_feed<uint64_t>(isa);
    check_lane_feed<int16_t>(isa);
  }
}

TEST_CASE("families folding a block run by run give consume's state bytes (sum, extrema, moments, counts)") {
  for (Isa isa : isas()) {
    check_runs_every_family<float>(isa);
    check_runs_every_family<double>(isa);
    check_runs_every_family<int32_t>(isa);
    check_runs_every_family<uint8_t>(isa);
    check_runs_every_family<int64_t>(isa);
    check_runs_every_family<uint16_t>(isa);
  }
}

TEST_CASE("row kernels (partial folds): every ISA equals row-by-row scalar folds bit for bit") {
  for (Isa isa : isas()) {
    check_row_kernels<float>(isa);
    check_row_kernels<double>(isa);
    check_row_kernels<int32_t>(isa);
    check_row_kernels<uint8_t>(isa);
    check_row_kernels<int64_t>(isa);
    check_row_kernels<uint16_t>(isa);
  }
}

TEST_CASE("min_max: NaN flagged, ignored for the extrema; subnormals kept") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(77, 5.0f);
  v[40] = nan;
  v[76] = -std::numeric_limits<float>::denorm_min();
  v[3] = 1e30f;
  for (Isa isa : isas()) {
    const auto m = min_max(v.data(), v.size(), isa);
    CHECK(m.has_nan);
    CHECK(m.lo == -std::numeric_limits<float>::denorm_min());
    CHECK(m.hi == 1e30f);
  }
}

TEST_CASE("canonical lane sum is accurate (hand-checkable sums)") {
  std::vector<double> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i + 1);
  CHECK(lane_sum(v.data(), v.size(), Xform::Identity, 0, best_isa()) == 5000050000.0);
  CHECK(lane_sum(v.data(), 4, Xform::Square, 0, best_isa()) == 30.0);
  CHECK(lane_sum(v.data(), 3, Xform::SquaredDeviation, 2.0, best_isa()) == 2.0);
  std::vector<float> f = {1.5f, -2.5f, 4.0f};
  CHECK(lane_sum(f.data(), 3, Xform::Abs, 0, best_isa()) == 8.0);
}

namespace {
// Shifted single-pass var: the kernel equals a written-out canonical model (lane i % 32, pairwise
// tree) on every ISA, and the Moments var is bit-identical across ISAs and accurate both on the
// shifted path and on the two-pass fallback (first element a far outlier).
template <class T> void check_shifted_var(Isa isa) {
  for (size_t n : {size_t(1), size_t(31), size_t(33), size_t(4096), size_t(10000)}) {
    std::vector<T> x = random_values<T>(n, 4242 + n, false);
    const double k = double(x[0]) + 0.5;
    double l1[kLanes] = {}, l2[kLanes] = {};
    for (size_t i = 0; i < n; ++i) {
      const double d = double(x[i]) - k;
      l1[i % kLanes] += d;
      l2[i % kLanes] += d * d;
    }
    for (size_t s = kLanes / 2; s > 0; s >>= 1)
      for (size_t j = 0; j < s; ++j) l1[j] += l1[j + s], l2[j] += l2[j + s];
    double s1 = 0, s2 = 0;
    shifted_sums(x.data(), n, k, &s1, &s2, isa);
    CHECK(same_bits(s1, l1[0]));
    CHECK(same_bits(s2, l2[0]));
    for (bool outlier : {false, true}) {
      std::vector<T> y = x;
      if (outlier) y[0] = T(std::is_floating_point<T>::value ? 1e6 : 100000);
      Fold1<T, ops::Moments<T>> vs(Op::Var, Isa::Scalar), vi(Op::Var, isa);
      typename ops::Moments<T>::State as, ai;
      vs.block(as, y.data(), n);
      vi.block(ai, y.data(), n);
      uint8_t os[8], oi[8];
      vs.finalize(as, os);
      vi.finalize(ai, oi);
      CHECK(std::memcmp(os, oi, 8) == 0);
      long double mean = 0, m2 = 0;
      for (T v : y) mean += (long double)v;
      mean /= n;
      for (T v : y) m2 += ((long double)v - mean) * ((long double)v - mean);
      double got;
      std::memcpy(&got, oi, 8);
      const double want = double(m2 / n);
      if (!(std::fabs(got - want) <= 1e-12 * std::fabs(want) + 1e-300)) std::printf("  n %zu outlier %d got %.17g want %.17g\n", n, int(outlier), got, want);
      CHECK(std::fabs(got - want) <= 1e-12 * std::fabs(want) + 1e-300);
    }
  }
}
}  // namespace

TEST_CASE("var: single-pass shifted sums on every ISA; two-pass fallback when ill-conditioned") {
  for (Isa isa : isas()) {
    check_shifted_var<float>(isa);
    check_shifted_var<double>(isa);
    check_shifted_var<int32_t>(isa);
    check_shifted_var<uint16_t>(isa);
  }
  // mean 1e9, spread 3: shifted by the first element, no cancellation
  std::vector<float> big(5000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 1e9f + float(int(i % 7) * 64);
  Fold1<float, ops::Moments<float>> v(Op::Var, best_isa());
  ops::Moments<float>::State a;
  v.block(a, big.data(), big.size());
  uint8_t o[8];
  v.finalize(a, o);
  double got;
  std::memcpy(&got, o, 8);
  long double mean = 0, m2 = 0;
  for (float f : big) mean += f;
  mean /= big.size();
  for (float f : big) m2 += (f - mean) * (f - mean);
  CHECK(std::fabs(got - double(m2 / big.size())) <= 1e-12 * double(m2 / big.size()));
}

TEST_CASE("states: block + merge equal one-by-one on hand data") {
  const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  Fold1<double, ops::Moments<double>> var(Op::Var, best_isa());
  ops::Moments<double>::State a, b, c;
  var.block(a, x, 4);
  var.block(b, x + 4, 6);
  var.merge(a, b);
  for (double v : x) var.one(c, v, 0);
  uint8_t out[8];
  double r;
  var.finalize(a, out);
  std::memcpy(&r, out, 8);
  CHECK_NEAR(r, 8.25, 1e-12);  // np.var(1..10)
  var.finalize(c, out);
  std::memcpy(&r, out, 8);
  CHECK_NEAR(r, 8.25, 1e-12);

  Fold1<int32_t, ops::Arg<int32_t>> am(Op::ArgMin, best_isa());
  const int32_t y[] = {5, 1, 7, 1, 0, 0};
  ops::Arg<int32_t>::State p, q;
  am.block(p, y, 4);   // min 1 at 1
  am.block(q, y + 4, 2);
  q.idx += 4;          // min 0 at 4
  am.merge(p, q);
  uint64_t idx;
  am.finalize(p, out);
  std::memcpy(&idx, out, 8);
  CHECK(idx == 4);

  Fold1<float, ops::Arg<float>> amx(Op::ArgMax, best_isa());
  const float z[] = {1, 9, NAN, 9, NAN};
  ops::Arg<float>::State s;
  amx.block(s, z, 5);
  CHECK(s.idx == 2);  // first NaN wins like numpy

  Fold1<uint8_t, ops::Counts<uint8_t>> nc(Op::NullCount, best_isa(), true, 300.0);  // fill outside u8: never matches
  const uint8_t w[] = {44, 255, 0};
  ops::Counts<uint8_t>::State t;
  nc.block(t, w, 3);
  CHECK(t.cnt == 0);
  Fold1<uint8_t, ops::Counts<uint8_t>> nc2(Op::NullCount, best_isa(), true, 255.0);
  ops::Counts<uint8_t>::State t2;
  nc2.block(t2, w, 3);
  CHECK(t2.cnt == 1);
  Fold1<float, ops::Counts<float>> nc3(Op::NullCount, best_isa(), true, 0.1);  // 0.1 is not an f32 value
  const float fz[] = {0.1f, 0.1f};
  ops::Counts<float>::State t3;
  nc3.block(t3, fz, 2);
  CHECK(t3.cnt == 0);
}

TEST_CASE("int64 sums are exact beyond 2^53 and min/max keep the dtype") {
  const int64_t x[] = {INT64_MAX, INT64_MAX, INT64_MIN + 1, 3};
  Fold1<int64_t, ops::Sum<int64_t>> sum(Op::Sum, best_isa());
  ops::Sum<int64_t>::State a;
  sum.block(a, x, 4);
  CHECK(a.isum == (__int128)INT64_MAX + 3);
  Fold1<uint64_t, ops::Extrema<uint64_t>> mx(Op::Max, best_isa());
  const uint64_t u[] = {UINT64_MAX - 1, 7, UINT64_MAX};
  ops::Extrema<uint64_t>::State b;
  mx.block(b, u, 3);
  uint8_t out[8];
  uint64_t r;
  mx.finalize(b, out);
  std::memcpy(&r, out, 8);
  CHECK(r == UINT64_MAX);
  CHECK(value_kind(Op::Max, DType::U64) == ValueKind::U64);
  CHECK(value_kind(Op::Min, DType::I16) == ValueKind::I64);
  CHECK(value_kind(Op::Min, DType::F16) == ValueKind::F64);
  CHECK(value_kind(Op::AnyNan, DType::F32) == ValueKind::Bool);
}

TEST_CASE("quantile: numpy linear interpolation on hand cases") {
  std::vector<double> a = {4, 1, 3, 2};
  CHECK(quantile_inplace(a.data(), 4, 0.5) == 2.5);   // np.median
  a = {4, 1, 3, 2};
  CHECK(quantile_inplace(a.data(), 4, 0.25) == 1.75);  // np.quantile(.., 0.25)
  a = {4, 1, 3, 2};
  CHECK(quantile_inplace(a.data(), 4, 1.0) == 4.0);
  a = {4, 1, 3, 2};
  CHECK(quantile_inplace(a.data(), 4, 0.0) == 1.0);
  std::vector<int32_t> b = {7};
  CHECK(quantile_inplace(b.data(), 1, 0.9) == 7.0);
  std::vector<float> c = {1, NAN, 3};
  CHECK(std::isnan(quantile_inplace(c.data(), 3, 0.5)));
}

TEST_CASE("histogram: numpy edges and bin rule") {
  double e[4];
  histogram_edges(0, 3, 3, e);
  CHECK(e[0] == 0 && e[1] == 1 && e[2] == 2 && e[3] == 3);
  const double x[] = {0, 0.999, 1, 2.5, 3, 3.0001, -0.1};
  uint64_t c[3] = {0, 0, 0};
  histogram_count(x, 7, 3, 0, 3, e, c);
  CHECK(c[0] == 2 && c[1] == 1 && c[2] == 2);
  double lo = 5, hi = 5;
  histogram_range_fix(lo, hi);
  CHECK(lo == 4.5 && hi == 5.5);
  // np.histogram(np.arange(10) * 0.1, bins=10)[0] == all ones (edges that floating point
  // division would misplace are corrected against the edges)
  double y[10], ey[11];
  for (int i = 0; i < 10; ++i) y[i] = i * 0.1;
  histogram_edges(0, 0.9, 10, ey);
  uint64_t cy[10] = {};
  histogram_count(y, 10, 10, 0, 0.9, ey, cy);
  bool ones = true;
  for (int i = 0; i < 10; ++i) ones &= cy[i] == 1;
  CHECK(ones);
}

TEST_MAIN()
