#include "codec/zstd_codec.h"

#include <zstd.h>

#include <memory>

#include "tet/error.h"

namespace tet {
namespace {

struct DCtxDeleter { void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); } };
struct CCtxDeleter { void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); } };

ZSTD_DCtx* thread_dctx() {
  static thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (!dctx) fail("TET_INTERNAL", "ZSTD_createDCtx failed (out of memory)");
  return dctx.get();
}

ZSTD_CCtx* thread_cctx() {
  static thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  if (!cctx) fail("TET_INTERNAL", "ZSTD_createCCtx failed (out of memory)");
  return cctx.get();
}

// The densest zstd block (RLE: 4 bytes -> 128 KiB) bounds how much a frame can expand; a
// raw_byte_len beyond it cannot be honest, so we refuse before allocating it.
constexpr uint64_t kMaxExpansion = 32768;
constexpr uint64_t kExpansionSlack = uint64_t(1) << 20;

}  // namespace

void zstd_compress_frame(const uint8_t* src, size_t len, int level, std::vector<uint8_t>& out) {
  out.resize(ZSTD_compressBound(len));
  size_t n = ZSTD_compressCCtx(thread_cctx(), out.data(), out.size(), src, len, level);
  if (ZSTD_isError(n)) fail("TET_WRITE_COMPRESS", std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  out.resize(n);
}

void zstd_decode_exact(const uint8_t* src, size_t stored_len, uint64_t raw_len, ScratchBytes& out,
                       const std::string& context) {
  unsigned long long declared = ZSTD_getFrameContentSize(src, stored_len);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    fail("TET_DECODE_ZSTD", context + ": not a valid zstd frame header (" + std::to_string(stored_len) + " stored bytes)");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw_len)
    fail("TET_DECODE_LENGTH", context + ": zstd frame declares " + std::to_string(declared) +
                                  " decoded bytes but raw_byte_len is " + std::to_string(raw_len));
  uint64_t cap = uint64_t(stored_len) * kMaxExpansion + kExpansionSlack;
  if (raw_len > cap || raw_len > uint64_t(SIZE_MAX) / 2)
    fail("TET_DECODE_LENGTH", context + ": raw_byte_len " + std::to_string(raw_len) + " is more than a " +
                                  std::to_string(stored_len) + "-byte zstd frame can decode to");
  out.resize(static_cast<size_t>(raw_len));
  size_t n = ZSTD_decompressDCtx(thread_dctx(), out.data(), out.size(), src, stored_len);
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
      fail("TET_DECODE_LENGTH", context + ": zstd frame decodes to more than raw_byte_len " + std::to_string(raw_len));
    fail("TET_DECODE_ZSTD", context + ": zstd decode failed: " + ZSTD_getErrorName(n));
  }
  if (n != raw_len)
    fail("TET_DECODE_LENGTH", context + ": zstd decoded " + std::to_string(n) + " bytes but raw_byte_len is " +
                                  std::to_string(raw_len));
}

}  // namespace tet
