// Internal to exec/: the storage / value type pair of every dtype, in one place. dispatch_dtype
// calls fn((S*)nullptr, (T*)nullptr) with S the stored element type and T the value type the
// engine computes in (f16: stored uint16_t, values float) and returns false for an unknown tag.
#pragma once
#include <cstdint>

#include "tet/catalog.h"

namespace tet {
namespace exec {

template <class Fn> [[nodiscard]] bool dispatch_dtype(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::F32: fn((float*)nullptr, (float*)nullptr); return true;
    case DType::F64: fn((double*)nullptr, (double*)nullptr); return true;
    case DType::F16: fn((uint16_t*)nullptr, (float*)nullptr); return true;
    case DType::U8: fn((uint8_t*)nullptr, (uint8_t*)nullptr); return true;
    case DType::U16: fn((uint16_t*)nullptr, (uint16_t*)nullptr); return true;
    case DType::I16: fn((int16_t*)nullptr, (int16_t*)nullptr); return true;
    case DType::I32: fn((int32_t*)nullptr, (int32_t*)nullptr); return true;
    case DType::U32: fn((uint32_t*)nullptr, (uint32_t*)nullptr); return true;
    case DType::I64: fn((int64_t*)nullptr, (int64_t*)nullptr); return true;
    case DType::U64: fn((uint64_t*)nullptr, (uint64_t*)nullptr); return true;
    default: return false;
  }
}

}  // namespace exec
}  // namespace tet
