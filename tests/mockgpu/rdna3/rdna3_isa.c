/* tests/mockgpu/rdna3/rdna3_isa.c: the gfx11 and gfx12 opcode tables (rdna3_isa.h). The gfx12 numbers are those of
 * the RDNA4 ISA guide's opcode tables, checked against llvm-mc-22 --disassemble -mcpu=gfx1200 field value by field
 * value; gfx12 renames some VALU ops (v_max_f32 -> v_max_num_f32, ...) and moves some (the f64 adds and multiplies
 * to VOP2), which the VALU table maps back onto the internal (gfx11) numbers. */
#include "rdna3_internal.h"
#include "rdna3_ops.h"

#define ABSENT (-1)
#define AS(op) ((int16_t)((op) + 1))
#define RANGE_ABSENT(a, b) [(a)...(b)] = ABSENT

/* gfx11 has none of the gfx12 additions. */
static const int16_t gfx11_sopp[80] = {[S_BARRIER_WAIT] = ABSENT, RANGE_ABSENT(S_WAIT_LOADCNT, S_WAIT_STORECNT_DSCNT)};
static const int16_t gfx11_sop1[112] = {RANGE_ABSENT(S_BARRIER_SIGNAL, 88), RANGE_ABSENT(S_CEIL_F32, S_RNDNE_F16)};
static const int16_t gfx11_sop2[86] = {RANGE_ABSENT(S_ADD_F32, S_MUL_U64)};
static const int16_t gfx11_sopc[95] = {RANGE_ABSENT(S_CMP_LT_F32, S_CMP_NLT_F16)};
static const int16_t gfx11_vop[0x28a] = {RANGE_ABSENT(V_S_EXP_F32, V_S_SQRT_F16)};

/* gfx12 drops s_waitcnt (the split counters replace it), the single s_barrier (signal + wait), the
 * prefetch-distance hint, the s_cmpk_* compares and the SOPK s_waitcnt_* forms. */
static const int16_t gfx12_sopp[62] = {[S_SET_INST_PREFETCH_DISTANCE] = ABSENT, [S_WAITCNT] = ABSENT,
                                       [S_WAIT_IDLE] = ABSENT, [S_BARRIER] = ABSENT};
static const int16_t gfx12_sopk[28] = {RANGE_ABSENT(S_CMPK_EQ_I32, S_CMPK_LE_U32),
                                       RANGE_ABSENT(S_WAITCNT_VSCNT, S_WAITCNT_LGKMCNT)};

/* VALU in VOP3 numbering (VOPC 0x000+, VOP2 0x100+, VOP1 0x180+). */
static const int16_t gfx12_vop[0x340] = {
  /* VOPC: the always-false / always-true compares are gone */
  [0x00] = ABSENT, [0x0f] = ABSENT, [0x10] = ABSENT, [0x1f] = ABSENT, [0x20] = ABSENT, [0x2f] = ABSENT,
  [0x40] = ABSENT, [0x47] = ABSENT, [0x48] = ABSENT, [0x4f] = ABSENT, [0x50] = ABSENT, [0x57] = ABSENT,
  [0x58] = ABSENT, [0x5f] = ABSENT, [0x80] = ABSENT, [0x8f] = ABSENT, [0x90] = ABSENT, [0x9f] = ABSENT,
  [0xa0] = ABSENT, [0xaf] = ABSENT, [0xc0] = ABSENT, [0xc7] = ABSENT, [0xc8] = ABSENT, [0xcf] = ABSENT,
  [0xd0] = ABSENT, [0xd7] = ABSENT, [0xd8] = ABSENT, [0xdf] = ABSENT,
  /* VOP2 */
  [0x102] = AS(V_ADD_F64), [0x106] = AS(V_MUL_F64), [0x10d] = AS(V_MIN_F64), [0x10e] = AS(V_MAX_F64),
  [0x10f] = ABSENT, [0x110] = ABSENT, [0x115] = AS(V_MIN_F32), [0x116] = AS(V_MAX_F32),
  [0x11f] = AS(V_LSHLREV_B64), [0x130] = AS(V_MIN_F16), [0x131] = AS(V_MAX_F16), [0x139] = ABSENT,
  [0x13a] = ABSENT,
  /* VOP3: min3/max3/med3/minmax become the _num forms at new numbers; the VOP3-only f64 ops moved to VOP2 */
  [V_MIN3_F32] = ABSENT, [V_MAX3_F32] = ABSENT, [V_MED3_F32] = ABSENT, [0x229] = AS(V_MIN3_F32),
  [0x22a] = AS(V_MAX3_F32), [0x22b] = AS(V_MIN3_F16), [0x22c] = AS(V_MAX3_F16), [0x231] = AS(V_MED3_F32),
  [0x232] = AS(V_MED3_F16), [V_MIN3_F16] = ABSENT, [V_MAX3_F16] = ABSENT, [V_MED3_F16] = ABSENT,
  RANGE_ABSENT(V_MAXMIN_F32, V_MINMAX_F16), [0x268] = AS(V_MINMAX_F32), [0x269] = AS(V_MAXMIN_F32),
  [0x26a] = AS(V_MINMAX_F16), [0x26b] = AS(V_MAXMIN_F16), RANGE_ABSENT(V_ADD_F64, V_MAX_F64),
  [V_LSHLREV_B64] = ABSENT,
};

#define TAB(t) {(t), sizeof(t) / sizeof((t)[0])}

const rdna3_isa rdna3_isa_gfx11 = {
  .gen = RDNA3_GEN_GFX11, .name = "gfx11", .mcpu = "gfx1100",
  .sopp = TAB(gfx11_sopp), .sop1 = TAB(gfx11_sop1), .sop2 = TAB(gfx11_sop2), .sopc = TAB(gfx11_sopc), .vop = TAB(gfx11_vop),
  .smem_counter = RDNA3_LGKMCNT,
};

const rdna3_isa rdna3_isa_gfx12 = {
  .gen = RDNA3_GEN_GFX12, .name = "gfx12", .mcpu = "gfx1200",
  .sopp = TAB(gfx12_sopp), .sopk = TAB(gfx12_sopk), .vop = TAB(gfx12_vop),
  .smem_counter = RDNA3_KMCNT, .wmma_gfx12 = true,
};

const rdna3_isa *rdna3_isa_of(rdna3_gen gen) { return gen == RDNA3_GEN_GFX12 ? &rdna3_isa_gfx12 : &rdna3_isa_gfx11; }
