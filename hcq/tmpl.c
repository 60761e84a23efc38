/* hcq/tmpl.c: command templates and patch records. A backend lowers a recorded queue program once;
 * every operand goes through bg_tmpl_put: constants land in the bytes, symbolic operands become
 * patches compiled to a short postfix program over variable slots. A submit re-evaluates only the
 * patches whose slots changed. */
#include <stdlib.h>
#include <string.h>

#include "hcq/backend.h"
#include "hcq/tmpl.h"
#include "util/grow.h"

#define MAX_STACK 16

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  return bg_grow(p, cap, need, elem) ? 0 : bg_error(BG_ENOMEM, "out of host memory for a command template");
}

long bg_tmpl_reserve(bg_tmpl *t, enum bg_tmpl_section sec, size_t n, size_t align) {
  uint8_t **buf = sec == BG_SEC_CMD ? &t->cmd : &t->kargs;
  size_t *len = sec == BG_SEC_CMD ? &t->cmd_len : &t->kargs_len;
  size_t *cap = sec == BG_SEC_CMD ? &t->cmd_cap : &t->kargs_cap;
  if (align == 0) align = 1;
  size_t off = (*len + align - 1) & ~(align - 1);
  int r = grow((void **)buf, cap, off + n, 1);
  if (r < 0) return r;
  memset(*buf + *len, 0, off + n - *len);
  *len = off + n;
  return (long)off;
}

static int slot_of(const bg_tmpl *t, const ir_node *var) {
  for (int s = 0; s < BG_NSLOTS; s++)
    if (t->slot_var[s] == var) return s;
  return -1;
}

static int emit(bg_tmpl *t, bg_pinsn in) {
  int r = grow((void **)&t->code, &t->code_cap, t->ncode + 1, sizeof(bg_pinsn));
  if (r < 0) return r;
  t->code[t->ncode++] = in;
  return 0;
}

/* Postfix compile; *depth tracks the evaluation stack needed. */
static int compile(bg_tmpl *t, const ir_node *u, uint64_t deps[2], int *depth, int *maxdepth) {
  int r;
  if (u->op == IR_CONST) {
    if ((r = emit(t, (bg_pinsn){BG_P_CONST, 0, (uint64_t)u->arg.i})) < 0) return r;
  } else if (u->op == IR_DEFINE_VAR) {
    int s = slot_of(t, u);
    if (s < 0) {
      const ir_var_info *vi = ir_var_get(u);
      return bg_error(BG_EINVAL, "queue operand uses variable '%s' that belongs to no slot of this queue",
                      vi ? vi->name : "?");
    }
    deps[s / 64] |= 1ull << (s % 64);
    if ((r = emit(t, (bg_pinsn){BG_P_SLOT, (uint8_t)s, 0})) < 0) return r;
  } else {
    static const struct { uint16_t op; uint8_t p; } map[] = {
      {IR_ADD, BG_P_ADD}, {IR_SUB, BG_P_SUB}, {IR_MUL, BG_P_MUL}, {IR_AND, BG_P_AND}, {IR_OR, BG_P_OR},
      {IR_XOR, BG_P_XOR}, {IR_SHL, BG_P_SHL}, {IR_SHR, BG_P_SHR}, {IR_IDIV, BG_P_DIV}, {IR_MOD, BG_P_MOD},
      {IR_MAX, BG_P_MAX},
    };
    size_t k;
    for (k = 0; k < sizeof(map) / sizeof(map[0]); k++)
      if (map[k].op == u->op) break;
    if (k == sizeof(map) / sizeof(map[0]) || u->nsrc != 2)
      return bg_error(BG_EINVAL, "queue operand: op %s is not allowed (constants, variables, + - * & | ^ << >> // %% max)",
                      ir_op_name((enum ir_op)u->op));
    if ((r = compile(t, u->src[0], deps, depth, maxdepth)) < 0) return r;
    if ((r = compile(t, u->src[1], deps, depth, maxdepth)) < 0) return r;
    (*depth)--;
    return emit(t, (bg_pinsn){map[k].p, 0, 0});
  }
  if (++*depth > *maxdepth) *maxdepth = *depth;
  if (*maxdepth > MAX_STACK) return bg_error(BG_EINVAL, "queue operand expression is nested deeper than %d", MAX_STACK);
  return 0;
}

static void store(uint8_t *dst, unsigned width, uint64_t v) {
  switch (width) {
  case 1: *dst = (uint8_t)v; break;
  case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
  default: memcpy(dst, &v, 8); break;
  }
}

static bool fits(uint64_t v, unsigned width) {
  if (width >= 8) return true;
  uint64_t hi = v >> (8 * width);
  uint64_t sign_ext = ~0ull >> (8 * width);
  return hi == 0 || (hi == sign_ext && (v >> (8 * width - 1) & 1)); /* unsigned or sign-extended */
}

int bg_tmpl_put(bg_tmpl *t, enum bg_tmpl_section sec, size_t offset, unsigned width, const ir_node *v) {
  uint8_t *base = sec == BG_SEC_CMD ? t->cmd : t->kargs;
  size_t len = sec == BG_SEC_CMD ? t->cmd_len : t->kargs_len;
  if (!(width == 1 || width == 2 || width == 4 || width == 8) || offset + width > len)
    return bg_error(BG_EINVAL, "template: field of %u bytes at offset %zu outside the %s section (%zu bytes)", width,
                    offset, sec == BG_SEC_CMD ? "command" : "kernel-argument", len);
  if (v->op == IR_CONST) {
    uint64_t c = (uint64_t)v->arg.i;
    if (!fits(c, width))
      return bg_error(BG_EINVAL, "template: constant 0x%llx does not fit the %u-byte field at offset %zu",
                      (unsigned long long)c, width, offset);
    store(base + offset, width, c);
    return 0;
  }
  int r = grow((void **)&t->patches, &t->patches_cap, t->npatches + 1, sizeof(bg_patch));
  if (r < 0) return r;
  bg_patch *p = &t->patches[t->npatches];
  memset(p, 0, sizeof(*p));
  p->section = (uint8_t)sec;
  p->width = (uint8_t)width;
  p->offset = (uint32_t)offset;
  p->code_start = (uint32_t)t->ncode;
  int depth = 0, maxdepth = 0;
  if ((r = compile(t, v, p->deps, &depth, &maxdepth)) < 0) return r;
  p->code_len = (uint32_t)(t->ncode - p->code_start);
  t->npatches++;
  return 0;
}

long bg_tmpl_emit_dw(bg_tmpl *t, const uint32_t *dw, unsigned n) {
  long off = bg_tmpl_reserve(t, BG_SEC_CMD, (size_t)n * 4, 4);
  if (off >= 0) memcpy(t->cmd + off, dw, (size_t)n * 4);
  return off;
}

int bg_tmpl_put_dw(bg_tmpl *t, long off, unsigned dw, unsigned width, const ir_node *v) {
  return bg_tmpl_put(t, BG_SEC_CMD, (size_t)off + 4u * dw, width, v);
}

const ir_node *bg_tmpl_kargs_addr(bg_tmpl *t, size_t kargs_offset) {
  const ir_node *base = t->slot_var[BG_SLOT_KARGS_BASE];
  if (!base) base = t->slot_var[BG_SLOT_KARGS_BASE] = ir_var(t->ir, IR_DT_UINT64, "kargs_base", 0, INT64_MAX);
  if (!base || kargs_offset == 0) return base;
  const ir_node *off = ir_const_int(t->ir, IR_DT_UINT64, (int64_t)kargs_offset);
  return off ? ir_alu2(t->ir, IR_ADD, base, off) : NULL;
}

static uint64_t eval(const bg_pinsn *c, uint32_t n, const uint64_t *slots) {
  if (n == 1) return c->op == BG_P_SLOT ? slots[c->slot] : c->c; /* the common case: a bare variable */
  uint64_t st[MAX_STACK] = {0};
  int sp = 0;
  for (uint32_t i = 0; i < n; i++) {
    const bg_pinsn *in = &c[i];
    if (in->op == BG_P_CONST) { st[sp++] = in->c; continue; }
    if (in->op == BG_P_SLOT) { st[sp++] = slots[in->slot]; continue; }
    uint64_t b = st[--sp], a = st[sp - 1], x;
    switch (in->op) {
    case BG_P_ADD: x = a + b; break;
    case BG_P_SUB: x = a - b; break;
    case BG_P_MUL: x = a * b; break;
    case BG_P_AND: x = a & b; break;
    case BG_P_OR: x = a | b; break;
    case BG_P_XOR: x = a ^ b; break;
    case BG_P_SHL: x = b >= 64 ? 0 : a << b; break;
    case BG_P_SHR: x = b >= 64 ? 0 : a >> b; break;
    case BG_P_DIV: x = b ? a / b : 0; break;
    case BG_P_MOD: x = b ? a % b : 0; break;
    default: x = a > b ? a : b; break;
    }
    st[sp - 1] = x;
  }
  return st[0];
}

size_t bg_tmpl_apply(bg_tmpl *t, const uint64_t *slots, const uint64_t changed[2], bool all) {
  size_t applied = 0;
  for (size_t i = 0; i < t->npatches; i++) {
    bg_patch *p = &t->patches[i];
    if (!all && !(p->deps[0] & changed[0]) && !(p->deps[1] & changed[1])) continue;
    uint64_t v = eval(&t->code[p->code_start], p->code_len, slots);
    if (!all && v == p->last) continue;
    p->last = v;
    store((p->section == BG_SEC_CMD ? t->cmd : t->kargs) + p->offset, p->width, v);
    applied++;
  }
  return applied;
}

int bg_tmpl_expr(bg_tmpl *t, const ir_node *v, bg_texpr *out) {
  memset(out, 0, sizeof(*out));
  out->code_start = (uint32_t)t->ncode;
  int depth = 0, maxdepth = 0, r = compile(t, v, out->deps, &depth, &maxdepth);
  if (r < 0) return r;
  out->code_len = (uint32_t)(t->ncode - out->code_start);
  return 0;
}

uint64_t bg_tmpl_eval(const bg_tmpl *t, const bg_texpr *e, const uint64_t *slots) {
  return eval(&t->code[e->code_start], e->code_len, slots);
}

void bg_tmpl_free(bg_tmpl *t) {
  free(t->cmd);
  free(t->kargs);
  free(t->patches);
  free(t->code);
  /* Slot variables outlive a recording: they are interned in the queue's context. */
  ir_ctx *ir = t->ir;
  const ir_node *slots[BG_NSLOTS];
  memcpy(slots, t->slot_var, sizeof(slots));
  memset(t, 0, sizeof(*t));
  t->ir = ir;
  memcpy(t->slot_var, slots, sizeof(slots));
}
