#include "util/xxh64.h"

#define XXH_NAMESPACE ZSTD_
#define XXH_STATIC_LINKING_ONLY
#include "common/xxhash.h"

namespace tet {

uint64_t xxh64(const void* data, size_t len, uint64_t seed) { return XXH64(data, len, seed); }

struct Xxh64Stream::State {
  XXH64_state_t st;
};

Xxh64Stream::Xxh64Stream(uint64_t seed) : s_(new State) { XXH64_reset(&s_->st, seed); }
Xxh64Stream::~Xxh64Stream() = default;
void Xxh64Stream::update(const void* data, size_t len) { XXH64_update(&s_->st, data, len); }
uint64_t Xxh64Stream::digest() const { return XXH64_digest(&s_->st); }

}  // namespace tet
