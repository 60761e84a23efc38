/* tests/mockgpu/ptx/ptx_memory.c: ld/st/atom/red/cvta and the state spaces: .param (the launch's byte
 * buffer), .global (the caller's callbacks), .shared (per CTA), .local (per thread), generic addresses
 * (cvta.shared/.local map into windows above every global address). Every access is bounds-checked and
 * must be naturally aligned (PTX ISA "Addresses as Operands": addresses are aligned to the access size). */
#include "ptx_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

uint64_t ptx_sym_addr(const ptx_module *m, int sym) {
  const ptx_sym *s = &m->syms[sym];
  return s->off + (s->space == SP_SHARED && s->entry >= 0 ? m->shared_module : 0);
}

static const char *const space_names[] = {"generic", "param", "global", "shared", "local"};

/* Copy n bytes between v and the state space; write selects the direction. */
static int access(ptx_cta *c, ptx_thread *t, int space, uint64_t addr, void *v, size_t n, bool write) {
  if (addr % n) {
    snprintf(c->err, c->errlen, "misaligned %zu-byte %s access at 0x%" PRIx64, n, space_names[space], addr);
    return -1;
  }
  if (space == SP_GENERIC) {
    if (addr - PTX_WIN_SHARED < PTX_WIN_SIZE) { space = SP_SHARED; addr -= PTX_WIN_SHARED; }
    else if (addr - PTX_WIN_LOCAL < PTX_WIN_SIZE) { space = SP_LOCAL; addr -= PTX_WIN_LOCAL; }
    else space = SP_GLOBAL;
  }
  uint8_t *base = NULL;
  uint64_t size = 0;
  if (space == SP_GLOBAL) {
    const ptx_mem *mem = &c->l->mem;
    int rc = write ? mem->write(mem->ctx, addr, v, n) : mem->read(mem->ctx, addr, v, n);
    if (rc) snprintf(c->err, c->errlen, "global memory fault at 0x%" PRIx64 " (%zu-byte %s)", addr, n, write ? "write" : "read");
    return rc ? -1 : 0;
  }
  if (space == SP_PARAM) {
    if (write) { snprintf(c->err, c->errlen, "store to kernel .param space"); return -1; }
    base = (uint8_t *)(uintptr_t)c->l->params; size = c->l->params_size;
  } else if (space == SP_SHARED) { base = c->shared; size = c->shared_size; }
  else { base = t->local; size = c->e->local_size; }
  if (addr >= size || n > size - addr) {
    snprintf(c->err, c->errlen, "%s access out of bounds at 0x%" PRIx64 " (%zu bytes; the space has %" PRIu64 ")",
             space_names[space], addr, n, size);
    return -1;
  }
  if (write) memcpy(base + addr, v, n); else memcpy(v, base + addr, n);
  return 0;
}

static uint64_t address(ptx_cta *c, ptx_thread *t, const ptx_opnd *o) {
  uint64_t a = (uint64_t)o->off;
  if (o->reg >= 0) a += t->r[o->reg];
  if (o->sym >= 0) a += ptx_sym_addr(c->m, o->sym);
  return a;
}

static int fail(ptx_cta *c, const char *m) { snprintf(c->err, c->errlen, "%s", m); return -1; }

static int atomic(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  int ty = in->type[0], sz = ptx_type_size(ty);
  bool red = in->op == OP_RED;
  const ptx_opnd *ao = &in->ops[red ? 0 : 1];
  int nsrc = in->atom_op == 5 ? 2 : 1; /* cas: compare, swap */
  if (ao->kind != O_ADDR || in->nops != (red ? 1 : 2) + nsrc) return fail(c, "bad atom/red operands");
  if ((sz != 4 && sz != 8) || ty == T_F32X2) return fail(c, "atom/red type not implemented");
  if (in->space != SP_GLOBAL && in->space != SP_SHARED && in->space != SP_GENERIC) return fail(c, "atom/red state space");
  uint64_t addr = address(c, t, ao), old = 0, b = ptx_get(c, t, &in->ops[red ? 1 : 2], ty), r;
  if (access(c, t, in->space, addr, &old, (size_t)sz, false)) return -1;
  bool fl = ptx_type_float(ty), sg = ptx_type_signed(ty);
  if (fl && in->atom_op != 1 && in->atom_op != 4) return fail(c, "float atom/red operation not implemented");
  uint64_t ox = sz == 4 && sg ? (uint64_t)(int64_t)(int32_t)old : old;
  switch (in->atom_op) {
  case 1:
    if (ty == T_F32) { float x, y; uint32_t u = (uint32_t)old, w = (uint32_t)b; memcpy(&x, &u, 4); memcpy(&y, &w, 4);
      x += y; memcpy(&u, &x, 4); r = u; }
    else if (ty == T_F64) { double x, y; memcpy(&x, &old, 8); memcpy(&y, &b, 8); x += y; memcpy(&r, &x, 8); }
    else r = old + b;
    break;
  case 2: r = sg ? ((int64_t)ox < (int64_t)b ? ox : b) : (ox < b ? ox : b); break;
  case 3: r = sg ? ((int64_t)ox > (int64_t)b ? ox : b) : (ox > b ? ox : b); break;
  case 4: r = b; break;
  case 5: r = old == b ? ptx_get(c, t, &in->ops[3], ty) : old; break;
  case 6: r = old & b; break;
  case 7: r = old | b; break;
  default: r = old ^ b; break;
  }
  if (access(c, t, in->space, addr, &r, (size_t)sz, true)) return -1;
  if (!red) ptx_set(t, &in->ops[0], old, ty);
  return 0;
}

int ptx_exec_mem(ptx_cta *c, ptx_thread *t, const ptx_ins *in) {
  int ty = in->type[0];
  if (in->op == OP_CVTA) {
    if (in->nops != 2 || (ty != T_U64 && ty != T_B64)) return fail(c, "cvta needs .u64 and two operands");
    uint64_t a = ptx_get(c, t, &in->ops[1], T_U64);
    uint64_t win = in->space == SP_SHARED ? PTX_WIN_SHARED : in->space == SP_LOCAL ? PTX_WIN_LOCAL : 0;
    if (in->space == SP_PARAM || in->space == SP_GENERIC) return fail(c, "cvta state space not implemented");
    ptx_set(t, &in->ops[0], in->flags & F_TO ? a - win : a + win, T_U64);
    return 0;
  }
  if (in->op == OP_ATOM || in->op == OP_RED) return atomic(c, t, in);
  bool st = in->op == OP_ST;
  if (in->nops != 2 || in->ops[st ? 0 : 1].kind != O_ADDR) return fail(c, "ld/st needs a destination and an address");
  const ptx_opnd *v = &in->ops[st ? 1 : 0];
  int nv = in->vec ? in->vec : 1, sz = ptx_type_size(ty);
  if ((in->vec && (v->kind != O_VEC || v->nv != nv)) || (!in->vec && v->kind == O_VEC))
    return fail(c, "vector width and operand do not match");
  uint64_t addr = address(c, t, &in->ops[st ? 0 : 1]);
  uint8_t buf[32] = {0};
  if (st) {
    for (int i = 0; i < nv; i++) {
      uint64_t x = v->kind == O_VEC ? ptx_vec_elem(t, v, i) : ptx_get(c, t, v, ty);
      memcpy(buf + i * sz, &x, (size_t)sz); /* little-endian host, like the GPU */
    }
    return access(c, t, in->space, addr, buf, (size_t)(nv * sz), true);
  }
  if (access(c, t, in->space, addr, buf, (size_t)(nv * sz), false)) return -1;
  for (int i = 0; i < nv; i++) {
    uint64_t x = 0;
    memcpy(&x, buf + i * sz, (size_t)sz);
    if (ptx_type_signed(ty) && sz < 8 && (x >> (sz * 8 - 1)) & 1) x |= ~0ull << (sz * 8);
    int r = v->kind == O_VEC ? v->vr[i] : v->kind == O_REG ? v->reg : -1;
    if (v->kind != O_VEC && v->kind != O_REG && v->kind != O_SINK) return fail(c, "ld destination is not a register");
    if (r >= 0) t->r[r] = x;
  }
  return 0;
}
