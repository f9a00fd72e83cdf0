// BoolBits: one bit per row, bit i%64 of little-endian word i/64; bits past len and bits of
// null rows are 0 (so a popcount of the words is the count of true rows).
#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"

namespace tet::cells {

namespace {

uint64_t bits_bytes(uint64_t len) { return (len + 63) / 64 * 8; }

bool bool_bits_legal(Physical p) { return p == Physical::Bool; }

void bool_bits_validate(const Cell& c, const DecodeContext&) {
  expect_data_bytes(c, bits_bytes(c.len), "bool_bits");
  expect_meta_zero(c, 0, 3, "bool_bits");
  const auto* words = reinterpret_cast<const uint64_t*>(c.payload);
  const uint64_t n = (c.len + 63) / 64;
  if (c.len % 64 && (words[n - 1] >> (c.len % 64)) != 0) throw_invalid("bool_bits block has bits set past its length");
  if (const uint8_t* v = c.validity()) {
    const auto* valid = reinterpret_cast<const uint64_t*>(v);
    for (uint64_t w = 0; w < n; ++w)
      if (words[w] & ~valid[w]) throw_invalid("bool_bits block has a true bit on a null row");
  }
}

void bool_bits_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  const auto* words = reinterpret_cast<const uint64_t*>(c.payload);
  auto* o = static_cast<uint8_t*>(out);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t r = start + i;
    o[i] = static_cast<uint8_t>((words[r >> 6] >> (r & 63)) & 1);
  }
}

}  // namespace

const EncodingOps kBoolBitsOps{Enc::BoolBits, bool_bits_legal, bool_bits_validate, bool_bits_decode};

uint64_t bool_bits_fit(const Staged& s) { return s.physical() == Physical::Bool ? bits_bytes(s.len) : kNoFit; }

CellRef bool_bits_encode(const Staged& s) {
  if (s.physical() != Physical::Bool) throw Error(Code::TET_INTERNAL, "cells: bool_bits holds bool only");
  CellRef c = new_block(s, Enc::BoolBits, bits_bytes(s.len));
  uint64_t* words = block_words(c);
  for (uint32_t i = 0; i < s.len; ++i) words[i >> 6] |= uint64_t(s.lanes[i] != 0) << (i & 63);
  return c;
}

}  // namespace tet::cells
