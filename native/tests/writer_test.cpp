// tet::Writer: byte-exact reproduction of files written by the reference writer and by the
// independent conformance generator, round trips for every dtype/codec with clipped edges,
// footer spill, argument errors, abort / failure cleanup.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <thread>

#include "check.h"
#include "fixture_util.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/writer.h"
#include "util/json.h"

using namespace tet_test;

namespace {

// Bytes of the clipped tile at `coords` cut out of a global row-major array (test-side model).
std::vector<uint8_t> cut_tile(const std::vector<uint8_t>& global, size_t es, const std::vector<uint64_t>& shape,
                              const std::vector<uint64_t>& chunk, const std::vector<uint64_t>& coords) {
  size_t nd = shape.size();
  std::vector<uint64_t> ext(nd);
  uint64_t n = 1;
  for (size_t a = 0; a < nd; ++a) {
    ext[a] = std::min(chunk[a], shape[a] - coords[a] * chunk[a]);
    n *= ext[a];
  }
  std::vector<uint8_t> out(n * es);
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t rest = k, g = 0, stride = 1;
    for (size_t a = nd; a-- > 0;) {
      uint64_t local = rest % ext[a];
      rest /= ext[a];
      g += (coords[a] * chunk[a] + local) * stride;
      stride *= shape[a];
    }
    std::memcpy(&out[k * es], &global[g * es], es);
  }
  return out;
}

std::vector<std::vector<uint64_t>> grid_order(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& chunk) {
  std::vector<uint64_t> grid(shape.size());
  uint64_t total = 1;
  for (size_t a = 0; a < shape.size(); ++a) total *= grid[a] = (shape[a] + chunk[a] - 1) / chunk[a];
  std::vector<std::vector<uint64_t>> out;
  for (uint64_t lin = 0; lin < total; ++lin) {
    std::vector<uint64_t> c(shape.size());
    uint64_t rest = lin;
    for (size_t a = shape.size(); a-- > 0;) { c[a] = rest % grid[a]; rest /= grid[a]; }
    out.push_back(c);
  }
  return out;
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

void write_dataset(tet::Writer& w, uint32_t id, const std::vector<uint8_t>& global, size_t es,
                   const std::vector<uint64_t>& shape, const std::vector<uint64_t>& chunk,
                   std::vector<std::vector<uint64_t>> order) {
  for (const auto& c : order) {
    std::vector<uint8_t> t = cut_tile(global, es, shape, chunk, c);
    w.write_chunk(id, c, t.data(), t.size());
  }
}

int count_entries(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) n += std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..");
    closedir(d);
  }
  return n;
}

void remove_dir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) ::unlink((dir + "/" + e->d_name).c_str());
    closedir(d);
  }
  ::rmdir(dir.c_str());
}

bool python_oracle_available() {
  static int avail = -1;
  if (avail < 0)
    avail = std::system(("python3 -c 'import sys; sys.path.insert(0, \"" + conformance_dir() +
                         "/runner\"); import tet' >/dev/null 2>&1").c_str()) == 0;
  return avail == 1;
}

// The independent Python reader (conformance/runner/tet.py) parses and decodes the file strictly.
bool python_oracle_accepts(const std::string& path) {
  std::string cmd = "python3 -c 'import sys; sys.path.insert(0, \"" + conformance_dir() +
                    "/runner\"); import tet; tet.read(sys.argv[1])' '" + path + "' >/dev/null";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace

TEST_CASE("reference files are reproduced byte for byte") {
  std::string dir = temp_dir();
  struct Ref { const char* file; const char* name; tet::DType dt; std::vector<uint64_t> shape, chunk; };
  std::vector<Ref> refs = {{"sample.tet", "temperature", tet::DType::F32, {2, 3}, {2, 2}},
                           {"large.tet", "a", tet::DType::F32, {34, 64}, {4, 4}},
                           {"multichunk_u8.tet", "a", tet::DType::U8, {2, 3}, {2, 2}},
                           {"multichunk_u32.tet", "a", tet::DType::U32, {2, 3}, {2, 2}},
                           {"multichunk_f16.tet", "a", tet::DType::F16, {2, 3}, {2, 2}}};
  for (const Ref& r : refs) {
    uint64_t n = 1;
    for (uint64_t s : r.shape) n *= s;
    size_t es = tet::dtype_size(r.dt);
    std::vector<uint8_t> global(n * es);
    for (uint64_t i = 0; i < n; ++i) {
      // README values: 1..6 for the small files, the row-major index for large.tet.
      double v = std::string(r.file) == "large.tet" ? double(i) : double(i + 1);
      uint8_t* p = &global[i * es];
      if (r.dt == tet::DType::F32) { float f = float(v); std::memcpy(p, &f, 4); }
      else if (r.dt == tet::DType::U8) { p[0] = uint8_t(v); }
      else if (r.dt == tet::DType::U32) { uint32_t u = uint32_t(v); std::memcpy(p, &u, 4); }
      else { uint16_t h = tet::f32_to_f16(float(v)); std::memcpy(p, &h, 2); }
    }
    std::string out = dir + "/" + r.file;
    auto w = tet::Writer::create(out);
    tet::DatasetSpec spec;
    spec.name = r.name;
    spec.dtype = r.dt;
    spec.shape = r.shape;
    spec.chunk_shape = r.chunk;
    uint32_t id = w->add_dataset(spec);
    write_dataset(*w, id, global, es, r.shape, r.chunk, grid_order(r.shape, r.chunk));
    w->commit();
    bool same = read_bytes(out) == read_bytes(reference_dir() + "/" + r.file);
    if (!same) std::printf("  %s differs\n", r.file);
    CHECK(same);
  }
  remove_dir(dir);
}

TEST_CASE("raw conformance fixtures (incl. footers and spill) are reproduced byte for byte") {
  // Rewrite what each file holds, in grid order, and compare with the generator's bytes.
  tet::JsonValue m = load_manifest();
  std::string dir = temp_dir();
  int compared = 0;
  for (const auto& entry : m.find("files")->items) {
    if (entry.find("kind")->text != "valid") continue;
    std::string path = conformance_dir() + "/" + entry.find("file")->text;
    auto f = tet::File::open(path);
    const tet::Catalog& cat = f->catalog();
    bool eligible = !cat.datasets.empty();
    uint64_t expect_off = cat.chunk_index_offset + cat.chunk_index_length;
    for (const auto& d : cat.datasets) {
      eligible = eligible && d.zstd_chunks == 0;
      for (uint64_t k = 0; eligible && k < d.chunk_count; ++k) {
        const auto& e = cat.entries[d.chunk_to_entry[k]];
        eligible = e.payload_offset == expect_off;
        expect_off += e.stored_byte_len;
      }
    }
    if (!eligible) continue;  // zstd bytes depend on the libzstd build; shuffled layouts differ by design
    std::string out = dir + "/out.tet";
    auto w = tet::Writer::create(out);
    w->set_execution(cat.execution);
    for (uint32_t id = 0; id < cat.datasets.size(); ++id) {
      const auto& d = cat.datasets[id];
      tet::DatasetSpec spec;
      spec.name = d.name;
      spec.dtype = d.dtype;
      spec.shape.assign(d.shape.begin(), d.shape.begin() + d.ndim);
      spec.chunk_shape.assign(d.chunk_shape.begin(), d.chunk_shape.begin() + d.ndim);
      CHECK(w->add_dataset(spec) == id);
    }
    tet::ScratchBytes scratch;
    for (uint32_t id = 0; id < cat.datasets.size(); ++id) {
      const auto& d = cat.datasets[id];
      for (uint64_t k = 0; k < d.chunk_count; ++k) {
        auto c = tet::chunk_coords_of(d, k);
        tet::TileView t = f->tile(id, k, scratch);
        w->write_chunk(id, std::vector<uint64_t>(c.begin(), c.begin() + d.ndim), t.data, t.bytes);
      }
    }
    if (cat.footer.present) {
      tet::JsonValue root;
      std::string err;
      CHECK(tet::json_parse(cat.footer.history_json.data(), cat.footer.history_json.size(), &root, &err));
      w->set_footer(tet::json_serialize(*root.find("history")), cat.footer.metadata_json);
    }
    w->commit();
    bool same = read_bytes(out) == read_bytes(path);
    if (!same) std::printf("  %s differs\n", path.c_str());
    CHECK(same);
    ++compared;
  }
  CHECK(compared >= 20);
  std::printf("  compared %d files\n", compared);
  remove_dir(dir);
}

TEST_CASE("round trip: all 10 dtypes, clipped edges, raw/zstd/auto, any arrival order") {
  std::string dir = temp_dir();
  std::mt19937_64 rng(99);
  const tet::DType dtypes[] = {tet::DType::F32, tet::DType::F64, tet::DType::I32, tet::DType::I64, tet::DType::U8,
                               tet::DType::U16, tet::DType::I16, tet::DType::U32, tet::DType::F16, tet::DType::U64};
  for (tet::CodecChoice codec : {tet::CodecChoice::Raw, tet::CodecChoice::Zstd, tet::CodecChoice::Auto}) {
    std::string out = dir + "/rt.tet";
    auto w = tet::Writer::create(out);
    struct Src { std::vector<uint64_t> shape, chunk; std::vector<uint8_t> bytes; size_t es; };
    std::vector<Src> srcs;
    std::vector<std::pair<uint32_t, std::vector<uint64_t>>> work;
    for (size_t i = 0; i < 10; ++i) {
      Src s;
      s.shape = i % 3 == 0 ? std::vector<uint64_t>{37} : i % 3 == 1 ? std::vector<uint64_t>{5, 7, 3}
                                                                    : std::vector<uint64_t>{4, 3, 2, 5};
      s.chunk = i % 3 == 0 ? std::vector<uint64_t>{8} : i % 3 == 1 ? std::vector<uint64_t>{2, 3, 3}
                                                                   : std::vector<uint64_t>{3, 3, 1, 2};
      s.es = tet::dtype_size(dtypes[i]);
      uint64_t n = 1;
      for (uint64_t d : s.shape) n *= d;
      s.bytes.resize(n * s.es);
      // Half the datasets compress well (Auto must pick zstd there), half are random bytes.
      for (size_t k = 0; k < s.bytes.size(); ++k) s.bytes[k] = i % 2 ? uint8_t(rng()) : uint8_t(k / 64);
      tet::DatasetSpec spec;
      spec.name = std::string("ds_") + tet::dtype_name(dtypes[i]) + (i == 9 ? " \xc3\xa9t\xc3\xa9" : "");
      spec.dtype = dtypes[i];
      spec.shape = s.shape;
      spec.chunk_shape = s.chunk;
      spec.codec = codec;
      spec.zstd_level = 1 + int(i);
      CHECK(w->add_dataset(spec) == i);
      for (const auto& c : grid_order(s.shape, s.chunk)) work.emplace_back(uint32_t(i), c);
      srcs.push_back(std::move(s));
    }
    std::shuffle(work.begin(), work.end(), rng);
    for (const auto& job : work) {
      const Src& s = srcs[job.first];
      std::vector<uint8_t> t = cut_tile(s.bytes, s.es, s.shape, s.chunk, job.second);
      w->write_chunk(job.first, job.second, t.data(), t.size());
    }
    tet::FileExecution ex;
    ex.memory_budget_percent_bps = 4000;
    ex.memory_budget_bytes = 1 << 20;
    w->set_execution(ex);
    w->commit();
    CHECK(count_entries(dir) == 1);
    auto f = tet::File::open(out);
    const auto& cat = f->catalog();
    CHECK(cat.execution.memory_budget_percent_bps == 4000 && cat.execution.memory_budget_bytes == (1u << 20));
    CHECK(cat.datasets.size() == 10);
    for (uint32_t i = 0; i < 10 && i < cat.datasets.size(); ++i) {
      const auto& d = cat.datasets[i];
      CHECK(d.dtype == dtypes[i]);
      CHECK(assemble(*f, i) == srcs[i].bytes);
      if (codec == tet::CodecChoice::Raw) CHECK(d.zstd_chunks == 0);
      if (codec == tet::CodecChoice::Zstd) CHECK(d.raw_chunks == 0);
      // Random bytes never shrink; runs of equal bytes do once tiles are not tiny.
      if (codec == tet::CodecChoice::Auto) CHECK(i % 2 ? d.zstd_chunks == 0 : (srcs[i].es < 4 || d.zstd_chunks > 0));
    }
    // Index rows are in (dataset, row-major chunk) order; payloads in arrival order.
    bool sorted = true;
    for (size_t k = 1; k < cat.entries.size(); ++k) {
      const auto& a = cat.entries[k - 1];
      const auto& b = cat.entries[k];
      const auto& da = cat.datasets[a.dataset_id];
      uint64_t la = 0, lb = 0;
      for (uint32_t x = 0; x < da.ndim; ++x) la = la * da.grid[x] + a.coords[x];
      const auto& db = cat.datasets[b.dataset_id];
      for (uint32_t x = 0; x < db.ndim; ++x) lb = lb * db.grid[x] + b.coords[x];
      sorted = sorted && (a.dataset_id < b.dataset_id || (a.dataset_id == b.dataset_id && la < lb));
    }
    CHECK(sorted);
    const auto& first = cat.entries[0];
    bool first_arrival = false;  // the first tile that arrived sits right after the index
    for (const auto& e : cat.entries)
      if (e.payload_offset == cat.chunk_index_offset + cat.chunk_index_length)
        first_arrival = e.dataset_id == work[0].first;
    CHECK(first_arrival);
    (void)first;
    if (python_oracle_available()) CHECK(python_oracle_accepts(out));
  }
  remove_dir(dir);
}

TEST_CASE("footer: inline metadata, 28-byte empty footer, spill over 64 KiB") {
  std::string dir = temp_dir();
  auto write_small = [&](const std::string& out, const std::string& hist, const std::string& meta) {
    auto w = tet::Writer::create(out);
    tet::DatasetSpec spec;
    spec.name = "a";
    spec.shape = {2, 3};
    spec.chunk_shape = {2, 2};
    w->add_dataset(spec);
    std::vector<float> v = {1, 2, 4, 5};
    w->write_chunk(0, {0, 0}, reinterpret_cast<const uint8_t*>(v.data()), 16);
    std::vector<float> u = {3, 6};
    w->write_chunk(0, {0, 1}, reinterpret_cast<const uint8_t*>(u.data()), 8);
    w->set_footer(hist, meta);
    w->commit();
  };
  // plan.tet (reference) carries a 28-byte history_json: {"history":[],"metadata":{}}.
  std::string out = dir + "/plan_like.tet";
  write_small(out, "[]", "{}");
  std::vector<uint8_t> mine = read_bytes(out), ref = read_bytes(reference_dir() + "/plan.tet");
  CHECK(mine.size() == ref.size());
  std::string json(mine.end() - 16 - 28, mine.end() - 16);
  CHECK(json == "{\"history\":[],\"metadata\":{}}");
  // Same bytes as plan.tet except the dataset name/values region and the X-ed JSON.
  CHECK(std::equal(mine.end() - 16, mine.end(), ref.end() - 16));

  out = dir + "/inline.tet";
  write_small(out, "[ {\"op\":\"write\", \"source\":\"t\", \"at\":\"1\"} ]", "{\"datasets\": {\"a\": {\"dim_names\": [\"y\", \"x\"]}}}");
  auto f = tet::File::open(out);
  CHECK(f->catalog().footer.present && !f->catalog().footer.metadata_spilled);
  CHECK(f->catalog().footer.history_json ==
        "{\"history\":[{\"op\":\"write\",\"source\":\"t\",\"at\":\"1\"}],\"metadata\":{\"datasets\":{\"a\":{\"dim_names\":[\"y\",\"x\"]}}}}");
  CHECK(f->catalog().footer.metadata_json == "{\"datasets\":{\"a\":{\"dim_names\":[\"y\",\"x\"]}}}");
  CHECK(values_of(*f, 0) == std::vector<double>({1, 2, 3, 4, 5, 6}));

  std::string labels;
  for (int i = 0; i < 9000; ++i) labels += (i ? ",\"" : "\"") + std::to_string(i * 7919) + "\"";
  std::string big = "{\"datasets\":{\"a\":{\"coords\":{\"0\":{\"labels\":[" + labels + "]}}}}}";
  CHECK(big.size() > 65536);
  out = dir + "/spill.tet";
  write_small(out, "[]", big);
  auto g = tet::File::open(out);
  const auto& ft = g->catalog().footer;
  CHECK(ft.present && ft.metadata_spilled);
  CHECK(ft.metadata_json == big);
  uint64_t payload_end = 0;
  for (const auto& e : g->catalog().entries) payload_end = std::max(payload_end, e.payload_offset + e.stored_byte_len);
  CHECK(ft.payload_limit == payload_end);
  CHECK(ft.history_json == "{\"history\":[],\"metadata_ref\":{\"offset\":" + std::to_string(payload_end) +
                               ",\"len\":" + std::to_string(big.size()) + "}}");
  if (python_oracle_available()) CHECK(python_oracle_accepts(out));
  // Just under the limit stays inline.
  // {"history":[],"metadata":{"k":"xx..."}} is 34 bytes plus the x's: exactly 64 KiB stays inline.
  std::string edge = "{\"k\":\"" + std::string(65536 - 34, 'x') + "\"}";
  out = dir + "/edge.tet";
  write_small(out, "[]", edge);
  auto h = tet::File::open(out);
  CHECK(!h->catalog().footer.metadata_spilled && h->catalog().footer.history_json.size() == 65536);
  edge.insert(6, "x");
  write_small(out, "[]", edge);
  auto h2 = tet::File::open(out);
  CHECK(h2->catalog().footer.metadata_spilled && h2->catalog().footer.metadata_json == edge);
  remove_dir(dir);
}

TEST_CASE("argument errors") {
  std::string dir = temp_dir();
  auto w = tet::Writer::create(dir + "/e.tet");
  tet::DatasetSpec s;
  s.name = "a";
  s.shape = {4, 5};
  s.chunk_shape = {2, 2};
  auto bad = s;
  bad.name = "";
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_NAME");
  bad.name = "\xff";
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_NAME");
  bad = s;
  bad.shape = {};
  bad.chunk_shape = {};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_SHAPE");
  bad.shape.assign(9, 1);
  bad.chunk_shape.assign(9, 1);
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_SHAPE");
  bad = s;
  bad.shape = {4, 0};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_SHAPE");
  bad = s;
  bad.chunk_shape = {2, 6};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_CHUNK_SHAPE");
  bad.chunk_shape = {0, 2};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_CHUNK_SHAPE");
  bad.chunk_shape = {2};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_CHUNK_SHAPE");
  bad = s;
  bad.dtype = static_cast<tet::DType>(11);
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_DTYPE");
  bad = s;
  bad.shape = {uint64_t(1) << 62, 8};
  bad.chunk_shape = {1, 8};
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_SHAPE");
  bad = s;
  bad.codec = tet::CodecChoice::Zstd;
  bad.zstd_level = 1000;
  EXPECT_ERROR(w->add_dataset(bad), "TET_WRITE_BAD_CODEC");
  CHECK(w->add_dataset(s) == 0);
  EXPECT_ERROR(w->add_dataset(s), "TET_WRITE_BAD_NAME");  // duplicate
  EXPECT_ERROR(w->set_footer("{}", ""), "TET_WRITE_BAD_FOOTER");
  EXPECT_ERROR(w->set_footer("[1]", ""), "TET_WRITE_BAD_FOOTER");
  EXPECT_ERROR(w->set_footer("[]", "[]"), "TET_WRITE_BAD_FOOTER");
  EXPECT_ERROR(w->set_footer("[]", "{\"a\":"), "TET_WRITE_BAD_FOOTER");
  std::vector<uint8_t> tile(16), edge(8);
  EXPECT_ERROR(w->write_chunk(1, {0, 0}, tile.data(), 16), "TET_WRITE_BAD_DATASET");
  EXPECT_ERROR(w->write_chunk(0, {0}, tile.data(), 16), "TET_WRITE_BAD_COORDS");
  EXPECT_ERROR(w->write_chunk(0, {2, 0}, tile.data(), 16), "TET_WRITE_BAD_COORDS");
  EXPECT_ERROR(w->write_chunk(0, {0, 2}, tile.data(), 16), "TET_WRITE_BAD_LENGTH");  // clipped: 2x1 x 4 B
  w->write_chunk(0, {0, 0}, tile.data(), 16);
  EXPECT_ERROR(w->write_chunk(0, {0, 0}, tile.data(), 16), "TET_WRITE_DUPLICATE_CHUNK");
  auto s2 = s;
  s2.name = "b";
  EXPECT_ERROR(w->add_dataset(s2), "TET_WRITE_SEALED");
  EXPECT_ERROR(w->commit(), "TET_WRITE_MISSING_CHUNK");
  // The writer stays usable after a missing-chunk commit: finish and commit.
  for (uint64_t r = 0; r < 2; ++r)
    for (uint64_t c = 0; c < 3; ++c)
      if (r || c) w->write_chunk(0, {r, c}, tile.data(), c == 2 ? 8 : 16);
  w->commit();
  EXPECT_ERROR(w->write_chunk(0, {0, 0}, tile.data(), 16), "TET_WRITE_CLOSED");
  EXPECT_ERROR(w->commit(), "TET_WRITE_CLOSED");
  CHECK(count_entries(dir) == 1);
  auto f = tet::File::open(dir + "/e.tet");
  CHECK(f->catalog().datasets[0].chunk_count == 6);
  remove_dir(dir);
}

TEST_CASE("an empty writer commits the 32-byte empty file") {
  std::string dir = temp_dir();
  auto w = tet::Writer::create(dir + "/empty.tet");
  w->commit();
  CHECK(read_bytes(dir + "/empty.tet") == read_bytes(conformance_dir() + "/fixtures/empty.tet"));
  remove_dir(dir);
}

TEST_CASE("abort, destructor and failures leave no files") {
  std::string dir = temp_dir();
  tet::DatasetSpec s;
  s.name = "a";
  s.shape = {100};
  s.chunk_shape = {10};
  std::vector<uint8_t> tile(40);
  {
    auto w = tet::Writer::create(dir + "/x.tet");
    w->add_dataset(s);
    w->write_chunk(0, {3}, tile.data(), 40);
    CHECK(count_entries(dir) == 1);  // the temp file
    w->abort();
    CHECK(count_entries(dir) == 0);
    w->abort();  // idempotent
  }
  {
    auto w = tet::Writer::create(dir + "/x.tet");
    w->add_dataset(s);
    w->write_chunk(0, {0}, tile.data(), 40);
  }  // destructor without commit
  CHECK(count_entries(dir) == 0);
  {
    auto w = tet::Writer::create(dir + "/x.tet");
    w->add_dataset(s);
    EXPECT_ERROR(w->commit(), "TET_WRITE_MISSING_CHUNK");
  }
  CHECK(count_entries(dir) == 0);
  EXPECT_ERROR(tet::Writer::create(dir + "/no/such/dir/x.tet"), "TET_WRITE_IO");
  // A file-size limit makes write() fail with EFBIG (SIGXFSZ ignored, as the addon does).
  struct rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &small);
  {
    auto w = tet::Writer::create(dir + "/big.tet");
    s.shape = {100000};
    s.chunk_shape = {1000};
    w->add_dataset(s);
    std::vector<uint8_t> t(4000);
    bool threw = false;
    try {
      for (uint64_t k = 0; k < 100; ++k) w->write_chunk(0, {k}, t.data(), t.size());
    } catch (const tet::Error& e) {
      threw = true;
      CHECK(e.code() == "TET_WRITE_IO");
      CHECK(std::string(e.what()).find("File too large") != std::string::npos);
    }
    CHECK(threw);
    CHECK(count_entries(dir) == 0);
    EXPECT_ERROR(w->commit(), "TET_WRITE_CLOSED");
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  CHECK(count_entries(dir) == 0);
  remove_dir(dir);
}

TEST_CASE("concurrent write_chunk calls (zstd) produce a correct file") {
  std::string dir = temp_dir();
  std::string out = dir + "/c.tet";
  auto w = tet::Writer::create(out);
  tet::DatasetSpec s;
  s.name = "a";
  s.dtype = tet::DType::F32;
  s.shape = {64, 50};
  s.chunk_shape = {8, 7};
  s.codec = tet::CodecChoice::Zstd;
  w->add_dataset(s);
  std::vector<float> vals(64 * 50);
  for (size_t i = 0; i < vals.size(); ++i) vals[i] = float(i % 97) * 0.5f;
  std::vector<uint8_t> global = f32_bytes(vals);
  auto order = grid_order(s.shape, s.chunk_shape);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t k = t; k < order.size(); k += 4) {
        std::vector<uint8_t> tile = cut_tile(global, 4, s.shape, s.chunk_shape, order[k]);
        w->write_chunk(0, order[k], tile.data(), tile.size());
      }
    });
  for (auto& th : threads) th.join();
  w->commit();
  auto f = tet::File::open(out);
  CHECK(assemble(*f, 0) == global);
  CHECK(f->catalog().datasets[0].zstd_chunks == order.size());
  remove_dir(dir);
}

TEST_MAIN()
