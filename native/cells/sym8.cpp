// Sym8 (strings of ≤ 8 bytes as big-endian u64 words, so integer order is binary order) and
// Sym8For (the same words as one base plus bit-packed residuals, shifted right by the trailing
// zero bits every residual shares: two-letter codes keep 16 significant bits, not 64).
//
// Lengths: a string's length is 8 minus its word's trailing zero bytes unless the string itself
// ends in NUL bytes (UTF-8 may contain NUL). Only a block holding such a string stores explicit
// lengths, a 4-bit lane per row; every other block stores none.
#include <string>

#include "cells/codecs.h"
#include "cells/str_codec.h"

namespace tet::cells {

namespace {
bool str_only(Physical p) { return p == Physical::Str; }

uint64_t length_lane_bytes(uint64_t rows) { return align8((rows + 1) / 2); }

// Shared checks of a laid-out Sym8 / Sym8For block: lengths ≤ 8, bytes past a length zero,
// null rows empty, SORTED and the zone map true of the present rows.
void check_rows(const Cell& c, const str::Sym8Layout& l) {
  const uint8_t* valid = c.validity();
  bool seen = false;
  uint64_t lo = 0, hi = 0, prev_w = 0;
  unsigned prev_n = 0;
  for (uint64_t i = 0; i < c.len; ++i) {
    const uint64_t w = l.word(i);
    if (!row_valid(valid, i)) {
      // The lane holds zero: a zero word (Sym8) or a zero residual (Sym8For), length 0.
      if (w != (l.packed ? l.base : 0) || (l.lengths && l.length(i) != 0))
        throw_invalid("a null row of a sym8 block is not empty");
      continue;
    }
    const unsigned n = l.length(i);
    if (n > 8) throw_invalid("a sym8 length above 8");
    if (n < 8 && (w & str::lane_mask(64 - 8 * n)) != 0) throw_invalid("a sym8 word with bytes past its string's length");
    if (seen && c.has(attr::kSorted) && (w < prev_w || (w == prev_w && n < prev_n)))
      throw_invalid("a block marked sorted whose values decrease");
    if (!seen || w < lo) lo = w;
    if (!seen || w > hi) hi = w;
    prev_w = w;
    prev_n = n;
    seen = true;
  }
  if (!seen) throw_invalid("a sym8 block without a present row");
  if (c.has(attr::kHasZonemap) && (c.meta[2] != lo || c.meta[3] != hi))
    throw_invalid("a sym8 block's zone map is not the min and max of its words");
}

void sym8_validate(const Cell& c, const DecodeContext&) {
  if (c.meta[0] & ~str::kSym8ExplicitLengths) throw_invalid("undefined sym8 flags");
  if (c.meta[1] != 0) throw_invalid("a sym8 block with a nonzero meta[1]");
  const bool explicit_lengths = c.meta[0] & str::kSym8ExplicitLengths;
  if (c.data_bytes() != 8 * c.len + (explicit_lengths ? length_lane_bytes(c.len) : 0))
    throw_invalid("a sym8 block's payload length is not 8 bytes per row plus its lengths");
  check_rows(c, str::sym8_layout(c));
}

void sym8_for_validate(const Cell& c, const DecodeContext&) {
  const uint64_t m = c.meta[1];
  const unsigned width = unsigned(m & 0xff), shift = unsigned((m >> 8) & 0xff);
  if (m >> 17) throw_invalid("undefined sym8_for flags");
  if (width > str::kMaxLaneBits || shift > 63 || width + shift > 64) throw_invalid("a sym8_for residual width or shift out of range");
  const bool explicit_lengths = (m >> 16) & 1;
  uint64_t want;
  if (add_overflows(str::packed_bytes(c.len, width), explicit_lengths ? length_lane_bytes(c.len) : 0, &want) || want != c.data_bytes())
    throw_invalid("a sym8_for block's payload length disagrees with its width");
  const str::Sym8Layout l = str::sym8_layout(c);
  // word = base + (residual << shift) must stay a u64: the largest residual is 2^width - 1.
  const uint64_t top = str::lane_mask(width) << shift;
  for (uint64_t i = 0; i < c.len; ++i) {
    const uint64_t r = str::unpack_lane(l.words, i, width) << shift;
    uint64_t w;
    if (r > top || add_overflows(c.meta[0], r, &w)) throw_invalid("a sym8_for word past 2^64");
  }
  check_rows(c, l);
}

void sym8_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext&) {
  auto& buf = *static_cast<StrBuffer*>(out);
  const str::Sym8Layout l = str::sym8_layout(c);
  const uint8_t* valid = c.validity();
  uint8_t b[8];
  for (uint64_t i = start; i < uint64_t(start) + count; ++i) {
    if (!row_valid(valid, i)) { buf.push(nullptr, 0); continue; }
    const uint64_t w = l.word(i);
    str::sym8_bytes(w, b);
    buf.push(b, l.lengths ? l.length(i) : str::sym8_implicit_len(w));
  }
}
}  // namespace

namespace str {
Sym8Layout sym8_layout(const Cell& c) {
  Sym8Layout l;
  l.words = c.payload;
  if (c.enc_v() == Enc::Sym8) {
    if (c.meta[0] & kSym8ExplicitLengths) l.lengths = c.payload + 8 * c.len;
  } else {
    l.packed = true;
    l.base = c.meta[0];
    l.width = unsigned(c.meta[1] & 0xff);
    l.shift = unsigned((c.meta[1] >> 8) & 0xff);
    if ((c.meta[1] >> 16) & 1) l.lengths = c.payload + packed_bytes(c.len, l.width);
  }
  return l;
}

Sym8Plan plan_sym8(const StrBlock& b) {
  Sym8Plan p;
  bool seen = false;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (!b.valid(i)) continue;
    const std::string_view v = b.at(i);
    if (v.size() > 8) return p;
    if (!v.empty() && v.back() == '\0') p.explicit_lengths = true;
    const uint64_t w = sym8_word(v);
    if (!seen || w < p.min) p.min = w;
    if (!seen || w > p.max) p.max = w;
    seen = true;
  }
  p.fits = seen;
  uint64_t spread = 0;  // OR of every residual: its trailing zeros are the shift all share
  for (uint32_t i = 0; i < b.rows; ++i)
    if (b.valid(i)) spread |= sym8_word(b.at(i)) - p.min;
  p.shift = spread ? unsigned(__builtin_ctzll(spread)) : 0;
  p.width = bits_for((p.max - p.min) >> p.shift);
  p.for_fits = p.fits && p.width <= kMaxLaneBits;
  return p;
}

uint64_t sym8_data_bytes(const StrBlock& b, const Sym8Plan& p) {
  return 8 * uint64_t(b.rows) + (p.explicit_lengths ? length_lane_bytes(b.rows) : 0);
}

uint64_t sym8_for_data_bytes(const StrBlock& b, const Sym8Plan& p) {
  return packed_bytes(b.rows, p.width) + (p.explicit_lengths ? length_lane_bytes(b.rows) : 0);
}

CellRef encode_sym8(const StrBlock& b, const Sym8Plan& p, bool frame_of_reference) {
  const uint64_t lanes = frame_of_reference ? packed_bytes(b.rows, p.width) : 8 * uint64_t(b.rows);
  const uint64_t data = frame_of_reference ? sym8_for_data_bytes(b, p) : sym8_data_bytes(b, p);
  CellRef c = new_str_block(b, frame_of_reference ? Enc::Sym8For : Enc::Sym8, data);
  uint8_t* out = data ? owned_payload(c) : nullptr;
  uint8_t* lengths = p.explicit_lengths ? out + lanes : nullptr;
  for (uint32_t i = 0; i < b.rows; ++i) {
    if (!b.valid(i)) continue;  // the zero lane: word 0 / residual 0, length 0
    const std::string_view v = b.at(i);
    const uint64_t w = sym8_word(v);
    if (frame_of_reference) pack_lane(out, i, p.width, (w - p.min) >> p.shift);
    else store_u64(out + 8 * uint64_t(i), w);
    if (lengths) lengths[i >> 1] = uint8_t(lengths[i >> 1] | (v.size() << ((i & 1) * 4)));
  }
  Cell* m = c.mutable_cell();
  if (frame_of_reference) {
    m->meta[0] = p.min;
    m->meta[1] = p.width | (uint64_t(p.shift) << 8) | (p.explicit_lengths ? uint64_t(1) << 16 : 0);
  } else {
    m->meta[0] = p.explicit_lengths ? kSym8ExplicitLengths : 0;
  }
  m->meta[2] = p.min;
  m->meta[3] = p.max;
  m->attrs |= attr::kHasZonemap;
  return c;
}
}  // namespace str

const EncodingOps kSym8Ops{Enc::Sym8, str_only, sym8_validate, sym8_decode};
const EncodingOps kSym8ForOps{Enc::Sym8For, str_only, sym8_for_validate, sym8_decode};

}  // namespace tet::cells
