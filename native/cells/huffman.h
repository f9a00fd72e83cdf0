// Canonical, length-limited Huffman codes over the codes of a column-global dictionary: the code
// lengths live once per column (the global dictionary's version-2 body, metablocks.h), and
// GlobalHuffman blocks (global_huffman.cpp) hold each present row's code as a bit stream.
//
// Canonical: the code of a symbol follows from the lengths alone (shorter lengths first, then
// ascending symbol), as in DEFLATE; codes go into the stream LSB first, so they are stored
// bit-reversed and a decoder indexes its table with the next `max_length` bits of the stream.
// Only complete codes are accepted (Kraft sum exactly 1): every window of the stream then decodes
// to a symbol, and the decode table has no hole to check.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

namespace tet::cells {

constexpr unsigned kMaxCodeLength = 16;  // n ≤ 2^16 symbols, a decode table ≤ 256 KiB

// Optimal prefix-code lengths for these weights with no length above `limit` (package-merge,
// Larmore and Hirschberg 1990), each 1..limit, Kraft sum exactly 1. A weight of 0 counts as 1
// (every symbol gets a code). Needs 2 ≤ weights.size() ≤ 2^limit, limit ≤ kMaxCodeLength.
std::vector<uint8_t> limited_code_lengths(const std::vector<uint64_t>& weights, unsigned limit);

class HuffmanCode {
 public:
  HuffmanCode() = default;
  // Throws TET_CELLS_INVALID unless `lengths` (one per symbol, n of them) is a complete prefix
  // code: 2 ≤ n, every length 1..kMaxCodeLength, Σ 2^-length = 1 (checked in exact integers).
  static HuffmanCode from_lengths(const uint8_t* lengths, uint64_t n);

  bool empty() const { return lengths_.empty(); }
  uint64_t size() const { return lengths_.size(); }
  unsigned max_length() const { return max_length_; }
  const std::vector<uint8_t>& lengths() const { return lengths_; }
  unsigned length(uint32_t symbol) const { return lengths_[symbol]; }
  uint32_t stream_code(uint32_t symbol) const { return stream_code_[symbol]; }  // bit-reversed code

  // The symbol whose code starts at bit 0 of `window` (the next ≥ max_length() stream bits) and
  // its length, packed as symbol << 8 | length.
  uint32_t entry(uint64_t window) const { return table_[window & table_mask_]; }

 private:
  std::vector<uint8_t> lengths_;
  std::vector<uint32_t> stream_code_;
  std::vector<uint32_t> table_;  // 2^max_length entries
  uint64_t table_mask_ = 0;
  unsigned max_length_ = 0;
};

// ---- the bit stream --------------------------------------------------------------------------
// Codes LSB first, bit k of the stream = bit k%8 of byte k/8; the area is stream_bytes(bits) long:
// the stream's bytes rounded up to 8, plus 8 zero bytes, so a reader may load the 8 bytes at any
// bit position below `bits`.
inline uint64_t stream_bytes(uint64_t bits) { return bits == 0 ? 0 : ((bits + 63) / 64) * 8 + 8; }
inline uint64_t stream_window(const uint8_t* stream, uint64_t bit) {
  uint64_t w;
  std::memcpy(&w, stream + (bit >> 3), 8);
  return w >> (bit & 7);  // ≥ 57 valid bits
}

// Appends codes to a zero-filled area of stream_bytes(total bits).
class StreamWriter {
 public:
  explicit StreamWriter(uint8_t* area) : area_(area) {}
  void put(uint32_t code, unsigned length) {
    acc_ |= uint64_t(code) << fill_;
    fill_ += length;
    if (fill_ >= 64) {
      std::memcpy(area_ + 8 * words_++, &acc_, 8);
      fill_ -= 64;
      acc_ = fill_ ? uint64_t(code) >> (length - fill_) : 0;
    }
  }
  void finish() {
    if (fill_) std::memcpy(area_ + 8 * words_++, &acc_, 8);
    acc_ = 0, fill_ = 0;
  }

 private:
  uint8_t* area_;
  uint64_t acc_ = 0, words_ = 0;
  unsigned fill_ = 0;
};

}  // namespace tet::cells
