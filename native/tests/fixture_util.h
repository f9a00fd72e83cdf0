// Helpers shared by the file-layer tests: fixture paths, the conformance manifest, reading
// whole files, and reassembling a dataset's global row-major bytes from its tiles.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tet/file.h"
#include "util/json.h"

namespace tet_test {

inline std::string shared_dir() {
  std::string repo = TET_SOURCE_DIR;
  std::ifstream probe(repo + "/shared/conformance/manifest.json");
  return probe ? repo + "/shared" : repo + "/../shared";
}
inline std::string conformance_dir() { return shared_dir() + "/conformance"; }
inline std::string reference_dir() { return shared_dir() + "/fixtures/reference/tet"; }

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline tet::JsonValue load_manifest() {
  std::vector<uint8_t> text = read_bytes(conformance_dir() + "/manifest.json");
  tet::JsonValue v;
  std::string err;
  if (!tet::json_parse(reinterpret_cast<const char*>(text.data()), text.size(), &v, &err))
    std::printf("  manifest.json: %s\n", err.c_str());
  return v;
}

// Global row-major bytes of one dataset, placed element by element from each clipped tile.
inline std::vector<uint8_t> assemble(const tet::File& f, uint32_t id) {
  const tet::DatasetInfo& d = f.catalog().datasets[id];
  size_t es = tet::dtype_size(d.dtype);
  std::vector<uint8_t> out(static_cast<size_t>(d.logical_bytes));
  tet::ScratchBytes scratch;
  for (uint64_t lin = 0; lin < d.chunk_count; ++lin) {
    auto c = tet::chunk_coords_of(d, lin);
    auto t = tet::tile_shape(d, c);
    tet::TileView v = f.tile(id, lin, scratch);
    uint64_t n = 1;
    for (uint32_t a = 0; a < d.ndim; ++a) n *= t[a];
    if (v.bytes != n * es) { std::printf("  tile %llu: %llu bytes\n", (unsigned long long)lin, (unsigned long long)v.bytes); continue; }
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t rest = k, global = 0, stride = 1;
      for (int a = static_cast<int>(d.ndim) - 1; a >= 0; --a) {
        uint64_t local = rest % t[a];
        rest /= t[a];
        global += (c[a] * d.chunk_shape[a] + local) * stride;
        stride *= d.shape[a];
      }
      std::memcpy(&out[global * es], v.data + k * es, es);
    }
  }
  return out;
}

// Element value as double (for small-integer and float checks).
inline double element_value(const tet::DatasetInfo& d, const uint8_t* p) {
  switch (d.dtype) {
    case tet::DType::F32: { float x; std::memcpy(&x, p, 4); return x; }
    case tet::DType::F64: { double x; std::memcpy(&x, p, 8); return x; }
    case tet::DType::I32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case tet::DType::I64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case tet::DType::U8: return p[0];
    case tet::DType::U16: { uint16_t x; std::memcpy(&x, p, 2); return x; }
    case tet::DType::I16: { int16_t x; std::memcpy(&x, p, 2); return x; }
    case tet::DType::U32: { uint32_t x; std::memcpy(&x, p, 4); return x; }
    case tet::DType::F16: { uint16_t x; std::memcpy(&x, p, 2); return tet::f16_to_f32(x); }
    case tet::DType::U64: { uint64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
  }
  return 0;
}

inline std::vector<double> values_of(const tet::File& f, uint32_t id) {
  const tet::DatasetInfo& d = f.catalog().datasets[id];
  std::vector<uint8_t> bytes = assemble(f, id);
  size_t es = tet::dtype_size(d.dtype);
  std::vector<double> v(bytes.size() / es);
  for (size_t i = 0; i < v.size(); ++i) v[i] = element_value(d, &bytes[i * es]);
  return v;
}

inline std::string temp_dir() {
  char tmpl[] = "/tmp/tet-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

}  // namespace tet_test

// check.h's CHECK_THROWS_CODE names its parameter `code`, which collides with e.code() in its
// body; this is the same check with a safe parameter name.
#define EXPECT_ERROR(expr, want_code) do { bool _t = false; try { (void)(expr); } catch (const tet::Error& _e) { _t = true; if (_e.code() != std::string(want_code)) { std::printf("  %s:%d code %s, want %s (%s)\n", __FILE__, __LINE__, _e.code().c_str(), want_code, _e.what()); ++tet_test::failures(); } } if (!_t) { std::printf("  %s:%d no throw: %s\n", __FILE__, __LINE__, #expr); ++tet_test::failures(); } } while (0)
