/* tests/mockgpu/rdna3/rdna3_valu.c: the per-instruction plumbing of the vector ALU (decoded by
 * rdna3_valu_decode.c): operand fetch with inline constants and modifiers, EXEC masking,
 * carries and compare masks (wave32: one SGPR), 16-bit halves (gfx11 true16: bit 7 of an e32
 * VGPR number or VOP3 OPSEL selects the high half), output modifiers. Lane arithmetic is in
 * rdna3_valu_lane.c. */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

typedef struct vsrc {
  const uint32_t *lo, *hi;  /* VGPR(s), or NULL for a scalar value */
  uint64_t k;
  unsigned sh;              /* 16-bit operands: 0 or 16 */
  uint8_t t;
} vsrc;

static const uint16_t inline_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};


static int resolve(rdna3_ctx *c, rdna3_wave *w, unsigned code, uint8_t t, bool hi, vsrc *o) {
  *o = (vsrc){.t = t, .sh = hi ? 16 : 0};
  if (code >= RDNA3_SRC_VGPR) {
    unsigned r = code - RDNA3_SRC_VGPR;
    if (rdna3_vgprs(c, w, r, rdna3_vt64(t) ? 2 : 1, "source")) return -1;
    o->lo = w->v[r];
    if (rdna3_vt64(t)) o->hi = w->v[r + 1];
    return 0;
  }
  if (code == RDNA3_SRC_DPP8 || code == RDNA3_SRC_DPP8FI || code == RDNA3_SRC_DPP16 || code == 249)
    return rdna3_fail(c, w, "DPP/SDWA operands are not implemented");
  if (code == RDNA3_SRC_LDS_DIRECT) return rdna3_fail(c, w, "LDS_DIRECT operand is not implemented");
  if (code >= RDNA3_SRC_HALF && code <= RDNA3_SRC_INV_2PI && rdna3_vt16(t)) {
    o->k = inline_f16[code - RDNA3_SRC_HALF];
    o->sh = 0;
  } else if (code == RDNA3_SRC_LITERAL) {
    o->k = t == VT_F64 ? (uint64_t)c->lit << 32 : c->lit;
  } else if (rdna3_vt64(t)) {
    o->k = rdna3_sreg64(c, w, code);
  } else {
    o->k = rdna3_sreg32(c, w, code);
    if (code >= RDNA3_NSGPR) o->sh = 0;  /* constants have no high half to select */
  }
  return 0;
}

static inline uint64_t rd(const vsrc *o, unsigned l) {
  uint64_t v;
  if (o->lo) {
    v = o->lo[l];
    if (o->hi) v |= (uint64_t)o->hi[l] << 32;
  } else {
    v = o->k;
  }
  if (o->t == VT_B16 || o->t == VT_F16) v = (v >> o->sh) & 0xffff;
  return v;
}

bool rdna3_is_vop3sd(unsigned op) {
  return op == V_ADD_CO_CI_U32 || op == V_SUB_CO_CI_U32 || op == V_SUBREV_CO_CI_U32 ||
         op == V_ADD_CO_U32 || op == V_SUB_CO_U32 || op == V_SUBREV_CO_U32 ||
         op == V_DIV_SCALE_F32 || op == V_DIV_SCALE_F64 || op == V_MAD_U64_U32 || op == V_MAD_I64_I32;
}

static uint64_t sign_bit(uint8_t t) {
  return t == VT_F16 ? 0x8000 : t == VT_F32 ? 0x80000000u : t == VT_F64 ? 1ull << 63 : 0;
}

static bool takes_carry(unsigned op) {
  return op == V_ADD_CO_CI_U32 || op == V_SUB_CO_CI_U32 || op == V_SUBREV_CO_CI_U32 ||
         op == V_CNDMASK_B32 || op == V_CNDMASK_B16;
}

bool rdna3_vopc_compare(unsigned op, uint8_t t, uint64_t a, uint64_t b) {
  unsigned cmp = op & 0x7f;
  if (cmp >= V_CMP_CLASS_F16) {
    unsigned bits = t == VT_F16 ? 16 : t == VT_F32 ? 32 : 64;
    return (b >> rdna3_class(a, bits)) & 1;
  }
  if (t == VT_F16 || t == VT_F32 || t == VT_F64) {
    double x = t == VT_F16 ? rdna3_h2f((uint16_t)a) : t == VT_F32 ? rdna3_f((uint32_t)a) : rdna3_d(a);
    double y = t == VT_F16 ? rdna3_h2f((uint16_t)b) : t == VT_F32 ? rdna3_f((uint32_t)b) : rdna3_d(b);
    switch (cmp & 15) {
    case 0: return false;
    case 1: return x < y;
    case 2: return x == y;
    case 3: return x <= y;
    case 4: return x > y;
    case 5: return x < y || x > y;
    case 6: return x >= y;
    case 7: return !isnan(x) && !isnan(y);
    case 8: return isnan(x) || isnan(y);
    case 9: return !(x >= y);
    case 10: return !(x < y || x > y);
    case 11: return !(x > y);
    case 12: return !(x <= y);
    case 13: return !(x == y);
    case 14: return !(x < y);
    default: return true;
    }
  }
  bool sgn = (cmp & 8) == 0;  /* I16/I32/I64 come before U16/U32/U64 in each group of 16 */
  int64_t sa, sb;
  if (t == VT_B16) sa = (int16_t)a, sb = (int16_t)b;
  else if (t == VT_B32) sa = (int32_t)a, sb = (int32_t)b;
  else sa = (int64_t)a, sb = (int64_t)b;
  int lt = sgn ? sa < sb : a < b, gt = sgn ? sa > sb : a > b, eq = a == b;
  switch (cmp & 7) {
  case 0: return false;
  case 1: return lt;
  case 2: return eq;
  case 3: return lt || eq;
  case 4: return gt;
  case 5: return !eq;
  case 6: return gt || eq;
  default: return true;
  }
}

static uint64_t out_mods(const rdna3_vinst *in, uint8_t t, uint64_t d) {
  if (t == VT_F32) {
    float f = rdna3_f((uint32_t)d);
    if (in->omod) f *= in->omod == 1 ? 2.0f : in->omod == 2 ? 4.0f : 0.5f;
    if (in->clamp) f = isnan(f) || f <= 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;  /* -0 clamps to +0 */
    return rdna3_u(f);
  }
  if (t == VT_F64) {
    double f = rdna3_d(d);
    if (in->omod) f *= in->omod == 1 ? 2.0 : in->omod == 2 ? 4.0 : 0.5;
    if (in->clamp) f = isnan(f) || f <= 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    return rdna3_ud(f);
  }
  float f = rdna3_h2f((uint16_t)d);
  if (in->omod) f *= in->omod == 1 ? 2.0f : in->omod == 2 ? 4.0f : 0.5f;
  if (in->clamp) f = isnan(f) || f <= 0.0f ? 0.0f : f > 1.0f ? 1.0f : f;  /* -0 clamps to +0 */
  return rdna3_f2h(f);
}

static void write_lane(rdna3_wave *w, unsigned vdst, uint8_t t, bool hi, unsigned l, uint64_t d) {
  if (rdna3_vt64(t)) {
    w->v[vdst][l] = (uint32_t)d;
    w->v[(vdst + 1) & 0xff][l] = (uint32_t)(d >> 32);
  } else if (rdna3_vt16(t)) {
    uint32_t v = w->v[vdst][l];
    w->v[vdst][l] = hi ? (v & 0xffff) | (uint32_t)(d & 0xffff) << 16 : (v & 0xffff0000u) | (uint32_t)(d & 0xffff);
  } else {
    w->v[vdst][l] = (uint32_t)d;
  }
}

void rdna3_valu_commit(rdna3_wave *w, const rdna3_vresult *r) {
  if (!rdna3_vt64(r->info->dst) && !rdna3_vt16(r->info->dst)) {
    uint32_t *dst = w->v[r->in.vdst];
    for (unsigned l = 0; l < RDNA3_LANES; l++)
      if ((r->mask >> l) & 1) dst[l] = (uint32_t)r->d[l];
    return;
  }
  for (unsigned l = 0; l < RDNA3_LANES; l++)
    if ((r->mask >> l) & 1) write_lane(w, r->in.vdst, r->info->dst, r->in.dst_hi, l, r->d[l]);
}

/* v_readfirstlane / v_readlane / v_writelane: cross-lane moves between VGPRs and SGPRs. */
static int lane_moves(rdna3_ctx *c, rdna3_wave *w, const rdna3_vinst *in) {
  vsrc s0;
  if (resolve(c, w, in->src[0], VT_B32, false, &s0)) return -1;
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  if (in->op == V_READFIRSTLANE_B32) {
    unsigned l = exec ? (unsigned)__builtin_ctz(exec) : 0;
    rdna3_swrite32(w, in->vdst, (uint32_t)rd(&s0, l));
  } else if (in->op == V_READLANE_B32) {
    rdna3_swrite32(w, in->vdst, (uint32_t)rd(&s0, rdna3_sreg32(c, w, in->src[1]) & 31));
  } else {
    if (rdna3_vgprs(c, w, in->vdst, 1, "destination")) return -1;
    w->v[in->vdst][rdna3_sreg32(c, w, in->src[1]) & 31] = (uint32_t)rd(&s0, 0);
  }
  return 0;
}

/* v_movrel*: VGPR numbers offset by M0 (LLVM's lowering of dynamically indexed register arrays). */
static int movrel(rdna3_ctx *c, rdna3_wave *w, const rdna3_vinst *in) {
  uint32_t m0 = w->s[RDNA3_M0];
  unsigned dst = in->vdst, src = in->src[0];
  if (in->op == V_MOVRELD_B32 || in->op == V_MOVRELSD_B32) dst += m0;
  if (in->op == V_MOVRELSD_2_B32) dst += (m0 >> 16) & 0x3ff;
  if (in->op != V_MOVRELD_B32) {
    if (src < RDNA3_SRC_VGPR) return rdna3_fail(c, w, "v_movrels source must be a VGPR");
    src += in->op == V_MOVRELSD_2_B32 ? (m0 & 0x3ff) : m0;
  }
  if (dst >= c->nvgpr || (src >= RDNA3_SRC_VGPR && src - RDNA3_SRC_VGPR >= c->nvgpr))
    return rdna3_fail(c, w, "M0-relative VGPR index out of range (M0 = %u, %u VGPRs granted)", m0, c->nvgpr);
  vsrc s0;
  if (resolve(c, w, src, VT_B32, false, &s0)) return -1;
  uint32_t exec = w->s[RDNA3_EXEC_LO], val[RDNA3_LANES];
  for (unsigned l = 0; l < RDNA3_LANES; l++) val[l] = (uint32_t)rd(&s0, l);
  for (unsigned l = 0; l < RDNA3_LANES; l++)
    if ((exec >> l) & 1) w->v[dst][l] = val[l];
  return 0;
}

static bool plain32(const rdna3_vop_info *info, bool vopc) {
  for (unsigned i = 0; i < 3; i++)
    if (info->src[i] != VT_NONE && info->src[i] != VT_B32 && info->src[i] != VT_F32) return false;
  return vopc || info->dst == VT_B32 || info->dst == VT_F32;
}

/* 32-bit sources as lane arrays: a VGPR as it is, a scalar broadcast into buf. */
static const uint32_t *lanes_of(const vsrc *o, uint32_t *buf) {
  if (o->lo) return o->lo;
  for (unsigned l = 0; l < RDNA3_LANES; l++) buf[l] = (uint32_t)o->k;
  return buf;
}

static bool fast_path(rdna3_wave *w, const rdna3_vinst *in, const rdna3_vop_info *info, const vsrc s[3],
                      uint32_t cin, bool vopc, rdna3_vresult *defer) {
  static const uint32_t zero[RDNA3_LANES];
  uint32_t buf[3][RDNA3_LANES], d[RDNA3_LANES], exec = w->s[RDNA3_EXEC_LO], mask;
  const uint32_t *a[3];
  for (unsigned i = 0; i < 3; i++) a[i] = info->src[i] == VT_NONE ? zero : lanes_of(&s[i], buf[i]);
  if (vopc) {
    if (!rdna3_valu_fast_cmp(in->op, a[0], a[1], &mask)) return false;
    if (in->op & 0x80) w->s[RDNA3_EXEC_LO] = mask & exec;
    else rdna3_swrite32(w, in->sdst, mask & exec);
    return true;
  }
  if (takes_carry(in->op) || rdna3_is_vop3sd(in->op)) {
    if (!rdna3_valu_fast_carry(in->op, a[0], a[1], cin, d, &mask)) return false;
    if (rdna3_is_vop3sd(in->op)) rdna3_swrite32(w, in->sdst, mask & exec);
  } else if (!rdna3_valu_fast(in->op, a[0], a[1], a[2], d)) {
    return false;
  }
  if (defer) {
    defer->mask = exec, defer->info = info, defer->in = *in;
    for (unsigned l = 0; l < RDNA3_LANES; l++) defer->d[l] = d[l];
  } else if (exec == 0xffffffffu) {
    memcpy(w->v[in->vdst], d, sizeof d);
  } else {
    for (unsigned l = 0; l < RDNA3_LANES; l++)
      if ((exec >> l) & 1) w->v[in->vdst][l] = d[l];
  }
  return true;
}

/* gfx12 pseudo-scalar transcendentals (RDNA4 ISA guide "Pseudo-scalar transcendental ALU ops"): the VALU op of the
 * same name on one scalar value (its lane code), written to the SGPR in VDST (16-bit results zero-extended); EXEC
 * does not mask them (the result is not per lane). */
static int pseudo_scalar(rdna3_ctx *c, rdna3_wave *w, const rdna3_vinst *in, const rdna3_vop_info *info) {
  static const uint16_t twin[10] = {V_EXP_F32, V_EXP_F16, V_LOG_F32, V_LOG_F16, V_RCP_F32,
                                    V_RCP_F16, V_RSQ_F32, V_RSQ_F16, V_SQRT_F32, V_SQRT_F16};
  if (in->src[0] >= RDNA3_SRC_VGPR) return rdna3_fail(c, w, "pseudo-scalar VALU op with a VGPR source");
  vsrc s0;
  if (resolve(c, w, in->src[0], info->src[0], (in->src_hi & 1) != 0, &s0)) return -1;
  uint64_t sb = sign_bit(info->src[0]);
  rdna3_lane x = {.s = {(rd(&s0, 0) & (in->abs & 1 ? ~sb : ~0ull)) ^ (in->neg & 1 ? sb : 0)}};
  rdna3_lane_op(twin[in->op - V_S_EXP_F32], &x);
  uint64_t d = in->clamp || in->omod ? out_mods(in, info->dst, x.d) : x.d;
  rdna3_swrite32(w, in->vdst, rdna3_vt16(info->dst) ? (uint32_t)d & 0xffff : (uint32_t)d);
  return 0;
}

int rdna3_valu_run(rdna3_ctx *c, rdna3_wave *w, const rdna3_vinst *in, rdna3_vresult *defer) {
  rdna3_vop_info cmpinfo;
  const rdna3_vop_info *info = rdna3_vop_lookup(in->op, &cmpinfo);
  if (!info) return rdna3_fail(c, w, "unimplemented VALU opcode 0x%x (VOP3 numbering)", in->op);
  if (in->op == V_NOP) return 0;
  if (in->op >= V_S_EXP_F32 && in->op <= V_S_SQRT_F16) return pseudo_scalar(c, w, in, info);
  if (in->op == V_READFIRSTLANE_B32 || in->op == V_READLANE_B32 || in->op == V_WRITELANE_B32)
    return lane_moves(c, w, in);
  if (in->op == V_MOVRELD_B32 || in->op == V_MOVRELS_B32 || in->op == V_MOVRELSD_B32 || in->op == V_MOVRELSD_2_B32)
    return movrel(c, w, in);
  bool vopc = in->op < 0x100, cmpx = vopc && (in->op & 0x80), sd = rdna3_is_vop3sd(in->op);
  if (!vopc && info->dst != VT_NONE && rdna3_vgprs(c, w, in->vdst, rdna3_vt64(info->dst) ? 2 : 1, "destination"))
    return -1;
  if (in->clamp && !sign_bit(info->dst) && !vopc)
    return rdna3_fail(c, w, "clamp on an integer operation is not implemented");
  vsrc s[3];
  for (unsigned i = 0; i < 3; i++)
    if (info->src[i] != VT_NONE && resolve(c, w, in->src[i], info->src[i], (in->src_hi >> i) & 1, &s[i])) return -1;
  uint32_t cin = 0;
  if (takes_carry(in->op)) cin = in->e32 ? w->s[RDNA3_VCC_LO] : rdna3_sreg32(c, w, in->src[2]);
  if (!in->abs && !in->neg && !in->clamp && !in->omod && plain32(info, vopc) &&
      fast_path(w, in, info, s, cin, vopc, defer))
    return 0;
  else if (in->op == V_DIV_FMAS_F32 || in->op == V_DIV_FMAS_F64) cin = w->s[RDNA3_VCC_LO];
  uint32_t exec = w->s[RDNA3_EXEC_LO], mask = 0;
  rdna3_vresult local = {.mask = 0};
  rdna3_vresult *r = defer ? defer : &local;
  r->mask = exec;
  r->info = info;
  r->in = *in;
  /* abs and neg as masks on the sign bit of each float source */
  uint64_t keep[3], flip[3];
  unsigned nsrc = 0;
  for (unsigned i = 0; i < 3; i++) {
    uint64_t sb = sign_bit(info->src[i]);
    keep[i] = (in->abs >> i) & 1 ? ~sb : ~0ull;
    flip[i] = (in->neg >> i) & 1 ? sb : 0;
    if (info->src[i] != VT_NONE) nsrc = i + 1;
  }
  bool mods = sign_bit(info->dst) && (in->clamp || in->omod);
  for (unsigned l = 0; l < RDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    rdna3_lane x = {.cin = (cin >> l) & 1, .lane = l};
    for (unsigned i = 0; i < nsrc; i++)
      if (info->src[i] != VT_NONE) x.s[i] = (rd(&s[i], l) & keep[i]) ^ flip[i];
    if (vopc) {
      x.cout = rdna3_vopc_compare(in->op, info->src[0], x.s[0], x.s[1]);
    } else if (rdna3_lane_op(in->op, &x)) {
      return rdna3_fail(c, w, "unimplemented VALU opcode 0x%x (%s)", in->op, info->name);
    }
    mask |= (uint32_t)x.cout << l;
    r->d[l] = mods ? out_mods(in, info->dst, x.d) : x.d;
  }
  if (vopc) {
    if (cmpx) w->s[RDNA3_EXEC_LO] = mask;
    else rdna3_swrite32(w, in->sdst, mask);
    return 0;
  }
  if (sd) rdna3_swrite32(w, in->sdst, mask);
  if (!defer) rdna3_valu_commit(w, r);
  return 0;
}
