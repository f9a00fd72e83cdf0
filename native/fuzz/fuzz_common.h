// Shared helpers for the libFuzzer targets: reading seed files, writing seeds, and the small
// files a target builds at start-up with tet::Writer (so seeds and fixed catalogs come from the
// real writer, not hand-made bytes).
#pragma once
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tet/error.h"
#include "tet/file.h"
#include "tet/writer.h"

namespace tet_fuzz {

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const uint8_t* p, size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
}

// *.tet files in dir (not recursive), skipping ones above max_bytes (slow seeds help nobody).
inline std::vector<std::string> tet_files(const std::string& dir, uint64_t max_bytes) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".tet") != 0) continue;
    std::string path = dir + "/" + name;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && static_cast<uint64_t>(in.tellg()) <= max_bytes) out.push_back(path);
  }
  ::closedir(d);
  return out;
}

template <class T> std::vector<uint8_t> le_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// A small multi-dataset file written by tet::Writer: f32 rank 3 (zstd, ragged edges), i64 rank 2
// (raw), f16 rank 1 (auto codec), u8 rank 4, u16 rank 2 with a footer. Returns its bytes.
inline std::vector<uint8_t> writer_sample(const std::string& tmp_path) {
  auto w = tet::Writer::create(tmp_path);
  struct DS { const char* name; tet::DType t; std::vector<uint64_t> shape, chunk; tet::CodecChoice c; };
  const DS specs[] = {
      {"temp", tet::DType::F32, {5, 7, 3}, {2, 3, 2}, tet::CodecChoice::Zstd},
      {"counts", tet::DType::I64, {9, 4}, {4, 4}, tet::CodecChoice::Raw},
      {"half", tet::DType::F16, {33}, {8}, tet::CodecChoice::Auto},
      {"mask", tet::DType::U8, {2, 3, 2, 5}, {1, 2, 2, 3}, tet::CodecChoice::Raw},
      {"grid", tet::DType::U16, {6, 6}, {6, 6}, tet::CodecChoice::Zstd},
  };
  for (const DS& s : specs) {  // the writer wants every dataset declared before any tile
    tet::DatasetSpec spec;
    spec.name = s.name;
    spec.dtype = s.t;
    spec.shape = s.shape;
    spec.chunk_shape = s.chunk;
    spec.codec = s.c;
    w->add_dataset(spec);
  }
  uint32_t id = 0;
  for (const DS& s : specs) {
    // Tiles in grid order; values follow the global linear index so folds see varied data.
    const size_t nd = s.shape.size(), es = tet::dtype_size(s.t);
    std::vector<uint64_t> grid(nd);
    uint64_t chunks = 1;
    for (size_t a = 0; a < nd; ++a) grid[a] = (s.shape[a] + s.chunk[a] - 1) / s.chunk[a], chunks *= grid[a];
    for (uint64_t lin = 0; lin < chunks; ++lin) {
      std::vector<uint64_t> c(nd), t(nd);
      uint64_t r = lin, n = 1;
      for (size_t a = nd; a-- > 0;) c[a] = r % grid[a], r /= grid[a];
      for (size_t a = 0; a < nd; ++a) t[a] = std::min(s.chunk[a], s.shape[a] - c[a] * s.chunk[a]), n *= t[a];
      std::vector<uint8_t> tile(n * es);
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t rest = k, global = 0, stride = 1;
        for (size_t a = nd; a-- > 0;) {
          global += (c[a] * s.chunk[a] + rest % t[a]) * stride;
          rest /= t[a];
          stride *= s.shape[a];
        }
        const double v = (global % 7 == 3) ? -1.5 * double(global) : double(global) * 0.25;
        uint8_t* p = tile.data() + k * es;
        switch (s.t) {
          case tet::DType::F32: { float f = float(v); std::memcpy(p, &f, 4); break; }
          case tet::DType::I64: { int64_t i = int64_t(v * 4); std::memcpy(p, &i, 8); break; }
          case tet::DType::F16: { uint16_t h = tet::f32_to_f16(float(v)); std::memcpy(p, &h, 2); break; }
          case tet::DType::U8: p[0] = uint8_t(global * 37); break;
          default: { uint16_t u = uint16_t(global * 1000); std::memcpy(p, &u, 2); break; }
        }
      }
      w->write_chunk(id, c, tile.data(), tile.size());
    }
    ++id;
  }
  w->set_footer("[{\"op\":\"fuzz-seed\",\"source\":\"writer_sample\",\"at\":\"2024-01-01T00:00:00Z\"}]",
                "{\"title\":\"fuzz \\u00e9\",\"datasets\":{\"temp\":{\"dim_names\":[\"t\",\"y\",\"x\"]}}}");
  w->commit();
  std::vector<uint8_t> bytes = read_bytes(tmp_path);
  ::unlink(tmp_path.c_str());
  return bytes;
}

inline std::string temp_file_name(const char* tag) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/tet-fuzz-" + tag + "-" + std::to_string(::getpid()) + ".tet";
}

// Seed mode: `TET_FUZZ_SEEDS_OUT=<dir> TET_FUZZ_FIXTURES=<dir> ./x_fuzz` writes the target's
// seeds and exits instead of fuzzing (scripts/fuzz.sh uses it to build each corpus).
inline const char* seeds_out() { return std::getenv("TET_FUZZ_SEEDS_OUT"); }

// Seed mode (scripts/fuzz.sh): with TET_FUZZ_SEEDS_OUT set, write the target's seed corpus there
// and exit instead of fuzzing. Called from each target's LLVMFuzzerInitialize.
inline void write_seeds_and_exit_if_asked(void (*write_seeds)(const char* out)) {
  if (const char* out = seeds_out()) {
    write_seeds(out);
    std::exit(0);
  }
}
inline std::string fixtures_dir() {
  const char* d = std::getenv("TET_FUZZ_FIXTURES");
  return d ? d : "";
}

}  // namespace tet_fuzz
