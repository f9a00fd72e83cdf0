#include "cells/tiers.h"

#include <cstring>

#include "cells/bitpack.h"
#include "cells/encoding.h"
#include "cells/numeric.h"
#include "tet/error.h"

namespace tet::cells {

int64_t IntTier::value(uint32_t i) const {
  uint64_t lane = 0;
  switch (bits) {
    case 8: lane = as<uint8_t>()[i]; break;
    case 16: lane = as<uint16_t>()[i]; break;
    case 32: lane = as<uint32_t>()[i]; break;
    default: lane = as<uint64_t>()[i]; break;
  }
  return as_i64(bits_of(offset) + lane);
}

unsigned tier_bits(uint64_t span) {
  if (span <= UINT8_MAX) return 8;
  if (span <= UINT16_MAX) return 16;
  if (span <= UINT32_MAX) return 32;
  return 64;
}

namespace {

template <class Lane>
void fill_sequence_lanes(const Cell& c, uint32_t start, uint32_t count, uint64_t lo, Lane* out) {
  const uint64_t step = c.meta[1];
  uint64_t v = c.meta[0] + uint64_t(start) * step;
  for (uint32_t i = 0; i < count; ++i, v += step) out[i] = static_cast<Lane>(v - lo);
}

template <class Lane>
void zero_null_lanes(const uint8_t* validity, uint32_t start, uint32_t count, Lane* out) {
  if (!validity) return;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t r = start + i;
    out[i] = static_cast<Lane>(out[i] & (Lane(0) - Lane((validity[r >> 3] >> (r & 7)) & 1)));
  }
}

IntTier sequence_tier(const Cell& c, uint32_t start, uint32_t count, TierScratch& s) {
  IntTier t;
  t.count = count;
  t.lanes = s.as<uint64_t>();
  const SequenceSpan span = sequence_span(c);
  if (span.wraps) {
    decode_rows(c, start, count, s.as<uint64_t>());
    return t;
  }
  t.offset = span.lo;
  t.bits = tier_bits(bits_of(span.hi) - bits_of(span.lo));
  const uint64_t lo = bits_of(span.lo);
  const uint8_t* v = c.validity();
  switch (t.bits) {
    case 8: fill_sequence_lanes(c, start, count, lo, s.as<uint8_t>()); zero_null_lanes(v, start, count, s.as<uint8_t>()); break;
    case 16: fill_sequence_lanes(c, start, count, lo, s.as<uint16_t>()); zero_null_lanes(v, start, count, s.as<uint16_t>()); break;
    case 32: fill_sequence_lanes(c, start, count, lo, s.as<uint32_t>()); zero_null_lanes(v, start, count, s.as<uint32_t>()); break;
    default: fill_sequence_lanes(c, start, count, lo, s.as<uint64_t>()); zero_null_lanes(v, start, count, s.as<uint64_t>()); break;
  }
  return t;
}

IntTier for_tier(const Cell& c, uint32_t start, uint32_t count, TierScratch& s) {
  IntTier t;
  t.count = count;
  t.lanes = s.as<uint64_t>();
  t.offset = as_i64(c.meta[0]);
  const unsigned w = packed_width(c);
  t.bits = tier_bits(w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1);
  const uint64_t* words = payload_words(c);
  switch (t.bits) {
    case 8: unpack_range(words, w, start, count, s.as<uint8_t>()); break;
    case 16: unpack_range(words, w, start, count, s.as<uint16_t>()); break;
    case 32: unpack_range(words, w, start, count, s.as<uint32_t>()); break;
    default: unpack_range(words, w, start, count, s.as<uint64_t>()); break;
  }
  return t;
}

// Residual digits straight into the lanes R - 1 fits, offset = base (as For).
IntTier for_radix_tier(const Cell& c, uint32_t start, uint32_t count, TierScratch& s) {
  IntTier t;
  t.count = count;
  t.lanes = s.as<uint64_t>();
  t.offset = as_i64(c.meta[0]);
  t.bits = tier_bits(radix_frame(c).radix - 1);
  switch (t.bits) {
    case 8: radix_residuals(c, start, count, s.as<uint8_t>()); break;
    case 16: radix_residuals(c, start, count, s.as<uint16_t>()); break;
    default: radix_residuals(c, start, count, s.as<uint32_t>()); break;  // R ≤ 2^28
  }
  return t;
}

}  // namespace

IntTier decode_tier(const Cell& c, uint32_t start, uint32_t count, TierScratch& s) {
  if (physical_of(c.kind_v()) != Physical::Int) throw Error(Code::TET_INTERNAL, "cells: a width tier of a non-int block");
  IntTier t;
  t.count = count;
  switch (c.enc_v()) {
    case Enc::Constant:
      t.bits = 8;
      t.offset = as_i64(c.meta[0]);
      std::memset(s.as<uint64_t>(), 0, count);
      t.lanes = s.as<uint64_t>();
      return t;
    case Enc::Sequence: return sequence_tier(c, start, count, s);
    case Enc::For: return for_tier(c, start, count, s);
    case Enc::ForRadix: return for_radix_tier(c, start, count, s);
    case Enc::Plain: t.lanes = payload_words(c) + start; return t;
    default:
      decode_rows(c, start, count, s.as<uint64_t>());
      t.lanes = s.as<uint64_t>();
      return t;
  }
}

}  // namespace tet::cells
