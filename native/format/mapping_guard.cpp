#include "format/mapping_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace tet {
namespace {

// The handler may not lock or allocate, so guarded ranges live in a fixed lock-free table. A slot
// is claimed by CAS on `owner`; `begin` is published last (release) and cleared first, so the
// handler (acquire on begin) only ever sees a complete range.
struct GuardSlot {
  std::atomic<uintptr_t> owner{0};  // base address of the claiming mapping, 0 = free
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
};
constexpr size_t kSlots = 4096;  // open mappings guarded at once
GuardSlot g_slots[kSlots];
uintptr_t g_page_size = 4096;
struct sigaction g_previous;

void chain_to_previous(int sig, siginfo_t* info, void* uctx) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, uctx);
    return;
  }
  if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    // Restore the default action; returning re-executes the access, which faults again and
    // terminates the process exactly as it would have without us.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
    return;
  }
  g_previous.sa_handler(sig);
}

void on_sigbus(int sig, siginfo_t* info, void* uctx) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (GuardSlot& s : g_slots) {
    const uintptr_t b = s.begin.load(std::memory_order_acquire);
    if (b == 0 || addr < b || addr >= s.end.load(std::memory_order_relaxed)) continue;
    const uintptr_t page = addr & ~(g_page_size - 1);
    // mmap is a plain system call on Linux and macOS, safe to issue from a signal handler.
    void* p = ::mmap(reinterpret_cast<void*>(page), g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                     -1, 0);
    if (p == MAP_FAILED) break;
    s.faulted.store(true, std::memory_order_relaxed);
    return;
  }
  chain_to_previous(sig, info, uctx);
}

void install_handler() {
  const long ps = ::sysconf(_SC_PAGESIZE);
  if (ps > 0) g_page_size = static_cast<uintptr_t>(ps);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

GuardSlot* find(const uint8_t* base) {
  const uintptr_t key = reinterpret_cast<uintptr_t>(base);
  for (GuardSlot& s : g_slots)
    if (s.owner.load(std::memory_order_acquire) == key) return &s;
  return nullptr;
}

}  // namespace

bool guard_mapping(const uint8_t* base, uint64_t len) noexcept {
  if (base == nullptr || len == 0) return true;  // nothing mapped, nothing to fault
  static std::once_flag once;
  std::call_once(once, install_handler);
  const uintptr_t key = reinterpret_cast<uintptr_t>(base);
  for (GuardSlot& s : g_slots) {
    uintptr_t free_owner = 0;
    if (!s.owner.compare_exchange_strong(free_owner, key, std::memory_order_acq_rel)) continue;
    s.faulted.store(false, std::memory_order_relaxed);
    s.end.store(key + len, std::memory_order_relaxed);
    s.begin.store(key, std::memory_order_release);
    return true;
  }
  return false;
}

void unguard_mapping(const uint8_t* base) noexcept {
  if (GuardSlot* s = find(base)) {
    s->begin.store(0, std::memory_order_release);
    s->end.store(0, std::memory_order_relaxed);
    s->owner.store(0, std::memory_order_release);
  }
}

bool mapping_faulted(const uint8_t* base) noexcept {
  const GuardSlot* s = find(base);
  return s != nullptr && s->faulted.load(std::memory_order_relaxed);
}

}  // namespace tet
