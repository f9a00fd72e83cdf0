// Moments family: var, std, nan_std (population). Dense blocks are cut into fixed sub-blocks
// (the split depends only on n), each reduced to (count, mean, M2) and Chan-merged in order;
// partial folds treat each batch of up to kMaxRows rows as a two-pass block, Chan-merged per
// element. Merges are Chan's formula: mergeable, bit-identical in a fixed merge order.
#pragma once
#include <vector>

#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Moments : Unblocked<T> {
  static constexpr bool kFloat = std::is_floating_point<T>::value;

  struct State {
    uint64_t n = 0;  // elements (non-NaN ones for nan_std)
    double mean = 0, m2 = 0;
  };
  static constexpr size_t kEncodedBytes = 24;

  static State identity(const OpCfg<T>&) { return State(); }
  // var and std consume identically (nan_std of floats skips NaNs): one pass shares their states.
  static uint32_t consume_class(const OpCfg<T>& k) { return uint32_t(kFloat && k.op == Op::NanStd); }
  static void consume(const OpCfg<T>& k, State& a, const T* x, size_t n) {
    if (kFloat && k.op == Op::NanStd && min_max(x, n, k.isa).has_nan) {
      for (size_t i = 0; i < n; ++i) consume_one(k, a, x[i], 0);
      return;
    }
    var_blocks(k, a, x, n);
  }
  // A unit run by run (see Sum::RunAcc), with var_blocks' bits: its sub-blocks of kSub
  // positions, each one's shifted sums carried across runs (shifted_feed) and the runs it spans
  // kept for the two-pass redo. Not nan_std of floats (a NaN anywhere in the unit changes how
  // consume folds it).
  struct RunAcc {
    State a;
    size_t m = 0;  // elements of the current sub-block so far
    double sh = 0, l1[kLanes], l2[kLanes];
    std::vector<std::pair<const T*, size_t>> pieces;  // the current sub-block's runs
  };
  static bool runs_ok(const OpCfg<T>& k) { return !(kFloat && k.op == Op::NanStd); }
  static void begin_runs(const OpCfg<T>&, RunAcc& r, uint64_t) { r.pieces.reserve(16); }
  static void consume_run(const OpCfg<T>& k, RunAcc& r, const T* x, size_t n, uint64_t) {
    while (n > 0) {
      if (r.m == 0) {
        r.sh = static_cast<double>(x[0]);
        for (size_t j = 0; j < kLanes; ++j) r.l1[j] = 0, r.l2[j] = 0;
        r.pieces.clear();
      }
      const size_t take = n < kSub - r.m ? n : kSub - r.m;
      shifted_feed(x, take, r.sh, r.l1, r.l2, r.m, k.isa);  // sub-blocks start at multiples of 32
      r.pieces.emplace_back(x, take);
      r.m += take, x += take, n -= take;
      if (r.m == kSub) end_block(k, r);
    }
  }
  static void end_runs(const OpCfg<T>& k, RunAcc& r, State& a) {
    if (r.m > 0) end_block(k, r);
    merge(k, a, r.a);
  }

  static void consume_one(const OpCfg<T>& k, State& a, T v, uint64_t) {
    if (k.op == Op::NanStd && v != v) return;
    ++a.n;
    const double d = double(v) - a.mean;
    a.mean += d / double(a.n);
    a.m2 += d * (double(v) - a.mean);
  }
  static void merge(const OpCfg<T>&, State& a, const State& b) { chan_merge(a.n, a.mean, a.m2, b.n, b.mean, b.m2); }
  static void finalize(const OpCfg<T>& k, const State& a, uint8_t* out) {
    const double var = a.n == 0 ? std::numeric_limits<double>::quiet_NaN() : a.m2 / double(a.n);
    put_f64(out, k.op == Op::Var ? var : std::sqrt(var));
  }
  static void encode(const State& a, uint8_t* p) { wire::put(p, a.n), wire::put(p, a.mean), wire::put(p, a.m2); }
  static State decode(const uint8_t* p) {
    State a;
    a.n = wire::get<uint64_t>(p), a.mean = wire::get<double>(p), a.m2 = wire::get<double>(p);
    return a;
  }

  // Partial state: count, mean, M2 as f64 columns (the row kernel's layout; counts are exact).
  struct Soa {
    std::vector<double> n, mean, m2;
  };
  static size_t soa_bytes(const OpCfg<T>&) { return 24; }
  static void init(const OpCfg<T>&, Soa& st, size_t len) {
    st.n.assign(len, 0.0), st.mean.assign(len, 0.0), st.m2.assign(len, 0.0);
  }
  static void consume_rows(const OpCfg<T>& k, Soa& st, RowScratch&, size_t j0, const T* const* xs, const uint64_t*,
                           size_t rows, size_t n) {
    k.rows->var(st.n.data() + j0, st.mean.data() + j0, st.m2.data() + j0, xs, rows, n, kFloat && k.op == Op::NanStd);
  }
  static State get(const OpCfg<T>&, const Soa& st, size_t j, uint64_t) {
    State a;
    a.n = uint64_t(st.n[j]), a.mean = st.mean[j], a.m2 = st.m2[j];
    return a;
  }
  static void put(const OpCfg<T>&, Soa& st, size_t j, const State& a) {
    st.n[j] = double(a.n), st.mean[j] = a.mean, st.m2[j] = a.m2;
  }

 private:
  static __int128 int_sum_of(const T* x, size_t n, Isa isa) {
    if constexpr (std::is_integral<T>::value) return int_sum(x, n, isa);
    (void)x, (void)n, (void)isa;
    return 0;
  }
  // Mean / M2 per sub-block, Chan-merged in order. One pass of shifted sums s1 = sum(x - K),
  // s2 = sum((x - K)^2) with K = the sub-block's first element: mean = K + s1/m,
  // M2 = s2 - s1^2/m. The subtraction loses about log2(1 + s1^2/(m*M2)) bits, so when
  // s1^2/m > 2^10 * M2 (or M2 is not finite / negative) the sub-block is redone two-pass (mean,
  // then squared deviations from it, read from L1). Same kernels on every ISA.
  static constexpr size_t kSub = 4096;
  static void var_blocks(const OpCfg<T>& k, State& a, const T* x, size_t n) {
    for (size_t b = 0; b < n; b += kSub) {
      const size_t m = n - b < kSub ? n - b : kSub;
      const double sh = static_cast<double>(x[b]);
      double s1 = 0, s2 = 0;
      shifted_sums(x + b, m, sh, &s1, &s2, k.isa);
      merge_block(a, m, sh, s1, s2, [&](double& mean, double& m2) {
        if (kFloat) mean = lane_sum(x + b, m, Xform::Identity, 0, k.isa) / double(m);
        else mean = double(int_sum_of(x + b, m, k.isa)) / double(m);
        m2 = lane_sum(x + b, m, Xform::SquaredDeviation, mean, k.isa);
      });
    }
  }
  // One sub-block's mean / M2 from its shifted sums (two_pass(mean, m2) redoes them where the
  // shifted sums lost too much), Chan-merged into a: the one rule of both ways of consuming.
  template <class TwoPass>
  static void merge_block(State& a, size_t m, double sh, double s1, double s2, TwoPass&& two_pass) {
    const double c = s1 * s1 / double(m);
    double mean = sh + s1 / double(m);
    double m2 = s2 - c;
    if (!(std::isfinite(m2) && m2 >= 0 && std::isfinite(mean)) || c > m2 * 1024.0) two_pass(mean, m2);
    chan_merge(a.n, a.mean, a.m2, m, mean, m2);
  }
  // The current sub-block of a unit consumed run by run, merged (kept pieces: the two-pass redo).
  static void end_block(const OpCfg<T>& k, RunAcc& r) {
    // lane_sum over the sub-block's pieces, in order
    auto pieces_sum = [&](Xform f, double center) {
      double lanes[kLanes] = {};
      size_t at = 0;
      for (const auto& pc : r.pieces) lane_feed(pc.first, pc.second, f, center, lanes, at, k.isa), at += pc.second;
      return lane_tree(lanes);
    };
    merge_block(r.a, r.m, r.sh, lane_tree(r.l1), lane_tree(r.l2), [&](double& mean, double& m2) {
      __int128 isum = 0;
      if (!kFloat)
        for (const auto& pc : r.pieces) isum += int_sum_of(pc.first, pc.second, k.isa);
      mean = (kFloat ? pieces_sum(Xform::Identity, 0) : double(isum)) / double(r.m);
      m2 = pieces_sum(Xform::SquaredDeviation, mean);
    });
    r.m = 0;
  }
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
