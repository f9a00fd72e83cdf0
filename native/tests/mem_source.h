// Test-only in-memory ChunkSource: cuts a dense row-major array into clipped tiles so exec/ can
// be tested without the file reader. The tiles sit in one byte image at their payload offsets:
// by default in reverse chunk order (sequential, payload-order visits differ from chunk order,
// and a linear scan falls back to tile reads), with `forward` back to back in chunk order, so a
// linear scan reads the image through read_range (counted in range_reads / range_bytes).
#pragma once
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "tet/chunk_source.h"
#include "tet/error.h"

namespace tet_test {

class MemSource : public tet::ChunkSource {
 public:
  MemSource(tet::DType dt, const std::vector<uint64_t>& shape, const std::vector<uint64_t>& chunk,
            const std::vector<uint8_t>& dense, bool copy_to_scratch = false, bool forward = false)
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
    std::vector<std::vector<uint8_t>> tiles(d.chunk_count);
    std::vector<uint64_t> order(d.chunk_count);
    for (uint64_t i = 0; i < d.chunk_count; ++i) order[i] = forward ? i : d.chunk_count - 1 - i;
    uint64_t offset = 4096;
    for (uint64_t lc : order) {
      const auto coords = tet::chunk_coords_of(d, lc);
      const auto ts = tet::tile_shape(d, coords);
      uint64_t n = 1;
      for (uint32_t a = 0; a < d.ndim; ++a) n *= ts[a];
      std::vector<uint8_t>& t = tiles[lc];
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
    for (uint64_t i = 0; i < d.chunk_count; ++i) d.chunk_to_entry[order[i]] = uint32_t(i);
    cat_.file_len = offset;
    image_.assign(offset, 0);
    tile_at_.resize(d.chunk_count);
    for (uint64_t lc = 0; lc < d.chunk_count; ++lc) {
      const tet::ChunkEntry& e = cat_.entries[d.chunk_to_entry[lc]];
      if (!tiles[lc].empty()) std::memcpy(&image_[e.payload_offset], tiles[lc].data(), tiles[lc].size());
      tile_at_[lc] = {e.payload_offset, tiles[lc].size()};
    }
    cat_.datasets.push_back(d);
  }
  const tet::Catalog& catalog() const override { return cat_; }
  tet::TileView tile(uint32_t ds, uint64_t lc, tet::ScratchBytes& scratch) const override {
    if (ds != 0 || lc >= tile_at_.size()) tet::fail("TET_INTERNAL", "bad tile request");
    ++fetches;
    const uint8_t* p = image_.data() + tile_at_[lc].first;
    const uint64_t n = tile_at_[lc].second;
    if (copy_) {
      scratch.assign(p, p + n);
      return {scratch.data(), scratch.size()};
    }
    return {p, n};
  }
  bool stored_extent(uint32_t ds, tet::StoredExtent& out) const override {
    return ds == 0 && tet::raw_sequential_extent(cat_, ds, out);
  }
  void read_range(uint64_t offset, uint64_t len, uint8_t* buf) const override {
    if (offset > image_.size() || len > image_.size() - offset) tet::fail("TET_IO_READ", "read_range outside the image");
    if (len) std::memcpy(buf, image_.data() + offset, len);
    ++range_reads;
    range_bytes += len;
  }
  void advise(uint64_t, uint64_t, tet::ReadAdvice a) const override {
    if (a == tet::ReadAdvice::Sequential) ++sequential_hints;
  }
  mutable std::atomic<uint64_t> fetches{0}, range_reads{0}, range_bytes{0}, sequential_hints{0};

 private:
  bool copy_;
  tet::Catalog cat_;
  std::vector<uint8_t> image_;
  std::vector<std::pair<uint64_t, uint64_t>> tile_at_;  // per linear chunk: offset, bytes
};

}  // namespace tet_test
