// The fold drivers (fold_driver_impl.h) instantiated for f16 (stored as uint16_t, folded as float) and u8.
#include "exec/fold_driver_impl.h"

namespace tet {
namespace exec {
TET_FOLD_INSTANTIATE(uint16_t, float)
TET_FOLD_INSTANTIATE(uint8_t, uint8_t)
}  // namespace exec
}  // namespace tet
