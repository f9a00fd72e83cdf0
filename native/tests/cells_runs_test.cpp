// The run-shaped encodings: RunDirectory (a column's runs at rest, expanded into Constant / Rle
// leaves on load), PiecewiseSequence (blocks of a few arithmetic segments) and SparseBool
// (majority value + exception rows). Each is checked against a plain model written here (a
// vector of values and validity bytes): round trips at odd offsets and the lengths 0, 1, 2047,
// 2048, 2049, 4097, the builders' / writer's choice on data shaped for it and not otherwise,
// kernels against compute-on-the-model, layouts computed by hand, and crafted or corrupted
// blocks rejected with TET_CELLS_INVALID (never a crash).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/codecs.h"
#include "cells/column.h"
#include "cells/kernels.h"
#include "cells/region.h"
#include "cells/run_directory.h"
#include "check.h"
#include "region_bytes.h"
#include "tet/error.h"
#include "util/checked.h"
#include "write/table_set.h"

using namespace tet::cells;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g(20261201);
  return g;
}
uint64_t below(uint64_t n) { return n ? rng()() % n : 0; }

uint64_t splitmix(uint64_t x) {  // the obs generator's mixer (bench/lib/obs.mjs), written out
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr int64_t kT0 = 1577836800000000;  // 2020-01-01T00:00:00Z in µs
constexpr int64_t kHour = 3600000000;

// ---- the model -------------------------------------------------------------------------------

struct Model {
  std::vector<int64_t> v;  // int-stored values, or bool 0 / 1; a null row's entry is 0
  std::vector<uint8_t> ok;
  size_t size() const { return v.size(); }
  void push(int64_t x, bool present = true) { v.push_back(present ? x : 0), ok.push_back(present); }
};

Model ts_rows(size_t n, size_t run) {  // obs ts: 2020-01-01 + ⌊i / run⌋ hours
  Model m;
  for (size_t i = 0; i < n; ++i) m.push(kT0 + int64_t(i / run) * kHour);
  return m;
}
Model station_rows(size_t n, size_t wrap, double nulls = 0) {  // obs station_id: i mod 10^4
  Model m;
  for (size_t i = 0; i < n; ++i) m.push(int64_t(i % wrap), nulls == 0 || below(1000) >= nulls * 1000);
  return m;
}
Model qc_rows(size_t n, double nulls = 0, bool flip = false) {  // obs qc_ok: h(11 i) mod 100 ≠ 0
  Model m;
  for (size_t i = 0; i < n; ++i) m.push((splitmix(11 * i) % 100 != 0) != flip, nulls == 0 || below(1000) >= nulls * 1000);
  return m;
}

CellRef build(Kind kind, const Model& m) {
  if (kind == Kind::Bool) {
    BoolBuilder b;
    std::vector<uint8_t> x(m.v.begin(), m.v.end());
    b.push_many(x.data(), m.ok.data(), m.size());
    return b.finish();
  }
  IntBuilder b(kind);
  b.push_many(m.v.data(), m.ok.data(), m.size());
  return b.finish();
}

// Rows [start, start + count) of a column against the model (values and validity).
bool decodes(const Cell& root, const Model& m, uint64_t start, uint64_t count) {
  std::vector<uint8_t> valid(count + 1, 0xee);
  bool ok = true;
  if (root.kind_v() == Kind::Bool) {
    std::vector<uint8_t> x(count + 1, 0xee);
    decode_column(root, start, count, x.data(), valid.data());
    for (uint64_t i = 0; i < count; ++i) ok = ok && x[i] == uint8_t(m.v[start + i]) && valid[i] == m.ok[start + i];
    ok = ok && x[count] == 0xee;
  } else {
    std::vector<int64_t> x(count + 1, 0x5eed);
    decode_column(root, start, count, x.data(), valid.data());
    for (uint64_t i = 0; i < count; ++i) ok = ok && x[i] == m.v[start + i] && valid[i] == m.ok[start + i];
    ok = ok && x[count] == 0x5eed;
  }
  if (!ok) std::printf("  decode of [%llu, +%llu) differs\n", (unsigned long long)start, (unsigned long long)count);
  return ok && valid[count] == 0xee;
}

bool decodes_everywhere(const Cell& root, const Model& m) {
  const uint64_t n = m.size();
  bool ok = decodes(root, m, 0, n);
  for (uint64_t start : {uint64_t(1), uint64_t(7), uint64_t(2047), uint64_t(2048), uint64_t(2049), uint64_t(4095), n / 2 + 3, n - 1})
    for (uint64_t count : {uint64_t(1), uint64_t(37), uint64_t(2049), n})
      if (start < n) ok = ok && decodes(root, m, start, std::min(count, n - start));
  return ok;
}

// Kernels over the column equal computing on the model.
bool int_kernels_agree(const Cell& root, const Model& m) {
  TierScratch s;
  __int128 sum = 0;
  uint64_t present = 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < m.size(); ++i)
    if (m.ok[i]) sum += m.v[i], ++present, lo = std::min(lo, m.v[i]), hi = std::max(hi, m.v[i]);
  const IntSum got = column_sum_int(&root, s);
  bool ok = got.sum == sum && got.valid == present && column_count(&root) == present;
  const IntMinMax mm = column_min_max_int(&root, s);
  ok = ok && mm.valid == present && (present == 0 || (mm.min == lo && mm.max == hi));
  auto plus = [](int64_t x, int64_t d) { return int64_t(uint64_t(x) + uint64_t(d)); };  // wraps, no UB
  const int64_t probes[] = {m.v[0], m.v[m.size() / 2], plus(m.v[m.size() - 1], 1), plus(lo, -1), hi, INT64_MIN, INT64_MAX, 17};
  const CmpOp ops[] = {CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge};
  for (int64_t c : probes)
    for (CmpOp op : ops) {
      const ColumnMask mask = column_compare_int(&root, op, c, s);
      std::vector<int64_t> picked, want;
      column_filter_int(&root, mask, picked, s);
      for (size_t i = 0; i < m.size(); ++i) {
        if (!m.ok[i]) continue;
        const int64_t x = m.v[i];
        const bool hit = op == CmpOp::Eq ? x == c : op == CmpOp::Ne ? x != c : op == CmpOp::Lt ? x < c
                       : op == CmpOp::Le ? x <= c : op == CmpOp::Gt ? x > c : x >= c;
        if (hit) want.push_back(x);
      }
      ok = ok && picked == want && mask.selected() == want.size();
    }
  if (!ok) std::printf("  int kernels differ from the model\n");
  return ok;
}

bool bool_kernels_agree(const Cell& root, const Model& m) {
  TierScratch s;
  uint64_t trues = 0, present = 0;
  for (size_t i = 0; i < m.size(); ++i) trues += m.ok[i] && m.v[i], present += m.ok[i];
  const IntSum got = column_sum_bool(&root, s);
  bool ok = got.sum == trues && got.valid == present;
  for (bool c : {false, true})
    for (CmpOp op : {CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Ge}) {
      const ColumnMask mask = column_compare_bool(&root, op, c, s);
      std::vector<uint8_t> picked, valid;
      column_filter_bool(&root, mask, picked, s, &valid);
      uint64_t want = 0;
      bool rows_ok = true;
      size_t k = 0;
      for (size_t i = 0; i < m.size(); ++i) {
        if (!m.ok[i]) continue;
        const int x = int(m.v[i]), y = int(c);
        const bool hit = op == CmpOp::Eq ? x == y : op == CmpOp::Ne ? x != y : op == CmpOp::Lt ? x < y : x >= y;
        if (!hit) continue;
        ++want;
        rows_ok = rows_ok && k < picked.size() && picked[k] == x && valid[k] == 1;
        ++k;
      }
      ok = ok && rows_ok && mask.selected() == want && picked.size() == want;
    }
  if (!ok) std::printf("  bool kernels differ from the model\n");
  return ok;
}

uint64_t column_bytes(const Cell& root) {  // headers (a Directory's too) + payloads, as the bench counts
  uint64_t b = block_count(root) > 1 ? 64 : 0;
  for (uint64_t i = 0; i < block_count(root); ++i) b += 64 + block_at(root, i).payload_bytes;
  return b;
}

// ---- a region of one table ---------------------------------------------------------------------

struct Opened {
  std::unique_ptr<tet_test::AlignedBytes> al;
  std::unique_ptr<TablesRegion> region;
  const ColumnInfo& info(size_t c) const { return region->tables()[0].columns[c]; }
};

Opened open_bytes(const std::vector<uint8_t>& bytes) {
  Opened o;
  o.al = std::make_unique<tet_test::AlignedBytes>(bytes);
  o.region = std::make_unique<TablesRegion>(o.al->p, o.al->len);
  return o;
}

std::vector<uint8_t> write_columns(const std::vector<std::pair<Kind, const Model*>>& cols) {
  RegionWriter w(memory_spool());
  std::vector<ColumnSchema> schema;
  for (size_t c = 0; c < cols.size(); ++c) schema.push_back(ColumnSchema{"c" + std::to_string(c), cols[c].first});
  const uint32_t t = w.add_table("t", "", kNoAxis, schema);
  for (size_t c = 0; c < cols.size(); ++c)
    if (cols[c].second->size()) w.add_column(t, uint32_t(c), *build(cols[c].first, *cols[c].second));
  return tet_test::region_bytes(w);
}

bool uses(const Opened& o, size_t c, Enc e) { return (o.region->encodings_used(0, c) >> unsigned(e)) & 1; }

// ---- run directory -----------------------------------------------------------------------------

TEST_CASE("run directory: ts columns of 1, 2047, 2048, 2049, 4097, 10^5 rows round-trip as one cell") {
  for (size_t n : {size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097), size_t(100000)}) {
    for (size_t run : {size_t(10000), size_t(1), size_t(3000), size_t(2048), size_t(700)}) {
      const Model m = ts_rows(n, run);
      const Opened o = open_bytes(write_columns({{Kind::Timestamp, &m}}));
      CellRef root = o.region->column(0, 0);
      // Measured by hand: runs of ≥ 700 rows, equal steps and lengths pack to widths 0, so the
      // directory is 64 + 64 bytes; leaves cost 64 a block plus a Directory cell past one block.
      // Runs of 1 row are no Constant / Rle blocks at all (Sequence), so never held as runs.
      const bool want = n > 2048 && run > 1;
      CHECK(uses(o, 0, Enc::RunDirectory) == want);
      CHECK((o.info(0).cell_count == 1) == (want || n <= 2048));
      if (want) CHECK(o.info(0).payload_bytes == 24);
      CHECK(root && root->len == n && decodes_everywhere(*root, m));
      CHECK(int_kernels_agree(*root, m));
      verify_column_deep(*root);
      // The synthesized leaves are the blocks the builder seals for the same rows.
      CellRef built = build(Kind::Timestamp, m);
      bool same = block_count(*built) == block_count(*root);
      for (uint64_t b = 0; same && b < block_count(*root); ++b) {
        const Cell &x = block_at(*root, b), &y = block_at(*built, b);
        const uint8_t ownership = attr::kPayloadMmap | attr::kPayloadBorrowed;  // stored leaves are views of the mapping
        same = x.enc == y.enc && (x.attrs & ~ownership) == y.attrs && x.len == y.len && x.payload_bytes == y.payload_bytes &&
               std::memcmp(x.meta, y.meta, sizeof x.meta) == 0 && (x.payload_bytes == 0 || std::memcmp(x.payload, y.payload, x.payload_bytes) == 0);
      }
      CHECK(same);
    }
  }
}

TEST_CASE("run directory: obs ts at 10^6 rows is 88 bytes; expanded leaves are Constant and Rle") {
  const Model m = ts_rows(1000000, 10000);
  const Opened o = open_bytes(write_columns({{Kind::Timestamp, &m}}));
  const ColumnInfo& ci = o.info(0);
  CHECK(ci.cell_count == 1 && ci.payload_bytes == 24);
  const double per_row = double(64 + ci.payload_bytes) / double(ci.rows);
  std::printf("  ts at 10^6 rows: %.6f B/row at rest (leaves: %.6f)\n", per_row, double(column_bytes(*build(Kind::Timestamp, m))) / 1e6);
  CHECK(per_row < 0.0001);
  CellRef root = o.region->column(0, 0);
  uint64_t constants = 0, rles = 0;
  for (uint64_t b = 0; b < block_count(*root); ++b)
    constants += block_at(*root, b).enc_v() == Enc::Constant, rles += block_at(*root, b).enc_v() == Enc::Rle;
  CHECK(constants + rles == block_count(*root) && rles == 99 && block_count(*root) == 489);  // 99 inner hour edges off block edges
  CHECK(decodes_everywhere(*root, m) && int_kernels_agree(*root, m));
}

TEST_CASE("run directory: the writer keeps leaves where runs do not pay or do not fit") {
  // Random values, a single constant block, nulls, floats: no run directory.
  Model random, single, nulls;
  for (size_t i = 0; i < 5000; ++i) random.push(int64_t(splitmix(i)));
  for (size_t i = 0; i < 2048; ++i) single.push(99);
  for (size_t i = 0; i < 6000; ++i) nulls.push(int64_t(i / 3000), i % 500 != 7);
  // Runs of 100 rows: ~21 runs a block, past the 8-a-block bound.
  Model short_runs = ts_rows(8192, 100);
  // Constant blocks, then a block of noise, then constants again: held, released, kept as leaves.
  Model mixed;
  for (size_t i = 0; i < 3 * 2048 + 10; ++i) mixed.push(i >= 4096 && i < 6144 ? int64_t(splitmix(i)) : 5);
  const Model* models[] = {&random, &single, &nulls, &short_runs, &mixed};
  std::vector<Opened> o;
  for (const Model* m : models) {
    o.push_back(open_bytes(write_columns({{Kind::Int, m}})));
    CHECK(!uses(o.back(), 0, Enc::RunDirectory));
    CellRef root = o.back().region->column(0, 0);
    CHECK(decodes_everywhere(*root, *m) && int_kernels_agree(*root, *m));
  }
  CHECK(uses(o[1], 0, Enc::Constant) && o[1].info(0).cell_count == 1);
  CHECK(uses(o[3], 0, Enc::Rle));
  CHECK(uses(o[4], 0, Enc::Constant) && uses(o[4], 0, Enc::Plain) && o[4].info(0).cell_count == 5);

  // By measurement: 16 runs of 256 rows (8 a block). Ascending by one with equal lengths, the
  // runs pack to width 0 (64 + 64 bytes against 3 cells + 2 × 128 bytes of Rle); with random
  // values they take ~64-bit residuals (over 500 bytes) and the leaves (448) win.
  Model steady, jumpy;
  for (size_t i = 0; i < 4096; ++i) steady.push(int64_t(i / 256)), jumpy.push(int64_t(splitmix(i / 256) >> 1));
  const Opened p = open_bytes(write_columns({{Kind::Int, &steady}, {Kind::Int, &jumpy}}));
  CHECK(uses(p, 0, Enc::RunDirectory) && p.info(0).payload_bytes == 24);
  CHECK(!uses(p, 1, Enc::RunDirectory) && uses(p, 1, Enc::Rle) && p.info(1).cell_count == 3);
  CHECK(decodes_everywhere(*p.region->column(0, 0), steady) && decodes_everywhere(*p.region->column(0, 1), jumpy));
}

TEST_CASE("run directory: the layout of a hand-computed directory") {
  // Runs (10, 3 rows) (7, 5) (11, 2): differences -3, +4 → dmin -3, residuals 0, 7 (w 3);
  // lengths of all but the last 3, 5 → lmin 3, residuals 0, 2 (w 2).
  const std::vector<Run> runs = {{10, 3}, {7, 5}, {11, 2}};
  const RunDirectoryImage img = encode_run_directory(runs);
  CHECK(img.rows == 10 && img.meta[0] == 3 && img.meta[1] == (3u | (2u << 8)) && img.meta[2] == 0 && img.meta[3] == 0);
  CHECK(img.payload.size() == 24 + 3 * 8 + 2 * 8);
  uint64_t w[8];
  std::memcpy(w, img.payload.data(), sizeof w);
  CHECK(w[0] == 10 && w[1] == uint64_t(-3) && w[2] == 3);
  CHECK(w[3] == (0u | (7u << 3)) && w[4] == 0 && w[5] == 0);  // value residuals: one group of 3 words
  CHECK(w[6] == (0u | (2u << 2)) && w[7] == 0);               // length residuals: one group of 2 words
  CHECK(run_directory_bytes(runs) == img.payload.size());
  CHECK(run_leaves_bytes(runs) == 64 + 64);  // one Rle leaf of 3 runs: 24 + 8 data bytes, padded to 64
}

// An at-rest root over `payload` (owned by the caller, 8-aligned).
CellRef root_view(Kind kind, uint64_t rows, const uint64_t meta[4], const std::vector<uint64_t>& payload) {
  Cell h;
  h.kind = uint8_t(kind), h.enc = uint8_t(Enc::RunDirectory), h.len = rows, h.payload_bytes = payload.size() * 8;
  std::memcpy(h.meta, meta, sizeof h.meta);
  return view_cell(h, reinterpret_cast<const uint8_t*>(payload.data()), attr::kPayloadBorrowed);
}

TEST_CASE("run directory: crafted and corrupted roots are rejected") {
  const std::vector<Run> runs = {{100, 5000}, {200, 3000}, {300, 4000}, {350, 100}};
  const RunDirectoryImage img = encode_run_directory(runs);
  std::vector<uint64_t> good(img.payload.size() / 8);
  std::memcpy(good.data(), img.payload.data(), img.payload.size());
  {
    CellRef v = root_view(Kind::Timestamp, img.rows, img.meta, good);
    CellRef col = expand_run_directory(*v);
    Model m;
    for (const Run& r : runs)
      for (uint64_t i = 0; i < r.length; ++i) m.push(int64_t(r.value));
    CHECK(decodes_everywhere(*col, m));
    std::vector<int64_t> direct(m.size());  // the encoding's own decode, straight from the runs
    decode_rows(*v, 0, uint32_t(m.size()), direct.data());
    CHECK(direct == m.v);
  }
  auto rejected = [&](uint64_t rows, std::vector<uint64_t> meta, std::vector<uint64_t> payload, Kind kind = Kind::Timestamp,
                      uint8_t attrs = 0) {
    Cell h;
    h.kind = uint8_t(kind), h.enc = uint8_t(Enc::RunDirectory), h.attrs = attrs, h.len = rows, h.payload_bytes = payload.size() * 8;
    std::memcpy(h.meta, meta.data(), sizeof h.meta);
    CellRef v = view_cell(h, reinterpret_cast<const uint8_t*>(payload.data()), attr::kPayloadBorrowed);
    try {
      (void)expand_run_directory(*v);
    } catch (const tet::Error& e) {
      return std::string(e.code()) == "TET_CELLS_INVALID";
    }
    return false;
  };
  const std::vector<uint64_t> meta(img.meta, img.meta + 4);
  auto with = [](std::vector<uint64_t> v, size_t i, uint64_t x) { v[i] = x; return v; };
  CHECK(!rejected(img.rows, meta, good));
  CHECK(rejected(0, meta, good));                                   // no rows
  CHECK(rejected(kMaxRunRows + 1, meta, good));                     // past the row bound
  CHECK(rejected(img.rows, with(meta, 0, 0), good));                // no runs
  CHECK(rejected(img.rows, with(meta, 0, 5), good));                // payload too short for 5 runs
  CHECK(rejected(2, with(meta, 0, 4), good));                       // more runs than rows
  CHECK(rejected(img.rows, with(meta, 1, meta[1] | (1u << 16)), good));  // undefined width bits
  CHECK(rejected(img.rows, with(meta, 1, 65), good));               // width above 64
  CHECK(rejected(img.rows, with(meta, 2, 1), good));                // unused meta slot
  CHECK(rejected(img.rows, meta, good, Kind::Float));               // not an int-stored kind
  CHECK(rejected(img.rows, meta, good, Kind::Timestamp, attr::kSorted));  // attributes on a root
  CHECK(rejected(img.rows, meta, std::vector<uint64_t>(good.begin(), good.end() - 1)));  // truncated
  CHECK(rejected(img.rows, meta, with(good, 2, 0)));                // lmin 0: an empty run
  CHECK(rejected(img.rows, meta, with(good, 2, img.rows)));         // the runs before the last overrun the rows
  CHECK(rejected(12000, meta, good));                               // rows end inside the third run
  CHECK(rejected(img.rows, meta, with(good, 1, 0)));                // dmin 0 with a 0 residual: two equal runs
  // 9 runs a block on average is past the bound (one block, 9 runs of distinct values).
  std::vector<Run> nine;
  for (uint64_t k = 0; k < 8; ++k) nine.push_back({k, 200});
  const RunDirectoryImage eight = encode_run_directory(nine);
  std::vector<uint64_t> ep(eight.payload.size() / 8);
  std::memcpy(ep.data(), eight.payload.data(), eight.payload.size());
  CHECK(!rejected(eight.rows, std::vector<uint64_t>(eight.meta, eight.meta + 4), ep));
  CHECK(rejected(eight.rows, with(std::vector<uint64_t>(eight.meta, eight.meta + 4), 0, 9), ep));
  nine.push_back({9, 200});
  CHECK_THROWS_CODE(encode_run_directory(nine), "TET_INTERNAL");
  // One run: the difference and length fields must be 0.
  const RunDirectoryImage one = encode_run_directory({{42, 9000}});
  std::vector<uint64_t> op(one.payload.size() / 8);
  std::memcpy(op.data(), one.payload.data(), one.payload.size());
  const std::vector<uint64_t> om(one.meta, one.meta + 4);
  CHECK(!rejected(9000, om, op) && rejected(9000, om, with(op, 1, 3)) && rejected(9000, om, with(op, 2, 3)));

  // Every single-bit flip of the payload, and random words: rejected or decoded, never a crash.
  size_t flips = 0, still_valid = 0;
  for (size_t bit = 0; bit < good.size() * 64; ++bit, ++flips) {
    std::vector<uint64_t> bad = good;
    bad[bit / 64] ^= uint64_t(1) << (bit % 64);
    CellRef v = root_view(Kind::Timestamp, img.rows, img.meta, bad);
    try {
      CellRef col = expand_run_directory(*v);
      validate_column(*col);
      std::vector<int64_t> x(col->len);
      decode_column(*col, 0, col->len, x.data());
      ++still_valid;
    } catch (const tet::Error& e) {
      CHECK(std::string(e.code()) == "TET_CELLS_INVALID");
    }
  }
  std::printf("  %zu payload bit flips: %zu still a valid column (a value or unused padding changed), the rest rejected\n", flips,
              still_valid);
}

TEST_CASE("run directory: corrupted payload bytes in a stored region are rejected on load") {
  const Model m = ts_rows(50000, 3000);
  const std::vector<uint8_t> bytes = write_columns({{Kind::Timestamp, &m}});
  const Opened o = open_bytes(bytes);
  CHECK(uses(o, 0, Enc::RunDirectory));
  // The root cell's payload offset (cell record at cells_offset, payload field at +16).
  const uint64_t cells = tet::load_u64le(bytes.data() + 32);
  const uint64_t off = tet::load_u64le(bytes.data() + cells + 16), len = tet::load_u64le(bytes.data() + cells + 24);
  CHECK(len == o.info(0).payload_bytes && len == 24);  // equal steps and lengths: widths 0
  size_t rejected = 0;
  for (uint64_t i = 0; i < len; ++i)
    for (int bit : {0, 3, 7}) {
      std::vector<uint8_t> bad = bytes;
      bad[off + i] ^= uint8_t(1u << bit);  // payloads are outside the structure checksum
      Opened b = open_bytes(bad);
      try {
        CellRef root = b.region->column(0, 0);
        std::vector<int64_t> x(root->len);
        decode_column(*root, 0, root->len, x.data());
      } catch (const tet::Error& e) {
        CHECK(std::string(e.code()) == "TET_CELLS_INVALID");
        ++rejected;
      }
    }
  CHECK(rejected > 0);
}

TEST_CASE("run directory: TableSet streams a ts column into one cell (obs columns in batches)") {
  const uint64_t rows = 60 * 2048 + 123;
  const Model ts = ts_rows(rows, 10000), station = station_rows(rows, 10000), qc = qc_rows(rows);
  char dir[] = "/tmp/tet-runs-XXXXXX";
  CHECK(::mkdtemp(dir) != nullptr);
  std::vector<uint8_t> region;
  {
    tet::TableSet set(dir);
    const uint32_t t = set.add_table("obs", "", kNoAxis,
                                     {ColumnSchema{"ts", Kind::Timestamp}, ColumnSchema{"station_id", Kind::Int}, ColumnSchema{"qc_ok", Kind::Bool}});
    std::vector<uint8_t> qc8(qc.v.begin(), qc.v.end());
    for (uint64_t at = 0, n = 1; at < rows; at += n, n = std::min<uint64_t>(n * 3 + 1, 7000)) {
      n = std::min(n, rows - at);
      std::vector<tet::ColumnBatch> b(3);
      b[0].data = ts.v.data() + at, b[0].elem_bytes = 8;
      b[1].data = station.v.data() + at, b[1].elem_bytes = 8;
      b[2].data = qc8.data() + at, b[2].elem_bytes = 1;
      for (auto& x : b) x.rows = n;
      set.append(t, b);
    }
    set.write([&](const void* p, size_t len) { region.insert(region.end(), (const uint8_t*)p, (const uint8_t*)p + len); });
  }
  ::rmdir(dir);
  const Opened o = open_bytes(region);
  CHECK(uses(o, 0, Enc::RunDirectory) && o.info(0).cell_count == 1);
  CHECK(uses(o, 1, Enc::PiecewiseSequence) && uses(o, 1, Enc::Sequence));
  CHECK(uses(o, 2, Enc::SparseBool));
  CHECK(decodes_everywhere(*o.region->column(0, 0), ts) && int_kernels_agree(*o.region->column(0, 0), ts));
  CHECK(decodes_everywhere(*o.region->column(0, 1), station) && int_kernels_agree(*o.region->column(0, 1), station));
  CHECK(decodes_everywhere(*o.region->column(0, 2), qc) && bool_kernels_agree(*o.region->column(0, 2), qc));
}

// ---- piecewise sequence ------------------------------------------------------------------------

TEST_CASE("piecewise_sequence: station_id blocks are sequences and two-segment blocks (layout by hand)") {
  const Model m = station_rows(30000, 10000);
  CellRef col = build(Kind::Int, m);
  // Blocks 4 (rows 8192..10239) and 9 (18432..20479) hold a wrap; block 14 (28672..) the last.
  for (uint64_t b = 0; b < block_count(*col); ++b) {
    const Cell& c = block_at(*col, b);
    const bool wraps = b == 4 || b == 9;
    CHECK(c.enc_v() == (wraps ? Enc::PiecewiseSequence : Enc::Sequence));
  }
  const Cell& c = block_at(*col, 4);
  CHECK(c.meta[0] == 2 && c.payload_bytes == 2 * 16 + 8 && c.has(attr::kHasZonemap) && c.meta[2] == 0 && c.meta[3] == 9999);
  const uint64_t* w = reinterpret_cast<const uint64_t*>(c.payload);
  const uint16_t* starts = reinterpret_cast<const uint16_t*>(w + 4);
  CHECK(w[0] == 8192 && w[1] == 0 && w[2] == 1 && w[3] == 1 && starts[0] == 0 && starts[1] == 10000 - 8192 && starts[2] == 0 && starts[3] == 0);
  CHECK(!c.has(attr::kSorted));
  CHECK(decodes_everywhere(*col, m) && int_kernels_agree(*col, m));
  // Bytes per row at 10^6 rows (For took 0.39: 14-bit residuals in every wrapping block).
  const Model big = station_rows(1000000, 10000);
  const double per_row = double(column_bytes(*build(Kind::Int, big))) / 1e6;
  std::printf("  station_id at 10^6 rows: %.4f B/row\n", per_row);
  CHECK(per_row < 0.04);
}

TEST_CASE("piecewise_sequence: columns of 0, 1, 2047, 2048, 2049, 4097 rows with nulls, wraps and extremes") {
  for (size_t n : {size_t(0), size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097)}) {
    for (int shape = 0; shape < 4; ++shape) {
      Model m;
      for (size_t i = 0; i < n; ++i) {
        const bool present = shape < 2 || below(10) != 0;
        int64_t x;
        if (shape % 2 == 0) x = int64_t(i % 700) * 3 - 5;                            // short ramps, restarting
        else x = int64_t(uint64_t(INT64_MAX) - 600 + uint64_t(i % 900) * 7);       // ramps that wrap past INT64_MAX
        m.push(x, present);
      }
      if (n == 0) {
        CHECK(!build(Kind::Int, m));
        continue;
      }
      CellRef col = build(Kind::Int, m);
      bool piecewise = false;
      for (uint64_t b = 0; b < block_count(*col); ++b) piecewise = piecewise || block_at(*col, b).enc_v() == Enc::PiecewiseSequence;
      CHECK(piecewise == (n > (shape % 2 ? 900u : 700u)));  // a block holds a restart once the column is past one ramp
      CHECK(decodes_everywhere(*col, m));
      CHECK(int_kernels_agree(*col, m));
      verify_column_deep(*col);
    }
  }
}

TEST_CASE("piecewise_sequence: not chosen where it does not fit or pay") {
  auto chosen = [](const std::vector<int64_t>& v) {
    IntBuilder b;
    b.push_many(v.data(), nullptr, v.size());
    return b.finish()->enc_v();
  };
  std::vector<int64_t> v(2048);
  for (auto& x : v) x = int64_t(rng()());
  CHECK(chosen(v) == Enc::Plain);
  // Frame-of-reference packing wins on these (For, or ForRadix where the range is far from a
  // power of two: 1000 values need 10 bits in For, 9.97 in mixed radix).
  const auto framed = [](Enc e) { return e == Enc::For || e == Enc::ForRadix; };
  for (auto& x : v) x = 5000 + int64_t(below(1000));
  CHECK(framed(chosen(v)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i % 2);
  CHECK(chosen(v) == Enc::For);  // 2048 segments: past the 64 a block
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i % 20);
  CHECK(framed(chosen(v)));  // 103 segments: past the bound, 5-bit For (1280 bytes) or radix-20
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i % 50) * 1000003;
  CHECK(chosen(v) == Enc::PiecewiseSequence);  // 41 segments (744 bytes) against 26-bit For (6656)
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i);
  CHECK(chosen(v) == Enc::Sequence);
}

TEST_CASE("piecewise_sequence: crafted blocks are rejected") {
  const Model m = station_rows(2048, 1000);
  std::vector<uint64_t> lanes(m.v.begin(), m.v.end());
  const Staged s{Kind::Int, 2048, lanes.data(), nullptr, 2048};
  CHECK(choose_encoding(s) == Enc::PiecewiseSequence);
  CellRef good = encode_block(Enc::PiecewiseSequence, s);
  CHECK(good->meta[0] == 3);
  auto rejected = [&](auto mutate) {
    Cell h;
    h.kind = good->kind, h.enc = good->enc, h.attrs = good->attrs, h.len = good->len, h.payload_bytes = good->payload_bytes;
    std::memcpy(h.meta, good->meta, sizeof h.meta);
    std::vector<uint64_t> p(good->payload_bytes / 8 + 1);
    std::memcpy(p.data(), good->payload, good->payload_bytes);
    mutate(h, p);
    CellRef v = view_cell(h, reinterpret_cast<const uint8_t*>(p.data()), attr::kPayloadBorrowed);
    try {
      validate_leaf(*v, {});
    } catch (const tet::Error& e) {
      return std::string(e.code()) == "TET_CELLS_INVALID";
    }
    return false;
  };
  auto starts = [](std::vector<uint64_t>& p, uint64_t k) { return reinterpret_cast<uint16_t*>(p.data() + 2 * k); };
  CHECK(!rejected([](Cell&, std::vector<uint64_t>&) {}));
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.meta[0] = 0; }));
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.meta[0] = kMaxSegments + 1; }));
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.meta[0] = 2; }));  // payload of 3 segments
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.meta[1] = 1; }));
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.payload_bytes -= 8; }));
  CHECK(rejected([&](Cell&, std::vector<uint64_t>& p) { starts(p, 3)[0] = 1; }));      // first segment not at row 0
  CHECK(rejected([&](Cell&, std::vector<uint64_t>& p) { starts(p, 3)[2] = starts(p, 3)[1]; }));  // starts not increasing
  CHECK(rejected([&](Cell&, std::vector<uint64_t>& p) { starts(p, 3)[2] = 2048; }));   // a start past the block
  CHECK(rejected([&](Cell&, std::vector<uint64_t>& p) { starts(p, 3)[3] = 5; }));      // padding not zero
  CHECK(rejected([](Cell& h, std::vector<uint64_t>&) { h.kind = uint8_t(Kind::Float); }));
}

// ---- sparse bool -------------------------------------------------------------------------------

TEST_CASE("sparse_bool: qc_ok blocks hold the exception rows; layout by hand") {
  // Exceptions (false rows) at 3, 100 and 2047 of a true block: 3 lanes of 11 bits in 8 bytes.
  std::vector<uint8_t> v(2048, 1);
  v[3] = v[100] = v[2047] = 0;
  BoolBuilder b;
  b.push_many(v.data(), nullptr, v.size());
  CellRef c = b.finish();
  CHECK(c->enc_v() == Enc::SparseBool && c->meta[0] == 1 && c->meta[1] == 3 && c->payload_bytes == 8 && !c->has(attr::kSorted));
  uint64_t word;
  std::memcpy(&word, c->payload, 8);
  CHECK(word == (3ull | (100ull << 11) | (2047ull << 22)));
  // obs qc_ok at 10^6 rows: about 20 exceptions a block (DuckDB 0.079 B/row, goal 0.059).
  const Model qc = qc_rows(1000000);
  CellRef col = build(Kind::Bool, qc);
  uint64_t sparse = 0;
  for (uint64_t i = 0; i < block_count(*col); ++i) sparse += block_at(*col, i).enc_v() == Enc::SparseBool;
  CHECK(sparse == block_count(*col));
  const double per_row = double(column_bytes(*col)) / 1e6;
  std::printf("  qc_ok at 10^6 rows: %.4f B/row (bool_bits: %.4f)\n", per_row, (64.0 * 489 + 64 + 256.0 * 489) / 1e6);
  CHECK(per_row < 0.055);
  CHECK(decodes_everywhere(*col, qc) && bool_kernels_agree(*col, qc));
}

TEST_CASE("sparse_bool: columns of 1, 2047, 2048, 2049, 4097 rows, nulls, majority false") {
  for (size_t n : {size_t(1), size_t(2047), size_t(2048), size_t(2049), size_t(4097)}) {
    for (int shape = 0; shape < 4; ++shape) {
      const Model m = qc_rows(n, shape & 1 ? 0.2 : 0.0, shape & 2);
      CellRef col = build(Kind::Bool, m);
      CHECK(decodes_everywhere(*col, m) && bool_kernels_agree(*col, m));
      verify_column_deep(*col);
      if (n >= 2047) {
        const Cell& first = block_at(*col, 0);
        CHECK(first.enc_v() == Enc::SparseBool && first.meta[0] == ((shape & 2) ? 0u : 1u));
      }
    }
  }
  // Not on random bits (bool_bits) nor on two long runs (rle).
  std::vector<uint8_t> v(2048);
  for (auto& x : v) x = rng()() & 1;
  BoolBuilder b;
  b.push_many(v.data(), nullptr, v.size());
  CHECK(b.finish()->enc_v() == Enc::BoolBits);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i >= 1000;
  b.push_many(v.data(), nullptr, v.size());
  CHECK(b.finish()->enc_v() == Enc::Rle);
}

TEST_CASE("sparse_bool: crafted blocks are rejected") {
  std::vector<uint8_t> v(2048, 1), ok(2048, 1);
  v[10] = v[20] = v[30] = 0;
  ok[500] = 0;
  BoolBuilder b;
  b.push_many(v.data(), ok.data(), v.size());
  CellRef good = b.finish();
  CHECK(good->enc_v() == Enc::SparseBool && good->has(attr::kHasNulls) && good->meta[1] == 3 && good->payload_bytes == 8 + 256);
  auto rejected = [&](auto mutate) {
    Cell h;
    h.kind = good->kind, h.enc = good->enc, h.attrs = good->attrs, h.len = good->len, h.payload_bytes = good->payload_bytes;
    std::memcpy(h.meta, good->meta, sizeof h.meta);
    std::vector<uint8_t> p(good->payload, good->payload + good->payload_bytes);
    mutate(h, p);
    std::vector<uint64_t> al((p.size() + 7) / 8 + 1);
    std::memcpy(al.data(), p.data(), p.size());
    CellRef c = view_cell(h, reinterpret_cast<const uint8_t*>(al.data()), attr::kPayloadBorrowed);
    try {
      validate_leaf(*c, {});
    } catch (const tet::Error& e) {
      return std::string(e.code()) == "TET_CELLS_INVALID";
    }
    return false;
  };
  auto set_lane = [](std::vector<uint8_t>& p, unsigned k, unsigned row) {
    for (unsigned j = 0; j < 11; ++j) {
      const unsigned bit = 11 * k + j;
      p[bit / 8] = uint8_t((p[bit / 8] & ~(1u << (bit % 8))) | (((row >> j) & 1) << (bit % 8)));
    }
  };
  CHECK(!rejected([](Cell&, std::vector<uint8_t>&) {}));
  CHECK(rejected([](Cell& h, std::vector<uint8_t>&) { h.meta[0] = 2; }));                         // majority not 0 / 1
  CHECK(rejected([](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 2048; }));                      // more than the present rows
  CHECK(rejected([](Cell& h, std::vector<uint8_t>&) { h.meta[1] = 6; }));                         // payload of 3 lanes
  CHECK(rejected([](Cell& h, std::vector<uint8_t>&) { h.meta[2] = 1; }));                         // zone map slot
  CHECK(rejected([&](Cell&, std::vector<uint8_t>& p) { set_lane(p, 1, 10); }));                   // rows not increasing
  CHECK(rejected([&](Cell&, std::vector<uint8_t>& p) { set_lane(p, 2, 500); }));                  // an exception on a null row
  CHECK(rejected([](Cell&, std::vector<uint8_t>& p) { p[7] = 0x80; }));                           // padding bit set
  CHECK(rejected([](Cell& h, std::vector<uint8_t>&) { h.kind = uint8_t(Kind::Int); }));           // int kind
}

}  // namespace

TEST_MAIN()
