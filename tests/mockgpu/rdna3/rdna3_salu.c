/* tests/mockgpu/rdna3/rdna3_salu.c: scalar ALU and program control (SOP2, SOPK, SOP1, SOPC,
 * SOPP). Semantics per the RDNA3 ISA guide's pseudocode; wave32, so EXEC and VCC are 32-bit. */
#include "rdna3_internal.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

/* The instruction's internal opcode (rdna3_isa.h), or -1 with the report when the generation has none. */
static int isa_op(rdna3_ctx *c, const rdna3_wave *w, const rdna3_optab *t, const char *fmt, unsigned op) {
  int m = rdna3_isa_op(t, op);
  if (m < 0) rdna3_fail(c, w, "unimplemented %s opcode %u (%s has no such instruction)", fmt, op, c->isa->name);
  return m;
}

/* The gfx12 SALU float ops compute what their VALU twins compute in one lane (rdna3_valu_lane.c): the ISA
 * guide gives both the same pseudocode. 16-bit results are zero-extended. */
static uint32_t salu_float(unsigned vop, uint32_t a, uint32_t b, uint32_t c) {
  rdna3_lane x = {.s = {a, b, c}};
  rdna3_lane_op(vop, &x);
  return (uint32_t)x.d;
}

static int sources_literal(rdna3_ctx *c, const rdna3_wave *w, unsigned a, unsigned b) {
  if (a == RDNA3_SRC_LITERAL || b == RDNA3_SRC_LITERAL) return rdna3_take_literal(c, w);
  return 0;
}

static uint32_t bfe32(uint32_t v, uint32_t ctl, bool sign) {
  unsigned off = ctl & 31, width = (ctl >> 16) & 0x7f;
  if (width == 0) return 0;
  if (width > 32 - off) width = 32 - off;
  uint32_t r = v >> off;
  if (width < 32) {
    r &= (1u << width) - 1;
    if (sign && (r >> (width - 1)) & 1) r |= ~0u << width;
  }
  return r;
}

static uint64_t bfe64(uint64_t v, uint32_t ctl, bool sign) {
  unsigned off = ctl & 63, width = (ctl >> 16) & 0x7f;
  if (width == 0) return 0;
  if (width > 64 - off) width = 64 - off;
  uint64_t r = v >> off;
  if (width < 64) {
    r &= (1ull << width) - 1;
    if (sign && (r >> (width - 1)) & 1) r |= ~0ull << width;
  }
  return r;
}

int rdna3_exec_sop2(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 23) & 0x7f, dst = (e >> 16) & 0x7f, s1 = (e >> 8) & 0xff, s0 = e & 0xff;
  int mop = isa_op(c, w, &c->isa->sop2, "SOP2", op);
  if (mop < 0) return -1;
  op = (unsigned)mop;
  if (sources_literal(c, w, s0, s1)) return -1;
  if ((op == S_FMAAK_F32 || op == S_FMAMK_F32) && c->ndw == 1 && rdna3_take_literal(c, w)) return -1;
  uint32_t a = rdna3_sreg32(c, w, s0), b = rdna3_sreg32(c, w, s1);
  uint64_t a64 = 0, b64 = 0;
  uint32_t r = 0;
  uint64_t r64 = 0;
  bool wide = false;
  switch (op) {
  case S_LSHL_B64: case S_LSHR_B64: case S_ASHR_I64: case S_BFE_U64: case S_BFE_I64:
    a64 = rdna3_sreg64(c, w, s0);
    break;
  case S_AND_B64: case S_OR_B64: case S_XOR_B64: case S_NAND_B64: case S_NOR_B64: case S_XNOR_B64:
  case S_AND_NOT1_B64: case S_OR_NOT1_B64: case S_CSELECT_B64:
    a64 = rdna3_sreg64(c, w, s0), b64 = rdna3_sreg64(c, w, s1);
    break;
  default: break;
  }
  switch (op) {
  case S_ADD_U32: { uint64_t t = (uint64_t)a + b; r = (uint32_t)t; w->scc = t >> 32; break; }
  case S_SUB_U32: r = a - b; w->scc = b > a; break;
  case S_ADDC_U32: { uint64_t t = (uint64_t)a + b + w->scc; r = (uint32_t)t; w->scc = t >> 32; break; }
  case S_SUBB_U32: { uint64_t t = (uint64_t)b + w->scc; r = a - (uint32_t)t; w->scc = t > a; break; }
  case S_ADD_I32: {
    r = a + b;
    w->scc = ((a ^ r) & (b ^ r)) >> 31;  /* signed overflow */
    break;
  }
  case S_SUB_I32: r = a - b; w->scc = ((a ^ b) & (a ^ r)) >> 31; break;
  case S_ABSDIFF_I32: {
    int64_t d = (int64_t)(int32_t)a - (int32_t)b;
    r = (uint32_t)(d < 0 ? -d : d);
    w->scc = r != 0;
    break;
  }
  case S_LSHL_B32: r = a << (b & 31); w->scc = r != 0; break;
  case S_LSHR_B32: r = a >> (b & 31); w->scc = r != 0; break;
  case S_ASHR_I32: r = (uint32_t)((int32_t)a >> (b & 31)); w->scc = r != 0; break;
  case S_LSHL_B64: wide = true; r64 = a64 << (b & 63); w->scc = r64 != 0; break;
  case S_LSHR_B64: wide = true; r64 = a64 >> (b & 63); w->scc = r64 != 0; break;
  case S_ASHR_I64: wide = true; r64 = (uint64_t)((int64_t)a64 >> (b & 63)); w->scc = r64 != 0; break;
  case S_LSHL1_ADD_U32: case S_LSHL2_ADD_U32: case S_LSHL3_ADD_U32: case S_LSHL4_ADD_U32: {
    unsigned sh = op - S_LSHL1_ADD_U32 + 1;
    uint64_t t = ((uint64_t)a << sh) + b;
    r = (uint32_t)t;
    w->scc = t >> 32 != 0;
    break;
  }
  case S_MIN_I32: w->scc = (int32_t)a < (int32_t)b; r = w->scc ? a : b; break;
  case S_MIN_U32: w->scc = a < b; r = w->scc ? a : b; break;
  case S_MAX_I32: w->scc = (int32_t)a > (int32_t)b; r = w->scc ? a : b; break;
  case S_MAX_U32: w->scc = a > b; r = w->scc ? a : b; break;
  case S_AND_B32: r = a & b; w->scc = r != 0; break;
  case S_OR_B32: r = a | b; w->scc = r != 0; break;
  case S_XOR_B32: r = a ^ b; w->scc = r != 0; break;
  case S_NAND_B32: r = ~(a & b); w->scc = r != 0; break;
  case S_NOR_B32: r = ~(a | b); w->scc = r != 0; break;
  case S_XNOR_B32: r = ~(a ^ b); w->scc = r != 0; break;
  case S_AND_NOT1_B32: r = a & ~b; w->scc = r != 0; break;
  case S_OR_NOT1_B32: r = a | ~b; w->scc = r != 0; break;
  case S_AND_B64: wide = true; r64 = a64 & b64; w->scc = r64 != 0; break;
  case S_OR_B64: wide = true; r64 = a64 | b64; w->scc = r64 != 0; break;
  case S_XOR_B64: wide = true; r64 = a64 ^ b64; w->scc = r64 != 0; break;
  case S_NAND_B64: wide = true; r64 = ~(a64 & b64); w->scc = r64 != 0; break;
  case S_NOR_B64: wide = true; r64 = ~(a64 | b64); w->scc = r64 != 0; break;
  case S_XNOR_B64: wide = true; r64 = ~(a64 ^ b64); w->scc = r64 != 0; break;
  case S_AND_NOT1_B64: wide = true; r64 = a64 & ~b64; w->scc = r64 != 0; break;
  case S_OR_NOT1_B64: wide = true; r64 = a64 | ~b64; w->scc = r64 != 0; break;
  case S_BFE_U32: r = bfe32(a, b, false); w->scc = r != 0; break;
  case S_BFE_I32: r = bfe32(a, b, true); w->scc = r != 0; break;
  case S_BFE_U64: wide = true; r64 = bfe64(a64, b, false); w->scc = r64 != 0; break;
  case S_BFE_I64: wide = true; r64 = bfe64(a64, b, true); w->scc = r64 != 0; break;
  case S_BFM_B32: r = (uint32_t)(((1ull << (a & 31)) - 1) << (b & 31)); break;
  case S_MUL_I32: r = a * b; break;
  case S_MUL_HI_U32: r = (uint32_t)(((uint64_t)a * b) >> 32); break;
  case S_MUL_HI_I32: r = (uint32_t)((uint64_t)((int64_t)(int32_t)a * (int32_t)b) >> 32); break;
  case S_CSELECT_B32: r = w->scc ? a : b; break;
  case S_CSELECT_B64: wide = true; r64 = w->scc ? a64 : b64; break;
  case S_PACK_LL_B32_B16: r = (a & 0xffff) | b << 16; break;
  case S_PACK_LH_B32_B16: r = (a & 0xffff) | (b & 0xffff0000u); break;
  case S_PACK_HH_B32_B16: r = a >> 16 | (b & 0xffff0000u); break;
  case S_PACK_HL_B32_B16: r = a >> 16 | b << 16; break;
  case S_ADD_NC_U64: wide = true; r64 = rdna3_sreg64(c, w, s0) + rdna3_sreg64(c, w, s1); break;
  case S_SUB_NC_U64: wide = true; r64 = rdna3_sreg64(c, w, s0) - rdna3_sreg64(c, w, s1); break;
  case S_MUL_U64: wide = true; r64 = rdna3_sreg64(c, w, s0) * rdna3_sreg64(c, w, s1); break;
  case S_ADD_F32: r = salu_float(V_ADD_F32, a, b, 0); break;
  case S_SUB_F32: r = salu_float(V_SUB_F32, a, b, 0); break;
  case S_MIN_NUM_F32: r = salu_float(V_MIN_F32, a, b, 0); break;
  case S_MAX_NUM_F32: r = salu_float(V_MAX_F32, a, b, 0); break;
  case S_MUL_F32: r = salu_float(V_MUL_F32, a, b, 0); break;
  case S_FMAAK_F32: r = salu_float(V_FMA_F32, a, b, c->lit); break;
  case S_FMAMK_F32: r = salu_float(V_FMA_F32, a, c->lit, b); break;
  case S_FMAC_F32: r = salu_float(V_FMA_F32, a, b, dst < RDNA3_NSGPR ? w->s[dst] : 0); break;
  case S_CVT_PK_RTZ_F16_F32: r = salu_float(V_CVT_PK_RTZ_F16_F32, a, b, 0); break;
  case S_ADD_F16: r = salu_float(V_ADD_F16, a & 0xffff, b & 0xffff, 0) & 0xffff; break;
  case S_SUB_F16: r = salu_float(V_SUB_F16, a & 0xffff, b & 0xffff, 0) & 0xffff; break;
  case S_MIN_NUM_F16: r = salu_float(V_MIN_F16, a & 0xffff, b & 0xffff, 0) & 0xffff; break;
  case S_MAX_NUM_F16: r = salu_float(V_MAX_F16, a & 0xffff, b & 0xffff, 0) & 0xffff; break;
  case S_MUL_F16: r = salu_float(V_MUL_F16, a & 0xffff, b & 0xffff, 0) & 0xffff; break;
  case S_FMAC_F16:
    r = salu_float(V_FMA_F16, a & 0xffff, b & 0xffff, (dst < RDNA3_NSGPR ? w->s[dst] : 0) & 0xffff) & 0xffff;
    break;
  default: return rdna3_fail(c, w, "unimplemented SOP2 opcode %u", op);
  }
  if (wide) rdna3_swrite64(w, dst, r64);
  else rdna3_swrite32(w, dst, r);
  return 0;
}

int rdna3_exec_sopk(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 23) & 0x1f, dst = (e >> 16) & 0x7f;
  int mop = isa_op(c, w, &c->isa->sopk, "SOPK", op);
  if (mop < 0) return -1;
  op = (unsigned)mop;
  uint32_t k = e & 0xffff, sk = (uint32_t)(int32_t)(int16_t)k;
  uint32_t d = dst < RDNA3_NSGPR ? w->s[dst] : 0;
  switch (op) {
  case S_MOVK_I32: rdna3_swrite32(w, dst, sk); break;
  case S_VERSION: break;
  case S_CMOVK_I32: if (w->scc) rdna3_swrite32(w, dst, sk); break;
  case S_CMPK_EQ_I32: w->scc = d == sk; break;
  case S_CMPK_LG_I32: w->scc = d != sk; break;
  case S_CMPK_GT_I32: w->scc = (int32_t)d > (int32_t)sk; break;
  case S_CMPK_GE_I32: w->scc = (int32_t)d >= (int32_t)sk; break;
  case S_CMPK_LT_I32: w->scc = (int32_t)d < (int32_t)sk; break;
  case S_CMPK_LE_I32: w->scc = (int32_t)d <= (int32_t)sk; break;
  case S_CMPK_EQ_U32: w->scc = d == k; break;
  case S_CMPK_LG_U32: w->scc = d != k; break;
  case S_CMPK_GT_U32: w->scc = d > k; break;
  case S_CMPK_GE_U32: w->scc = d >= k; break;
  case S_CMPK_LT_U32: w->scc = d < k; break;
  case S_CMPK_LE_U32: w->scc = d <= k; break;
  case S_ADDK_I32: {
    uint32_t r = d + sk;
    w->scc = ((d ^ r) & (sk ^ r)) >> 31;
    rdna3_swrite32(w, dst, r);
    break;
  }
  case S_MULK_I32: rdna3_swrite32(w, dst, d * sk); break;
  case S_WAITCNT_VMCNT: case S_WAITCNT_LGKMCNT:
    /* gfx11: the count is SIMM16; SDST must be null (llvm-mc refuses anything else) */
    if (dst != RDNA3_NULL) return rdna3_fail(c, w, "s_waitcnt_*cnt with SDST s%u (gfx11 needs null)", dst);
    rdna3_wait(w, op == S_WAITCNT_VMCNT ? RDNA3_VMCNT : RDNA3_LGKMCNT, k);
    break;
  case S_WAITCNT_VSCNT: case S_WAITCNT_EXPCNT:
    break;  /* stores and exports take effect at issue here: nothing to wait for */
  default: return rdna3_fail(c, w, "unimplemented SOPK opcode %u", op);
  }
  return 0;
}

static uint32_t saveexec(unsigned op, uint32_t s, uint32_t exec) {
  switch (op) {
  case S_AND_SAVEEXEC_B32: return s & exec;
  case S_OR_SAVEEXEC_B32: return s | exec;
  case S_XOR_SAVEEXEC_B32: return s ^ exec;
  case S_NAND_SAVEEXEC_B32: return ~(s & exec);
  case S_NOR_SAVEEXEC_B32: return ~(s | exec);
  case S_XNOR_SAVEEXEC_B32: return ~(s ^ exec);
  /* NOT0 negates the source, NOT1 the EXEC mask (GCN's ANDN1/ANDN2): the else arm of LLVM's divergent if/else
   * is s_and_not1_saveexec (EXEC = S0 & ~EXEC, the lanes that did not take the then arm) */
  case S_AND_NOT0_SAVEEXEC_B32: return ~s & exec;
  case S_OR_NOT0_SAVEEXEC_B32: return ~s | exec;
  case S_AND_NOT1_SAVEEXEC_B32: return s & ~exec;
  default: return s | ~exec;  /* S_OR_NOT1_SAVEEXEC_B32 */
  }
}

int rdna3_exec_sop1(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 8) & 0xff, dst = (e >> 16) & 0x7f, s0 = e & 0xff;
  int mop = isa_op(c, w, &c->isa->sop1, "SOP1", op);
  if (mop < 0) return -1;
  op = (unsigned)mop;
  if (sources_literal(c, w, s0, 0)) return -1;
  uint32_t a = rdna3_sreg32(c, w, s0);
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  switch (op) {
  case S_MOV_B32: rdna3_swrite32(w, dst, a); break;
  case S_MOV_B64: rdna3_swrite64(w, dst, rdna3_sreg64(c, w, s0)); break;
  case S_CMOV_B32: if (w->scc) rdna3_swrite32(w, dst, a); break;
  case S_CMOV_B64: if (w->scc) rdna3_swrite64(w, dst, rdna3_sreg64(c, w, s0)); break;
  case S_BREV_B32: {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((a >> i) & 1u) << (31 - i);
    rdna3_swrite32(w, dst, r);
    break;
  }
  case S_CTZ_I32_B32: rdna3_swrite32(w, dst, a ? (uint32_t)__builtin_ctz(a) : ~0u); break;
  case S_CTZ_I32_B64: {
    uint64_t v = rdna3_sreg64(c, w, s0);
    rdna3_swrite32(w, dst, v ? (uint32_t)__builtin_ctzll(v) : ~0u);
    break;
  }
  case S_CLZ_I32_U32: rdna3_swrite32(w, dst, a ? (uint32_t)__builtin_clz(a) : ~0u); break;
  case S_CLZ_I32_U64: {
    uint64_t v = rdna3_sreg64(c, w, s0);
    rdna3_swrite32(w, dst, v ? (uint32_t)__builtin_clzll(v) : ~0u);
    break;
  }
  case S_CLS_I32: rdna3_swrite32(w, dst, rdna3_cls32(a)); break;
  case S_CLS_I32_I64: rdna3_swrite32(w, dst, rdna3_cls64(rdna3_sreg64(c, w, s0))); break;
  case S_SEXT_I32_I8: rdna3_swrite32(w, dst, (uint32_t)(int32_t)(int8_t)a); break;
  case S_SEXT_I32_I16: rdna3_swrite32(w, dst, (uint32_t)(int32_t)(int16_t)a); break;
  case S_BITSET0_B32: rdna3_swrite32(w, dst, w->s[dst] & ~(1u << (a & 31))); break;
  case S_BITSET1_B32: rdna3_swrite32(w, dst, w->s[dst] | 1u << (a & 31)); break;
  case S_ABS_I32: {
    uint32_t r = (int32_t)a < 0 ? 0u - a : a;
    rdna3_swrite32(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_BCNT0_I32_B32: {
    uint32_t r = 32 - (uint32_t)__builtin_popcount(a);
    rdna3_swrite32(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_BCNT1_I32_B32: {
    uint32_t r = (uint32_t)__builtin_popcount(a);
    rdna3_swrite32(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_BCNT1_I32_B64: {
    uint32_t r = (uint32_t)__builtin_popcountll(rdna3_sreg64(c, w, s0));
    rdna3_swrite32(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_NOT_B32: rdna3_swrite32(w, dst, ~a); w->scc = ~a != 0; break;
  case S_NOT_B64: {
    uint64_t r = ~rdna3_sreg64(c, w, s0);
    rdna3_swrite64(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_AND_SAVEEXEC_B32: case S_OR_SAVEEXEC_B32: case S_XOR_SAVEEXEC_B32: case S_NAND_SAVEEXEC_B32:
  case S_NOR_SAVEEXEC_B32: case S_XNOR_SAVEEXEC_B32: case S_AND_NOT0_SAVEEXEC_B32:
  case S_OR_NOT0_SAVEEXEC_B32: case S_AND_NOT1_SAVEEXEC_B32: case S_OR_NOT1_SAVEEXEC_B32: {
    uint32_t r = saveexec(op, a, exec);
    rdna3_swrite32(w, dst, exec);  /* the old EXEC, read before the write below */
    w->s[RDNA3_EXEC_LO] = r;
    w->scc = r != 0;
    break;
  }
  case S_AND_NOT0_WREXEC_B32: case S_AND_NOT1_WREXEC_B32: {
    uint32_t r = op == S_AND_NOT0_WREXEC_B32 ? ~a & exec : a & ~exec;
    w->s[RDNA3_EXEC_LO] = r;
    rdna3_swrite32(w, dst, r);
    w->scc = r != 0;
    break;
  }
  case S_GETPC_B64: rdna3_swrite64(w, dst, w->pc + 4); break;
  case S_SETPC_B64: w->pc = rdna3_sreg64(c, w, s0); c->jumped = true; break;
  case S_SWAPPC_B64: {
    uint64_t to = rdna3_sreg64(c, w, s0);
    rdna3_swrite64(w, dst, w->pc + 4);
    w->pc = to;
    c->jumped = true;
    break;
  }
  case S_BARRIER_SIGNAL:
    /* gfx12 split barrier: the signal, then s_barrier_wait. -1 names the workgroup barrier; named barriers are not
     * modelled. The wave yields here until every wave of the workgroup has signalled (a legal schedule). */
    if (a != ~0u) return rdna3_fail(c, w, "s_barrier_signal %d: only the workgroup barrier (-1) is implemented", (int32_t)a);
    if (w->barrier_signaled) return rdna3_fail(c, w, "s_barrier_signal twice without s_barrier_wait");
    w->barrier_signaled = true;
    w->at_barrier = true;
    break;
  case S_CEIL_F32: rdna3_swrite32(w, dst, salu_float(V_CEIL_F32, a, 0, 0)); break;
  case S_FLOOR_F32: rdna3_swrite32(w, dst, salu_float(V_FLOOR_F32, a, 0, 0)); break;
  case S_TRUNC_F32: rdna3_swrite32(w, dst, salu_float(V_TRUNC_F32, a, 0, 0)); break;
  case S_RNDNE_F32: rdna3_swrite32(w, dst, salu_float(V_RNDNE_F32, a, 0, 0)); break;
  case S_CVT_F32_I32: rdna3_swrite32(w, dst, salu_float(V_CVT_F32_I32, a, 0, 0)); break;
  case S_CVT_F32_U32: rdna3_swrite32(w, dst, salu_float(V_CVT_F32_U32, a, 0, 0)); break;
  case S_CVT_I32_F32: rdna3_swrite32(w, dst, salu_float(V_CVT_I32_F32, a, 0, 0)); break;
  case S_CVT_U32_F32: rdna3_swrite32(w, dst, salu_float(V_CVT_U32_F32, a, 0, 0)); break;
  case S_CVT_F16_F32: rdna3_swrite32(w, dst, salu_float(V_CVT_F16_F32, a, 0, 0) & 0xffff); break;
  case S_CVT_F32_F16: rdna3_swrite32(w, dst, salu_float(V_CVT_F32_F16, a & 0xffff, 0, 0)); break;
  case S_CVT_HI_F32_F16: rdna3_swrite32(w, dst, salu_float(V_CVT_F32_F16, a >> 16, 0, 0)); break;
  case S_CEIL_F16: rdna3_swrite32(w, dst, salu_float(V_CEIL_F16, a & 0xffff, 0, 0) & 0xffff); break;
  case S_FLOOR_F16: rdna3_swrite32(w, dst, salu_float(V_FLOOR_F16, a & 0xffff, 0, 0) & 0xffff); break;
  case S_TRUNC_F16: rdna3_swrite32(w, dst, salu_float(V_TRUNC_F16, a & 0xffff, 0, 0) & 0xffff); break;
  case S_RNDNE_F16: rdna3_swrite32(w, dst, salu_float(V_RNDNE_F16, a & 0xffff, 0, 0) & 0xffff); break;
  default: return rdna3_fail(c, w, "unimplemented SOP1 opcode %u", op);
  }
  return 0;
}

int rdna3_exec_sopc(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 16) & 0x7f, s1 = (e >> 8) & 0xff, s0 = e & 0xff;
  int mop = isa_op(c, w, &c->isa->sopc, "SOPC", op);
  if (mop < 0) return -1;
  op = (unsigned)mop;
  if (sources_literal(c, w, s0, s1)) return -1;
  uint32_t a = rdna3_sreg32(c, w, s0), b = rdna3_sreg32(c, w, s1);
  int32_t ia = (int32_t)a, ib = (int32_t)b;
  /* gfx12 float compares: the VOPC conditions 1..14 of the f32 (0x10+) and f16 (0x00+) groups */
  if (op >= S_CMP_LT_F32 && op <= S_CMP_NLT_F32) {
    w->scc = rdna3_vopc_compare(V_CMP_F_F32 + (op - S_CMP_LT_F32 + 1), VT_F32, a, b);
    return 0;
  }
  if (op >= S_CMP_LT_F16 && op <= S_CMP_NLT_F16) {
    w->scc = rdna3_vopc_compare(V_CMP_F_F16 + (op - S_CMP_LT_F16 + 1), VT_F16, a & 0xffff, b & 0xffff);
    return 0;
  }
  switch (op) {
  case S_CMP_EQ_I32: case S_CMP_EQ_U32: w->scc = a == b; break;
  case S_CMP_LG_I32: case S_CMP_LG_U32: w->scc = a != b; break;
  case S_CMP_GT_I32: w->scc = ia > ib; break;
  case S_CMP_GE_I32: w->scc = ia >= ib; break;
  case S_CMP_LT_I32: w->scc = ia < ib; break;
  case S_CMP_LE_I32: w->scc = ia <= ib; break;
  case S_CMP_GT_U32: w->scc = a > b; break;
  case S_CMP_GE_U32: w->scc = a >= b; break;
  case S_CMP_LT_U32: w->scc = a < b; break;
  case S_CMP_LE_U32: w->scc = a <= b; break;
  case S_BITCMP0_B32: w->scc = !((a >> (b & 31)) & 1); break;
  case S_BITCMP1_B32: w->scc = (a >> (b & 31)) & 1; break;
  case S_BITCMP0_B64: w->scc = !((rdna3_sreg64(c, w, s0) >> (b & 63)) & 1); break;
  case S_BITCMP1_B64: w->scc = (rdna3_sreg64(c, w, s0) >> (b & 63)) & 1; break;
  case S_CMP_EQ_U64: w->scc = rdna3_sreg64(c, w, s0) == rdna3_sreg64(c, w, s1); break;
  case S_CMP_LG_U64: w->scc = rdna3_sreg64(c, w, s0) != rdna3_sreg64(c, w, s1); break;
  default: return rdna3_fail(c, w, "unimplemented SOPC opcode %u", op);
  }
  return 0;
}

int rdna3_exec_sopp(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 16) & 0x7f;
  int mop = isa_op(c, w, &c->isa->sopp, "SOPP", op);
  if (mop < 0) return -1;
  op = (unsigned)mop;
  int16_t simm = (int16_t)(e & 0xffff);
  bool take;
  switch (op) {
  case S_NOP: case S_SLEEP: case S_SET_INST_PREFETCH_DISTANCE: case S_CLAUSE: case S_DELAY_ALU:
  case S_WAITCNT_DEPCTR: case S_WAIT_EVENT: case S_SETPRIO: case S_ICACHE_INV: case S_ROUND_MODE:
  case S_DENORM_MODE:
    return 0;  /* scheduling hints: execution is in order */
  case S_WAITCNT:  /* gfx11 SIMM16: VM_CNT [15:10], LGKM_CNT [9:4], EXP_CNT [2:0] (LLVM gfx11_waitcnt) */
    rdna3_wait(w, RDNA3_VMCNT, (e >> 10) & 0x3f);
    rdna3_wait(w, RDNA3_LGKMCNT, (e >> 4) & 0x3f);
    return 0;
  case S_WAIT_IDLE: rdna3_wait_all(w); return 0;
  /* gfx12 split counters (rdna3.h "RDNA4"): loadcnt, dscnt and kmcnt land their loads; stores, samples, BVH
   * and exports take effect at issue here, so their counters are always 0 */
  case S_WAIT_LOADCNT: rdna3_wait(w, RDNA3_VMCNT, e & 0x3f); return 0;
  case S_WAIT_DSCNT: rdna3_wait(w, RDNA3_LGKMCNT, e & 0x3f); return 0;
  case S_WAIT_KMCNT: rdna3_wait(w, RDNA3_KMCNT, e & 0x1f); return 0;
  case S_WAIT_LOADCNT_DSCNT:
    rdna3_wait(w, RDNA3_VMCNT, (e >> 8) & 0x3f);
    rdna3_wait(w, RDNA3_LGKMCNT, e & 0x3f);
    return 0;
  case S_WAIT_STORECNT_DSCNT: rdna3_wait(w, RDNA3_LGKMCNT, e & 0x3f); return 0;
  case S_WAIT_STORECNT: case S_WAIT_SAMPLECNT: case S_WAIT_BVHCNT: case S_WAIT_EXPCNT: return 0;
  case S_BARRIER_WAIT:
    if (simm != -1) return rdna3_fail(c, w, "s_barrier_wait %d: only the workgroup barrier (-1) is implemented", simm);
    if (!w->barrier_signaled) return rdna3_fail(c, w, "s_barrier_wait without s_barrier_signal: the wave would wait forever");
    w->barrier_signaled = false;
    return 0;
  case S_SENDMSG:
    if ((e & 0xffff) == 3) return 0;  /* MSG_DEALLOC_VGPRS before s_endpgm */
    return rdna3_fail(c, w, "s_sendmsg %u is not supported", e & 0xffff);
  case S_ENDPGM:  /* loads still in flight land in a wave that no longer exists; here they land, for tests */
    rdna3_wait_all(w);
    w->done = true;
    return 0;
  case S_CODE_END: return rdna3_fail(c, w, "executed s_code_end padding (ran off the end of the program)");
  case S_BARRIER: w->at_barrier = true; return 0;
  case S_BRANCH: take = true; break;
  case S_CBRANCH_SCC0: take = !w->scc; break;
  case S_CBRANCH_SCC1: take = w->scc; break;
  case S_CBRANCH_VCCZ: take = w->s[RDNA3_VCC_LO] == 0; break;
  case S_CBRANCH_VCCNZ: take = w->s[RDNA3_VCC_LO] != 0; break;
  case S_CBRANCH_EXECZ: take = w->s[RDNA3_EXEC_LO] == 0; break;
  case S_CBRANCH_EXECNZ: take = w->s[RDNA3_EXEC_LO] != 0; break;
  default: return rdna3_fail(c, w, "unimplemented SOPP opcode %u", op);
  }
  if (take) {
    w->pc = w->pc + 4 + (int64_t)simm * 4;
    c->jumped = true;
  }
  return 0;
}
