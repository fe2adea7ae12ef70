// CIsal: the inflate half of Intel's ISA-L (Debian's libisal-dev, 2.30 on bookworm), found
// through pkg-config "libisal". Debian ships no static archive, so it links as libisal.so.
//
// ISA-L symbols squeeze uses: isal_inflate_init, isal_inflate_reset, isal_inflate,
// isal_inflate_set_dict, and the fields of struct inflate_state that say where a deflate
// stream stands (block_state, bfinal, read_in_length, avail_in).
#pragma once
#include <isa-l/igzip_lib.h>
