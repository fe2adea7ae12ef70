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
#include <cpuid.h>
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

// Whether ISA-L runs its AVX-512 code here: the CPU has AVX512F, CD, BW, DQ and VL (CPUID
// leaf 7, EBX bits 16, 28, 30, 17 and 31) and the kernel saves the registers they use
// (XGETBV: the SSE, AVX, opmask and both ZMM state bits), the set ISA-L's run-time
// dispatcher asks for before it picks its AVX-512 functions. Its level 3 finds matches with
// other code elsewhere, which is slower and writes other bytes.
static inline int squeeze_isal_uses_avx512(void) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; // OSXSAVE
  unsigned int low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  (void)high;
  if ((low & 0xE6u) != 0xE6u) return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  const unsigned int wanted = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
  return (b & wanted) == wanted;
}
