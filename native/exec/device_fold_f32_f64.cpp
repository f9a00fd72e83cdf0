// The device fold drivers (device_fold_impl.h) instantiated for f32 and f64.
#include "exec/device_fold_impl.h"

namespace tet {
namespace exec {
TET_DEVICE_INSTANTIATE(float, float)
TET_DEVICE_INSTANTIATE(double, double)
}  // namespace exec
}  // namespace tet
