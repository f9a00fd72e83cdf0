// SparseBool (bool): the block's majority value plus the rows that differ from it. meta[0] =
// the majority value (0 / 1), meta[1] = the exception count n (≤ the present rows); payload =
// the n exception rows as 11-bit lanes (row k at bits [11k, 11k + 11), LSB first, bit j = bit
// j % 8 of byte j / 8), strictly increasing, each a present row, zero-padded to 8 bytes. A null
// row decodes false whatever the majority. obs `qc_ok` (1 % false) is ~20 exceptions a block:
// 32 bytes where bool_bits takes 256.
#include <cstring>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

constexpr unsigned kRowBits = 11;  // rows < kBlockLanes = 2^11
static_assert(kBlockLanes == 1u << kRowBits, "an exception row is one 11-bit lane");

uint64_t rows_bytes(uint64_t n) { return align8((n * kRowBits + 7) / 8); }

// Exception row k. Reads only bytes holding lane k's bits: its last bit is bit 11k + 10 < 11n.
uint32_t row_at(const uint8_t* p, uint64_t k) {
  const uint64_t bit = k * kRowBits;
  const uint8_t* b = p + (bit >> 3);
  const unsigned s = bit & 7;
  uint32_t v = uint32_t(b[0]) | (uint32_t(b[1]) << 8);
  if (s + kRowBits > 16) v |= uint32_t(b[2]) << 16;
  return (v >> s) & ((1u << kRowBits) - 1);
}

bool sparse_bool_legal(Physical p) { return p == Physical::Bool; }

void sparse_bool_validate(const Cell& c, const DecodeContext&) {
  if (c.meta[0] > 1) throw_invalid("sparse_bool majority value is neither 0 nor 1");
  expect_meta_zero(c, 2, 3, "sparse_bool");
  const uint64_t n = c.meta[1];
  if (n > valid_count(c))
    throw_invalid("sparse_bool block of " + std::to_string(valid_count(c)) + " present rows claims " + std::to_string(n) + " exceptions");
  expect_data_bytes(c, rows_bytes(n), "sparse_bool");
  const uint8_t* v = c.validity();
  int64_t prev = -1;
  for (uint64_t k = 0; k < n; ++k) {
    const uint32_t r = row_at(c.payload, k);
    if (int64_t(r) <= prev || r >= c.len) throw_invalid("sparse_bool exception rows do not increase inside the block");
    if (!row_valid(v, r)) throw_invalid("sparse_bool exception on a null row");
    prev = r;
  }
  // Bits past the last lane are zero (one canonical form; nothing hides in the padding).
  for (uint64_t bit = n * kRowBits; bit < rows_bytes(n) * 8; ++bit)
    if ((c.payload[bit >> 3] >> (bit & 7)) & 1) throw_invalid("sparse_bool padding bits are not zero");
}

void sparse_bool_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint8_t*>(out);
  const uint8_t* v = c.validity();
  const auto majority = static_cast<uint8_t>(c.meta[0]);
  for (uint32_t i = 0; i < count; ++i) o[i] = majority & static_cast<uint8_t>(row_valid(v, start + i));
  const uint64_t n = c.meta[1];
  for (uint64_t k = 0; k < n; ++k) {
    const uint32_t r = row_at(c.payload, k);
    if (r >= start + count) break;  // rows ascend
    if (r >= start) o[r - start] = majority ^ 1;  // exceptions are present rows
  }
}

// The majority value (ties: true) and the exception count of the present rows.
struct Split {
  uint64_t majority, exceptions;
};
Split split_of(const Staged& s) {
  uint64_t trues = 0;
  for (uint32_t i = 0; i < s.len; ++i) trues += s.row_valid(i) && s.lanes[i] != 0;
  const uint64_t falses = s.valid - trues;
  return trues >= falses ? Split{1, falses} : Split{0, trues};
}

}  // namespace

const EncodingOps kSparseBoolOps{Enc::SparseBool, sparse_bool_legal, sparse_bool_validate, sparse_bool_decode};

uint64_t sparse_bool_fit(const Staged& s) {
  if (s.physical() != Physical::Bool) return kNoFit;
  return rows_bytes(split_of(s).exceptions);
}

CellRef sparse_bool_encode(const Staged& s) {
  if (s.physical() != Physical::Bool) throw Error(Code::TET_INTERNAL, "cells: sparse_bool holds bool only");
  const Split sp = split_of(s);
  CellRef c = new_block(s, Enc::SparseBool, rows_bytes(sp.exceptions));
  uint8_t* p = sp.exceptions ? owned_payload(c) : nullptr;
  uint64_t k = 0;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i) || uint64_t(s.lanes[i] != 0) == sp.majority) continue;
    const uint64_t bit = k++ * kRowBits;
    for (unsigned j = 0; j < kRowBits; ++j) p[(bit + j) >> 3] |= static_cast<uint8_t>(((i >> j) & 1) << ((bit + j) & 7));
  }
  Cell* m = c.mutable_cell();
  m->meta[0] = sp.majority;
  m->meta[1] = sp.exceptions;
  return c;
}

uint64_t sparse_bool_trues(const Cell& c) {
  const uint64_t present = valid_count(c);
  return c.meta[0] ? present - c.meta[1] : c.meta[1];
}

void sparse_bool_true_words(const Cell& c, uint64_t* words) {
  const uint32_t n_words = kBlockLanes / 64;
  const uint8_t* v = c.validity();
  for (uint32_t w = 0; w < n_words; ++w) {
    uint64_t present = 0;
    if (v) std::memcpy(&present, v + 8 * w, 8);
    else present = c.len >= (w + 1) * 64ull ? ~uint64_t(0) : c.len <= w * 64ull ? 0 : (uint64_t(1) << (c.len - w * 64)) - 1;
    words[w] = c.meta[0] ? present : 0;
  }
  for (uint64_t k = 0; k < c.meta[1]; ++k) {
    const uint32_t r = row_at(c.payload, k);
    words[r >> 6] ^= uint64_t(1) << (r & 63);
  }
}

}  // namespace tet::cells
