// Bit-packed unsigned residuals, shared by For (values - base) and Delta (differences - their
// minimum) and streamed by the width tiers and the encoded-domain kernels.
//
// Layout (docs/format-tables.md, "bit packing"): residuals come in groups of 64; a group of
// width w is exactly w little-endian u64 words, residual j of the group at bits [j*w, j*w + w)
// of the group's bit stream (LSB first, bit k = bit k%64 of word k/64). The last group is padded
// with zero residuals to 64, so every group has the same shape and an unpacker never needs a
// bounds check inside a group: n residuals take ceil(n / 64) * w words.
#pragma once
#include <cstdint>

namespace tet::cells {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "payload lanes are read in place as little-endian words");

constexpr uint32_t kGroupLanes = 64;
constexpr unsigned kMaxPackWidth = 64;

// Bits needed to hold every value in [0, span]: 0 for span 0, 64 for spans ≥ 2^63.
inline unsigned bit_width(uint64_t span) { return span == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(span)); }

// Bytes that n residuals of width w occupy (w ≤ 64, n ≤ 2^32, so no overflow).
inline uint64_t packed_bytes(uint64_t n, unsigned w) { return (n + kGroupLanes - 1) / kGroupLanes * w * 8; }

// Packs n residuals (each < 2^w) into `out` (packed_bytes(n, w), zero-filled by the caller).
void pack_residuals(const uint64_t* residuals, uint32_t n, unsigned w, uint64_t* out);

// Residual i (random access; for filters that widen only the rows they select).
inline uint64_t residual_at(const uint64_t* words, unsigned w, uint32_t i) {
  if (w == 0) return 0;
  const uint64_t* g = words + uint64_t(i / kGroupLanes) * w;
  const unsigned bit = (i % kGroupLanes) * w, s = bit & 63;
  const uint64_t* p = g + (bit >> 6);
  uint64_t v = p[0] >> s;
  if (s + w > 64) v |= p[1] << (64 - s);  // p[1] is inside the group: the residual ends in it
  return w == 64 ? v : v & ((uint64_t(1) << w) - 1);
}

// Unpacks whole groups [g0, g0 + ng) into `out` (64 * ng lanes). Lane is the unsigned type the
// caller wants (uint8_t..uint64_t); it must hold w bits. One switch per call, then a loop the
// compiler specialises per width (constant shifts, no branches inside a group).
template <class Lane>
void unpack_groups(const uint64_t* words, unsigned w, uint32_t g0, uint32_t ng, Lane* out);

// Rows [start, start + count) of the residual stream into `out` (count lanes).
template <class Lane>
void unpack_range(const uint64_t* words, unsigned w, uint32_t start, uint32_t count, Lane* out);

}  // namespace tet::cells
