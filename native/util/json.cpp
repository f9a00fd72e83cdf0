#include "util/json.h"

#include <cstdio>

#include "util/utf8.h"

namespace tet {

const JsonValue* JsonValue::find(const std::string& key) const {
  const JsonValue* hit = nullptr;
  for (const auto& m : members)
    if (m.first == key) hit = &m.second;
  return hit;
}

bool JsonValue::as_u64(uint64_t* out) const {
  if (kind != Kind::Number || text.empty()) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(v, uint64_t(10), &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v))
      return false;
  }
  *out = v;
  return true;
}

namespace {

class Parser {
 public:
  Parser(const char* s, size_t n, int max_depth) : s_(s), n_(n), max_depth_(max_depth) {}

  bool parse(JsonValue* out, std::string* error) {
    skip_ws();
    if (!value(out, 0)) { *error = err_; return false; }
    skip_ws();
    if (pos_ != n_) { *error = at("unexpected trailing data"); return false; }
    return true;
  }

 private:
  const char* s_;
  size_t n_, pos_ = 0;
  int max_depth_;
  std::string err_;

  std::string at(const std::string& what) const { return what + " at byte " + std::to_string(pos_); }
  bool fail(const std::string& what) { if (err_.empty()) err_ = at(what); return false; }
  void skip_ws() {
    while (pos_ < n_ && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(const char* word) {
    size_t k = 0;
    for (; word[k]; ++k)
      if (pos_ + k >= n_ || s_[pos_ + k] != word[k]) return fail(std::string("invalid literal (expected ") + word + ")");
    pos_ += k;
    return true;
  }

  bool value(JsonValue* v, int depth) {
    if (pos_ >= n_) return fail("expected a value, found end of input");
    v->begin = pos_;
    char c = s_[pos_];
    bool ok;
    switch (c) {
      case '{': ok = object(v, depth); break;
      case '[': ok = array(v, depth); break;
      case '"': v->kind = JsonValue::Kind::String; ok = string(&v->text); break;
      case 't': v->kind = JsonValue::Kind::Bool; v->boolean = true; ok = literal("true"); break;
      case 'f': v->kind = JsonValue::Kind::Bool; ok = literal("false"); break;
      case 'n': v->kind = JsonValue::Kind::Null; ok = literal("null"); break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) { ok = number(v); break; }
        return fail(std::string("expected a value, found '") + (c >= 0x20 && c < 0x7f ? std::string(1, c) : "\\x" + hex2(uint8_t(c))) + "'");
    }
    v->end = pos_;
    return ok;
  }

  static std::string hex2(uint8_t b) { char buf[4]; std::snprintf(buf, sizeof buf, "%02x", b); return buf; }

  bool object(JsonValue* v, int depth) {
    if (depth + 1 > max_depth_) return fail("nesting deeper than " + std::to_string(max_depth_));
    v->kind = JsonValue::Kind::Object;
    ++pos_;
    skip_ws();
    if (pos_ < n_ && s_[pos_] == '}') { ++pos_; return true; }
    for (;;) {
      skip_ws();
      if (pos_ >= n_ || s_[pos_] != '"') return fail("expected an object key string");
      std::string key;
      if (!string(&key)) return false;
      skip_ws();
      if (pos_ >= n_ || s_[pos_] != ':') return fail("expected ':' after object key");
      ++pos_;
      skip_ws();
      v->members.emplace_back(std::move(key), JsonValue{});
      if (!value(&v->members.back().second, depth + 1)) return false;
      skip_ws();
      if (pos_ < n_ && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < n_ && s_[pos_] == '}') { ++pos_; return true; }
      return fail("expected ',' or '}' in object");
    }
  }

  bool array(JsonValue* v, int depth) {
    if (depth + 1 > max_depth_) return fail("nesting deeper than " + std::to_string(max_depth_));
    v->kind = JsonValue::Kind::Array;
    ++pos_;
    skip_ws();
    if (pos_ < n_ && s_[pos_] == ']') { ++pos_; return true; }
    for (;;) {
      skip_ws();
      v->items.emplace_back();
      if (!value(&v->items.back(), depth + 1)) return false;
      skip_ws();
      if (pos_ < n_ && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < n_ && s_[pos_] == ']') { ++pos_; return true; }
      return fail("expected ',' or ']' in array");
    }
  }

  bool number(JsonValue* v) {
    v->kind = JsonValue::Kind::Number;
    size_t start = pos_;
    auto digit = [&](size_t p) { return p < n_ && s_[p] >= '0' && s_[p] <= '9'; };
    if (s_[pos_] == '-') ++pos_;
    if (!digit(pos_)) return fail("invalid number");
    if (s_[pos_] == '0') {
      ++pos_;
      if (digit(pos_)) return fail("invalid number (leading zero)");
    } else {
      while (digit(pos_)) ++pos_;
    }
    if (pos_ < n_ && s_[pos_] == '.') {
      ++pos_;
      if (!digit(pos_)) return fail("invalid number (no digits after '.')");
      while (digit(pos_)) ++pos_;
    }
    if (pos_ < n_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < n_ && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digit(pos_)) return fail("invalid number (no exponent digits)");
      while (digit(pos_)) ++pos_;
    }
    v->text.assign(s_ + start, pos_ - start);
    return true;
  }

  bool hex4(uint32_t* out) {
    if (n_ - pos_ < 4) return fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[pos_ + k];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else return fail("invalid \\u escape");
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  static void put_utf8(std::string& o, uint32_t cp) {
    if (cp < 0x80) o += char(cp);
    else if (cp < 0x800) { o += char(0xC0 | (cp >> 6)); o += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { o += char(0xE0 | (cp >> 12)); o += char(0x80 | ((cp >> 6) & 0x3F)); o += char(0x80 | (cp & 0x3F)); }
    else { o += char(0xF0 | (cp >> 18)); o += char(0x80 | ((cp >> 12) & 0x3F)); o += char(0x80 | ((cp >> 6) & 0x3F)); o += char(0x80 | (cp & 0x3F)); }
  }

  bool string(std::string* out) {
    ++pos_;  // opening quote
    for (;;) {
      size_t run = pos_;
      while (pos_ < n_ && s_[pos_] != '"' && s_[pos_] != '\\' && uint8_t(s_[pos_]) >= 0x20) ++pos_;
      if (pos_ > run) {
        size_t bad = 0;
        if (!utf8_valid(reinterpret_cast<const uint8_t*>(s_ + run), pos_ - run, &bad)) {
          pos_ = run + bad;
          return fail("invalid UTF-8 in string");
        }
        out->append(s_ + run, pos_ - run);
      }
      if (pos_ >= n_) return fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') { ++pos_; return true; }
      if (uint8_t(c) < 0x20) return fail("unescaped control character in string");
      ++pos_;  // backslash
      if (pos_ >= n_) return fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("unpaired low surrogate escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (n_ - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') return fail("unpaired high surrogate escape");
            pos_ += 2;
            if (!hex4(&lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return fail("unpaired high surrogate escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(*out, cp);
          break;
        }
        default: --pos_; return fail("invalid escape");
      }
    }
  }
};

void serialize_into(std::string& out, const JsonValue& v) {
  switch (v.kind) {
    case JsonValue::Kind::Null: out += "null"; break;
    case JsonValue::Kind::Bool: out += v.boolean ? "true" : "false"; break;
    case JsonValue::Kind::Number: out += v.text; break;
    case JsonValue::Kind::String: json_append_string(out, v.text); break;
    case JsonValue::Kind::Array:
      out += '[';
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ',';
        serialize_into(out, v.items[i]);
      }
      out += ']';
      break;
    case JsonValue::Kind::Object:
      out += '{';
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out += ',';
        json_append_string(out, v.members[i].first);
        out += ':';
        serialize_into(out, v.members[i].second);
      }
      out += '}';
      break;
  }
}

}  // namespace

bool json_parse(const char* text, size_t len, JsonValue* out, std::string* error, int max_depth) {
  *out = JsonValue{};
  Parser p(text, len, max_depth);
  return p.parse(out, error);
}

void json_append_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
}

std::string json_serialize(const JsonValue& v) {
  std::string out;
  serialize_into(out, v);
  return out;
}

}  // namespace tet
