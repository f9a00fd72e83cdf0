// The GPU suite and bench (built with -DTET_CUDA=ON, run by scripts/device-check.sh on a machine
// with an NVIDIA GPU; CI has none). Loads the real module (TET_CUDA_MODULE, default the one this
// build made) and:
//   gpu_suite            every device op x dtype x {scalar: full, strided, multi-unit tiles;
//                        partial: kept / reduced last axis, strided, 3-D middle axis} through
//                        tet::execute on the GPU against the CPU fold, bit for bit (NaN = NaN)
//   gpu_suite --bench F  resident-tile repeat queries, streaming from the page cache (a .tet
//                        file written, then read warm), and the CPU path on the same host; writes
//                        the markdown report F and checks the goals
// Exit status: 0 when everything matched (and, with --bench, the goals held), else 1.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../../native/tests/mem_source.h"
#include "exec/device.h"
#include "tet/file.h"
#include "tet/host.h"
#include "tet/query.h"
#include "tet/writer.h"

using namespace tet;
using tet_test::MemSource;

namespace {

const Op kDevOps[] = {Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Count, Op::Var, Op::Std, Op::Product, Op::NormL1,
                      Op::NormL2, Op::AllFinite, Op::AnyNan, Op::AnyInf, Op::NanCount, Op::InfCount, Op::NanMean,
                      Op::NanStd};
const DType kDtypes[] = {DType::F32, DType::F64, DType::F16, DType::U8, DType::U16, DType::I16,
                         DType::I32, DType::U32, DType::I64, DType::U64};

bool same_result(const QueryResult& a, const QueryResult& b) {
  if (a.values.kind != b.values.kind || a.values.bytes.size() != b.values.bytes.size()) return false;
  if (a.values.kind != ValueKind::F64) return a.values.bytes == b.values.bytes;
  for (size_t i = 0; i + 8 <= a.values.bytes.size(); i += 8) {
    double x, y;
    std::memcpy(&x, a.values.bytes.data() + i, 8), std::memcpy(&y, b.values.bytes.data() + i, 8);
    if (!(std::isnan(x) && std::isnan(y)) && std::memcmp(&x, &y, 8) != 0) return false;
  }
  return true;
}

std::vector<uint8_t> random_bytes(DType dt, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t es = dtype_size(dt);
  std::vector<uint8_t> b(n * es);
  for (uint64_t i = 0; i < n; ++i) {
    const int r = int(rng() % 4093);
    const double u = std::uniform_real_distribution<double>(-1000, 1000)(rng);
    uint8_t* p = b.data() + i * es;
    switch (dt) {
      case DType::F32: { const float v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -0.0f : float(u); std::memcpy(p, &v, 4); break; }
      case DType::F64: { const double v = r == 0 ? NAN : r == 1 ? -INFINITY : r == 2 ? -0.0 : u; std::memcpy(p, &v, 8); break; }
      case DType::F16: { const uint16_t v = r == 0 ? 0x7e00 : f32_to_f16(float(u / 20)); std::memcpy(p, &v, 2); break; }
      default: { const uint64_t v = rng(); std::memcpy(p, &v, es); break; }
    }
  }
  return b;
}

QueryPlan plan_of(const std::vector<uint64_t>& count, Op op, Device dev, uint32_t mask) {
  QueryPlan p;
  p.ndim = uint32_t(count.size());
  for (uint32_t a = 0; a < p.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = count[a];
  p.op = op, p.reduce_mask = mask, p.strategy = Strategy::StreamingFold, p.device = dev;
  return p;
}

int suite() {
  int bad = 0, runs = 0;
  std::printf("| dtype | scalar runs | equal | partial runs equal |\n|---|---|---|---|\n");
  for (DType dt : kDtypes) {
    const std::vector<uint8_t> b2 = random_bytes(dt, 1500 * 1100, 3 + uint64_t(dt));
    const MemSource m2(dt, {1500, 1100}, {512, 512}, b2);
    const std::vector<uint8_t> b1 = random_bytes(dt, 3 << 20, 7 + uint64_t(dt));
    const MemSource m1(dt, {3u << 20}, {1u << 20}, b1);
    const std::vector<uint8_t> b3 = random_bytes(dt, 60 * 70 * 900, 13 + uint64_t(dt));
    const MemSource m3(dt, {60, 70, 900}, {32, 32, 512}, b3);
    int n = 0, eq = 0, part_ok = 0, parts = 0;
    for (Op op : kDevOps) {
      QueryPlan strided = plan_of({1500, 1100}, op, Device::Cpu, 3);
      strided.start[0] = 1, strided.step[0] = 3, strided.count[0] = 499, strided.start[1] = 2, strided.step[1] = 2,
      strided.count[1] = 549;
      struct Case { const MemSource& s; QueryPlan p; };
      for (const Case& c : {Case{m2, plan_of({1500, 1100}, op, Device::Cpu, 3)}, Case{m2, strided},
                            Case{m1, plan_of({3u << 20}, op, Device::Cpu, 1)}}) {
        const QueryResult cpu = execute(c.s, c.p, {});
        QueryPlan g = c.p;
        g.device = Device::Gpu;
        const QueryResult gpu = execute(c.s, g, {});
        ++n, ++runs;
        const bool ok = same_result(cpu, gpu) && gpu.stats.device_used == "cuda:0";
        eq += ok;
        if (!ok)
          std::fprintf(stderr, "MISMATCH op %u dtype %s used %s reason %s %s\n", uint32_t(op), dtype_name(dt),
                       gpu.stats.device_used.c_str(), gpu.stats.device_fallback_reason.c_str(), gpu.stats.device_error.c_str());
      }
      QueryPlan pstrided = strided;
      pstrided.reduce_mask = 1;
      const QueryPlan p3 = plan_of({60, 70, 900}, op, Device::Cpu, 2);
      for (const Case& c : {Case{m2, plan_of({1500, 1100}, op, Device::Cpu, 1)}, Case{m2, plan_of({1500, 1100}, op, Device::Cpu, 2)},
                            Case{m2, pstrided}, Case{m3, p3}}) {
        QueryPlan g = c.p;
        g.device = Device::Gpu;
        const QueryResult gr = execute(c.s, g, {}), cr = execute(c.s, c.p, {});
        ++parts, ++runs;
        const bool ok = same_result(gr, cr) && gr.reduced_shape == cr.reduced_shape && gr.stats.device_used == "cuda:0";
        part_ok += ok;
        if (!ok)
          std::fprintf(stderr, "PARTIAL MISMATCH op %u dtype %s mask %u used %s reason %s %s\n", uint32_t(op), dtype_name(dt),
                       c.p.reduce_mask, gr.stats.device_used.c_str(), gr.stats.device_fallback_reason.c_str(),
                       gr.stats.device_error.c_str());
      }
    }
    std::printf("| %s | %d | %d | %d/%d |\n", dtype_name(dt), n, eq, part_ok, parts);
    bad += (n - eq) + (parts - part_ok);
  }
  std::printf("\n%d GPU runs (scalar and partial), %d mismatches or fallbacks\n", runs, bad);
  return bad == 0 ? 0 : 1;
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One plan on the three paths, best of 5 each: the CPU, the GPU streaming every tile from the
// page cache (tile cache off), the GPU on resident tiles (cache filled first). equal: the three
// results are the same bits and both GPU runs ran on the GPU.
struct Paths {
  double cpu = 0, stream = 0, res = 0;
  bool equal = false;
  uint32_t threads = 0;
};
Paths time_paths(const File& file, const QueryPlan& cpu) {
  QueryPlan gpu = cpu;
  gpu.device = Device::Gpu;
  auto best = [&](const QueryPlan& p, QueryResult& r) {
    double b = 1e30;
    for (int i = 0; i < 5; ++i) b = std::min(b, seconds_of([&] { r = execute(file, p, {}); }));
    return b;
  };
  Paths t;
  QueryResult rc, rs, rr;
  t.cpu = best(cpu, rc);
  setenv("TET_CUDA_CACHE_BYTES", "0", 1);  // streaming: every tile read (warm page cache), staged, copied
  device::backend().api->cache_clear();
  t.stream = best(gpu, rs);
  unsetenv("TET_CUDA_CACHE_BYTES");
  execute(file, gpu, {});  // fills the tile cache
  t.res = best(gpu, rr);
  t.equal = same_result(rc, rs) && same_result(rc, rr) && rs.stats.device_used == "cuda:0" && rr.stats.device_used == "cuda:0";
  t.threads = rc.stats.threads_used;
  device::backend().api->cache_clear();
  return t;
}

int bench(const char* out_path) {
  const HostInfo h = host_info();
  if (h.devices.empty()) {
    std::fprintf(stderr, "bench: no GPU (%s: %s)\n", h.device_status.c_str(), h.device_detail.c_str());
    return 1;
  }
  const double bw_dev = std::getenv("TET_GPU_BW") ? std::atof(std::getenv("TET_GPU_BW")) : 4.8e12;  // H200 HBM3e
  const double bw_pcie = std::getenv("TET_PCIE_BW") ? std::atof(std::getenv("TET_PCIE_BW")) : 50e9;  // PCIe 5 x16
  // 4 GiB of f32 in 64 MiB tiles (raw): the resident set fits the default 8 GiB tile cache.
  // TET_GPU_BENCH_ELEMS shrinks it for a dry run of the harness (against the host stub).
  const uint64_t n = std::getenv("TET_GPU_BENCH_ELEMS") ? std::strtoull(std::getenv("TET_GPU_BENCH_ELEMS"), nullptr, 0)
                                                        : uint64_t(1) << 30;
  const uint64_t chunk = std::min<uint64_t>(n, uint64_t(1) << 24);
  if (n == 0 || n % chunk != 0) {
    std::fprintf(stderr, "bench: TET_GPU_BENCH_ELEMS must be a multiple of %llu\n", (unsigned long long)chunk);
    return 1;
  }
  std::vector<uint8_t> data(n * 4);
  {
    uint32_t s = 1;
    float* f = reinterpret_cast<float*>(data.data());
    for (uint64_t i = 0; i < n; ++i) s = s * 1664525u + 1013904223u, f[i] = float(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
  }
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tet-gpu-bench.tet";
  {
    auto w = Writer::create(path);
    DatasetSpec spec;
    spec.name = "x", spec.dtype = DType::F32, spec.shape = {n}, spec.chunk_shape = {chunk};
    const uint32_t id = w->add_dataset(spec);
    // dataset 1: the first quarter as [rows, cols] in tiles of 1024 rows, for the partial row
    const uint64_t cols = std::min<uint64_t>(16384, n), rows = n / 4 / cols ? n / 4 / cols : 1, tr = std::min<uint64_t>(1024, rows);
    DatasetSpec spec2;
    spec2.name = "y", spec2.dtype = DType::F32, spec2.shape = {rows, cols}, spec2.chunk_shape = {tr, cols};
    const uint32_t id2 = w->add_dataset(spec2);
    for (uint64_t c = 0; c < n / chunk; ++c) w->write_chunk(id, {c}, data.data() + c * chunk * 4, chunk * 4);
    for (uint64_t r = 0; r < rows; r += tr) {
      const uint64_t h = std::min(tr, rows - r);
      std::vector<uint8_t> tile(tr * cols * 4, 0);
      std::memcpy(tile.data(), data.data() + r * cols * 4, h * cols * 4);
      w->write_chunk(id2, {r / tr, 0}, tile.data(), h == tr ? tile.size() : h * cols * 4);
    }
    w->commit();
  }
  const double host_copy = [&] {  // the host's read rate from memory (page cache stand-in): memcpy
    std::vector<uint8_t> dst(std::min<size_t>(size_t(1) << 30, data.size()));
    const double t = seconds_of([&] { std::memcpy(dst.data(), data.data(), dst.size()); });
    return double(dst.size()) / t;
  }();
  std::vector<uint8_t>().swap(data);
  auto file = File::open(path);
  const double bytes = double(n) * 4;
  std::string report = "# GPU bench (scripts/device-check.sh)\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "Device: %s, %.1f GiB, %u SMs. Host: %u threads. Selection: %.1f GiB of f32 (%llu tiles of 64 MiB, raw).\n\n",
                h.devices[0].name.c_str(), double(h.devices[0].total_bytes) / (1 << 30), h.devices[0].sm_count, h.cores,
                bytes / (1 << 30), (unsigned long long)(n / chunk));
  report += line;
  report += "| op | path | best of 5 (s) | GB/s | goal | met |\n|---|---|---|---|---|---|\n";
  bool all_met = true, all_equal = true;
  for (Op op : {Op::Sum, Op::Max, Op::Var}) {
    const Paths t = time_paths(*file, plan_of({n}, op, Device::Cpu, 1));
    all_equal &= t.equal;
    const double g_res = 0.7 * bw_dev, g_stream = 0.8 * std::min(host_copy, bw_pcie);
    const bool m_res = bytes / t.res >= g_res && t.res < t.cpu, m_stream = bytes / t.stream >= g_stream && t.stream < t.cpu;
    all_met &= m_res && m_stream;
    std::snprintf(line, sizeof line, "| %s | cpu (%u threads) | %.4f | %.1f | - | - |\n", op == Op::Sum ? "sum" : op == Op::Max ? "max" : "var",
                  t.threads, t.cpu, bytes / t.cpu / 1e9);
    report += line;
    std::snprintf(line, sizeof line, "| | gpu streaming (page cache) | %.4f | %.1f | >= %.1f and < cpu | %s |\n", t.stream,
                  bytes / t.stream / 1e9, g_stream / 1e9, m_stream ? "yes" : "NO");
    report += line;
    std::snprintf(line, sizeof line, "| | gpu resident tiles | %.4f | %.1f | >= %.1f and < cpu | %s |\n", t.res, bytes / t.res / 1e9,
                  g_res / 1e9, m_res ? "yes" : "NO");
    report += line;
  }
  {
    // A partial reduction: the mean over axis 0 of dataset 1, a [rows, cols] f32 copy of the first
    // quarter of the data (reported; no goal).
    const uint64_t cols = std::min<uint64_t>(16384, n), rows = n / 4 / cols ? n / 4 / cols : 1;
    QueryPlan cpu = plan_of({rows, cols}, Op::Mean, Device::Cpu, 1);
    cpu.dataset_id = 1;
    const Paths t = time_paths(*file, cpu);
    all_equal &= t.equal;
    const double pbytes = double(rows * cols) * 4;
    std::snprintf(line, sizeof line, "| mean over axis 0 of [%llu, %llu] | cpu (%u threads) | %.4f | %.1f | - | - |\n",
                  (unsigned long long)rows, (unsigned long long)cols, t.threads, t.cpu, pbytes / t.cpu / 1e9);
    report += line;
    std::snprintf(line, sizeof line, "| | gpu streaming (page cache) | %.4f | %.1f | - | %s |\n", t.stream, pbytes / t.stream / 1e9,
                  t.equal ? "equal" : "DIFFERENT");
    report += line;
    std::snprintf(line, sizeof line, "| | gpu resident tiles | %.4f | %.1f | - | %s |\n", t.res, pbytes / t.res / 1e9,
                  t.equal ? "equal" : "DIFFERENT");
    report += line;
  }
  std::snprintf(line, sizeof line, "\nReferences: device bandwidth %.0f GB/s (TET_GPU_BW), PCIe %.0f GB/s (TET_PCIE_BW), host memcpy %.1f GB/s (measured).\n"
                "Results equal to the CPU fold: %s.\n", bw_dev / 1e9, bw_pcie / 1e9, host_copy / 1e9, all_equal ? "yes" : "NO");
  report += line;
  file.reset();
  unlink(path.c_str());
  FILE* f = std::fopen(out_path, "w");
  if (f == nullptr) return 1;
  std::fputs(report.c_str(), f);
  std::fclose(f);
  std::fputs(report.c_str(), stdout);
  return all_equal && all_met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TET_CUDA_MODULE_PATH
  setenv("TET_CUDA_MODULE", TET_CUDA_MODULE_PATH, 0);
#endif
  const device::Backend& be = device::backend();
  if (be.api == nullptr) {
    std::fprintf(stderr, "no usable GPU: %s (%s)\n", be.unavailable.c_str(), be.detail.c_str());
    return 2;
  }
  std::printf("backend %s, %zu device(s): %s\n\n", be.backend_name.c_str(), be.devices.size(), be.devices[0].name.c_str());
  if (argc > 2 && std::strcmp(argv[1], "--bench") == 0) return bench(argv[2]);
  return suite();
}
