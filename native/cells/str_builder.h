// StrBuilder: rows of a str column in, a column root out (a leaf, or a Directory of 2048-row
// blocks). Each block's encoding is chosen by measured bytes among Constant, Dict, Sym8,
// Sym8For and Views (classic or packed); at finish the column may switch blocks to GlobalDict
// when a column-global dictionary plus its codes measures smaller than the blocks it replaces.
// Beside the column it derives the column's metablocks: the distinct-count sketch, the global
// dictionary (when in force) and the per-value block index (for high-cardinality columns).
//
// Memory: one block of rows at a time, plus what the column keeps until finish (its encoded
// blocks, 8 bytes per (value, block) pair while the block index is still a candidate, and the
// global-dictionary candidate, capped at kGlobalDictMaxValues values / kGlobalDictMaxBytes bytes,
// after which it is dropped for good).
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>

#include "cells/metablocks.h"

namespace tet::cells {

struct StrBuilderOptions {
  bool allow_global_dict = true;
  bool allow_block_index = true;
};

// What the builder measured, for `tet info`-style reports and tests.
struct StrColumnStats {
  uint64_t rows = 0, nulls = 0, blocks = 0;
  uint64_t blocks_by_enc[kEncodingCount] = {};
  uint64_t block_bytes = 0;         // Σ payload bytes + 64-byte headers of the final blocks
  uint64_t per_block_bytes = 0;     // the same, had no global dictionary been used
  uint64_t global_dict_bytes = 0;   // its metablock body, 0 when not in force
  uint64_t block_index_bytes = 0;   // its metablock body, 0 when none
};

class StrBuilder {
 public:
  static constexpr uint64_t kGlobalDictMaxValues = uint64_t(1) << 16;
  static constexpr uint64_t kGlobalDictMaxBytes = uint64_t(8) << 20;
  // The block index is built when the column has ≥ 2 blocks, ≥ kIndexMinDistinct distinct
  // values, and an equality lookup would visit at most 1/kIndexMaxVisitShare of the blocks.
  static constexpr uint64_t kIndexMinDistinct = 4096;
  static constexpr uint64_t kIndexMaxVisitShare = 8;

  explicit StrBuilder(StrBuilderOptions options = {});
  ~StrBuilder();
  StrBuilder(const StrBuilder&) = delete;
  StrBuilder& operator=(const StrBuilder&) = delete;

  void push(std::string_view value);
  void push_null();
  // n rows; valid (optional, one byte per row, 0 = null) marks nulls.
  void push_many(const std::string_view* values, size_t n, const uint8_t* valid = nullptr);

  // The column root (null for a column of 0 rows). Once only.
  CellRef finish();

  // After finish():
  const GlobalDictionary* global_dictionary() const;  // null unless in force
  const DistinctSketch& distinct_sketch() const;
  const BlockIndex* block_index() const;              // null unless built
  const StrColumnStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tet::cells
