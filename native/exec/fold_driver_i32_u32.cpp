// The fold drivers (fold_driver_impl.h) instantiated for i32 and u32.
#include "exec/fold_driver_impl.h"

namespace tet {
namespace exec {
TET_FOLD_INSTANTIATE(int32_t, int32_t)
TET_FOLD_INSTANTIATE(uint32_t, uint32_t)
}  // namespace exec
}  // namespace tet
