/* tests/mockgpu/cdna3/cdna3_vop3p.c: the VOP3P encoding of gfx942: packed 16-bit math (each half through the RDNA3
 * core's f16/i16 lane operation), packed f32 on register pairs, v_fma_mix*, v_dot2_f32_f16, the AccVGPR moves,
 * and the VOP3P-MAI matrix ops (cdna3_mfma.c). Fields (CDNA3 ISA guide "VOP3P"): OP_SEL picks the half (or dword)
 * of each source for the low result, OP_SEL_HI for the high one; NEG/NEG_HI negate them (mix: NEG_HI is abs). */
#include "cdna3_ops.h"
#include "cdna3_valu.h"
#include "rdna3_float.h"
#include "rdna3_ops.h"

typedef struct p3 {
  unsigned op, vdst, src[3], opsel, opsel_hi, neg, neg_hi;
  bool clamp;
} p3;

/* 32 bits (or a 64-bit pair for packed f32) of source i for lane l. */
static int src_regs(cdna3_ctx *c, cdna3_wave *w, unsigned code, unsigned n, const uint32_t *r[2], uint64_t *k) {
  r[0] = r[1] = NULL;
  if (code >= CDNA3_SRC_VGPR) {
    int p = cdna3_reg(c, w, code - CDNA3_SRC_VGPR, n, false, "source");
    if (p < 0) return -1;
    r[0] = w->v[p];
    if (n == 2) r[1] = w->v[p + 1];
    return 0;
  }
  if (code == CDNA3_SRC_LITERAL) return cdna3_fail(c, w, "a literal constant in a VOP3P encoding (gfx9 has none)");
  if (code >= 249 && code != CDNA3_SRC_SCC && code != CDNA3_SRC_VCCZ && code != CDNA3_SRC_EXECZ)
    return cdna3_fail(c, w, "operand %u is not valid here", code);
  if (n == 2 && code < CDNA3_NSGPR) *k = cdna3_sreg64(c, w, code);
  else *k = cdna3_sreg32(c, w, code) * (n == 2 ? 0x100000001ull : 1);
  return 0;
}

/* indexed by the VOP3P opcode */
static const struct { uint16_t lane; bool f; } pk16[C3_V_PK_MAX_F16 + 1] = {
  [C3_V_PK_MAD_I16] = {0, false}, [C3_V_PK_MUL_LO_U16] = {V_MUL_LO_U16, false}, [C3_V_PK_ADD_I16] = {V_ADD_NC_I16, false},
  [C3_V_PK_SUB_I16] = {V_SUB_NC_I16, false}, [C3_V_PK_LSHLREV_B16] = {V_LSHLREV_B16, false},
  [C3_V_PK_LSHRREV_B16] = {V_LSHRREV_B16, false}, [C3_V_PK_ASHRREV_I16] = {V_ASHRREV_I16, false},
  [C3_V_PK_MAX_I16] = {V_MAX_I16, false}, [C3_V_PK_MIN_I16] = {V_MIN_I16, false}, [C3_V_PK_MAD_U16] = {V_MAD_U16, false},
  [C3_V_PK_ADD_U16] = {V_ADD_NC_U16, false}, [C3_V_PK_SUB_U16] = {V_SUB_NC_U16, false},
  [C3_V_PK_MAX_U16] = {V_MAX_U16, false}, [C3_V_PK_MIN_U16] = {V_MIN_U16, false}, [C3_V_PK_FMA_F16] = {V_FMA_F16, true},
  [C3_V_PK_ADD_F16] = {V_ADD_F16, true}, [C3_V_PK_MUL_F16] = {V_MUL_F16, true}, [C3_V_PK_MIN_F16] = {V_MIN_F16, true},
  [C3_V_PK_MAX_F16] = {V_MAX_F16, true},
};

static int packed16(cdna3_ctx *c, cdna3_wave *w, const p3 *in, unsigned lane_op, bool is_float, unsigned nsrc) {
  if (!lane_op) return cdna3_fail(c, w, "unimplemented VOP3P opcode %u", in->op);
  if (in->clamp) return cdna3_fail(c, w, "clamp on packed math is not implemented");
  const uint32_t *r[3][2];
  uint64_t k[3] = {0};
  for (unsigned i = 0; i < nsrc; i++)
    if (src_regs(c, w, in->src[i], 1, r[i], &k[i])) return -1;
  int dst = cdna3_reg(c, w, in->vdst, 1, false, "destination");
  if (dst < 0) return -1;
  uint64_t exec = cdna3_exec(w);
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t d = 0;
    for (unsigned h = 0; h < 2; h++) {
      rdna3_lane x = {.lane = l};
      for (unsigned i = 0; i < nsrc; i++) {
        uint32_t v = r[i][0] ? r[i][0][l] : (uint32_t)k[i];
        unsigned hi = ((h ? in->opsel_hi : in->opsel) >> i) & 1, ng = ((h ? in->neg_hi : in->neg) >> i) & 1;
        x.s[i] = ((v >> (16 * hi)) & 0xffff) ^ (is_float && ng ? 0x8000 : 0);
      }
      if (rdna3_lane_op(lane_op, &x)) return cdna3_fail(c, w, "VOP3P opcode %u has no lane operation", in->op);
      d |= (uint32_t)(x.d & 0xffff) << (16 * h);
    }
    w->v[dst][l] = d;
  }
  return 0;
}

/* v_pk_fma_f32 / mul / add / mov_b32 on register pairs: OP_SEL picks each source's dword. */
static int packed32(cdna3_ctx *c, cdna3_wave *w, const p3 *in) {
  unsigned nsrc = in->op == C3_V_PK_FMA_F32 ? 3 : 2;
  const uint32_t *r[3][2];
  uint64_t k[3] = {0};
  for (unsigned i = 0; i < nsrc; i++)
    if (src_regs(c, w, in->src[i], 2, r[i], &k[i])) return -1;
  int dst = cdna3_reg(c, w, in->vdst, 2, false, "destination");
  if (dst < 0) return -1;
  if (in->clamp) return cdna3_fail(c, w, "clamp on packed math is not implemented");
  uint64_t exec = cdna3_exec(w);
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t d[2];
    if (in->op == C3_V_PK_MOV_B32) {  /* low dword from src0, high from src1, each dword picked by OP_SEL */
      for (unsigned h = 0; h < 2; h++) {
        unsigned sel = (in->opsel >> h) & 1;
        d[h] = r[h][0] ? r[h][sel][l] : (uint32_t)(k[h] >> (32 * sel));
      }
      w->v[dst][l] = d[0], w->v[dst + 1][l] = d[1];
      continue;
    }
    for (unsigned h = 0; h < 2; h++) {
      float x[3] = {0};
      uint32_t raw[3] = {0};
      for (unsigned i = 0; i < nsrc; i++) {
        unsigned hi = ((h ? in->opsel_hi : in->opsel) >> i) & 1, ng = ((h ? in->neg_hi : in->neg) >> i) & 1;
        raw[i] = r[i][0] ? r[i][hi][l] : (uint32_t)(k[i] >> (32 * hi));
        x[i] = rdna3_f(raw[i] ^ (ng ? 0x80000000u : 0));
      }
      switch (in->op) {
      case C3_V_PK_FMA_F32: d[h] = rdna3_u(fmaf(x[0], x[1], x[2])); break;
      case C3_V_PK_MUL_F32: d[h] = rdna3_u(x[0] * x[1]); break;
      default: d[h] = rdna3_u(x[0] + x[1]); break;
      }
    }
    w->v[dst][l] = d[0], w->v[dst + 1][l] = d[1];
  }
  return 0;
}

/* v_fma_mix_f32 / mixlo_f16 / mixhi_f16 (OP_SEL_HI[i]: source i is f16, OP_SEL[i] its half; NEG_HI: abs) and
 * v_dot2_f32_f16 (a.lo*b.lo + a.hi*b.hi + c, one rounding here). */
static int mix(cdna3_ctx *c, cdna3_wave *w, const p3 *in) {
  const uint32_t *r[3][2];
  uint64_t k[3] = {0};
  for (unsigned i = 0; i < 3; i++)
    if (src_regs(c, w, in->src[i], 1, r[i], &k[i])) return -1;
  int dst = cdna3_reg(c, w, in->vdst, 1, false, "destination");
  if (dst < 0) return -1;
  uint64_t exec = cdna3_exec(w);
  for (unsigned l = 0; l < CDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t v[3];
    for (unsigned i = 0; i < 3; i++) v[i] = r[i][0] ? r[i][0][l] : (uint32_t)k[i];
    if (in->op == C3_V_DOT2_F32_F16) {
      double s = 0;
      for (unsigned h = 0; h < 2; h++) {
        double p = 1;
        for (unsigned i = 0; i < 2; i++) {
          unsigned hi = ((h ? in->opsel_hi : in->opsel) >> i) & 1, ng = ((h ? in->neg_hi : in->neg) >> i) & 1;
          double x = rdna3_h2f((uint16_t)(v[i] >> (16 * hi)));
          p *= ng ? -x : x;
        }
        s += p;
      }
      float cc = rdna3_f(v[2]);
      if ((in->neg >> 2) & 1) cc = -cc;
      w->v[dst][l] = rdna3_u((float)(s + cc));
      continue;
    }
    double x[3];
    for (unsigned i = 0; i < 3; i++) {
      bool f16 = (in->opsel_hi >> i) & 1;
      x[i] = f16 ? rdna3_h2f((uint16_t)(v[i] >> (16 * ((in->opsel >> i) & 1)))) : rdna3_f(v[i]);
      if ((in->neg_hi >> i) & 1) x[i] = fabs(x[i]);
      if ((in->neg >> i) & 1) x[i] = -x[i];
    }
    float f = fmaf((float)x[0], (float)x[1], (float)x[2]);  /* f16 and f32 inputs are exact as float */
    if (in->clamp) f = isnan(f) || f <= 0 ? 0.0f : f > 1 ? 1.0f : f;
    if (in->op == C3_V_FMA_MIX_F32) w->v[dst][l] = rdna3_u(f);
    else if (in->op == C3_V_FMA_MIXLO_F16) w->v[dst][l] = (w->v[dst][l] & 0xffff0000u) | rdna3_f2h(f);
    else w->v[dst][l] = (w->v[dst][l] & 0xffffu) | (uint32_t)rdna3_f2h(f) << 16;
  }
  return 0;
}

/* v_accvgpr_read_b32 (AGPR -> VGPR) and v_accvgpr_write_b32 (VGPR or constant -> AGPR). */
static int accvgpr(cdna3_ctx *c, cdna3_wave *w, const p3 *in) {
  bool rd = in->op == C3_V_ACCVGPR_READ_B32;
  int dst = cdna3_reg(c, w, in->vdst, 1, !rd, "destination");
  if (dst < 0) return -1;
  const uint32_t *src = NULL;
  uint32_t k = 0;
  if (in->src[0] >= CDNA3_SRC_VGPR) {
    int p = cdna3_reg(c, w, in->src[0] - CDNA3_SRC_VGPR, 1, rd, "source");
    if (p < 0) return -1;
    src = w->v[p];
  } else if (rd) {
    return cdna3_fail(c, w, "v_accvgpr_read_b32 source must be an AGPR");
  } else {
    const uint32_t *r[2];
    uint64_t kk = 0;
    if (src_regs(c, w, in->src[0], 1, r, &kk)) return -1;
    k = (uint32_t)kk;
  }
  uint64_t exec = cdna3_exec(w);
  for (unsigned l = 0; l < CDNA3_LANES; l++)
    if ((exec >> l) & 1) w->v[dst][l] = src ? src[l] : k;
  return 0;
}

int cdna3_exec_vop3p(cdna3_ctx *c, cdna3_wave *w) {
  c->ndw = 2;
  if (cdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 16) & 0x7f;
  if (op >= 0x3e && op != C3_V_ACCVGPR_READ_B32 && op != C3_V_ACCVGPR_WRITE_B32) {
    c->st.wmma_insts++;
    return cdna3_exec_mfma(c, w, op);
  }
  p3 in = {.op = op, .vdst = e0 & 0xff, .src = {e1 & 0x1ff, (e1 >> 9) & 0x1ff, (e1 >> 18) & 0x1ff},
           .opsel = (e0 >> 11) & 7, .opsel_hi = ((e1 >> 27) & 3) | ((e0 >> 14) & 1) << 2, .neg = e1 >> 29,
           .neg_hi = (e0 >> 8) & 7, .clamp = (e0 >> 15) & 1};
  if (op == C3_V_ACCVGPR_READ_B32 || op == C3_V_ACCVGPR_WRITE_B32) return accvgpr(c, w, &in);
  if (op <= C3_V_PK_MAX_F16) {
    unsigned nsrc = op == C3_V_PK_MAD_I16 || op == C3_V_PK_MAD_U16 || op == C3_V_PK_FMA_F16 ? 3 : 2;
    return packed16(c, w, &in, pk16[op].lane, pk16[op].f, nsrc);
  }
  if (op >= C3_V_FMA_MIX_F32 && op <= C3_V_DOT2_F32_F16) return mix(c, w, &in);
  if (op >= C3_V_PK_FMA_F32 && op <= C3_V_PK_MOV_B32) return packed32(c, w, &in);
  return cdna3_fail(c, w, "unimplemented VOP3P opcode %u", op);
}
