/* tests/mockgpu/ptx/ptx_operand.c: operand values. Registers hold raw bits (LLVM 22 declares floats in
 * .b32/.b64 registers), so the instruction type says how to read them: the low size bits, sign- or
 * zero-extended to 64 by the type's signedness. Also IEEE half conversion for .f16. */
#include "ptx_internal.h"

#include <string.h>

static uint64_t extend(uint64_t v, int type) {
  int bits = type == T_PRED ? 1 : ptx_type_size(type) * 8;
  if (bits == 64) return v;
  v &= (1ull << bits) - 1;
  if (ptx_type_signed(type) && (v >> (bits - 1)) & 1) v |= ~0ull << bits;
  return v;
}

uint64_t ptx_get(const ptx_cta *c, const ptx_thread *t, const ptx_opnd *o, int type) {
  switch (o->kind) {
  case O_REG: return extend(t->r[o->reg], type);
  case O_IMM: return extend(o->imm, type);
  case O_SYM: return ptx_sym_addr(c->m, o->sym);
  case O_SREG: {
    int k = o->reg % 3;
    if (o->reg == S_LANEID) return t->lane;
    if (o->reg == S_WARPID) return t->warp;
    if (o->reg < S_NTID) return t->tid[k];
    if (o->reg < S_CTAID) return c->l->block[k];
    if (o->reg < S_NCTAID) return c->ctaid[k];
    return c->l->grid[k];
  }
  default: return 0;
  }
}

void ptx_set(ptx_thread *t, const ptx_opnd *o, uint64_t v, int type) {
  if (o->kind != O_REG) return; /* sink "_" */
  int bits = type == T_PRED ? 1 : ptx_type_size(type) * 8;
  t->r[o->reg] = bits == 64 ? v : v & ((1ull << bits) - 1);
}

float ptx_h2f(uint16_t h) {
  _Float16 x;
  memcpy(&x, &h, 2);
  return (float)x;
}
uint16_t ptx_f2h(float f) {
  _Float16 x = (_Float16)f; /* round to nearest even (C conversion in the default rounding mode) */
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
}
uint16_t ptx_d2h(double d) {
  _Float16 x = (_Float16)d; /* one rounding from double (libgcc __truncdfhf2) */
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
}
