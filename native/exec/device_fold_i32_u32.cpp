// The device fold drivers (device_fold_impl.h) instantiated for i32 and u32.
#include "exec/device_fold_impl.h"

namespace tet {
namespace exec {
TET_DEVICE_INSTANTIATE(int32_t, int32_t)
TET_DEVICE_INSTANTIATE(uint32_t, uint32_t)
}  // namespace exec
}  // namespace tet
