// The string encodings (dict, global_dict, sym8, sym8_for, views), StrBuilder, the string
// kernels and the column metablocks, against a plain model written here: a vector of optional
// strings, compared in binary byte order by this file's own comparison.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cells/column.h"
#include "cells/metablocks.h"
#include "cells/str_builder.h"
#include "cells/str_codec.h"
#include "tet/error.h"
#include "tests/check.h"

using namespace tet::cells;
using Model = std::vector<std::optional<std::string>>;

namespace {

// ---- model helpers (independent of the code under test) ------------------------------------
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

// Binary order: bytes as unsigned, a proper prefix first.
bool model_less(const std::string& a, const std::string& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const unsigned x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

std::string hex16(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = d[v & 15];
  return s;
}

std::string random_bytes(Rng& r, size_t n, unsigned lo = 0, unsigned hi = 255) {
  std::string s(n, '\0');
  for (auto& c : s) c = char(lo + r.below(hi - lo + 1));
  return s;
}

// Strings at every boundary the layouts care about.
std::vector<std::string> edge_strings() {
  return {"",
          std::string("\0", 1),
          std::string("a\0", 2),
          std::string("\0\0\0", 3),
          std::string("ab\0c", 4),
          "a",
          "abcdefg",
          "abcdefgh",                 // 8: the widest sym8
          "abcdefghi",                // 9
          "abcdefghijkl",             // 12: the widest inline view
          "abcdefghijklm",            // 13
          std::string("abcdefgh\0", 9),
          "\xc3\xa9t\xc3\xa9",        // UTF-8 "été"
          "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",  // "日本語"
          "\xff\xfe\x80",
          "\x7f",
          "\x80",
          std::string(40, 'z'),
          std::string(300, '\xee')};
}

Model random_model(Rng& r, size_t rows, const std::vector<std::string>& pool, unsigned null_pct) {
  Model m(rows);
  for (auto& v : m)
    if (r.below(100) >= null_pct) v = pool[r.below(pool.size())];
  return m;
}

// A StrBlock over a model block (held by the caller's storage).
struct ModelBlock {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets{0};
  uint8_t validity[kMaskBytes] = {};
  bool any_null = false;
  str::StrBlock block;
  explicit ModelBlock(const Model& m) {
    std::optional<std::string> prev;
    bool sorted = true;
    for (size_t i = 0; i < m.size(); ++i) {
      if (m[i]) {
        bytes.insert(bytes.end(), m[i]->begin(), m[i]->end());
        validity[i / 8] = uint8_t(validity[i / 8] | (1 << (i % 8)));
        if (prev && model_less(*m[i], *prev)) sorted = false;
        prev = m[i];
      } else {
        any_null = true;
      }
      offsets.push_back(bytes.size());
    }
    block.rows = uint32_t(m.size());
    block.bytes = bytes.data();
    block.offsets = offsets.data();
    block.validity = any_null ? validity : nullptr;
    block.sorted = sorted;
  }
};

// Every string encoding that can hold this block, encoded directly.
std::vector<CellRef> encode_every_way(const Model& m, StrBuffer* global) {
  ModelBlock mb(m);
  std::vector<CellRef> out;
  std::set<std::string, bool (*)(const std::string&, const std::string&)> distinct(model_less);
  for (auto& v : m)
    if (v) distinct.insert(*v);
  if (distinct.empty()) return out;
  std::vector<std::string> entries(distinct.begin(), distinct.end());
  std::vector<std::string_view> views(entries.begin(), entries.end());
  std::vector<uint32_t> codes(m.size(), 0);
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i]) codes[i] = uint32_t(std::lower_bound(entries.begin(), entries.end(), *m[i], model_less) - entries.begin());
  out.push_back(str::encode_dict(mb.block, views, codes.data()));
  if (global) {
    // A global dictionary with extra values around the block's: codes shift by the rank.
    std::set<std::string, bool (*)(const std::string&, const std::string&)> all(distinct.begin(), distinct.end(), model_less);
    all.insert("!");
    all.insert("~~~~~~~~~~~~~~~");
    global->clear();
    std::vector<std::string> g(all.begin(), all.end());
    for (auto& s : g) global->push(s);
    for (size_t i = 0; i < m.size(); ++i)
      if (m[i]) codes[i] = uint32_t(std::lower_bound(g.begin(), g.end(), *m[i], model_less) - g.begin());
    out.push_back(str::encode_global_dict(mb.block, g.size(), codes.data()));
  }
  const str::Sym8Plan sp = str::plan_sym8(mb.block);
  if (sp.fits) out.push_back(str::encode_sym8(mb.block, sp, false));
  if (sp.for_fits) out.push_back(str::encode_sym8(mb.block, sp, true));
  str::ViewsPlan vp;
  str::plan_views(mb.block, vp);
  out.push_back(str::encode_views(mb.block, vp, false));
  if (vp.packable) out.push_back(str::encode_views(mb.block, vp, true));
  return out;
}

bool block_matches(const Cell& c, const Model& m, size_t base, uint32_t start, uint32_t count, const DecodeContext& ctx) {
  StrBuffer got;
  got.push("sentinel");  // decode appends
  decode_rows(c, start, count, &got, ctx);
  if (got.size() != count + 1u) return false;
  for (uint32_t i = 0; i < count; ++i) {
    const auto& want = m[base + start + i];
    if (got.at(i + 1) != (want ? std::string_view(*want) : std::string_view())) return false;
    if (row_valid(c.validity(), start + i) != want.has_value()) return false;
  }
  return true;
}

// Decode at every start mod 32, around 1024 and up to the end, with short and long counts.
bool decodes_everywhere(const Cell& c, const Model& m, const DecodeContext& ctx) {
  const uint32_t len = uint32_t(c.len);
  std::vector<uint32_t> starts;
  for (uint32_t s = 0; s < 32 && s < len; ++s) starts.push_back(s);
  for (uint32_t s = 1000; s < 1050 && s < len; ++s) starts.push_back(s);
  for (uint32_t s = len > 40 ? len - 40 : 0; s < len; ++s) starts.push_back(s);
  for (uint32_t s : starts)
    for (uint32_t n : {1u, 7u, 33u, len - s})
      if (s + n <= len && !block_matches(c, m, 0, s, n, ctx)) {
        std::printf("  decode mismatch: %s start %u count %u\n", enc_name(c.enc_v()), s, n);
        return false;
      }
  return true;
}

bool column_matches(const Cell& root, const Model& m, const DecodeContext& ctx) {
  if (root.len != m.size()) return false;
  StrBuffer got;
  std::vector<uint8_t> valid(m.size());
  decode_column(root, 0, m.size(), &got, valid.data(), ctx);
  for (size_t i = 0; i < m.size(); ++i) {
    if (valid[i] != (m[i] ? 1 : 0)) return false;
    if (got.at(i) != (m[i] ? std::string_view(*m[i]) : std::string_view())) return false;
  }
  // Ranges across block boundaries.
  for (uint64_t s : {uint64_t(0), uint64_t(1), uint64_t(2047), uint64_t(2048), uint64_t(2049), uint64_t(4095)}) {
    if (s >= m.size()) continue;
    const uint64_t n = std::min<uint64_t>(m.size() - s, 4100);
    StrBuffer part;
    decode_column(root, s, n, &part, nullptr, ctx);
    for (uint64_t i = 0; i < n; ++i)
      if (part.at(i) != (m[s + i] ? std::string_view(*m[s + i]) : std::string_view())) return false;
  }
  return true;
}

struct Built {
  CellRef root;
  std::unique_ptr<StrBuilder> builder;
  DecodeContext ctx() const {
    const GlobalDictionary* g = builder->global_dictionary();
    return g ? g->context() : DecodeContext{};
  }
};

Built build(const Model& m, StrBuilderOptions o = {}) {
  Built b;
  b.builder = std::make_unique<StrBuilder>(o);
  for (auto& v : m) {
    if (v) b.builder->push(*v);
    else b.builder->push_null();
  }
  b.root = b.builder->finish();
  return b;
}

uint64_t count_enc(const Cell& root, Enc e) {
  uint64_t n = 0;
  for (uint64_t i = 0; i < block_count(root); ++i) n += block_at(root, i).enc_v() == e;
  return n;
}

}  // namespace

// ---- round trips per encoding -------------------------------------------------------------------

TEST_CASE("every string encoding round-trips edge strings, NUL bytes and nulls at every offset") {
  Rng r(1);
  const std::vector<std::string> edges = edge_strings();
  std::vector<std::string> short_pool;
  for (auto& s : edges)
    if (s.size() <= 8) short_pool.push_back(s);
  for (size_t rows : {size_t(1), size_t(2), size_t(31), size_t(1025), size_t(2047), size_t(2048)}) {
    for (unsigned null_pct : {0u, 10u, 90u}) {
      for (const std::vector<std::string>* pool : {&edges, (const std::vector<std::string>*)&short_pool}) {
        Model m = random_model(r, rows, *pool, null_pct);
        if (std::none_of(m.begin(), m.end(), [](auto& v) { return v.has_value(); })) m[0] = (*pool)[1];
        StrBuffer global;
        auto cells = encode_every_way(m, &global);
        CHECK(cells.size() >= 3);
        const DecodeContext ctx{&global};
        for (auto& c : cells) {
          validate_leaf(*c, ctx);
          CHECK(decodes_everywhere(*c, m, ctx));
          CHECK(c->has(attr::kHasNulls) == (null_pct > 0 && std::any_of(m.begin(), m.end(), [](auto& v) { return !v; })));
        }
      }
    }
  }
}

TEST_CASE("sym8 blocks use explicit lengths only when a string ends in NUL; zone map = min/max word") {
  Model plain = {std::string("b"), std::string("abc"), std::nullopt, std::string("zz")};
  Model nul = {std::string("b"), std::string("a\0", 2), std::string("a")};
  for (const Model* m : {&plain, &nul}) {
    ModelBlock mb(*m);
    const auto p = str::plan_sym8(mb.block);
    CellRef c = str::encode_sym8(mb.block, p, false);
    CHECK(((c->meta[0] & 1) != 0) == (m == &nul));
    CHECK(c->has(attr::kHasZonemap));
    // Hand-computed big-endian words: "abc" = 0x61626300..., "zz" = 0x7a7a0000..., "a" = 0x61000...
    if (m == &plain) {
      CHECK(c->meta[2] == 0x6162630000000000ull);
      CHECK(c->meta[3] == 0x7a7a000000000000ull);
      CHECK(c->payload_bytes == 4 * 8 + kMaskBytes);
    } else {
      CHECK(c->meta[2] == 0x6100000000000000ull);
      CHECK(c->payload_bytes == 3 * 8 + 8);
    }
    validate_leaf(*c, {});
    CHECK(decodes_everywhere(*c, *m, {}));
  }
}

TEST_CASE("sym8_for drops the trailing zero bits residuals share (two-letter codes: 16-bit residuals or less)") {
  Model m;
  for (int i = 0; i < 2048; ++i) m.push_back(std::string{char('A' + i % 26), char('A' + (i / 26) % 26)});
  ModelBlock mb(m);
  const auto p = str::plan_sym8(mb.block);
  // "AA" .. "ZZ": words differ in the top 16 bits only; the spread 0x1919 << 48 needs 13 bits.
  CHECK(p.shift == 48);
  CHECK(p.width == 13);
  CellRef c = str::encode_sym8(mb.block, p, true);
  CHECK(c->payload_bytes == (2048 * 13 + 7) / 8 + 8);
  validate_leaf(*c, {});
  CHECK(decodes_everywhere(*c, m, {}));
}

TEST_CASE("packed views: event ids (\"E\" + 16 hex) take 8 bytes a row, classic 33") {
  Model m;
  Rng r(7);
  for (int i = 0; i < 2048; ++i) m.push_back("E" + hex16(r.next()));
  ModelBlock mb(m);
  str::ViewsPlan vp;
  str::plan_views(mb.block, vp);
  CHECK(vp.prefix_len == 1);
  CHECK(vp.alphabet_size == 16);
  CHECK(vp.uniform && vp.uniform_len == 16);
  const uint64_t classic = str::views_classic_data_bytes(mb.block, vp), packed = str::views_packed_data_bytes(mb.block, vp);
  CHECK(classic == 2048 * (16 + 17));
  // 16 header + 16 alphabet + 8 prefix + 2048·16·4 bits + 8 slack.
  CHECK(packed == 16 + 16 + 8 + 2048 * 8 + 8);
  CellRef c = str::encode_views(mb.block, vp, true);
  validate_leaf(*c, {});
  CHECK(decodes_everywhere(*c, m, {}));
}

// ---- the builder's choices ------------------------------------------------------------------------

TEST_CASE("builder: one value -> constant (with nulls: constant + mask)") {
  Model m(3000, std::string("same value"));
  m[5] = std::nullopt;
  Built b = build(m);
  CHECK(count_enc(*b.root, Enc::Constant) == 2);
  CHECK(block_at(*b.root, 0).has(attr::kHasNulls));
  CHECK(!block_at(*b.root, 1).has(attr::kHasNulls));
  validate_column(*b.root, b.ctx());
  CHECK(column_matches(*b.root, m, b.ctx()));
}

TEST_CASE("builder: few distinct long values -> dict; short sorted codes -> sym8_for; random 8 bytes -> sym8") {
  Rng r(3);
  std::vector<std::string> pool;
  for (int i = 0; i < 12; ++i) pool.push_back(random_bytes(r, 20 + i, 'a', 'z'));
  Model few = random_model(r, 4096, pool, 5);
  Built b = build(few, {false, false});
  CHECK(count_enc(*b.root, Enc::Dict) == 2);
  CHECK(column_matches(*b.root, few, {}));

  Model codes;
  for (int i = 0; i < 4096; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "A%04d", i);
    codes.push_back(std::string(buf));
  }
  Built c = build(codes, {false, false});
  CHECK(count_enc(*c.root, Enc::Sym8For) == 2);
  CHECK(block_at(*c.root, 0).has(attr::kSorted) && block_at(*c.root, 0).has(attr::kHasZonemap));
  CHECK(column_matches(*c.root, codes, {}));
  {
    ModelBlock mb(Model(codes.begin(), codes.begin() + 2048));
    str::ViewsPlan vp;
    str::plan_views(mb.block, vp);
    std::printf("  A%%04d codes: sym8_for %.2f B/row, packed views would be %.2f\n", double(block_at(*c.root, 0).payload_bytes) / 2048,
                double(str::views_packed_data_bytes(mb.block, vp)) / 2048);
  }

  Model wide;
  for (int i = 0; i < 4096; ++i) wide.push_back(random_bytes(r, 8, 1, 255));
  Built w = build(wide, {false, false});
  CHECK(count_enc(*w.root, Enc::Sym8) == 2);
  CHECK(!block_at(*w.root, 0).has(attr::kSorted));
  CHECK(column_matches(*w.root, wide, {}));
}

TEST_CASE("builder: long unique strings -> views (packed: ids, text, long binary; classic: 11..12-byte binary)") {
  Rng r(4);
  Model ids, text, blobs, short_blobs;
  for (int i = 0; i < 6144; ++i) {
    ids.push_back("E" + hex16(r.next()));
    text.push_back("user-" + random_bytes(r, 8 + r.below(40), ' ', 'z'));
    blobs.push_back(random_bytes(r, 13 + r.below(30)));
    short_blobs.push_back(random_bytes(r, 11 + r.below(2)));
  }
  const Model* models[] = {&ids, &text, &blobs, &short_blobs};
  for (const Model* m : models) {
    Built b = build(*m, {false, false});
    CHECK(count_enc(*b.root, Enc::Views) == 3);
    CHECK(block_at(*b.root, 0).meta[1] == (m == &short_blobs ? str::kViewsClassic : str::kViewsPacked));
    CHECK(column_matches(*b.root, *m, {}));
    validate_column(*b.root, {});
    if (m == &ids) {
      const double bpr = double(b.builder->stats().block_bytes) / 6144;
      std::printf("  event_id-like: %.2f B/row with headers (DuckDB 9.67)\n", bpr);
      CHECK(bpr < 8.5);
    }
  }
}

TEST_CASE("builder: lengths 1, 2047, 2048, 2049, 4097 round-trip with nulls and edge strings") {
  Rng r(5);
  for (size_t rows : {size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097)}) {
    Model m = random_model(r, rows, edge_strings(), 15);
    Built b = build(m);
    CHECK(b.root->len == rows);
    CHECK(block_count(*b.root) == (rows + 2047) / 2048);
    validate_column(*b.root, b.ctx());
    CHECK(column_matches(*b.root, m, b.ctx()));
    uint64_t nulls = 0;
    for (auto& v : m) nulls += !v;
    CHECK(null_count(*b.root) == nulls);
  }
  Built empty = build({});
  CHECK(!empty.root);
}

TEST_CASE("builder: a global dictionary where it pays (10^4 station names), not where it does not") {
  Model names;
  const size_t rows = 60 * 2048;
  for (size_t i = 0; i < rows; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "ST-%05zu-%c%c", i % 10000, char('A' + (i % 10000) % 23), char('A' + (i % 10000) % 7));
    names.push_back(std::string(buf));
  }
  Built b = build(names);
  CHECK(b.builder->global_dictionary() != nullptr);
  CHECK(b.builder->global_dictionary() && b.builder->global_dictionary()->size() == 10000);
  CHECK(count_enc(*b.root, Enc::GlobalDict) == block_count(*b.root));
  const auto& st = b.builder->stats();
  CHECK(st.block_bytes + st.global_dict_bytes < st.per_block_bytes);
  std::printf("  station_name-like: %.2f B/row with the global dictionary, %.2f without\n",
              double(st.block_bytes + st.global_dict_bytes) / rows, double(st.per_block_bytes) / rows);
  validate_column(*b.root, b.ctx());
  CHECK(column_matches(*b.root, names, b.ctx()));
  CHECK_THROWS_CODE(validate_column(*b.root, {}), "TET_CELLS_INVALID");

  Rng r(6);
  Model unique;
  for (int i = 0; i < 10 * 2048; ++i) unique.push_back("E" + hex16(r.next()));
  Built u = build(unique);
  CHECK(u.builder->global_dictionary() == nullptr);
  CHECK(count_enc(*u.root, Enc::GlobalDict) == 0);
}
TEST_MAIN()
