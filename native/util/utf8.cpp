#include "util/utf8.h"

namespace tet {

bool utf8_valid(const uint8_t* s, size_t len, size_t* bad_offset) {
  size_t i = 0;
  while (i < len) {
    uint8_t c = s[i];
    if (c < 0x80) { ++i; continue; }
    size_t n;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; min = 0x10000; }
    else { if (bad_offset) *bad_offset = i; return false; }
    if (len - i <= n) { if (bad_offset) *bad_offset = i; return false; }
    for (size_t k = 1; k <= n; ++k) {
      uint8_t cc = s[i + k];
      if ((cc & 0xC0) != 0x80) { if (bad_offset) *bad_offset = i; return false; }
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace tet
