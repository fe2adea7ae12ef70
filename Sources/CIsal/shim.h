// CIsal: Intel's ISA-L (Debian's libisal-dev, 2.30 on bookworm), found through pkg-config
// "libisal". Debian ships no static archive, so it links as libisal.so.
//
// ISA-L symbols squeeze uses: isal_inflate_init, isal_inflate_reset, isal_inflate,
// isal_inflate_set_dict, and the fields of struct inflate_state that say where a deflate
// stream stands (block_state, bfinal, read_in_length, avail_in); isal_deflate_init,
// isal_deflate_reset, isal_deflate, and the fields of struct isal_zstream a call sets and
// reads (next_in, avail_in, next_out, avail_out, total_out, level, level_buf,
// level_buf_size, end_of_stream, flush, gzip_flag, internal_state.state), and ISAL_LOOK_AHEAD.
#pragma once
#include <isa-l/igzip_lib.h>

// The level buffer ISA-L's deflate needs at `level` (igzip_lib.h, ISAL_DEF_LVLx_DEFAULT:
// what igzip itself allocates), 0 for level 0, which needs none. The defines are arithmetic
// over other defines, which Swift does not import.
static inline uint32_t squeeze_isal_level_buffer_size(uint32_t level) {
  switch (level) {
  case 1:
    return ISAL_DEF_LVL1_DEFAULT;
  case 2:
    return ISAL_DEF_LVL2_DEFAULT;
  case 3:
    return ISAL_DEF_LVL3_DEFAULT;
  default:
    return 0;
  }
}

// ISA-L's look-ahead (igzip_lib.h, ISAL_LOOK_AHEAD: the longest match rounded up to 32, 288
// bytes): the input a call without a flush keeps back from its compression loop.
static inline uint32_t squeeze_isal_look_ahead(void) { return ISAL_LOOK_AHEAD; }
