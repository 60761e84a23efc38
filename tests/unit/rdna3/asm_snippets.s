// tests/unit/rdna3/asm_snippets.s: instruction snippets for test_asm.c and test_faults.c. Each
// label starts a program that ends in s_endpgm; test_asm.c presets the input registers (mostly
// v0..v2 per lane, s0..s3) and checks the outputs against values computed in C.
.text
.p2align 8

// ---- VALU float32
f32_add: v_add_f32 v3, v0, v1
  s_endpgm
f32_sub: v_sub_f32_e64 v3, v0, v1
  s_endpgm
f32_subrev: v_subrev_f32 v3, v0, v1
  s_endpgm
f32_mul: v_mul_f32 v3, v0, v1
  s_endpgm
f32_max: v_max_f32 v3, v0, v1
  s_endpgm
f32_min: v_min_f32 v3, v0, v1
  s_endpgm
f32_fma: v_fma_f32 v3, v0, v1, v2
  s_endpgm
f32_fmac: v_mov_b32 v3, v2
  v_fmac_f32 v3, v0, v1
  s_endpgm
f32_fmaak: v_fmaak_f32 v3, v0, v1, 0x40400000
  s_endpgm
f32_fmamk: v_fmamk_f32 v3, v0, 0x40400000, v1
  s_endpgm
f32_mods: v_fma_f32 v3, -|v0|, v1, -v2
  s_endpgm
f32_clamp: v_mul_f32_e64 v3, v0, v1 clamp
  s_endpgm
f32_omod: v_add_f32_e64 v3, v0, v1 mul:2
  s_endpgm
f32_inline: v_add_f32 v3, 0.5, v0
  v_mul_f32 v4, -4.0, v0
  v_add_f32 v5, 0x40490fdb, v0
  v_mul_f32 v6, 0.15915494, v0
  s_endpgm
f32_unary: v_floor_f32 v3, v0
  v_ceil_f32 v4, v0
  v_trunc_f32 v5, v0
  v_rndne_f32 v6, v0
  v_fract_f32 v7, v0
  v_exp_f32 v8, v0
  v_rcp_f32 v9, v0
  v_cvt_i32_f32 v10, v0
  v_cvt_u32_f32 v11, v0
  v_frexp_mant_f32 v12, v0
  v_frexp_exp_i32_f32 v13, v0
  v_sin_f32 v14, v0
  v_cos_f32 v15, v0
  s_endpgm
f32_unary_pos: v_sqrt_f32 v3, v0
  v_log_f32 v4, v0
  v_rsq_f32 v5, v0
  s_endpgm
f32_ldexp: v_ldexp_f32 v3, v0, v1
  s_endpgm
f32_cvt: v_cvt_f32_i32 v3, v0
  v_cvt_f32_u32 v4, v0
  v_cvt_f32_ubyte1 v5, v0
  s_endpgm
f32_med3: v_med3_f32 v3, v0, v1, v2
  v_min3_f32 v4, v0, v1, v2
  v_max3_f32 v5, v0, v1, v2
  s_endpgm
f32_div: v_div_scale_f32 v3, null, v1, v1, v0
  v_div_scale_f32 v4, vcc_lo, v0, v1, v0
  v_rcp_f32 v5, v3
  v_fma_f32 v6, -v3, v5, 1.0
  v_fmac_f32 v5, v6, v5
  v_mul_f32 v6, v4, v5
  v_fma_f32 v7, -v3, v6, v4
  v_fmac_f32 v6, v7, v5
  v_fma_f32 v3, -v3, v6, v4
  v_div_fmas_f32 v3, v3, v5, v6
  v_div_fixup_f32 v3, v3, v1, v0
  s_endpgm

// ---- VALU integer
i32_ops: v_add_nc_u32 v3, v0, v1
  v_sub_nc_u32 v4, v0, v1
  v_mul_lo_u32 v5, v0, v1
  v_mul_hi_u32 v6, v0, v1
  v_mul_hi_i32 v7, v0, v1
  v_lshlrev_b32 v8, v1, v0
  v_lshrrev_b32 v9, v1, v0
  v_ashrrev_i32 v10, v1, v0
  v_min_i32 v11, v0, v1
  v_max_u32 v12, v0, v1
  v_xor_b32 v13, v0, v1
  v_bfe_u32 v14, v0, v1, 5
  v_bfe_i32 v15, v0, v1, 7
  v_bfi_b32 v16, v0, v1, v2
  v_alignbit_b32 v17, v0, v1, v2
  v_lshl_or_b32 v18, v0, 3, v2
  v_add3_u32 v19, v0, v1, v2
  v_perm_b32 v20, v0, v1, 0x0c070501
  v_not_b32 v21, v0
  v_bfrev_b32 v22, v0
  v_clz_i32_u32 v23, v0
  v_ctz_i32_b32 v24, v0
  v_mad_u32_u24 v25, v0, v1, v2
  v_xad_u32 v26, v0, v1, v2
  v_lshl_add_u32 v27, v0, 2, v1
  v_and_or_b32 v28, v0, v1, v2
  v_bcnt_u32_b32 v29, v0, 3
  v_mbcnt_lo_u32_b32 v30, -1, 0
  s_endpgm
i64_add: v_add_co_u32 v4, vcc_lo, v0, v2
  v_add_co_ci_u32_e32 v5, vcc_lo, v1, v3, vcc_lo
  v_sub_co_u32 v6, s5, v0, v2
  v_sub_co_ci_u32_e64 v7, s5, v1, v3, s5
  s_endpgm
i64_ops: v_mad_u64_u32 v[4:5], null, v0, v1, v[2:3]
  v_mad_i64_i32 v[6:7], null, v0, v1, v[2:3]
  v_lshlrev_b64 v[8:9], 5, v[2:3]
  v_ashrrev_i64 v[10:11], v0, v[2:3]
  v_lshrrev_b64 v[12:13], v0, v[2:3]
  s_endpgm
cndmask: v_cmp_lt_i32_e32 vcc_lo, v0, v1
  v_cndmask_b32_e32 v3, v0, v1, vcc_lo
  v_cmp_gt_u32_e64 s6, v0, v1
  v_cndmask_b32_e64 v4, 7, -5, s6
  s_endpgm

// ---- compares
cmp_f32: v_cmp_lt_f32_e32 vcc_lo, v0, v1
  v_cmp_neq_f32_e64 s4, v0, v1
  v_cmp_u_f32_e64 s5, v0, v1
  v_cmp_nge_f32_e64 s6, v0, v1
  v_cmp_class_f32_e64 s7, v0, 0x260
  v_cmp_eq_u64_e64 s8, v[0:1], v[0:1]
  v_cmp_lt_i64_e64 s9, v[0:1], 0
  s_endpgm
cmpx: v_cmpx_gt_i32_e32 v0, v1
  v_mov_b32 v3, 1
  s_endpgm

// ---- VOPD (both halves read before either writes)
vopd_swap: v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v1, v0
  s_endpgm
// (VOPD needs the two halves' sources in different VGPR banks: v2/v3 hold copies of v0/v1)
vopd_math: v_dual_mul_f32 v4, v0, v1 :: v_dual_add_f32 v5, v2, v3
  v_dual_fmac_f32 v6, v0, v1 :: v_dual_cndmask_b32 v7, v2, v3
  v_dual_max_f32 v8, v0, v1 :: v_dual_lshlrev_b32 v9, 2, v3
  v_dual_fmaak_f32 v10, v0, v1, 0x3f800000 :: v_dual_and_b32 v11, v2, v3
  s_endpgm

// ---- 16-bit: true16 halves, conversions, packed math
f16_t16: v_add_f16 v3.h, v0.l, v1.h
  v_mul_f16_e64 v3.l, v0.h, v1.l
  v_cvt_f32_f16 v4, v0.h
  v_cvt_f16_f32 v5.l, v2
  v_cvt_f16_f32 v5.h, v1
  v_pack_b32_f16 v6, v0.l, v1.h
  v_fma_f16 v7.l, v0.l, v1.l, 1.0
  v_max_f16 v7.h, v0.h, v1.h
  s_endpgm
pk_f16: v_pk_add_f16 v3, v0, v1
  v_pk_mul_f16 v4, v0, v1 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_fma_f16 v5, v0, v1, v2 neg_lo:[1,0,0]
  v_pk_add_f16 v6, 0xb8003c00, v0
  v_fma_mix_f32 v7, v0, v1, v2 op_sel_hi:[1,1,0]
  v_fma_mix_f32 v8, v0, v1, v2 op_sel:[1,0,0] op_sel_hi:[1,0,0]
  s_endpgm

// ---- f64
f64_ops: v_add_f64 v[4:5], v[0:1], v[2:3]
  v_mul_f64 v[6:7], v[0:1], 1.0
  v_fma_f64 v[8:9], v[0:1], v[2:3], -v[0:1]
  v_cvt_f64_f32 v[10:11], v0
  v_cvt_f32_f64 v12, v[2:3]
  v_cvt_i32_f64 v13, v[2:3]
  s_endpgm

// ---- cross-lane
lanes: v_readfirstlane_b32 s4, v0
  v_readlane_b32 s5, v0, 7
  v_writelane_b32 v1, s6, 3
  s_endpgm

// ---- SALU and control flow
salu: s_add_u32 s4, s0, s2
  s_addc_u32 s5, s1, s3
  s_lshl_b64 s[6:7], s[0:1], 7
  s_bfe_u32 s8, s0, 0x80004
  s_ctz_i32_b32 s9, s0
  s_bcnt1_i32_b32 s10, s0
  s_cmp_lt_i32 s0, s2
  s_cselect_b32 s11, 11, 22
  s_mul_i32 s12, s0, s2
  s_mul_hi_u32 s13, s0, s2
  s_ashr_i32 s14, s0, 3
  s_and_not1_b32 s15, s0, s2
  s_min_u32 s16, s0, s2
  s_sext_i32_i16 s17, s0
  s_movk_i32 s18, 0x8001
  s_mov_b32 s19, 0x12345678
  s_pack_ll_b32_b16 s20, s0, s2
  s_lshl2_add_u32 s21, s0, s2
  s_xor_b64 s[22:23], s[0:1], s[2:3]
  s_cmpk_gt_u32 s0, 0x10
  s_cselect_b64 s[24:25], s[0:1], s[2:3]
  s_endpgm
loop: s_mov_b32 s4, 0
  s_mov_b32 s5, 0
.Lloop:
  s_add_i32 s5, s5, s4
  s_add_i32 s4, s4, 1
  s_cmp_lt_u32 s4, s0
  s_cbranch_scc1 .Lloop
  s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
  s_endpgm
saveexec: v_mov_b32 v3, 100
  v_cmp_gt_u32_e32 vcc_lo, 10, v0
  s_and_saveexec_b32 s4, vcc_lo
  s_cbranch_execz .Lskip
  v_mov_b32 v3, 1
.Lskip:
  s_or_b32 exec_lo, exec_lo, s4
  v_add_nc_u32 v3, 5, v3
  s_endpgm
getpc: s_getpc_b64 s[4:5]
  s_add_u32 s6, s4, 16
  s_addc_u32 s7, s5, 0
  s_setpc_b64 s[6:7]
  s_mov_b32 s8, 1
  s_endpgm

// ---- scalar memory (s[0:1] = buffer address)
smem: s_load_b128 s[4:7], s[0:1], 0x10
  s_load_b32 s8, s[0:1], 0x4
  s_mov_b32 s9, 8
  s_load_b64 s[10:11], s[0:1], s9 offset:0x8
  s_load_b256 s[12:19], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_endpgm

// ---- global memory (s[0:1] = buffer, v0 = per-lane byte offset)
global: v_mov_b32 v1, 0
  v_add_co_u32 v2, vcc_lo, s0, v0
  v_add_co_ci_u32_e32 v3, vcc_lo, s1, v1, vcc_lo
  global_load_b32 v4, v[2:3], off
  global_load_b64 v[5:6], v0, s[0:1] offset:16
  global_load_b128 v[7:10], v0, s[0:1] offset:32
  global_load_b96 v[11:13], v0, s[0:1] offset:-16
  global_load_u8 v14, v0, s[0:1] offset:3
  global_load_i8 v15, v0, s[0:1] offset:3
  global_load_u16 v16, v0, s[0:1] offset:2
  global_load_i16 v17, v0, s[0:1] offset:2
  v_mov_b32 v18, 0x55556666
  global_load_d16_b16 v18, v0, s[0:1]
  v_mov_b32 v19, 0x77778888
  global_load_d16_hi_b16 v19, v0, s[0:1]
  v_mov_b32 v20, 0xdeadbeef
  global_store_b32 v0, v20, s[2:3]
  global_store_b16 v0, v20, s[2:3] offset:4
  global_store_b8 v0, v20, s[2:3] offset:6
  global_store_d16_hi_b16 v0, v20, s[2:3] offset:8
  s_waitcnt vmcnt(0)                // v[7:10] are loaded above: the store reads them
  global_store_b128 v[2:3], v[7:10], off offset:2048
  s_waitcnt_vscnt null, 0
  s_endpgm
atomic: global_atomic_add_u32 v1, v0, v2, s[0:1] glc
  global_atomic_max_i32 v0, v2, s[0:1] offset:4
  s_waitcnt vmcnt(0)
  s_endpgm

// ---- FLAT through the shared aperture and to global memory (s[0:1] = buffer, v0 = byte offset)
flat: s_mov_b64 s[4:5], src_shared_base
  v_mov_b32 v2, s5
  v_mov_b32 v1, v0
  flat_store_b32 v[1:2], v3
  v_add_co_u32 v4, vcc_lo, s0, v0
  v_add_co_ci_u32_e64 v5, null, s1, 0, vcc_lo
  flat_store_b32 v[4:5], v3 offset:4
  flat_load_b32 v6, v[1:2]
  flat_load_b32 v7, v[4:5] offset:4
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_endpgm

// ---- scratch (per-lane private memory; v0 = per-lane offset, s4 = a uniform offset)
scratch: scratch_store_b32 v0, v1, off
  scratch_store_b64 off, v[2:3], s4 offset:8
  scratch_load_b32 v5, v0, off
  scratch_load_b64 v[6:7], off, s4 offset:8
  s_waitcnt vmcnt(0)
  s_endpgm

// ---- half conversions (for the exhaustive rounding test)
cvt16: v_cvt_f32_f16 v1, v0.l
  v_cvt_f16_f32 v2.l, v3
  v_cvt_f16_f32 v2.h, v4
  s_endpgm

// ---- LDS (v0 = per-lane byte address)
lds: v_mov_b32 v1, 0x01020304
  ds_store_b32 v0, v0
  ds_store_b32 v0, v1 offset:128
  ds_store_2addr_b32 v0, v0, v1 offset0:64 offset1:96
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v2, v0
  ds_load_2addr_b32 v[3:4], v0 offset0:64 offset1:96
  ds_load_u8 v5, v0 offset:129
  ds_load_i16 v6, v0 offset:2
  ds_load_b64 v[7:8], v0 offset:124
  ds_add_rtn_u32 v9, v10, v11
  s_waitcnt lgkmcnt(0)
  s_endpgm

// ---- code at the end of a page (test_faults.c copies these dwords there)
page_end: v_mov_b32 v1, 0x12345678
  s_endpgm

// ---- negative tests
bad_unmapped: global_load_b32 v1, v0, s[0:1]
  s_endpgm
bad_smem_align: s_load_b32 s4, s[0:1], 0x2
  s_endpgm
bad_lds: ds_load_b32 v1, v0 offset:65532
  s_endpgm
bad_loop: s_branch bad_loop
bad_setpc: s_setpc_b64 s[0:1]
bad_unimpl_valu: v_cubeid_f32 v0, v1, v2, v3
  s_endpgm
bad_unimpl_mubuf: buffer_load_b32 v1, off, s[4:7], 0
  s_endpgm
bad_unknown: tbuffer_load_format_x v1, off, s[4:7], 0 format:[BUF_FMT_32_FLOAT]
  s_endpgm
bad_sendmsg: s_sendmsg sendmsg(MSG_INTERRUPT)
  s_endpgm
bad_dpp: v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
  s_endpgm

// ---- sign-bit and leading-zero counts (test_bits.c): v0 per lane, s[0:1]
sign_counts: v_cls_i32 v3, v0
  v_cls_i32_e64 v4, s0
  s_cls_i32 s4, s0
  s_cls_i32_i64 s5, s[0:1]
  s_clz_i32_u64 s6, s[0:1]
  s_endpgm

// ---- waits and limits (test_limits.c): s[0:1] = buffer, v0 = per-lane byte offset; v1, v3, s4 preset
vm_wait: global_load_b32 v1, v0, s[0:1]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v2, 1, v1
  s_endpgm
vm_nowait: global_load_b32 v1, v0, s[0:1]
  v_add_nc_u32 v2, 1, v1
  s_endpgm
vm_partial: global_load_b32 v1, v0, s[0:1]
  global_load_b32 v3, v0, s[0:1] offset:4
  s_waitcnt vmcnt(1)
  v_mov_b32 v2, v1
  v_mov_b32 v4, v3
  s_waitcnt_vmcnt null, 0x0
  v_mov_b32 v5, v3
  s_endpgm
smem_wait: s_load_b32 s4, s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s5, s4, 1
  s_endpgm
smem_nowait: s_load_b32 s4, s[0:1], 0x0
  s_add_u32 s5, s4, 1
  s_endpgm
lds_nowait: ds_store_b32 v0, v5
  ds_load_b32 v1, v0
  v_mov_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v3, v1
  s_endpgm
lds_order: ds_load_b32 v1, v0
  ds_store_b32 v0, v5 offset:4
  s_waitcnt lgkmcnt(1)
  v_mov_b32 v2, v1
  s_endpgm
vgpr_v9: v_mov_b32 v9, 1
  s_endpgm
vgpr_load_v9: global_load_b128 v[6:9], v0, s[0:1]
  s_waitcnt vmcnt(0)
  s_endpgm
// s[0:1] = source, s[2:3] = destination: dst[0] = src[0] read by a scalar load (through the K$)
kload: s_load_b32 s4, s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s4
  v_mov_b32 v2, 0
  global_store_b32 v2, v1, s[2:3]
  s_endpgm
kload_inv: s_dcache_inv
  s_load_b32 s4, s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s4
  v_mov_b32 v2, 0
  global_store_b32 v2, v1, s[2:3]
  s_endpgm

// ---- WMMA (test_wmma.c): A v[8:15], B v[16:23], C v[24:31], D v[0:7]
wmma_f32_f16: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31]
  s_endpgm
wmma_f32_bf16: v_wmma_f32_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[24:31]
  s_endpgm
wmma_f16_f16: v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31]
  s_endpgm
wmma_f16_f16_hi: v_wmma_f16_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31] op_sel:[0,0,1]
  s_endpgm
wmma_bf16_bf16: v_wmma_bf16_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[24:31]
  s_endpgm
wmma_bf16_bf16_hi: v_wmma_bf16_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[24:31] op_sel:[0,0,1]
  s_endpgm
wmma_f32_f16_c0: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], 0
  s_endpgm
wmma_f32_f16_neg: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31] neg_lo:[1,0,0]
  s_endpgm

// ---- LDS banks (test_wmma.c lds_banks): v0 = byte address per lane, v1 = data
lds_bank_load: ds_load_b32 v2, v0
  s_waitcnt lgkmcnt(0)
  s_endpgm
lds_bank_store: ds_store_b32 v0, v1
  s_waitcnt lgkmcnt(0)
  s_endpgm
lds_bank_load64: ds_load_b64 v[2:3], v0
  s_waitcnt lgkmcnt(0)
  s_endpgm
lds_bank_load2: ds_load_2addr_b32 v[2:3], v0 offset1:32
  s_waitcnt lgkmcnt(0)
  s_endpgm
wmma_chain_hazard: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31]
  v_wmma_f32_16x16x16_f16 v[32:39], v[0:7], v[16:23], v[24:31]
  s_endpgm
wmma_chain_nop: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31]
  v_nop
  v_wmma_f32_16x16x16_f16 v[32:39], v[0:7], v[16:23], v[24:31]
  s_endpgm
wmma_chain_salu: v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[24:31]
  s_nop 0
  v_wmma_f32_16x16x16_f16 v[32:39], v[8:15], v[0:7], v[24:31]
  s_endpgm

// ---- float64 (test_f64.c): the instructions LLVM's AMDGPU backend emits for float64 tensor kernels
// (v[0:1] = a, v[2:3] = b, v20 = an int32 / class mask per lane)
f64_unary: v_rcp_f64_e32 v[4:5], v[0:1]
  v_rsq_f64_e32 v[6:7], v[0:1]
  v_sqrt_f64_e32 v[8:9], v[0:1]
  v_trunc_f64_e32 v[10:11], v[0:1]
  v_floor_f64_e32 v[12:13], v[0:1]
  v_ceil_f64_e32 v[14:15], v[0:1]
  v_rndne_f64_e32 v[16:17], v[0:1]
  v_fract_f64_e32 v[18:19], v[0:1]
  v_frexp_mant_f64_e32 v[22:23], v[0:1]
  v_frexp_exp_i32_f64_e32 v24, v[0:1]
  v_cvt_u32_f64_e32 v25, v[0:1]
  v_cvt_i32_f64_e32 v26, v[0:1]
  v_cvt_f64_u32_e32 v[28:29], v20
  v_cvt_f64_i32_e32 v[30:31], v20
  v_ldexp_f64 v[32:33], v[0:1], v20
  v_cvt_f32_f64_e32 v34, v[0:1]
  s_endpgm
f64_binary: v_max_f64 v[4:5], v[0:1], v[2:3]
  v_min_f64 v[6:7], v[0:1], v[2:3]
  v_mul_f64 v[8:9], -v[0:1], |v[2:3]|
  v_add_f64 v[10:11], v[0:1], -v[2:3]
  v_fma_f64 v[12:13], v[0:1], v[2:3], 0.5
  v_cmp_lt_f64_e32 vcc_lo, v[0:1], v[2:3]
  v_cndmask_b32_e64 v14, 0, 1, vcc_lo
  v_cmp_neq_f64_e64 s4, v[0:1], v[2:3]
  v_cndmask_b32_e64 v15, 0, 1, s4
  v_cmp_u_f64_e64 s5, v[0:1], v[2:3]
  v_cndmask_b32_e64 v16, 0, 1, s5
  v_cmp_ngt_f64_e64 s6, v[0:1], v[2:3]
  v_cndmask_b32_e64 v17, 0, 1, s6
  v_cmp_class_f64_e64 s7, v[0:1], v20
  v_cndmask_b32_e64 v18, 0, 1, s7
  s_endpgm
f64_div: v_div_scale_f64 v[4:5], null, v[2:3], v[2:3], v[0:1]
  v_rcp_f64_e32 v[6:7], v[4:5]
  v_fma_f64 v[8:9], -v[4:5], v[6:7], 1.0
  v_fma_f64 v[6:7], v[6:7], v[8:9], v[6:7]
  v_fma_f64 v[8:9], -v[4:5], v[6:7], 1.0
  v_fma_f64 v[6:7], v[6:7], v[8:9], v[6:7]
  v_div_scale_f64 v[8:9], vcc_lo, v[0:1], v[2:3], v[0:1]
  v_mul_f64 v[10:11], v[8:9], v[6:7]
  v_fma_f64 v[4:5], -v[4:5], v[10:11], v[8:9]
  v_div_fmas_f64 v[4:5], v[4:5], v[6:7], v[10:11]
  v_div_fixup_f64 v[12:13], v[4:5], v[2:3], v[0:1]
  s_endpgm
// float -> packed 16-bit ints (LLVM's fptosi/fptoui float -> i16 on gfx11)
cvt_pk16: v_cvt_pk_i16_f32 v4, v0, v1
  v_cvt_pk_u16_f32 v5, v0, v1
  s_endpgm
