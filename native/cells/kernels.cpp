#include "cells/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define TET_RADIX_SIMD 1
#include <immintrin.h>
#define TET_RADIX_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512ifma,bmi2")))
#endif

#include "cells/bitpack.h"
#include "cells/column.h"
#include "cells/encoding.h"
#include "cells/numeric.h"
#include "cells/str_codec.h"
#include "tet/error.h"
#include "util/bits.h"

namespace tet::cells {

namespace {

constexpr uint32_t kMaskWords = kBlockLanes / 64;

// ---- masks ---------------------------------------------------------------------------------

const uint64_t* validity_words(const Cell& b) { return reinterpret_cast<const uint64_t*>(b.validity()); }

// The bits of mask word w that fall inside [0, len).
uint64_t rows_in_word(uint64_t len, uint32_t w) {
  const uint64_t lo = uint64_t(w) * 64;
  if (len >= lo + 64) return ~uint64_t(0);
  if (len <= lo) return 0;
  return (uint64_t(1) << (len - lo)) - 1;
}

// out &= present rows of b.
void keep_present(const Cell& b, BlockMask& out) {
  const uint64_t* v = validity_words(b);
  for (uint32_t w = 0; w < kMaskWords; ++w) out.words[w] &= (v ? v[w] : ~uint64_t(0)) & rows_in_word(b.len, w);
}

Resolved resolve_as(const Cell& b, Resolved r, BlockMask& out) {
  std::memset(out.words, r == Resolved::AllTrue ? 0xff : 0, sizeof out.words);
  keep_present(b, out);
  return r;
}

template <class F>
void for_each_selected(const BlockMask& m, uint64_t len, F&& f) {
  for (uint32_t w = 0; w < kMaskWords; ++w) {
    uint64_t bits = m.words[w] & rows_in_word(len, w);
    while (bits) {
      f(w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  }
}

// The selected rows into rows[] (returns how many), each one's payload byte at_byte(row)
// requested as it is listed: a sparse filter reads a few words scattered over a payload that the
// where pass read a while ago (out of cache by now), so the loads that follow overlap instead of
// waiting one miss at a time.
template <class F>
uint32_t selected_rows_prefetched(const BlockMask& m, uint64_t len, const uint8_t* payload, uint16_t* rows, F&& at_byte) {
  uint32_t n = 0;
  for_each_selected(m, len, [&](uint32_t row) {
    __builtin_prefetch(payload + at_byte(row));
    rows[n++] = uint16_t(row);
  });
  return n;
}

// The last row a mask selects, or -1.
int64_t last_selected(const BlockMask& m, uint64_t len) {
  for (int w = kMaskWords - 1; w >= 0; --w) {
    const uint64_t bits = m.words[w] & rows_in_word(len, static_cast<uint32_t>(w));
    if (bits) return int64_t(w) * 64 + 63 - __builtin_clzll(bits);
  }
  return -1;
}

// ---- comparisons ---------------------------------------------------------------------------

template <CmpOp Op, class T>
inline bool holds(T x, T c) {
  if constexpr (Op == CmpOp::Eq) return x == c;
  else if constexpr (Op == CmpOp::Ne) return !(x == c);  // IEEE: NaN is unequal to everything
  else if constexpr (Op == CmpOp::Lt) return x < c;
  else if constexpr (Op == CmpOp::Le) return x <= c;
  else if constexpr (Op == CmpOp::Gt) return x > c;
  else return x >= c;
}

// Calls f(std::integral_constant<CmpOp, op>) so loops are specialised per operator.
template <class F>
void with_op(CmpOp op, F&& f) {
  switch (op) {
    case CmpOp::Eq: f(std::integral_constant<CmpOp, CmpOp::Eq>{}); break;
    case CmpOp::Ne: f(std::integral_constant<CmpOp, CmpOp::Ne>{}); break;
    case CmpOp::Lt: f(std::integral_constant<CmpOp, CmpOp::Lt>{}); break;
    case CmpOp::Le: f(std::integral_constant<CmpOp, CmpOp::Le>{}); break;
    case CmpOp::Gt: f(std::integral_constant<CmpOp, CmpOp::Gt>{}); break;
    case CmpOp::Ge: f(std::integral_constant<CmpOp, CmpOp::Ge>{}); break;
  }
}

// What bounds alone prove, when every present value lies in [lo, hi] (no NaN among them).
template <class T>
std::optional<Resolved> resolve_by_bounds(CmpOp op, T c, T lo, T hi) {
  const bool below = c < lo, above = hi < c, single = lo == c && hi == c;
  switch (op) {
    case CmpOp::Eq: if (below || above) return Resolved::AllFalse; if (single) return Resolved::AllTrue; break;
    case CmpOp::Ne: if (below || above) return Resolved::AllTrue; if (single) return Resolved::AllFalse; break;
    case CmpOp::Lt: if (above) return Resolved::AllTrue; if (!(lo < c)) return Resolved::AllFalse; break;
    case CmpOp::Le: if (!(c < hi)) return Resolved::AllTrue; if (below) return Resolved::AllFalse; break;
    case CmpOp::Gt: if (below) return Resolved::AllTrue; if (!(c < hi)) return Resolved::AllFalse; break;
    case CmpOp::Ge: if (!(lo < c)) return Resolved::AllTrue; if (above) return Resolved::AllFalse; break;
  }
  return std::nullopt;
}

// Bits j = holds<Op>(x[j], c) of 64 lanes: the comparisons into 0x00 / 0xff bytes (a loop over a
// plain array, which vectorises), then bytes into bits: movemask 16 at a time (SSE2, every
// x86-64), elsewhere 8 at a time by multiplying 0/1 bytes by 0x0102040810204080 (each bit lands
// once in the top byte, so no carries).
template <CmpOp Op, class T>
inline uint64_t compare64(const T* __restrict x, T c) {
  alignas(16) uint8_t hit[64];
  for (uint32_t j = 0; j < 64; ++j) hit[j] = uint8_t(0) - uint8_t(holds<Op>(x[j], c));
  uint64_t bits = 0;
#if defined(__SSE2__)
  for (uint32_t k = 0; k < 4; ++k)
    bits |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(hit + 16 * k))))) << (16 * k);
#else
  for (uint32_t k = 0; k < 8; ++k) {
    uint64_t eight;
    std::memcpy(&eight, hit + 8 * k, 8);
    bits |= (((eight & 0x0101010101010101u) * 0x0102040810204080u) >> 56) << (8 * k);
  }
#endif
  return bits;
}

// Mask words over n lanes x[0..n): whole words 64 lanes at a time, the tail word a short loop.
template <CmpOp Op, class T>
void compare_lanes_at(uint32_t n, T c, uint64_t* words, const T* x) {
  uint32_t w = 0;
  for (; (w + 1) * 64 <= n; ++w) words[w] = compare64<Op>(x + w * 64, c);
  if (w * 64 < n) {
    uint64_t bits = 0;
    for (uint32_t j = 0; w * 64 + j < n; ++j) bits |= uint64_t(holds<Op>(x[w * 64 + j], c)) << j;
    words[w] = bits;
  }
}

// The same over computed lanes value(j): each word's 64 values into an array first.
template <CmpOp Op, class T, class Value>
void compare_lanes(uint32_t n, T c, uint64_t* words, Value&& value) {
  uint32_t w = 0;
  for (; (w + 1) * 64 <= n; ++w) {
    T v[64];
    for (uint32_t j = 0; j < 64; ++j) v[j] = value(w * 64 + j);
    words[w] = compare64<Op>(v, c);
  }
  if (w * 64 < n) {
    uint64_t bits = 0;
    for (uint32_t j = 0; w * 64 + j < n; ++j) bits |= uint64_t(holds<Op>(value(w * 64 + j), c)) << j;
    words[w] = bits;
  }
}

// ---- Int helpers ---------------------------------------------------------------------------

// Bounds the header proves for every present row of an Int block.
bool int_bounds(const Cell& b, int64_t* lo, int64_t* hi) {
  if (b.has(attr::kHasZonemap)) {
    *lo = as_i64(b.meta[2]), *hi = as_i64(b.meta[3]);
    return true;
  }
  if (b.enc_v() == Enc::Constant) {
    *lo = *hi = as_i64(b.meta[0]);
    return true;
  }
  if (b.enc_v() == Enc::Sequence) {
    const SequenceSpan s = sequence_span(b);
    *lo = s.lo, *hi = s.hi;
    return !s.wraps;
  }
  return false;
}

// Calls f(const Lane*) with the tier's lanes at their type.
template <class F>
void with_lanes(const IntTier& t, F&& f) {
  switch (t.bits) {
    case 8: f(t.as<uint8_t>()); break;
    case 16: f(t.as<uint16_t>()); break;
    case 32: f(t.as<uint32_t>()); break;
    default: f(t.as<uint64_t>()); break;
  }
}

template <class Lane>
constexpr uint64_t lane_max() { return static_cast<uint64_t>(static_cast<Lane>(~Lane(0))); }

// For's residuals, 64 at a time at the narrowest lane type of the width: f(first_row, lanes, n).
template <class Lane, class F>
void for_each_residual_group(const Cell& b, F&& f) {
  const uint64_t* words = payload_words(b);
  const unsigned w = packed_width(b);
  Lane group[kGroupLanes];
  for (uint32_t g = 0; uint64_t(g) * kGroupLanes < b.len; ++g) {
    unpack_groups(words, w, g, 1, group);
    const uint32_t first = g * kGroupLanes;
    f(first, static_cast<const Lane*>(group), b.len - first < kGroupLanes ? uint32_t(b.len - first) : kGroupLanes);
  }
}

template <class F>
void with_residual_lane(unsigned w, F&& f) {
  if (w <= 8) f(uint8_t{});
  else if (w <= 16) f(uint16_t{});
  else if (w <= 32) f(uint32_t{});
  else f(uint64_t{});
}

uint64_t frame_span(unsigned w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }

// ---- Int sum -------------------------------------------------------------------------------

__int128 sum_tier(const Cell& b, const IntTier& t, uint64_t present) {
  __int128 s = 0;
  if (t.bits < 64) {
    // Narrow lanes: value = offset + lane exactly, a null lane is 0.
    uint64_t lanes = 0;
    with_lanes(t, [&](const auto* l) { for (uint32_t i = 0; i < t.count; ++i) lanes += l[i]; });
    return __int128(t.offset) * present + lanes;
  }
  // Wide lanes: value = offset + lane modulo 2^64. Summed as high (signed) and low 32-bit
  // halves in 64-bit lanes, which vectorises and is exact for ≤ 2^31 rows.
  const uint64_t* l = t.as<uint64_t>();
  const uint64_t off = bits_of(t.offset);
  int64_t high = 0;
  uint64_t low = 0;
  for (uint32_t i = 0; i < t.count; ++i) {
    const uint64_t x = off + l[i];
    high += as_i64(x) >> 32;
    low += x & 0xffffffffu;
  }
  s = __int128(high) * (__int128(1) << 32) + low;
  // Each null lane (0) counted the offset once.
  return s - __int128(t.offset) * (b.len - present);
}

__int128 sum_for(const Cell& b, uint64_t present) {
  __int128 residuals = 0;
  with_residual_lane(packed_width(b), [&](auto lane) {
    using Lane = decltype(lane);
    for_each_residual_group<Lane>(b, [&](uint32_t, const Lane* r, uint32_t n) {
      uint64_t s = 0;  // ≤ 64 residuals of ≤ 64 bits: add in 128 per group
      __int128 wide = 0;
      if constexpr (sizeof(Lane) < 8) {
        for (uint32_t j = 0; j < n; ++j) s += r[j];
        wide = s;
      } else {
        for (uint32_t j = 0; j < n; ++j) wide += r[j];
      }
      residuals += wide;
    });
  });
  return __int128(as_i64(b.meta[0])) * present + residuals;
}

__int128 sum_delta(const Cell& b) {
  const uint8_t* v = b.validity();
  __int128 s = 0;
  delta_scan(b, static_cast<uint32_t>(b.len), [&](uint32_t row, uint64_t x) {
    s += as_i64(x & (uint64_t(0) - uint64_t(row_valid(v, row))));
  });
  return s;
}

// ---- Float helpers -------------------------------------------------------------------------

// The block's f64 lanes: in place for Plain, else decoded into the scratch.
const double* float_lanes(const Cell& b, TierScratch& s) {
  if (b.enc_v() == Enc::Plain) return reinterpret_cast<const double*>(b.payload);
  double* out = s.as<double>();
  decode_rows(b, 0, static_cast<uint32_t>(b.len), out);
  return out;
}

const uint8_t* bool_lanes(const Cell& b, TierScratch& s) {
  if (b.enc_v() == Enc::Plain) return b.payload;
  uint8_t* out = s.as<uint8_t>();
  decode_rows(b, 0, static_cast<uint32_t>(b.len), out);
  return out;
}

bool float_less(double a, double b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); }

void require(const Cell& b, Physical p, const char* kernel) {
  if (physical_of(b.kind_v()) != p || b.enc_v() == Enc::Directory)
    throw Error(Code::TET_INTERNAL, std::string("cells: ") + kernel + " on a " + kind_name(b.kind_v()) + " " + enc_name(b.enc_v()) + " block");
}

template <class Out>
void push_selected(Out& out, std::vector<uint8_t>* valid_out, typename Out::value_type value, bool present) {
  out.push_back(present ? value : typename Out::value_type(0));
  if (valid_out) valid_out->push_back(present ? 1 : 0);
}

}  // namespace

double canonical_sum(const double* x, uint32_t n) {
  if (n <= 128) {
    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (uint32_t j = 0; j < 8; ++j) a[j] += x[i + j];
    for (uint32_t j = 0; i + j < n; ++j) a[j] += x[i + j];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
  uint32_t half = n / 2;
  half -= half % 8;
  return canonical_sum(x, half) + canonical_sum(x + half, n - half);
}

uint64_t count(const Cell& block) { return valid_count(block); }

// ---- Int -----------------------------------------------------------------------------------

IntSum sum_int(const Cell& b, TierScratch& s) {
  require(b, Physical::Int, "sum_int");
  IntSum r;
  r.valid = valid_count(b);
  switch (b.enc_v()) {
    case Enc::Constant: r.sum = __int128(as_i64(b.meta[0])) * r.valid; break;
    case Enc::For: r.sum = sum_for(b, r.valid); break;
    case Enc::Delta: r.sum = sum_delta(b); break;
    default: r.sum = sum_tier(b, decode_tier(b, 0, static_cast<uint32_t>(b.len), s), r.valid); break;
  }
  return r;
}

IntMinMax min_max_int(const Cell& b, TierScratch& s) {
  require(b, Physical::Int, "min_max_int");
  IntMinMax r;
  r.valid = valid_count(b);
  if (r.valid == 0) return r;
  // Header bounds are exact for a zone map and a Constant; a Sequence's span is exact only
  // when every row is present.
  const bool exact_bounds = b.has(attr::kHasZonemap) || b.enc_v() == Enc::Constant ||
                            (b.enc_v() == Enc::Sequence && !b.has(attr::kHasNulls));
  if (exact_bounds && int_bounds(b, &r.min, &r.max)) return r;
  const IntTier t = decode_tier(b, 0, static_cast<uint32_t>(b.len), s);
  const uint8_t* v = b.validity();
  if (t.bits < 64) {
    with_lanes(t, [&](const auto* l) {
      using Lane = std::remove_const_t<std::remove_pointer_t<decltype(l)>>;
      Lane lo = static_cast<Lane>(lane_max<Lane>()), hi = 0;
      for (uint32_t i = 0; i < t.count; ++i) {
        const bool p = row_valid(v, i);
        const Lane x = l[i];
        lo = p && x < lo ? x : lo;
        hi = p && x > hi ? x : hi;
      }
      r.min = t.offset + int64_t(lo);
      r.max = t.offset + int64_t(hi);
    });
    return r;
  }
  const uint64_t* l = t.as<uint64_t>();
  const uint64_t off = bits_of(t.offset);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < t.count; ++i) {
    const bool p = row_valid(v, i);
    const int64_t x = as_i64(off + l[i]);
    lo = p && x < lo ? x : lo;
    hi = p && x > hi ? x : hi;
  }
  r.min = lo, r.max = hi;
  return r;
}

// ---- comparison without decoding: eight lanes a step (AVX-512) ----------------------------
//
// A comparison needs each row's digit only against the constant. Eight lanes are picked out
// of one masked 64-byte load (a group of eight lanes starts on a byte: 8·w bits) by a byte
// permutation and a shift each; each digit is peeled off all eight at once by an exact
// multiply-high division (IFMA's 52-bit products: see radix_compare) and compared; the eight
// lanes' k digit masks interleave into 8k row bits by bit deposit. Lanes of more than 51 bits,
// more than 8 digits a lane, or a CPU without AVX-512 IFMA and VBMI: compare_int decodes a
// tier instead.

namespace {

// f(std::integral_constant<unsigned, k>) for k digits a lane in 2..8, else f(integral_constant<0>).
template <class F>
void with_radix_k(unsigned k, F&& f) {
  switch (k) {
    case 2: return f(std::integral_constant<unsigned, 2>());
    case 3: return f(std::integral_constant<unsigned, 3>());
    case 4: return f(std::integral_constant<unsigned, 4>());
    case 5: return f(std::integral_constant<unsigned, 5>());
    case 6: return f(std::integral_constant<unsigned, 6>());
    case 7: return f(std::integral_constant<unsigned, 7>());
    case 8: return f(std::integral_constant<unsigned, 8>());
    default: return f(std::integral_constant<unsigned, 0>());
  }
}

// Lanes [lane0, lanes) one at a time: rows below len only.
template <CmpOp Op>
void compare_lanes_scalar(const RadixFrame& f, const uint8_t* area, uint64_t lane0, uint64_t lanes, uint32_t len,
                          uint64_t rc, uint64_t* words) {
  uint64_t d[str::kMaxLaneBits];
  for (uint64_t j = lane0; j < lanes; ++j) {
    uint64_t x = str::unpack_lane(area, j, f.width);
    for (unsigned t = 0; t + 1 < f.k; ++t) d[t] = radix_peel(f, x);
    d[f.k - 1] = x;
    for (unsigned t = 0; t < f.k; ++t) {
      const uint64_t row = j * f.k + t;
      if (row < len) words[row >> 6] |= uint64_t(holds<Op>(d[t], rc)) << (row & 63);
    }
  }
}

#ifdef TET_RADIX_SIMD
bool radix_simd_cpu() {
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") &&
           __builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("bmi2");
  }();
  return ok;
}

template <CmpOp Op>
constexpr int kPredicate = Op == CmpOp::Eq   ? _MM_CMPINT_EQ
                           : Op == CmpOp::Ne ? _MM_CMPINT_NE
                           : Op == CmpOp::Lt ? _MM_CMPINT_LT
                           : Op == CmpOp::Le ? _MM_CMPINT_LE
                           : Op == CmpOp::Gt ? _MM_CMPINT_NLE
                                             : _MM_CMPINT_NLT;

// The lowest digit of eight lanes x < 2^w (w ≤ 51); x becomes ⌊x / R⌋ = ⌊x · m / 2^s⌋, the
// 52-bit high product (IFMA) shifted right by s - 52 (exact: see radix_compare).
TET_RADIX_TARGET inline __m512i peel8(__m512i& x, __m512i m, __m512i shift, __m512i r) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i q = _mm512_maskz_srlv_epi64(__mmask8(0xff), _mm512_madd52hi_epu64(zero, x, m), shift);
  const __m512i d = _mm512_sub_epi64(x, _mm512_madd52lo_epu64(zero, q, r));
  x = q;
  return d;
}

// Groups [0, groups) of eight lanes, every row below the block's length; area holds `avail` bytes.
template <unsigned K, CmpOp Op>
TET_RADIX_TARGET void compare_groups(const uint8_t* area, uint64_t avail, unsigned w, uint64_t groups, uint64_t radix,
                                     uint64_t magic, unsigned s, uint64_t rc, uint64_t* words) {
  alignas(64) uint8_t idx[64];
  alignas(64) uint64_t shift[8];
  for (unsigned i = 0; i < 8; ++i) {
    for (unsigned b = 0; b < 8; ++b) idx[i * 8 + b] = uint8_t(((i * w) >> 3) + b);
    shift[i] = (i * w) & 7;
  }
  const __m512i vidx = _mm512_load_si512(idx), vshift = _mm512_load_si512(shift);
  const __m512i vmask = _mm512_set1_epi64(int64_t(str::lane_mask(w))), vr = _mm512_set1_epi64(int64_t(radix)),
                vc = _mm512_set1_epi64(int64_t(rc));
  const __m512i vm = _mm512_set1_epi64(int64_t(magic)), vs = _mm512_set1_epi64(int64_t(s - 52));
  uint64_t spread = 0;  // bits 0, K, ..., 7K
  for (unsigned i = 0; i < 8; ++i) spread |= uint64_t(1) << (i * K);
  for (uint64_t g = 0; g < groups; ++g) {
    const uint64_t at = g * w, left = avail - at;
    const __mmask64 load = left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
    const __m512i raw = _mm512_maskz_loadu_epi8(load, area + at);
    // (the zero-masked forms: GCC 12's plain ones warn of an uninitialised operand)
    const __m512i picked = _mm512_maskz_permutexvar_epi8(~__mmask64(0), vidx, raw);
    __m512i x = _mm512_and_si512(_mm512_maskz_srlv_epi64(__mmask8(0xff), picked, vshift), vmask);
    uint64_t bits = 0;
#pragma GCC unroll 8
    for (unsigned t = 0; t + 1 < K; ++t) {
      const __m512i d = peel8(x, vm, vs, vr);
      bits |= _pdep_u64(_mm512_cmp_epu64_mask(d, vc, kPredicate<Op>), spread << t);
    }
    bits |= _pdep_u64(_mm512_cmp_epu64_mask(x, vc, kPredicate<Op>), spread << (K - 1));
    const uint64_t row = g * 8 * K, word = row >> 6, off = row & 63;
    words[word] |= bits << off;
    if (off != 0 && off + 8 * K > 64) words[word + 1] |= bits >> (64 - off);
  }
}
#endif

}  // namespace

bool radix_compare_simd(const Cell& b) {
#ifdef TET_RADIX_SIMD
  const RadixFrame f = radix_frame(b);
  return radix_simd_cpu() && f.width <= 51 && f.k <= 8;
#else
  (void)b;
  return false;
#endif
}

void radix_compare(const Cell& b, CmpOp op, uint64_t rc, uint64_t* words, bool simd) {
  const RadixFrame f = radix_frame(b);
  const uint64_t lanes = (b.len + f.k - 1) / f.k;
  uint64_t groups = 0;  // of eight lanes, by AVX-512
#ifdef TET_RADIX_SIMD
  // ⌊x / R⌋ = ⌊x · m / 2^s⌋ for every x < 2^w with L = ⌈log2 R⌉, s = max(52, w + L) and
  // m = ⌈2^s / R⌉ (Granlund and Montgomery: m·R - 2^s < R ≤ 2^(s - w), so the product errs by
  // less than 1/R); m < 2^52 as w ≤ 51, so the 52-bit multiplies of IFMA hold it.
  unsigned s = 0;
  uint64_t magic = 0;
  if (simd && radix_compare_simd(b)) {
    groups = b.len / f.k / 8;
    s = std::max(52u, f.width + bit_width(f.radix - 1));
    magic = uint64_t((((unsigned __int128)1 << s) + f.radix - 1) / f.radix);
  }
#else
  (void)simd;
#endif
  with_op(op, [&](auto o) {
    constexpr CmpOp Op = decltype(o)::value;
#ifdef TET_RADIX_SIMD
    if (groups)
      with_radix_k(f.k, [&](auto kc) {
        constexpr unsigned K = decltype(kc)::value;
        if constexpr (K >= 2)
          compare_groups<K, Op>(b.payload, str::packed_bytes(lanes, f.width), f.width, groups, f.radix, magic, s, rc, words);
      });
#endif
    compare_lanes_scalar<Op>(f, b.payload, groups * 8, lanes, uint32_t(b.len), rc, words);
  });
}

Resolved compare_int(const Cell& b, CmpOp op, int64_t c, BlockMask& out, TierScratch& s, IntTier* decoded) {
  require(b, Physical::Int, "compare_int");
  if (decoded) decoded->count = 0;
  if (valid_count(b) == 0) return resolve_as(b, Resolved::AllFalse, out);
  int64_t lo, hi;
  if (int_bounds(b, &lo, &hi))
    if (auto r = resolve_by_bounds(op, c, lo, hi)) return resolve_as(b, *r, out);
  const uint32_t n = static_cast<uint32_t>(b.len);
  std::memset(out.words, 0, sizeof out.words);
  if (b.enc_v() == Enc::For) {
    // The frame [base, base + 2^w) bounds every value: outside it the answer is known.
    const __int128 base = as_i64(b.meta[0]), cc = c;
    const unsigned w = packed_width(b);
    if (auto r = resolve_by_bounds<__int128>(op, cc, base, base + frame_span(w))) return resolve_as(b, *r, out);
    const uint64_t rebased = static_cast<uint64_t>(cc - base);  // in [0, 2^w): compare residuals only
    with_residual_lane(w, [&](auto lane) {
      using Lane = decltype(lane);
      const Lane rc = static_cast<Lane>(rebased);
      with_op(op, [&](auto o) {
        for_each_residual_group<Lane>(b, [&](uint32_t first, const Lane* r, uint32_t m) {
          compare_lanes_at<decltype(o)::value>(m, rc, out.words + first / 64, r);
        });
      });
    });
  } else if (b.enc_v() == Enc::ForRadix && radix_compare_simd(b)) {
    // The frame [base, base + R) bounds every value; inside it, residual digits are compared.
    const __int128 base = as_i64(b.meta[0]), cc = c;
    if (auto r = resolve_by_bounds<__int128>(op, cc, base, base + __int128(radix_frame(b).radix) - 1)) return resolve_as(b, *r, out);
    radix_compare(b, op, static_cast<uint64_t>(cc - base), out.words);
  } else if (b.enc_v() == Enc::Delta) {
    with_op(op, [&](auto o) {
      delta_scan(b, n, [&](uint32_t row, uint64_t x) {
        out.words[row >> 6] |= uint64_t(holds<decltype(o)::value>(as_i64(x), c)) << (row & 63);
      });
    });
  } else {
    const IntTier t = decode_tier(b, 0, n, s);
    if (decoded) *decoded = t;
    if (t.bits < 64) {
      const __int128 off = t.offset, cc = c;
      with_lanes(t, [&](const auto* l) {
        using Lane = std::remove_const_t<std::remove_pointer_t<decltype(l)>>;
        if (auto r = resolve_by_bounds<__int128>(op, cc, off, off + lane_max<Lane>())) {
          resolve_as(b, *r, out);
          return;
        }
        const Lane rc = static_cast<Lane>(static_cast<uint64_t>(cc - off));
        with_op(op, [&](auto o) { compare_lanes_at<decltype(o)::value>(n, rc, out.words, l); });
      });
    } else {
      const uint64_t* l = t.as<uint64_t>();
      const uint64_t off = bits_of(t.offset);
      with_op(op, [&](auto o) {
        compare_lanes<decltype(o)::value>(n, c, out.words, [&](uint32_t i) { return as_i64(off + l[i]); });
      });
    }
  }
  keep_present(b, out);
  return Resolved::Decoded;
}

void filter_int(const Cell& b, const BlockMask& mask, std::vector<int64_t>& out, TierScratch& s,
                std::vector<uint8_t>* valid_out) {
  require(b, Physical::Int, "filter_int");
  const uint8_t* v = b.validity();
  switch (b.enc_v()) {
    case Enc::For: {
      const uint64_t* words = payload_words(b);
      const unsigned w = packed_width(b);
      const uint64_t base = b.meta[0];
      uint16_t rows[kBlockLanes];
      const uint32_t ns = selected_rows_prefetched(mask, b.len, b.payload, rows, [&](uint32_t row) { return (uint64_t(row) * w) >> 3; });
      for (uint32_t i = 0; i < ns; ++i)
        push_selected(out, valid_out, as_i64(base + residual_at(words, w, rows[i])), row_valid(v, rows[i]));
      return;
    }
    case Enc::ForRadix: {
      // A few selected rows (up to a quarter): each row's digit peeled off its lane (lane = row / k
      // as row · ⌈2^20 / k⌉ >> 20, exact for rows < 2^11 and k < 2^9); more: the whole block.
      uint32_t selected = 0;
      for (uint32_t k = 0; k < kMaskWords; ++k) selected += tet::popcount64(mask.words[k] & rows_in_word(b.len, k));
      if (uint64_t(selected) * 4 >= b.len) break;
      const RadixFrame f = radix_frame(b);
      const uint64_t base = b.meta[0];
      const uint64_t per = ((uint64_t(1) << 20) + f.k - 1) / f.k;
      uint16_t rows[kBlockLanes];
      const uint32_t ns = selected_rows_prefetched(mask, b.len, b.payload, rows,
                                                   [&](uint32_t row) { return (((row * per) >> 20) * f.width) >> 3; });
      auto gather = [&](auto digit_of) {
        for (uint32_t i = 0; i < ns; ++i) {
          const uint32_t row = rows[i], lane = uint32_t((row * per) >> 20);
          const uint64_t x = str::unpack_lane(b.payload, lane, f.width);
          push_selected(out, valid_out, as_i64(base + digit_of(x, row - lane * f.k)), row_valid(v, row));
        }
      };
      // A row's digit index is as random as the rows: peeling exactly that many digits is a
      // mispredicted branch a row. Up to 8 digits a lane every digit is peeled (a fixed count:
      // independent multiplies across rows) and the row's one picked; wider lanes peel to it.
      with_radix_k(f.k, [&](auto kc) {
        constexpr unsigned K = decltype(kc)::value;
        if constexpr (K == 0) {
          gather([&](uint64_t x, uint32_t t) {
            for (uint32_t j = 0; j < t; ++j) radix_peel(f, x);
            return radix_peel(f, x);
          });
        } else {
          gather([&](uint64_t x, uint32_t t) {
            uint64_t d[K];
            for (unsigned j = 0; j + 1 < K; ++j) d[j] = radix_peel(f, x);
            d[K - 1] = x;
            return d[t];
          });
        }
      });
      return;
    }
    case Enc::Delta: {
      const int64_t last = last_selected(mask, b.len);
      delta_scan(b, static_cast<uint32_t>(last + 1), [&](uint32_t row, uint64_t x) {
        if (mask.test(row)) push_selected(out, valid_out, as_i64(x), row_valid(v, row));
      });
      return;
    }
    default: break;
  }
  filter_int_tier(b, decode_tier(b, 0, static_cast<uint32_t>(b.len), s), mask, out, valid_out);
}

void filter_int_tier(const Cell& b, const IntTier& t, const BlockMask& mask, std::vector<int64_t>& out,
                     std::vector<uint8_t>* valid_out) {
  if (t.count != b.len) throw Error(Code::TET_INTERNAL, "filter_int_tier: the tier is not the whole block");
  const uint8_t* v = b.validity();
  const uint64_t off = bits_of(t.offset);
  if (valid_out || v) {
    with_lanes(t, [&](const auto* l) {
      for_each_selected(mask, b.len, [&](uint32_t row) {
        push_selected(out, valid_out, as_i64(off + uint64_t(l[row])), row_valid(v, row));
      });
    });
    return;
  }
  // Every row present, no validity wanted: the values straight into their places.
  uint32_t n = 0;
  for (uint32_t k = 0; k < kMaskWords; ++k) n += tet::popcount64(mask.words[k] & rows_in_word(b.len, k));
  const size_t at = out.size();
  out.resize(at + n);
  int64_t* o = out.data() + at;
  with_lanes(t, [&](const auto* l) {
    for_each_selected(mask, b.len, [&](uint32_t row) { *o++ = as_i64(off + uint64_t(l[row])); });
  });
}

// ---- Float ---------------------------------------------------------------------------------

FloatSum sum_float(const Cell& b, TierScratch& s) {
  require(b, Physical::Float, "sum_float");
  FloatSum r;
  r.valid = valid_count(b);
  r.sum = canonical_sum(float_lanes(b, s), static_cast<uint32_t>(b.len));
  return r;
}

FloatMinMax min_max_float(const Cell& b, TierScratch& s) {
  require(b, Physical::Float, "min_max_float");
  FloatMinMax r;
  const uint64_t present = valid_count(b);
  if (present == 0) return r;
  if (b.has(attr::kHasZonemap)) {
    r.nans = b.meta[1];
    r.numbers = present - r.nans;
    r.min = as_f64(b.meta[2]), r.max = as_f64(b.meta[3]);
    return r;
  }
  if (b.enc_v() == Enc::Constant) {
    const double x = as_f64(b.meta[0]);
    if (std::isnan(x)) r.nans = present;
    else r.numbers = present, r.min = r.max = x;
    return r;
  }
  const double* x = float_lanes(b, s);
  const uint8_t* v = b.validity();
  for (uint32_t i = 0; i < b.len; ++i) {
    if (!row_valid(v, i)) continue;
    if (std::isnan(x[i])) {
      ++r.nans;
      continue;
    }
    if (r.numbers++ == 0) r.min = r.max = x[i];
    if (float_less(x[i], r.min)) r.min = x[i];
    if (float_less(r.max, x[i])) r.max = x[i];
  }
  return r;
}

Resolved compare_float(const Cell& b, CmpOp op, double c, BlockMask& out, TierScratch& s) {
  require(b, Physical::Float, "compare_float");
  const uint64_t present = valid_count(b);
  if (present == 0) return resolve_as(b, Resolved::AllFalse, out);
  const Resolved unequal_everywhere = op == CmpOp::Ne ? Resolved::AllTrue : Resolved::AllFalse;
  const uint64_t nans = b.enc_v() == Enc::Constant && std::isnan(as_f64(b.meta[0])) ? present : b.meta[1];
  if (std::isnan(c) || nans == present) return resolve_as(b, unequal_everywhere, out);
  double lo = 0, hi = 0;
  bool bounded = false;
  if (b.has(attr::kHasZonemap)) lo = as_f64(b.meta[2]), hi = as_f64(b.meta[3]), bounded = true;
  else if (b.enc_v() == Enc::Constant) lo = hi = as_f64(b.meta[0]), bounded = true;
  if (bounded) {
    if (auto r = resolve_by_bounds(op, c, lo, hi)) {
      // The bounds speak for the numbers; NaN rows match only `ne`.
      const Resolved nan_rows = unequal_everywhere;
      if (nans == 0 || *r == nan_rows) return resolve_as(b, *r, out);
    }
  }
  const double* x = float_lanes(b, s);
  with_op(op, [&](auto o) {
    compare_lanes_at<decltype(o)::value>(static_cast<uint32_t>(b.len), c, out.words, x);
  });
  for (uint32_t w = static_cast<uint32_t>((b.len + 63) / 64); w < kMaskWords; ++w) out.words[w] = 0;
  keep_present(b, out);
  return Resolved::Decoded;
}

void filter_float(const Cell& b, const BlockMask& mask, std::vector<double>& out, TierScratch& s,
                  std::vector<uint8_t>* valid_out) {
  require(b, Physical::Float, "filter_float");
  const double* x = float_lanes(b, s);
  const uint8_t* v = b.validity();
  for_each_selected(mask, b.len, [&](uint32_t row) { push_selected(out, valid_out, x[row], row_valid(v, row)); });
}

// ---- Bool ----------------------------------------------------------------------------------

IntSum sum_bool(const Cell& b, TierScratch& s) {
  require(b, Physical::Bool, "sum_bool");
  IntSum r;
  r.valid = valid_count(b);
  uint64_t trues = 0;
  if (b.enc_v() == Enc::Constant) {
    trues = b.meta[0] * r.valid;
  } else if (b.enc_v() == Enc::BoolBits) {
    const uint64_t* words = payload_words(b);  // null and past-len bits are 0 (validated)
    for (uint64_t w = 0; w < (b.len + 63) / 64; ++w) trues += static_cast<uint64_t>(tet::popcount64(words[w]));
  } else if (b.enc_v() == Enc::SparseBool) {
    trues = sparse_bool_trues(b);  // header only: the present rows and the exception count
  } else {
    const uint8_t* x = bool_lanes(b, s);
    for (uint32_t i = 0; i < b.len; ++i) trues += x[i];
  }
  r.sum = trues;
  return r;
}

Resolved compare_bool(const Cell& b, CmpOp op, bool c, BlockMask& out, TierScratch& s) {
  require(b, Physical::Bool, "compare_bool");
  if (valid_count(b) == 0) return resolve_as(b, Resolved::AllFalse, out);
  // A bool row is 0 or 1: the comparison is a truth table of two entries.
  bool when_false = false, when_true = false;
  with_op(op, [&](auto o) {
    when_false = holds<decltype(o)::value>(0, int(c));
    when_true = holds<decltype(o)::value>(1, int(c));
  });
  if (when_false == when_true) return resolve_as(b, when_true ? Resolved::AllTrue : Resolved::AllFalse, out);
  if (b.enc_v() == Enc::Constant) return resolve_as(b, (b.meta[0] ? when_true : when_false) ? Resolved::AllTrue : Resolved::AllFalse, out);
  // Exactly one of the two values matches: the mask is the true rows or their complement.
  uint64_t trues[kMaskWords] = {};
  if (b.enc_v() == Enc::BoolBits) {
    std::memcpy(trues, b.payload, (b.len + 63) / 64 * 8);
  } else if (b.enc_v() == Enc::SparseBool) {
    sparse_bool_true_words(b, trues);  // the present rows, flipped at each exception
  } else {
    const uint8_t* x = bool_lanes(b, s);
    for (uint32_t i = 0; i < b.len; ++i) trues[i >> 6] |= uint64_t(x[i] != 0) << (i & 63);
  }
  for (uint32_t w = 0; w < kMaskWords; ++w) out.words[w] = when_true ? trues[w] : ~trues[w];
  keep_present(b, out);
  return Resolved::Decoded;
}

void filter_bool(const Cell& b, const BlockMask& mask, std::vector<uint8_t>& out, TierScratch& s,
                 std::vector<uint8_t>* valid_out) {
  require(b, Physical::Bool, "filter_bool");
  const uint8_t* x = bool_lanes(b, s);
  const uint8_t* v = b.validity();
  for_each_selected(mask, b.len, [&](uint32_t row) { push_selected(out, valid_out, x[row], row_valid(v, row)); });
}

// ---- header probes and set membership --------------------------------------------------

namespace {

// Bounds of every present value of an Int block that the header proves: the zone map, Constant
// or Sequence bounds, narrowed by For's frame [base, base + 2^w).
bool int_range(const Cell& b, __int128* lo, __int128* hi) {
  int64_t l, h;
  bool have = int_bounds(b, &l, &h);
  if (have) *lo = l, *hi = h;
  if (b.enc_v() == Enc::For) {
    const __int128 base = as_i64(b.meta[0]), top = base + frame_span(packed_width(b));
    *lo = have ? std::max(*lo, base) : base;
    *hi = have ? std::min(*hi, top) : top;
    have = true;
  }
  return have;
}

}  // namespace

std::vector<IntSpan> int_spans(const Cell& root) {
  const uint64_t blocks = block_count(root);
  std::vector<IntSpan> out((blocks + kSpanBlocks - 1) / kSpanBlocks);
  for (uint64_t b = 0; b < blocks; ++b) {
    const Cell& c = block_at(root, b);
    IntSpan& s = out[b / kSpanBlocks];
    if (valid_count(c) == 0) continue;
    __int128 lo, hi;
    if (!int_range(c, &lo, &hi)) {
      s.known = false;
      continue;
    }
    s.lo = s.any ? std::min(s.lo, lo) : lo;
    s.hi = s.any ? std::max(s.hi, hi) : hi;
    s.any = true;
  }
  return out;
}

bool int_span_never(const IntSpan& span, CmpOp op, int64_t c) {
  if (!span.known) return false;
  if (!span.any) return true;
  const auto r = resolve_by_bounds<__int128>(op, c, span.lo, span.hi);
  return r && *r == Resolved::AllFalse;
}

namespace {

// The members of an ascending set within [lo, hi].
template <class T, class B>
std::pair<const T*, const T*> members_within(const std::vector<T>& set, B lo, B hi) {
  const T* first = std::lower_bound(set.data(), set.data() + set.size(), lo, [](T a, B v) { return a < v; });
  const T* last = std::upper_bound(first, set.data() + set.size(), hi, [](B v, T a) { return v < a; });
  return {first, last};
}

// A Float block's NaN rows, or the block's bounds over its numbers.
uint64_t float_nans(const Cell& b) {
  if (b.enc_v() == Enc::Constant && std::isnan(as_f64(b.meta[0]))) return b.has(attr::kHasNulls) ? ~uint64_t(0) : b.len;
  return b.meta[1];
}
bool all_nan(const Cell& b) {
  if (b.enc_v() == Enc::Constant) return std::isnan(as_f64(b.meta[0]));
  return !b.has(attr::kHasNulls) && b.meta[1] == b.len;  // with nulls, knowing needs the mask
}
bool float_bounds(const Cell& b, double* lo, double* hi) {
  if (b.has(attr::kHasZonemap)) return *lo = as_f64(b.meta[2]), *hi = as_f64(b.meta[3]), true;
  if (b.enc_v() == Enc::Constant && !std::isnan(as_f64(b.meta[0]))) return *lo = *hi = as_f64(b.meta[0]), true;
  return false;
}

}  // namespace

std::optional<Resolved> probe_int(const Cell& b, CmpOp op, int64_t c) {
  require(b, Physical::Int, "probe_int");
  int64_t lo, hi;
  if (int_bounds(b, &lo, &hi))
    if (auto r = resolve_by_bounds(op, c, lo, hi)) return r;
  if (b.enc_v() == Enc::For) {
    const __int128 base = as_i64(b.meta[0]);
    return resolve_by_bounds<__int128>(op, c, base, base + frame_span(packed_width(b)));
  }
  return std::nullopt;
}

std::optional<Resolved> probe_float(const Cell& b, CmpOp op, double c) {
  require(b, Physical::Float, "probe_float");
  const Resolved unequal_everywhere = op == CmpOp::Ne ? Resolved::AllTrue : Resolved::AllFalse;
  if (std::isnan(c) || all_nan(b)) return unequal_everywhere;
  double lo, hi;
  if (!float_bounds(b, &lo, &hi)) return std::nullopt;
  auto r = resolve_by_bounds(op, c, lo, hi);
  // The bounds speak for the numbers; NaN rows match only `ne`.
  if (r && (float_nans(b) == 0 || *r == unequal_everywhere)) return r;
  return std::nullopt;
}

std::optional<Resolved> probe_bool(const Cell& b, CmpOp op, bool c) {
  require(b, Physical::Bool, "probe_bool");
  bool when_false = false, when_true = false;
  with_op(op, [&](auto o) {
    when_false = holds<decltype(o)::value>(0, int(c));
    when_true = holds<decltype(o)::value>(1, int(c));
  });
  if (when_false == when_true) return when_true ? Resolved::AllTrue : Resolved::AllFalse;
  if (b.enc_v() == Enc::Constant) return (b.meta[0] ? when_true : when_false) ? Resolved::AllTrue : Resolved::AllFalse;
  return std::nullopt;
}

std::optional<Resolved> probe_int_in(const Cell& b, const std::vector<int64_t>& set, bool negate) {
  require(b, Physical::Int, "probe_int_in");
  const Resolved none = negate ? Resolved::AllTrue : Resolved::AllFalse;
  if (set.empty()) return none;
  __int128 lo, hi;
  if (!int_range(b, &lo, &hi)) return std::nullopt;
  // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
  const auto within = members_within(set, lo, hi);
  const auto first = within.first, last = within.second;
  if (first == last) return none;
  if (lo == hi) return negate ? Resolved::AllFalse : Resolved::AllTrue;  // the block's one value is a member
  return std::nullopt;
}

std::optional<Resolved> probe_float_in(const Cell& b, const std::vector<double>& set, bool negate) {
  require(b, Physical::Float, "probe_float_in");
  const Resolved none = negate ? Resolved::AllTrue : Resolved::AllFalse;  // also what NaN rows give
  if (set.empty() || all_nan(b)) return none;
  double lo, hi;
  if (!float_bounds(b, &lo, &hi)) return std::nullopt;
  // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
  const auto within = members_within(set, lo, hi);
  const auto first = within.first, last = within.second;
  if (first == last) return none;
  if (lo == hi && float_nans(b) == 0) return negate ? Resolved::AllFalse : Resolved::AllTrue;
  return std::nullopt;
}

Resolved compare_int_in(const Cell& b, const std::vector<int64_t>& set, bool negate, BlockMask& out, TierScratch& s) {
  require(b, Physical::Int, "compare_int_in");
  if (valid_count(b) == 0) return resolve_as(b, Resolved::AllFalse, out);
  if (auto r = probe_int_in(b, set, negate)) return resolve_as(b, *r, out);
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  int_range(b, &lo, &hi);
  // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
  const auto within = members_within(set, lo, hi);
  const auto first = within.first, last = within.second;
  if (last - first == 1) return compare_int(b, negate ? CmpOp::Ne : CmpOp::Eq, *first, out, s);
  const uint32_t n = static_cast<uint32_t>(b.len);
  const IntTier t = decode_tier(b, 0, n, s);
  const uint64_t off = bits_of(t.offset);
  std::memset(out.words, 0, sizeof out.words);
  with_lanes(t, [&](const auto* l) {
    for (uint32_t i = 0; i < n; ++i) {
      const bool hit = std::binary_search(first, last, as_i64(off + uint64_t(l[i])));
      out.words[i >> 6] |= uint64_t(hit != negate) << (i & 63);
    }
  });
  keep_present(b, out);
  return Resolved::Decoded;
}

Resolved compare_float_in(const Cell& b, const std::vector<double>& set, bool negate, BlockMask& out, TierScratch& s) {
  require(b, Physical::Float, "compare_float_in");
  if (valid_count(b) == 0) return resolve_as(b, Resolved::AllFalse, out);
  if (auto r = probe_float_in(b, set, negate)) return resolve_as(b, *r, out);
  double lo = -INFINITY, hi = INFINITY;
  float_bounds(b, &lo, &hi);
  // Not a structured binding: C++17 lambdas cannot capture those (clang rejects it).
  const auto within = members_within(set, lo, hi);
  const auto first = within.first, last = within.second;
  if (last - first == 1) return compare_float(b, negate ? CmpOp::Ne : CmpOp::Eq, *first, out, s);
  const double* x = float_lanes(b, s);
  std::memset(out.words, 0, sizeof out.words);
  for (uint32_t i = 0; i < b.len; ++i) {
    const bool hit = x[i] == x[i] && std::binary_search(first, last, x[i]);  // NaN is no member
    out.words[i >> 6] |= uint64_t(hit != negate) << (i & 63);
  }
  keep_present(b, out);
  return Resolved::Decoded;
}

// ---- columns -------------------------------------------------------------------------------

uint64_t ColumnMask::selected() const {
  uint64_t n = 0;
  for (const auto& m : blocks) n += m.count();
  return n;
}

namespace {

template <class F>
void for_each_block(const Cell* root, F&& f) {
  if (!root) return;
  const uint64_t n = block_count(*root);
  for (uint64_t i = 0; i < n; ++i) f(i, block_at(*root, i));
}

template <class BlockSum>
IntSum column_int_sum(const Cell* root, TierScratch& s, BlockSum block_sum) {
  IntSum r;
  for_each_block(root, [&](uint64_t, const Cell& b) {
    const IntSum x = block_sum(b, s);
    r.sum += x.sum, r.valid += x.valid;
  });
  return r;
}

template <class Constant, class BlockCompare>
ColumnMask column_compare(const Cell* root, CmpOp op, Constant c, TierScratch& s, BlockCompare block_compare) {
  ColumnMask m;
  if (!root) return m;
  m.blocks.resize(block_count(*root));
  for_each_block(root, [&](uint64_t i, const Cell& b) {
    switch (block_compare(b, op, c, m.blocks[i], s)) {
      case Resolved::AllTrue: ++m.all_true; break;
      case Resolved::AllFalse: ++m.all_false; break;
      case Resolved::Decoded: ++m.decoded; break;
    }
  });
  return m;
}

template <class Out, class BlockFilter>
void column_filter(const Cell* root, const ColumnMask& mask, Out& out, TierScratch& s, std::vector<uint8_t>* valid_out,
                   BlockFilter block_filter) {
  if (!root) return;
  if (mask.blocks.size() != block_count(*root)) throw Error(Code::TET_INTERNAL, "cells: a column mask of another column");
  for_each_block(root, [&](uint64_t i, const Cell& b) { block_filter(b, mask.blocks[i], out, s, valid_out); });
}

}  // namespace

uint64_t column_count(const Cell* root) {
  uint64_t n = 0;
  for_each_block(root, [&](uint64_t, const Cell& b) { n += valid_count(b); });
  return n;
}

IntSum column_sum_int(const Cell* root, TierScratch& s) { return column_int_sum(root, s, sum_int); }
IntSum column_sum_bool(const Cell* root, TierScratch& s) { return column_int_sum(root, s, sum_bool); }

FloatSum column_sum_float(const Cell* root, TierScratch& s) {
  FloatSum r;
  for_each_block(root, [&](uint64_t, const Cell& b) {
    const FloatSum x = sum_float(b, s);
    r.sum += x.sum, r.valid += x.valid;
  });
  return r;
}

IntMinMax column_min_max_int(const Cell* root, TierScratch& s) {
  IntMinMax r;
  for_each_block(root, [&](uint64_t, const Cell& b) {
    const IntMinMax x = min_max_int(b, s);
    if (x.valid == 0) return;
    r.min = r.valid == 0 || x.min < r.min ? x.min : r.min;
    r.max = r.valid == 0 || x.max > r.max ? x.max : r.max;
    r.valid += x.valid;
  });
  return r;
}

FloatMinMax column_min_max_float(const Cell* root, TierScratch& s) {
  FloatMinMax r;
  for_each_block(root, [&](uint64_t, const Cell& b) {
    const FloatMinMax x = min_max_float(b, s);
    r.nans += x.nans;
    if (x.numbers == 0) return;
    r.min = r.numbers == 0 || float_less(x.min, r.min) ? x.min : r.min;
    r.max = r.numbers == 0 || float_less(r.max, x.max) ? x.max : r.max;
    r.numbers += x.numbers;
  });
  return r;
}

ColumnMask column_compare_int(const Cell* root, CmpOp op, int64_t c, TierScratch& s) {
  return column_compare(root, op, c, s, [](const Cell& b, CmpOp o, int64_t k, BlockMask& m, TierScratch& t) { return compare_int(b, o, k, m, t); });
}
ColumnMask column_compare_float(const Cell* root, CmpOp op, double c, TierScratch& s) {
  return column_compare(root, op, c, s, compare_float);
}
ColumnMask column_compare_bool(const Cell* root, CmpOp op, bool c, TierScratch& s) {
  return column_compare(root, op, c, s, compare_bool);
}

void column_filter_int(const Cell* root, const ColumnMask& m, std::vector<int64_t>& out, TierScratch& s,
                       std::vector<uint8_t>* valid_out) {
  column_filter(root, m, out, s, valid_out, filter_int);
}
void column_filter_float(const Cell* root, const ColumnMask& m, std::vector<double>& out, TierScratch& s,
                         std::vector<uint8_t>* valid_out) {
  column_filter(root, m, out, s, valid_out, filter_float);
}
void column_filter_bool(const Cell* root, const ColumnMask& m, std::vector<uint8_t>& out, TierScratch& s,
                        std::vector<uint8_t>* valid_out) {
  column_filter(root, m, out, s, valid_out, filter_bool);
}

}  // namespace tet::cells
