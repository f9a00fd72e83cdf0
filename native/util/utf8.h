// Strict UTF-8 validation (no overlong forms, no surrogates, nothing above U+10FFFF).
#pragma once
#include <cstddef>
#include <cstdint>

namespace tet {

// Returns true when bytes[0, len) is well-formed UTF-8. On failure *bad_offset (if given) is
// the offset of the first byte of the offending sequence.
bool utf8_valid(const uint8_t* bytes, size_t len, size_t* bad_offset = nullptr);

}  // namespace tet
