// libFuzzer target: tet::merge_partials over fuzzed sets of shard partials. An input is a list
// of frames (u32 little-endian length, then that many bytes; a frame running past the end takes
// the rest), each one partial. Seeds are complete, valid partial sets (k = 1, 2, 3 shards) of
// scalar, partial and tier-C queries on a small file made by tet::Writer, so mutations explore
// the header, the sections and the state bodies. Every input must either merge or fail with a
// TET_SHARD_* error: no crash, no other error code, no hang. Round requests too: a frame that
// starts with "TPR1" is a round request and is run as shard 0 of 3 of the scalar median of
// dataset 0 (execute_partial must return a partial or fail with TET_SHARD_*); seeds include the
// later rounds' partial sets of tier-C queries and their round requests.
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/fuzz_common.h"
#include "tet/query.h"
#include "tet/shard.h"

namespace {

std::vector<uint8_t> g_image;
std::shared_ptr<tet::File> g_file;

void put_frame(std::vector<uint8_t>& out, const std::vector<uint8_t>& part) {
  const uint32_t n = uint32_t(part.size());
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(n >> (8 * i)));
  out.insert(out.end(), part.begin(), part.end());
}

tet::QueryPlan plan_for(uint32_t id, uint32_t op, uint32_t mask) {
  const tet::DatasetInfo& d = g_file->catalog().datasets[id];
  tet::QueryPlan p;
  p.dataset_id = id, p.ndim = d.ndim;
  for (uint32_t a = 0; a < d.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = d.shape[a];
  p.op = tet::Op(op), p.reduce_mask = mask, p.bins = 4, p.q = 0.25, p.preview_max = 3;
  p.has_fill = op == 18;
  p.strategy = op >= 21 ? tet::Strategy::InMemoryMaterialize : tet::Strategy::StreamingFold;
  return p;
}
std::string doc_for(uint32_t id) { return "{\"dataset\":\"" + g_file->catalog().datasets[id].name + "\"}"; }
constexpr uint32_t kMedian = 21;

void write_seeds(const char* out) {
  const tet::Catalog& cat = g_file->catalog();
  uint32_t n = 0;
  for (uint32_t id = 0; id < cat.datasets.size(); ++id) {
    const tet::DatasetInfo& d = cat.datasets[id];
    for (uint32_t op : {1u, 2u, 3u, 6u, 8u, 14u, 18u, 21u, 22u, 23u, 24u}) {
      for (uint32_t mask : {(1u << d.ndim) - 1, 1u}) {
        tet::QueryPlan p;
        p.dataset_id = id, p.ndim = d.ndim;
        for (uint32_t a = 0; a < d.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = d.shape[a];
        p.op = tet::Op(op), p.reduce_mask = mask, p.bins = 4, p.q = 0.25, p.preview_max = 3;
        p.has_fill = op == 18;
        if (op == 24) {
          if (d.ndim != 2 || mask != 3u) continue;
          p.reduce_mask = 0;
        }
        p.strategy = op >= 21 ? tet::Strategy::InMemoryMaterialize : tet::Strategy::StreamingFold;
        for (uint32_t k : {1u, 2u, 3u}) {
          std::vector<uint8_t> frames;
          for (uint32_t i = 0; i < k; ++i) {
            tet::PartialRequest rq;
            rq.shard = i, rq.shards = k, rq.doc = "{\"dataset\":\"" + d.name + "\"}", rq.context = "{}";
            put_frame(frames, tet::execute_partial(*g_file, p, rq));
          }
          tet_fuzz::write_bytes(std::string(out) + "/parts-" + std::to_string(n++), frames.data(), frames.size());
          // later rounds of tier-C queries: their partial sets, and the round requests
          std::vector<std::pair<const uint8_t*, size_t>> v;
          std::vector<std::vector<uint8_t>> parts;
          std::vector<uint8_t> round;
          for (uint32_t r = 1; r <= 8 && op >= 21; ++r) {
            parts.clear();
            for (uint32_t i = 0; i < k; ++i) {
              tet::PartialRequest rq;
              rq.shard = i, rq.shards = k, rq.doc = doc_for(id), rq.context = "{}", rq.round = round;
              parts.push_back(tet::execute_partial(*g_file, p, rq));
            }
            v.clear();
            for (const auto& x : parts) v.emplace_back(x.data(), x.size());
            const tet::MergedPartials m = tet::merge_partials(v);
            if (r > 1) {
              std::vector<uint8_t> f;
              for (const auto& x : parts) put_frame(f, x);
              tet_fuzz::write_bytes(std::string(out) + "/parts-" + std::to_string(n++), f.data(), f.size());
            }
            if (m.done) break;
            round = m.next_round;
            std::vector<uint8_t> f;
            put_frame(f, round);
            tet_fuzz::write_bytes(std::string(out) + "/round-" + std::to_string(n++), f.data(), f.size());
          }
        }
      }
    }
  }
  std::printf("shard_fuzz: wrote %u partial-set seeds to %s\n", n, out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_image = tet_fuzz::writer_sample(tet_fuzz::temp_file_name("shard"));
  g_file = tet::File::from_memory(g_image.data(), g_image.size());
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Each partial in its own heap block: ASan flags any read past a partial's end.
  std::vector<std::vector<uint8_t>> parts;
  size_t at = 0;
  while (at + 4 <= size && parts.size() < 16) {
    const uint32_t n = uint32_t(data[at]) | uint32_t(data[at + 1]) << 8 | uint32_t(data[at + 2]) << 16 | uint32_t(data[at + 3]) << 24;
    at += 4;
    const size_t take = n <= size - at ? n : size - at;
    parts.emplace_back(data + at, data + at + take);
    at += take;
  }
  std::vector<std::pair<const uint8_t*, size_t>> v;
  for (const auto& p : parts) {
    if (p.size() >= 4 && p[0] == 'T' && p[1] == 'P' && p[2] == 'R' && p[3] == '1') {
      // a round request: run it as shard 0 of 3 of the median of dataset 0
      try {
        tet::PartialRequest rq;
        rq.shard = 0, rq.shards = 3, rq.doc = doc_for(0), rq.context = "{}", rq.round = p;
        const tet::QueryPlan plan = plan_for(0, kMedian, (1u << g_file->catalog().datasets[0].ndim) - 1);
        (void)tet::execute_partial(*g_file, plan, rq);
      } catch (const tet::Error& e) {
        if (e.code().rfind("TET_SHARD_", 0) != 0) {
          std::fprintf(stderr, "shard_fuzz: unexpected error %s for a round request: %s\n", e.code().c_str(), e.what());
          std::abort();
        }
      }
      continue;
    }
    v.emplace_back(p.data(), p.size());
  }
  if (v.empty()) return 0;
  try {
    tet::MergedPartials m = tet::merge_partials(v);
    const tet::QueryResult& r = m.result;
    if (r.values.kind != tet::ValueKind::Bool && r.values.bytes.size() != r.values.length * 8) std::abort();
    if (r.preview.size() < r.preview_length) std::abort();
  } catch (const tet::Error& e) {
    if (e.code().rfind("TET_SHARD_", 0) != 0) {
      std::fprintf(stderr, "shard_fuzz: unexpected error %s: %s\n", e.code().c_str(), e.what());
      std::abort();
    }
  }
  return 0;
}
