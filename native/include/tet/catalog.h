// Parsed, validated view of a .tet v1 file's metadata (layout_v1.md): datasets, chunk index,
// execution settings and footer. Produced by tet::File::open; immutable afterwards.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tet/dtype.h"

namespace tet {

enum class Codec : uint32_t { Raw = 0, Zstd = 1 };

struct ChunkEntry {                  // one 104-byte TIDX row
  uint64_t dataset_id = 0;
  std::array<uint64_t, 8> coords{};  // chunk grid coordinates
  uint64_t payload_offset = 0;
  uint64_t raw_byte_len = 0;
  uint64_t stored_byte_len = 0;
  Codec codec = Codec::Raw;
};

struct DatasetInfo {
  std::string name;  // valid UTF-8
  DType dtype = DType::F32;
  uint32_t ndim = 0;
  std::array<uint64_t, 8> shape{};        // unused axes = 1
  std::array<uint64_t, 8> chunk_shape{};  // unused axes = 1
  std::array<uint64_t, 8> grid{};         // ceil(shape / chunk_shape); unused axes = 1
  uint64_t chunk_count = 0;               // product of grid
  uint64_t element_count = 0;             // product of shape (checked for overflow)
  uint64_t logical_bytes = 0;             // element_count * dtype_size (checked)
  uint64_t stored_bytes = 0;              // sum of stored_byte_len
  uint64_t raw_chunks = 0, zstd_chunks = 0;
  // Index into Catalog::entries for each chunk, by row-major linear chunk index over `grid`.
  std::vector<uint32_t> chunk_to_entry;
};

struct FileExecution {  // TIDX header execution settings
  uint16_t memory_budget_percent_bps = 0;
  uint32_t memory_budget_bytes = 0;
};

struct Footer {
  bool present = false;                // superblock flags bit 1 and a valid THST tail
  uint64_t history_json_offset = 0, history_json_len = 0;
  std::string history_json;            // validated UTF-8 JSON text (object)
  std::string metadata_json;           // resolved metadata object text ("" when absent),
                                       // inline or read from metadata_ref spill
  bool metadata_spilled = false;
  uint64_t payload_limit = 0;          // payloads must end at or before this offset
  // The tables region reference ("cells": {"offset", "len", "version", "xxh64"}), an extension a
  // v1 reader ignores. A malformed reference does not fail the open: tensors stay readable and
  // cells_error says what is wrong (tables access, verify and repair report it).
  bool cells_present = false;
  uint64_t cells_offset = 0, cells_len = 0, cells_version = 0, cells_xxh64 = 0;
  std::string cells_error;
};

struct Catalog {
  uint64_t file_len = 0;
  uint32_t flags = 0;
  uint64_t chunk_index_offset = 0, chunk_index_length = 0;
  FileExecution execution;
  std::vector<DatasetInfo> datasets;
  std::vector<ChunkEntry> entries;  // in file order
  Footer footer;

  // Returns -1 when absent.
  int find_dataset(const std::string& name) const {
    for (size_t i = 0; i < datasets.size(); ++i)
      if (datasets[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

// Shape of the (clipped) tile at a given chunk coordinate.
inline std::array<uint64_t, 8> tile_shape(const DatasetInfo& d, const std::array<uint64_t, 8>& chunk) {
  std::array<uint64_t, 8> t{};
  for (uint32_t a = 0; a < 8; ++a) {
    if (a >= d.ndim) { t[a] = 1; continue; }
    uint64_t start = chunk[a] * d.chunk_shape[a];
    uint64_t rem = d.shape[a] - start;
    t[a] = rem < d.chunk_shape[a] ? rem : d.chunk_shape[a];
  }
  return t;
}

// Row-major linear chunk index <-> grid coordinates.
inline std::array<uint64_t, 8> chunk_coords_of(const DatasetInfo& d, uint64_t linear) {
  std::array<uint64_t, 8> c{};
  for (int a = static_cast<int>(d.ndim) - 1; a >= 0; --a) {
    c[a] = linear % d.grid[a];
    linear /= d.grid[a];
  }
  return c;
}

}  // namespace tet
