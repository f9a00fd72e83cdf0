// The device fold drivers (device_fold_impl.h) instantiated for f16 (stored as uint16_t, folded as float) and u8.
#include "exec/device_fold_impl.h"

namespace tet {
namespace exec {
TET_DEVICE_INSTANTIATE(uint16_t, float)
TET_DEVICE_INSTANTIATE(uint8_t, uint8_t)
}  // namespace exec
}  // namespace tet
