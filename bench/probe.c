// Memory-bandwidth probe for the tetration benchmark: an f64-accumulating AVX2 sum over the
// same bytes the engine folds, on all cores. It is the ceiling the engine is compared with.
//
//   probe warm     FILE OFFSET LEN DTYPE REPS   mapping touched once, then REPS timed folds
//   probe warm-minmax FILE OFFSET LEN DTYPE REPS  the same, one pass computing min and max
//   probe fault    FILE OFFSET LEN DTYPE        fresh mmap, pages demand-faulted by the fold
//   probe populate FILE OFFSET LEN DTYPE        mmap(MAP_POPULATE) + fold, mapping time included
//   probe pread    FILE OFFSET LEN DTYPE        pread into per-thread reused windows + fold
//   probe zstd     TETFILE [REPS]               libzstd decode rate of every zstd chunk, one core,
//                                               plus an all-core decode+fold for reference
//   probe compress LEVEL IN OUT                 zstd-compress IN into one frame OUT (generator aid)
//   probe rows fault|pread sum|minmax FILE OFFSET ROW_BYTES ROW0 ROW1 STEP DTYPE
//                                               a fresh process's answer over rows ROW0..ROW1 (every
//                                               STEP-th) of a C-order array at OFFSET: open, map or
//                                               pread, fold, all cores (rows dealt in runs)
//   probe zstd-rows TETFILE ROW_BYTES ROW0 ROW1 STEP
//                                               the same over a zstd .tet of full-width row chunks:
//                                               the touched chunks decoded on all cores, rows folded
//
// DTYPE: f32 | f64 | i32. Output: one JSON line on stdout. Built by bench/run.mjs with
// cc -O3 -mavx2 -pthread (plus the vendored zstd sources for the zstd modes).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef PROBE_ZSTD
#include "zstd.h"
#endif

enum dtype { DT_F32, DT_F64, DT_I32 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// This process's CPU time (user + system), ms: bench/fresh.mjs subtracts it from the machine's busy
// time during a trial to see what else ran.
static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

static void die(const char* what) {
  fprintf(stderr, "probe: %s: %s\n", what, strerror(errno));
  exit(2);
}

// ---- threads: every mode fans out the same way ------------------------------------------
#define MAX_THREADS 256

// All online cores (at most MAX_THREADS); PROBE_THREADS overrides (for single-thread comparisons
// while diagnosing).
static int threads(void) {
  const char* env = getenv("PROBE_THREADS");
  long n = env && atoi(env) > 0 ? atoi(env) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

// Thread t's items [*b, *e) of n items split into nt nearly equal parts.
static void share(uint64_t n, int nt, int t, uint64_t* b, uint64_t* e) {
  uint64_t per = (n + (uint64_t)nt - 1) / (uint64_t)nt;
  *b = per * (uint64_t)t, *e = *b + per;
  if (*b > n) *b = n;
  if (*e > n) *e = n;
}

// fn on each of jobs[0, nt) (job_size bytes apart): jobs 1.. on threads of their own, job 0 on
// the calling thread; returns when all are done.
static void run_threads(void* jobs, size_t job_size, int nt, void* (*fn)(void*)) {
  pthread_t th[MAX_THREADS];
  for (int t = 1; t < nt; t++)
    if (pthread_create(&th[t], NULL, fn, (char*)jobs + (size_t)t * job_size)) die("pthread_create");
  fn(jobs);
  for (int t = 1; t < nt; t++) pthread_join(th[t], NULL);
}

static enum dtype parse_dtype(const char* s) {
  if (!strcmp(s, "f32")) return DT_F32;
  if (!strcmp(s, "f64")) return DT_F64;
  if (!strcmp(s, "i32")) return DT_I32;
  fprintf(stderr, "probe: unknown dtype %s (expected f32, f64 or i32)\n", s);
  exit(2);
}

static size_t elem_size(enum dtype d) { return d == DT_F64 ? 8 : 4; }

// Sum of n elements at p, f64 accumulation, 4 independent vector accumulators.
static double fold_sum(const void* p, size_t n, enum dtype d) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  double tail = 0;
  if (d == DT_F32) {
    const float* f = (const float*)p;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(f + i)));
      a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 4)));
      a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 8)));
      a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(f + i + 12)));
    }
    for (; i < n; i++) tail += f[i];
  } else if (d == DT_F64) {
    const double* f = (const double*)p;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_loadu_pd(f + i));
      a1 = _mm256_add_pd(a1, _mm256_loadu_pd(f + i + 4));
      a2 = _mm256_add_pd(a2, _mm256_loadu_pd(f + i + 8));
      a3 = _mm256_add_pd(a3, _mm256_loadu_pd(f + i + 12));
    }
    for (; i < n; i++) tail += f[i];
  } else {
    const int32_t* f = (const int32_t*)p;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_add_pd(a0, _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i*)(f + i))));
      a1 = _mm256_add_pd(a1, _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i*)(f + i + 4))));
      a2 = _mm256_add_pd(a2, _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i*)(f + i + 8))));
      a3 = _mm256_add_pd(a3, _mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i*)(f + i + 12))));
    }
    for (; i < n; i++) tail += f[i];
  }
  __m256d s = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  double lanes[4];
  _mm256_storeu_pd(lanes, s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + tail;
}

// Min and max of n elements at p in one pass, 2 vector accumulators each (NaN-free data).
static void fold_minmax(const void* p, size_t n, enum dtype d, double* lo_out, double* hi_out) {
  size_t i = 0;
  double lo, hi;
  if (d == DT_F32) {
    const float* f = (const float*)p;
    __m256 l0 = _mm256_set1_ps(__builtin_inff()), l1 = l0, h0 = _mm256_set1_ps(-__builtin_inff()), h1 = h0;
    for (; i + 16 <= n; i += 16) {
      __m256 x0 = _mm256_loadu_ps(f + i), x1 = _mm256_loadu_ps(f + i + 8);
      l0 = _mm256_min_ps(l0, x0), l1 = _mm256_min_ps(l1, x1), h0 = _mm256_max_ps(h0, x0), h1 = _mm256_max_ps(h1, x1);
    }
    float a[8], b[8];
    _mm256_storeu_ps(a, _mm256_min_ps(l0, l1));
    _mm256_storeu_ps(b, _mm256_max_ps(h0, h1));
    lo = a[0], hi = b[0];
    for (int k = 1; k < 8; k++) lo = a[k] < lo ? a[k] : lo, hi = b[k] > hi ? b[k] : hi;
    for (; i < n; i++) lo = f[i] < lo ? f[i] : lo, hi = f[i] > hi ? f[i] : hi;
  } else if (d == DT_F64) {
    const double* f = (const double*)p;
    __m256d l0 = _mm256_set1_pd(__builtin_inf()), l1 = l0, h0 = _mm256_set1_pd(-__builtin_inf()), h1 = h0;
    for (; i + 8 <= n; i += 8) {
      __m256d x0 = _mm256_loadu_pd(f + i), x1 = _mm256_loadu_pd(f + i + 4);
      l0 = _mm256_min_pd(l0, x0), l1 = _mm256_min_pd(l1, x1), h0 = _mm256_max_pd(h0, x0), h1 = _mm256_max_pd(h1, x1);
    }
    double a[4], b[4];
    _mm256_storeu_pd(a, _mm256_min_pd(l0, l1));
    _mm256_storeu_pd(b, _mm256_max_pd(h0, h1));
    lo = a[0], hi = b[0];
    for (int k = 1; k < 4; k++) lo = a[k] < lo ? a[k] : lo, hi = b[k] > hi ? b[k] : hi;
    for (; i < n; i++) lo = f[i] < lo ? f[i] : lo, hi = f[i] > hi ? f[i] : hi;
  } else {
    const int32_t* f = (const int32_t*)p;
    __m256i l0 = _mm256_set1_epi32(INT32_MAX), l1 = l0, h0 = _mm256_set1_epi32(INT32_MIN), h1 = h0;
    for (; i + 16 <= n; i += 16) {
      __m256i x0 = _mm256_loadu_si256((const __m256i*)(f + i)), x1 = _mm256_loadu_si256((const __m256i*)(f + i + 8));
      l0 = _mm256_min_epi32(l0, x0), l1 = _mm256_min_epi32(l1, x1), h0 = _mm256_max_epi32(h0, x0), h1 = _mm256_max_epi32(h1, x1);
    }
    int32_t a[8], b[8];
    _mm256_storeu_si256((__m256i*)a, _mm256_min_epi32(l0, l1));
    _mm256_storeu_si256((__m256i*)b, _mm256_max_epi32(h0, h1));
    int32_t il = a[0], ih = b[0];
    for (int k = 1; k < 8; k++) il = a[k] < il ? a[k] : il, ih = b[k] > ih ? b[k] : ih;
    for (; i < n; i++) il = f[i] < il ? f[i] : il, ih = f[i] > ih ? f[i] : ih;
    lo = il, hi = ih;
  }
  *lo_out = lo, *hi_out = hi;
}

struct mm_job {
  const uint8_t* base;
  uint64_t begin, end;
  enum dtype dt;
  double lo, hi;
};

static void* run_mm_job(void* arg) {
  struct mm_job* j = (struct mm_job*)arg;
  fold_minmax(j->base + j->begin, (j->end - j->begin) / elem_size(j->dt), j->dt, &j->lo, &j->hi);
  return NULL;
}

// One min+max pass over a mapped span on all cores.
static void minmax_parallel(const uint8_t* base, uint64_t len, enum dtype dt, double* lo, double* hi) {
  const int nt = threads();
  const size_t es = elem_size(dt);
  struct mm_job jobs[MAX_THREADS];
  for (int t = 0; t < nt; t++) {
    uint64_t b, e;
    share(len / es, nt, t, &b, &e);
    jobs[t] = (struct mm_job){base, b * es, e * es, dt, __builtin_inf(), -__builtin_inf()};
  }
  run_threads(jobs, sizeof jobs[0], nt, run_mm_job);
  *lo = jobs[0].lo, *hi = jobs[0].hi;
  for (int t = 1; t < nt; t++) {
    if (jobs[t].end > jobs[t].begin) {
      *lo = jobs[t].lo < *lo ? jobs[t].lo : *lo;
      *hi = jobs[t].hi > *hi ? jobs[t].hi : *hi;
    }
  }
}

// ---- threaded fold over a byte span ------------------------------------------------------
enum source { SRC_MAP, SRC_PREAD };

struct job {
  enum source src;
  const uint8_t* base;  // SRC_MAP: start of the span in the mapping
  int fd;               // SRC_PREAD
  uint64_t file_off;    // SRC_PREAD: file offset of the span start
  uint64_t begin, end;  // byte range within the span, element aligned
  enum dtype dt;
  double sum;
};

#define PREAD_WINDOW (4u << 20)

static void* run_job(void* arg) {
  struct job* j = (struct job*)arg;
  size_t es = elem_size(j->dt);
  if (j->src == SRC_MAP) {
    j->sum = fold_sum(j->base + j->begin, (j->end - j->begin) / es, j->dt);
    return NULL;
  }
  uint8_t* win = aligned_alloc(4096, PREAD_WINDOW);
  if (!win) die("aligned_alloc");
  double s = 0;
  for (uint64_t at = j->begin; at < j->end;) {
    uint64_t want = j->end - at < PREAD_WINDOW ? j->end - at : PREAD_WINDOW;
    uint64_t got = 0;
    while (got < want) {
      ssize_t r = pread(j->fd, win + got, want - got, (off_t)(j->file_off + at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) die("pread");
      got += (uint64_t)r;
    }
    s += fold_sum(win, want / es, j->dt);
    at += want;
  }
  free(win);
  j->sum = s;
  return NULL;
}

static double fold_parallel(enum source src, const uint8_t* base, int fd, uint64_t file_off,
                            uint64_t len, enum dtype dt) {
  const int nt = threads();
  const size_t es = elem_size(dt);
  struct job jobs[MAX_THREADS];
  for (int t = 0; t < nt; t++) {
    uint64_t b, e;
    share(len / es, nt, t, &b, &e);
    jobs[t] = (struct job){src, base, fd, file_off, b * es, e * es, dt, 0};
  }
  run_threads(jobs, sizeof jobs[0], nt, run_job);
  double s = 0;
  for (int t = 0; t < nt; t++) s += jobs[t].sum;
  return s;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static const uint8_t* map_span(int fd, uint64_t off, uint64_t len, int flags, void** map_base,
                               size_t* map_len) {
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start = off / page * page;
  *map_len = (size_t)(off - start + len);
  *map_base = mmap(NULL, *map_len, PROT_READ, MAP_SHARED | flags, fd, (off_t)start);
  if (*map_base == MAP_FAILED) die("mmap");
  return (const uint8_t*)*map_base + (off - start);
}

static int mode_span(const char* mode, int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: probe %s FILE OFFSET LEN DTYPE%s\n", mode,
            strncmp(mode, "warm", 4) ? "" : " REPS");
    return 2;
  }
  const char* path = argv[2];
  uint64_t off = strtoull(argv[3], NULL, 10), len = strtoull(argv[4], NULL, 10);
  enum dtype dt = parse_dtype(argv[5]);
  double t0 = now_s();
  int fd = open(path, O_RDONLY);
  if (fd < 0) die("open");
  void* mb;
  size_t ml;
  double sum = 0, secs = 0;
  if (!strcmp(mode, "warm-minmax")) {
    int reps = argc > 6 ? atoi(argv[6]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 1000) reps = 1000;
    const uint8_t* p = map_span(fd, off, len, 0, &mb, &ml);
    double lo, hi;
    minmax_parallel(p, len, dt, &lo, &hi);  // touch: fault every page in
    double* t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++) {
      double a = now_s();
      minmax_parallel(p, len, dt, &lo, &hi);
      t[r] = now_s() - a;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    printf("{\"mode\":\"warm-minmax\",\"seconds\":%.9f,\"best\":%.9f,\"min\":%.17g,\"max\":%.17g,\"bytes\":%llu,\"threads\":%d}\n",
           t[reps / 2], t[0], lo, hi, (unsigned long long)len, threads());
    free(t);
    munmap(mb, ml);
    close(fd);
    return 0;
  }
  if (!strcmp(mode, "warm")) {
    int reps = argc > 6 ? atoi(argv[6]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 1000) reps = 1000;
    const uint8_t* p = map_span(fd, off, len, 0, &mb, &ml);
    sum = fold_parallel(SRC_MAP, p, -1, 0, len, dt);  // touch: fault every page in
    double* t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++) {
      double a = now_s();
      sum = fold_parallel(SRC_MAP, p, -1, 0, len, dt);
      t[r] = now_s() - a;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    secs = t[reps / 2];
    printf("{\"mode\":\"warm\",\"seconds\":%.9f,\"best\":%.9f,\"sum\":%.17g,\"bytes\":%llu,\"threads\":%d}\n",
           secs, t[0], sum, (unsigned long long)len, threads());
    free(t);
    munmap(mb, ml);
    close(fd);
    return 0;
  }
  if (!strcmp(mode, "fault")) {
    const uint8_t* p = map_span(fd, off, len, 0, &mb, &ml);
    sum = fold_parallel(SRC_MAP, p, -1, 0, len, dt);
    munmap(mb, ml);
  } else if (!strcmp(mode, "populate")) {
    const uint8_t* p = map_span(fd, off, len, MAP_POPULATE, &mb, &ml);
    sum = fold_parallel(SRC_MAP, p, -1, 0, len, dt);
    munmap(mb, ml);
  } else if (!strcmp(mode, "pread")) {
    sum = fold_parallel(SRC_PREAD, NULL, fd, off, len, dt);
  } else {
    fprintf(stderr, "probe: unknown mode %s\n", mode);
    return 2;
  }
  close(fd);
  secs = now_s() - t0;
  printf("{\"mode\":\"%s\",\"seconds\":%.9f,\"sum\":%.17g,\"bytes\":%llu,\"threads\":%d}\n", mode, secs,
         sum, (unsigned long long)len, threads());
  return 0;
}


// ---- fresh-process row selections (bench/fresh.mjs) --------------------------------------
struct rjob {
  int pread_mode, minmax;
  const uint8_t* base;  // mapping of the whole span (fault mode)
  int fd;
  uint64_t off, row_bytes, step, first, last;  // this job's rows: first..last (indices into the selection)
  uint64_t row0;
  enum dtype dt;
  double sum, lo, hi;
};

static void* run_rjob(void* arg) {
  struct rjob* j = (struct rjob*)arg;
  size_t es = elem_size(j->dt);
  uint8_t* win = NULL;
  uint64_t win_cap = 0;
  j->sum = 0, j->lo = __builtin_inf(), j->hi = -__builtin_inf();
  // Contiguous rows (step 1) are read as one run of up to PREAD_WINDOW bytes.
  uint64_t per_read = j->step == 1 ? (PREAD_WINDOW / j->row_bytes ? PREAD_WINDOW / j->row_bytes : 1) : 1;
  for (uint64_t i = j->first; i < j->last; i += per_read) {
    uint64_t n_rows = j->last - i < per_read ? j->last - i : per_read;
    uint64_t at = j->off + (j->row0 + i * j->step) * j->row_bytes, len = n_rows * j->row_bytes;
    const uint8_t* p;
    if (j->pread_mode) {
      if (len > win_cap) {
        free(win);
        win_cap = (len + 4095) / 4096 * 4096;
        win = aligned_alloc(4096, win_cap);
        if (!win) die("aligned_alloc");
      }
      for (uint64_t got = 0; got < len;) {
        ssize_t r = pread(j->fd, win + got, len - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("pread");
        got += (uint64_t)r;
      }
      p = win;
    } else {
      p = j->base + at;
    }
    if (j->minmax) {
      double lo, hi;
      fold_minmax(p, len / es, j->dt, &lo, &hi);
      j->lo = lo < j->lo ? lo : j->lo, j->hi = hi > j->hi ? hi : j->hi;
    } else {
      j->sum += fold_sum(p, len / es, j->dt);
    }
  }
  free(win);
  return NULL;
}

static int mode_rows(int argc, char** argv) {
  if (argc < 11) {
    fprintf(stderr, "usage: probe rows fault|pread sum|minmax FILE OFFSET ROW_BYTES ROW0 ROW1 STEP DTYPE\n");
    return 2;
  }
  double t0 = now_s();
  const int pread_mode = !strcmp(argv[2], "pread"), minmax = !strcmp(argv[3], "minmax");
  uint64_t off = strtoull(argv[5], NULL, 10), row_bytes = strtoull(argv[6], NULL, 10);
  uint64_t row0 = strtoull(argv[7], NULL, 10), row1 = strtoull(argv[8], NULL, 10), step = strtoull(argv[9], NULL, 10);
  enum dtype dt = parse_dtype(argv[10]);
  if (!row_bytes || !step || row1 <= row0) {
    fprintf(stderr, "probe rows: empty selection\n");
    return 2;
  }
  int fd = open(argv[4], O_RDONLY);
  if (fd < 0) die("open");
  uint64_t n = (row1 - row0 + step - 1) / step;
  void* mb = NULL;
  size_t ml = 0;
  const uint8_t* base = NULL;
  if (!pread_mode) {
    // Map only the span the rows cover; `base` addresses file offsets.
    uint64_t first_at = off + row0 * row_bytes, end_at = off + (row0 + (n - 1) * step + 1) * row_bytes;
    const uint8_t* p = map_span(fd, first_at, end_at - first_at, 0, &mb, &ml);
    base = p - first_at;
  }
  const int nt = threads();
  struct rjob jobs[MAX_THREADS];
  for (int t = 0; t < nt; t++) {
    uint64_t b, e;
    share(n, nt, t, &b, &e);
    jobs[t] = (struct rjob){pread_mode, minmax, base, fd, off, row_bytes, step, b, e, row0, dt, 0, 0, 0};
  }
  run_threads(jobs, sizeof jobs[0], nt, run_rjob);
  double sum = jobs[0].sum, lo = jobs[0].lo, hi = jobs[0].hi;
  for (int t = 1; t < nt; t++) {
    sum += jobs[t].sum;
    lo = jobs[t].lo < lo ? jobs[t].lo : lo, hi = jobs[t].hi > hi ? jobs[t].hi : hi;
  }
  if (mb) munmap(mb, ml);
  close(fd);
  double secs = now_s() - t0;
  if (!minmax) lo = hi = 0;  // JSON has no inf
  printf("{\"mode\":\"rows-%s-%s\",\"seconds\":%.9f,\"sum\":%.17g,\"min\":%.17g,\"max\":%.17g,\"elements\":%llu,\"threads\":%d,\"cpu_ms\":%.3f}\n",
         argv[2], argv[3], secs, sum, lo, hi, (unsigned long long)(n * row_bytes / elem_size(dt)), nt, cpu_ms());
  return 0;
}

#ifdef PROBE_ZSTD
// ---- zstd: decode rate of the chunks of a .tet file (layout v1) --------------------------
struct frame {
  uint64_t off, stored, raw;
};

static uint64_t rd64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static uint32_t rd32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// Reads the chunk index of a single-dataset .tet file; bench files only, checked loosely
// but never trusted past the file length.
static struct frame* read_frames(const uint8_t* f, uint64_t flen, size_t* count, enum dtype* dt) {
  if (flen < 40 || memcmp(f, "TETR", 4) || rd32(f + 8) != 1) {
    fprintf(stderr, "probe: not a single-dataset .tet v1 file\n");
    exit(2);
  }
  uint32_t tag = rd32(f + 44);
  *dt = tag == 2 ? DT_F64 : tag == 3 ? DT_I32 : DT_F32;
  uint64_t io = rd64(f + 16);
  if (io + 32 > flen || memcmp(f + io, "TIDX", 4)) {
    fprintf(stderr, "probe: chunk index not found\n");
    exit(2);
  }
  uint64_t n = rd64(f + io + 8);
  if (n > (flen - io - 32) / 104) {
    fprintf(stderr, "probe: chunk index larger than file\n");
    exit(2);
  }
  struct frame* fr = malloc(sizeof(struct frame) * (size_t)(n ? n : 1));
  size_t k = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t* e = f + io + 32 + i * 104;
    uint64_t off = rd64(e + 72), raw = rd64(e + 80), st = rd64(e + 88);
    uint32_t codec = rd32(e + 96);
    if (off > flen || st > flen - off) {
      fprintf(stderr, "probe: payload out of bounds\n");
      exit(2);
    }
    if (codec == 1) fr[k++] = (struct frame){off, st, raw};
  }
  *count = k;
  return fr;
}

// Decodes frame `fr` of `file` into *buf (grown to its raw size as needed); exits on failure.
static size_t decode_frame(ZSTD_DCtx* dc, const uint8_t* file, const struct frame* fr, uint8_t** buf, uint64_t* cap) {
  if (fr->raw > *cap) {
    free(*buf);
    *cap = fr->raw;
    *buf = aligned_alloc(64, (*cap + 63) / 64 * 64);
    if (!*buf) die("aligned_alloc");
  }
  size_t r = ZSTD_decompressDCtx(dc, *buf, fr->raw, file + fr->off, fr->stored);
  if (ZSTD_isError(r) || r != fr->raw) {
    fprintf(stderr, "probe: zstd decode failed: %s\n", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short frame");
    exit(2);
  }
  return r;
}

struct zjob {
  const uint8_t* file;
  const struct frame* fr;
  size_t first, count;
  int stride;
  int fold;  // 0: decode only
  enum dtype dt;
  uint64_t raw_bytes;
  double sum;
};

static void* run_zjob(void* arg) {
  struct zjob* j = (struct zjob*)arg;
  ZSTD_DCtx* dc = ZSTD_createDCtx();
  uint64_t cap = 0;
  uint8_t* buf = NULL;
  for (size_t i = j->first; i < j->count; i += (size_t)j->stride) {
    size_t r = decode_frame(dc, j->file, &j->fr[i], &buf, &cap);
    j->raw_bytes += r;
    if (j->fold) j->sum += fold_sum(buf, r / elem_size(j->dt), j->dt);
  }
  free(buf);
  ZSTD_freeDCtx(dc);
  return NULL;
}

static int mode_zstd(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: probe zstd TETFILE [REPS]\n");
    return 2;
  }
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  if (reps < 1) reps = 1;
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) die("open");
  struct stat st;
  if (fstat(fd, &st)) die("fstat");
  uint64_t flen = (uint64_t)st.st_size;
  const uint8_t* f = mmap(NULL, flen, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (f == MAP_FAILED) die("mmap");
  size_t n;
  enum dtype dt;
  struct frame* fr = read_frames(f, flen, &n, &dt);
  uint64_t stored = 0;
  for (size_t i = 0; i < n; i++) stored += fr[i].stored;
  // One core: decode only (the libzstd rate the target is based on). Best of reps.
  double best1 = 1e300;
  uint64_t raw = 0;
  for (int r = 0; r < reps; r++) {
    struct zjob j = {f, fr, 0, n, 1, 0, dt, 0, 0};
    double a = now_s();
    run_zjob(&j);
    double t = now_s() - a;
    raw = j.raw_bytes;
    if (t < best1) best1 = t;
  }
  // All cores: decode + fold, chunks dealt round-robin. Best of reps.
  const int nt = threads();
  double bestn = 1e300, sum = 0;
  for (int r = 0; r < reps; r++) {
    struct zjob jobs[MAX_THREADS];
    double a = now_s();
    for (int t = 0; t < nt; t++) jobs[t] = (struct zjob){f, fr, (size_t)t, n, nt, 1, dt, 0, 0};
    run_threads(jobs, sizeof jobs[0], nt, run_zjob);
    double s = 0;
    for (int t = 0; t < nt; t++) s += jobs[t].sum;
    double t = now_s() - a;
    sum = s;
    if (t < bestn) bestn = t;
  }
  printf("{\"mode\":\"zstd\",\"frames\":%zu,\"raw_bytes\":%llu,\"stored_bytes\":%llu,"
         "\"decode_1core_seconds\":%.9f,\"decode_fold_all_seconds\":%.9f,\"sum\":%.17g,\"threads\":%d}\n",
         n, (unsigned long long)raw, (unsigned long long)stored, best1, bestn, sum, nt);
  free(fr);
  return 0;
}


// Rows ROW0..ROW1 (every STEP-th) of a zstd .tet whose chunks are full-width runs of rows: the
// chunks the rows touch are decoded (dealt round-robin to all cores) and the selected rows folded.
struct zrjob {
  const uint8_t* file;
  const struct frame* fr;
  const uint64_t* chunk_row0;
  size_t first, count;
  int stride;
  uint64_t row_bytes, row0, row1, step;
  enum dtype dt;
  double sum;
};

static void* run_zrjob(void* arg) {
  struct zrjob* j = (struct zrjob*)arg;
  ZSTD_DCtx* dc = ZSTD_createDCtx();
  uint64_t cap = 0;
  uint8_t* buf = NULL;
  for (size_t i = j->first; i < j->count; i += (size_t)j->stride) {
    size_t r = decode_frame(dc, j->file, &j->fr[i], &buf, &cap);
    uint64_t c0 = j->chunk_row0[i], c1 = c0 + r / j->row_bytes;
    uint64_t a = c0 > j->row0 ? c0 : j->row0, b = c1 < j->row1 ? c1 : j->row1;
    a = j->row0 + (a - j->row0 + j->step - 1) / j->step * j->step;  // first selected row in the chunk
    if (j->step == 1 && a < b) {
      j->sum += fold_sum(buf + (a - c0) * j->row_bytes, (b - a) * j->row_bytes / elem_size(j->dt), j->dt);
    } else {
      for (uint64_t row = a; row < b; row += j->step)
        j->sum += fold_sum(buf + (row - c0) * j->row_bytes, j->row_bytes / elem_size(j->dt), j->dt);
    }
  }
  free(buf);
  ZSTD_freeDCtx(dc);
  return NULL;
}

static int mode_zstd_rows(int argc, char** argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: probe zstd-rows TETFILE ROW_BYTES ROW0 ROW1 STEP\n");
    return 2;
  }
  double t0 = now_s();
  uint64_t row_bytes = strtoull(argv[3], NULL, 10), row0 = strtoull(argv[4], NULL, 10);
  uint64_t row1 = strtoull(argv[5], NULL, 10), step = strtoull(argv[6], NULL, 10);
  if (!row_bytes || !step || row1 <= row0) {
    fprintf(stderr, "probe zstd-rows: empty selection\n");
    return 2;
  }
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0) die("open");
  struct stat st;
  if (fstat(fd, &st)) die("fstat");
  uint64_t flen = (uint64_t)st.st_size;
  const uint8_t* f = mmap(NULL, flen, PROT_READ, MAP_SHARED, fd, 0);
  if (f == MAP_FAILED) die("mmap");
  size_t n;
  enum dtype dt;
  struct frame* all = read_frames(f, flen, &n, &dt);
  // Chunks in file order are in row order for these files; keep the touched ones.
  struct frame* fr = malloc(sizeof(struct frame) * (n ? n : 1));
  uint64_t* c_row0 = malloc(sizeof(uint64_t) * (n ? n : 1));
  size_t k = 0;
  uint64_t at = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t rows = all[i].raw / row_bytes;
    uint64_t a = at > row0 ? at : row0, b = at + rows < row1 ? at + rows : row1;
    if (a < b && (step == 1 || (a - row0 + step - 1) / step * step + row0 < b)) fr[k] = all[i], c_row0[k++] = at;
    at += rows;
  }
  const int nt = threads();
  struct zrjob jobs[MAX_THREADS];
  for (int t = 0; t < nt; t++) jobs[t] = (struct zrjob){f, fr, c_row0, (size_t)t, k, nt, row_bytes, row0, row1, step, dt, 0};
  run_threads(jobs, sizeof jobs[0], nt, run_zrjob);
  double sum = 0;
  for (int t = 0; t < nt; t++) sum += jobs[t].sum;
  munmap((void*)f, flen);
  close(fd);
  double secs = now_s() - t0;
  uint64_t sel = (row1 - row0 + step - 1) / step;
  printf("{\"mode\":\"zstd-rows\",\"seconds\":%.9f,\"sum\":%.17g,\"chunks\":%zu,\"elements\":%llu,\"threads\":%d,\"cpu_ms\":%.3f}\n", secs, sum, k,
         (unsigned long long)(sel * row_bytes / elem_size(dt)), nt, cpu_ms());
  free(fr);
  free(c_row0);
  free(all);
  return 0;
}

static int mode_compress(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: probe compress LEVEL IN OUT\n");
    return 2;
  }
  int level = atoi(argv[2]);
  FILE* in = fopen(argv[3], "rb");
  if (!in) die("open input");
  fseek(in, 0, SEEK_END);
  long n = ftell(in);
  fseek(in, 0, SEEK_SET);
  uint8_t* src = malloc((size_t)(n ? n : 1));
  if ((long)fread(src, 1, (size_t)n, in) != n) die("read input");
  fclose(in);
  size_t cap = ZSTD_compressBound((size_t)n);
  uint8_t* dst = malloc(cap);
  size_t r = ZSTD_compress(dst, cap, src, (size_t)n, level);
  if (ZSTD_isError(r)) {
    fprintf(stderr, "probe: zstd compress failed: %s\n", ZSTD_getErrorName(r));
    return 2;
  }
  FILE* out = fopen(argv[4], "wb");
  if (!out || fwrite(dst, 1, r, out) != r || fclose(out)) die("write output");
  free(src);
  free(dst);
  return 0;
}
#endif

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: probe warm|fault|populate|pread|zstd|compress ...\n");
    return 2;
  }
#ifdef PROBE_ZSTD
  if (!strcmp(argv[1], "zstd")) return mode_zstd(argc, argv);
  if (!strcmp(argv[1], "compress")) return mode_compress(argc, argv);
  if (!strcmp(argv[1], "zstd-rows")) return mode_zstd_rows(argc, argv);
#endif
  if (!strcmp(argv[1], "rows")) return mode_rows(argc, argv);
  return mode_span(argv[1], argc, argv);
}
