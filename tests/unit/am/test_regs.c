/* tests/unit/am/test_regs.c: the generated register tables (am/regs/) and their look-up API (am/am_regs.h):
 * known offsets per version, absolute addresses on the reference mock discovery table, fields,
 * version selection and its errors, table sortedness, and that every kept register matches a name filter of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs
 * name filter; the compile-time ids (am/regs/am_reg_ids.h) against values copied from Linux's asic_reg headers,
 * and a field of another register rejected with both named. */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_regs.h"
#include "am/discovery.h"
#include "baregpu/error.h"
#include "discovery_gen.h"
#include "../check_helpers.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct bg_am_regtab *const ALL[] = {BG_AM_REGTABS};

static const struct bg_am_regtab *tab(const char *name) {
  const struct bg_am_regtab *t = bg_am_regtab_by_name(name);
  ck_assert_msg(t != NULL, "no table %s", name);
  return t;
}

static const struct bg_am_reg *reg(const char *tname, enum bg_am_reg_id id) {
  const struct bg_am_reg *r = NULL;
  OK(bg_am_reg_get(tab(tname), id, &r));
  return r;
}

/* ---------------- known offsets per version ---------------- */

struct known { const char *tab; enum bg_am_reg_id name; uint32_t off; unsigned seg; };
static const struct known KNOWN[] = {
  {"gc_11_0_0", regSCRATCH_REG6, 0x2046, 1}, {"gc_11_0_0", regSCRATCH_REG7, 0x2047, 1},
  {"gc_12_0_0", regSCRATCH_REG6, 0x2046, 1}, {"gc_12_0_0", regSCRATCH_REG7, 0x2047, 1},
  /* CDNA names normalised (Linux regVM_L2_CNTL 0x0820 / 0x0b60), and the tinygrad overlay register */
  {"gc_9_4_3", regGCVM_L2_CNTL, 0x0820, 0}, {"gc_9_4_3", regCOMPUTE_CURRENT_LOGIC_XCC_ID, 0x0e25, 0},
  {"mmhub_1_8_0", regMMVM_L2_CNTL, 0x0b60, 0}, {"mmhub_1_8_0", regMMMC_VM_FB_LOCATION_BASE, 0x0c9c, 0},
  {"mmhub_3_0_0", regMMVM_L2_CNTL, 0x0700, 0}, {"mmhub_3_0_2", regMMVM_L2_CNTL, 0x0680, 0},
  /* PSP mailbox: MP0 on 13.0.x, MPASP on 14.0.x */
  {"mp_13_0_0", regMP0_SMN_C2PMSG_35, 0x63, 0}, {"mp_13_0_0", regMP0_SMN_C2PMSG_36, 0x64, 0},
  {"mp_13_0_0", regMP0_SMN_C2PMSG_64, 0x80, 0}, {"mp_13_0_0", regMP0_SMN_C2PMSG_67, 0x83, 0},
  {"mp_13_0_0", regMP0_SMN_C2PMSG_69, 0x85, 0}, {"mp_13_0_0", regMP0_SMN_C2PMSG_70, 0x86, 0},
  {"mp_13_0_0", regMP0_SMN_C2PMSG_71, 0x87, 0}, {"mp_13_0_0", regMP0_SMN_C2PMSG_81, 0x91, 0},
  {"mp_14_0_2", regMPASP_SMN_C2PMSG_35, 0x63, 0}, {"mp_14_0_2", regMPASP_SMN_C2PMSG_36, 0x64, 0},
  {"mp_14_0_2", regMPASP_SMN_C2PMSG_64, 0x80, 0}, {"mp_14_0_2", regMPASP_SMN_C2PMSG_67, 0x83, 0},
  {"mp_14_0_2", regMPASP_SMN_C2PMSG_69, 0x85, 0}, {"mp_14_0_2", regMPASP_SMN_C2PMSG_70, 0x86, 0},
  {"mp_14_0_2", regMPASP_SMN_C2PMSG_71, 0x87, 0}, {"mp_14_0_2", regMPASP_SMN_C2PMSG_81, 0x91, 0},
  /* SMU mailbox (bound to MP1 bases) */
  {"mp_11_0_0", mmMP1_SMN_C2PMSG_53, 0x275, 0}, {"mp_11_0_0", mmMP1_SMN_C2PMSG_54, 0x276, 0},
  {"mp_11_0_0", mmMP1_SMN_C2PMSG_66, 0x282, 0}, {"mp_11_0_0", mmMP1_SMN_C2PMSG_75, 0x28b, 0},
  {"mp_11_0_0", mmMP1_SMN_C2PMSG_82, 0x292, 0}, {"mp_11_0_0", mmMP1_SMN_C2PMSG_90, 0x29a, 0},
  /* RSMU index/data (indirect register access) */
  {"nbif_6_3_1", regBIF_BX_PF0_RSMU_INDEX, 0x0, 1}, {"nbif_6_3_1", regBIF_BX_PF0_RSMU_DATA, 0x1, 1},
  {"nbio_4_3_0", regBIF_BX_PF0_RSMU_INDEX, 0x0, 1}, {"nbio_4_3_0", regBIF_BX_PF0_RSMU_DATA, 0x1, 1},
  {"nbio_7_9_0", regBIF_BX_PF0_RSMU_INDEX, 0x0, 1}, {"nbio_7_9_0", regBIF_BX_PF0_RSMU_DATA, 0x1, 1},
  /* far beyond BAR5 on nbif 6.3.1 (segment 5 base 0x4040000) */
  {"nbif_6_3_1", regRCC_DEV0_EPF2_STRAP2, 0xd102, 5},
};

START_TEST(known_offsets) {
  for (size_t i = 0; i < N(KNOWN); i++) {
    const struct known *k = &KNOWN[i];
    const struct bg_am_reg *r = reg(k->tab, k->name);
    ck_assert_msg(r->offset == k->off && r->base_idx == k->seg, "%s %s: 0x%x seg %u, want 0x%x seg %u", k->tab,
                  bg_am_reg_id_name(k->name), r->offset, r->base_idx, k->off, k->seg);
  }
  /* osssys 6.0.0: IH_RB_RPTR/WPTR are +3/+4 from IH_RB_CNTL; osssys 7.0.0: +1/+2 (Linux osssys_6_0_0_offset.h, osssys_7_0_0_offset.h) */
  const struct bg_am_reg *c6 = reg("osssys_6_0_0", regIH_RB_CNTL);
  ck_assert_uint_eq(reg("osssys_6_0_0", regIH_RB_RPTR)->offset, c6->offset + 3);
  ck_assert_uint_eq(reg("osssys_6_0_0", regIH_RB_WPTR)->offset, c6->offset + 4);
  const struct bg_am_reg *c7 = reg("osssys_7_0_0", regIH_RB_CNTL);
  ck_assert_uint_eq(reg("osssys_7_0_0", regIH_RB_RPTR)->offset, c7->offset + 1);
  ck_assert_uint_eq(reg("osssys_7_0_0", regIH_RB_WPTR)->offset, c7->offset + 2);
  /* a register of another version or IP is absent in this table; bg_am_reg_find records nothing */
  bg_clear_error();
  ck_assert_ptr_null(bg_am_reg_find(tab("gc_9_4_3"), regRLC_RLCS_BOOTLOAD_STATUS)); /* gfx9: no RLC autoload */
  ck_assert_ptr_null(bg_am_reg_find(tab("gc_11_0_0"), regSDMA_CNTL));               /* sdma_4_4_2 only */
  ck_assert_ptr_null(bg_am_reg_find(tab("gc_11_0_0"), (enum bg_am_reg_id)BG_AM_REG_ID_COUNT));
  ck_assert_ptr_null(bg_am_reg_find(NULL, regGCVM_L2_CNTL));
  ck_assert_str_eq(bg_last_error(), "");
  const struct bg_am_reg *r = NULL;
  FAILS(bg_am_reg_get(tab("gc_12_0_0"), regSDMA_CNTL, &r), BG_EINVAL, "regs: gc_12_0_0 has no register regSDMA_CNTL");
  ck_assert_ptr_null(r);
  /* names -> ids (tools and tests only): registers outside the filters have no id, names carry the prefix */
  enum bg_am_reg_id id = BG_AM_REG_ID_COUNT;
  OK(bg_am_reg_id_by_name("regGCVM_L2_CNTL", &id));
  ck_assert_int_eq(id, regGCVM_L2_CNTL);
  OK(bg_am_reg_id_by_name("mmMP1_SMN_C2PMSG_66", &id));
  ck_assert_int_eq(id, mmMP1_SMN_C2PMSG_66);
  FAILS(bg_am_reg_id_by_name("regCP_RB0_BASE", &id), BG_EINVAL, "no register named 'regCP_RB0_BASE'");
  FAILS(bg_am_reg_id_by_name("regVM_L2_CNTL", &id), BG_EINVAL, "regVM_L2_CNTL"); /* renamed GCVM/MMVM */
  FAILS(bg_am_reg_id_by_name("GCVM_L2_CNTL", &id), BG_EINVAL, "GCVM_L2_CNTL");
  FAILS(bg_am_reg_id_by_name("", &id), BG_EINVAL, "''");
  ck_assert_ptr_null(bg_am_regtab_by_name("gc_10_3_0"));
}
END_TEST

/* ---------------- absolute addresses on the reference mock ---------------- */

struct absref { int hwip; enum bg_am_reg_id name; uint32_t addr; };
static const struct absref APPA[] = {
  {MP0_HWIP, regMPASP_SMN_C2PMSG_35, 0x16063}, {MP0_HWIP, regMPASP_SMN_C2PMSG_36, 0x16064},
  {MP0_HWIP, regMPASP_SMN_C2PMSG_64, 0x16080}, {MP0_HWIP, regMPASP_SMN_C2PMSG_67, 0x16083},
  {MP0_HWIP, regMPASP_SMN_C2PMSG_69, 0x16085}, {MP0_HWIP, regMPASP_SMN_C2PMSG_70, 0x16086},
  {MP0_HWIP, regMPASP_SMN_C2PMSG_71, 0x16087}, {MP0_HWIP, regMPASP_SMN_C2PMSG_81, 0x16091},
  {MP1_HWIP, mmMP1_SMN_C2PMSG_53, 0x16275}, {MP1_HWIP, mmMP1_SMN_C2PMSG_54, 0x16276},
  {MP1_HWIP, mmMP1_SMN_C2PMSG_66, 0x16282}, {MP1_HWIP, mmMP1_SMN_C2PMSG_75, 0x1628b},
  {MP1_HWIP, mmMP1_SMN_C2PMSG_82, 0x16292}, {MP1_HWIP, mmMP1_SMN_C2PMSG_90, 0x1629a},
  {MMHUB_HWIP, regMMMC_VM_FB_LOCATION_BASE, 0x1a554}, {MMHUB_HWIP, regMMMC_VM_FB_LOCATION_TOP, 0x1a555},
  {MMHUB_HWIP, regMMMC_VM_SYSTEM_APERTURE_LOW_ADDR, 0x1a559},
  {MMHUB_HWIP, regMMMC_VM_SYSTEM_APERTURE_HIGH_ADDR, 0x1a55a},
  {MMHUB_HWIP, regMMVM_INVALIDATE_ENG17_SEM, 0x1a586}, {MMHUB_HWIP, regMMVM_INVALIDATE_ENG17_REQ, 0x1a598},
  {MMHUB_HWIP, regMMVM_INVALIDATE_ENG17_ACK, 0x1a5aa},
  {GC_HWIP, regGCVM_INVALIDATE_ENG17_REQ, 0x28b8}, {GC_HWIP, regGCVM_INVALIDATE_ENG17_ACK, 0x28ca},
  {GC_HWIP, regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32, 0x28ef},
  {GC_HWIP, regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32, 0x28f0},
  {GC_HWIP, regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32, 0x290f},
  {GC_HWIP, regGCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32, 0x2910},
  {GC_HWIP, regGCVM_L2_PROTECTION_FAULT_STATUS_LO32, 0x2830},
  {GC_HWIP, regCP_STAT, 0x21a0}, {GC_HWIP, regRLC_RLCS_BOOTLOAD_STATUS, 0xee7c},
  {GC_HWIP, regRLC_SAFE_MODE, 0xa980}, {GC_HWIP, regGRBM_GFX_CNTL, 0xa900},
  {GC_HWIP, regSCRATCH_REG6, 0xc046}, {GC_HWIP, regSCRATCH_REG7, 0xc047},
  {GC_HWIP, regCP_MQD_BASE_ADDR, 0x3209}, {GC_HWIP, regCP_HQD_PQ_WPTR_HI, 0x3240},
  {GC_HWIP, regCP_HQD_ACTIVE, 0x320b}, {GC_HWIP, regCP_HQD_PQ_BASE, 0x3211},
  {GC_HWIP, regCP_HQD_PQ_BASE_HI, 0x3212}, {GC_HWIP, regCP_HQD_PQ_RPTR_REPORT_ADDR, 0x3214},
  {GC_HWIP, regCP_HQD_PQ_RPTR_REPORT_ADDR_HI, 0x3215}, {GC_HWIP, regCP_HQD_PQ_WPTR_POLL_ADDR, 0x3216},
  {GC_HWIP, regCP_HQD_PQ_WPTR_POLL_ADDR_HI, 0x3217}, {GC_HWIP, regCP_HQD_PQ_CONTROL, 0x321a},
  {GC_HWIP, regCP_HQD_DEQUEUE_REQUEST, 0x3221},
  {GC_HWIP, regSDMA0_QUEUE0_RB_CNTL, 0x12e0}, {GC_HWIP, regSDMA0_QUEUE0_RB_BASE, 0x12e1},
  {GC_HWIP, regSDMA0_QUEUE0_RB_BASE_HI, 0x12e2}, {GC_HWIP, regSDMA0_QUEUE0_RB_RPTR_ADDR_LO, 0x12e7},
  {GC_HWIP, regSDMA0_QUEUE0_RB_RPTR_ADDR_HI, 0x12e8}, {GC_HWIP, regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, 0x12f8},
  {GC_HWIP, regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, 0x12f9},
  {NBIO_HWIP, regBIF_BX_PF0_RSMU_INDEX, 0x14}, {NBIO_HWIP, regBIF_BX_PF0_RSMU_DATA, 0x15},
  {NBIO_HWIP, regBIF_BX0_BIF_DOORBELL_INT_CNTL, 0xe1e}, {NBIO_HWIP, regBIF_BX_PF0_GPU_HDP_FLUSH_REQ, 0xe26},
  {NBIO_HWIP, regBIF_BX_PF0_GPU_HDP_FLUSH_DONE, 0xe27}, {NBIO_HWIP, regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL, 0xe4d},
  {NBIO_HWIP, regRCC_DEV0_EPF2_STRAP2, 0x4040000 + 0xd102},
  {OSSSYS_HWIP, regIH_RB_CNTL, 0x1120}, {OSSSYS_HWIP, regIH_RB_RPTR, 0x1121},
  {OSSSYS_HWIP, regIH_RB_WPTR, 0x1122},
};

static const struct bg_am_regtab *set_tab(const struct bg_am_regset *s, int hwip) {
  switch (hwip) {
  case GC_HWIP: return s->gc;
  case MMHUB_HWIP: return s->mmhub;
  case NBIO_HWIP: return s->nbio;
  case MP0_HWIP: return s->mp;
  case MP1_HWIP: return s->smu;
  case HDP_HWIP: return s->hdp;
  case OSSSYS_HWIP: return s->osssys;
  default: return NULL;
  }
}

static void parse_config(void (*cfg)(struct discgen_config *), struct bg_am_discovery *d) {
  struct discgen_config *c = calloc(1, sizeof(*c));
  uint8_t *img = calloc(1, BG_AM_DISC_TABLE_SIZE);
  ck_assert(c && img);
  cfg(c);
  ck_assert_uint_gt(discgen_build(c, img, BG_AM_DISC_TABLE_SIZE, NULL), 0);
  OK(bg_am_discovery_parse(img, BG_AM_DISC_TABLE_SIZE, 0, d));
  free(c), free(img);
}

START_TEST(appendix_a_addresses) {
  struct bg_am_discovery *d = calloc(1, sizeof(*d));
  ck_assert(d);
  parse_config(discgen_config_mock, d);
  struct bg_am_regset s;
  OK(bg_am_regs_select(d, &s));
  ck_assert_str_eq(s.gc->name, "gc_12_0_0");
  ck_assert_str_eq(s.mmhub->name, "mmhub_4_1_0");
  ck_assert_str_eq(s.nbio->name, "nbif_6_3_1");
  ck_assert_str_eq(s.mp->name, "mp_14_0_2");
  ck_assert_str_eq(s.smu->name, "mp_11_0_0");
  ck_assert_str_eq(s.hdp->name, "hdp_7_0_0");
  ck_assert_str_eq(s.osssys->name, "osssys_7_0_0");
  ck_assert_ptr_null(s.sdma); /* SDMA 7.0.0: SDMA registers are in gc_12_0_0 */
  for (size_t i = 0; i < N(APPA); i++) {
    uint32_t a = 0;
    OK(bg_am_reg_abs_id(d, APPA[i].hwip, 0, set_tab(&s, APPA[i].hwip), APPA[i].name, &a));
    ck_assert_msg(a == APPA[i].addr, "%s: 0x%x, want 0x%x", bg_am_reg_id_name(APPA[i].name), a, APPA[i].addr);
  }
  uint32_t a = 0;
  FAILS(bg_am_reg_abs_id(d, GC_HWIP, 1, s.gc, regCP_STAT, &a), BG_EINVAL,
        "regs: regCP_STAT (segment 0, offset 0x");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "GC_HWIP instance 1 is not in the discovery table"));
  FAILS(bg_am_reg_abs_id(d, GC_HWIP, 0, s.gc, regSDMA_GFX_RB_CNTL, &a), BG_EINVAL,
        "gc_12_0_0 has no register regSDMA_GFX_RB_CNTL");
  FAILS(bg_am_reg_abs(d, GC_HWIP, 0, NULL, &a), BG_EINVAL, "NULL");
  free(d);
}
END_TEST

START_TEST(select_from_discovery) {
  struct bg_am_discovery *d = calloc(1, sizeof(*d));
  ck_assert(d);
  struct bg_am_regset s;
  parse_config(discgen_config_gfx11, d);
  OK(bg_am_regs_select(d, &s));
  ck_assert_str_eq(s.gc->name, "gc_11_0_0");
  ck_assert_str_eq(s.mmhub->name, "mmhub_3_0_0");
  ck_assert_str_eq(s.nbio->name, "nbio_4_3_0");
  ck_assert_str_eq(s.mp->name, "mp_13_0_0");
  ck_assert_str_eq(s.smu->name, "mp_11_0_0");
  ck_assert_str_eq(s.hdp->name, "hdp_6_0_0");
  ck_assert_str_eq(s.osssys->name, "osssys_6_0_0");
  ck_assert_ptr_null(s.sdma);

  parse_config(discgen_config_gfx942, d);
  OK(bg_am_regs_select(d, &s));
  ck_assert_str_eq(s.gc->name, "gc_9_4_3");
  ck_assert_str_eq(s.mmhub->name, "mmhub_1_8_0");
  ck_assert_str_eq(s.nbio->name, "nbio_7_9_0");
  ck_assert_str_eq(s.mp->name, "mp_13_0_0"); /* MP0 13.0.6 */
  ck_assert_str_eq(s.smu->name, "mp_11_0_0");
  ck_assert_str_eq(s.hdp->name, "hdp_4_4_2");
  ck_assert_str_eq(s.osssys->name, "osssys_4_4_2");
  ck_assert_ptr_nonnull(s.sdma);
  ck_assert_str_eq(s.sdma->name, "sdma_4_4_2");
  /* multi-instance: XCC 3 and SDMA 5 use their own bases */
  uint32_t a = 0, b = 0;
  const struct bg_am_reg *r = reg("gc_9_4_3", regGCVM_L2_CNTL);
  OK(bg_am_reg_abs(d, GC_HWIP, 3, r, &a));
  OK(bg_am_reg_addr(d, GC_HWIP, 3, r->base_idx, r->offset, &b));
  ck_assert_uint_eq(a, b);
  r = reg("sdma_4_4_2", regSDMA_GFX_RB_CNTL);
  OK(bg_am_reg_abs(d, SDMA0_HWIP, 5, r, &a));
  OK(bg_am_reg_addr(d, SDMA0_HWIP, 5, r->base_idx, r->offset, &b));
  ck_assert_uint_eq(a, b);

  /* an IP the map does not cover is named with its version */
  d->ip[MMHUB_HWIP].maj = 3, d->ip[MMHUB_HWIP].min = 3, d->ip[MMHUB_HWIP].rev = 0;
  FAILS(bg_am_regs_select(d, &s), BG_ENOTSUP, "regs: no register table for MMHUB_HWIP 3.3.0");
  ck_assert_ptr_null(s.gc);
  d->ip[MMHUB_HWIP].present = false;
  FAILS(bg_am_regs_select(d, &s), BG_EINVAL, "regs: MMHUB_HWIP is not in the discovery table");
  FAILS(bg_am_regs_select(NULL, &s), BG_EINVAL, "NULL");
  free(d);
}
END_TEST

/* ---------------- version map ---------------- */

START_TEST(version_map) {
  struct { int hwip; unsigned v[3]; const char *tab; } want[] = {
    {GC_HWIP, {9, 4, 3}, "gc_9_4_3"},        {GC_HWIP, {9, 5, 0}, "gc_9_4_3"},
    {GC_HWIP, {11, 0, 0}, "gc_11_0_0"},      {GC_HWIP, {11, 0, 2}, "gc_11_0_0"},
    {GC_HWIP, {12, 0, 0}, "gc_12_0_0"},      {GC_HWIP, {12, 0, 1}, "gc_12_0_0"},
    {MMHUB_HWIP, {1, 8, 0}, "mmhub_1_8_0"},  {MMHUB_HWIP, {1, 8, 1}, "mmhub_1_8_0"},
    {MMHUB_HWIP, {3, 0, 0}, "mmhub_3_0_0"},  {MMHUB_HWIP, {3, 0, 1}, "mmhub_3_0_1"},
    {MMHUB_HWIP, {3, 0, 2}, "mmhub_3_0_2"},  {MMHUB_HWIP, {4, 1, 0}, "mmhub_4_1_0"},
    {NBIO_HWIP, {4, 3, 0}, "nbio_4_3_0"},    {NBIO_HWIP, {4, 3, 1}, "nbio_4_3_0"},
    {NBIO_HWIP, {7, 9, 1}, "nbio_7_9_0"},    {NBIO_HWIP, {6, 3, 1}, "nbif_6_3_1"},
    {NBIF_HWIP, {6, 3, 1}, "nbif_6_3_1"},    {MP0_HWIP, {13, 0, 0}, "mp_13_0_0"},
    {MP0_HWIP, {13, 0, 7}, "mp_13_0_0"},     {MP0_HWIP, {13, 0, 12}, "mp_13_0_0"},
    {MP0_HWIP, {14, 0, 2}, "mp_14_0_2"},     {MP0_HWIP, {14, 0, 3}, "mp_14_0_2"},
    {MP1_HWIP, {13, 0, 0}, "mp_11_0_0"},     {MP1_HWIP, {14, 0, 3}, "mp_11_0_0"},
    {HDP_HWIP, {4, 4, 2}, "hdp_4_4_2"},      {HDP_HWIP, {6, 0, 0}, "hdp_6_0_0"},
    {HDP_HWIP, {7, 0, 0}, "hdp_7_0_0"},      {OSSSYS_HWIP, {4, 4, 2}, "osssys_4_4_2"},
    {OSSSYS_HWIP, {6, 0, 0}, "osssys_6_0_0"}, {OSSSYS_HWIP, {7, 0, 0}, "osssys_7_0_0"},
    {SDMA0_HWIP, {4, 4, 2}, "sdma_4_4_2"},   {SDMA3_HWIP, {4, 4, 4}, "sdma_4_4_2"},
  };
  for (size_t i = 0; i < N(want); i++) {
    const struct bg_am_regtab *t = NULL;
    OK(bg_am_regtab_select(want[i].hwip, want[i].v[0], want[i].v[1], want[i].v[2], &t));
    ck_assert_msg(t && strcmp(t->name, want[i].tab) == 0, "%s %u.%u.%u -> %s, want %s",
                  bg_am_hwip_name(want[i].hwip), want[i].v[0], want[i].v[1], want[i].v[2], t ? t->name : "NULL",
                  want[i].tab);
  }
  const struct bg_am_regtab *t = &bg_am_regtab_gc_9_4_3;
  FAILS(bg_am_regtab_select(GC_HWIP, 10, 3, 0, &t), BG_ENOTSUP, "regs: no register table for GC_HWIP 10.3.0");
  ck_assert_ptr_null(t);
  FAILS(bg_am_regtab_select(GC_HWIP, 11, 0, 3, &t), BG_ENOTSUP, "11.0.0-11.0.2 (gc_11_0_0)");
  FAILS(bg_am_regtab_select(GC_HWIP, 9, 4, 2, &t), BG_ENOTSUP, "GC_HWIP 9.4.2");
  FAILS(bg_am_regtab_select(MP0_HWIP, 12, 0, 0, &t), BG_ENOTSUP, "13.0.x (mp_13_0_0), 14.0.x (mp_14_0_2)");
  FAILS(bg_am_regtab_select(NBIO_HWIP, 7, 2, 0, &t), BG_ENOTSUP, "NBIO_HWIP 7.2.0");
  FAILS(bg_am_regtab_select(SDMA0_HWIP, 6, 0, 0, &t), BG_ENOTSUP, "SDMA0_HWIP 6.0.0");
  FAILS(bg_am_regtab_select(VCN_HWIP, 4, 0, 0, &t), BG_ENOTSUP, "regs: VCN_HWIP (version 4.0.0) has no register table");
  FAILS(bg_am_regtab_select(GC_HWIP, 11, 0, 0, NULL), BG_EINVAL, "NULL");
}
END_TEST

/* ---------------- fields ---------------- */

START_TEST(fields) {
  unsigned sh = 99;
  uint32_t m = 0;
  const struct bg_am_reg *r = reg("gc_11_0_0", regGCVM_L2_CNTL);
  OK(bg_am_reg_field(r, GCVM_L2_CNTL__ENABLE_L2_CACHE, &sh, &m));
  ck_assert_uint_eq(sh, 0); ck_assert_uint_eq(m, 0x1);
  /* CDNA field names follow the renamed register */
  r = reg("gc_9_4_3", regGCVM_L2_CNTL);
  OK(bg_am_reg_field(r, GCVM_L2_CNTL__ENABLE_L2_CACHE, &sh, &m));
  ck_assert_uint_eq(sh, 0); ck_assert_uint_eq(m, 0x1);
  r = reg("mmhub_1_8_0", regMMVM_L2_CNTL);
  OK(bg_am_reg_field(r, MMVM_L2_CNTL__ENABLE_L2_CACHE, NULL, NULL));

  r = reg("gc_12_0_0", regGCVM_CONTEXT0_CNTL);
  OK(bg_am_reg_field(r, GCVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH, &sh, &m));
  ck_assert_uint_eq(sh, 1); ck_assert_uint_eq(m, 0x6);
  uint32_t v = 0xffffffffu, f = 0;
  OK(bg_am_reg_field_set(r, &v, GCVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH, 2));
  ck_assert_uint_eq(v, 0xfffffffdu);
  OK(bg_am_reg_field_get(r, v, GCVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH, &f));
  ck_assert_uint_eq(f, 2);
  OK(bg_am_reg_field_set(r, &v, GCVM_CONTEXT0_CNTL__ENABLE_CONTEXT, 0));
  OK(bg_am_reg_field_get(r, v, GCVM_CONTEXT0_CNTL__ENABLE_CONTEXT, &f));
  ck_assert_uint_eq(f, 0);
  FAILS(bg_am_reg_field_set(r, &v, GCVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH, 4), BG_EINVAL,
        "value 0x4 does not fit regGCVM_CONTEXT0_CNTL.PAGE_TABLE_DEPTH (max 0x3)");
  ck_assert_uint_eq(v, 0xfffffffcu); /* unchanged */
  /* a field of the union that this version lacks (gc 12.0.0 only) */
  r = reg("gc_11_0_0", regGCVM_L2_CNTL5);
  FAILS(bg_am_reg_field(r, GCVM_L2_CNTL5__UTCL2_ATC_INVREQ_REPEATER_FGCG_OFF, &sh, &m), BG_EINVAL,
        "regs: register regGCVM_L2_CNTL5 has no field UTCL2_ATC_INVREQ_REPEATER_FGCG_OFF in this version");
  OK(bg_am_reg_field(reg("gc_12_0_0", regGCVM_L2_CNTL5), GCVM_L2_CNTL5__UTCL2_ATC_INVREQ_REPEATER_FGCG_OFF, &sh, &m));
  FAILS(bg_am_reg_field_set(NULL, &v, GCVM_L2_CNTL__ENABLE_L2_CACHE, 0), BG_EINVAL, "NULL");

  /* a full-width field and the SMU mailbox (mm prefix: mmMP1_SMN_C2PMSG_66 also exists as regMP1_... in mp 13) */
  r = reg("mp_11_0_0", mmMP1_SMN_C2PMSG_66);
  OK(bg_am_reg_field(r, mmMP1_SMN_C2PMSG_66__CONTENT, &sh, &m));
  ck_assert_uint_eq(sh, 0); ck_assert_uint_eq(m, 0xffffffffu);
  v = 0;
  OK(bg_am_reg_field_set(r, &v, mmMP1_SMN_C2PMSG_66__CONTENT, 0xdeadbeefu));
  ck_assert_uint_eq(v, 0xdeadbeefu);
  /* RLC_SAFE_MODE CMD/MESSAGE as the GFX block uses them, through the typed list */
  r = reg("gc_11_0_0", regRLC_SAFE_MODE);
  v = 0;
  const struct bg_am_fv fv[] = {BG_AM_FV(RLC_SAFE_MODE__CMD, 1), BG_AM_FV(RLC_SAFE_MODE__MESSAGE, 1)};
  OK(bg_am_reg_fields_set(r, &v, fv, N(fv)));
  ck_assert_uint_eq(v, 0x3);
}
END_TEST

/* A field id names its register (id >> 8): a field of another register is rejected with both named, also when
 * the other register has a field at the same index. */
START_TEST(field_of_other_register) {
  const struct bg_am_reg *r = reg("gc_11_0_0", regGCVM_L2_CNTL);
  uint32_t v = 0, f = 0;
  unsigned sh;
  ck_assert_int_eq(BG_AM_FIELD_REG(GCVM_L2_CNTL2__INVALIDATE_L2_CACHE), regGCVM_L2_CNTL2);
  ck_assert_int_eq(BG_AM_FIELD_REG(GCVM_L2_CNTL__ENABLE_L2_CACHE), regGCVM_L2_CNTL);
  FAILS(bg_am_reg_field_set(r, &v, GCVM_L2_CNTL2__INVALIDATE_L2_CACHE, 1), BG_EINVAL,
        "regs: field INVALIDATE_L2_CACHE of register regGCVM_L2_CNTL2 used with register regGCVM_L2_CNTL");
  ck_assert_uint_eq(v, 0);
  /* the MM hub's field on the GC hub's register: same field name, other register */
  FAILS(bg_am_reg_field_get(r, 0xffffffffu, MMVM_L2_CNTL__ENABLE_L2_CACHE, &f), BG_EINVAL,
        "field ENABLE_L2_CACHE of register regMMVM_L2_CNTL used with register regGCVM_L2_CNTL");
  FAILS(bg_am_reg_field(r, GCVM_L2_CNTL3__BANK_SELECT, &sh, NULL), BG_EINVAL, "regGCVM_L2_CNTL3");
  ck_assert_ptr_null(bg_am_reg_field_find(r, MMVM_L2_CNTL__ENABLE_L2_CACHE));
  /* in a list: the first bad entry stops it */
  const struct bg_am_fv fv[] = {BG_AM_FV(GCVM_L2_CNTL__ENABLE_L2_CACHE, 1), BG_AM_FV(GCVM_CONTEXT0_CNTL__ENABLE_CONTEXT, 1)};
  FAILS(bg_am_reg_fields_set(r, &v, fv, N(fv)), BG_EINVAL,
        "field ENABLE_CONTEXT of register regGCVM_CONTEXT0_CNTL used with register regGCVM_L2_CNTL");
}
END_TEST

/* The ids against Linux's asic_reg headers (6.12): offsets, _BASE_IDX, __SHIFT and _MASK copied from
 * gc_9_4_3/gc_11_0_0/gc_12_0_0_offset.h and _sh_mask.h, osssys_6_0_0/7_0_0, sdma_4_4_2, mp_11_0. */
struct linux_reg { const char *tab; enum bg_am_reg_id id; uint32_t off; unsigned seg; };
struct linux_field { const char *tab; enum bg_am_field_id id; unsigned shift; uint32_t mask; };
static const struct linux_reg LINUX_REGS[] = {
  {"gc_11_0_0", regGCVM_L2_CNTL, 0x15bc, 0}, /* regGCVM_L2_CNTL */
  {"gc_12_0_0", regGCVM_L2_CNTL, 0x15c4, 0},
  {"gc_9_4_3", regGCVM_L2_CNTL, 0x0820, 0},   /* regVM_L2_CNTL */
  {"osssys_6_0_0", regIH_RB_CNTL, 0x0080, 0}, {"osssys_7_0_0", regIH_RB_CNTL, 0x0080, 0},
  {"sdma_4_4_2", regSDMA_GFX_RB_CNTL, 0x0080, 0},
  {"mp_11_0_0", mmMP1_SMN_C2PMSG_66, 0x0282, 0},
};
static const struct linux_field LINUX_FIELDS[] = {
  {"gc_11_0_0", GCVM_L2_CNTL__ENABLE_L2_CACHE, 0, 0x1},
  {"gc_11_0_0", GCVM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE, 8, 0x100},
  {"gc_12_0_0", GCVM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE, 8, 0x100},
  {"gc_9_4_3", GCVM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE, 8, 0x100}, /* VM_L2_CNTL__... */
  {"osssys_6_0_0", IH_RB_CNTL__RB_SIZE, 1, 0x3e}, {"osssys_7_0_0", IH_RB_CNTL__RB_SIZE, 1, 0x3e},
  {"sdma_4_4_2", SDMA_GFX_RB_CNTL__RB_SIZE, 1, 0x3e},
};

START_TEST(ids_match_linux) {
  for (size_t i = 0; i < N(LINUX_REGS); i++) {
    const struct linux_reg *k = &LINUX_REGS[i];
    const struct bg_am_reg *r = reg(k->tab, k->id);
    ck_assert_msg(r->id == (unsigned)k->id && r->offset == k->off && r->base_idx == k->seg,
                  "%s %s: id %u 0x%x seg %u, want 0x%x seg %u", k->tab, bg_am_reg_id_name(k->id), r->id, r->offset,
                  r->base_idx, k->off, k->seg);
    ck_assert_str_eq(r->name, bg_am_reg_id_name(k->id));
  }
  for (size_t i = 0; i < N(LINUX_FIELDS); i++) {
    const struct linux_field *k = &LINUX_FIELDS[i];
    unsigned sh = 99;
    uint32_t m = 0;
    OK(bg_am_reg_field(reg(k->tab, BG_AM_FIELD_REG(k->id)), k->id, &sh, &m));
    ck_assert_msg(sh == k->shift && m == k->mask, "%s %s: shift %u mask 0x%x, want %u 0x%x", k->tab,
                  bg_am_field_id_name(k->id), sh, m, k->shift, k->mask);
  }
}
END_TEST

/* ---------------- table invariants ---------------- */

struct filter { const char *module, *re; };
static const struct filter FILTERS[] = {
  {"gc", "^reg(GCVM|GCMC_VM|CP_(HQD|MQD|MEC|ME_CNTL|PERFMON|RB_WPTR_POLL_CNTL|INT_CNTL|STAT|PFP_PRGRM|ME_PRGRM|"
         "COHER_START)|COMPUTE_|(SQ|GL2C|TCC)_PERFCOUNTER|SQ_THREAD_TRACE|SPI_(CONFIG_CNTL|COMPUTE_QUEUE_RESET)|GRBM|"
         "SH_MEM|RLC|TCP|GB_ADDR_CONFIG|SDMA[01]_(WATCHDOG_CNTL|UTCL1_(CNTL|PAGE)|MCU_CNTL|F32_CNTL|CNTL|QUEUE0_|"
         "RLC_CGCG_CTRL)|SCRATCH_REG[67])"},
  {"mmhub", "^reg(MMVM|MMMC_VM|MM_ATC_L2_MISC_CG)"},
  {"nbio", "^reg(BIF_BX_PF[01]_GPU_HDP_FLUSH|BIF_BX_PF0_RSMU|BIF_BX0_(REMAP_HDP_MEM_FLUSH_CNTL|BIF_DOORBELL_INT_CNTL|"
           "PCIE_INDEX2|PCIE_DATA2)|BIFC_(DOORBELL_ACCESS_EN_PF|GFX_INT_MONITOR_MASK)|XCC_DOORBELL_FENCE|"
           "DOORBELL0_CTRL_ENTRY|GDC_S2A0_S2A_DOORBELL_ENTRY|S2A_DOORBELL_ENTRY|RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN|"
           "RCC_DEV0_EPF2_STRAP2)"},
  {"mp", "^(reg|mm)MP([01]|ASP)_SMN_C2PMSG"},
  {"hdp", "^regHDP_MEM_POWER_CTRL"},
  {"osssys", "^regIH_"},
  {"sdma", "^reg(SDMA_GFX|SDMA_CNTL)"},
};

static const char *filter_for(const char *tabname) {
  char mod[16];
  size_t n = strcspn(tabname, "_");
  ck_assert_uint_lt(n, sizeof(mod));
  memcpy(mod, tabname, n), mod[n] = 0;
  if (strcmp(mod, "nbif") == 0) strcpy(mod, "nbio");
  for (size_t i = 0; i < N(FILTERS); i++)
    if (strcmp(FILTERS[i].module, mod) == 0) return FILTERS[i].re;
  ck_abort_msg("no filter for table %s", tabname);
  return NULL;
}

START_TEST(tables_sorted_and_filtered) {
  ck_assert_uint_eq(N(ALL), BG_AM_REGTAB_COUNT);
  for (size_t ti = 0; ti < N(ALL); ti++) {
    const struct bg_am_regtab *t = ALL[ti];
    ck_assert_ptr_eq(bg_am_regtab_by_name(t->name), t);
    ck_assert_msg(t->nregs > 0, "%s is empty", t->name);
    regex_t re;
    ck_assert_int_eq(regcomp(&re, filter_for(t->name), REG_EXTENDED | REG_NOSUB), 0);
    for (size_t i = 0; i < t->nregs; i++) {
      const struct bg_am_reg *r = &t->regs[i];
      if (i) ck_assert_msg(strcmp(t->regs[i - 1].name, r->name) < 0 && t->regs[i - 1].id < r->id,
                           "%s: %s before %s", t->name, t->regs[i - 1].name, r->name);
      ck_assert_msg(r->id < BG_AM_REG_ID_COUNT && strcmp(bg_am_reg_id_names[r->id], r->name) == 0,
                    "%s: %s has id %u", t->name, r->name, r->id);
      ck_assert_msg(regexec(&re, r->name, 0, NULL, 0) == 0, "%s: %s matches none of the name filters of tinygrad AMDev._build_regs", t->name, r->name);
      ck_assert_ptr_eq(bg_am_reg_find(t, (enum bg_am_reg_id)r->id), r);
      ck_assert_msg(r->base_idx < BG_AM_MAX_SEGMENTS, "%s: %s segment %u", t->name, r->name, r->base_idx);
      ck_assert_msg(r->nfields == 0 || r->fields != NULL, "%s: %s", t->name, r->name);
      uint32_t seen = 0;
      for (unsigned k = 0; k < r->nfields; k++) {
        const struct bg_am_regfield *f = &r->fields[k];
        ck_assert_msg(f->shift < 32 && f->mask && !(f->mask & ((1ull << f->shift) - 1)) && ((f->mask >> f->shift) & 1),
                      "%s: %s.%s shift %u mask 0x%x", t->name, r->name, f->name, f->shift, f->mask);
        ck_assert_msg(k == 0 || r->fields[k - 1].shift <= f->shift, "%s: %s fields not sorted by shift", t->name,
                      r->name);
        enum bg_am_field_id fid = (enum bg_am_field_id)(r->id << 8 | f->idx);
        ck_assert_ptr_eq(bg_am_reg_field_find(r, fid), f);
        ck_assert_str_eq(bg_am_field_id_name(fid), f->name);
        ck_assert_msg(!(seen & f->mask), "%s: %s.%s overlaps another field", t->name, r->name, f->name);
        seen |= f->mask;
      }
    }
    regfree(&re);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("am-regs");
  TCase *tc = tcase_create("regs");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, known_offsets);
  tcase_add_test(tc, appendix_a_addresses);
  tcase_add_test(tc, select_from_discovery);
  tcase_add_test(tc, version_map);
  tcase_add_test(tc, fields);
  tcase_add_test(tc, tables_sorted_and_filtered);
  tcase_add_test(tc, field_of_other_register);
  tcase_add_test(tc, ids_match_linux);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
