// Runs the conformance cases (../shared/conformance/cases.json, expected values computed
// independently with numpy) that use numeric selections and axes directly against tet::execute
// on the real fixture files, through tet::File (both parallel chunks and linear scan).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "tet/error.h"
#include "tet/file.h"
#include "tet/query.h"
#include "util/json.h"

using namespace tet;

namespace {

const std::string kConformance = std::string(TET_SOURCE_DIR) + "/../shared/conformance/";

const std::map<std::string, Op> kOps = {
    {"sum", Op::Sum}, {"mean", Op::Mean}, {"min", Op::Min}, {"max", Op::Max}, {"count", Op::Count},
    {"var", Op::Var}, {"std", Op::Std}, {"product", Op::Product}, {"norm_l1", Op::NormL1},
    {"norm_l2", Op::NormL2}, {"all_finite", Op::AllFinite}, {"any_nan", Op::AnyNan}, {"any_inf", Op::AnyInf},
    {"arg_min", Op::ArgMin}, {"arg_max", Op::ArgMax}, {"nan_count", Op::NanCount}, {"inf_count", Op::InfCount},
    {"median", Op::Median}, {"quantile", Op::Quantile}, {"histogram", Op::Histogram},
    {"covariance", Op::Covariance}, {"correlation", Op::Correlation}};
const std::map<std::string, std::string> kScalarField = {
    {"sum", "operation_sum"}, {"mean", "operation_mean"}, {"min", "operation_min"}, {"max", "operation_max"},
    {"count", "operation_element_count"}, {"var", "operation_var"}, {"std", "operation_std"},
    {"product", "operation_product"}, {"norm_l1", "operation_norm_l1"}, {"norm_l2", "operation_norm_l2"},
    {"all_finite", "operation_all_finite"}, {"any_nan", "operation_any_nan"}, {"any_inf", "operation_any_inf"},
    {"arg_min", "operation_argmin_index"}, {"arg_max", "operation_argmax_index"}, {"median", "operation_median"},
    {"quantile", "operation_quantile"}, {"nan_count", "operation_nan_count"}, {"inf_count", "operation_inf_count"},
    {"histogram", "operation_histogram_counts"}, {"covariance", "operation_covariance"},
    {"correlation", "operation_correlation"}};
const std::map<std::string, std::string> kPartialField = {
    {"sum", "operation_reduced_sum"}, {"mean", "operation_reduced_mean"}, {"min", "operation_reduced_min"},
    {"max", "operation_reduced_max"}, {"count", "operation_reduced_count"}, {"var", "operation_reduced_var"},
    {"std", "operation_reduced_std"}, {"product", "operation_reduced_product"},
    {"norm_l1", "operation_reduced_norm_l1"}, {"norm_l2", "operation_reduced_norm_l2"},
    {"all_finite", "operation_reduced_all_finite"}, {"any_nan", "operation_reduced_any_nan"},
    {"any_inf", "operation_reduced_any_inf"}, {"arg_min", "operation_reduced_argmin"},
    {"arg_max", "operation_reduced_argmax"}, {"median", "operation_reduced_median"},
    {"quantile", "operation_reduced_quantile"}, {"nan_count", "operation_reduced_nan_count"},
    {"inf_count", "operation_reduced_inf_count"}, {"histogram", "operation_reduced_histogram_counts"}};

bool int_axis(const JsonValue& v, uint32_t* out) {
  uint64_t u;
  if (v.kind != JsonValue::Kind::Number || !v.as_u64(&u)) return false;
  *out = uint32_t(u);
  return true;
}

// Axis spec -> mask; false when the spec uses names (not handled here).
bool axes_mask(const JsonValue* spec, uint32_t ndim, uint32_t* mask) {
  *mask = (1u << ndim) - 1;
  if (spec == nullptr) return true;
  uint32_t a;
  if (spec->is_array()) {
    if (spec->items.empty()) return true;
    *mask = 0;
    for (const auto& it : spec->items) {
      if (!int_axis(it, &a) || a >= ndim) return false;
      *mask |= 1u << a;
    }
    return true;
  }
  if (!int_axis(*spec, &a) || a >= ndim) return false;
  *mask = 1u << a;
  return true;
}

double num(const JsonValue& v) { return std::strtod(v.text.c_str(), nullptr); }

struct Outcome {
  int run = 0, passed = 0, skipped = 0, linear = 0;
};

// Compare one produced value with the expected JSON value under the case's compare spec.
bool value_ok(const QueryResult& r, uint64_t i, const JsonValue& exp, const JsonValue* cmp) {
  std::string mode = "exact", repr;
  double rtol = 0, atol = 0;
  if (cmp) {
    if (const JsonValue* m = cmp->find("mode")) mode = m->text;
    if (const JsonValue* m = cmp->find("rtol")) rtol = num(*m);
    if (const JsonValue* m = cmp->find("atol")) atol = num(*m);
    if (const JsonValue* m = cmp->find("repr"); m && m->is_string()) repr = m->text;
  }
  const uint8_t* p = r.values.bytes.data() + i * (r.values.kind == ValueKind::Bool ? 1 : 8);
  if (exp.kind == JsonValue::Kind::Bool) return r.values.kind == ValueKind::Bool && bool(*p) == exp.boolean;
  if (exp.kind != JsonValue::Kind::Number) return false;
  if (r.values.kind == ValueKind::I64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return exp.text.find_first_of(".eE") == std::string::npos ? v == std::strtoll(exp.text.c_str(), nullptr, 10) : double(v) == num(exp);
  }
  if (r.values.kind == ValueKind::U64) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return exp.text.find_first_of(".eE-") == std::string::npos ? v == std::strtoull(exp.text.c_str(), nullptr, 10) : double(v) == num(exp);
  }
  double v;
  std::memcpy(&v, p, 8);
  const double e = num(exp);
  if (mode == "exact") {
    if (v == e) return true;
    if (repr == "f32") return float(v) == float(e);
    return false;
  }
  if (std::isnan(v)) return false;
  return std::fabs(v - e) <= atol + rtol * std::max(std::fabs(v), std::fabs(e));
}

void run_case(const JsonValue& c, Outcome& out) {
  const JsonValue* q = c.find("query");
  const JsonValue* expected = c.find("expected");
  const JsonValue* file = c.find("file");
  if (!q || !expected || !file || !q->is_object() || expected->find("error") || !expected->is_object()) {
    ++out.skipped;
    return;
  }
  std::string op_name;
  for (const auto& m : q->members) {
    if (m.first == "dataset" || m.first == "selection" || m.first == "layout_version") continue;
    if (!kOps.count(m.first)) { ++out.skipped; return; }
    op_name = m.first;
  }
  if (op_name.empty()) { ++out.skipped; return; }
  std::shared_ptr<File> f;
  try {
    f = File::open(kConformance + file->text);
  } catch (const Error&) {
    ++out.skipped;
    return;
  }
  const int di = f->catalog().find_dataset(q->find("dataset") ? q->find("dataset")->text : "");
  if (di < 0) { ++out.skipped; return; }
  const DatasetInfo& d = f->catalog().datasets[size_t(di)];
  QueryPlan p;
  p.dataset_id = uint32_t(di);
  p.ndim = d.ndim;
  p.op = kOps.at(op_name);
  for (uint32_t a = 0; a < d.ndim; ++a) p.start[a] = 0, p.step[a] = 1, p.count[a] = d.shape[a];
  if (const JsonValue* sel = q->find("selection")) {
    if (!sel->is_array() || sel->items.size() != d.ndim) { ++out.skipped; return; }
    for (uint32_t a = 0; a < d.ndim; ++a) {
      const JsonValue& s = sel->items[a];
      if (s.kind == JsonValue::Kind::Null) continue;
      if (s.find("start_label") || s.find("stop_label")) { ++out.skipped; return; }
      uint64_t start = 0, stop = d.shape[a], step = 1, v;
      if (const JsonValue* x = s.find("start"); x && x->kind != JsonValue::Kind::Null) { if (!x->as_u64(&v)) { ++out.skipped; return; } start = v; }
      if (const JsonValue* x = s.find("stop"); x && x->kind != JsonValue::Kind::Null) { if (!x->as_u64(&v)) { ++out.skipped; return; } stop = std::min(v, d.shape[a]); }
      if (const JsonValue* x = s.find("step"); x && x->kind != JsonValue::Kind::Null) { if (!x->as_u64(&v) || v == 0) { ++out.skipped; return; } step = v; }
      if (start >= stop) { ++out.skipped; return; }
      p.start[a] = start, p.step[a] = step, p.count[a] = (stop - start + step - 1) / step;
    }
  }
  const JsonValue& spec = *q->find(op_name);
  const JsonValue* axes = &spec;
  if (p.op == Op::Quantile || p.op == Op::Histogram) {
    if (!spec.is_object()) { ++out.skipped; return; }
    axes = spec.find("axes") ? spec.find("axes") : spec.find("axis");
    if (p.op == Op::Quantile) p.q = num(*spec.find("q"));
    if (p.op == Op::Histogram) {
      uint64_t b;
      if (!spec.find("bins")->as_u64(&b)) { ++out.skipped; return; }
      p.bins = uint32_t(b);
      if (spec.find("min") && spec.find("max")) p.hist_range = true, p.hist_min = num(*spec.find("min")), p.hist_max = num(*spec.find("max"));
    }
  }
  if (p.op == Op::Covariance || p.op == Op::Correlation) {
    const JsonValue* ax = spec.is_object() ? (spec.find("axis") ? spec.find("axis") : spec.find("axes")) : &spec;
    uint32_t a = 0;
    if (ax && ax->is_array() && ax->items.size() == 1) ax = &ax->items[0];
    if (ax && !int_axis(*ax, &a)) { ++out.skipped; return; }
    if (d.ndim != 2) { ++out.skipped; return; }
    p.obs_axis = a;
    p.strategy = Strategy::InMemoryMaterialize;
  } else {
    if (!axes_mask(axes, d.ndim, &p.reduce_mask)) { ++out.skipped; return; }
    const bool tier_c = p.op == Op::Median || p.op == Op::Quantile || p.op == Op::Histogram;
    p.strategy = tier_c ? Strategy::InMemoryMaterialize : Strategy::StreamingFold;
  }
  const bool scalar = p.reduce_mask == (1u << d.ndim) - 1 && p.op != Op::Covariance && p.op != Op::Correlation;
  const std::string field = (scalar || p.op == Op::Covariance || p.op == Op::Correlation) ? kScalarField.at(op_name) : kPartialField.at(op_name);
  const JsonValue* exp = expected->find(field);
  if (!exp) { ++out.skipped; return; }
  const JsonValue* cmp = c.find("compare") ? c.find("compare")->find(field) : nullptr;
  const std::string id = c.find("id") ? c.find("id")->text : "?";
  for (IoMode mode : {IoMode::ParallelChunks, IoMode::LinearScan}) {
    if (mode == IoMode::LinearScan && p.strategy != Strategy::StreamingFold) continue;
    p.io_mode = mode;
    ++out.run;
    QueryResult r;
    try {
      r = execute(*f, p, {});
    } catch (const Error& e) {
      std::printf("  %s: %s %s\n", id.c_str(), e.code().c_str(), e.what());
      ++tet_test::failures();
      continue;
    }
    out.linear += r.stats.io_mode == IoMode::LinearScan;
    bool ok = true;
    if (exp->is_array()) {
      ok = r.values.length == exp->items.size();
      for (size_t i = 0; ok && i < exp->items.size(); ++i) ok = value_ok(r, i, exp->items[i], cmp);
    } else {
      ok = r.values.length == 1 && value_ok(r, 0, *exp, cmp);
    }
    if (const JsonValue* edges = expected->find("operation_histogram_edges"); ok && edges && scalar) {
      const JsonValue* ecmp = c.find("compare") ? c.find("compare")->find("operation_histogram_edges") : nullptr;
      const double rtol = ecmp && ecmp->find("rtol") ? num(*ecmp->find("rtol")) : 0, atol = ecmp && ecmp->find("atol") ? num(*ecmp->find("atol")) : 0;
      ok = r.hist_edges.size() == edges->items.size();
      for (size_t i = 0; ok && i < r.hist_edges.size(); ++i)
        ok = std::fabs(r.hist_edges[i] - num(edges->items[i])) <= atol + rtol * std::fabs(num(edges->items[i]));
    }
    if (const JsonValue* shape = expected->find("operation_reduced_shape"); ok && shape) {
      ok = r.reduced_shape.size() == shape->items.size();
      for (size_t i = 0; ok && i < shape->items.size(); ++i) ok = double(r.reduced_shape[i]) == num(shape->items[i]);
    }
    if (ok) {
      ++out.passed;
    } else {
      ++tet_test::failures();
      std::printf("  %s (%s, %s, io %u) mismatch in %s\n", id.c_str(), file->text.c_str(), op_name.c_str(), unsigned(mode), field.c_str());
    }
  }
}

}  // namespace

TEST_CASE("conformance cases with numeric selections and axes") {
  std::ifstream in(kConformance + "cases.json");
  if (!in) {
    std::printf("  skipped: %scases.json not found\n", kConformance.c_str());
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  JsonValue root;
  std::string err;
  CHECK(json_parse(text.data(), text.size(), &root, &err));
  Outcome out;
  for (const auto& c : root.items) run_case(c, out);
  std::printf("  conformance: %d runs, %d passed (%d through linear scan), %d cases skipped (labels, names, errors, metadata)\n",
              out.run, out.passed, out.linear, out.skipped);
  CHECK(out.run > 200);
  CHECK(out.linear > 10);
}

TEST_MAIN()
