// tet::File: read-only mapping + parsed catalog; tiles are served zero-copy (raw) or decoded
// into the caller's scratch (zstd).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "cells/region.h"
#include "format/footer.h"
#include "format/mapping_guard.h"
#include "tet/error.h"
#include "tet/file.h"
#include "util/checked.h"
#include "util/io.h"

namespace tet {

namespace {
int64_t mtime_ns(const struct stat& st) {
#ifdef __APPLE__
  return int64_t(st.st_mtimespec.tv_sec) * 1000000000 + st.st_mtimespec.tv_nsec;
#else
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
#endif
}

// Whether everything parse_catalog reads of the mapping [d, d + len) is small and in memory
// (File::open_if_resident): the superblock, dataset directory and chunk index (one span from
// offset 0) and the history footer's JSON and tail. A footer that refers to spilled metadata
// (elsewhere in the file) says no, as does anything malformed (the full open reports it).
bool catalog_resident(const uint8_t* d, uint64_t len) {
  constexpr uint64_t kSuperblock = 32;
  SuperblockFields sb;
  if (len < kSuperblock || !pages_resident(d, kSuperblock) || !read_superblock_fields(d, len, &sb)) return false;
  if (sb.index_offset > len || sb.index_length > len - sb.index_offset) return false;
  const uint64_t head = sb.index_offset + sb.index_length;
  if (head > File::kResidentOpenMax || !pages_resident(d, std::max(head, kSuperblock))) return false;
  if (!(sb.flags & 1)) return true;
  if (len < kSuperblock + kFooterTailLen || !pages_resident(d + len - kFooterTailLen, kFooterTailLen)) return false;
  const uint64_t start = locate_footer_start(d, len);
  if (start >= len || len - start > File::kResidentOpenMax || !pages_resident(d + start, len - start)) return false;
  static constexpr char kSpill[] = "\"metadata_ref\"";
  const uint8_t* json = d + start;
  const uint64_t json_len = len - start - kFooterTailLen;
  return std::search(json, json + json_len, kSpill, kSpill + sizeof kSpill - 1) == json + json_len;
}
}  // namespace

std::shared_ptr<File> File::open(const std::string& path, const OpenOptions& opts) {
  return open_mapped(path, opts, false);
}

std::shared_ptr<File> File::open_if_resident(const std::string& path, const OpenOptions& opts) {
  return open_mapped(path, opts, true);
}

std::shared_ptr<File> File::open_mapped(const std::string& path, const OpenOptions& opts, bool only_resident) {
  Mapping m = map_file_readonly(path);
  std::shared_ptr<File> f(new File());
  f->path_ = path;
  f->fd_ = m.fd;
  f->base_ = m.data;
  f->len_ = m.len;
  f->owns_mapping_ = true;  // from here the destructor releases the mapping, also on throw
  guard_mapping(m.data, m.len);  // truncation by another process: an error, not a SIGBUS
  if (only_resident && !catalog_resident(m.data, m.len)) return nullptr;  // f unmaps and closes it
  struct stat st;
  if (::fstat(m.fd, &st) == 0) f->mtime_ns_ = mtime_ns(st);
  f->catalog_ = parse_catalog(m.data, m.len, opts);
  f->check_unchanged();  // the file may have shrunk while we parsed it
  return f;
}

std::shared_ptr<File> File::from_memory(const uint8_t* data, uint64_t len, const OpenOptions& opts) {
  std::shared_ptr<File> f(new File());
  f->base_ = data;
  f->len_ = len;
  f->catalog_ = parse_catalog(data, len, opts);
  return f;
}

File::~File() {
  if (owns_mapping_) {
    unguard_mapping(base_);
    Mapping m;
    m.fd = fd_;
    m.data = base_;
    m.len = len_;
    unmap_file(m);
  }
}

void File::populate(uint64_t offset, uint64_t len) const noexcept {
  if (!owns_mapping_ || offset >= len_) return;
  populate_read(base_ + offset, std::min(len, len_ - offset));
}

const cells::TablesRegion* File::tables() const {
  std::lock_guard<std::mutex> lock(tables_mu_);
  if (tables_parsed_) return tables_.get();
  const Footer& f = catalog_.footer;
  if (!f.present || !f.cells_present) {
    tables_parsed_ = true;
    return nullptr;
  }
  if (!f.cells_error.empty()) cells::throw_invalid(f.cells_error);
  // After every tensor byte: the chunk index and each chunk payload end at or before it.
  uint64_t tensors_end = catalog_.chunk_index_offset + catalog_.chunk_index_length;
  for (const ChunkEntry& e : catalog_.entries) tensors_end = std::max(tensors_end, e.payload_offset + e.stored_byte_len);
  if (f.cells_offset < tensors_end)
    cells::throw_invalid("the region at " + std::to_string(f.cells_offset) + " overlaps tensor bytes (which end at " +
                         std::to_string(tensors_end) + ")");
  auto region = std::make_unique<cells::TablesRegion>(base_ + f.cells_offset, f.cells_len);
  for (const cells::TableInfo& t : region->tables()) {
    if (t.axis == cells::kNoAxis) continue;
    const int ds = catalog_.find_dataset(t.dataset);
    if (ds < 0) cells::throw_invalid("axis table '" + t.name + "' is bound to unknown dataset '" + t.dataset + "'");
    const DatasetInfo& d = catalog_.datasets[static_cast<size_t>(ds)];
    if (t.axis >= d.ndim)
      cells::throw_invalid("axis table '" + t.name + "' is bound to axis " + std::to_string(t.axis) + " of '" +
                           t.dataset + "', which has " + std::to_string(d.ndim) + " axes");
    if (t.rows != d.shape[t.axis])
      cells::throw_invalid("axis table '" + t.name + "' has " + std::to_string(t.rows) + " rows, axis " +
                           std::to_string(t.axis) + " of '" + t.dataset + "' has length " + std::to_string(d.shape[t.axis]));
  }
  tables_ = std::move(region);
  tables_parsed_ = true;
  return tables_.get();
}

TileView File::tile(uint32_t dataset_id, uint64_t linear_chunk, ScratchBytes& scratch) const {
  if (dataset_id >= catalog_.datasets.size())
    fail("TET_INTERNAL", "tile(): dataset_id " + std::to_string(dataset_id) + " >= dataset_count " +
                             std::to_string(catalog_.datasets.size()));
  const DatasetInfo& ds = catalog_.datasets[dataset_id];
  if (linear_chunk >= ds.chunk_to_entry.size())
    fail("TET_INTERNAL", "tile(): chunk " + std::to_string(linear_chunk) + " outside the " +
                             std::to_string(ds.chunk_to_entry.size()) + " chunks of '" + ds.name + "'");
  uint32_t index = ds.chunk_to_entry[static_cast<size_t>(linear_chunk)];
  const ChunkEntry& e = catalog_.entries[index];
  const uint8_t* stored = base_ + e.payload_offset;  // bounds checked by parse_catalog
  if (e.codec == Codec::Raw) return TileView{stored, e.raw_byte_len};
  try {
    decode_payload(e, stored, scratch, std::string());
  } catch (const Error& err) {
    // The context string is only built on failure: decoding is the hot path.
    std::string context = "dataset '" + ds.name + "' entry " + std::to_string(index) + " chunk_index (";
    for (uint32_t a = 0; a < ds.ndim; ++a) context += (a ? ", " : "") + std::to_string(e.coords[a]);
    fail(err.code().c_str(), context + ")" + err.what(), chunk_detail(ds, e, path_));
  }
  return TileView{scratch.data(), e.raw_byte_len};
}

bool File::stored_extent(uint32_t dataset_id, StoredExtent& out) const {
  return fd_ >= 0 && raw_sequential_extent(catalog_, dataset_id, out);
}

void File::read_range(uint64_t offset, uint64_t len, uint8_t* buf) const {
  if (fd_ < 0 || offset > len_ || len > len_ - offset)
    fail("TET_IO_READ", "read of " + std::to_string(len) + " bytes at offset " + std::to_string(offset) + " of '" + path_ +
                            "' is outside its " + std::to_string(len_) + " bytes");
  const int rc = pread_full(fd_, buf, size_t(len), offset);
  if (rc != 0) check_unchanged();  // a file cut or rewritten under the reader: TET_IO_FILE_CHANGED, as a mapped read says
  if (rc != 0)
    fail("TET_IO_READ", "read of '" + path_ + "' at offset " + std::to_string(offset) + " failed: " +
                            (rc < 0 ? std::string("unexpected end of file") : errno_text(rc)));
}

bool File::first_scan(uint32_t dataset_id) const {
  if (fd_ < 0) return false;
  std::lock_guard<std::mutex> lock(scan_mu_);
  if (scanned_.size() != catalog_.datasets.size()) scanned_.assign(catalog_.datasets.size(), 0);
  if (dataset_id >= scanned_.size() || scanned_[dataset_id]) return false;
  scanned_[dataset_id] = 1;
  return true;
}

void File::advise(uint64_t offset, uint64_t len, ReadAdvice advice) const {
  if (fd_ < 0) return;
  advise_file(fd_, offset, len, advice == ReadAdvice::Sequential ? FileAdvice::Sequential
                                : advice == ReadAdvice::WillNeed ? FileAdvice::WillNeed : FileAdvice::Normal);
}

void File::check_unchanged() const {
  if (fd_ < 0) return;  // in-memory images cannot change under us
  if (mapping_faulted(base_))
    fail("TET_IO_FILE_CHANGED", "'" + path_ + "' was truncated while open: pages of its " + std::to_string(len_) +
                                    "-byte mapping vanished during a read; reopen the file");
  struct stat st;
  if (::fstat(fd_, &st) != 0)
    fail("TET_IO_FILE_CHANGED", "cannot stat '" + path_ + "' to check it is unchanged: " + errno_text(errno));
  if (static_cast<uint64_t>(st.st_size) != len_)
    fail("TET_IO_FILE_CHANGED", "'" + path_ + "' changed while open: length was " + std::to_string(len_) +
                                    " bytes, now " + std::to_string(static_cast<uint64_t>(st.st_size)));
  if (mtime_ns(st) != mtime_ns_)
    fail("TET_IO_FILE_CHANGED", "'" + path_ + "' was modified while open (same length " + std::to_string(len_) +
                                    " bytes, new modification time); reopen the file");
}

}  // namespace tet
