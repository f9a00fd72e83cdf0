// The cell: one 64-byte, 64-aligned header per block of a column (at most kBlockLanes rows),
// pointing to an optional payload. Every block of every kind and encoding has this one shape;
// what the payload and the meta slots hold is the encoding's business (encoding.h, and the
// byte-level description in docs/format-tables.md).
//
// Conventions every encoding keeps (so callers never need to know which encoding a block has):
//  - `meta[0]`, `meta[1]`: encoding-specific (a constant, a sequence's first + step, a frame's
//    base, a code width, ...). Float blocks keep their NaN count in `meta[1]`, so Float
//    encodings use `meta[0]` only.
//  - `meta[2]`, `meta[3]`: the zone map (min, max) when HAS_ZONEMAP is set, as the bit pattern of
//    the physical value: i64 for Int-stored kinds, f64 for Float (NaN excluded), the big-endian
//    Sym8 word (u64) for Str. Constant and Sequence derive their bounds and never set it.
//  - HAS_NULLS: the last kMaskBytes bytes of the payload are the validity bitmap (bit i of byte
//    i/8 = row i present); bits at and past `len` are zero. Without it every row is present and
//    the block carries no mask. A null row's value lane holds the kind's zero (0, 0.0, "",
//    false), so encoded-domain folds need no mask.
//  - Payloads are 8-byte aligned in memory (64 at rest), so lanes may be read as their type.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tet::cells {

constexpr uint32_t kBlockLanes = 2048;
constexpr uint32_t kMaskBytes = kBlockLanes / 8;  // 256

// Logical kinds (wire values of the spec). Date, Timestamp and Time are stored as Int.
enum class Kind : uint8_t { Bool = 0, Int = 1, Float = 2, Str = 3, Table = 4, Date = 16, Timestamp = 17, Time = 18 };

// The physical lane family a kind is stored and decoded as.
enum class Physical : uint8_t { Bool, Int, Float, Str, Table };
Physical physical_of(Kind k);
bool kind_is_known(uint8_t k);
const char* kind_name(Kind k);  // "bool", "int", ... (the spec's JSON names)

// The encodings (values are the at-rest `enc` byte; append only): the spec's thirteen, then
// extensions: Decimal (decimal-scaled floats, decimal.cpp), RunDirectory (a column's runs at
// rest, expanded to Constant / Rle leaves on load, run_directory.cpp), PiecewiseSequence (a few
// arithmetic segments, piecewise_sequence.cpp), SparseBool (majority value + exception rows,
// sparse_bool.cpp), ForRadix (For with k residuals mixed-radix packed per lane, for_radix.cpp)
// and GlobalHuffman (global dictionary codes, canonical Huffman coded, global_huffman.cpp).
enum class Enc : uint8_t {
  Plain = 0, Constant = 1, Sequence = 2, BoolBits = 3, For = 4, Delta = 5, Dict = 6, Rle = 7,
  Sym8 = 8, Sym8For = 9, Views = 10, Directory = 11, GlobalDict = 12,
  Decimal = 13, RunDirectory = 14, PiecewiseSequence = 15, SparseBool = 16, ForRadix = 17, GlobalHuffman = 18,
};
constexpr int kEncodingCount = 19;
bool enc_is_known(uint8_t e);  // a byte naming one of the encodings above
const char* enc_name(Enc e);  // "plain", "constant", ..., "global_dict", "decimal", "run_directory", ..., "global_huffman"

namespace attr {
constexpr uint8_t kSorted = 0x01;           // values non-decreasing (nulls ignored)
constexpr uint8_t kHasNulls = 0x02;         // payload ends with the validity mask
constexpr uint8_t kPayloadMmap = 0x04;      // payload points into a file mapping (not owned)
constexpr uint8_t kPayloadBorrowed = 0x08;  // payload owned by someone else (not freed)
constexpr uint8_t kHasZonemap = 0x10;       // meta[2], meta[3] hold min, max
constexpr uint8_t kDefined = 0x1f;
}  // namespace attr

struct alignas(64) Cell {
  uint8_t kind = 0;   // Kind
  uint8_t enc = 0;    // Enc
  uint8_t attrs = 0;  // attr::*
  uint8_t resv = 0;
  std::atomic<uint32_t> rc{1};
  uint64_t len = 0;               // rows (≤ kBlockLanes for a leaf)
  const uint8_t* payload = nullptr;
  uint64_t payload_bytes = 0;
  uint64_t meta[4] = {0, 0, 0, 0};

  Kind kind_v() const { return static_cast<Kind>(kind); }
  Enc enc_v() const { return static_cast<Enc>(enc); }
  bool has(uint8_t a) const { return (attrs & a) != 0; }
  // The validity bitmap (kMaskBytes) or null when every row is present.
  const uint8_t* validity() const {
    return has(attr::kHasNulls) ? payload + payload_bytes - kMaskBytes : nullptr;
  }
  // Payload bytes before the mask trailer.
  uint64_t data_bytes() const { return has(attr::kHasNulls) ? payload_bytes - kMaskBytes : payload_bytes; }
};
static_assert(sizeof(void*) == 8, "cells assume 64-bit pointers");
static_assert(sizeof(Cell) == 64, "a Cell is exactly one cache line");
static_assert(alignof(Cell) == 64, "a Cell is cache-line aligned");

inline bool row_valid(const uint8_t* validity, uint64_t i) {
  return validity == nullptr || ((validity[i >> 3] >> (i & 7)) & 1) != 0;
}
// Rows present in [0, len) (popcount of the mask, or len).
uint64_t valid_count(const Cell& c);

// Bit-pattern helpers for the meta slots.
inline uint64_t bits_of(int64_t v) { return static_cast<uint64_t>(v); }
inline uint64_t bits_of(double v) { uint64_t b; __builtin_memcpy(&b, &v, 8); return b; }
inline int64_t as_i64(uint64_t b) { return static_cast<int64_t>(b); }
inline double as_f64(uint64_t b) { double v; __builtin_memcpy(&v, &b, 8); return v; }

// ---- ownership -----------------------------------------------------------------------------
// A CellRef holds one reference. Blocks are shared, never copied, until mutated
// (`make_unique` copies a block whose rc > 1). A Cell and its owned payload are freed together
// when the last reference goes; an mmap or borrowed payload is left alone. A Directory's payload
// (in memory) is an array of `Cell*` children, each holding one reference.
class CellRef {
 public:
  CellRef() = default;
  explicit CellRef(Cell* adopt) : c_(adopt) {}  // takes over the caller's reference
  CellRef(const CellRef& o) : c_(o.c_) { retain(); }
  CellRef(CellRef&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  CellRef& operator=(CellRef o) noexcept { std::swap(c_, o.c_); return *this; }
  ~CellRef() { release(); }

  const Cell* get() const { return c_; }
  const Cell* operator->() const { return c_; }
  const Cell& operator*() const { return *c_; }
  explicit operator bool() const { return c_ != nullptr; }
  Cell* mutable_cell();  // copies first when shared (copy-on-write)
  Cell* detach() { Cell* c = c_; c_ = nullptr; return c; }

 private:
  void retain() const { if (c_) c_->rc.fetch_add(1, std::memory_order_relaxed); }
  void release();
  Cell* c_ = nullptr;
};

// A new cell with an owned, zero-filled, 64-aligned payload of `payload_bytes` (none when 0).
// The returned cell's payload may be written through `owned_payload`.
CellRef new_cell(Kind kind, Enc enc, uint64_t len, uint64_t payload_bytes);
uint8_t* owned_payload(CellRef& c);  // the writable payload of a cell made by new_cell
// A cell whose payload is borrowed (kPayloadBorrowed) or mapped (kPayloadMmap): never freed here.
CellRef view_cell(const Cell& header, const uint8_t* payload, uint8_t payload_attr);
// A deep copy (owned payload; Directory children shared).
CellRef clone_cell(const Cell& c);

}  // namespace tet::cells
