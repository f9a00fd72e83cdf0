// One definition per encoding: what kinds it may hold, how a block of it is validated (untrusted
// bytes from a file) and decoded. Adding an encoding is one EncodingOps in its codec file plus
// its row in `encoding_table()` (encoding.cpp); nothing else switches on every encoding.
//
// Decoded forms by physical kind (rows [start, start + count) of one leaf block; null rows come
// out as the kind's zero, the caller reads validity from the cell):
//   Int   -> int64_t[count]      Float -> double[count]      Bool -> uint8_t[count] (0 / 1)
//   Str   -> appended to a StrBuffer (count strings)
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cells/cell.h"

namespace tet::cells {

// Decoded strings: offsets[i]..offsets[i+1] in bytes. Appending never invalidates offsets.
struct StrBuffer {
  std::vector<uint64_t> offsets{0};
  std::vector<uint8_t> bytes;
  size_t size() const { return offsets.size() - 1; }
  void push(const uint8_t* p, size_t n) { bytes.insert(bytes.end(), p, p + n); offsets.push_back(bytes.size()); }
  void push(std::string_view s) { push(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  std::string_view at(size_t i) const {
    return {reinterpret_cast<const char*>(bytes.data()) + offsets[i], size_t(offsets[i + 1] - offsets[i])};
  }
  void clear() { offsets.assign(1, 0); bytes.clear(); }
};

class HuffmanCode;  // huffman.h

// Context a decode may need beyond the block: a GlobalDict block's column dictionary, and for a
// GlobalHuffman block also the dictionary's code (both from GlobalDictionary::context()).
struct DecodeContext {
  const StrBuffer* global_dict = nullptr;
  const HuffmanCode* dict_code = nullptr;
};

struct EncodingOps {
  Enc enc;
  // Whether blocks of this physical kind may use the encoding.
  bool (*legal)(Physical);
  // Throws Error(TET_CELLS_INVALID) unless `c` (kind, len, attrs, meta, payload_bytes,
  // payload contents where their shape matters: widths, offsets, codes in range) is a
  // well-formed leaf block of this encoding. Called once per block at load; decode may then
  // trust the block. Never reads outside [payload, payload + payload_bytes).
  void (*validate)(const Cell& c, const DecodeContext& ctx);
  // Decode rows [start, start + count) (start + count ≤ len) to the physical form above.
  void (*decode)(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx);
};

// The ops of one encoding (throws TET_CELLS_INVALID for an unknown byte).
const EncodingOps& encoding_ops(Enc e);
const EncodingOps* find_encoding(uint8_t enc_byte);  // null when unknown

// Checks the parts of a leaf header common to every encoding (known kind/enc/attrs, legal
// pairing, len ≤ kBlockLanes, mask trailer fits, mask bits past len zero, zone map ordered and
// NaN-free) and then the encoding's own validate. Throws TET_CELLS_INVALID.
void validate_leaf(const Cell& c, const DecodeContext& ctx);

// Convenience: decode with the block's own encoding.
void decode_rows(const Cell& c, uint32_t start, uint32_t count, void* out, const DecodeContext& ctx = {});

[[noreturn]] void throw_invalid(const std::string& what);

}  // namespace tet::cells
