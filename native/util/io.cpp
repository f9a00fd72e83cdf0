#include "util/io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include "tet/error.h"

namespace tet {

std::string errno_text(int err) { return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")"; }

void advise_file(int fd, uint64_t offset, uint64_t len, FileAdvice advice) noexcept {
#if defined(POSIX_FADV_NORMAL) && defined(POSIX_FADV_SEQUENTIAL) && defined(POSIX_FADV_WILLNEED)
  const int a = advice == FileAdvice::Sequential ? POSIX_FADV_SEQUENTIAL
                : advice == FileAdvice::WillNeed ? POSIX_FADV_WILLNEED : POSIX_FADV_NORMAL;
  ::posix_fadvise(fd, off_t(offset), off_t(len), a);
#else
  (void)fd, (void)offset, (void)len, (void)advice;
#endif
}

bool pages_resident(const void* p, uint64_t len) noexcept {
#ifndef __linux__
  return (void)p, (void)len, false;  // (mincore's vector type differs elsewhere: not told)
#else
  if (len == 0) return true;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), first = a / uintptr_t(page) * uintptr_t(page);
  if (len > (uint64_t(1) << 40)) return false;
  const uint64_t span = (a - first) + len, pages = (span + uint64_t(page) - 1) / uint64_t(page);
  unsigned char vec[256];
  for (uint64_t done = 0; done < pages;) {
    const uint64_t n = std::min<uint64_t>(pages - done, sizeof vec);
    if (::mincore(reinterpret_cast<void*>(first + done * uint64_t(page)), size_t(n * uint64_t(page)), vec) != 0) return false;
    for (uint64_t i = 0; i < n; ++i)
      if (!(vec[i] & 1)) return false;
    done += n;
  }
  return true;
#endif
}

void populate_read(const void* p, uint64_t len) noexcept {
#if defined(__linux__)
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14 (older headers lack it; older kernels say EINVAL)
#endif
  const long page = ::sysconf(_SC_PAGESIZE);
  if (len == 0 || page <= 0) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p), first = a / uintptr_t(page) * uintptr_t(page);
  ::madvise(reinterpret_cast<void*>(first), size_t((a - first) + len), MADV_POPULATE_READ);
#else
  (void)p, (void)len;
#endif
}

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
bool huge_scratch(size_t bytes) {
#ifdef MADV_HUGEPAGE
  return bytes >= kHugeScratchMin;
#else
  return (void)bytes, false;
#endif
}
size_t huge_length(size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

void* scratch_alloc(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (!huge_scratch(bytes)) {
    void* p = nullptr;
    if (::posix_memalign(&p, 64, bytes) != 0) throw std::bad_alloc();
    return p;
  }
  if (bytes > std::numeric_limits<size_t>::max() - 2 * kHugePage) throw std::bad_alloc();
  // Map a huge page more than needed, keep the 2 MiB-aligned part, return the rest.
  const size_t len = huge_length(bytes), span = len + kHugePage;
  void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t at = (base + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (at > base) ::munmap(m, at - base);
  if (base + span > at + len) ::munmap(reinterpret_cast<void*>(at + len), base + span - (at + len));
  void* p = reinterpret_cast<void*>(at);
#ifdef MADV_HUGEPAGE
  ::madvise(p, len, MADV_HUGEPAGE);
#endif
  return p;
}

void scratch_free(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes == 0) bytes = 1;
  if (huge_scratch(bytes)) ::munmap(p, huge_length(bytes));
  else std::free(p);
}

AlignedBuffer::AlignedBuffer(size_t bytes, size_t align) : size_(bytes) {
  const size_t n = bytes > 0 ? bytes : 1;
  if (align <= 64 || (huge_scratch(n) && align <= kHugePage)) {
    data_ = static_cast<uint8_t*>(scratch_alloc(n));
    return;
  }
  void* p = nullptr;
  if (::posix_memalign(&p, align, n) != 0) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);
  heap_ = true;
}

AlignedBuffer::~AlignedBuffer() {
  if (heap_) std::free(data_);
  else scratch_free(data_, size_ > 0 ? size_ : 1);
}

ScratchMapping::~ScratchMapping() {
  if (addr != kNoMapping && addr != MAP_FAILED) ::munmap(addr, len);
  if (fd >= 0) ::close(fd);
}

namespace {
[[noreturn]] void errno_fail(const char* code, const std::string& what, const std::string& path) {
  fail(code, what + " '" + path + "': " + std::strerror(errno));
}
}  // namespace

void map_shared_file(ScratchMapping& m, const std::string& path, uint64_t bytes) {
  if (::ftruncate(m.fd, off_t(bytes)) != 0) errno_fail("TET_IO_WRITE", "cannot size", path);
  m.len = size_t(bytes);
  void* p = ::mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
  if (p == MAP_FAILED) {
    // No address space for it (a huge selection, a small virtual-memory limit): a budget
    // matter, not a write error.
    if (errno == ENOMEM)
      fail("TET_BUDGET_EXCEEDED", "cannot map " + std::to_string(bytes) + " bytes of '" + path +
                                      "' (out of address space); select less or raise the memory limit");
    errno_fail("TET_IO_WRITE", "cannot map", path);
  }
  m.addr = p;
}

void map_anonymous(ScratchMapping& m, uint64_t bytes) {
  if (bytes > (uint64_t(1) << 62)) throw std::bad_alloc();
  m.len = size_t(bytes > 0 ? bytes : 1);
  void* p = ::mmap(nullptr, m.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  m.addr = p;
#ifdef MADV_HUGEPAGE
  ::madvise(m.addr, m.len, MADV_HUGEPAGE);
#endif
}

int create_exclusive(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) errno_fail("TET_IO_OPEN", "cannot create spill file", path);
  return fd;
}

int create_unlinked_temp(const std::string& dir, const std::string& prefix) {
  std::string tmpl = dir + "/" + prefix + "XXXXXX";
  const int fd = ::mkstemp(&tmpl[0]);
  if (fd < 0) errno_fail("TET_IO_OPEN", "cannot create temp file in", dir);
  ::unlink(tmpl.c_str());
  return fd;
}

void sync_mapping(const ScratchMapping& m, const std::string& path) {
  if (::msync(m.addr, m.len, MS_SYNC) != 0) errno_fail("TET_IO_WRITE", "cannot flush spill file", path);
  if (::fsync(m.fd) != 0) errno_fail("TET_IO_WRITE", "cannot sync spill file", path);
}

void rename_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) errno_fail("TET_IO_WRITE", "cannot rename spill file to", to);
}

void remove_file(const std::string& path) noexcept { ::unlink(path.c_str()); }

uint64_t process_id() noexcept { return uint64_t(::getpid()); }

Mapping map_file_readonly(const std::string& path) {
  Mapping m;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("TET_IO_OPEN", "cannot open '" + path + "': " + errno_text(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail("TET_IO_OPEN", "cannot stat '" + path + "': " + errno_text(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("TET_IO_OPEN", "'" + path + "' is not a regular file");
  }
  m.fd = fd;
  m.len = static_cast<uint64_t>(st.st_size);
  if (m.len == 0) return m;
  if (m.len > static_cast<uint64_t>(SIZE_MAX)) {
    ::close(fd);
    fail("TET_IO_OPEN", "'" + path + "' is too large to map (" + std::to_string(m.len) + " bytes)");
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(m.len), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    fail("TET_IO_OPEN", "cannot map '" + path + "' (" + std::to_string(m.len) + " bytes): " + errno_text(e));
  }
  m.data = static_cast<const uint8_t*>(p);
  return m;
}

void unmap_file(Mapping& m) noexcept {
  if (m.data) ::munmap(const_cast<uint8_t*>(m.data), static_cast<size_t>(m.len));
  if (m.fd >= 0) ::close(m.fd);
  m = Mapping{};
}

int pwrite_full(int fd, const void* buf, size_t len, uint64_t offset) noexcept {
  const uint8_t* p = static_cast<const uint8_t*>(buf);
  while (len > 0) {
    size_t step = len > (size_t(1) << 30) ? (size_t(1) << 30) : len;
    ssize_t n = ::pwrite(fd, p, step, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return ENOSPC;
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

int pread_full(int fd, void* buf, size_t len, uint64_t offset) noexcept {
  uint8_t* p = static_cast<uint8_t*>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return -1;
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return 0;
}

std::string dir_of(const std::string& path) {
  size_t k = path.find_last_of('/');
  if (k == std::string::npos) return ".";
  if (k == 0) return "/";
  return path.substr(0, k);
}

std::string base_of(const std::string& path) {
  size_t k = path.find_last_of('/');
  return k == std::string::npos ? path : path.substr(k + 1);
}

int fsync_dir_of(const std::string& path) noexcept {
  int fd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  // Some file systems refuse fsync on directories; that is not a data-loss error.
  return rc == EINVAL ? 0 : rc;
}

std::string temp_path_beside(const std::string& path) {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (uint64_t(::getpid()) << 32));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()));
  std::string dir = dir_of(path);
  std::string prefix = path.find('/') == std::string::npos ? "" : dir + (dir == "/" ? "" : "/");
  return prefix + "." + base_of(path) + ".tmp-" + std::to_string(::getpid()) + "-" + hex;
}

}  // namespace tet
