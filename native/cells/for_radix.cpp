// ForRadix (enc 17, int-stored kinds; an extension): For whose residuals are packed k to a lane
// in mixed radix. With R = max - min + 1 (the radix) and base = min, row i's residual d_i =
// value - base lies in [0, R); lane j holds d_{jk} + d_{jk+1}·R + ... + d_{jk+k-1}·R^(k-1) < R^k
// in w = bit_width(R^k - 1) bits. Where R is far from a power of two this beats For's
// bit_width(R - 1) bits a row: R = 5000 takes 13 bits in For, 37 / 3 = 12.33 here.
//
// meta[0] = base; meta[1] = R | k << 32 (bits 40.. zero); lanes tightly packed (str_codec.h:
// lane j at bits [j·w, j·w + w), area str::packed_bytes(⌈len / k⌉, w)). Digits of null rows and
// of the rows past len in the last lane are 0.
//
// Decoding peels digits off a lane by division by R, done as a multiply-high by
// M = ⌊(2^64 - 1) / R⌋ + 1: exact for every numerator x < 2^64 / R (x·(M·R - 2^64) < 2^64), which
// the format guarantees by w + bit_width(R) ≤ 64. Lanes are ≤ 56 bits (one unaligned load each).
#include <algorithm>
#include <cstring>
#include <string>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "cells/str_codec.h"
#include "tet/error.h"

namespace tet::cells {

namespace {

using str::load_u64;

inline uint64_t mul_high(uint64_t a, uint64_t b) { return uint64_t((unsigned __int128)a * b >> 64); }

// R^k if it is at most 2^56 and the magic division stays exact for its lanes, else 0.
uint64_t radix_span(uint64_t radix, unsigned k) {
  unsigned __int128 p = 1;
  for (unsigned t = 0; t < k; ++t) {
    p *= radix;
    if (p > (unsigned __int128)(uint64_t(1) << str::kMaxLaneBits)) return 0;
  }
  const unsigned w = bit_width(uint64_t(p) - 1);
  return w + bit_width(radix) <= 64 ? uint64_t(p) : 0;
}

// One lane's k digits into d[0..k).
inline void lane_digits(const RadixFrame& f, uint64_t x, uint64_t* d) {
  for (unsigned t = 0; t + 1 < f.k; ++t) d[t] = radix_peel(f, x);
  d[f.k - 1] = x;
}

template <unsigned K, class Lane>
void full_lanes(const RadixFrame& f, const uint8_t* area, uint64_t lane0, uint64_t lanes, Lane* __restrict out) {
  const unsigned w = f.width;
  const uint64_t mask = str::lane_mask(w), magic = f.magic, radix = f.radix;
  for (uint64_t j = 0; j < lanes; ++j) {
    const uint64_t bit = (lane0 + j) * w;
    uint64_t x = (load_u64(area + (bit >> 3)) >> (bit & 7)) & mask;
#pragma GCC unroll 8
    for (unsigned t = 0; t + 1 < K; ++t) {
      const uint64_t q = mul_high(x, magic);
      out[j * K + t] = static_cast<Lane>(x - q * radix);
      x = q;
    }
    out[j * K + K - 1] = static_cast<Lane>(x);
  }
}

template <class Lane>
void full_lanes_any(const RadixFrame& f, const uint8_t* area, uint64_t lane0, uint64_t lanes, Lane* out) {
  switch (f.k) {
    case 2: return full_lanes<2>(f, area, lane0, lanes, out);
    case 3: return full_lanes<3>(f, area, lane0, lanes, out);
    case 4: return full_lanes<4>(f, area, lane0, lanes, out);
    case 5: return full_lanes<5>(f, area, lane0, lanes, out);
    case 6: return full_lanes<6>(f, area, lane0, lanes, out);
    default: break;
  }
  uint64_t d[str::kMaxLaneBits];
  for (uint64_t j = 0; j < lanes; ++j) {
    lane_digits(f, str::unpack_lane(area, lane0 + j, f.width), d);
    for (unsigned t = 0; t < f.k; ++t) out[j * f.k + t] = static_cast<Lane>(d[t]);
  }
}

bool for_radix_legal(Physical p) { return p == Physical::Int; }

void for_radix_validate(const Cell& c, const DecodeContext&) {
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "for_radix");
  const uint64_t radix = c.meta[1] & 0xffffffffu, k = (c.meta[1] >> 32) & 0xff;
  if ((c.meta[1] >> 40) != 0 || radix < 2 || k < 2) throw_invalid("for_radix block with radix " + std::to_string(radix) + " and " + std::to_string(k) + " digits a lane");
  const uint64_t span = radix_span(radix, unsigned(k));
  if (span == 0) throw_invalid("for_radix block whose lanes of " + std::to_string(k) + " digits of radix " + std::to_string(radix) + " exceed 56 bits");
  const RadixFrame f = radix_frame(c);
  const uint64_t lanes = (c.len + k - 1) / k;
  expect_data_bytes(c, str::packed_bytes(lanes, f.width), "for_radix");
  // Every lane below R^k (so every digit below R), and the digits of null rows and of the rows
  // past len zero: decoded rows then lie in [base, base + R) and null lanes add nothing to sums.
  const uint8_t* valid = c.validity();
  uint64_t d[str::kMaxLaneBits];
  for (uint64_t j = 0; j < lanes; ++j) {
    const uint64_t x = str::unpack_lane(c.payload, j, f.width);
    if (x >= span) throw_invalid("for_radix lane " + std::to_string(j) + " holds a digit past its radix");
    lane_digits(f, x, d);
    for (unsigned t = 0; t < f.k; ++t) {
      const uint64_t row = j * f.k + t;
      if (d[t] != 0 && (row >= c.len || !row_valid(valid, row))) throw_invalid("for_radix block with a nonzero digit on a null row or past its length");
    }
  }
}

void for_radix_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint64_t*>(out);
  radix_residuals(c, start, count, o);
  const uint64_t base = c.meta[0];
  for (uint32_t i = 0; i < count; ++i) o[i] += base;  // wraps like i64 addition
  zero_null_rows(c.validity(), start, count, o);
}

struct Plan {
  uint64_t base = 0, radix = 0;
  unsigned k = 0;
  uint64_t bytes = kNoFit;
};

// The digits a lane (k ≥ 2) that make the fewest bytes for this block, or no plan (bytes =
// kNoFit) when every row is null or no k keeps lanes within 56 bits.
Plan plan_of(const Staged& s) {
  Plan p;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    const int64_t v = as_i64(s.lanes[i]);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (lo > hi) return p;
  const uint64_t span = bits_of(hi) - bits_of(lo);
  if (span >= (uint64_t(1) << 21)) return p;  // R > 2^21: not even k = 2 divides exactly (w + bits(R) > 64)
  p.base = bits_of(lo);
  p.radix = span + 1;
  if (p.radix < 2) return p;  // one value: Constant's business
  for (unsigned k = 2; k <= str::kMaxLaneBits; ++k) {
    const uint64_t r_k = radix_span(p.radix, k);
    if (r_k == 0) break;
    const uint64_t bytes = str::packed_bytes((s.len + k - 1) / k, bit_width(r_k - 1));
    if (bytes < p.bytes) p.bytes = bytes, p.k = k;
  }
  return p;
}

}  // namespace

RadixFrame radix_frame(const Cell& c) {
  RadixFrame f;
  f.radix = c.meta[1] & 0xffffffffu;
  f.k = unsigned((c.meta[1] >> 32) & 0xff);
  f.magic = ~uint64_t(0) / f.radix + 1;
  f.width = bit_width(radix_span(f.radix, f.k) - 1);
  return f;
}

template <class Lane>
void radix_residuals(const Cell& c, uint32_t start, uint32_t count, Lane* out) {
  if (count == 0) return;
  const RadixFrame f = radix_frame(c);
  const uint8_t* area = c.payload;
  uint64_t d[str::kMaxLaneBits];
  uint64_t lane = start / f.k, row = start;
  const uint64_t end = uint64_t(start) + count;
  Lane* o = out;
  if (row % f.k) {  // a leading partial lane
    lane_digits(f, str::unpack_lane(area, lane, f.width), d);
    for (unsigned t = unsigned(row % f.k); t < f.k && row < end; ++t, ++row) *o++ = static_cast<Lane>(d[t]);
    ++lane;
  }
  const uint64_t full = (end - row) / f.k;
  full_lanes_any(f, area, lane, full, o);
  o += full * f.k, row += full * f.k, lane += full;
  if (row < end) {  // a trailing partial lane
    lane_digits(f, str::unpack_lane(area, lane, f.width), d);
    for (unsigned t = 0; row < end; ++t, ++row) *o++ = static_cast<Lane>(d[t]);
  }
}
template void radix_residuals<uint8_t>(const Cell&, uint32_t, uint32_t, uint8_t*);
template void radix_residuals<uint16_t>(const Cell&, uint32_t, uint32_t, uint16_t*);
template void radix_residuals<uint32_t>(const Cell&, uint32_t, uint32_t, uint32_t*);
template void radix_residuals<uint64_t>(const Cell&, uint32_t, uint32_t, uint64_t*);

const EncodingOps kForRadixOps{Enc::ForRadix, for_radix_legal, for_radix_validate, for_radix_decode};

uint64_t for_radix_fit(const Staged& s) {
  if (s.physical() != Physical::Int) return kNoFit;
  return plan_of(s).bytes;
}

CellRef for_radix_encode(const Staged& s) {
  if (s.physical() != Physical::Int) throw Error(Code::TET_INTERNAL, "cells: for_radix holds int-stored kinds only");
  const Plan p = plan_of(s);
  if (p.bytes == kNoFit) throw Error(Code::TET_INTERNAL, "cells: these rows do not fit for_radix");
  CellRef c = new_block(s, Enc::ForRadix, p.bytes);
  const uint64_t r_k = radix_span(p.radix, p.k);
  const unsigned w = bit_width(r_k - 1);
  uint8_t* area = owned_payload(c);
  const uint64_t lanes = (s.len + p.k - 1) / p.k;
  for (uint64_t j = 0; j < lanes; ++j) {
    uint64_t x = 0;
    for (unsigned t = p.k; t-- > 0;) {  // Horner from the top digit
      const uint64_t row = j * p.k + t;
      const uint64_t digit = row < s.len && s.row_valid(uint32_t(row)) ? s.lanes[row] - p.base : 0;
      x = x * p.radix + digit;
    }
    str::pack_lane(area, j, w, x);
  }
  Cell* m = c.mutable_cell();
  m->meta[0] = p.base;
  m->meta[1] = p.radix | uint64_t(p.k) << 32;
  return c;
}

}  // namespace tet::cells
