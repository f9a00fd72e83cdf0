// Minimal test harness for the C++ unit tests (one executable per *_test.cpp, run by ctest).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace tet_test {
struct Case { const char* name; std::function<void()> fn; };
inline std::vector<Case>& registry() { static std::vector<Case> r; return r; }
inline int& failures() { static int f = 0; return f; }
struct Register { Register(const char* n, std::function<void()> f) { registry().push_back({n, std::move(f)}); } };
inline int run_all() {
  for (auto& c : registry()) {
    int before = failures();
    try { c.fn(); } catch (const std::exception& e) { std::printf("  exception: %s\n", e.what()); ++failures(); }
    std::printf("%s %s\n", failures() == before ? "ok  " : "FAIL", c.name);
  }
  std::printf("%zu cases, %d failures\n", registry().size(), failures());
  return failures() ? 1 : 0;
}
}  // namespace tet_test

#define TET_CAT2(a, b) a##b
#define TET_CAT(a, b) TET_CAT2(a, b)
#define TEST_CASE(name) \
  static void TET_CAT(test_fn_, __LINE__)(); \
  static tet_test::Register TET_CAT(test_reg_, __LINE__)(name, TET_CAT(test_fn_, __LINE__)); \
  static void TET_CAT(test_fn_, __LINE__)()
#define CHECK(cond) do { if (!(cond)) { std::printf("  %s:%d CHECK(%s)\n", __FILE__, __LINE__, #cond); ++tet_test::failures(); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double _a = (a), _b = (b); if (!(std::fabs(_a - _b) <= (tol))) { std::printf("  %s:%d %s=%.17g vs %s=%.17g\n", __FILE__, __LINE__, #a, _a, #b, _b); ++tet_test::failures(); } } while (0)
#define CHECK_THROWS_CODE(expr, want_code) do { bool _t = false; try { expr; } catch (const tet::Error& e) { _t = true; if (e.code() != std::string(want_code)) { std::printf("  %s:%d code %s, want %s (%s)\n", __FILE__, __LINE__, e.code().c_str(), want_code, e.what()); ++tet_test::failures(); } } if (!_t) { std::printf("  %s:%d no throw: %s\n", __FILE__, __LINE__, #expr); ++tet_test::failures(); } } while (0)
#define TEST_MAIN() int main() { return tet_test::run_all(); }
