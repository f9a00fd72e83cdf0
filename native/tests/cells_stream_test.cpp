// StrBuilder streaming (on_block): the blocks it hands out decode to the rows pushed, in order
// and with at most kGlobalDictDecideBlocks held back; the early global-dictionary decision; the
// block index built through spilled runs; and the memory of a 2·10^7-row event_id column.
// Expectations come from a plain model written here (vectors of optional strings, std::set).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cells/column.h"
#include "cells/metablocks.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "tet/error.h"
#include "tests/check.h"
#include "tests/str_model.h"
#include "util/io.h"
#include "write/table_set.h"

using namespace tet::cells;
using Model = std::vector<std::optional<std::string>>;

namespace {

uint64_t splitmix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string hex16(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = d[v & 15];
  return s;
}

// obs columns (tables_and_filters.md, appendix) at row i.
std::string obs_event_id(uint64_t i) { return "E" + hex16(splitmix(i)); }
std::string obs_country(uint64_t i) {
  const double u = double(splitmix(i % 10000) >> 11) / double(uint64_t(1) << 53);
  const unsigned idx = unsigned(200 * u * u);
  return std::string{char('A' + idx / 26), char('A' + idx % 26)};
}
std::string obs_station_name(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "ST-%05llu-", (unsigned long long)(i % 10000));
  return buf + obs_country(i);
}

// What a streaming build handed out, and when.
struct Streamed {
  std::vector<CellRef> blocks;
  std::unique_ptr<StrBuilder> builder;
  CellRef finish_root;            // must stay null
  uint64_t most_rows_ahead = 0;   // rows pushed past the end of a block when it arrived
  bool in_order = true;           // every block but the last full
  DecodeContext ctx() const {
    const GlobalDictionary* g = builder->global_dictionary();
    return g ? g->context() : DecodeContext{};
  }
  CellRef column() const { return blocks.empty() ? CellRef() : make_column(Kind::Str, std::vector<CellRef>(blocks)); }
};

Streamed stream(const Model& m, StrBuilderOptions o = {}) {
  Streamed s;
  uint64_t pushed = 0, delivered = 0;
  o.on_block = [&](CellRef c) {
    if (!s.blocks.empty() && s.blocks.back()->len != kBlockLanes) s.in_order = false;
    delivered += c->len;
    if (pushed < delivered) s.in_order = false;
    s.most_rows_ahead = std::max(s.most_rows_ahead, pushed - delivered);
    s.blocks.push_back(std::move(c));
  };
  s.builder = std::make_unique<StrBuilder>(std::move(o));
  for (auto& v : m) {
    ++pushed;  // counted before the push that may seal a block
    if (v) s.builder->push(*v);
    else s.builder->push_null();
  }
  s.finish_root = s.builder->finish();
  if (delivered != m.size()) s.in_order = false;
  return s;
}

using Whole = tet_test::WholeStrColumn;
Whole whole(const Model& m, StrBuilderOptions o = {}) { return tet_test::build_whole(m, std::move(o)); }

bool column_matches(const Cell& root, const Model& m, const DecodeContext& ctx) {
  return tet_test::str_column_equals(root, m, ctx);
}

uint64_t count_enc(const std::vector<CellRef>& blocks, Enc e) {
  uint64_t n = 0;
  for (const CellRef& c : blocks) n += c->enc_v() == e;
  return n;
}

// Peak resident memory since the last reset_peak_rss(), in bytes (VmHWM; clear_refs "5" resets
// it, Linux ≥ 4.0). Falls back to getrusage's lifetime peak where the reset is refused.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}
uint64_t status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0) return std::stoull(line.substr(n + 1));
  return 0;
}
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
}  // namespace

// Runs first: the process is still small, so the peak it measures is the builder's.
TEST_CASE("memory: 2e7 rows of event_id-like strings stream through in bounded RSS") {
  const uint64_t rows = kSanitized ? 2000000 : 20000000;
  const bool reset = reset_peak_rss();
  const uint64_t before_kib = status_kib("VmRSS:");
  struct rusage ru0;
  getrusage(RUSAGE_SELF, &ru0);
  uint64_t blocks = 0, payload = 0, last_len = 0;
  StrBuilderOptions o;
  o.on_block = [&](CellRef c) {
    ++blocks;
    payload += c->payload_bytes;
    last_len = c->len;
  };
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t index_bytes = 0, sketch = 0;
  {
    StrBuilder b(std::move(o));
    char id[18] = "E";
    for (uint64_t i = 0; i < rows; ++i) {
      const std::string h = hex16(splitmix(i));
      std::memcpy(id + 1, h.data(), 16);
      b.push(std::string_view(id, 17));
    }
    CHECK(!b.finish());
    CHECK(b.stats().rows == rows && b.stats().blocks == blocks);
    CHECK(b.stats().blocks_held_max <= StrBuilder::kGlobalDictDecideBlocks);
    CHECK(b.global_dictionary() == nullptr);
    CHECK(b.block_index() != nullptr);
    if (b.block_index()) index_bytes = b.block_index()->body_bytes();
    sketch = uint64_t(b.distinct_sketch().estimate());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage ru1;
  getrusage(RUSAGE_SELF, &ru1);
  const uint64_t peak_kib = reset ? status_kib("VmHWM:") : uint64_t(ru1.ru_maxrss);
  const double delta_mb = double(peak_kib - std::min(peak_kib, before_kib)) / 1024;
  CHECK(blocks == (rows + kBlockLanes - 1) / kBlockLanes && last_len == rows - (blocks - 1) * kBlockLanes);
  std::printf("  %llu rows in %.1f s: peak RSS %.1f MB over the start (%s; maxrss %ld -> %ld KiB), blocks %.2f B/row, index %.2f B/row, ~%llu distinct\n",
              (unsigned long long)rows, secs, delta_mb, reset ? "VmHWM after a reset" : "getrusage", ru0.ru_maxrss, ru1.ru_maxrss,
              double(payload + 64 * blocks) / double(rows), double(index_bytes) / double(rows), (unsigned long long)sketch);
  CHECK(std::fabs(double(sketch) - double(rows)) / double(rows) < 0.03);
  // Unstreamed, the blocks alone are 8 B/row and the index pairs another 8 (320 MB here).
  if (!kSanitized) CHECK(delta_mb < 200);
}

TEST_CASE("streaming and whole-column builds decode to the rows pushed (nulls, edge strings, partial last block)") {
  std::vector<std::string> edge = {"", std::string("\0", 1), "a", "abcdefgh", "abcdefghi", std::string(40, 'z'), "\xc3\xa9t\xc3\xa9",
                                   std::string(300, 'q') + "\xe6\x97\xa5"};  // UTF-8: a constant block's validator checks it
  std::vector<Model> models;
  for (size_t rows : {size_t(1), size_t(2048), size_t(2049), size_t(40 * 2048 + 17)}) {
    Model m(rows);
    for (size_t i = 0; i < rows; ++i)
      if (splitmix(i * 7 + rows) % 100 >= 12) m[i] = edge[splitmix(i) % edge.size()];
    models.push_back(std::move(m));
  }
  Model countries, names, ids;
  for (uint64_t i = 0; i < 50 * 2048 + 5; ++i) {
    countries.push_back(obs_country(i));
    names.push_back(obs_station_name(i));
    ids.push_back(obs_event_id(i));
  }
  models.push_back(countries);
  models.push_back(names);
  models.push_back(ids);
  for (const Model& m : models) {
    Streamed s = stream(m);
    Whole w = whole(m);
    CHECK(!s.finish_root);
    CHECK(s.in_order);
    CHECK(s.most_rows_ahead <= StrBuilder::kGlobalDictDecideBlocks * kBlockLanes);
    CHECK(s.builder->stats().blocks_held_max <= StrBuilder::kGlobalDictDecideBlocks);
    CHECK(s.blocks.size() == (m.size() + kBlockLanes - 1) / kBlockLanes);
    CellRef col = s.column();
    CHECK(col && column_matches(*col, m, s.ctx()));
    if (col) validate_column(*col, s.ctx());
    CHECK(w.root && column_matches(*w.root, m, w.ctx()));
    // The same distinct count and, below the decision window, the very same blocks.
    CHECK(s.builder->distinct_sketch().estimate() == w.builder->distinct_sketch().estimate());
    CHECK(s.builder->stats().per_block_bytes == w.builder->stats().per_block_bytes);
    if (s.blocks.size() <= StrBuilder::kGlobalDictDecideBlocks) CHECK(s.builder->stats().block_bytes == w.builder->stats().block_bytes);
  }
  // With neither global dictionary nor index, the measured per-block bytes are the blocks' own.
  StrBuilderOptions plain;
  plain.allow_global_dict = false;
  plain.allow_block_index = false;
  for (const Model* m : {&countries, &names, &ids, &models[3]}) {
    Streamed s = stream(*m, plain);
    CHECK(s.builder->stats().block_bytes == s.builder->stats().per_block_bytes);
    CHECK(count_enc(s.blocks, Enc::GlobalDict) == 0);
    CHECK(s.builder->stats().blocks_held_max == 0);  // nothing to decide: every block goes out at once
  }
  // Zero rows: no block, no root, the metablock accessors still answer.
  Streamed none = stream({});
  CHECK(none.blocks.empty() && !none.finish_root && none.builder->global_dictionary() == nullptr &&
        none.builder->block_index() == nullptr && none.builder->distinct_sketch().estimate() == 0);
}

TEST_CASE("early decision: global dictionary on obs country (200 skewed values), not on a unique column") {
  const uint64_t rows = 100 * 2048;
  Model countries;
  std::set<std::string> first_window;  // the values the decision sees
  for (uint64_t i = 0; i < rows; ++i) {
    countries.push_back(obs_country(i));
    if (i < StrBuilder::kGlobalDictDecideBlocks * kBlockLanes) first_window.insert(*countries.back());
  }
  Streamed s = stream(countries);
  const GlobalDictionary* g = s.builder->global_dictionary();
  CHECK(g != nullptr);
  if (!g) return;
  CHECK(g->size() == first_window.size() && first_window.size() <= 200);
  size_t k = 0;
  for (const std::string& v : first_window) CHECK(g->values.at(k++) == v);  // std::string orders bytes as unsigned
  // Codes into the dictionary: as global_huffman blocks (the code pays on 200 skewed values).
  CHECK(count_enc(s.blocks, Enc::GlobalDict) + count_enc(s.blocks, Enc::GlobalHuffman) == s.blocks.size());
  const StrColumnStats& st = s.builder->stats();
  CHECK(st.block_bytes + st.global_dict_bytes < st.per_block_bytes);
  CHECK(column_matches(*s.column(), countries, s.ctx()));
  Whole w = whole(countries);
  const StrColumnStats& wt = w.builder->stats();
  std::printf("  country: %.3f B/row streaming (decided on %llu blocks), %.3f whole-column, %.3f per-block only\n",
              double(st.block_bytes + st.global_dict_bytes) / rows, (unsigned long long)StrBuilder::kGlobalDictDecideBlocks,
              double(wt.block_bytes + wt.global_dict_bytes) / rows, double(st.per_block_bytes) / rows);
  CHECK(st.block_bytes + st.global_dict_bytes <= wt.block_bytes + wt.global_dict_bytes);

  Model names;
  for (uint64_t i = 0; i < rows; ++i) names.push_back(obs_station_name(i));
  Streamed sn = stream(names);
  Whole wn = whole(names);
  CHECK(sn.builder->global_dictionary() && sn.builder->global_dictionary()->size() == 10000);
  const StrColumnStats& a = sn.builder->stats();
  const StrColumnStats& b = wn.builder->stats();
  std::printf("  station_name: %.3f B/row streaming, %.3f whole-column\n", double(a.block_bytes + a.global_dict_bytes) / rows,
              double(b.block_bytes + b.global_dict_bytes) / rows);
  // The same dictionary either way; the whole-column build also measures its Huffman code over
  // all 100 blocks, where it pays (13.4 bits a row against 14, the lengths' 10^4 bytes amortized),
  // while 32 blocks do not repay the lengths: whole ≤ streamed.
  CHECK(a.block_bytes + a.global_dict_bytes >= b.block_bytes + b.global_dict_bytes);
  CHECK(count_enc(sn.blocks, Enc::GlobalDict) == sn.blocks.size());

  Model ids;
  for (uint64_t i = 0; i < 40 * 2048; ++i) ids.push_back(obs_event_id(i));
  Streamed u = stream(ids);
  CHECK(u.builder->global_dictionary() == nullptr);
  CHECK(count_enc(u.blocks, Enc::GlobalDict) + count_enc(u.blocks, Enc::GlobalHuffman) == 0);
  CHECK(u.builder->stats().global_dict_bytes == 0);
}

TEST_CASE("early decision: the dictionary is fixed; later blocks with a value outside it keep their own encoding") {
  // Blocks 0..31 draw from 300 "old" values; later blocks from the old values, except every third,
  // which also holds one new value.
  std::vector<std::string> old_values, new_values;
  for (int i = 0; i < 300; ++i) old_values.push_back("city-" + std::to_string(1000 + i) + "-north");
  for (int i = 0; i < 100; ++i) new_values.push_back("town-" + std::to_string(i));
  const uint64_t blocks = 60;
  Model m;
  std::vector<bool> has_new(blocks, false);
  std::set<std::string> new_used;
  for (uint64_t blk = 0; blk < blocks; ++blk)
    for (uint64_t r = 0; r < kBlockLanes; ++r) {
      const uint64_t i = blk * kBlockLanes + r;
      if (blk >= StrBuilder::kGlobalDictDecideBlocks && blk % 3 == 0 && r == 777) {
        m.push_back(new_values[blk % new_values.size()]);
        has_new[blk] = true;
        new_used.insert(m.back().value());
      } else if (splitmix(i) % 50 == 0) {
        m.push_back(std::nullopt);
      } else {
        m.push_back(old_values[splitmix(i + 99) % old_values.size()]);
      }
    }
  Streamed s = stream(m);
  CHECK(s.builder->global_dictionary() && s.builder->global_dictionary()->size() == old_values.size());
  CHECK(s.blocks.size() == blocks);
  for (uint64_t blk = 0; blk < blocks && blk < s.blocks.size(); ++blk) {
    const bool global = s.blocks[blk]->enc_v() == Enc::GlobalDict || s.blocks[blk]->enc_v() == Enc::GlobalHuffman;
    if (global == has_new[blk]) std::printf("  block %llu: %s\n", (unsigned long long)blk, enc_name(s.blocks[blk]->enc_v()));
    CHECK(global == !has_new[blk]);
  }
  CHECK(column_matches(*s.column(), m, s.ctx()));
  validate_column(*s.column(), s.ctx());
  // The whole-column build decides at finish with every value: all blocks switch.
  Whole w = whole(m);
  CHECK(w.builder->global_dictionary() && w.builder->global_dictionary()->size() == old_values.size() + new_used.size());
  CHECK(column_matches(*w.root, m, w.ctx()));
}

TEST_CASE("block index through spilled runs: the same body as in memory, lookups against the model") {
  // Pairs as StrBuilder adds them (block by block), 5000 values over 400 blocks.
  std::map<uint64_t, std::set<uint32_t>> truth;
  BlockIndex::Builder mem, spilled("", 1000);
  for (uint32_t blk = 0; blk < 400; ++blk)
    for (int k = 0; k < 120; ++k) {
      const uint64_t h = hash_int(int64_t(splitmix(blk * 1000 + k) % 5000));
      mem.add(h, blk);
      spilled.add(h, blk);
      truth[h].insert(blk);
    }
  CHECK(mem.runs_spilled() == 0);
  CHECK(spilled.runs_spilled() >= 40);
  CHECK(spilled.pairs() <= mem.pairs());
  const BlockIndex a = mem.finish(400), b = spilled.finish(400);
  CHECK(a.encode() == b.encode());
  uint64_t entries = 0;
  for (auto& [h, blocks] : truth) {
    entries += blocks.size();
    const auto got = b.lookup(h);
    for (uint32_t blk : blocks) CHECK(std::binary_search(got.begin(), got.end(), blk));
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end() && std::is_sorted(got.begin(), got.end()));
  }
  CHECK(b.entries() <= entries && b.entries() + 50 >= entries);  // fingerprint collisions merge a few
  CHECK(spilled.pairs() == 0 && spilled.runs_spilled() == 0);

  // Blocks in any order, each pair twice, runs cut mid-block: still exact lookups.
  BlockIndex::Builder shuffled("", 777);
  for (int rep = 0; rep < 2; ++rep)
    for (uint32_t j = 0; j < 400; ++j) {
      const uint32_t blk = uint32_t((j * 151 + rep * 7) % 400);
      for (int k = 0; k < 120; ++k) shuffled.add(hash_int(int64_t(splitmix(blk * 1000 + k) % 5000)), blk);
    }
  const BlockIndex c = shuffled.finish(400);
  CHECK(BlockIndex::decode(c.encode().data(), c.encode().size()).entries() == c.entries());
  for (auto& [h, blocks] : truth) {
    const auto got = c.lookup(h);
    for (uint32_t blk : blocks) CHECK(std::binary_search(got.begin(), got.end(), blk));
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
  }

  // Through StrBuilder: a tiny run size gives the default build's body, byte for byte.
  Model ids;
  for (uint64_t i = 0; i < 150 * 2048 + 99; ++i) ids.push_back(obs_event_id(i));
  StrBuilderOptions tiny;
  tiny.index_run_pairs = 5000;
  Streamed s = stream(ids, tiny);
  Whole w = whole(ids);
  CHECK(s.builder->block_index() && w.builder->block_index());
  if (s.builder->block_index() && w.builder->block_index()) {
    CHECK(s.builder->block_index()->encode() == w.builder->block_index()->encode());
    uint64_t misses = 0;
    for (uint64_t i = 0; i < ids.size(); i += 7) {
      const auto got = s.builder->block_index()->lookup(std::string_view(*ids[i]));
      misses += !std::binary_search(got.begin(), got.end(), uint32_t(i / kBlockLanes));
    }
    CHECK(misses == 0);
    std::printf("  spilled in runs of 5000 pairs: index %.2f B/row over %llu blocks\n",
                double(s.builder->block_index()->body_bytes()) / double(ids.size()), (unsigned long long)s.builder->block_index()->block_count());
    const std::vector<uint8_t> body = s.builder->block_index()->take_body();
    CHECK(body == w.builder->block_index()->encode());
    CHECK(s.builder->block_index()->body_bytes() == 0);
  }

  // The spill directory is the option's: one that does not exist fails when the first run goes out.
  StrBuilderOptions bad;
  bad.index_run_pairs = 100;
  bad.spill_dir = "/nonexistent-dir-for-tet-test";
  StrBuilder sb(bad);
  CHECK_THROWS_CODE(for (uint64_t i = 0; i < 3 * 2048; ++i) sb.push(*ids[i]), "TET_IO_OPEN");
}

TEST_CASE("TableSet streams str columns to the region: values, global dictionary and block index read back") {
  // 70 blocks + 300 rows of (country, event_id, a nullable str), appended in uneven batches.
  const uint64_t rows = 70 * 2048 + 300;
  Model country, event, note;
  for (uint64_t i = 0; i < rows; ++i) {
    country.push_back(obs_country(i));
    event.push_back(obs_event_id(i));
    if (splitmix(i ^ 0x55) % 10) note.push_back("n" + std::to_string(splitmix(i) % 5));
    else note.push_back(std::nullopt);
  }
  const Model* models[3] = {&country, &event, &note};
  char dir[] = "/tmp/tet-stream-XXXXXX";
  CHECK(::mkdtemp(dir) != nullptr);
  std::vector<uint8_t> region;
  {
    tet::TableSet ts(dir);
    const uint32_t t = ts.add_table("obs", "", kNoAxis,
                                    {ColumnSchema{"country", Kind::Str}, ColumnSchema{"event_id", Kind::Str}, ColumnSchema{"note", Kind::Str}});
    for (uint64_t at = 0, n = 1; at < rows; at += n, n = std::min<uint64_t>(n * 3 + 1, 5000)) {  // batches across block ends
      n = std::min(n, rows - at);
      std::string bytes[3];
      std::vector<uint32_t> offs[3];
      std::vector<uint8_t> valid[3];
      std::vector<tet::ColumnBatch> batches(3);
      for (int c = 0; c < 3; ++c) {
        offs[c].push_back(0);
        for (uint64_t i = at; i < at + n; ++i) {
          const auto& v = (*models[c])[i];
          if (v) bytes[c] += *v;
          offs[c].push_back(uint32_t(bytes[c].size()));
          valid[c].push_back(v ? 1 : 0);
        }
        batches[c].data = bytes[c].data();
        batches[c].offsets = offs[c].data();
        batches[c].bytes_len = bytes[c].size();
        batches[c].valid = valid[c].data();
        batches[c].rows = n;
        batches[c].elem_bytes = 1;
      }
      ts.append(t, batches);
    }
    ts.write([&](const void* p, size_t len) { region.insert(region.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + len); });
  }
  ::rmdir(dir);  // empty: the spool and the spills were unlinked temp files
  tet::AlignedBuffer buf(region.size(), 64);
  std::memcpy(buf.data(), region.data(), region.size());
  TablesRegion r(buf.data(), region.size());
  CHECK(r.tables().size() == 1 && r.tables()[0].rows == rows);
  for (int c = 0; c < 3; ++c) {
    CellRef root = r.column(0, size_t(c));
    CHECK(root && column_matches(*root, *models[c], r.context(0, size_t(c))));
    std::set<uint16_t> kinds;
    for (const MetablockRef& mb : r.metablocks(0, size_t(c))) {
      kinds.insert(mb.kind);
      if (mb.kind == uint16_t(MetablockKind::GlobalDictionary)) {
        const GlobalDictionary g = GlobalDictionary::decode(mb.body, mb.len);
        std::set<std::string> want;
        for (const auto& v : *models[c])
          if (v) want.insert(*v);
        CHECK(g.size() == want.size());
      }
      if (mb.kind == uint16_t(MetablockKind::BlockIndex)) {
        const BlockIndex ix = BlockIndex::decode(mb.body, mb.len);
        uint64_t misses = 0;
        for (uint64_t i = 0; i < rows; i += 13) {
          const auto got = ix.lookup(std::string_view(*(*models[c])[i]));
          misses += !std::binary_search(got.begin(), got.end(), uint32_t(i / kBlockLanes));
        }
        CHECK(misses == 0);
      }
    }
    const bool sketch = kinds.count(uint16_t(MetablockKind::DistinctSketch)) != 0;
    const bool dict = kinds.count(uint16_t(MetablockKind::GlobalDictionary)) != 0;
    const bool index = kinds.count(uint16_t(MetablockKind::BlockIndex)) != 0;
    CHECK(sketch);
    // country: 200 skewed values pay for a dictionary; note's 5 (with nulls) too, once Huffman
    // coded: 2.4 bits a present row against 3 for a block's own dict or global_dict.
    CHECK(dict == (c != 1));
    CHECK(index == (c == 1));  // event_id: unique
    if (c == 0) CHECK(r.encodings_used(0, 0) == (1u << unsigned(Enc::GlobalHuffman)));
  }
}

TEST_MAIN()
