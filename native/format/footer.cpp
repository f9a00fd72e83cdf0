#include "format/footer.h"

#include <cstdio>
#include <cstring>

#include "tet/error.h"
#include "util/checked.h"
#include "util/json.h"
#include "util/utf8.h"

namespace tet {
namespace {

constexpr uint64_t kSuperblockLen = 32;

[[noreturn]] void footer_fail(const std::string& msg) { fail("TET_FOOTER_INVALID", msg); }

JsonValue parse_json_object(const uint8_t* p, uint64_t n, const char* what) {
  size_t bad = 0;
  if (!utf8_valid(p, static_cast<size_t>(n), &bad))
    footer_fail(std::string(what) + " is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")");
  JsonValue v;
  std::string err;
  if (!json_parse(reinterpret_cast<const char*>(p), static_cast<size_t>(n), &v, &err))
    footer_fail(std::string(what) + " is not valid JSON: " + err);
  if (!v.is_object()) footer_fail(std::string(what) + " is not a JSON object");
  return v;
}

// "cells": {"offset": u64, "len": u64, "version": u64, "xxh64": "<16 hex digits>"}. The region
// must lie before the footer region (payload_limit, set before this is called).
void parse_cells_ref(const JsonValue& root, Footer& footer) {
  const JsonValue* c = root.find("cells");
  if (!c) return;
  footer.cells_present = true;
  const JsonValue* o = c->is_object() ? c->find("offset") : nullptr;
  const JsonValue* l = c->is_object() ? c->find("len") : nullptr;
  const JsonValue* v = c->is_object() ? c->find("version") : nullptr;
  const JsonValue* h = c->is_object() ? c->find("xxh64") : nullptr;
  if (!o || !l || !v || !h || !o->as_u64(&footer.cells_offset) || !l->as_u64(&footer.cells_len) ||
      !v->as_u64(&footer.cells_version) || !h->is_string() || h->text.size() != 16) {
    footer.cells_error = "the footer's 'cells' reference is not {offset, len, version, xxh64}";
    return;
  }
  uint64_t x = 0;
  for (char ch : h->text) {
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0) {
      footer.cells_error = "the footer's 'cells' xxh64 is not 16 lower-case hex digits";
      return;
    }
    x = (x << 4) | uint64_t(d);
  }
  footer.cells_xxh64 = x;
  if (footer.cells_version != 1) {
    footer.cells_error = "tables region version " + std::to_string(footer.cells_version) + " is not one this build reads";
  } else if (footer.cells_offset < kSuperblockLen || footer.cells_offset % 64 != 0 ||
             !span_within(footer.cells_offset, footer.cells_len, footer.payload_limit)) {
    footer.cells_error = "the tables region [" + std::to_string(footer.cells_offset) + ", +" +
                         std::to_string(footer.cells_len) + ") is misaligned or not before the footer (at " +
                         std::to_string(footer.payload_limit) + ")";
  }
}

}  // namespace

std::string footer_region_bytes(uint64_t start, const std::string& history_array_json,
                                const std::string& metadata_json, const std::string& extra_members) {
  std::string json = "{\"history\":" + history_array_json + extra_members, spill;
  if (!metadata_json.empty()) {
    std::string inline_json = json + ",\"metadata\":" + metadata_json + "}";
    if (inline_json.size() <= kMetadataInlineLimit) {
      json = std::move(inline_json);
    } else {
      spill = metadata_json;
      json += ",\"metadata_ref\":{\"offset\":" + std::to_string(start) + ",\"len\":" + std::to_string(spill.size()) + "}}";
    }
  } else {
    json += "}";
  }
  uint8_t t[16];
  store_u64le(t, json.size());
  store_u32le(t + 8, 1);
  std::memcpy(t + 12, "THST", 4);
  return spill + json + std::string(reinterpret_cast<const char*>(t), 16);
}

void check_footer_history(const JsonValue& root) {
  const JsonValue* hist = root.find("history");
  if (!hist) return;
  if (!hist->is_array()) footer_fail("footer 'history' is not a list");
  for (size_t k = 0; k < hist->items.size(); ++k) {
    const JsonValue& row = hist->items[k];
    if (row.is_object()) {
      for (const char* f : {"op", "source", "at"}) {
        const JsonValue* v = row.find(f);
        if (!v || !v->is_string())
          footer_fail("history row " + std::to_string(k) + " lacks string op/source/at (field '" + f + "')");
      }
    } else if (row.is_array() && row.items.size() == 3 && row.items[0].is_string() && row.items[1].is_string() &&
               row.items[2].is_string()) {
      // legacy [op, source, at] triple
    } else {
      footer_fail("history row " + std::to_string(k) + " is neither an object nor an [op, source, at] triple");
    }
  }
}

void check_footer_metadata(const JsonValue& md) {
  const JsonValue* dss = md.find("datasets");
  if (!dss) return;
  if (!dss->is_object()) footer_fail("metadata.datasets is not an object");
  for (const auto& kv : dss->members) {
    const std::string& name = kv.first;
    const JsonValue& dm = kv.second;
    if (!dm.is_object()) footer_fail("metadata.datasets['" + name + "'] is not an object");
    if (const JsonValue* dn = dm.find("dim_names")) {
      bool ok = dn->is_array();
      for (const auto& x : dn->items) ok = ok && x.is_string();
      if (!ok) footer_fail("metadata.datasets['" + name + "'].dim_names is not a list of strings");
    }
    if (const JsonValue* co = dm.find("coords")) {
      if (!co->is_object()) footer_fail("metadata.datasets['" + name + "'].coords is not an object");
      for (const auto& ax : co->members) {
        const JsonValue* labels = ax.second.is_object() ? ax.second.find("labels") : nullptr;
        if (!labels || !labels->is_array())
          footer_fail("coords['" + ax.first + "'] of '" + name + "' lacks a labels list");
      }
    }
  }
}

uint64_t locate_footer_start(const uint8_t* data, uint64_t len) {
  if (len < kSuperblockLen + kFooterTailLen) return len;
  const uint8_t* tail = data + len - kFooterTailLen;
  if (tail[12] != 'T' || tail[13] != 'H' || tail[14] != 'S' || tail[15] != 'T') return len;
  uint64_t jlen = load_u64le(tail);
  uint64_t json_end = len - kFooterTailLen;
  if (jlen > json_end - kSuperblockLen) return len;
  return json_end - jlen;
}

void parse_footer(const uint8_t* data, uint64_t len, Footer& footer) {
  footer = Footer{};
  if (len < kSuperblockLen + kFooterTailLen)
    footer_fail("flags has history-footer bit but the file (" + std::to_string(len) +
                " bytes) is too short for a THST tail");
  const uint8_t* tail = data + len - kFooterTailLen;
  if (tail[12] != 'T' || tail[13] != 'H' || tail[14] != 'S' || tail[15] != 'T') {
    char got[32];
    std::snprintf(got, sizeof got, "%02x %02x %02x %02x", tail[12], tail[13], tail[14], tail[15]);
    footer_fail(std::string("flags has history-footer bit but file does not end with THST (last 4 bytes ") + got + ")");
  }
  uint32_t version = load_u32le(tail + 8);
  if (version != 1)
    fail("TET_FOOTER_BAD_VERSION", "history_version " + std::to_string(version) + " unsupported (only 1 is defined)");
  uint64_t jlen = load_u64le(tail);
  uint64_t json_end = len - kFooterTailLen;
  if (jlen > json_end - kSuperblockLen)
    footer_fail("history_json_len " + std::to_string(jlen) + " larger than the file allows (at most " +
                std::to_string(json_end - kSuperblockLen) + ")");
  uint64_t json_start = json_end - jlen;
  footer.payload_limit = json_start;
  JsonValue root = parse_json_object(data + json_start, jlen, "history_json");
  check_footer_history(root);
  const JsonValue* md = root.find("metadata");
  const JsonValue* ref = root.find("metadata_ref");
  if (md && ref) footer_fail("footer has both inline 'metadata' and 'metadata_ref'");
  const char* json_text = reinterpret_cast<const char*>(data + json_start);
  if (md) {
    if (!md->is_object()) footer_fail("footer 'metadata' is not an object");
    check_footer_metadata(*md);
    footer.metadata_json.assign(json_text + md->begin, md->end - md->begin);
  } else if (ref) {
    uint64_t off = 0, n = 0;
    const JsonValue* o = ref->is_object() ? ref->find("offset") : nullptr;
    const JsonValue* l = ref->is_object() ? ref->find("len") : nullptr;
    if (!o || !l || !o->as_u64(&off) || !l->as_u64(&n))
      footer_fail("metadata_ref must be {\"offset\": u64, \"len\": u64}");
    if (off < kSuperblockLen || !span_within(off, n, json_start)) {
      uint64_t end;
      std::string end_text = add_overflows(off, n, &end) ? "overflow" : std::to_string(end);
      footer_fail("metadata_ref [" + std::to_string(off) + ", " + end_text +
                  ") not inside the file before history_json (which starts at " + std::to_string(json_start) + ")");
    }
    JsonValue spilled = parse_json_object(data + off, n, "metadata_spill");
    check_footer_metadata(spilled);
    footer.metadata_json.assign(reinterpret_cast<const char*>(data + off), static_cast<size_t>(n));
    footer.metadata_spilled = true;
    footer.payload_limit = off;
  }
  parse_cells_ref(root, footer);
  footer.history_json.assign(json_text, static_cast<size_t>(jlen));
  footer.history_json_offset = json_start;
  footer.history_json_len = jlen;
  footer.present = true;
}

}  // namespace tet
