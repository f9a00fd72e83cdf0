// The column-scope records a builder derives at write time and the tables region stores as
// metablocks: a distinct-count sketch (any kind), the column-global dictionary (str) that
// GlobalDict blocks' codes point into, and a per-value block index (str or int) that takes an
// equality / membership predicate to the blocks that can hold the value.
//
// Each record has a byte body (`encode()`); `decode(bytes)` validates every field and byte and
// throws TET_CELLS_INVALID. The region's record header (kind byte, length) is the region's; the
// bodies are byte for byte in docs/format-tables.md, "Metablock bodies".
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "cells/encoding.h"

namespace tet::cells {

// ---- value hashes --------------------------------------------------------------------------
// Stored at rest (sketch hashes, index fingerprints), so fixed forever as "tet value hash 1".
uint64_t hash_str(std::string_view v);
uint64_t hash_int(int64_t v);
uint64_t hash_float(double v);  // -0.0 hashes as 0.0; every NaN as one NaN
constexpr uint8_t kValueHashVersion = 1;

// Suggested kind bytes of the region's metablock record header.
enum class MetablockKind : uint8_t { DistinctSketch = 1, GlobalDictionary = 2, BlockIndex = 3 };

// ---- 1. distinct-count sketch ----------------------------------------------------------------
// Exact (the set of distinct hashes) up to kExactLimit values, then a HyperLogLog of 2^14 one-byte
// registers (standard error 0.8 %) read with Ertl's improved estimator, which needs no bias
// tables over the whole range. Feed it each value's hash; feeding a hash again changes nothing.
class DistinctSketch {
 public:
  static constexpr uint32_t kExactLimit = 4096;
  static constexpr unsigned kPrecision = 14;

  DistinctSketch();
  void add(uint64_t hash);
  void merge(const DistinctSketch& other);
  bool exact() const { return registers_.empty(); }
  double estimate() const;  // the exact count while exact()

  std::vector<uint8_t> encode() const;
  static DistinctSketch decode(const uint8_t* body, size_t bytes);

 private:
  void insert_exact(uint64_t hash);
  void to_hll();
  void add_hll(uint64_t hash);
  // Exact mode: open addressing, 0 = empty slot (a zero hash is `has_zero_`).
  std::vector<uint64_t> slots_;
  uint32_t exact_count_ = 0;
  bool has_zero_ = false;
  std::vector<uint8_t> registers_;  // HLL mode: 2^kPrecision registers
};

// ---- 2. column-global dictionary -------------------------------------------------------------
// The distinct values of a str column, strictly ascending in binary order; a GlobalDict block's
// code k is `values.at(k)`. Pass `&values` as DecodeContext::global_dict.
struct GlobalDictionary {
  StrBuffer values;
  uint64_t size() const { return values.size(); }
  // The code of `v`, or size() when absent; lower_bound: the first code whose value is ≥ v.
  uint64_t find(std::string_view v) const;
  uint64_t lower_bound(std::string_view v) const;
  DecodeContext context() const { return DecodeContext{&values}; }

  std::vector<uint8_t> encode() const;
  static GlobalDictionary decode(const uint8_t* body, size_t bytes);
};

// ---- 3. per-value block index ----------------------------------------------------------------
// For every distinct value of a high-cardinality column, the blocks that hold it, as a table of
// (fingerprint, block) entries sorted within 2^bucket_bits buckets chosen by the value hash's top
// bits (about 64..128 entries a bucket). A lookup reads one bucket-directory pair and binary
// searches one bucket: a few cache lines. False positives (another value with the same bucket
// and fingerprint) only add blocks the caller checks anyway; there are no false negatives.
// Size: (fingerprint + block bits) per entry, one entry per distinct value per block, plus 4
// bytes per bucket: 3.2 B/row for a unique column of 10^6 rows, 4.0 at 10^8.
class BlockIndex {
 public:
  static constexpr unsigned kFingerprintBits = 16;
  static constexpr unsigned kMaxBucketBits = 24;
  static constexpr unsigned kMaxBlockBits = 24;  // 2^24 blocks = 3.4e10 rows

  // Builds from (hash, block) pairs (any order, duplicates allowed). Keeps 8 bytes a pair until
  // finish: the hash's top 40 bits and a 24-bit block number.
  class Builder {
   public:
    static constexpr uint64_t kMaxBlocks = uint64_t(1) << kMaxBlockBits;
    void add(uint64_t hash, uint32_t block) { keys_.push_back((hash >> kMaxBlockBits) << kMaxBlockBits | block); }
    uint64_t pairs() const { return keys_.size(); }
    void clear() { std::vector<uint64_t>().swap(keys_); }
    BlockIndex finish(uint64_t block_count);  // blocks < block_count ≤ kMaxBlocks

   private:
    std::vector<uint64_t> keys_;
  };

  // Sorted, distinct block numbers that may hold a value with this hash.
  std::vector<uint32_t> lookup(uint64_t hash) const;
  std::vector<uint32_t> lookup(std::string_view v) const { return lookup(hash_str(v)); }
  std::vector<uint32_t> lookup(int64_t v) const { return lookup(hash_int(v)); }
  uint64_t entries() const { return entries_; }
  uint64_t block_count() const { return block_count_; }
  uint64_t body_bytes() const { return body_.size(); }

  const std::vector<uint8_t>& encode() const { return body_; }
  static BlockIndex decode(const uint8_t* body, size_t bytes);

 private:
  void bind();  // sets the fields below from body_
  std::vector<uint8_t> body_;  // the encoded body; lookups read it in place
  uint64_t entries_ = 0, block_count_ = 0;
  unsigned bucket_bits_ = 0, fp_bits_ = 0, block_bits_ = 0;
  size_t table_at_ = 0;  // offset of the packed entries in body_ (bucket starts begin at 24)
  const uint8_t* buckets() const { return body_.data() + 24; }
  const uint8_t* table() const { return body_.data() + table_at_; }
};

}  // namespace tet::cells
