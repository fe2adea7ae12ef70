// CZlib: zlib for Swift (Debian's zlib1g-dev, found through pkg-config "zlib").
//
// zlib symbols squeeze uses: deflateInit2_, deflate, deflateReset, deflateSetDictionary,
// deflateEnd, deflateBound, inflateInit2_, inflate, inflateReset, inflateEnd, crc32,
// crc32_combine, zError, zlibVersion, and the Z_* constants.
//
// deflateInit2 and inflateInit2 are function-like macros in zlib.h, which Swift cannot
// call; the static inline wrappers below expand them (zlib manual, "Advanced functions").
#pragma once
#include <zlib.h>

static inline int squeeze_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel,
                                       int strategy) {
  return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}

static inline int squeeze_inflateInit2(z_streamp stream, int windowBits) {
  return inflateInit2(stream, windowBits);
}
