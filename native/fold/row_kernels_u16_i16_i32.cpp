// The row kernels (row_kernels_impl.h) for uint16_t, int16_t, int32_t.
#include "fold/row_kernels_impl.h"

namespace tet {
namespace fold {
TET_ROW_KERNELS_INSTANTIATE(uint16_t)
TET_ROW_KERNELS_INSTANTIATE(int16_t)
TET_ROW_KERNELS_INSTANTIATE(int32_t)
}  // namespace fold
}  // namespace tet
