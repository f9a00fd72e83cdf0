// tet::Writer: datasets are declared first; the first write_chunk seals the layout so the
// index size is known and payloads stream into a temp file right after the index region in
// arrival order. commit() writes superblock + directory + index (+ footer) at the front / end,
// fsyncs, renames over the target and fsyncs the directory. Any failure removes the temp file.
#include "tet/writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "codec/zstd_codec.h"
#include "format/footer.h"
#include "tet/error.h"
#include "util/checked.h"
#include "util/io.h"
#include "util/json.h"
#include "util/utf8.h"

namespace tet {
namespace {

constexpr uint32_t kSlotEmpty = UINT32_MAX;
constexpr uint32_t kSlotPending = UINT32_MAX - 1;
constexpr uint64_t kMaxChunksPerFile = UINT32_MAX - 2;

std::string u64s(uint64_t v) { return std::to_string(v); }

std::string coords_text(const std::vector<uint64_t>& c) {
  std::string s = "(";
  for (size_t a = 0; a < c.size(); ++a) s += (a ? ", " : "") + u64s(c[a]);
  return s + ")";
}

struct DatasetState {
  DatasetSpec spec;
  DatasetInfo info;             // shape/grid/chunk_count, as the reader will see them
  std::vector<uint32_t> slots;  // per linear chunk: arrival index, kSlotEmpty or kSlotPending
};

}  // namespace

struct Writer::Impl {
  std::string path, tmp;
  int fd = -1;
  bool sealed = false, done = false;  // done: committed, aborted or failed
  FileExecution execution;
  std::vector<DatasetState> datasets;
  std::vector<ChunkEntry> arrived;
  uint64_t index_offset = 32, index_length = 0, write_pos = 32;
  bool has_footer = false;
  std::string history_json = "[]", metadata_json;
  std::mutex mu;

  void require_open(const char* what) const {
    if (done) fail("TET_WRITE_CLOSED", std::string(what) + ": the writer for '" + path + "' was already committed or aborted");
  }

  void discard() noexcept {
    if (fd >= 0) { ::close(fd); fd = -1; }
    if (!tmp.empty()) { ::unlink(tmp.c_str()); tmp.clear(); }
    done = true;
  }

  [[noreturn]] void io_fail(const std::string& what, int err) {
    std::string msg = what + " '" + (tmp.empty() ? path : tmp) + "': " + errno_text(err);
    discard();
    fail("TET_WRITE_IO", msg + " (nothing was written to '" + path + "')");
  }

  void seal() {
    if (sealed) return;
    uint64_t blob_len = 0, total_chunks = 0;
    for (const auto& d : datasets) {
      blob_len += align8(16 + d.spec.name.size()) + 16ull * d.info.ndim;
      total_chunks += d.info.chunk_count;  // each <= kMaxChunksPerFile, checked in add_dataset
      if (total_chunks > kMaxChunksPerFile)
        fail("TET_WRITE_BAD_SHAPE", "the datasets need " + u64s(total_chunks) + " chunks; a file holds at most " +
                                        u64s(kMaxChunksPerFile));
    }
    if (!datasets.empty()) {
      index_offset = align8(40 + blob_len);
      index_length = 32 + total_chunks * 104;
    }
    write_pos = index_offset + index_length;
    try {
      for (auto& d : datasets) d.slots.assign(static_cast<size_t>(d.info.chunk_count), kSlotEmpty);
      arrived.reserve(static_cast<size_t>(total_chunks));
    } catch (const std::bad_alloc&) {
      for (auto& d : datasets) std::vector<uint32_t>().swap(d.slots);
      fail("TET_WRITE_BAD_SHAPE", "not enough memory for the index of " + u64s(total_chunks) + " chunks");
    }
    sealed = true;
  }

  std::vector<uint8_t> header_bytes() const {
    std::vector<uint8_t> h(static_cast<size_t>(index_offset + index_length), 0);
    uint8_t* p = h.data();
    std::memcpy(p, "TETR", 4);
    store_u32le(p + 4, 1);
    store_u32le(p + 8, static_cast<uint32_t>(datasets.size()));
    store_u32le(p + 12, has_footer ? 1u : 0u);
    store_u64le(p + 16, index_offset);
    store_u64le(p + 24, index_length);
    if (datasets.empty()) return h;
    uint64_t pos = 40;
    for (const auto& d : datasets) {
      const uint64_t start = pos;
      store_u32le(p + pos, static_cast<uint32_t>(d.spec.name.size()));
      store_u32le(p + pos + 4, static_cast<uint32_t>(d.spec.dtype));
      store_u32le(p + pos + 8, d.info.ndim);
      std::memcpy(p + pos + 16, d.spec.name.data(), d.spec.name.size());
      pos = start + align8(16 + d.spec.name.size());
      for (uint32_t a = 0; a < d.info.ndim; ++a) store_u64le(p + pos + 8ull * a, d.info.shape[a]);
      for (uint32_t a = 0; a < d.info.ndim; ++a) store_u64le(p + pos + 8ull * (d.info.ndim + a), d.info.chunk_shape[a]);
      pos += 16ull * d.info.ndim;
    }
    store_u64le(p + 32, pos - 40);
    uint8_t* ih = p + index_offset;
    std::memcpy(ih, "TIDX", 4);
    store_u32le(ih + 4, 1);
    store_u64le(ih + 8, (index_length - 32) / 104);
    store_u16le(ih + 16, execution.memory_budget_percent_bps);
    store_u32le(ih + 20, execution.memory_budget_bytes);
    uint8_t* row = ih + 32;
    for (const auto& d : datasets) {
      for (uint32_t slot : d.slots) {
        const ChunkEntry& e = arrived[slot];
        store_u64le(row, e.dataset_id);
        for (int k = 0; k < 8; ++k) store_u64le(row + 8 + 8 * k, e.coords[k]);
        store_u64le(row + 72, e.payload_offset);
        store_u64le(row + 80, e.raw_byte_len);
        store_u64le(row + 88, e.stored_byte_len);
        store_u32le(row + 96, static_cast<uint32_t>(e.codec));
        row += 104;
      }
    }
    return h;
  }

  // history_json text and optional spill bytes, given where the footer region starts.
  void footer_bytes(uint64_t start, std::string& spill, std::string& json) const {
    json = "{\"history\":" + history_json;
    if (!metadata_json.empty()) {
      std::string inline_json = json + ",\"metadata\":" + metadata_json + "}";
      if (inline_json.size() <= kMetadataInlineLimit) {
        json = std::move(inline_json);
        return;
      }
      spill = metadata_json;
      json += ",\"metadata_ref\":{\"offset\":" + u64s(start) + ",\"len\":" + u64s(spill.size()) + "}}";
      return;
    }
    json += "}";
  }
};

std::unique_ptr<Writer> Writer::create(const std::string& path) {
  if (path.empty()) fail("TET_WRITE_IO", "output path is empty");
  std::unique_ptr<Writer> w(new Writer());
  w->impl_.reset(new Impl());
  Impl& m = *w->impl_;
  m.path = path;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string tmp = temp_path_beside(path);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      m.fd = fd;
      m.tmp = tmp;
      return w;
    }
    if (errno != EEXIST)
      fail("TET_WRITE_IO", "cannot create a temp file beside '" + path + "' (" + tmp + "): " + errno_text(errno));
  }
  fail("TET_WRITE_IO", "cannot find a free temp file name beside '" + path + "'");
}

Writer::~Writer() {
  if (impl_ && !impl_->done) impl_->discard();
}

void Writer::abort() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->done) impl_->discard();
}

void Writer::set_execution(const FileExecution& e) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->require_open("set_execution");
  impl_->execution = e;
}

uint32_t Writer::add_dataset(const DatasetSpec& spec) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.require_open("add_dataset");
  if (m.sealed)
    fail("TET_WRITE_SEALED", "add_dataset('" + spec.name + "') after the first write_chunk: datasets must be declared first");
  if (spec.name.empty()) fail("TET_WRITE_BAD_NAME", "dataset name is empty");
  if (spec.name.size() > UINT32_MAX) fail("TET_WRITE_BAD_NAME", "dataset name is longer than 2^32-1 bytes");
  if (!utf8_valid(reinterpret_cast<const uint8_t*>(spec.name.data()), spec.name.size()))
    fail("TET_WRITE_BAD_NAME", "dataset name is not valid UTF-8");
  for (const auto& d : m.datasets)
    if (d.spec.name == spec.name) fail("TET_WRITE_BAD_NAME", "duplicate dataset name '" + spec.name + "'");
  if (m.datasets.size() >= UINT32_MAX) fail("TET_WRITE_BAD_SHAPE", "too many datasets");
  const std::string dsn = "dataset '" + spec.name + "'";
  if (!dtype_tag_valid(static_cast<uint32_t>(spec.dtype)))
    fail("TET_WRITE_BAD_DTYPE", dsn + ": unknown dtype tag " + u64s(static_cast<uint32_t>(spec.dtype)) + " (valid tags are 1..10)");
  size_t ndim = spec.shape.size();
  if (ndim < 1 || ndim > kMaxNdim) fail("TET_WRITE_BAD_SHAPE", dsn + ": rank " + u64s(ndim) + " outside 1..8");
  if (spec.chunk_shape.size() != ndim)
    fail("TET_WRITE_BAD_CHUNK_SHAPE", dsn + ": chunk_shape has " + u64s(spec.chunk_shape.size()) +
                                          " axes but shape has " + u64s(ndim));
  if (spec.codec != CodecChoice::Raw && spec.codec != CodecChoice::Zstd && spec.codec != CodecChoice::Auto)
    fail("TET_WRITE_BAD_CODEC", dsn + ": unknown codec choice " + u64s(static_cast<uint32_t>(spec.codec)) +
                                    " (0 = raw, 1 = zstd, 2 = auto)");
  if (spec.codec != CodecChoice::Raw && (spec.zstd_level < ZSTD_minCLevel() || spec.zstd_level > ZSTD_maxCLevel()))
    fail("TET_WRITE_BAD_CODEC", dsn + ": zstd level " + std::to_string(spec.zstd_level) + " outside " +
                                    std::to_string(ZSTD_minCLevel()) + ".." + std::to_string(ZSTD_maxCLevel()));
  DatasetState st;
  st.spec = spec;
  DatasetInfo& info = st.info;
  info.name = spec.name;
  info.dtype = spec.dtype;
  info.ndim = static_cast<uint32_t>(ndim);
  info.shape.fill(1);
  info.chunk_shape.fill(1);
  info.grid.fill(1);
  uint64_t elements = 1, chunks = 1, tile_elems = 1;
  for (size_t a = 0; a < ndim; ++a) {
    uint64_t s = spec.shape[a], c = spec.chunk_shape[a];
    if (s == 0) fail("TET_WRITE_BAD_SHAPE", dsn + ": shape[" + u64s(a) + "] is 0 (empty datasets are unsupported)");
    if (c == 0 || c > s)
      fail("TET_WRITE_BAD_CHUNK_SHAPE", dsn + ": chunk_shape[" + u64s(a) + "] is " + u64s(c) + ", want 1.." + u64s(s));
    if (mul_overflows(elements, s, &elements))
      fail("TET_WRITE_BAD_SHAPE", dsn + ": element count of the shape overflows u64");
    info.shape[a] = s;
    info.chunk_shape[a] = c;
    info.grid[a] = s / c + (s % c != 0);
    chunks *= info.grid[a];
    tile_elems *= c;
  }
  if (mul_overflows(elements, dtype_size(spec.dtype), &info.logical_bytes))
    fail("TET_WRITE_BAD_SHAPE", dsn + ": byte size of the shape overflows u64");
  if (tile_elems * dtype_size(spec.dtype) > SIZE_MAX / 2)
    fail("TET_WRITE_BAD_CHUNK_SHAPE", dsn + ": one tile is too large to hold in memory");
  if (chunks > kMaxChunksPerFile)
    fail("TET_WRITE_BAD_SHAPE", dsn + ": " + u64s(chunks) + " chunks; a file holds at most " + u64s(kMaxChunksPerFile));
  info.element_count = elements;
  info.chunk_count = chunks;
  m.datasets.push_back(std::move(st));
  return static_cast<uint32_t>(m.datasets.size() - 1);
}

void Writer::write_chunk(uint32_t dataset_id, const std::vector<uint64_t>& coords, const uint8_t* data, uint64_t len) {
  Impl& m = *impl_;
  uint64_t linear = 0;
  CodecChoice choice;
  int level;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.require_open("write_chunk");
    m.seal();
    if (dataset_id >= m.datasets.size())
      fail("TET_WRITE_BAD_DATASET", "write_chunk: dataset id " + u64s(dataset_id) + " >= " + u64s(m.datasets.size()) +
                                        " declared datasets");
    DatasetState& d = m.datasets[dataset_id];
    const std::string dsn = "dataset '" + d.spec.name + "'";
    if (coords.size() != d.info.ndim)
      fail("TET_WRITE_BAD_COORDS", dsn + ": chunk coords " + coords_text(coords) + " have " + u64s(coords.size()) +
                                       " axes, want " + u64s(d.info.ndim));
    std::array<uint64_t, 8> c{};
    for (uint32_t a = 0; a < d.info.ndim; ++a) {
      if (coords[a] >= d.info.grid[a])
        fail("TET_WRITE_BAD_COORDS", dsn + ": chunk coords " + coords_text(coords) + " outside the chunk grid (axis " +
                                         u64s(a) + " has " + u64s(d.info.grid[a]) + " chunks)");
      c[a] = coords[a];
      linear = linear * d.info.grid[a] + coords[a];
    }
    uint32_t& slot = d.slots[static_cast<size_t>(linear)];
    if (slot != kSlotEmpty)
      fail("TET_WRITE_DUPLICATE_CHUNK", dsn + ": chunk " + coords_text(coords) + " was already written");
    auto ext = tile_shape(d.info, c);
    uint64_t want = dtype_size(d.spec.dtype);
    for (uint32_t a = 0; a < d.info.ndim; ++a) want *= ext[a];
    if (len != want) {
      std::vector<uint64_t> e(ext.begin(), ext.begin() + d.info.ndim);
      fail("TET_WRITE_BAD_LENGTH", dsn + ": chunk " + coords_text(coords) + " has " + u64s(len) +
                                       " bytes, want the clipped tile " + coords_text(e) + " x " +
                                       u64s(dtype_size(d.spec.dtype)) + " B = " + u64s(want));
    }
    slot = kSlotPending;
    choice = d.spec.codec;
    level = d.spec.zstd_level;
  }

  // Compression runs outside the lock so concurrent write_chunk calls compress in parallel.
  std::vector<uint8_t> compressed;
  Codec codec = Codec::Raw;
  try {
    if (choice != CodecChoice::Raw) {
      zstd_compress_frame(data, static_cast<size_t>(len), level, compressed);
      codec = (choice == CodecChoice::Zstd || compressed.size() < len) ? Codec::Zstd : Codec::Raw;
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.done) m.datasets[dataset_id].slots[static_cast<size_t>(linear)] = kSlotEmpty;
    throw;
  }
  const uint8_t* stored = codec == Codec::Zstd ? compressed.data() : data;
  uint64_t stored_len = codec == Codec::Zstd ? compressed.size() : len;

  std::lock_guard<std::mutex> lock(m.mu);
  m.require_open("write_chunk");
  uint64_t offset = m.write_pos;
  if (add_overflows(offset, stored_len, &m.write_pos)) m.io_fail("file offset overflow writing", EFBIG);
  if (int err = pwrite_full(m.fd, stored, static_cast<size_t>(stored_len), offset)) m.io_fail("cannot write a chunk to", err);
  DatasetState& d = m.datasets[dataset_id];
  ChunkEntry e;
  e.dataset_id = dataset_id;
  uint64_t rest = linear;
  for (int a = static_cast<int>(d.info.ndim) - 1; a >= 0; --a) {
    e.coords[a] = rest % d.info.grid[a];
    rest /= d.info.grid[a];
  }
  e.payload_offset = offset;
  e.raw_byte_len = len;
  e.stored_byte_len = stored_len;
  e.codec = codec;
  m.arrived.push_back(e);
  d.slots[static_cast<size_t>(linear)] = static_cast<uint32_t>(m.arrived.size() - 1);
}

void Writer::set_footer(const std::string& history_array_json, const std::string& metadata_object_json) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.require_open("set_footer");
  if (history_array_json.empty() && metadata_object_json.empty()) {
    m.has_footer = false;
    m.history_json = "[]";
    m.metadata_json.clear();
    return;
  }
  std::string hist = "[]", meta;
  std::string err;
  JsonValue root;
  root.kind = JsonValue::Kind::Object;
  if (!history_array_json.empty()) {
    JsonValue h;
    if (!json_parse(history_array_json.data(), history_array_json.size(), &h, &err))
      fail("TET_WRITE_BAD_FOOTER", "footer history is not valid JSON: " + err);
    if (!h.is_array()) fail("TET_WRITE_BAD_FOOTER", "footer history must be a JSON array");
    hist = json_serialize(h);
    root.members.emplace_back("history", std::move(h));
  }
  if (!metadata_object_json.empty()) {
    JsonValue md;
    if (!json_parse(metadata_object_json.data(), metadata_object_json.size(), &md, &err))
      fail("TET_WRITE_BAD_FOOTER", "footer metadata is not valid JSON: " + err);
    if (!md.is_object()) fail("TET_WRITE_BAD_FOOTER", "footer metadata must be a JSON object");
    try {
      check_footer_metadata(md);
    } catch (const Error& e) {
      fail("TET_WRITE_BAD_FOOTER", e.what());
    }
    meta = json_serialize(md);
  }
  try {
    check_footer_history(root);
  } catch (const Error& e) {
    fail("TET_WRITE_BAD_FOOTER", e.what());
  }
  m.has_footer = true;
  m.history_json = std::move(hist);
  m.metadata_json = std::move(meta);
}

void Writer::commit() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.require_open("commit");
  m.seal();
  for (const auto& d : m.datasets) {
    for (size_t k = 0; k < d.slots.size(); ++k) {
      if (d.slots[k] < kSlotPending) continue;
      auto c = chunk_coords_of(d.info, k);
      std::vector<uint64_t> cv(c.begin(), c.begin() + d.info.ndim);
      size_t missing = 0;
      for (uint32_t s : d.slots) missing += s >= kSlotPending;
      fail("TET_WRITE_MISSING_CHUNK", "dataset '" + d.spec.name + "': " + u64s(missing) + " of " + u64s(d.slots.size()) +
                                          " chunks were not written (e.g. " + coords_text(cv) + ")");
    }
  }
  std::vector<uint8_t> header = m.header_bytes();
  if (int err = pwrite_full(m.fd, header.data(), header.size(), 0)) m.io_fail("cannot write the header of", err);
  if (m.has_footer) {
    std::string spill, json;
    m.footer_bytes(m.write_pos, spill, json);
    std::string tail = spill + json;
    uint8_t t[16];
    store_u64le(t, json.size());
    store_u32le(t + 8, 1);
    std::memcpy(t + 12, "THST", 4);
    tail.append(reinterpret_cast<const char*>(t), 16);
    if (int err = pwrite_full(m.fd, tail.data(), tail.size(), m.write_pos)) m.io_fail("cannot write the footer of", err);
  }
  if (::fsync(m.fd) != 0) m.io_fail("cannot fsync", errno);
  int fd = m.fd;
  m.fd = -1;
  if (::close(fd) != 0) m.io_fail("cannot close", errno);
  if (::rename(m.tmp.c_str(), m.path.c_str()) != 0) m.io_fail("cannot rename over '" + m.path + "'", errno);
  m.tmp.clear();
  m.done = true;
  if (int err = fsync_dir_of(m.path))
    fail("TET_WRITE_IO", "'" + m.path + "' was written but its directory could not be fsynced: " + errno_text(err));
}

}  // namespace tet
