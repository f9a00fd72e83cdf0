// Codecs and helpers: f16 <-> f32 against an ldexp model for all 65536 patterns, zstd frame
// variants and strict length checks, strict JSON and UTF-8.
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "check.h"
#include "fixture_util.h"
#include "tet/error.h"
#include "tet/file.h"
#include "util/io.h"
#include "util/json.h"
#include "util/utf8.h"

namespace {

// Independent model of IEEE binary16: value = (-1)^s * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24.
double half_model(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0) v = std::ldexp(double(m), -24);
  else if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(double(1024 + m), e - 25);
  return s ? -v : v;
}

uint32_t bits_of(float f) { uint32_t b; std::memcpy(&b, &f, 4); return b; }

}  // namespace

TEST_CASE("f16_to_f32 is exact for all 65536 patterns") {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    float got = tet::f16_to_f32(uint16_t(h));
    double want = half_model(uint16_t(h));
    if (std::isnan(want)) {
      bool ok = std::isnan(got) && ((bits_of(got) >> 31) == (h >> 15)) && ((bits_of(got) >> 13) & 0x3FF) == (h & 0x3FF);
      bad += !ok;
    } else {
      float w = float(want);  // exact: every half is a float
      bad += bits_of(got) != bits_of(w);  // also distinguishes -0 from +0
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("f32_to_f16 round-trips every half and keeps NaN") {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    uint16_t back = tet::f32_to_f16(tet::f16_to_f32(uint16_t(h)));
    if (std::isnan(half_model(uint16_t(h)))) bad += !(((back >> 10) & 31) == 31 && (back & 1023) && (back >> 15) == (h >> 15));
    else bad += back != h;
  }
  CHECK(bad == 0);
}

TEST_CASE("f32_to_f16 rounds ties to even and overflows at 65520") {
  int bad = 0;
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    for (int sign = 0; sign < 2; ++sign) {
      double a = half_model(uint16_t(h)), b = half_model(uint16_t(h + 1));
      float mid = float((a + b) / 2);  // <= 12 significant bits: exact
      if (double(mid) != (a + b) / 2) { ++bad; continue; }
      uint16_t s = uint16_t(sign << 15);
      float m = sign ? -mid : mid;
      uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
      bad += tet::f32_to_f16(m) != (s | even);
      bad += tet::f32_to_f16(std::nextafter(m, sign ? -INFINITY : INFINITY)) != (s | uint16_t(h + 1));
      bad += tet::f32_to_f16(std::nextafter(m, 0.0f)) != (s | uint16_t(h));
    }
  }
  CHECK(bad == 0);
  CHECK(tet::f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(tet::f32_to_f16(std::nextafter(65520.0f, 0.0f)) == 0x7BFF);
  CHECK(tet::f32_to_f16(65520.0f) == 0x7C00);
  CHECK(tet::f32_to_f16(-1e30f) == 0xFC00);
  CHECK(tet::f32_to_f16(INFINITY) == 0x7C00);
  CHECK(tet::f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);                    // tie to even (0)
  CHECK(tet::f32_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 1);   // just above half of min subnormal
  CHECK(tet::f32_to_f16(std::ldexp(3.0f, -25)) == 2);                         // 1.5 ulp ties to 2
  CHECK(tet::f32_to_f16(1e-30f) == 0 && tet::f32_to_f16(-1e-30f) == 0x8000);
}

TEST_CASE("f32_to_f16 picks the nearest half for random floats") {
  std::mt19937 rng(12345);
  int bad = 0;
  for (int i = 0; i < 300000; ++i) {
    uint32_t b = rng();
    float x;
    std::memcpy(&x, &b, 4);
    if (std::isnan(x) || std::fabs(x) >= 65504.0f) continue;
    uint16_t h = tet::f32_to_f16(x);
    double v = half_model(h), err = std::fabs(v - double(x));
    uint16_t mag = h & 0x7FFF;
    for (int d : {-1, 1}) {
      int n = int(mag) + d;
      if (n < 0 || n > 0x7BFF) continue;
      double other = half_model(uint16_t((h & 0x8000) | n));
      double oe = std::fabs(other - double(x));
      if (oe < err || (oe == err && (mag & 1))) ++bad;
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("zstd: frame variants decode; wrong sizes and checksums fail") {
  std::vector<uint8_t> raw(4096);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = uint8_t((i * 7) ^ (i >> 5));
  auto frame = [&](bool content_size, bool checksum, int level) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    std::vector<uint8_t> out(ZSTD_compressBound(raw.size()));
    out.resize(ZSTD_compress2(c, out.data(), out.size(), raw.data(), raw.size()));
    ZSTD_freeCCtx(c);
    return out;
  };
  auto entry_for = [](const std::vector<uint8_t>& stored, uint64_t raw_len) {
    tet::ChunkEntry e;
    e.codec = tet::Codec::Zstd;
    e.raw_byte_len = raw_len;
    e.stored_byte_len = stored.size();
    return e;
  };
  tet::ScratchBytes out;
  for (bool cs : {true, false})
    for (bool ck : {true, false})
      for (int level : {1, 3, 19}) {
        auto f = frame(cs, ck, level);
        tet::decode_payload(entry_for(f, raw.size()), f.data(), out, "t");
        CHECK(std::equal(out.begin(), out.end(), raw.begin(), raw.end()));
        EXPECT_ERROR(tet::decode_payload(entry_for(f, raw.size() - 1), f.data(), out, "t"), "TET_DECODE_LENGTH");
        EXPECT_ERROR(tet::decode_payload(entry_for(f, raw.size() + 1), f.data(), out, "t"), "TET_DECODE_LENGTH");
      }
  auto f = frame(true, true, 3);
  f[f.size() - 1] ^= 0x55;  // the content checksum is the last 4 bytes
  EXPECT_ERROR(tet::decode_payload(entry_for(f, raw.size()), f.data(), out, "t"), "TET_DECODE_ZSTD");
  auto g = frame(true, false, 3);
  g[0] ^= 1;
  EXPECT_ERROR(tet::decode_payload(entry_for(g, raw.size()), g.data(), out, "t"), "TET_DECODE_ZSTD");
  auto t = frame(false, false, 3);
  t.pop_back();
  EXPECT_ERROR(tet::decode_payload(entry_for(t, raw.size()), t.data(), out, "t"), "TET_DECODE_ZSTD");
  // An absurd raw_byte_len for a tiny frame is refused before allocating it.
  auto z = frame(false, false, 3);
  EXPECT_ERROR(tet::decode_payload(entry_for(z, uint64_t(1) << 50), z.data(), out, "t"), "TET_DECODE_LENGTH");
  std::vector<uint8_t> empty;
  EXPECT_ERROR(tet::decode_payload(entry_for(empty, 16), empty.data(), out, "t"), "TET_DECODE_ZSTD");
  // Raw payloads: copied verbatim.
  tet::ChunkEntry r;
  r.raw_byte_len = r.stored_byte_len = raw.size();
  tet::decode_payload(r, raw.data(), out, "t");
  CHECK(std::equal(out.begin(), out.end(), raw.begin(), raw.end()));
}

TEST_CASE("json: strict grammar") {
  const char* good[] = {"{}", "[]", " {\"a\":[1,-2.5e+3,0,true,false,null]} ", "\"\\u00e9\\ud83d\\ude00\"",
                        "{\"a\":{\"b\":{\"c\":[[]]}}}", "0", "-0.0E-1", "\"caf\xc3\xa9\""};
  for (const char* s : good) {
    tet::JsonValue v;
    std::string err;
    bool ok = tet::json_parse(s, std::strlen(s), &v, &err);
    if (!ok) std::printf("  rejected %s: %s\n", s, err.c_str());
    CHECK(ok);
  }
  const char* bad[] = {"", "{", "{,}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "NaN", "Infinity", "'a'",
                       "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"a\nb\"", "{\"a\" 1}", "[1 2]", "tru", "{} {}",
                       "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{1:2}", "-", "1e", "// c\n{}"};
  for (const char* s : bad) {
    tet::JsonValue v;
    std::string err;
    bool ok = tet::json_parse(s, std::strlen(s), &v, &err);
    if (ok) std::printf("  accepted %s\n", s);
    CHECK(!ok && !err.empty());
  }
  std::string deep(200, '[');
  deep += std::string(200, ']');
  tet::JsonValue v;
  std::string err;
  CHECK(!tet::json_parse(deep.data(), deep.size(), &v, &err));
  CHECK(err.find("nesting") != std::string::npos);
  std::string ok_depth = std::string(100, '[') + std::string(100, ']');
  CHECK(tet::json_parse(ok_depth.data(), ok_depth.size(), &v, &err));
  // Spans and compact re-serialization (serde_json / json.dumps(separators=(",", ":")) style).
  std::string text = " { \"k\" : [ 1 , \"a\\\"\\u0001\\/\u00e9\" ] , \"n\" : { } } ";
  CHECK(tet::json_parse(text.data(), text.size(), &v, &err));
  CHECK(tet::json_serialize(v) == "{\"k\":[1,\"a\\\"\\u0001/\u00e9\"],\"n\":{}}");
  CHECK(text.substr(v.find("n")->begin, v.find("n")->end - v.find("n")->begin) == "{ }");
  uint64_t u = 0;
  CHECK(v.find("k")->items[0].as_u64(&u) && u == 1);
}

TEST_CASE("utf8: strict validation") {
  auto ok = [](const char* s, size_t n) { return tet::utf8_valid(reinterpret_cast<const uint8_t*>(s), n); };
  CHECK(ok("abc", 3));
  CHECK(ok("\xc3\xa9", 2));
  CHECK(ok("\xf0\x9f\x98\x80", 4));
  CHECK(ok("\xf4\x8f\xbf\xbf", 4));
  CHECK(!ok("\xf4\x90\x80\x80", 4));  // > U+10FFFF
  CHECK(!ok("\xc0\x80", 2));          // overlong
  CHECK(!ok("\xe0\x80\x80", 3));      // overlong
  CHECK(!ok("\xed\xa0\x80", 3));      // surrogate
  CHECK(!ok("\xc3", 1));              // truncated
  CHECK(!ok("\x80", 1));
  CHECK(!ok("\xff", 1));
  size_t at = 0;
  CHECK(!tet::utf8_valid(reinterpret_cast<const uint8_t*>("ab\xe2\x82"), 4, &at) && at == 2);
}

TEST_MAIN()

TEST_CASE("scratch memory: heap below the huge-page threshold, 2 MiB-aligned mappings from it, contents kept as it grows") {
  for (size_t n : {size_t(1), size_t(4095), tet::kHugeScratchMin - 1, tet::kHugeScratchMin, (size_t(3) << 20) + 5}) {
    auto* p = static_cast<uint8_t*>(tet::scratch_alloc(n));
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    CHECK(a % 64 == 0);
    if (n >= tet::kHugeScratchMin) CHECK(a % (size_t(2) << 20) == 0);
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(i * 7 + 1);
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && p[i] == uint8_t(i * 7 + 1);
    CHECK(same);
    tet::scratch_free(p, n);
  }
  // A vector growing across the threshold keeps its bytes; resize(n, v) still fills.
  tet::ScratchBytes v;
  for (size_t i = 0; i < 1000; ++i) v.push_back(uint8_t(i));
  v.resize(size_t(5) << 20);
  bool kept = true;
  for (size_t i = 0; i < 1000; ++i) kept = kept && v[i] == uint8_t(i);
  CHECK(kept);
  v.assign(size_t(1) << 20, 0xab);
  CHECK(v.size() == (size_t(1) << 20));
  CHECK(v.front() == 0xab);
  CHECK(v.back() == 0xab);
  tet::AlignedBuffer big(size_t(1) << 20, 4096), odd(100, 256);
  CHECK(reinterpret_cast<uintptr_t>(big.data()) % 4096 == 0);
  CHECK(reinterpret_cast<uintptr_t>(odd.data()) % 256 == 0);
  std::memset(big.data(), 1, big.size());
  std::memset(odd.data(), 2, odd.size());
}
