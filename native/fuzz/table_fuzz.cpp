// libFuzzer target: the `where` wire and table queries (spec tables_and_filters.md §4) over a
// fixed tables region (built at start-up with the cell builders: int / float with NaN and nulls /
// dictionary str / bool / timestamp columns, 5,000 rows in 3 blocks). An input is
//   u8 mode, u8 op, u8 key, u8 transform, u8 limit, then a "TWHR" where wire (cells/where_wire.h)
// which is decoded against the table (every decode error is fine), then run as a reduction (op
// picked from the registry's ops, optionally grouped by a key with a bucket / width, or with
// row groups as tensor group_by asks), or as a `columns` query with a limit and an order. Any
// tet::Error is an answer; anything else (a crash, a sanitizer report, another exception) is a
// finding.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cells/builders.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "cells/where_wire.h"
#include "fuzz/fuzz_common.h"
#include "query/table_query.h"
#include "tet/error.h"

using namespace tet;
using namespace tet::cells;

namespace {

constexpr uint64_t kRows = 5000;
enum : uint32_t { CI, CF, CS, CB, CT };  // column indices

struct Region {
  std::vector<uint8_t> buf;
  uint8_t* p = nullptr;
  uint64_t len = 0;
  std::unique_ptr<TablesRegion> region;
};

Region& region() {
  static Region r = [] {
    Region out;
    RegionWriter w(memory_spool());
    const uint32_t t = w.add_table("t", "", kNoAxis,
                                   {ColumnSchema{"i", Kind::Int}, ColumnSchema{"f", Kind::Float}, ColumnSchema{"s", Kind::Str},
                                    ColumnSchema{"b", Kind::Bool}, ColumnSchema{"ts", Kind::Timestamp}});
    std::vector<int64_t> iv(kRows), tv(kRows);
    std::vector<double> fv(kRows);
    std::vector<uint8_t> bv(kRows), ok(kRows), fok(kRows);
    std::vector<std::string> words(kRows);
    for (uint64_t k = 0; k < kRows; ++k) {
      iv[k] = int64_t(k * 7919 % 1013) - 500;
      fv[k] = k % 97 == 0 ? NAN : double(k % 41) / 4 - 3;
      bv[k] = k % 3 == 0;
      ok[k] = k % 13 != 0;
      fok[k] = k % 17 != 0;
      words[k] = "w" + std::to_string(k % 29);
      tv[k] = int64_t(1577836800000000) + int64_t(k) * 3600000000;
    }
    IntBuilder ib(Kind::Int);
    ib.push_many(iv.data(), ok.data(), kRows);
    w.add_column(t, CI, *ib.finish());
    FloatBuilder fb;
    fb.push_many(fv.data(), fok.data(), kRows);
    w.add_column(t, CF, *fb.finish());
    std::vector<std::string_view> sv(words.begin(), words.end());
    StrBuilder sb;
    sb.push_many(sv.data(), sv.size(), ok.data());
    CellRef root = sb.finish();
    w.add_column(t, CS, *root);
    if (const GlobalDictionary* g = sb.global_dictionary()) w.add_metablock(t, CS, MetablockKind::GlobalDictionary, g->encode());
    if (BlockIndex* ix = sb.block_index()) w.add_metablock(t, CS, MetablockKind::BlockIndex, ix->take_body());
    BoolBuilder bb;
    bb.push_many(bv.data(), nullptr, kRows);
    w.add_column(t, CB, *bb.finish());
    IntBuilder tb(Kind::Timestamp);
    tb.push_many(tv.data(), nullptr, kRows);
    w.add_column(t, CT, *tb.finish());
    std::vector<uint8_t> bytes;
    w.write([&](const void* p, size_t n) {
      const auto* b = static_cast<const uint8_t*>(p);
      bytes.insert(bytes.end(), b, b + n);
    });
    out.buf.resize(bytes.size() + 64);
    out.p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(out.buf.data()) + 63) & ~uintptr_t(63));
    std::memcpy(out.p, bytes.data(), bytes.size());
    out.len = bytes.size();
    out.region = std::make_unique<TablesRegion>(out.p, out.len);
    return out;
  }();
  return r;
}

const Op kOps[] = {Op::Count, Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Var, Op::Std, Op::NanMean, Op::NanCount,
                   Op::NullCount, Op::Median, Op::Quantile, Op::Histogram, Op::ArgMin, Op::NormL2};

void write_seeds(const char* out) {
  const TableInfo& t = region().region->tables()[0];
  uint32_t n = 0;
  auto lit_i = [](int64_t v) { return Literal::of_int(v); };
  std::vector<std::vector<Predicate>> wheres;
  wheres.push_back({});
  Predicate p;
  p.column = CI, p.op = WhereOp::Lt, p.value = lit_i(10);
  wheres.push_back({p});
  Predicate q;
  q.column = CS, q.op = WhereOp::In, q.set = {Literal::of_str("w3"), Literal::of_str("w7")};
  wheres.push_back({p, q});
  Predicate r;
  r.column = CF, r.op = WhereOp::Range, r.lo = Literal::of_float(-1), r.hi = Literal::of_float(2);
  wheres.push_back({r});
  Predicate s;
  s.column = CT, s.op = WhereOp::Ge, s.value = lit_i(int64_t(1577836800000000) + int64_t(2000) * 3600000000);
  wheres.push_back({s});
  Predicate u;
  u.column = CS, u.op = WhereOp::Prefix, u.value = Literal::of_str("w1");
  Predicate v;
  v.column = CF, v.op = WhereOp::IsNull, v.flag = true;
  wheres.push_back({u, v});
  for (const auto& w : wheres) {
    const std::vector<uint8_t> wire = encode_where_wire(t, w);
    for (uint8_t mode = 0; mode < 4; ++mode)
      for (uint8_t key : {uint8_t(CS), uint8_t(CI), uint8_t(CT)}) {
        std::vector<uint8_t> b{mode, uint8_t(n % 15), key, uint8_t(key == CT ? 1 : key == CI ? 2 : 0), 20};
        b.insert(b.end(), wire.begin(), wire.end());
        tet_fuzz::write_bytes(std::string(out) + "/table-" + std::to_string(n++), b.data(), b.size());
      }
  }
  std::printf("table_fuzz: wrote %u seeds to %s\n", n, out);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)region();
  tet_fuzz::write_seeds_and_exit_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const TablesRegion& reg = *region().region;
  const TableInfo& t = reg.tables()[0];
  std::vector<uint8_t> wire(data + 5, data + size);  // own copy: ASan flags reads past the end
  query::TableQueryPlan plan;
  try {
    plan.where = decode_where_wire(t, wire.data(), wire.size());
  } catch (const Error&) {
    return 0;
  }
  plan.has_where = !plan.where.empty();
  const uint8_t mode = data[0] % 4, key = data[2] % 5, transform = data[3];
  plan.op = kOps[data[1] % (sizeof(kOps) / sizeof(kOps[0]))];
  plan.column = data[1] % 5;
  plan.count_rows = data[1] % 7 == 0;
  plan.q = double(data[4] % 101) / 100;
  plan.bins = 1 + data[4] % 9;
  if (mode == 3) {
    plan.mode = query::TableQueryPlan::Mode::Rows;
    plan.columns = {CI, CS, size_t(key)};
    plan.limit = data[4];
    plan.offset = data[3] % 7;
    plan.order_by = {{size_t(key), (transform & 1) != 0}};
    if (transform & 2) plan.order_by.push_back({CF, false});
  } else if (mode >= 1) {
    query::GroupKey g;
    g.column = key;
    switch (transform % 4) {
      case 1: g.transform = query::KeyTransform::Bucket, g.bucket = query::TimeBucket(data[4] % 5); break;
      case 2: g.transform = query::KeyTransform::WidthInt, g.width_int = 1 + data[4] % 50; break;
      case 3: g.transform = query::KeyTransform::WidthFloat, g.width_float = 0.25 * (1 + data[4] % 8); break;
      default: break;
    }
    plan.group_by.push_back(g);
    if (mode == 2 && (transform & 4)) plan.group_by.push_back(query::GroupKey{CB});
    plan.row_groups = mode == 2 && plan.where.empty();
  }
  query::ExecLimits limits;
  limits.threads = 1 + data[4] % 2;
  limits.memory_budget_bytes = (transform & 8) ? 4096 : 0;
  try {
    const query::TableQueryResult r = query::run_table_query(reg, plan, limits);
    if (plan.row_groups) {
      if (r.row_groups.size() != kRows) std::abort();
      for (uint32_t g : r.row_groups)
        if (g >= r.group_counts.size()) std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}
