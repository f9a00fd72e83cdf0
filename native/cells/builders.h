// Column builders for the numeric kinds. Rows are staged 2,048 at a time; when a block fills
// (or at finish) it is sealed: every encoding legal for the kind measures the exact bytes it
// would take for these rows and the fewest bytes wins (ties go to the cheaper decode, in the
// order Constant, Sequence, PiecewiseSequence, Plain, BoolBits, SparseBool, For, Rle, Delta,
// Decimal, ForRadix). Nothing is configured.
//
// A sealed block carries HAS_NULLS and the mask trailer only when one of its rows is null,
// SORTED when its present values never decrease (Float: and none is NaN), a zone map on Int and
// Float blocks (Float bounds exclude NaN, -0.0 orders below +0.0; none on all-null or NaN-only
// blocks, none on Constant / Sequence), and a Float block's NaN count in meta[1]. Null rows hold
// the kind's zero; Float values keep their exact bits (-0.0, NaN payloads).
//
// Memory: the sealed blocks plus one fixed staging buffer (16 KiB + the mask), whatever the
// number of rows pushed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cells/column.h"
#include "cells/numeric.h"

namespace tet::cells {

// The encoding a builder picks for these rows (what the seal measures).
Enc choose_encoding(const Staged& rows);
// One leaf block of `enc` holding these rows, exactly as a builder seals it (zone map, SORTED,
// NaN count included). Throws TET_INTERNAL when `enc` cannot hold them.
CellRef encode_block(Enc enc, const Staged& rows);

// The staging and sealing every numeric builder shares.
class BlockBuilder {
 public:
  uint64_t rows() const { return sealed_rows_ + n_; }
  // The column's root: one leaf, or a Directory over the sealed blocks. A column of 0 rows has
  // no root (an empty CellRef): a leaf block holds 1..2048 rows. The builder is empty afterwards.
  CellRef finish();

 protected:
  explicit BlockBuilder(Kind kind);
  void stage(uint64_t lane, bool present) {
    lanes_[n_] = present ? lane : 0;
    validity_[n_ >> 6] |= uint64_t(present) << (n_ & 63);
    valid_ += present;
    if (++n_ == kBlockLanes) seal();
  }
  void seal();

 private:
  Kind kind_;
  uint32_t n_ = 0, valid_ = 0;
  uint64_t sealed_rows_ = 0;
  std::vector<CellRef> blocks_;
  alignas(64) uint64_t lanes_[kBlockLanes];
  uint64_t validity_[kMaskBytes / 8] = {};
};

// Int and the kinds stored as Int (Date, Timestamp, Time).
class IntBuilder : public BlockBuilder {
 public:
  explicit IntBuilder(Kind kind = Kind::Int);
  void push(int64_t v) { stage(bits_of(v), true); }
  void push_null() { stage(0, false); }
  // n values; valid[i] == 0 marks row i null (valid may be null: every row present).
  void push_many(const int64_t* values, const uint8_t* valid, size_t n);
};

class FloatBuilder : public BlockBuilder {
 public:
  FloatBuilder() : BlockBuilder(Kind::Float) {}
  void push(double v) { stage(bits_of(v), true); }
  void push_null() { stage(0, false); }
  void push_many(const double* values, const uint8_t* valid, size_t n);
};

class BoolBuilder : public BlockBuilder {
 public:
  BoolBuilder() : BlockBuilder(Kind::Bool) {}
  void push(bool v) { stage(v ? 1 : 0, true); }
  void push_null() { stage(0, false); }
  void push_many(const uint8_t* values, const uint8_t* valid, size_t n);  // values: 0 = false
};

}  // namespace tet::cells
