// libFuzzer target: tet::decode_plan (wire v2 and v1) against a fixed catalog (a small multi-dataset file made by
// tet::Writer at start-up), then tet::execute on every plan that decodes, so every plan the
// decoder accepts is also one the engine can run. Spill strategies are decoded but not executed
// (they create files at paths the plan names).
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "fuzz/fuzz_common.h"
#include "tet/plan.h"
#include "tet/query.h"

namespace {

std::vector<uint8_t> g_image;
std::shared_ptr<tet::File> g_file;

void write_seeds(const char* out) {
  const tet::Catalog& cat = g_file->catalog();
  uint32_t n = 0;
  auto write = [&](const std::vector<uint8_t>& b) {
    tet_fuzz::write_bytes(std::string(out) + "/plan-" + std::to_string(n++), b.data(), b.size());
  };
  // Every plan as v2; box plans also as v1; and a v2 variant with index lists on every axis
  // (every other position, or a run list on odd axes), a shard and a device section; and a
  // SHARD form-2 variant (shard index / count and a round request).
  auto emit = [&](const tet::QueryPlan& p) {
    write(tet::encode_plan(p));
    if (!p.has_index_axes()) write(tet::encode_plan_v1(p));
    tet::QueryPlan q = p;
    const tet::DatasetInfo& d = cat.datasets[p.dataset_id];
    for (uint32_t a = 0; a < d.ndim; ++a) {
      if (a % 2 == 0) {
        std::vector<uint64_t> idx;
        for (uint64_t i = 0; i < d.shape[a]; i += 1 + (i % 3)) idx.push_back(i);
        q.set_indices(a, idx);
      } else if (d.shape[a] >= 3) {
        q.set_runs(a, {{0, 1}, {2, d.shape[a] - 2}});
      } else {
        q.set_indices(a, {d.shape[a] - 1});
      }
    }
    q.shard = tet::ShardRange{0, 1, 2};
    write(tet::encode_plan(q));
    tet::QueryPlan r = p;  // SHARD form 2: shard (1, 3) with a round request
    r.shard.index = 1, r.shard.count = 3, r.shard.round = {'T', 'P', 'R', '1', 1, 0, 0, 0};
    write(tet::encode_plan(r));
    // GROUP: a streaming op other than arg_* reducing axis 0, whose positions fall in 3 groups
    const bool groupable = p.strategy == tet::Strategy::StreamingFold && p.op != tet::Op::None &&
                           p.op != tet::Op::ArgMin && p.op != tet::Op::ArgMax && (p.reduce_mask & 1);
    if (groupable) {
      tet::QueryPlan g = p;
      g.group_axis = 0;
      g.groups = uint32_t(std::min<uint64_t>(3, g.count[0]));
      for (uint64_t i = 0; i < g.count[0]; ++i) g.group_ids.push_back(uint32_t(i % g.groups));
      write(tet::encode_plan(g));
    }
  };
  for (uint32_t id = 0; id < cat.datasets.size(); ++id) {
    const tet::DatasetInfo& d = cat.datasets[id];
    tet::QueryPlan p;
    p.dataset_id = id;
    p.ndim = d.ndim;
    for (uint32_t a = 0; a < d.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = d.shape[a];
    const uint32_t all = (1u << d.ndim) - 1;
    for (uint32_t op = 0; op <= uint32_t(tet::Op::Correlation); ++op) {
      tet::QueryPlan q = p;
      q.op = tet::Op(op);
      q.reduce_mask = op == 0 ? 0 : all;
      q.bins = 4;
      q.q = 0.25;
      q.has_fill = op == uint32_t(tet::Op::NullCount);
      q.preview_max = 5;
      const bool tier_c = op >= uint32_t(tet::Op::Median);
      q.strategy = op == 0 ? tet::Strategy::CappedInMemory
                           : tier_c ? tet::Strategy::InMemoryMaterialize : tet::Strategy::StreamingFold;
      if ((op == uint32_t(tet::Op::Covariance) || op == uint32_t(tet::Op::Correlation)) && d.ndim != 2) continue;
      emit(q);
      if (d.ndim > 1 && op != 0) {  // partial reduction over axis 0, strided selection
        q.reduce_mask = 1;
        q.step[d.ndim - 1] = 2;
        q.count[d.ndim - 1] = (d.shape[d.ndim - 1] + 1) / 2;
        q.io_mode = tet::IoMode(op % 3);
        emit(q);
      }
    }
  }
  std::printf("plan_fuzz: wrote %u plan seeds to %s\n", n, out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_image = tet_fuzz::writer_sample(tet_fuzz::temp_file_name("plan"));
  g_file = tet::File::from_memory(g_image.data(), g_image.size());
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Own heap copy: ASan then flags any read past the plan's end.
  std::vector<uint8_t> bytes(data, data + size);
  tet::QueryPlan plan;
  try {
    plan = tet::decode_plan(bytes.data(), bytes.size(), g_file->catalog());
  } catch (const tet::Error&) {
    return 0;
  }
  if (plan.strategy == tet::Strategy::MmapSpill || plan.strategy == tet::Strategy::TempSpillMaterialize) return 0;
  plan.threads = std::min<uint32_t>(plan.threads, 2);
  try {
    tet::QueryResult r = tet::execute(*g_file, plan);
    if (r.preview.size() > 0 && r.preview_length == 0) std::abort();
    if (r.values.kind != tet::ValueKind::Bool && r.values.bytes.size() != r.values.length * 8) std::abort();
  } catch (const tet::Error&) {
  }
  return 0;
}
