// Small, exact sharded partials for the tier-C ops (order_rounds.h, exec/README.md).
#include "exec/dtype_dispatch.h"
#include "exec/order_rounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "exec/comoment.h"
#include "exec/quantile.h"
#include "exec/thread_pool.h"
#include "exec/tier_c.h"
#include "fold/order_stats.h"
#include "fold/registry.h"
#include "tet/error.h"
#include "tet/file.h"
#include "util/crc32.h"
#include "util/checked.h"

namespace tet {
namespace exec {

__attribute__((noinline)) double quantile_finish(double a, double b, bool want1, double gamma) {
  return want1 ? fold::lerp_numpy(a, b, gamma) : a;
}

namespace rounds {
namespace {

[[noreturn]] void corrupt(const std::string& what) { fail("TET_SHARD_CORRUPT", "shard partial is corrupt: " + what); }
[[noreturn]] void bad_request(const std::string& what) {
  fail("TET_SHARD_CORRUPT", "shard round request is corrupt: " + what);
}

// ---- little-endian writer / bounds-checked reader
struct Wr {
  std::vector<uint8_t> b;
  void u8(uint8_t v) { b.push_back(v); }
  void u16(uint16_t v) { uint8_t t[2]; store_u16le(t, v); b.insert(b.end(), t, t + 2); }
  void u32(uint32_t v) { uint8_t t[4]; store_u32le(t, v); b.insert(b.end(), t, t + 4); }
  void u64(uint64_t v) { uint8_t t[8]; store_u64le(t, v); b.insert(b.end(), t, t + 8); }
  void f64(double v) { uint64_t u; std::memcpy(&u, &v, 8); u64(u); }
  void bytes(const void* p, size_t n) { const uint8_t* q = static_cast<const uint8_t*>(p); b.insert(b.end(), q, q + n); }
};
struct Rd {
  const uint8_t* p;
  size_t n, at = 0;
  bool request;  // errors name the request rather than the partial
  void need(uint64_t k) const {
    if (!span_within(at, k, n)) (request ? bad_request("it ends early") : corrupt("a tier-C body ends early"));
  }
  uint8_t u8() { need(1); return p[at++]; }
  uint16_t u16() { need(2); const uint16_t v = load_u16le(p + at); at += 2; return v; }
  uint32_t u32() { need(4); const uint32_t v = load_u32le(p + at); at += 4; return v; }
  uint64_t u64() { need(8); const uint64_t v = load_u64le(p + at); at += 8; return v; }
  double f64() { const uint64_t u = u64(); double v; std::memcpy(&v, &u, 8); return v; }
  const uint8_t* take(uint64_t k) { need(k); const uint8_t* q = p + at; at += size_t(k); return q; }
  void end() const {
    if (at != n) (request ? bad_request("it has trailing bytes") : corrupt("a tier-C body has trailing bytes"));
  }
};

template <class Fn> void with_dtype(DType dt, Fn&& fn) {
  if (!exec::dispatch_dtype(dt, std::forward<Fn>(fn))) corrupt("dtype");
}

bool is_scalar(const QueryPlan& p) { return p.reduce_mask == (1u << p.ndim) - 1; }

// Order-preserving keys of storage values; f16 (stored as u16, widened to f32 by the engine)
// by its own 16-bit sign-magnitude flip, which orders like the f32 keys of the widened values.
template <class S, class T> struct QKeys {
  static constexpr bool kF16 = std::is_same<S, uint16_t>::value && std::is_same<T, float>::value;
  using K = typename std::conditional<kF16, uint32_t, typename qsel::Keys<S>::K>::type;
  static constexpr uint32_t kBits = kF16 ? 16 : qsel::Keys<S>::kBits;
  static K key(S v) {
    if constexpr (kF16) {
      const uint32_t u = v;
      return (u & 0x8000u) ? (~u & 0xffffu) : (u | 0x8000u);
    } else {
      return qsel::Keys<S>::key(v);
    }
  }
  static double value(K k) {
    if constexpr (kF16) {
      const uint16_t u = (k & 0x8000u) ? uint16_t(k & 0x7fffu) : uint16_t(~k & 0xffffu);
      return double(f16_to_f32(u));
    } else {
      return double(qsel::Keys<S>::value(k));
    }
  }
  static bool is_nan(S v) {
    if constexpr (kF16) return (v & 0x7fffu) > 0x7c00u;
    else return v != v;
  }
};

// Calls fn(values, n, row-major offset of values[0], slot) over the selected elements of tiles
// [t0, t1), in runs along the last axis, loaded as V; parallel over tiles.
template <class S, class V, class F>
void each_run(const Selection& sel, TileFetcher& fetcher, uint64_t t0, uint64_t t1, uint32_t threads,
              const ExecContext& ctx, F&& fn) {
  if (t1 <= t0) return;
  ThreadPool& pool = ThreadPool::instance();
  const uint32_t parts = pool.participants(t1 - t0, threads);
  std::vector<ScratchBytes> scratch(parts);
  std::vector<std::vector<V>> bufs(parts);
  const uint32_t last = sel.ndim - 1;
  constexpr uint64_t kPiece = 4096;
  pool.parallel_for(t1 - t0, threads, [&](uint64_t k, uint32_t slot) {
    check_cancel(ctx);
    const TileSelection ts = sel.tile(t0 + k);
    const TileView v = fetcher.fetch(ts, scratch[slot]);
    std::vector<V>& b = bufs[slot];
    if (b.size() < kPiece) b.resize(kPiece);
    if (ts.nruns[last] > 1) {
      // an index / run list on the last axis: a row at a time through its tile positions
      for_each_list_row<S>(sel, ts, v.data, [&](const uint8_t* row, const uint64_t* loc, uint64_t ls, uint64_t n, uint64_t o) {
        for (uint64_t c = 0; c < n; c += kPiece) {
          const uint64_t m = std::min<uint64_t>(kPiece, n - c);
          gather_row<S, V>(row, loc + c, ls, m, b.data());
          fn(static_cast<const V*>(b.data()), size_t(m), o + c, slot);
        }
      });
      return;
    }
    Selection::for_each_run(ts, sel.ndim, 0, ts.elems, [&](uint64_t off, uint64_t n, const Axes& idx) {
      const uint64_t o = sel.logical_of(ts, idx);
      for (uint64_t i = 0; i < n; i += kPiece) {
        const uint64_t m = std::min<uint64_t>(kPiece, n - i);
        load_elems<S, V>(v.data + (off + i * ts.step[last]) * sizeof(S), ts.step[last], m, b.data());
        fn(static_cast<const V*>(b.data()), size_t(m), o + i, slot);
      }
    });
  });
}
uint32_t parts_for(uint64_t items, uint32_t threads) { return ThreadPool::instance().participants(items, threads); }

// Plan restricted to selection indices [i0, i1) of axis a.
QueryPlan narrow(const QueryPlan& p, uint32_t a, uint64_t i0, uint64_t i1) {
  QueryPlan q = p;
  q.preview_max = 0;
  q.spill_path.clear();
  q.shard = ShardRange{};
  if (p.kind[a] == AxisKind::Box) {
    q.start[a] = p.start[a] + i0 * p.step[a];
    q.count[a] = i1 - i0;
  } else {
    const std::vector<uint64_t> pos = p.positions(a);
    q.set_indices(a, std::vector<uint64_t>(pos.begin() + ptrdiff_t(i0), pos.begin() + ptrdiff_t(i1)));
  }
  return q;
}

// Kept axes of a non-scalar op: output fibers row-major over them.
struct Outputs {
  std::vector<uint32_t> kept;
  uint64_t out_len = 1, width = 1;  // width: values per output (bins for a histogram)
};
Outputs outputs_of(const QueryPlan& p) {
  Outputs o;
  for (uint32_t a = 0; a < p.ndim; ++a)
    if (!((p.reduce_mask >> a) & 1)) o.kept.push_back(a), o.out_len *= p.count[a];
  o.width = p.op == Op::Histogram ? p.bins : 1;
  return o;
}

struct CovGeom {
  uint64_t order, nobs, units;
  uint32_t obs_axis;
};
CovGeom cov_geom(const QueryPlan& p) {
  CovGeom g;
  g.obs_axis = p.obs_axis;
  g.nobs = p.count[p.obs_axis];
  g.order = p.count[1 - p.obs_axis];
  g.units = comoment::unit_count(g.nobs, g.order);
  return g;
}

// ---- quantile payload
struct QTarget {
  bool resolved = false;
  uint32_t prefix = 0;  // index into prefixes (pending)
  uint64_t v = 0;       // rank within the prefix (pending) or the key (resolved)
};
struct QPrefix {
  uint32_t plen = 0, mode = 1;  // 1: histogram of the next bits, 2: the raw keys
  uint64_t prefix = 0, expected = 0;
};
struct QPayload {
  uint64_t n = 0;
  std::vector<QTarget> targets;
  std::vector<QPrefix> prefixes;
};
void put_q(Wr& w, const QPayload& q) {
  w.u64(q.n);
  w.u32(uint32_t(q.targets.size()));
  for (const QTarget& t : q.targets) w.u32(t.resolved ? 1 : 0), w.u32(t.prefix), w.u64(t.v);
  w.u32(uint32_t(q.prefixes.size()));
  for (const QPrefix& p : q.prefixes) w.u32(p.plen), w.u32(p.mode), w.u64(p.prefix), w.u64(p.expected);
}
QPayload get_q(const std::vector<uint8_t>& b, uint32_t bits) {
  Rd r{b.data(), b.size(), 0, true};
  QPayload q;
  q.n = r.u64();
  if (q.n == 0 || q.n > (uint64_t(1) << 56)) bad_request("element count");
  const uint32_t nt = r.u32();
  if (nt < 1 || nt > 2) bad_request("target count");
  for (uint32_t i = 0; i < nt; ++i) {
    QTarget t;
    const uint32_t res = r.u32();
    if (res > 1) bad_request("target state");
    t.resolved = res == 1, t.prefix = r.u32(), t.v = r.u64();
    q.targets.push_back(t);
  }
  const uint32_t np = r.u32();
  if (np > 2) bad_request("prefix count");
  for (uint32_t i = 0; i < np; ++i) {
    QPrefix p;
    p.plen = r.u32(), p.mode = r.u32(), p.prefix = r.u64(), p.expected = r.u64();
    if (p.plen == 0 || p.plen >= bits || p.plen % 16 != 0) bad_request("prefix length");
    if (p.plen < 64 && (p.prefix >> p.plen) != 0) bad_request("prefix value");
    if (p.mode < 1 || p.mode > 2 || (p.mode == 2 && p.expected > kGatherCap)) bad_request("prefix mode");
    if (p.expected == 0 || p.expected > q.n) bad_request("prefix count");
    q.prefixes.push_back(p);
  }
  for (const QTarget& t : q.targets) {
    if (!t.resolved && t.prefix >= np) bad_request("target prefix");
    if (!t.resolved && t.v >= q.prefixes[t.prefix].expected) bad_request("target rank");
    if (t.resolved && bits < 64 && (t.v >> bits) != 0) bad_request("resolved key");
  }
  r.end();
  return q;
}

// Sparse histogram: u8 format (0: u32 counts, 1: u64 counts), u32 nonzero bins, then ascending
// (u16 bin, count) pairs.
void put_hist(Wr& w, const std::vector<uint64_t>& h) {
  uint32_t nnz = 0;
  uint64_t mx = 0;
  for (uint64_t c : h) nnz += c != 0, mx = std::max(mx, c);
  const bool wide = mx > 0xffffffffull;
  w.u8(wide ? 1 : 0);
  w.u32(nnz);
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i]) {
      w.u16(uint16_t(i));
      if (wide) w.u64(h[i]);
      else w.u32(uint32_t(h[i]));
    }
}
void add_hist(Rd& r, std::vector<uint64_t>& h) {
  const uint8_t fmt = r.u8();
  if (fmt > 1) corrupt("histogram format");
  const uint32_t nnz = r.u32();
  if (nnz > h.size()) corrupt("histogram size");
  int64_t prev = -1;
  for (uint32_t i = 0; i < nnz; ++i) {
    const uint16_t b = r.u16();
    const uint64_t c = fmt ? r.u64() : r.u32();
    if (int64_t(b) <= prev || b >= h.size() || c == 0) corrupt("histogram bins");
    prev = b;
    if (add_overflows(h[b], c, &h[b])) corrupt("histogram counts overflow");
  }
}

// Dense-index sparse counts (u32 nonzero bins, then ascending (u32 bin, u64 count)).
void put_counts(Wr& w, const std::vector<uint64_t>& h) {
  uint32_t nnz = 0;
  for (uint64_t c : h) nnz += c != 0;
  w.u32(nnz);
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i]) w.u32(uint32_t(i)), w.u64(h[i]);
}
void add_counts(Rd& r, std::vector<uint64_t>& h) {
  const uint32_t nnz = r.u32();
  if (nnz > h.size()) corrupt("bin count list");
  int64_t prev = -1;
  for (uint32_t i = 0; i < nnz; ++i) {
    const uint32_t b = r.u32();
    const uint64_t c = r.u64();
    if (int64_t(b) <= prev || b >= h.size() || c == 0) corrupt("histogram bins");
    prev = b;
    if (add_overflows(h[b], c, &h[b])) corrupt("histogram counts overflow");
  }
}

// The prefixes a quantile round works on: round 1 the whole key range, later rounds the request's.
QPayload round_prefixes(const Request& req, uint32_t bits) {
  if (req.round != 1) return get_q(req.payload, bits);
  QPayload q;
  q.prefixes.push_back(QPrefix{0, 1, 0, 0});
  return q;
}

// ---- quantile: shard
template <class S, class T>
std::vector<uint8_t> quantile_body(const QueryPlan& plan, const Selection& sel, TileFetcher& fetcher, uint64_t t0,
                                   uint64_t t1, const Request& req, const ExecContext& ctx, QueryResult& stats) {
  using QK = QKeys<S, T>;
  using K = typename QK::K;
  constexpr uint32_t bits = QK::kBits;
  const QPayload q = round_prefixes(req, bits);
  const uint32_t parts = std::max<uint32_t>(1, parts_for(t1 > t0 ? t1 - t0 : 1, plan.threads));
  stats.stats.threads_used = std::max(stats.stats.threads_used, parts);
  const size_t np = q.prefixes.size();
  std::vector<std::vector<std::vector<uint64_t>>> hist(parts, std::vector<std::vector<uint64_t>>(np));
  std::vector<std::vector<std::vector<K>>> keys(parts, std::vector<std::vector<K>>(np));
  std::vector<uint8_t> nan(parts, 0);
  std::vector<uint64_t> count(parts, 0);
  auto width = [&](const QPrefix& p) { return std::min<uint32_t>(16, bits - p.plen); };
  each_run<S, S>(sel, fetcher, t0, t1, plan.threads, ctx, [&](const S* x, size_t n, uint64_t, uint32_t slot) {
    count[slot] += n;
    bool has_nan = false;
    for (size_t pi = 0; pi < np; ++pi) {
      const QPrefix& p = q.prefixes[pi];
      const uint32_t w = width(p), shift = bits - p.plen - w;
      const K mask = K((uint64_t(1) << w) - 1);
      if (p.mode == 1) {
        std::vector<uint64_t>& h = hist[slot][pi];
        if (h.empty()) h.assign(size_t(1) << w, 0);
        for (size_t i = 0; i < n; ++i) {
          has_nan |= QK::is_nan(x[i]);
          const K k = QK::key(x[i]);
          if (p.plen == 0 || uint64_t(k >> (bits - p.plen)) == p.prefix) ++h[size_t((k >> shift) & mask)];
        }
      } else {
        std::vector<K>& g = keys[slot][pi];
        for (size_t i = 0; i < n; ++i) {
          has_nan |= QK::is_nan(x[i]);
          const K k = QK::key(x[i]);
          if (uint64_t(k >> (bits - p.plen)) == p.prefix) g.push_back(k);
        }
      }
    }
    if (has_nan) nan[slot] = 1;
  });
  Wr w;
  uint8_t any_nan = 0;
  uint64_t total = 0;
  for (uint32_t s = 0; s < parts; ++s) any_nan |= nan[s], total += count[s];
  w.u8(any_nan);
  w.u64(total);
  for (size_t pi = 0; pi < np; ++pi) {
    const QPrefix& p = q.prefixes[pi];
    if (p.mode == 1) {
      std::vector<uint64_t> h(size_t(1) << width(p), 0);
      for (uint32_t s = 0; s < parts; ++s)
        if (!hist[s][pi].empty())
          for (size_t j = 0; j < h.size(); ++j) h[j] += hist[s][pi][j];
      put_hist(w, h);
    } else {
      uint64_t m = 0;
      for (uint32_t s = 0; s < parts; ++s) m += keys[s][pi].size();
      if (m > p.expected) fail("TET_SHARD_MISMATCH", "the round request does not describe this file's values");
      w.u64(m);
      for (uint32_t s = 0; s < parts; ++s)
        for (K k : keys[s][pi]) {
          if (sizeof(K) == 8) w.u64(uint64_t(k));
          else w.u32(uint32_t(k));
        }
    }
  }
  return std::move(w.b);
}

// ---- quantile: coordinator
template <class S, class T>
bool quantile_merge(const QueryPlan& plan, const Request& req, const std::vector<Body>& bodies, QueryResult& res,
                    std::vector<uint8_t>& next) {
  using QK = QKeys<S, T>;
  using K = typename QK::K;
  constexpr uint32_t bits = QK::kBits;
  QPayload q = round_prefixes(req, bits);
  const size_t np = q.prefixes.size();
  auto width = [&](const QPrefix& p) { return std::min<uint32_t>(16, bits - p.plen); };
  std::vector<std::vector<uint64_t>> hist(np);
  std::vector<std::vector<K>> keys(np);
  for (size_t pi = 0; pi < np; ++pi)
    if (q.prefixes[pi].mode == 1) hist[pi].assign(size_t(1) << width(q.prefixes[pi]), 0);
  bool any_nan = false;
  uint64_t total = 0;
  for (const Body& b : bodies) {
    Rd r{b.p, b.n, 0, false};
    const uint8_t f = r.u8();
    if (f > 1) corrupt("NaN flag");
    any_nan |= f == 1;
    if (add_overflows(total, r.u64(), &total)) corrupt("element counts overflow");
    for (size_t pi = 0; pi < np; ++pi) {
      if (q.prefixes[pi].mode == 1) {
        add_hist(r, hist[pi]);
      } else {
        const uint64_t m = r.u64();
        if (m > q.prefixes[pi].expected) corrupt("gathered key count");
        const uint8_t* kp = r.take(m * sizeof(K));
        for (uint64_t i = 0; i < m; ++i)
          keys[pi].push_back(sizeof(K) == 8 ? K(load_u64le(kp + i * 8)) : K(load_u32le(kp + i * 4)));
      }
    }
    r.end();
  }
  res.values.kind = ValueKind::F64;
  res.values.length = 1;
  res.values.bytes.assign(8, 0);
  auto finish = [&](double v) {
    std::memcpy(res.values.bytes.data(), &v, 8);
    return true;
  };
  if (any_nan) return finish(std::numeric_limits<double>::quiet_NaN());
  if (req.round == 1) {
    if (total == 0) return finish(std::numeric_limits<double>::quiet_NaN());
    q.n = total;
    q.prefixes[0].expected = total;
    const fold::QuantileRank rk = fold::quantile_rank(total, plan.op == Op::Median ? 0.5 : plan.q);
    q.targets.push_back(QTarget{false, 0, rk.k});
    if (rk.k + 1 < total) q.targets.push_back(QTarget{false, 0, rk.k + 1});
  } else if (total != q.n) {
    fail("TET_SHARD_MISMATCH", "the shards hold " + std::to_string(total) + " elements, the round request says " +
                                   std::to_string(q.n));
  }
  const fold::QuantileRank rk = fold::quantile_rank(q.n, plan.op == Op::Median ? 0.5 : plan.q);
  const bool want1 = rk.k + 1 < q.n;
  if (q.targets.size() != (want1 ? 2u : 1u)) bad_request("target count disagrees with the element count");
  // advance every pending target
  std::vector<QPrefix> children;
  std::vector<QTarget> nt = q.targets;
  for (size_t ti = 0; ti < nt.size(); ++ti) {
    QTarget& t = nt[ti];
    if (t.resolved) continue;
    const QPrefix& p = q.prefixes[t.prefix];
    if (p.mode == 2) {
      std::vector<K>& g = keys[t.prefix];
      if (g.size() != p.expected) fail("TET_SHARD_MISMATCH", "the shards' values disagree with the round request");
      std::sort(g.begin(), g.end());
      t.resolved = true, t.v = uint64_t(g[size_t(t.v)]);
      continue;
    }
    const std::vector<uint64_t>& h = hist[t.prefix];
    uint64_t sum = 0;
    for (uint64_t c : h) sum += c;
    if (sum != (req.round == 1 ? q.n : p.expected))
      fail("TET_SHARD_MISMATCH", "the shards' values disagree with the round request");
    uint64_t below = 0;
    size_t b = 0;
    while (below + h[b] <= t.v) below += h[b++];
    const uint32_t w = width(p);
    QPrefix c;
    c.plen = p.plen + w;
    c.prefix = (p.plen == 0 ? 0 : (p.prefix << w)) | uint64_t(b);
    c.expected = h[b];
    t.v -= below;
    if (c.plen == bits) {
      t.resolved = true, t.v = c.prefix;
      continue;
    }
    c.mode = c.expected <= kGatherCap ? 2 : 1;
    uint32_t at = 0;
    while (at < children.size() && !(children[at].plen == c.plen && children[at].prefix == c.prefix)) ++at;
    if (at == children.size()) children.push_back(c);
    t.prefix = at;
  }
  bool all = true;
  for (const QTarget& t : nt) all &= t.resolved;
  if (all) {
    const double a = QK::value(K(nt[0].v));
    const double b = want1 ? QK::value(K(nt[1].v)) : 0.0;
    return finish(quantile_finish(a, b, want1, rk.gamma));
  }
  QPayload out{q.n, std::move(nt), std::move(children)};
  Wr w;
  put_q(w, out);
  next = std::move(w.b);
  return false;
}

// ---- histogram (scalar)
template <class S, class T>
std::vector<uint8_t> histogram_body(const QueryPlan& plan, const Selection& sel, TileFetcher& fetcher, uint64_t t0,
                                    uint64_t t1, const Request& req, const ExecContext& ctx, QueryResult& stats) {
  const uint32_t parts = std::max<uint32_t>(1, parts_for(t1 > t0 ? t1 - t0 : 1, plan.threads));
  stats.stats.threads_used = std::max(stats.stats.threads_used, parts);
  Wr w;
  if (!plan.hist_range && req.round == 1) {
    // finite min / max, ties to the earliest element in row-major order (as the engine's scan)
    std::vector<uint8_t> any(parts, 0);
    std::vector<double> lo(parts), hi(parts);
    std::vector<uint64_t> lo_at(parts), hi_at(parts);
    each_run<S, T>(sel, fetcher, t0, t1, plan.threads, ctx, [&](const T* x, size_t n, uint64_t off, uint32_t slot) {
      double l = 0, h = 0;
      if (!fold::finite_range(x, n, l, h)) return;
      if (!any[slot] || l < lo[slot] || (l == lo[slot] && off < lo_at[slot])) lo[slot] = l, lo_at[slot] = off;
      if (!any[slot] || h > hi[slot] || (h == hi[slot] && off < hi_at[slot])) hi[slot] = h, hi_at[slot] = off;
      any[slot] = 1;
    });
    bool a = false;
    double l = 0, h = 0;
    uint64_t la = 0, ha = 0;
    for (uint32_t s = 0; s < parts; ++s) {
      if (!any[s]) continue;
      if (!a || lo[s] < l || (lo[s] == l && lo_at[s] < la)) l = lo[s], la = lo_at[s];
      if (!a || hi[s] > h || (hi[s] == h && hi_at[s] < ha)) h = hi[s], ha = hi_at[s];
      a = true;
    }
    w.u8(a ? 1 : 0), w.f64(l), w.u64(la), w.f64(h), w.u64(ha);
    return std::move(w.b);
  }
  double lo = plan.hist_min, hi = plan.hist_max;
  if (!plan.hist_range) {
    Rd r{req.payload.data(), req.payload.size(), 0, true};
    lo = r.f64(), hi = r.f64();
    r.end();
  }
  const uint32_t bins = plan.bins;
  std::vector<double> edges(size_t(bins) + 1);
  fold::histogram_edges(lo, hi, bins, edges.data());
  std::vector<std::vector<uint64_t>> counts(parts);
  each_run<S, T>(sel, fetcher, t0, t1, plan.threads, ctx, [&](const T* x, size_t n, uint64_t, uint32_t slot) {
    if (counts[slot].empty()) counts[slot].assign(bins, 0);
    fold::histogram_count(x, n, bins, lo, hi, edges.data(), counts[slot].data());
  });
  std::vector<uint64_t> c(bins, 0);
  for (const auto& s : counts)
    if (!s.empty())
      for (uint32_t i = 0; i < bins; ++i) c[i] += s[i];
  put_counts(w, c);
  return std::move(w.b);
}

bool histogram_merge(const QueryPlan& plan, const Request& req, const std::vector<Body>& bodies, QueryResult& res,
                     std::vector<uint8_t>& next) {
  if (!plan.hist_range && req.round == 1) {
    bool any = false;
    double lo = 0, hi = 0;
    uint64_t la = 0, ha = 0;
    for (const Body& b : bodies) {
      Rd r{b.p, b.n, 0, false};
      const uint8_t a = r.u8();
      const double l = r.f64();
      const uint64_t lat = r.u64();
      const double h = r.f64();
      const uint64_t hat = r.u64();
      r.end();
      if (a > 1) corrupt("finite flag");
      if (!a) continue;
      if (!std::isfinite(l) || !std::isfinite(h) || l > h) corrupt("finite range");
      if (!any || l < lo || (l == lo && lat < la)) lo = l, la = lat;
      if (!any || h > hi || (h == hi && hat < ha)) hi = h, ha = hat;
      any = true;
    }
    if (!any) lo = 0, hi = 1;
    fold::histogram_range_fix(lo, hi);
    Wr w;
    w.f64(lo), w.f64(hi);
    next = std::move(w.b);
    return false;
  }
  double lo = plan.hist_min, hi = plan.hist_max;
  if (!plan.hist_range) {
    if (req.round != 2) bad_request("round " + std::to_string(req.round) + " of a histogram");
    Rd r{req.payload.data(), req.payload.size(), 0, true};
    lo = r.f64(), hi = r.f64();
    r.end();
  } else if (req.round != 1) {
    bad_request("a histogram with a range has one round");
  }
  const uint32_t bins = plan.bins;
  std::vector<uint64_t> c(bins, 0);
  for (const Body& b : bodies) {
    Rd r{b.p, b.n, 0, false};
    add_counts(r, c);
    r.end();
  }
  res.hist_edges.resize(size_t(bins) + 1);
  fold::histogram_edges(lo, hi, bins, res.hist_edges.data());
  res.values.kind = ValueKind::U64;
  res.values.length = bins;
  res.values.bytes.assign(uint64_t(bins) * 8, 0);
  for (uint32_t i = 0; i < bins; ++i) store_u64le(res.values.bytes.data() + uint64_t(i) * 8, c[i]);
  return true;
}

// ---- fibers (non-scalar median / quantile / histogram): final values of outputs [o0, o1)
std::vector<uint8_t> fibers_body(const ChunkSource& src, const QueryPlan& plan, uint64_t o0, uint64_t o1,
                                 const ExecContext& ctx, QueryResult& stats) {
  if (o1 <= o0) return {};
  const Outputs out = outputs_of(plan);
  const uint32_t k0 = out.kept[0];
  const uint64_t inner = out.out_len / plan.count[k0];
  const uint64_t a0 = o0 / inner, a1 = (o1 + inner - 1) / inner;
  const QueryPlan sub = narrow(plan, k0, a0, a1);
  QueryResult r = execute(src, sub, ctx);
  stats.stats.chunks_read += r.stats.chunks_read, stats.stats.stored_bytes_read += r.stats.stored_bytes_read;
  stats.stats.threads_used = std::max(stats.stats.threads_used, r.stats.threads_used);
  const uint64_t first = (o0 - a0 * inner) * out.width * 8, len = (o1 - o0) * out.width * 8;
  if (!span_within(first, len, r.values.bytes.size())) fail("TET_INTERNAL", "fiber slice outside the sub-result");
  return std::vector<uint8_t>(r.values.bytes.begin() + ptrdiff_t(first), r.values.bytes.begin() + ptrdiff_t(first + len));
}

bool fibers_merge(const QueryPlan& plan, const Request& req, const std::vector<Body>& bodies, QueryResult& res) {
  if (req.round != 1) bad_request("this op has one round");
  const Outputs out = outputs_of(plan);
  uint64_t total;
  if (mul_overflows(out.out_len, out.width, &total) || total > (uint64_t(1) << 40)) corrupt("output size");
  res.values.kind = plan.op == Op::Histogram ? ValueKind::U64 : ValueKind::F64;
  res.values.length = total;
  res.values.bytes.assign(size_t(total * 8), 0);
  for (const Body& b : bodies) {
    const uint64_t want = (b.u1 - b.u0) * out.width * 8;
    if (b.n != want) corrupt("a fiber body of " + std::to_string(b.n) + " bytes, its outputs need " + std::to_string(want));
    if (b.n) std::memcpy(res.values.bytes.data() + b.u0 * out.width * 8, b.p, b.n);
  }
  for (uint32_t a : out.kept) res.reduced_shape.push_back(plan.count[a]);
  return true;
}

// ---- covariance / correlation: co-moment states of observation blocks [u0, u1)
std::vector<uint8_t> covariance_body(const ChunkSource& src, const QueryPlan& plan, uint64_t u0, uint64_t u1,
                                     const ExecContext& ctx, QueryResult& stats) {
  if (u1 <= u0) return {};
  const CovGeom g = cov_geom(plan);
  const uint64_t B = comoment::block_obs(g.order);
  const QueryPlan sub = narrow(plan, g.obs_axis, u0 * B, std::min(g.nobs, u1 * B));
  QueryResult st;
  const std::vector<double> states = covariance_unit_states(src, sub, ctx, st);
  stats.stats.chunks_read += st.stats.chunks_read, stats.stats.stored_bytes_read += st.stats.stored_bytes_read;
  stats.stats.threads_used = std::max(stats.stats.threads_used, st.stats.threads_used);
  if (states.size() != (u1 - u0) * comoment::state_doubles(g.order)) fail("TET_INTERNAL", "co-moment state count");
  std::vector<uint8_t> b(states.size() * 8);
  for (size_t i = 0; i < states.size(); ++i) {
    uint64_t u;
    std::memcpy(&u, &states[i], 8);
    store_u64le(b.data() + i * 8, u);
  }
  return b;
}

bool covariance_merge(const QueryPlan& plan, const Request& req, const std::vector<Body>& bodies, QueryResult& res) {
  if (req.round != 1) bad_request("this op has one round");
  const CovGeom g = cov_geom(plan);
  const uint64_t sd = comoment::state_doubles(g.order);
  uint64_t cells;
  if (mul_overflows(g.order, g.order, &cells) || cells > (uint64_t(1) << 32)) corrupt("covariance order");
  std::vector<double> states;
  states.reserve(size_t(g.units * sd));
  for (const Body& b : bodies) {
    const uint64_t want = (b.u1 - b.u0) * sd * 8;
    if (b.n != want) corrupt("a co-moment body of " + std::to_string(b.n) + " bytes, its units need " + std::to_string(want));
    for (size_t i = 0; i < b.n; i += 8) {
      const uint64_t u = load_u64le(b.p + i);
      double v;
      std::memcpy(&v, &u, 8);
      states.push_back(v);
    }
  }
  res.values.kind = ValueKind::F64;
  res.values.length = cells;
  res.values.bytes.assign(size_t(cells * 8), 0);
  comoment::merge_finalize(states.data(), g.units, g.order, plan.op == Op::Correlation,
                           reinterpret_cast<double*>(res.values.bytes.data()));
  res.cov_order = g.order;
  return true;
}

}  // namespace

uint32_t mode_of(const QueryPlan& p) {
  if (p.op == Op::Covariance || p.op == Op::Correlation) return kCovariance;
  if (!is_scalar(p)) return kFibers;
  return p.op == Op::Histogram ? kHistogram : kQuantile;
}

const char* mode_name(uint32_t mode) {
  switch (mode) {
    case kQuantile: return "quantile";
    case kHistogram: return "histogram";
    case kFibers: return "per-output";
    default: return "covariance";
  }
}

uint64_t unit_count(const QueryPlan& p, const Selection& sel) {
  switch (mode_of(p)) {
    case kQuantile: case kHistogram: return sel.tiles;
    case kFibers: return outputs_of(p).out_len;
    default: return cov_geom(p).units;
  }
}

std::vector<uint8_t> encode_request(const Request& r) {
  Wr w;
  w.u32(kRequestMagic), w.u32(kRequestVersion);
  w.u64(r.fingerprint), w.u64(r.file_id);
  w.u32(r.shards), w.u32(r.round), w.u32(r.mode), w.u32(uint32_t(r.payload.size()));
  w.bytes(r.payload.data(), r.payload.size());
  w.u32(crc32(w.b.data(), w.b.size()));
  return std::move(w.b);
}

Request decode_request(const uint8_t* p, size_t n) {
  constexpr size_t kFixed = 40;
  if (p == nullptr || n < kFixed + 4) bad_request("it holds " + std::to_string(n) + " bytes, fewer than its 44-byte frame");
  if (n > (size_t(1) << 30)) bad_request("it is too large");
  Rd r{p, n - 4, 0, true};
  if (r.u32() != kRequestMagic) bad_request("it does not start with 'TPR1'");
  const uint32_t version = r.u32();
  if (version != kRequestVersion)
    bad_request("version " + std::to_string(version) + " (this build reads " + std::to_string(kRequestVersion) + ")");
  Request q;
  q.fingerprint = r.u64(), q.file_id = r.u64();
  q.shards = r.u32(), q.round = r.u32(), q.mode = r.u32();
  const uint32_t len = r.u32();
  if (uint64_t(len) + kFixed + 4 != n) bad_request("its length disagrees with its payload length");
  if (crc32(p, n - 4) != load_u32le(p + n - 4)) bad_request("checksum mismatch (the bytes were changed or truncated)");
  if (q.round < 2 || q.round > kMaxRounds) bad_request("round " + std::to_string(q.round));
  if (q.mode < kQuantile || q.mode > kCovariance) bad_request("mode " + std::to_string(q.mode));
  if (q.shards == 0) bad_request("shard count 0");
  const uint8_t* pl = r.take(len);
  q.payload.assign(pl, pl + len);
  q.bytes.assign(p, p + n);
  return q;
}

std::vector<uint8_t> shard_body(const ChunkSource& src, const QueryPlan& plan, const Selection& sel, TileFetcher& fetcher,
                                uint64_t u0, uint64_t u1, const Request& req, const ExecContext& ctx, QueryResult& stats) {
  const uint32_t mode = mode_of(plan);
  if (req.round > 1 && req.mode != mode) fail("TET_SHARD_MISMATCH", "the round request is for another kind of query");
  if (req.round > 1 && (mode == kFibers || mode == kCovariance || (mode == kHistogram && plan.hist_range)))
    fail("TET_SHARD_MISMATCH", std::string("a ") + mode_name(mode) + " query has one round; this request asks for round " +
                                   std::to_string(req.round));
  if (mode == kHistogram && !plan.hist_range && req.round > 2)
    fail("TET_SHARD_MISMATCH", "a histogram without a range has two rounds");
  std::vector<uint8_t> out;
  if (mode == kFibers) return fibers_body(src, plan, u0, u1, ctx, stats);
  if (mode == kCovariance) return covariance_body(src, plan, u0, u1, ctx, stats);
  with_dtype(sel.dataset.dtype, [&](auto* s, auto* t) {
    using S = std::remove_pointer_t<decltype(s)>;
    using T = std::remove_pointer_t<decltype(t)>;
    if (mode == kQuantile) out = quantile_body<S, T>(plan, sel, fetcher, u0, u1, req, ctx, stats);
    else out = histogram_body<S, T>(plan, sel, fetcher, u0, u1, req, ctx, stats);
  });
  return out;
}

bool merge(const QueryPlan& plan, const DatasetInfo& d, const Request& req, const std::vector<Body>& bodies,
           QueryResult& res, std::vector<uint8_t>& next_payload) {
  const uint32_t mode = mode_of(plan);
  if (req.round > 1 && req.mode != mode) corrupt("the round request is for another kind of query");
  switch (mode) {
    case kFibers: return fibers_merge(plan, req, bodies, res);
    case kCovariance: return covariance_merge(plan, req, bodies, res);
    case kHistogram: return histogram_merge(plan, req, bodies, res, next_payload);
    default: break;
  }
  bool done = false;
  with_dtype(d.dtype, [&](auto* s, auto* t) {
    using S = std::remove_pointer_t<decltype(s)>;
    using T = std::remove_pointer_t<decltype(t)>;
    done = quantile_merge<S, T>(plan, req, bodies, res, next_payload);
  });
  return done;
}

}  // namespace rounds
}  // namespace exec
}  // namespace tet
