// Overflow-checked u64 arithmetic and little-endian loads/stores. Every size or offset that
// comes from a file goes through these before it is used to index memory.
#pragma once
#include <cstdint>
#include <cstring>

namespace tet {

inline bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }
inline bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

// True when [offset, offset + len) lies inside [0, limit) without overflow.
inline bool span_within(uint64_t offset, uint64_t len, uint64_t limit) {
  uint64_t end;
  return !add_overflows(offset, len, &end) && end <= limit;
}

inline uint64_t align8(uint64_t n) { return (n + 7) & ~uint64_t(7); }  // callers keep n < 2^64-7

inline uint16_t load_u16le(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_u32le(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t load_u64le(const uint8_t* p) { return uint64_t(load_u32le(p)) | (uint64_t(load_u32le(p + 4)) << 32); }

inline void store_u16le(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline void store_u32le(uint8_t* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i)); }
inline void store_u64le(uint8_t* p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i)); }

}  // namespace tet
