// A column: one root cell, a leaf block for ≤ kBlockLanes rows, else a Directory whose children
// are leaf blocks of exactly kBlockLanes rows each (the last may be shorter). Row access across
// blocks, and the Directory encoding itself, live here.
#pragma once
#include <cstdint>
#include <vector>

#include "cells/encoding.h"

namespace tet::cells {

// The root for these leaves: the one leaf itself, or a new Directory (len = Σ len, meta[0] =
// child count). Throws TET_INTERNAL when a non-last leaf is not full or kinds differ.
CellRef make_column(Kind kind, std::vector<CellRef> leaves);

// Leaf blocks of a column (1 for a leaf root).
uint64_t block_count(const Cell& root);
const Cell& block_at(const Cell& root, uint64_t i);  // i < block_count(root)

// Rows [start, start + count) of the column in the decoded form of encoding.h (Int i64, Float
// f64, Bool u8; Str appended to *(StrBuffer*)out). `validity_out`, when given, receives one byte
// per row (1 = present).
void decode_column(const Cell& root, uint64_t start, uint64_t count, void* out, uint8_t* validity_out = nullptr,
                   const DecodeContext& ctx = {});

// validate_leaf on every block plus the Directory's own shape (children lengths, kinds).
void validate_column(const Cell& root, const DecodeContext& ctx = {});

// `tet verify --deep`: decodes every block and recomputes what its header claims (zone map
// bounds, SORTED, a Float block's NaN count) against the values. Throws TET_CELLS_INVALID.
void verify_column_deep(const Cell& root, const DecodeContext& ctx = {});

// Rows that are null in the column.
uint64_t null_count(const Cell& root);

}  // namespace tet::cells
