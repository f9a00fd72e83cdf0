// Internals the string encodings share (dict.cpp, sym8.cpp, views.cpp, str_builder.cpp,
// str_kernels.cpp): bit-packed lanes, Sym8 words, and each string encoding's payload layout as
// pointers into a block that validate() has accepted. Byte layouts: docs/format-tables.md,
// "Encoding payloads". Not part of the cell contract; callers outside the string codecs use
// encoding.h / str_kernels.h.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cells/cell.h"
#include "cells/encoding.h"
#include "cells/huffman.h"
#include "util/checked.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "cells read little-endian lanes in place");

namespace tet::cells::str {

// ---- bit-packed lanes ------------------------------------------------------------------------
// Lane i of width w (0..56) occupies bits [i·w, i·w + w) of the area, LSB first. The area is
// align8(⌈n·w / 8⌉) bytes plus 8 zero bytes, so a reader may always load the 8 bytes starting at
// the byte that holds a lane's first bit (7 bits of shift + 56 bits of lane fit in one load).
constexpr unsigned kMaxLaneBits = 56;

inline unsigned bits_for(uint64_t max_value) { return max_value == 0 ? 0 : 64 - unsigned(__builtin_clzll(max_value)); }
inline uint64_t lane_mask(unsigned w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }

// Bytes of a packed area of n lanes of w bits (0 when w == 0: every lane is 0). Callers keep
// n ≤ kBlockLanes or check the product themselves.
inline uint64_t packed_bytes(uint64_t n, unsigned w) {
  if (w == 0 || n == 0) return 0;
  return align8((n * w + 7) / 8) + 8;
}
inline uint64_t load_u64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
inline uint32_t load_u32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline void store_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

inline uint64_t unpack_lane(const uint8_t* area, uint64_t i, unsigned w) {
  if (w == 0) return 0;
  const uint64_t bit = i * w;
  return (load_u64(area + (bit >> 3)) >> (bit & 7)) & lane_mask(w);
}
// `area` zero-filled, packed_bytes(n, w) long; v[i] < 2^w.
inline void pack_lane(uint8_t* area, uint64_t i, unsigned w, uint64_t v) {
  if (w == 0) return;
  const uint64_t bit = i * w;
  uint8_t* p = area + (bit >> 3);
  store_u64(p, load_u64(p) | (v << (bit & 7)));
}

// Binary (unsigned byte) order of strings, the order of every str kernel and dictionary.
inline int bytes_compare(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  const int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}
inline bool bytes_less(std::string_view a, std::string_view b) { return bytes_compare(a, b) < 0; }

// Searches in a StrBuffer sorted ascending: the first index whose value is ≥ v, and the first
// index past every value starting with `prefix`.
inline uint64_t sorted_lower_bound(const StrBuffer& sorted, std::string_view v) {
  uint64_t lo = 0, hi = sorted.size();
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (bytes_less(sorted.at(mid), v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
inline uint64_t sorted_prefix_end(const StrBuffer& sorted, std::string_view prefix) {
  // The least string above every extension of `prefix`: drop trailing 0xff bytes, bump the last.
  std::string next(prefix);
  while (!next.empty() && static_cast<unsigned char>(next.back()) == 0xff) next.pop_back();
  if (next.empty()) return sorted.size();
  next.back() = char(static_cast<unsigned char>(next.back()) + 1);
  return sorted_lower_bound(sorted, next);
}

// ---- Sym8 words --------------------------------------------------------------------------------
// A string of ≤ 8 bytes as the big-endian u64 of its bytes, zero-padded: integer order of words
// is binary order of strings except that strings differing only in trailing NUL bytes share a
// word; (word, length) ordered lexicographically is exactly binary order.
inline uint64_t sym8_word(const uint8_t* p, size_t n) {
  uint8_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(b, p, n < 8 ? n : 8);
  return __builtin_bswap64(load_u64(b));
}
inline uint64_t sym8_word(std::string_view s) { return sym8_word(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
// The length of a word's string when no string ends in a NUL byte (8 minus trailing zero bytes).
inline unsigned sym8_implicit_len(uint64_t w) { return w == 0 ? 0 : 8 - unsigned(__builtin_ctzll(w)) / 8; }
inline void sym8_bytes(uint64_t w, uint8_t out[8]) { store_u64(out, __builtin_bswap64(w)); }

// ---- layouts of validated blocks ------------------------------------------------------------
// Dict: sorted distinct values + one code per row. meta[0] = entries, meta[1] = code width.
struct DictLayout {
  uint64_t entries = 0;
  unsigned code_bits = 0;
  const uint8_t* offsets = nullptr;  // u32[entries + 1]
  const uint8_t* values = nullptr;
  const uint8_t* codes = nullptr;
  std::string_view entry(uint64_t k) const {
    const uint32_t a = load_u32(offsets + 4 * k), b = load_u32(offsets + 4 * k + 4);
    return {reinterpret_cast<const char*>(values) + a, size_t(b - a)};
  }
  uint64_t code(uint64_t row) const { return unpack_lane(codes, row, code_bits); }
};
DictLayout dict_layout(const Cell& c);

// GlobalDict: codes into the column dictionary. meta[0] = dictionary size, meta[1] = code width.
struct GlobalDictLayout {
  uint64_t dict_size = 0;
  unsigned code_bits = 0;
  const uint8_t* codes = nullptr;
  uint64_t code(uint64_t row) const { return unpack_lane(codes, row, code_bits); }
};
GlobalDictLayout global_dict_layout(const Cell& c);

// GlobalHuffman: the present rows' dictionary codes as canonical Huffman codes (huffman.h) of the
// dictionary's code, back to back. meta[0] = dictionary size, meta[1] = stream bits. Sets
// codes[i] for rows [0, end) of a validated block (null rows 0); ctx must be the one validated with.
void global_huffman_codes(const Cell& c, const DecodeContext& ctx, uint32_t end, uint32_t* codes);
// Calls f(row, code) for every present row < end of a validated block, in row order, walking the
// stream: the codes come off a 64-bit buffer (>= 57 bits per refill), so the serial chain per
// code is a table lookup and a shift; the buffer reloads once it holds fewer bits than the
// longest code.
template <class F>
inline void global_huffman_walk(const Cell& c, const DecodeContext& ctx, uint32_t end, F&& f) {
  const HuffmanCode& code = *ctx.dict_code;
  const uint8_t* stream = c.payload;
  const uint8_t* valid = c.validity();
  const unsigned longest = code.max_length();
  uint64_t pos = 0, buf = 0;  // pos: the stream bit at buf's bit 0
  unsigned avail = 0;
  for (uint32_t i = 0; i < end; ++i) {
    if (!row_valid(valid, i)) continue;
    if (avail < longest) {  // a validated block has a code here, so pos < its stream bits
      buf = stream_window(stream, pos);
      avail = 64 - unsigned(pos & 7);
    }
    const uint32_t e = code.entry(buf);
    const unsigned len = e & 0xff;
    buf >>= len, avail -= len, pos += len;
    f(i, e >> 8);
  }
}

// Two streams of codes, every row present: rows [0, g) of both, g the largest multiple of the
// group size K ≤ rows, K codes after each refill (K · longest code ≤ 57, the bits one refill
// holds). No refill test per code: a branch whose outcome follows the code lengths, which a
// predictor cannot learn. Returns g; pa / pb: the stream bits where code g of each starts.
template <unsigned K, class FA, class FB>
inline uint32_t huffman_walk2_k(const HuffmanCode& code, const uint8_t* sa, const uint8_t* sb, uint32_t rows, FA& fa, FB& fb,
                                uint64_t& pa, uint64_t& pb) {
  uint32_t i = 0;
  for (; i + K <= rows; i += K) {
    uint64_t ba = stream_window(sa, pa), bb = stream_window(sb, pb);
    for (unsigned j = 0; j < K; ++j) {
      const uint32_t ea = code.entry(ba), eb = code.entry(bb);
      const unsigned la = ea & 0xff, lb = eb & 0xff;
      ba >>= la, bb >>= lb, pa += la, pb += lb;
      fa(i + j, ea >> 8), fb(i + j, eb >> 8);
    }
  }
  return i;
}
template <class FA, class FB>
inline uint32_t huffman_walk2_grouped(const HuffmanCode& code, const uint8_t* sa, const uint8_t* sb, uint32_t rows, FA& fa, FB& fb,
                                      uint64_t& pa, uint64_t& pb) {
  pa = pb = 0;
  switch (57 / code.max_length()) {
    case 0: case 1: return 0;
    case 2: return huffman_walk2_k<2>(code, sa, sb, rows, fa, fb, pa, pb);
    case 3: return huffman_walk2_k<3>(code, sa, sb, rows, fa, fb, pa, pb);
    case 4: return huffman_walk2_k<4>(code, sa, sb, rows, fa, fb, pa, pb);
    case 5: return huffman_walk2_k<5>(code, sa, sb, rows, fa, fb, pa, pb);
    case 6: return huffman_walk2_k<6>(code, sa, sb, rows, fa, fb, pa, pb);
    default: return huffman_walk2_k<7>(code, sa, sb, rows, fa, fb, pa, pb);
  }
}

// global_huffman_walk of two blocks of one column (all their rows), one code of each in turn:
// the two lookup chains are independent, so the CPU overlaps them.
template <class FA, class FB>
inline void global_huffman_walk2(const Cell& a, const Cell& b, const DecodeContext& ctx, FA&& fa, FB&& fb) {
  const HuffmanCode& code = *ctx.dict_code;
  const unsigned longest = code.max_length();
  struct Walk {
    const uint8_t* stream;
    const uint8_t* valid;
    uint32_t i, end;
    uint64_t pos, buf;
    unsigned avail;
    // The next present row < end (false: none left). Both inlined into the loops below: a call
    // per code would serialise the two chains again.
    __attribute__((always_inline)) bool next() {
      while (i < end && !row_valid(valid, i)) ++i;
      return i < end;
    }
    __attribute__((always_inline)) uint32_t step(const HuffmanCode& code, unsigned longest) {
      if (avail < longest) buf = stream_window(stream, pos), avail = 64 - unsigned(pos & 7);
      const uint32_t e = code.entry(buf);
      const unsigned len = e & 0xff;
      buf >>= len, avail -= len, pos += len;
      return e >> 8;
    }
  };
  Walk wa{a.payload, a.validity(), 0, uint32_t(a.len), 0, 0, 0}, wb{b.payload, b.validity(), 0, uint32_t(b.len), 0, 0, 0};
  if (!wa.valid && !wb.valid) {  // every row present: no skipping, codes in fixed-size groups
    const uint32_t both = std::min(wa.end, wb.end);
    wa.i = wb.i = huffman_walk2_grouped(code, a.payload, b.payload, both, fa, fb, wa.pos, wb.pos);
    for (; wa.i < both; ++wa.i, ++wb.i) {
      const uint32_t ka = wa.step(code, longest), kb = wb.step(code, longest);
      fa(wa.i, ka), fb(wb.i, kb);
    }
  } else {
    while (wa.next() && wb.next()) {
      const uint32_t ka = wa.step(code, longest), kb = wb.step(code, longest);
      fa(wa.i++, ka), fb(wb.i++, kb);
    }
  }
  while (wa.next()) fa(wa.i, wa.step(code, longest)), ++wa.i;
  while (wb.next()) fb(wb.i, wb.step(code, longest)), ++wb.i;
}

// Sym8 / Sym8For: the word of each row and, when some string of the block ends in a NUL byte,
// an explicit 4-bit length per row.
constexpr uint64_t kSym8ExplicitLengths = 1;  // Sym8 meta[0] bit 0; Sym8For meta[1] bit 16
struct Sym8Layout {
  bool packed = false;             // Sym8For
  uint64_t base = 0;               // Sym8For: word = base + (residual << shift)
  unsigned shift = 0, width = 0;   // Sym8For
  const uint8_t* words = nullptr;  // Sym8: u64[len]; Sym8For: packed residuals
  const uint8_t* lengths = nullptr;  // 4-bit lengths or null (implicit)
  uint64_t word(uint64_t row) const {
    return packed ? base + (unpack_lane(words, row, width) << shift) : load_u64(words + 8 * row);
  }
  unsigned length(uint64_t row) const {
    return lengths ? unsigned((lengths[row >> 1] >> ((row & 1) * 4)) & 15) : sym8_implicit_len(word(row));
  }
};
Sym8Layout sym8_layout(const Cell& c);

// Views, classic layout (meta[1] = 0): 16-byte views then the heap. Packed layout (meta[1] = 1):
// a common prefix, a small sorted alphabet and b-bit symbols (views.cpp explains).
constexpr uint64_t kViewsClassic = 0, kViewsPacked = 1;
constexpr uint32_t kViewInlineBytes = 12;
struct ViewsLayout {
  bool packed = false;
  // classic
  const uint8_t* views = nullptr;
  const uint8_t* heap = nullptr;
  // packed
  uint32_t prefix_len = 0, alphabet_size = 0, uniform_len = 0;
  unsigned symbol_bits = 0;
  bool uniform = false;
  const uint8_t* alphabet = nullptr;
  const uint8_t* prefix = nullptr;
  const uint8_t* sym_offsets = nullptr;  // u32[len + 1] or null when uniform
  const uint8_t* symbols = nullptr;
  uint64_t suffix_begin(uint64_t row) const { return uniform ? row * uniform_len : load_u32(sym_offsets + 4 * row); }
  uint64_t suffix_end(uint64_t row) const { return uniform ? (row + 1) * uniform_len : load_u32(sym_offsets + 4 * row + 4); }
};
ViewsLayout views_layout(const Cell& c);
// Appends the bytes of row `row` of a validated Views block to `out` (a std::string or a byte
// vector); present rows only, callers handle nulls.
template <class Bytes>
void views_append_row(const ViewsLayout& l, uint64_t row, Bytes& out) {
  if (!l.packed) {
    const uint8_t* v = l.views + 16 * row;
    const uint32_t n = load_u32(v);
    const uint8_t* src = n <= kViewInlineBytes ? v + 4 : l.heap + load_u64(v + 8);
    out.insert(out.end(), src, src + n);
    return;
  }
  const uint64_t begin = l.suffix_begin(row), end = l.suffix_end(row);
  const size_t at = out.size();
  out.resize(at + l.prefix_len + (end - begin));
  auto* dst = reinterpret_cast<uint8_t*>(&out[at]);
  std::memcpy(dst, l.prefix, l.prefix_len);
  dst += l.prefix_len;
  const unsigned b = l.symbol_bits;
  if (b == 0) {  // a one-byte alphabet: no symbol area at all
    std::memset(dst, end > begin ? l.alphabet[0] : 0, end - begin);
    return;
  }
  const uint64_t mask = lane_mask(b);
  for (uint64_t j = begin, bit = begin * b; j < end; ++j, bit += b)
    *dst++ = l.alphabet[(load_u64(l.symbols + (bit >> 3)) >> (bit & 7)) & mask];
}

// ---- writing blocks (str_builder.cpp gathers the rows; each codec file writes its layout) ----
// One block's rows as gathered: row i is bytes[offsets[i], offsets[i + 1]); null rows are empty.
struct StrBlock {
  uint32_t rows = 0;
  const uint8_t* bytes = nullptr;
  const uint64_t* offsets = nullptr;  // rows + 1
  const uint8_t* validity = nullptr;  // kMaskBytes bitmap, or null when every row is present
  bool sorted = false;                // present values non-decreasing
  std::string_view at(uint64_t i) const {
    return {reinterpret_cast<const char*>(bytes) + offsets[i], size_t(offsets[i + 1] - offsets[i])};
  }
  bool valid(uint64_t i) const { return row_valid(validity, i); }
  uint64_t mask_bytes() const { return validity ? kMaskBytes : 0; }
};

// A new str block of `data_bytes` (plus the mask trailer, copied, when the block has nulls),
// HAS_NULLS and SORTED set from `b`. The caller writes the data part.
CellRef new_str_block(const StrBlock& b, Enc e, uint64_t data_bytes);

// Dict: `entries` sorted strictly ascending, codes[i] < entries.size() (0 on null rows).
uint64_t dict_data_bytes(uint64_t rows, uint64_t entries, uint64_t entry_bytes);
CellRef encode_dict(const StrBlock& b, const std::vector<std::string_view>& entries, const uint32_t* codes);
uint64_t global_dict_data_bytes(uint64_t rows, uint64_t dict_size);
CellRef encode_global_dict(const StrBlock& b, uint64_t dict_size, const uint32_t* codes);
// GlobalHuffman: the stream bits of the present rows' codes, and the block (codes[i] < code.size()).
uint64_t global_huffman_bits(const StrBlock& b, const HuffmanCode& code, const uint32_t* codes);
uint64_t global_huffman_data_bytes(uint64_t stream_bits);
CellRef encode_global_huffman(const StrBlock& b, const HuffmanCode& code, const uint32_t* codes);

// Sym8 / Sym8For, for blocks whose strings are all ≤ 8 bytes.
struct Sym8Plan {
  bool fits = false;              // every string ≤ 8 bytes
  bool explicit_lengths = false;  // some string ends in a NUL byte
  uint64_t min = 0, max = 0;      // words of the present rows
  unsigned width = 0, shift = 0;  // Sym8For residuals
  bool for_fits = false;          // width ≤ kMaxLaneBits
};
Sym8Plan plan_sym8(const StrBlock& b);
uint64_t sym8_data_bytes(const StrBlock& b, const Sym8Plan& p);
uint64_t sym8_for_data_bytes(const StrBlock& b, const Sym8Plan& p);
CellRef encode_sym8(const StrBlock& b, const Sym8Plan& p, bool frame_of_reference);

// Views, classic or packed.
struct ViewsPlan {
  uint64_t heap_bytes = 0;  // classic: bytes of strings longer than kViewInlineBytes
  bool packable = false;    // packed: < 2^32 symbols, a present row
  uint32_t prefix_len = 0;
  uint32_t alphabet_size = 0;
  uint8_t alphabet[256] = {};  // sorted
  uint8_t code_of[256] = {};   // byte -> symbol
  bool uniform = false;
  uint32_t uniform_len = 0;
  uint64_t symbols = 0;
};
void plan_views(const StrBlock& b, ViewsPlan& p);
uint64_t views_classic_data_bytes(const StrBlock& b, const ViewsPlan& p);
uint64_t views_packed_data_bytes(const StrBlock& b, const ViewsPlan& p);
CellRef encode_views(const StrBlock& b, const ViewsPlan& p, bool packed);

}  // namespace tet::cells::str
