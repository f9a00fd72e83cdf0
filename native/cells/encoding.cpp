#include "cells/encoding.h"

#include <cmath>
#include <cstring>

#include "cells/codecs.h"
#include "tet/error.h"

namespace tet::cells {

[[noreturn]] void throw_invalid(const std::string& what) {
  throw Error(Code::TET_CELLS_INVALID, "tables region: " + what);
}

namespace {
const EncodingOps* const* encoding_table() {
  // Indexed by the enc byte.
  static const EncodingOps* const kTable[kEncodingCount] = {
      &kPlainOps, &kConstantOps, &kSequenceOps, &kBoolBitsOps, &kForOps,  &kDeltaOps,     &kDictOps,
      &kRleOps,   &kSym8Ops,     &kSym8ForOps,  &kViewsOps,    &kDirectoryOps, &kGlobalDictOps, &kDecimalOps,
      &kRunDirectoryOps, &kPiecewiseSequenceOps, &kSparseBoolOps, &kForRadixOps, &kGlobalHuffmanOps};
  return kTable;
}
}  // namespace

const EncodingOps* find_encoding(uint8_t enc_byte) {
  if (!enc_is_known(enc_byte)) return nullptr;
  const EncodingOps* ops = encoding_table()[enc_byte];
  return ops && ops->enc == static_cast<Enc>(enc_byte) ? ops : nullptr;
}

const EncodingOps& encoding_ops(Enc e) {
  const EncodingOps* ops = find_encoding(static_cast<uint8_t>(e));
  if (!ops) throw_invalid("unknown encoding " + std::to_string(static_cast<unsigned>(e)));
  return *ops;
}

void validate_leaf(const Cell& c, const DecodeContext& ctx) {
  if (!kind_is_known(c.kind)) throw_invalid("unknown column kind " + std::to_string(c.kind));
  if (c.kind_v() == Kind::Table) throw_invalid("a leaf block of kind table");
  const EncodingOps* ops = find_encoding(c.enc);
  if (!ops) throw_invalid("unknown encoding " + std::to_string(c.enc));
  if (c.enc_v() == Enc::Directory) throw_invalid("a directory where a leaf block was expected");
  if (c.enc_v() == Enc::RunDirectory) throw_invalid("a run directory where a leaf block was expected");
  if (!ops->legal(physical_of(c.kind_v())))
    throw_invalid(std::string("encoding ") + enc_name(c.enc_v()) + " cannot hold " + kind_name(c.kind_v()) + " values");
  if (c.attrs & ~attr::kDefined) throw_invalid("undefined attribute bits");
  if (c.len == 0 || c.len > kBlockLanes) throw_invalid("block length " + std::to_string(c.len) + " outside 1..2048");
  if (c.payload_bytes && !c.payload) throw_invalid("payload length without a payload");
  if (c.has(attr::kHasNulls)) {
    if (c.payload_bytes < kMaskBytes) throw_invalid("a block with nulls has no room for its validity mask");
    const uint8_t* v = c.validity();
    for (uint64_t i = c.len; i < kBlockLanes; ++i)
      if ((v[i >> 3] >> (i & 7)) & 1) throw_invalid("validity bits set past the block's length");
  }
  if (c.has(attr::kHasZonemap)) {
    const Physical p = physical_of(c.kind_v());
    if (p == Physical::Int) {
      if (as_i64(c.meta[2]) > as_i64(c.meta[3])) throw_invalid("zone map min above max");
    } else if (p == Physical::Float) {
      const double lo = as_f64(c.meta[2]), hi = as_f64(c.meta[3]);
      if (std::isnan(lo) || std::isnan(hi) || lo > hi) throw_invalid("zone map bounds NaN or out of order");
    } else if (p == Physical::Str) {
      if (c.meta[2] > c.meta[3]) throw_invalid("zone map min above max");
    } else {
      throw_invalid("zone map on a block of a kind that has none");
    }
  }
  ops->validate(c, ctx);
}

void decode_rows(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx) {
  encoding_ops(c.enc_v()).decode(c, start, count, out, ctx);
}

}  // namespace tet::cells
