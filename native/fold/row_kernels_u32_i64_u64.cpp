// The row kernels (row_kernels_impl.h) for uint32_t, int64_t, uint64_t.
#include "fold/row_kernels_impl.h"

namespace tet {
namespace fold {
TET_ROW_KERNELS_INSTANTIATE(uint32_t)
TET_ROW_KERNELS_INSTANTIATE(int64_t)
TET_ROW_KERNELS_INSTANTIATE(uint64_t)
}  // namespace fold
}  // namespace tet
