// Element types of .tet v1 (wire tags 1..10) and their sizes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tet {

enum class DType : uint32_t {
  F32 = 1, F64 = 2, I32 = 3, I64 = 4, U8 = 5, U16 = 6, I16 = 7, U32 = 8, F16 = 9, U64 = 10,
};

constexpr uint32_t kMaxNdim = 8;

inline bool dtype_tag_valid(uint32_t tag) { return tag >= 1 && tag <= 10; }

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::U8: return 1;
    case DType::U16: case DType::I16: case DType::F16: return 2;
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F64: case DType::I64: case DType::U64: return 8;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32"; case DType::F64: return "f64"; case DType::I32: return "i32";
    case DType::I64: return "i64"; case DType::U8: return "u8";   case DType::U16: return "u16";
    case DType::I16: return "i16"; case DType::U32: return "u32"; case DType::F16: return "f16";
    case DType::U64: return "u64";
  }
  return "?";
}

inline bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16; }

}  // namespace tet
