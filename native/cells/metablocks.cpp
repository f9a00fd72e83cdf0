#include "cells/metablocks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <unistd.h>

#include "cells/str_codec.h"
#include "tet/error.h"
#include "util/io.h"

namespace tet::cells {

namespace {
using str::bits_for;
using str::load_u32;
using str::load_u64;
using str::store_u32;
using str::store_u64;

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull, kMixA = 0xBF58476D1CE4E5B9ull, kMixB = 0x94D049BB133111EBull;

// The splitmix64 finalizer: a bijection of u64 with full avalanche.
uint64_t fmix(uint64_t x) {
  x ^= x >> 30;
  x *= kMixA;
  x ^= x >> 27;
  x *= kMixB;
  x ^= x >> 31;
  return x;
}

void put_header_bytes(std::vector<uint8_t>& out, std::initializer_list<uint8_t> bytes) { out.insert(out.end(), bytes); }
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  const size_t at = out.size();
  out.resize(at + 8);
  store_u64(out.data() + at, v);
}
void pad8(std::vector<uint8_t>& out) { out.resize(align8(out.size()), 0); }
bool zero_bytes(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}
}  // namespace

// ---- hashes -----------------------------------------------------------------------------------
uint64_t hash_str(std::string_view v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  uint64_t h = kGolden ^ (v.size() * kMixB);
  size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    h = (h ^ load_u64(p + i)) * kMixA;
    h ^= h >> 32;
  }
  if (i < v.size()) {
    uint8_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(tail, p + i, v.size() - i);
    h = (h ^ load_u64(tail)) * kMixA;
    h ^= h >> 32;
  }
  return fmix(h);
}

uint64_t hash_int(int64_t v) { return fmix(static_cast<uint64_t>(v) + kGolden); }

uint64_t hash_float(double v) {
  if (v == 0.0) v = 0.0;
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  return fmix(bits_of(v) ^ kMixB);
}

// ---- 1. distinct-count sketch -----------------------------------------------------------------
namespace {
constexpr uint32_t kExactSlots = 2 * DistinctSketch::kExactLimit;  // power of two
constexpr uint32_t kRegisters = 1u << DistinctSketch::kPrecision;
constexpr unsigned kMaxRank = 64 - DistinctSketch::kPrecision + 1;

// Ertl, "New cardinality estimation algorithms for HyperLogLog sketches" (2017), eqs. for σ, τ.
double hll_sigma(double x) {
  if (x == 1.0) return INFINITY;
  double y = 1.0, z = x, prev;
  do {
    x *= x;
    prev = z;
    z += x * y;
    y += y;
  } while (z != prev);
  return z;
}
double hll_tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0, z = 1.0 - x, prev;
  do {
    x = std::sqrt(x);
    prev = z;
    y *= 0.5;
    z -= (1.0 - x) * (1.0 - x) * y;
  } while (z != prev);
  return z / 3.0;
}
}  // namespace

DistinctSketch::DistinctSketch() = default;

void DistinctSketch::insert_exact(uint64_t hash) {
  if (hash == 0) {
    if (!has_zero_) ++exact_count_;
    has_zero_ = true;
    return;
  }
  if (slots_.empty()) slots_.assign(kExactSlots, 0);
  uint32_t i = uint32_t(hash) & (kExactSlots - 1);
  while (slots_[i] != 0) {
    if (slots_[i] == hash) return;
    i = (i + 1) & (kExactSlots - 1);
  }
  slots_[i] = hash;
  ++exact_count_;
}

void DistinctSketch::add_hll(uint64_t hash) {
  const uint32_t idx = uint32_t(hash >> (64 - kPrecision));
  const uint64_t rest = hash << kPrecision;
  const uint8_t rank = rest == 0 ? uint8_t(kMaxRank) : uint8_t(__builtin_clzll(rest) + 1);
  if (rank > registers_[idx]) registers_[idx] = rank;
}

void DistinctSketch::to_hll() {
  registers_.assign(kRegisters, 0);
  if (has_zero_) add_hll(0);
  for (uint64_t h : slots_)
    if (h) add_hll(h);
  std::vector<uint64_t>().swap(slots_);
  exact_count_ = 0;
  has_zero_ = false;
}

void DistinctSketch::add(uint64_t hash) {
  if (!exact()) return add_hll(hash);
  insert_exact(hash);
  if (exact_count_ > kExactLimit) to_hll();
}

void DistinctSketch::merge(const DistinctSketch& other) {
  if (other.exact()) {
    if (other.has_zero_) add(0);
    for (uint64_t h : other.slots_)
      if (h) add(h);
    return;
  }
  if (exact()) to_hll();
  for (uint32_t i = 0; i < kRegisters; ++i) registers_[i] = std::max(registers_[i], other.registers_[i]);
}

double DistinctSketch::estimate() const {
  if (exact()) return exact_count_;
  uint32_t counts[kMaxRank + 1] = {};
  for (uint8_t r : registers_) ++counts[r];
  const double m = kRegisters;
  double z = m * hll_tau(1.0 - counts[kMaxRank] / m);
  for (int k = int(kMaxRank) - 1; k >= 1; --k) z = 0.5 * (z + counts[k]);
  z += m * hll_sigma(counts[0] / m);
  const double alpha_inf = 1.0 / (2.0 * std::log(2.0));
  return alpha_inf * m * m / z;
}

// Body: u8 version 1 | u8 mode (0 exact, 1 hll) | u8 precision (0 exact) | u8 hash version |
// u32 0 | u64 n (hashes, or registers) | exact: u64 hashes[n] ascending; hll: u8 registers[n].
std::vector<uint8_t> DistinctSketch::encode() const {
  std::vector<uint8_t> out;
  put_header_bytes(out, {1, uint8_t(exact() ? 0 : 1), uint8_t(exact() ? 0 : kPrecision), kValueHashVersion, 0, 0, 0, 0});
  if (exact()) {
    std::vector<uint64_t> hashes;
    hashes.reserve(exact_count_);
    if (has_zero_) hashes.push_back(0);
    for (uint64_t h : slots_)
      if (h) hashes.push_back(h);
    std::sort(hashes.begin(), hashes.end());
    put_u64(out, hashes.size());
    for (uint64_t h : hashes) put_u64(out, h);
  } else {
    put_u64(out, kRegisters);
    out.insert(out.end(), registers_.begin(), registers_.end());
  }
  return out;
}

DistinctSketch DistinctSketch::decode(const uint8_t* p, size_t bytes) {
  if (bytes < 16) throw_invalid("a distinct-count sketch shorter than its header");
  if (p[0] != 1) throw_invalid("a distinct-count sketch of unknown version " + std::to_string(p[0]));
  if (p[3] != kValueHashVersion) throw_invalid("a distinct-count sketch of an unknown value hash");
  if (!zero_bytes(p + 4, 4)) throw_invalid("a distinct-count sketch's reserved bytes are not zero");
  const uint64_t n = load_u64(p + 8);
  DistinctSketch s;
  if (p[1] == 0) {
    if (p[2] != 0 || n > kExactLimit || bytes != 16 + 8 * n) throw_invalid("an exact distinct-count sketch of the wrong size");
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t h = load_u64(p + 16 + 8 * i);
      if (i && h <= load_u64(p + 8 + 8 * i)) throw_invalid("an exact distinct-count sketch's hashes are not strictly ascending");
      s.insert_exact(h);
    }
    return s;
  }
  if (p[1] != 1) throw_invalid("a distinct-count sketch of unknown mode");
  if (p[2] != kPrecision || n != kRegisters || bytes != 16 + n) throw_invalid("a HyperLogLog sketch of another precision or size");
  s.registers_.assign(p + 16, p + 16 + n);
  for (uint8_t r : s.registers_)
    if (r > kMaxRank) throw_invalid("a HyperLogLog register past its largest rank");
  return s;
}

// ---- 2. column-global dictionary ----------------------------------------------------------------
uint64_t GlobalDictionary::lower_bound(std::string_view v) const { return str::sorted_lower_bound(values, v); }

uint64_t GlobalDictionary::find(std::string_view v) const {
  const uint64_t k = lower_bound(v);
  return k < size() && values.at(k) == v ? k : size();
}

// Body: u8 version (1, or 2 with a code) | 7 zero bytes | u64 n | u64 value bytes V |
// u32 offsets[n + 1] | pad8 | value bytes | pad8 | version 2: u8 code lengths[n] | pad8.
std::vector<uint8_t> GlobalDictionary::encode() const {
  const uint64_t n = size(), v = values.bytes.size();
  if (v > UINT32_MAX) throw Error(Code::TET_INTERNAL, "cells: a global dictionary over 4 GiB");
  if (!code.empty() && code.size() != n) throw Error(Code::TET_INTERNAL, "cells: a dictionary code of another size");
  std::vector<uint8_t> out;
  put_header_bytes(out, {uint8_t(code.empty() ? 1 : 2), 0, 0, 0, 0, 0, 0, 0});
  put_u64(out, n);
  put_u64(out, v);
  const size_t at = out.size();
  out.resize(at + 4 * (n + 1));
  for (uint64_t k = 0; k <= n; ++k) store_u32(out.data() + at + 4 * k, uint32_t(values.offsets[k]));
  pad8(out);
  out.insert(out.end(), values.bytes.begin(), values.bytes.end());
  pad8(out);
  if (!code.empty()) {
    out.insert(out.end(), code.lengths().begin(), code.lengths().end());
    pad8(out);
  }
  return out;
}

GlobalDictionary GlobalDictionary::decode(const uint8_t* p, size_t bytes) {
  if (bytes < 24) throw_invalid("a global dictionary shorter than its header");
  if ((p[0] != 1 && p[0] != 2) || !zero_bytes(p + 1, 7)) throw_invalid("a global dictionary of unknown version or flags");
  const bool coded = p[0] == 2;
  const uint64_t n = load_u64(p + 8), v = load_u64(p + 16);
  if (n == 0 || n > UINT32_MAX || v > UINT32_MAX) throw_invalid("a global dictionary's value count or byte count out of range");
  const uint64_t offsets_bytes = align8(4 * (n + 1));
  const uint64_t code_bytes = coded ? align8(n) : 0;  // n < 2^32: no overflow in this sum
  if (bytes != 24 + offsets_bytes + align8(v) + code_bytes) throw_invalid("a global dictionary's length disagrees with its counts");
  const uint8_t* off = p + 24;
  const uint8_t* data = off + offsets_bytes;
  GlobalDictionary d;
  d.values.bytes.assign(data, data + v);
  d.values.offsets.reserve(n + 1);
  if (load_u32(off) != 0 || load_u32(off + 4 * n) != v) throw_invalid("a global dictionary's offsets do not span its bytes");
  for (uint64_t k = 1; k <= n; ++k) {
    const uint32_t a = load_u32(off + 4 * (k - 1)), b = load_u32(off + 4 * k);
    if (b < a) throw_invalid("a global dictionary's offsets decrease");
    if (b > v) throw_invalid("a global dictionary's offsets run past its bytes");  // before any value is read
    d.values.offsets.push_back(b);
    if (k >= 2 && !str::bytes_less(d.values.at(k - 2), d.values.at(k - 1)))
      throw_invalid("a global dictionary's values are not strictly ascending");
  }
  if (coded) {
    const uint8_t* lengths = data + align8(v);
    if (!zero_bytes(lengths + n, code_bytes - n)) throw_invalid("a global dictionary's code padding is not zero");
    d.code = HuffmanCode::from_lengths(lengths, n);
  }
  return d;
}

// ---- 3. per-value block index ---------------------------------------------------------------------
// Body: u8 version 1 | u8 hash version | u8 bucket bits B | u8 fingerprint bits F | u8 block bits W
// | 3 zero bytes | u64 entries n | u64 block count | u32 bucket starts[2^B + 1] | pad8 |
// n packed (F + W)-bit entries (fingerprint << W | block), ascending within each bucket.
namespace {
constexpr uint64_t kIndexHeaderBytes = 24;
constexpr unsigned kHashBitsKept = 64 - BlockIndex::kMaxBlockBits;  // 40

unsigned bucket_bits_for(uint64_t entries) {
  const unsigned b = entries < 128 ? 0 : bits_for(entries / 128);
  return b > BlockIndex::kMaxBucketBits ? BlockIndex::kMaxBucketBits : b;
}

// Writes the body from the pairs' keys (hash top 40 bits << 24 | block) in ascending order,
// duplicates allowed. Entries are keyed (bucket, fingerprint, block): the (bucket, fingerprint)
// prefix is a prefix of the key's hash bits, so ascending keys give ascending prefixes, and only
// the blocks of one prefix (a handful: distinct hashes sharing 16 + B bits) need re-sorting.
class IndexBodyWriter {
 public:
  // `max_entries`: the distinct keys that will come (sizes the buckets and the table).
  IndexBodyWriter(uint64_t block_count, uint64_t max_entries)
      : block_count_(block_count), block_bits_(bits_for(block_count - 1)), bucket_bits_(bucket_bits_for(max_entries)),
        entry_bits_(BlockIndex::kFingerprintBits + block_bits_),
        prefix_shift_(kHashBitsKept - bucket_bits_ - BlockIndex::kFingerprintBits) {
    if (max_entries > UINT32_MAX) throw Error(Code::TET_INTERNAL, "cells: a block index of more than 2^32 entries");
    const uint64_t buckets = uint64_t(1) << bucket_bits_;
    put_header_bytes(body_, {1, kValueHashVersion, uint8_t(bucket_bits_), uint8_t(BlockIndex::kFingerprintBits), uint8_t(block_bits_), 0, 0, 0});
    put_u64(body_, 0);  // entries: set by finish
    put_u64(body_, block_count);
    dir_at_ = body_.size();
    body_.resize(dir_at_ + align8(4 * (buckets + 1)), 0);
    table_at_ = body_.size();
    body_.resize(table_at_ + str::packed_bytes(max_entries, entry_bits_), 0);
    max_entries_ = max_entries;
  }
  void push(uint64_t key) {
    const uint64_t prefix = (key >> BlockIndex::kMaxBlockBits) >> prefix_shift_;
    if (prefix != group_prefix_) {
      flush_group();
      group_prefix_ = prefix;
    }
    group_.push_back(uint32_t(key & str::lane_mask(BlockIndex::kMaxBlockBits)));
  }
  std::vector<uint8_t> finish() {
    flush_group();
    const uint64_t buckets = uint64_t(1) << bucket_bits_;
    while (next_bucket_ <= buckets) store_u32(body_.data() + dir_at_ + 4 * next_bucket_++, uint32_t(n_));
    store_u64(body_.data() + 8, n_);
    body_.resize(table_at_ + str::packed_bytes(n_, entry_bits_));  // fewer entries than sized: the tail was zero
    return std::move(body_);
  }

 private:
  void flush_group() {
    if (group_.empty()) return;
    std::sort(group_.begin(), group_.end());
    group_.erase(std::unique(group_.begin(), group_.end()), group_.end());
    const uint64_t bucket = group_prefix_ >> BlockIndex::kFingerprintBits;
    while (next_bucket_ <= bucket) store_u32(body_.data() + dir_at_ + 4 * next_bucket_++, uint32_t(n_));
    if (group_.back() >= block_count_) throw Error(Code::TET_INTERNAL, "cells: a block index pair names a block past its block count");
    for (uint32_t block : group_) {
      if (n_ == max_entries_) throw Error(Code::TET_INTERNAL, "cells: a block index got more entries than it was sized for");
      str::pack_lane(body_.data() + table_at_, n_++, entry_bits_, (group_prefix_ & str::lane_mask(BlockIndex::kFingerprintBits)) << block_bits_ | block);
    }
    group_.clear();
  }
  const uint64_t block_count_;
  const unsigned block_bits_, bucket_bits_, entry_bits_, prefix_shift_;
  std::vector<uint8_t> body_;
  size_t dir_at_ = 0, table_at_ = 0;
  uint64_t max_entries_ = 0, n_ = 0, next_bucket_ = 0;
  uint64_t group_prefix_ = ~uint64_t(0);  // no prefix has all 64 bits set (≤ 40 are used)
  std::vector<uint32_t> group_;
};

std::string default_spill_dir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? std::string(t) : std::string("/tmp");
}

// One spilled run being read back in key order, kReadKeys at a time.
class RunCursor {
 public:
  static constexpr uint64_t kReadKeys = 8192;  // 64 KiB
  RunCursor(int fd, uint64_t first, uint64_t count) : fd_(fd), next_(first), left_(count) {}
  bool done() const { return at_ == buf_.size() && left_ == 0; }
  uint64_t key() const { return buf_[at_]; }
  // Steps past key(); false when the run is exhausted.
  bool advance() {
    if (++at_ < buf_.size()) return true;
    return refill();
  }
  bool refill() {
    if (left_ == 0) return false;
    const uint64_t n = std::min(left_, kReadKeys);
    buf_.resize(n);
    if (pread_full(fd_, buf_.data(), n * 8, next_ * 8) != 0)
      throw Error(Code::TET_WRITE_IO, "cannot read back the block index's spilled pairs");
    next_ += n, left_ -= n, at_ = 0;
    return true;
  }

 private:
  int fd_;
  uint64_t next_, left_;
  std::vector<uint64_t> buf_;
  size_t at_ = 0;
};
}  // namespace

BlockIndex::Builder::Builder(std::string spill_dir, uint64_t run_pairs)
    : spill_dir_(spill_dir.empty() ? default_spill_dir() : std::move(spill_dir)), run_pairs_(run_pairs ? run_pairs : 1) {}

BlockIndex::Builder::~Builder() {
  if (spill_fd_ >= 0) ::close(spill_fd_);
}

void BlockIndex::Builder::clear() {
  std::vector<uint64_t>().swap(keys_);
  if (spill_fd_ >= 0) ::close(spill_fd_);
  spill_fd_ = -1;
  std::vector<Run>().swap(runs_);
  spilled_ = 0;
  last_block_ = UINT32_MAX;
}

// Grows the run buffer towards run_pairs + one block's pairs, not past it by doubling (a
// 64 MiB run would otherwise reserve 128).
void BlockIndex::Builder::grow() {
  const uint64_t cap = keys_.capacity();
  const uint64_t limit = run_pairs_ + kBlockLanes;
  uint64_t want = cap < 1024 ? 1024 : 2 * cap;
  if (want > limit && cap < limit) want = limit;
  keys_.reserve(want);
}

void BlockIndex::Builder::spill_run() {
  if (keys_.empty()) return;
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  if (spill_fd_ < 0) spill_fd_ = create_unlinked_temp(spill_dir_, "tet-blockindex-");
  if (int err = pwrite_full(spill_fd_, keys_.data(), keys_.size() * 8, spilled_ * 8))
    throw Error(Code::TET_WRITE_IO, "cannot spill the block index's pairs to a temp file in " + spill_dir_ + ": " + errno_text(err));
  runs_.push_back({spilled_, keys_.size()});
  spilled_ += keys_.size();
  keys_.clear();
}

BlockIndex BlockIndex::Builder::finish(uint64_t block_count) {
  if (block_count == 0 || block_count > kMaxBlocks) throw Error(Code::TET_INTERNAL, "cells: a block index over 0 or too many blocks");
  BlockIndex ix;
  if (!runs_.empty()) {
    ix = merge_runs(block_count);
  } else {
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    IndexBodyWriter w(block_count, keys_.size());
    for (uint64_t k : keys_) w.push(k);
    ix.body_ = w.finish();
  }
  clear();
  ix.bind();
  return ix;
}

// The k-way merge of the runs (a min-heap of cursors) straight into the body.
BlockIndex BlockIndex::Builder::merge_runs(uint64_t block_count) {
  spill_run();
  std::vector<uint64_t>().swap(keys_);
  std::vector<RunCursor> cursors;
  cursors.reserve(runs_.size());
  for (const Run& r : runs_) {
    cursors.emplace_back(spill_fd_, r.first, r.count);
    cursors.back().refill();
  }
  auto later = [&](size_t a, size_t b) { return cursors[a].key() > cursors[b].key(); };
  std::vector<size_t> heap;
  for (size_t i = 0; i < cursors.size(); ++i)
    if (!cursors[i].done()) heap.push_back(i);
  std::make_heap(heap.begin(), heap.end(), later);
  IndexBodyWriter w(block_count, spilled_);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    RunCursor& c = cursors[heap.back()];
    w.push(c.key());
    if (c.advance()) std::push_heap(heap.begin(), heap.end(), later);
    else heap.pop_back();
  }
  BlockIndex ix;
  ix.body_ = w.finish();
  return ix;
}

std::vector<uint8_t> BlockIndex::take_body() {
  std::vector<uint8_t> body = std::move(body_);
  body_.clear();
  entries_ = block_count_ = 0;
  return body;
}

void BlockIndex::bind() {
  const uint8_t* p = body_.data();
  bucket_bits_ = p[2];
  fp_bits_ = p[3];
  block_bits_ = p[4];
  entries_ = load_u64(p + 8);
  block_count_ = load_u64(p + 16);
  table_at_ = kIndexHeaderBytes + align8(4 * ((uint64_t(1) << bucket_bits_) + 1));
}

std::vector<uint32_t> BlockIndex::lookup(uint64_t hash) const {
  std::vector<uint32_t> blocks;
  if (body_.empty()) return blocks;
  const uint64_t top = hash >> kMaxBlockBits;
  const uint64_t bucket_fp = top >> (kHashBitsKept - bucket_bits_ - fp_bits_);
  const uint64_t bucket = bucket_fp >> fp_bits_, fp = bucket_fp & str::lane_mask(fp_bits_);
  const unsigned entry_bits = fp_bits_ + block_bits_;
  const uint8_t* starts = buckets();
  const uint8_t* entries = table();
  uint64_t lo = load_u32(starts + 4 * bucket), hi = load_u32(starts + 4 * bucket + 4);
  const uint64_t want = fp << block_bits_;
  while (lo < hi) {  // first entry ≥ (fp, block 0)
    const uint64_t mid = lo + (hi - lo) / 2;
    if (str::unpack_lane(entries, mid, entry_bits) < want) lo = mid + 1;
    else hi = mid;
  }
  const uint64_t end = load_u32(starts + 4 * bucket + 4);
  const uint64_t block_mask = str::lane_mask(block_bits_);
  for (uint64_t i = lo; i < end; ++i) {
    const uint64_t e = str::unpack_lane(entries, i, entry_bits);
    if ((e >> block_bits_) != fp) break;
    blocks.push_back(uint32_t(e & block_mask));
  }
  return blocks;
}

BlockIndex BlockIndex::decode(const uint8_t* p, size_t bytes) {
  if (bytes < kIndexHeaderBytes) throw_invalid("a block index shorter than its header");
  if (p[0] != 1 || p[1] != kValueHashVersion || !zero_bytes(p + 5, 3)) throw_invalid("a block index of unknown version, hash or flags");
  const unsigned bucket_bits = p[2], fp_bits = p[3], block_bits = p[4];
  const uint64_t n = load_u64(p + 8), block_count = load_u64(p + 16);
  if (bucket_bits > kMaxBucketBits || fp_bits == 0 || fp_bits + bucket_bits > kHashBitsKept || block_bits > kMaxBlockBits ||
      fp_bits + block_bits > str::kMaxLaneBits)
    throw_invalid("a block index's bucket, fingerprint or block widths out of range");
  if (block_count == 0 || block_count > Builder::kMaxBlocks || bits_for(block_count - 1) != block_bits)
    throw_invalid("a block index's block count disagrees with its block width");
  if (n > UINT32_MAX) throw_invalid("a block index of more than 2^32 entries");
  const uint64_t buckets = uint64_t(1) << bucket_bits;
  const unsigned entry_bits = fp_bits + block_bits;
  if (bytes != kIndexHeaderBytes + align8(4 * (buckets + 1)) + str::packed_bytes(n, entry_bits))
    throw_invalid("a block index's length disagrees with its counts");
  BlockIndex ix;
  ix.body_.assign(p, p + bytes);
  ix.bind();
  if (load_u32(ix.buckets()) != 0 || load_u32(ix.buckets() + 4 * buckets) != n) throw_invalid("a block index's buckets do not span its entries");
  for (uint64_t b = 0; b < buckets; ++b) {
    const uint64_t lo = load_u32(ix.buckets() + 4 * b), hi = load_u32(ix.buckets() + 4 * b + 4);
    if (hi < lo) throw_invalid("a block index's bucket starts decrease");
    for (uint64_t i = lo; i < hi; ++i) {
      const uint64_t e = str::unpack_lane(ix.table(), i, entry_bits);
      if ((e & str::lane_mask(block_bits)) >= block_count) throw_invalid("a block index entry names a block past the column");
      if (i > lo && e <= str::unpack_lane(ix.table(), i - 1, entry_bits)) throw_invalid("a block index bucket is not strictly ascending");
    }
  }
  return ix;
}

}  // namespace tet::cells
