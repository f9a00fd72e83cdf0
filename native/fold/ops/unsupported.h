// Placeholder family for ops without a streaming state (none, and the tier-C order statistics,
// which exec/ runs on materialized values): consumes nothing, finalizes to NaN.
#pragma once
#include "fold/soa.h"

namespace tet {
namespace fold {
namespace ops {

template <class T> struct Unsupported : Unblocked<T> {
  struct State {};
  static constexpr size_t kEncodedBytes = 0;
  static State identity(const OpCfg<T>&) { return State(); }
  static void consume(const OpCfg<T>&, State&, const T*, size_t) {}
  static void consume_one(const OpCfg<T>&, State&, T, uint64_t) {}
  static void merge(const OpCfg<T>&, State&, const State&) {}
  static void finalize(const OpCfg<T>&, const State&, uint8_t* out) { put_f64(out, std::numeric_limits<double>::quiet_NaN()); }
  static void encode(const State&, uint8_t*) {}
  static State decode(const uint8_t*) { return State(); }

  struct Soa {};
  static size_t soa_bytes(const OpCfg<T>&) { return 0; }
  static void init(const OpCfg<T>&, Soa&, size_t) {}
  static void consume_rows(const OpCfg<T>&, Soa&, RowScratch&, size_t, const T* const*, const uint64_t*, size_t, size_t) {}
  static State get(const OpCfg<T>&, const Soa&, size_t, uint64_t) { return State(); }
  static void put(const OpCfg<T>&, Soa&, size_t, const State&) {}
};

}  // namespace ops
}  // namespace fold
}  // namespace tet
