// parse_catalog: superblock -> footer (payload limit) -> dataset directory -> chunk index ->
// per-dataset chunk lookup. Check order follows the conformance oracle so each malformed file
// reports the defect it was built with. Every size from the file is overflow-checked before use.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "format/footer.h"
#include "tet/error.h"
#include "tet/file.h"
#include "util/checked.h"
#include "util/utf8.h"

namespace tet {
namespace {

constexpr uint64_t kSuperblockLen = 32;
constexpr uint64_t kIndexHeaderLen = 32;
constexpr uint64_t kEntryLen = 104;

std::string u64s(uint64_t v) { return std::to_string(v); }

std::string coords_text(const std::array<uint64_t, 8>& c, uint32_t ndim) {
  std::string s = "(";
  for (uint32_t a = 0; a < ndim; ++a) s += (a ? ", " : "") + u64s(c[a]);
  return s + ")";
}

std::string hex_bytes(const uint8_t* p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) s += char(p[i]);
    else { std::snprintf(b, sizeof b, "%02x", p[i]); s += "\\x"; s += b; }
  }
  return "'" + s + "'";
}

SuperblockFields parse_superblock(const uint8_t* d, uint64_t len) {
  SuperblockFields sb;
  if (!read_superblock_fields(d, len, &sb))
    fail("TET_FORMAT_TRUNCATED", "file is " + u64s(len) + " bytes; the superblock needs 32");
  if (std::memcmp(d, "TETR", 4) != 0)
    fail("TET_FORMAT_BAD_MAGIC", "bad magic " + hex_bytes(d, 4) + " (want 'TETR')");
  uint32_t version = load_u32le(d + 4);
  if (version != 1)
    fail("TET_FORMAT_BAD_VERSION", "layout_version " + u64s(version) + " unsupported (only 1 is defined)");
  if (sb.flags & ~uint32_t(1)) {
    char f[16];
    std::snprintf(f, sizeof f, "0x%08x", sb.flags);
    fail("TET_FORMAT_BAD_FLAGS", std::string("unknown superblock flag bits ") + f + " (only bit 0x1, history footer, is defined)");
  }
  uint64_t end;
  if (add_overflows(sb.index_offset, sb.index_length, &end))
    fail("TET_FORMAT_INDEX_OFFSET", "chunk_index_offset " + u64s(sb.index_offset) + " + chunk_index_length " +
                                        u64s(sb.index_length) + " overflows u64");
  if (end > len)
    fail("TET_FORMAT_TRUNCATED", "chunk index [" + u64s(sb.index_offset) + ", " + u64s(end) +
                                     ") extends past end of file (" + u64s(len) + " bytes)");
  return sb;
}

// One dataset record at `pos` (inside [40, blob_end)); advances pos.
DatasetInfo parse_record(const uint8_t* d, uint64_t& pos, uint64_t blob_end, uint32_t id, uint32_t count) {
  const uint64_t rec_start = pos;
  const std::string rec = "dataset record " + u64s(id);
  if (blob_end - pos < 16)
    fail("TET_FORMAT_DIRECTORY", rec + ": header at " + u64s(pos) + " runs past dataset blob end " + u64s(blob_end) +
                                     " (dataset_count=" + u64s(count) + ")");
  uint32_t name_len = load_u32le(d + pos), tag = load_u32le(d + pos + 4);
  uint32_t ndim = load_u32le(d + pos + 8), reserved = load_u32le(d + pos + 12);
  pos += 16;
  if (!dtype_tag_valid(tag)) fail("TET_FORMAT_BAD_DTYPE", rec + ": unknown dtype tag " + u64s(tag) + " (valid tags are 1..10)");
  if (ndim < 1 || ndim > kMaxNdim) fail("TET_FORMAT_BAD_NDIM", rec + ": ndim " + u64s(ndim) + " outside 1..8");
  if (reserved != 0) fail("TET_FORMAT_RESERVED", rec + ": reserved field is " + u64s(reserved) + ", want 0");
  if (blob_end - pos < name_len)
    fail("TET_FORMAT_DIRECTORY", rec + ": name_len " + u64s(name_len) + " runs past dataset blob end " + u64s(blob_end));
  size_t bad = 0;
  if (!utf8_valid(d + pos, name_len, &bad))
    fail("TET_FORMAT_BAD_NAME", rec + ": name is not UTF-8 (invalid byte 0x" +
                                    [&] { char b[4]; std::snprintf(b, sizeof b, "%02x", d[pos + bad]); return std::string(b); }() +
                                    " at name offset " + u64s(bad) + ")");
  if (name_len == 0) fail("TET_FORMAT_BAD_NAME", rec + ": name is empty");
  DatasetInfo ds;
  ds.name.assign(reinterpret_cast<const char*>(d + pos), name_len);
  pos += name_len;
  uint64_t pad_to = rec_start + align8(pos - rec_start);
  if (pad_to > blob_end) fail("TET_FORMAT_DIRECTORY", rec + ": name padding runs past dataset blob end " + u64s(blob_end));
  for (uint64_t p = pos; p < pad_to; ++p)
    if (d[p]) fail("TET_FORMAT_RESERVED", rec + ": non-zero name padding byte at " + u64s(p));
  pos = pad_to;
  if (blob_end - pos < 16ull * ndim)
    fail("TET_FORMAT_DIRECTORY", rec + ": shape/chunk_shape (" + u64s(16ull * ndim) + " bytes at " + u64s(pos) +
                                     ") run past dataset blob end " + u64s(blob_end));
  ds.dtype = static_cast<DType>(tag);
  ds.ndim = ndim;
  ds.shape.fill(1);
  ds.chunk_shape.fill(1);
  ds.grid.fill(1);
  for (uint32_t a = 0; a < ndim; ++a) {
    ds.shape[a] = load_u64le(d + pos + 8ull * a);
    ds.chunk_shape[a] = load_u64le(d + pos + 8ull * (ndim + a));
  }
  pos += 16ull * ndim;
  const std::string dsn = "dataset '" + ds.name + "'";
  uint64_t elements = 1, chunks = 1;
  for (uint32_t a = 0; a < ndim; ++a) {
    if (ds.chunk_shape[a] == 0) fail("TET_FORMAT_CHUNK_SHAPE", dsn + ": chunk_shape[" + u64s(a) + "] is 0");
    if (ds.shape[a] == 0)
      fail("TET_FORMAT_BAD_SHAPE", dsn + ": shape[" + u64s(a) + "] is 0 (empty datasets are unsupported)");
    if (mul_overflows(elements, ds.shape[a], &elements))
      fail("TET_FORMAT_BAD_SHAPE", dsn + ": element count of the shape overflows u64");
    ds.grid[a] = ds.shape[a] / ds.chunk_shape[a] + (ds.shape[a] % ds.chunk_shape[a] != 0);
    chunks *= ds.grid[a];  // grid <= shape elementwise, so this cannot overflow once elements did not
  }
  ds.element_count = elements;
  ds.chunk_count = chunks;
  if (mul_overflows(elements, dtype_size(ds.dtype), &ds.logical_bytes))
    fail("TET_FORMAT_BAD_SHAPE", dsn + ": byte size of the shape (" + u64s(elements) + " elements x " +
                                     u64s(dtype_size(ds.dtype)) + " B) overflows u64");
  return ds;
}

ChunkEntry load_entry(const uint8_t* p, uint32_t* codec, uint32_t* reserved) {
  ChunkEntry e;
  e.dataset_id = load_u64le(p);
  for (int k = 0; k < 8; ++k) e.coords[k] = load_u64le(p + 8 + 8 * k);
  e.payload_offset = load_u64le(p + 72);
  e.raw_byte_len = load_u64le(p + 80);
  e.stored_byte_len = load_u64le(p + 88);
  *codec = load_u32le(p + 96);
  *reserved = load_u32le(p + 100);
  return e;
}

std::string tile_text(const std::array<uint64_t, 8>& t, uint32_t ndim) { return coords_text(t, ndim); }

// Validates each row against the directory and the payload limit; counts rows per dataset.
void parse_entries(const uint8_t* d, uint64_t len, const SuperblockFields& sb, uint64_t entry_count, uint64_t limit,
                   Catalog& cat, std::vector<uint64_t>& per_dataset) {
  cat.entries.reserve(static_cast<size_t>(entry_count));
  per_dataset.assign(cat.datasets.size(), 0);
  const uint8_t* rows = d + sb.index_offset + kIndexHeaderLen;
  for (uint64_t i = 0; i < entry_count; ++i) {
    uint32_t codec, reserved;
    ChunkEntry e = load_entry(rows + i * kEntryLen, &codec, &reserved);
    const std::string en = "entry " + u64s(i);
    if (codec > 1) fail("TET_INDEX_BAD_CODEC", en + ": unsupported codec " + u64s(codec) + " (0 = raw, 1 = zstd)");
    e.codec = static_cast<Codec>(codec);
    if (reserved) fail("TET_INDEX_RESERVED", en + ": reserved field is " + u64s(reserved) + ", want 0");
    if (e.codec == Codec::Raw && e.stored_byte_len != e.raw_byte_len)
      fail("TET_PAYLOAD_LENGTH", en + ": raw codec but stored_byte_len " + u64s(e.stored_byte_len) +
                                     " != raw_byte_len " + u64s(e.raw_byte_len));
    uint64_t end;
    if (add_overflows(e.payload_offset, e.stored_byte_len, &end))
      fail("TET_PAYLOAD_OUT_OF_BOUNDS", en + ": payload_offset " + u64s(e.payload_offset) + " + stored_byte_len " +
                                            u64s(e.stored_byte_len) + " overflows u64");
    if (end > limit)
      fail("TET_PAYLOAD_OUT_OF_BOUNDS", en + ": payload [" + u64s(e.payload_offset) + ", " + u64s(end) +
                                            ") extends past payload limit " + u64s(limit) + " (file_len " + u64s(len) + ")");
    if (e.dataset_id >= cat.datasets.size())
      fail("TET_INDEX_DATASET_ID", en + ": dataset_id " + u64s(e.dataset_id) + " >= dataset_count " +
                                       u64s(cat.datasets.size()));
    DatasetInfo& ds = cat.datasets[static_cast<size_t>(e.dataset_id)];
    for (uint32_t a = ds.ndim; a < 8; ++a)
      if (e.coords[a]) fail("TET_INDEX_RESERVED", en + ": chunk_index[" + u64s(a) + "] is " + u64s(e.coords[a]) +
                                                      " beyond ndim " + u64s(ds.ndim) + " of '" + ds.name + "' (want 0)");
    for (uint32_t a = 0; a < ds.ndim; ++a)
      if (e.coords[a] >= ds.grid[a])
        fail("TET_INDEX_CHUNK_OUT_OF_GRID", en + ": chunk coords " + coords_text(e.coords, ds.ndim) + " outside grid " +
                                                coords_text(ds.grid, ds.ndim) + " of '" + ds.name + "'", chunk_detail(ds, e));
    auto ext = tile_shape(ds, e.coords);
    uint64_t want = dtype_size(ds.dtype);
    for (uint32_t a = 0; a < ds.ndim; ++a) want *= ext[a];  // <= logical_bytes: no overflow
    if (e.raw_byte_len != want)
      fail("TET_PAYLOAD_LENGTH", en + ": raw_byte_len " + u64s(e.raw_byte_len) + " != clipped tile " +
                                     tile_text(ext, ds.ndim) + " x " + u64s(dtype_size(ds.dtype)) + " B = " + u64s(want),
           chunk_detail(ds, e));
    ds.stored_bytes += e.stored_byte_len;  // each <= file_len and rows <= file_len/104: no overflow
    (e.codec == Codec::Raw ? ds.raw_chunks : ds.zstd_chunks) += 1;
    per_dataset[static_cast<size_t>(e.dataset_id)] += 1;
    cat.entries.push_back(e);
  }
}

uint64_t linear_of(const DatasetInfo& ds, const std::array<uint64_t, 8>& c) {
  uint64_t lin = 0;
  for (uint32_t a = 0; a < ds.ndim; ++a) lin = lin * ds.grid[a] + c[a];
  return lin;
}

// Duplicates first (a grid with an extra row is reported as the duplicate it holds), then
// missing tiles; the lookup table is allocated only once its size equals the row count.
void build_lookup(Catalog& cat, const std::vector<uint64_t>& per_dataset) {
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> keyed(cat.datasets.size());
  for (size_t id = 0; id < cat.datasets.size(); ++id) keyed[id].reserve(static_cast<size_t>(per_dataset[id]));
  for (size_t i = 0; i < cat.entries.size(); ++i) {
    const ChunkEntry& e = cat.entries[i];
    const DatasetInfo& ds = cat.datasets[static_cast<size_t>(e.dataset_id)];
    keyed[static_cast<size_t>(e.dataset_id)].emplace_back(linear_of(ds, e.coords), static_cast<uint32_t>(i));
  }
  for (size_t id = 0; id < cat.datasets.size(); ++id) {
    DatasetInfo& ds = cat.datasets[id];
    auto& rows = keyed[id];
    std::sort(rows.begin(), rows.end());
    for (size_t k = 1; k < rows.size(); ++k)
      if (rows[k].first == rows[k - 1].first)
        fail("TET_INDEX_DUPLICATE_CHUNK", "entry " + u64s(rows[k].second) + ": duplicate chunk coords " +
                                              coords_text(cat.entries[rows[k].second].coords, ds.ndim) + " for '" +
                                              ds.name + "' (also entry " + u64s(rows[k - 1].second) + ")",
             chunk_detail(ds, cat.entries[rows[k].second]));
    if (rows.size() != ds.chunk_count) {
      uint64_t missing = rows.size();  // first linear index absent from the sorted, unique list
      for (size_t k = 0; k < rows.size(); ++k)
        if (rows[k].first != k) { missing = k; break; }
      const auto coords = chunk_coords_of(ds, missing);
      ErrorDetail where;
      where.dataset = ds.name;
      where.chunk.emplace(coords.begin(), coords.begin() + ds.ndim);
      fail("TET_INDEX_MISSING_CHUNK", "dataset '" + ds.name + "': " + u64s(rows.size()) +
                                          " chunk entries for a grid of " + u64s(ds.chunk_count) + " (missing e.g. " +
                                          coords_text(coords, ds.ndim) + ")",
           std::move(where));
    }
    ds.chunk_to_entry.resize(rows.size());
    for (size_t k = 0; k < rows.size(); ++k) ds.chunk_to_entry[k] = rows[k].second;
  }
}

}  // namespace

bool read_superblock_fields(const uint8_t* d, uint64_t len, SuperblockFields* out) noexcept {
  if (len < kSuperblockLen) return false;
  *out = SuperblockFields{load_u32le(d + 8), load_u32le(d + 12), load_u64le(d + 16), load_u64le(d + 24)};
  return true;
}

Catalog parse_catalog(const uint8_t* d, uint64_t len, const OpenOptions& opts) {
  Catalog cat;
  SuperblockFields sb = parse_superblock(d, len);
  cat.file_len = len;
  cat.flags = sb.flags;
  cat.chunk_index_offset = sb.index_offset;
  cat.chunk_index_length = sb.index_length;

  cat.footer.payload_limit = len;
  if (sb.flags & 1) {
    if (opts.verify_footer) {
      parse_footer(d, len, cat.footer);
    } else {
      try {
        parse_footer(d, len, cat.footer);
      } catch (const Error&) {
        cat.footer = Footer{};
        cat.footer.payload_limit = locate_footer_start(d, len);
      }
    }
  }

  if (sb.dataset_count == 0) {
    if (sb.index_offset != kSuperblockLen || sb.index_length != 0)
      fail("TET_FORMAT_INDEX_OFFSET", "empty file (dataset_count 0) must have chunk_index_offset 32 and chunk_index_length 0 (got " +
                                          u64s(sb.index_offset) + ", " + u64s(sb.index_length) + ")");
    return cat;
  }

  if (len < 40) fail("TET_FORMAT_TRUNCATED", "dataset_count " + u64s(sb.dataset_count) + " but the file (" + u64s(len) +
                                                 " bytes) ends before dataset_blob_len");
  uint64_t blob_len = load_u64le(d + 32);
  if (blob_len > len - 40)
    fail("TET_FORMAT_TRUNCATED", "dataset_blob_len " + u64s(blob_len) + " runs past end of file (" + u64s(len) + " bytes)");
  const uint64_t blob_end = 40 + blob_len;
  const uint64_t want_idx = align8(blob_end);
  if (sb.index_offset != want_idx)
    fail("TET_FORMAT_INDEX_OFFSET", "chunk_index_offset " + u64s(sb.index_offset) + " != align8(40 + dataset_blob_len) = " +
                                        u64s(want_idx));
  for (uint64_t p = blob_end; p < want_idx; ++p)  // want_idx <= index_offset + length <= len
    if (d[p]) fail("TET_FORMAT_RESERVED", "non-zero padding byte at " + u64s(p) + " between dataset directory and chunk index");

  // Each record takes at least 32 bytes, so the blob bounds what is worth reserving.
  cat.datasets.reserve(static_cast<size_t>(std::min<uint64_t>(sb.dataset_count, blob_len / 32 + 1)));
  uint64_t pos = 40;
  for (uint32_t id = 0; id < sb.dataset_count; ++id) {
    DatasetInfo ds = parse_record(d, pos, blob_end, id, sb.dataset_count);
    for (const auto& other : cat.datasets)
      if (other.name == ds.name) fail("TET_FORMAT_DUPLICATE_NAME", "duplicate dataset name '" + ds.name + "'");
    cat.datasets.push_back(std::move(ds));
  }
  if (pos != blob_end)
    fail("TET_FORMAT_DIRECTORY", "dataset records end at " + u64s(pos) + " but dataset_blob_len says " + u64s(blob_end) +
                                     " (" + u64s(blob_end - pos) + " unexplained bytes)");

  // Chunk index header.
  if (sb.index_length < kIndexHeaderLen)
    fail("TET_INDEX_LENGTH", "chunk_index_length " + u64s(sb.index_length) + " is shorter than the 32-byte TIDX header");
  const uint8_t* ih = d + sb.index_offset;
  if (std::memcmp(ih, "TIDX", 4) != 0) fail("TET_INDEX_BAD_MAGIC", "bad chunk index magic " + hex_bytes(ih, 4) + " (want 'TIDX')");
  uint32_t iver = load_u32le(ih + 4);
  if (iver != 1) fail("TET_INDEX_BAD_VERSION", "index_version " + u64s(iver) + " unsupported (only 1 is defined)");
  uint64_t entry_count = load_u64le(ih + 8);
  cat.execution.memory_budget_percent_bps = load_u16le(ih + 16);
  uint16_t res16 = load_u16le(ih + 18);
  cat.execution.memory_budget_bytes = load_u32le(ih + 20);
  uint64_t res64 = load_u64le(ih + 24);
  if (res16 || res64) fail("TET_INDEX_RESERVED", "non-zero reserved fields in the TIDX header");
  uint64_t rows_len, want_len;
  if (mul_overflows(entry_count, kEntryLen, &rows_len) || add_overflows(rows_len, kIndexHeaderLen, &want_len))
    fail("TET_INDEX_LENGTH", "entry_count " + u64s(entry_count) + " overflows the index length");
  if (want_len != sb.index_length)
    fail("TET_INDEX_LENGTH", "chunk_index_length " + u64s(sb.index_length) + " != 32 + entry_count(" + u64s(entry_count) +
                                 ") * 104 = " + u64s(want_len));
  if (entry_count > UINT32_MAX)
    fail("TET_INDEX_LENGTH", "entry_count " + u64s(entry_count) + " exceeds the supported 2^32-1 chunks per file");
  uint64_t limit = cat.footer.payload_limit;
  if (sb.index_offset + sb.index_length > limit) {
    if (opts.verify_footer || cat.footer.present)
      fail("TET_FOOTER_INVALID", "chunk index [" + u64s(sb.index_offset) + ", " + u64s(sb.index_offset + sb.index_length) +
                                     ") overlaps the footer region starting at " + u64s(limit));
    limit = cat.footer.payload_limit = len;  // the located "footer" cannot be one
  }

  std::vector<uint64_t> per_dataset;
  parse_entries(d, len, sb, entry_count, limit, cat, per_dataset);
  build_lookup(cat, per_dataset);
  return cat;
}

}  // namespace tet
