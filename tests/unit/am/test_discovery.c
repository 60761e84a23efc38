/* tests/unit/am/test_discovery.c: IP discovery parser, register addresses, chip table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/chips.h"
#include "am/discovery.h"
#include "baregpu/error.h"
#include "discovery_gen.h"
#include "../check_helpers.h"

#define IMG BG_AM_DISC_TABLE_SIZE

static struct bg_am_discovery *D;
static struct discgen_config *C;
static uint8_t *buf;
static struct discgen_layout L;

static void setup(void) {
  D = calloc(1, sizeof(*D));
  C = calloc(1, sizeof(*C));
  buf = calloc(1, IMG);
  ck_assert(D && C && buf);
}
static void teardown(void) {
  free(D), free(C), free(buf);
}

static size_t build(void) {
  size_t n = discgen_build(C, buf, IMG, &L);
  ck_assert_uint_gt(n, 0);
  return n;
}

static uint32_t addr(int hwip, unsigned inst, unsigned seg, uint32_t off) {
  uint32_t a = 0;
  OK(bg_am_reg_addr(D, hwip, inst, seg, off, &a));
  return a;
}

static void w16(size_t off, uint16_t v) { buf[off] = (uint8_t)v, buf[off + 1] = (uint8_t)(v >> 8); }
static void w32(size_t off, uint32_t v) { w16(off, (uint16_t)v), w16(off + 2, (uint16_t)(v >> 16)); }
static void refix(void) { discgen_fix_table_checksums(buf, IMG), discgen_fix_binary_checksum(buf, IMG); }

/* ---------------- round trips ---------------- */

START_TEST(mock_roundtrip) {
  discgen_config_mock(C);
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert_uint_eq(D->num_dies, 1);
  ck_assert(!D->base_addr_64);
  ck_assert_uint_eq(D->num_entries, 8);
  ck_assert_uint_eq(L.ipds_off, 60);
  ck_assert_uint_eq(L.die_off[0], 140); /* 60 + 80 as in the reference mock */
  struct { int h; uint8_t v[3]; } want[] = {
    {GC_HWIP, {12, 0, 0}}, {SDMA0_HWIP, {7, 0, 0}}, {MMHUB_HWIP, {4, 1, 0}}, {NBIO_HWIP, {6, 3, 1}},
    {NBIF_HWIP, {6, 3, 1}}, {MP0_HWIP, {14, 0, 2}}, {MP1_HWIP, {14, 0, 2}}, {HDP_HWIP, {7, 0, 0}},
    {OSSSYS_HWIP, {7, 0, 0}},
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    const struct bg_am_ip *ip = &D->ip[want[i].h];
    ck_assert_msg(ip->present, "%s", bg_am_hwip_name(want[i].h));
    ck_assert_uint_eq(ip->maj, want[i].v[0]);
    ck_assert_uint_eq(ip->min, want[i].v[1]);
    ck_assert_uint_eq(ip->rev, want[i].v[2]);
    ck_assert_uint_eq(ip->inst_mask, 1);
    ck_assert_uint_eq(ip->nsegs[0], 10);
  }
  ck_assert(!D->ip[SDMA1_HWIP].present);
  ck_assert(!D->ip[ATHUB_HWIP].present);
  /* bases of tinygrad test/mockgpu/am/amgpu.py */
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[0][0], 0x1260);
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[0][1], 0xA000);
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[0][2], 0x1C000);
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[0][3], 0x2402C00);
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[0][4], 0);
  ck_assert_uint_eq(D->ip[SDMA0_HWIP].bases[0][1], 0xA000);
  ck_assert_uint_eq(D->ip[MMHUB_HWIP].bases[0][0], 0x1A000);
  ck_assert_uint_eq(D->ip[MMHUB_HWIP].bases[0][1], 0x2408800);
  ck_assert_uint_eq(D->ip[NBIO_HWIP].bases[0][1], 0x14);
  ck_assert_uint_eq(D->ip[NBIF_HWIP].bases[0][5], 0x4040000);
  ck_assert_uint_eq(D->ip[MP0_HWIP].bases[0][0], 0x16000);
  ck_assert_uint_eq(D->ip[MP1_HWIP].bases[0][4], 0x243FC00);
  ck_assert_uint_eq(D->ip[HDP_HWIP].bases[0][0], 0xF20);
  ck_assert_uint_eq(D->ip[OSSSYS_HWIP].bases[0][1], 0x240A000);
  /* gc_info v2.1 and derived props */
  ck_assert(D->has_gc_info);
  ck_assert_uint_eq(D->gc.version_major, 2);
  ck_assert_uint_eq(D->gc.version_minor, 1);
  ck_assert_uint_eq(D->gc.gc_num_tccs, 8);
  ck_assert_uint_eq(D->gc.gc_num_rb_per_se, 4);
  ck_assert_uint_eq(D->props.num_xcc, 1);
  ck_assert_uint_eq(D->props.cu_per_sa, 8);
  ck_assert_uint_eq(D->props.sh_per_se, 2);
  ck_assert_uint_eq(D->props.array_count, 4);
  ck_assert_uint_eq(D->props.simd_per_cu, 2);
  ck_assert_uint_eq(D->props.simd_count, 64);
  ck_assert_uint_eq(D->props.cu_count, 32);
  ck_assert_uint_eq(D->props.wave_size, 32);
  ck_assert_uint_eq(D->props.max_waves_per_simd, 16);
  ck_assert_uint_eq(D->props.max_slots_scratch_cu, 32);
  ck_assert_uint_eq(D->props.lds_size_kb, 64);
  ck_assert_str_eq(D->arch, "gfx1200");
  ck_assert_uint_eq(D->gfx_target_version, 120000);
  ck_assert_uint_eq(D->reserved_vram_size, 64u << 20);
  ck_assert_uint_eq(D->nharvest, 0);
  OK(bg_am_gc_check_supported(D->gc_ver[0], D->gc_ver[1], D->gc_ver[2]));
}
END_TEST

/* (hwip, segment, register offset) -> absolute dword address in the mock configuration. */
START_TEST(mock_reference_addresses) {
  discgen_config_mock(C);
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  struct { int h; unsigned seg; uint32_t off, abs; const char *name; } r[] = {
    {GC_HWIP, 1, 0x2047, 0xC047, "SCRATCH_REG7"},
    {GC_HWIP, 1, 0x2046, 0xC046, "SCRATCH_REG6"},
    {NBIO_HWIP, 1, 0x0, 0x14, "BIF_BX_PF0_RSMU_INDEX"},
    {NBIO_HWIP, 1, 0x1, 0x15, "BIF_BX_PF0_RSMU_DATA"},
    {NBIF_HWIP, 1, 0x1, 0x15, "BIF_BX_PF0_RSMU_DATA (NBIF_HWIP)"},
    {NBIO_HWIP, 2, 0xfe, 0xe1e, "BIF_BX0_BIF_DOORBELL_INT_CNTL"},
    {NBIO_HWIP, 2, 0x106, 0xe26, "BIF_BX_PF0_GPU_HDP_FLUSH_REQ"},
    {NBIO_HWIP, 2, 0x107, 0xe27, "BIF_BX_PF0_GPU_HDP_FLUSH_DONE"},
    {NBIO_HWIP, 2, 0x12d, 0xe4d, "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL"},
    {MP0_HWIP, 0, 0x63, 0x16063, "MPASP_SMN_C2PMSG_35"},
    {MP0_HWIP, 0, 0x80, 0x16080, "MPASP_SMN_C2PMSG_64"},
    {MP0_HWIP, 0, 0x91, 0x16091, "MPASP_SMN_C2PMSG_81"},
    {MP1_HWIP, 0, 0x275, 0x16275, "MP1_SMN_C2PMSG_53"},
    {MP1_HWIP, 0, 0x282, 0x16282, "MP1_SMN_C2PMSG_66"},
    {MP1_HWIP, 0, 0x29a, 0x1629a, "MP1_SMN_C2PMSG_90"},
    {MMHUB_HWIP, 0, 0x554, 0x1a554, "MMMC_VM_FB_LOCATION_BASE"},
    {MMHUB_HWIP, 0, 0x5aa, 0x1a5aa, "MMVM_INVALIDATE_ENG17_ACK"},
    {GC_HWIP, 0, 0x1658, 0x28b8, "GCVM_INVALIDATE_ENG17_REQ"},
    {GC_HWIP, 0, 0x0f40, 0x21a0, "CP_STAT"},
    {GC_HWIP, 1, 0x4e7c, 0xee7c, "RLC_RLCS_BOOTLOAD_STATUS"},
    {GC_HWIP, 1, 0x0980, 0xa980, "RLC_SAFE_MODE"},
    {GC_HWIP, 1, 0x0900, 0xa900, "GRBM_GFX_CNTL"},
    {GC_HWIP, 0, 0x1fa9, 0x3209, "CP_MQD_BASE_ADDR"},
    {GC_HWIP, 0, 0x0080, 0x12e0, "SDMA0_QUEUE0_RB_CNTL"},
    {SDMA0_HWIP, 0, 0x0080, 0x12e0, "SDMA0_QUEUE0_RB_CNTL via SDMA0_HWIP"},
    {OSSSYS_HWIP, 0, 0x80, 0x1120, "IH_RB_CNTL"},
    {OSSSYS_HWIP, 0, 0x82, 0x1122, "IH_RB_WPTR"},
    {HDP_HWIP, 0, 0x0, 0xf20, "HDP seg0"},
  };
  for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
    ck_assert_msg(addr(r[i].h, 0, r[i].seg, r[i].off) == r[i].abs, "%s: 0x%x != 0x%x", r[i].name,
                  addr(r[i].h, 0, r[i].seg, r[i].off), r[i].abs);
  /* am_mock_boot_trace.txt: RCC_DEV0_EPF2_STRAP2 (nbif seg5) is reached via RSMU_INDEX = 0x10134408 = addr*4. */
  uint32_t strap2 = addr(NBIF_HWIP, 0, 5, 0xD102);
  ck_assert_uint_eq((uint64_t)strap2 * 4, 0x10134408u);
  ck_assert_uint_ge(strap2, (2u << 20) / 4); /* beyond the 2 MiB BAR5: indirect */
}
END_TEST

START_TEST(gfx11_roundtrip) {
  discgen_config_gfx11(C);
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert_uint_eq(D->ipds_version, 3);
  ck_assert_uint_eq(D->num_entries, 14 + 20);
  ck_assert_uint_eq(D->ignored_entries, 4); /* UMC instances 16..19 */
  ck_assert_uint_eq(D->ip[UMC_HWIP].inst_mask, 0xffff);
  ck_assert_uint_eq(D->ip[UMC_HWIP].bases[0][0], 0x14000);
  ck_assert_uint_eq(D->ip[UMC_HWIP].bases[15][1], 0x2425800 + 0x800 * 15);
  ck_assert_uint_eq(D->ip[GC_HWIP].maj, 11);
  ck_assert_uint_eq(D->ip[SDMA0_HWIP].maj, 6);
  ck_assert_uint_eq(D->ip[SDMA1_HWIP].maj, 6);
  ck_assert_uint_eq(D->ip[SDMA1_HWIP].bases[0][0], 0x1260);
  ck_assert_uint_eq(D->ip[MMHUB_HWIP].maj, 3);
  ck_assert_uint_eq(D->ip[ATHUB_HWIP].bases[0][2], 0x2408C00);
  ck_assert_uint_eq(D->ip[NBIO_HWIP].maj, 4);
  ck_assert_uint_eq(D->ip[NBIO_HWIP].min, 3);
  ck_assert_uint_eq(D->ip[MP0_HWIP].maj, 13);
  ck_assert_uint_eq(D->ip[MP1_HWIP].maj, 13);
  ck_assert_uint_eq(D->ip[VCN_HWIP].inst_mask, 3);
  ck_assert_uint_eq(D->ip[VCN_HWIP].bases[1][0], 0x7A00);
  ck_assert_uint_eq(D->ip[DF_HWIP].min, 3);
  ck_assert_uint_eq(D->ip[GC_HWIP].nsegs[0], 4);
  ck_assert_uint_eq(addr(GC_HWIP, 0, 1, 0x2047), 0xC047);
  ck_assert_uint_eq(addr(NBIO_HWIP, 0, 1, 0), 0x14);
  /* gc_info v1.2 */
  ck_assert_uint_eq(D->gc.version_major, 1);
  ck_assert_uint_eq(D->gc.version_minor, 2);
  ck_assert_uint_eq(D->gc.gc_gl2c_per_gpu, 6144);
  ck_assert_uint_eq(D->gc.gc_num_tcps, 96);
  ck_assert_uint_eq(D->props.cu_per_sa, 8);
  ck_assert_uint_eq(D->props.sh_per_se, 2);
  ck_assert_uint_eq(D->props.array_count, 12);
  ck_assert_uint_eq(D->props.cu_count, 96);
  ck_assert_uint_eq(D->props.simd_count, 192);
  ck_assert_uint_eq(D->props.num_xcc, 1);
  ck_assert_str_eq(D->arch, "gfx1100");
  ck_assert_uint_eq(D->gfx_target_version, 110000);
  ck_assert_uint_eq(D->table_offset[BG_AM_TABLE_HARVEST_INFO], L.harvest_off);
  ck_assert_uint_eq(D->nharvest, 0);
}
END_TEST

START_TEST(gfx942_roundtrip) {
  discgen_config_gfx942(C);
  build();
  ck_assert_uint_eq(L.hdr_size, 16 + 8 * 6);
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert_uint_eq(D->bin_major, 2);
  ck_assert(D->base_addr_64);
  ck_assert_uint_eq(D->num_dies, 4);
  ck_assert_uint_eq(D->ip[GC_HWIP].inst_mask, 0xff);
  ck_assert_uint_eq(D->ip[SDMA0_HWIP].inst_mask, 0xffff);
  ck_assert_uint_eq(D->ip[MMHUB_HWIP].inst_mask, 0xf);
  ck_assert_uint_eq(D->ip[GC_HWIP].die[5], 2);
  ck_assert_uint_eq(D->ip[GC_HWIP].maj, 9);
  ck_assert_uint_eq(D->ip[GC_HWIP].min, 4);
  ck_assert_uint_eq(D->ip[GC_HWIP].rev, 3);
  ck_assert_uint_eq(D->ip[NBIO_HWIP].min, 9);
  ck_assert_uint_eq(D->ip[MP1_HWIP].rev, 6);
  /* 64-bit bases: raw kept, low 32 bits with bits 30-31 cleared used for addressing */
  ck_assert_uint_eq(D->ip[GC_HWIP].bases_raw[3][0], (uint64_t)0x11 << 32 | 0xC0000000u | (0x2000 + 0x300000));
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[3][0], 0x2000 + 0x300000);
  ck_assert_uint_eq(D->ip[GC_HWIP].bases[2][1], 0xA000 + 0x200000);
  ck_assert_uint_eq(addr(GC_HWIP, 7, 1, 0x2047), 0xA000 + 0x700000 + 0x2047);
  ck_assert_uint_eq(addr(SDMA0_HWIP, 13, 0, 0x80), 0x1260 + 0x80000 * 13 + 0x80);
  ck_assert_uint_eq(addr(NBIO_HWIP, 3, 1, 1), 0x3000015);
  /* gc_info v2.1, 8 XCCs */
  ck_assert_uint_eq(D->props.num_xcc, 8);
  ck_assert_uint_eq(D->props.cu_per_sa, 10);
  ck_assert_uint_eq(D->props.sh_per_se, 1);
  ck_assert_uint_eq(D->props.array_count, 32);
  ck_assert_uint_eq(D->props.cu_count, 320);
  ck_assert_uint_eq(D->props.simd_count, 640);
  ck_assert_uint_eq(D->props.wave_size, 64);
  ck_assert_uint_eq(D->gc.gc_tcc_size, 4096);
  ck_assert_str_eq(D->arch, "gfx942");
  ck_assert_uint_eq(D->gfx_target_version, 90402);
  ck_assert_uint_eq(D->reserved_vram_size, 384u << 20);
}
END_TEST

START_TEST(harvest) {
  discgen_config_gfx942(C);
  C->nharvest = 3;
  C->harvest[0].hw_id = BG_AM_HWID_GC, C->harvest[0].instance = 7;
  C->harvest[1].hw_id = BG_AM_HWID_GC, C->harvest[1].instance = 2;
  C->harvest[2].hw_id = BG_AM_HWID_UVD, C->harvest[2].instance = 1;
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert_uint_eq(D->nharvest, 3);
  ck_assert_uint_eq(D->harvest[1].instance, 2);
  ck_assert_uint_eq(D->ip[GC_HWIP].harvest_mask, 0x84);
  ck_assert_uint_eq(D->ip[VCN_HWIP].harvest_mask, 0x2);
  ck_assert_uint_eq(D->props.num_xcc, 6);
  ck_assert_uint_eq(D->props.array_count, 24);
  ck_assert_uint_eq(D->props.simd_count, 480);
}
END_TEST

START_TEST(gc_info_versions) {
  static const struct { unsigned maj, min; size_t n; } v[] = {{1, 0, 19}, {1, 1, 22}, {1, 2, 30}, {1, 3, 38},
                                                               {2, 0, 17}, {2, 1, 24}};
  for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    ck_assert_uint_eq(bg_am_gc_info_layout(v[i].maj, v[i].min, NULL), v[i].n);
    discgen_config_gfx11(C);
    C->gc.version_major = (uint16_t)v[i].maj, C->gc.version_minor = (uint16_t)v[i].min;
    C->gc.gc_num_cu_per_sh = 5, C->gc.gc_num_sh_per_se = 1, C->gc.gc_tcc_cache_line_size = 128;
    C->gc.gc_num_gl2a = 7, C->gc.gc_num_packer_per_sc = 3, C->gc.gc_tcc_size = 999;
    build();
    ck_assert_uint_eq(L.gc_size, 16 + 4 * v[i].n);
    OK(bg_am_discovery_parse(buf, IMG, 0, D));
    ck_assert_uint_eq(D->gc.version_major, v[i].maj);
    ck_assert_uint_eq(D->gc.size, 16 + 4 * v[i].n);
    ck_assert_uint_eq(D->gc.gc_lds_size, 64);
    ck_assert_uint_eq(D->gc.gc_num_packer_per_sc, 3);
    /* wire positions independent of the shared layout table */
    if (v[i].maj == 1) {
      ck_assert_uint_eq(buf[L.gc_off + 16 + 16 * 4], 2); /* gc_num_sa_per_se is the 17th u32 */
      ck_assert_uint_eq(buf[L.gc_off + 16 + 18 * 4], 7); /* gc_num_gl2a the 19th */
      ck_assert_uint_eq(D->props.cu_per_sa, 8);
      ck_assert_uint_eq(D->props.sh_per_se, 2);
      ck_assert_uint_eq(D->gc.gc_num_cu_per_sh, 0);
      ck_assert_uint_eq(D->gc.gc_num_gl2a, 7);
      ck_assert_uint_eq(D->gc.gc_tcc_cache_line_size, v[i].min == 3 ? 128 : 0);
      ck_assert_uint_eq(D->gc.gc_tcc_size, v[i].min == 3 ? 999 : 0);
      ck_assert_uint_eq(D->gc.gc_gl2c_per_gpu, v[i].min >= 2 ? 6144 : 0);
    } else {
      ck_assert_uint_eq(buf[L.gc_off + 16 + 1 * 4], 5);  /* gc_num_cu_per_sh */
      ck_assert_uint_eq(buf[L.gc_off + 16 + 14 * 4], 64); /* gc_lds_size */
      ck_assert_uint_eq(buf[L.gc_off + 16 + 16 * 4], 3);  /* gc_num_packer_per_sc */
      ck_assert_uint_eq(D->props.cu_per_sa, 5);
      ck_assert_uint_eq(D->props.sh_per_se, 1);
      ck_assert_uint_eq(D->gc.gc_num_sa_per_se, 0);
      ck_assert_uint_eq(D->gc.gc_tcc_size, v[i].min == 1 ? 999 : 0);
      if (v[i].min == 1) ck_assert_uint_eq(buf[L.gc_off + 16 + 23 * 4] | buf[L.gc_off + 17 + 23 * 4] << 8, 999);
    }
  }
  ck_assert_uint_eq(bg_am_gc_info_layout(1, 4, NULL), 0);
  ck_assert_uint_eq(bg_am_gc_info_layout(3, 0, NULL), 0);
}
END_TEST

START_TEST(no_gc_info_and_location) {
  discgen_config_mock(C);
  C->has_gc = false;
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert(!D->has_gc_info);
  ck_assert_str_eq(D->arch, "gfx1200");
  uint64_t vram = 0, off = 0;
  OK(bg_am_discovery_location(0x200, &vram, &off));
  ck_assert_uint_eq(vram, 512ull << 20);
  ck_assert_uint_eq(off, (512ull << 20) - 65536);
  OK(bg_am_discovery_location(24576, &vram, &off));
  ck_assert_uint_eq(off, 24576ull * 1048576 - 65536);
  FAILS(bg_am_discovery_location(0, &vram, &off), BG_ENODEV, "mmRCC_CONFIG_MEMSIZE (0xde3) reads 0x00000000");
  FAILS(bg_am_discovery_location(0xffffffffu, NULL, NULL), BG_ENODEV, "absent or in reset");
  ck_assert_uint_eq(bg_am_discovery_checksum("\x01\xff\xff", 3), 0x01ff);
}
END_TEST

START_TEST(no_checksum_flag) {
  discgen_config_mock(C);
  build();
  w16(8, 0x1234);
  w16(L.tables_at + 2, 0x5555);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "binary_checksum 0x1234 does not match");
  OK(bg_am_discovery_parse(buf, IMG, BG_AM_DISC_NO_CHECKSUM, D));
  ck_assert_uint_eq(D->ip[GC_HWIP].maj, 12);
}
END_TEST

/* ---------------- register address errors ---------------- */

START_TEST(reg_addr_errors) {
  discgen_config_gfx11(C);
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  uint32_t a;
  FAILS(bg_am_reg_addr(D, LSDMA_HWIP, 0, 0, 0, &a), BG_EINVAL, "LSDMA_HWIP (hw_id 91) is not in the discovery table");
  FAILS(bg_am_reg_addr(D, GC_HWIP, 1, 0, 0, &a), BG_EINVAL, "GC_HWIP instance 1 is not in the discovery table");
  FAILS(bg_am_reg_addr(D, GC_HWIP, 99, 0, 0, &a), BG_EINVAL, "GC_HWIP instance 99");
  FAILS(bg_am_reg_addr(D, GC_HWIP, 0, 4, 0, &a), BG_EINVAL, "GC_HWIP instance 0 has 4 base address(es), segment 4");
  FAILS(bg_am_reg_addr(D, 0, 0, 0, 0, &a), BG_EINVAL, "HWIP 0 out of range");
  FAILS(bg_am_reg_addr(D, MAX_HWIP, 0, 0, 0, &a), BG_EINVAL, "out of range");
  FAILS(bg_am_reg_addr(D, GC_HWIP, 0, 3, 0xffffffffu, &a), BG_EINVAL, "overflows 32 bits");
  FAILS(bg_am_reg_addr(NULL, GC_HWIP, 0, 0, 0, &a), BG_EINVAL, "NULL");
  ck_assert_str_eq(bg_am_hwip_name(NBIF_HWIP), "NBIF_HWIP");
  ck_assert_str_eq(bg_am_hwip_name(99), "?");
  ck_assert_uint_eq(bg_am_hwip_hwid(NBIO_HWIP), 108);
  ck_assert_uint_eq(bg_am_hwip_hwid(MP0_HWIP), 255);
  ck_assert_uint_eq(bg_am_hwip_hwid(RSMU_HWIP), 0);
}
END_TEST

/* ---------------- validation errors ---------------- */

START_TEST(errors_binary_header) {
  discgen_config_mock(C);
  size_t n = build();
  FAILS(bg_am_discovery_parse(buf, 59, 0, D), BG_EFORMAT, "image of 59 bytes is shorter than the 60-byte binary_header");
  FAILS(bg_am_discovery_parse(NULL, 60, 0, D), BG_EINVAL, "NULL");
  FAILS(bg_am_discovery_parse(buf, n - 1, 0, D), BG_EFORMAT, "binary_size");
  ck_assert(strstr(bg_last_error(), "image length") != NULL);
  w32(0, 0);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT,
        "binary_header binary_signature 0x00000000 at offset 0x0, expected 0x28211407");
  build();
  buf[200] ^= 0x40;
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "binary_header binary_checksum");
  build();
  w16(4, 3);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "binary_header version 3.0, expected major 0..2");
  build();
  w16(10, 20);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "binary_header binary_size 20, expected 60..");
  /* v2 header with a bad table count */
  discgen_config_gfx942(C);
  build();
  w16(12, 17);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "binary_header (v2) num_tables 17, expected 1..16");
}
END_TEST

START_TEST(errors_table_offsets) {
  discgen_config_mock(C);
  size_t n = build();
  w16(L.tables_at, (uint16_t)n);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "table_list[0] (IP_DISCOVERY) offset");
  ck_assert(strstr(bg_last_error(), "inside the binary") != NULL);
  build();
  w16(L.tables_at + 8 * 1, 10);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "table_list[1] (GC) offset 0xa, expected 0 or 0x3c..");
  build();
  w16(L.tables_at + 8 * 1 + 4, 0x4000);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "table_list[1] (GC) offset");
  ck_assert(strstr(bg_last_error(), "ends past binary_size") != NULL);
  build();
  w16(L.tables_at, 0);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "table_list[0] (IP_DISCOVERY) offset is 0");
  build();
  w16(L.tables_at, (uint16_t)(n - 40));
  w16(L.tables_at + 4, 0);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "ip_discovery_header at offset");
  ck_assert(strstr(bg_last_error(), "extend past binary_size") != NULL);
}
END_TEST

START_TEST(errors_ipds) {
  discgen_config_mock(C);
  build();
  w32(L.ipds_off, 0);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT,
        "ip_discovery_header signature 0x00000000 at offset 0x3c, expected 0x53445049 (IPDS)");
  build();
  buf[L.ipds_off + 100] ^= 1; /* inside the IP table: table checksum wrong, binary checksum fixed */
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "IP discovery table checksum");
  build();
  w16(L.ipds_off + 4, 5);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "ip_discovery_header version 5 at offset 0x3c, expected 1..4");
  build();
  w16(L.ipds_off + 6, 40);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "ip_discovery_header size 0x28 at offset 0x3c, expected 0x50..");
  build();
  w16(L.ipds_off + 6, 0x2000);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "ip_discovery_header size 0x2000");
  build();
  w16(L.ipds_off + 12, 17);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "ip_discovery_header num_dies 17, expected 1..16");
  build();
  w16(L.ipds_off + 12, 0);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "num_dies 0, expected 1..16");
  /* die offset outside the IP table, or into the header */
  build();
  w16(L.ipds_off + 16, (uint16_t)(L.ipds_off + L.ipds_size - 2));
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "die_info[0] (die_id 0) die_offset");
  build();
  w16(L.ipds_off + 16, (uint16_t)(L.ipds_off + 8));
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "die_info[0] (die_id 0) die_offset 0x44, expected 0x8c..");
  /* too many IP entries: the last runs past the table */
  build();
  w16(L.die_off[0] + 2, 9);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "die 0 ip entry 8 of 9");
  /* an entry whose bases run past the table end */
  build();
  size_t last = L.first_ip_off[0] + 7 * (8 + 40);
  buf[last + 3] = 11;
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "die 0 ip entry 7 (hw_id 40 instance 0)");
  ck_assert(strstr(bg_last_error(), "num_base_address 11 (32-bit)") != NULL);
  /* num_base_address beyond what is kept */
  discgen_config_mock(C);
  C->ips[0].nbases = 16;
  build();
  OK(bg_am_discovery_parse(buf, IMG, 0, D));
  ck_assert_uint_eq(D->ip[GC_HWIP].nsegs[0], 16);
  C->ips[0].nbases = 17;
  ck_assert_uint_eq(discgen_build(C, buf, IMG, NULL), 0); /* the generator refuses too */
  C->ips[0].nbases = 16;
  build();
  buf[L.first_ip_off[0] + 3] = 17;
  w16(L.ipds_off + 6, (uint16_t)(L.ipds_size + 4)); /* keep the walk inside: table grows by 4 */
  w16(L.tables_at + 4, 0);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "die 0 ip entry 0 (GC_HWIP instance 0) at offset 0x90: "
        "num_base_address 17, expected 0..16");
}
END_TEST

START_TEST(errors_64bit) {
  /* the 64-bit flag is only defined in IPDS version 4 */
  discgen_config_gfx11(C); /* version 3 */
  build();
  buf[L.ipds_off + 78] = 1;
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT,
        "ip_discovery_header base_addr_64_bit set in version 3, expected 0");
  /* a 32-bit table read as 64-bit: the walk runs off the table, reported as such */
  build();
  w16(L.ipds_off + 4, 4);
  buf[L.ipds_off + 78] = 1;
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "(64-bit) needs 0x");
  ck_assert(strstr(bg_last_error(), "past the IP discovery table end") != NULL);
  /* a 64-bit table read as 32-bit parses but gives different bases: make sure the flag matters */
  discgen_config_gfx942(C);
  build();
  buf[L.ipds_off + 78] = 0;
  refix();
  int r = bg_am_discovery_parse(buf, IMG, 0, D);
  if (r == 0) ck_assert_uint_ne(D->ip[GC_HWIP].bases[1][1], 0xA000 + 0x100000);
}
END_TEST

START_TEST(errors_gc_and_harvest) {
  discgen_config_gfx11(C);
  build();
  w32(L.gc_off, 1); /* tinygrad's mock writes the table enum, not "GC" */
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "gc_info table_id 0x00000001 at offset");
  ck_assert(strstr(bg_last_error(), "expected 0x4347 (GC)") != NULL);
  build();
  w16(L.gc_off + 6, 7);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_ENOTSUP, "gc_info version 1.7");
  ck_assert(strstr(bg_last_error(), "expected 1.0-1.3 or 2.0-2.1") != NULL);
  build();
  w32(L.gc_off + 8, 20);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "gc_info v1.2 size 20 at offset");
  build();
  w32(L.gc_off + 8, 0x10000);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "gc_info v1.2 size 65536");
  build();
  buf[L.gc_off + 40] ^= 0x10;
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "gc_info table checksum");
  build();
  w32(L.harvest_off, 0x12345678);
  refix();
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT,
        "harvest_info_header signature 0x12345678 at offset");
  build();
  buf[L.harvest_off + 20] = 3;
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "harvest table checksum");
  /* harvest table too close to the end */
  discgen_config_mock(C);
  size_t n = build();
  w16(L.tables_at + 16, (uint16_t)(n - 100));
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "harvest table at offset");
  /* gc header too close to the end */
  build();
  w16(L.tables_at + 8, (uint16_t)(n - 8));
  w16(L.tables_at + 12, 0);
  discgen_fix_binary_checksum(buf, IMG);
  FAILS(bg_am_discovery_parse(buf, IMG, 0, D), BG_EFORMAT, "gc_info header at offset");
}
END_TEST

/* ---------------- fuzz ---------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

START_TEST(fuzz) {
  uint8_t *base = malloc(IMG);
  size_t sizes[3];
  uint8_t *bases[3];
  for (int i = 0; i < 3; i++) {
    if (i == 0) discgen_config_mock(C);
    else if (i == 1) discgen_config_gfx11(C);
    else discgen_config_gfx942(C);
    bases[i] = malloc(IMG);
    sizes[i] = discgen_build(C, bases[i], IMG, NULL);
    ck_assert_uint_gt(sizes[i], 0);
  }
  unsigned ok = 0, fail = 0;
  for (int it = 0; it < 30000; it++) {
    int k = (int)(rnd() % 3);
    memcpy(base, bases[k], IMG);
    unsigned nmut = 1 + rnd() % 8;
    for (unsigned j = 0; j < nmut; j++) {
      uint32_t r = rnd();
      size_t pos = r % 4 == 0 ? rnd() % 200 : rnd() % sizes[k]; /* bias to headers */
      switch (rnd() % 5) {
      case 0: base[pos] = (uint8_t)rnd(); break;
      case 1: base[pos] ^= (uint8_t)(1u << (rnd() % 8)); break;
      case 2: if (pos + 1 < IMG) base[pos] = 0xff, base[pos + 1] = 0xff; break;
      case 3: base[pos] = 0; break;
      default: base[pos] = (uint8_t)(base[pos] + 1); break;
      }
    }
    if (rnd() % 2) discgen_fix_table_checksums(base, IMG);
    if (rnd() % 4) discgen_fix_binary_checksum(base, IMG);
    size_t len = IMG;
    if (rnd() % 4 == 0) len = rnd() % (sizes[k] + 16);
    /* exact-size heap copy so ASan catches any read past len */
    uint8_t *m = malloc(len ? len : 1);
    memcpy(m, base, len);
    int r = bg_am_discovery_parse(m, len, (rnd() % 8 == 0) ? BG_AM_DISC_NO_CHECKSUM : 0, D);
    if (r == 0) {
      ok++;
      uint32_t a;
      for (int h = 1; h < MAX_HWIP; h++) (void)bg_am_reg_addr(D, h, rnd() % 20, rnd() % 20, rnd(), &a);
    } else {
      fail++;
      ck_assert(r == -BG_EFORMAT || r == -BG_ENOTSUP);
      ck_assert(strncmp(bg_last_error(), "discovery: ", 11) == 0);
    }
    free(m);
  }
  ck_assert_uint_gt(ok, 100);
  ck_assert_uint_gt(fail, 1000);
  for (int i = 0; i < 3; i++) free(bases[i]);
  free(base);
}
END_TEST

/* ---------------- chips ---------------- */

START_TEST(chips) {
  static const uint16_t ids[] = {0x744c, 0x7480, 0x7550, 0x7551, 0x7590, 0x74a1, 0x75a0, 0x75a8};
  ck_assert_uint_eq(bg_am_chip_count(), sizeof(ids) / sizeof(ids[0]));
  for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
    const bg_chip_info *c = NULL;
    ck_assert_ptr_nonnull(bg_am_chip_lookup(ids[i]));
    OK(bg_am_chip_check(0x1002, ids[i], &c));
    ck_assert_uint_eq(c->device, ids[i]);
    char arch[16];
    OK(bg_am_gfx_arch(c->gc[0], c->gc[1], c->gc[2], arch, sizeof(arch)));
    ck_assert_str_eq(arch, c->arch);
    OK(bg_am_gc_check_supported(c->gc[0], c->gc[1], c->gc[2]));
  }
  ck_assert_str_eq(bg_am_chip_lookup(0x744c)->chip, "navi31");
  ck_assert_str_eq(bg_am_chip_lookup(0x74a1)->arch, "gfx942");
  ck_assert_ptr_null(bg_am_chip_lookup(0x73bf));
  ck_assert_ptr_null(bg_am_chip_at(sizeof(ids) / sizeof(ids[0])));
  const bg_chip_info *c = (const bg_chip_info *)1;
  FAILS(bg_am_chip_check(0x1002, 0x73bf, &c), BG_ENOTSUP, "PCI device 0x1002:0x73bf is not supported by AM");
  ck_assert_ptr_null(c);
  ck_assert(strstr(bg_last_error(), "supported device ids: 0x744c (navi31), 0x7480 (navi33)") != NULL);
  ck_assert(strstr(bg_last_error(), "0x75a8 (mi350)") != NULL);
  FAILS(bg_am_chip_check(0x10de, 0x744c, NULL), BG_ENOTSUP, "vendor 0x10de is not AMD");

  char arch[16];
  OK(bg_am_gfx_arch(11, 0, 0, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx1100");
  OK(bg_am_gfx_arch(12, 0, 1, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx1201");
  OK(bg_am_gfx_arch(9, 4, 3, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx942");
  OK(bg_am_gfx_arch(9, 5, 0, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx950");
  OK(bg_am_gfx_arch(9, 4, 2, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx942");
  OK(bg_am_gfx_arch(10, 3, 0, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx1030");
  OK(bg_am_gfx_arch(9, 0, 10, arch, sizeof(arch)));
  ck_assert_str_eq(arch, "gfx90a");
  OK(bg_am_gfx_arch(11, 0, 3, arch, sizeof(arch))); /* no remap: Linux has a separate gc_11_0_3 header */
  ck_assert_str_eq(arch, "gfx1103");
  FAILS(bg_am_gfx_arch(12, 16, 0, arch, sizeof(arch)), BG_EINVAL, "GC IP 12.16.0 cannot be written");
  FAILS(bg_am_gfx_arch(11, 0, 0, arch, 7), BG_EINVAL, "too small");
  ck_assert_uint_eq(bg_am_gfx_target_version(9, 4, 3), 90402);
  ck_assert_uint_eq(bg_am_gfx_target_version(12, 0, 1), 120001);
  ck_assert_uint_eq(bg_am_gfx_target_version(9, 5, 0), 90500);
  FAILS(bg_am_gc_check_supported(10, 3, 0), BG_ENOTSUP, "GC IP 10.3.0 (gfx1030) is not supported");
  FAILS(bg_am_gc_check_supported(9, 4, 2), BG_ENOTSUP, "GC IP 9.4.2 (gfx942) is not supported");
  FAILS(bg_am_gc_check_supported(9, 0, 10), BG_ENOTSUP, "gfx90a");
  OK(bg_am_gc_check_supported(9, 4, 3));
  OK(bg_am_gc_check_supported(11, 5, 0));
}
END_TEST

int main(void) {
  Suite *s = suite_create("am-discovery");
  TCase *tc = tcase_create("discovery");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, mock_roundtrip);
  tcase_add_test(tc, mock_reference_addresses);
  tcase_add_test(tc, gfx11_roundtrip);
  tcase_add_test(tc, gfx942_roundtrip);
  tcase_add_test(tc, harvest);
  tcase_add_test(tc, gc_info_versions);
  tcase_add_test(tc, no_gc_info_and_location);
  tcase_add_test(tc, no_checksum_flag);
  tcase_add_test(tc, reg_addr_errors);
  tcase_add_test(tc, errors_binary_header);
  tcase_add_test(tc, errors_table_offsets);
  tcase_add_test(tc, errors_ipds);
  tcase_add_test(tc, errors_64bit);
  tcase_add_test(tc, errors_gc_and_harvest);
  tcase_add_test(tc, fuzz);
  tcase_add_test(tc, chips);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
