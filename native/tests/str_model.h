// The plain model of a str column the string-cell tests share, and a column built from it whole
// (StrBuilder without a block sink) with the decode context its global dictionary gives.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace tet_test
