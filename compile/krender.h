/* compile/krender.h: the C renderer of linearized kernels and its prelude (private to compile/). */
#ifndef BG_COMPILE_KRENDER_H
#define BG_COMPILE_KRENDER_H

#include "compile/kernel_internal.h"
#include "compile/klinear.h"

enum { KP_H2F = 1u << 0, KP_F2H = 1u << 1, KP_BF2F = 1u << 2, KP_F2BF = 1u << 3, KP_THREEFRY = 1u << 4, KP_D2F_ODD = 1u << 5 };
enum { KP_MAX_BITCASTS = 32 };

/* Helpers a kernel needs ahead of its entry function. */
typedef struct kprelude {
  unsigned need;                                  /* KP_* */
  const char *bitcasts[KP_MAX_BITCASTS][2];       /* (from, to) C types */
  unsigned nbitcasts;
} kprelude;

/* The includes and the helpers p asks for. */
void kprelude_emit(kstr *s, const kprelude *p);
/* Records a bitcast helper bg_bc_<tag(from)>_<tag(to)>. */
void kprelude_bitcast(kprelude *p, const char *from, const char *to);
const char *kprelude_tag(const char *ctype);

/* C source of the linearized kernel l with the CPU entry ABI (baregpu/compile.h), entry symbol
 * `name`. *src is malloc'd; *flops estimates the arithmetic per launch. 0 or -BG_E*. */
int krender_c(ir_ctx *ctx, const kinfo *info, klin *l, const char *name, char **src, uint64_t *flops);

#endif
