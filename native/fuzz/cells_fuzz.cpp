// libFuzzer target: a tables region (docs/format-tables.md) through cells::TablesRegion, then
// every column loaded (each block validated; a run directory expanded) and decoded whole and in a
// range, every metablock
// of a known kind decoded. The structure checksum is recomputed over the input first, so the
// fuzzer gets past it and exercises the field checks behind it. Errors are fine; crashes,
// out-of-bounds reads and leaks are not.
#include <cstring>

#include "cells/column.h"
#include "cells/builders.h"
#include "cells/kernels.h"
#include "cells/str_kernels.h"
#include "cells/metablocks.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "fuzz/fuzz_common.h"
#include "util/checked.h"
#include "util/xxh64.h"

namespace {

using namespace tet::cells;

void reseal(std::vector<uint8_t>& b) {
  if (b.size() < 64) return;
  const uint64_t cells_off = tet::load_u64le(b.data() + 32), cells = tet::load_u64le(b.data() + 24);
  uint64_t end;
  if (cells > b.size() / 64 || tet::add_overflows(cells_off, cells * 64, &end) || end > b.size() || end < 64) return;
  tet::Xxh64Stream h;
  h.update(b.data(), 56);
  h.update(b.data() + 64, end - 64);
  tet::store_u64le(b.data() + 56, h.digest());
}

void exercise(const TablesRegion& r) {
  for (size_t t = 0; t < r.tables().size(); ++t) {
    for (size_t c = 0; c < r.tables()[t].columns.size(); ++c) {
      try {
        for (const MetablockRef& m : r.metablocks(t, c)) {
          if (m.kind == static_cast<uint16_t>(MetablockKind::DistinctSketch)) (void)DistinctSketch::decode(m.body, m.len).estimate();
          if (m.kind == static_cast<uint16_t>(MetablockKind::BlockIndex)) (void)BlockIndex::decode(m.body, m.len).lookup(uint64_t(7));
        }
        CellRef root = r.column(t, c);
        if (!root) continue;
        const uint64_t n = std::min<uint64_t>(root->len, 1u << 16);
        std::vector<uint8_t> valid(n);
        const DecodeContext& ctx = r.context(t, c);
        switch (physical_of(root->kind_v())) {
          case Physical::Str: {
            StrBuffer s;
            decode_column(*root, 0, n, &s, valid.data(), ctx);
            for (uint64_t b = 0; b < block_count(*root) && b < 32; ++b) {
              BlockMask mask;
              StrPredicate p;
              p.op = StrOp::Lt, p.literal = "B";
              compare(block_at(*root, b), p, mask, ctx);
              filter(block_at(*root, b), mask, s, ctx);
              (void)min_max(block_at(*root, b), ctx);
            }
            if (root->len > 3) {
              s.clear();
              decode_column(*root, 1, root->len - 2 < n ? root->len - 2 : n, &s, nullptr, ctx);
            }
            break;
          }
          case Physical::Bool: {
            std::vector<uint8_t> v(n);
            decode_column(*root, 0, n, v.data(), valid.data(), ctx);
            break;
          }
          default: {
            std::vector<int64_t> v(n);  // f64 lanes are 8 bytes too
            decode_column(*root, 0, n, v.data(), valid.data(), ctx);
            if (physical_of(root->kind_v()) == Physical::Int) {
              TierScratch scratch;
              (void)column_sum_int(root.get(), scratch);
              (void)column_compare_int(root.get(), CmpOp::Lt, 99000, scratch);
            }
            if (root->len > 3) decode_column(*root, 1, root->len - 2 < n ? root->len - 2 : n, v.data(), nullptr, ctx);
            break;
          }
        }
      } catch (const tet::Error&) {
      }
    }
  }
}

std::vector<uint8_t> sample_region() {
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("obs", "", kNoAxis,
                                 {ColumnSchema{"i", Kind::Int}, ColumnSchema{"f", Kind::Float}, ColumnSchema{"b", Kind::Bool},
                                  ColumnSchema{"s", Kind::Str}, ColumnSchema{"ts", Kind::Timestamp},
                                  // run directory, piecewise sequence, sparse bool (run_directory.h, ...)
                                  ColumnSchema{"hours", Kind::Timestamp}, ColumnSchema{"wrap", Kind::Int}, ColumnSchema{"qc", Kind::Bool},
                                  // for_radix, global_huffman
                                  ColumnSchema{"p", Kind::Int}, ColumnSchema{"c", Kind::Str}});
  IntBuilder ib;
  FloatBuilder fb;
  BoolBuilder bb;
  StrBuilder sb;
  IntBuilder tb(Kind::Timestamp), hb(Kind::Timestamp), wb;
  BoolBuilder qb;
  IntBuilder pb;  // pressure-like: a range of 5000, for_radix blocks
  StrBuilder cb;  // country-like: skewed codes, global_huffman blocks (dictionary body version 2)
  for (int64_t i = 0; i < 4500; ++i) {
    hb.push(1577836800000000 + (i / 700) * 3600000000);
    if (i % 31 == 0) wb.push_null(); else wb.push(i % 1000);
    qb.push(i % 97 != 5);
    const uint64_t h = uint64_t(i) * 0x9E3779B97F4A7C15ull;
    if (i % 61 == 0) pb.push_null(); else pb.push(98000 + int64_t((h >> 20) % 5000));
    static const char* const kCountries[] = {"AA", "AB", "AC", "AD", "BA", "BB", "CA", "DE", "FR", "ZZ"};
    const unsigned k = unsigned((h >> 40) % 1024);
    if (i % 53 == 0) cb.push_null(); else cb.push(kCountries[k < 512 ? 0 : k < 768 ? 1 : k < 896 ? 2 : 3 + k % 7]);
    if (i % 97 == 0) ib.push_null(); else ib.push(i < 2048 ? i : (i * 7919) % 1000);
    if (i % 89 == 0) fb.push_null(); else fb.push(i % 5 == 0 ? 0.5 : double(i) / 10);
    bb.push(i % 3 == 0);
    static const char* const kWords[] = {"DE", "FR", "a-much-longer-string-value", ""};
    if (i % 101 == 0) sb.push_null(); else sb.push(i < 2048 ? kWords[i % 4] : std::string_view("E0123456789abcdef").substr(0, 1 + i % 16));
    tb.push(1600000000000000 + i * 1000);
  }
  w.add_column(t, 0, *ib.finish());
  w.add_column(t, 1, *fb.finish());
  w.add_column(t, 2, *bb.finish());
  CellRef s = sb.finish();
  w.add_column(t, 3, *s);
  if (const GlobalDictionary* g = sb.global_dictionary()) w.add_metablock(t, 3, MetablockKind::GlobalDictionary, g->encode());
  w.add_metablock(t, 3, MetablockKind::DistinctSketch, sb.distinct_sketch().encode());
  w.add_column(t, 4, *tb.finish());
  w.add_column(t, 5, *hb.finish());
  w.add_column(t, 6, *wb.finish());
  w.add_column(t, 7, *qb.finish());
  w.add_column(t, 8, *pb.finish());
  CellRef c = cb.finish();
  w.add_column(t, 9, *c);
  if (const GlobalDictionary* g = cb.global_dictionary()) w.add_metablock(t, 9, MetablockKind::GlobalDictionary, g->encode());
  std::vector<uint8_t> out;
  w.write([&](const void* p, size_t n) { out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); });
  return out;
}

void write_seeds(const char* out) {
  std::vector<uint8_t> r = sample_region();
  tet_fuzz::write_bytes(std::string(out) + "/region-sample", r.data(), r.size());
  std::vector<uint8_t> aligned(r.size() + 64);
  uint8_t* p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(aligned.data()) + 63) & ~uintptr_t(63));
  std::memcpy(p, r.data(), r.size());
  const TablesRegion region(p, r.size());
  std::printf("cells_fuzz: wrote 1 region seed to %s (encodings used, by column:", out);
  for (size_t c = 0; c < region.tables()[0].columns.size(); ++c) std::printf(" %#x", region.encodings_used(0, c));
  std::printf(")\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  // 64-aligned copy (a mapping's alignment), checksum recomputed.
  std::vector<uint8_t> buf(size + 64);
  uint8_t* p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t(63));
  std::vector<uint8_t> copy(data, data + size);
  reseal(copy);
  if (size) std::memcpy(p, copy.data(), size);
  try {
    TablesRegion r(p, size);
    exercise(r);
  } catch (const tet::Error&) {
  }
  return 0;
}
