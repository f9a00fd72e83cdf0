// Decimal (ALP-like; an extension beyond the spec's thirteen encodings): a Float block whose
// values are decimals with few digits, stored as integers d = v · 10^e for one per-block
// exponent e, frame-of-reference bit-packed like For, plus an exception list for the values that
// do not come back exactly (NaN, ±inf, -0.0, values needing more digits, |d| > 2^53).
//
// Decoding row i is `double(base + residual_i) / 10^e` — an exact i64 → f64 conversion (|d| ≤
// 2^53 for every value the writer packs) and one correctly rounded IEEE division by an exactly
// representable power of ten, so the bits are the same on every platform — then the exceptions
// are patched in and null rows zeroed.
//
// meta[0] = e (bits 0..7, 0..18) | w (bits 8..15, 0..64) | exception count n (bits 16..31, ≤ len),
// bits 32..63 zero; meta[1] = NaN count (every Float block's). Payload (docs/format-tables.md):
//   [0, 8)         base: i64, the smallest d of the packed rows (0 when none)
//   [8, 8 + P)     residuals d - base, bit-packed at width w (P = packed_bytes(len, w)); 0 on null
//                  and exception rows
//   then           n exception rows, u16, strictly increasing, each a present row; zero-padded to 8
//   then           n exception values, the f64 bits, in the same order
//   then           the mask trailer with HAS_NULLS.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cells/bitpack.h"
#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

constexpr unsigned kMaxExponent = 18;
// 10^0 .. 10^18, each exactly representable in f64 (5^18 < 2^53).
constexpr double kPow10[kMaxExponent + 1] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                             1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
constexpr double kMaxExact = 9007199254740992.0;  // 2^53: every integer of at most this size is an exact f64

// meta[0]'s fields.
struct Header {
  unsigned exponent, width;
  uint32_t exceptions;
};
Header header_of(const Cell& c) {
  return {static_cast<unsigned>(c.meta[0] & 0xff), static_cast<unsigned>((c.meta[0] >> 8) & 0xff),
          static_cast<uint32_t>((c.meta[0] >> 16) & 0xffff)};
}
uint64_t header_word(const Header& h) {
  return uint64_t(h.exponent) | uint64_t(h.width) << 8 | uint64_t(h.exceptions) << 16;
}

uint64_t decimal_bytes(uint64_t len, unsigned w, uint64_t exceptions) {
  return 8 + packed_bytes(len, w) + align8(exceptions * 2) + exceptions * 8;
}

// Where the areas of a (validated) block start.
struct Areas {
  const uint64_t* residuals;
  const uint16_t* exception_rows;
  const uint64_t* exception_values;
};
Areas areas_of(const Cell& c, const Header& h) {
  const uint64_t* words = payload_words(c);
  const uint64_t rows_at = 8 + packed_bytes(c.len, h.width);
  return {words + 1, reinterpret_cast<const uint16_t*>(c.payload + rows_at),
          reinterpret_cast<const uint64_t*>(c.payload + rows_at + align8(uint64_t(h.exceptions) * 2))};
}

inline double decode_value(int64_t d, unsigned e) { return static_cast<double>(d) / kPow10[e]; }

// Whether v comes back exactly from some d at exponent e, and that d. The writer's rounding
// (half away from zero, by truncation) need not be portable: only the decode must be.
inline bool round_trips(uint64_t bits, unsigned e, int64_t* d) {
  const double t = as_f64(bits) * kPow10[e];
  if (!(std::fabs(t) <= kMaxExact)) return false;  // NaN, ±inf, |d| > 2^53
  const int64_t trunc = static_cast<int64_t>(t);
  const double frac = t - static_cast<double>(trunc);  // exact: t and trunc share their binade or trunc is 0
  const int64_t r = trunc + int64_t(frac >= 0.5) - int64_t(frac <= -0.5);
  *d = r;
  return bits_of(decode_value(r, e)) == bits;  // -0.0 comes back +0.0: an exception
}

struct Analysis {
  bool offered = false;
  unsigned exponent = 0, width = 0;
  int64_t base = 0;
  uint32_t exceptions = 0;
};

// The frame at exponent e: the present rows that round-trip give base and width, the others
// are exceptions.
Analysis frame_at(const Staged& s, unsigned e) {
  Analysis a;
  a.offered = true;
  a.exponent = e;
  uint32_t packed = 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < s.len; ++i) {
    int64_t d;
    if (!s.row_valid(i) || !round_trips(s.lanes[i], e, &d)) continue;
    ++packed, lo = std::min(lo, d), hi = std::max(hi, d);
  }
  a.exceptions = s.valid - packed;
  if (lo <= hi) a.base = lo, a.width = bit_width(bits_of(hi) - bits_of(lo));
  return a;
}

// What a strided sample of the present rows says (every 15th row; odd, so that periodic data —
// alternating values, power-of-two patterns — does not alias with it):
//  - `promising`: at each exponent the sample's round-trip share and the width of its d range
//    estimate the block's bytes; a block whose best estimate is not below Plain's 8 B/row plus
//    an eighth (room for the sample's error) is not worth the full analysis (up to 19 passes) —
//    an all-exception block (10 B/row) never is, random doubles are rejected at the sample's cost;
//  - `exponent`: the smallest e at which the most sampled values round-trip. When every sampled
//    value does, each smaller e failed a sampled row, so if every row of the block round-trips
//    at this e it is the block's answer too, found in one pass.
struct Sample {
  bool promising = true;
  unsigned exponent = 0;
};
constexpr uint32_t kSampleStride = 15;
constexpr uint32_t kSampleMin = 8;  // fewer sampled rows judge nothing: the block is measured
Sample sample(const Staged& s) {
  Sample out;
  double best_bytes_per_row = 1e9;
  uint32_t best = 0, sampled = 0;
  for (unsigned e = 0; e <= kMaxExponent; ++e) {
    uint32_t n = 0;
    sampled = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < s.len; i += kSampleStride) {
      if (!s.row_valid(i)) continue;
      ++sampled;
      int64_t d;
      if (!round_trips(s.lanes[i], e, &d)) continue;
      ++n, lo = std::min(lo, d), hi = std::max(hi, d);
    }
    if (n > best) best = n, out.exponent = e;
    const unsigned w = n ? bit_width(bits_of(hi) - bits_of(lo)) : 0;
    if (sampled) best_bytes_per_row = std::min(best_bytes_per_row, w / 8.0 + 10.0 * double(sampled - n) / double(sampled));
    if (n == sampled) break;  // no exponent can do better
  }
  out.promising = sampled < kSampleMin || best_bytes_per_row < 9.0;
  return out;
}

// The smallest e at which the most present values round-trip, and its frame; not offered when
// the sample says the block cannot pay.
Analysis analyse(const Staged& s) {
  if (s.physical() != Physical::Float) return {};
  const Sample guess = sample(s);
  if (!guess.promising) return {};
  const Analysis first = frame_at(s, guess.exponent);
  if (first.exceptions == 0) return first;  // the usual case: one pass (see Sample)
  Analysis best;
  for (unsigned e = 0; e <= kMaxExponent; ++e) {
    const Analysis a = e == guess.exponent ? first : frame_at(s, e);
    if (!best.offered || a.exceptions < best.exceptions) best = a;  // strict: ties keep the smaller e
    if (a.exceptions == 0) break;                                   // no exponent can do better
  }
  return best;
}

bool decimal_legal(Physical p) { return p == Physical::Float; }

void decimal_validate(const Cell& c, const DecodeContext&) {
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "decimal");
  if (c.meta[0] >> 32) throw_invalid("decimal block has undefined header bits in meta[0]");
  const Header h = header_of(c);
  if (h.exponent > kMaxExponent) throw_invalid("decimal block exponent " + std::to_string(h.exponent) + " above 18");
  if (h.width > kMaxPackWidth) throw_invalid("decimal block residual width " + std::to_string(h.width) + " above 64");
  if (h.exceptions > c.len)
    throw_invalid("decimal block of " + std::to_string(c.len) + " rows claims " + std::to_string(h.exceptions) + " exceptions");
  expect_data_bytes(c, decimal_bytes(c.len, h.width, h.exceptions), "decimal");
  expect_nan_count_bound(c, "decimal");
  const Areas a = areas_of(c, h);
  const uint8_t* v = c.validity();
  uint64_t nans = 0;
  for (uint32_t k = 0; k < h.exceptions; ++k) {
    const uint16_t row = a.exception_rows[k];
    if (row >= c.len || (k > 0 && row <= a.exception_rows[k - 1]))
      throw_invalid("decimal exception rows out of order or past the block at exception " + std::to_string(k));
    if (!row_valid(v, row)) throw_invalid("decimal exception at null row " + std::to_string(row));
    nans += std::isnan(as_f64(a.exception_values[k]));
  }
  for (uint64_t k = h.exceptions; k < align8(uint64_t(h.exceptions) * 2) / 2; ++k)
    if (a.exception_rows[k] != 0) throw_invalid("decimal exception row padding is not zero");
  // Packed rows decode to finite numbers, so every NaN is an exception.
  if (nans != c.meta[1]) throw_invalid("decimal block's NaN count disagrees with its exceptions");
}

// o[i] = (its residual + base) / scale for residuals whose base + 2^52 bits `shifted` hold (see
// decimal_decode). Division is correctly rounded in every instruction set, so the AVX2 clone
// (four divisions an instruction instead of two; chosen at load time where the CPU has it)
// gives the same bits.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void scale_magic(uint64_t* __restrict o, uint32_t count, uint64_t shifted, double scale) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  for (uint32_t i = 0; i < count; ++i) o[i] = bits_of((as_f64(shifted + o[i]) - kMagic) / scale);
}

void decimal_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  if (count == 0) return;
  const Header h = header_of(c);
  const Areas a = areas_of(c, h);
  auto* o = static_cast<uint64_t*>(out);
  const uint64_t base = payload_words(c)[0];
  const double scale = kPow10[h.exponent];
  // Every packed row lies in [base, base + 2^w): where that is inside (-2^51, 2^51), i64 -> f64 is
  // the magic-number conversion (add 1.5 * 2^52 to the bits, subtract it as a double: exact in that
  // range), which vectorises on every x86-64 and arm64 (a plain int64 -> double conversion needs
  // AVX-512DQ); the division is the same, so are the bits.
  const int64_t lo = as_i64(base);
  constexpr int64_t kMagicRange = int64_t(1) << 51;
  unpack_range(a.residuals, h.width, start, count, o);
  if (h.width < 51 && lo > -kMagicRange && lo < kMagicRange - (int64_t(1) << h.width)) {
    constexpr uint64_t kMagicBits = 0x4338000000000000ull;  // 1.5 * 2^52
    scale_magic(o, count, base + kMagicBits, scale);
  } else {
    for (uint32_t i = 0; i < count; ++i) o[i] = bits_of(static_cast<double>(as_i64(base + o[i])) / scale);
  }
  const uint32_t stop = start + count;
  for (const uint16_t* r = std::lower_bound(a.exception_rows, a.exception_rows + h.exceptions, start);
       r != a.exception_rows + h.exceptions && *r < stop; ++r)
    o[*r - start] = a.exception_values[r - a.exception_rows];
  zero_null_rows(c.validity(), start, count, o);
}

}  // namespace

const EncodingOps kDecimalOps{Enc::Decimal, decimal_legal, decimal_validate, decimal_decode};

uint64_t decimal_fit(const Staged& s) {
  const Analysis a = analyse(s);
  return a.offered ? decimal_bytes(s.len, a.width, a.exceptions) : kNoFit;
}

CellRef decimal_encode(const Staged& s) {
  if (s.physical() != Physical::Float) throw Error(Code::TET_INTERNAL, "cells: decimal holds floats only");
  Analysis a = analyse(s);
  // Not worth it by the sample, but any float rows can be held (an explicit request, e.g. a
  // test, gets a valid block): the exponent-0 frame.
  if (!a.offered) a = frame_at(s, 0);
  CellRef c = new_block(s, Enc::Decimal, decimal_bytes(s.len, a.width, a.exceptions));
  uint64_t* words = block_words(c);
  words[0] = bits_of(a.base);
  uint64_t residuals[kBlockLanes];
  const uint64_t rows_at = 8 + packed_bytes(s.len, a.width);
  auto* rows = reinterpret_cast<uint16_t*>(reinterpret_cast<uint8_t*>(words) + rows_at);
  auto* values = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(words) + rows_at + align8(uint64_t(a.exceptions) * 2));
  uint32_t k = 0;
  for (uint32_t i = 0; i < s.len; ++i) {
    int64_t d = 0;
    residuals[i] = 0;
    if (!s.row_valid(i)) continue;
    if (round_trips(s.lanes[i], a.exponent, &d)) {
      residuals[i] = bits_of(d) - bits_of(a.base);
    } else {
      rows[k] = static_cast<uint16_t>(i);
      values[k] = s.lanes[i];
      ++k;
    }
  }
  if (k != a.exceptions) throw Error(Code::TET_INTERNAL, "cells: decimal exception count changed between passes");
  pack_residuals(residuals, s.len, a.width, words + 1);
  c.mutable_cell()->meta[0] = header_word({a.exponent, a.width, a.exceptions});
  return c;
}

}  // namespace tet::cells
