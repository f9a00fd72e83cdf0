// zstd frames for tile payloads (vendored libzstd). Decoding is strict: the frame must decode
// to exactly the entry's raw_byte_len and a present content checksum must match.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tet/scratch.h"

namespace tet {

// One frame with the content size recorded and no checksum (what ZSTD_compress writes).
// Throws TET_WRITE_COMPRESS on failure.
void zstd_compress_frame(const uint8_t* src, size_t len, int level, std::vector<uint8_t>& out);

// Decodes into out[0, raw_len) (out is resized). `context` prefixes messages
// (e.g. "dataset 'a' entry 3 chunk_index (1, 1)"). Throws TET_DECODE_ZSTD / TET_DECODE_LENGTH.
void zstd_decode_exact(const uint8_t* src, size_t stored_len, uint64_t raw_len, ScratchBytes& out,
                       const std::string& context);

}  // namespace tet
