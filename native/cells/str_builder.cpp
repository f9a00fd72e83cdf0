#include "cells/str_builder.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "cells/column.h"
#include "cells/huffman.h"
#include "cells/str_codec.h"
#include "tet/error.h"

namespace tet::cells {

namespace str {
CellRef new_str_block(const StrBlock& b, Enc e, uint64_t data_bytes) {
  CellRef c = new_cell(Kind::Str, e, b.rows, data_bytes + b.mask_bytes());
  Cell* m = c.mutable_cell();
  if (b.validity) {
    std::memcpy(const_cast<uint8_t*>(m->payload) + data_bytes, b.validity, kMaskBytes);
    m->attrs |= attr::kHasNulls;
  }
  if (b.sorted) m->attrs |= attr::kSorted;
  return c;
}
}  // namespace str

namespace {
using str::StrBlock;

// The rows of the block being gathered.
class BlockRows {
 public:
  void push(std::string_view v) {
    if (present_ && str::bytes_less(v, last())) sorted_ = false;
    last_at_ = bytes_.size();
    bytes_.insert(bytes_.end(), v.begin(), v.end());
    validity_[rows_ >> 3] = uint8_t(validity_[rows_ >> 3] | (1u << (rows_ & 7)));
    offsets_[++rows_] = bytes_.size();
    present_ = true;
  }
  void push_null() {
    offsets_[++rows_] = bytes_.size();
    ++nulls_;
  }
  uint32_t rows() const { return rows_; }
  uint32_t nulls() const { return nulls_; }
  bool full() const { return rows_ == kBlockLanes; }
  StrBlock view() const {
    StrBlock b;
    b.rows = rows_;
    b.bytes = bytes_.data();
    b.offsets = offsets_;
    b.validity = nulls_ ? validity_ : nullptr;
    b.sorted = sorted_;
    return b;
  }
  void clear() {
    bytes_.clear();
    std::memset(validity_, 0, sizeof validity_);
    rows_ = nulls_ = 0;
    present_ = false;
    sorted_ = true;
  }

 private:
  std::string_view last() const {
    return {reinterpret_cast<const char*>(bytes_.data()) + last_at_, size_t(bytes_.size() - last_at_)};
  }
  std::vector<uint8_t> bytes_;
  uint64_t offsets_[kBlockLanes + 1] = {0};
  uint8_t validity_[kMaskBytes] = {};
  uint32_t rows_ = 0, nulls_ = 0;
  uint64_t last_at_ = 0;
  bool present_ = false, sorted_ = true;
};

// The distinct present values of one block, found by hash (no per-row allocation).
class BlockDistinct {
 public:
  static constexpr uint32_t kSlots = 2 * kBlockLanes;
  void build(const StrBlock& b) {
    std::memset(slots_, 0, sizeof slots_);
    count_ = 0;
    bytes_ = 0;
    for (uint32_t i = 0; i < b.rows; ++i) {
      if (!b.valid(i)) continue;
      const std::string_view v = b.at(i);
      const uint64_t h = hash_str(v);
      uint32_t s = uint32_t(h) & (kSlots - 1);
      for (;;) {
        const uint16_t d = slots_[s];
        if (d == 0) {
          slots_[s] = uint16_t(count_ + 1);
          first_row_[count_] = i;
          hash_[count_] = h;
          rows_[count_] = 1;
          row_value_[i] = uint16_t(count_++);
          bytes_ += v.size();
          break;
        }
        if (hash_[d - 1] == h && b.at(first_row_[d - 1]) == v) {
          row_value_[i] = uint16_t(d - 1);
          ++rows_[d - 1];
          break;
        }
        s = (s + 1) & (kSlots - 1);
      }
    }
  }
  uint32_t count() const { return count_; }
  uint64_t bytes() const { return bytes_; }  // Σ length of the distinct values
  uint64_t hash(uint32_t d) const { return hash_[d]; }
  uint32_t first_row(uint32_t d) const { return first_row_[d]; }
  uint32_t rows_of(uint32_t d) const { return rows_[d]; }  // rows holding value d
  uint16_t value_of_row(uint32_t i) const { return row_value_[i]; }

 private:
  uint16_t slots_[kSlots];
  uint32_t first_row_[kBlockLanes];
  uint32_t rows_[kBlockLanes];
  uint64_t hash_[kBlockLanes];
  uint16_t row_value_[kBlockLanes];
  uint32_t count_ = 0;
  uint64_t bytes_ = 0;
};

// The column-global dictionary candidate: every distinct value seen so far, in first-seen order,
// with the rows that held it (the weights of the dictionary's Huffman code), until a cap is
// passed (then dropped for good: the column will not use a global dictionary).
class ValueInterner {
 public:
  bool alive() const { return alive_; }
  uint64_t size() const { return hashes_.size(); }
  std::string_view value(uint32_t id) const {
    return {reinterpret_cast<const char*>(bytes_.data()) + offsets_[id], size_t(offsets_[id + 1] - offsets_[id])};
  }
  uint64_t rows_of(uint32_t id) const { return rows_[id]; }
  void add(std::string_view v, uint64_t h, uint64_t rows) {
    if (!alive_) return;
    if (const uint32_t known = find(v, h); known != kAbsent) {
      rows_[known] += rows;
      return;
    }
    if (size() + 1 > StrBuilder::kGlobalDictMaxValues || bytes_.size() + v.size() > StrBuilder::kGlobalDictMaxBytes) return drop();
    if (2 * (size() + 1) > table_.size()) grow();
    const uint32_t id = uint32_t(size());
    bytes_.insert(bytes_.end(), v.begin(), v.end());
    offsets_.push_back(bytes_.size());
    hashes_.push_back(h);
    rows_.push_back(rows);
    place(id);
  }
  static constexpr uint32_t kAbsent = UINT32_MAX;
  uint32_t find(std::string_view v, uint64_t h) const {
    if (table_.empty()) return kAbsent;
    const size_t mask = table_.size() - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      const uint32_t id1 = table_[s];
      if (id1 == 0) return kAbsent;
      if (hashes_[id1 - 1] == h && value(id1 - 1) == v) return id1 - 1;
    }
  }
  void drop() {
    alive_ = false;
    std::vector<uint8_t>().swap(bytes_);
    std::vector<uint64_t>().swap(offsets_);
    std::vector<uint64_t>().swap(hashes_);
    std::vector<uint64_t>().swap(rows_);
    std::vector<uint32_t>().swap(table_);
  }

 private:
  void place(uint32_t id) {
    const size_t mask = table_.size() - 1;
    size_t s = hashes_[id] & mask;
    while (table_[s]) s = (s + 1) & mask;
    table_[s] = id + 1;
  }
  void grow() {
    table_.assign(table_.empty() ? 1024 : 2 * table_.size(), 0);
    for (uint32_t id = 0; id < size(); ++id) place(id);
  }
  bool alive_ = true;
  std::vector<uint8_t> bytes_;
  std::vector<uint64_t> offsets_{0};
  std::vector<uint64_t> hashes_;
  std::vector<uint64_t> rows_;
  std::vector<uint32_t> table_;  // id + 1, 0 = empty
};

CellRef encode_constant(const StrBlock& b, std::string_view v) {
  CellRef c = str::new_str_block(b, Enc::Constant, align8(v.size()));
  if (!v.empty()) std::memcpy(owned_payload(c), v.data(), v.size());
  c.mutable_cell()->meta[0] = v.size();
  return c;
}

// A block's own encoding (without the global dictionary) and its measured payload bytes.
enum class Choice { Constant, Sym8, Sym8For, Dict, ViewsClassic, ViewsPacked };
struct BlockPlan {
  Choice choice = Choice::ViewsClassic;
  uint64_t bytes = UINT64_MAX;  // payload bytes, mask trailer included
  str::Sym8Plan sym8;
};

// A sealed block waiting for the global-dictionary decision.
struct HeldBlock {
  CellRef leaf;
  uint64_t own_bytes;  // payload bytes of its own choice
};
}  // namespace

struct StrBuilder::Impl {
  explicit Impl(StrBuilderOptions o)
      : options(std::move(o)), index_builder(options.spill_dir, options.index_run_pairs) {}
  StrBuilderOptions options;
  BlockRows rows;
  BlockDistinct distinct;
  ValueInterner interner;
  DistinctSketch sketch;
  BlockIndex::Builder index_builder;
  bool index_alive = true;
  enum class DictState { Pending, InForce, Off } dict_state = DictState::Pending;
  uint64_t hold_limit = UINT64_MAX;  // blocks held for the decision (streaming: kGlobalDictDecideBlocks)
  std::vector<HeldBlock> held;
  std::vector<uint32_t> code_of_id;  // interner id -> global code, while in force
  std::vector<CellRef> leaves;       // the column's blocks, without on_block
  uint64_t blocks_sealed = 0;
  std::vector<uint32_t> codes = std::vector<uint32_t>(kBlockLanes);
  std::vector<uint32_t> code_of_distinct = std::vector<uint32_t>(kBlockLanes);
  str::ViewsPlan views_plan;
  StrColumnStats stats;
  bool finished = false;
  std::unique_ptr<GlobalDictionary> global_dict;
  std::unique_ptr<BlockIndex> block_index;

  BlockPlan plan_block(const StrBlock& b);
  CellRef encode_planned(const StrBlock& b, const BlockPlan& p);
  CellRef encode_dict(const StrBlock& b);
  CellRef encode_global_if_smaller(const StrBlock& b, const BlockPlan& p);
  enum class GlobalForm { Own, Dict, Huffman };
  GlobalForm global_form(uint32_t rows, uint64_t mask_bytes, uint64_t own_bytes, const uint32_t* block_codes, const StrBlock& b) const;
  StrBlock held_rows(const Cell& old, StrBuffer& decoded);
  void flush();
  void emit(CellRef c);
  void release_held();
  bool index_qualifies(uint64_t blocks) const;
  void decide_global_dictionary();
};

CellRef StrBuilder::Impl::encode_dict(const StrBlock& b) {
  const uint32_t n = distinct.count();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return str::bytes_less(b.at(distinct.first_row(x)), b.at(distinct.first_row(y)));
  });
  std::vector<uint32_t> rank(n);
  std::vector<std::string_view> entries(n);
  for (uint32_t k = 0; k < n; ++k) {
    rank[order[k]] = k;
    entries[k] = b.at(distinct.first_row(order[k]));
  }
  for (uint32_t i = 0; i < b.rows; ++i) codes[i] = b.valid(i) ? rank[distinct.value_of_row(i)] : 0;
  return str::encode_dict(b, entries, codes.data());
}

// The smallest of the encodings that can hold the block (ties go to the earlier, faster one).
BlockPlan StrBuilder::Impl::plan_block(const StrBlock& b) {
  BlockPlan p;
  if (distinct.count() <= 1) {
    p.choice = Choice::Constant;
    p.bytes = align8(distinct.count() ? b.at(distinct.first_row(0)).size() : 0) + b.mask_bytes();
    return p;
  }
  uint64_t best = UINT64_MAX;
  auto consider = [&](Choice c, uint64_t data_bytes) {
    if (data_bytes < best) p.choice = c, best = data_bytes;
  };
  p.sym8 = str::plan_sym8(b);
  if (p.sym8.fits) consider(Choice::Sym8, str::sym8_data_bytes(b, p.sym8));
  if (p.sym8.for_fits) consider(Choice::Sym8For, str::sym8_for_data_bytes(b, p.sym8));
  if (distinct.bytes() <= UINT32_MAX) consider(Choice::Dict, str::dict_data_bytes(b.rows, distinct.count(), distinct.bytes()));
  // Views is the fallback for longer strings: a block of strings ≤ 8 bytes keeps an ordered,
  // zone-mapped form even where packed views would measure smaller (decimal codes "A0000".."A2047":
  // 3.3 B/row as sym8_for, 2.0 packed).
  if (!p.sym8.fits) {
    str::plan_views(b, views_plan);
    // Classic views decode without bit unpacking and compare on the in-view prefix; packed must
    // earn its unpacking by saving at least an eighth of the classic bytes.
    const uint64_t classic = str::views_classic_data_bytes(b, views_plan);
    consider(Choice::ViewsClassic, classic);
    const uint64_t packed = views_plan.packable ? str::views_packed_data_bytes(b, views_plan) : UINT64_MAX;
    if (packed <= classic - classic / 8) consider(Choice::ViewsPacked, packed);
  }
  p.bytes = best + b.mask_bytes();
  return p;
}

CellRef StrBuilder::Impl::encode_planned(const StrBlock& b, const BlockPlan& p) {
  switch (p.choice) {
    case Choice::Constant: return encode_constant(b, distinct.count() ? b.at(distinct.first_row(0)) : std::string_view());
    case Choice::Sym8: return str::encode_sym8(b, p.sym8, false);
    case Choice::Sym8For: return str::encode_sym8(b, p.sym8, true);
    case Choice::Dict: return encode_dict(b);
    case Choice::ViewsPacked: return str::encode_views(b, views_plan, true);
    case Choice::ViewsClassic: break;
  }
  return str::encode_views(b, views_plan, false);
}

// After the decision, with the dictionary in force: the block as GlobalDict or GlobalHuffman
// (when the dictionary has a code), whichever is smaller, when every value of it is in the
// (fixed) dictionary and that is smaller than its own choice; else null.
CellRef StrBuilder::Impl::encode_global_if_smaller(const StrBlock& b, const BlockPlan& p) {
  if (p.choice == Choice::Constant) return CellRef();
  const uint64_t n = global_dict->size();
  const HuffmanCode& code = global_dict->code;
  const uint64_t gd = str::global_dict_data_bytes(b.rows, n) + b.mask_bytes();
  if (code.empty() && gd >= p.bytes) return CellRef();
  for (uint32_t d = 0; d < distinct.count(); ++d) {
    const uint32_t id = interner.find(b.at(distinct.first_row(d)), distinct.hash(d));
    if (id == ValueInterner::kAbsent) return CellRef();
    code_of_distinct[d] = code_of_id[id];
  }
  for (uint32_t i = 0; i < b.rows; ++i) codes[i] = b.valid(i) ? code_of_distinct[distinct.value_of_row(i)] : 0;
  switch (global_form(b.rows, b.mask_bytes(), p.bytes, codes.data(), b)) {
    case GlobalForm::Dict: return str::encode_global_dict(b, n, codes.data());
    case GlobalForm::Huffman: return str::encode_global_huffman(b, code, codes.data());
    case GlobalForm::Own: break;
  }
  return CellRef();
}

// The smallest form of a block whose codes are known: its own choice (own_bytes), GlobalDict, or
// GlobalHuffman when the dictionary has a code; ties keep the faster decode.
StrBuilder::Impl::GlobalForm StrBuilder::Impl::global_form(uint32_t rows, uint64_t mask_bytes, uint64_t own_bytes,
                                                           const uint32_t* block_codes, const StrBlock& b) const {
  const uint64_t gd = str::global_dict_data_bytes(rows, global_dict->size()) + mask_bytes;
  GlobalForm form = gd < own_bytes ? GlobalForm::Dict : GlobalForm::Own;
  uint64_t best = std::min(gd, own_bytes);
  if (!global_dict->code.empty()) {
    const uint64_t hb = str::global_huffman_data_bytes(str::global_huffman_bits(b, global_dict->code, block_codes)) + mask_bytes;
    if (hb < best) form = GlobalForm::Huffman;
  }
  return form;
}

bool StrBuilder::Impl::index_qualifies(uint64_t blocks) const {
  const double d = sketch.estimate();
  return blocks >= 2 && d >= double(kIndexMinDistinct) && double(index_builder.pairs()) * kIndexMaxVisitShare <= d * double(blocks);
}

void StrBuilder::Impl::emit(CellRef c) {
  ++stats.blocks;
  ++stats.blocks_by_enc[c->enc];
  stats.block_bytes += 64 + c->payload_bytes;
  if (options.on_block) options.on_block(std::move(c));
  else leaves.push_back(std::move(c));
}

void StrBuilder::Impl::release_held() {
  for (HeldBlock& h : held) emit(std::move(h.leaf));
  std::vector<HeldBlock>().swap(held);
}

void StrBuilder::Impl::flush() {
  if (rows.rows() == 0) return;
  const StrBlock b = rows.view();
  distinct.build(b);
  const uint64_t block_no = blocks_sealed++;
  if (index_alive && block_no >= BlockIndex::Builder::kMaxBlocks) {
    index_alive = false;
    index_builder.clear();
  }
  const bool gather = dict_state == DictState::Pending && interner.alive();
  for (uint32_t d = 0; d < distinct.count(); ++d) {
    const uint64_t h = distinct.hash(d);
    sketch.add(h);
    if (index_alive) index_builder.add(h, uint32_t(block_no));
    if (gather) interner.add(b.at(distinct.first_row(d)), h, distinct.rows_of(d));
  }
  if (dict_state == DictState::Pending && !interner.alive()) {  // the candidate was dropped: no decision to wait for
    dict_state = DictState::Off;
    release_held();
  }
  const BlockPlan plan = plan_block(b);
  stats.per_block_bytes += 64 + plan.bytes;
  CellRef blk;
  if (dict_state == DictState::InForce) blk = encode_global_if_smaller(b, plan);
  if (!blk) blk = encode_planned(b, plan);
  stats.rows += b.rows;
  stats.nulls += rows.nulls();
  rows.clear();
  if (dict_state == DictState::Pending) {
    held.push_back({std::move(blk), plan.bytes});
    stats.blocks_held_max = std::max<uint64_t>(stats.blocks_held_max, held.size());
    if (held.size() >= hold_limit) decide_global_dictionary();
  } else {
    emit(std::move(blk));
  }
  // A column whose values recur across many blocks will not get an index: stop paying for it.
  if (index_alive && blocks_sealed % 64 == 0) {
    const double d = sketch.estimate();
    if (double(index_builder.pairs()) * kIndexMaxVisitShare > d * double(blocks_sealed)) {
      index_alive = false;
      index_builder.clear();
    }
  }
}

// The rows of a held block, decoded, with their global codes (interner ids mapped by code_of_id).
StrBlock StrBuilder::Impl::held_rows(const Cell& old, StrBuffer& decoded) {
  decoded.clear();
  decode_rows(old, 0, uint32_t(old.len), &decoded);
  StrBlock b;
  b.rows = uint32_t(old.len);
  b.bytes = decoded.bytes.data();
  b.offsets = decoded.offsets.data();
  b.validity = old.validity();
  b.sorted = old.has(attr::kSorted);
  for (uint32_t r = 0; r < b.rows; ++r) {
    if (!b.valid(r)) { codes[r] = 0; continue; }
    const std::string_view v = b.at(r);
    codes[r] = code_of_id[interner.find(v, hash_str(v))];
  }
  return b;
}

// Decides the global dictionary by measurement on the held blocks: none, the dictionary alone
// (GlobalDict blocks), or the dictionary with a Huffman code over the held rows' values
// (GlobalHuffman blocks where they are smaller still), whichever makes the held blocks plus the
// dictionary body smallest. In force, it rewrites the held blocks it makes smaller (each is
// decoded, mapped to global codes and replaced) and fixes the dictionary from here on; then the
// held blocks are released.
void StrBuilder::Impl::decide_global_dictionary() {
  dict_state = DictState::Off;
  if (options.allow_global_dict && interner.alive() && interner.size() > 0) {
    const uint64_t n = interner.size();
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return str::bytes_less(interner.value(x), interner.value(y)); });
    global_dict = std::make_unique<GlobalDictionary>();
    for (uint32_t id : order) global_dict->values.push(interner.value(id));
    code_of_id.assign(n, 0);
    for (uint32_t k = 0; k < n; ++k) code_of_id[order[k]] = k;
    const uint64_t dict_bytes = global_dict->encode().size();
    // Without a code: GlobalDict wherever it is smaller than the block's own choice.
    uint64_t without = 0, with_dict = dict_bytes;
    for (const HeldBlock& h : held) {
      const Cell& c = *h.leaf;
      without += h.own_bytes;
      const uint64_t g = str::global_dict_data_bytes(c.len, n) + (c.has(attr::kHasNulls) ? kMaskBytes : 0);
      with_dict += c.enc_v() != Enc::Constant && g < h.own_bytes ? g : h.own_bytes;
    }
    // With a code (length-limited to kHuffmanMaxLength bits, or the fewest bits that hold n codes).
    uint64_t with_code = UINT64_MAX;
    if (n >= 2) {
      std::vector<uint64_t> weights(n);
      for (uint32_t k = 0; k < n; ++k) weights[k] = interner.rows_of(order[k]);
      const unsigned limit = std::max<unsigned>(kHuffmanMaxLength, str::bits_for(n - 1));
      const std::vector<uint8_t> lengths = limited_code_lengths(weights, limit);
      global_dict->code = HuffmanCode::from_lengths(lengths.data(), n);
      with_code = global_dict->encode().size();
      StrBuffer decoded;
      for (const HeldBlock& h : held) {
        const Cell& c = *h.leaf;
        if (c.enc_v() == Enc::Constant) { with_code += h.own_bytes; continue; }
        const StrBlock b = held_rows(c, decoded);
        const uint64_t mask = c.has(attr::kHasNulls) ? kMaskBytes : 0;
        const uint64_t hb = str::global_huffman_data_bytes(str::global_huffman_bits(b, global_dict->code, codes.data())) + mask;
        const uint64_t g = str::global_dict_data_bytes(c.len, n) + mask;
        with_code += std::min({h.own_bytes, g, hb});
      }
      if (with_code >= with_dict) global_dict->code = HuffmanCode();
    }
    if (std::min(with_dict, with_code) < without) {
      StrBuffer decoded;
      for (HeldBlock& h : held) {
        const Cell& old = *h.leaf;
        if (old.enc_v() == Enc::Constant) continue;
        const uint64_t mask = old.has(attr::kHasNulls) ? kMaskBytes : 0;
        if (global_dict->code.empty() && str::global_dict_data_bytes(old.len, n) + mask >= h.own_bytes) continue;
        const StrBlock b = held_rows(old, decoded);
        switch (global_form(b.rows, mask, h.own_bytes, codes.data(), b)) {
          case GlobalForm::Dict: h.leaf = str::encode_global_dict(b, n, codes.data()); break;
          case GlobalForm::Huffman: h.leaf = str::encode_global_huffman(b, global_dict->code, codes.data()); break;
          case GlobalForm::Own: break;
        }
      }
      stats.global_dict_bytes = global_dict->encode().size();
      dict_state = DictState::InForce;
    } else {
      global_dict.reset();
      std::vector<uint32_t>().swap(code_of_id);
    }
  }
  if (dict_state == DictState::Off) interner.drop();
  release_held();
}

StrBuilder::StrBuilder(StrBuilderOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& m = *impl_;
  m.index_alive = m.options.allow_block_index;
  if (!m.options.allow_global_dict) {
    m.interner.drop();
    m.dict_state = Impl::DictState::Off;
  }
  if (m.options.on_block) m.hold_limit = kGlobalDictDecideBlocks;
}
StrBuilder::~StrBuilder() = default;

void StrBuilder::push(std::string_view value) {
  if (impl_->finished) throw Error(Code::TET_INTERNAL, "cells: push after finish");
  impl_->rows.push(value);
  if (impl_->rows.full()) impl_->flush();
}

void StrBuilder::push_null() {
  if (impl_->finished) throw Error(Code::TET_INTERNAL, "cells: push after finish");
  impl_->rows.push_null();
  if (impl_->rows.full()) impl_->flush();
}

void StrBuilder::push_many(const std::string_view* values, size_t n, const uint8_t* valid) {
  for (size_t i = 0; i < n; ++i) {
    if (valid && !valid[i]) push_null();
    else push(values[i]);
  }
}

CellRef StrBuilder::finish() {
  Impl& m = *impl_;
  if (m.finished) throw Error(Code::TET_INTERNAL, "cells: finish called twice");
  m.flush();
  m.finished = true;
  if (m.dict_state == Impl::DictState::Pending) m.decide_global_dictionary();
  m.interner.drop();
  std::vector<uint32_t>().swap(m.code_of_id);
  if (m.index_alive && m.index_qualifies(m.blocks_sealed)) {
    m.block_index = std::make_unique<BlockIndex>(m.index_builder.finish(m.blocks_sealed));
    m.stats.block_index_bytes = m.block_index->body_bytes();
  }
  m.index_builder.clear();
  if (m.leaves.empty()) return CellRef();
  return make_column(Kind::Str, std::move(m.leaves));
}

const GlobalDictionary* StrBuilder::global_dictionary() const { return impl_->global_dict.get(); }
const DistinctSketch& StrBuilder::distinct_sketch() const { return impl_->sketch; }
const BlockIndex* StrBuilder::block_index() const { return impl_->block_index.get(); }
BlockIndex* StrBuilder::block_index() { return impl_->block_index.get(); }
const StrColumnStats& StrBuilder::stats() const { return impl_->stats; }

}  // namespace tet::cells
