// A .tet v1 file opened read-only. open() maps the file, parses and validates every
// structure (bounds-checked, overflow-safe) and builds the chunk lookup once.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tet/chunk_source.h"
#include "tet/error.h"

namespace tet {

namespace cells {
class TablesRegion;
}

struct OpenOptions {
  bool verify_footer = true;  // a corrupt footer is an error (tet repair opens with false)
};

class File : public ChunkSource {
 public:
  static std::shared_ptr<File> open(const std::string& path, const OpenOptions& opts = {});
  // open(), but only when what it parses is small (superblock, dataset directory and chunk index
  // within kResidentOpenMax bytes, a footer within as many) and every page of it is in memory:
  // then opening is microseconds of work that never waits for the disk, fit for a caller's own
  // thread (the SDK's open() on the JS thread). Null otherwise (nothing is left open), and the
  // caller opens with open() elsewhere. Throws as open() does for a file it did parse.
  static std::shared_ptr<File> open_if_resident(const std::string& path, const OpenOptions& opts = {});
  static constexpr uint64_t kResidentOpenMax = uint64_t(1) << 20;
  // Parse an in-memory image (used by fuzzers and tests). The buffer must outlive the File.
  static std::shared_ptr<File> from_memory(const uint8_t* data, uint64_t len, const OpenOptions& opts = {});
  ~File() override;

  const Catalog& catalog() const override { return catalog_; }
  TileView tile(uint32_t dataset_id, uint64_t linear_chunk, ScratchBytes& scratch) const override;
  // Linear scans read the open file's descriptor (files opened from a path; an in-memory image
  // has no descriptor and says no, so its scans read tiles).
  bool stored_extent(uint32_t dataset_id, StoredExtent& out) const override;
  void read_range(uint64_t offset, uint64_t len, uint8_t* buf) const override;
  void advise(uint64_t offset, uint64_t len, ReadAdvice advice) const override;
  bool first_scan(uint32_t dataset_id) const override;

  // Throws TET_IO_FILE_CHANGED when the file's length or modification time differs from open,
  // or a page of the mapping vanished (truncation) during a read. Call before and after reads.
  void check_unchanged() const;
  // Maps stored bytes [offset, offset + len) into the page tables now (util populate_read), so a
  // later read through the mapping does not fault: what a scan read by pread would otherwise
  // leave to the next scan. Clipped to the file; best effort, never throws.
  void populate(uint64_t offset, uint64_t len) const noexcept;
  const std::string& path() const { return path_; }
  const uint8_t* base() const { return base_; }

  // The tables region (docs/format-tables.md), parsed on first call; null when the file has
  // none. Throws TET_CELLS_INVALID when the footer's reference or the region is malformed, the
  // region overlaps the tensors' bytes, or an axis table's binding disagrees with the catalog
  // (unknown dataset, axis past ndim, rows other than the axis length). Columns are validated
  // when first read (TablesRegion::column).
  const cells::TablesRegion* tables() const;

 private:
  File() = default;
  static std::shared_ptr<File> open_mapped(const std::string& path, const OpenOptions& opts, bool only_resident);
  std::string path_;
  int fd_ = -1;
  const uint8_t* base_ = nullptr;
  uint64_t len_ = 0;
  int64_t mtime_ns_ = 0;  // modification time at open; check_unchanged compares it
  bool owns_mapping_ = false;
  Catalog catalog_;
  mutable std::mutex tables_mu_;
  mutable std::unique_ptr<cells::TablesRegion> tables_;
  mutable bool tables_parsed_ = false;
  mutable std::mutex scan_mu_;
  mutable std::vector<uint8_t> scanned_;  // by dataset: scanned once already
};

// Parse and validate a whole file image into a Catalog (throws tet::Error).
Catalog parse_catalog(const uint8_t* data, uint64_t len, const OpenOptions& opts);

// The superblock's fields (layout_v1.md "Superblock") as stored, unchecked beyond the length:
// false when `len` is shorter than the 32-byte superblock. parse_catalog validates them.
struct SuperblockFields {
  uint32_t dataset_count, flags;
  uint64_t index_offset, index_length;
};
bool read_superblock_fields(const uint8_t* data, uint64_t len, SuperblockFields* out) noexcept;

// Decode one stored payload into `out` (resized to entry.raw_byte_len).
void decode_payload(const ChunkEntry& entry, const uint8_t* stored, ScratchBytes& out,
                    const std::string& context);

// The err.detail of an error about one chunk: its dataset, grid coordinates and file.
ErrorDetail chunk_detail(const DatasetInfo& ds, const ChunkEntry& entry, const std::string& path = std::string());

// IEEE half -> float, exact for all 65536 bit patterns.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  // round to nearest even

}  // namespace tet
