// Streaming .tet v1 writer: datasets are declared up front (so the index size is known),
// tiles arrive in any order and go straight to a temp file beside the target; commit()
// fills in superblock + directory + index (+ footer), fsyncs and renames. Memory stays
// O(index), not O(data). Tiles given in grid order reproduce the reference writer's bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cells/region.h"
#include "tet/catalog.h"

namespace tet {

struct ColumnBatch;

enum class CodecChoice : uint32_t { Raw = 0, Zstd = 1, Auto = 2 };

struct DatasetSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<uint64_t> shape, chunk_shape;
  CodecChoice codec = CodecChoice::Raw;
  int zstd_level = 3;
};

class Writer {
 public:
  static std::unique_ptr<Writer> create(const std::string& path);
  ~Writer();  // aborts when not committed
  void set_execution(const FileExecution& e);
  uint32_t add_dataset(const DatasetSpec& spec);  // returns dataset id
  // `data` holds the clipped tile at `coords`, dtype-native little-endian, row-major.
  void write_chunk(uint32_t dataset_id, const std::vector<uint64_t>& coords, const uint8_t* data, uint64_t len);
  // `data` holds the row-major block covering the tiles [tile_origin, tile_origin + tile_count)
  // (clipped at the array's edges). Its tiles are extracted and compressed in parallel on the
  // process pool and appended in grid order: the same bytes as write_chunk calls in that order.
  void write_slab(uint32_t dataset_id, const std::vector<uint64_t>& tile_origin,
                  const std::vector<uint64_t>& tile_count, const uint8_t* data, uint64_t len);
  // Footer JSON object text ({"history":[...],"metadata":{...}}); empty = no footer.
  // Metadata over 64 KiB is spilled (metadata_ref) by the writer.
  void set_footer(const std::string& history_array_json, const std::string& metadata_object_json);
  // Tables (docs/format-tables.md), before or after the tiles. `axis` cells::kNoAxis = a
  // standalone table, else the bound axis of `dataset`, whose length must equal the table's rows
  // at commit. Returns the table id for append_table (write/table_set.h for the batch forms).
  uint32_t add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                     const std::vector<cells::ColumnSchema>& columns);
  void append_table(uint32_t table_id, const std::vector<ColumnBatch>& columns);
  void commit();
  void abort();

 private:
  Writer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tet
