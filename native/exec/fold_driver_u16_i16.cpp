// The fold drivers (fold_driver_impl.h) instantiated for u16 and i16.
#include "exec/fold_driver_impl.h"

namespace tet {
namespace exec {
TET_FOLD_INSTANTIATE(uint16_t, uint16_t)
TET_FOLD_INSTANTIATE(int16_t, int16_t)
}  // namespace exec
}  // namespace tet
