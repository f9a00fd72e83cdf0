// The device fold drivers (device_fold_impl.h) instantiated for u16 and i16.
#include "exec/device_fold_impl.h"

namespace tet {
namespace exec {
TET_DEVICE_INSTANTIATE(uint16_t, uint16_t)
TET_DEVICE_INSTANTIATE(int16_t, int16_t)
}  // namespace exec
}  // namespace tet
