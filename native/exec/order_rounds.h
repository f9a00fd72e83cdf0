// Small, exact sharded partials for the tier-C ops (exec/README.md, "Sharded execution"):
//   quantile   scalar median / quantile: histogram rounds of a radix select over order-preserving
//              keys (the top 16 key bits, then the next 16 within the targets' prefixes, or the
//              raw keys of a prefix once it holds <= kGatherCap elements over all shards);
//   histogram  scalar histogram: u64 bin counts (a rangeless one first ships its finite min / max);
//   fibers     non-scalar median / quantile / histogram: shard i computes its balanced range of
//              output fibers with the engine's own code and ships final values;
//   covariance co-moment states of its observation blocks (comoment.h).
// A later round is asked for by a round request ("TPR1": versioned, CRC-checked, bound to the
// query fingerprint, the file identity and the shard count), which every shard echoes.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exec/selection.h"
#include "exec/tile_input.h"
#include "tet/chunk_source.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace tet {
namespace exec {
namespace rounds {

enum Mode : uint32_t { kQuantile = 1, kHistogram = 2, kFibers = 3, kCovariance = 4 };
constexpr uint64_t kGatherCap = uint64_t(1) << 16;  // raw keys asked for below this many
constexpr uint32_t kRequestMagic = 0x31525054;      // "TPR1"
constexpr uint32_t kRequestVersion = 1;
constexpr uint32_t kMaxRounds = 8;

uint32_t mode_of(const QueryPlan& p);
const char* mode_name(uint32_t mode);
// Units the shards split: selection tiles (quantile, histogram), output fibers, observation blocks.
uint64_t unit_count(const QueryPlan& p, const Selection& sel);

struct Request {
  uint32_t round = 1;  // 1: no request bytes
  uint64_t fingerprint = 0, file_id = 0;
  uint32_t shards = 0, mode = 0;
  std::vector<uint8_t> payload;
  std::vector<uint8_t> bytes;  // the framed request as received (empty for round 1)
};
std::vector<uint8_t> encode_request(const Request& r);
// Framing, version and CRC (TET_SHARD_CORRUPT otherwise); the caller checks the binding.
Request decode_request(const uint8_t* p, size_t n);

// Shard side: the body of units [u0, u1) for this round. Stats are added to `stats`.
std::vector<uint8_t> shard_body(const ChunkSource& src, const QueryPlan& plan, const Selection& sel, TileFetcher& fetcher,
                                uint64_t u0, uint64_t u1, const Request& req, const ExecContext& ctx, QueryResult& stats);

// Coordinator: the bodies of every shard (shard order) with their unit ranges. Fills `res` and
// returns true when done; else sets `next_payload` (the payload of round req.round + 1).
struct Body {
  const uint8_t* p;
  size_t n;
  uint64_t u0, u1;
};
bool merge(const QueryPlan& plan, const DatasetInfo& d, const Request& req, const std::vector<Body>& bodies,
           QueryResult& res, std::vector<uint8_t>& next_payload);

}  // namespace rounds
}  // namespace exec
}  // namespace tet
