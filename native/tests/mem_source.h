// Test-only in-memory ChunkSource: cuts a dense row-major array into clipped tiles so exec/ can
// be tested without the file reader. Payload offsets are laid out in reverse chunk order to
// make sequential (payload-order) visits differ from chunk order.
#pragma once
#include <atomic>
#include <cstring>
#include <vector>

#include "tet/chunk_source.h"
#include "tet/error.h"

namespace tet_test {

class MemSource : public tet::ChunkSource {
 public:
  MemSource(tet::DType dt, const std::vector<uint64_t>& shape, const std::vector<uint64_t>& chunk,
            const std::vector<uint8_t>& dense, bool copy_to_scratch = false)
      : copy_(copy_to_scratch) {
    tet::DatasetInfo d;
    d.name = "data";
    d.dtype = dt;
    d.ndim = uint32_t(shape.size());
    d.element_count = 1;
    d.chunk_count = 1;
    for (uint32_t a = 0; a < 8; ++a) {
      d.shape[a] = a < d.ndim ? shape[a] : 1;
      d.chunk_shape[a] = a < d.ndim ? chunk[a] : 1;
      d.grid[a] = (d.shape[a] + d.chunk_shape[a] - 1) / d.chunk_shape[a];
      d.element_count *= d.shape[a];
      d.chunk_count *= d.grid[a];
    }
    const size_t es = tet::dtype_size(dt);
    d.logical_bytes = d.element_count * es;
    tiles_.resize(d.chunk_count);
    uint64_t offset = 4096;
    for (uint64_t lc = d.chunk_count; lc-- > 0;) {
      const auto coords = tet::chunk_coords_of(d, lc);
      const auto ts = tet::tile_shape(d, coords);
      uint64_t n = 1;
      for (uint32_t a = 0; a < d.ndim; ++a) n *= ts[a];
      std::vector<uint8_t>& t = tiles_[lc];
      t.resize(n * es);
      std::vector<uint64_t> idx(d.ndim, 0);
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t src = 0;
        for (uint32_t a = 0; a < d.ndim; ++a) src = src * d.shape[a] + coords[a] * d.chunk_shape[a] + idx[a];
        std::memcpy(&t[k * es], &dense[src * es], es);
        for (int a = int(d.ndim) - 1; a >= 0; --a) {
          if (++idx[a] < ts[a]) break;
          idx[a] = 0;
        }
      }
      tet::ChunkEntry e;
      e.coords = coords;
      e.payload_offset = offset;
      e.raw_byte_len = e.stored_byte_len = t.size();
      offset += t.size();
      cat_.entries.push_back(e);
    }
    d.chunk_to_entry.resize(d.chunk_count);
    for (uint64_t i = 0; i < d.chunk_count; ++i) d.chunk_to_entry[d.chunk_count - 1 - i] = uint32_t(i);
    cat_.file_len = offset;
    cat_.datasets.push_back(d);
  }
  const tet::Catalog& catalog() const override { return cat_; }
  tet::TileView tile(uint32_t ds, uint64_t lc, std::vector<uint8_t>& scratch) const override {
    if (ds != 0 || lc >= tiles_.size()) tet::fail("TET_INTERNAL", "bad tile request");
    ++fetches;
    if (copy_) {
      scratch = tiles_[lc];
      return {scratch.data(), scratch.size()};
    }
    return {tiles_[lc].data(), tiles_[lc].size()};
  }
  mutable std::atomic<uint64_t> fetches{0};

 private:
  bool copy_;
  tet::Catalog cat_;
  std::vector<std::vector<uint8_t>> tiles_;
};

}  // namespace tet_test
