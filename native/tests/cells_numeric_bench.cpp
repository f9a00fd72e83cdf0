// Throughput of the numeric cell encodings: decode, the encoded-domain kernels against
// decode-then-compute, the builders, and Rle's run ends against run lengths for a decode at a
// random row. Not a test; build and run by hand:
//   g++ -std=c++17 -O2 -Inative/include -Inative native/cells/*.cpp native/util/utf8.cpp \
//       native/tests/cells_numeric_bench.cpp -o /tmp/cells_numeric_bench && /tmp/cells_numeric_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cells/builders.h"
#include "cells/kernels.h"
#include "cells/numeric.h"

using namespace tet::cells;

namespace {

std::mt19937_64 rng(7);

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best of 5 runs of `reps` calls; returns nanoseconds per call.
template <class F>
double time_ns(int reps, F&& f) {
  double best = 1e30;
  for (int k = 0; k < 5; ++k) {
    const double t0 = now_s();
    for (int i = 0; i < reps; ++i) f();
    best = std::min(best, (now_s() - t0) / reps);
  }
  return best * 1e9;
}

volatile int64_t g_sink;

struct Block {
  std::vector<uint64_t> lanes;
  CellRef cell;
};

Block int_block(Enc enc, unsigned width_or_runs) {
  Block b;
  b.lanes.resize(kBlockLanes);
  const uint64_t mask = width_or_runs >= 64 ? ~uint64_t(0) : (uint64_t(1) << width_or_runs) - 1;
  int64_t drift = 1700000000000000000;
  for (uint32_t i = 0; i < kBlockLanes; ++i) {
    if (enc == Enc::Delta) b.lanes[i] = bits_of(drift += 1000 + int64_t(rng() % 16));
    else if (enc == Enc::Rle) b.lanes[i] = i * width_or_runs / kBlockLanes * 1000003;
    else b.lanes[i] = 123456789 + (rng() & mask);
  }
  Staged s{Kind::Int, kBlockLanes, b.lanes.data(), nullptr, kBlockLanes};
  b.cell = encode_block(enc, s);
  return b;
}

void bench_int_kernels() {
  std::printf("int kernels, one 2048-row block, ns per block (GB/s of logical i64 data)\n");
  std::printf("  %-16s %10s %10s %10s %10s %12s %12s\n", "block", "decode", "sum", "sum(wide)", "compare", "cmp(wide)", "payload B");
  TierScratch s;
  std::vector<int64_t> wide(kBlockLanes);
  struct Case {
    const char* name;
    Enc enc;
    unsigned p;
  };
  const Case cases[] = {{"plain", Enc::Plain, 64}, {"for w=4", Enc::For, 4},   {"for w=8", Enc::For, 8},
                        {"for w=12", Enc::For, 12}, {"for w=20", Enc::For, 20}, {"for w=32", Enc::For, 32},
                        {"delta w=4", Enc::Delta, 0}, {"rle 16 runs", Enc::Rle, 16}};
  for (const Case& c : cases) {
    Block b = int_block(c.enc, c.p);
    const Cell& cell = *b.cell;
    CellRef bare = clone_cell(cell);
    bare.mutable_cell()->attrs &= static_cast<uint8_t>(~attr::kHasZonemap);  // force the data path
    const int reps = 2000;
    const double dec = time_ns(reps, [&] { decode_rows(cell, 0, kBlockLanes, wide.data()); g_sink = wide[7]; });
    const double sum = time_ns(reps, [&] { g_sink = int64_t(sum_int(cell, s).sum); });
    const double sum_wide = time_ns(reps, [&] {
      decode_rows(cell, 0, kBlockLanes, wide.data());
      __int128 acc = 0;
      for (int64_t x : wide) acc += x;
      g_sink = int64_t(acc);
    });
    const int64_t k = as_i64(b.lanes[kBlockLanes / 2]);
    BlockMask m;
    const double cmp = time_ns(reps, [&] { compare_int(*bare, CmpOp::Lt, k, m, s); g_sink = int64_t(m.words[3]); });
    const double cmp_wide = time_ns(reps, [&] {
      decode_rows(cell, 0, kBlockLanes, wide.data());
      std::memset(m.words, 0, sizeof m.words);
      for (uint32_t i = 0; i < kBlockLanes; ++i) m.words[i >> 6] |= uint64_t(wide[i] < k) << (i & 63);
      g_sink = int64_t(m.words[3]);
    });
    auto gbs = [](double ns) { return kBlockLanes * 8.0 / ns; };
    std::printf("  %-16s %6.0f(%4.1f) %5.0f(%4.1f) %5.0f(%4.1f) %5.0f(%4.1f) %6.0f(%4.1f) %8llu\n", c.name, dec, gbs(dec), sum,
                gbs(sum), sum_wide, gbs(sum_wide), cmp, gbs(cmp), cmp_wide, gbs(cmp_wide), (unsigned long long)cell.payload_bytes);
  }
}

void bench_rle_random_row() {
  std::printf("rle: decode of 1 row at a random offset, ns per call: run ends (binary search) vs run lengths (prefix scan)\n");
  for (unsigned runs : {4u, 32u, 256u, 1024u, 2048u}) {
    Block b = int_block(Enc::Rle, runs);
    const Cell& c = *b.cell;
    const uint64_t n = c.meta[0];
    const auto* ends = reinterpret_cast<const uint16_t*>(c.payload + n * 8);
    const auto* values = reinterpret_cast<const uint64_t*>(c.payload);
    std::vector<uint16_t> lengths(n);
    for (uint64_t k = 0; k < n; ++k) lengths[k] = static_cast<uint16_t>(ends[k] - (k ? ends[k - 1] : 0));
    std::vector<uint32_t> rows(4096);
    for (auto& r : rows) r = static_cast<uint32_t>(rng() % kBlockLanes);
    size_t at = 0;
    uint64_t out;
    const double with_ends = time_ns(200000, [&] {
      decode_rows(c, rows[at++ & 4095], 1, &out);
      g_sink = int64_t(out);
    });
    at = 0;
    const double with_lengths = time_ns(200000, [&] {
      const uint32_t row = rows[at++ & 4095];
      uint64_t k = 0, end = lengths[0];
      while (end <= row) end += lengths[++k];
      g_sink = int64_t(values[k]);
    });
    std::printf("  %5llu runs: ends %6.1f ns, lengths %7.1f ns\n", (unsigned long long)n, with_ends, with_lengths);
  }
}

void bench_builders() {
  std::printf("builders: rows/s through push_many (1 M rows; the encoding the seal picked)\n");
  const size_t n = 1 << 20;
  std::vector<int64_t> v(n);
  struct Shape {
    const char* name;
    int kind;
  };
  for (const Shape& sh : {Shape{"sequence", 0}, Shape{"narrow (for)", 1}, Shape{"drift (delta)", 2}, Shape{"random (plain)", 3}}) {
    int64_t t = 1700000000000000000;
    for (size_t i = 0; i < n; ++i)
      v[i] = sh.kind == 0 ? int64_t(i) : sh.kind == 1 ? int64_t(rng() % 1000) : sh.kind == 2 ? (t += 1000 + int64_t(rng() % 16)) : int64_t(rng());
    CellRef col;
    const double ns = time_ns(1, [&] {
      IntBuilder b;
      b.push_many(v.data(), nullptr, n);
      col = b.finish();
    });
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < block_count(*col); ++i) bytes += block_at(*col, i).payload_bytes + 64;
    std::printf("  %-16s %6.0f M rows/s, %s, %.2f bytes/row\n", sh.name, n / ns * 1e3, enc_name(block_at(*col, 0).enc_v()),
                double(bytes) / n);
  }
}

}  // namespace

int main() {
  bench_int_kernels();
  bench_rle_random_row();
  bench_builders();
  return 0;
}
