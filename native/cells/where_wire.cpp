#include "cells/where_wire.h"

#include <cstring>
#include <string>

#include "tet/error.h"
#include "util/checked.h"

namespace tet::cells {

namespace {

enum LiteralType : uint8_t { kAbsent = 0, kBool = 1, kInt = 2, kFloat = 3, kStr = 4 };
constexpr uint8_t kOpCount = static_cast<uint8_t>(WhereOp::IsNan) + 1;

[[noreturn]] void invalid(const std::string& msg) { fail("TET_PLAN_INVALID", "where wire: " + msg); }

// A bounds-checked cursor over the wire bytes.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  const uint8_t* take(uint64_t bytes, const char* what) {
    if (!span_within(at_, bytes, n_)) invalid(std::string("truncated at ") + what + " (offset " + std::to_string(at_) + ")");
    const uint8_t* q = p_ + at_;
    at_ += bytes;
    return q;
  }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint16_t u16(const char* what) { return load_u16le(take(2, what)); }
  uint32_t u32(const char* what) { return load_u32le(take(4, what)); }
  uint64_t u64(const char* what) { return load_u64le(take(8, what)); }
  std::string bytes(uint32_t len, const char* what) {
    const uint8_t* q = take(len, what);
    return std::string(reinterpret_cast<const char*>(q), len);
  }
  bool done() const { return at_ == n_; }
  uint64_t at() const { return at_; }

 private:
  const uint8_t* p_;
  size_t n_;
  uint64_t at_ = 0;
};

std::optional<Literal> read_literal(Reader& r) {
  switch (r.u8("a literal type")) {
    case kAbsent: return std::nullopt;
    case kBool: {
      const uint8_t b = r.u8("a bool literal");
      if (b > 1) invalid("a bool literal is " + std::to_string(b) + " (0 or 1)");
      return Literal::of_bool(b == 1);
    }
    case kInt: return Literal::of_int(static_cast<int64_t>(r.u64("an int literal")));
    case kFloat: {
      const uint64_t bits = r.u64("a float literal");
      double f;
      std::memcpy(&f, &bits, 8);
      return Literal::of_float(f);
    }
    case kStr: {
      const uint32_t len = r.u32("a str literal length");
      return Literal::of_str(r.bytes(len, "a str literal"));
    }
    default: invalid("unknown literal type at offset " + std::to_string(r.at() - 1));
  }
}

Literal present_literal(Reader& r, WhereOp op) {
  std::optional<Literal> l = read_literal(r);
  if (!l) invalid(std::string("`") + where_op_name(op) + "` has an absent literal (only a range end may be)");
  return std::move(*l);
}

void write_literal(std::vector<uint8_t>& out, const std::optional<Literal>& l) {
  auto put = [&](const void* p, size_t n) { out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); };
  uint8_t b[8];
  if (!l) return out.push_back(kAbsent);
  switch (l->type) {
    case Literal::Type::Bool: out.push_back(kBool); out.push_back(l->b ? 1 : 0); break;
    case Literal::Type::Int: out.push_back(kInt); store_u64le(b, static_cast<uint64_t>(l->i)); put(b, 8); break;
    case Literal::Type::Float: {
      out.push_back(kFloat);
      uint64_t bits;
      std::memcpy(&bits, &l->f, 8);
      store_u64le(b, bits);
      put(b, 8);
      break;
    }
    case Literal::Type::Str:
      out.push_back(kStr);
      store_u32le(b, static_cast<uint32_t>(l->s.size()));
      put(b, 4);
      put(l->s.data(), l->s.size());
      break;
  }
}

}  // namespace

std::vector<Predicate> decode_where_wire(const TableInfo& table, const uint8_t* data, size_t len) {
  Reader r(data, len);
  if (r.u32("the magic") != kWhereWireMagic) invalid("bad magic (expected \"TWHR\")");
  const uint32_t version = r.u32("the version");
  if (version != kWhereWireVersion) invalid("version " + std::to_string(version) + " (this build reads 1)");
  const uint32_t n = r.u32("the predicate count");
  if (n > kMaxWherePredicates) invalid(std::to_string(n) + " predicates (at most 4096)");
  if (r.u32("the header") != 0) invalid("a reserved header word is not 0");
  std::vector<Predicate> out;
  out.reserve(n);
  for (uint32_t k = 0; k < n; ++k) {
    Predicate p;
    const uint8_t op = r.u8("an op");
    if (op >= kOpCount) invalid("predicate " + std::to_string(k) + " has op " + std::to_string(op));
    p.op = static_cast<WhereOp>(op);
    const uint8_t flag = r.u8("a flag");
    if (flag > 1) invalid("predicate " + std::to_string(k) + " has flag " + std::to_string(flag));
    p.flag = flag == 1;
    if (r.u16("reserved bytes") != 0) invalid("predicate " + std::to_string(k) + " has nonzero reserved bytes");
    const std::string name = r.bytes(r.u32("a column name length"), "a column name");
    const int c = table.find_column(name);
    if (c < 0) throw Error(Code::TET_QUERY_UNKNOWN_COLUMN, "where: table '" + table.name + "' has no column named '" + name + "'");
    p.column = static_cast<size_t>(c);
    const uint32_t count = r.u32("a literal count");
    switch (p.op) {
      case WhereOp::In:
      case WhereOp::NotIn:
        if (count > kMaxWhereSet) invalid("`" + std::string(where_op_name(p.op)) + "` has " + std::to_string(count) + " values (at most 65536)");
        p.set.reserve(count);
        for (uint32_t i = 0; i < count; ++i) p.set.push_back(present_literal(r, p.op));
        break;
      case WhereOp::Range:
        if (count != 2) invalid("`range` has " + std::to_string(count) + " literals (2)");
        p.lo = read_literal(r);
        p.hi = read_literal(r);
        break;
      case WhereOp::IsNull:
      case WhereOp::IsNan:
        if (count != 0) invalid("`" + std::string(where_op_name(p.op)) + "` has " + std::to_string(count) + " literals (0)");
        break;
      default:
        if (count != 1) invalid("`" + std::string(where_op_name(p.op)) + "` has " + std::to_string(count) + " literals (1)");
        p.value = present_literal(r, p.op);
    }
    if (p.op != WhereOp::IsNull && p.op != WhereOp::IsNan && p.flag) invalid("predicate " + std::to_string(k) + " sets a flag its op has none of");
    validate_predicate(table, p);
    out.push_back(std::move(p));
  }
  if (!r.done()) invalid("bytes after the last predicate (at offset " + std::to_string(r.at()) + " of " + std::to_string(len) + ")");
  return out;
}

WhereRuns evaluate_where_wire(const TablesRegion& region, const std::string& table, const uint8_t* data, size_t len,
                              uint32_t threads, const std::atomic<bool>* cancel) {
  const int t = region.find_table(table);
  if (t < 0) throw Error(Code::TET_QUERY_UNKNOWN_TABLE, "where: no table named '" + table + "'");
  const size_t ti = static_cast<size_t>(t);
  const std::vector<Predicate> preds = decode_where_wire(region.tables()[ti], data, len);
  WhereResult r = evaluate_where(region, ti, preds, threads, cancel);
  return WhereRuns{r.rows.runs(), r.plan};
}

std::vector<uint8_t> encode_where_wire(const TableInfo& table, const std::vector<Predicate>& preds) {
  std::vector<uint8_t> out;
  uint8_t b[4];
  auto u32 = [&](uint32_t v) { store_u32le(b, v); out.insert(out.end(), b, b + 4); };
  u32(kWhereWireMagic);
  u32(kWhereWireVersion);
  u32(static_cast<uint32_t>(preds.size()));
  u32(0);
  for (const Predicate& p : preds) {
    out.push_back(static_cast<uint8_t>(p.op));
    out.push_back((p.op == WhereOp::IsNull || p.op == WhereOp::IsNan) && p.flag ? 1 : 0);
    out.push_back(0);
    out.push_back(0);
    const std::string& name = table.columns.at(p.column).schema.name;
    u32(static_cast<uint32_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    switch (p.op) {
      case WhereOp::In:
      case WhereOp::NotIn:
        u32(static_cast<uint32_t>(p.set.size()));
        for (const Literal& l : p.set) write_literal(out, l);
        break;
      case WhereOp::Range: u32(2); write_literal(out, p.lo); write_literal(out, p.hi); break;
      case WhereOp::IsNull:
      case WhereOp::IsNan: u32(0); break;
      default: u32(1); write_literal(out, p.value);
    }
  }
  return out;
}

}  // namespace tet::cells
