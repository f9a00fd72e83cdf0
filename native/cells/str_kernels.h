// String kernels on one block of a str column: compare against a literal (or a set), select the
// rows of a mask, the min and max. Order is binary byte order; nulls never match.
//
// compare() resolves a block without per-row work where the block's form allows: from the Sym8
// zone map, a Constant's value, a Dict's values (compared once; the codes are then mapped), or a
// packed Views block's common prefix and alphabet. The Resolved says which happened, for the
// where_plan counts (AllTrue / AllFalse: zone-map or dictionary resolved; Decoded: the payload
// was read row by row, as codes, words or bytes).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cells/encoding.h"
#include "cells/mask.h"

namespace tet::cells {

enum class StrOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Prefix, In };

struct StrPredicate {
  StrOp op = StrOp::Eq;
  std::string literal;           // every op but In
  std::vector<std::string> set;  // In: ascending in binary order, no duplicates
};


// Whether one value satisfies the predicate (the scalar reference the kernels agree with).
bool str_matches(std::string_view value, const StrPredicate& p);

// Fills `out` with the rows of a validated leaf block that satisfy `p`. AllTrue: every present
// row matches (out = the present rows); AllFalse: none does (out all zero).
Resolved compare(const Cell& block, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx = {});
// compare() of two GlobalHuffman blocks of one column at once, their streams walked interleaved
// (two independent lookup chains instead of one): true when it applied, the masks then exactly
// compare()'s (Resolved::Decoded); false, nothing written, when a block is not GlobalHuffman, has
// no present row, or the predicate settles every block without its rows.
bool compare_huffman_pair(const Cell& a, const Cell& b, const StrPredicate& p, BlockMask& ma, BlockMask& mb,
                          const DecodeContext& ctx);

// What a block's header settles without reading a row: a Sym8 / Sym8For zone map (and a
// literal too long to be a Sym8 value); nothing for other encodings (compare() resolves those
// from what their payload holds: a Constant's value, a dictionary, a packed Views prefix).
std::optional<Resolved> probe(const Cell& block, const StrPredicate& p);

// Appends the rows selected by `mask` (in row order; a selected null row appends "").
void filter(const Cell& block, const BlockMask& mask, StrBuffer& out, const DecodeContext& ctx = {});

// The smallest and largest present value, or nothing when every row is null.
std::optional<std::pair<std::string, std::string>> min_max(const Cell& block, const DecodeContext& ctx = {});

}  // namespace tet::cells
