// Table queries on the obs shape (bench/lib/obs.mjs: 10^4 stations, 200 skewed countries, temp_c
// with 1 row in 200 null, pressure_pa = 98000 + splitmix(3i) % 5000): Q3a mean(temp_c) group by
// country, Q3b mean(temp_c) group by station_id, Q2a sum(pressure_pa) where country = 'AA', Q2b
// sum(pressure_pa) where pressure_pa < 98100, at 1 and 2 threads. Prints the best time of each and a digest of the result bits
// (the groups' keys, counts and values), so two builds can be checked for identical results;
// best of 11 runs, wall time and CPU time (all threads).
// Not a test; build by hand against the core objects, e.g.
//   g++ -std=c++17 -O3 -Inative/include -Inative -Inative/tests native/tests/table_query_bench.cpp
//       cmake-build/release/libtet_core.a cmake-build/release/libtet_zstd.a -lpthread -o /tmp/tqb
//   /tmp/tqb [rows = 10000000] [queries = ab: a Q3a, b Q3b, c Q2a, d Q2b] [runs = 11]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cells/builders.h"
#include "cells/region.h"
#include "cells/str_builder.h"
#include "query/table_query.h"
#include "region_bytes.h"

using namespace tet;
using namespace tet::cells;
using namespace tet::query;

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU seconds of the process (every thread): on a shared machine the wall time of a run varies
// with the other load, the CPU time it needs much less.
double cpu_s() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// FNV-1a over the result's keys, counts and value bits.
uint64_t digest(const TableQueryResult& r) {
  uint64_t h = 1469598103934665603ULL;
  auto eat = [&](const void* p, size_t n) {
    for (size_t k = 0; k < n; ++k) h = (h ^ static_cast<const uint8_t*>(p)[k]) * 1099511628211ULL;
  };
  for (const ValueColumn& k : r.group_keys) {
    eat(k.i.data(), k.i.size() * 8);
    for (size_t j = 0; j < k.s.size(); ++j) eat(k.s.at(j).data(), k.s.at(j).size());
  }
  eat(r.group_counts.data(), r.group_counts.size() * 8);
  eat(r.values.f.data(), r.values.f.size() * 8);
  eat(r.values.wide.data(), r.values.wide.size() * sizeof(r.values.wide[0]));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  const char* only = argc > 2 ? argv[2] : "ab";  // the queries to run: a (Q3a), b (Q3b), c (Q2a), d (Q2b)
  const int reps = argc > 3 ? std::atoi(argv[3]) : 11;
  constexpr uint64_t kStations = 10000, kRowsPerHour = 10000;
  const int sin_tenths[24] = {0, 26, 50, 71, 87, 97, 100, 97, 87, 71, 50, 26, 0, -26, -50, -71, -87, -97, -100, -97, -87, -71, -50, -26};
  std::vector<std::string> country(kStations);
  std::vector<int64_t> bias(kStations);
  for (uint64_t s = 0; s < kStations; ++s) {
    const double u = double(splitmix(s)) / 18446744073709551616.0;
    const unsigned k = unsigned(200 * (u * u));
    country[s] = {char('A' + k / 26), char('A' + k % 26)};
    bias[s] = int64_t(splitmix(s) % 200);
  }
  std::vector<int64_t> station(rows);
  std::vector<std::string_view> ctry(rows);
  std::vector<double> temp(rows);
  std::vector<uint8_t> temp_ok(rows);
  std::vector<int64_t> pressure(rows);
  for (uint64_t i = 0; i < rows; ++i) {
    const uint64_t s = i % kStations, hour = i / kRowsPerHour;
    station[i] = int64_t(s);
    ctry[i] = country[s];
    temp_ok[i] = splitmix(7 * i) % 200 != 0;
    const int64_t tenths = 50 + sin_tenths[hour % 24] + bias[s] + int64_t(splitmix(i) % 100) - 50;
    temp[i] = temp_ok[i] ? double(tenths) / 10 : 0.0;
    pressure[i] = 98000 + int64_t(splitmix(3 * i) % 5000);
  }
  RegionWriter w(memory_spool());
  const uint32_t t = w.add_table("obs", "", kNoAxis,
                                 {ColumnSchema{"station_id", Kind::Int}, ColumnSchema{"country", Kind::Str}, ColumnSchema{"temp_c", Kind::Float},
                                  ColumnSchema{"pressure_pa", Kind::Int}});
  {
    IntBuilder b(Kind::Int);
    b.push_many(station.data(), nullptr, rows);
    w.add_column(t, 0, *b.finish());
  }
  {
    StrBuilder b;
    b.push_many(ctry.data(), rows, nullptr);
    CellRef root = b.finish();
    w.add_column(t, 1, *root);
    if (const GlobalDictionary* g = b.global_dictionary()) w.add_metablock(t, 1, MetablockKind::GlobalDictionary, g->encode());
    if (BlockIndex* ix = b.block_index()) w.add_metablock(t, 1, MetablockKind::BlockIndex, ix->take_body());
  }
  {
    FloatBuilder b;
    b.push_many(temp.data(), temp_ok.data(), rows);
    w.add_column(t, 2, *b.finish());
  }
  {
    IntBuilder b(Kind::Int);
    b.push_many(pressure.data(), nullptr, rows);
    w.add_column(t, 3, *b.finish());
  }
  tet_test::AlignedBytes bytes(tet_test::region_bytes(w));
  TablesRegion region(bytes.p, bytes.len);

  struct Query { const char* name; char id; size_t key; };
  const Query queries[] = {{"Q3a mean(temp_c) by country", 'a', 1}, {"Q3b mean(temp_c) by station_id", 'b', 0},
                           {"Q2a sum(pressure_pa) where country=AA", 'c', 0}, {"Q2b sum(pressure_pa) where p<98100", 'd', 0}};
  for (const auto& qd : queries) {
    if (!std::strchr(only, qd.id)) continue;
    TableQueryPlan p;
    if (qd.id == 'a' || qd.id == 'b') {
      p.op = Op::Mean;
      p.column = 2;
      GroupKey g;
      g.column = qd.key;
      p.group_by = {g};
    } else {
      p.op = Op::Sum;
      p.column = 3;
      cells::Predicate pr;
      if (qd.id == 'c') pr.column = 1, pr.op = cells::WhereOp::Eq, pr.value = cells::Literal::of_str("AA");
      else pr.column = 3, pr.op = cells::WhereOp::Lt, pr.value = cells::Literal::of_int(98100);
      p.where = {pr};
      p.has_where = true;
    }
    for (uint32_t threads : {1u, 2u}) {
      double best = 1e30, best_cpu = 1e30;
      uint64_t d = 0;
      size_t groups = 0;
      for (int rep = 0; rep < reps; ++rep) {
        const double t0 = now_s(), c0 = cpu_s();
        const TableQueryResult r = run_table_query(region, p, ExecLimits{threads, 0});
        const double dt = now_s() - t0, dc = cpu_s() - c0;
        best = dt < best ? dt : best;
        best_cpu = dc < best_cpu ? dc : best_cpu;
        d = digest(r), groups = r.group_counts.size();
      }
      std::printf("%-34s threads %u: %8.1f ms wall, %8.1f ms cpu  (%zu groups, digest %016llx)\n", qd.name, threads, best * 1e3,
                  best_cpu * 1e3, groups,
                  static_cast<unsigned long long>(d));
    }
  }
  return 0;
}
