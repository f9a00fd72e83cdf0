#include "cells/column.h"

#include <algorithm>
#include <cstring>

#include "cells/codecs.h"
#include "tet/error.h"

namespace tet::cells {

namespace {
Cell* const* children(const Cell& dir) { return reinterpret_cast<Cell* const*>(dir.payload); }
uint64_t child_count(const Cell& dir) { return dir.payload_bytes / sizeof(Cell*); }
size_t value_size(Physical p) { return p == Physical::Bool ? 1 : 8; }

void directory_validate(const Cell& c, const DecodeContext& ctx) {
  const uint64_t n = child_count(c);
  if (c.payload_bytes % sizeof(Cell*) != 0 || n == 0) throw_invalid("a directory without children");
  if (c.meta[0] != n) throw_invalid("a directory's child count disagrees with its payload");
  uint64_t rows = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const Cell* k = children(c)[i];
    if (!k) throw_invalid("a directory child is missing");
    if (k->kind != c.kind) throw_invalid("a directory child of another kind");
    validate_leaf(*k, ctx);
    if (i + 1 < n && k->len != kBlockLanes) throw_invalid("a directory child before the last is not full");
    rows += k->len;
  }
  if (rows != c.len) throw_invalid("a directory's length disagrees with its children");
}

void directory_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx) {
  decode_column(c, start, count, out, nullptr, ctx);
}

bool directory_legal(Physical p) { return p != Physical::Table; }
}  // namespace

const EncodingOps kDirectoryOps{Enc::Directory, directory_legal, directory_validate, directory_decode};

CellRef make_column(Kind kind, std::vector<CellRef> leaves) {
  if (leaves.empty()) throw Error(Code::TET_INTERNAL, "cells: a column needs at least one block");
  uint64_t rows = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i]->kind != static_cast<uint8_t>(kind)) throw Error(Code::TET_INTERNAL, "cells: a block of another kind");
    if (i + 1 < leaves.size() && leaves[i]->len != kBlockLanes)
      throw Error(Code::TET_INTERNAL, "cells: a block before the last is not full");
    rows += leaves[i]->len;
  }
  if (leaves.size() == 1) return std::move(leaves[0]);
  CellRef dir = new_cell(kind, Enc::Directory, rows, leaves.size() * sizeof(Cell*));
  auto** kids = reinterpret_cast<Cell**>(owned_payload(dir));
  for (size_t i = 0; i < leaves.size(); ++i) kids[i] = leaves[i].detach();
  dir.mutable_cell()->meta[0] = leaves.size();
  return dir;
}

uint64_t block_count(const Cell& root) { return root.enc_v() == Enc::Directory ? child_count(root) : 1; }

const Cell& block_at(const Cell& root, uint64_t i) {
  return root.enc_v() == Enc::Directory ? *children(root)[i] : root;
}

void decode_column(const Cell& root, uint64_t start, uint64_t count, void* out, uint8_t* validity_out,
                   const DecodeContext& ctx) {
  if (start > root.len || count > root.len - start) throw Error(Code::TET_INTERNAL, "cells: decode past a column's end");
  const Physical p = physical_of(root.kind_v());
  const size_t vsize = value_size(p);
  uint64_t row = start, done = 0;
  while (done < count) {
    const uint64_t b = row / kBlockLanes;
    const Cell& blk = block_at(root, b);
    const uint32_t in_blk = static_cast<uint32_t>(row - b * kBlockLanes);
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(count - done, blk.len - in_blk));
    void* dst = p == Physical::Str ? out : static_cast<uint8_t*>(out) + done * vsize;
    encoding_ops(blk.enc_v()).decode(blk, in_blk, n, dst, ctx);
    if (validity_out) {
      const uint8_t* v = blk.validity();
      for (uint32_t i = 0; i < n; ++i) validity_out[done + i] = row_valid(v, in_blk + i) ? 1 : 0;
    }
    row += n;
    done += n;
  }
}

void validate_column(const Cell& root, const DecodeContext& ctx) {
  if (root.enc_v() == Enc::Directory) {
    if (!kind_is_known(root.kind) || root.kind_v() == Kind::Table) throw_invalid("a directory of an unknown kind");
    directory_validate(root, ctx);
  } else {
    validate_leaf(root, ctx);
  }
}

uint64_t null_count(const Cell& root) {
  uint64_t n = 0;
  for (uint64_t i = 0; i < block_count(root); ++i) {
    const Cell& b = block_at(root, i);
    n += b.len - valid_count(b);
  }
  return n;
}

}  // namespace tet::cells
