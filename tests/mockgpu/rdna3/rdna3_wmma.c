/* tests/mockgpu/rdna3/rdna3_wmma.c: wave matrix multiply-accumulate, D = A x B + C on 16x16 tiles
 * (RDNA3 ISA guide "Wave Matrix Multiply Accumulate"; VOP3P opcodes 64..67 as in LLVM's
 * VOP3PInstructions.td for gfx11): V_WMMA_F32_16X16X16_F16, _F32_16X16X16_BF16, _F16_16X16X16_F16
 * and _BF16_16X16X16_BF16, wave32.
 *
 * Operand layout (wave32; the same LLVM's llvm.amdgcn.wmma.* intrinsics use for gfx1100):
 *   A (SRC0, 8 VGPRs): lane i (0..15) holds row i; VGPR j carries A[i][2j] in its low half and
 *     A[i][2j+1] in its high half. B (SRC1, 8 VGPRs): lane i holds column i, B[2j][i] low, B[2j+1][i]
 *     high. Lanes 16..31 must hold a copy of lanes 0..15 (the guide's layout repeats them); this model
 *     stops the dispatch when they differ rather than pick one half.
 *   C and D (SRC2 / VDST, 8 VGPRs): VGPR r of lane l is element [2r + l/16][l%16]; f32 forms use
 *     the whole register, f16/bf16 forms one half of it, chosen by OPSEL[2] (0 low, 1 high) for C
 *     and D alike; the other half of each D register keeps its value (LLVM D158059 packs two
 *     f16 accumulators into one register pair this way). SRC2 may be an inline constant (every
 *     element of C that value; f16/bf16 forms accept only 0 here).
 * Arithmetic: products of f16/bf16 inputs are exact in f32 and are added to C in f32, k = 0..15
 * in order, each sum rounded to nearest even (the guide does not specify the order); f16/bf16
 * forms round the f32 result to their type (nearest even). Denormals are kept.
 * gfx12 (RDNA4 ISA guide "WMMA", rdna3_isa.wmma_gfx12): the same opcodes with A/B in 4 VGPRs (read_ab_gfx12), C/D in
 * 8 VGPRs (f32) or 4 (f16/bf16 packed two a VGPR), D element r of lane l at row 8*(l/16) + r; OPSEL must be 0.
 * Strict: EXEC must be all ones (the guide runs WMMA on the whole wave only), sources must be
 * VGPRs, a WMMA may not read as A/B the D of the WMMA right before it (7.9.1: a V_NOP between), and
 * NEG/NEG_HI, CLAMP, OPSEL[1:0] and OPSEL[2] on f32 forms are refused as undefined or not implemented. */
#include "rdna3_float.h"
#include "rdna3_ops.h"
#include "rdna3_valu.h"

static float bf2f(uint16_t h) { return rdna3_f((uint32_t)h << 16); }

static uint16_t f2bf(float f) {
  uint32_t u = rdna3_u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);  /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1);                                          /* nearest even */
  return (uint16_t)(u >> 16);
}

/* gfx12 (RDNA4 ISA guide "WMMA", wave32): A and B in 4 VGPRs; lane l holds row (A) or column (B) l%16 with
 * K = 8*(l/16) + 2j (low half) and + 2j+1 (high half) in VGPR j, so no lane repeats another. m[i][k] as below. */
static void read_ab_gfx12(const rdna3_wave *w, unsigned r, bool bf16, float m[16][16]) {
  for (unsigned j = 0; j < 4; j++)
    for (unsigned l = 0; l < RDNA3_LANES; l++) {
      uint32_t v = w->v[r + j][l];
      unsigned i = l % 16, k = 8 * (l / 16) + 2 * j;
      m[i][k] = bf16 ? bf2f((uint16_t)v) : rdna3_h2f((uint16_t)v);
      m[i][k + 1] = bf16 ? bf2f((uint16_t)(v >> 16)) : rdna3_h2f((uint16_t)(v >> 16));
    }
}

/* A or B from 8 VGPRs at r: m[i][k] = element k of lane i. */
static int read_ab(rdna3_ctx *c, rdna3_wave *w, unsigned r, bool bf16, const char *name, float m[16][16]) {
  for (unsigned j = 0; j < 8; j++) {
    const uint32_t *v = w->v[r + j];
    for (unsigned i = 0; i < 16; i++) {
      if (v[i] != v[i + 16])
        return rdna3_fail(c, w, "WMMA %s: v%u lane %u (0x%08x) differs from lane %u (0x%08x); wave32 WMMA needs lanes 16-31 "
                          "to repeat lanes 0-15", name, r + j, i + 16, v[i + 16], i, v[i]);
      uint16_t lo = (uint16_t)v[i], hi = (uint16_t)(v[i] >> 16);
      m[i][2 * j] = bf16 ? bf2f(lo) : rdna3_h2f(lo);
      m[i][2 * j + 1] = bf16 ? bf2f(hi) : rdna3_h2f(hi);
    }
  }
  return 0;
}

int rdna3_exec_wmma(rdna3_ctx *c, rdna3_wave *w) {
  uint32_t e0 = c->enc[0], e1 = c->enc[1];
  unsigned op = (e0 >> 16) & 0x7f, vdst = e0 & 0xff;
  unsigned opsel = (e0 >> 11) & 7, neg = (e1 >> 29) & 7, neg_hi = (e0 >> 8) & 7;
  unsigned src[3] = {e1 & 0x1ff, (e1 >> 9) & 0x1ff, (e1 >> 18) & 0x1ff};
  bool f32_out = op == V_WMMA_F32_16X16X16_F16 || op == V_WMMA_F32_16X16X16_BF16;
  bool bf16_in = op == V_WMMA_F32_16X16X16_BF16 || op == V_WMMA_BF16_16X16X16_BF16;
  bool bf16_out = op == V_WMMA_BF16_16X16X16_BF16;
  bool g12 = c->isa->wmma_gfx12;
  /* registers per operand: gfx11 A/B/C/D 8 each; gfx12 A/B 4, C/D 8 (f32) or 4 (f16/bf16 packed in pairs) */
  unsigned nab = g12 ? 4 : 8, ncd = g12 && !f32_out ? 4 : 8;
  uint32_t exec = w->s[RDNA3_EXEC_LO];
  if (exec != 0xffffffffu)
    return rdna3_fail(c, w, "WMMA with EXEC 0x%08x: the ISA guide defines WMMA only for a full wave (EXEC all ones)", exec);
  if (neg || neg_hi) return rdna3_fail(c, w, "WMMA NEG/NEG_HI modifiers on f16/bf16 inputs are not implemented");
  if ((e0 >> 15) & 1) return rdna3_fail(c, w, "WMMA CLAMP is not implemented");
  if ((opsel & 3) || ((f32_out || g12) && opsel))
    return rdna3_fail(c, w, "WMMA OPSEL 0x%x: only OPSEL[2] on f16/bf16 results (destination half) is defined", opsel);
  for (unsigned i = 0; i < 2; i++) {
    if (src[i] < RDNA3_SRC_VGPR) return rdna3_fail(c, w, "WMMA SRC%u must be VGPRs", i);
    if (rdna3_vgprs(c, w, src[i] - RDNA3_SRC_VGPR, nab, i ? "WMMA B" : "WMMA A")) return -1;
  }
  if (rdna3_vgprs(c, w, vdst, ncd, "WMMA D")) return -1;
  /* ISA guide 7.9.1 "WMMA scheduling": a WMMA reading as A or B what the WMMA just before it wrote as D needs a V_NOP
   * or another VALU op between them (LLVM's GCNHazardRecognizer inserts one); without it the result is undefined. */
  for (unsigned i = 0; i < 2 && c->prev_wmma_d && !g12; i++) {
    unsigned r = src[i] - RDNA3_SRC_VGPR, d = c->prev_wmma_d - 1u;
    if (r < d + 8 && d < r + 8)
      return rdna3_fail(c, w, "WMMA %s v[%u:%u] overlaps the D v[%u:%u] of the WMMA just before it, with no VALU "
                        "instruction between (RDNA3 ISA guide 7.9.1: undefined)", i ? "B" : "A", r, r + 7, d, d + 7);
  }
  bool c_vgpr = src[2] >= RDNA3_SRC_VGPR;
  if (c_vgpr && rdna3_vgprs(c, w, src[2] - RDNA3_SRC_VGPR, ncd, "WMMA C")) return -1;
  uint32_t kc = 0;
  if (!c_vgpr) {
    bool inl = (src[2] >= RDNA3_SRC_ZERO && src[2] <= RDNA3_SRC_NEG_MAX) ||
               (src[2] >= RDNA3_SRC_HALF && src[2] <= RDNA3_SRC_INV_2PI);
    if (!inl || (!f32_out && src[2] != RDNA3_SRC_ZERO))
      return rdna3_fail(c, w, "WMMA SRC2 operand %u: a VGPR or an inline constant (f16/bf16 results: 0) expected", src[2]);
    kc = rdna3_sreg32(c, w, src[2]);
    if (src[2] < RDNA3_SRC_HALF) kc = rdna3_u((float)(int32_t)kc);  /* integer constants as floats */
  }
  float ma[16][16], mb[16][16];
  if (g12) {
    read_ab_gfx12(w, src[0] - RDNA3_SRC_VGPR, bf16_in, ma);
    read_ab_gfx12(w, src[1] - RDNA3_SRC_VGPR, bf16_in, mb);
  } else if (read_ab(c, w, src[0] - RDNA3_SRC_VGPR, bf16_in, "A (SRC0)", ma) ||
             read_ab(c, w, src[1] - RDNA3_SRC_VGPR, bf16_in, "B (SRC1)", mb)) {
    return -1;
  }
  unsigned sh = (opsel >> 2) & 1 ? 16 : 0;  /* gfx11; gfx12 picks the half per element below */
  /* D element r (0..7) of lane l: row 2r + l/16 (gfx11) or 8*(l/16) + r (gfx12), column l%16; in VGPR r, or on
   * gfx12 f16/bf16 results in VGPR r/2, half r%2 */
  uint32_t out[8][RDNA3_LANES];
  for (unsigned r = 0; r < ncd; r++)
    for (unsigned l = 0; l < RDNA3_LANES; l++) out[r][l] = w->v[vdst + r][l];
  for (unsigned r = 0; r < 8; r++)
    for (unsigned l = 0; l < RDNA3_LANES; l++) {
      unsigned m = g12 ? 8 * (l / 16) + r : 2 * r + l / 16, n = l % 16;
      unsigned reg = ncd == 8 ? r : r / 2;
      if (g12 && !f32_out) sh = 16 * (r % 2);
      uint32_t cv = c_vgpr ? w->v[src[2] - RDNA3_SRC_VGPR + reg][l] : kc;
      float acc;
      if (f32_out) acc = rdna3_f(cv);
      else if (!c_vgpr) acc = 0.0f;
      else acc = bf16_out ? bf2f((uint16_t)(cv >> sh)) : rdna3_h2f((uint16_t)(cv >> sh));
      for (unsigned k = 0; k < 16; k++) acc += ma[m][k] * mb[n][k];  /* product exact in f32 */
      if (f32_out) {
        out[reg][l] = rdna3_u(acc);
      } else {
        uint32_t h = bf16_out ? f2bf(acc) : rdna3_f2h(acc);
        out[reg][l] = (out[reg][l] & ~(0xffffu << sh)) | h << sh;
      }
    }
  for (unsigned r = 0; r < ncd; r++) memcpy(w->v[vdst + r], out[r], sizeof out[r]);
  c->st.wmma_insts++;
  w->wmma_d = (uint16_t)(vdst + 1);
  return 0;
}
