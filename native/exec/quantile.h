// Scalar quantile on the thread pool, without sorting: the ranks are bracketed between two
// values of a fixed sample, one pass counts the elements below / inside the bracket and gathers
// the inside ones, and nth_element selects among those. When the bracket misses (or holds too
// much), a parallel radix select on order-preserving keys of the values finds the rank: a
// histogram of the top bits picks the bucket, the next bits narrow it down, a small bucket is
// gathered. Exact order statistics, numpy 'linear' interpolation, NaN when any value is NaN.
// Order statistics are unique values, so the result does not depend on the thread count.
//
// The input is either a dense buffer or the selection's tiles read in place (no selection-sized
// copy). Input concept: size(), parts(threads), sample(m) (deterministic),
// each(threads, fn(const T* p, size_t len, uint32_t slot)) over all elements in parallel.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "exec/selection.h"
#include "exec/thread_pool.h"
#include "exec/tile_input.h"
#include "fold/order_stats.h"
#include "tet/query.h"

namespace tet {
namespace exec {
namespace qsel {

constexpr uint64_t kBlock = uint64_t(1) << 22;        // elements per parallel item (u32 counts)
constexpr uint64_t kGatherLimit = uint64_t(1) << 22;  // candidates selected by nth_element
constexpr uint64_t kSmall = uint64_t(1) << 20;        // below: copy + nth_element
constexpr uint64_t kSample = uint64_t(1) << 18;       // fast-path sample (kSmall <= n)

// Order-preserving unsigned keys: floats by sign-magnitude flip, signed ints by sign flip.
template <class T> struct Keys {
  using K = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  static constexpr uint32_t kBits = uint32_t(sizeof(T) * 8);
  static K key(T v) {
    if constexpr (std::is_floating_point<T>::value) {
      K u;
      std::memcpy(&u, &v, sizeof(T));
      using SK = typename std::make_signed<K>::type;
      const K neg = K(SK(u) >> (kBits - 1));  // all ones for negative values
      return u ^ (neg | (K(1) << (kBits - 1)));
    } else if constexpr (std::is_signed<T>::value) {
      return K(typename std::make_unsigned<T>::type(v)) ^ (K(1) << (kBits - 1));
    } else {
      return K(v);
    }
  }
  static T value(K k) {
    if constexpr (std::is_floating_point<T>::value) {
      const K sign = K(1) << (kBits - 1);
      const K u = (k & sign) ? K(k & ~sign) : K(~k);
      T v;
      std::memcpy(&v, &u, sizeof(T));
      return v;
    } else if constexpr (std::is_signed<T>::value) {
      return T(typename std::make_unsigned<T>::type(k ^ (K(1) << (kBits - 1))));
    } else {
      return T(k);
    }
  }
};

// Key order (a total order: -0 before +0) for selection: order statistics are then unique bit
// patterns, whatever the element order (threads, tiles, shards).
template <class T> struct KeyLess {
  bool operator()(T x, T y) const { return Keys<T>::key(x) < Keys<T>::key(y); }
};

// Counts of x[0..n) below lo, at most hi, NaN and above hi, and the smallest value above hi.
template <class T> struct BracketCount {
  uint64_t lt, le, nan, gt;
  T mg;
};
template <class T> inline __attribute__((noinline)) BracketCount<T> bracket_count(const T* __restrict x, size_t n, T lo, T hi) {
  // same-width counters so the compares vectorise (n <= 2^31)
  using C = typename std::conditional<sizeof(T) == 8, int64_t, int32_t>::type;
  C lt = 0, le = 0, nan = 0;
  for (size_t i = 0; i < n; ++i) {
    const T v = x[i];
    lt += v < lo ? C(1) : C(0);
    le += v <= hi ? C(1) : C(0);
    nan += v != v ? C(1) : C(0);
  }
  return {uint64_t(lt), uint64_t(le), uint64_t(nan), uint64_t(n) - uint64_t(le) - uint64_t(nan), T(0)};
}
// Smallest element of x[0..n) above hi (NaN never is); `none` when there is none.
template <class T> inline __attribute__((noinline)) T min_above(const T* __restrict x, size_t n, T hi, T none) {
  T mg = none;
  for (size_t i = 0; i < n; ++i)
    if (x[i] > hi && x[i] < mg) mg = x[i];
  return mg;
}
// Appends the `count` elements of x[0..n) inside [lo, hi] to out (branch-free compaction).
template <class T>
inline __attribute__((noinline)) void bracket_gather(const T* __restrict x, size_t n, T lo, T hi, size_t count, std::vector<T>& out) {
  const size_t base = out.size();
  out.resize(base + count + 1);
  T* __restrict o = out.data() + base;
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    const T v = x[i];
    o[w] = v;
    w += (v >= lo) & (v <= hi);
  }
  out.resize(base + w);
}


}  // namespace qsel

// The scalar quantile from its order statistics a = x(k) and b = x(k+1) (numpy 'linear'; b unused
// when k is the last rank). The one place the final value is computed: quantile_of and the
// sharded histogram rounds (order_rounds.cpp) both call it, so their bits agree.
__attribute__((noinline)) double quantile_finish(double a, double b, bool want1, double gamma);

template <class T, class Input>
double quantile_of(const Input& in, double q, uint32_t threads, const ExecContext& ctx, uint32_t& threads_used);

// A dense buffer x[0..n), in blocks of kBlock elements.
template <class T> class BufferInput {
 public:
  BufferInput(const T* x, uint64_t n) : x_(x), n_(n) {}
  uint64_t size() const { return n_; }
  uint64_t items() const { return (n_ + qsel::kBlock - 1) / qsel::kBlock; }
  uint32_t parts(uint32_t threads) const { return ThreadPool::instance().participants(items(), threads); }
  std::vector<T> sample(uint64_t m) const {
    std::vector<T> s(size_t(std::min(m, n_)));
    for (uint64_t i = 0; i < s.size(); ++i) s[i] = x_[i * n_ / s.size()];
    return s;
  }
  template <class F> void each(uint32_t threads, F&& fn) const {
    ThreadPool::instance().parallel_for(items(), threads, [&](uint64_t b, uint32_t slot) {
      const uint64_t e0 = b * qsel::kBlock, e1 = std::min(n_, e0 + qsel::kBlock);
      fn(x_ + e0, size_t(e1 - e0), slot);
    });
  }

 private:
  const T* x_;
  uint64_t n_;
};

// The selection's tiles, fetched per pass (raw tiles are read in place; others are decoded into
// per-worker scratch); runs are converted / gathered into per-worker buffers of <= kPiece.
template <class S, class T> class TileInput {
 public:
  static constexpr uint64_t kPiece = uint64_t(1) << 16;
  TileInput(const Selection& sel, TileFetcher& fetcher, const ChunkSource& src, uint32_t dataset_id)
      : sel_(sel), fetcher_(fetcher), src_(src), dataset_id_(dataset_id) {}
  uint64_t size() const { return sel_.elements; }
  uint32_t parts(uint32_t threads) const { return ThreadPool::instance().participants(sel_.tiles, threads); }
  // ~m elements at evenly spaced tile-local ordinals of every tile (counted as the first pass).
  std::vector<T> sample(uint64_t m) const {
    std::vector<std::vector<T>> per(sel_.tiles);
    const uint32_t parts_n = parts(0);
    std::vector<ScratchBytes> scratch(parts_n);
    ThreadPool::instance().parallel_for(sel_.tiles, 0, [&](uint64_t t, uint32_t slot) {
      const TileSelection ts = sel_.tile(t);
      const uint64_t cnt = std::max<uint64_t>(1, ts.elems * m / std::max<uint64_t>(1, sel_.elements));
      const TileView v = fetcher_.fetch(ts, scratch[slot]);
      for (uint64_t i = 0; i < cnt && i < ts.elems; ++i) {
        const uint64_t e = (2 * i + 1) * ts.elems / (2 * cnt);
        Selection::for_each_run(ts, sel_.ndim, e, e + 1, [&](uint64_t off, uint64_t, const Axes&) {
          T val;
          load_elems<S, T>(v.data + off * sizeof(S), 1, 1, &val);
          per[t].push_back(val);
        });
      }
    });
    std::vector<T> s;
    for (auto& p : per) s.insert(s.end(), p.begin(), p.end());
    counted_ = true;
    return s;
  }
  template <class F> void each(uint32_t threads, F&& fn) const {
    const uint32_t parts_n = parts(threads);
    const bool count = !counted_;  // the first pass over the tiles is the one the I/O stats count
    counted_ = true;
    std::vector<ScratchBytes> scratch(parts_n);
    std::vector<std::vector<T>> bufs(parts_n);
    const uint32_t last = sel_.ndim - 1;
    ThreadPool::instance().parallel_for(sel_.tiles, threads, [&](uint64_t t, uint32_t slot) {
      const TileSelection ts = sel_.tile(t);
      const TileView v = count ? fetcher_.fetch(ts, scratch[slot]) : tile(ts, scratch[slot]);
      if (ts.contiguous && std::is_same<S, T>::value &&
          reinterpret_cast<uintptr_t>(v.data) % alignof(T) == 0) {
        const T* p = reinterpret_cast<const T*>(v.data + ts.first_offset * sizeof(S));
        for (uint64_t e = 0; e < ts.elems; e += kPiece) fn(p + e, size_t(std::min(kPiece, ts.elems - e)), slot);
        return;
      }
      std::vector<T>& b = bufs[slot];
      if (b.size() < kPiece) b.resize(kPiece);
      size_t k = 0;
      if (ts.nruns[last] > 1) {
        // an index / run list on the last axis: a row at a time through its tile positions
        for_each_list_row<S>(sel_, ts, v.data, [&](const uint8_t* row, const uint64_t* loc, uint64_t ls, uint64_t n, uint64_t) {
          for (uint64_t c = 0; c < n;) {
            const uint64_t take = std::min<uint64_t>(n - c, kPiece - k);
            gather_row<S, T>(row, loc + c, ls, take, b.data() + k);
            k += size_t(take), c += take;
            if (k == kPiece) fn(b.data(), k, slot), k = 0;
          }
        });
        if (k > 0) fn(b.data(), k, slot);
        return;
      }
      Selection::for_each_run(ts, sel_.ndim, 0, ts.elems, [&](uint64_t off, uint64_t len, const Axes&) {
        uint64_t done = 0;
        while (done < len) {
          const uint64_t take = std::min<uint64_t>(len - done, kPiece - k);
          load_elems<S, T>(v.data + (off + done * ts.step[last]) * sizeof(S), ts.step[last], take, b.data() + k);
          k += size_t(take), done += take;
          if (k == kPiece) fn(b.data(), k, slot), k = 0;
        }
      });
      if (k > 0) fn(b.data(), k, slot);
    });
  }

 private:
  // Later passes re-read tiles without counting them again in the I/O stats.
  mutable bool counted_ = false;
  TileView tile(const TileSelection& ts, ScratchBytes& scratch) const {
    const TileView v = src_.tile(dataset_id_, ts.linear_chunk, scratch);
    if (v.data == nullptr || v.bytes != ts.tile_elems * sizeof(S))
      fail("TET_INTERNAL", "tile " + std::to_string(ts.linear_chunk) + " has " + std::to_string(v.bytes) +
                               " decoded bytes; expected " + std::to_string(ts.tile_elems * sizeof(S)));
    return v;
  }
  const Selection& sel_;
  TileFetcher& fetcher_;
  const ChunkSource& src_;
  uint32_t dataset_id_;
};

// Quantile q of x[0..n) (not modified). threads: pool participants cap (0 = all).
template <class T>
double parallel_quantile(const T* x, uint64_t n, double q, uint32_t threads, const ExecContext& ctx, uint32_t& threads_used) {
  return quantile_of<T>(BufferInput<T>(x, n), q, threads, ctx, threads_used);
}

template <class T, class Input>
inline double quantile_of(const Input& in, double q, uint32_t threads, const ExecContext& ctx, uint32_t& threads_used) {
  const uint64_t n = in.size();
  using KT = qsel::Keys<T>;
  using K = typename KT::K;
  constexpr uint32_t bits = KT::kBits;
  const double nanv = std::numeric_limits<double>::quiet_NaN();
  threads_used = 1;
  if (n == 0) return nanv;
  const fold::QuantileRank rank = fold::quantile_rank(n, q);
  const uint64_t k = rank.k;
  const double gamma = rank.gamma;
  const uint32_t parts = in.parts(threads);
  threads_used = parts;
  if (n < qsel::kSmall) {
    std::vector<T> tmp;
    tmp.reserve(size_t(n));
    std::vector<std::vector<T>> per(parts);
    in.each(threads, [&](const T* p, size_t len, uint32_t slot) { per[slot].insert(per[slot].end(), p, p + len); });
    for (auto& v : per) tmp.insert(tmp.end(), v.begin(), v.end());
    for (const T& v : tmp)
      if (v != v) return nanv;
    std::nth_element(tmp.begin(), tmp.begin() + k, tmp.end(), qsel::KeyLess<T>());
    const double a = double(tmp[size_t(k)]);
    const bool w1 = k + 1 < n;
    const double b = w1 ? double(*std::min_element(tmp.begin() + k + 1, tmp.end(), qsel::KeyLess<T>())) : 0.0;
    return quantile_finish(a, b, w1, gamma);
  }
  const bool want1 = k + 1 < n;

  // Fast path: bracket ranks k and k + 1 between two values of a fixed-stride sample, then one
  // pass counts the elements below / inside the bracket (and finds NaN and the smallest value
  // above it) while gathering the inside ones; selection then runs on those only. When the
  // bracket misses the ranks or holds too many elements, the radix select below decides.
  {
    std::vector<T> sample = in.sample(qsel::kSample);
    const uint64_t m = sample.size();
    bool sample_nan = false;
    for (const T& v : sample) sample_nan |= v != v;
    if (sample_nan) return nanv;
    std::sort(sample.begin(), sample.end());
    const double t = (double(k) + 0.5) * double(m) / double(n);
    const double d = 2.5 * std::sqrt(double(m)) + 16.0;  // ~5 sigma of the sample rank
    const uint64_t li = uint64_t(std::max(0.0, std::floor(t - d)));
    const uint64_t hi_i = uint64_t(std::min(double(m - 1), std::ceil(t + d + 1)));
    const T lo = sample[li], hi = sample[hi_i];
    // estimated elements inside [lo, hi] (duplicates of lo / hi included)
    const uint64_t in_s = uint64_t(std::upper_bound(sample.begin(), sample.end(), hi) -
                                   std::lower_bound(sample.begin(), sample.end(), lo));
    const uint64_t limit = std::max<uint64_t>(qsel::kGatherLimit, n / 32);
    const bool gather = !(lo == hi) && double(in_s) / double(m) * double(n) < double(limit);
    // lo == hi == 0 would mix -0 and +0 inside the bracket: the radix select orders them
    const bool zero_tie = std::is_floating_point<T>::value && lo == hi && lo == T(0);
    const uint64_t cap = limit * 2 / parts + 1;  // per participant
    std::vector<uint64_t> c_lt(parts, 0), c_le(parts, 0);
    std::vector<uint8_t> nan_seen(parts, 0), overflow(parts, 0);
    std::vector<T> min_gt(parts, std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                      : std::numeric_limits<T>::max());
    std::vector<uint8_t> any_gt(parts, 0);
    std::vector<std::vector<T>> got(parts);
    if ((lo == hi && !zero_tie) || gather) {
      in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
        check_cancel(ctx);
        uint64_t lt = 0, le = 0, nan = 0, gt = 0;
        std::vector<T>& g = got[slot];
        constexpr uint64_t kChunk = 4096;
        for (uint64_t c0 = 0; c0 < n_piece; c0 += kChunk) {
          const uint64_t len = std::min<uint64_t>(n_piece, c0 + kChunk) - c0;
          const qsel::BracketCount<T> bc = qsel::bracket_count<T>(x + c0, len, lo, hi);
          lt += bc.lt, le += bc.le, nan += bc.nan, gt += bc.gt;
          if (gather && bc.le > bc.lt && !overflow[slot]) {
            qsel::bracket_gather<T>(x + c0, len, lo, hi, size_t(bc.le - bc.lt), g);
            if (g.size() > cap) overflow[slot] = 1, std::vector<T>().swap(g);
          }
        }
        c_lt[slot] += lt, c_le[slot] += le;
        if (nan) nan_seen[slot] = 1;
        if (gt) any_gt[slot] = 1;
      });
      for (uint8_t f : nan_seen)
        if (f) return nanv;
      uint64_t below = 0, upto = 0;
      bool ovf = false, has_gt = false;
      for (uint32_t p = 0; p < parts; ++p) below += c_lt[p], upto += c_le[p], ovf |= overflow[p] != 0, has_gt |= any_gt[p] != 0;
      T mgt = min_gt[0];
      if (want1 && k + 1 == upto && has_gt) {  // rank k + 1 is the smallest element above hi
        in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
          const T m = qsel::min_above<T>(x, n_piece, hi, min_gt[slot]);
          if (m < min_gt[slot]) min_gt[slot] = m;
        });
        for (const T& m : min_gt) mgt = std::min(mgt, m);
        if (std::is_floating_point<T>::value && mgt == T(0)) {
          // -0 and +0 compare equal: in key order rank k + 1 is -0 when there is one above hi
          std::vector<uint8_t> negz(parts, 0);
          in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
            for (size_t i = 0; i < n_piece; ++i)
              if (x[i] == T(0) && std::signbit(x[i]) && x[i] > hi) negz[slot] = 1;
          });
          bool any = false;
          for (uint8_t f : negz) any |= f != 0;
          mgt = any ? T(-0.0) : T(0);
        }
      }
      const bool k_in = below <= k && k < upto;
      const bool k1_ok = !want1 || k + 1 < upto || has_gt;
      if (k_in && k1_ok && (lo == hi || !ovf)) {
        double a, b = 0;
        if (lo == hi) {
          a = double(lo);
          if (want1) b = k + 1 < upto ? double(lo) : double(mgt);
        } else {
          std::vector<T> c;
          c.reserve(size_t(upto - below));
          for (auto& g : got) c.insert(c.end(), g.begin(), g.end()), std::vector<T>().swap(g);
          const uint64_t r = k - below;
          std::nth_element(c.begin(), c.begin() + r, c.end(), qsel::KeyLess<T>());
          a = double(c[r]);
          if (want1) b = k + 1 < upto ? double(*std::min_element(c.begin() + r + 1, c.end(), qsel::KeyLess<T>())) : double(mgt);
        }
        return quantile_finish(a, b, want1, gamma);
      }
    }
  }

  // Select ranks r0 = k and (when it exists) r1 = k + 1 together; r1 splits off into its own
  // bucket at some level, and is then the smallest key of that bucket.
  uint64_t r0 = k;
  bool done0 = false, done1 = !want1;
  K key0 = 0, key1 = 0;
  K prefix = 0;
  uint32_t plen = 0;  // bits of the key fixed by `prefix`
  // in_prefix(key, p, len): the top `len` bits of key equal p
  auto in_prefix = [](K key, K p, uint32_t len) { return len == 0 || K(key >> (bits - len)) == p; };

  while (!done0) {
    const uint32_t w = std::min<uint32_t>(16, bits - plen);
    const uint32_t shift = bits - plen - w;
    const size_t nb = size_t(1) << w;
    const K mask = K(nb - 1);
    std::vector<std::vector<uint32_t>> hist(size_t(parts) * 2);
    std::vector<std::vector<uint64_t>> total(parts);
    std::vector<uint8_t> nan_seen(parts, 0);
    std::vector<uint64_t> since(parts, 0);  // elements counted since the last u32 flush
    auto flush = [&](uint32_t slot) {
      uint32_t* a0 = hist[slot * 2].data();
      uint32_t* a1 = hist[slot * 2 + 1].data();
      uint64_t* t = total[slot].data();
      for (size_t j = 0; j < nb; ++j) t[j] += uint64_t(a0[j]) + a1[j], a0[j] = 0, a1[j] = 0;
      since[slot] = 0;
    };
    in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
      check_cancel(ctx);
      std::vector<uint32_t>& h0 = hist[slot * 2];
      std::vector<uint32_t>& h1 = hist[slot * 2 + 1];
      if (h0.empty()) h0.assign(nb, 0), h1.assign(nb, 0), total[slot].assign(nb, 0);
      if (since[slot] + n_piece >= (uint64_t(1) << 31)) flush(slot);
      since[slot] += n_piece;
      uint32_t* __restrict a0 = h0.data();
      uint32_t* __restrict a1 = h1.data();
      bool nan = false;
      if (plen == 0) {
        size_t i = 0;
        for (; i + 2 <= n_piece; i += 2) {
          const T v0 = x[i], v1 = x[i + 1];
          nan |= (v0 != v0) | (v1 != v1);
          ++a0[size_t((KT::key(v0) >> shift) & mask)];
          ++a1[size_t((KT::key(v1) >> shift) & mask)];
        }
        for (; i < n_piece; ++i) {
          nan |= x[i] != x[i];
          ++a0[size_t((KT::key(x[i]) >> shift) & mask)];
        }
      } else {
        for (size_t i = 0; i < n_piece; ++i) {
          const K key = KT::key(x[i]);
          if (in_prefix(key, prefix, plen)) ++a0[size_t((key >> shift) & mask)];
        }
      }
      if (nan) nan_seen[slot] = 1;
    });
    for (uint32_t slot = 0; slot < parts; ++slot)
      if (!hist[slot * 2].empty()) flush(slot);
    for (uint8_t f : nan_seen)
      if (f) return nanv;
    std::vector<uint64_t> h(nb, 0);
    for (const auto& t : total)
      if (!t.empty())
        for (size_t j = 0; j < nb; ++j) h[j] += t[j];
    // bucket of r0 (and of r1 = r0 + 1 while it is still pending)
    uint64_t below = 0;
    size_t b0 = 0;
    while (below + h[b0] <= r0) below += h[b0++];
    r0 -= below;
    const K p0 = K((plen == 0 ? K(0) : K(prefix << w)) | K(b0));
    if (!done1 && r0 + 1 >= h[b0]) {
      // r1 is the smallest key of the next non-empty bucket
      size_t b1 = b0 + 1;
      while (h[b1] == 0) ++b1;
      const K p1 = K((plen == 0 ? K(0) : K(prefix << w)) | K(b1));
      std::vector<K> mins(parts, std::numeric_limits<K>::max());
      in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
        K m = mins[slot];
        for (size_t i = 0; i < n_piece; ++i) {
          const K key = KT::key(x[i]);
          if (in_prefix(key, p1, plen + w) && key < m) m = key;
        }
        mins[slot] = m;
      });
      key1 = *std::min_element(mins.begin(), mins.end());
      done1 = true;
    }
    prefix = p0;
    plen += w;
    if (plen == bits) {
      key0 = prefix;
      if (!done1) key1 = prefix, done1 = true;  // r1 in the same (single-key) bucket
      done0 = true;
    } else if (h[b0] <= qsel::kGatherLimit) {
      std::vector<std::vector<T>> got(parts);
      in.each(threads, [&](const T* x, size_t n_piece, uint32_t slot) {
        for (size_t i = 0; i < n_piece; ++i)
          if (in_prefix(KT::key(x[i]), prefix, plen)) got[slot].push_back(x[i]);
      });
      std::vector<T> c;
      c.reserve(size_t(h[b0]));
      for (auto& g : got) c.insert(c.end(), g.begin(), g.end()), std::vector<T>().swap(g);
      std::nth_element(c.begin(), c.begin() + r0, c.end(), qsel::KeyLess<T>());
      key0 = KT::key(c[r0]);
      if (!done1) key1 = KT::key(*std::min_element(c.begin() + r0 + 1, c.end(), qsel::KeyLess<T>())), done1 = true;
      done0 = true;
    }
  }
  const double a = double(KT::value(key0));
  return quantile_finish(a, want1 ? double(KT::value(key1)) : 0.0, want1, gamma);
}

}  // namespace exec
}  // namespace tet
