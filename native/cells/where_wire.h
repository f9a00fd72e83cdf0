// The predicate wire: how a `where` over one stored table crosses from lib/ (lib/plan/where.ts
// encodeWhereWire) to the core. Literals arrive in the column's stored form (dates as days,
// timestamps as ticks of the column's unit, times as µs: lib/ converts the JSON forms), so the
// core only checks them against the column (cells/predicate.h validate_predicate).
//
// Little-endian, no padding, read with bounds-checked loads:
//   header     u32 magic "TWHR" (0x52485754), u32 version (1), u32 n predicates (<= 4096), u32 0
//   predicate  u8 op (cells::WhereOp: 0 eq 1 ne 2 lt 3 le 4 gt 5 ge 6 in 7 not_in 8 range
//              9 prefix 10 is_null 11 is_nan), u8 flag (is_null / is_nan: 0 or 1, else 0), u16 0,
//              u32 column name bytes, the name (UTF-8), u32 literal count, the literals
//   literal    u8 type: 0 absent (a `range` end only), 1 bool + u8 (0/1), 2 int + i64,
//              3 float + f64, 4 str + u32 length + bytes
// Literal counts: eq ne lt le gt ge prefix 1; in / not_in 0..65,536; range 2; is_null / is_nan 0.
// The plan ends exactly after the last predicate. Anything else is TET_PLAN_INVALID.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cells/predicate.h"

namespace tet::cells {

constexpr uint32_t kWhereWireMagic = 0x52485754;  // "TWHR"
constexpr uint32_t kWhereWireVersion = 1;
constexpr uint32_t kMaxWherePredicates = 4096;

// Decodes the wire against `table` (column names resolved: TET_QUERY_UNKNOWN_COLUMN) and
// validates each predicate (validate_predicate's codes).
std::vector<Predicate> decode_where_wire(const TableInfo& table, const uint8_t* data, size_t len);

// What a tensor query needs of a where over an axis table: the selected rows as runs
// (RowSet::runs) and the where_plan counts.
struct WhereRuns {
  std::vector<uint64_t> runs;
  WherePlan plan;
};

// Decodes the wire against the table named `table` (TET_QUERY_UNKNOWN_TABLE) and evaluates it.
WhereRuns evaluate_where_wire(const TablesRegion& region, const std::string& table, const uint8_t* data, size_t len,
                              uint32_t threads = 0, const std::atomic<bool>* cancel = nullptr);

// The inverse, for tests and fuzz seeds: column names by index into `table`.
std::vector<uint8_t> encode_where_wire(const TableInfo& table, const std::vector<Predicate>& preds);

}  // namespace tet::cells
