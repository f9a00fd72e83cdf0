// Standalone driver for the fuzz targets without libFuzzer: feeds every file named on the
// command line (directories: every regular file in them, recursively) to
// LLVMFuzzerTestOneInput once. scripts/sanitize.sh links it with a target and the ASan/UBSan
// core to replay the malformed-file corpus, the fixtures and the fuzz regressions.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

void collect(const std::string& path, std::vector<std::string>& out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  if (S_ISREG(st.st_mode)) { out.push_back(path); return; }
  if (!S_ISDIR(st.st_mode)) return;
  DIR* d = ::opendir(path.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name.size() > 3 && name.compare(name.size() - 3, 3, ".md") == 0) continue;
    collect(path + "/" + name, out);
  }
  ::closedir(d);
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) collect(argv[i], files);
  for (const std::string& f : files) {
    std::vector<uint8_t> bytes = tet_fuzz::read_bytes(f);
    LLVMFuzzerTestOneInput(bytes.empty() ? nullptr : bytes.data(), bytes.size());
  }
  std::printf("%s: replayed %zu inputs\n", argv[0], files.size());
  return 0;
}
