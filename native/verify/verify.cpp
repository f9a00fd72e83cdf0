// verify_tiles / verify_open / repair_footer (see tet/verify.h).
#include "tet/verify.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "cells/region.h"
#include "exec/thread_pool.h"
#include "format/footer.h"
#include "tet/error.h"
#include "util/checked.h"
#include "util/io.h"
#include "util/json.h"
#include "util/xxh64.h"

namespace tet {

namespace {

// Decoded tiles held at once across the pool's threads (one scratch per thread): a machine with
// many cores and a file of large tiles uses fewer threads rather than cores x the largest tile.
constexpr uint64_t kVerifyScratchBudget = 256ull << 20;

}  // namespace

std::vector<VerifyFinding> verify_tiles(const File& file, uint64_t first, uint64_t count) {
  std::vector<VerifyFinding> findings;
  const Catalog& cat = file.catalog();
  uint64_t n = cat.entries.size();
  if (first >= n || count == 0) return findings;
  uint64_t last = count > n - first ? n : first + count;
  file.check_unchanged();
  // Raw tiles were length- and bounds-checked at open: nothing to decode. The rest are decoded
  // on the pool's threads, each into its own scratch; findings come back in index order.
  std::vector<uint64_t> todo;
  uint64_t largest = 1;
  for (uint64_t i = first; i < last; ++i) {
    const ChunkEntry& e = cat.entries[static_cast<size_t>(i)];
    if (e.codec == Codec::Raw) continue;
    todo.push_back(i);
    largest = std::max(largest, e.raw_byte_len);
  }
  if (todo.empty()) return findings;
  exec::ThreadPool& pool = exec::ThreadPool::instance();
  uint32_t threads = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(pool.size(), kVerifyScratchBudget / largest)));
  std::vector<ScratchBytes> scratch(pool.participants(todo.size(), threads));
  std::vector<std::unique_ptr<VerifyFinding>> found(todo.size());
  pool.parallel_for(todo.size(), threads, [&](uint64_t k, uint32_t slot) {
    uint64_t i = todo[static_cast<size_t>(k)];
    const ChunkEntry& e = cat.entries[static_cast<size_t>(i)];
    const DatasetInfo& ds = cat.datasets[static_cast<size_t>(e.dataset_id)];
    std::string context = "dataset '" + ds.name + "' entry " + std::to_string(i) + " chunk_index (";
    for (uint32_t a = 0; a < ds.ndim; ++a) context += (a ? ", " : "") + std::to_string(e.coords[a]);
    context += ")";
    try {
      decode_payload(e, file.base() + e.payload_offset, scratch[slot], context);
    } catch (const Error& err) {
      found[static_cast<size_t>(k)] = std::make_unique<VerifyFinding>(VerifyFinding{"error", err.code(), "", err.what()});
    }
  });
  for (auto& f : found)
    if (f) findings.push_back(std::move(*f));
  return findings;
}

VerifyOpenResult verify_open(const std::string& path) {
  VerifyOpenResult r;
  try {
    r.file = File::open(path, OpenOptions{true});
    return r;
  } catch (const Error& e) {
    if (e.code().rfind("TET_FOOTER_", 0) != 0) throw;
    OpenOptions lenient;
    lenient.verify_footer = false;
    r.file = File::open(path, lenient);  // throws if something besides the footer is wrong
    r.findings.push_back({"error", e.code(), "footer_invalid",
                          std::string(e.what()) + " (tet repair --apply footer_invalid drops the footer)"});
    return r;
  }
}

namespace {

// Atomically replaces `path` with `head` followed by the file's bytes [keep_from, keep_to) and
// then `tail`: temp file beside it (same mode), fsync, the source checked unchanged, rename,
// directory fsync. Returns the new length.
uint64_t rewrite_file(const std::string& path, const File& f, const std::vector<uint8_t>& head, uint64_t keep_from,
                      uint64_t keep_to, const std::string& tail) {
  std::string tmp = temp_path_beside(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail("TET_WRITE_IO", "cannot create a temp file beside '" + path + "': " + errno_text(errno));
  auto bail = [&](const std::string& what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("TET_WRITE_IO", what + " '" + tmp + "' while repairing '" + path + "': " + errno_text(err) +
                             " (the original is unchanged)");
  };
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) ::fchmod(fd, st.st_mode & 07777);  // keep the original mode
  uint64_t at = 0;
  if (int err = pwrite_full(fd, head.data(), head.size(), at)) bail("cannot write", err);
  at += head.size();
  if (keep_to > keep_from) {
    if (int err = pwrite_full(fd, f.base() + keep_from, static_cast<size_t>(keep_to - keep_from), at)) bail("cannot write", err);
    at += keep_to - keep_from;
  }
  if (!tail.empty()) {
    if (int err = pwrite_full(fd, tail.data(), tail.size(), at)) bail("cannot write", err);
    at += tail.size();
  }
  if (::fsync(fd) != 0) bail("cannot fsync", errno);
  try {
    f.check_unchanged();
  } catch (const Error&) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) { ::unlink(tmp.c_str()); fail("TET_WRITE_IO", "cannot close '" + tmp + "': " + errno_text(errno)); }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("TET_WRITE_IO", "cannot rename '" + tmp + "' over '" + path + "': " + errno_text(err));
  }
  if (int err = fsync_dir_of(path))
    fail("TET_WRITE_IO", "'" + path + "' was repaired but its directory could not be fsynced: " + errno_text(err));
  return at;
}

}  // namespace

uint64_t repair_footer(const std::string& path) {
  OpenOptions lenient;
  lenient.verify_footer = false;
  std::shared_ptr<File> f = File::open(path, lenient);
  const Catalog& cat = f->catalog();
  // payload_limit is the start of the footer region (spill or history_json) when it could be
  // located, else the file length: either way every chunk payload lies before it.
  const uint64_t keep = (cat.flags & 1) ? cat.footer.payload_limit : cat.file_len;
  std::vector<uint8_t> head(f->base(), f->base() + 32);
  store_u32le(head.data() + 12, cat.flags & ~uint32_t(1));
  return rewrite_file(path, *f, head, 32, keep, "");
}

std::vector<VerifyFinding> verify_tables(const File& file, bool deep) {
  std::vector<VerifyFinding> out;
  const Footer& ft = file.catalog().footer;
  if (!ft.present || !ft.cells_present) return out;
  auto finding = [&](const std::string& code, const std::string& msg) {
    out.push_back({"error", code, "cells_invalid", msg + " (tet repair --apply cells_invalid drops the tables, keeping the tensors)"});
  };
  file.check_unchanged();
  if (ft.cells_error.empty() && cells::TablesRegion::checksum(file.base() + ft.cells_offset, ft.cells_len) != ft.cells_xxh64) {
    finding("TET_CELLS_INVALID", "tables region: its xxh64 checksum does not match the footer's");
  }
  const cells::TablesRegion* r = nullptr;
  try {
    r = file.tables();
  } catch (const Error& e) {
    finding(e.code(), e.what());
    return out;
  }
  for (size_t t = 0; t < r->tables().size(); ++t) {
    const cells::TableInfo& ti = r->tables()[t];
    for (size_t c = 0; c < ti.columns.size(); ++c) {
      const std::string where = "table '" + ti.name + "', column '" + ti.columns[c].schema.name + "': ";
      try {
        for (const cells::MetablockRef& m : r->metablocks(t, c)) {
          if (m.kind == static_cast<uint16_t>(cells::MetablockKind::DistinctSketch)) (void)cells::DistinctSketch::decode(m.body, m.len);
          if (m.kind == static_cast<uint16_t>(cells::MetablockKind::BlockIndex)) (void)cells::BlockIndex::decode(m.body, m.len);
        }
        cells::CellRef root = r->column(t, c);
        if (deep && root) cells::verify_column_deep(*root, r->context(t, c));
      } catch (const Error& e) {
        finding(e.code(), where + e.what());
      }
    }
  }
  return out;
}

uint64_t repair_cells(const std::string& path) {
  std::shared_ptr<File> f = File::open(path);
  const Catalog& cat = f->catalog();
  const Footer& ft = cat.footer;
  if (!ft.present || !ft.cells_present)
    fail("TET_QUERY_REPAIR_NOT_APPLICABLE", "'" + path + "' has no tables region to drop");
  // The tensors end where the region starts (or, for an unusable reference, where the footer does).
  const bool sane = ft.cells_error.empty();
  const uint64_t keep = sane ? ft.cells_offset : ft.payload_limit;
  JsonValue root;
  std::string err;
  if (!json_parse(ft.history_json.data(), ft.history_json.size(), &root, &err))
    fail("TET_FOOTER_INVALID", "the footer JSON does not parse: " + err);
  const JsonValue* hist = root.find("history");
  const std::string history = hist ? json_serialize(*hist) : "[]";
  std::vector<uint8_t> head(f->base(), f->base() + 32);
  return rewrite_file(path, *f, head, 32, keep, footer_region_bytes(keep, history, ft.metadata_json, ""));
}
}  // namespace tet
