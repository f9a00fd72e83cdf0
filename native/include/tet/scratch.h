// Scratch memory for decoded tiles, pread windows and scan buffers. A fresh 4 KiB page costs a
// page fault on its first touch (~0.3-0.4 GB/s on the shared VMs we measure: a 16 MiB tile
// decoded into fresh heap memory spends ~40 ms in faults); a 2 MiB transparent huge page costs one
// (~10 GB/s). So a large scratch buffer (kHugeScratchMin bytes or more) is an anonymous mapping
// aligned to 2 MiB with huge pages asked for (madvise; where the kernel has them off it is an
// ordinary mapping, as fast as the heap's); smaller ones come from the heap. ScratchBytes is a
// byte vector on that memory whose resize leaves new bytes uninitialised (every user writes them
// before reading: a decoder, a pread, a copy), so they are touched once, by their writer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace tet {

// Buffers of at least this many bytes are mapped with huge pages asked for.
constexpr size_t kHugeScratchMin = size_t(256) << 10;

// At least `bytes` (>= 1) bytes aligned to 64 (to 2 MiB from kHugeScratchMin on); bad_alloc on failure.
void* scratch_alloc(size_t bytes);
// Frees what scratch_alloc(bytes) returned (the same `bytes`).
void scratch_free(void* p, size_t bytes) noexcept;

template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() noexcept = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(scratch_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { scratch_free(p, n * sizeof(T)); }
  // Default-initialisation: resize(n) leaves trivial elements as they are; resize(n, v) fills.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <class U>
  bool operator==(const ScratchAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const ScratchAllocator<U>&) const noexcept { return false; }
};

using ScratchBytes = std::vector<uint8_t, ScratchAllocator<uint8_t>>;

}  // namespace tet
