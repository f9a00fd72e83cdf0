// verify_column_deep (column.h): what a block's header says about its values, recomputed.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cells/column.h"

namespace tet::cells {
namespace {

// The big-endian word of a string's first 8 bytes (zero-padded): Sym8 zone-map order.
uint64_t prefix_word(std::string_view s) {
  uint64_t w = 0;
  for (size_t i = 0; i < 8; ++i) w = (w << 8) | (i < s.size() ? static_cast<uint8_t>(s[i]) : 0);
  return w;
}

void check_block(const Cell& b, uint64_t index, const DecodeContext& ctx) {
  const std::string where = "block " + std::to_string(index) + ": ";
  const uint8_t* v = b.validity();
  const uint32_t n = static_cast<uint32_t>(b.len);
  const bool zone = b.has(attr::kHasZonemap), sorted = b.has(attr::kSorted);
  switch (physical_of(b.kind_v())) {
    case Physical::Int: {
      std::vector<int64_t> x(n);
      decode_rows(b, 0, n, x.data(), ctx);
      bool any = false, up = true;
      int64_t lo = 0, hi = 0, prev = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (!row_valid(v, i)) continue;
        if (any && x[i] < prev) up = false;
        lo = any ? std::min(lo, x[i]) : x[i];
        hi = any ? std::max(hi, x[i]) : x[i];
        prev = x[i];
        any = true;
      }
      if (zone && (!any || as_i64(b.meta[2]) != lo || as_i64(b.meta[3]) != hi)) throw_invalid(where + "zone map differs from the values");
      if (sorted && !up) throw_invalid(where + "marked sorted but its values decrease");
      break;
    }
    case Physical::Float: {
      std::vector<double> x(n);
      decode_rows(b, 0, n, x.data(), ctx);
      bool any = false, up = true;
      double lo = 0, hi = 0, prev = 0;
      uint64_t nans = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (!row_valid(v, i)) continue;
        if (std::isnan(x[i])) {
          ++nans;
          up = false;
          continue;
        }
        if (any && x[i] < prev) up = false;
        lo = any ? std::min(lo, x[i]) : x[i];
        hi = any ? std::max(hi, x[i]) : x[i];
        prev = x[i];
        any = true;
      }
      if (b.meta[1] != nans) throw_invalid(where + "NaN count " + std::to_string(b.meta[1]) + ", the values hold " + std::to_string(nans));
      if (zone && (!any || as_f64(b.meta[2]) > lo || as_f64(b.meta[3]) < hi || as_f64(b.meta[2]) < lo || as_f64(b.meta[3]) > hi))
        throw_invalid(where + "zone map differs from the values");
      if (sorted && !up) throw_invalid(where + "marked sorted but its values decrease (or hold NaN)");
      break;
    }
    case Physical::Bool: {
      std::vector<uint8_t> x(n);
      decode_rows(b, 0, n, x.data(), ctx);
      bool up = true;
      int prev = -1;
      for (uint32_t i = 0; i < n; ++i) {
        if (x[i] > 1) throw_invalid(where + "a bool value other than 0 / 1");
        if (!row_valid(v, i)) continue;
        if (x[i] < prev) up = false;
        prev = x[i];
      }
      if (sorted && !up) throw_invalid(where + "marked sorted but its values decrease");
      break;
    }
    case Physical::Str: {
      StrBuffer x;
      decode_rows(b, 0, n, &x, ctx);
      if (x.size() != n) throw_invalid(where + "decoded to another row count");
      bool any = false, up = true;
      uint64_t lo = 0, hi = 0;
      std::string_view prev;
      for (uint32_t i = 0; i < n; ++i) {
        if (!row_valid(v, i)) {
          if (!x.at(i).empty()) throw_invalid(where + "a null row holds a non-empty string");
          continue;
        }
        const std::string_view s = x.at(i);
        if (any && s < prev) up = false;
        const uint64_t w = prefix_word(s);
        lo = any ? std::min(lo, w) : w;
        hi = any ? std::max(hi, w) : w;
        prev = s;
        any = true;
      }
      if (zone && (!any || b.meta[2] != lo || b.meta[3] != hi)) throw_invalid(where + "zone map differs from the values");
      if (sorted && !up) throw_invalid(where + "marked sorted but its values decrease");
      break;
    }
    case Physical::Table: throw_invalid(where + "a block of kind table");
  }
}

}  // namespace

void verify_column_deep(const Cell& root, const DecodeContext& ctx) {
  validate_column(root, ctx);
  for (uint64_t i = 0; i < block_count(root); ++i) check_block(block_at(root, i), i, ctx);
}

}  // namespace tet::cells
