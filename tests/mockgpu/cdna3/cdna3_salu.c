/* tests/mockgpu/cdna3/cdna3_salu.c: SOP2, SOPK, SOP1, SOPC and SOPP in gfx9 numbering (CDNA3 ISA guide
 * "Scalar ALU operations"): 64-bit lane masks (EXEC, VCC) as SGPR pairs, SCC, branches, s_waitcnt, s_barrier,
 * and the M0-relative VGPR indexing of s_set_gpr_idx_on/off (LLVM's lowering of dynamically indexed arrays). */
#include "cdna3_ops.h"
#include "cdna3_internal.h"

/* An SSRC operand: a literal (255) grows the instruction by a dword. */
static int src_ok(cdna3_ctx *c, const cdna3_wave *w, unsigned src) {
  if (src == CDNA3_SRC_LITERAL) return cdna3_take_literal(c, w);
  if (src == CDNA3_SRC_SDWA || src == CDNA3_SRC_DPP || src == CDNA3_SRC_LDS_DIRECT || src == 239 ||
      (src > CDNA3_SRC_NEG_MAX && src < CDNA3_SRC_SHARED_BASE))
    return cdna3_fail(c, w, "scalar operand %u is not valid here", src);
  return 0;
}

static uint64_t bfe64(uint64_t v, uint32_t ctl, bool sgn, unsigned bits) {
  unsigned off = ctl & (bits - 1), width = (ctl >> 16) & 0x7f;
  if (!width) return 0;
  if (width > bits) width = bits;
  uint64_t r = v >> off;
  if (width < 64) r &= (1ull << width) - 1;
  if (sgn && width < 64 && ((r >> (width - 1)) & 1)) r |= ~0ull << width;
  return bits == 32 ? (uint32_t)r : r;
}

int cdna3_exec_sop2(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 23) & 0x7f, sdst = (e >> 16) & 0x7f, s0 = e & 0xff, s1 = (e >> 8) & 0xff;
  if (src_ok(c, w, s0) || src_ok(c, w, s1)) return -1;
  uint32_t a = cdna3_sreg32(c, w, s0), b = cdna3_sreg32(c, w, s1), d = 0;
  uint64_t A = cdna3_sreg64(c, w, s0), B = cdna3_sreg64(c, w, s1), D = 0;
  bool wide = false, scc = w->scc;
  switch (op) {
  case C3_S_ADD_U32: { uint64_t t = (uint64_t)a + b; d = (uint32_t)t, scc = t >> 32; break; }
  case C3_S_SUB_U32: d = a - b, scc = b > a; break;
  case C3_S_ADD_I32: d = a + b, scc = ((~(a ^ b)) & (a ^ d)) >> 31; break;
  case C3_S_SUB_I32: d = a - b, scc = ((a ^ b) & (a ^ d)) >> 31; break;
  case C3_S_ADDC_U32: { uint64_t t = (uint64_t)a + b + w->scc; d = (uint32_t)t, scc = t >> 32; break; }
  case C3_S_SUBB_U32: d = a - b - w->scc, scc = (uint64_t)b + w->scc > a; break;
  case C3_S_MIN_I32: scc = (int32_t)a < (int32_t)b, d = scc ? a : b; break;
  case C3_S_MIN_U32: scc = a < b, d = scc ? a : b; break;
  case C3_S_MAX_I32: scc = (int32_t)a > (int32_t)b, d = scc ? a : b; break;
  case C3_S_MAX_U32: scc = a > b, d = scc ? a : b; break;
  case C3_S_CSELECT_B32: d = w->scc ? a : b; break;
  case C3_S_CSELECT_B64: D = w->scc ? A : B, wide = true; break;
  case C3_S_AND_B32: d = a & b, scc = d != 0; break;
  case C3_S_OR_B32: d = a | b, scc = d != 0; break;
  case C3_S_XOR_B32: d = a ^ b, scc = d != 0; break;
  case C3_S_ANDN2_B32: d = a & ~b, scc = d != 0; break;
  case C3_S_ORN2_B32: d = a | ~b, scc = d != 0; break;
  case C3_S_NAND_B32: d = ~(a & b), scc = d != 0; break;
  case C3_S_NOR_B32: d = ~(a | b), scc = d != 0; break;
  case C3_S_XNOR_B32: d = ~(a ^ b), scc = d != 0; break;
  case C3_S_AND_B64: D = A & B, wide = true, scc = D != 0; break;
  case C3_S_OR_B64: D = A | B, wide = true, scc = D != 0; break;
  case C3_S_XOR_B64: D = A ^ B, wide = true, scc = D != 0; break;
  case C3_S_ANDN2_B64: D = A & ~B, wide = true, scc = D != 0; break;
  case C3_S_ORN2_B64: D = A | ~B, wide = true, scc = D != 0; break;
  case C3_S_NAND_B64: D = ~(A & B), wide = true, scc = D != 0; break;
  case C3_S_NOR_B64: D = ~(A | B), wide = true, scc = D != 0; break;
  case C3_S_XNOR_B64: D = ~(A ^ B), wide = true, scc = D != 0; break;
  case C3_S_LSHL_B32: d = a << (b & 31), scc = d != 0; break;
  case C3_S_LSHR_B32: d = a >> (b & 31), scc = d != 0; break;
  case C3_S_ASHR_I32: d = (uint32_t)((int32_t)a >> (b & 31)), scc = d != 0; break;
  case C3_S_LSHL_B64: D = A << (b & 63), wide = true, scc = D != 0; break;
  case C3_S_LSHR_B64: D = A >> (b & 63), wide = true, scc = D != 0; break;
  case C3_S_ASHR_I64: D = (uint64_t)((int64_t)A >> (b & 63)), wide = true, scc = D != 0; break;
  case C3_S_BFM_B32: d = ((1u << (a & 31)) - 1) << (b & 31); break;
  case C3_S_BFM_B64: D = ((1ull << (a & 63)) - 1) << (b & 63), wide = true; break;
  case C3_S_MUL_I32: d = (uint32_t)((int64_t)(int32_t)a * (int32_t)b); break;
  case C3_S_BFE_U32: d = (uint32_t)bfe64(a, b, false, 32), scc = d != 0; break;
  case C3_S_BFE_I32: d = (uint32_t)bfe64((uint64_t)(int64_t)(int32_t)a, b, true, 32), scc = d != 0; break;
  case C3_S_BFE_U64: D = bfe64(A, b, false, 64), wide = true, scc = D != 0; break;
  case C3_S_BFE_I64: D = bfe64(A, b, true, 64), wide = true, scc = D != 0; break;
  case C3_S_ABSDIFF_I32: { int64_t t = (int64_t)(int32_t)a - (int32_t)b; d = (uint32_t)(t < 0 ? -t : t); scc = d != 0; break; }
  case C3_S_MUL_HI_U32: d = (uint32_t)(((uint64_t)a * b) >> 32); break;
  case C3_S_MUL_HI_I32: d = (uint32_t)((uint64_t)((int64_t)(int32_t)a * (int32_t)b) >> 32); break;
  case C3_S_LSHL1_ADD_U32: case C3_S_LSHL1_ADD_U32 + 1: case C3_S_LSHL1_ADD_U32 + 2: case C3_S_LSHL4_ADD_U32: {
    uint64_t t = ((uint64_t)a << (op - C3_S_LSHL1_ADD_U32 + 1)) + b;
    d = (uint32_t)t, scc = t >> 32;
    break;
  }
  case C3_S_PACK_LL_B32_B16: d = (a & 0xffff) | b << 16; break;
  case C3_S_PACK_LH_B32_B16: d = (a & 0xffff) | (b & 0xffff0000u); break;
  case C3_S_PACK_HH_B32_B16: d = a >> 16 | (b & 0xffff0000u); break;
  default: return cdna3_fail(c, w, "unimplemented SOP2 opcode %u", op);
  }
  if (wide) cdna3_swrite64(w, sdst, D);
  else cdna3_swrite32(w, sdst, d);
  w->scc = scc;
  return 0;
}

static bool cmp32(unsigned k, uint32_t a, uint32_t b) {  /* SOPC/SOPK order: eq lg gt ge lt le, i32 then u32 */
  bool sgn = k < 6;
  int64_t x = sgn ? (int32_t)a : (int64_t)a, y = sgn ? (int32_t)b : (int64_t)b;
  switch (k % 6) {
  case 0: return x == y;
  case 1: return x != y;
  case 2: return x > y;
  case 3: return x >= y;
  case 4: return x < y;
  default: return x <= y;
  }
}

int cdna3_exec_sopk(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 23) & 0x1f, sdst = (e >> 16) & 0x7f;
  uint32_t k = e & 0xffff, sk = (uint32_t)(int32_t)(int16_t)k;
  if (op >= C3_S_CMPK_EQ_I32 && op <= C3_S_CMPK_LE_U32) {
    unsigned i = op - C3_S_CMPK_EQ_I32;
    w->scc = cmp32(i, cdna3_sreg32(c, w, sdst), i < 6 ? sk : k);
    return 0;
  }
  if (op == C3_S_GETREG_B32 || op == C3_S_SETREG_B32 || op == C3_S_SETREG_IMM32_B32) {
    /* hwreg(ID [5:0], OFFSET [10:6], SIZE-1 [15:11]); only HW_REG_MODE (1) is modelled: LLVM switches float modes
     * with it. The value is kept but the float modes do not change the arithmetic (denormals stay on). */
    unsigned id = k & 0x3f, off = (k >> 6) & 0x1f, size = ((k >> 11) & 0x1f) + 1;
    uint32_t mask = (size >= 32 ? ~0u : (1u << size) - 1) << off;
    if (id != 1) return cdna3_fail(c, w, "hardware register %u is not modelled (only HW_REG_MODE)", id);
    if (op == C3_S_GETREG_B32) {
      cdna3_swrite32(w, sdst, (w->mode & mask) >> off);
      return 0;
    }
    uint32_t v = op == C3_S_SETREG_B32 ? cdna3_sreg32(c, w, sdst) : 0;
    if (op == C3_S_SETREG_IMM32_B32) {
      if (cdna3_take_literal(c, w)) return -1;
      v = c->lit;
    }
    w->mode = (w->mode & ~mask) | ((v << off) & mask);
    return 0;
  }
  switch (op) {
  case C3_S_MOVK_I32: cdna3_swrite32(w, sdst, sk); return 0;
  case C3_S_CMOVK_I32: if (w->scc) cdna3_swrite32(w, sdst, sk); return 0;
  case C3_S_ADDK_I32: {
    uint32_t a = cdna3_sreg32(c, w, sdst), d = a + sk;
    w->scc = ((~(a ^ sk)) & (a ^ d)) >> 31;
    cdna3_swrite32(w, sdst, d);
    return 0;
  }
  case C3_S_MULK_I32: cdna3_swrite32(w, sdst, (uint32_t)((int64_t)(int32_t)cdna3_sreg32(c, w, sdst) * (int32_t)sk)); return 0;
  default: return cdna3_fail(c, w, "unimplemented SOPK opcode %u", op);
  }
}

int cdna3_exec_sop1(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 8) & 0xff, sdst = (e >> 16) & 0x7f, s0 = e & 0xff;
  if (src_ok(c, w, s0)) return -1;
  uint32_t a = cdna3_sreg32(c, w, s0);
  uint64_t A = cdna3_sreg64(c, w, s0);
  if (op >= C3_S_AND_SAVEEXEC_B64 && op <= C3_S_XNOR_SAVEEXEC_B64) {
    uint64_t ex = cdna3_exec(w), n;
    switch (op) {
    case C3_S_AND_SAVEEXEC_B64: n = A & ex; break;
    case C3_S_OR_SAVEEXEC_B64: n = A | ex; break;
    case C3_S_XOR_SAVEEXEC_B64: n = A ^ ex; break;
    case C3_S_ANDN2_SAVEEXEC_B64: n = A & ~ex; break;
    case C3_S_ORN2_SAVEEXEC_B64: n = A | ~ex; break;
    case C3_S_NAND_SAVEEXEC_B64: n = ~(A & ex); break;
    case C3_S_NOR_SAVEEXEC_B64: n = ~(A | ex); break;
    default: n = ~(A ^ ex); break;
    }
    cdna3_swrite64(w, sdst, ex);
    cdna3_set_exec(w, n);
    w->scc = n != 0;
    return 0;
  }
  if (op == C3_S_ANDN1_SAVEEXEC_B64 || op == C3_S_ORN1_SAVEEXEC_B64) {
    uint64_t ex = cdna3_exec(w), n = op == C3_S_ANDN1_SAVEEXEC_B64 ? ~A & ex : ~A | ex;
    cdna3_swrite64(w, sdst, ex);
    cdna3_set_exec(w, n);
    w->scc = n != 0;
    return 0;
  }
  switch (op) {
  case C3_S_MOV_B32: cdna3_swrite32(w, sdst, a); break;
  case C3_S_MOV_B64: cdna3_swrite64(w, sdst, A); break;
  case C3_S_CMOV_B32: if (w->scc) cdna3_swrite32(w, sdst, a); break;
  case C3_S_CMOV_B64: if (w->scc) cdna3_swrite64(w, sdst, A); break;
  case C3_S_NOT_B32: cdna3_swrite32(w, sdst, ~a), w->scc = ~a != 0; break;
  case C3_S_NOT_B64: cdna3_swrite64(w, sdst, ~A), w->scc = ~A != 0; break;
  case C3_S_BREV_B32: {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((a >> i) & 1u) << (31 - i);
    cdna3_swrite32(w, sdst, r);
    break;
  }
  case C3_S_BCNT1_I32_B32: { uint32_t r = (uint32_t)__builtin_popcount(a); cdna3_swrite32(w, sdst, r), w->scc = r != 0; break; }
  case C3_S_BCNT1_I32_B64: { uint32_t r = (uint32_t)__builtin_popcountll(A); cdna3_swrite32(w, sdst, r), w->scc = r != 0; break; }
  case C3_S_FF1_I32_B32: cdna3_swrite32(w, sdst, a ? (uint32_t)__builtin_ctz(a) : ~0u); break;
  case C3_S_FF1_I32_B64: cdna3_swrite32(w, sdst, A ? (uint32_t)__builtin_ctzll(A) : ~0u); break;
  case C3_S_FLBIT_I32_B32: cdna3_swrite32(w, sdst, a ? (uint32_t)__builtin_clz(a) : ~0u); break;
  case C3_S_FLBIT_I32_B64: cdna3_swrite32(w, sdst, A ? (uint32_t)__builtin_clzll(A) : ~0u); break;
  case C3_S_SEXT_I32_I8: cdna3_swrite32(w, sdst, (uint32_t)(int32_t)(int8_t)a); break;
  case C3_S_SEXT_I32_I16: cdna3_swrite32(w, sdst, (uint32_t)(int32_t)(int16_t)a); break;
  case C3_S_BITSET0_B32: cdna3_swrite32(w, sdst, cdna3_sreg32(c, w, sdst) & ~(1u << (a & 31))); break;
  case C3_S_BITSET1_B32: cdna3_swrite32(w, sdst, cdna3_sreg32(c, w, sdst) | 1u << (a & 31)); break;
  case C3_S_ABS_I32: { uint32_t r = (int32_t)a < 0 ? 0u - a : a; cdna3_swrite32(w, sdst, r), w->scc = r != 0; break; }
  case C3_S_GETPC_B64: cdna3_swrite64(w, sdst, w->pc + 4ull * c->ndw); break;
  case C3_S_SETPC_B64: w->pc = A, c->jumped = true; break;
  case C3_S_SWAPPC_B64: cdna3_swrite64(w, sdst, w->pc + 4ull * c->ndw), w->pc = A, c->jumped = true; break;
  case C3_S_SET_GPR_IDX_IDX: w->s[CDNA3_M0] = (w->s[CDNA3_M0] & ~0xffu) | (a & 0xff); break;
  default: return cdna3_fail(c, w, "unimplemented SOP1 opcode %u", op);
  }
  return 0;
}

int cdna3_exec_sopc(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 16) & 0x7f, s0 = e & 0xff, s1 = (e >> 8) & 0xff;
  if (op == C3_S_SET_GPR_IDX_ON) {
    /* M0[7:0] = the index, M0[15:12] = which VGPR operands it offsets (SRC0, SRC1, SRC2, DST), SSRC1 holds them. */
    if (src_ok(c, w, s0)) return -1;
    if (s1 & ~0xfu) return cdna3_fail(c, w, "s_set_gpr_idx_on mode 0x%x has bits beyond SRC0/SRC1/SRC2/DST", s1);
    w->s[CDNA3_M0] = (w->s[CDNA3_M0] & ~0xf0ffu) | (cdna3_sreg32(c, w, s0) & 0xff) | s1 << 12;
    w->gpr_idx_en = true;
    return 0;
  }
  if (src_ok(c, w, s0) || src_ok(c, w, s1)) return -1;
  uint32_t a = cdna3_sreg32(c, w, s0), b = cdna3_sreg32(c, w, s1);
  uint64_t A = cdna3_sreg64(c, w, s0);
  if (op <= C3_S_CMP_LE_U32) w->scc = cmp32(op, a, b);
  else if (op == C3_S_BITCMP0_B32) w->scc = !((a >> (b & 31)) & 1);
  else if (op == C3_S_BITCMP1_B32) w->scc = (a >> (b & 31)) & 1;
  else if (op == C3_S_BITCMP0_B64) w->scc = !((A >> (b & 63)) & 1);
  else if (op == C3_S_BITCMP1_B64) w->scc = (A >> (b & 63)) & 1;
  else if (op == C3_S_CMP_EQ_U64) w->scc = A == cdna3_sreg64(c, w, s1);
  else if (op == C3_S_CMP_LG_U64) w->scc = A != cdna3_sreg64(c, w, s1);
  else return cdna3_fail(c, w, "unimplemented SOPC opcode %u", op);
  return 0;
}

int cdna3_exec_sopp(cdna3_ctx *c, cdna3_wave *w) {
  uint32_t e = c->enc[0];
  unsigned op = (e >> 16) & 0x7f;
  int16_t simm = (int16_t)(e & 0xffff);
  uint64_t vcc = cdna3_sreg64(c, w, CDNA3_VCC_LO);
  bool take;
  switch (op) {
  case C3_S_NOP: case C3_S_SLEEP: case C3_S_SETPRIO: case C3_S_ICACHE_INV: return 0;
  case C3_S_ENDPGM: cdna3_wait_all(w); w->done = true; return 0;
  case C3_S_BARRIER: cdna3_wait_all(w); w->at_barrier = true; return 0;
  case C3_S_SET_GPR_IDX_OFF: w->gpr_idx_en = false; return 0;
  case C3_S_WAITCNT: {
    /* gfx9: vmcnt [3:0] and [15:14], expcnt [6:4], lgkmcnt [11:8] */
    unsigned vm = (e & 0xf) | ((e >> 14) & 3) << 4, lgkm = (e >> 8) & 0xf;
    cdna3_wait(w, CDNA3_VMCNT, vm);
    cdna3_wait(w, CDNA3_LGKMCNT, lgkm);
    return 0;
  }
  case C3_S_BRANCH: take = true; break;
  case C3_S_CBRANCH_SCC0: take = !w->scc; break;
  case C3_S_CBRANCH_SCC1: take = w->scc; break;
  case C3_S_CBRANCH_VCCZ: take = vcc == 0; break;
  case C3_S_CBRANCH_VCCNZ: take = vcc != 0; break;
  case C3_S_CBRANCH_EXECZ: take = cdna3_exec(w) == 0; break;
  case C3_S_CBRANCH_EXECNZ: take = cdna3_exec(w) != 0; break;
  default: return cdna3_fail(c, w, "unimplemented SOPP opcode %u", op);
  }
  if (take) w->pc += 4 + 4 * (int64_t)simm, c->jumped = true;
  return 0;
}
