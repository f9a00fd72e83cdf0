// The error codes of error_codes.def as C++: enum tet::Code, the class each surfaces as in JS,
// and a constexpr lookup by name. The string literals at existing fail("TET_...") call sites
// stay as they are; native/tests/error_codes_test.cpp checks every one of them is listed here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tet {

// The JS class a code surfaces as (lib/errors.ts): Base is TetError itself.
enum class ErrorClass : uint8_t { Base, Query, Format, Budget, Io, Cancelled, Device, Convert };

enum class Code : uint16_t {
#define TET_ERROR_CODE(code, cls, meaning) code,
#include "tet/error_codes.def"
#undef TET_ERROR_CODE
};

struct CodeInfo {
  Code code;
  const char* name;  // "TET_FORMAT_TRUNCATED"
  ErrorClass cls;
  const char* meaning;
};

inline constexpr CodeInfo kCodeTable[] = {
#define TET_ERROR_CODE(code, cls, meaning) {Code::code, #code, ErrorClass::cls, meaning},
#include "tet/error_codes.def"
#undef TET_ERROR_CODE
};
inline constexpr size_t kCodeCount = sizeof(kCodeTable) / sizeof(kCodeTable[0]);

constexpr const CodeInfo& code_info(Code c) { return kCodeTable[static_cast<size_t>(c)]; }
constexpr const char* code_name(Code c) { return code_info(c).name; }

// The row for a code name, or nullptr when the def has none.
constexpr const CodeInfo* find_code(std::string_view name) {
  for (const CodeInfo& row : kCodeTable)
    if (name == row.name) return &row;
  return nullptr;
}
constexpr bool is_known_code(std::string_view name) { return find_code(name) != nullptr; }

static_assert(code_info(Code::TET_INTERNAL).code == Code::TET_INTERNAL, "kCodeTable is indexed by Code");
// (is_known_code is checked at run time in native/tests/error_codes_test.cpp: gcc's sanitizer
// builds cannot fold its pointer comparison in a static_assert.)

}  // namespace tet
