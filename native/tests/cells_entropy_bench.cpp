// Throughput of for_radix against for (obs pressure_pa: a range of 5000) and of global_huffman
// against global_dict (obs country: 200 skewed values): decode, and the kernels the where
// evaluation runs (sum, compare). Not a test; build and run by hand after a cmake build:
//   g++ -std=c++17 -O2 -Inative/include -Inative native/tests/cells_entropy_bench.cpp
//       cmake-build/release/libtet_core.a cmake-build/release/libtet_zstd.a -lpthread -o /tmp/eb && /tmp/eb
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/column.h"
#include "cells/kernels.h"
#include "cells/metablocks.h"
#include "cells/str_builder.h"
#include "cells/str_codec.h"
#include "cells/str_kernels.h"

using namespace tet::cells;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best of 31 runs (the machine may be shared); returns seconds per call.
template <class F>
double best_s(int reps, F&& f) {
  double best = 1e30;
  for (int k = 0; k < 31; ++k) {
    const double t0 = now_s();
    for (int i = 0; i < reps; ++i) f();
    best = std::min(best, (now_s() - t0) / reps);
  }
  return best;
}

volatile int64_t g_sink;

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void bench_pressure() {
  std::printf("pressure_pa (98000 + h(3i) mod 5000), one 2048-row block, M rows/s\n");
  std::vector<uint64_t> lanes(kBlockLanes);
  for (uint32_t i = 0; i < kBlockLanes; ++i) lanes[i] = 98000 + splitmix(3 * uint64_t(i)) % 5000;
  const Staged s{Kind::Int, kBlockLanes, lanes.data(), nullptr, kBlockLanes};
  TierScratch scratch;
  std::vector<int64_t> out(kBlockLanes);
  for (Enc e : {Enc::For, Enc::ForRadix}) {
    const CellRef b = encode_block(e, s);
    const double dec = best_s(20000, [&] { decode_rows(*b, 0, kBlockLanes, out.data()); g_sink = out[7]; });
    const double sum = best_s(20000, [&] { g_sink = int64_t(sum_int(*b, scratch).sum); });
    BlockMask m;
    const double cmp = best_s(20000, [&] { compare_int(*b, CmpOp::Lt, 98100, m, scratch); g_sink = int64_t(m.words[3]); });
    std::printf("  %-10s %5llu B: decode %7.0f, sum %7.0f, compare lt %7.0f\n", enc_name(e), (unsigned long long)b->payload_bytes,
                kBlockLanes / dec / 1e6, kBlockLanes / sum / 1e6, kBlockLanes / cmp / 1e6);
  }
}

void bench_country() {
  std::printf("country (200 skewed values), 64 blocks, M rows/s\n");
  const size_t n = 64 * kBlockLanes;
  std::vector<std::string> rows(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = double(splitmix(i % 10000) >> 11) / double(uint64_t(1) << 53);
    const unsigned k = unsigned(200 * u * u);
    rows[i] = std::string{char('A' + k / 26), char('A' + k % 26)};
  }
  for (bool huffman : {false, true}) {
    StrBuilder b;
    for (const std::string& r : rows) b.push(r);
    CellRef root = b.finish();
    GlobalDictionary g = *b.global_dictionary();
    if (!huffman) g.code = HuffmanCode();  // the same dictionary, its blocks as global_dict
    const DecodeContext ctx = g.context();
    std::vector<CellRef> blocks;
    for (uint64_t i = 0; i < block_count(*root); ++i) {
      const Cell& c = block_at(*root, i);
      if (huffman) {
        blocks.push_back(clone_cell(c));
        continue;
      }
      // Re-encode as global_dict from the decoded rows' codes.
      StrBuffer d;
      decode_rows(c, 0, uint32_t(c.len), &d, b.global_dictionary()->context());
      std::vector<uint32_t> codes(c.len);
      for (uint32_t r = 0; r < c.len; ++r) codes[r] = uint32_t(g.find(d.at(r)));
      str::StrBlock sb;
      sb.rows = uint32_t(c.len), sb.bytes = d.bytes.data(), sb.offsets = d.offsets.data();
      blocks.push_back(str::encode_global_dict(sb, g.size(), codes.data()));
    }
    uint64_t bytes = 0;
    for (const CellRef& c : blocks) bytes += c->payload_bytes + 64;
    StrBuffer out;
    const double dec = best_s(5, [&] {
      for (const CellRef& c : blocks) {
        out.clear();
        decode_rows(*c, 0, uint32_t(c->len), &out, ctx);
      }
      g_sink = int64_t(out.bytes.size());
    });
    uint32_t codes[kBlockLanes];
    const double walk = best_s(5, [&] {
      for (const CellRef& c : blocks) {
        if (huffman) str::global_huffman_codes(*c, ctx, uint32_t(c->len), codes);
        else
          for (uint32_t i = 0; i < c->len; ++i) codes[i] = uint32_t(str::global_dict_layout(*c).code(i));
      }
      g_sink = codes[9];
    });
    std::printf("  codes only: %6.1f M rows/s\n", n / walk / 1e6);
    StrPredicate p;
    p.op = StrOp::Eq, p.literal = "AA";
    BlockMask m;
    const double cmp = best_s(5, [&] {
      for (const CellRef& c : blocks) compare(*c, p, m, ctx);
      g_sink = int64_t(m.words[0]);
    });
    std::printf("  %-15s %.3f B/row: decode %6.1f, compare eq %6.1f\n", huffman ? "global_huffman" : "global_dict", double(bytes) / n,
                n / dec / 1e6, n / cmp / 1e6);
    if (huffman) {  // two blocks at a time, their streams walked interleaved (evaluate_where's path)
      BlockMask m2;
      const double pair = best_s(5, [&] {
        for (size_t k = 0; k + 1 < blocks.size(); k += 2) compare_huffman_pair(*blocks[k], *blocks[k + 1], p, m, m2, ctx);
        g_sink = int64_t(m.words[0] ^ m2.words[1]);
      });
      std::printf("  global_huffman compare eq, block pairs interleaved %6.1f\n", n / pair / 1e6);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // "pressure" or "country": that part alone
  if (only != "country") bench_pressure();
  if (only != "pressure") bench_country();
  return 0;
}
