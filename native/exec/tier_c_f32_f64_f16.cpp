// run_tier_c (tier_c_impl.h) instantiated for <float, float>; <double, double>; <uint16_t, float>.
#include "exec/tier_c_impl.h"

namespace tet {
namespace exec {
TET_TIER_C_INSTANTIATE(float, float)
TET_TIER_C_INSTANTIATE(double, double)
TET_TIER_C_INSTANTIATE(uint16_t, float)
}  // namespace exec
}  // namespace tet
