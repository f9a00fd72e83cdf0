#include "exec/tile_input.h"

#include "tet/file.h"

namespace tet {
namespace exec {

const float* f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = f16_to_f32(uint16_t(h));
    return t;
  }();
  return table.data();
}

}  // namespace exec
}  // namespace tet
