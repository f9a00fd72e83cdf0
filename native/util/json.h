// A small strict JSON parser (RFC 8259: no trailing commas, no NaN, no comments, strict UTF-8,
// paired surrogates, depth limit) with a DOM that remembers each value's source span, and a
// compact serializer that writes what serde_json / Python json.dumps(separators=(",", ":"),
// ensure_ascii=False) write. Used for the THST footer (reader and writer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tet {

struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // String: decoded UTF-8; Number: the lexeme as written
  std::vector<JsonValue> items;                               // Array
  std::vector<std::pair<std::string, JsonValue>> members;     // Object, in source order
  size_t begin = 0, end = 0;                                  // source span [begin, end)

  bool is_object() const { return kind == Kind::Object; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_string() const { return kind == Kind::String; }
  // Last member with this key (duplicate keys: last wins, like Python and JavaScript).
  const JsonValue* find(const std::string& key) const;
  // Non-negative integer lexeme (no fraction/exponent/sign) that fits u64.
  bool as_u64(uint64_t* out) const;
};

constexpr int kJsonMaxDepth = 128;

// Parses exactly one JSON value (surrounding whitespace allowed). Returns false with a message
// naming the byte offset on any error.
bool json_parse(const char* text, size_t len, JsonValue* out, std::string* error,
                int max_depth = kJsonMaxDepth);

// Compact serialization (no whitespace; non-ASCII kept as UTF-8; numbers as written).
std::string json_serialize(const JsonValue& v);
void json_append_string(std::string& out, const std::string& s);

}  // namespace tet
