/* The C ABI between the default addon (native/exec/device.cpp, no CUDA dependency) and the
 * separately built device module (tetration_cuda.so: cuda/module.cu; or the host stub
 * cuda/host_stub.cpp the tests load). The addon dlopen()s the module and calls
 * tet_cuda_get_api(TET_CUDA_ABI_VERSION); a module built for another ABI version returns NULL
 * and the addon reports gpu_module_incompatible. Plain C types only; every struct carries its
 * size so that a later version can only grow it. */
#ifndef TET_CUDA_ABI_H
#define TET_CUDA_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TET_CUDA_ABI_VERSION 2u
#define TET_CUDA_ENTRY "tet_cuda_get_api"

/* Return codes of the fold entry points. Any non-zero code makes the addon fold on the CPU. */
enum {
  TET_CUDA_OK = 0,
  TET_CUDA_ERR_VRAM = 1,     /* device memory exhausted (or over the budget): gpu_vram_exceeded */
  TET_CUDA_ERR_RUNTIME = 2,  /* any other CUDA / kernel failure: gpu_runtime_error */
  TET_CUDA_ERR_ARGS = 3      /* a request the module does not support (a bug in the caller) */
};

/* Capability bits: ops (bit = tet::Op wire code) and dtypes (bit = tet::DType wire code). */
typedef struct tet_cuda_caps {
  uint32_t struct_size;
  uint32_t dtype_mask;
  uint64_t scalar_op_mask;
  uint64_t partial_op_mask;
} tet_cuda_caps;

typedef struct tet_cuda_device {
  uint32_t struct_size;
  uint32_t ordinal;
  char name[128];
  uint64_t total_bytes;
  uint64_t free_bytes;
  uint32_t sm_count;
  uint32_t cc_major, cc_minor;
  uint32_t reserved;
} tet_cuda_device;

/* One tile of a job: its dense selected elements (stored type of the dtype; f16 as its bits),
 * in tile-local row-major order. `key` names the tile in the device tile cache (0 = do not
 * cache); host == NULL asks for the resident copy (the caller checked tet_cuda_api.resident). */
typedef struct tet_cuda_tile {
  uint64_t key;
  const void* host;
  uint64_t elems;
} tet_cuda_tile;

/* A scalar work unit: elements [e0, e0 + n) of tiles[tile] (exec::ScalarUnit). */
typedef struct tet_cuda_unit {
  uint64_t tile, e0, n;
} tet_cuda_unit;

/* Fold every unit into its own state; states[u] is the family's encoded state
 * (fold/ops/<family>.h encode: little-endian, kEncodedBytes each) for the host to merge in unit
 * order with the CPU's own merge. */
typedef struct tet_cuda_scalar_job {
  uint32_t struct_size;
  uint32_t op, dtype, ordinal;
  const tet_cuda_tile* tiles;
  uint64_t n_tiles;
  const tet_cuda_unit* units;
  uint64_t n_units;
  uint8_t* states;         /* n_units x state_bytes */
  uint64_t state_bytes;    /* per unit; checked against the module's layout */
  uint64_t cache_budget;   /* bytes of VRAM the tile cache may keep after the job (0 = none) */
} tet_cuda_scalar_job;

/* Partial folds (a subset of axes reduced, the last axis kept): one job is a run of whole tiles
 * of one partial task (exec::PartialTask) folding into that task's box states.
 *
 * A batch is k <= 8 rows of n elements of one job tile (the staged selected elements of tiles[tile],
 * tile-local selection order) that fold into box elements [j0, j0 + n): row i is elements
 * [row[i], row[i] + n) of that tile; element j0 + o of the box sees the k values row[i] + o in row
 * order (fold/row_kernels.h consume_rows: the CPU's batches, formed by the same rule). */
typedef struct tet_cuda_batch {
  uint64_t row[8];
  uint64_t j0, n;
  uint32_t k, tile;
} tet_cuda_batch;

/* A span: box elements [j0, j0 + n) that see the same events, events[ev0, ev1) in order. An event
 * is a batch index, or TET_CUDA_FLUSH: the end of a work unit, where the blocked layouts (f64 and
 * small-integer sums) fold their block into the state (Sum::flush) for elements the unit touched;
 * spans the unit did not touch carry no flush event. Spans are cut to <= TET_CUDA_SPAN_MAX
 * elements and never overlap; a box element in no span is left as it is. */
#define TET_CUDA_FLUSH 0xffffffffu
#define TET_CUDA_SPAN_MAX 256u
typedef struct tet_cuda_span {
  uint64_t j0, n;
  uint64_t ev0, ev1;
} tet_cuda_span;

/* The task's box states as the family's SoA columns (fold/ops/<family>.h Soa, box_len elements
 * each), read and updated in place:
 *   sum, mean, norms, float nan_mean   col[0] s (f64), col[1] c (f64), nan_mean: col[2] n (f64)
 *   integer sum / mean / nan_mean      col[0] isum (two's-complement int128, 16 bytes LE)
 *   min / max                          col[0] v (the fold type: f32 for f16), floats col[1] NaN flag (u8)
 *   var / std / nan_std                col[0] n, col[1] mean, col[2] m2 (f64)
 *   all_finite, any_*, *_count         col[0] u (u64); count: none
 *   product                            col[0] p (f64) */
typedef struct tet_cuda_partial_job {
  uint32_t struct_size;
  uint32_t op, dtype, ordinal;
  const tet_cuda_tile* tiles;
  uint64_t n_tiles;
  const tet_cuda_batch* batches;
  uint64_t n_batches;
  const tet_cuda_span* spans;
  uint64_t n_spans;
  const uint32_t* events;
  uint64_t n_events;
  uint64_t box_len;
  void* col[4];
  uint64_t cache_budget;   /* as for scalar jobs */
} tet_cuda_partial_job;

typedef struct tet_cuda_api {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* backend; /* "cuda" | "host-stub" */
  /* Devices visible to the module (< 0: no usable driver / runtime, err says why). */
  int (*init)(char* err, size_t err_len);
  int (*device_info)(uint32_t ordinal, tet_cuda_device* out);
  void (*caps)(tet_cuda_caps* out);
  /* Whether tile `key` is resident on `ordinal` (the caller then passes host = NULL). */
  int (*resident)(uint32_t ordinal, uint64_t key);
  int (*scalar_fold)(const tet_cuda_scalar_job* job, char* err, size_t err_len);
  int (*partial_fold)(const tet_cuda_partial_job* job, char* err, size_t err_len);
  /* Pinned host staging of at least `bytes` for the calling thread (NULL: use pageable memory). */
  void* (*staging)(uint64_t bytes);
  void (*cache_clear)(void);
  uint64_t (*cache_bytes)(uint32_t ordinal);
} tet_cuda_api;

typedef const tet_cuda_api* (*tet_cuda_get_api_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif
#endif
