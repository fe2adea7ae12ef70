// CLibdeflate: libdeflate for Swift (Debian's libdeflate-dev, 1.14 on bookworm).
//
// Linked statically (`link ":libdeflate.a"` in the module map, which the linker reads as
// `-l:libdeflate.a`): the same compression loop is measurably slower against Debian's
// libdeflate.so (the Performance article gives the figures). For that reason the target
// has no pkgConfig, which would add `-ldeflate` (the shared library); the
// header is in /usr/include.
//
// libdeflate symbols squeeze uses: libdeflate_alloc_compressor, libdeflate_deflate_compress,
// libdeflate_deflate_compress_bound, libdeflate_free_compressor, libdeflate_crc32.
#pragma once
#include <libdeflate.h>
