/* tests/mockgpu/rdna3/rdna3_vop3p.c: packed 16-bit math and mixed-precision FMA (VOP3P).
 * Each result half takes its source halves by OP_SEL (low result) and OP_SEL_HI (high result);
 * NEG/NEG_HI negate per half. For v_fma_mix*, OP_SEL_HI says whether a source is f16 (1, half by
 * OP_SEL) or f32 (0), and NEG_HI is an ABS modifier. Inline constants are the f16 value in the low
 * half and zero in the high half. */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

static uint32_t src_value(rdna3_ctx *c, rdna3_wave *w, unsigned code, bool f32_operand, unsigned l) {
  static const uint16_t inline_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};
  if (code >= RDNA3_SRC_VGPR) return w->v[code - RDNA3_SRC_VGPR][l];
  if (!f32_operand && code >= RDNA3_SRC_HALF && code <= RDNA3_SRC_INV_2PI) return inline_f16[code - RDNA3_SRC_HALF];
  return rdna3_sreg32(c, w, code);
}

static uint16_t pk_op(unsigned op, uint16_t a, uint16_t b, uint16_t c) {
  switch (op) {
  case V_PK_ADD_F16: return rdna3_d2h((double)rdna3_h2f(a) + rdna3_h2f(b));  /* exact in double */
  case V_PK_MUL_F16: return rdna3_d2h((double)rdna3_h2f(a) * rdna3_h2f(b));
  case V_PK_FMA_F16: return rdna3_d2h((double)rdna3_h2f(a) * rdna3_h2f(b) + rdna3_h2f(c));
  case V_PK_MIN_F16: return rdna3_f2h(fminf(rdna3_h2f(a), rdna3_h2f(b)));
  case V_PK_MAX_F16: return rdna3_f2h(fmaxf(rdna3_h2f(a), rdna3_h2f(b)));
  case V_PK_ADD_U16: case V_PK_ADD_I16: return (uint16_t)(a + b);
  case V_PK_SUB_U16: case V_PK_SUB_I16: return (uint16_t)(a - b);
  case V_PK_MUL_LO_U16: return (uint16_t)((uint32_t)a * b);
  case V_PK_MAD_U16: case V_PK_MAD_I16: return (uint16_t)((uint32_t)a * b + c);
  case V_PK_LSHLREV_B16: return (uint16_t)(b << (a & 15));
  case V_PK_LSHRREV_B16: return (uint16_t)(b >> (a & 15));
  case V_PK_ASHRREV_I16: return (uint16_t)((int16_t)b >> (a & 15));
  case V_PK_MAX_I16: return (int16_t)a > (int16_t)b ? a : b;
  case V_PK_MIN_I16: return (int16_t)a < (int16_t)b ? a : b;
  case V_PK_MAX_U16: return a > b ? a : b;
  default: return a < b ? a : b;  /* V_PK_MIN_U16 */
  }
}

static bool pk_float(unsigned op) { return op >= V_PK_FMA_F16 && op <= V_PK_MAX_F16; }

int rdna3_exec_vop3p(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 16) & 0x7f, vdst = e0 & 0xff;
  bool clamp = (e0 >> 15) & 1;
  unsigned opsel = (e0 >> 11) & 7, opsel_hi = ((e1 >> 27) & 3) | ((e0 >> 14) & 1) << 2;
  unsigned neg = (e1 >> 29) & 7, neg_hi = (e0 >> 8) & 7;
  unsigned src[3] = {e1 & 0x1ff, (e1 >> 9) & 0x1ff, (e1 >> 18) & 0x1ff};
  if (op >= V_WMMA_F32_16X16X16_F16 && op <= V_WMMA_BF16_16X16X16_BF16) return rdna3_exec_wmma(c, w);
  bool mix = op == V_FMA_MIX_F32 || op == V_FMA_MIXLO_F16 || op == V_FMA_MIXHI_F16;
  if (!mix && op > V_PK_MAX_F16 && op != V_DOT2_F32_F16) return rdna3_fail(c, w, "unimplemented VOP3P opcode %u", op);
  if (clamp && !mix && op != V_DOT2_F32_F16 && !pk_float(op)) return rdna3_fail(c, w, "clamp on packed integer math is not implemented");
  for (unsigned i = 0; i < 3; i++)
    if (src[i] == RDNA3_SRC_LITERAL) {
      if (rdna3_take_literal(c, w)) return -1;
      break;
    }
  for (unsigned i = 0; i < 3; i++)
    if (src[i] == RDNA3_SRC_DPP8 || src[i] == RDNA3_SRC_DPP16) return rdna3_fail(c, w, "DPP operands are not implemented");
  for (unsigned i = 0; i < 3; i++)
    if (src[i] >= RDNA3_SRC_VGPR && rdna3_vgprs(c, w, src[i] - RDNA3_SRC_VGPR, 1, "source")) return -1;
  if (rdna3_vgprs(c, w, vdst, 1, "destination")) return -1;
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  uint32_t out[RDNA3_LANES];
  for (unsigned l = 0; l < RDNA3_LANES; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t v[3];
    for (unsigned i = 0; i < 3; i++) {
      bool f32_operand = (mix && !((opsel_hi >> i) & 1)) || (op == V_DOT2_F32_F16 && i == 2);
      v[i] = src_value(c, w, src[i], f32_operand, l);
    }
    if (mix) {
      float f[3];
      for (unsigned i = 0; i < 3; i++) {
        if ((opsel_hi >> i) & 1) f[i] = rdna3_h2f((uint16_t)(v[i] >> ((opsel >> i) & 1 ? 16 : 0)));
        else f[i] = rdna3_f(v[i]);
        if ((neg_hi >> i) & 1) f[i] = fabsf(f[i]);
        if ((neg >> i) & 1) f[i] = -f[i];
      }
      float r = fmaf(f[0], f[1], f[2]);
      if (clamp) r = isnan(r) ? 0.0f : r < 0 ? 0.0f : r > 1 ? 1.0f : r;
      if (op == V_FMA_MIX_F32) out[l] = rdna3_u(r);
      else if (op == V_FMA_MIXLO_F16) out[l] = (w->v[vdst][l] & 0xffff0000u) | rdna3_f2h(r);
      else out[l] = (w->v[vdst][l] & 0xffff) | (uint32_t)rdna3_f2h(r) << 16;
      continue;
    }
    uint16_t h[2][3];
    for (unsigned i = 0; i < 3; i++) {
      h[0][i] = (uint16_t)(v[i] >> ((opsel >> i) & 1 ? 16 : 0));
      h[1][i] = (uint16_t)(v[i] >> ((opsel_hi >> i) & 1 ? 16 : 0));
      if (pk_float(op) || op == V_DOT2_F32_F16) {
        if ((neg >> i) & 1) h[0][i] ^= 0x8000;
        if ((neg_hi >> i) & 1) h[1][i] ^= 0x8000;
      }
    }
    if (op == V_DOT2_F32_F16) {
      float r = rdna3_h2f(h[0][0]) * rdna3_h2f(h[0][1]) + rdna3_h2f(h[1][0]) * rdna3_h2f(h[1][1]) + rdna3_f(v[2]);
      if (clamp) r = isnan(r) ? 0.0f : r < 0 ? 0.0f : r > 1 ? 1.0f : r;
      out[l] = rdna3_u(r);
      continue;
    }
    uint32_t r = 0;
    for (unsigned half = 0; half < 2; half++) {
      uint16_t x = pk_op(op, h[half][0], h[half][1], h[half][2]);
      if (clamp) {
        float f = rdna3_h2f(x);
        x = rdna3_f2h(isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f);
      }
      r |= (uint32_t)x << (16 * half);
    }
    out[l] = r;
  }
  for (unsigned l = 0; l < RDNA3_LANES; l++)
    if ((exec >> l) & 1) w->v[vdst][l] = out[l];
  return 0;
}
