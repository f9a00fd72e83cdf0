// The seam between file access and execution: exec/ reads decoded tiles through this
// interface, so folds can be tested (and fuzzed) against in-memory sources.
#pragma once
#include <cstdint>
#include <vector>

#include "tet/catalog.h"

namespace tet {

struct TileView {
  const uint8_t* data = nullptr;  // decoded, little-endian, dtype-native, clipped tile, row-major
  uint64_t bytes = 0;             // == product(tile_shape) * dtype_size
};

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  virtual const Catalog& catalog() const = 0;
  // Decoded bytes of one tile, by row-major linear chunk index. May point into a mapping
  // (raw tiles) or into `scratch` (decoded/copied). Thread-safe; throws tet::Error.
  virtual TileView tile(uint32_t dataset_id, uint64_t linear_chunk, std::vector<uint8_t>& scratch) const = 0;
};

}  // namespace tet
