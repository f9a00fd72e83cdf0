// StrBuilder: rows of a str column in, a column out (a leaf, or a Directory of 2048-row
// blocks), either whole at finish or block by block through `on_block` (streaming). Each block's
// encoding is chosen by measured bytes among Constant, Dict, Sym8, Sym8For and Views (classic or
// packed); GlobalDict replaces that choice where a column-global dictionary is in force and makes
// the block smaller. Beside the column it derives the column's metablocks: the distinct-count
// sketch, the global dictionary (when in force) and the per-value block index (for
// high-cardinality columns).
//
// The global-dictionary decision. The candidate is every distinct value seen so far (dropped for
// good past kGlobalDictMaxValues values / kGlobalDictMaxBytes bytes). The decision is taken over
// the blocks held back so far: it is in force when (its body + Σ the held blocks, each as
// GlobalDict where that is smaller and the block is not Constant) < Σ the held blocks' own
// choices; the held blocks are then re-encoded accordingly and released.
//  - Without on_block every block is held: the decision is taken at finish over the whole column.
//  - With on_block the first kGlobalDictDecideBlocks blocks are held (fewer if the candidate is
//    dropped first, or the column ends first) and the decision is taken on them. The dictionary
//    is then fixed (the values of those blocks, sorted); each later block becomes GlobalDict when
//    every value of it is in the dictionary and that is smaller than its own choice, else keeps
//    its own choice. A streaming column therefore holds at most kGlobalDictDecideBlocks encoded
//    blocks at any time.
//
// Memory: one block of rows, the held blocks (above), the dictionary candidate (capped), and the
// block index's (hash, block) pairs while it is still a candidate: 8 bytes a pair in memory up to
// index_run_pairs, then sorted runs in an unlinked temp file in spill_dir, merged at finish
// (BlockIndex::Builder). The index body itself (≤ 5 B/row) is built in memory at finish.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cells/metablocks.h"

namespace tet::cells {

struct StrBuilderOptions {
  bool allow_global_dict = true;
  bool allow_block_index = true;
  // Set: each sealed block goes here, in row order, as soon as its encoding is final, and
  // finish() returns an empty root. Unset: finish() returns the column.
  std::function<void(CellRef)> on_block;
  // Where the block index spills its sorted runs ("" = $TMPDIR or /tmp), and the pairs a run holds.
  std::string spill_dir;
  uint64_t index_run_pairs = BlockIndex::Builder::kDefaultRunPairs;
};

// What the builder measured, for `tet info`-style reports and tests.
struct StrColumnStats {
  uint64_t rows = 0, nulls = 0, blocks = 0;
  uint64_t blocks_by_enc[kEncodingCount] = {};
  uint64_t blocks_held_max = 0;     // the most encoded blocks held back at once
  uint64_t block_bytes = 0;         // Σ payload bytes + 64-byte headers of the final blocks
  uint64_t per_block_bytes = 0;     // the same, had no global dictionary been used
  uint64_t global_dict_bytes = 0;   // its metablock body, 0 when not in force
  uint64_t block_index_bytes = 0;   // its metablock body, 0 when none
};

class StrBuilder {
 public:
  static constexpr uint64_t kGlobalDictMaxValues = uint64_t(1) << 16;
  static constexpr uint64_t kGlobalDictMaxBytes = uint64_t(8) << 20;
  // Streaming: the blocks the global-dictionary decision is measured on (64 Ki rows).
  static constexpr uint64_t kGlobalDictDecideBlocks = 32;
  // The longest Huffman code of a dictionary of ≤ 2^12 values (larger ones: the bits n needs).
  static constexpr unsigned kHuffmanMaxLength = 12;
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

  // The column root (null for a column of 0 rows, and always null with on_block: the blocks went
  // there). Once only.
  CellRef finish();

  // After finish() (streaming or not):
  const GlobalDictionary* global_dictionary() const;  // null unless in force
  const DistinctSketch& distinct_sketch() const;
  const BlockIndex* block_index() const;              // null unless built
  BlockIndex* block_index();                          // e.g. to take_body() for the writer
  const StrColumnStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tet::cells
