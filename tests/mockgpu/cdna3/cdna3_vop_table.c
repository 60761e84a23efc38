/* tests/mockgpu/cdna3/cdna3_vop_table.c: gfx9 VALU opcodes (VOP3 numbering: VOPC 0x000+op, VOP2 0x100+op,
 * VOP1 0x140+op, VOP3-only from 0x1c0; CDNA3 ISA guide opcode tables, checked with llvm-mc-22 -mcpu=gfx942) mapped
 * onto the RDNA3 core's operations of the same semantics (rdna3_ops.h, lane arithmetic in rdna3_valu_lane.c,
 * operand types in rdna3_vop_table.c). Renamed ops (v_add_u32 = v_add_nc_u32, v_addc_co_u32 = v_add_co_ci_u32,
 * v_ffbh_u32 = v_clz_i32_u32, v_cvt_rpi_i32_f32 = v_cvt_nearest_i32_f32, ...) map by meaning. The ops that
 * are gfx9's own (64-bit moves and shifts-with-add, fmac forms, lane reads and writes, mbcnt in wave64) are
 * CDNA3_LOCAL ones, executed in cdna3_valu.c. */
#include "cdna3_valu.h"
#include "rdna3_ops.h"

const uint16_t cdna3_vop_map[CDNA3_VOP_COUNT] = {
  /* VOP2 */
  [0x100] = V_CNDMASK_B32, [0x101] = V_ADD_F32, [0x102] = V_SUB_F32, [0x103] = V_SUBREV_F32,
  [0x104] = C3L_FMAC_F64, [0x105] = V_MUL_F32, [0x106] = V_MUL_I32_I24, [0x107] = V_MUL_HI_I32_I24,
  [0x108] = V_MUL_U32_U24, [0x109] = V_MUL_HI_U32_U24, [0x10a] = V_MIN_F32, [0x10b] = V_MAX_F32,
  [0x10c] = V_MIN_I32, [0x10d] = V_MAX_I32, [0x10e] = V_MIN_U32, [0x10f] = V_MAX_U32, [0x110] = V_LSHRREV_B32,
  [0x111] = V_ASHRREV_I32, [0x112] = V_LSHLREV_B32, [0x113] = V_AND_B32, [0x114] = V_OR_B32, [0x115] = V_XOR_B32,
  [0x117] = C3L_FMAMK_F32, [0x118] = C3L_FMAAK_F32, [0x119] = V_ADD_CO_U32, [0x11a] = V_SUB_CO_U32,
  [0x11b] = V_SUBREV_CO_U32, [0x11c] = V_ADD_CO_CI_U32, [0x11d] = V_SUB_CO_CI_U32, [0x11e] = V_SUBREV_CO_CI_U32,
  [0x11f] = V_ADD_F16, [0x120] = V_SUB_F16, [0x121] = V_SUBREV_F16, [0x122] = V_MUL_F16, [0x126] = V_ADD_NC_U16,
  [0x127] = V_SUB_NC_U16, [0x129] = V_MUL_LO_U16, [0x12a] = V_LSHLREV_B16, [0x12b] = V_LSHRREV_B16,
  [0x12c] = V_ASHRREV_I16, [0x12d] = V_MAX_F16, [0x12e] = V_MIN_F16, [0x12f] = V_MAX_U16, [0x130] = V_MAX_I16,
  [0x131] = V_MIN_U16, [0x132] = V_MIN_I16, [0x133] = V_LDEXP_F16, [0x134] = V_ADD_NC_U32, [0x135] = V_SUB_NC_U32,
  [0x136] = V_SUBREV_NC_U32, [0x13b] = C3L_FMAC_F32, [0x13d] = V_XNOR_B32,
  /* VOP1 */
  [0x140] = V_NOP, [0x141] = V_MOV_B32, [0x142] = C3L_READFIRSTLANE, [0x143] = V_CVT_I32_F64,
  [0x144] = V_CVT_F64_I32, [0x145] = V_CVT_F32_I32, [0x146] = V_CVT_F32_U32, [0x147] = V_CVT_U32_F32,
  [0x148] = V_CVT_I32_F32, [0x14a] = V_CVT_F16_F32, [0x14b] = V_CVT_F32_F16, [0x14c] = V_CVT_NEAREST_I32_F32,
  [0x14d] = V_CVT_FLOOR_I32_F32, [0x14f] = V_CVT_F32_F64, [0x150] = V_CVT_F64_F32, [0x151] = V_CVT_F32_UBYTE0,
  [0x152] = V_CVT_F32_UBYTE0 + 1, [0x153] = V_CVT_F32_UBYTE0 + 2, [0x154] = V_CVT_F32_UBYTE3,
  [0x155] = V_CVT_U32_F64, [0x156] = V_CVT_F64_U32, [0x157] = V_TRUNC_F64, [0x158] = V_CEIL_F64,
  [0x159] = V_RNDNE_F64, [0x15a] = V_FLOOR_F64, [0x15b] = V_FRACT_F32, [0x15c] = V_TRUNC_F32, [0x15d] = V_CEIL_F32,
  [0x15e] = V_RNDNE_F32, [0x15f] = V_FLOOR_F32, [0x160] = V_EXP_F32, [0x161] = V_LOG_F32, [0x162] = V_RCP_F32,
  [0x163] = V_RCP_IFLAG_F32, [0x164] = V_RSQ_F32, [0x165] = V_RCP_F64, [0x166] = V_RSQ_F64, [0x167] = V_SQRT_F32,
  [0x168] = V_SQRT_F64, [0x169] = V_SIN_F32, [0x16a] = V_COS_F32, [0x16b] = V_NOT_B32, [0x16c] = V_BFREV_B32,
  [0x16d] = V_CLZ_I32_U32, [0x16e] = V_CTZ_I32_B32, [0x16f] = V_CLS_I32, [0x170] = V_FREXP_EXP_I32_F64,
  [0x171] = V_FREXP_MANT_F64, [0x172] = V_FRACT_F64, [0x173] = V_FREXP_EXP_I32_F32, [0x174] = V_FREXP_MANT_F32,
  [0x178] = C3L_MOV_B64, [0x179] = V_CVT_F16_U16, [0x17a] = V_CVT_F16_I16, [0x17b] = V_CVT_U16_F16,
  [0x17c] = V_CVT_I16_F16, [0x17d] = V_RCP_F16, [0x17e] = V_SQRT_F16, [0x17f] = V_RSQ_F16, [0x180] = V_LOG_F16,
  [0x181] = V_EXP_F16, [0x182] = V_FREXP_MANT_F16, [0x183] = V_FREXP_EXP_I16_F16, [0x184] = V_FLOOR_F16,
  [0x185] = V_CEIL_F16, [0x186] = V_TRUNC_F16, [0x187] = V_RNDNE_F16, [0x188] = V_FRACT_F16, [0x189] = V_SIN_F16,
  [0x18a] = V_COS_F16,
  /* VOP3 only */
  [0x1c2] = V_MAD_I32_I24, [0x1c3] = V_MAD_U32_U24, [0x1c8] = V_BFE_U32, [0x1c9] = V_BFE_I32, [0x1ca] = V_BFI_B32,
  [0x1cb] = V_FMA_F32, [0x1cc] = V_FMA_F64, [0x1ce] = V_ALIGNBIT_B32, [0x1cf] = V_ALIGNBYTE_B32,
  [0x1d0] = V_MIN3_F32, [0x1d1] = V_MIN3_I32, [0x1d2] = V_MIN3_U32, [0x1d3] = V_MAX3_F32, [0x1d4] = V_MAX3_I32,
  [0x1d5] = V_MAX3_U32, [0x1d6] = V_MED3_F32, [0x1d7] = V_MED3_I32, [0x1d8] = V_MED3_U32,
  [0x1de] = V_DIV_FIXUP_F32, [0x1df] = V_DIV_FIXUP_F64, [0x1e0] = V_DIV_SCALE_F32, [0x1e1] = V_DIV_SCALE_F64,
  [0x1e2] = V_DIV_FMAS_F32, [0x1e3] = V_DIV_FMAS_F64, [0x1e8] = V_MAD_U64_U32, [0x1e9] = V_MAD_I64_I32,
  [0x1ed] = V_PERM_B32, [0x1f1] = V_MAD_U32_U16, [0x1f2] = V_MAD_I32_I16, [0x1f3] = V_XAD_U32,
  [0x1f4] = V_MIN3_F16, [0x1f5] = V_MIN3_I16, [0x1f6] = V_MIN3_U16, [0x1f7] = V_MAX3_F16, [0x1f8] = V_MAX3_I16,
  [0x1f9] = V_MAX3_U16, [0x1fa] = V_MED3_F16, [0x1fd] = V_LSHL_ADD_U32, [0x1fe] = V_ADD_LSHL_U32,
  [0x1ff] = V_ADD3_U32, [0x200] = V_LSHL_OR_B32, [0x201] = V_AND_OR_B32, [0x202] = V_OR3_B32, [0x204] = V_MAD_U16,
  [0x206] = V_FMA_F16, [0x207] = V_DIV_FIXUP_F16, [0x208] = C3L_LSHL_ADD_U64, [0x280] = V_ADD_F64,
  [0x281] = V_MUL_F64, [0x282] = V_MIN_F64, [0x283] = V_MAX_F64, [0x284] = V_LDEXP_F64, [0x285] = V_MUL_LO_U32,
  [0x286] = V_MUL_HI_U32, [0x287] = V_MUL_HI_I32, [0x288] = V_LDEXP_F32, [0x289] = C3L_READLANE,
  [0x28a] = C3L_WRITELANE, [0x28b] = V_BCNT_U32_B32, [0x28c] = C3L_MBCNT_LO, [0x28d] = C3L_MBCNT_HI,
  [0x28f] = V_LSHLREV_B64, [0x290] = V_LSHRREV_B64, [0x291] = V_ASHRREV_I64, [0x293] = V_BFM_B32,
  [0x296] = V_CVT_PK_RTZ_F16_F32, [0x29c] = V_ADD_NC_I32, [0x29d] = V_SUB_NC_I32, [0x2a0] = V_PACK_B32_F16,
};

/* Operand types of the local ops (VT_* of rdna3_valu.h). */
const rdna3_vop_info cdna3_local_info[C3L_COUNT - C3L_FIRST] = {
  [C3L_FMAC_F64 - C3L_FIRST] = {"V_FMAC_F64", {VT_F64, VT_F64, VT_F64}, VT_F64},
  [C3L_FMAC_F32 - C3L_FIRST] = {"V_FMAC_F32", {VT_F32, VT_F32, VT_F32}, VT_F32},
  [C3L_FMAMK_F32 - C3L_FIRST] = {"V_FMAMK_F32", {VT_F32, VT_F32, VT_F32}, VT_F32},
  [C3L_FMAAK_F32 - C3L_FIRST] = {"V_FMAAK_F32", {VT_F32, VT_F32, VT_F32}, VT_F32},
  [C3L_MOV_B64 - C3L_FIRST] = {"V_MOV_B64", {VT_B64, VT_NONE, VT_NONE}, VT_B64},
  [C3L_LSHL_ADD_U64 - C3L_FIRST] = {"V_LSHL_ADD_U64", {VT_B64, VT_B32, VT_B64}, VT_B64},
  [C3L_READFIRSTLANE - C3L_FIRST] = {"V_READFIRSTLANE_B32", {VT_B32, VT_NONE, VT_NONE}, VT_B32},
  [C3L_READLANE - C3L_FIRST] = {"V_READLANE_B32", {VT_B32, VT_B32, VT_NONE}, VT_B32},
  [C3L_WRITELANE - C3L_FIRST] = {"V_WRITELANE_B32", {VT_B32, VT_B32, VT_NONE}, VT_B32},
  [C3L_MBCNT_LO - C3L_FIRST] = {"V_MBCNT_LO_U32_B32", {VT_B32, VT_B32, VT_NONE}, VT_B32},
  [C3L_MBCNT_HI - C3L_FIRST] = {"V_MBCNT_HI_U32_B32", {VT_B32, VT_B32, VT_NONE}, VT_B32},
};
