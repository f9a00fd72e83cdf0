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
#include <string>
#include <string_view>
#include <vector>

#include "cells/encoding.h"
#include "cells/huffman.h"

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
// code k is `values.at(k)`. Optionally a canonical Huffman code over the codes (one length per
// value, huffman.h), which GlobalHuffman blocks are written in; a dictionary with a code encodes
// as body version 2 (readers that know only version 1 reject the column cleanly). Pass
// context() to decodes and kernels.
struct GlobalDictionary {
  StrBuffer values;
  HuffmanCode code;  // empty: no GlobalHuffman block may use this dictionary
  uint64_t size() const { return values.size(); }
  // The code of `v`, or size() when absent; lower_bound: the first code whose value is ≥ v.
  uint64_t find(std::string_view v) const;
  uint64_t lower_bound(std::string_view v) const;
  DecodeContext context() const { return DecodeContext{&values, code.empty() ? nullptr : &code}; }

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

  // Builds from (hash, block) pairs (any order, duplicates allowed), 8 bytes a pair: the hash's
  // top 40 bits and a 24-bit block number. At most `run_pairs` of them (plus the rest of the
  // block being added) stay in memory: past that the pairs are sorted and written as one run to
  // an unlinked temp file in `spill_dir` ("" = $TMPDIR or /tmp), and finish() merges the runs
  // (k-way, streaming) into the body. A run is cut only where the block number changes, so when
  // each block's pairs come together (as StrBuilder adds them) the body is byte for byte the one
  // an unspilled build gives; otherwise it may pick one more bucket bit, lookups stay exact.
  // Memory at finish: the body (≤ 5 bytes an entry) plus a 64 KiB read buffer per run.
  class Builder {
   public:
    static constexpr uint64_t kMaxBlocks = uint64_t(1) << kMaxBlockBits;
    static constexpr uint64_t kDefaultRunPairs = uint64_t(8) << 20;  // 64 MiB of pairs
    explicit Builder(std::string spill_dir = {}, uint64_t run_pairs = kDefaultRunPairs);
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;
    void add(uint64_t hash, uint32_t block) {
      if (block != last_block_) {
        if (keys_.size() >= run_pairs_) spill_run();
        last_block_ = block;
      }
      if (keys_.size() == keys_.capacity()) grow();
      keys_.push_back((hash >> kMaxBlockBits) << kMaxBlockBits | block);
    }
    uint64_t pairs() const { return spilled_ + keys_.size(); }  // after each run's duplicates went
    uint64_t runs_spilled() const { return runs_.size(); }
    void clear();  // drops every pair (and the spill file); the builder may be used again
    BlockIndex finish(uint64_t block_count);  // blocks < block_count ≤ kMaxBlocks; then clear()

   private:
    void grow();
    void spill_run();
    BlockIndex merge_runs(uint64_t block_count);
    std::vector<uint64_t> keys_;  // the run being gathered
    std::string spill_dir_;
    uint64_t run_pairs_;
    uint32_t last_block_ = UINT32_MAX;
    int spill_fd_ = -1;
    struct Run { uint64_t first, count; };  // in keys, in the spill file
    std::vector<Run> runs_;
    uint64_t spilled_ = 0;
  };

  // Sorted, distinct block numbers that may hold a value with this hash.
  std::vector<uint32_t> lookup(uint64_t hash) const;
  std::vector<uint32_t> lookup(std::string_view v) const { return lookup(hash_str(v)); }
  std::vector<uint32_t> lookup(int64_t v) const { return lookup(hash_int(v)); }
  uint64_t entries() const { return entries_; }
  uint64_t block_count() const { return block_count_; }
  uint64_t body_bytes() const { return body_.size(); }

  const std::vector<uint8_t>& encode() const { return body_; }
  // The body, moved out (the index is empty afterwards): hands a large body to its writer
  // without a copy.
  std::vector<uint8_t> take_body();
  static BlockIndex decode(const uint8_t* body, size_t bytes);

 private:
  friend class Builder;
  void bind();  // sets the fields below from body_
  std::vector<uint8_t> body_;  // the encoded body; lookups read it in place
  uint64_t entries_ = 0, block_count_ = 0;
  unsigned bucket_bits_ = 0, fp_bits_ = 0, block_bits_ = 0;
  size_t table_at_ = 0;  // offset of the packed entries in body_ (bucket starts begin at 24)
  const uint8_t* buckets() const { return body_.data() + 24; }
  const uint8_t* table() const { return body_.data() + table_at_; }
};

}  // namespace tet::cells
