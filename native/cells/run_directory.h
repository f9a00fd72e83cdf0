// RunDirectory: a whole int-stored column stored as its runs (docs/format-tables.md, "run
// directory"). At rest it is the column's only cell: a non-leaf root whose payload holds the run
// values (delta-coded) and run lengths (frame-of-reference), bit-packed. Readers expand it once,
// on first use, into an ordinary in-memory Directory of synthesized leaves (Constant for a block
// inside one run, Rle for a block that straddles run boundaries), so kernels, where evaluation,
// deep checks and readColumn only ever see leaves. The region writer holds a column's Constant /
// Rle blocks as runs while they allow it and picks the run directory at layout time when it
// measures smaller than the leaves it replaces (headers included).
//
// obs `ts` (runs of 10^4 equal timestamps) at 10^8 rows: 10^4 runs of equal length and equal
// steps pack to widths 0, so the column is one 64-byte cell and a 24-byte payload, where the
// leaves took 48,829 headers.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "cells/cell.h"

namespace tet::cells {

// Bounds a run directory keeps (writers fall back to leaves past them; readers reject them), so
// that expanding one costs memory in proportion to its leaves: at most 2^32 - 1 rows, and on
// average at most kMaxRunsPerBlock runs per synthesized block.
constexpr uint64_t kMaxRunRows = (uint64_t(1) << 32) - 1;
constexpr uint64_t kMaxRunsPerBlock = 8;

struct Run {
  uint64_t value;   // the physical i64 bits
  uint64_t length;  // rows, ≥ 1
};

// The leaves a column of these runs is made of (each but the last 2048 rows), exactly as the
// builders seal such rows: Constant (SORTED) for one run, else Rle (zone map, SORTED when the
// run values never decrease). f is called once per leaf, in row order.
void for_each_run_leaf(Kind kind, const std::vector<Run>& runs, const std::function<void(const Cell&)>& f);

// Data bytes of the run directory of these runs (the formula of docs/format-tables.md).
uint64_t run_directory_bytes(const std::vector<Run>& runs);
// Bytes the same rows take as leaves at rest: 64 per cell (a Directory's too when there is more
// than one leaf) plus each leaf's payload padded to 64.
uint64_t run_leaves_bytes(const std::vector<Run>& runs);

// A run directory's payload and meta words (runs non-empty, adjacent values distinct, rows
// within the bounds above).
struct RunDirectoryImage {
  std::vector<uint8_t> payload;
  uint64_t meta[4] = {0, 0, 0, 0};
  uint64_t rows = 0;
};
RunDirectoryImage encode_run_directory(const std::vector<Run>& runs);

// Validates an at-rest run directory root (every field and run; TET_CELLS_INVALID) and returns
// the in-memory column: the single leaf, or a Directory of the synthesized leaves.
CellRef expand_run_directory(const Cell& root);

// A column's Constant / Rle blocks, held as runs while they allow a run directory.
class RunCollector {
 public:
  explicit RunCollector(Kind kind);
  bool active() const { return active_; }
  // Holds a sealed leaf as runs and returns true, or returns false (holding nothing of it) when
  // it is not an int-stored Constant / Rle block without nulls, or the bounds would be passed.
  bool take(const Cell& leaf);
  const std::vector<Run>& runs() const { return runs_; }
  uint64_t rows() const { return rows_; }
  // Drops the runs; the collector takes nothing afterwards.
  void stop();

 private:
  Kind kind_;
  bool active_;
  uint64_t rows_ = 0, blocks_ = 0;
  std::vector<Run> runs_;
};

}  // namespace tet::cells
