// The fold drivers (fold_driver_impl.h) instantiated for i64 and u64.
#include "exec/fold_driver_impl.h"

namespace tet {
namespace exec {
TET_FOLD_INSTANTIATE(int64_t, int64_t)
TET_FOLD_INSTANTIATE(uint64_t, uint64_t)
}  // namespace exec
}  // namespace tet
