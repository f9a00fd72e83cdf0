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

#define TET_CUDA_ABI_VERSION 1u
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

/* A partial row batch (fold_driver run_tasks): k <= 8 rows of n elements that fold into box
 * elements [j0, j0 + n); row i starts at element row[i] of the job's tile. flush != 0 ends a unit
 * after the batch (the f64 sum layouts fold their block into the Neumaier state). */
typedef struct tet_cuda_batch {
  uint64_t row[8];
  uint64_t j0, n;
  uint32_t k, flush;
} tet_cuda_batch;

/* One partial task's box states, as the family's SoA columns (f64 / u64 / T arrays of box_len,
 * fold/ops/<family>.h Soa), updated in place by the batches of each tile in order. */
typedef struct tet_cuda_partial_job {
  uint32_t struct_size;
  uint32_t op, dtype, ordinal;
  const tet_cuda_tile* tiles;
  uint64_t n_tiles;
  const uint64_t* tile_batches; /* batches of tile t: [tile_batches[t], tile_batches[t + 1]) */
  const tet_cuda_batch* batches;
  uint64_t box_len;
  void* col[4];                 /* the family's columns (see cuda/README.md for each layout) */
  uint64_t cache_budget;
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
