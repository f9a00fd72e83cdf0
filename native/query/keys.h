// Group keys and order keys of table queries (internal to native/query): the composite key of a
// row as fixed 64-bit words (plus a null bit per part), a flat hash map from keys to group ids,
// string interning, and the order-preserving words `order_by` compares.
//
// Key words: bool 0 / 1; Int-stored kinds the i64 after the bucket / width transform; float
// the f64 bits after the width transform with -0.0 folded into +0.0 and every NaN one NaN (one
// group each); str an interned id (the key's strings live in the interner, ids are local to
// it). A null part has word 0 and its null bit set.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "cells/encoding.h"
#include "query/table_query.h"

namespace tet::query {

struct GroupKeyWords {
  uint64_t w[kMaxGroupKeys] = {0, 0, 0, 0};
  uint8_t nulls = 0;
};

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t key_hash(const GroupKeyWords& k, size_t parts) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ k.nulls;
  for (size_t p = 0; p < parts; ++p) h = mix64(h ^ k.w[p]) + p;
  return h;
}

inline bool key_equal(const GroupKeyWords& a, const GroupKeyWords& b, size_t parts) {
  if (a.nulls != b.nulls) return false;
  for (size_t p = 0; p < parts; ++p)
    if (a.w[p] != b.w[p]) return false;
  return true;
}

// Keys -> dense ids in first-seen order (open addressing, linear probing, load <= 1/2).
class GroupMap {
 public:
  explicit GroupMap(size_t parts) : parts_(parts), slots_(64, 0), mask_(63) {}
  size_t size() const { return keys_.size(); }
  const GroupKeyWords& key(uint32_t id) const { return keys_[id]; }
  // The id of `k`, adding it when new (`added` says so).
  uint32_t find_or_add(const GroupKeyWords& k, bool& added) {
    uint64_t h = key_hash(k, parts_);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      const uint32_t s = slots_[i];
      if (s == 0) {
        added = true;
        keys_.push_back(k);
        slots_[i] = uint32_t(keys_.size());
        if (keys_.size() * 2 > slots_.size()) grow();
        return uint32_t(keys_.size() - 1);
      }
      if (key_equal(keys_[s - 1], k, parts_)) {
        added = false;
        return s - 1;
      }
    }
  }

 private:
  void grow() {
    std::vector<uint32_t> next(slots_.size() * 2, 0);
    const uint64_t m = next.size() - 1;
    for (uint32_t id = 0; id < keys_.size(); ++id) {
      uint64_t i = key_hash(keys_[id], parts_) & m;
      while (next[i] != 0) i = (i + 1) & m;
      next[i] = id + 1;
    }
    slots_.swap(next);
    mask_ = m;
  }
  size_t parts_;
  std::vector<uint32_t> slots_;  // 0 = empty, else id + 1
  uint64_t mask_;
  std::vector<GroupKeyWords> keys_;
};

// Distinct strings -> dense ids in first-seen order; the strings stay in `strs`.
class StrInterner {
 public:
  StrInterner() : slots_(64, 0), mask_(63) {}
  uint32_t intern(std::string_view s);
  std::string_view at(uint32_t id) const { return strs_.at(id); }
  size_t size() const { return strs_.size(); }
  uint64_t bytes() const { return strs_.bytes.size() + strs_.size() * 20; }

 private:
  cells::StrBuffer strs_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;
  uint64_t mask_;
};

// Binary byte order.
inline int str_order(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  const int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

// f64 with -0.0 as +0.0 and one NaN, as bits (a float key).
inline uint64_t float_key_bits(double v) {
  if (v != v) return 0x7ff8000000000000ULL;
  if (v == 0.0) v = 0.0;
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

// Ascending order words: i64 by a sign flip; f64 by the sign-magnitude flip with -0.0 as +0.0
// and every NaN above +inf (numpy's NaN-last); bool 0 / 1.
inline uint64_t order_word_int(int64_t v) { return uint64_t(v) ^ (uint64_t(1) << 63); }
inline uint64_t order_word_float(double v) {
  if (v != v) return ~uint64_t(0);
  if (v == 0.0) v = 0.0;
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return (u >> 63) ? ~u : (u | (uint64_t(1) << 63));
}

}  // namespace tet::query
