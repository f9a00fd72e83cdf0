// Constant: one value for every present row, no data payload (only the mask trailer when a row
// is null). Every physical kind: bool / int-stored / float keep the value in meta[0]; str keeps
// its byte length in meta[0] and the bytes at the start of the payload, padded to 8.
#include <cmath>
#include <cstring>

#include "cells/codecs.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"
#include "util/bits.h"

namespace tet::cells {

namespace {

bool constant_legal(Physical p) { return p != Physical::Table; }

void constant_validate(const Cell& c, const DecodeContext&) {
  if (c.has(attr::kHasZonemap)) throw_invalid("constant block carries a zone map (its bounds are its value)");
  expect_meta_zero(c, 2, 3, "constant");
  const Physical p = physical_of(c.kind_v());
  if (p == Physical::Str) {
    const uint64_t n = c.meta[0];
    if (n > c.data_bytes()) throw_invalid("constant str of " + std::to_string(n) + " bytes in a shorter payload");
    expect_data_bytes(c, align8(n), "constant");
    expect_meta_zero(c, 1, 1, "constant");
    for (uint64_t i = n; i < align8(n); ++i)
      if (c.payload[i] != 0) throw_invalid("constant str padding is not zero");
    return;
  }
  expect_data_bytes(c, 0, "constant");
  if (p == Physical::Float) {
    const uint64_t want_nans = std::isnan(as_f64(c.meta[0])) ? valid_count(c) : 0;
    if (c.meta[1] != want_nans) throw_invalid("constant float block's NaN count disagrees with its value");
    return;
  }
  expect_meta_zero(c, 1, 1, "constant");
  if (p == Physical::Bool && c.meta[0] > 1) throw_invalid("constant bool value is neither 0 nor 1");
}

void constant_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  const uint8_t* v = c.validity();
  switch (physical_of(c.kind_v())) {
    case Physical::Bool: {
      auto* o = static_cast<uint8_t*>(out);
      for (uint32_t i = 0; i < count; ++i) o[i] = row_valid(v, start + i) ? static_cast<uint8_t>(c.meta[0]) : 0;
      return;
    }
    case Physical::Str: {
      auto* o = static_cast<StrBuffer*>(out);
      for (uint32_t i = 0; i < count; ++i) o->push(c.payload, row_valid(v, start + i) ? c.meta[0] : 0);
      return;
    }
    default: {
      auto* o = static_cast<uint64_t*>(out);
      for (uint32_t i = 0; i < count; ++i) o[i] = c.meta[0];
      zero_null_rows(v, start, count, o);
      return;
    }
  }
}

}  // namespace

const EncodingOps kConstantOps{Enc::Constant, constant_legal, constant_validate, constant_decode};

uint64_t constant_fit(const Staged& s) {
  if (s.physical() == Physical::Str || s.physical() == Physical::Table) return kNoFit;
  const uint64_t v = first_present(s);
  for (uint32_t i = 0; i < s.len; ++i)
    if (s.lanes[i] != v && s.row_valid(i)) return kNoFit;
  return 0;
}

CellRef constant_encode(const Staged& s) {
  if (constant_fit(s) == kNoFit) throw Error(Code::TET_INTERNAL, "cells: constant over rows that differ");
  CellRef c = new_block(s, Enc::Constant, 0);
  Cell* m = c.mutable_cell();
  m->meta[0] = first_present(s);
  if (s.physical() == Physical::Float && std::isnan(as_f64(m->meta[0]))) m->meta[1] = s.valid;
  return c;
}

CellRef constant_str(uint64_t len, const uint8_t* bytes, uint64_t nbytes, const uint64_t* validity) {
  if (len == 0 || len > kBlockLanes) throw Error(Code::TET_INTERNAL, "cells: a block of 0 or more than 2048 rows");
  uint32_t valid = static_cast<uint32_t>(len);
  if (validity) {
    valid = 0;
    for (uint32_t w = 0; w < kMaskBytes / 8; ++w) valid += static_cast<uint32_t>(tet::popcount64(validity[w]));
  }
  Staged s{Kind::Str, static_cast<uint32_t>(len), nullptr, validity, valid};
  CellRef c = new_block(s, Enc::Constant, align8(nbytes));
  if (nbytes) std::memcpy(owned_payload(c), bytes, nbytes);
  c.mutable_cell()->meta[0] = nbytes;
  return c;
}

}  // namespace tet::cells
