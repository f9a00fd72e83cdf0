// Leak check for the native read path (run under LeakSanitizer by scripts/sanitize.sh): every
// valid conformance fixture is opened from disk, queried (streaming folds, partial reduction,
// preview, materialized median, cancelled query) and closed, several rounds; malformed fixtures
// are opened and rejected. LSan reports any allocation still reachable from nowhere at exit;
// the RSS check catches growth that LSan cannot see (e.g. mappings never unmapped).
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz/fuzz_common.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

uint64_t queries_on(const tet::File& f) {
  uint64_t ran = 0;
  for (uint32_t id = 0; id < f.catalog().datasets.size(); ++id) {
    const tet::DatasetInfo& d = f.catalog().datasets[id];
    tet::QueryPlan p;
    p.dataset_id = id;
    p.ndim = d.ndim;
    for (uint32_t a = 0; a < d.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = d.shape[a];
    const uint32_t all = (1u << d.ndim) - 1;
    auto run = [&](tet::QueryPlan q, const std::atomic<bool>* cancel) {
      tet::ExecContext ctx;
      ctx.cancel = cancel;
      try {
        tet::execute(f, q, ctx);
        ++ran;
      } catch (const tet::Error&) {
      }
    };
    tet::QueryPlan q = p;
    q.op = tet::Op::Sum, q.reduce_mask = all, q.preview_max = 100;
    run(q, nullptr);
    q.op = tet::Op::Mean, q.reduce_mask = 1, q.preview_max = 0;
    run(q, nullptr);
    if (d.element_count <= (1u << 20)) {
      q.op = tet::Op::Median, q.reduce_mask = all, q.strategy = tet::Strategy::InMemoryMaterialize;
      run(q, nullptr);
    }
    std::atomic<bool> cancelled{true};
    q = p;
    q.op = tet::Op::Max, q.reduce_mask = all;
    run(q, &cancelled);
  }
  return ran;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: leak_loop <conformance fixtures dir> [rounds]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const auto files = tet_fuzz::tet_files(argv[1], 64u << 20);
  long rss_after_first = 0;
  uint64_t opened = 0, rejected = 0, ran = 0;
  for (int r = 0; r < rounds; ++r) {
    for (const std::string& path : files) {
      try {
        auto f = tet::File::open(path);
        ++opened;
        ran += queries_on(*f);
      } catch (const tet::Error&) {
        ++rejected;
      }
    }
    if (r == 0) rss_after_first = rss_kib();
  }
  const long rss_end = rss_kib();
  std::printf("leak_loop: %d rounds over %zu files: %llu opens, %llu rejected, %llu queries; RSS after round 1 %ld KiB, at end %ld KiB\n",
              rounds, files.size(), (unsigned long long)opened, (unsigned long long)rejected, (unsigned long long)ran,
              rss_after_first, rss_end);
  // Later rounds repeat the first exactly; more than 32 MiB of growth means something piles up.
  if (rss_end - rss_after_first > 32 * 1024) {
    std::printf("leak_loop: RSS grew by %ld KiB after the first round\n", rss_end - rss_after_first);
    return 1;
  }
  return 0;
}
