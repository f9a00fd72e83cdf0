// The two entropy-minded encodings: ForRadix (enc 17, For residuals mixed-radix packed k to a
// lane) and GlobalHuffman (enc 18, global-dictionary codes as canonical Huffman codes), with the
// Huffman code construction (cells/huffman.h) and the version-2 global dictionary body.
//
// Expectations come from outside the code under test: plain models (vectors of optional values),
// hand-computed canonical codes, a brute-force optimal length-limited code, and sums / compares
// computed on the model values.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cells/builders.h"
#include "cells/column.h"
#include "cells/huffman.h"
#include "cells/kernels.h"
#include "cells/metablocks.h"
#include "cells/numeric.h"
#include "cells/predicate.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "cells/str_codec.h"
#include "cells/str_kernels.h"
#include "check.h"
#include "region_bytes.h"
#include "str_model.h"
#include "tet/error.h"

using namespace tet;
using namespace tet::cells;
using tet_test::StrModel;

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

bool threw_invalid(const std::function<void()>& f) {
  try {
    f();
  } catch (const tet::Error& e) {
    return e.code() == "TET_CELLS_INVALID";
  }
  return false;
}

// A copy of a block in an exact-size heap buffer (reads past payload_bytes trip the sanitizers),
// after `edit` changed its header or bytes.
struct Crafted {
  std::vector<uint8_t> bytes;
  CellRef cell;
};
Crafted craft(const Cell& c, const std::function<void(Cell&, std::vector<uint8_t>&)>& edit) {
  Crafted k;
  k.bytes.assign(c.payload, c.payload + c.payload_bytes);
  Cell h;
  h.kind = c.kind, h.enc = c.enc, h.attrs = c.attrs, h.len = c.len, h.payload_bytes = c.payload_bytes;
  std::memcpy(h.meta, c.meta, sizeof h.meta);
  edit(h, k.bytes);
  h.payload_bytes = std::min<uint64_t>(h.payload_bytes, k.bytes.size());
  k.cell = view_cell(h, k.bytes.empty() ? nullptr : k.bytes.data(), attr::kPayloadBorrowed);
  return k;
}
bool rejected(const Cell& c, const DecodeContext& ctx, const char* what, const std::function<void(Cell&, std::vector<uint8_t>&)>& edit) {
  Crafted k = craft(c, edit);
  const bool ok = threw_invalid([&] { validate_leaf(*k.cell, ctx); });
  if (!ok) std::printf("  accepted: %s\n", what);
  return ok;
}

// ---- int model ---------------------------------------------------------------------------------
struct IntModel {
  std::vector<int64_t> v;
  std::vector<uint8_t> ok;
  size_t size() const { return v.size(); }
};

IntModel radix_data(size_t n, int64_t base, uint64_t range, unsigned null_every, uint64_t seed) {
  IntModel m;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = splitmix(seed * 1000003 + i);
    // the frame's two ends (present) in every block, so each block's range is exactly `range`
    const bool end = i % 2048 == 5 || i % 2048 == 6;
    const bool present = end || null_every == 0 || h % null_every != 0;
    const uint64_t r = i % 2048 == 5 ? 0 : i % 2048 == 6 ? range - 1 : (h >> 8) % range;
    m.v.push_back(present ? int64_t(uint64_t(base) + r) : 0);
    m.ok.push_back(present);
  }
  return m;
}

CellRef build_int(const IntModel& m) {
  IntBuilder b;
  b.push_many(m.v.data(), m.ok.data(), m.size());
  return b.finish();
}

size_t count_blocks(const Cell& root, Enc e) {
  size_t n = 0;
  for (uint64_t i = 0; i < block_count(root); ++i) n += block_at(root, i).enc_v() == e;
  return n;
}

bool int_decode_matches(const Cell& root, const IntModel& m, uint64_t start, uint64_t count) {
  std::vector<int64_t> got(count);
  std::vector<uint8_t> valid(count);
  decode_column(root, start, count, got.data(), valid.data());
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t r = start + i;
    if (valid[i] != m.ok[r] || got[i] != (m.ok[r] ? m.v[r] : 0)) return false;
  }
  return true;
}

bool cmp_holds(CmpOp op, int64_t x, int64_t c) {
  switch (op) {
    case CmpOp::Eq: return x == c;
    case CmpOp::Ne: return x != c;
    case CmpOp::Lt: return x < c;
    case CmpOp::Le: return x <= c;
    case CmpOp::Gt: return x > c;
    default: return x >= c;
  }
}

// ---- str model ---------------------------------------------------------------------------------
// The obs table's country: two letters, index ⌊200 · u(station)^2⌋ (skewed), stations cycling.
std::string country_of(uint64_t station) {
  const double u = double(splitmix(station) >> 11) / double(uint64_t(1) << 53);
  const unsigned k = unsigned(200 * u * u);
  return std::string{char('A' + k / 26), char('A' + k % 26)};
}
StrModel country_model(size_t n, unsigned null_every, uint64_t seed) {
  StrModel m;
  for (size_t i = 0; i < n; ++i) {
    if (null_every && splitmix(seed + i) % null_every == 0) m.push_back(std::nullopt);
    else m.push_back(country_of(i % 10000));
  }
  return m;
}

int str_cmp(const std::string& a, const std::string& b) {  // binary byte order, by hand
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    const unsigned x = static_cast<unsigned char>(a[k]), y = static_cast<unsigned char>(b[k]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}
bool model_str_match(const std::string& x, const StrPredicate& p) {
  switch (p.op) {
    case StrOp::Eq: return str_cmp(x, p.literal) == 0;
    case StrOp::Ne: return str_cmp(x, p.literal) != 0;
    case StrOp::Lt: return str_cmp(x, p.literal) < 0;
    case StrOp::Le: return str_cmp(x, p.literal) <= 0;
    case StrOp::Gt: return str_cmp(x, p.literal) > 0;
    case StrOp::Ge: return str_cmp(x, p.literal) >= 0;
    case StrOp::Prefix: return x.size() >= p.literal.size() && x.compare(0, p.literal.size(), p.literal) == 0;
    case StrOp::In:
      for (const std::string& s : p.set)
        if (str_cmp(x, s) == 0) return true;
      return false;
  }
  return false;
}

// Textbook Huffman (two smallest merged until one is left): the optimal unlimited cost.
uint64_t huffman_cost(const std::vector<uint64_t>& w) {
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> q(w.begin(), w.end());
  uint64_t cost = 0;
  while (q.size() > 1) {
    const uint64_t a = q.top();
    q.pop();
    const uint64_t b = q.top();
    q.pop();
    cost += a + b;
    q.push(a + b);
  }
  return cost;
}
uint64_t code_cost(const std::vector<uint64_t>& w, const std::vector<uint8_t>& len) {
  uint64_t c = 0;
  for (size_t i = 0; i < w.size(); ++i) c += w[i] * len[i];
  return c;
}
bool complete(const std::vector<uint8_t>& len) {
  uint64_t k = 0;
  for (uint8_t l : len) k += uint64_t(1) << (16 - l);
  return k == (uint64_t(1) << 16);
}
// Brute force: the least cost of any prefix code (Kraft ≤ 1) with lengths in 1..limit.
uint64_t brute_limited_cost(const std::vector<uint64_t>& w, unsigned limit) {
  const size_t n = w.size();
  std::vector<uint8_t> len(n, 1);
  uint64_t best = UINT64_MAX;
  for (;;) {
    uint64_t kraft = 0;
    for (uint8_t l : len) kraft += uint64_t(1) << (limit - l);
    if (kraft <= (uint64_t(1) << limit)) best = std::min(best, code_cost(w, len));
    size_t i = 0;
    while (i < n && len[i] == limit) len[i++] = 1;
    if (i == n) break;
    ++len[i];
  }
  return best;
}

}  // namespace

// ---- Huffman codes -----------------------------------------------------------------------------

TEST_CASE("huffman: canonical codes by hand, LSB-first stream codes, table decode") {
  const uint8_t lengths[] = {2, 1, 3, 3};
  const HuffmanCode c = HuffmanCode::from_lengths(lengths, 4);
  // MSB-first canonical: sym1 = 0, sym0 = 10, sym2 = 110, sym3 = 111; reversed for the stream.
  CHECK(c.stream_code(1) == 0);
  CHECK(c.stream_code(0) == 1);   // bits 1,0
  CHECK(c.stream_code(2) == 3);   // bits 1,1,0
  CHECK(c.stream_code(3) == 7);   // bits 1,1,1
  CHECK(c.max_length() == 3);
  // Stream "sym3 sym1 sym0 sym2" = bits 1,1,1, 0, 1,0, 1,1,0 (LSB first).
  const uint64_t stream = 0b011010111;
  uint64_t pos = 0;
  std::vector<uint32_t> got;
  for (int k = 0; k < 4; ++k) {
    const uint32_t e = c.entry(stream >> pos);
    got.push_back(e >> 8);
    pos += e & 0xff;
  }
  CHECK((got == std::vector<uint32_t>{3, 1, 0, 2}));
  CHECK(pos == 9);
}

TEST_CASE("huffman: from_lengths rejects what is not a complete prefix code") {
  auto bad = [](std::vector<uint8_t> l) { return threw_invalid([&] { HuffmanCode::from_lengths(l.data(), l.size()); }); };
  CHECK(bad({1, 2}));         // incomplete (Kraft 3/4)
  CHECK(bad({1, 1, 1}));      // over-subscribed
  CHECK(bad({1, 0, 1}));      // length 0
  CHECK(bad({1, 17, 17}));    // past 16
  CHECK(bad({1}));            // one symbol
  CHECK(!bad({1, 1}));
  std::vector<uint8_t> flat(1 << 16, 16);
  CHECK(!bad(flat));
  flat.push_back(16);
  CHECK(bad(flat));           // 2^16 + 1 symbols
}

TEST_CASE("huffman: package-merge is optimal (textbook Huffman unlimited, brute force limited)") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 300; ++round) {
    const size_t n = 2 + rng() % 7;
    std::vector<uint64_t> w(n);
    for (auto& x : w) x = 1 + (round % 3 == 0 ? rng() % 4 : uint64_t(1) << (rng() % 20));  // flat and very skewed
    const std::vector<uint8_t> free_len = limited_code_lengths(w, 16);
    CHECK(complete(free_len));
    CHECK(code_cost(w, free_len) == huffman_cost(w));
    unsigned limit = 1;
    while ((size_t(1) << limit) < n) ++limit;
    limit += unsigned(rng() % 2);
    const std::vector<uint8_t> len = limited_code_lengths(w, limit);
    bool within = complete(len);
    for (uint8_t l : len) within = within && l >= 1 && l <= limit;
    CHECK(within);
    CHECK(code_cost(w, len) == brute_limited_cost(w, limit));
  }
  // Fibonacci weights want lengths up to n - 1; the limit caps them and keeps the code complete.
  std::vector<uint64_t> fib = {1, 1};
  while (fib.size() < 30) fib.push_back(fib[fib.size() - 1] + fib[fib.size() - 2]);
  const std::vector<uint8_t> capped = limited_code_lengths(fib, 12);
  CHECK(complete(capped) && *std::max_element(capped.begin(), capped.end()) == 12);
  CHECK(limited_code_lengths(std::vector<uint64_t>(4096, 3), 12) == std::vector<uint8_t>(4096, 12));
  CHECK_THROWS_CODE(limited_code_lengths(std::vector<uint64_t>(4097, 3), 12), "TET_INTERNAL");
}

TEST_CASE("huffman: a random stream of symbols decodes back (stream writer, windows)") {
  std::mt19937_64 rng(9);
  std::vector<uint64_t> w(300);
  for (auto& x : w) x = 1 + (rng() % 1000) * (rng() % 1000);
  const std::vector<uint8_t> len = limited_code_lengths(w, 12);
  const HuffmanCode c = HuffmanCode::from_lengths(len.data(), len.size());
  std::vector<uint32_t> syms(5000);
  uint64_t bits = 0;
  for (auto& s : syms) s = uint32_t(rng() % 300), bits += len[s];
  std::vector<uint8_t> area(stream_bytes(bits), 0);
  StreamWriter sw(area.data());
  for (uint32_t s : syms) sw.put(c.stream_code(s), c.length(s));
  sw.finish();
  uint64_t pos = 0;
  bool ok = true;
  for (uint32_t s : syms) {
    const uint32_t e = c.entry(stream_window(area.data(), pos));
    ok = ok && (e >> 8) == s && (e & 0xff) == len[s];
    pos += e & 0xff;
  }
  CHECK(ok && pos == bits);
}

TEST_CASE("huffman: two streams decode together for every longest code 1..16 (refill groups, uneven lengths, nulls)") {
  // Lengths 1, 2, .., L-1, L, L: a complete code whose longest is L, so every refill group size
  // 57 / L is taken (L = 1: {1, 1}). Each pair of blocks holds random symbols; the decoded codes
  // must be those symbols, row by row, for blocks of equal and of different lengths.
  std::mt19937_64 rng(21);
  bool ok = true;
  for (unsigned L = 1; L <= kMaxCodeLength; ++L) {
    std::vector<uint8_t> len;
    for (unsigned k = 1; k < L; ++k) len.push_back(uint8_t(k));
    len.push_back(uint8_t(L)), len.push_back(uint8_t(L));
    const HuffmanCode code = HuffmanCode::from_lengths(len.data(), len.size());
    CHECK(code.max_length() == L);
    DecodeContext ctx;
    ctx.dict_code = &code;
    for (const auto& [na, nb, nulls] : std::vector<std::tuple<uint32_t, uint32_t, bool>>{
             {2048, 2048, false}, {2048, 5, false}, {3, 2048, false}, {1, 1, false}, {2047, 2048, false}, {2048, 2048, true}, {700, 2048, true}}) {
      struct Block {
        std::vector<uint32_t> syms;  // by row (rows that are null: none)
        std::vector<uint8_t> present;
        std::vector<uint8_t> area;  // stream, then (with nulls) the validity mask
        Cell c;
      };
      Block blocks[2];
      const uint32_t rows[2] = {na, nb};
      for (int z = 0; z < 2; ++z) {
        Block& b = blocks[z];
        uint64_t bits = 0;
        for (uint32_t i = 0; i < rows[z]; ++i) {
          const bool here = !nulls || rng() % 5 != 0;
          b.present.push_back(here);
          // skewed towards short codes, as Huffman data is
          const uint32_t sym = here ? uint32_t(std::min<uint64_t>(__builtin_ctzll(rng() | (uint64_t(1) << 62)), len.size() - 1)) : 0;
          b.syms.push_back(sym);
          if (here) bits += len[sym];
        }
        const uint64_t data = std::max<uint64_t>(stream_bytes(bits), 8);
        b.area.assign(data + (nulls ? kMaskBytes : 0), 0);
        StreamWriter sw(b.area.data());
        for (uint32_t i = 0; i < rows[z]; ++i)
          if (b.present[i]) sw.put(code.stream_code(b.syms[i]), code.length(b.syms[i]));
        sw.finish();
        if (nulls)
          for (uint32_t i = 0; i < rows[z]; ++i)
            if (b.present[i]) b.area[data + i / 8] |= uint8_t(1u << (i % 8));
        b.c.len = rows[z];
        b.c.payload = b.area.data();
        b.c.payload_bytes = b.area.size();
        b.c.attrs = nulls ? attr::kHasNulls : 0;
      }
      std::vector<int64_t> got[2] = {std::vector<int64_t>(na, -1), std::vector<int64_t>(nb, -1)};
      str::global_huffman_walk2(blocks[0].c, blocks[1].c, ctx, [&](uint32_t i, uint32_t k) { got[0][i] = k; },
                                [&](uint32_t i, uint32_t k) { got[1][i] = k; });
      for (int z = 0; z < 2; ++z)
        for (uint32_t i = 0; i < rows[z]; ++i) {
          const int64_t want = blocks[z].present[i] ? int64_t(blocks[z].syms[i]) : -1;
          if (got[z][i] != want) {
            if (ok) std::printf("  L %u rows %u/%u nulls %d block %d row %u: %lld, want %lld\n", L, na, nb, int(nulls), z, i,
                                static_cast<long long>(got[z][i]), static_cast<long long>(want));
            ok = false;
          }
        }
    }
  }
  CHECK(ok);
}

// ---- GlobalHuffman through the builder -----------------------------------------------------------

TEST_CASE("global_huffman: skewed country codes round-trip, chosen by the builder (whole and streaming)") {
  for (size_t n : {size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097), size_t(40000), size_t(70001)}) {
    for (unsigned nulls : {0u, 23u}) {
      const StrModel m = country_model(n, nulls, n);
      tet_test::WholeStrColumn w = tet_test::build_whole(m);
      CHECK(w.root && w.root->len == n);
      if (!w.root) continue;
      const DecodeContext ctx = w.ctx();
      validate_column(*w.root, ctx);
      verify_column_deep(*w.root, ctx);
      CHECK(tet_test::str_column_equals(*w.root, m, ctx));
      const size_t huff = count_blocks(*w.root, Enc::GlobalHuffman);
      const size_t blocks = block_count(*w.root);
      if (n >= 4096) {
        // Over two or more blocks the dictionary pays (one block keeps its own dict), and every
        // full block of ~200 skewed values is smaller as Huffman codes than as 8-bit codes.
        CHECK(w.builder->global_dictionary() && !w.builder->global_dictionary()->code.empty());
        CHECK(huff >= n / 2048);
        if (huff < n / 2048) std::printf("  n %zu nulls %u: %zu of %zu blocks global_huffman\n", n, nulls, huff, blocks);
      } else {
        CHECK(huff == 0);  // one row: a Constant block; one block: its own dict
      }
      // Odd offsets inside each block: decoding walks the stream from the block's start.
      bool ok = true;
      StrBuffer got;
      for (uint64_t b = 0; b < blocks; ++b) {
        const Cell& blk = block_at(*w.root, b);
        for (uint32_t start : {0u, 1u, 3u, 63u, 64u, 65u, 1023u, 2046u, 2047u}) {
          if (start >= blk.len) continue;
          for (uint32_t count : {1u, 2u, 7u, 129u, 2048u}) {
            const uint32_t c = std::min<uint32_t>(count, uint32_t(blk.len) - start);
            got.clear();
            decode_rows(blk, start, c, &got, ctx);
            for (uint32_t i = 0; i < c; ++i) {
              const auto& want = m[b * 2048 + start + i];
              ok = ok && got.at(i) == (want ? std::string_view(*want) : std::string_view());
            }
          }
        }
      }
      CHECK(ok);
    }
  }
  // Streaming: the code is fixed from the first 32 blocks' counts; every later block uses it too.
  for (unsigned nulls : {0u, 31u}) {
    const StrModel m = country_model(50 * 2048 + 99, nulls, 3);
    std::vector<CellRef> blocks;
    StrBuilderOptions o;
    o.on_block = [&](CellRef c) { blocks.push_back(std::move(c)); };
    StrBuilder sb(o);
    for (const auto& v : m) v ? sb.push(*v) : sb.push_null();
    CHECK(!sb.finish());
    const GlobalDictionary* g = sb.global_dictionary();
    CHECK(g && !g->code.empty() && g->size() == 200);
    if (!g) continue;
    size_t huff = 0;
    for (const CellRef& c : blocks) huff += c->enc_v() == Enc::GlobalHuffman;
    CHECK(huff == blocks.size() && blocks.size() == 51);
    const CellRef root = make_column(Kind::Str, blocks);
    validate_column(*root, g->context());
    CHECK(tet_test::str_column_equals(*root, m, g->context()));
    const StrColumnStats& st = sb.stats();
    const double bytes_per_row = double(st.block_bytes + st.global_dict_bytes) / double(m.size());
    std::printf("  country streaming, nulls 1/%u: %.3f B/row (%.3f without a global dictionary)\n", nulls, bytes_per_row,
                double(st.per_block_bytes) / m.size());
    // The goal for this column (headers included; obs country has no nulls).
    if (nulls == 0) CHECK(bytes_per_row < 0.997);
  }
}

TEST_CASE("global_huffman: not chosen where it does not pay") {
  // Uniform over 256 values: every code is 8 bits, exactly GlobalDict's width.
  StrModel flat;
  for (size_t i = 0; i < 8 * 2048; ++i) flat.push_back("v" + std::to_string(splitmix(i) % 256));
  tet_test::WholeStrColumn a = tet_test::build_whole(flat);
  CHECK(count_blocks(*a.root, Enc::GlobalHuffman) == 0);
  CHECK(a.builder->global_dictionary() && a.builder->global_dictionary()->code.empty());
  CHECK(count_blocks(*a.root, Enc::GlobalDict) == 8);
  CHECK(tet_test::str_column_equals(*a.root, flat, a.ctx()));
  // Unique values: no global dictionary at all.
  StrModel unique;
  for (size_t i = 0; i < 3 * 2048; ++i) unique.push_back("id-" + std::to_string(splitmix(i)));
  tet_test::WholeStrColumn u = tet_test::build_whole(unique);
  CHECK(u.builder->global_dictionary() == nullptr && count_blocks(*u.root, Enc::GlobalHuffman) == 0);
  // Each block holds one value: Constant blocks, nothing to code.
  StrModel runs;
  for (size_t i = 0; i < 4 * 2048; ++i) runs.push_back(i / 2048 % 2 ? "x" : "y");
  tet_test::WholeStrColumn r = tet_test::build_whole(runs);
  CHECK(count_blocks(*r.root, Enc::GlobalHuffman) == 0);
  // The dictionary alone: version 1, byte for byte the body readers before version 2 know.
  const std::vector<uint8_t> body = a.builder->global_dictionary()->encode();
  CHECK(body[0] == 1);
}

TEST_CASE("global_huffman: kernels equal decode-then-compute (compare, filter, min_max)") {
  const StrModel m = country_model(3 * 2048 + 500, 13, 77);
  tet_test::WholeStrColumn w = tet_test::build_whole(m);
  const DecodeContext ctx = w.ctx();
  CHECK(count_blocks(*w.root, Enc::GlobalHuffman) == 4);
  std::vector<StrPredicate> preds;
  for (const char* lit : {"", "AA", "AB", "AZ", "BA", "GR", "HM", "ZZ", "A", "B", "~", "AAA"}) {
    for (StrOp op : {StrOp::Eq, StrOp::Ne, StrOp::Lt, StrOp::Le, StrOp::Gt, StrOp::Ge, StrOp::Prefix}) {
      StrPredicate p;
      p.op = op, p.literal = lit;
      preds.push_back(p);
    }
  }
  StrPredicate in;
  in.op = StrOp::In, in.set = {"AA", "AC", "BZ", "CA", "QQ"};
  preds.push_back(in);
  in.set = {"nope"};
  preds.push_back(in);
  bool ok = true;
  for (uint64_t b = 0; b < block_count(*w.root); ++b) {
    const Cell& blk = block_at(*w.root, b);
    const uint8_t* valid = blk.validity();
    for (const StrPredicate& p : preds) {
      BlockMask mask;
      compare(blk, p, mask, ctx);
      for (uint32_t i = 0; i < blk.len; ++i) {
        const auto& v = m[b * 2048 + i];
        const bool want = v && model_str_match(*v, p);
        ok = ok && mask.test(i) == want && (!want || row_valid(valid, i));
      }
      // filter: the selected rows, in order
      StrBuffer sel;
      filter(blk, mask, sel, ctx);
      size_t k = 0;
      for (uint32_t i = 0; i < blk.len; ++i)
        if (mask.test(i)) ok = ok && k < sel.size() && sel.at(k++) == *m[b * 2048 + i];
      ok = ok && k == sel.size();
    }
    std::optional<std::string> lo, hi;
    for (uint32_t i = 0; i < blk.len; ++i) {
      const auto& v = m[b * 2048 + i];
      if (!v) continue;
      if (!lo || str_cmp(*v, *lo) < 0) lo = *v;
      if (!hi || str_cmp(*v, *hi) > 0) hi = *v;
    }
    const auto mm = min_max(blk, ctx);
    ok = ok && mm && mm->first == *lo && mm->second == *hi;
  }
  CHECK(ok);
  // Two blocks at once (streams walked interleaved): the model's rows for every pair, the short
  // last block included, with and without nulls; false where the predicate needs no rows.
  for (unsigned nulls : {13u, 0u}) {
    const StrModel mp = country_model(3 * 2048 + 500, nulls, 91);
    tet_test::WholeStrColumn wp = tet_test::build_whole(mp);
    const DecodeContext cp = wp.ctx();
    bool pair_ok = true;
    size_t applied = 0, declined = 0;
    for (uint64_t b0 = 0; b0 < block_count(*wp.root); ++b0)
      for (uint64_t b1 = 0; b1 < block_count(*wp.root); ++b1)
        for (const StrPredicate& p : preds) {
          BlockMask m0, m1;
          if (!compare_huffman_pair(block_at(*wp.root, b0), block_at(*wp.root, b1), p, m0, m1, cp)) {
            ++declined;
            continue;
          }
          ++applied;
          for (int k = 0; k < 2; ++k) {
            const uint64_t b = k ? b1 : b0;
            const BlockMask& mk = k ? m1 : m0;
            for (uint32_t i = 0; i < 2048; ++i) {
              const bool in = i < block_at(*wp.root, b).len;
              const auto& v = in ? mp[b * 2048 + i] : std::optional<std::string>();
              pair_ok = pair_ok && mk.test(i) == (v && model_str_match(*v, p));
            }
          }
        }
    CHECK(pair_ok);
    CHECK(applied > 0 && declined > 0);
  }
}

TEST_CASE("global_huffman: crafted blocks and dictionary bodies are TET_CELLS_INVALID") {
  // Hand-made: dictionary {apple, fig, pear} with lengths {1, 2, 2}; rows pear, apple, null, fig, apple.
  GlobalDictionary g;
  for (const char* s : {"apple", "fig", "pear"}) g.values.push(s);
  const uint8_t lengths[] = {1, 2, 2};
  g.code = HuffmanCode::from_lengths(lengths, 3);
  const std::string rows[] = {"pear", "apple", "", "fig", "apple"};
  std::vector<uint64_t> offsets = {0};
  std::string bytes;
  for (const std::string& r : rows) bytes += r, offsets.push_back(bytes.size());
  uint8_t validity[kMaskBytes] = {};
  validity[0] = 0b11011;
  str::StrBlock b;
  b.rows = 5, b.bytes = reinterpret_cast<const uint8_t*>(bytes.data()), b.offsets = offsets.data(), b.validity = validity;
  const uint32_t codes[] = {2, 0, 0, 1, 0};
  const CellRef blk = str::encode_global_huffman(b, g.code, codes);
  // apple = 0, fig = 10, pear = 11 (MSB first); stream pear apple fig apple = 1,1, 0, 1,0, 0 → 0b001011.
  CHECK(blk->meta[1] == 6 && blk->data_bytes() == 16 && blk->payload[0] == 0b001011);
  const DecodeContext ctx = g.context();
  validate_leaf(*blk, ctx);
  StrBuffer out;
  decode_rows(*blk, 0, 5, &out, ctx);
  CHECK(out.at(0) == "pear" && out.at(1) == "apple" && out.at(2) == "" && out.at(3) == "fig" && out.at(4) == "apple");
  CHECK(rejected(*blk, {}, "no dictionary", [](Cell&, std::vector<uint8_t>&) {}));
  CHECK(rejected(*blk, DecodeContext{&g.values}, "dictionary without a code", [](Cell&, std::vector<uint8_t>&) {}));
  CHECK(rejected(*blk, ctx, "another dictionary size", [](Cell& h, std::vector<uint8_t>&) { h.meta[0] = 4; }));
  CHECK(rejected(*blk, ctx, "stream bits one short", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 5; }));
  CHECK(rejected(*blk, ctx, "stream bits one long", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 7; }));
  CHECK(rejected(*blk, ctx, "stream bits far past the rows", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 1u << 20; }));
  CHECK(rejected(*blk, ctx, "a stream that ends early", [](Cell& h, std::vector<uint8_t>& p) { h.meta[1] = 3; p[0] = 0b011; }));
  CHECK(rejected(*blk, ctx, "nonzero padding bits", [](Cell&, std::vector<uint8_t>& p) { p[0] |= 0x80; }));
  CHECK(rejected(*blk, ctx, "nonzero padding bytes", [](Cell&, std::vector<uint8_t>& p) { p[9] = 1; }));
  CHECK(rejected(*blk, ctx, "truncated payload", [](Cell& h, std::vector<uint8_t>& p) {
    p.erase(p.begin() + 8, p.begin() + 16);
    h.payload_bytes -= 8;
  }));
  CHECK(rejected(*blk, ctx, "a zone map", [](Cell& h, std::vector<uint8_t>&) { h.attrs |= attr::kHasZonemap; }));
  CHECK(rejected(*blk, ctx, "marked sorted", [](Cell& h, std::vector<uint8_t>&) { h.attrs |= attr::kSorted; }));
  CHECK(rejected(*blk, ctx, "an unused meta slot", [](Cell& h, std::vector<uint8_t>&) { h.meta[3] = 1; }));
  // Flipping the stream's bits: either rejected or a valid block of other codes, never a crash.
  for (unsigned bit = 0; bit < 6; ++bit) {
    Crafted k = craft(*blk, [&](Cell&, std::vector<uint8_t>& p) { p[0] ^= uint8_t(1u << bit); });
    try {
      validate_leaf(*k.cell, ctx);
      StrBuffer o;
      decode_rows(*k.cell, 0, 5, &o, ctx);
      CHECK(o.size() == 5);
    } catch (const tet::Error& e) {
      CHECK(e.code() == std::string("TET_CELLS_INVALID"));
    }
  }

  // The version-2 body: round trip, then every corruption rejected.
  const std::vector<uint8_t> body = g.encode();
  CHECK(body[0] == 2 && body.size() % 8 == 0);
  const GlobalDictionary back = GlobalDictionary::decode(body.data(), body.size());
  CHECK(back.size() == 3 && back.code.lengths() == std::vector<uint8_t>({1, 2, 2}));
  const size_t len_at = body.size() - 8;  // the lengths sit in the last 8 bytes (3 + padding)
  CHECK(body[len_at] == 1 && body[len_at + 1] == 2 && body[len_at + 2] == 2);
  auto bad_body = [&](const std::function<void(std::vector<uint8_t>&)>& edit) {
    std::vector<uint8_t> b2 = body;
    edit(b2);
    return threw_invalid([&] { GlobalDictionary::decode(b2.data(), b2.size()); });
  };
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[len_at + 2] = 3; }));   // incomplete code
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[len_at] = 0; }));       // a zero length
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[len_at + 1] = 1; }));   // over-subscribed
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[len_at + 5] = 1; }));   // padding
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x.resize(x.size() - 8); }));  // lengths cut off
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[0] = 3; }));            // unknown version
  CHECK(bad_body([&](std::vector<uint8_t>& x) { x[0] = 1; }));            // version 1 with trailing lengths
  // A version-2 body for one value cannot carry a code (a code needs two symbols).
  GlobalDictionary one;
  one.values.push("x");
  std::vector<uint8_t> b1 = one.encode();
  b1[0] = 2;
  b1.insert(b1.end(), {1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(threw_invalid([&] { GlobalDictionary::decode(b1.data(), b1.size()); }));
}

// ---- ForRadix ------------------------------------------------------------------------------------

TEST_CASE("for_radix: pressure-like rows round-trip, chosen by the builder, at odd offsets") {
  const int64_t bases[] = {98000, -2500, INT64_MIN, INT64_MAX - 4999};
  for (size_t n : {size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097), size_t(9000)}) {
    for (int64_t base : bases) {
      for (unsigned nulls : {0u, 17u}) {
        const IntModel m = radix_data(n, base, 5000, nulls, n + uint64_t(base));
        const CellRef root = build_int(m);
        validate_column(*root);
        verify_column_deep(*root);
        CHECK(int_decode_matches(*root, m, 0, n));
        // Blocks whose rows span all 5000 values: 3 residuals in 37 bits beat For's 13 bits each.
        const size_t full = n / 2048;
        CHECK(count_blocks(*root, Enc::ForRadix) >= full);
        bool ok = true;
        for (uint64_t start : {0u, 1u, 2u, 3u, 5u, 64u, 100u, 2045u, 2047u, 2048u, 2050u, 4096u}) {
          if (start >= n) continue;
          for (uint64_t count : {1u, 2u, 3u, 4u, 31u, 2048u, 5000u}) ok = ok && int_decode_matches(*root, m, start, std::min<uint64_t>(count, n - start));
        }
        CHECK(ok);
        if (n == 2048 && nulls == 0 && base == 98000) {
          const Cell& b = block_at(*root, 0);
          CHECK(b.enc_v() == Enc::ForRadix && (b.meta[1] & 0xffffffffu) == 5000 && (b.meta[1] >> 32) == 3);
          CHECK(b.payload_bytes == 3168);  // ⌈2048 / 3⌉ = 683 lanes of 37 bits = 3159 → 3160 + 8, For: 3328
        }
      }
    }
  }
}

TEST_CASE("for_radix: chosen only where it beats For (elevation R = 4000, powers of two, tiny ranges)") {
  // R = 4000: 12 bits either way (4000^3 needs 36 bits): For keeps it.
  const CellRef elev = build_int(radix_data(4 * 2048, 0, 4000, 0, 1));
  CHECK(count_blocks(*elev, Enc::For) == 4 && count_blocks(*elev, Enc::ForRadix) == 0);
  // R = 4096: a power of two, nothing to gain.
  const CellRef pow2 = build_int(radix_data(4 * 2048, 7, 4096, 0, 2));
  CHECK(count_blocks(*pow2, Enc::ForRadix) == 0);
  // R = 3: 35 digits in 56 bits (1.6 bits a row) against For's 2.
  const IntModel tiny = radix_data(4 * 2048, 10, 3, 0, 3);
  const CellRef t = build_int(tiny);
  CHECK(count_blocks(*t, Enc::ForRadix) == 4);
  CHECK(int_decode_matches(*t, tiny, 0, tiny.size()));
  // k = 32: 3^32 < 2^51, 64 lanes of 51 bits = 408 bytes + 8 (1.6 bits a row) against For's 512.
  CHECK(block_at(*t, 0).payload_bytes == 416 && (block_at(*t, 0).meta[1] >> 32) == 32);
  // A sorted sequence stays Sequence, a constant Constant, a wide range For / Plain.
  IntModel seq;
  for (int64_t i = 0; i < 4096; ++i) seq.v.push_back(i), seq.ok.push_back(1);
  CHECK(count_blocks(*build_int(seq), Enc::ForRadix) == 0);
  const CellRef wide = build_int(radix_data(2048, 0, uint64_t(1) << 40, 0, 4));
  CHECK(count_blocks(*wide, Enc::ForRadix) == 0);
  // Every R from 2 to 300 and some larger: round trip, whatever the builder picks.
  bool ok = true;
  for (uint64_t r = 2; r < 300; ++r) {
    const IntModel m = radix_data(2048 + 77, -int64_t(r), r, 5, r);
    ok = ok && int_decode_matches(*build_int(m), m, 0, m.size());
    Staged s{Kind::Int, 2048, nullptr, nullptr, 0};
    std::vector<uint64_t> lanes(m.v.begin(), m.v.begin() + 2048);
    s.lanes = lanes.data(), s.valid = 2048;
    const CellRef b = encode_block(Enc::ForRadix, s);  // forced: every R must encode and decode
    validate_leaf(*b, {});
    std::vector<int64_t> out(2048);
    decode_rows(*b, 0, 2048, out.data());
    for (size_t i = 0; i < 2048; ++i) ok = ok && out[i] == m.v[i];
  }
  // The largest radix with exact division: k = 2, w = 42 bits, 42 + 21 ≤ 64.
  for (uint64_t r : {uint64_t(5000), uint64_t(65535), uint64_t(65537), uint64_t(1) << 20, (uint64_t(1) << 21) - 1}) {
    const IntModel m = radix_data(2048, 12345, r, 0, r);
    Staged s{Kind::Int, 2048, nullptr, nullptr, 2048};
    std::vector<uint64_t> lanes(m.v.begin(), m.v.end());
    s.lanes = lanes.data();
    const CellRef b = encode_block(Enc::ForRadix, s);
    validate_leaf(*b, {});
    ok = ok && int_decode_matches(*b, m, 0, 2048) && int_decode_matches(*b, m, 1, 2046);
  }
  CHECK(ok);
}

TEST_CASE("for_radix: kernels equal decode-then-compute (sum, min_max, count, compare at the frame edges, filter)") {
  TierScratch scratch;
  bool ok = true;
  for (int base_kind = 0; base_kind < 4; ++base_kind) {
    for (uint64_t range : {uint64_t(5000), uint64_t(3), uint64_t(300), uint64_t(70000)}) {
      const int64_t base = base_kind == 0 ? 98000 : base_kind == 1 ? INT64_MIN : base_kind == 2 ? int64_t(INT64_MAX - (range - 1)) : -7;
      const IntModel m = radix_data(2048 + 900, base, range, 9, uint64_t(base) ^ range);
      const CellRef root = build_int(m);
      for (uint64_t bi = 0; bi < block_count(*root); ++bi) {
        const Cell& b = block_at(*root, bi);
        if (b.enc_v() != Enc::ForRadix) { ok = false; std::printf("  base %lld range %llu: %s\n", (long long)base, (unsigned long long)range, enc_name(b.enc_v())); continue; }
        const size_t at = bi * 2048;
        __int128 sum = 0;
        uint64_t present = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < b.len; ++i)
          if (m.ok[at + i]) sum += m.v[at + i], ++present, lo = std::min(lo, m.v[at + i]), hi = std::max(hi, m.v[at + i]);
        const IntSum s = sum_int(b, scratch);
        ok = ok && s.sum == sum && s.valid == present && count(b) == present;
        const IntMinMax mm = min_max_int(b, scratch);
        ok = ok && mm.min == lo && mm.max == hi;
        const int64_t edge = as_i64(b.meta[0]);
        const int64_t consts[] = {edge, int64_t(uint64_t(edge) - 1), int64_t(uint64_t(edge) + 1), int64_t(uint64_t(edge) + range - 1),
                                  int64_t(uint64_t(edge) + range), int64_t(uint64_t(edge) + range / 2), INT64_MIN, INT64_MAX, 0};
        for (int64_t c : consts)
          for (CmpOp op : {CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge}) {
            BlockMask mask;
            compare_int(b, op, c, mask, scratch);
            for (size_t i = 0; i < b.len; ++i) ok = ok && mask.test(uint32_t(i)) == (m.ok[at + i] && cmp_holds(op, m.v[at + i], c));
            std::vector<int64_t> sel;
            std::vector<uint8_t> sel_ok;
            filter_int(b, mask, sel, scratch, &sel_ok);
            size_t k = 0;
            for (size_t i = 0; i < b.len; ++i)
              if (mask.test(uint32_t(i))) ok = ok && k < sel.size() && sel[k] == m.v[at + i] && sel_ok[k] == 1, ++k;
            ok = ok && k == sel.size();
          }
        // A filter that takes null rows too: they come out as 0, marked null.
        BlockMask every;
        for (uint32_t i = 0; i < b.len; ++i) every.set(i);
        std::vector<int64_t> all;
        std::vector<uint8_t> all_ok;
        filter_int(b, every, all, scratch, &all_ok);
        for (size_t i = 0; i < b.len; ++i) ok = ok && all[i] == (m.ok[at + i] ? m.v[at + i] : 0) && all_ok[i] == m.ok[at + i];
        // A sparse one (every 5th row, nulls among them: each row peeled off its lane), and
        // every digit position of a lane at the block's end.
        for (uint32_t step : {5u, 7u, 1000u}) {
          BlockMask sparse;
          for (uint32_t i = step / 2; i < b.len; i += step) sparse.set(i);
          sparse.set(uint32_t(b.len - 1));
          std::vector<int64_t> got;
          std::vector<uint8_t> got_ok;
          filter_int(b, sparse, got, scratch, &got_ok);
          size_t k = 0;
          for (uint32_t i = 0; i < b.len; ++i)
            if (sparse.test(i)) ok = ok && k < got.size() && got[k] == (m.ok[at + i] ? m.v[at + i] : 0) && got_ok[k] == m.ok[at + i], ++k;
          ok = ok && k == got.size();
        }
      }
      const IntSum cs = column_sum_int(root.get(), scratch);
      __int128 want = 0;
      for (size_t i = 0; i < m.size(); ++i)
        if (m.ok[i]) want += m.v[i];
      ok = ok && cs.sum == want;
    }
  }
  CHECK(ok);
}

// Comparisons without a tier (radix_compare: eight lanes a step by AVX-512 IFMA where the CPU
// has it, else lane by lane) on blocks crafted for each digits-a-lane count 2..8 and lane widths
// up to the 51-bit limit (52: the caller decodes instead), at every residual edge, against the
// digits the test packed itself.
TEST_CASE("for_radix: comparisons without a tier equal the packed digits (k 2..8, lanes up to 51 bits)") {
  // (radix, digits a lane): lane width bit_width(R^k - 1)
  const std::pair<uint64_t, unsigned> frames[] = {{5000, 3}, {5000, 4}, {6000, 4}, {1300, 5}, {1500, 5}, {2, 8},   {10, 8},  {1000, 5},
                                                  {3000, 2}, {200, 7},  {90, 8},   {46341, 3}, {60, 8},  {100, 7}, {30, 6}};
  const IntModel src = radix_data(2048 + 901, 98000, 5000, 0, 77);
  const CellRef root = build_int(src);
  TierScratch scratch;
  bool ok = true, simd_seen = false, simd_any = false;
  for (const auto& [radix, k] : frames) {
    for (uint64_t bi = 0; bi < block_count(*root); ++bi) {
      const Cell& from = block_at(*root, bi);
      const uint32_t len = uint32_t(from.len);
      const uint64_t lanes = (len + k - 1) / k;
      uint64_t span = 1;
      for (unsigned t = 0; t < k; ++t) span *= radix;
      const unsigned w = 64 - unsigned(__builtin_clzll(span - 1));
      // digits: both frame ends, then a hash; rows past len in the last lane stay 0
      std::vector<uint64_t> digit(lanes * k, 0);
      for (uint32_t i = 0; i < len; ++i) digit[i] = i == 3 ? 0 : i == 4 ? radix - 1 : splitmix(radix * 131 + k * 7 + i) % radix;
      const int64_t base = -1000003;
      Crafted c = craft(from, [&](Cell& h, std::vector<uint8_t>& bytes) {
        bytes.assign(str::packed_bytes(lanes, w), 0);
        for (uint64_t j = 0; j < lanes; ++j) {
          uint64_t x = 0;
          for (unsigned t = k; t-- > 0;) x = x * radix + digit[j * k + t];
          str::pack_lane(bytes.data(), j, w, x);
        }
        h.payload_bytes = bytes.size();
        h.attrs = uint8_t(h.attrs & ~attr::kHasNulls);
        h.meta[0] = uint64_t(base);
        h.meta[1] = radix | uint64_t(k) << 32;
        if (h.has(attr::kHasZonemap)) h.meta[2] = uint64_t(base), h.meta[3] = uint64_t(base + int64_t(radix) - 1);
      });
      const Cell& b = *c.cell;
      validate_leaf(b, {});
      const bool simd = radix_compare_simd(b);
      if (w > 51 && simd) ok = false, std::printf("  R %llu k %u: %u-bit lanes taken by the SIMD path\n", (unsigned long long)radix, k, w);
      simd_seen = simd_seen || (simd && w >= 50);
      simd_any = simd_any || simd;
      for (uint64_t rc : {uint64_t(0), uint64_t(1), radix / 2, radix - 2, radix - 1}) {
        if (rc >= radix) continue;
        for (CmpOp op : {CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge}) {
          for (bool use_simd : {true, false}) {
            BlockMask got;
            radix_compare(b, op, rc, got.words, use_simd);
            for (uint32_t i = 0; i < len; ++i) {
              const bool want = cmp_holds(op, int64_t(digit[i]), int64_t(rc));
              if (got.test(i) != want) {
                if (ok) std::printf("  R %llu k %u w %u simd %d op %d rc %llu row %u: %d\n", (unsigned long long)radix, k, w, int(use_simd),
                                    int(op), (unsigned long long)rc, i, int(got.test(i)));
                ok = false;
              }
            }
            for (uint32_t i = len; i < kBlockLanes; ++i) ok = ok && !got.test(i);
          }
          // and through compare_int, whichever path it takes, in value terms
          BlockMask via;
          compare_int(b, op, base + int64_t(rc), via, scratch);
          for (uint32_t i = 0; i < len; ++i) ok = ok && via.test(i) == cmp_holds(op, int64_t(digit[i]), int64_t(rc));
        }
      }
    }
  }
  CHECK(ok);
  // On a CPU with AVX-512 IFMA and VBMI the eight-lane path ran, up to 50- and 51-bit lanes.
  if (simd_any) CHECK(simd_seen);
  else std::printf("  (this CPU compares one lane at a time: no AVX-512 IFMA / VBMI)\n");
}

TEST_CASE("for_radix: crafted blocks are TET_CELLS_INVALID") {
  const IntModel m = radix_data(2048, 1000, 5000, 7, 42);
  Staged s{Kind::Int, 2048, nullptr, nullptr, 0};
  std::vector<uint64_t> lanes(m.v.begin(), m.v.end()), validity(kMaskBytes / 8, 0);
  for (size_t i = 0; i < 2048; ++i) validity[i / 64] |= uint64_t(m.ok[i]) << (i % 64);
  s.lanes = lanes.data(), s.validity = validity.data();
  const CellRef b = encode_block(Enc::ForRadix, s);
  validate_leaf(*b, {});
  CHECK(b->has(attr::kHasNulls) && (b->meta[1] >> 32) == 3 && b->meta[1] % (uint64_t(1) << 32) == 5000);
  CHECK(rejected(*b, {}, "radix 1", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 1 | uint64_t(3) << 32; }));
  CHECK(rejected(*b, {}, "one digit a lane", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 5000 | uint64_t(1) << 32; }));
  CHECK(rejected(*b, {}, "lanes past 56 bits", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 5000 | uint64_t(5) << 32; }));
  CHECK(rejected(*b, {}, "inexact division (w + bits(R) > 64)", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = ((uint64_t(1) << 27) + 1) | uint64_t(2) << 32; }));
  CHECK(rejected(*b, {}, "high meta bits", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] |= uint64_t(1) << 40; }));
  CHECK(rejected(*b, {}, "truncated", [](Cell& h, std::vector<uint8_t>& p) { p.erase(p.begin(), p.begin() + 8); h.payload_bytes -= 8; }));
  CHECK(rejected(*b, {}, "k = 2 (another lane count)", [](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 5000 | uint64_t(2) << 32; }));
  CHECK(rejected(*b, {}, "a lane at R^3", [](Cell&, std::vector<uint8_t>& p) {
    const uint64_t big = 5000ull * 5000 * 5000;  // lane 0: bits 0..36
    uint64_t w;
    std::memcpy(&w, p.data(), 8);
    w = (w & ~((uint64_t(1) << 37) - 1)) | big;
    std::memcpy(p.data(), &w, 8);
  }));
  // A digit of 1 on the first null row, set by hand (no carry: the digit was 0).
  size_t null_row = 0;
  while (null_row < 2048 && m.ok[null_row]) ++null_row;
  CHECK(null_row < 2048);
  CHECK(rejected(*b, {}, "a digit on a null row", [&](Cell&, std::vector<uint8_t>& p) {
    const uint64_t lane = null_row / 3, digit = null_row % 3;
    const uint64_t bit = lane * 37;
    uint64_t x = (str::load_u64(p.data() + bit / 8) >> (bit % 8)) & ((uint64_t(1) << 37) - 1);
    uint64_t pw = 1;
    for (uint64_t t = 0; t < digit; ++t) pw *= 5000;
    x += pw;  // the digit was 0: now 1
    uint64_t word = str::load_u64(p.data() + bit / 8);
    word = (word & ~(((uint64_t(1) << 37) - 1) << (bit % 8))) | (x << (bit % 8));
    str::store_u64(p.data() + bit / 8, word);
  }));
  CHECK(rejected(*b, {}, "a digit past len", [](Cell&, std::vector<uint8_t>& p) {
    // 2048 rows = 683 lanes, the last holds rows 2046, 2047 and one padding digit (the top): set it to 1.
    const uint64_t bit = 682 * 37;
    uint64_t word = str::load_u64(p.data() + bit / 8);
    word += uint64_t(5000 * 5000) << (bit % 8);
    str::store_u64(p.data() + bit / 8, word);
  }));
  CHECK(rejected(*b, {}, "a float block", [](Cell& h, std::vector<uint8_t>&) { h.kind = uint8_t(Kind::Float); }));
  // A zone map that is well-formed but not the values' bounds passes load and fails the deep check.
  Crafted z = craft(*b, [](Cell& h, std::vector<uint8_t>&) { h.meta[3] += 1; });
  validate_leaf(*z.cell, {});
  CHECK(threw_invalid([&] { verify_column_deep(*z.cell); }));
  verify_column_deep(*b);
}

// ---- where over stored tables --------------------------------------------------------------------

TEST_CASE("where: country (global_huffman) and pressure_pa (for_radix) columns agree with the model") {
  const size_t n = 9 * 2048 + 311;
  const StrModel country = country_model(n, 41, 8);
  const IntModel pressure = radix_data(n, 98000, 5000, 37, 9);
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("obs", "", kNoAxis, {ColumnSchema{"country", Kind::Str}, ColumnSchema{"pressure_pa", Kind::Int}});
  StrBuilder sb;
  for (const auto& v : country) v ? sb.push(*v) : sb.push_null();
  const CellRef croot = sb.finish();
  w.add_column(t, 0, *croot);
  CHECK(sb.global_dictionary() && !sb.global_dictionary()->code.empty());
  w.add_metablock(t, 0, MetablockKind::GlobalDictionary, sb.global_dictionary()->encode());
  w.add_column(t, 1, *build_int(pressure));
  const std::vector<uint8_t> bytes = tet_test::region_bytes(w);
  tet_test::AlignedBytes al(bytes);
  TablesRegion region(al.p, al.len);
  CHECK(region.encodings_used(0, 0) & (1u << unsigned(Enc::GlobalHuffman)));
  CHECK(region.encodings_used(0, 1) & (1u << unsigned(Enc::ForRadix)));

  auto lit_s = [](const char* s) { return Literal::of_str(s); };
  std::vector<Predicate> preds;
  auto add = [&](size_t col, WhereOp op, Literal v) {
    Predicate p;
    p.column = col, p.op = op, p.value = std::move(v);
    preds.push_back(p);
  };
  for (const char* s : {"AA", "AB", "HM", "ZZ", "B", ""})
    for (WhereOp op : {WhereOp::Eq, WhereOp::Ne, WhereOp::Lt, WhereOp::Ge, WhereOp::Prefix}) add(0, op, lit_s(s));
  for (int64_t v : {int64_t(98000), int64_t(97999), int64_t(98100), int64_t(102999), int64_t(103000), int64_t(100500)})
    for (WhereOp op : {WhereOp::Eq, WhereOp::Ne, WhereOp::Lt, WhereOp::Le, WhereOp::Gt, WhereOp::Ge}) add(1, op, Literal::of_int(v));
  Predicate in;
  in.column = 0, in.op = WhereOp::In, in.set = {lit_s("AA"), lit_s("AF"), lit_s("CZ")};
  preds.push_back(in);
  Predicate nul;
  nul.column = 0, nul.op = WhereOp::IsNull, nul.flag = true;
  preds.push_back(nul);

  auto model_row = [&](const Predicate& p, size_t r) -> bool {
    if (p.op == WhereOp::IsNull) return p.flag == (p.column == 0 ? !country[r] : !pressure.ok[r]);
    if (p.column == 0) {
      if (!country[r]) return false;
      const std::string& x = *country[r];
      switch (p.op) {
        case WhereOp::Eq: return str_cmp(x, p.value.s) == 0;
        case WhereOp::Ne: return str_cmp(x, p.value.s) != 0;
        case WhereOp::Lt: return str_cmp(x, p.value.s) < 0;
        case WhereOp::Ge: return str_cmp(x, p.value.s) >= 0;
        case WhereOp::Prefix: return x.compare(0, p.value.s.size(), p.value.s) == 0 && x.size() >= p.value.s.size();
        case WhereOp::In:
          for (const Literal& l : p.set)
            if (x == l.s) return true;
          return false;
        default: return false;
      }
    }
    if (!pressure.ok[r]) return false;
    const int64_t x = pressure.v[r], c = p.value.i;
    switch (p.op) {
      case WhereOp::Eq: return x == c;
      case WhereOp::Ne: return x != c;
      case WhereOp::Lt: return x < c;
      case WhereOp::Le: return x <= c;
      case WhereOp::Gt: return x > c;
      default: return x >= c;
    }
  };
  size_t bad = 0;
  auto check = [&](const std::vector<Predicate>& ps) {
    std::vector<uint64_t> want;
    for (size_t r = 0; r < n; ++r) {
      bool all = true;
      for (const Predicate& p : ps) all = all && model_row(p, r);
      if (all) want.push_back(r);
    }
    const WhereResult got = evaluate_where(region, 0, ps, 1);
    if (got.rows.positions() != want || got.plan.selected != want.size()) ++bad;
  };
  for (const Predicate& p : preds) check({p});
  for (size_t a = 0; a < preds.size(); a += 3)
    for (size_t b = 1; b < preds.size(); b += 7) check({preds[a], preds[b]});
  CHECK(bad == 0);
}

TEST_MAIN()
