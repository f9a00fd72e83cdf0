// run_tier_c (tier_c_impl.h) instantiated for <uint32_t, uint32_t>; <int64_t, int64_t>; <uint64_t, uint64_t>.
#include "exec/tier_c_impl.h"

namespace tet {
namespace exec {
TET_TIER_C_INSTANTIATE(uint32_t, uint32_t)
TET_TIER_C_INSTANTIATE(int64_t, int64_t)
TET_TIER_C_INSTANTIATE(uint64_t, uint64_t)
}  // namespace exec
}  // namespace tet
