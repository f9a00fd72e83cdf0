// RunDirectory (run_directory.h): the at-rest root of a column stored as runs, its validation,
// its expansion into synthesized leaves, and the writer's run collector.
//
// Layout: len = rows, attrs 0, meta[0] = run count n, meta[1] = wv | we << 8 (residual widths,
// ≤ 64 each; other bits 0), meta[2..3] = 0. Payload (docs/format-tables.md):
//   0   u64 v0     the first run's value
//   8   u64 dmin   the least difference of successive run values (as i64; 0 when n = 1)
//   16  u64 lmin   the least length of the runs before the last (0 when n = 1)
//   24  packed(n - 1, wv): value residuals, run k ≥ 1 is value_{k-1} + dmin + r_k (mod 2^64)
//   ..  packed(n - 1, we): length residuals, run k < n - 1 is lmin + s_k rows long
// The last run takes the rows left (≥ 1). Successive run values differ (one canonical form).
#include "cells/run_directory.h"

#include <algorithm>
#include <cstring>

#include "cells/bitpack.h"
#include "cells/codecs.h"
#include "cells/column.h"
#include "cells/numeric.h"
#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

constexpr uint64_t kHeadBytes = 24;

uint64_t blocks_of(uint64_t rows) { return (rows + kBlockLanes - 1) / kBlockLanes; }
uint64_t pad64(uint64_t n) { return (n + 63) & ~uint64_t(63); }
uint64_t rle_data_bytes(uint64_t runs) { return 8 * runs + align8(2 * runs); }

// Runs in, leaves out: each block's runs staged (≤ 2048 of them) and sealed when it fills.
class LeafAssembler {
 public:
  using Emit = std::function<void(CellRef)>;
  LeafAssembler(Kind kind, uint64_t rows, const Emit& emit)
      : kind_(kind), left_(rows), emit_(emit) {
    block_len_ = static_cast<uint32_t>(std::min<uint64_t>(left_, kBlockLanes));
  }
  void add(uint64_t value, uint64_t length) {
    while (length > 0) {
      const uint32_t take = static_cast<uint32_t>(std::min<uint64_t>(length, block_len_ - fill_));
      values_[k_] = value;
      fill_ += take;
      ends_[k_++] = static_cast<uint16_t>(fill_);
      length -= take;
      if (fill_ == block_len_) seal();
    }
  }

 private:
  void seal() {
    CellRef leaf;
    if (k_ == 1) {
      leaf = new_cell(kind_, Enc::Constant, block_len_, 0);
      Cell* m = leaf.mutable_cell();
      m->meta[0] = values_[0];
      m->attrs = attr::kSorted;
    } else {
      leaf = new_cell(kind_, Enc::Rle, block_len_, rle_data_bytes(k_));
      uint8_t* p = owned_payload(leaf);
      std::memcpy(p, values_, 8 * k_);
      std::memcpy(p + 8 * k_, ends_, 2 * k_);
      int64_t lo = as_i64(values_[0]), hi = lo;
      bool sorted = true;
      for (uint32_t j = 1; j < k_; ++j) {
        const int64_t v = as_i64(values_[j]);
        sorted = sorted && v >= as_i64(values_[j - 1]);
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
      Cell* m = leaf.mutable_cell();
      m->meta[0] = k_;
      m->meta[2] = bits_of(lo), m->meta[3] = bits_of(hi);
      m->attrs = static_cast<uint8_t>(attr::kHasZonemap | (sorted ? attr::kSorted : 0));
    }
    emit_(std::move(leaf));
    left_ -= block_len_;
    block_len_ = static_cast<uint32_t>(std::min<uint64_t>(left_, kBlockLanes));
    fill_ = k_ = 0;
  }

  Kind kind_;
  uint64_t left_;
  const Emit& emit_;
  uint32_t block_len_ = 0, fill_ = 0, k_ = 0;
  uint64_t values_[kBlockLanes];
  uint16_t ends_[kBlockLanes];
};

uint64_t rows_of(const std::vector<Run>& runs) {
  uint64_t n = 0;
  for (const Run& r : runs) n += r.length;
  return n;
}

struct Widths {
  uint64_t dmin = 0, lmin = 0;
  unsigned wv = 0, we = 0;
};
Widths widths_of(const std::vector<Run>& runs) {
  Widths w;
  if (runs.size() < 2) return w;
  int64_t dlo = INT64_MAX, dhi = INT64_MIN;
  uint64_t llo = UINT64_MAX, lhi = 0;
  for (size_t k = 1; k < runs.size(); ++k) {
    const int64_t d = as_i64(runs[k].value - runs[k - 1].value);
    dlo = std::min(dlo, d), dhi = std::max(dhi, d);
    llo = std::min(llo, runs[k - 1].length), lhi = std::max(lhi, runs[k - 1].length);
  }
  w.dmin = bits_of(dlo);
  w.lmin = llo;
  w.wv = bit_width(bits_of(dhi) - bits_of(dlo));
  w.we = bit_width(lhi - llo);
  return w;
}

// ---- the at-rest root ----------------------------------------------------------------------

unsigned value_width(const Cell& c) { return static_cast<unsigned>(c.meta[1] & 0xff); }
unsigned length_width(const Cell& c) { return static_cast<unsigned>((c.meta[1] >> 8) & 0xff); }

// The runs of a root whose header checks passed, one at a time, each checked as it is read.
class RunReader {
 public:
  explicit RunReader(const Cell& c)
      : c_(c), n_(c.meta[0]), wv_(value_width(c)), we_(length_width(c)),
        values_(payload_words(c) + kHeadBytes / 8), lengths_(values_ + packed_bytes(n_ - 1, wv_) / 8) {
    const uint64_t* head = payload_words(c);
    value_ = head[0], dmin_ = head[1], lmin_ = head[2];
  }
  uint64_t count() const { return n_; }
  // Run k (k = 0, 1, ... in order).
  Run next() {
    if (k_ > 0) {
      const uint64_t d = dmin_ + residual_at(values_, wv_, static_cast<uint32_t>(k_ - 1));
      if (d == 0) throw_invalid("run directory: runs " + std::to_string(k_ - 1) + " and " + std::to_string(k_) + " hold the same value");
      value_ += d;
    }
    uint64_t length;
    if (k_ + 1 < n_) {
      if (add_overflows(lmin_, residual_at(lengths_, we_, static_cast<uint32_t>(k_)), &length) || length == 0 ||
          length >= c_.len - done_)
        throw_invalid("run directory: run " + std::to_string(k_) + " is empty or leaves no row for the runs after it");
    } else {
      length = c_.len - done_;  // ≥ 1: every earlier run left a row
    }
    done_ += length;
    ++k_;
    return Run{value_, length};
  }

 private:
  const Cell& c_;
  uint64_t n_;
  unsigned wv_, we_;
  const uint64_t* values_;
  const uint64_t* lengths_;
  uint64_t value_ = 0, dmin_ = 0, lmin_ = 0, done_ = 0, k_ = 0;
};

// Header checks (before any payload word is read).
void check_root_header(const Cell& c) {
  if (physical_of(c.kind_v()) != Physical::Int) throw_invalid("run directory of a kind that is not int-stored");
  if (c.attrs & ~(attr::kPayloadMmap | attr::kPayloadBorrowed)) throw_invalid("run directory root with attributes set");
  if (c.len == 0 || c.len > kMaxRunRows) throw_invalid("run directory of " + std::to_string(c.len) + " rows (1..2^32 - 1)");
  const uint64_t n = c.meta[0];
  if (n == 0 || n > c.len || n > kMaxRunsPerBlock * blocks_of(c.len))
    throw_invalid("run directory of " + std::to_string(c.len) + " rows claims " + std::to_string(n) + " runs");
  if ((c.meta[1] >> 16) != 0 || value_width(c) > kMaxPackWidth || length_width(c) > kMaxPackWidth)
    throw_invalid("run directory residual widths out of range");
  if (c.meta[2] != 0 || c.meta[3] != 0) throw_invalid("run directory has a non-zero unused meta slot");
  expect_data_bytes(c, kHeadBytes + packed_bytes(n - 1, value_width(c)) + packed_bytes(n - 1, length_width(c)), "run directory");
  if (n == 1 && (payload_words(c)[1] != 0 || payload_words(c)[2] != 0 || c.meta[1] != 0))
    throw_invalid("run directory of one run with difference or length fields set");
}

void run_directory_validate(const Cell& c, const DecodeContext&) {
  check_root_header(c);
  RunReader r(c);
  for (uint64_t k = 0; k < r.count(); ++k) (void)r.next();
}

// Rows straight from the runs (a walk from run 0: readers use the expanded leaves instead).
void run_directory_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto* o = static_cast<uint64_t*>(out);
  RunReader r(c);
  uint64_t at = 0;
  const uint64_t stop = uint64_t(start) + count;
  for (uint64_t k = 0; k < r.count() && at < stop; ++k) {
    const Run run = r.next();
    const uint64_t lo = std::max<uint64_t>(at, start), hi = std::min(at + run.length, stop);
    for (uint64_t i = lo; i < hi; ++i) o[i - start] = run.value;
    at += run.length;
  }
}

bool run_directory_legal(Physical p) { return p == Physical::Int; }

}  // namespace

const EncodingOps kRunDirectoryOps{Enc::RunDirectory, run_directory_legal, run_directory_validate, run_directory_decode};

void for_each_run_leaf(Kind kind, const std::vector<Run>& runs, const std::function<void(const Cell&)>& f) {
  const LeafAssembler::Emit emit = [&](CellRef leaf) { f(*leaf); };
  LeafAssembler a(kind, rows_of(runs), emit);
  for (const Run& r : runs) a.add(r.value, r.length);
}

uint64_t run_directory_bytes(const std::vector<Run>& runs) {
  if (runs.empty()) return 0;
  const Widths w = widths_of(runs);
  return kHeadBytes + packed_bytes(runs.size() - 1, w.wv) + packed_bytes(runs.size() - 1, w.we);
}

uint64_t run_leaves_bytes(const std::vector<Run>& runs) {
  // Runs per block, counted as the assembler cuts them (a run crossing a boundary is in both).
  const uint64_t rows = rows_of(runs);
  const uint64_t blocks = blocks_of(rows);
  uint64_t bytes = 64 * (blocks + (blocks > 1 ? 1 : 0));
  uint64_t at = 0, block_end = std::min<uint64_t>(rows, kBlockLanes), in_block = 0;
  for (const Run& r : runs) {
    uint64_t left = r.length;
    while (left > 0) {
      const uint64_t take = std::min(left, block_end - at);
      ++in_block;
      at += take, left -= take;
      if (at == block_end) {
        if (in_block > 1) bytes += pad64(rle_data_bytes(in_block));
        in_block = 0;
        block_end = std::min<uint64_t>(rows, block_end + kBlockLanes);
      }
    }
  }
  return bytes;
}

RunDirectoryImage encode_run_directory(const std::vector<Run>& runs) {
  RunDirectoryImage img;
  img.rows = rows_of(runs);
  if (runs.empty() || img.rows > kMaxRunRows || runs.size() > kMaxRunsPerBlock * blocks_of(img.rows))
    throw Error(Code::TET_INTERNAL, "cells: runs outside a run directory's bounds");
  const Widths w = widths_of(runs);
  const uint64_t n = runs.size();
  img.payload.assign(run_directory_bytes(runs), 0);
  auto* words = reinterpret_cast<uint64_t*>(img.payload.data());  // vector storage: 8-aligned enough for u64
  words[0] = runs[0].value, words[1] = w.dmin, words[2] = w.lmin;
  if (n > 1) {
    std::vector<uint64_t> res(n - 1);
    for (size_t k = 1; k < n; ++k) {
      res[k - 1] = runs[k].value - runs[k - 1].value - w.dmin;
      if (runs[k].value == runs[k - 1].value) throw Error(Code::TET_INTERNAL, "cells: successive runs of one value");
    }
    pack_residuals(res.data(), static_cast<uint32_t>(n - 1), w.wv, words + kHeadBytes / 8);
    for (size_t k = 0; k + 1 < n; ++k) res[k] = runs[k].length - w.lmin;
    pack_residuals(res.data(), static_cast<uint32_t>(n - 1), w.we, words + (kHeadBytes + packed_bytes(n - 1, w.wv)) / 8);
  }
  img.meta[0] = n;
  img.meta[1] = w.wv | (uint64_t(w.we) << 8);
  return img;
}

CellRef expand_run_directory(const Cell& root) {
  if (root.enc_v() != Enc::RunDirectory) throw_invalid("not a run directory");
  check_root_header(root);
  std::vector<CellRef> leaves;
  leaves.reserve(blocks_of(root.len));
  const LeafAssembler::Emit keep = [&](CellRef leaf) { leaves.push_back(std::move(leaf)); };
  {
    LeafAssembler a(root.kind_v(), root.len, keep);
    RunReader r(root);
    for (uint64_t k = 0; k < r.count(); ++k) {
      const Run run = r.next();
      a.add(run.value, run.length);
    }
  }
  return make_column(root.kind_v(), std::move(leaves));
}

// ---- the writer's collector ------------------------------------------------------------------

RunCollector::RunCollector(Kind kind) : kind_(kind), active_(physical_of(kind) == Physical::Int) {}

bool RunCollector::take(const Cell& leaf) {
  if (!active_ || leaf.kind_v() != kind_ || leaf.has(attr::kHasNulls)) return false;
  const bool constant = leaf.enc_v() == Enc::Constant, rle = leaf.enc_v() == Enc::Rle;
  if (!constant && !rle) return false;
  const uint64_t k = constant ? 1 : leaf.meta[0];
  const uint64_t* values = constant ? &leaf.meta[0] : payload_words(leaf);
  const auto* ends = constant ? nullptr : reinterpret_cast<const uint16_t*>(leaf.payload + 8 * k);
  const uint64_t fresh = k - (!runs_.empty() && runs_.back().value == values[0] ? 1 : 0);
  if (rows_ + leaf.len > kMaxRunRows || runs_.size() + fresh > kMaxRunsPerBlock * (blocks_ + 1)) return false;
  uint64_t prev_end = 0;
  for (uint64_t j = 0; j < k; ++j) {
    const uint64_t end = constant ? leaf.len : ends[j];
    if (!runs_.empty() && runs_.back().value == values[j]) runs_.back().length += end - prev_end;
    else runs_.push_back(Run{values[j], end - prev_end});
    prev_end = end;
  }
  rows_ += leaf.len;
  ++blocks_;
  return true;
}

void RunCollector::stop() {
  active_ = false;
  std::vector<Run>().swap(runs_);
  rows_ = blocks_ = 0;
}

}  // namespace tet::cells
