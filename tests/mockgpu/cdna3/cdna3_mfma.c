/* tests/mockgpu/cdna3/cdna3_mfma.c: the VOP3P-MAI matrix ops V_MFMA_F32_{16X16X16,32X32X8}_{F16,BF16}: D = A*B + C
 * over a wave64, products summed in f32 precision (double here, rounded once per element). Operand layout (CDNA3
 * ISA guide "Matrix fused multiply-add"; LLVM llvm.amdgcn.mfma.f32.16x16x16f16 / .16x16x16bf16.1k): for an MxNxK op
 * with M = N = 16 or 32, lane l holds row l % M of A and column l % N of B, k = 4 * (l / M) + j for j = 0..3 as
 * four 16-bit values in two registers; D and C hold element (row, column l % N) of register i at
 * row = 8 * (i / 4) + 4 * (l / N) + i % 4 (for 16x16: row 4 * (l / 16) + i). A and B come from VGPRs or AGPRs
 * (ACC bits), C and D from AGPRs when ACC_CD is set. Strict: CBSZ/ABID/BLGP broadcasts and a partial EXEC are
 * not emulated and stop the dispatch. */
#include "cdna3_ops.h"
#include "cdna3_valu.h"
#include "rdna3_float.h"

static double bf16(uint16_t h) { return rdna3_f((uint32_t)h << 16); }

int cdna3_exec_mfma(cdna3_ctx *c, cdna3_wave *w, unsigned op) {
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned m;
  bool is_bf16;
  switch (op) {
  case C3_V_MFMA_F32_16X16X16_F16: m = 16, is_bf16 = false; break;
  case C3_V_MFMA_F32_16X16X16_BF16: m = 16, is_bf16 = true; break;
  case C3_V_MFMA_F32_32X32X8_F16: m = 32, is_bf16 = false; break;
  case C3_V_MFMA_F32_32X32X8_BF16: m = 32, is_bf16 = true; break;
  default: return cdna3_fail(c, w, "unimplemented matrix (VOP3P-MAI) opcode %u", op);
  }
  unsigned cbsz = (e0 >> 8) & 7, abid = (e0 >> 11) & 0xf, blgp = e1 >> 29;
  if (cbsz || abid || blgp)
    return cdna3_fail(c, w, "MFMA broadcast controls cbsz:%u abid:%u blgp:%u are not emulated (must be 0)", cbsz, abid,
                      blgp);
  if (cdna3_exec(w) != ~0ull) return cdna3_fail(c, w, "MFMA with a partial EXEC mask is not emulated");
  bool acc_cd = (e0 >> 15) & 1, acc_a = (e1 >> 27) & 1, acc_b = (e1 >> 28) & 1;
  unsigned vdst = e0 & 0xff, sa = e1 & 0x1ff, sb = (e1 >> 9) & 0x1ff, sc = (e1 >> 18) & 0x1ff;
  unsigned nd = m == 16 ? 4 : 16, kg = 64 / m;  /* result registers; k groups of 4 (16x16x16: 4, 32x32x8: 2) */
  if (sa < CDNA3_SRC_VGPR || sb < CDNA3_SRC_VGPR) return cdna3_fail(c, w, "MFMA A and B must be registers");
  int pa = cdna3_reg(c, w, sa - CDNA3_SRC_VGPR, 2, acc_a, "A"), pb = cdna3_reg(c, w, sb - CDNA3_SRC_VGPR, 2, acc_b, "B");
  int pd = cdna3_reg(c, w, vdst, nd, acc_cd, "D");
  if (pa < 0 || pb < 0 || pd < 0) return -1;
  int pc = -1;
  uint32_t kc = 0;
  if (sc >= CDNA3_SRC_VGPR) {
    if ((pc = cdna3_reg(c, w, sc - CDNA3_SRC_VGPR, nd, acc_cd, "C")) < 0) return -1;
  } else if (sc >= CDNA3_SRC_SDWA) {   /* SDWA .. LITERAL: no C source */
    return cdna3_fail(c, w, "MFMA C operand %u is not valid", sc);
  } else {
    kc = cdna3_sreg32(c, w, sc);
  }
  /* A[row][k], B[k][col] gathered from the lanes, K = 4 * kg. */
  double a[32][16], b[16][32];
  for (unsigned l = 0; l < CDNA3_LANES; l++)
    for (unsigned j = 0; j < 4; j++) {
      unsigned k = 4 * (l / m) + j;
      uint16_t ha = (uint16_t)(w->v[pa + j / 2][l] >> (16 * (j & 1)));
      uint16_t hb = (uint16_t)(w->v[pb + j / 2][l] >> (16 * (j & 1)));
      a[l % m][k] = is_bf16 ? bf16(ha) : rdna3_h2f(ha);
      b[k][l % m] = is_bf16 ? bf16(hb) : rdna3_h2f(hb);
    }
  uint32_t out[16][CDNA3_LANES];
  for (unsigned l = 0; l < CDNA3_LANES; l++)
    for (unsigned i = 0; i < nd; i++) {
      unsigned row = 8 * (i / 4) + 4 * (l / m) + i % 4, col = l % m;
      if (m == 16) row = 4 * (l / 16) + i;
      double s = 0;
      for (unsigned k = 0; k < 4 * kg; k++) s += a[row][k] * b[k][col];
      float cv = rdna3_f(pc >= 0 ? w->v[pc + i][l] : kc);
      out[i][l] = rdna3_u((float)(s + cv));
    }
  for (unsigned i = 0; i < nd; i++) memcpy(w->v[pd + i], out[i], sizeof out[i]);
  return 0;
}
