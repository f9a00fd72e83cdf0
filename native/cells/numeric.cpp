#include "cells/numeric.h"

#include <cstring>
#include <string>

namespace tet::cells {

CellRef new_block(const Staged& s, Enc enc, uint64_t data_bytes) {
  const bool nulls = s.validity != nullptr && s.has_nulls();
  CellRef c = new_cell(s.kind, enc, s.len, data_bytes + (nulls ? kMaskBytes : 0));
  if (nulls) {
    std::memcpy(owned_payload(c) + data_bytes, s.validity, kMaskBytes);
    c.mutable_cell()->attrs |= attr::kHasNulls;
  }
  return c;
}

uint64_t* block_words(CellRef& c) { return c->payload ? reinterpret_cast<uint64_t*>(owned_payload(c)) : nullptr; }

uint64_t first_present(const Staged& s) {
  for (uint32_t i = 0; i < s.len; ++i)
    if (s.row_valid(i)) return s.lanes[i];
  return 0;
}

void carry_fill(const Staged& s, uint64_t* out) {
  if (!s.has_nulls()) {
    std::memcpy(out, s.lanes, s.len * sizeof(uint64_t));
    return;
  }
  uint64_t carry = first_present(s);
  for (uint32_t i = 0; i < s.len; ++i) {
    if (s.row_valid(i)) carry = s.lanes[i];
    out[i] = carry;
  }
}

void zero_null_rows(const uint8_t* validity, uint32_t start, uint32_t count, uint64_t* out) {
  if (!validity) return;
  uint32_t i = 0;
  // Byte-aligned runs of 8 rows: a byte of all-present rows (nearly every byte of a column with
  // few nulls) leaves its 8 values alone.
  for (; i < count && ((start + i) & 7) != 0; ++i) {
    const uint32_t r = start + i;
    out[i] &= uint64_t(0) - uint64_t((validity[r >> 3] >> (r & 7)) & 1);
  }
  for (; i + 8 <= count; i += 8) {
    const uint8_t byte = validity[(start + i) >> 3];
    if (byte == 0xff) continue;
    for (unsigned t = 0; t < 8; ++t) out[i + t] &= uint64_t(0) - uint64_t((byte >> t) & 1);
  }
  for (; i < count; ++i) {
    const uint32_t r = start + i;
    out[i] &= uint64_t(0) - uint64_t((validity[r >> 3] >> (r & 7)) & 1);
  }
}

void expect_data_bytes(const Cell& c, uint64_t want, const char* enc) {
  if (c.data_bytes() != want)
    throw_invalid(std::string(enc) + " block of " + std::to_string(c.len) + " rows has " + std::to_string(c.data_bytes()) +
                  " data bytes, expected " + std::to_string(want));
  if (c.payload_bytes != 0 && (reinterpret_cast<uintptr_t>(c.payload) & 7) != 0)
    throw_invalid(std::string(enc) + " block payload is not 8-byte aligned");
}

void expect_meta_zero(const Cell& c, int from, int to, const char* enc) {
  for (int i = from; i <= to; ++i)
    if (c.meta[i] != 0) throw_invalid(std::string(enc) + " block has a non-zero unused meta[" + std::to_string(i) + "]");
}

void expect_nan_count_bound(const Cell& c, const char* enc) {
  if (c.meta[1] > valid_count(c))
    throw_invalid(std::string(enc) + " block's NaN count " + std::to_string(c.meta[1]) + " exceeds its present rows");
}

}  // namespace tet::cells
