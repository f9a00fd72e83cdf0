// One error type for the whole core. `code` is a stable TET_* identifier mirrored in
// lib/errors.ts; `message` says what was expected and what was found.
#pragma once
#include <stdexcept>
#include <string>

namespace tet {

// Stable codes. Keep in sync with lib/errors.ts (ERROR_CODES). Grouped by category prefix:
// TET_FORMAT_* (superblock/directory), TET_INDEX_*, TET_PAYLOAD_*, TET_DECODE_*, TET_FOOTER_*,
// TET_IO_*, TET_PLAN_*, TET_BUDGET_*, TET_CANCELLED, TET_WRITE_*, TET_INTERNAL.
class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

[[noreturn]] inline void fail(const char* code, const std::string& message) { throw Error(code, message); }

}  // namespace tet
