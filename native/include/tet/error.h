// One error type for the whole core. `code` is a stable TET_* identifier listed in
// error_codes.def (which also generates lib/error-codes.generated.ts); `message` says what was
// expected and what was found; `detail` says where, as data (reaches JS as `err.detail`).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tet/error_codes.h"

namespace tet {

// Where an error happened, for callers that act on it (retry a shard, report a chunk) without
// parsing the message. Every field is optional; napi/ sets only the ones present.
struct ErrorDetail {
  std::string dataset;                  // dataset name; empty = not known
  std::optional<std::vector<uint64_t>> chunk;  // chunk grid coordinates, ndim entries
  std::optional<uint64_t> shard;        // shard number (sharded execution)
  std::optional<uint64_t> unit;         // work unit id within the plan
  std::string path;                     // file the error is about; empty = not known

  bool empty() const { return dataset.empty() && !chunk && !shard && !unit && path.empty(); }
};

class Error : public std::runtime_error {
 public:
  Error(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  Error(std::string code, const std::string& message, ErrorDetail detail)
      : std::runtime_error(message), code_(std::move(code)), detail_(std::move(detail)) {}
  Error(Code code, const std::string& message, ErrorDetail detail = {})
      : Error(code_name(code), message, std::move(detail)) {}
  const std::string& code() const { return code_; }
  const ErrorDetail& detail() const { return detail_; }

 private:
  std::string code_;
  ErrorDetail detail_;
};

[[noreturn]] inline void fail(const char* code, const std::string& message) { throw Error(code, message); }
[[noreturn]] inline void fail(const char* code, const std::string& message, ErrorDetail detail) {
  throw Error(code, message, std::move(detail));
}
[[noreturn]] inline void fail(Code code, const std::string& message, ErrorDetail detail = {}) {
  throw Error(code, message, std::move(detail));
}

}  // namespace tet
