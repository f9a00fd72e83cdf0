// The tables region: columns written by RegionWriter read back equal to the values pushed (a
// plain model kept by the test), its structure checks (every byte of the structure part is
// covered by the checksum or a field check), crafted bad regions rejected with
// TET_CELLS_INVALID, and a full .tet file with tables written by tet::Writer read back through
// File::tables().
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/column.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "check.h"
#include "region_bytes.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/writer.h"
#include "util/checked.h"
#include "util/io.h"
#include "util/xxh64.h"
#include "write/table_set.h"

using namespace tet;
using namespace tet::cells;

namespace {

struct IntModel { std::vector<int64_t> v; std::vector<uint8_t> ok; };
struct StrModel { std::vector<std::string> v; std::vector<uint8_t> ok; };

IntModel random_ints(uint64_t n, uint64_t seed, bool nulls) {
  std::mt19937_64 rng(seed);
  IntModel m;
  int64_t drift = static_cast<int64_t>(rng() % 1000);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t shape = (i / 2048 + seed) % 4;  // blocks of different shapes: several encodings
    int64_t x = shape == 0 ? static_cast<int64_t>(i) : shape == 1 ? 42 : shape == 2 ? (drift += static_cast<int64_t>(rng() % 7)) : static_cast<int64_t>(rng());
    const bool ok = !nulls || rng() % 17 != 0;
    m.v.push_back(ok ? x : 0);
    m.ok.push_back(ok);
  }
  return m;
}

StrModel random_strs(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char* const kCountries[] = {"DE", "FR", "IT", "ES", "PL", "NL"};
  StrModel m;
  for (uint64_t i = 0; i < n; ++i) {
    const bool ok = rng() % 23 != 0;
    std::string s = (i / 2048) % 2 ? kCountries[rng() % 6] : "event-" + std::to_string(rng() % 100000) + "-with-a-long-tail";
    m.v.push_back(ok ? s : "");
    m.ok.push_back(ok);
  }
  return m;
}

CellRef build_ints(const IntModel& m, Kind kind = Kind::Int) {
  IntBuilder b(kind);
  b.push_many(m.v.data(), m.ok.data(), m.v.size());
  return b.finish();
}

CellRef build_strs(const StrModel& m) {
  StrBuilder b;
  std::vector<std::string_view> views(m.v.begin(), m.v.end());
  b.push_many(views.data(), views.size(), m.ok.data());
  return b.finish();
}

std::vector<uint8_t> write_region(RegionWriter& w) { return tet_test::region_bytes(w); }

using Aligned = tet_test::AlignedBytes;

void check_ints(const TablesRegion& r, size_t t, size_t c, const IntModel& m) {
  CellRef root = r.column(t, c);
  CHECK(root && root->len == m.v.size());
  std::vector<int64_t> got(m.v.size());
  std::vector<uint8_t> ok(m.v.size());
  decode_column(*root, 0, m.v.size(), got.data(), ok.data(), r.context(t, c));
  CHECK(got == m.v);
  CHECK(ok == m.ok);
  // A range across a block boundary.
  if (m.v.size() > 2100) {
    std::vector<int64_t> part(100);
    decode_column(*root, 2000, 100, part.data(), nullptr, r.context(t, c));
    CHECK(std::equal(part.begin(), part.end(), m.v.begin() + 2000));
  }
}

void check_strs(const TablesRegion& r, size_t t, size_t c, const StrModel& m) {
  CellRef root = r.column(t, c);
  CHECK(root && root->len == m.v.size());
  StrBuffer got;
  std::vector<uint8_t> ok(m.v.size());
  decode_column(*root, 0, m.v.size(), &got, ok.data(), r.context(t, c));
  bool same = got.size() == m.v.size();
  for (size_t i = 0; same && i < m.v.size(); ++i) same = got.at(i) == m.v[i];
  CHECK(same);
  CHECK(ok == m.ok);
}

TEST_CASE("region: two tables round-trip, 0-row table, metablocks, names") {
  RegionWriter w(memory_spool());
  const IntModel a = random_ints(5000, 1, true), b = random_ints(5000, 2, false);
  const StrModel s = random_strs(5000, 3);
  ColumnSchema ca{"a", Kind::Int}, cb{"ts", Kind::Timestamp, TimeUnit::Ns, false, false}, cs{"name", Kind::Str};
  const uint32_t t0 = w.add_table("obs", "", kNoAxis, {ca, cb, cs});
  w.add_column(t0, 0, *build_ints(a));
  w.add_column(t0, 1, *build_ints(b, Kind::Timestamp));
  w.add_column(t0, 2, *build_strs(s));
  w.add_metablock(t0, 0, MetablockKind::DistinctSketch, {1, 2, 3});
  w.add_metablock(t0, 2, static_cast<MetablockKind>(77), std::vector<uint8_t>(100, 9));  // unknown: skipped by readers
  const IntModel small = random_ints(7, 4, true);
  const uint32_t t1 = w.add_table("station \xc3\xa9", "temperature", 1, {ColumnSchema{"elev", Kind::Int}});
  w.add_column(t1, 0, *build_ints(small));
  w.add_table("empty", "", kNoAxis, {ColumnSchema{"x", Kind::Float}});
  std::vector<uint8_t> bytes = write_region(w);
  CHECK(bytes.size() % 64 == 0);
  Aligned al(bytes);
  TablesRegion r(al.p, al.len);
  CHECK(r.tables().size() == 3);
  CHECK(r.find_table("obs") == 0 && r.find_table("station \xc3\xa9") == 1 && r.find_table("nope") == -1);
  const TableInfo& obs = r.tables()[0];
  CHECK(obs.rows == 5000 && obs.axis == kNoAxis && obs.dataset.empty() && obs.columns.size() == 3);
  CHECK(obs.columns[1].schema.kind == Kind::Timestamp && obs.columns[1].schema.unit == TimeUnit::Ns &&
        !obs.columns[1].schema.utc && !obs.columns[1].schema.nullable);
  uint64_t a_nulls = 0;
  for (uint8_t o : a.ok) a_nulls += !o;
  CHECK(obs.columns[0].null_count == a_nulls);
  check_ints(r, 0, 0, a);
  check_ints(r, 0, 1, b);
  check_strs(r, 0, 2, s);
  CHECK(r.metablocks(0, 0).size() == 1 && r.metablocks(0, 0)[0].len == 3 && r.metablocks(0, 0)[0].body[2] == 3);
  CHECK(r.metablocks(0, 2).size() == 1 && r.metablocks(0, 2)[0].kind == 77);
  CHECK(r.metablocks(0, 1).empty());
  const TableInfo& st = r.tables()[1];
  CHECK(st.dataset == "temperature" && st.axis == 1 && st.rows == 7);
  check_ints(r, 1, 0, small);
  CHECK(r.tables()[2].rows == 0 && !r.column(2, 0));
  // More than one encoding was used in the mixed-shape column.
  const uint32_t used = r.encodings_used(0, 0);
  CHECK(__builtin_popcount(used) >= 3);
}

TEST_CASE("region: every structure byte is checked (single-byte flips fail at open)") {
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("t", "", kNoAxis, {ColumnSchema{"a", Kind::Int}});
  w.add_column(t, 0, *build_ints(random_ints(3000, 5, true)));
  std::vector<uint8_t> bytes = write_region(w);
  const uint64_t cells_end = load_u64le(bytes.data() + 32) + load_u64le(bytes.data() + 24) * 64;
  int rejected = 0, total = 0;
  for (uint64_t i = 0; i < cells_end; ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0x5a;
    Aligned al(bad);
    ++total;
    try {
      TablesRegion r(al.p, al.len);
      (void)r.column(0, 0);
    } catch (const Error& e) {
      rejected += e.code() == std::string("TET_CELLS_INVALID");
    }
  }
  CHECK(rejected == total);
}

TEST_CASE("region: crafted regions with a valid checksum are rejected field by field") {
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("t", "", kNoAxis, {ColumnSchema{"a", Kind::Int}, ColumnSchema{"b", Kind::Int}});
  const IntModel m = random_ints(4100, 6, true);
  w.add_column(t, 0, *build_ints(m));
  w.add_column(t, 1, *build_ints(m));
  const std::vector<uint8_t> good = write_region(w);
  const uint64_t cells_off = load_u64le(good.data() + 32), cells = load_u64le(good.data() + 24);
  auto reseal = [&](std::vector<uint8_t>& b) {
    Xxh64Stream h;
    h.update(b.data(), 56);
    h.update(b.data() + 64, cells_off + cells * 64 - 64);
    store_u64le(b.data() + 56, h.digest());
  };
  auto rejects = [&](const char* what, const std::function<void(std::vector<uint8_t>&)>& edit) {
    std::vector<uint8_t> b = good;
    edit(b);
    reseal(b);
    Aligned al(b);
    bool threw = false;
    try {
      TablesRegion r(al.p, al.len);
      for (size_t c = 0; c < 2; ++c) {
        CellRef root = r.column(0, c);
        std::vector<int64_t> out(root->len);
        decode_column(*root, 0, root->len, out.data(), nullptr, r.context(0, c));
      }
    } catch (const Error& e) {
      threw = e.code() == std::string("TET_CELLS_INVALID");
    }
    if (!threw) std::printf("  not rejected: %s\n", what);
    CHECK(threw);
  };
  const uint64_t col0 = 64 + 64;           // first column record
  const uint64_t dir0 = cells_off;         // column 0's directory cell
  const uint64_t leaf0 = cells_off + 64;   // its first leaf
  rejects("version", [](auto& b) { store_u32le(b.data() + 4, 2); });
  rejects("table count", [](auto& b) { store_u32le(b.data() + 8, 2); });
  rejects("column count", [](auto& b) { store_u32le(b.data() + 12, 3); });
  rejects("cell count", [&](auto& b) { store_u64le(b.data() + 24, cells + 1); });
  rejects("column rows", [&](auto& b) { store_u64le(b.data() + col0 + 32, 4099); });
  rejects("null count", [&](auto& b) { store_u64le(b.data() + col0 + 40, 0); });
  rejects("column kind", [&](auto& b) { b[col0 + 12] = 4; });
  rejects("unit on an int", [&](auto& b) { b[col0 + 13] = 1; });
  rejects("first cell", [&](auto& b) { store_u64le(b.data() + col0 + 16, 1); });
  rejects("directory child count", [&](auto& b) { store_u64le(b.data() + dir0 + 32, 2); });
  rejects("directory payload", [&](auto& b) { store_u64le(b.data() + dir0 + 16, cells_off + 128); });
  rejects("leaf length", [&](auto& b) { store_u64le(b.data() + leaf0 + 8, 2047); });
  rejects("leaf encoding", [&](auto& b) { b[leaf0 + 1] = 13; });
  rejects("leaf kind", [&](auto& b) { b[leaf0] = 2; });
  rejects("leaf rc", [&](auto& b) { b[leaf0 + 4] = 1; });
  rejects("leaf attrs mmap", [&](auto& b) { b[leaf0 + 2] |= attr::kPayloadMmap; });
  rejects("payload past the end", [&](auto& b) { store_u64le(b.data() + leaf0 + 16, b.size()); });
  rejects("payload misaligned", [&](auto& b) {
    const uint64_t off = load_u64le(b.data() + leaf0 + 16);
    if (off) store_u64le(b.data() + leaf0 + 16, off + 8);
    else b[leaf0 + 1] = 13;
  });
  rejects("payload inside the structure", [&](auto& b) { store_u64le(b.data() + leaf0 + 16, 64); });
  rejects("name past the heap", [&](auto& b) { store_u32le(b.data() + 64 + 8, 1000); });
  rejects("duplicate column names", [&](auto& b) {
    // Point column 1's name at column 0's.
    store_u64le(b.data() + col0 + 64, load_u64le(b.data() + col0));
  });
  rejects("metablock count", [](auto& b) { store_u32le(b.data() + 16, 1); });
}

TEST_CASE("region: truncations and garbage never crash") {
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("t", "", kNoAxis, {ColumnSchema{"a", Kind::Int}, ColumnSchema{"s", Kind::Str}});
  w.add_column(t, 0, *build_ints(random_ints(2500, 8, true)));
  w.add_column(t, 1, *build_strs(random_strs(2500, 9)));
  const std::vector<uint8_t> good = write_region(w);
  for (uint64_t n = 0; n < good.size(); n += 7) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(n));
    Aligned al(cut);
    try {
      TablesRegion r(al.p, al.len);
      (void)r.column(0, 0);
      (void)r.column(0, 1);
    } catch (const Error&) {
    }
  }
  CHECK(true);
}

TEST_CASE("writer: a .tet file with tables reads back; tensors unchanged; bindings checked") {
  char dir[] = "/tmp/tet-cells-XXXXXX";
  CHECK(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/t.tet";
  const IntModel m = random_ints(300, 10, true);
  {
    auto w = Writer::create(path);
    DatasetSpec ds;
    ds.name = "temperature";
    ds.dtype = DType::F32;
    ds.shape = {4, 300};
    ds.chunk_shape = {4, 100};
    const uint32_t id = w->add_dataset(ds);
    std::vector<float> tile(400);
    for (uint64_t k = 0; k < 3; ++k) {
      for (size_t i = 0; i < tile.size(); ++i) tile[i] = float(k * 1000 + i);
      w->write_chunk(id, {0, k}, reinterpret_cast<const uint8_t*>(tile.data()), tile.size() * 4);
    }
    const uint32_t t = w->add_table("station", "temperature", 1, {ColumnSchema{"elev", Kind::Int}, ColumnSchema{"country", Kind::Str}});
    std::vector<std::string> names;
    std::string bytes;
    std::vector<uint32_t> offs{0};
    for (uint64_t i = 0; i < 300; ++i) {
      bytes += i % 3 ? "DE" : "FR";
      offs.push_back(static_cast<uint32_t>(bytes.size()));
    }
    // Two appends (150 + 150 rows).
    for (uint64_t half = 0; half < 2; ++half) {
      ColumnBatch e, c;
      e.data = m.v.data() + half * 150, e.valid = m.ok.data() + half * 150, e.rows = 150, e.elem_bytes = 8;
      std::vector<uint32_t> o(offs.begin() + static_cast<long>(half * 150), offs.begin() + static_cast<long>(half * 150 + 151));
      const uint32_t base = o[0];
      for (auto& x : o) x -= base;
      c.data = bytes.data() + base, c.offsets = o.data(), c.bytes_len = o.back(), c.rows = 150, c.elem_bytes = 1;
      w->append_table(t, {e, c});
    }
    w->commit();
  }
  auto f = File::open(path);
  CHECK(f->catalog().datasets.size() == 1 && (f->catalog().flags & 1));
  tet::ScratchBytes scratch;
  TileView v = f->tile(0, 2, scratch);
  CHECK(v.bytes == 1600 && reinterpret_cast<const float*>(v.data)[5] == 2005.0f);
  const TablesRegion* r = f->tables();
  CHECK(r && r->tables().size() == 1 && r->tables()[0].dataset == "temperature" && r->tables()[0].axis == 1);
  check_ints(*r, 0, 0, m);
  StrBuffer got;
  CellRef root = r->column(0, 1);
  decode_column(*root, 0, 300, &got, nullptr, r->context(0, 1));
  CHECK(got.at(0) == "FR" && got.at(1) == "DE" && got.at(299) == "DE");

  // A table whose rows disagree with its axis fails at commit, leaving nothing behind.
  const std::string bad = std::string(dir) + "/bad.tet";
  {
    auto w = Writer::create(bad);
    DatasetSpec ds;
    ds.name = "x";
    ds.shape = {10};
    ds.chunk_shape = {10};
    const uint32_t id = w->add_dataset(ds);
    std::vector<float> tile(10);
    w->write_chunk(id, {0}, reinterpret_cast<const uint8_t*>(tile.data()), 40);
    const uint32_t t = w->add_table("x_axis", "x", 0, {ColumnSchema{"v", Kind::Int}});
    std::vector<int64_t> nine(9, 1);
    ColumnBatch b;
    b.data = nine.data(), b.rows = 9, b.elem_bytes = 8;
    w->append_table(t, {b});
    CHECK_THROWS_CODE(w->commit(), "TET_WRITE_ARGUMENT");
  }
  CHECK(::access(bad.c_str(), F_OK) != 0);
  std::remove(path.c_str());
  ::rmdir(dir);
}

}  // namespace

TEST_MAIN()
