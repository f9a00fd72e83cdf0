// verify_tiles / verify_open / repair_footer (see tet/verify.h).
#include "tet/verify.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tet/error.h"
#include "util/checked.h"
#include "util/io.h"

namespace tet {

std::vector<VerifyFinding> verify_tiles(const File& file, uint64_t first, uint64_t count) {
  std::vector<VerifyFinding> findings;
  const Catalog& cat = file.catalog();
  uint64_t n = cat.entries.size();
  if (first >= n || count == 0) return findings;
  uint64_t last = count > n - first ? n : first + count;
  file.check_unchanged();
  std::vector<uint8_t> scratch;
  for (uint64_t i = first; i < last; ++i) {
    const ChunkEntry& e = cat.entries[static_cast<size_t>(i)];
    if (e.codec == Codec::Raw) continue;  // length and bounds verified at open; nothing to decode
    const DatasetInfo& ds = cat.datasets[static_cast<size_t>(e.dataset_id)];
    std::string context = "dataset '" + ds.name + "' entry " + std::to_string(i) + " chunk_index (";
    for (uint32_t a = 0; a < ds.ndim; ++a) context += (a ? ", " : "") + std::to_string(e.coords[a]);
    context += ")";
    try {
      decode_payload(e, file.base() + e.payload_offset, scratch, context);
    } catch (const Error& err) {
      findings.push_back({"error", err.code(), "", err.what()});
    }
  }
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
  if (int err = pwrite_full(fd, head.data(), head.size(), 0)) bail("cannot write", err);
  if (keep > 32)
    if (int err = pwrite_full(fd, f->base() + 32, static_cast<size_t>(keep - 32), 32)) bail("cannot write", err);
  if (::fsync(fd) != 0) bail("cannot fsync", errno);
  try {
    f->check_unchanged();
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
  return keep;
}

}  // namespace tet
