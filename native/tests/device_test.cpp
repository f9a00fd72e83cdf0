// The device backend without a GPU (exec/device.{h,cpp}, exec/device_fold_impl.h): routing of every
// token to every fallback reason against fake backends; then, with the host stub module loaded
// (ctest sets TET_CUDA_MODULE / TET_CUDA_DRIVER / TET_CUDA_STUB_DEVICES=2), the device driver
// path of tet::execute against the CPU fold on every device op x dtype (scalar: full, strided and
// multi-tile selections; partial: kept and reduced last axis, strided, index lists, grouped, rows
// cut by units), the tile cache protocol, cuda:multi, and the runtime fallbacks.
//
// `device_test --module-only` (ctest cuda_module_loads, TET_CUDA=ON builds): the real CUDA
// module loads, exports the ABI and, on a machine without a GPU driver, says so.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "exec/device.h"
#include "mem_source.h"
#include "tet/file.h"
#include "tet/host.h"
#include "tet/query.h"

using namespace tet;
using tet_test::MemSource;

namespace {

device::Backend fake(int devices, uint64_t free_bytes = uint64_t(8) << 30) {
  device::Backend be;
  static const tet_cuda_api api{};  // never called by route()
  be.api = &api;
  be.backend_name = "fake";
  for (int i = 0; i < devices; ++i) {
    device::DeviceInfo d;
    d.ordinal = uint32_t(i), d.name = "fake", d.total_bytes = d.free_bytes = free_bytes;
    be.devices.push_back(d);
  }
  be.caps.dtype_mask = 0x7fe;  // every numeric dtype
  be.caps.scalar_op_mask = (1ull << 1) | (1ull << 3) | (1ull << 6);  // sum, min, var
  be.caps.partial_op_mask = (1ull << 1);
  return be;
}

device::RouteRequest req(const std::string& token, Op op = Op::Sum, uint64_t bytes = uint64_t(1) << 30) {
  device::RouteRequest r;
  r.token = token, r.op = op, r.dtype = DType::F32, r.scalar = true, r.logical_bytes = bytes, r.chunks = 4;
  return r;
}

const Op kDevOps[] = {Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Count, Op::Var, Op::Std, Op::Product, Op::NormL1,
                      Op::NormL2, Op::AllFinite, Op::AnyNan, Op::AnyInf, Op::NanCount, Op::InfCount, Op::NanMean,
                      Op::NanStd};

// Bitwise equality except that any NaN equals any NaN in f64 results (registry_test explains).
bool same_result(const QueryResult& a, const QueryResult& b) {
  if (a.values.kind != b.values.kind || a.values.bytes.size() != b.values.bytes.size()) return false;
  if (a.values.kind != ValueKind::F64) return a.values.bytes == b.values.bytes;
  for (size_t i = 0; i + 8 <= a.values.bytes.size(); i += 8) {
    double x, y;
    std::memcpy(&x, a.values.bytes.data() + i, 8), std::memcpy(&y, b.values.bytes.data() + i, 8);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::memcmp(&x, &y, 8) != 0) return false;
  }
  return true;
}

template <class S> std::vector<uint8_t> random_bytes(uint64_t n, uint64_t seed, DType dt) {
  std::mt19937_64 rng(seed);
  std::vector<S> x(n);
  for (uint64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point<S>::value) {
      const int r = int(rng() % 509);
      std::uniform_real_distribution<double> u(-1000, 1000);
      x[i] = r == 0 ? S(NAN) : r == 1 ? S(INFINITY) : r == 2 ? S(-0.0) : S(u(rng));
    } else if (sizeof(S) == 2 && dt == DType::F16) {
      x[i] = S(f32_to_f16(float(std::uniform_real_distribution<double>(-60, 60)(rng))));
      if (rng() % 701 == 0) x[i] = S(0x7e00u & 0xffffu);  // NaN
    } else {
      x[i] = S(rng());
    }
  }
  std::vector<uint8_t> b(n * sizeof(S));
  std::memcpy(b.data(), x.data(), b.size());
  return b;
}

QueryPlan plan_of(uint32_t ndim, const std::vector<uint64_t>& count, Op op, Device dev, uint32_t ordinal = 0) {
  QueryPlan p;
  p.ndim = ndim;
  for (uint32_t a = 0; a < ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = count[a];
  p.op = op, p.reduce_mask = (1u << ndim) - 1, p.strategy = Strategy::StreamingFold;
  p.device = dev, p.device_ordinal = ordinal;
  return p;
}

int g_runs = 0;

template <class S> void dtype_suite(DType dt) {
  // 2-D: 700 x 600 in 256 x 256 tiles (9 tiles, clipped edges; 3 of them > 1 unit? no: <= 65536
  // elements each) and 1-D: 300000 elements in 2^18 tiles (a tile of 2 units plus a short one).
  const std::vector<uint8_t> b2 = random_bytes<S>(700 * 600, 11 + uint64_t(dt), dt);
  const MemSource m2(dt, {700, 600}, {256, 256}, b2);
  const std::vector<uint8_t> b1 = random_bytes<S>(300000, 23 + uint64_t(dt), dt);
  const MemSource m1(dt, {300000}, {1 << 18}, b1);
  for (Op op : kDevOps) {
    struct Case {
      const MemSource& src;
      QueryPlan cpu;
    };
    QueryPlan full2 = plan_of(2, {700, 600}, op, Device::Cpu);
    QueryPlan strided = full2;  // a strided, offset box: non-contiguous tile selections
    strided.start[0] = 3, strided.step[0] = 3, strided.count[0] = 230, strided.start[1] = 5, strided.step[1] = 2,
    strided.count[1] = 290;
    QueryPlan full1 = plan_of(1, {300000}, op, Device::Cpu);
    for (const Case& c : {Case{m2, full2}, Case{m2, strided}, Case{m1, full1}}) {
      const QueryResult want = execute(c.src, c.cpu, {});
      CHECK(want.stats.device_used == "cpu");
      QueryPlan g = c.cpu;
      g.device = Device::Gpu;
      g.device_ordinal = 1;
      const QueryResult got = execute(c.src, g, {});
      ++g_runs;
      const bool ok = same_result(want, got) && got.stats.device_used == "cuda:1" && got.stats.device_fallback_reason.empty();
      if (!ok)
        std::printf("  device != cpu: op %u dtype %s (used %s, reason %s: %s)\n", uint32_t(op), dtype_name(dt),
                    got.stats.device_used.c_str(), got.stats.device_fallback_reason.c_str(), got.stats.device_error.c_str());
      CHECK(ok);
    }
  }
}

int g_partial_runs = 0;

// The device result of plan `cpu` (run on the GPU, device 1) equals the CPU's bit for bit.
void expect_device_equal(const MemSource& src, const QueryPlan& cpu, const char* what, DType dt) {
  const QueryResult want = execute(src, cpu, {});
  QueryPlan g = cpu;
  g.device = Device::Gpu;
  g.device_ordinal = 1;
  const QueryResult got = execute(src, g, {});
  ++g_partial_runs;
  const bool ok = same_result(want, got) && want.reduced_shape == got.reduced_shape && got.stats.device_used == "cuda:1" &&
                  got.stats.device_fallback_reason.empty();
  if (!ok)
    std::printf("  partial device != cpu: %s op %u dtype %s (used %s, reason %s: %s)\n", what, uint32_t(cpu.op), dtype_name(dt),
                got.stats.device_used.c_str(), got.stats.device_fallback_reason.c_str(), got.stats.device_error.c_str());
  CHECK(ok);
}

// Partial reductions: the last axis kept (row batches: full rows, one-run rows of a middle axis,
// strided rows, index-list rows, rows a unit boundary cuts, grouped boxes) and reduced (rows as
// scalar units merged into their elements).
template <class S> void partial_suite(DType dt) {
  const std::vector<uint8_t> b2 = random_bytes<S>(700 * 600, 31 + uint64_t(dt), dt);
  const MemSource m2(dt, {700, 600}, {256, 256}, b2);
  const std::vector<uint8_t> b3 = random_bytes<S>(40 * 50 * 300, 37 + uint64_t(dt), dt);
  const MemSource m3(dt, {40, 50, 300}, {16, 32, 128}, b3);
  // one tile of 3 rows x 100000: its units (2^17 elements) end inside rows
  const std::vector<uint8_t> br = random_bytes<S>(3 * 100000, 41 + uint64_t(dt), dt);
  const MemSource mr(dt, {3, 100000}, {3, 100000}, br);
  for (Op op : kDevOps) {
    auto reduce = [&](QueryPlan p, uint32_t mask) {
      p.reduce_mask = mask;
      return p;
    };
    const QueryPlan full2 = plan_of(2, {700, 600}, op, Device::Cpu);
    QueryPlan strided = full2;
    strided.start[0] = 3, strided.step[0] = 3, strided.count[0] = 230, strided.start[1] = 5, strided.step[1] = 2,
    strided.count[1] = 290;
    QueryPlan listed = full2;  // an index / run list on the last axis: several runs per tile
    listed.kind[1] = AxisKind::Runs;
    listed.runs[1] = {AxisRun{3, 5}, AxisRun{100, 1}, AxisRun{250, 20}, AxisRun{400, 150}};
    listed.start[1] = 3, listed.count[1] = 176;
    QueryPlan grouped = reduce(full2, 1);
    grouped.group_axis = 0, grouped.groups = 3;
    for (uint32_t i = 0; i < 700; ++i) grouped.group_ids.push_back((i * 7) % 3);
    const QueryPlan full3 = plan_of(3, {40, 50, 300}, op, Device::Cpu);
    const QueryPlan rows = plan_of(2, {3, 100000}, op, Device::Cpu);
    expect_device_equal(m2, reduce(full2, 1), "axis 0 of 2-D", dt);
    expect_device_equal(m2, reduce(full2, 2), "last axis of 2-D", dt);
    expect_device_equal(m2, reduce(strided, 1), "strided, axis 0", dt);
    expect_device_equal(m2, reduce(strided, 2), "strided, last axis", dt);
    expect_device_equal(m2, reduce(listed, 1), "index list last, axis 0", dt);
    expect_device_equal(m2, reduce(listed, 2), "index list last, last axis", dt);
    expect_device_equal(m2, grouped, "grouped axis 0", dt);
    expect_device_equal(m3, reduce(full3, 2), "middle axis of 3-D", dt);
    expect_device_equal(m3, reduce(full3, 5), "axes 0, 2 of 3-D", dt);
    expect_device_equal(m3, reduce(full3, 3), "axes 0, 1 of 3-D", dt);
    QueryPlan grouped3 = reduce(full3, 5);  // grouped by axis 0, the last axis reduced
    grouped3.group_axis = 0, grouped3.groups = 4;
    for (uint32_t i = 0; i < 40; ++i) grouped3.group_ids.push_back((i * 3) % 4);
    expect_device_equal(m3, grouped3, "grouped axis 0, last reduced", dt);
    expect_device_equal(mr, reduce(rows, 1), "rows cut by units, axis 0", dt);
    expect_device_equal(mr, reduce(rows, 2), "rows cut by units, last axis", dt);
  }
}

}  // namespace

TEST_CASE("tokens: the schema's set, nothing else") {
  for (const char* t : {"cpu", "auto", "metal", "cuda", "cuda:0", "cuda:12", "cuda:multi", "rocm", "rocm:3", "rocm:multi"})
    CHECK(device::valid_token(t));
  for (const char* t : {"", "gpu", "cuda:", "cuda:-1", "cuda:12345", "CUDA", "cuda:multi ", "cuda:1x", "metal:0"})
    CHECK(!device::valid_token(t));
}

TEST_CASE("routing: every token and every fallback reason") {
  const device::Backend two = fake(2);
  auto route = [](const device::RouteRequest& r, const device::Backend& b) { return device::route(r, b); };
  // cpu: no reason; empty token: nothing requested
  CHECK(route(req("cpu"), two).used == "cpu" && route(req("cpu"), two).reason.empty());
  CHECK(route(req(""), two).used == "cpu" && route(req(""), two).reason.empty());
  // the GPU tokens that route
  const device::Route c = route(req("cuda"), two);
  CHECK(c.used == "cuda:0" && c.device == Device::Gpu && c.ordinal == 0 && c.reason.empty() && c.pipeline && !c.multi);
  const device::Route c1 = route(req("cuda:1"), two);
  CHECK(c1.used == "cuda:1" && c1.ordinal == 1);
  const device::Route m = route(req("cuda:multi"), two);
  CHECK(m.used == "cuda:multi" && m.multi && m.ordinal == device::kAllDevices);
  const device::Route m1 = route(req("cuda:multi"), fake(1));
  CHECK(m1.device == Device::Gpu && !m1.multi && m1.used == "cuda:0");
  device::RouteRequest one_chunk = req("cuda");
  one_chunk.chunks = 1;
  CHECK(!route(one_chunk, two).pipeline);
  const device::Route a = route(req("auto"), two);
  CHECK(a.used == "cuda:0" && a.reason.empty());
  // reasons
  CHECK(route(req("auto", Op::Sum, device::kAutoMinBytes - 1), two).reason == "auto_below_size_threshold");
  CHECK(route(req("auto", Op::Sum, device::kAutoMinBytes), two).device == Device::Gpu);
  CHECK(route(req("cuda:2"), two).reason == "gpu_device_not_found");
  CHECK(route(req("cuda", Op::None), two).reason == "preview_or_spill_only");
  CHECK(route(req("metal"), two).reason == "gpu_feature_disabled");
  CHECK(route(req("rocm:multi"), two).reason == "gpu_feature_disabled");
  CHECK(route(req("cuda", Op::Median), two).reason == "gpu_unsupported_op");
  CHECK(route(req("cuda", Op::ArgMax), two).reason == "gpu_unsupported_op");
  CHECK(route(req("cuda", Op::NullCount), two).reason == "gpu_unsupported_op");
  CHECK(route(req("cuda", Op::Product), two).reason == "gpu_unsupported_op");  // not in this fake's caps
  device::RouteRequest part = req("cuda", Op::Min);
  part.scalar = false;
  CHECK(route(part, two).reason == "gpu_unsupported_op");  // min is scalar-only in these caps
  part.op = Op::Sum, part.out_elements = uint64_t(1) << 30;  // x 16 bytes of f64 sum state: 16 GiB > 8 GiB / 2
  CHECK(route(part, two).reason == "gpu_vram_exceeded");
  part.out_elements = uint64_t(1) << 27;  // 2 GiB
  CHECK(route(part, two).device == Device::Gpu);
  device::Backend no_f64 = fake(1);
  no_f64.caps.dtype_mask &= ~(1u << uint32_t(DType::F64));
  device::RouteRequest f64 = req("cuda");
  f64.dtype = DType::F64;
  CHECK(route(f64, no_f64).reason == "gpu_unsupported_dtype");
  CHECK(route(req("bogus"), two).reason == "gpu_invalid_token");
  // the backend's own state comes first for every GPU token
  for (const char* why : {"gpu_feature_disabled", "gpu_module_incompatible", "gpu_driver_unavailable", "gpu_no_device"}) {
    device::Backend none;
    none.unavailable = why;
    for (const char* t : {"cuda", "cuda:0", "cuda:multi", "auto"}) {
      const device::Route r = route(req(t), none);
      CHECK(r.used == "cpu" && r.device == Device::Cpu && r.reason == why);
    }
  }
}

TEST_CASE("the host stub loads as the device module; hostInfo lists its devices") {
  const device::Backend& be = device::backend();
  CHECK(be.api != nullptr && be.unavailable.empty());
  CHECK(be.backend_name == "host-stub");
  CHECK(be.devices.size() == 2);
  const HostInfo h = host_info();
  CHECK(h.devices.size() == 2 && h.devices[1].ordinal == 1 && h.devices[0].name == "host stub 0");
  CHECK(h.build_flags == "cuda=on metal=off" && h.device_status.empty());
}

TEST_CASE("device path == CPU fold, every device op x dtype, full / strided / multi-unit tiles") {
  dtype_suite<float>(DType::F32);
  dtype_suite<double>(DType::F64);
  dtype_suite<uint16_t>(DType::F16);
  dtype_suite<uint8_t>(DType::U8);
  dtype_suite<uint16_t>(DType::U16);
  dtype_suite<int16_t>(DType::I16);
  dtype_suite<int32_t>(DType::I32);
  dtype_suite<uint32_t>(DType::U32);
  dtype_suite<int64_t>(DType::I64);
  dtype_suite<uint64_t>(DType::U64);
  std::printf("  %d device runs\n", g_runs);
}

TEST_CASE("partial device path == CPU fold, every device op x dtype, kept and reduced last axis") {
  partial_suite<float>(DType::F32);
  partial_suite<double>(DType::F64);
  partial_suite<uint16_t>(DType::F16);
  partial_suite<uint8_t>(DType::U8);
  partial_suite<uint16_t>(DType::U16);
  partial_suite<int16_t>(DType::I16);
  partial_suite<int32_t>(DType::I32);
  partial_suite<uint32_t>(DType::U32);
  partial_suite<int64_t>(DType::I64);
  partial_suite<uint64_t>(DType::U64);
  std::printf("  %d partial device runs\n", g_partial_runs);
}

TEST_CASE("malformed partial jobs are refused with TET_CUDA_ERR_ARGS before anything is read") {
  const tet_cuda_api* api = device::backend().api;
  std::vector<float> tile(64, 1.0f);
  std::vector<double> s(16, 0.0), c(16, 0.0);
  tet_cuda_tile t{0, tile.data(), 64};
  tet_cuda_batch b{};
  b.row[0] = 0, b.row[1] = 16, b.j0 = 0, b.n = 16, b.k = 2, b.tile = 0;
  const uint32_t ev[] = {0, TET_CUDA_FLUSH};
  tet_cuda_span sp{0, 16, 0, 2};
  auto job = [&] {
    tet_cuda_partial_job j{};
    j.struct_size = sizeof j;
    j.op = uint32_t(Op::Sum), j.dtype = uint32_t(DType::F32), j.ordinal = 0;
    j.tiles = &t, j.n_tiles = 1, j.batches = &b, j.n_batches = 1, j.spans = &sp, j.n_spans = 1, j.events = ev, j.n_events = 2;
    j.box_len = 16, j.col[0] = s.data(), j.col[1] = c.data();
    return j;
  };
  char err[256];
  tet_cuda_partial_job ok = job();
  CHECK(api->partial_fold(&ok, err, sizeof err) == TET_CUDA_OK);
  CHECK(s[0] == 2.0 && s[15] == 2.0 && c[0] == 0.0);  // two rows of ones, flushed
  struct Bad {
    const char* what;
    std::function<void(tet_cuda_partial_job&, tet_cuda_batch&, tet_cuda_span&)> spoil;
  };
  const Bad bad[] = {
      {"row past its tile", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.row[1] = 50; }},
      {"k = 0", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.k = 0; }},
      {"k = 9", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.k = 9; }},
      {"tile index", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.tile = 1; }},
      {"batch past the box", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.j0 = 8; }},
      {"span past the box", [](tet_cuda_partial_job& j, tet_cuda_batch&, tet_cuda_span&) { j.box_len = 8; }},
      {"span outside its batch", [](tet_cuda_partial_job&, tet_cuda_batch& x, tet_cuda_span&) { x.n = 8; }},
      {"span too long", [](tet_cuda_partial_job&, tet_cuda_batch&, tet_cuda_span& y) { y.n = TET_CUDA_SPAN_MAX + 1; }},
      {"events past the list", [](tet_cuda_partial_job&, tet_cuda_batch&, tet_cuda_span& y) { y.ev1 = 3; }},
      {"event names no batch", [](tet_cuda_partial_job& j, tet_cuda_batch&, tet_cuda_span&) { j.n_batches = 0; }},
      {"a column missing", [](tet_cuda_partial_job& j, tet_cuda_batch&, tet_cuda_span&) { j.col[1] = nullptr; }},
      {"struct too small", [](tet_cuda_partial_job& j, tet_cuda_batch&, tet_cuda_span&) { j.struct_size = 8; }},
      {"no such dtype", [](tet_cuda_partial_job& j, tet_cuda_batch&, tet_cuda_span&) { j.dtype = 77; }},
  };
  for (const Bad& x : bad) {
    tet_cuda_batch b0 = b;
    tet_cuda_span sp0 = sp;
    tet_cuda_partial_job j = job();
    x.spoil(j, b, sp);
    std::fill(s.begin(), s.end(), 0.0);
    err[0] = 0;
    const int rc = api->partial_fold(&j, err, sizeof err);
    const bool untouched = std::all_of(s.begin(), s.end(), [](double v) { return v == 0.0; });
    if (rc != TET_CUDA_ERR_ARGS || !untouched) std::printf("  malformed job accepted: %s (rc %d, %s)\n", x.what, rc, err);
    CHECK(rc == TET_CUDA_ERR_ARGS && untouched);
    b = b0, sp = sp0;
  }
}

TEST_CASE("hand-computed: column sums and row means of a 3 x 4 grid on the device") {
  // x[r][c] = 10 r + c: column sums 30 + 3c, row means 10 r + 1.5
  std::vector<double> x(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) x[r * 4 + c] = 10.0 * r + c;
  std::vector<uint8_t> b(x.size() * 8);
  std::memcpy(b.data(), x.data(), b.size());
  const MemSource src(DType::F64, {3, 4}, {2, 3}, b);
  QueryPlan p = plan_of(2, {3, 4}, Op::Sum, Device::Gpu);
  p.reduce_mask = 1;
  const QueryResult cols = execute(src, p, {});
  CHECK(cols.stats.device_used == "cuda:0" && cols.reduced_shape == std::vector<uint64_t>{4});
  for (int c = 0; c < 4; ++c) {
    double v;
    std::memcpy(&v, cols.values.bytes.data() + 8 * c, 8);
    CHECK(v == 30.0 + 3 * c);
  }
  p.op = Op::Mean, p.reduce_mask = 2;
  const QueryResult means = execute(src, p, {});
  CHECK(means.stats.device_used == "cuda:0" && means.reduced_shape == std::vector<uint64_t>{3});
  for (int r = 0; r < 3; ++r) {
    double v;
    std::memcpy(&v, means.values.bytes.data() + 8 * r, 8);
    CHECK(v == 10.0 * r + 1.5);
  }
}

TEST_CASE("hand-computed: sum and mean of 0..n-1 on the device") {
  const uint64_t n = 300001;
  std::vector<int64_t> x(n);
  for (uint64_t i = 0; i < n; ++i) x[i] = int64_t(i);
  std::vector<uint8_t> b(n * 8);
  std::memcpy(b.data(), x.data(), b.size());
  const MemSource src(DType::I64, {n}, {100000}, b);
  const QueryResult s = execute(src, plan_of(1, {n}, Op::Sum, Device::Gpu), {});
  double v;
  std::memcpy(&v, s.values.bytes.data(), 8);
  CHECK(s.stats.device_used == "cuda:0");
  CHECK(v == double(n * (n - 1) / 2));
  const QueryResult m = execute(src, plan_of(1, {n}, Op::Mean, Device::Gpu), {});
  std::memcpy(&v, m.values.bytes.data(), 8);
  CHECK(v == 150000.0);
}

TEST_CASE("tile cache: whole tiles stay resident; a repeat query reads no tile and gives the same bits") {
  const tet_cuda_api* api = device::backend().api;
  api->cache_clear();
  const std::vector<uint8_t> b = random_bytes<float>(1 << 20, 5, DType::F32);
  const MemSource src(DType::F32, {1 << 20}, {1 << 18}, b);
  const QueryPlan p = plan_of(1, {1 << 20}, Op::Var, Device::Gpu);
  const uint64_t before = src.fetches.load();
  const QueryResult first = execute(src, p, {});
  CHECK(src.fetches.load() - before == 4);
  CHECK(api->cache_bytes(0) == uint64_t(4) << 20);
  const QueryResult again = execute(src, p, {});
  CHECK(src.fetches.load() - before == 4);  // resident: no tile fetched
  CHECK(again.stats.chunks_read == 4);      // still counted as read (I/O stats, progress)
  CHECK(same_result(first, again));
  CHECK(same_result(first, execute(src, plan_of(1, {1 << 20}, Op::Var, Device::Cpu), {})));
  // over the budget: nothing more is cached
  api->cache_clear();
  setenv("TET_CUDA_CACHE_BYTES", "1000", 1);
  execute(src, p, {});
  CHECK(api->cache_bytes(0) == 0);
  unsetenv("TET_CUDA_CACHE_BYTES");
  api->cache_clear();
}

TEST_CASE("cuda:multi: units spread over both devices, same bits") {
  const std::vector<uint8_t> b = random_bytes<double>(1 << 19, 9, DType::F64);
  const MemSource src(DType::F64, {1 << 19}, {1 << 16}, b);
  for (Op op : {Op::Sum, Op::Std, Op::Product}) {
    const QueryResult cpu = execute(src, plan_of(1, {1 << 19}, op, Device::Cpu), {});
    const QueryResult multi = execute(src, plan_of(1, {1 << 19}, op, Device::Gpu, device::kAllDevices), {});
    CHECK(multi.stats.device_used == "cuda:multi" && multi.stats.device_gpu_multi && multi.stats.device_gpu_pipeline);
    CHECK(same_result(cpu, multi));
  }
  // partial: tasks dealt over both devices
  const std::vector<uint8_t> b2 = random_bytes<double>(512 * 640, 10, DType::F64);
  const MemSource m2(DType::F64, {512, 640}, {64, 128}, b2);
  for (Op op : {Op::Sum, Op::Std, Op::Max}) {
    QueryPlan p = plan_of(2, {512, 640}, op, Device::Cpu);
    p.reduce_mask = 1;
    const QueryResult cpu = execute(m2, p, {});
    p.device = Device::Gpu, p.device_ordinal = device::kAllDevices;
    const QueryResult multi = execute(m2, p, {});
    CHECK(multi.stats.device_used == "cuda:multi" && multi.stats.device_gpu_multi);
    CHECK(same_result(cpu, multi));
  }
  device::backend().api->cache_clear();
}

TEST_CASE("runtime failures fall back to the CPU with the reason; never fail the query") {
  const std::vector<uint8_t> b = random_bytes<float>(200000, 3, DType::F32);
  const MemSource src(DType::F32, {200000}, {65536}, b);
  const QueryResult cpu = execute(src, plan_of(1, {200000}, Op::Mean, Device::Cpu), {});
  for (const char* mode : {"runtime", "vram"}) {
    setenv("TET_CUDA_STUB_FAIL", mode, 1);
    const QueryResult r = execute(src, plan_of(1, {200000}, Op::Mean, Device::Gpu), {});
    CHECK(r.stats.device_used == "cpu");
    CHECK(r.stats.device_fallback_reason == (std::string(mode) == "vram" ? "gpu_vram_exceeded" : "gpu_runtime_error"));
    CHECK(r.stats.device_error.find("injected") != std::string::npos);
    CHECK(same_result(cpu, r));
  }
  unsetenv("TET_CUDA_STUB_FAIL");
  // a plan naming a device this process does not have; ops and partial folds the module lacks
  const QueryResult far = execute(src, plan_of(1, {200000}, Op::Mean, Device::Gpu, 7), {});
  CHECK(far.stats.device_fallback_reason == "gpu_device_not_found" && same_result(cpu, far));
  const QueryResult arg = execute(src, plan_of(1, {200000}, Op::ArgMax, Device::Gpu), {});
  CHECK(arg.stats.device_fallback_reason == "gpu_unsupported_op");
  CHECK(same_result(arg, execute(src, plan_of(1, {200000}, Op::ArgMax, Device::Cpu), {})));
  const std::vector<uint8_t> b2 = random_bytes<float>(400 * 300, 4, DType::F32);
  const MemSource m2(DType::F32, {400, 300}, {128, 128}, b2);
  // partial folds: failures fall back as scalar ones do
  QueryPlan part = plan_of(2, {400, 300}, Op::Var, Device::Gpu);
  part.reduce_mask = 1;
  QueryPlan part_cpu = part;
  part_cpu.device = Device::Cpu;
  const QueryResult pcpu = execute(m2, part_cpu, {});
  for (uint32_t mask : {1u, 2u})
    for (const char* mode : {"runtime", "vram"}) {
      setenv("TET_CUDA_STUB_FAIL", mode, 1);
      part.reduce_mask = part_cpu.reduce_mask = mask;
      const QueryResult r = execute(m2, part, {});
      CHECK(r.stats.device_used == "cpu");
      CHECK(r.stats.device_fallback_reason == (std::string(mode) == "vram" ? "gpu_vram_exceeded" : "gpu_runtime_error"));
      CHECK(same_result(execute(m2, part_cpu, {}), r));
    }
  unsetenv("TET_CUDA_STUB_FAIL");
  part.reduce_mask = part_cpu.reduce_mask = 1;
  CHECK(same_result(pcpu, execute(m2, part, {})));
  // group_by along the last axis stays on the CPU
  QueryPlan glast = plan_of(2, {400, 300}, Op::Sum, Device::Gpu);
  glast.reduce_mask = 2, glast.group_axis = 1, glast.groups = 2;
  for (uint32_t i = 0; i < 300; ++i) glast.group_ids.push_back(i % 2);
  const QueryResult gr = execute(m2, glast, {});
  glast.device = Device::Cpu;
  CHECK(gr.stats.device_fallback_reason == "gpu_unsupported_op" && same_result(gr, execute(m2, glast, {})));
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--module-only") == 0) {
    // The real CUDA module (TET_CUDA=ON) on a machine without a usable driver.
    const device::Backend& be = device::backend();
    std::printf("module %s: backend '%s', status '%s' (%s), %zu devices\n", be.module_path.c_str(), be.backend_name.c_str(),
                be.unavailable.c_str(), be.detail.c_str(), be.devices.size());
    const bool loaded = be.backend_name == "cuda";
    const bool honest = be.api != nullptr ? !be.devices.empty()
                                          : (be.unavailable == "gpu_driver_unavailable" || be.unavailable == "gpu_no_device");
    return loaded && honest ? 0 : 1;
  }
  return tet_test::run_all();
}
