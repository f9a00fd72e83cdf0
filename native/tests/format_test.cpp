// File layer: every conformance / reference fixture opens (or fails with its precise code),
// values match the fixture descriptions, footers resolve, and corrupted images never crash.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "check.h"
#include "fixture_util.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/verify.h"
#include "util/io.h"

using namespace tet_test;

namespace {

std::string open_error_code(const std::string& path, const tet::OpenOptions& opts = {}) {
  try {
    auto f = tet::File::open(path, opts);
    tet::ScratchBytes scratch;
    for (uint32_t id = 0; id < f->catalog().datasets.size(); ++id)
      for (uint64_t k = 0; k < f->catalog().datasets[id].chunk_count; ++k) f->tile(id, k, scratch);
  } catch (const tet::Error& e) {
    return e.code();
  }
  return "";
}

const std::map<std::string, std::string> kMalformedCodes = {
    {"m_bad_magic", "TET_FORMAT_BAD_MAGIC"},
    {"m_bad_version", "TET_FORMAT_BAD_VERSION"},
    {"m_truncated_superblock", "TET_FORMAT_TRUNCATED"},
    {"m_truncated_index", "TET_FORMAT_TRUNCATED"},
    {"m_payload_past_eof", "TET_PAYLOAD_OUT_OF_BOUNDS"},
    {"m_payload_offset_max", "TET_PAYLOAD_OUT_OF_BOUNDS"},
    {"m_stored_len_max", "TET_PAYLOAD_OUT_OF_BOUNDS"},
    {"m_index_offset_overflow", "TET_FORMAT_INDEX_OFFSET"},
    {"m_index_length_huge", "TET_FORMAT_TRUNCATED"},
    {"m_ndim0", "TET_FORMAT_BAD_NDIM"},
    {"m_ndim9", "TET_FORMAT_BAD_NDIM"},
    {"m_chunk_shape_zero", "TET_FORMAT_CHUNK_SHAPE"},
    {"m_bad_dtype", "TET_FORMAT_BAD_DTYPE"},
    {"m_name_not_utf8", "TET_FORMAT_BAD_NAME"},
    {"m_tile_len_mismatch", "TET_PAYLOAD_LENGTH"},
    {"m_shape_chunk_mismatch", "TET_PAYLOAD_LENGTH"},
    {"m_zstd_short", "TET_DECODE_LENGTH"},
    {"m_zstd_long", "TET_DECODE_LENGTH"},
    {"m_zstd_corrupt", "TET_DECODE_ZSTD"},
    {"m_zstd_checksum", "TET_DECODE_ZSTD"},
    {"m_zstd_truncated", "TET_DECODE_ZSTD"},
    {"m_zstd_raw_len_lies", "TET_PAYLOAD_LENGTH"},
    {"m_bad_index_magic", "TET_INDEX_BAD_MAGIC"},
    {"m_index_version", "TET_INDEX_BAD_VERSION"},
    {"m_entry_count_lies", "TET_INDEX_LENGTH"},
    {"m_entry_count_huge", "TET_INDEX_LENGTH"},
    {"m_duplicate_chunk", "TET_INDEX_DUPLICATE_CHUNK"},
    {"m_missing_chunk", "TET_INDEX_MISSING_CHUNK"},
    {"m_dataset_id_oob", "TET_INDEX_DATASET_ID"},
    {"m_chunk_coord_oob", "TET_INDEX_CHUNK_OUT_OF_GRID"},
    {"m_unknown_codec", "TET_INDEX_BAD_CODEC"},
    {"m_raw_stored_mismatch", "TET_PAYLOAD_LENGTH"},
    {"m_blob_len_past_eof", "TET_FORMAT_TRUNCATED"},
    {"m_blob_len_short", "TET_FORMAT_INDEX_OFFSET"},
    {"m_dataset_count_lies", "TET_FORMAT_DIRECTORY"},
    {"m_index_offset_misaligned", "TET_FORMAT_INDEX_OFFSET"},
    {"m_empty_index_past_eof", "TET_FORMAT_TRUNCATED"},
    {"m_corrupt_footer", "TET_FOOTER_INVALID"},
    {"m_footer_len_max", "TET_FOOTER_INVALID"},
    {"m_footer_len_big", "TET_FOOTER_INVALID"},
    {"m_footer_version", "TET_FOOTER_BAD_VERSION"},
    {"m_footer_flag_no_footer", "TET_FOOTER_INVALID"},
    {"m_payload_into_footer", "TET_PAYLOAD_OUT_OF_BOUNDS"},
    {"m_metadata_ref_oob", "TET_FOOTER_INVALID"},
    {"m_metadata_both", "TET_FOOTER_INVALID"},
};

std::string stem(const std::string& file) {
  size_t s = file.find_last_of('/');
  std::string b = s == std::string::npos ? file : file.substr(s + 1);
  return b.substr(0, b.size() - 4);
}

}  // namespace

TEST_CASE("valid conformance fixtures open and match the manifest") {
  tet::JsonValue m = load_manifest();
  const tet::JsonValue* files = m.find("files");
  CHECK(files && files->items.size() >= 90);
  int valid = 0;
  for (const auto& entry : files->items) {
    if (entry.find("kind")->text != "valid") continue;
    ++valid;
    std::string path = conformance_dir() + "/" + entry.find("file")->text;
    try {
      auto f = tet::File::open(path);
      const tet::Catalog& cat = f->catalog();
      uint64_t bytes = 0;
      entry.find("bytes")->as_u64(&bytes);
      CHECK(cat.file_len == bytes);
      const tet::JsonValue* dss = entry.find("datasets");
      CHECK(dss && dss->items.size() == cat.datasets.size());
      for (size_t i = 0; dss && i < dss->items.size() && i < cat.datasets.size(); ++i) {
        const tet::JsonValue& want = dss->items[i];
        const tet::DatasetInfo& d = cat.datasets[i];
        CHECK(d.name == want.find("name")->text);
        CHECK(std::string(tet::dtype_name(d.dtype)) == want.find("dtype")->text);
        CHECK(d.ndim == want.find("shape")->items.size());
        for (uint32_t a = 0; a < d.ndim && a < want.find("shape")->items.size(); ++a) {
          uint64_t s = 0, c = 0;
          want.find("shape")->items[a].as_u64(&s);
          want.find("chunk_shape")->items[a].as_u64(&c);
          CHECK(d.shape[a] == s);
          CHECK(d.chunk_shape[a] == c);
        }
        uint64_t chunks = 0;
        want.find("chunks")->as_u64(&chunks);
        CHECK(d.chunk_count == chunks);
        std::set<std::string> codecs;
        for (const auto& c : want.find("codecs")->items) codecs.insert(c.text);
        CHECK((d.raw_chunks > 0) == (codecs.count("raw") > 0));
        CHECK((d.zstd_chunks > 0) == (codecs.count("zstd") > 0));
        CHECK(d.raw_chunks + d.zstd_chunks == d.chunk_count);
        CHECK(d.chunk_to_entry.size() == d.chunk_count);
      }
      bool footer = entry.find("footer")->kind == tet::JsonValue::Kind::Bool && entry.find("footer")->boolean;
      CHECK(cat.footer.present == footer);
      // Every tile decodes to its clipped size.
      tet::ScratchBytes scratch;
      for (uint32_t id = 0; id < cat.datasets.size(); ++id) {
        const auto& d = cat.datasets[id];
        for (uint64_t k = 0; k < d.chunk_count; ++k) {
          auto t = tet::tile_shape(d, tet::chunk_coords_of(d, k));
          uint64_t n = tet::dtype_size(d.dtype);
          for (uint32_t a = 0; a < d.ndim; ++a) n *= t[a];
          CHECK(f->tile(id, k, scratch).bytes == n);
        }
      }
      CHECK(tet::verify_tiles(*f, 0, UINT64_MAX).empty());
    } catch (const tet::Error& e) {
      std::printf("  %s: %s %s\n", path.c_str(), e.code().c_str(), e.what());
      CHECK(false);
    }
  }
  CHECK(valid >= 45);
}

TEST_CASE("every malformed fixture fails with its code") {
  tet::JsonValue m = load_manifest();
  int malformed = 0;
  for (const auto& entry : m.find("files")->items) {
    if (entry.find("kind")->text == "valid") continue;
    ++malformed;
    std::string name = stem(entry.find("file")->text);
    std::string code = open_error_code(conformance_dir() + "/" + entry.find("file")->text);
    auto it = kMalformedCodes.find(name);
    if (it == kMalformedCodes.end() || code != it->second) {
      std::printf("  %s: got '%s', want '%s'\n", name.c_str(), code.c_str(),
                  it == kMalformedCodes.end() ? "?" : it->second.c_str());
      CHECK(false);
    }
  }
  CHECK(malformed == static_cast<int>(kMalformedCodes.size()));
}

TEST_CASE("malformed messages name the numbers") {
  auto msg = [](const std::string& name) {
    try {
      auto f = tet::File::open(conformance_dir() + "/fixtures/" + name + ".tet");
      tet::ScratchBytes s;
      for (uint64_t k = 0; k < f->catalog().datasets[0].chunk_count; ++k) f->tile(0, k, s);
    } catch (const tet::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(msg("m_missing_chunk").find("3 chunk entries for a grid of 4 (missing e.g. (1, 0))") != std::string::npos);
  CHECK(msg("m_duplicate_chunk").find("entry 4: duplicate chunk coords (0, 0) for 'a' (also entry 0)") != std::string::npos);
  CHECK(msg("m_chunk_coord_oob").find("entry 3: chunk coords (5, 1) outside grid (2, 2) of 'a'") != std::string::npos);
  CHECK(msg("m_zstd_short").find("dataset 'a' entry 0 chunk_index (0, 0): zstd frame declares 60 decoded bytes but raw_byte_len is 64") != std::string::npos);
  CHECK(msg("m_zstd_checksum").find("checksum") != std::string::npos);
  CHECK(msg("m_entry_count_lies").find("chunk_index_length 448 != 32 + entry_count(5) * 104") != std::string::npos);
  CHECK(msg("m_payload_into_footer").find("entry 3: payload [728, 760) extends past payload limit 736 (file_len 856)") != std::string::npos);
  CHECK(msg("m_blob_len_short").find("chunk_index_offset 96 != align8(40 + dataset_blob_len) = 88") != std::string::npos);
}

TEST_CASE("reference files: values from the README") {
  auto check_values = [](const std::string& file, const std::string& name, tet::DType dt, std::vector<uint64_t> shape,
                         std::vector<uint64_t> chunk, std::vector<double> want) {
    auto f = tet::File::open(reference_dir() + "/" + file);
    const auto& cat = f->catalog();
    CHECK(cat.datasets.size() == 1);
    const auto& d = cat.datasets[0];
    CHECK(d.name == name);
    CHECK(d.dtype == dt);
    CHECK(d.ndim == shape.size());
    for (size_t a = 0; a < shape.size(); ++a) {
      CHECK(d.shape[a] == shape[a]);
      CHECK(d.chunk_shape[a] == chunk[a]);
    }
    CHECK(values_of(*f, 0) == want);
  };
  std::vector<double> one_to_six = {1, 2, 3, 4, 5, 6};
  check_values("sample.tet", "temperature", tet::DType::F32, {2, 3}, {2, 2}, one_to_six);
  std::vector<double> large(34 * 64);
  for (size_t i = 0; i < large.size(); ++i) large[i] = double(i);
  check_values("large.tet", "a", tet::DType::F32, {34, 64}, {4, 4}, large);
  auto f = tet::File::open(reference_dir() + "/large.tet");
  CHECK(f->catalog().datasets[0].chunk_count == 144);
  for (const char* dt : {"u8", "u32", "f16"}) {
    auto g = tet::File::open(reference_dir() + "/multichunk_" + dt + ".tet");
    CHECK(std::string(tet::dtype_name(g->catalog().datasets[0].dtype)) == dt);
    CHECK(values_of(*g, 0) == one_to_six);
  }
  // sample.tet: the second tile is the clipped 2x1 tile, served zero-copy from the mapping.
  auto s = tet::File::open(reference_dir() + "/sample.tet");
  tet::ScratchBytes scratch;
  tet::TileView v = s->tile(0, 1, scratch);
  CHECK(v.bytes == 8);
  CHECK(v.data >= s->base() && v.data < s->base() + s->catalog().file_len);
  CHECK(scratch.empty());
}

TEST_CASE("one_to_six fixtures: every dtype holds 1..6") {
  for (const char* dt : {"f16", "f32", "f64", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}) {
    auto f = tet::File::open(conformance_dir() + "/fixtures/one_to_six_" + dt + ".tet");
    CHECK(values_of(*f, 0) == std::vector<double>({1, 2, 3, 4, 5, 6}));
  }
}

TEST_CASE("plan.tet: corrupt footer is an error, tolerated with verify_footer=false") {
  std::string path = reference_dir() + "/plan.tet";
  EXPECT_ERROR(tet::File::open(path), "TET_FOOTER_INVALID");
  tet::OpenOptions lenient;
  lenient.verify_footer = false;
  auto f = tet::File::open(path, lenient);
  CHECK(!f->catalog().footer.present);
  CHECK(f->catalog().footer.payload_limit == 404 - 16 - 28);
  CHECK(values_of(*f, 0) == std::vector<double>({1, 2, 3, 4, 5, 6}));
  auto r = tet::verify_open(path);
  CHECK(r.file != nullptr);
  CHECK(r.findings.size() == 1 && r.findings[0].recommendation == "footer_invalid" &&
        r.findings[0].code == "TET_FOOTER_INVALID" && r.findings[0].severity == "error");
  // A structural error is not classified as a footer problem.
  EXPECT_ERROR(tet::verify_open(conformance_dir() + "/fixtures/m_bad_magic.tet"), "TET_FORMAT_BAD_MAGIC");
  auto ok = tet::verify_open(reference_dir() + "/sample.tet");
  CHECK(ok.findings.empty());
}

TEST_CASE("footers: inline, spilled, legacy history, payload limit") {
  auto weather = tet::File::open(conformance_dir() + "/fixtures/meta_weather.tet");
  const auto& ft = weather->catalog().footer;
  CHECK(ft.present && !ft.metadata_spilled);
  std::vector<uint8_t> bytes = read_bytes(conformance_dir() + "/fixtures/meta_weather.tet");
  uint64_t jlen = 668;
  CHECK(ft.history_json_len == jlen);
  CHECK(ft.history_json_offset == bytes.size() - 16 - jlen);
  CHECK(ft.payload_limit == ft.history_json_offset);
  CHECK(ft.history_json == std::string(bytes.end() - 16 - jlen, bytes.end() - 16));
  CHECK(ft.metadata_json.rfind("{\"datasets\":{\"temperature\":{\"dim_names\":[\"time\",\"lat\",\"lon\"]", 0) == 0);

  auto spill = tet::File::open(conformance_dir() + "/fixtures/meta_spill.tet");
  const auto& fs = spill->catalog().footer;
  CHECK(fs.present && fs.metadata_spilled);
  CHECK(fs.payload_limit == 24736);
  CHECK(fs.metadata_json.size() == 165093);
  CHECK(fs.metadata_json.front() == '{' && fs.metadata_json.back() == '}');
  CHECK(fs.history_json == "{\"history\":[{\"op\":\"write\",\"source\":\"gen\",\"at\":\"0\"}],\"metadata_ref\":{\"offset\":24736,\"len\":165093}}");

  auto legacy = tet::File::open(conformance_dir() + "/fixtures/meta_legacy_history.tet");
  CHECK(legacy->catalog().footer.metadata_json == "{\"datasets\":{\"a\":{\"dim_names\":[\"row\",\"col\"]}}}");

  auto none = tet::File::open(conformance_dir() + "/fixtures/f32_r2_edges.tet");
  CHECK(!none->catalog().footer.present);
  CHECK(none->catalog().footer.payload_limit == none->catalog().file_len);
}

TEST_CASE("corrupt footers with verify_footer=false: payload limit at the located footer") {
  tet::OpenOptions lenient;
  lenient.verify_footer = false;
  struct Case { const char* name; bool located; };
  for (Case c : {Case{"m_corrupt_footer", true}, Case{"m_footer_len_max", false}, Case{"m_footer_len_big", false},
                 Case{"m_footer_flag_no_footer", false}, Case{"m_metadata_both", true}, Case{"m_metadata_ref_oob", true},
                 Case{"m_footer_version", true}}) {
    std::string path = conformance_dir() + "/fixtures/" + c.name + ".tet";
    std::vector<uint8_t> b = read_bytes(path);
    try {
      auto f = tet::File::open(path, lenient);
      const auto& ft = f->catalog().footer;
      CHECK(!ft.present);
      uint64_t jlen = 0;
      for (int k = 7; k >= 0; --k) jlen = (jlen << 8) | b[b.size() - 16 + k];
      uint64_t want = c.located ? b.size() - 16 - jlen : b.size();
      if (ft.payload_limit != want) {
        std::printf("  %s: payload_limit %llu want %llu\n", c.name, (unsigned long long)ft.payload_limit, (unsigned long long)want);
        CHECK(false);
      }
    } catch (const tet::Error& e) {
      std::printf("  %s: %s\n", c.name, e.what());
      CHECK(false);
    }
  }
}

TEST_CASE("empty files") {
  auto e = tet::File::open(conformance_dir() + "/fixtures/empty.tet");
  CHECK(e->catalog().datasets.empty() && e->catalog().entries.empty() && e->catalog().file_len == 32);
  auto t = tet::File::open(conformance_dir() + "/fixtures/empty_trailing.tet");
  CHECK(t->catalog().datasets.empty() && t->catalog().file_len == 47);
  EXPECT_ERROR(tet::File::from_memory(nullptr, 0), "TET_FORMAT_TRUNCATED");
}

TEST_CASE("open errors: missing file, directory") {
  EXPECT_ERROR(tet::File::open("/nonexistent/dir/x.tet"), "TET_IO_OPEN");
  EXPECT_ERROR(tet::File::open("/tmp"), "TET_IO_OPEN");
}

TEST_CASE("pathological grids fail fast without allocating") {
  // sample.tet with shape [2^40, 3] and chunk [1, 2]: 2^41 chunks declared, 2 index rows.
  std::vector<uint8_t> b = read_bytes(reference_dir() + "/sample.tet");
  uint64_t s0 = uint64_t(1) << 40;
  for (int k = 0; k < 8; ++k) b[72 + k] = uint8_t(s0 >> (8 * k));
  b[88] = 1;  // chunk_shape[0] = 1
  EXPECT_ERROR(tet::File::from_memory(b.data(), b.size()), "TET_PAYLOAD_LENGTH");
  // shape whose element count overflows u64
  std::vector<uint8_t> o = read_bytes(reference_dir() + "/sample.tet");
  for (int k = 0; k < 8; ++k) o[72 + k] = 0xFF, o[80 + k] = 0xFF;
  EXPECT_ERROR(tet::File::from_memory(o.data(), o.size()), "TET_FORMAT_BAD_SHAPE");
}

TEST_CASE("every truncation and every single-byte corruption fails cleanly") {
  int opened = 0, failed = 0;
  for (const std::string& path : {reference_dir() + "/sample.tet", conformance_dir() + "/fixtures/meta_multi.tet",
                                  conformance_dir() + "/fixtures/i64_r2_mixed.tet"}) {
    std::vector<uint8_t> b = read_bytes(path);
    for (size_t n = 0; n < b.size(); ++n) {
      std::vector<uint8_t> cut(b.begin(), b.begin() + n);
      try {
        tet::File::from_memory(cut.data(), cut.size());
        ++opened;  // e.g. cutting a footer flag file: never expected
      } catch (const tet::Error&) {
        ++failed;
      }
    }
    size_t step = b.size() > 4000 ? 7 : 1;
    for (size_t i = 0; i < b.size(); i += step) {
      for (uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
        std::vector<uint8_t> m = b;
        m[i] ^= x;
        try {
          auto f = tet::File::from_memory(m.data(), m.size());
          tet::ScratchBytes scratch;
          for (uint32_t id = 0; id < f->catalog().datasets.size(); ++id)
            for (uint64_t k = 0; k < f->catalog().datasets[id].chunk_count; ++k) f->tile(id, k, scratch);
          tet::verify_tiles(*f, 0, UINT64_MAX);
        } catch (const tet::Error&) {
        }
      }
    }
  }
  CHECK(opened == 0);
  CHECK(failed > 0);
}

TEST_CASE("verify_tiles decodes on the pool and reports bad tiles in index order") {
  // Three compressed tiles of a mixed-codec fixture with their zstd magic broken: each fails to
  // decode. The findings name them in index order, whatever thread decoded which, and a range
  // reports only its own.
  std::vector<uint8_t> b = read_bytes(conformance_dir() + "/fixtures/multi_dataset.tet");
  std::vector<uint64_t> zstd;
  {
    auto f = tet::File::from_memory(b.data(), b.size());
    const auto& entries = f->catalog().entries;
    for (uint64_t i = 0; i < entries.size(); ++i)
      if (entries[i].codec == tet::Codec::Zstd) zstd.push_back(i);
    CHECK(tet::verify_tiles(*f, 0, UINT64_MAX).empty());
  }
  CHECK(zstd.size() >= 12);
  const std::vector<uint64_t> bad = {zstd[1], zstd[zstd.size() / 2], zstd.back()};
  std::vector<uint8_t> m = b;
  {
    auto f = tet::File::from_memory(b.data(), b.size());
    for (uint64_t i : bad) m[static_cast<size_t>(f->catalog().entries[i].payload_offset)] ^= 0xFF;
  }
  auto f = tet::File::from_memory(m.data(), m.size());
  std::vector<tet::VerifyFinding> all = tet::verify_tiles(*f, 0, UINT64_MAX);
  CHECK(all.size() == bad.size());
  for (size_t k = 0; k < all.size() && k < bad.size(); ++k) {
    CHECK(all[k].severity == "error");
    CHECK(all[k].message.find("entry " + std::to_string(bad[k]) + " ") != std::string::npos);
  }
  std::vector<tet::VerifyFinding> one = tet::verify_tiles(*f, bad[1], 1);
  CHECK(one.size() == 1 && one[0].message.find("entry " + std::to_string(bad[1]) + " ") != std::string::npos);
  CHECK(tet::verify_tiles(*f, bad[0] + 1, bad[1] - bad[0] - 1).empty());
}

TEST_CASE("check_unchanged detects a length change") {
  std::string dir = temp_dir();
  std::string path = dir + "/copy.tet";
  write_bytes(path, read_bytes(reference_dir() + "/sample.tet"));
  auto f = tet::File::open(path);
  f->check_unchanged();
  FILE* fp = std::fopen(path.c_str(), "ab");
  std::fputc(0, fp);
  std::fclose(fp);
  EXPECT_ERROR(f->check_unchanged(), "TET_IO_FILE_CHANGED");
  EXPECT_ERROR(tet::verify_tiles(*f, 0, 10), "TET_IO_FILE_CHANGED");
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("repair_footer on a copy of plan.tet") {
  std::string dir = temp_dir();
  std::string path = dir + "/plan.tet";
  std::vector<uint8_t> orig = read_bytes(reference_dir() + "/plan.tet");
  write_bytes(path, orig);
  EXPECT_ERROR(tet::File::open(path), "TET_FOOTER_INVALID");
  uint64_t len = tet::repair_footer(path);
  CHECK(len == 404 - 16 - 28);
  std::vector<uint8_t> fixed = read_bytes(path);
  CHECK(fixed.size() == len);
  CHECK(fixed[12] == 0);  // flags cleared
  CHECK(std::equal(fixed.begin() + 16, fixed.end(), orig.begin() + 16));
  auto f = tet::File::open(path);
  CHECK(!f->catalog().footer.present && f->catalog().flags == 0);
  CHECK(values_of(*f, 0) == std::vector<double>({1, 2, 3, 4, 5, 6}));
  // No temp files left beside it.
  int entries = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) entries += e->d_name[0] != '.' || std::strlen(e->d_name) > 2;
    closedir(d);
  }
  CHECK(entries == 1);
  // A structurally broken file is refused.
  std::string bad = dir + "/bad.tet";
  write_bytes(bad, read_bytes(conformance_dir() + "/fixtures/m_bad_magic.tet"));
  EXPECT_ERROR(tet::repair_footer(bad), "TET_FORMAT_BAD_MAGIC");
  ::unlink(bad.c_str());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("repair_footer drops a footer flag without THST") {
  std::string dir = temp_dir();
  std::string path = dir + "/x.tet";
  write_bytes(path, read_bytes(conformance_dir() + "/fixtures/m_footer_flag_no_footer.tet"));
  CHECK(tet::verify_open(path).findings.size() == 1);
  tet::repair_footer(path);
  auto f = tet::File::open(path);
  CHECK(f->catalog().flags == 0 && f->catalog().file_len == 736);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_MAIN()

TEST_CASE("open_if_resident: an in-memory catalog opens as open() opens it; a spilled footer, evicted pages or a malformed file go to open()") {
  const std::string dir = std::string(TET_BINARY_DIR) + "/resident_open";
  ::mkdir(dir.c_str(), 0755);
  auto same_catalog = [](const tet::File& a, const tet::File& b) {
    const tet::Catalog &x = a.catalog(), &y = b.catalog();
    bool same = x.datasets.size() == y.datasets.size() && x.entries.size() == y.entries.size() &&
                x.file_len == y.file_len && x.footer.history_json == y.footer.history_json &&
                x.footer.metadata_json == y.footer.metadata_json && x.footer.payload_limit == y.footer.payload_limit;
    for (size_t i = 0; same && i < x.entries.size(); ++i)
      same = x.entries[i].payload_offset == y.entries[i].payload_offset && x.entries[i].stored_byte_len == y.entries[i].stored_byte_len;
    for (size_t i = 0; same && i < x.datasets.size(); ++i) same = x.datasets[i].name == y.datasets[i].name;
    return same;
  };
  // Just written: every page is in the page cache.
  for (const char* name : {"meta_weather.tet", "f32_r2_edges.tet", "empty.tet"}) {
    const std::string path = dir + "/" + name;
    write_bytes(path, read_bytes(conformance_dir() + "/fixtures/" + name));
    auto fast = tet::File::open_if_resident(path);
    CHECK(fast != nullptr);
    if (fast) CHECK(same_catalog(*fast, *tet::File::open(path)));
  }
  // Spilled metadata lies elsewhere in the file: not read here.
  const std::string spill = dir + "/meta_spill.tet";
  write_bytes(spill, read_bytes(conformance_dir() + "/fixtures/meta_spill.tet"));
  CHECK(tet::File::open_if_resident(spill) == nullptr);
  CHECK(tet::File::open(spill)->catalog().footer.metadata_spilled);
  // Evicted from the page cache (where the kernel drops clean pages when asked): not here.
  const std::string cold = dir + "/cold.tet";
  write_bytes(cold, read_bytes(conformance_dir() + "/fixtures/meta_weather.tet"));
  const int fd = ::open(cold.c_str(), O_RDONLY);
  CHECK(fd >= 0);
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  tet::Mapping probe = tet::map_file_readonly(cold);
  const bool evicted = !tet::pages_resident(probe.data, probe.len);
  tet::unmap_file(probe);
  ::close(fd);
  if (evicted) CHECK(tet::File::open_if_resident(cold) == nullptr);
  else std::printf("  (the kernel kept cold.tet's pages: eviction not checked)\n");
  CHECK(tet::File::open(cold)->catalog().footer.present);
  // Malformed files: the same error as open(), or left to open().
  tet::JsonValue m = load_manifest();
  int checked = 0;
  for (const auto& entry : m.find("files")->items) {
    if (entry.find("kind")->text == "valid") continue;
    const std::string path = conformance_dir() + "/" + entry.find("file")->text;
    (void)read_bytes(path);  // in the page cache
    std::string want, got;
    try {
      tet::File::open(path);
    } catch (const tet::Error& e) {
      want = e.code();
    }
    try {
      if (tet::File::open_if_resident(path) == nullptr) got = want;
    } catch (const tet::Error& e) {
      got = e.code();
    }
    if (got != want) std::printf("  %s: open_if_resident '%s', open '%s'\n", path.c_str(), got.c_str(), want.c_str());
    CHECK(got == want);
    ++checked;
  }
  CHECK(checked > 10);
}
