// POSIX file helpers shared by the reader (read-only mmap) and the writer / repair (full
// writes, fsync, directory fsync, unique temp names). Failures become tet::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tet {

// Read-only private mapping of a whole file. A zero-length file maps to {nullptr, 0}.
struct Mapping {
  int fd = -1;
  const uint8_t* data = nullptr;
  uint64_t len = 0;
};
Mapping map_file_readonly(const std::string& path);  // throws TET_IO_OPEN
void unmap_file(Mapping& m) noexcept;

std::string errno_text(int err);
// Writes all of buf at offset (retries short writes and EINTR). Returns 0 or an errno value.
int pwrite_full(int fd, const void* buf, size_t len, uint64_t offset) noexcept;
int pread_full(int fd, void* buf, size_t len, uint64_t offset) noexcept;  // 0, errno, or -1 on EOF
int fsync_dir_of(const std::string& path) noexcept;  // 0 or errno

std::string dir_of(const std::string& path);    // "." when path has no slash
std::string base_of(const std::string& path);
// "<dir>/.<base>.tmp-<pid>-<random hex>": unique name beside `path` for atomic replace.
std::string temp_path_beside(const std::string& path);

}  // namespace tet
