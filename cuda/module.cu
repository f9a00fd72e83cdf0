// tetration_cuda.so: the CUDA device module (the tet_cuda_api of cuda/tet_cuda_abi.h). The addon
// dlopen()s it at run time (native/exec/device.cpp); nothing here is linked into the addon.
//
// A scalar job is a run of tiles (dense selected elements, stored type) and their units
// (exec::ScalarUnit). Per calling host thread and device: one stream, one pinned staging buffer
// (the host decodes into it), one device buffer; the host threads' jobs overlap decode, copies
// and kernels. Each unit becomes the family's encoded state with the arithmetic of
// cuda/fold_arith.h, one canonical lane per thread:
//   sum / mean / norms (f64 lanes)  one warp per unit: lane j sums x[32g + j], then the pairwise
//                                   tree as five shuffles; lane 0 does the Neumaier step
//   exact integer sums, counts      order-free (exact): warp / block reductions
//   min / max                       64-byte lanes (8..64 threads), combined in lane order by
//                                   thread 0 (which keeps the CPU's -0 / +0 choice), then the tail
//   var / std                       one warp per 4096-element sub-block (shifted sums, the
//                                   two-pass redo when needed), Chan-merged in order by thread 0
//   product; nan_mean / nan_std of  one thread per unit, element order (the CPU's order is
//   a unit holding a NaN            sequential there too)
// Device tile cache: whole tiles keyed by the host (tile_key), kept within the job's budget,
// least recently used evicted first; a resident tile skips the host's read, decode and copy.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "fold_arith.h"
#include "tet_cuda_abi.h"

namespace {

using namespace tet::dev;

// ---------------------------------------------------------------------------------------------
// Kernels

struct DevUnit {
  const void* x;  // device pointer to the unit's first element (stored type)
  uint64_t n;
};

template <class S, class T> __device__ __forceinline__ T load(const S* p, uint64_t i) {
  if constexpr (sizeof(S) == 2 && std::is_same<T, float>::value) return f16_to_f32(p[i]);
  else return T(p[i]);
}

// Loads in flight per thread: the memory-level parallelism a warp needs to approach the
// device's bandwidth (Little's law), given one unit per warp. Loads are issued kAhead groups
// ahead; the additions stay in group order, so the arithmetic is fold_arith.h's.
constexpr int kAhead = 16;

// The canonical lane sum of one unit by one warp (fold_arith.h lane_part + lane_tree).
template <class S, class T>
__device__ double warp_lane_sum(const S* x, uint64_t n, uint32_t lane, Xform f, double c) {
  const uint64_t full = n / kLanes * kLanes;
  double acc = 0;
  uint64_t g = 0;
  for (; g + kAhead * kLanes <= full; g += kAhead * kLanes) {
    T v[kAhead];
#pragma unroll
    for (int i = 0; i < kAhead; ++i) v[i] = load<S, T>(x, g + i * kLanes + lane);
#pragma unroll
    for (int i = 0; i < kAhead; ++i) acc += xform(double(v[i]), f, c);
  }
  for (; g < full; g += kLanes) acc += xform(double(load<S, T>(x, g + lane)), f, c);
  if (full + lane < n) acc += xform(double(load<S, T>(x, full + lane)), f, c);
  for (uint32_t s = kLanes / 2; s > 0; s >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, s);
  return acc;  // lane 0 holds the tree's result
}

template <class S, class T> __device__ IntParts warp_int_parts(const S* x, uint64_t n, uint32_t lane) {
  IntParts p;
  for (uint64_t i = lane; i < n; i += kLanes) int_part_add<T>(p, load<S, T>(x, i));
  for (uint32_t s = kLanes / 2; s > 0; s >>= 1) {
    p.lo += __shfl_down_sync(0xffffffffu, p.lo, s);
    p.hi = int64_t(uint64_t(p.hi) + uint64_t(__shfl_down_sync(0xffffffffu, p.hi, s)));
  }
  return p;
}

template <class S, class T> __device__ bool warp_has_nan(const S* x, uint64_t n, uint32_t lane) {
  bool nan = false;
  if (is_float<T>())
    for (uint64_t i = lane; i < n; i += kLanes) {
      const T v = load<S, T>(x, i);
      nan |= v != v;
    }
  return __any_sync(0xffffffffu, nan);
}

// Sum family: 8 warps per block, one unit per warp.
template <class S, class T> __global__ void k_sum(const DevUnit* units, uint64_t n_units, uint32_t op, uint8_t* states) {
  const uint64_t u = uint64_t(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
  const uint32_t lane = threadIdx.x % kLanes;
  if (u >= n_units) return;
  const S* x = static_cast<const S*>(units[u].x);
  const uint64_t n = units[u].n;
  uint8_t* out = states + u * 40;
  if (is_float<T>() && op == 19 && warp_has_nan<S, T>(x, n, lane)) {
    if (lane == 0) {
      SumState a;
      for (uint64_t i = 0; i < n; ++i) sum_one<T>(op, a, load<S, T>(x, i));
      encode(a, out);
    }
    return;
  }
  SumState a;
  a.n = n;
  if (sum_exact_int<T>(op)) {
    const IntParts p = warp_int_parts<S, T>(x, n, lane);
    if (lane == 0) a.isum = int_parts_value<T>(p);
  } else {
    const double s = warp_lane_sum<S, T>(x, n, lane, sum_xform(op), 0);
    if (lane == 0) neumaier_add(a.s, a.c, s);
  }
  if (lane == 0) encode(a, out);
}

// Extrema: one unit per block of 64 threads; threads < L are the 64-byte lanes.
template <class S, class T> __global__ void k_ext(const DevUnit* units, uint8_t* states) {
  constexpr uint32_t L = minmax_lanes<T>();
  __shared__ MinMax<T> lanes[L];
  __shared__ T tail[L];
  const uint64_t u = blockIdx.x;
  const S* x = static_cast<const S*>(units[u].x);
  const uint64_t n = units[u].n;
  const uint64_t full = n / L * L;
  if (threadIdx.x < L) {
    MinMax<T> r{highest<T>(), lowest<T>(), false};
    uint64_t g = 0;
    for (; g + 8 * L <= full; g += 8 * L) {
      T v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = load<S, T>(x, g + i * L + threadIdx.x);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        r.lo = v[i] < r.lo ? v[i] : r.lo;
        r.hi = v[i] > r.hi ? v[i] : r.hi;
        r.nan |= v[i] != v[i];
      }
    }
    for (; g < full; g += L) {
      const T v = load<S, T>(x, g + threadIdx.x);
      r.lo = v < r.lo ? v : r.lo;
      r.hi = v > r.hi ? v : r.hi;
      r.nan |= v != v;
    }
    lanes[threadIdx.x] = r;
    if (full + threadIdx.x < n) tail[threadIdx.x] = load<S, T>(x, full + threadIdx.x);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const MinMax<T> m = minmax_combine<T>(lanes, tail, n - full);
    ExtState<T> a;
    if (m.lo < a.lo) a.lo = m.lo;
    if (m.hi > a.hi) a.hi = m.hi;
    a.nan = m.nan;
    encode(a, states + u * (2 * sizeof(T) + 1));
  }
}

// Moments: one unit per block of 32 warps; warp w folds sub-blocks w, w + 32, ...
template <class S, class T> __global__ void k_mom(const DevUnit* units, uint32_t op, uint8_t* states) {
  constexpr uint32_t kMaxSub = uint32_t(kUnitElems / kVarSub);
  __shared__ double means[kMaxSub], m2s[kMaxSub];
  __shared__ uint64_t ms[kMaxSub];
  __shared__ bool nan_unit;
  const uint64_t u = blockIdx.x;
  const S* x = static_cast<const S*>(units[u].x);
  const uint64_t n = units[u].n;
  const uint32_t warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  if (threadIdx.x == 0) nan_unit = false;
  __syncthreads();
  if (is_float<T>() && op == 20) {
    bool nan = false;
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const T v = load<S, T>(x, i);
      nan |= v != v;
    }
    if (__any_sync(0xffffffffu, nan) && lane == 0) nan_unit = true;
    __syncthreads();
    if (nan_unit) {
      if (threadIdx.x == 0) {
        MomState a;
        for (uint64_t i = 0; i < n; ++i) mom_one<T>(op, a, load<S, T>(x, i));
        encode(a, states + u * 24);
      }
      return;
    }
  }
  const uint32_t subs = uint32_t((n + kVarSub - 1) / kVarSub);
  for (uint32_t b = warp; b < subs; b += blockDim.x / kLanes) {
    const S* xb = x + uint64_t(b) * kVarSub;
    const uint64_t m = n - uint64_t(b) * kVarSub < kVarSub ? n - uint64_t(b) * kVarSub : kVarSub;
    const double sh = double(load<S, T>(xb, 0));
    // shifted sums: two canonical lane sums in one pass (fold_arith.h shifted_part + lane_tree)
    const uint64_t full = m / kLanes * kLanes;
    double s1 = 0, s2 = 0;
    uint64_t g = 0;
    for (; g + 8 * kLanes <= full; g += 8 * kLanes) {
      T v[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = load<S, T>(xb, g + i * kLanes + lane);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const double d = double(v[i]) - sh;
        s1 += d;
        s2 += d * d;
      }
    }
    for (; g < full; g += kLanes) {
      const double d = double(load<S, T>(xb, g + lane)) - sh;
      s1 += d;
      s2 += d * d;
    }
    if (full + lane < m) {
      const double d = double(load<S, T>(xb, full + lane)) - sh;
      s1 += d;
      s2 += d * d;
    }
    for (uint32_t s = kLanes / 2; s > 0; s >>= 1) {
      s1 += __shfl_down_sync(0xffffffffu, s1, s);
      s2 += __shfl_down_sync(0xffffffffu, s2, s);
    }
    SubMoments sm{0, 0, false};
    if (lane == 0) sm = sub_moments(sh, s1, s2, m);
    const bool redo = __shfl_sync(0xffffffffu, int(sm.redo), 0) != 0;
    if (redo) {
      double mean;
      if (is_float<T>()) {
        const double s = warp_lane_sum<S, T>(xb, m, lane, Xform::Identity, 0);
        mean = __shfl_sync(0xffffffffu, s, 0) / double(m);
      } else {
        const IntParts p = warp_int_parts<S, T>(xb, m, lane);
        mean = lane == 0 ? double(int_parts_value<T>(p)) / double(m) : 0.0;
        mean = __shfl_sync(0xffffffffu, mean, 0);
      }
      const double q = warp_lane_sum<S, T>(xb, m, lane, Xform::SquaredDeviation, mean);
      if (lane == 0) sm.mean = mean, sm.m2 = q;
    }
    if (lane == 0) means[b] = sm.mean, m2s[b] = sm.m2, ms[b] = m;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    MomState a;
    for (uint32_t b = 0; b < subs; ++b) chan_merge(a.n, a.mean, a.m2, ms[b], means[b], m2s[b]);
    encode(a, states + u * 24);
  }
}

// Counts: one unit per block of 256 threads, exact integer counters.
template <class S, class T> __global__ void k_count(const DevUnit* units, uint32_t op, uint8_t* states) {
  __shared__ unsigned long long total;
  const uint64_t u = blockIdx.x;
  const S* x = static_cast<const S*>(units[u].x);
  const uint64_t n = units[u].n;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  unsigned long long c = 0;
  if (op != 5)
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) c += count_pred<T>(op, load<S, T>(x, i));
  for (uint32_t s = kLanes / 2; s > 0; s >>= 1) c += __shfl_down_sync(0xffffffffu, c, s);
  if (threadIdx.x % kLanes == 0) atomicAdd(&total, c);
  __syncthreads();
  if (threadIdx.x == 0) {
    CountState a;
    a.n = n, a.cnt = total;
    encode(a, states + u * 16);
  }
}

// Product: element order within a unit (the CPU's), one thread per unit.
template <class S, class T> __global__ void k_prod(const DevUnit* units, uint64_t n_units, uint8_t* states) {
  const uint64_t u = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= n_units) return;
  const S* x = static_cast<const S*>(units[u].x);
  ProdState a;
  for (uint64_t i = 0; i < units[u].n; ++i) a.prod *= double(load<S, T>(x, i));
  encode(a, states + u * 8);
}

template <class S, class T>
void launch(uint32_t op, const DevUnit* d_units, uint64_t n_units, uint8_t* d_states, cudaStream_t st) {
  if (n_units == 0) return;
  const unsigned g = unsigned(n_units);
  switch (family_of(op)) {
    case Family::Sum: k_sum<S, T><<<unsigned((n_units + 7) / 8), 256, 0, st>>>(d_units, n_units, op, d_states); break;
    case Family::Extrema: k_ext<S, T><<<g, 64, 0, st>>>(d_units, d_states); break;
    case Family::Moments: k_mom<S, T><<<g, 1024, 0, st>>>(d_units, op, d_states); break;
    case Family::Counts: k_count<S, T><<<g, 256, 0, st>>>(d_units, op, d_states); break;
    case Family::Product: k_prod<S, T><<<unsigned((n_units + 127) / 128), 128, 0, st>>>(d_units, n_units, d_states); break;
    default: break;
  }
}

// Partial folds: one block per span (<= TET_CUDA_SPAN_MAX box elements), one thread per element
// running the element's events in order (fold_arith.h partial_element: the CPU's row steps and
// batch boundaries, the sum block in registers). Threads of a block read consecutive elements of
// each row, so the loads coalesce.
struct PartialCols {
  void* c[4];
};
template <class S, class T>
__global__ void k_partial(uint32_t op, const tet_cuda_span* spans, const uint32_t* events, const tet_cuda_batch* batches,
                          const S* const* tiles, PartialCols cols) {
  const tet_cuda_span sp = spans[blockIdx.x];
  if (threadIdx.x >= sp.n) return;
  void* col[4] = {cols.c[0], cols.c[1], cols.c[2], cols.c[3]};
  partial_element<S, T>(op, col, sp.j0 + threadIdx.x, events + sp.ev0, sp.ev1 - sp.ev0, batches, tiles);
}

// ---------------------------------------------------------------------------------------------
// Per-thread, per-device resources and the tile cache

struct Buffer {
  void* p = nullptr;
  size_t cap = 0;
};

cudaError_t grow_device(Buffer& b, size_t bytes) {
  if (b.cap >= bytes) return cudaSuccess;
  if (b.p != nullptr) cudaFree(b.p), b.p = nullptr, b.cap = 0;
  const cudaError_t e = cudaMalloc(&b.p, bytes);
  if (e == cudaSuccess) b.cap = bytes;
  return e;
}

struct ThreadDevice {
  cudaStream_t stream = nullptr;
  Buffer stage, units, states;
  Buffer batches, spans, events, tileptrs, cols[4];  // partial jobs
};

struct ThreadState {
  std::map<uint32_t, ThreadDevice> dev;
  Buffer pinned;  // host
  ~ThreadState() {
    for (auto& kv : dev) {
      cudaSetDevice(int(kv.first));
      if (kv.second.stream) cudaStreamDestroy(kv.second.stream);
      ThreadDevice& d = kv.second;
      for (Buffer* b : {&d.stage, &d.units, &d.states, &d.batches, &d.spans, &d.events, &d.tileptrs, &d.cols[0], &d.cols[1],
                        &d.cols[2], &d.cols[3]})
        if (b->p) cudaFree(b->p);
    }
    if (pinned.p) cudaFreeHost(pinned.p);
  }
};
thread_local ThreadState t_state;

struct CacheEntry {
  void* p = nullptr;
  uint64_t bytes = 0;
  uint32_t pins = 0;
  std::list<uint64_t>::iterator lru;
};
struct DeviceCache {
  std::map<uint64_t, CacheEntry> map;
  std::list<uint64_t> lru;  // front = most recent
  uint64_t bytes = 0;
};
std::mutex g_cache_mu;
std::map<uint32_t, DeviceCache> g_cache;

// Evicts unpinned entries (least recent first) until `need` more bytes fit in `budget`.
bool make_room(DeviceCache& c, uint64_t need, uint64_t budget) {
  for (auto it = c.lru.end(); c.bytes + need > budget && it != c.lru.begin();) {
    --it;
    CacheEntry& e = c.map[*it];
    if (e.pins > 0) continue;
    cudaFree(e.p);
    c.bytes -= e.bytes;
    const uint64_t key = *it;
    it = c.lru.erase(it);
    c.map.erase(key);
  }
  return c.bytes + need <= budget;
}

int fail(cudaError_t e, char* err, size_t len, const char* what) {
  std::snprintf(err, len, "%s: %s", what, cudaGetErrorString(e));
  cudaGetLastError();  // clear a non-sticky error
  return e == cudaErrorMemoryAllocation ? TET_CUDA_ERR_VRAM : TET_CUDA_ERR_RUNTIME;
}

// A job's tiles on the device: host tiles (back to back in the caller's staging, pinned when it
// came from staging()) go over in one copy on the thread's stream; resident tiles are pinned in
// the cache until release(). dptr[t] is tile t's device address.
struct JobTiles {
  uint32_t ordinal = 0;
  std::vector<const uint8_t*> dptr;
  std::vector<uint64_t> pinned;
  void release() {
    std::lock_guard<std::mutex> g(g_cache_mu);
    DeviceCache& c = g_cache[ordinal];
    for (uint64_t k : pinned) c.map[k].pins--;
    pinned.clear();
  }
};

int stage_tiles(ThreadDevice& td, const tet_cuda_tile* tiles, uint64_t n, uint32_t ordinal, size_t elem_bytes, JobTiles& jt,
                char* err, size_t len) {
  jt.ordinal = ordinal;
  jt.dptr.assign(n, nullptr);
  uint64_t stage_bytes = 0;
  const uint8_t* stage_host = nullptr;
  for (uint64_t t = 0; t < n; ++t)
    if (tiles[t].host != nullptr) {
      if (stage_host == nullptr) stage_host = static_cast<const uint8_t*>(tiles[t].host);
      stage_bytes = uint64_t(static_cast<const uint8_t*>(tiles[t].host) - stage_host) + tiles[t].elems * elem_bytes;
    }
  {
    std::lock_guard<std::mutex> g(g_cache_mu);
    DeviceCache& c = g_cache[ordinal];
    for (uint64_t t = 0; t < n; ++t) {
      if (tiles[t].host != nullptr) continue;
      auto it = c.map.find(tiles[t].key);
      if (it == c.map.end() || it->second.bytes != tiles[t].elems * elem_bytes) {
        for (uint64_t k : jt.pinned) c.map[k].pins--;
        jt.pinned.clear();
        std::snprintf(err, len, "tile %llx is not resident", (unsigned long long)tiles[t].key);
        return TET_CUDA_ERR_ARGS;
      }
      it->second.pins++;
      jt.pinned.push_back(it->first);
      c.lru.splice(c.lru.begin(), c.lru, it->second.lru);
      jt.dptr[t] = static_cast<const uint8_t*>(it->second.p);
    }
  }
  cudaError_t e;
  if ((e = grow_device(td.stage, stage_bytes)) != cudaSuccess) return jt.release(), fail(e, err, len, "cudaMalloc (stage)");
  if (stage_bytes > 0 && (e = cudaMemcpyAsync(td.stage.p, stage_host, stage_bytes, cudaMemcpyHostToDevice, td.stream)) != cudaSuccess)
    return jt.release(), fail(e, err, len, "copy to device");
  for (uint64_t t = 0; t < n; ++t)
    if (tiles[t].host != nullptr)
      jt.dptr[t] = static_cast<const uint8_t*>(td.stage.p) + (static_cast<const uint8_t*>(tiles[t].host) - stage_host);
  return TET_CUDA_OK;
}

// Keeps a finished job's whole tiles resident (within the budget), copied from the stage: an
// entry is visible to other threads' jobs only when its bytes are complete.
void keep_tiles(const tet_cuda_tile* tiles, uint64_t n, const JobTiles& jt, size_t elem_bytes, uint64_t budget) {
  std::lock_guard<std::mutex> g(g_cache_mu);
  DeviceCache& c = g_cache[jt.ordinal];
  for (uint64_t t = 0; t < n; ++t) {
    const tet_cuda_tile& tl = tiles[t];
    const uint64_t bytes = tl.elems * elem_bytes;
    if (tl.key == 0 || tl.host == nullptr || c.map.count(tl.key) || !make_room(c, bytes, budget)) continue;
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) { cudaGetLastError(); break; }  // no room now: not an error
    if (cudaMemcpy(p, jt.dptr[t], bytes, cudaMemcpyDeviceToDevice) != cudaSuccess) { cudaGetLastError(); cudaFree(p); break; }
    c.lru.push_front(tl.key);
    c.map[tl.key] = CacheEntry{p, bytes, 0, c.lru.begin()};
    c.bytes += bytes;
  }
}

// The calling thread's stream on `ordinal`.
int thread_device(uint32_t ordinal, ThreadDevice*& out, char* err, size_t len) {
  cudaError_t e = cudaSetDevice(int(ordinal));
  if (e != cudaSuccess) return fail(e, err, len, "cudaSetDevice");
  ThreadDevice& td = t_state.dev[ordinal];
  if (td.stream == nullptr && (e = cudaStreamCreateWithFlags(&td.stream, cudaStreamNonBlocking)) != cudaSuccess)
    return fail(e, err, len, "cudaStreamCreate");
  out = &td;
  return TET_CUDA_OK;
}

template <class S, class T> int fold_as(const tet_cuda_scalar_job* job, char* err, size_t len) {
  if (job->state_bytes != encoded_bytes<T>(job->op) || job->state_bytes == 0) {
    std::snprintf(err, len, "op %u: no device state of %llu bytes", job->op, (unsigned long long)job->state_bytes);
    return TET_CUDA_ERR_ARGS;
  }
  for (uint64_t u = 0; u < job->n_units; ++u) {
    const tet_cuda_unit& un = job->units[u];
    if (un.tile >= job->n_tiles || un.e0 > job->tiles[un.tile].elems || un.n > job->tiles[un.tile].elems - un.e0 ||
        un.n > kUnitElems) {
      std::snprintf(err, len, "unit %llu outside its tile", (unsigned long long)u);
      return TET_CUDA_ERR_ARGS;
    }
  }
  ThreadDevice* tdp = nullptr;
  if (const int rc = thread_device(job->ordinal, tdp, err, len)) return rc;
  ThreadDevice& td = *tdp;
  JobTiles jt;
  if (const int rc = stage_tiles(td, job->tiles, job->n_tiles, job->ordinal, sizeof(S), jt, err, len)) return rc;
  cudaError_t e;
  if ((e = grow_device(td.units, job->n_units * sizeof(DevUnit))) != cudaSuccess) return jt.release(), fail(e, err, len, "cudaMalloc (units)");
  if ((e = grow_device(td.states, job->n_units * job->state_bytes)) != cudaSuccess) return jt.release(), fail(e, err, len, "cudaMalloc (states)");
  std::vector<DevUnit> du(job->n_units);
  for (uint64_t u = 0; u < job->n_units; ++u) {
    const tet_cuda_unit& un = job->units[u];
    du[u] = DevUnit{jt.dptr[un.tile] + un.e0 * sizeof(S), un.n};
  }
  if ((e = cudaMemcpyAsync(td.units.p, du.data(), du.size() * sizeof(DevUnit), cudaMemcpyHostToDevice, td.stream)) != cudaSuccess)
    return jt.release(), fail(e, err, len, "copy units");
  launch<S, T>(job->op, static_cast<const DevUnit*>(td.units.p), job->n_units, static_cast<uint8_t*>(td.states.p), td.stream);
  if ((e = cudaGetLastError()) != cudaSuccess) return jt.release(), fail(e, err, len, "kernel launch");
  e = cudaMemcpyAsync(job->states, td.states.p, job->n_units * job->state_bytes, cudaMemcpyDeviceToHost, td.stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(td.stream);
  jt.release();
  if (e != cudaSuccess) return fail(e, err, len, "kernel or copy back");
  keep_tiles(job->tiles, job->n_tiles, jt, sizeof(S), job->cache_budget);
  return TET_CUDA_OK;
}

// A partial job: tiles staged as for scalar jobs, the batches / spans / events and the task's
// box columns copied over, one k_partial launch, the columns copied back.
template <class S, class T> int partial_as(const tet_cuda_partial_job* job, char* err, size_t len) {
  if (const char* why = partial_job_invalid<T>(job)) {
    std::snprintf(err, len, "malformed partial job: %s", why);
    return TET_CUDA_ERR_ARGS;
  }
  if (job->n_spans > 0x7fffffffull) {
    std::snprintf(err, len, "partial job of %llu spans (grid limit)", (unsigned long long)job->n_spans);
    return TET_CUDA_ERR_ARGS;
  }
  uint32_t cb[4];
  partial_col_bytes<T>(job->op, cb);
  ThreadDevice* tdp = nullptr;
  if (const int rc = thread_device(job->ordinal, tdp, err, len)) return rc;
  ThreadDevice& td = *tdp;
  JobTiles jt;
  if (const int rc = stage_tiles(td, job->tiles, job->n_tiles, job->ordinal, sizeof(S), jt, err, len)) return rc;
  cudaError_t e = cudaSuccess;
  auto put = [&](Buffer& b, const void* host, size_t bytes) {
    if (e != cudaSuccess || bytes == 0) return;
    if ((e = grow_device(b, bytes)) != cudaSuccess) return;
    e = cudaMemcpyAsync(b.p, host, bytes, cudaMemcpyHostToDevice, td.stream);
  };
  put(td.batches, job->batches, job->n_batches * sizeof(tet_cuda_batch));
  put(td.spans, job->spans, job->n_spans * sizeof(tet_cuda_span));
  put(td.events, job->events, job->n_events * sizeof(uint32_t));
  put(td.tileptrs, jt.dptr.data(), jt.dptr.size() * sizeof(const uint8_t*));
  PartialCols cols{{nullptr, nullptr, nullptr, nullptr}};
  for (int c = 0; c < 4; ++c) {
    if (cb[c] == 0) continue;
    put(td.cols[c], job->col[c], job->box_len * cb[c]);
    cols.c[c] = td.cols[c].p;
  }
  if (e != cudaSuccess) return jt.release(), fail(e, err, len, "copy partial job");
  if (job->n_spans > 0)
    k_partial<S, T><<<unsigned(job->n_spans), TET_CUDA_SPAN_MAX, 0, td.stream>>>(
        job->op, static_cast<const tet_cuda_span*>(td.spans.p), static_cast<const uint32_t*>(td.events.p),
        static_cast<const tet_cuda_batch*>(td.batches.p), static_cast<const S* const*>(td.tileptrs.p), cols);
  if ((e = cudaGetLastError()) != cudaSuccess) return jt.release(), fail(e, err, len, "kernel launch");
  for (int c = 0; c < 4 && e == cudaSuccess; ++c)
    if (cb[c] != 0 && job->box_len > 0)
      e = cudaMemcpyAsync(job->col[c], cols.c[c], job->box_len * cb[c], cudaMemcpyDeviceToHost, td.stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(td.stream);
  jt.release();
  if (e != cudaSuccess) return fail(e, err, len, "kernel or copy back");
  keep_tiles(job->tiles, job->n_tiles, jt, sizeof(S), job->cache_budget);
  return TET_CUDA_OK;
}

// ---------------------------------------------------------------------------------------------
// The ABI

int m_init(char* err, size_t len) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    std::snprintf(err, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return -1;
  }
  return n;
}

int m_device_info(uint32_t ordinal, tet_cuda_device* out) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, int(ordinal)) != cudaSuccess) return TET_CUDA_ERR_RUNTIME;
  out->ordinal = ordinal;
  std::snprintf(out->name, sizeof out->name, "%s", p.name);
  size_t free_b = 0, total_b = 0;
  if (cudaSetDevice(int(ordinal)) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    out->free_bytes = free_b, out->total_bytes = total_b;
  } else {
    out->free_bytes = out->total_bytes = p.totalGlobalMem;
  }
  out->sm_count = uint32_t(p.multiProcessorCount), out->cc_major = uint32_t(p.major), out->cc_minor = uint32_t(p.minor);
  return TET_CUDA_OK;
}

void m_caps(tet_cuda_caps* c) {
  c->dtype_mask = kDtypeMask;
  c->scalar_op_mask = kScalarOpMask;
  c->partial_op_mask = kPartialOpMask;
}

int m_resident(uint32_t ordinal, uint64_t key) {
  std::lock_guard<std::mutex> g(g_cache_mu);
  auto it = g_cache.find(ordinal);
  return it != g_cache.end() && it->second.map.count(key) ? 1 : 0;
}

int m_scalar_fold(const tet_cuda_scalar_job* job, char* err, size_t len) {
  if (job == nullptr || job->struct_size < sizeof(tet_cuda_scalar_job)) return TET_CUDA_ERR_ARGS;
  return by_dtype(job->dtype, [&](auto s, auto t) { return fold_as<decltype(s), decltype(t)>(job, err, len); });
}

int m_partial_fold(const tet_cuda_partial_job* job, char* err, size_t len) {
  if (job == nullptr || job->struct_size < sizeof(tet_cuda_partial_job)) return TET_CUDA_ERR_ARGS;
  return by_dtype(job->dtype, [&](auto s, auto t) { return partial_as<decltype(s), decltype(t)>(job, err, len); });
}

void* m_staging(uint64_t bytes) {
  Buffer& b = t_state.pinned;
  if (b.cap >= bytes) return b.p;
  if (b.p != nullptr) cudaFreeHost(b.p), b.p = nullptr, b.cap = 0;
  if (cudaHostAlloc(&b.p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    b.p = nullptr;
    return nullptr;  // the host falls back to pageable memory
  }
  b.cap = bytes;
  return b.p;
}

void m_cache_clear() {
  std::lock_guard<std::mutex> g(g_cache_mu);
  for (auto& kv : g_cache) {
    cudaSetDevice(int(kv.first));
    for (auto it = kv.second.map.begin(); it != kv.second.map.end();) {
      if (it->second.pins > 0) { ++it; continue; }
      cudaFree(it->second.p);
      kv.second.bytes -= it->second.bytes;
      kv.second.lru.erase(it->second.lru);
      it = kv.second.map.erase(it);
    }
  }
}

uint64_t m_cache_bytes(uint32_t ordinal) {
  std::lock_guard<std::mutex> g(g_cache_mu);
  auto it = g_cache.find(ordinal);
  return it == g_cache.end() ? 0 : it->second.bytes;
}

const tet_cuda_api kApi = {TET_CUDA_ABI_VERSION, sizeof(tet_cuda_api), "cuda", m_init, m_device_info, m_caps, m_resident,
                           m_scalar_fold, m_partial_fold, m_staging, m_cache_clear, m_cache_bytes};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tet_cuda_api* tet_cuda_get_api(uint32_t version) {
  return version == TET_CUDA_ABI_VERSION ? &kApi : nullptr;
}
