// POSIX file helpers shared by the reader (read-only mmap, range reads with access hints), the
// executor (aligned scan windows, anonymous and file-backed scratch mappings, spill files) and
// the writer / repair (full writes, fsync, directory fsync, unique temp names). Every raw POSIX
// call of exec/ lives here. Failures become tet::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "tet/scratch.h"

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

// Whether every page of [p, p + len) is in memory (mincore; p lies in a mapping): reading them
// will not wait for the disk. False where it cannot tell (no mincore, a range it refuses).
bool pages_resident(const void* p, uint64_t len) noexcept;

// Maps the pages of [p, p + len) (in a file mapping) into this process's page tables now
// (madvise MADV_POPULATE_READ, Linux 5.14+), so that later reads of them do not fault. Best
// effort: nothing where the kernel cannot, and a page that is gone is skipped, never a signal.
void populate_read(const void* p, uint64_t len) noexcept;

// Access hints (posix_fadvise where available; a no-op elsewhere). len 0: to the end.
enum class FileAdvice { Normal, Sequential, WillNeed };
void advise_file(int fd, uint64_t offset, uint64_t len, FileAdvice advice) noexcept;

// A buffer aligned to `align` bytes (a power of two), at least one byte; bad_alloc on failure.
// Scratch memory (tet/scratch.h: huge pages from kHugeScratchMin bytes on) where the alignment
// allows, else the heap.
class AlignedBuffer {
 public:
  AlignedBuffer(size_t bytes, size_t align);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool heap_ = false;  // posix_memalign'd (an alignment scratch memory does not give)
};
// Writes all of buf at offset (retries short writes and EINTR). Returns 0 or an errno value.
int pwrite_full(int fd, const void* buf, size_t len, uint64_t offset) noexcept;
int pread_full(int fd, void* buf, size_t len, uint64_t offset) noexcept;  // 0, errno, or -1 on EOF
int fsync_dir_of(const std::string& path) noexcept;  // 0 or errno

// A read-write mapping owned by the executor (scratch or spill), unmapped and its descriptor
// closed on every exit path. addr == kNoMapping until mapped; fd -1 for anonymous mappings.
struct ScratchMapping {
  static inline void* const kNoMapping = reinterpret_cast<void*>(~uintptr_t(0));  // == MAP_FAILED
  void* addr = kNoMapping;
  size_t len = 0;
  int fd = -1;
  ScratchMapping() = default;
  ScratchMapping(const ScratchMapping&) = delete;
  ScratchMapping& operator=(const ScratchMapping&) = delete;
  ~ScratchMapping();
  uint8_t* data() const { return static_cast<uint8_t*>(addr); }
};
// Sizes m.fd's file to `bytes` and maps it shared read-write (TET_IO_WRITE naming `path`).
void map_shared_file(ScratchMapping& m, const std::string& path, uint64_t bytes);
// An anonymous private read-write mapping of max(bytes, 1) bytes, with transparent huge pages
// where the kernel allows them (a large buffer otherwise spends its fill time in page faults).
// Throws std::bad_alloc.
void map_anonymous(ScratchMapping& m, uint64_t bytes);
// Creates `path` exclusively (O_EXCL) for writing; TET_IO_OPEN on failure.
int create_exclusive(const std::string& path);
// A new temp file in `dir`, already unlinked (gone from the directory whatever happens next):
// its descriptor. TET_IO_OPEN on failure.
int create_unlinked_temp(const std::string& dir, const std::string& prefix);
// msync + fsync of a file mapping (TET_IO_WRITE naming `path`).
void sync_mapping(const ScratchMapping& m, const std::string& path);
// rename(2) (TET_IO_WRITE naming `to`); unlink(2) ignoring errors.
void rename_file(const std::string& from, const std::string& to);
void remove_file(const std::string& path) noexcept;
uint64_t process_id() noexcept;

std::string dir_of(const std::string& path);    // "." when path has no slash
std::string base_of(const std::string& path);
// "<dir>/.<base>.tmp-<pid>-<random hex>": unique name beside `path` for atomic replace.
std::string temp_path_beside(const std::string& path);

}  // namespace tet
