// SIGBUS safety for read-only file mappings. Another process may truncate a .tet file while we
// hold it mapped; touching a page past the new end raises SIGBUS, which would kill the process
// (and every other query in it). A guarded mapping instead gets a zero page mapped over the
// faulting page, the access completes, and the mapping is marked faulted; File::check_unchanged
// (run before and after every query) then reports TET_IO_FILE_CHANGED. Zero pages never reach a
// caller as data: any result computed while a fault happened is discarded by that check.
#pragma once
#include <cstdint>

namespace tet {

// Registers [base, base + len). Installs the process-wide SIGBUS handler on first use (faults
// outside guarded ranges go to the previous handler). Returns false when the fixed table of
// guarded mappings is full; the mapping then keeps the default SIGBUS behaviour.
bool guard_mapping(const uint8_t* base, uint64_t len) noexcept;
void unguard_mapping(const uint8_t* base) noexcept;
// True once a page of the mapping starting at base vanished under us (sticky).
bool mapping_faulted(const uint8_t* base) noexcept;

}  // namespace tet
