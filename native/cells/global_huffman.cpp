// GlobalHuffman (enc 18, str only; an extension): a block's present rows as codes into the
// column-global dictionary, each written as its canonical Huffman code (huffman.h) from the
// dictionary's code lengths, back to back, LSB first. Null rows take no bits. The dictionary and
// its code come from DecodeContext (GlobalDictionary::context()).
//
// A row is found by decoding from the block's start (no checkpoints): a decode of rows
// [start, start + count) walks the codes of rows [0, start) too; whole-block decodes, the common
// case, pay nothing for it. Code order is value order (the dictionary is sorted), so SORTED is a
// statement about codes, as for GlobalDict.
#include <algorithm>
#include <string>

#include "cells/codecs.h"
#include "cells/huffman.h"
#include "cells/str_codec.h"

namespace tet::cells {

namespace {

bool str_only(Physical p) { return p == Physical::Str; }

void global_huffman_validate(const Cell& c, const DecodeContext& ctx) {
  if (c.has(attr::kHasZonemap)) throw_invalid("a global_huffman block with a zone map");
  if (c.meta[2] || c.meta[3]) throw_invalid("a global_huffman block has a non-zero unused meta slot");
  if (!ctx.global_dict) throw_invalid("a global_huffman block in a column without a global dictionary");
  const uint64_t n = ctx.global_dict->size();
  if (c.meta[0] != n) throw_invalid("a global_huffman block written for a dictionary of another size");
  if (!ctx.dict_code || ctx.dict_code->size() != n) throw_invalid("a global_huffman block in a column whose dictionary has no code");
  const uint64_t bits = c.meta[1];
  if (bits > c.len * kMaxCodeLength) throw_invalid("a global_huffman block's stream is longer than its rows' longest codes");
  if (c.data_bytes() != stream_bytes(bits)) throw_invalid("a global_huffman block's payload length disagrees with its stream bits");
  const HuffmanCode& code = *ctx.dict_code;
  const uint8_t* stream = c.payload;
  const uint8_t* valid = c.validity();
  uint64_t pos = 0, prev = 0;
  bool seen = false;
  for (uint64_t i = 0; i < c.len; ++i) {
    if (!row_valid(valid, i)) continue;
    if (pos >= bits) throw_invalid("a global_huffman block's stream ends before its rows do");
    const uint32_t e = code.entry(stream_window(stream, pos));
    pos += e & 0xff;
    if (pos > bits) throw_invalid("a global_huffman block's last code runs past its stream");
    const uint64_t k = e >> 8;
    if (c.has(attr::kSorted) && seen && k < prev) throw_invalid("a block marked sorted whose values decrease");
    prev = k, seen = true;
  }
  if (pos != bits) throw_invalid("a global_huffman block's stream holds bits past its rows' codes");
  // Canonical form: the bits after the stream are zero.
  const uint64_t data = c.data_bytes();
  if (bits % 8 && (stream[bits / 8] >> (bits % 8)) != 0) throw_invalid("a global_huffman block's padding bits are not zero");
  for (uint64_t at = (bits + 7) / 8; at < data; ++at)
    if (stream[at]) throw_invalid("a global_huffman block's padding bytes are not zero");
}

void global_huffman_decode(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx) {
  auto& buf = *static_cast<StrBuffer*>(out);
  const StrBuffer& dict = *ctx.global_dict;
  const uint8_t* valid = c.validity();
  uint32_t codes[kBlockLanes];
  str::global_huffman_codes(c, ctx, start + count, codes);
  for (uint32_t i = start; i < start + count; ++i) {
    if (!row_valid(valid, i)) { buf.push(nullptr, 0); continue; }
    buf.push(dict.at(codes[i]));
  }
}

}  // namespace

namespace str {
void global_huffman_codes(const Cell& c, const DecodeContext& ctx, uint32_t end, uint32_t* codes) {
  std::fill(codes, codes + end, 0u);
  global_huffman_walk(c, ctx, end, [&](uint32_t row, uint32_t k) { codes[row] = k; });
}

uint64_t global_huffman_bits(const StrBlock& b, const HuffmanCode& code, const uint32_t* codes) {
  uint64_t bits = 0;
  for (uint32_t i = 0; i < b.rows; ++i)
    if (b.valid(i)) bits += code.length(codes[i]);
  return bits;
}

uint64_t global_huffman_data_bytes(uint64_t stream_bits) { return stream_bytes(stream_bits); }

CellRef encode_global_huffman(const StrBlock& b, const HuffmanCode& code, const uint32_t* codes) {
  const uint64_t bits = global_huffman_bits(b, code, codes);
  CellRef c = new_str_block(b, Enc::GlobalHuffman, stream_bytes(bits));
  if (bits) {
    StreamWriter w(owned_payload(c));
    for (uint32_t i = 0; i < b.rows; ++i)
      if (b.valid(i)) w.put(code.stream_code(codes[i]), code.length(codes[i]));
    w.finish();
  }
  Cell* m = c.mutable_cell();
  m->meta[0] = code.size();
  m->meta[1] = bits;
  return c;
}
}  // namespace str

const EncodingOps kGlobalHuffmanOps{Enc::GlobalHuffman, str_only, global_huffman_validate, global_huffman_decode};

}  // namespace tet::cells
