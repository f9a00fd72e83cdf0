#include "cells/cell.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "tet/error.h"
#include "util/bits.h"

namespace tet::cells {

Physical physical_of(Kind k) {
  switch (k) {
    case Kind::Bool: return Physical::Bool;
    case Kind::Float: return Physical::Float;
    case Kind::Str: return Physical::Str;
    case Kind::Table: return Physical::Table;
    case Kind::Int: case Kind::Date: case Kind::Timestamp: case Kind::Time: return Physical::Int;
  }
  return Physical::Int;
}

bool kind_is_known(uint8_t k) { return k <= 4 || (k >= 16 && k <= 18); }

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Table: return "table";
    case Kind::Date: return "date";
    case Kind::Timestamp: return "timestamp";
    case Kind::Time: return "time";
  }
  return "?";
}

namespace {
// Indexed by the enc byte; null where no encoding of this build has the byte.
const char* const kEncNames[kEncodingCount] = {
    "plain", "constant", "sequence", "bool_bits", "for", "delta", "dict", "rle", "sym8", "sym8_for",
    "views", "directory", "global_dict", "decimal", "run_directory",
    "piecewise_sequence", "sparse_bool", "for_radix", "global_huffman"};
}  // namespace

bool enc_is_known(uint8_t e) { return e < kEncodingCount && kEncNames[e] != nullptr; }

const char* enc_name(Enc e) {
  const auto i = static_cast<uint8_t>(e);
  return enc_is_known(i) ? kEncNames[i] : "?";
}

uint64_t valid_count(const Cell& c) {
  const uint8_t* v = c.validity();
  if (!v) return c.len;
  uint64_t n = 0;
  const uint64_t full = c.len / 64;
  for (uint64_t w = 0; w < full; ++w) {
    uint64_t word;
    std::memcpy(&word, v + 8 * w, 8);
    n += static_cast<uint64_t>(tet::popcount64(word));
  }
  for (uint64_t i = full * 64; i < c.len; ++i) n += row_valid(v, i) ? 1 : 0;
  return n;
}

namespace {

// Owned payloads: 64-aligned, rounded up to 64 bytes so SIMD tails may read a whole line.
uint8_t* alloc_payload(uint64_t bytes) {
  const uint64_t rounded = (bytes + 63) & ~uint64_t(63);
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return static_cast<uint8_t*>(p);
}

bool owns_payload(const Cell& c) {
  return c.payload && !c.has(attr::kPayloadMmap) && !c.has(attr::kPayloadBorrowed);
}

void destroy(Cell* c) {
  if (c->enc_v() == Enc::Directory && owns_payload(*c)) {
    // In memory a Directory's payload is its children: an array of Cell*, one reference each.
    const uint64_t n = c->payload_bytes / sizeof(Cell*);
    Cell* const* kids = reinterpret_cast<Cell* const*>(c->payload);
    for (uint64_t i = 0; i < n; ++i) CellRef drop(kids[i]);
  }
  if (owns_payload(*c)) std::free(const_cast<uint8_t*>(c->payload));
  delete c;
}

}  // namespace

void CellRef::release() {
  if (c_ && c_->rc.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(c_);
  c_ = nullptr;
}

CellRef new_cell(Kind kind, Enc enc, uint64_t len, uint64_t payload_bytes) {
  auto* c = new Cell();
  c->kind = static_cast<uint8_t>(kind);
  c->enc = static_cast<uint8_t>(enc);
  c->len = len;
  if (payload_bytes) {
    try {
      c->payload = alloc_payload(payload_bytes);
    } catch (...) {
      delete c;
      throw;
    }
    c->payload_bytes = payload_bytes;
  }
  return CellRef(c);
}

uint8_t* owned_payload(CellRef& c) {
  Cell* m = c.mutable_cell();
  if (!owns_payload(*m)) throw Error(Code::TET_INTERNAL, "cells: writing a payload the cell does not own");
  return const_cast<uint8_t*>(m->payload);
}

CellRef view_cell(const Cell& header, const uint8_t* payload, uint8_t payload_attr) {
  auto* c = new Cell();
  c->kind = header.kind;
  c->enc = header.enc;
  c->attrs = static_cast<uint8_t>((header.attrs & ~(attr::kPayloadMmap | attr::kPayloadBorrowed)) | payload_attr);
  c->len = header.len;
  c->payload = payload;
  c->payload_bytes = header.payload_bytes;
  std::memcpy(c->meta, header.meta, sizeof c->meta);
  return CellRef(c);
}

CellRef clone_cell(const Cell& src) {
  auto* c = new Cell();
  c->kind = src.kind;
  c->enc = src.enc;
  c->attrs = static_cast<uint8_t>(src.attrs & ~(attr::kPayloadMmap | attr::kPayloadBorrowed));
  c->len = src.len;
  std::memcpy(c->meta, src.meta, sizeof c->meta);
  if (src.payload_bytes) {
    try {
      uint8_t* p = alloc_payload(src.payload_bytes);
      std::memcpy(p, src.payload, src.payload_bytes);
      c->payload = p;
    } catch (...) {
      delete c;
      throw;
    }
    c->payload_bytes = src.payload_bytes;
    if (src.enc_v() == Enc::Directory && owns_payload(src)) {
      Cell* const* kids = reinterpret_cast<Cell* const*>(c->payload);
      for (uint64_t i = 0; i < c->payload_bytes / sizeof(Cell*); ++i) kids[i]->rc.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return CellRef(c);
}

Cell* CellRef::mutable_cell() {
  if (!c_) return nullptr;
  const bool shared = c_->rc.load(std::memory_order_acquire) != 1;
  if (shared || (c_->payload && !owns_payload(*c_))) *this = clone_cell(*c_);
  return c_;
}

}  // namespace tet::cells
