// Bit counting without a library call: the addon is built for the baseline ISA (no POPCNT on
// x86-64), where __builtin_popcountll becomes a call into libgcc's table-driven __popcountdi2 —
// most of a table lookup's time when a where or a row selection counts its bitmap words. The
// SWAR form is a few ALU operations and vectorizes over whole blocks; targets that have the
// instruction (POPCNT, aarch64) keep the builtin.
#pragma once
#include <cstdint>

namespace tet {

inline uint32_t popcount64(uint64_t x) {
#if defined(__POPCNT__) || defined(__aarch64__)
  return static_cast<uint32_t>(__builtin_popcountll(x));
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<uint32_t>((x * 0x0101010101010101ULL) >> 56);
#endif
}

}  // namespace tet
