#include "cells/huffman.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "cells/encoding.h"
#include "tet/error.h"

namespace tet::cells {

// Package-merge as the coin collector's problem: every symbol is a coin of each denomination
// 2^-1 .. 2^-limit with its weight as value; the cheapest set of coins worth n - 1 gives each
// symbol a length equal to the coins of it chosen. Level d (d = limit - 1 .. 0, deepest first)
// merges the symbols sorted by weight with the pairs of level d + 1's list; the first 2n - 2
// items of the top list are the chosen set, and a package among the first m items of a level
// stands for the first 2p items of the level below (p = packages among them), so the lengths
// follow by counting leaves level by level. O(n · limit) time and memory.
std::vector<uint8_t> limited_code_lengths(const std::vector<uint64_t>& weights, unsigned limit) {
  const size_t n = weights.size();
  if (n < 2 || limit == 0 || limit > kMaxCodeLength || n > (size_t(1) << limit))
    throw Error(Code::TET_INTERNAL, "cells: no length-limited code for " + std::to_string(n) + " symbols in " + std::to_string(limit) + " bits");
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto weight = [&](uint32_t s) { return weights[s] ? weights[s] : uint64_t(1); };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return weight(a) < weight(b); });

  // A level's list: item weights, and the symbol of each leaf (UINT32_MAX for a package).
  struct Level {
    std::vector<uint64_t> w;
    std::vector<uint32_t> leaf;
  };
  std::vector<Level> levels(limit);
  for (unsigned d = limit; d-- > 0;) {
    Level& L = levels[d];
    const Level* below = d + 1 < limit ? &levels[d + 1] : nullptr;
    const size_t packages = below ? below->w.size() / 2 : 0;
    L.w.reserve(n + packages);
    L.leaf.reserve(n + packages);
    size_t i = 0, p = 0;
    while (i < n || p < packages) {
      const uint64_t pw = p < packages ? below->w[2 * p] + below->w[2 * p + 1] : 0;
      if (p >= packages || (i < n && weight(order[i]) <= pw)) {  // ties: the leaf first
        L.w.push_back(weight(order[i]));
        L.leaf.push_back(order[i++]);
      } else {
        L.w.push_back(pw);
        L.leaf.push_back(UINT32_MAX);
        ++p;
      }
    }
  }
  std::vector<uint8_t> lengths(n, 0);
  size_t take = 2 * n - 2;
  for (unsigned d = 0; d < limit && take > 0; ++d) {
    size_t packages = 0;
    for (size_t k = 0; k < take; ++k) {
      if (levels[d].leaf[k] == UINT32_MAX) ++packages;
      else ++lengths[levels[d].leaf[k]];
    }
    take = 2 * packages;
  }
  return lengths;
}

HuffmanCode HuffmanCode::from_lengths(const uint8_t* lengths, uint64_t n) {
  if (n < 2 || n > (uint64_t(1) << kMaxCodeLength)) throw_invalid("a Huffman code of " + std::to_string(n) + " symbols");
  unsigned max_len = 0;
  uint64_t count[kMaxCodeLength + 1] = {};
  for (uint64_t s = 0; s < n; ++s) {
    const unsigned l = lengths[s];
    if (l == 0 || l > kMaxCodeLength) throw_invalid("a Huffman code length " + std::to_string(l) + " outside 1..16");
    ++count[l];
    max_len = std::max(max_len, l);
  }
  // Kraft: Σ 2^(16 - l) over n ≤ 2^16 symbols fits easily in 64 bits.
  uint64_t kraft = 0;
  for (unsigned l = 1; l <= kMaxCodeLength; ++l) kraft += count[l] << (kMaxCodeLength - l);
  if (kraft != (uint64_t(1) << kMaxCodeLength)) throw_invalid("Huffman code lengths that do not form a complete prefix code");

  HuffmanCode c;
  c.lengths_.assign(lengths, lengths + n);
  c.max_length_ = max_len;
  c.stream_code_.assign(n, 0);
  // Canonical codes: the first code of each length, then symbols in ascending order.
  uint32_t next[kMaxCodeLength + 2] = {};
  uint32_t code = 0;
  for (unsigned l = 1; l <= kMaxCodeLength; ++l) {
    code = (code + count[l - 1]) << 1;
    next[l] = code;
  }
  c.table_.assign(size_t(1) << max_len, 0);
  c.table_mask_ = (uint64_t(1) << max_len) - 1;
  for (uint64_t s = 0; s < n; ++s) {
    const unsigned l = c.lengths_[s];
    const uint32_t msb_first = next[l]++;
    uint32_t rev = 0;
    for (unsigned b = 0; b < l; ++b) rev |= ((msb_first >> b) & 1u) << (l - 1 - b);
    c.stream_code_[s] = rev;
    const uint32_t entry = uint32_t(s) << 8 | l;
    for (uint64_t at = rev; at <= c.table_mask_; at += uint64_t(1) << l) c.table_[at] = entry;
  }
  return c;
}

}  // namespace tet::cells
