// IEEE 754 binary16 <-> binary32 by bit manipulation (exact; round-to-nearest-even on narrowing).
#include <cstring>

#include "tet/file.h"

namespace tet {

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int shift = __builtin_clz(mant) - 21;  // leading zeros within the 10-bit field, +1
    mant = (mant << shift) & 0x3FF;
    bits = sign | (uint32_t(113 - shift) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) {
    if (mant == 0) return sign | 0x7C00;
    uint16_t m = uint16_t(mant >> 13);
    return sign | 0x7C00 | 0x200 | m;  // quiet NaN, top payload bits kept
  }
  int e = int(exp) - 127 + 15;
  if (e >= 0x1F) return sign | 0x7C00;  // overflow before rounding
  if (e <= 0) {
    // Subnormal half (or zero): value = mant24 * 2^(exp-150); half unit is 2^-24.
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    uint32_t m24 = mant | 0x800000;
    int shift = 14 - e;        // 14..24
    uint32_t q = m24 >> shift;
    uint32_t rem = m24 & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return sign | uint16_t(q);  // q may carry into the smallest normal: still correct bits
  }
  uint32_t q = (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;  // may carry into exponent / to inf
  return sign | uint16_t(q);
}

}  // namespace tet
