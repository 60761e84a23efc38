/* tests/mockgpu/rdna3/rdna3_valu_decode.c: VOP1, VOP2, VOPC, VOP3, VOP3SD and VOPD encodings to the
 * decoded rdna3_vinst (VOP3 opcode numbering; RDNA3 ISA guide "Vector ALU instructions"). VOP3P goes
 * to rdna3_vop3p.c. */
#include "rdna3_ops.h"
#include "rdna3_valu.h"

/* Operand numbers of a 16-bit e32 VGPR carry the half in bit 7 (true16). */
static unsigned e32_half(unsigned *code, bool is_src) {
  unsigned base = is_src ? RDNA3_SRC_VGPR : 0;
  if (is_src && *code < RDNA3_SRC_VGPR) return 0;
  unsigned r = *code - base;
  *code = base + (r & 0x7f);
  return (r >> 7) & 1;
}

/* Fold the VOP2 forms whose destination is also a source (fmac) or that carry a constant K
 * (fmamk/fmaak) into their VOP3 equivalents. */
static void fold_vop2(rdna3_vinst *in) {
  switch (in->op) {
  case V_FMAC_F32: in->op = V_FMA_F32; in->src[2] = RDNA3_SRC_VGPR + in->vdst; break;
  case V_FMAC_F16:
    in->op = V_FMA_F16;
    in->src[2] = RDNA3_SRC_VGPR + in->vdst;
    if (in->dst_hi) in->src_hi |= 4;
    break;
  case V_FMAC_DX9_ZERO_F32: in->src[2] = RDNA3_SRC_VGPR + in->vdst; break;
  case V_FMAMK_F32: case V_FMAMK_F16:
    in->src[2] = in->src[1], in->src[1] = RDNA3_SRC_LITERAL;
    in->op = in->op == V_FMAMK_F32 ? V_FMA_F32 : V_FMA_F16;
    break;
  case V_FMAAK_F32: case V_FMAAK_F16:
    in->src[2] = RDNA3_SRC_LITERAL;
    in->op = in->op == V_FMAAK_F32 ? V_FMA_F32 : V_FMA_F16;
    break;
  default: break;
  }
}

/* The internal (gfx11) VOP3 number of the encoded op (rdna3_isa.h), or -1 with the report. */
static int map_op(rdna3_ctx *c, const rdna3_wave *w, rdna3_vinst *in) {
  int m = rdna3_isa_op(&c->isa->vop, in->op);
  if (m < 0) return rdna3_fail(c, w, "unimplemented VALU opcode 0x%x (%s has no such instruction)", in->op, c->isa->name);
  in->op = (unsigned)m;
  return 0;
}

static bool needs_literal(const rdna3_vinst *in) {
  return in->src[0] == RDNA3_SRC_LITERAL || in->src[1] == RDNA3_SRC_LITERAL || in->src[2] == RDNA3_SRC_LITERAL;
}

/* e32 forms: VOP2, VOP1, VOPC. */
static int decode_e32(rdna3_ctx *c, rdna3_wave *w, rdna3_vinst *in) {
  uint32_t e = c->enc[0];
  in->e32 = true;
  in->src[0] = e & 0x1ff;
  in->src[2] = RDNA3_NULL;
  if ((e >> 25) == 0x3f) {                  /* VOP1 */
    in->op = 0x180 + ((e >> 9) & 0xff);
    in->vdst = (e >> 17) & 0xff;
  } else if ((e >> 25) == 0x3e) {           /* VOPC */
    in->op = (e >> 17) & 0xff;
    in->src[1] = RDNA3_SRC_VGPR + ((e >> 9) & 0xff);
    in->sdst = RDNA3_VCC_LO;
  } else {                                  /* VOP2 */
    in->op = 0x100 + ((e >> 25) & 0x3f);
    in->vdst = (e >> 17) & 0xff;
    in->src[1] = RDNA3_SRC_VGPR + ((e >> 9) & 0xff);
    in->sdst = RDNA3_VCC_LO;
    if (in->op == V_FMAMK_F32 || in->op == V_FMAAK_F32 || in->op == V_FMAMK_F16 || in->op == V_FMAAK_F16)
      if (rdna3_take_literal(c, w)) return -1;
  }
  if (map_op(c, w, in)) return -1;
  rdna3_vop_info scratch;
  const rdna3_vop_info *info = rdna3_vop_lookup(in->op, &scratch);
  if (info) {
    for (unsigned i = 0; i < 2; i++)
      if (rdna3_vt16(info->src[i])) in->src_hi |= e32_half(&in->src[i], true) << i;
    if (in->op >= 0x100 && rdna3_vt16(info->dst)) in->dst_hi = e32_half(&in->vdst, false);
  }
  fold_vop2(in);
  if (needs_literal(in) && c->ndw == 1 && rdna3_take_literal(c, w)) return -1;
  return 0;
}

static int decode_vop3(rdna3_ctx *c, rdna3_wave *w, rdna3_vinst *in) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;   /* before reading dword 1: it may lie on the next page */
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  in->op = (e0 >> 16) & 0x3ff;
  if (map_op(c, w, in)) return -1;
  in->vdst = e0 & 0xff;
  in->clamp = (e0 >> 15) & 1;
  in->src[0] = e1 & 0x1ff;
  in->src[1] = (e1 >> 9) & 0x1ff;
  in->src[2] = (e1 >> 18) & 0x1ff;
  in->omod = (e1 >> 27) & 3;
  in->neg = (e1 >> 29) & 7;
  if (rdna3_is_vop3sd(in->op)) {
    in->sdst = (e0 >> 8) & 0x7f;
  } else {
    in->abs = (e0 >> 8) & 7;
    unsigned opsel = (e0 >> 11) & 0xf;
    in->src_hi = opsel & 7;
    in->dst_hi = (opsel >> 3) & 1;
    in->sdst = in->vdst;  /* VOPC in VOP3: the SGPR destination */
  }
  if (in->op == V_FMAC_F32 || in->op == V_FMAC_F16 || in->op == V_FMAC_DX9_ZERO_F32) {
    if (in->op == V_FMAC_F16 && in->dst_hi) in->src_hi |= 4;
    in->src[2] = RDNA3_SRC_VGPR + in->vdst;
    if (in->op != V_FMAC_DX9_ZERO_F32) in->op = in->op == V_FMAC_F32 ? V_FMA_F32 : V_FMA_F16;
  }
  if (needs_literal(in) && rdna3_take_literal(c, w)) return -1;
  return 0;
}

/* VOPD: two independent VOP2/VOP1-class ops issued together; both read before either writes. */
static const uint16_t vopd_ops[19] = {
  [V_DUAL_FMAC_F32] = V_FMAC_F32, [V_DUAL_FMAAK_F32] = V_FMAAK_F32, [V_DUAL_FMAMK_F32] = V_FMAMK_F32,
  [V_DUAL_MUL_F32] = V_MUL_F32, [V_DUAL_ADD_F32] = V_ADD_F32, [V_DUAL_SUB_F32] = V_SUB_F32,
  [V_DUAL_SUBREV_F32] = V_SUBREV_F32, [V_DUAL_MUL_DX9_ZERO_F32] = V_MUL_DX9_ZERO_F32,
  [V_DUAL_MOV_B32] = V_MOV_B32, [V_DUAL_CNDMASK_B32] = V_CNDMASK_B32, [V_DUAL_MAX_F32] = V_MAX_F32,
  [V_DUAL_MIN_F32] = V_MIN_F32, [V_DUAL_ADD_NC_U32] = V_ADD_NC_U32,
  [V_DUAL_LSHLREV_B32] = V_LSHLREV_B32, [V_DUAL_AND_B32] = V_AND_B32,
};

static int exec_vopd(rdna3_ctx *c, rdna3_wave *w) {
  c->ndw = 2;
  if (rdna3_need(c, w, 2)) return -1;   /* before reading dword 1: it may lie on the next page */
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned opx = (e0 >> 22) & 0xf, opy = (e0 >> 17) & 0x1f;
  if (opy >= 19 || !vopd_ops[opx] || !vopd_ops[opy])
    return rdna3_fail(c, w, "unimplemented VOPD pair (opx %u, opy %u)", opx, opy);
  rdna3_vinst x = {.op = vopd_ops[opx], .e32 = true, .src = {e0 & 0x1ff, RDNA3_SRC_VGPR + ((e0 >> 9) & 0xff), RDNA3_NULL},
                   .vdst = e1 >> 24, .sdst = RDNA3_VCC_LO};
  unsigned vdsty = (((e1 >> 17) & 0x7f) << 1) | ((x.vdst & 1) ^ 1);
  rdna3_vinst y = {.op = vopd_ops[opy], .e32 = true, .src = {e1 & 0x1ff, RDNA3_SRC_VGPR + ((e1 >> 9) & 0xff), RDNA3_NULL},
                   .vdst = vdsty, .sdst = RDNA3_VCC_LO};
  if (x.op == V_MOV_B32) x.src[1] = RDNA3_NULL;
  if (y.op == V_MOV_B32) y.src[1] = RDNA3_NULL;
  fold_vop2(&x);
  fold_vop2(&y);
  if ((needs_literal(&x) || needs_literal(&y)) && rdna3_take_literal(c, w)) return -1;
  rdna3_vresult rx, ry;
  if (rdna3_valu_run(c, w, &x, &rx) || rdna3_valu_run(c, w, &y, &ry)) return -1;
  rdna3_valu_commit(w, &rx);
  rdna3_valu_commit(w, &ry);
  return 0;
}

int rdna3_exec_vop(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  rdna3_vinst in = {0};
  if ((e >> 26) == 0x32) return exec_vopd(c, w);
  if ((e >> 24) == 0xcc) return rdna3_exec_vop3p(c, w);
  if ((e >> 26) == 0x35) {
    if (decode_vop3(c, w, &in)) return -1;
  } else if (decode_e32(c, w, &in)) {
    return -1;
  }
  return rdna3_valu_run(c, w, &in, NULL);
}
