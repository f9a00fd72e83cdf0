// What the numeric encodings (plain, constant, sequence, bool_bits, for, delta, rle, decimal,
// piecewise_sequence, sparse_bool, for_radix) share:
// the staged rows an encoder takes, each encoder's fit (the exact data bytes it would produce,
// the number the builders compare) and encode, and the checks their validators have in common.
// Each encoding's fit / encode / validate / decode live together in its codec file.
#pragma once
#include <cstdint>

#include "cells/bitpack.h"
#include "cells/encoding.h"

namespace tet::cells {

// Rows staged for one leaf block. Lanes are the physical value's bits: i64 for Int-stored kinds,
// f64 bits for Float, 0 / 1 for Bool; a null row's lane holds 0 (the kind's zero).
struct Staged {
  Kind kind = Kind::Int;
  uint32_t len = 0;                    // 1..kBlockLanes
  const uint64_t* lanes = nullptr;     // len lanes
  const uint64_t* validity = nullptr;  // kMaskBytes / 8 words, bits past len zero; null = every row present
  uint32_t valid = 0;                  // rows present (len when validity is null)
  Physical physical() const { return physical_of(kind); }
  bool has_nulls() const { return valid < len; }
  bool row_valid(uint32_t i) const { return validity == nullptr || ((validity[i >> 6] >> (i & 63)) & 1) != 0; }
};

// The fit of an encoding that cannot hold these rows.
constexpr uint64_t kNoFit = ~uint64_t(0);

// Per codec: `<enc>_fit` = data bytes (mask trailer excluded) of the block `<enc>_encode` would
// make, or kNoFit; `<enc>_encode` makes the block (HAS_NULLS + trailer when a row is null; zone
// map, SORTED and the NaN count are the caller's, see builders.h) and throws TET_INTERNAL when the
// rows do not fit.
uint64_t plain_fit(const Staged& s);
CellRef plain_encode(const Staged& s);
uint64_t constant_fit(const Staged& s);
CellRef constant_encode(const Staged& s);
CellRef constant_str(uint64_t len, const uint8_t* bytes, uint64_t nbytes, const uint64_t* validity);
uint64_t sequence_fit(const Staged& s);
CellRef sequence_encode(const Staged& s);
uint64_t bool_bits_fit(const Staged& s);
CellRef bool_bits_encode(const Staged& s);
uint64_t for_fit(const Staged& s);
CellRef for_encode(const Staged& s);
uint64_t delta_fit(const Staged& s);
CellRef delta_encode(const Staged& s);
uint64_t rle_fit(const Staged& s);
CellRef rle_encode(const Staged& s);
// ForRadix: kNoFit for all-null or one-valued rows and ranges of 2^28 or more.
uint64_t for_radix_fit(const Staged& s);
CellRef for_radix_encode(const Staged& s);
// Decimal (float only): kNoFit when a sample of the rows says no exponent pays; encode holds
// any float rows (the exponent-0 frame when the sample rejected them).
uint64_t decimal_fit(const Staged& s);
CellRef decimal_encode(const Staged& s);
// PiecewiseSequence (int-stored): kNoFit past kMaxSegments arithmetic segments.
constexpr uint32_t kMaxSegments = 64;
uint64_t piecewise_sequence_fit(const Staged& s);
CellRef piecewise_sequence_encode(const Staged& s);
// SparseBool (bool): holds any bool rows; its bytes grow with the minority's count.
uint64_t sparse_bool_fit(const Staged& s);
CellRef sparse_bool_encode(const Staged& s);
// What a SparseBool header and exception list give the kernels without a decode: the true rows'
// count, and the true rows as a 2048-bit mask (kBlockLanes / 64 words).
uint64_t sparse_bool_trues(const Cell& c);
void sparse_bool_true_words(const Cell& c, uint64_t* words);

// A Sequence block's value range over all its rows (first + i * step, i < len), computed in
// 128-bit arithmetic; `wraps` when some row's exact value leaves i64 (the rows then wrap and
// the block has no simple bounds).
struct SequenceSpan {
  bool wraps = false;
  int64_t lo = 0, hi = 0;
};
SequenceSpan sequence_span(const Cell& c);

// ---- shared by the encoders ----------------------------------------------------------------
// A block of `enc` for these rows with `data_bytes` of zeroed data, followed by the validity
// trailer (HAS_NULLS) when a row is null.
CellRef new_block(const Staged& s, Enc enc, uint64_t data_bytes);
uint64_t* block_words(CellRef& c);  // the block's writable data as u64 words (null without a payload)
// The lanes with every null row replaced by the nearest earlier present row's value (leading
// nulls by the first present value), so nulls neither break runs nor widen differences.
void carry_fill(const Staged& s, uint64_t* out);
// The first present row's lane (0 when none).
uint64_t first_present(const Staged& s);

// ---- shared by the decoders ----------------------------------------------------------------
inline const uint64_t* payload_words(const Cell& c) { return reinterpret_cast<const uint64_t*>(c.payload); }
// For: meta[0] = base, meta[1] = residual width. Delta: meta[0] = row 0's value, meta[1] =
// residual width, payload word 0 = the differences' base, residuals from word 1.
inline unsigned packed_width(const Cell& c) { return static_cast<unsigned>(c.meta[1]); }
// ForRadix (for_radix.cpp): meta[0] = base, meta[1] = radix R | digits a lane k << 32.
struct RadixFrame {
  uint64_t radix = 0, magic = 0;  // magic: the multiplier that divides by radix
  unsigned k = 0, width = 0;      // digits a lane, lane bits
};
RadixFrame radix_frame(const Cell& c);  // of a validated block
// Lane x's lowest digit (x mod R); x becomes x / R: a multiply-high by `magic`, exact for the
// lanes of a validated block.
inline uint64_t radix_peel(const RadixFrame& f, uint64_t& x) {
  const uint64_t q = uint64_t((unsigned __int128)x * f.magic >> 64);
  const uint64_t d = x - q * f.radix;
  x = q;
  return d;
}
// Residuals (value - base, 0 on null rows) of rows [start, start + count) into `out`; Lane
// (uint8_t..uint64_t) must hold R - 1.
template <class Lane>
void radix_residuals(const Cell& c, uint32_t start, uint32_t count, Lane* out);
// Sets out[i] = 0 for every null row start + i (8-byte lanes); nothing when `validity` is null.
void zero_null_rows(const uint8_t* validity, uint32_t start, uint32_t count, uint64_t* out);

// Delta's recurrence: calls f(row, value) for rows [0, end) in order (values of null rows are
// their carried fill, not zero), unpacking 64 residuals at a time into registers / L1.
template <class F>
inline void delta_scan(const Cell& c, uint32_t end, F&& f) {
  if (end == 0) return;
  const uint64_t* words = payload_words(c);
  const uint64_t step_base = words[0];
  const unsigned w = packed_width(c);
  uint64_t v = c.meta[0];
  f(uint32_t(0), v);
  uint64_t group[kGroupLanes];
  for (uint32_t g = 0; g * kGroupLanes + 1 < end; ++g) {
    unpack_groups(words + 1, w, g, 1, group);
    const uint32_t first_row = g * kGroupLanes + 1;
    const uint32_t n = end - first_row < kGroupLanes ? end - first_row : kGroupLanes;
    for (uint32_t j = 0; j < n; ++j) {
      v += step_base + group[j];
      f(first_row + j, v);
    }
  }
}

// ---- shared by the validators (all throw TET_CELLS_INVALID) --------------------------------
// The payload's data part (mask trailer excluded) is exactly `want` bytes, 8-aligned in memory.
void expect_data_bytes(const Cell& c, uint64_t want, const char* enc);
// meta[from..to] are zero (slots an encoding does not use).
void expect_meta_zero(const Cell& c, int from, int to, const char* enc);
// A Float block's NaN count (meta[1]) is at most its present rows.
void expect_nan_count_bound(const Cell& c, const char* enc);

}  // namespace tet::cells
