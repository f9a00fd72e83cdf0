// Plain: dense lanes in row order. Bool one byte (0 / 1) per row, Int-stored kinds i64 lanes,
// Float f64 lanes; the irregular-data fallback. Str is not plain (Views is the string fallback).
#include <cstring>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

uint64_t plain_bytes(Physical p, uint64_t len) { return p == Physical::Bool ? align8(len) : len * 8; }

bool plain_legal(Physical p) { return p == Physical::Bool || p == Physical::Int || p == Physical::Float; }

void plain_validate(const Cell& c, const DecodeContext&) {
  const Physical p = physical_of(c.kind_v());
  expect_data_bytes(c, plain_bytes(p, c.len), "plain");
  if (!c.has(attr::kHasZonemap)) expect_meta_zero(c, 2, 3, "plain");
  if (p == Physical::Float) {
    expect_meta_zero(c, 0, 0, "plain");
    expect_nan_count_bound(c, "plain");
    return;
  }
  expect_meta_zero(c, 0, 1, "plain");
  if (p == Physical::Bool) {
    // Bool bytes are the decoded form itself, so each must be 0 / 1 (a null row 0, padding 0).
    const uint8_t* v = c.validity();
    for (uint64_t i = 0; i < align8(c.len); ++i) {
      const uint8_t b = c.payload[i];
      if (b > 1 || (b == 1 && (i >= c.len || !row_valid(v, i))))
        throw_invalid("plain bool block has byte " + std::to_string(b) + " at row " + std::to_string(i));
    }
  }
}

void plain_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  const size_t w = physical_of(c.kind_v()) == Physical::Bool ? 1 : 8;
  std::memcpy(out, c.payload + size_t(start) * w, size_t(count) * w);
}

}  // namespace

const EncodingOps kPlainOps{Enc::Plain, plain_legal, plain_validate, plain_decode};

uint64_t plain_fit(const Staged& s) { return plain_legal(s.physical()) ? plain_bytes(s.physical(), s.len) : kNoFit; }

CellRef plain_encode(const Staged& s) {
  if (!plain_legal(s.physical())) throw Error(Code::TET_INTERNAL, "cells: plain cannot hold this kind");
  CellRef c = new_block(s, Enc::Plain, plain_bytes(s.physical(), s.len));
  uint8_t* out = owned_payload(c);
  if (s.physical() == Physical::Bool) {
    for (uint32_t i = 0; i < s.len; ++i) out[i] = s.lanes[i] ? 1 : 0;
  } else {
    std::memcpy(out, s.lanes, size_t(s.len) * 8);
  }
  return c;
}

}  // namespace tet::cells
