// The device fold drivers (device_fold_impl.h) instantiated for i64 and u64.
#include "exec/device_fold_impl.h"

namespace tet {
namespace exec {
TET_DEVICE_INSTANTIATE(int64_t, int64_t)
TET_DEVICE_INSTANTIATE(uint64_t, uint64_t)
}  // namespace exec
}  // namespace tet
