// tet::Writer: datasets are declared first; the first write_chunk seals the layout so the
// index size is known and payloads stream into a temp file right after the index region in
// arrival order. commit() writes superblock + directory + index (+ footer) at the front / end,
// fsyncs, renames over the target and fsyncs the directory. Any failure removes the temp file.
#include "tet/writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

#include "codec/zstd_codec.h"
#include "exec/thread_pool.h"
#include "format/footer.h"
#include "tet/error.h"
#include "util/checked.h"
#include "util/io.h"
#include "util/json.h"
#include "util/utf8.h"
#include "write/table_set.h"

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
  std::unique_ptr<TableSet> tables;  // created by the first add_table
  std::mutex tables_mu;              // held by appends (which encode) instead of mu
  std::mutex mu;

  struct Reserved { uint64_t linear = 0; CodecChoice choice = CodecChoice::Raw; int level = 3; };
  Reserved reserve(uint32_t dataset_id, const uint64_t* coords, size_t ncoords, uint64_t len);
  void release(uint32_t dataset_id, uint64_t linear) noexcept;
  void append(uint32_t dataset_id, uint64_t linear, const uint8_t* stored, uint64_t stored_len, Codec codec,
              uint64_t raw_len);

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
  // Lays the tables region out at the next 64-aligned offset; returns the footer member.
  std::string write_tables() {
    for (const TableSet::Binding& b : tables->bindings()) {
      const DatasetState* d = nullptr;
      for (const auto& ds : datasets)
        if (ds.spec.name == b.dataset) d = &ds;
      if (!d) fail("TET_WRITE_ARGUMENT", "axis table '" + b.table + "' is bound to dataset '" + b.dataset + "', which was not added");
      if (b.axis >= d->info.ndim)
        fail("TET_WRITE_ARGUMENT", "axis table '" + b.table + "' is bound to axis " + u64s(b.axis) + " of '" + b.dataset +
                                       "', which has " + u64s(d->info.ndim) + " axes");
      if (b.rows != d->info.shape[b.axis])
        fail("TET_WRITE_ARGUMENT", "axis table '" + b.table + "' has " + u64s(b.rows) + " rows; axis " + u64s(b.axis) +
                                       " of '" + b.dataset + "' has length " + u64s(d->info.shape[b.axis]));
    }
    const uint64_t start = (write_pos + 63) & ~uint64_t(63);
    uint64_t at = start;
    if (start > write_pos) {
      static const uint8_t kZeros[64] = {};
      if (int err = pwrite_full(fd, kZeros, start - write_pos, write_pos)) io_fail("cannot write the tables region of", err);
    }
    const cells::RegionSummary sum = tables->write([&](const void* p, size_t n) {
      if (int err = pwrite_full(fd, p, n, at)) io_fail("cannot write the tables region of", err);
      at += n;
    });
    write_pos = at;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum.xxh64));
    return ",\"cells\":{\"offset\":" + u64s(start) + ",\"len\":" + u64s(sum.len) + ",\"version\":1,\"xxh64\":\"" +
           hex + "\"}";
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

// Under m.mu: validates one tile of `len` bytes at `coords` and marks its slot pending.
Writer::Impl::Reserved Writer::Impl::reserve(uint32_t dataset_id, const uint64_t* coords, size_t ncoords, uint64_t len) {
  if (dataset_id >= datasets.size())
    fail("TET_WRITE_BAD_DATASET", "write_chunk: dataset id " + u64s(dataset_id) + " >= " + u64s(datasets.size()) +
                                      " declared datasets");
  DatasetState& d = datasets[dataset_id];
  std::vector<uint64_t> cv(coords, coords + ncoords);
  const std::string dsn = "dataset '" + d.spec.name + "'";
  if (ncoords != d.info.ndim)
    fail("TET_WRITE_BAD_COORDS", dsn + ": chunk coords " + coords_text(cv) + " have " + u64s(ncoords) +
                                     " axes, want " + u64s(d.info.ndim));
  std::array<uint64_t, 8> c{};
  uint64_t linear = 0;
  for (uint32_t a = 0; a < d.info.ndim; ++a) {
    if (coords[a] >= d.info.grid[a])
      fail("TET_WRITE_BAD_COORDS", dsn + ": chunk coords " + coords_text(cv) + " outside the chunk grid (axis " +
                                       u64s(a) + " has " + u64s(d.info.grid[a]) + " chunks)");
    c[a] = coords[a];
    linear = linear * d.info.grid[a] + coords[a];
  }
  uint32_t& slot = d.slots[static_cast<size_t>(linear)];
  if (slot != kSlotEmpty)
    fail("TET_WRITE_DUPLICATE_CHUNK", dsn + ": chunk " + coords_text(cv) + " was already written");
  auto ext = tile_shape(d.info, c);
  uint64_t want = dtype_size(d.spec.dtype);
  for (uint32_t a = 0; a < d.info.ndim; ++a) want *= ext[a];
  if (len != want) {
    std::vector<uint64_t> e(ext.begin(), ext.begin() + d.info.ndim);
    fail("TET_WRITE_BAD_LENGTH", dsn + ": chunk " + coords_text(cv) + " has " + u64s(len) +
                                     " bytes, want the clipped tile " + coords_text(e) + " x " +
                                     u64s(dtype_size(d.spec.dtype)) + " B = " + u64s(want));
  }
  slot = kSlotPending;
  return Reserved{linear, d.spec.codec, d.spec.zstd_level};
}

// Under m.mu: a pending slot goes back to empty (its tile failed before it was written).
void Writer::Impl::release(uint32_t dataset_id, uint64_t linear) noexcept {
  if (!done && dataset_id < datasets.size()) datasets[dataset_id].slots[static_cast<size_t>(linear)] = kSlotEmpty;
}

// Under m.mu: appends a tile's stored bytes at the write position and records its index row.
void Writer::Impl::append(uint32_t dataset_id, uint64_t linear, const uint8_t* stored, uint64_t stored_len, Codec codec,
                          uint64_t raw_len) {
  require_open("write_chunk");
  uint64_t offset = write_pos;
  if (add_overflows(offset, stored_len, &write_pos)) io_fail("file offset overflow writing", EFBIG);
  if (int err = pwrite_full(fd, stored, static_cast<size_t>(stored_len), offset)) io_fail("cannot write a chunk to", err);
  DatasetState& d = datasets[dataset_id];
  ChunkEntry e;
  e.dataset_id = dataset_id;
  uint64_t rest = linear;
  for (int a = static_cast<int>(d.info.ndim) - 1; a >= 0; --a) {
    e.coords[a] = rest % d.info.grid[a];
    rest /= d.info.grid[a];
  }
  e.payload_offset = offset;
  e.raw_byte_len = raw_len;
  e.stored_byte_len = stored_len;
  e.codec = codec;
  arrived.push_back(e);
  d.slots[static_cast<size_t>(linear)] = static_cast<uint32_t>(arrived.size() - 1);
}

namespace {

// Compresses one tile as the dataset's codec choice asks; `codec` says what is stored (the raw
// bytes themselves when Raw). No lock held: concurrent calls compress in parallel.
void encode_tile(CodecChoice choice, int level, const uint8_t* data, uint64_t len, std::vector<uint8_t>& compressed,
                 Codec& codec) {
  codec = Codec::Raw;
  if (choice == CodecChoice::Raw) return;
  zstd_compress_frame(data, static_cast<size_t>(len), level, compressed);
  codec = (choice == CodecChoice::Zstd || compressed.size() < len) ? Codec::Zstd : Codec::Raw;
}

}  // namespace

void Writer::write_chunk(uint32_t dataset_id, const std::vector<uint64_t>& coords, const uint8_t* data, uint64_t len) {
  Impl& m = *impl_;
  Impl::Reserved r;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.require_open("write_chunk");
    m.seal();
    r = m.reserve(dataset_id, coords.data(), coords.size(), len);
  }
  std::vector<uint8_t> compressed;
  Codec codec = Codec::Raw;
  try {
    encode_tile(r.choice, r.level, data, len, compressed, codec);
  } catch (...) {
    std::lock_guard<std::mutex> lock(m.mu);
    m.release(dataset_id, r.linear);
    throw;
  }
  std::lock_guard<std::mutex> lock(m.mu);
  if (codec == Codec::Zstd) m.append(dataset_id, r.linear, compressed.data(), compressed.size(), codec, len);
  else m.append(dataset_id, r.linear, data, len, codec, len);
}

void Writer::write_slab(uint32_t dataset_id, const std::vector<uint64_t>& tile_origin,
                        const std::vector<uint64_t>& tile_count, const uint8_t* data, uint64_t len) {
  Impl& m = *impl_;
  // Geometry of the block and of each tile in it, fixed under the lock.
  std::vector<uint64_t> first(tile_origin.size()), extent(tile_origin.size()), chunk(tile_origin.size());
  std::vector<uint64_t> shape(tile_origin.size());
  std::vector<Impl::Reserved> reserved;
  uint64_t esize = 0, tiles = 1;
  uint32_t ndim = 0;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.require_open("write_slab");
    m.seal();
    if (dataset_id >= m.datasets.size())
      fail("TET_WRITE_BAD_DATASET", "write_slab: dataset id " + u64s(dataset_id) + " >= " + u64s(m.datasets.size()) +
                                        " declared datasets");
    const DatasetState& d = m.datasets[dataset_id];
    const std::string dsn = "dataset '" + d.spec.name + "'";
    ndim = d.info.ndim;
    if (tile_origin.size() != ndim || tile_count.size() != ndim)
      fail("TET_WRITE_BAD_COORDS", dsn + ": slab tile origin " + coords_text(tile_origin) + " / count " +
                                       coords_text(tile_count) + " need " + u64s(ndim) + " axes");
    esize = dtype_size(d.spec.dtype);
    uint64_t want = esize;
    for (uint32_t a = 0; a < ndim; ++a) {
      uint64_t end = 0;
      if (tile_count[a] == 0 || add_overflows(tile_origin[a], tile_count[a], &end) || end > d.info.grid[a])
        fail("TET_WRITE_BAD_COORDS", dsn + ": slab tiles " + coords_text(tile_origin) + " + " + coords_text(tile_count) +
                                         " outside the chunk grid (axis " + u64s(a) + " has " + u64s(d.info.grid[a]) +
                                         " chunks)");
      chunk[a] = d.info.chunk_shape[a];
      shape[a] = d.info.shape[a];
      first[a] = tile_origin[a] * chunk[a];
      extent[a] = std::min(end * chunk[a], shape[a]) - first[a];
      want *= extent[a];
      tiles *= tile_count[a];
    }
    if (len != want)
      fail("TET_WRITE_BAD_LENGTH", dsn + ": slab at tiles " + coords_text(tile_origin) + " has " + u64s(len) +
                                       " bytes, want " + coords_text(extent) + " x " + u64s(esize) + " B = " + u64s(want));
    reserved.reserve(static_cast<size_t>(tiles));
    std::vector<uint64_t> t(ndim);
    try {
      for (uint64_t i = 0; i < tiles; ++i) {
        uint64_t rest = i;
        uint64_t tile_len = esize;
        for (int a = static_cast<int>(ndim) - 1; a >= 0; --a) {
          t[a] = tile_origin[a] + rest % tile_count[a];
          rest /= tile_count[a];
          tile_len *= std::min(chunk[a], shape[a] - t[a] * chunk[a]);
        }
        reserved.push_back(m.reserve(dataset_id, t.data(), ndim, tile_len));
      }
    } catch (...) {
      for (const auto& r : reserved) m.release(dataset_id, r.linear);
      throw;
    }
  }

  // Tiles in batches: extracted and compressed in parallel, appended in grid order, so the
  // file's bytes are those of write_chunk calls in that order (and memory stays one batch).
  exec::ThreadPool& pool = exec::ThreadPool::instance();
  const uint64_t batch = std::max<uint64_t>(1, 2ull * pool.size());
  struct Encoded { std::vector<uint8_t> raw, compressed; Codec codec = Codec::Raw; };
  std::vector<Encoded> out(static_cast<size_t>(std::min(batch, tiles)));
  uint64_t done = 0;
  try {
    for (uint64_t b0 = 0; b0 < tiles; b0 += batch) {
      uint64_t n = std::min(batch, tiles - b0);
      pool.parallel_for(n, 0, [&](uint64_t k, uint32_t) {
        uint64_t i = b0 + k;
        std::array<uint64_t, 8> lo{}, te{};  // tile origin within the slab, tile extent
        uint64_t rest = i, tile_elems = 1;
        for (int a = static_cast<int>(ndim) - 1; a >= 0; --a) {
          uint64_t tk = rest % tile_count[a];
          rest /= tile_count[a];
          lo[a] = tk * chunk[a];
          te[a] = std::min(chunk[a], extent[a] - lo[a]);
          tile_elems *= te[a];
        }
        Encoded& e = out[static_cast<size_t>(k)];
        e.raw.resize(static_cast<size_t>(tile_elems * esize));
        // Copy rows (runs along the last axis) of the tile out of the row-major slab.
        const uint64_t run = te[ndim - 1] * esize;
        const uint64_t rows = tile_elems / te[ndim - 1];
        std::array<uint64_t, 8> idx{};
        for (uint64_t r = 0; r < rows; ++r) {
          uint64_t src = 0;
          for (uint32_t a = 0; a < ndim; ++a) src = src * extent[a] + (lo[a] + (a + 1 < ndim ? idx[a] : 0));
          std::memcpy(e.raw.data() + r * run, data + src * esize, static_cast<size_t>(run));
          for (int a = static_cast<int>(ndim) - 2; a >= 0; --a) {
            if (++idx[a] < te[a]) break;
            idx[a] = 0;
          }
        }
        encode_tile(reserved[static_cast<size_t>(i)].choice, reserved[static_cast<size_t>(i)].level, e.raw.data(),
                    e.raw.size(), e.compressed, e.codec);
      });
      std::lock_guard<std::mutex> lock(m.mu);
      for (uint64_t k = 0; k < n; ++k) {
        Encoded& e = out[static_cast<size_t>(k)];
        const auto& r = reserved[static_cast<size_t>(b0 + k)];
        if (e.codec == Codec::Zstd) m.append(dataset_id, r.linear, e.compressed.data(), e.compressed.size(), e.codec, e.raw.size());
        else m.append(dataset_id, r.linear, e.raw.data(), e.raw.size(), e.codec, e.raw.size());
        ++done;
      }
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(m.mu);
    for (uint64_t i = done; i < tiles; ++i) m.release(dataset_id, reserved[static_cast<size_t>(i)].linear);
    throw;
  }
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

uint32_t Writer::add_table(const std::string& name, const std::string& dataset, uint32_t axis,
                          const std::vector<cells::ColumnSchema>& columns) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.require_open("add_table");
  if (!m.tables) m.tables = std::make_unique<TableSet>(dir_of(m.path));
  std::lock_guard<std::mutex> tlock(m.tables_mu);
  return m.tables->add_table(name, dataset, axis, columns);
}

void Writer::append_table(uint32_t table_id, const std::vector<ColumnBatch>& columns) {
  Impl& m = *impl_;
  TableSet* tables = nullptr;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.require_open("append_table");
    tables = m.tables.get();
  }
  if (!tables) fail("TET_WRITE_ARGUMENT", "append names table id " + u64s(table_id) + ", which was not added");
  std::lock_guard<std::mutex> lock(m.tables_mu);
  tables->append(table_id, columns);
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
  std::string cells_member;
  if (m.tables && m.tables->table_count()) {
    std::lock_guard<std::mutex> tlock(m.tables_mu);
    cells_member = m.write_tables();
    m.has_footer = true;  // the region is found through the footer
  }
  std::vector<uint8_t> header = m.header_bytes();
  if (int err = pwrite_full(m.fd, header.data(), header.size(), 0)) m.io_fail("cannot write the header of", err);
  if (m.has_footer) {
    const std::string tail = footer_region_bytes(m.write_pos, m.history_json, m.metadata_json, cells_member);
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
