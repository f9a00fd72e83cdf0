// decode_payload: stored payload bytes -> logical tile bytes, per the entry's codec.
#include <cstring>

#include "codec/zstd_codec.h"
#include "tet/error.h"
#include "tet/file.h"

namespace tet {

ErrorDetail chunk_detail(const DatasetInfo& ds, const ChunkEntry& entry, const std::string& path) {
  ErrorDetail d;
  d.dataset = ds.name;
  d.chunk.emplace(entry.coords.begin(), entry.coords.begin() + (ds.ndim < entry.coords.size() ? ds.ndim : entry.coords.size()));
  d.path = path;
  return d;
}

void decode_payload(const ChunkEntry& entry, const uint8_t* stored, ScratchBytes& out,
                    const std::string& context) {
  switch (entry.codec) {
    case Codec::Raw:
      if (entry.stored_byte_len != entry.raw_byte_len)
        fail("TET_PAYLOAD_LENGTH", context + ": raw codec but stored_byte_len " + std::to_string(entry.stored_byte_len) +
                                       " != raw_byte_len " + std::to_string(entry.raw_byte_len));
      out.resize(static_cast<size_t>(entry.raw_byte_len));
      if (entry.raw_byte_len) std::memcpy(out.data(), stored, static_cast<size_t>(entry.raw_byte_len));
      return;
    case Codec::Zstd:
      zstd_decode_exact(stored, static_cast<size_t>(entry.stored_byte_len), entry.raw_byte_len, out, context);
      return;
  }
  fail("TET_INDEX_BAD_CODEC", context + ": unsupported codec " + std::to_string(static_cast<uint32_t>(entry.codec)));
}

}  // namespace tet
