// tests/unit/rdna3/asm_snippets_gfx12.s: gfx12 (RDNA4) encodings for the gfx12 variant of the core, assembled by
// llvm-mc -mcpu=gfx1200 (test_gfx12.c). Registers as each test presets them; every snippet ends in s_endpgm.
  .text

// ---- split wait counters (s[0:1] = buffer, v0 = per-lane byte offset, v1 = 7 and s8 = 9 beforehand)
// A load lands only at its own counter's wait: v2 and s9 see the old values, v3 and s10 the loaded ones.
wait_loadcnt: global_load_b32 v1, v0, s[0:1]
  s_load_b32 s8, s[0:1], 0x4
  v_mov_b32 v2, v1              // no s_wait_loadcnt yet: the old v1
  s_wait_kmcnt 0x0              // the scalar load lands; the vector load does not
  v_mov_b32 v4, v1
  s_mov_b32 s10, s8
  s_wait_loadcnt 0x0
  v_mov_b32 v3, v1
  s_endpgm
wait_kmcnt: s_load_b32 s8, s[0:1], 0x4
  s_mov_b32 s9, s8              // no s_wait_kmcnt yet: the old s8
  s_wait_loadcnt_dscnt 0x0      // other counters: still not landed
  s_mov_b32 s11, s8
  s_wait_kmcnt 0x0
  s_mov_b32 s10, s8
  s_endpgm
// LDS (v0 = per-lane byte address, v1 = value): the load lands at s_wait_dscnt, in issue order
wait_dscnt: ds_store_b32 v0, v1
  ds_load_b32 v2, v0 offset:0
  v_mov_b32 v3, v2              // old v2
  s_wait_dscnt 0x0
  v_mov_b32 v4, v2
  s_endpgm
// two loads in flight, s_wait_loadcnt 1 lands the older only
wait_loadcnt_1: global_load_b32 v1, v0, s[0:1]
  global_load_b32 v2, v0, s[0:1] offset:4
  s_wait_loadcnt 0x1
  v_mov_b32 v3, v1
  v_mov_b32 v4, v2              // still the old v2
  s_wait_storecnt_dscnt 0x0     // no load counter: v2 stays old
  v_mov_b32 v5, v2
  s_wait_loadcnt 0x0
  s_endpgm

// ---- the 96-bit VGLOBAL/VSCRATCH forms and SMEM's 24-bit offset (s[0:1] = buffer, v0 = per-lane byte offset)
global12: global_load_b32 v1, v0, s[0:1] offset:0x100
  global_load_b64 v[2:3], v0, s[0:1] offset:0x108
  s_add_nc_u64 s[2:3], s[0:1], 0x200000
  global_load_b32 v4, v0, s[2:3] offset:-0x200000
  s_load_b32 s8, s[2:3], -0x1ffff0          // s[2:3] - 2 MiB + 16: beyond gfx11's 21-bit SMEM offset
  s_wait_loadcnt 0x0
  v_add_nc_u32 v5, v1, v2
  global_store_b32 v0, v5, s[0:1] offset:0x400
  global_store_d16_hi_b16 v0, v3, s[0:1] offset:0x500
  global_atomic_add_u32 v6, v0, v1, s[0:1] offset:0x600 th:TH_ATOMIC_RETURN
  global_inv scope:SCOPE_DEV
  s_wait_loadcnt 0x0
  s_wait_kmcnt 0x0
  s_endpgm
// gfx12 sub-dword scalar loads (s[0:1] = buffer of bytes 0x80, 0x81, ...)
smem_small: s_load_i8 s4, s[0:1], 0x1
  s_load_u8 s5, s[0:1], 0x1
  s_load_i16 s6, s[0:1], 0x2
  s_load_u16 s7, s[0:1], 0x2
  s_wait_kmcnt 0x0
  s_endpgm
scratch12: scratch_store_b32 v0, v1, off offset:8
  scratch_store_b32 off, v2, s4
  scratch_load_b32 v3, v0, off offset:8
  scratch_load_b32 v4, off, s4
  s_wait_loadcnt 0x0
  s_endpgm

// ---- renumbered VALU ops and SALU float ops (v1, v2 = f32 inputs, v[4:5], v[6:7] = f64, s4, s5 = f32)
valu12: v_max_num_f32_e32 v10, v1, v2
  v_min_num_f32_e64 v11, v1, -v2
  v_min3_num_f32 v12, v1, v2, 1.0
  v_med3_num_f32 v13, v1, v2, 0
  v_add_f64_e32 v[14:15], v[4:5], v[6:7]
  v_mul_f64_e32 v[16:17], v[4:5], v[6:7]
  v_max_num_f64_e32 v[18:19], v[4:5], v[6:7]
  v_lshlrev_b64_e32 v[20:21], 4, v[4:5]
  v_maxmin_num_f32 v22, v1, v2, 0.5
  s_endpgm
salu12: s_add_f32 s10, s4, s5
  s_mul_f32 s11, s4, s5
  s_cvt_f32_u32 s12, s6
  s_cvt_u32_f32 s13, s4
  s_fmaak_f32 s14, s4, s5, 0x40000000
  s_max_num_f32 s15, s4, s5
  s_cmp_lt_f32 s4, s5
  s_cselect_b32 s16, 1, 2
  s_add_nc_u64 s[18:19], s[20:21], s[22:23]
  s_cvt_f16_f32 s17, s4
  s_endpgm

// pseudo-scalar transcendentals: SGPR results (s4 = 4.0, s5 = 2.0 as f16 in the low half)
pseudo_scalar: v_s_sqrt_f32 s10, s4
  v_s_rcp_f32 s11, s4
  v_s_exp_f32 s12, 2.0
  v_s_log_f32 s13, -s4
  v_s_sqrt_f16 s14, s5
  s_endpgm

// ---- the split barrier; a wait without a signal would hang
barrier12: s_barrier_signal -1
  s_barrier_wait -1
  v_mov_b32 v1, 5
  s_endpgm
barrier12_nosignal: s_barrier_wait -1
  s_endpgm
// gfx11's s_waitcnt does not exist on gfx12 (the split counters replace it)
old_waitcnt: .long 0xbf890000     // s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0) as gfx11 encodes it
  s_endpgm
