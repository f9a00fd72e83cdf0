// Exact sharded execution. The work units of a query are a function of the plan and the
// selection (the same for every shard); shard i of n folds a contiguous, balanced range of them
// and returns a self-describing partial ("TPS1": versioned, CRC-32 checked, carrying the query
// fingerprint, the file identity, the plan, the query document and the caller's context). The
// coordinator validates a complete set of partials and replays the single-process merge in unit
// order, so the merged result is bit-identical to tet::execute. Layout: native/exec/README.md.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tet/chunk_source.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace tet {

constexpr uint32_t kPartialMagic = 0x31535054;  // "TPS1"
constexpr uint32_t kPartialVersion = 2;  // 2: round number + echoed round request

struct PartialRequest {
  uint32_t shard = 0, shards = 1;  // shard index in [0, shards)
  std::string doc;                 // canonical query document (part of the fingerprint)
  std::string context;             // opaque caller text carried to the merge (not fingerprinted)
  std::vector<uint8_t> round;      // round request ("TPR1") from merge_partials; empty = round 1
};

// Runs one shard of `plan` against `src` (the plan is already validated against its catalog).
// Throws tet::Error (TET_SHARD_MISMATCH for a bad shard spec, TET_QUERY_UNSUPPORTED for plans
// without an aggregate, or whatever execution raises).
std::vector<uint8_t> execute_partial(const ChunkSource& src, const QueryPlan& plan, const PartialRequest& req,
                                     const ExecContext& ctx = {});

struct PartialHeader {
  uint32_t kind = 0;  // 1 scalar streaming fold, 2 partial streaming fold, 3 tier C
  uint64_t fingerprint = 0, file_id = 0;
  uint32_t shard = 0, shards = 0;
  uint64_t unit_begin = 0, unit_end = 0, units = 0;
  Op op = Op::None;
  DType dtype = DType::F32;
  std::string dataset, doc, context;
  uint32_t round = 1;  // the round this partial answers (tier C may take several)
};

// Header of one partial after its length, magic, version and checksum are checked
// (TET_SHARD_CORRUPT otherwise).
PartialHeader inspect_partial(const uint8_t* bytes, size_t len);

struct MergedPartials {
  // done: `result` is the query's result. Otherwise (tier C) every shard must run again with the
  // round request `next_round` (round number `next_round_no`), and those partials be merged.
  bool done = true;
  std::vector<uint8_t> next_round;
  uint32_t next_round_no = 0;
  std::string op;  // the op's name (for messages)
  QueryResult result;
  DType dtype = DType::F32;
  std::string doc, context;  // from shard 0
};

// Validates a complete set of partials (any order) and merges them: TET_SHARD_CORRUPT (bad
// bytes), TET_SHARD_MISMATCH (different query, file, shard count, or round), TET_SHARD_DUPLICATE,
// TET_SHARD_MISSING. Tier-C ops may answer "another round needed" (done = false).
MergedPartials merge_partials(const std::vector<std::pair<const uint8_t*, size_t>>& parts, const ExecContext& ctx = {});

}  // namespace tet
