#include "cells/builders.h"

#include <cmath>
#include <cstring>

#include "tet/error.h"
#include "util/bits.h"

namespace tet::cells {

namespace {

struct NumericCodec {
  Enc enc;
  uint64_t (*fit)(const Staged&);
  CellRef (*encode)(const Staged&);
};

// In tie-break order: the cheaper decode first.
constexpr NumericCodec kCodecs[] = {
    {Enc::Constant, constant_fit, constant_encode}, {Enc::Sequence, sequence_fit, sequence_encode},
    {Enc::PiecewiseSequence, piecewise_sequence_fit, piecewise_sequence_encode},
    {Enc::Plain, plain_fit, plain_encode},          {Enc::BoolBits, bool_bits_fit, bool_bits_encode},
    {Enc::SparseBool, sparse_bool_fit, sparse_bool_encode},
    {Enc::For, for_fit, for_encode},                {Enc::Rle, rle_fit, rle_encode},
    {Enc::Delta, delta_fit, delta_encode},          {Enc::Decimal, decimal_fit, decimal_encode},
    {Enc::ForRadix, for_radix_fit, for_radix_encode},
};

const NumericCodec* codec_of(Enc e) {
  for (const auto& c : kCodecs)
    if (c.enc == e) return &c;
  return nullptr;
}

// -0.0 orders below +0.0 so that a block's bounds do not depend on which zero came first.
bool float_less(double a, double b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); }

void stamp_int(Cell& m, const Staged& s) {
  int64_t lo = INT64_MAX, hi = INT64_MIN, prev = INT64_MIN;
  bool sorted = true;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    const int64_t v = as_i64(s.lanes[i]);
    sorted = sorted && v >= prev;
    prev = v;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (sorted) m.attrs |= attr::kSorted;
  const bool derived_bounds = m.enc_v() == Enc::Constant || m.enc_v() == Enc::Sequence;
  if (s.valid > 0 && !derived_bounds) {
    m.attrs |= attr::kHasZonemap;
    m.meta[2] = bits_of(lo);
    m.meta[3] = bits_of(hi);
  }
}

void stamp_float(Cell& m, const Staged& s) {
  double lo = 0, hi = 0, prev = -INFINITY;
  uint64_t nans = 0, numbers = 0;
  bool sorted = true;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    const double v = as_f64(s.lanes[i]);
    if (std::isnan(v)) {
      ++nans;
      sorted = false;
      continue;
    }
    sorted = sorted && !(v < prev);
    prev = v;
    if (numbers++ == 0) lo = hi = v;
    if (float_less(v, lo)) lo = v;
    if (float_less(hi, v)) hi = v;
  }
  if (sorted) m.attrs |= attr::kSorted;
  m.meta[1] = nans;
  if (numbers > 0 && m.enc_v() != Enc::Constant) {
    m.attrs |= attr::kHasZonemap;
    m.meta[2] = bits_of(lo);
    m.meta[3] = bits_of(hi);
  }
}

void stamp_bool(Cell& m, const Staged& s) {
  uint64_t prev = 0;
  bool sorted = true;
  for (uint32_t i = 0; i < s.len; ++i) {
    if (!s.row_valid(i)) continue;
    sorted = sorted && s.lanes[i] >= prev;
    prev = s.lanes[i];
  }
  if (sorted) m.attrs |= attr::kSorted;
}

// `valid` recounted from the mask, and no mask when nothing is null (callers may pass either).
Staged normalized(Staged s) {
  if (!s.validity) {
    s.valid = s.len;
    return s;
  }
  s.valid = 0;
  for (uint32_t w = 0; w < kMaskBytes / 8; ++w) s.valid += static_cast<uint32_t>(tet::popcount64(s.validity[w]));
  if (s.valid == s.len) s.validity = nullptr;
  return s;
}

}  // namespace

Enc choose_encoding(const Staged& staged) {
  const Staged rows = normalized(staged);
  const NumericCodec* best = nullptr;
  uint64_t best_bytes = kNoFit;
  for (const auto& c : kCodecs) {
    const uint64_t bytes = c.fit(rows);
    if (bytes < best_bytes) best = &c, best_bytes = bytes;  // strict: ties keep the earlier (cheaper) codec
  }
  if (!best) throw Error(Code::TET_INTERNAL, std::string("cells: no numeric encoding holds ") + kind_name(rows.kind));
  return best->enc;
}

CellRef encode_block(Enc enc, const Staged& staged) {
  const Staged rows = normalized(staged);
  const NumericCodec* codec = codec_of(enc);
  if (!codec || rows.len == 0 || rows.len > kBlockLanes)
    throw Error(Code::TET_INTERNAL, std::string("cells: cannot encode a block as ") + enc_name(enc));
  CellRef block = codec->encode(rows);
  Cell& m = *block.mutable_cell();
  switch (rows.physical()) {
    case Physical::Int: stamp_int(m, rows); break;
    case Physical::Float: stamp_float(m, rows); break;
    case Physical::Bool: stamp_bool(m, rows); break;
    default: break;
  }
  return block;
}

BlockBuilder::BlockBuilder(Kind kind) : kind_(kind) {}

void BlockBuilder::seal() {
  if (n_ == 0) return;
  const Staged s{kind_, n_, lanes_, valid_ < n_ ? validity_ : nullptr, valid_};
  blocks_.push_back(encode_block(choose_encoding(s), s));
  sealed_rows_ += n_;
  n_ = valid_ = 0;
  std::memset(validity_, 0, sizeof validity_);
}

CellRef BlockBuilder::finish() {
  seal();
  sealed_rows_ = 0;
  if (blocks_.empty()) return CellRef();
  std::vector<CellRef> blocks;
  blocks.swap(blocks_);
  return make_column(kind_, std::move(blocks));
}

IntBuilder::IntBuilder(Kind kind) : BlockBuilder(kind) {
  if (physical_of(kind) != Physical::Int) throw Error(Code::TET_INTERNAL, std::string("cells: IntBuilder for ") + kind_name(kind));
}

void IntBuilder::push_many(const int64_t* values, const uint8_t* valid, size_t n) {
  for (size_t i = 0; i < n; ++i) stage(bits_of(values[i]), valid == nullptr || valid[i] != 0);
}

void FloatBuilder::push_many(const double* values, const uint8_t* valid, size_t n) {
  for (size_t i = 0; i < n; ++i) stage(bits_of(values[i]), valid == nullptr || valid[i] != 0);
}

void BoolBuilder::push_many(const uint8_t* values, const uint8_t* valid, size_t n) {
  for (size_t i = 0; i < n; ++i) stage(values[i] != 0, valid == nullptr || valid[i] != 0);
}

}  // namespace tet::cells
