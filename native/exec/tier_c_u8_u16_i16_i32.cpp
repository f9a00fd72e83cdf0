// run_tier_c (tier_c_impl.h) instantiated for <uint8_t, uint8_t>; <uint16_t, uint16_t>; <int16_t, int16_t>; <int32_t, int32_t>.
#include "exec/tier_c_impl.h"

namespace tet {
namespace exec {
TET_TIER_C_INSTANTIATE(uint8_t, uint8_t)
TET_TIER_C_INSTANTIATE(uint16_t, uint16_t)
TET_TIER_C_INSTANTIATE(int16_t, int16_t)
TET_TIER_C_INSTANTIATE(int32_t, int32_t)
}  // namespace exec
}  // namespace tet
