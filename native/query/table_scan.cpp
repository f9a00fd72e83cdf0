#include "query/table_scan.h"

#include <algorithm>
#include <cstring>

#include "cells/encoding.h"
#include "exec/thread_pool.h"
#include "util/bits.h"

namespace tet::query {

using namespace cells;

TableBlocks::TableBlocks(const TablesRegion& r, size_t t)
    : region(r), table(t), info(r.tables()[t]), rows(info.rows), blocks((info.rows + kBlockLanes - 1) / kBlockLanes),
      roots_(info.columns.size()), ctx_(info.columns.size(), nullptr) {}

void TableBlocks::load(size_t column) {
  if (roots_[column]) return;
  roots_[column] = region.column(table, column);
  if (rows > 0 && (!roots_[column] || block_count(*roots_[column]) != blocks))
    throw Error(Code::TET_CELLS_INVALID, "table '" + info.name + "' column '" + schema(column).name +
                                             "' does not have the table's " + std::to_string(blocks) + " blocks");
  ctx_[column] = &region.context(table, column);
}

uint32_t block_selection(const RowSet* sel, uint64_t b, uint32_t len, BlockMask& out) {
  if (sel) {
    const uint64_t* w = sel->words().data() + b * kWordsPerBlock;
    if (const uint32_t* counts = sel->block_counts()) {
      if (counts[b] == 0) return 0;  // callers skip an empty block without looking at `out`
      for (uint32_t k = 0; k < kWordsPerBlock; ++k) out.words[k] = w[k];
      return counts[b];
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < kWordsPerBlock; ++k) out.words[k] = w[k], n += uint32_t(tet::popcount64(w[k]));
    return n;
  }
  for (uint32_t k = 0; k < kWordsPerBlock; ++k) {
    const uint32_t lo = k * 64;
    out.words[k] = len >= lo + 64 ? ~uint64_t(0) : len > lo ? (uint64_t(1) << (len - lo)) - 1 : 0;
  }
  return len;
}

uint32_t present_rows(const Cell& block, const BlockMask& sel, BlockMask& out) {
  const uint8_t* v = block.validity();
  uint32_t n = 0;
  for (uint32_t k = 0; k < kWordsPerBlock; ++k) {
    uint64_t m = sel.words[k];
    if (v) {
      uint64_t vw;
      __builtin_memcpy(&vw, v + 8 * k, 8);  // little-endian bytes: bit i of byte i/8 = row i
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      vw = __builtin_bswap64(vw);
#endif
      m &= vw;
    }
    out.words[k] = m;
    n += uint32_t(tet::popcount64(m));
  }
  return n;
}

Units::Units(uint64_t b, uint64_t min_blocks, uint64_t max_units) : blocks(b) {
  per = std::max<uint64_t>(min_blocks, (b + max_units - 1) / max_units);
  count = (b + per - 1) / per;
}

uint32_t run_units(const Units& units, uint32_t threads, const std::function<void(uint64_t, uint32_t)>& fn,
                   const std::atomic<bool>* cancel) {
  if (units.count == 0) return 1;
  auto unit = [&](uint64_t u, uint32_t slot) {
    if (cancel && cancel->load(std::memory_order_relaxed)) throw Error(Code::TET_CANCELLED, "the table query was cancelled");
    fn(u, slot);
  };
  exec::ThreadPool& pool = exec::ThreadPool::instance();
  if (threads == 1 || units.count == 1) {
    for (uint64_t u = 0; u < units.count; ++u) unit(u, 0);
    return 1;
  }
  const uint32_t used = pool.participants(units.count, threads);
  pool.parallel_for(units.count, threads, unit);
  return used;
}

void BudgetMeter::add(uint64_t n, const char* what) {
  const uint64_t now = used_.fetch_add(n, std::memory_order_relaxed) + n;
  if (budget_ != 0 && now > budget_)
    throw Error(Code::TET_BUDGET_EXCEEDED, std::string(what) + " need more than the memory budget of " + std::to_string(budget_) +
                                               " bytes; narrow the where, or raise execution.memory_budget_bytes");
}

namespace {

bool selects_all(const BlockMask& mask, uint64_t len) {
  uint64_t n = 0;
  for (uint32_t k = 0; k < kWordsPerBlock; ++k) n += uint64_t(tet::popcount64(mask.words[k]));
  return n == len;
}

}  // namespace

void CompactRows::load(const Cell& block, Physical phys, const BlockMask& mask, const DecodeContext& ctx, bool with_validity,
                       const IntTier* decoded) {
  std::vector<uint8_t>* vout = with_validity ? &valid : nullptr;
  valid.clear();
  if (decoded && phys == Physical::Int) {
    i.clear();
    filter_int_tier(block, *decoded, mask, i, vout);
    return;
  }
  if ((phys == Physical::Int || phys == Physical::Float) && selects_all(mask, block.len)) {
    // every row: decode the block in place of filtering it row by row (the same present values;
    // a null row may read differently, and no reader looks at it)
    const uint32_t len = uint32_t(block.len);
    if (phys == Physical::Int) i.resize(len), decode_rows(block, 0, len, i.data(), ctx);
    else f.resize(len), decode_rows(block, 0, len, f.data(), ctx);
    if (with_validity) {
      valid.resize(len);
      const uint8_t* v = block.validity();
      if (!v) {
        std::memset(valid.data(), 1, len);
      } else {
        uint32_t r = 0;
        for (; r + 8 <= len; r += 8) {  // a byte of the mask -> 8 bytes of 0 / 1
          const uint8_t byte = v[r >> 3];
          if (byte == 0xff) std::memset(valid.data() + r, 1, 8);
          else for (unsigned t = 0; t < 8; ++t) valid[r + t] = uint8_t((byte >> t) & 1);
        }
        for (; r < len; ++r) valid[r] = row_valid(v, r) ? 1 : 0;
      }
    }
    return;
  }
  switch (phys) {
    case Physical::Int: i.clear(); filter_int(block, mask, i, *scratch, vout); break;
    case Physical::Float: f.clear(); filter_float(block, mask, f, *scratch, vout); break;
    case Physical::Bool:
      b.clear();
      filter_bool(block, mask, b, *scratch, vout);
      i.assign(b.begin(), b.end());
      break;
    case Physical::Str: {
      strs.clear();
      str_rows.clear();
      decode_rows(block, 0, uint32_t(block.len), &strs, ctx);
      const uint8_t* v = block.validity();
      for (uint32_t k = 0; k < kWordsPerBlock; ++k)
        for (uint64_t w = mask.words[k]; w; w &= w - 1) {
          const uint32_t r = k * 64 + uint32_t(__builtin_ctzll(w));
          str_rows.push_back(r);
          if (with_validity) valid.push_back(row_valid(v, r) ? 1 : 0);
        }
      break;
    }
    case Physical::Table: throw Error(Code::TET_INTERNAL, "a table-kind column in a table query");
  }
}

void CompactRows::load_validity(const Cell& block, const BlockMask& mask) {
  valid.clear();
  const uint8_t* v = block.validity();
  for (uint32_t k = 0; k < kWordsPerBlock; ++k)
    for (uint64_t w = mask.words[k]; w; w &= w - 1) valid.push_back(row_valid(v, k * 64 + uint32_t(__builtin_ctzll(w))) ? 1 : 0);
}

}  // namespace tet::query
