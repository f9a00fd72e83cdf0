// The fold drivers (fold_driver_impl.h) instantiated for f32 and f64.
#include "exec/fold_driver_impl.h"

namespace tet {
namespace exec {
TET_FOLD_INSTANTIATE(float, float)
TET_FOLD_INSTANTIATE(double, double)
}  // namespace exec
}  // namespace tet
