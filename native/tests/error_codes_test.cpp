// error_codes.def as C++: the table is well formed, every code literal in native/ and lib/ is
// listed (the drift check: call sites keep their string literals), and chunk errors carry a
// Detail naming the dataset and chunk.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "check.h"
#include "fixture_util.h"
#include "tet/error.h"
#include "tet/file.h"

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool code_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Quoted literals TET_X..., excluding prefixes such as "TET_FOOTER_" (they end in '_').
std::set<std::string> code_literals(const std::string& text, const std::string& quotes) {
  std::set<std::string> out;
  for (size_t i = text.find("TET_"); i != std::string::npos; i = text.find("TET_", i + 1)) {
    if (i == 0 || quotes.find(text[i - 1]) == std::string::npos) continue;
    size_t j = i;
    while (j < text.size() && code_char(text[j])) ++j;
    if (j >= text.size() || text[j] != text[i - 1] || text[j - 1] == '_') continue;
    out.insert(text.substr(i, j - i));
  }
  return out;
}

// Names that look like codes but are environment variables, not errors.
// Environment variables, and the code of a warning (process.emitWarning when an onProgress
// callback throws, lib/progress.ts), which is not an error code.
const std::set<std::string> kNotCodes = {"TET_DEBUG", "TET_QUERY_HISTORY_MAX", "TET_FUZZ_FIXTURES", "TET_FUZZ_SEEDS_OUT",
                                         "TET_PROGRESS_CALLBACK", "TET_CUDA_MODULE", "TET_CUDA_DRIVER",
                                         "TET_CUDA_CACHE_BYTES", "TET_CUDA_STUB_FAIL"};

std::set<std::string> unknown_literals(const fs::path& root, const std::set<std::string>& exts, const std::string& quotes) {
  std::set<std::string> unknown;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == "vendor" || name == "tests" || name == "node_modules")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !exts.count(it->path().extension().string())) continue;
    for (const std::string& c : code_literals(read_text(it->path()), quotes))
      if (!tet::is_known_code(c) && !kNotCodes.count(c)) unknown.insert(c + " (" + it->path().string() + ")");
  }
  return unknown;
}

}  // namespace

TEST_CASE("the code table is indexed by Code, unique and prefixed") {
  std::set<std::string> seen;
  for (size_t i = 0; i < tet::kCodeCount; ++i) {
    const tet::CodeInfo& row = tet::kCodeTable[i];
    CHECK(static_cast<size_t>(row.code) == i);
    CHECK(std::string(row.name).rfind("TET_", 0) == 0);
    CHECK(seen.insert(row.name).second);
    CHECK(row.meaning[0] != '\0');
    CHECK(tet::find_code(row.name) == &row);
  }
  CHECK(tet::kCodeCount >= 98);
  CHECK(std::string(tet::code_name(tet::Code::TET_DECODE_ZSTD)) == "TET_DECODE_ZSTD");
  CHECK(tet::code_info(tet::Code::TET_CANCELLED).cls == tet::ErrorClass::Cancelled);
  CHECK(tet::code_info(tet::Code::TET_EXPORT_FAILED).cls == tet::ErrorClass::Convert);
  CHECK(!tet::is_known_code("TET_FORMAT_") && !tet::is_known_code(""));
  CHECK(tet::is_known_code("TET_FORMAT_TRUNCATED") && !tet::is_known_code("tet_format_truncated"));
}

TEST_CASE("every code literal in native/ and lib/ is in error_codes.def") {
  const fs::path root = TET_SOURCE_DIR;
  std::set<std::string> unknown = unknown_literals(root / "native", {".cpp", ".h"}, "\"");
  for (const std::string& u : unknown_literals(root / "lib", {".ts"}, "'\"`")) unknown.insert(u);
  for (const std::string& u : unknown) std::printf("  not in error_codes.def: %s\n", u.c_str());
  CHECK(unknown.empty());
  // The scanner itself finds codes (a scanner that finds nothing passes vacuously).
  CHECK(code_literals("fail(\"TET_IO_OPEN\", x); 'TET_QUERY_PARSE' \"TET_FOOTER_\"", "\"'").size() == 2);
}

TEST_CASE("fail(Code) and Error(Code) use the code's name; Detail travels with the error") {
  CHECK_THROWS_CODE(tet::fail(tet::Code::TET_IO_READ, "m"), "TET_IO_READ");
  try {
    tet::ErrorDetail d;
    d.dataset = "a";
    d.chunk = std::vector<uint64_t>{1, 2};
    d.unit = 7;
    tet::fail("TET_DECODE_ZSTD", "m", d);
  } catch (const tet::Error& e) {
    CHECK(e.detail().dataset == "a");
    CHECK(e.detail().chunk && *e.detail().chunk == (std::vector<uint64_t>{1, 2}));
    CHECK(e.detail().unit && *e.detail().unit == 7);
    CHECK(!e.detail().shard && !e.detail().empty());
  }
  CHECK(tet::Error("TET_INTERNAL", "m").detail().empty());
}

TEST_CASE("chunk decode and index errors name the dataset and chunk in detail") {
  using tet_test::conformance_dir;
  auto detail_of = [](const std::string& name) {
    const std::string path = conformance_dir() + "/fixtures/" + name + ".tet";
    try {
      auto f = tet::File::open(path);
      tet::ScratchBytes s;
      for (uint64_t k = 0; k < f->catalog().datasets[0].chunk_count; ++k) f->tile(0, k, s);
    } catch (const tet::Error& e) {
      return e.detail();
    }
    return tet::ErrorDetail();
  };
  tet::ErrorDetail z = detail_of("m_zstd_short");  // decode: dataset 'a' chunk (0, 0)
  CHECK(z.dataset == "a");
  CHECK(z.chunk && *z.chunk == (std::vector<uint64_t>{0, 0}));
  CHECK(z.path.find("m_zstd_short.tet") != std::string::npos);
  tet::ErrorDetail c = detail_of("m_zstd_corrupt");
  CHECK(c.dataset == "a" && c.chunk && c.chunk->size() == 2);
  tet::ErrorDetail g = detail_of("m_chunk_coord_oob");  // entry 3: chunk (5, 1) outside (2, 2)
  CHECK(g.dataset == "a" && g.chunk && *g.chunk == (std::vector<uint64_t>{5, 1}));
  tet::ErrorDetail dup = detail_of("m_duplicate_chunk");  // (0, 0) twice
  CHECK(dup.dataset == "a" && dup.chunk && *dup.chunk == (std::vector<uint64_t>{0, 0}));
  CHECK(detail_of("m_bad_magic").empty());  // not about a chunk: no detail
}

TEST_MAIN()
