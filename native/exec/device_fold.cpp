#include "exec/device_fold.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../../cuda/fold_arith.h"
#include "exec/device.h"
#include "exec/thread_pool.h"
#include "fold/registry.h"

namespace tet {
namespace exec {
namespace {

uint64_t fnv(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return h;
}

// The device tile cache key of a whole tile: the source object (its process-unique id: an open
// file, never a reused address) and the tile's catalog entry; 0 is "none". A file opened again is
// a new source (its tiles are read again; the old entries age out of the LRU).
uint64_t tile_key(const ChunkSource& src, uint32_t dataset_id, uint64_t lc) {
  const Catalog& cat = src.catalog();
  const DatasetInfo& d = cat.datasets[dataset_id];
  if (lc >= d.chunk_to_entry.size() || d.chunk_to_entry[lc] >= cat.entries.size()) return 0;
  const ChunkEntry& e = cat.entries[d.chunk_to_entry[lc]];
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, src.source_id()), h = fnv(h, cat.file_len), h = fnv(h, cat.chunk_index_offset);
  h = fnv(h, dataset_id), h = fnv(h, lc), h = fnv(h, e.payload_offset), h = fnv(h, e.stored_byte_len), h = fnv(h, e.raw_byte_len);
  return h == 0 ? 1 : h;
}

uint64_t cache_budget() {
  const char* v = std::getenv("TET_CUDA_CACHE_BYTES");
  return v != nullptr && *v ? std::strtoull(v, nullptr, 0) : kDeviceCacheDefaultBytes;
}

struct Job {
  uint64_t t0, t1;  // selection tiles [t0, t1)
  uint64_t u0, u1;  // their units
  uint64_t bytes;
};

}  // namespace

template <class S, class T> bool fold_scalar_device(FoldRun& run, QueryResult& res, std::string& reason) {
  const device::Backend& be = device::backend();
  if (be.api == nullptr) {
    reason = be.unavailable.empty() ? "gpu_feature_disabled" : be.unavailable;
    return false;
  }
  const QueryPlan& plan = run.plan;
  const Selection& sel = run.sel;
  const uint32_t opw = uint32_t(plan.op);
  if (dev::family_of(opw) == dev::Family::None) {
    reason = "gpu_unsupported_op";
    return false;
  }
  const uint64_t sb = dev::encoded_bytes<T>(opw);
  if (sb != fold::state_bytes<T>(plan.op)) {  // the ABI state is the family's encoded state
    reason = "gpu_unsupported_op";
    return false;
  }
  std::vector<uint32_t> ordinals;
  if (plan.device_ordinal == device::kAllDevices) {
    for (const device::DeviceInfo& d : be.devices) ordinals.push_back(d.ordinal);
  } else if (plan.device_ordinal < be.devices.size()) {
    ordinals.push_back(plan.device_ordinal);
  } else {
    reason = "gpu_device_not_found";
    return false;
  }

  const std::vector<ScalarUnit> units = scalar_units(sel);
  // Jobs: runs of whole tiles (a tile's units never split across jobs) of about kDeviceJobBytes.
  std::vector<Job> jobs;
  for (uint64_t u = 0; u < units.size();) {
    Job j{units[u].tile, units[u].tile, u, u, 0};
    while (u < units.size() && (j.bytes == 0 || j.bytes + sel.tile(units[u].tile).elems * sizeof(S) <= kDeviceJobBytes)) {
      const uint64_t t = units[u].tile;
      j.bytes += sel.tile(t).elems * sizeof(S);
      while (u < units.size() && units[u].tile == t) ++u;
      j.t1 = t + 1;
    }
    j.u1 = u;
    jobs.push_back(j);
  }

  std::vector<uint8_t> states(units.size() * sb);
  std::atomic<int> failed{TET_CUDA_OK};
  std::mutex detail_mu;
  std::string detail;
  ThreadPool& pool = ThreadPool::instance();
  const uint64_t budget = cache_budget();
  const uint32_t parts = pool.participants(jobs.size(), run.threads);
  std::vector<std::vector<uint8_t>> scratch(parts), pageable(parts);
  pool.parallel_for(jobs.size(), run.threads, [&](uint64_t ji, uint32_t slot) {
    if (failed.load(std::memory_order_relaxed) != TET_CUDA_OK) return;
    check_cancel(run.ctx);
    const Job& job = jobs[ji];
    const uint32_t ordinal = ordinals[ji % ordinals.size()];
    // Stage the tiles that are not resident: densified selected elements, stored type S.
    std::vector<tet_cuda_tile> tiles(job.t1 - job.t0);
    std::vector<uint64_t> at(tiles.size() + 1, 0);
    for (uint64_t t = job.t0; t < job.t1; ++t) {
      const TileSelection ts = sel.tile(t);
      tet_cuda_tile& tl = tiles[t - job.t0];
      tl.elems = ts.elems;
      tl.key = ts.elems == ts.tile_elems && ts.contiguous ? tile_key(run.fetcher.source(), plan.dataset_id, ts.linear_chunk) : 0;
      const bool resident = tl.key != 0 && be.api->resident(ordinal, tl.key) != 0;
      at[t - job.t0 + 1] = at[t - job.t0] + (resident ? 0 : ts.elems * sizeof(S));
      if (resident) tl.host = nullptr;
    }
    uint8_t* stage = static_cast<uint8_t*>(be.api->staging(at.back()));
    if (stage == nullptr) {
      if (pageable[slot].size() < at.back()) pageable[slot].resize(at.back());
      stage = pageable[slot].data();
    }
    for (uint64_t t = job.t0; t < job.t1; ++t) {
      const TileSelection ts = sel.tile(t);
      tet_cuda_tile& tl = tiles[t - job.t0];
      if (at[t - job.t0 + 1] == at[t - job.t0]) {  // resident on the device: no read, no decode
        run.fetcher.count(ts);
        continue;
      }
      const TileView v = run.fetcher.fetch(ts, scratch[slot]);
      uint8_t* dst = stage + at[t - job.t0];
      if (ts.contiguous) {
        std::memcpy(dst, v.data + ts.first_offset * sizeof(S), ts.elems * sizeof(S));
      } else {
        thread_local std::vector<uint64_t> loc;
        gather_elems<S, S>(ts, sel.ndim, 0, ts.elems, v.data, reinterpret_cast<S*>(dst), loc);
      }
      tl.host = dst;
    }
    std::vector<tet_cuda_unit> du(job.u1 - job.u0);
    for (uint64_t u = job.u0; u < job.u1; ++u)
      du[u - job.u0] = tet_cuda_unit{units[u].tile - job.t0, units[u].e0, units[u].e1 - units[u].e0};
    tet_cuda_scalar_job dj{};
    dj.struct_size = sizeof dj;
    dj.op = opw, dj.dtype = uint32_t(sel.dataset.dtype), dj.ordinal = ordinal;
    dj.tiles = tiles.data(), dj.n_tiles = tiles.size();
    dj.units = du.data(), dj.n_units = du.size();
    dj.states = states.data() + job.u0 * sb, dj.state_bytes = sb;
    dj.cache_budget = budget;
    char err[256] = {0};
    const int rc = be.api->scalar_fold(&dj, err, sizeof err);
    if (rc != TET_CUDA_OK) {
      int expected = TET_CUDA_OK;
      if (failed.compare_exchange_strong(expected, rc)) {
        std::lock_guard<std::mutex> g(detail_mu);
        detail = err;
      }
    }
  });
  if (failed.load() != TET_CUDA_OK) {
    reason = failed.load() == TET_CUDA_ERR_VRAM ? "gpu_vram_exceeded" : "gpu_runtime_error";
    res.stats.device_error = detail;
    return false;
  }
  finish_scalar<S, T>(plan, sel, states.data(), units.size(), res);
  res.stats.io_mode = IoMode::ParallelChunks;
  res.stats.threads_used = parts;
  return true;
}

#define TET_DEVICE_INSTANTIATE(S, T) template bool fold_scalar_device<S, T>(FoldRun&, QueryResult&, std::string&);
TET_DEVICE_INSTANTIATE(float, float)
TET_DEVICE_INSTANTIATE(double, double)
TET_DEVICE_INSTANTIATE(uint16_t, float)  // f16: the device widens the stored bits
TET_DEVICE_INSTANTIATE(uint8_t, uint8_t)
TET_DEVICE_INSTANTIATE(uint16_t, uint16_t)
TET_DEVICE_INSTANTIATE(int16_t, int16_t)
TET_DEVICE_INSTANTIATE(int32_t, int32_t)
TET_DEVICE_INSTANTIATE(uint32_t, uint32_t)
TET_DEVICE_INSTANTIATE(int64_t, int64_t)
TET_DEVICE_INSTANTIATE(uint64_t, uint64_t)

}  // namespace exec
}  // namespace tet
