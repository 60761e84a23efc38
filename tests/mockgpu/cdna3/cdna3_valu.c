/* tests/mockgpu/cdna3/cdna3_valu.c: VOP1, VOP2, VOPC (e32, and SDWA), VOP3A/VOP3B of gfx9 in wave64: decode,
 * operands (inline constants, a literal for the e32 forms only: gfx9 VOP3 has none), abs/neg/clamp/omod, EXEC
 * masking of 64 lanes, carries and compare results as SGPR pairs (VCC for e32), M0-relative VGPR indexing
 * (s_set_gpr_idx_on). Each lane's arithmetic is the RDNA3 core's rdna3_lane_op through cdna3_vop_map; the
 * compare conditions and the gfx9-only ops are here. 16-bit results zero the high half of the destination, as
 * gfx9's 16-bit VALU ops do without SDWA (LLVM GCNSubtarget::zeroesHigh16BitsOfDest). */
#include "cdna3_valu.h"
#include "rdna3_float.h"
#include "rdna3_ops.h"

#include <string.h>

typedef struct vsrc {
  const uint32_t *lo, *hi;  /* register(s), or NULL for a scalar value */
  uint64_t k;
  uint8_t t;
  unsigned sh;              /* 16-bit operands: 0 or 16 (VOP3 op_sel) */
} vsrc;

static const uint16_t inline_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

typedef struct vinst {
  unsigned op;            /* gfx9 VOP3-numbered opcode */
  unsigned src[3], vdst, sdst;
  unsigned abs, neg, opsel, omod;
  bool clamp, e32, sdwa;
  uint32_t sdwa_word;     /* the SDWA dword */
} vinst;

static unsigned idx_offset(const cdna3_wave *w, unsigned which) {  /* which: 0..2 sources, 3 destination */
  uint32_t m0 = w->s[CDNA3_M0];
  return w->gpr_idx_en && ((m0 >> (12 + which)) & 1) ? m0 & 0xff : 0;
}

static int resolve(cdna3_ctx *c, cdna3_wave *w, const vinst *in, unsigned i, uint8_t t, vsrc *o) {
  unsigned code = in->src[i];
  *o = (vsrc){.t = t, .sh = (in->opsel >> i) & 1 ? 16 : 0};
  if (code >= CDNA3_SRC_VGPR) {
    unsigned r = code - CDNA3_SRC_VGPR + idx_offset(w, i);
    int p = cdna3_reg(c, w, r, rdna3_vt64(t) ? 2 : 1, false, "source");
    if (p < 0) return -1;
    o->lo = w->v[p];
    if (rdna3_vt64(t)) o->hi = w->v[p + 1];
    return 0;
  }
  if (code == CDNA3_SRC_DPP) return cdna3_fail(c, w, "DPP is not implemented");
  if (code == CDNA3_SRC_LDS_DIRECT) return cdna3_fail(c, w, "LDS_DIRECT operand is not implemented");
  if (code == CDNA3_SRC_SDWA || code == 239 || (code > CDNA3_SRC_NEG_MAX && code < CDNA3_SRC_SHARED_BASE))
    return cdna3_fail(c, w, "operand %u is not valid here", code);
  if (code == CDNA3_SRC_LITERAL) {
    if (!in->e32) return cdna3_fail(c, w, "a literal constant in a VOP3 encoding (gfx9 has none)");
    o->k = t == VT_F64 ? (uint64_t)c->lit << 32 : c->lit;
  } else if (code >= CDNA3_SRC_HALF && code <= CDNA3_SRC_INV_2PI && rdna3_vt16(t)) {
    o->k = inline_f16[code - CDNA3_SRC_HALF];
  } else if (rdna3_vt64(t)) {
    o->k = cdna3_sreg64(c, w, code);
  } else {
    o->k = cdna3_sreg32(c, w, code);
  }
  if (!o->lo) o->sh = 0;
  return 0;
}

static inline uint64_t rd(const vsrc *o, unsigned l) {
  uint64_t v = o->lo ? o->lo[l] | (o->hi ? (uint64_t)o->hi[l] << 32 : 0) : o->k;
  if (rdna3_vt16(o->t)) v = (v >> o->sh) & 0xffff;
  return v;
}

/* SDWA source select (sel: BYTE_0..3, WORD_0..1, DWORD) with optional sign extension. */
static uint32_t sdwa_sel(uint32_t v, unsigned sel, bool sext) {
  if (sel >= 6) return v;
  unsigned bits = sel < 4 ? 8 : 16, sh = sel < 4 ? 8 * sel : 16 * (sel - 4);
  uint32_t x = (v >> sh) & ((1u << bits) - 1);
  if (sext && (x >> (bits - 1))) x |= ~0u << bits;
  return x;
}

static uint32_t sdwa_dst(uint32_t old, uint32_t d, unsigned sel, unsigned unused) {
  if (sel >= 6) return d;
  unsigned bits = sel < 4 ? 8 : 16, sh = sel < 4 ? 8 * sel : 16 * (sel - 4);
  uint32_t m = ((1u << bits) - 1) << sh, x = (d << sh) & m;
  if (unused == 2) return (old & ~m) | x;                                     /* UNUSED_PRESERVE */
  if (unused == 1 && sh + bits < 32 && ((x >> (sh + bits - 1)) & 1)) x |= ~0u << (sh + bits);  /* UNUSED_SEXT */
  return x;                                                                   /* UNUSED_PAD */
}

/* VOPC: type and condition of a gfx9 compare opcode. */
typedef struct cmpop {
  uint8_t t;
  unsigned cond;          /* float: 0..15 F LT EQ LE GT LG GE O U NGE NLG NGT NLE NEQ NLT TRU; int: 0..7 + 8 unsigned */
  bool cls, cmpx;
} cmpop;

static bool decode_cmp(unsigned op, cmpop *k) {
  *k = (cmpop){.t = VT_NONE};
  if (op >= 0x10 && op <= 0x15) {
    k->cls = true, k->cmpx = op & 1;
    k->t = op < 0x12 ? VT_F32 : op < 0x14 ? VT_F64 : VT_F16;
    return true;
  }
  static const uint8_t float_t[3] = {VT_F16, VT_F32, VT_F64}, int_t[3] = {VT_B16, VT_B32, VT_B64};
  if (op >= 0x20 && op < 0x80) {
    k->t = float_t[(op - 0x20) / 0x20], k->cmpx = (op >> 4) & 1, k->cond = op & 15;
    return true;
  }
  if (op >= 0xa0) {
    k->t = int_t[(op - 0xa0) / 0x20], k->cmpx = (op >> 4) & 1, k->cond = op & 15;
    return true;
  }
  return false;
}

static bool compare(const cmpop *k, uint64_t a, uint64_t b) {
  if (k->cls) return (b >> rdna3_class(a, k->t == VT_F16 ? 16 : k->t == VT_F32 ? 32 : 64)) & 1;
  if (k->t == VT_F16 || k->t == VT_F32 || k->t == VT_F64) {
    double x = k->t == VT_F16 ? rdna3_h2f((uint16_t)a) : k->t == VT_F32 ? rdna3_f((uint32_t)a) : rdna3_d(a);
    double y = k->t == VT_F16 ? rdna3_h2f((uint16_t)b) : k->t == VT_F32 ? rdna3_f((uint32_t)b) : rdna3_d(b);
    bool lt = x < y, eq = x == y, gt = x > y, un = isnan(x) || isnan(y);
    const bool r[8] = {false, lt, eq, lt || eq, gt, lt || gt, gt || eq, !un};
    return k->cond < 8 ? r[k->cond] : !r[15 - k->cond];  /* U NGE NLG NGT NLE NEQ NLT TRU negate O GE LG GT LE EQ LT F */
  }
  bool sgn = k->cond < 8;
  int64_t sa, sb;
  if (k->t == VT_B16) sa = (int16_t)a, sb = (int16_t)b;
  else if (k->t == VT_B32) sa = (int32_t)a, sb = (int32_t)b;
  else sa = (int64_t)a, sb = (int64_t)b;
  bool lt = sgn ? sa < sb : a < b, gt = sgn ? sa > sb : a > b, eq = a == b;
  const bool r[8] = {false, lt, eq, lt || eq, gt, !eq, gt || eq, true};
  return r[k->cond & 7];
}

static int exec_vopc(cdna3_ctx *c, cdna3_wave *w, const vinst *in) {
  cmpop k;
  if (!decode_cmp(in->op, &k)) return cdna3_fail(c, w, "unimplemented VOPC opcode 0x%x", in->op);
  vsrc s[2];
  uint8_t t0 = in->sdwa && rdna3_vt16(k.t) ? VT_B32 : k.t;  /* SDWA selects from the whole register */
  if (resolve(c, w, in, 0, t0, &s[0]) || resolve(c, w, in, 1, k.cls ? VT_B32 : t0, &s[1])) return -1;
  uint64_t exec = cdna3_exec(w), mask = 0, sb = k.t == VT_F16 ? 0x8000 : k.t == VT_F32 ? 0x80000000u :
                                                k.t == VT_F64 ? 1ull << 63 : 0;
  unsigned ssel[2] = {6, 6};
  bool sext[2] = {false, false};
  if (in->sdwa) {
    ssel[0] = (in->sdwa_word >> 16) & 7, sext[0] = (in->sdwa_word >> 19) & 1;
    ssel[1] = (in->sdwa_word >> 24) & 7, sext[1] = (in->sdwa_word >> 27) & 1;
  }
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint64_t x[2];
    for (unsigned i = 0; i < 2; i++) {
      x[i] = rd(&s[i], l);
      if (in->sdwa) x[i] = sdwa_sel((uint32_t)x[i], ssel[i], sext[i]);
      if ((in->abs >> i) & 1) x[i] &= ~sb;
      if ((in->neg >> i) & 1) x[i] ^= sb;
    }
    if (compare(&k, x[0], x[1])) mask |= 1ull << l;
  }
  /* gfx9 V_CMPX writes EXEC and the compare destination both. */
  cdna3_swrite64(w, in->sdst, mask);
  if (k.cmpx) cdna3_set_exec(w, mask);
  return 0;
}

static uint64_t sign_bit(uint8_t t) {
  return t == VT_F16 ? 0x8000 : t == VT_F32 ? 0x80000000u : t == VT_F64 ? 1ull << 63 : 0;
}

static uint64_t out_mods(const vinst *in, uint8_t t, uint64_t d) {
  static const double omod_k[4] = {1.0, 2.0, 4.0, 0.5};
  double f = t == VT_F32 ? rdna3_f((uint32_t)d) : t == VT_F64 ? rdna3_d(d) : rdna3_h2f((uint16_t)d);
  f *= omod_k[in->omod];
  if (in->clamp) f = isnan(f) || f <= 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;  /* -0 and NaN clamp to +0 */
  return t == VT_F32 ? rdna3_u((float)f) : t == VT_F64 ? rdna3_ud(f) : rdna3_f2h((float)f);
}

/* Lane-crossing ops and the wave64 mbcnt: what a lane computes depends on other lanes. */
static int lane_moves(cdna3_ctx *c, cdna3_wave *w, const vinst *in, unsigned op) {
  vsrc s0;
  if (resolve(c, w, in, 0, VT_B32, &s0)) return -1;
  uint64_t exec = cdna3_exec(w);
  if (op == C3L_READFIRSTLANE) {
    cdna3_swrite32(w, in->vdst, (uint32_t)rd(&s0, exec ? (unsigned)__builtin_ctzll(exec) : 0));
  } else if (op == C3L_READLANE) {
    cdna3_swrite32(w, in->vdst, (uint32_t)rd(&s0, cdna3_sreg32(c, w, in->src[1]) & 63));
  } else {
    int p = cdna3_reg(c, w, in->vdst, 1, false, "destination");
    if (p < 0) return -1;
    w->v[p][cdna3_sreg32(c, w, in->src[1]) & 63] = (uint32_t)rd(&s0, 0);
  }
  return 0;
}

static bool local_lane(unsigned op, rdna3_lane *x) {
  uint64_t a = x->s[0], b = x->s[1], cc = x->s[2];
  switch (op) {
  case C3L_MOV_B64: x->d = a; return true;
  /* D = (S0 << S1[2:0]) + S2, 64 bits (CDNA3 ISA guide V_LSHL_ADD_U64: shifts of 0..4) */
  case C3L_LSHL_ADD_U64: x->d = (a << (b & 7)) + cc; return true;
  case C3L_MBCNT_LO: x->d = (uint32_t)__builtin_popcount((uint32_t)a & (x->lane >= 32 ? ~0u : (1u << x->lane) - 1)) + (uint32_t)b; return true;
  case C3L_MBCNT_HI: x->d = (uint32_t)__builtin_popcount((uint32_t)a & (x->lane < 32 ? 0u : x->lane == 63 ? 0x7fffffffu : (1u << (x->lane - 32)) - 1)) + (uint32_t)b; return true;
  default: return false;
  }
}

static bool plain32(uint8_t t) { return t == VT_NONE || t == VT_B32 || t == VT_F32; }

/* The RDNA3 core's whole-wave loops for the common 32-bit opcodes (rdna3_valu_fast.c), run on each half of the
 * wave64; false when op is not one of them (the lane loop then runs). All 64 lanes are computed, EXEC picks. */
static bool fast_path(cdna3_wave *w, const vinst *in, unsigned op, const rdna3_vop_info *info, const vsrc s[3],
                      bool carry, uint64_t cin, int dst, bool sd) {
  static const uint32_t zero[CDNA3_LANES];
  uint32_t buf[3][CDNA3_LANES], d[CDNA3_LANES];
  const uint32_t *a[3];
  for (unsigned i = 0; i < 3; i++) {
    if (info->src[i] == VT_NONE) {
      a[i] = zero;
    } else if (s[i].lo) {
      a[i] = s[i].lo;
    } else {
      for (unsigned l = 0; l < CDNA3_LANES; l++) buf[i][l] = (uint32_t)s[i].k;
      a[i] = buf[i];
    }
  }
  uint64_t cout = 0;
  for (unsigned h = 0; h < CDNA3_LANES; h += 32) {
    if (carry || sd) {
      uint32_t co = 0;
      if (!rdna3_valu_fast_carry(op, a[0] + h, a[1] + h, (uint32_t)(cin >> h), d + h, &co)) return false;
      cout |= (uint64_t)co << h;
    } else if (!rdna3_valu_fast(op, a[0] + h, a[1] + h, a[2] + h, d + h)) {
      return false;
    }
  }
  uint64_t exec = cdna3_exec(w);
  if (exec == ~0ull) {
    memcpy(w->v[dst], d, sizeof d);
  } else {
    for (unsigned l = 0; l < CDNA3_LANES; l++)
      if ((exec >> l) & 1) w->v[dst][l] = d[l];
  }
  if (sd) cdna3_swrite64(w, in->e32 ? CDNA3_VCC_LO : in->sdst, cout & exec);
  return true;
}

static int run(cdna3_ctx *c, cdna3_wave *w, vinst *in) {
  if (in->op < 0x100) return exec_vopc(c, w, in);
  unsigned op = in->op < CDNA3_VOP_COUNT ? cdna3_vop_map[in->op] : 0;
  if (!op) return cdna3_fail(c, w, "unimplemented VALU opcode 0x%x (gfx9 VOP3 numbering)", in->op);
  if (op == V_NOP) return 0;
  if (op == C3L_READFIRSTLANE || op == C3L_READLANE || op == C3L_WRITELANE) return lane_moves(c, w, in, op);
  rdna3_vop_info scratch;
  const rdna3_vop_info *info = op >= C3L_FIRST ? &cdna3_local_info[op - C3L_FIRST] : rdna3_vop_lookup(op, &scratch);
  if (!info || !info->name) return cdna3_fail(c, w, "VALU opcode 0x%x has no operation", in->op);
  /* fmac: the destination is the addend; fmamk/fmaak: the literal is a multiplicand / the addend. */
  unsigned lane_op = op;
  if (op == C3L_FMAC_F32 || op == C3L_FMAC_F64) {
    in->src[2] = CDNA3_SRC_VGPR + in->vdst, lane_op = op == C3L_FMAC_F32 ? V_FMA_F32 : V_FMA_F64;
  } else if (op == C3L_FMAMK_F32 || op == C3L_FMAAK_F32) {
    if (c->ndw < 2 && cdna3_take_literal(c, w)) return -1;  /* one literal: src0 may use it too */
    if (op == C3L_FMAMK_F32) in->src[2] = in->src[1], in->src[1] = CDNA3_SRC_LITERAL;
    else in->src[2] = CDNA3_SRC_LITERAL;
    lane_op = V_FMA_F32;
  }
  bool wide = rdna3_vt64(info->dst), half = rdna3_vt16(info->dst);
  int dst = cdna3_reg(c, w, in->vdst + idx_offset(w, 3), wide ? 2 : 1, false, "destination");
  if (dst < 0) return -1;
  if (in->clamp && !sign_bit(info->dst)) return cdna3_fail(c, w, "clamp on an integer operation is not implemented");
  vsrc s[3];
  unsigned nsrc = 0;
  for (unsigned i = 0; i < 3; i++)
    if (info->src[i] != VT_NONE) {
      /* SDWA selects from the whole 32-bit register: read it untyped, select, then the op sees its width */
      if (resolve(c, w, in, i, in->sdwa && i < 2 && rdna3_vt16(info->src[i]) ? VT_B32 : info->src[i], &s[i])) return -1;
      nsrc = i + 1;
    }
  bool carry_in = op == V_ADD_CO_CI_U32 || op == V_SUB_CO_CI_U32 || op == V_SUBREV_CO_CI_U32 || op == V_CNDMASK_B32;
  uint64_t cin = 0;
  if (carry_in) cin = in->e32 ? cdna3_sreg64(c, w, CDNA3_VCC_LO) : cdna3_sreg64(c, w, in->src[2]);
  if (op == V_DIV_FMAS_F32 || op == V_DIV_FMAS_F64) cin = cdna3_sreg64(c, w, CDNA3_VCC_LO);
  bool sd = op == V_ADD_CO_U32 || op == V_SUB_CO_U32 || op == V_SUBREV_CO_U32 || op == V_ADD_CO_CI_U32 ||
            op == V_SUB_CO_CI_U32 || op == V_SUBREV_CO_CI_U32 || op == V_DIV_SCALE_F32 || op == V_DIV_SCALE_F64 ||
            op == V_MAD_U64_U32 || op == V_MAD_I64_I32;
  if (!in->abs && !in->neg && !in->clamp && !in->omod && !in->sdwa && !in->opsel && lane_op < C3L_FIRST &&
      plain32(info->src[0]) && plain32(info->src[1]) && plain32(info->src[2]) && plain32(info->dst) &&
      info->dst != VT_NONE && lane_op != V_DIV_FMAS_F32 && fast_path(w, in, lane_op, info, s, carry_in, cin, dst, sd))
    return 0;
  uint64_t exec = cdna3_exec(w), cout = 0, keep[3], flip[3];
  for (unsigned i = 0; i < 3; i++) {
    uint64_t sb = sign_bit(info->src[i]);
    keep[i] = (in->abs >> i) & 1 ? ~sb : ~0ull;
    flip[i] = (in->neg >> i) & 1 ? sb : 0;
  }
  bool mods = sign_bit(info->dst) && (in->clamp || in->omod);
  unsigned dsel = 6, dunused = 0, ssel[2] = {6, 6};
  bool sext[2] = {false, false};
  if (in->sdwa) {
    dsel = (in->sdwa_word >> 8) & 7, dunused = (in->sdwa_word >> 11) & 3;
    ssel[0] = (in->sdwa_word >> 16) & 7, sext[0] = (in->sdwa_word >> 19) & 1;
    ssel[1] = (in->sdwa_word >> 24) & 7, sext[1] = (in->sdwa_word >> 27) & 1;
  }
  uint64_t d[CDNA3_LANES];
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    rdna3_lane x = {.cin = (cin >> l) & 1, .lane = l};
    for (unsigned i = 0; i < nsrc; i++) {
      uint64_t v = rd(&s[i], l);
      if (in->sdwa && i < 2) v = sdwa_sel((uint32_t)v, ssel[i], sext[i]);
      x.s[i] = (v & keep[i]) ^ flip[i];
    }
    if (!local_lane(lane_op, &x) && rdna3_lane_op(lane_op, &x))
      return cdna3_fail(c, w, "VALU opcode 0x%x (%s) has no lane operation", in->op, info->name);
    cout |= (uint64_t)x.cout << l;
    d[l] = mods ? out_mods(in, info->dst, x.d) : x.d;
  }
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    if (wide) {
      w->v[dst][l] = (uint32_t)d[l], w->v[dst + 1][l] = (uint32_t)(d[l] >> 32);
    } else if (in->sdwa) {
      w->v[dst][l] = sdwa_dst(w->v[dst][l], (uint32_t)d[l], dsel, dunused);
    } else if (half && (in->opsel >> 3) & 1) {
      w->v[dst][l] = (w->v[dst][l] & 0xffff) | (uint32_t)(d[l] & 0xffff) << 16;  /* VOP3 op_sel[3]: high half */
    } else {
      w->v[dst][l] = half ? (uint32_t)(d[l] & 0xffff) : (uint32_t)d[l];
    }
  }
  if (sd) cdna3_swrite64(w, in->e32 ? CDNA3_VCC_LO : in->sdst, cout);
  return 0;
}

/* v_accvgpr_mov_b32 (VOP1): AGPR to AGPR. */
static int accvgpr_mov(cdna3_ctx *c, cdna3_wave *w, unsigned src, unsigned vdst) {
  if (src < CDNA3_SRC_VGPR) return cdna3_fail(c, w, "v_accvgpr_mov_b32 source must be an AGPR");
  int s = cdna3_reg(c, w, src - CDNA3_SRC_VGPR, 1, true, "source"), d = cdna3_reg(c, w, vdst, 1, true, "destination");
  if (s < 0 || d < 0) return -1;
  uint64_t exec = cdna3_exec(w);
  for (unsigned l = 0; l < CDNA3_LANES; l++)
    if ((exec >> l) & 1) w->v[d][l] = w->v[s][l];
  return 0;
}

int cdna3_exec_vop(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  vinst in = {.e32 = true, .src = {CDNA3_SRC_ZERO, CDNA3_SRC_ZERO, CDNA3_SRC_ZERO}, .sdst = CDNA3_VCC_LO};
  if ((e >> 26) == 0x34) {                      /* VOP3A / VOP3B */
    c->ndw = 2;
    if (cdna3_need(c, w, 2)) return -1;
    uint32_t e1 = c->enc[1];
    in.e32 = false;
    in.op = (e >> 16) & 0x3ff;
    in.vdst = e & 0xff;
    in.clamp = (e >> 15) & 1;
    in.src[0] = e1 & 0x1ff, in.src[1] = (e1 >> 9) & 0x1ff, in.src[2] = (e1 >> 18) & 0x1ff;
    in.neg = e1 >> 29, in.omod = (e1 >> 27) & 3;
    bool vop3b = (in.op >= 0x119 && in.op <= 0x11e) || in.op == 0x1e0 || in.op == 0x1e1 || in.op == 0x1e8 ||
                 in.op == 0x1e9;
    if (vop3b) {
      in.sdst = (e >> 8) & 0x7f;
    } else {
      in.abs = (e >> 8) & 7, in.opsel = (e >> 11) & 0xf;
      if (in.op < 0x100) in.sdst = in.vdst;     /* VOPC e64: the result SGPR pair */
    }
    return run(c, w, &in);
  }
  unsigned src0 = e & 0x1ff;
  if ((e >> 25) == 0x3f) {                      /* VOP1 */
    unsigned op = (e >> 9) & 0xff;
    in.op = 0x140 + op, in.vdst = (e >> 17) & 0xff, in.src[0] = src0;
    if (op == 0x52) return accvgpr_mov(c, w, src0, in.vdst);
  } else if ((e >> 25) == 0x3e) {               /* VOPC */
    in.op = (e >> 17) & 0xff, in.src[0] = src0, in.src[1] = CDNA3_SRC_VGPR + ((e >> 9) & 0xff);
  } else {                                      /* VOP2 */
    in.op = 0x100 + ((e >> 25) & 0x3f), in.vdst = (e >> 17) & 0xff, in.src[0] = src0;
    in.src[1] = CDNA3_SRC_VGPR + ((e >> 9) & 0xff);
  }
  if (src0 == CDNA3_SRC_DPP) return cdna3_fail(c, w, "DPP is not implemented");
  if (src0 == CDNA3_SRC_SDWA) {
    c->ndw = 2;
    if (cdna3_need(c, w, 2)) return -1;
    uint32_t s = c->enc[1];
    in.sdwa = true, in.sdwa_word = s;
    in.src[0] = (s & 0xff) + ((s >> 23) & 1 ? 0 : CDNA3_SRC_VGPR);
    if ((s >> 31) & 1 && in.src[1] >= CDNA3_SRC_VGPR) in.src[1] -= CDNA3_SRC_VGPR;  /* S1: src1 is an SGPR */
    in.abs = ((s >> 21) & 1) | ((s >> 29) & 1) << 1, in.neg = ((s >> 20) & 1) | ((s >> 28) & 1) << 1;
    if (in.op < 0x100) {
      if ((s >> 15) & 1) in.sdst = (s >> 8) & 0x7f;   /* SD: an explicit SGPR pair instead of VCC */
    } else {
      in.clamp = (s >> 13) & 1, in.omod = (s >> 14) & 3;
    }
  } else if (src0 == CDNA3_SRC_LITERAL) {
    if (cdna3_take_literal(c, w)) return -1;
  }
  return run(c, w, &in);
}
