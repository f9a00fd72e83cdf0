// libFuzzer target: a whole file image through tet::File::from_memory (superblock, directory,
// chunk index, footer, metadata spill), with and without footer verification. A parsed file
// must be self-consistent: every chunk maps to an entry whose payload lies inside the image.
#include <cstdlib>

#include "fuzz/fuzz_common.h"

namespace {

void check_consistent(const tet::Catalog& cat, uint64_t len) {
  for (const tet::DatasetInfo& d : cat.datasets) {
    if (d.chunk_to_entry.size() != d.chunk_count) std::abort();
    for (uint32_t e : d.chunk_to_entry) {
      if (e >= cat.entries.size()) std::abort();
      const tet::ChunkEntry& ce = cat.entries[e];
      if (ce.payload_offset > len || ce.stored_byte_len > len - ce.payload_offset) std::abort();
    }
  }
}

void write_seeds(const char* out) {
  uint32_t n = 0;
  for (const std::string& p : tet_fuzz::tet_files(tet_fuzz::fixtures_dir(), 256 * 1024)) {
    std::vector<uint8_t> b = tet_fuzz::read_bytes(p);
    tet_fuzz::write_bytes(std::string(out) + "/fixture-" + std::to_string(n++), b.data(), b.size());
  }
  std::vector<uint8_t> w = tet_fuzz::writer_sample(tet_fuzz::temp_file_name("open"));
  tet_fuzz::write_bytes(std::string(out) + "/writer-sample", w.data(), w.size());
  std::printf("open_fuzz: wrote %u fixture seeds + 1 writer seed to %s\n", n, out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (bool verify_footer : {true, false}) {
    tet::OpenOptions opts;
    opts.verify_footer = verify_footer;
    try {
      auto f = tet::File::from_memory(data, size, opts);
      check_consistent(f->catalog(), size);
    } catch (const tet::Error&) {
    }
  }
  return 0;
}
