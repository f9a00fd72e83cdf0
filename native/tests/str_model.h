// The plain model of a str column the string-cell tests share, and a column built from it whole
// (StrBuilder without a block sink) with the decode context its global dictionary gives.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cells/column.h"
#include "cells/str_builder.h"

namespace tet_test {

using StrModel = std::vector<std::optional<std::string>>;

struct WholeStrColumn {
  tet::cells::CellRef root;
  std::unique_ptr<tet::cells::StrBuilder> builder;
  tet::cells::DecodeContext ctx() const {
    const tet::cells::GlobalDictionary* g = builder->global_dictionary();
    return g ? g->context() : tet::cells::DecodeContext{};
  }
};

inline WholeStrColumn build_whole(const StrModel& m, tet::cells::StrBuilderOptions o = {}) {
  WholeStrColumn w;
  w.builder = std::make_unique<tet::cells::StrBuilder>(std::move(o));
  for (const auto& v : m) {
    if (v) w.builder->push(*v);
    else w.builder->push_null();
  }
  w.root = w.builder->finish();
  return w;
}

// The whole column decodes to the model: validity and every value.
inline bool str_column_equals(const tet::cells::Cell& root, const StrModel& m, const tet::cells::DecodeContext& ctx) {
  if (root.len != m.size()) return false;
  tet::cells::StrBuffer got;
  std::vector<uint8_t> valid(m.size());
  tet::cells::decode_column(root, 0, m.size(), &got, valid.data(), ctx);
  for (size_t i = 0; i < m.size(); ++i) {
    if (valid[i] != (m[i] ? 1 : 0)) return false;
    if (got.at(i) != (m[i] ? std::string_view(*m[i]) : std::string_view())) return false;
  }
  return true;
}

}  // namespace tet_test
