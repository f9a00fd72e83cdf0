// libFuzzer target: tet::decode_payload on one stored payload. Input layout:
//   byte 0: codec (bit 0: 0 raw, 1 zstd; other values exercise the unsupported-codec path)
//   bytes 1..4: raw_byte_len (u32 LE), bytes 5..: the stored payload.
// A successful decode must produce exactly raw_byte_len bytes.
#include <cstdlib>

#include "fuzz/fuzz_common.h"

namespace {

void write_seeds(const char* out) {
  uint32_t n = 0;
  for (const std::string& p : tet_fuzz::tet_files(tet_fuzz::fixtures_dir(), 1 << 20)) {
    std::vector<uint8_t> img = tet_fuzz::read_bytes(p);
    try {
      auto f = tet::File::from_memory(img.data(), img.size());
      for (const tet::ChunkEntry& e : f->catalog().entries) {
        if (e.raw_byte_len > 0xffffffffu || e.stored_byte_len > (64u << 10) || n > 400) continue;
        std::vector<uint8_t> s(5 + e.stored_byte_len);
        s[0] = static_cast<uint8_t>(e.codec);
        const uint32_t raw = static_cast<uint32_t>(e.raw_byte_len);
        std::memcpy(&s[1], &raw, 4);
        std::memcpy(&s[5], img.data() + e.payload_offset, e.stored_byte_len);
        tet_fuzz::write_bytes(std::string(out) + "/payload-" + std::to_string(n++), s.data(), s.size());
      }
    } catch (const tet::Error&) {
    }
  }
  std::printf("decode_fuzz: wrote %u payload seeds to %s\n", n, out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  tet::ChunkEntry e;
  e.codec = static_cast<tet::Codec>(data[0] & 3);  // 2, 3: not a codec
  uint32_t raw = 0;
  std::memcpy(&raw, data + 1, 4);
  // A tile is at most what the catalog allows; 16 MiB keeps honest RLE-sized outputs in reach
  // without tripping libFuzzer's RSS limit on frames that do not declare their size.
  if (raw > (16u << 20)) return 0;
  e.raw_byte_len = raw;
  e.stored_byte_len = size - 5;
  // The stored bytes get their own heap copy so ASan sees reads past the payload.
  std::vector<uint8_t> stored(data + 5, data + size);
  tet::ScratchBytes out;
  try {
    tet::decode_payload(e, stored.data(), out, "fuzz");
    if (out.size() != e.raw_byte_len) std::abort();
  } catch (const tet::Error&) {
  }
  return 0;
}
