// THST history footer (layout_v1.md "Optional history footer"): locate the tail, validate the
// JSON and the metadata / metadata_ref rules, and compute the payload limit.
#pragma once
#include <cstdint>
#include <string>

#include "tet/catalog.h"
#include "util/json.h"

namespace tet {

constexpr uint64_t kFooterTailLen = 16;           // history_json_len u64 + version u32 + "THST"
constexpr uint64_t kMetadataInlineLimit = 65536;  // writers spill metadata above this

// Fills `footer` for a file whose superblock has flags bit 1. Throws TET_FOOTER_* when
// anything is wrong. footer.payload_limit is set to the footer region's start.
void parse_footer(const uint8_t* data, uint64_t len, Footer& footer);

// With verify_footer=false: where the (possibly corrupt) footer region starts, or `len` when
// no THST tail with a sane length can be found.
uint64_t locate_footer_start(const uint8_t* data, uint64_t len);

// Shape rules shared with the writer (throw TET_FOOTER_INVALID): history rows are objects with
// string op/source/at or legacy [op, source, at] triples; metadata.datasets entries carry
// dim_names (strings) and coords ({"labels": [...]}).
void check_footer_history(const JsonValue& root);

// The footer region bytes for a writer placing it at file offset `start`: metadata spill (when
// the inline JSON would exceed kMetadataInlineLimit) + history_json + the 16-byte tail.
// `history_array_json` is the history list text ("[]" for none), `metadata_json` the metadata
// object text or "", `extra_members` more members (",\"cells\":{...}") or "".
std::string footer_region_bytes(uint64_t start, const std::string& history_array_json,
                                const std::string& metadata_json, const std::string& extra_members);
void check_footer_metadata(const JsonValue& metadata);

}  // namespace tet
