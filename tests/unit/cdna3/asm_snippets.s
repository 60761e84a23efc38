// tests/unit/cdna3/asm_snippets.s: gfx942 instruction snippets for the cdna3 suite (assembled by llvm-mc-22
// -mcpu=gfx942). Each label is run as one wave64 with registers preset by the test (v0 = lane id unless the test
// says otherwise); results are read back from the registers. Expected values are computed in the tests from the
// CDNA3 ISA guide's pseudocode.
  .text

// VCC and EXEC are 64-bit masks: a compare over all 64 lanes, v_cndmask on it, s_and_saveexec_b64 / restore.
vcc_wave64:
  v_cmp_gt_u32_e32 vcc, 45, v0           // lanes 0..44
  v_cndmask_b32_e64 v1, 10, 20, vcc
  s_mov_b64 s[0:1], vcc
  v_cmp_lt_u32_e64 s[4:5], 40, v0        // lanes 41..63
  s_and_saveexec_b64 s[2:3], s[4:5]
  v_mov_b32_e32 v2, 7
  s_or_b64 exec, exec, s[2:3]
  v_cmpx_eq_u32_e32 33, v0               // gfx9: writes EXEC and VCC
  v_mov_b32_e32 v3, 9
  s_mov_b64 s[6:7], exec
  s_mov_b64 s[8:9], vcc
  s_endpgm

// 64-bit add by carries (v_add_co_u32 / v_addc_co_u32 through VCC and an SGPR pair), subtract with borrow.
carry64:
  v_add_co_u32_e32 v4, vcc, v0, v2
  v_addc_co_u32_e32 v5, vcc, v1, v3, vcc
  v_sub_co_u32_e64 v6, s[10:11], v0, v2
  v_subb_co_u32_e64 v7, s[12:13], v1, v3, s[10:11]
  s_endpgm

// Lane counting and lane moves in wave64.
lanes:
  v_mbcnt_lo_u32_b32 v1, -1, 0
  v_mbcnt_hi_u32_b32 v1, -1, v1
  v_readlane_b32 s4, v2, 45
  s_mov_b32 exec_lo, 0
  s_mov_b32 exec_hi, 0xffff0000
  v_readfirstlane_b32 s5, v2
  v_writelane_b32 v3, s4, 50
  s_mov_b64 exec, -1
  s_endpgm

// AccVGPR moves: write, AGPR to AGPR, read back.
accvgpr:
  v_accvgpr_write_b32 a3, v0
  v_accvgpr_mov_b32 a4, a3
  v_accvgpr_write_b32 a5, 5
  v_accvgpr_read_b32 v6, a4
  s_endpgm

// MFMA 16x16x16 f16 with C and D in AGPRs, and 32x32x8 f16 in VGPRs.
mfma16:
  v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[4:7]
  s_nop 7
  s_nop 3
  s_endpgm
mfma16_bf16:
  v_mfma_f32_16x16x16_bf16 v[4:7], v[0:1], v[2:3], 0
  s_nop 7
  s_nop 3
  s_endpgm
mfma32:
  v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]
  s_nop 7
  s_nop 7
  s_nop 3
  s_endpgm

mfma32_bf16:
  v_mfma_f32_32x32x8_bf16 a[0:15], v[16:17], v[18:19], 0
  s_nop 7
  s_nop 7
  s_nop 3
  s_endpgm

// SDWA: byte/word selects, a WORD_1 destination preserving the low half; a sign-extending select.
sdwa:
  v_add_u32_sdwa v1, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_0
  v_or_b32_sdwa v4, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_3 src1_sel:BYTE_0
  v_mov_b32_sdwa v5, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0
  s_endpgm

// 64-bit index math: (v[0:1] << 3) + v[2:3]; v_mad_u64_u32 with its carry-out pair.
index64:
  v_lshl_add_u64 v[4:5], v[0:1], 3, v[2:3]
  v_mad_u64_u32 v[6:7], s[8:9], v0, v1, v[2:3]
  s_endpgm

// M0-relative VGPR indexing of a register array (s_set_gpr_idx_on ... DST).
gpr_idx:
  s_mov_b32 s2, 5
  s_set_gpr_idx_on s2, gpr_idx(DST)
  v_mov_b32_e32 v10, v0
  s_set_gpr_idx_off
  v_mov_b32_e32 v11, v0
  s_endpgm

// A load and two reads of its destination: before and after s_waitcnt vmcnt(0).
waitcnt:
  global_load_dword v1, v[2:3], off
  v_mov_b32_e32 v4, v1
  s_waitcnt vmcnt(0)
  v_mov_b32_e32 v5, v1
  s_endpgm

// Scalar loads land on lgkmcnt.
smem:
  s_load_dwordx2 s[4:5], s[0:1], 0x8
  s_mov_b32 s6, s4
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s7, s5
  s_endpgm

// LDS: two-address store and load, a returning atomic.
lds:
  v_lshlrev_b32_e32 v1, 2, v0
  ds_write2_b32 v1, v0, v2 offset1:64
  s_waitcnt lgkmcnt(0)
  ds_read2_b32 v[4:5], v1 offset1:64
  ds_add_rtn_u32 v6, v1, v2
  s_waitcnt lgkmcnt(0)
  s_endpgm

// Hardware register MODE: the float-mode switch LLVM emits around f32 division when denormals are flushed.
hwreg_mode:
  s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 3
  s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 8)
  s_mov_b32 s1, 0x2a
  s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s1
  s_getreg_b32 s2, hwreg(HW_REG_MODE)
  s_endpgm

// LDS banks: dword stride 1 (no conflict) and 32 (every lane of a half-wave in bank 0).
lds_banks:
  v_lshlrev_b32_e32 v1, 2, v0
  ds_write_b32 v1, v0
  v_lshlrev_b32_e32 v1, 7, v0
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_endpgm

// Packed math: f32 pairs with OP_SEL picking dwords, f16 halves with OP_SEL/OP_SEL_HI and NEG, dot2.
packed:
  v_pk_fma_f32 v[10:11], v[0:1], v[2:3], v[4:5]
  v_pk_mul_f32 v[12:13], v[0:1], v[2:3] op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_add_f32 v[14:15], v[0:1], v[2:3] neg_lo:[0,1]
  v_pk_mov_b32 v[16:17], v[0:1], v[2:3] op_sel:[1,0]
  v_pk_add_f16 v18, v6, v7 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_mul_f16 v19, v6, v7 neg_hi:[1,0]
  v_dot2_f32_f16 v20, v6, v7, v0
  s_endpgm

// AGPRs as memory data (the ACC bit of FLAT and DS): global -> a1 -> LDS -> a2 -> global.
agpr_mem:
  global_load_dword a1, v[2:3], off
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt vmcnt(0)
  ds_write_b32 v1, a1
  ds_read_b32 a2, v1
  s_waitcnt lgkmcnt(0)
  global_store_dword v[2:3], a2, off offset:256
  s_endpgm

// Faults.
hwreg_other:
  s_getreg_b32 s0, hwreg(HW_REG_HW_ID)
  s_endpgm
unknown_op:
  v_sad_u32 v1, v2, v3, v4
  s_endpgm
dpp_op:
  v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  s_endpgm
high_vgpr:
  v_mov_b32_e32 v40, 1
  s_endpgm
high_agpr:
  v_accvgpr_write_b32 a9, 1
  s_endpgm
unmapped_load:                           // a 64-bit instruction after it: the report's disassembly still shows it
  global_load_dword v1, v[2:3], off
  global_load_dword v4, v[2:3], off
  s_waitcnt vmcnt(0)
  s_endpgm
unmapped_sload:                          // llvm-mc 22 crashes on the 3 dwords (a literal cut short): the report
  s_load_dword s4, s[0:1], 0x0           // retries with the first 2
  v_and_b32_e32 v1, 0x3ff, v0
  s_waitcnt lgkmcnt(0)
  s_endpgm
mfma_broadcast:
  v_mfma_f32_16x16x16_f16 v[4:7], v[0:1], v[2:3], 0 cbsz:1
  s_endpgm
endless:
  s_branch endless
