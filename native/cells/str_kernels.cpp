#include "cells/str_kernels.h"

#include <algorithm>
#include <optional>

#include "cells/metablocks.h"
#include "cells/str_codec.h"
#include "tet/error.h"

namespace tet::cells {

namespace {
using str::bytes_compare;
using str::bytes_less;

bool starts_with(std::string_view v, std::string_view p) { return v.size() >= p.size() && v.compare(0, p.size(), p) == 0; }

// Which outcomes of compare(value, literal) (-1, 0, 1 as bits 0, 1, 2) an ordered op accepts.
unsigned accepted_outcomes(StrOp op) {
  switch (op) {
    case StrOp::Eq: return 2;
    case StrOp::Ne: return 5;
    case StrOp::Lt: return 1;
    case StrOp::Le: return 3;
    case StrOp::Gt: return 4;
    case StrOp::Ge: return 6;
    default: return 0;
  }
}
bool ordered(StrOp op) { return op != StrOp::Prefix && op != StrOp::In; }

// The present rows of a block as a mask.
void present_rows(const Cell& c, BlockMask& out) {
  const uint8_t* v = c.validity();
  std::fill(std::begin(out.words), std::end(out.words), 0);
  if (v) {
    for (uint32_t w = 0; w < kBlockLanes / 64; ++w) std::memcpy(&out.words[w], v + 8 * w, 8);
    return;
  }
  for (uint32_t w = 0; w < c.len / 64; ++w) out.words[w] = ~uint64_t(0);
  if (c.len % 64) out.words[c.len / 64] = str::lane_mask(unsigned(c.len % 64));
}

Resolved all_true(const Cell& c, BlockMask& out) {
  present_rows(c, out);
  return Resolved::AllTrue;
}
Resolved all_false(BlockMask& out) {
  std::fill(std::begin(out.words), std::end(out.words), 0);
  return Resolved::AllFalse;
}

// Row by row over the present rows: `match(i)` decides row i.
template <class Match>
Resolved per_row(const Cell& c, BlockMask& out, Match match) {
  std::fill(std::begin(out.words), std::end(out.words), 0);
  const uint8_t* valid = c.validity();
  for (uint32_t i = 0; i < c.len; ++i)
    if (row_valid(valid, i) && match(i)) out.set(i);
  return Resolved::Decoded;
}

std::string_view constant_value(const Cell& c) { return {reinterpret_cast<const char*>(c.payload), size_t(c.meta[0])}; }

// ---- Dict / GlobalDict ----
Resolved compare_dict(const Cell& c, const StrPredicate& p, BlockMask& out) {
  const str::DictLayout l = str::dict_layout(c);
  uint8_t hit[kBlockLanes];
  uint64_t hits = 0;
  for (uint64_t k = 0; k < l.entries; ++k) hits += hit[k] = str_matches(l.entry(k), p) ? 1 : 0;
  // Every value is used by a present row (validate checks it), so the dictionary decides alone.
  if (hits == 0) return all_false(out);
  if (hits == l.entries) return all_true(c, out);
  return per_row(c, out, [&](uint32_t i) { return hit[l.code(i)] != 0; });
}

// A block of codes into the column dictionary (GlobalDict, GlobalHuffman): the predicate
// becomes a code set or range, resolved once against the dictionary (code_test); the rows of a
// block are then tested code by code.
struct CodeTest {
  enum class Form : uint8_t { NoRow, EveryRow, Range, Set } form = Form::NoRow;
  uint64_t lo = 0, width = 0;  // Range: k in [lo, lo + width) (unsigned k - lo < width), xor invert
  bool invert = false;
  std::vector<uint64_t> member;  // Set: bit k
  // 1 when row code k matches (Range / Set).
  uint64_t hit(uint64_t k) const {
    if (form == Form::Set) return (member[k >> 6] >> (k & 63)) & 1;
    return uint64_t((k - lo < width) != invert);
  }
};

CodeTest code_test(const StrPredicate& p, const DecodeContext& ctx) {
  const StrBuffer& values = *ctx.global_dict;
  const uint64_t n = values.size();
  CodeTest t;
  if (p.op == StrOp::In) {
    t.member.assign((n + 63) / 64, 0);
    bool any = false;
    for (const std::string& s : p.set) {
      const uint64_t k = str::sorted_lower_bound(values, s);
      if (k < n && values.at(k) == s) t.member[k >> 6] |= uint64_t(1) << (k & 63), any = true;
    }
    t.form = any ? CodeTest::Form::Set : CodeTest::Form::NoRow;
    return t;
  }
  // Every other op selects one code range [lo, hi) of the sorted dictionary (ne: its complement).
  const uint64_t at = str::sorted_lower_bound(values, p.literal);
  const uint64_t after = at + (at < n && values.at(at) == p.literal ? 1 : 0);
  uint64_t lo = 0, hi = n;
  bool invert = false;
  switch (p.op) {
    case StrOp::Eq: lo = at, hi = after; break;
    case StrOp::Ne: lo = at, hi = after, invert = true; break;
    case StrOp::Lt: hi = at; break;
    case StrOp::Le: hi = after; break;
    case StrOp::Gt: lo = after; break;
    case StrOp::Ge: lo = at; break;
    case StrOp::Prefix: lo = at, hi = str::sorted_prefix_end(values, p.literal); break;
    case StrOp::In: break;
  }
  if (lo >= hi) t.form = invert ? CodeTest::Form::EveryRow : CodeTest::Form::NoRow;
  else if (lo == 0 && hi == n) t.form = invert ? CodeTest::Form::NoRow : CodeTest::Form::EveryRow;
  else t.form = CodeTest::Form::Range, t.lo = lo, t.width = hi - lo, t.invert = invert;
  return t;
}

// A block's validity applied to the bits of its tested rows.
Resolved keep_valid(const Cell& c, BlockMask& out) {
  if (const uint8_t* v = c.validity())
    for (uint32_t w = 0; w < kBlockLanes / 64; ++w) {
      uint64_t bits;
      std::memcpy(&bits, v + 8 * w, 8);
      out.words[w] &= bits;
    }
  return Resolved::Decoded;
}

// scan(visit) calls visit(i, code) for every row i that may be present, in row order; the rows'
// bits are set without a branch and the block's validity is applied at the end.
template <class Scan>
Resolved compare_codes(const Cell& c, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx, Scan scan) {
  const CodeTest t = code_test(p, ctx);
  if (t.form == CodeTest::Form::NoRow) return all_false(out);
  if (t.form == CodeTest::Form::EveryRow) return all_true(c, out);
  std::fill(std::begin(out.words), std::end(out.words), 0);
  scan([&](uint32_t i, uint64_t k) { out.words[i >> 6] |= t.hit(k) << (i & 63); });
  return keep_valid(c, out);
}

Resolved compare_global_dict(const Cell& c, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx) {
  if (!ctx.global_dict) throw_invalid("a global_dict block compared without its column's dictionary");
  const str::GlobalDictLayout l = str::global_dict_layout(c);
  return compare_codes(c, p, out, ctx, [&](auto&& visit) {
    for (uint32_t i = 0; i < c.len; ++i) visit(i, l.code(i));
  });
}

// The stream is walked once, each present row's code tested as it comes off (no code array).
Resolved compare_global_huffman(const Cell& c, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx) {
  if (!ctx.global_dict || !ctx.dict_code) throw_invalid("a global_huffman block compared without its column's dictionary and code");
  return compare_codes(c, p, out, ctx, [&](auto&& visit) {
    str::global_huffman_walk(c, ctx, uint32_t(c.len), [&](uint32_t i, uint32_t k) { visit(i, k); });
  });
}

}  // namespace

bool compare_huffman_pair(const Cell& a, const Cell& b, const StrPredicate& p, BlockMask& ma, BlockMask& mb, const DecodeContext& ctx) {
  if (a.enc_v() != Enc::GlobalHuffman || b.enc_v() != Enc::GlobalHuffman || !ctx.global_dict || !ctx.dict_code) return false;
  if (valid_count(a) == 0 || valid_count(b) == 0) return false;
  const CodeTest t = code_test(p, ctx);
  if (t.form != CodeTest::Form::Range && t.form != CodeTest::Form::Set) return false;
  std::fill(std::begin(ma.words), std::end(ma.words), 0);
  std::fill(std::begin(mb.words), std::end(mb.words), 0);
  str::global_huffman_walk2(a, b, ctx, [&](uint32_t i, uint32_t k) { ma.words[i >> 6] |= t.hit(k) << (i & 63); },
                            [&](uint32_t i, uint32_t k) { mb.words[i >> 6] |= t.hit(k) << (i & 63); });
  keep_valid(a, ma);
  keep_valid(b, mb);
  return true;
}

namespace {

// ---- Sym8 / Sym8For ----
struct Sym8Key {
  uint64_t word;
  unsigned len;  // 0..8 for values, up to 9 for a literal longer than 8 bytes
};
Sym8Key sym8_key(std::string_view v) { return {str::sym8_word(v), unsigned(v.size() > 8 ? 9 : v.size())}; }
int key_compare(Sym8Key a, Sym8Key b) {
  if (a.word != b.word) return a.word < b.word ? -1 : 1;
  return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

// What a Sym8 / Sym8For block's zone map and the literal's length settle without a row.
std::optional<Resolved> sym8_resolve(const Cell& c, const str::Sym8Layout& l, const StrPredicate& p) {
  const bool implicit = l.lengths == nullptr;
  // Bounds of the rows' keys from the zone map: exact with implicit lengths, else loose in len.
  const bool zoned = c.has(attr::kHasZonemap);
  const Sym8Key lo{c.meta[2], implicit ? str::sym8_implicit_len(c.meta[2]) : 0};
  const Sym8Key hi{c.meta[3], implicit ? str::sym8_implicit_len(c.meta[3]) : 8};
  if (ordered(p.op)) {
    const Sym8Key lit = sym8_key(p.literal);
    const unsigned want = accepted_outcomes(p.op);
    if (zoned) {
      // Every row's key lies in [lo, hi], so compare() can only give outcomes between the ends';
      // when the op accepts all of those or none, the block is settled.
      const int clo = key_compare(lo, lit), chi = key_compare(hi, lit);
      const unsigned possible = ((1u << (chi + 2)) - 1) & ~((1u << (clo + 1)) - 1);
      if ((want & possible) == 0) return Resolved::AllFalse;
      if ((want & possible) == possible) return Resolved::AllTrue;
    }
    if (lit.len > 8 && p.op == StrOp::Eq) return Resolved::AllFalse;
    if (lit.len > 8 && p.op == StrOp::Ne) return Resolved::AllTrue;
    return std::nullopt;
  }
  if (p.op == StrOp::Prefix) {
    const std::string_view pre = p.literal;
    if (pre.size() > 8) return Resolved::AllFalse;
    if (pre.empty()) return Resolved::AllTrue;
    const uint64_t wp = str::sym8_word(pre);
    const uint64_t low = str::lane_mask(64 - 8 * unsigned(pre.size()));
    if (zoned) {
      if (hi.word < wp || lo.word > (wp | low)) return Resolved::AllFalse;
      if (lo.word >= wp && hi.word <= (wp | low) && pre.back() != '\0') return Resolved::AllTrue;
    }
    return std::nullopt;
  }
  // In: settled when no literal can be a value of the block.
  for (const std::string& s : p.set)
    if (s.size() <= 8) {
      const Sym8Key k = sym8_key(s);
      if (!zoned || (k.word >= lo.word && k.word <= hi.word)) return std::nullopt;
    }
  return Resolved::AllFalse;
}

Resolved compare_sym8(const Cell& c, const StrPredicate& p, BlockMask& out) {
  const str::Sym8Layout l = str::sym8_layout(c);
  if (const auto r = sym8_resolve(c, l, p)) return *r == Resolved::AllTrue ? all_true(c, out) : all_false(out);
  const bool implicit = l.lengths == nullptr;
  auto row_key = [&](uint32_t i) {
    const uint64_t w = l.word(i);
    return Sym8Key{w, implicit ? str::sym8_implicit_len(w) : l.length(i)};
  };
  if (ordered(p.op)) {
    const Sym8Key lit = sym8_key(p.literal);
    const unsigned want = accepted_outcomes(p.op);
    return per_row(c, out, [&](uint32_t i) { return (want >> (key_compare(row_key(i), lit) + 1)) & 1; });
  }
  if (p.op == StrOp::Prefix) {
    const std::string_view pre = p.literal;
    const uint64_t wp = str::sym8_word(pre);
    const uint64_t low = str::lane_mask(64 - 8 * unsigned(pre.size()));
    const unsigned need = unsigned(pre.size());
    return per_row(c, out, [&](uint32_t i) {
      const Sym8Key k = row_key(i);
      return (k.word & ~low) == wp && k.len >= need;
    });
  }
  // In: the literals that can be ≤ 8-byte values, as keys in (word, len) order = binary order.
  const bool zoned = c.has(attr::kHasZonemap);
  std::vector<Sym8Key> keys;
  for (const std::string& s : p.set)
    if (s.size() <= 8) {
      const Sym8Key k = sym8_key(s);
      if (!zoned || (k.word >= c.meta[2] && k.word <= c.meta[3])) keys.push_back(k);
    }
  return per_row(c, out, [&](uint32_t i) {
    const Sym8Key k = row_key(i);
    auto it = std::lower_bound(keys.begin(), keys.end(), k, [](Sym8Key a, Sym8Key b) { return key_compare(a, b) < 0; });
    return it != keys.end() && key_compare(*it, k) == 0;
  });
}

// ---- Views and the generic path ----
// Rows whose suffix equals `tail` (its bytes all in the alphabet), compared as packed symbols
// 56 bits at a time, never unpacked (invert: ne).
Resolved packed_views_equal(const Cell& c, const str::ViewsLayout& l, std::string_view tail, bool invert, BlockMask& out) {
  const unsigned b = l.symbol_bits;
  uint8_t code_of[256] = {};
  for (uint32_t k = 0; k < l.alphabet_size; ++k) code_of[l.alphabet[k]] = uint8_t(k);
  std::vector<uint8_t> want(str::packed_bytes(tail.size(), b) + 8, 0);
  for (size_t j = 0; j < tail.size(); ++j) str::pack_lane(want.data(), j, b, code_of[static_cast<uint8_t>(tail[j])]);
  const uint64_t bits = uint64_t(tail.size()) * b;
  auto bits_at = [](const uint8_t* area, uint64_t bit, unsigned w) {
    return (str::load_u64(area + (bit >> 3)) >> (bit & 7)) & str::lane_mask(w);
  };
  return per_row(c, out, [&](uint32_t i) {
    const uint64_t begin = l.suffix_begin(i);
    if (l.suffix_end(i) - begin != tail.size()) return invert;
    for (uint64_t at = 0; at < bits; at += str::kMaxLaneBits) {
      const unsigned w = unsigned(std::min<uint64_t>(str::kMaxLaneBits, bits - at));
      if (bits_at(l.symbols, begin * b + at, w) != bits_at(want.data(), at, w)) return invert;
    }
    return !invert;
  });
}

// Packed views: every present row starts with the block's prefix and its other bytes come from
// the alphabet, which often decides a block before any row is unpacked.
bool packed_views_resolve(const Cell& c, const StrPredicate& p, BlockMask& out, Resolved& r) {
  const str::ViewsLayout l = str::views_layout(c);
  if (!l.packed) return false;
  const std::string_view pre(reinterpret_cast<const char*>(l.prefix), l.prefix_len);
  auto in_alphabet = [&](std::string_view tail) {
    for (char ch : tail)
      if (!std::binary_search(l.alphabet, l.alphabet + l.alphabet_size, static_cast<uint8_t>(ch))) return false;
    return true;
  };
  const std::string_view lit = p.literal;
  const size_t n = std::min(lit.size(), pre.size());
  const int head = n ? std::memcmp(lit.data(), pre.data(), n) : 0;
  if (p.op == StrOp::Eq || p.op == StrOp::Ne) {
    const bool impossible = head != 0 || lit.size() < pre.size() || !in_alphabet(lit.substr(pre.size())) ||
                            (l.uniform && lit.size() != pre.size() + l.uniform_len);
    if (impossible) {
      r = p.op == StrOp::Eq ? all_false(out) : all_true(c, out);
      return true;
    }
    r = packed_views_equal(c, l, lit.substr(pre.size()), p.op == StrOp::Ne, out);
    return true;
  }
  if (p.op == StrOp::Prefix) {
    if (head != 0) { r = all_false(out); return true; }
    if (lit.size() <= pre.size()) { r = all_true(c, out); return true; }
    if (!in_alphabet(lit.substr(pre.size()))) { r = all_false(out); return true; }
    return false;
  }
  if (ordered(p.op) && head != 0) {
    // Rows all differ from the literal at the same byte, the way the prefix does.
    const unsigned want = accepted_outcomes(p.op);
    r = ((want >> ((head < 0 ? 1 : -1) + 1)) & 1) ? all_true(c, out) : all_false(out);
    return true;
  }
  return false;
}

Resolved compare_decoded(const Cell& c, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx) {
  StrBuffer rows;
  rows.bytes.reserve(c.payload_bytes);
  decode_rows(c, 0, uint32_t(c.len), &rows, ctx);
  return per_row(c, out, [&](uint32_t i) { return str_matches(rows.at(i), p); });
}
}  // namespace

bool str_matches(std::string_view v, const StrPredicate& p) {
  switch (p.op) {
    case StrOp::Prefix: return starts_with(v, p.literal);
    case StrOp::In: return std::binary_search(p.set.begin(), p.set.end(), v, [](std::string_view a, std::string_view b) { return bytes_less(a, b); });
    default: return (accepted_outcomes(p.op) >> (bytes_compare(v, p.literal) + 1)) & 1;
  }
}

Resolved compare(const Cell& c, const StrPredicate& p, BlockMask& out, const DecodeContext& ctx) {
  if (c.kind_v() != Kind::Str) throw Error(Code::TET_INTERNAL, "cells: a string compare on a block of another kind");
  if (valid_count(c) == 0) return all_false(out);
  switch (c.enc_v()) {
    case Enc::Constant: return str_matches(constant_value(c), p) ? all_true(c, out) : all_false(out);
    case Enc::Dict: return compare_dict(c, p, out);
    case Enc::GlobalDict: return compare_global_dict(c, p, out, ctx);
    case Enc::GlobalHuffman: return compare_global_huffman(c, p, out, ctx);
    case Enc::Sym8:
    case Enc::Sym8For: return compare_sym8(c, p, out);
    case Enc::Views: {
      Resolved r;
      if (packed_views_resolve(c, p, out, r)) return r;
      return compare_decoded(c, p, out, ctx);
    }
    default: return compare_decoded(c, p, out, ctx);
  }
}

std::optional<Resolved> probe(const Cell& c, const StrPredicate& p) {
  if (c.kind_v() != Kind::Str) throw Error(Code::TET_INTERNAL, "cells: a string probe on a block of another kind");
  if (c.enc_v() != Enc::Sym8 && c.enc_v() != Enc::Sym8For) return std::nullopt;
  return sym8_resolve(c, str::sym8_layout(c), p);
}

void filter(const Cell& c, const BlockMask& mask, StrBuffer& out, const DecodeContext& ctx) {
  if (c.enc_v() == Enc::Dict) {
    const str::DictLayout l = str::dict_layout(c);
    const uint8_t* valid = c.validity();
    for (uint32_t i = 0; i < c.len; ++i)
      if (mask.test(i)) out.push(row_valid(valid, i) ? l.entry(l.code(i)) : std::string_view());
    return;
  }
  if (c.enc_v() == Enc::GlobalHuffman) {  // codes first, then only the selected rows' values
    if (!ctx.global_dict || !ctx.dict_code) throw_invalid("a global_huffman block filtered without its column's dictionary and code");
    uint32_t codes[kBlockLanes];
    str::global_huffman_codes(c, ctx, uint32_t(c.len), codes);
    const uint8_t* valid = c.validity();
    for (uint32_t i = 0; i < c.len; ++i)
      if (mask.test(i)) out.push(row_valid(valid, i) ? ctx.global_dict->at(codes[i]) : std::string_view());
    return;
  }
  StrBuffer rows;
  decode_rows(c, 0, uint32_t(c.len), &rows, ctx);
  for (uint32_t i = 0; i < c.len; ++i)
    if (mask.test(i)) out.push(rows.at(i));
}

std::optional<std::pair<std::string, std::string>> min_max(const Cell& c, const DecodeContext& ctx) {
  if (valid_count(c) == 0) return std::nullopt;
  switch (c.enc_v()) {
    case Enc::Constant: return std::make_pair(std::string(constant_value(c)), std::string(constant_value(c)));
    case Enc::Dict: {
      // Every value is used by a present row (validated), and the values are sorted.
      const str::DictLayout l = str::dict_layout(c);
      return std::make_pair(std::string(l.entry(0)), std::string(l.entry(l.entries - 1)));
    }
    case Enc::Sym8:
    case Enc::Sym8For:
      if (c.has(attr::kHasZonemap) && !str::sym8_layout(c).lengths) {
        uint8_t a[8], b[8];
        str::sym8_bytes(c.meta[2], a);
        str::sym8_bytes(c.meta[3], b);
        return std::make_pair(std::string(reinterpret_cast<char*>(a), str::sym8_implicit_len(c.meta[2])),
                              std::string(reinterpret_cast<char*>(b), str::sym8_implicit_len(c.meta[3])));
      }
      break;
    case Enc::GlobalHuffman: {
      // Code order is value order: the extreme codes of the present rows name min and max.
      if (!ctx.global_dict || !ctx.dict_code) throw_invalid("a global_huffman block read without its column's dictionary and code");
      uint32_t codes[kBlockLanes];
      str::global_huffman_codes(c, ctx, uint32_t(c.len), codes);
      const uint8_t* valid = c.validity();
      uint32_t lo = UINT32_MAX, hi = 0;
      for (uint32_t i = 0; i < c.len; ++i)
        if (row_valid(valid, i)) lo = std::min(lo, codes[i]), hi = std::max(hi, codes[i]);
      return std::make_pair(std::string(ctx.global_dict->at(lo)), std::string(ctx.global_dict->at(hi)));
    }
    default: break;
  }
  StrBuffer rows;
  decode_rows(c, 0, uint32_t(c.len), &rows, ctx);
  const uint8_t* valid = c.validity();
  std::string_view lo, hi;
  bool seen = false;
  for (uint32_t i = 0; i < c.len; ++i) {
    if (!row_valid(valid, i)) continue;
    const std::string_view v = rows.at(i);
    if (!seen || bytes_less(v, lo)) lo = v;
    if (!seen || bytes_less(hi, v)) hi = v;
    seen = true;
  }
  return std::make_pair(std::string(lo), std::string(hi));
}

}  // namespace tet::cells
