/* compile/hostcc.h: internals of the host C compiler (bg_compile_c), exposed for tests. */
#ifndef BG_COMPILE_HOSTCC_H
#define BG_COMPILE_HOSTCC_H

#include <stddef.h>

/* Flags every CPU kernel is compiled with, before the caller's extra flags. No -march=native:
 * cache entries stay valid on any machine sharing the cache; pass it in extra_flags for speed. */
#define BG_HOSTCC_FLAGS "-O2 -fPIC -shared -ffp-contract=off -fno-math-errno -fno-ident"

/* The cache entry path bg_compile_c uses for (src, extra_flags) with the current compiler. */
int bg_hostcc_entry_path(const char *src, const char *extra_flags, char *out, size_t n);

#endif
