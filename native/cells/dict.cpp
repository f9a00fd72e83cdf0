// Dict (a block's own sorted distinct values + one bit-packed code per row) and GlobalDict
// (codes into the column-global dictionary of DecodeContext::global_dict). Both dictionaries are
// sorted in binary order, so code order is string order and ordered compares are code compares.
#include <cstring>
#include <string>

#include "cells/codecs.h"
#include "cells/str_codec.h"

namespace tet::cells {

namespace {
using str::bytes_less;
using str::load_u32;

bool str_only(Physical p) { return p == Physical::Str; }

// Payload: u32 offsets[n + 1] | pad8 | value bytes | pad8 | codes (packed) | [mask].
struct DictSpans {
  uint64_t offsets_bytes, values_bytes, codes_bytes;
};

DictSpans dict_spans(uint64_t entries, uint64_t value_bytes, uint64_t rows, unsigned bits) {
  return {align8(4 * (entries + 1)), align8(value_bytes), str::packed_bytes(rows, bits)};
}

// Codes of a block: each < limit, null rows 0; when SORTED, present rows non-decreasing (code
// order is value order). `used` (limit bits) collects the codes of present rows.
void check_codes(const Cell& c, const uint8_t* codes, unsigned bits, uint64_t limit, std::vector<bool>* used) {
  const uint8_t* valid = c.validity();
  uint64_t prev = 0;
  bool seen = false;
  for (uint64_t i = 0; i < c.len; ++i) {
    const uint64_t k = str::unpack_lane(codes, i, bits);
    if (k >= limit) throw_invalid("a dictionary code " + std::to_string(k) + " past the dictionary's " + std::to_string(limit) + " values");
    if (!row_valid(valid, i)) {
      if (k != 0) throw_invalid("a null row with a nonzero dictionary code");
      continue;
    }
    if (used) (*used)[k] = true;
    if (c.has(attr::kSorted) && seen && k < prev) throw_invalid("a block marked sorted whose values decrease");
    prev = k;
    seen = true;
  }
}

void dict_validate(const Cell& c, const DecodeContext&) {
  if (c.has(attr::kHasZonemap)) throw_invalid("a dict block with a zone map");
  const uint64_t n = c.meta[0];
  if (n == 0 || n > c.len) throw_invalid("a dict block with " + std::to_string(n) + " values for " + std::to_string(c.len) + " rows");
  const unsigned bits = str::bits_for(n - 1);
  if (c.meta[1] != bits) throw_invalid("a dict block's code width is not the one its dictionary needs");
  const uint64_t data = c.data_bytes();
  const uint64_t offsets_bytes = align8(4 * (n + 1));
  if (offsets_bytes > data) throw_invalid("a dict block's offsets run past its payload");
  const uint8_t* off = c.payload;
  if (load_u32(off) != 0) throw_invalid("a dict block's first value does not start at 0");
  for (uint64_t k = 0; k < n; ++k)
    if (load_u32(off + 4 * k + 4) < load_u32(off + 4 * k)) throw_invalid("a dict block's value offsets decrease");
  const DictSpans s = dict_spans(n, load_u32(off + 4 * n), c.len, bits);
  uint64_t want;
  if (add_overflows(s.offsets_bytes, s.values_bytes, &want) || add_overflows(want, s.codes_bytes, &want) || want != data)
    throw_invalid("a dict block's payload length disagrees with its dictionary and codes");
  const str::DictLayout l = str::dict_layout(c);
  for (uint64_t k = 1; k < n; ++k)
    if (!bytes_less(l.entry(k - 1), l.entry(k))) throw_invalid("a dict block's values are not strictly ascending");
  std::vector<bool> used(n, false);
  check_codes(c, l.codes, bits, n, &used);
  for (uint64_t k = 0; k < n; ++k)
    if (!used[k]) throw_invalid("a dict block's value " + std::to_string(k) + " is used by no row");
}

void dict_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto& buf = *static_cast<StrBuffer*>(out);
  const str::DictLayout l = str::dict_layout(c);
  const uint8_t* valid = c.validity();
  for (uint64_t i = start; i < uint64_t(start) + count; ++i) {
    if (!row_valid(valid, i)) { buf.push(nullptr, 0); continue; }
    buf.push(l.entry(l.code(i)));
  }
}

void global_dict_validate(const Cell& c, const DecodeContext& ctx) {
  if (c.has(attr::kHasZonemap)) throw_invalid("a global_dict block with a zone map");
  if (!ctx.global_dict) throw_invalid("a global_dict block in a column without a global dictionary");
  const uint64_t n = ctx.global_dict->size();
  if (c.meta[0] != n) throw_invalid("a global_dict block written for a dictionary of another size");
  if (n == 0) throw_invalid("a global_dict block with an empty dictionary");
  const unsigned bits = str::bits_for(n - 1);
  if (c.meta[1] != bits) throw_invalid("a global_dict block's code width is not the one its dictionary needs");
  if (c.data_bytes() != str::packed_bytes(c.len, bits)) throw_invalid("a global_dict block's payload length disagrees with its codes");
  check_codes(c, c.payload, bits, n, nullptr);
}

void global_dict_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx) {
  auto& buf = *static_cast<StrBuffer*>(out);
  const str::GlobalDictLayout l = str::global_dict_layout(c);
  const StrBuffer& dict = *ctx.global_dict;
  const uint8_t* valid = c.validity();
  for (uint64_t i = start; i < uint64_t(start) + count; ++i) {
    if (!row_valid(valid, i)) { buf.push(nullptr, 0); continue; }
    buf.push(dict.at(l.code(i)));
  }
}
}  // namespace

namespace str {
DictLayout dict_layout(const Cell& c) {
  DictLayout l;
  l.entries = c.meta[0];
  l.code_bits = unsigned(c.meta[1]);
  l.offsets = c.payload;
  const DictSpans s = dict_spans(l.entries, load_u32(c.payload + 4 * l.entries), c.len, l.code_bits);
  l.values = c.payload + s.offsets_bytes;
  l.codes = l.values + s.values_bytes;
  return l;
}

GlobalDictLayout global_dict_layout(const Cell& c) {
  return {c.meta[0], unsigned(c.meta[1]), c.payload};
}

uint64_t dict_data_bytes(uint64_t rows, uint64_t entries, uint64_t entry_bytes) {
  const DictSpans s = dict_spans(entries, entry_bytes, rows, bits_for(entries - 1));
  return s.offsets_bytes + s.values_bytes + s.codes_bytes;
}

CellRef encode_dict(const StrBlock& b, const std::vector<std::string_view>& entries, const uint32_t* codes) {
  uint64_t value_bytes = 0;
  for (std::string_view e : entries) value_bytes += e.size();
  const unsigned bits = bits_for(entries.size() - 1);
  const DictSpans s = dict_spans(entries.size(), value_bytes, b.rows, bits);
  CellRef c = new_str_block(b, Enc::Dict, s.offsets_bytes + s.values_bytes + s.codes_bytes);
  uint8_t* p = owned_payload(c);
  uint8_t* values = p + s.offsets_bytes;
  uint32_t at = 0;
  for (size_t k = 0; k < entries.size(); ++k) {
    store_u32(p + 4 * k, at);
    std::memcpy(values + at, entries[k].data(), entries[k].size());
    at += uint32_t(entries[k].size());
  }
  store_u32(p + 4 * entries.size(), at);
  uint8_t* code_area = values + s.values_bytes;
  for (uint32_t i = 0; i < b.rows; ++i) pack_lane(code_area, i, bits, codes[i]);
  Cell* m = c.mutable_cell();
  m->meta[0] = entries.size();
  m->meta[1] = bits;
  return c;
}

uint64_t global_dict_data_bytes(uint64_t rows, uint64_t dict_size) { return packed_bytes(rows, bits_for(dict_size - 1)); }

CellRef encode_global_dict(const StrBlock& b, uint64_t dict_size, const uint32_t* codes) {
  const unsigned bits = bits_for(dict_size - 1);
  CellRef c = new_str_block(b, Enc::GlobalDict, packed_bytes(b.rows, bits));
  if (bits) {
    uint8_t* area = owned_payload(c);
    for (uint32_t i = 0; i < b.rows; ++i) pack_lane(area, i, bits, codes[i]);
  }
  Cell* m = c.mutable_cell();
  m->meta[0] = dict_size;
  m->meta[1] = bits;
  return c;
}
}  // namespace str

const EncodingOps kDictOps{Enc::Dict, str_only, dict_validate, dict_decode};
const EncodingOps kGlobalDictOps{Enc::GlobalDict, str_only, global_dict_validate, global_dict_decode};

}  // namespace tet::cells
