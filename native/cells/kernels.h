// Kernels over numeric blocks and columns: sum, min / max, count, compare against a constant
// (a 2,048-bit row mask) and filter (the values of the rows a mask selects).
//
// Every kernel gives the result decode-then-compute would give, whatever the block's encoding.
// The paths that avoid decoding:
//  - compare first consults what the header proves (zone map, a Constant's value, a Sequence's
//    span, a Float block's NaN count, For's frame) and resolves a block as all-true / all-false
//    without reading its data when it can; `Resolved` says which happened;
//  - For: sum = base × present + Σ residuals as they unpack; compare rebases the constant into
//    the residual domain once (constants outside [base, base + 2^w) clamp to all-true /
//    all-false); filter widens only the selected rows;
//  - Delta: sum / compare / filter scan the recurrence in registers.
//  - SparseBool: sum is the header's counts; compare builds the mask from the exception rows.
// Everything else decodes into the caller's TierScratch (Int at its width tier, tiers.h): no
// allocation per block.
//
// Semantics: nulls are skipped by sum / min_max / count and match no comparison. Int sums are
// exact (128-bit). Float comparisons are IEEE (`ne` matches NaN, the others do not). Float
// sums use one canonical order, `canonical_sum` below, on the block's lanes in row order (a
// null lane is +0.0, which changes no partial sum), and a column adds its block sums left to
// right from +0.0; so a result never depends on the encoding. Float min / max skip NaN (the
// NaN count comes back beside them; numpy's propagation is the caller's decision) and order
// -0.0 below +0.0.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "cells/cell.h"
#include "cells/mask.h"
#include "cells/tiers.h"

namespace tet::cells {

enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

struct IntSum {
  __int128 sum = 0;
  uint64_t valid = 0;  // rows summed
};
struct FloatSum {
  double sum = 0.0;
  uint64_t valid = 0;
};
struct IntMinMax {
  int64_t min = 0, max = 0;
  uint64_t valid = 0;  // 0: no present row, min / max meaningless
};
struct FloatMinMax {
  double min = 0.0, max = 0.0;  // over present non-NaN rows
  uint64_t numbers = 0;         // present non-NaN rows (0: min / max meaningless)
  uint64_t nans = 0;            // present NaN rows
};

// The canonical f64 summation order: pairwise over n lanes, halving (at a multiple of 8) down to
// runs of ≤ 128 lanes, each summed into 8 accumulators by lane index mod 8 (from +0.0) and
// combined as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)).
double canonical_sum(const double* x, uint32_t n);

// ---- one leaf block (Int-stored, Float or Bool as each name says) ----
uint64_t count(const Cell& block);  // present rows
IntSum sum_int(const Cell& block, TierScratch& scratch);
IntSum sum_bool(const Cell& block, TierScratch& scratch);  // true rows
FloatSum sum_float(const Cell& block, TierScratch& scratch);
IntMinMax min_max_int(const Cell& block, TierScratch& scratch);
FloatMinMax min_max_float(const Cell& block, TierScratch& scratch);
// `decoded`, when given: the block's tier where the comparison decoded every row into `scratch`
// (count = len; valid until `scratch` is reused), else count 0.
Resolved compare_int(const Cell& block, CmpOp op, int64_t constant, BlockMask& out, TierScratch& scratch,
                     IntTier* decoded = nullptr);
// ForRadix blocks compared without a tier: eight lanes a step with AVX-512 (F, DQ, BW, VL, VBMI)
// where the CPU has it and lanes are ≤ 52 bits with ≤ 8 digits (radix_compare_simd); then
// compare_int takes this path. radix_compare ORs into `words` the rows whose residual
// (value - base) holds `op` against `residual` (in [0, R)), null rows included (their digit 0);
// simd = false compares one lane at a time (tests).
bool radix_compare_simd(const Cell& block);
void radix_compare(const Cell& block, CmpOp op, uint64_t residual, uint64_t* words, bool simd = true);
Resolved compare_float(const Cell& block, CmpOp op, double constant, BlockMask& out, TierScratch& scratch);
Resolved compare_bool(const Cell& block, CmpOp op, bool constant, BlockMask& out, TierScratch& scratch);  // false < true
// Appends the value of every row `mask` selects (a null row as the kind's zero, and then 0 to
// `valid_out` when given, else 1).
void filter_int(const Cell& block, const BlockMask& mask, std::vector<int64_t>& out, TierScratch& scratch,
                std::vector<uint8_t>* valid_out = nullptr);
// filter_int from the block's tier already decoded (every row: a compare_int's `decoded`).
void filter_int_tier(const Cell& block, const IntTier& tier, const BlockMask& mask, std::vector<int64_t>& out,
                     std::vector<uint8_t>* valid_out = nullptr);
void filter_float(const Cell& block, const BlockMask& mask, std::vector<double>& out, TierScratch& scratch,
                  std::vector<uint8_t>* valid_out = nullptr);
void filter_bool(const Cell& block, const BlockMask& mask, std::vector<uint8_t>& out, TierScratch& scratch,
                 std::vector<uint8_t>* valid_out = nullptr);

// ---- what a header proves, and set membership (the where evaluation's pieces) ----
// probe_*: the resolution compare_* / compare_*_in would reach from the header alone (zone map,
// a Constant's value, a Sequence's span, For's frame, a Float block's NaN count), reading no
// payload byte; nothing when rows must be looked at. AllTrue means every present row matches
// (vacuously so on an all-null block), AllFalse none does.
std::optional<Resolved> probe_int(const Cell& block, CmpOp op, int64_t constant);
// Runs of kSpanBlocks blocks of an Int-stored column: the bounds their headers prove for their
// present values (int_range of each block: zone map, Constant, Sequence, For's frame; all-null
// blocks add nothing). `known` false: some block of the run bounds nothing; `any` false: the run
// has no present value. TablesRegion::int_spans caches them per column.
constexpr uint64_t kSpanBlocks = 32;
struct IntSpan {
  __int128 lo = 0, hi = 0;
  bool known = true, any = false;
};
std::vector<IntSpan> int_spans(const Cell& root);
// Whether `op c` holds for no present row of blocks whose values lie in `span` (what probe_int
// would say of each block of the run: AllFalse).
bool int_span_never(const IntSpan& span, CmpOp op, int64_t c);
std::optional<Resolved> probe_float(const Cell& block, CmpOp op, double constant);
std::optional<Resolved> probe_bool(const Cell& block, CmpOp op, bool constant);
// Membership in `set`, ascending with no duplicates (Float: no NaN, and -0.0 / +0.0 one value);
// negate = not in. Nulls match neither; a NaN row matches only the negated form (IEEE: NaN
// equals no member). A set member that the block's bounds exclude is never looked for; with
// one left the compare is compare_* Eq / Ne.
std::optional<Resolved> probe_int_in(const Cell& block, const std::vector<int64_t>& set, bool negate);
std::optional<Resolved> probe_float_in(const Cell& block, const std::vector<double>& set, bool negate);
Resolved compare_int_in(const Cell& block, const std::vector<int64_t>& set, bool negate, BlockMask& out,
                        TierScratch& scratch);
Resolved compare_float_in(const Cell& block, const std::vector<double>& set, bool negate, BlockMask& out,
                          TierScratch& scratch);

// ---- a column: its root, or null for a column of 0 rows ----
struct ColumnMask {
  std::vector<BlockMask> blocks;  // one per block
  uint64_t all_true = 0, all_false = 0, decoded = 0;  // blocks resolved each way
  uint64_t selected() const;
};
uint64_t column_count(const Cell* root);
IntSum column_sum_int(const Cell* root, TierScratch& scratch);
IntSum column_sum_bool(const Cell* root, TierScratch& scratch);
FloatSum column_sum_float(const Cell* root, TierScratch& scratch);
IntMinMax column_min_max_int(const Cell* root, TierScratch& scratch);
FloatMinMax column_min_max_float(const Cell* root, TierScratch& scratch);
ColumnMask column_compare_int(const Cell* root, CmpOp op, int64_t constant, TierScratch& scratch);
ColumnMask column_compare_float(const Cell* root, CmpOp op, double constant, TierScratch& scratch);
ColumnMask column_compare_bool(const Cell* root, CmpOp op, bool constant, TierScratch& scratch);
void column_filter_int(const Cell* root, const ColumnMask& mask, std::vector<int64_t>& out, TierScratch& scratch,
                       std::vector<uint8_t>* valid_out = nullptr);
void column_filter_float(const Cell* root, const ColumnMask& mask, std::vector<double>& out, TierScratch& scratch,
                         std::vector<uint8_t>* valid_out = nullptr);
void column_filter_bool(const Cell* root, const ColumnMask& mask, std::vector<uint8_t>& out, TierScratch& scratch,
                        std::vector<uint8_t>* valid_out = nullptr);

}  // namespace tet::cells
