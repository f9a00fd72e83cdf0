// XXH64 from the vendored zstd sources (its xxhash, built under the ZSTD_ namespace): the
// checksum of the tables region ("cells" footer key) and of its structure part.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace tet {

uint64_t xxh64(const void* data, size_t len, uint64_t seed = 0);

// Streaming form, for regions written piecewise.
class Xxh64Stream {
 public:
  explicit Xxh64Stream(uint64_t seed = 0);
  ~Xxh64Stream();
  Xxh64Stream(const Xxh64Stream&) = delete;
  Xxh64Stream& operator=(const Xxh64Stream&) = delete;
  void update(const void* data, size_t len);
  uint64_t digest() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace tet
