// Views: the fallback for long or varied strings, in one of two layouts (meta[1]):
//  - classic: a 16-byte view per row (u32 length, then ≤ 12 bytes inline, or a 4-byte prefix and
//    a u64 offset into a heap that follows the views). O(1) access to any row.
//  - packed: the block's longest common prefix once, a sorted alphabet of the bytes its suffixes
//    use, and each suffix as b-bit symbols (b ≤ 8), with a u32 symbol offset per row unless every
//    suffix has one length. For ids such as the obs `event_id` ("E" + 16 hex digits) that is
//    4 bits a digit: 8.0 B/row against the classic 33 (16 view + 17 heap); with b = 8 it is plain
//    offsets + bytes, which beats a 16-byte view for any string longer than 12 bytes.
// The builder measures both and stores the smaller; the layouts are byte for byte in
// docs/format-tables.md.
#include <string>

#include "cells/codecs.h"
#include "cells/str_codec.h"

namespace tet::cells {

namespace {
using str::load_u32;
using str::load_u64;

bool str_only(Physical p) { return p == Physical::Str; }

constexpr uint64_t kPackedHeaderBytes = 16;

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

void check_sorted(const Cell& c, const str::ViewsLayout& l) {
  if (!c.has(attr::kSorted)) return;
  const uint8_t* valid = c.validity();
  std::string prev, cur;
  bool seen = false;
  for (uint64_t i = 0; i < c.len; ++i) {
    if (!row_valid(valid, i)) continue;
    cur.clear();
    str::views_append_row(l, i, cur);
    if (seen && str::bytes_less(cur, prev)) throw_invalid("a block marked sorted whose values decrease");
    prev.swap(cur);
    seen = true;
  }
}

void validate_classic(const Cell& c) {
  const uint64_t heap = c.meta[0], data = c.data_bytes();
  if (heap > data || data != 16 * c.len + align8(heap)) throw_invalid("a views block's payload length disagrees with its views and heap");
  const uint8_t* valid = c.validity();
  const uint8_t* heap_p = c.payload + 16 * c.len;
  for (uint64_t i = 0; i < c.len; ++i) {
    const uint8_t* v = c.payload + 16 * i;
    const uint32_t n = load_u32(v);
    if (!row_valid(valid, i)) {
      if (!all_zero(v, 16)) throw_invalid("a null row of a views block is not empty");
      continue;
    }
    if (n <= str::kViewInlineBytes) {
      if (!all_zero(v + 4 + n, str::kViewInlineBytes - n)) throw_invalid("an inline view with bytes past its length");
      continue;
    }
    const uint64_t off = load_u64(v + 8);
    if (!span_within(off, n, heap)) throw_invalid("a view points past its block's heap");
    if (std::memcmp(v + 4, heap_p + off, 4) != 0) throw_invalid("a view's prefix disagrees with its heap bytes");
  }
}

void validate_packed(const Cell& c) {
  const uint64_t data = c.data_bytes(), total = c.meta[0];
  if (data < kPackedHeaderBytes) throw_invalid("a packed views block without its header");
  const uint8_t* p = c.payload;
  const uint32_t prefix_len = load_u32(p), uniform_len = load_u32(p + 8);
  const uint32_t k = uint32_t(p[4]) | (uint32_t(p[5]) << 8);
  const unsigned bits = p[6];
  const uint8_t flags = p[7];
  if (flags & ~1u) throw_invalid("undefined packed views flags");
  if (load_u32(p + 12) != 0) throw_invalid("a packed views block's reserved word is not zero");
  if (k > 256 || bits != str::bits_for(k ? k - 1 : 0)) throw_invalid("a packed views alphabet size or symbol width out of range");
  const bool uniform = flags & 1;
  if (uniform ? total != uint64_t(uniform_len) * c.len : uniform_len != 0) throw_invalid("a packed views block's symbol count disagrees with its uniform length");
  if (total > UINT32_MAX) throw_invalid("a packed views block with more than 2^32 symbols");
  if (total && !k) throw_invalid("a packed views block with symbols but no alphabet");
  // Section sizes, each checked against what is left.
  uint64_t at = kPackedHeaderBytes;
  const uint64_t sections[3] = {align8(k), align8(prefix_len), uniform ? 0 : align8(4 * (c.len + 1))};
  for (uint64_t s : sections) {
    if (!span_within(at, s, data)) throw_invalid("a packed views section runs past its payload");
    at += s;
  }
  if (at + str::packed_bytes(total, bits) != data) throw_invalid("a packed views block's payload length disagrees with its sections");
  const str::ViewsLayout l = str::views_layout(c);
  for (uint32_t i = 1; i < k; ++i)
    if (l.alphabet[i - 1] >= l.alphabet[i]) throw_invalid("a packed views alphabet is not strictly ascending");
  if (!uniform) {
    if (load_u32(l.sym_offsets) != 0 || load_u32(l.sym_offsets + 4 * c.len) != total) throw_invalid("packed views symbol offsets do not span the symbols");
    for (uint64_t i = 0; i < c.len; ++i)
      if (load_u32(l.sym_offsets + 4 * i + 4) < load_u32(l.sym_offsets + 4 * i)) throw_invalid("packed views symbol offsets decrease");
  }
  for (uint64_t j = 0; j < total; ++j)
    if (str::unpack_lane(l.symbols, j, bits) >= k) throw_invalid("a packed views symbol past its alphabet");
  const uint8_t* valid = c.validity();
  for (uint64_t i = 0; i < c.len; ++i) {
    if (row_valid(valid, i)) continue;
    // A null row's lane is zero: an empty suffix, or (uniform) symbols of code 0.
    for (uint64_t j = l.suffix_begin(i); j < l.suffix_end(i); ++j)
      if (str::unpack_lane(l.symbols, j, bits) != 0) throw_invalid("a null row of a packed views block is not zero");
  }
}

void views_validate(const Cell& c, const DecodeContext&) {
  if (c.has(attr::kHasZonemap)) throw_invalid("a views block with a zone map");
  if (c.meta[2] || c.meta[3]) throw_invalid("a views block with nonzero meta[2..3]");
  if (c.meta[1] == str::kViewsClassic) validate_classic(c);
  else if (c.meta[1] == str::kViewsPacked) validate_packed(c);
  else throw_invalid("an unknown views layout " + std::to_string(c.meta[1]));
  check_sorted(c, str::views_layout(c));
}

void views_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto& buf = *static_cast<StrBuffer*>(out);
  const str::ViewsLayout l = str::views_layout(c);
  const uint8_t* valid = c.validity();
  for (uint64_t i = start; i < uint64_t(start) + count; ++i) {
    if (row_valid(valid, i)) str::views_append_row(l, i, buf.bytes);
    buf.offsets.push_back(buf.bytes.size());
  }
}
}  // namespace

namespace str {
ViewsLayout views_layout(const Cell& c) {
  ViewsLayout l;
  if (c.meta[1] == kViewsClassic) {
    l.views = c.payload;
    l.heap = c.payload + 16 * c.len;
    return l;
  }
  const uint8_t* p = c.payload;
  l.packed = true;
  l.prefix_len = load_u32(p);
  l.alphabet_size = uint32_t(p[4]) | (uint32_t(p[5]) << 8);
  l.symbol_bits = p[6];
  l.uniform = p[7] & 1;
  l.uniform_len = load_u32(p + 8);
  l.alphabet = p + kPackedHeaderBytes;
  l.prefix = l.alphabet + align8(l.alphabet_size);
  const uint8_t* next = l.prefix + align8(l.prefix_len);
  if (!l.uniform) {
    l.sym_offsets = next;
    next += align8(4 * (c.len + 1));
  }
  l.symbols = next;
  return l;
}

void plan_views(const StrBlock& b, ViewsPlan& p) {
  p = ViewsPlan{};
  std::string_view first;
  bool seen = false;
  uint64_t common = 0;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (!b.valid(i)) continue;
    const std::string_view v = b.at(i);
    if (v.size() > kViewInlineBytes) p.heap_bytes += v.size();
    if (!seen) {
      first = v;
      common = v.size();
      seen = true;
      continue;
    }
    uint64_t k = 0;
    const uint64_t n = common < v.size() ? common : v.size();
    while (k < n && v[k] == first[k]) ++k;
    common = k;
  }
  if (!seen || common > UINT32_MAX) return;
  bool used[256] = {};
  uint64_t symbols = 0, suffix_len = 0;
  bool uniform = true, have_len = false;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (!b.valid(i)) continue;
    const std::string_view v = b.at(i);
    for (size_t j = common; j < v.size(); ++j) used[uint8_t(v[j])] = true;
    const uint64_t n = v.size() - common;
    if (have_len && n != suffix_len) uniform = false;
    suffix_len = n;
    have_len = true;
    symbols += n;
  }
  for (unsigned c = 0; c < 256; ++c)
    if (used[c]) {
      p.code_of[c] = uint8_t(p.alphabet_size);
      p.alphabet[p.alphabet_size++] = uint8_t(c);
    }
  p.prefix_len = uint32_t(common);
  p.uniform = uniform;
  if (uniform) {
    p.uniform_len = suffix_len > UINT32_MAX ? 0 : uint32_t(suffix_len);
    symbols = suffix_len * b.rows;  // null rows hold code-0 symbols too
  }
  p.symbols = symbols;
  p.packable = symbols <= UINT32_MAX && suffix_len <= UINT32_MAX;
}

uint64_t views_classic_data_bytes(const StrBlock& b, const ViewsPlan& p) { return 16 * uint64_t(b.rows) + align8(p.heap_bytes); }

uint64_t views_packed_data_bytes(const StrBlock& b, const ViewsPlan& p) {
  const unsigned bits = bits_for(p.alphabet_size ? p.alphabet_size - 1 : 0);
  return kPackedHeaderBytes + align8(p.alphabet_size) + align8(p.prefix_len) + (p.uniform ? 0 : align8(4 * (uint64_t(b.rows) + 1))) +
         packed_bytes(p.symbols, bits);
}

namespace {
CellRef encode_classic(const StrBlock& b, const ViewsPlan& p) {
  CellRef c = new_str_block(b, Enc::Views, views_classic_data_bytes(b, p));
  uint8_t* out = owned_payload(c);
  uint8_t* heap = out + 16 * uint64_t(b.rows);
  uint64_t at = 0;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (!b.valid(i)) continue;
    const std::string_view v = b.at(i);
    uint8_t* view = out + 16 * uint64_t(i);
    store_u32(view, uint32_t(v.size()));
    if (v.size() <= kViewInlineBytes) {
      std::memcpy(view + 4, v.data(), v.size());
      continue;
    }
    std::memcpy(view + 4, v.data(), 4);
    store_u64(view + 8, at);
    std::memcpy(heap + at, v.data(), v.size());
    at += v.size();
  }
  Cell* m = c.mutable_cell();
  m->meta[0] = p.heap_bytes;
  m->meta[1] = kViewsClassic;
  return c;
}

CellRef encode_packed(const StrBlock& b, const ViewsPlan& p) {
  CellRef c = new_str_block(b, Enc::Views, views_packed_data_bytes(b, p));
  uint8_t* out = owned_payload(c);
  const unsigned bits = bits_for(p.alphabet_size ? p.alphabet_size - 1 : 0);
  store_u32(out, p.prefix_len);
  out[4] = uint8_t(p.alphabet_size);
  out[5] = uint8_t(p.alphabet_size >> 8);
  out[6] = uint8_t(bits);
  out[7] = p.uniform ? 1 : 0;
  store_u32(out + 8, p.uniform_len);
  uint8_t* at = out + kPackedHeaderBytes;
  std::memcpy(at, p.alphabet, p.alphabet_size);
  at += align8(p.alphabet_size);
  uint8_t* prefix = at;
  at += align8(p.prefix_len);
  uint8_t* offsets = nullptr;
  if (!p.uniform) {
    offsets = at;
    at += align8(4 * (uint64_t(b.rows) + 1));
  }
  uint8_t* symbols = at;
  uint64_t sym = 0;
  bool prefix_written = false;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (offsets) store_u32(offsets + 4 * uint64_t(i), uint32_t(sym));
    if (!b.valid(i)) {
      if (p.uniform) sym += p.uniform_len;  // code-0 symbols, already zero
      continue;
    }
    const std::string_view v = b.at(i);
    if (!prefix_written) {
      std::memcpy(prefix, v.data(), p.prefix_len);
      prefix_written = true;
    }
    for (size_t j = p.prefix_len; j < v.size(); ++j) pack_lane(symbols, sym++, bits, p.code_of[uint8_t(v[j])]);
  }
  if (offsets) store_u32(offsets + 4 * uint64_t(b.rows), uint32_t(sym));
  Cell* m = c.mutable_cell();
  m->meta[0] = p.symbols;
  m->meta[1] = kViewsPacked;
  return c;
}
}  // namespace

CellRef encode_views(const StrBlock& b, const ViewsPlan& p, bool packed) {
  return packed ? encode_packed(b, p) : encode_classic(b, p);
}
}  // namespace str

const EncodingOps kViewsOps{Enc::Views, str_only, views_validate, views_decode};

}  // namespace tet::cells
