// libFuzzer target, end to end: open a fuzzed file image, then run a fixed set of queries on
// each of its first datasets through tet::execute (streaming folds, partial reductions, preview,
// strided selections, materialized tier-C ops, grouped folds, several aggregates in one pass).
// Bounded so a fuzzed catalog that declares huge tiles cannot turn one input into minutes of work.
#include <algorithm>
#include <cstdlib>

#include "fuzz/fuzz_common.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace {

constexpr uint64_t kMaxLogicalBytes = 1u << 20;   // per dataset queried (keeps ~100 exec/s)
constexpr uint64_t kMaxMaterialize = 1u << 18;    // elements for median / histogram

void write_seeds(const char* out) {
  uint32_t n = 0;
  for (const std::string& p : tet_fuzz::tet_files(tet_fuzz::fixtures_dir(), 256 * 1024)) {
    std::vector<uint8_t> b = tet_fuzz::read_bytes(p);
    tet_fuzz::write_bytes(std::string(out) + "/fixture-" + std::to_string(n++), b.data(), b.size());
  }
  std::vector<uint8_t> w = tet_fuzz::writer_sample(tet_fuzz::temp_file_name("query"));
  tet_fuzz::write_bytes(std::string(out) + "/writer-sample", w.data(), w.size());
  std::printf("query_fuzz: wrote %u fixture seeds + 1 writer seed to %s\n", n, out);
}

// Plans go through the wire codec first, exactly as the addon receives them.
void run(const tet::File& f, const tet::QueryPlan& wanted) {
  try {
    const std::vector<uint8_t> wire = tet::encode_plan(wanted);
    const tet::QueryPlan p = tet::decode_plan(wire.data(), wire.size(), f.catalog());
    tet::QueryResult r = tet::execute(f, p);
    if (r.preview_length > p.preview_max) std::abort();
  } catch (const tet::Error&) {
  }
}

void queries(const tet::File& f, uint32_t id) {
  const tet::DatasetInfo& d = f.catalog().datasets[id];
  if (d.logical_bytes > kMaxLogicalBytes || d.ndim == 0) return;
  tet::QueryPlan all;
  all.dataset_id = id;
  all.ndim = d.ndim;
  all.threads = 1;
  for (uint32_t a = 0; a < d.ndim; ++a) all.start[a] = 0, all.step[a] = 1, all.count[a] = d.shape[a];
  const uint32_t every_axis = (1u << d.ndim) - 1;

  tet::QueryPlan p = all;  // preview of the first elements (raw tile copies, f16 widening)
  p.strategy = tet::Strategy::CappedInMemory;
  p.preview_max = 64;
  run(f, p);
  for (tet::Op op : {tet::Op::Sum, tet::Op::Min, tet::Op::ArgMax, tet::Op::NanCount, tet::Op::Std}) {
    p = all;
    p.op = op;
    p.reduce_mask = every_axis;
    run(f, p);
  }
  p = all;  // several aggregates in one pass (shared extrema / moments states), on 2 threads
  p.op = tet::Op::Min;
  p.reduce_mask = every_axis;
  p.threads = 2;
  p.io_mode = tet::IoMode::SequentialChunks;
  for (tet::Op op : {tet::Op::Max, tet::Op::Mean, tet::Op::Std, tet::Op::Var, tet::Op::ArgMin, tet::Op::NanCount}) {
    tet::AggSpec g;
    g.op = op;
    p.more.push_back(g);
  }
  run(f, p);
  p = all;  // partial mean over axis 0, last axis strided, chunks in payload order
  p.op = tet::Op::Mean;
  p.reduce_mask = 1;
  p.step[d.ndim - 1] = 3;
  p.count[d.ndim - 1] = (d.shape[d.ndim - 1] + 2) / 3;
  p.io_mode = tet::IoMode::SequentialChunks;
  run(f, p);
  p.io_mode = tet::IoMode::LinearScan;
  p.op = tet::Op::Max;
  p.reduce_mask = every_axis;
  run(f, p);
  // group_by (GROUP): the last axis in 3 interleaved groups (runs of one group), then the first
  // axis in 2 contiguous groups with the last axis kept
  for (uint32_t ga : {d.ndim - 1, 0u}) {
    p = all;
    p.op = ga == 0 ? tet::Op::Var : tet::Op::Mean;
    p.reduce_mask = ga == 0 && d.ndim > 1 ? 1u : every_axis;
    p.group_axis = ga;
    p.groups = uint32_t(std::min<uint64_t>(ga == 0 ? 2 : 3, d.shape[ga]));
    for (uint64_t i = 0; i < d.shape[ga]; ++i)
      p.group_ids.push_back(ga == 0 ? uint32_t(i * p.groups / d.shape[ga]) : uint32_t(i % p.groups));
    run(f, p);
  }
  if (d.element_count <= kMaxMaterialize) {
    p = all;
    p.op = tet::Op::Median;
    p.reduce_mask = every_axis;
    p.strategy = tet::Strategy::InMemoryMaterialize;
    run(f, p);
    p.op = tet::Op::Histogram;
    p.bins = 7;
    p.reduce_mask = d.ndim > 1 ? 2 : 1;
    run(f, p);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<tet::File> f;
  try {
    f = tet::File::from_memory(data, size);
  } catch (const tet::Error&) {
    return 0;
  }
  const uint32_t n = std::min<uint32_t>(static_cast<uint32_t>(f->catalog().datasets.size()), 3);
  for (uint32_t id = 0; id < n; ++id) queries(*f, id);
  return 0;
}
