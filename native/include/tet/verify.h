// File health for `tet verify` / `tet repair` (layout_v1.md "File health"). Structural checks
// happen in File::open (parse_catalog); these functions add decode checks of tile payloads,
// classify a footer-only failure as repairable, and apply the `footer_invalid` repair.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tet/file.h"

namespace tet {

struct VerifyFinding {
  std::string severity;        // "error" | "warning"
  std::string code;            // TET_* error code
  std::string recommendation;  // "footer_invalid" (repairable by repair_footer) or ""
  std::string message;
};

// Decodes index entries [first, first + count) of catalog().entries (file order; clamped to the
// entry count) and returns one finding per tile that fails (zstd errors, wrong decoded length).
// Raw tiles were fully bounds/length-checked at open. The others are decoded on the worker pool
// (exec/thread_pool.h; as many threads as hold at most 256 MiB of decoded tiles at once), the
// findings in index order whatever the thread count. Never throws for bad tiles; throws
// TET_IO_FILE_CHANGED when the file was truncated/extended since open (reading would fault).
std::vector<VerifyFinding> verify_tiles(const File& file, uint64_t first, uint64_t count);

struct VerifyOpenResult {
  std::shared_ptr<File> file;            // opened file (with verify_footer=false if the footer is bad)
  std::vector<VerifyFinding> findings;   // empty, or one error with recommendation "footer_invalid"
};

// Opens with verify_footer=true. When that fails only because of the footer (TET_FOOTER_*) and
// the file opens with verify_footer=false, returns that file plus an error finding with
// recommendation "footer_invalid". Any other failure is thrown as the original tet::Error.
VerifyOpenResult verify_open(const std::string& path);

// `tet repair --apply footer_invalid`: atomically rewrites `path` without its footer region
// (bytes from the footer's start, or from the corrupt footer's start when it can be located)
// and with superblock flags bit 1 cleared: copy to a temp file beside it, fsync, rename, fsync
// the directory. The file must otherwise open (with verify_footer=false). Throws tet::Error
// (TET_WRITE_IO for I/O failures; the temp file is removed). Returns the new file length.
uint64_t repair_footer(const std::string& path);

// The tables region (docs/format-tables.md): its footer reference, whole-region checksum, every
// record, every column's blocks (validated as at first read) and the metablocks of known kinds.
// With `deep`, every block is also decoded and its zone map, SORTED flag, NaN and null counts
// recomputed. One finding per problem, each with recommendation "cells_invalid"; none for a
// file without tables. Throws only TET_IO_FILE_CHANGED.
std::vector<VerifyFinding> verify_tables(const File& file, bool deep);

// `tet repair --apply cells_invalid`: atomically rewrites `path` without its tables region and
// without the footer's "cells" member, keeping tensors, history and metadata (same temp-file,
// fsync, rename discipline as repair_footer). Returns the new file length.
uint64_t repair_cells(const std::string& path);

}  // namespace tet
