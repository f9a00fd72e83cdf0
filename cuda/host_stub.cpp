// The host stub of the device module: the tet_cuda_api of cuda/tet_cuda_abi.h implemented on the
// CPU with the shared arithmetic of cuda/fold_arith.h. It lets the default build and CI test
// everything between the addon and a GPU without one: loading, routing, the device driver path
// in exec/ (units out, encoded states back, the CPU's merge), the tile cache protocol and the
// fallbacks. Never shipped; the tests point TET_CUDA_MODULE at it (and TET_CUDA_DRIVER at any
// loadable library, since there is no libcuda.so.1 here).
//
// Knobs (read at init): TET_CUDA_STUB_DEVICES (visible devices, default 1),
// TET_CUDA_STUB_VRAM (bytes per device, default 16 GiB), TET_CUDA_STUB_DTYPES (dtype mask),
// TET_CUDA_STUB_INIT_FAIL (init < 0); and per call TET_CUDA_STUB_FAIL (runtime | vram: every
// fold fails so).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "fold_arith.h"
#include "tet_cuda_abi.h"

namespace {

using namespace tet::dev;

struct Stub {
  int devices = 1;
  uint64_t vram = uint64_t(16) << 30;
  uint32_t dtypes = kDtypeMask;
  std::mutex mu;
  // The "device" tile cache: (ordinal, key) -> a copy of the tile's elements, standing in for
  // the CUDA module's resident device buffers.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<uint8_t>> resident;
  uint64_t resident_bytes = 0;
};
Stub& stub() {
  static Stub s;
  return s;
}

uint64_t env_u64(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v ? std::strtoull(v, nullptr, 0) : dflt;
}

int stub_init(char* err, size_t len) {
  if (std::getenv("TET_CUDA_STUB_INIT_FAIL") != nullptr) {
    std::snprintf(err, len, "host stub: init refused (TET_CUDA_STUB_INIT_FAIL)");
    return -1;
  }
  Stub& s = stub();
  s.devices = int(env_u64("TET_CUDA_STUB_DEVICES", 1));
  s.vram = env_u64("TET_CUDA_STUB_VRAM", s.vram);
  s.dtypes = uint32_t(env_u64("TET_CUDA_STUB_DTYPES", kDtypeMask));
  return s.devices;
}

int stub_device_info(uint32_t ordinal, tet_cuda_device* out) {
  if (int(ordinal) >= stub().devices || out == nullptr) return TET_CUDA_ERR_ARGS;
  out->ordinal = ordinal;
  std::snprintf(out->name, sizeof out->name, "host stub %u", ordinal);
  out->total_bytes = out->free_bytes = stub().vram;
  out->sm_count = 1, out->cc_major = 0, out->cc_minor = 0;
  return TET_CUDA_OK;
}

void stub_caps(tet_cuda_caps* c) {
  c->dtype_mask = stub().dtypes;
  c->scalar_op_mask = kScalarOpMask;
  c->partial_op_mask = kPartialOpMask;
}

int stub_resident(uint32_t ordinal, uint64_t key) {
  Stub& s = stub();
  std::lock_guard<std::mutex> g(s.mu);
  return s.resident.count({ordinal, key}) ? 1 : 0;
}

// Each tile's elements: the caller's host copy, or (host == NULL) the resident copy, which is
// never erased while folding (the stub does not evict).
template <class S>
int tile_data(const tet_cuda_tile* tiles, uint64_t n, uint32_t ordinal, std::vector<const S*>& data, char* err, size_t len) {
  Stub& s = stub();
  data.assign(n, nullptr);
  std::lock_guard<std::mutex> g(s.mu);
  for (uint64_t t = 0; t < n; ++t) {
    const tet_cuda_tile& tl = tiles[t];
    if (tl.host != nullptr) { data[t] = static_cast<const S*>(tl.host); continue; }
    auto it = s.resident.find({ordinal, tl.key});
    if (it == s.resident.end() || it->second.size() != tl.elems * sizeof(S)) {
      std::snprintf(err, len, "host stub: tile key %llx is not resident", (unsigned long long)tl.key);
      return TET_CUDA_ERR_ARGS;
    }
    data[t] = reinterpret_cast<const S*>(it->second.data());
  }
  return TET_CUDA_OK;
}

// Whole tiles of a finished job stay "resident" (a copy) within the budget.
template <class S> void keep_resident(const tet_cuda_tile* tiles, uint64_t n, uint32_t ordinal, uint64_t budget) {
  Stub& s = stub();
  std::lock_guard<std::mutex> g(s.mu);
  for (uint64_t t = 0; t < n; ++t) {
    const tet_cuda_tile& tl = tiles[t];
    const uint64_t bytes = tl.elems * sizeof(S);
    if (tl.key == 0 || tl.host == nullptr || s.resident_bytes + bytes > budget) continue;
    const auto* p = static_cast<const uint8_t*>(tl.host);
    if (s.resident.emplace(std::make_pair(ordinal, tl.key), std::vector<uint8_t>(p, p + bytes)).second)
      s.resident_bytes += bytes;
  }
}

// TET_CUDA_STUB_FAIL (read per call, so one test process can inject and clear failures).
int injected_failure(char* err, size_t len) {
  const char* f = std::getenv("TET_CUDA_STUB_FAIL");
  if (f == nullptr) return TET_CUDA_OK;
  const bool vram = std::strcmp(f, "vram") == 0;
  std::snprintf(err, len, "host stub: injected %s failure", vram ? "out-of-memory" : "runtime");
  return vram ? TET_CUDA_ERR_VRAM : TET_CUDA_ERR_RUNTIME;
}

template <class S, class T> int fold_as(const tet_cuda_scalar_job* job, char* err, size_t len) {
  const uint32_t sb = encoded_bytes<T>(job->op);
  if (sb == 0 || job->state_bytes != sb) {
    std::snprintf(err, len, "host stub: op %u has no device state of %llu bytes", job->op, (unsigned long long)job->state_bytes);
    return TET_CUDA_ERR_ARGS;
  }
  std::vector<const S*> data;
  if (const int rc = tile_data<S>(job->tiles, job->n_tiles, job->ordinal, data, err, len)) return rc;
  std::vector<T> buf;
  for (uint64_t u = 0; u < job->n_units; ++u) {
    const tet_cuda_unit& un = job->units[u];
    if (un.tile >= job->n_tiles || un.e0 + un.n > job->tiles[un.tile].elems) {
      std::snprintf(err, len, "host stub: unit %llu outside its tile", (unsigned long long)u);
      return TET_CUDA_ERR_ARGS;
    }
    const S* x = data[un.tile] + un.e0;
    buf.resize(un.n);
    for (uint64_t i = 0; i < un.n; ++i) {
      if constexpr (sizeof(S) == 2 && sizeof(T) == 4) buf[i] = f16_to_f32(x[i]);
      else buf[i] = T(x[i]);
    }
    fold_unit_encoded<T>(job->op, buf.data(), un.n, job->states + u * sb);
  }
  keep_resident<S>(job->tiles, job->n_tiles, job->ordinal, job->cache_budget);
  return TET_CUDA_OK;
}

int stub_scalar_fold(const tet_cuda_scalar_job* job, char* err, size_t len) {
  if (job == nullptr || job->struct_size < sizeof(tet_cuda_scalar_job)) return TET_CUDA_ERR_ARGS;
  if (const int rc = injected_failure(err, len)) return rc;
  return by_dtype(job->dtype, [&](auto s, auto t) { return fold_as<decltype(s), decltype(t)>(job, err, len); });
}

// Every element of every span runs
// its events (cuda/fold_arith.h partial_element, as the CUDA kernel does per thread).
template <class S, class T> int partial_as(const tet_cuda_partial_job* job, char* err, size_t len) {
  if (const char* why = partial_job_invalid<T>(job)) {
    std::snprintf(err, len, "host stub: malformed partial job: %s", why);
    return TET_CUDA_ERR_ARGS;
  }
  std::vector<const S*> data;
  if (const int rc = tile_data<S>(job->tiles, job->n_tiles, job->ordinal, data, err, len)) return rc;
  for (uint64_t sp = 0; sp < job->n_spans; ++sp) {
    const tet_cuda_span& x = job->spans[sp];
    for (uint64_t o = 0; o < x.n; ++o)
      partial_element<S, T>(job->op, job->col, x.j0 + o, job->events + x.ev0, x.ev1 - x.ev0, job->batches, data.data());
  }
  keep_resident<S>(job->tiles, job->n_tiles, job->ordinal, job->cache_budget);
  return TET_CUDA_OK;
}

int stub_partial_fold(const tet_cuda_partial_job* job, char* err, size_t len) {
  if (job == nullptr || job->struct_size < sizeof(tet_cuda_partial_job)) return TET_CUDA_ERR_ARGS;
  if (const int rc = injected_failure(err, len)) return rc;
  return by_dtype(job->dtype, [&](auto s, auto t) { return partial_as<decltype(s), decltype(t)>(job, err, len); });
}

void* stub_staging(uint64_t) { return nullptr; }
void stub_cache_clear() {
  Stub& s = stub();
  std::lock_guard<std::mutex> g(s.mu);
  s.resident.clear(), s.resident_bytes = 0;
}
uint64_t stub_cache_bytes(uint32_t) {
  Stub& s = stub();
  std::lock_guard<std::mutex> g(s.mu);
  return s.resident_bytes;
}

const tet_cuda_api kApi = {TET_CUDA_ABI_VERSION, sizeof(tet_cuda_api), "host-stub", stub_init, stub_device_info, stub_caps,
                           stub_resident, stub_scalar_fold, stub_partial_fold, stub_staging, stub_cache_clear,
                           stub_cache_bytes};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tet_cuda_api* tet_cuda_get_api(uint32_t version) {
  return version == TET_CUDA_ABI_VERSION ? &kApi : nullptr;
}
