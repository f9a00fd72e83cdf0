// The row kernels (row_kernels_impl.h) for float, double, uint8_t.
#include "fold/row_kernels_impl.h"

namespace tet {
namespace fold {
TET_ROW_KERNELS_INSTANTIATE(float)
TET_ROW_KERNELS_INSTANTIATE(double)
TET_ROW_KERNELS_INSTANTIATE(uint8_t)
}  // namespace fold
}  // namespace tet
