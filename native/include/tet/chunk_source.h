// The seam between storage and execution: exec/ reads decoded tiles through this interface, so
// folds can be tested (and fuzzed) against in-memory sources. A source that can also read its
// stored bytes by offset supports linear scans (IoMode::LinearScan): exec/ asks stored_extent
// for the dataset's layout and reads it in windows with read_range; every other source says no
// (the defaults) and the scan reads tiles instead.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "tet/catalog.h"
#include "tet/error.h"
#include "tet/scratch.h"

namespace tet {

struct TileView {
  const uint8_t* data = nullptr;  // decoded, little-endian, dtype-native, clipped tile, row-major
  uint64_t bytes = 0;             // == product(tile_shape) * dtype_size
};

// Stored bytes [offset, offset + bytes) of a source's byte space (ChunkEntry::payload_offset's).
struct StoredExtent {
  uint64_t offset = 0, bytes = 0;
};

enum class ReadAdvice { Normal, Sequential, WillNeed };

class ChunkSource {
 public:
  ChunkSource() = default;
  ChunkSource(const ChunkSource&) : source_id_(next_source_id()) {}
  ChunkSource& operator=(const ChunkSource&) { return *this; }
  virtual ~ChunkSource() = default;
  // Process-unique id of this source object, never reused (a copy gets its own): keys what
  // outlives a query, such as the device tile cache (exec/device_fold_impl.h), where an address
  // could be reused by a later source.
  uint64_t source_id() const { return source_id_; }
  virtual const Catalog& catalog() const = 0;
  // Decoded bytes of one tile, by row-major linear chunk index. May point into a mapping
  // (raw tiles) or into `scratch` (decoded/copied). Thread-safe; throws tet::Error.
  virtual TileView tile(uint32_t dataset_id, uint64_t linear_chunk, ScratchBytes& scratch) const = 0;

  // Linear scans. True, with the extent, when this source can read ranges of its stored bytes
  // and the dataset's tiles are stored raw and back to back in row-major chunk order (then tile
  // t's decoded bytes are read_range(payload_offset of t, its bytes)); false otherwise.
  virtual bool stored_extent(uint32_t dataset_id, StoredExtent& out) const {
    (void)dataset_id, (void)out;
    return false;
  }
  // Reads len stored bytes at `offset` into buf. Only valid inside an extent stored_extent
  // returned. Thread-safe; throws tet::Error (TET_IO_READ).
  virtual void read_range(uint64_t offset, uint64_t len, uint8_t* buf) const {
    (void)offset, (void)len, (void)buf;
    fail("TET_INTERNAL", "this chunk source cannot read byte ranges");
  }
  // An access hint for the stored bytes [offset, offset + len) (len 0: to the end): Sequential
  // for the duration of a scan, WillNeed for the next window, Normal when the scan ends.
  virtual void advise(uint64_t offset, uint64_t len, ReadAdvice advice) const { (void)offset, (void)len, (void)advice; }
  // True for the first scan of the dataset through this source, false after (and for sources
  // with no byte ranges to read): a file's first scan finds its pages unmapped in this process,
  // where reading them by pread may beat faulting them in (exec/fold_driver_impl.h).
  virtual bool first_scan(uint32_t dataset_id) const {
    (void)dataset_id;
    return false;
  }

 private:
  static uint64_t next_source_id() {
    static std::atomic<uint64_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  uint64_t source_id_ = next_source_id();
};

// The layout rule of stored_extent for sources whose catalog describes their byte space: every
// chunk of the dataset raw (stored bytes == decoded bytes == its clipped tile's bytes) and
// payloads back to back in row-major chunk order.
inline bool raw_sequential_extent(const Catalog& cat, uint32_t dataset_id, StoredExtent& out) {
  if (dataset_id >= cat.datasets.size()) return false;
  const DatasetInfo& d = cat.datasets[dataset_id];
  const uint64_t esize = dtype_size(d.dtype);
  uint64_t begin = 0, end = 0;
  for (uint64_t t = 0; t < d.chunk_count; ++t) {
    if (t >= d.chunk_to_entry.size() || d.chunk_to_entry[t] >= cat.entries.size()) return false;
    const ChunkEntry& e = cat.entries[d.chunk_to_entry[t]];
    const std::array<uint64_t, 8> ts = tile_shape(d, chunk_coords_of(d, t));
    uint64_t elems = 1;
    for (uint32_t a = 0; a < d.ndim; ++a) elems *= ts[a];
    if (e.codec != Codec::Raw || e.stored_byte_len != e.raw_byte_len || e.raw_byte_len != elems * esize) return false;
    if (t == 0) begin = e.payload_offset;
    else if (e.payload_offset != end) return false;
    end = e.payload_offset + e.stored_byte_len;
  }
  out.offset = begin, out.bytes = end - begin;
  return true;
}

}  // namespace tet
