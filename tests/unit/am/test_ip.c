/* tests/unit/am/test_ip.c: the IP version table and its selection (am/am_ip.h): every emulated GPU of tests/mockgpu
 * (the discovery tables of discovery_gen.c) selects a complete set, every chip of am/chips.c has GFX and GMC rows for
 * its GC version, an unknown or missing IP is an error naming it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_ip.h"
#include "am/chips.h"
#include "am/discovery.h"
#include "am/mm_vram.h"
#include "baregpu/error.h"
#include "discovery_gen.h"
#include "../check_helpers.h"

static struct bg_am_discovery *D;
static struct discgen_config *C;
static uint8_t *buf;

static void setup(void) {
  D = calloc(1, sizeof(*D));
  C = calloc(1, sizeof(*C));
  buf = calloc(1, BG_AM_DISC_TABLE_SIZE);
  ck_assert(D && C && buf);
}
static void teardown(void) { free(D), free(C), free(buf); }

/* Parse the discovery table of an emulated GPU (the same generator tests/mockgpu/amd_gpu.c places in VRAM). */
static void parse(void (*config)(struct discgen_config *)) {
  config(C);
  ck_assert_uint_gt(discgen_build(C, buf, BG_AM_DISC_TABLE_SIZE, NULL), 0);
  OK(bg_am_discovery_parse(buf, BG_AM_DISC_TABLE_SIZE, 0, D));
}

static void complete(const bg_am_ipset *s) {
  ck_assert(s->gfx && s->gmc && s->sdma && s->nbio && s->psp && s->smu && s->ih && s->hdp);
}

/* ---------------- the emulated GPUs ---------------- */

START_TEST(mock_gfx12) {
  bg_am_ipset s;
  parse(discgen_config_mock);
  OK(bg_am_ip_select_disc(D, &s));
  complete(&s);
  ck_assert_str_eq(s.gfx->name, "gfx_v12_0");
  ck_assert(s.gfx->bringup && s.gfx->queues && s.gfx->rlc_autoload && !s.gfx->aql);
  ck_assert_int_eq(s.gmc->pt_gen, BG_AM_PT_GFX12);
  ck_assert_uint_eq(s.gmc->reserved_vram, BG_AM_VRAM_RESERVED_TOP);
  ck_assert_str_eq(s.sdma->name, "sdma_v7_0");
  ck_assert(s.sdma->mcu && !s.sdma->own_regs);
  ck_assert(!s.nbio->multi_aid && s.nbio->gdc_s2a);
  ck_assert(s.psp->mpasp && s.psp->spl_table && s.psp->boot_time_tmr && s.psp->autoload_tmr);
  ck_assert_str_eq(s.smu->name, "smu_v14_0_2");
  ck_assert(!s.smu->cdna && s.smu->read_metrics);
  ck_assert_uint_eq(s.ih->sdma_trap_src, 49);
  ck_assert(s.hdp->mem_power_ctrl);
}
END_TEST

START_TEST(mock_gfx11) {
  bg_am_ipset s;
  parse(discgen_config_gfx11);
  OK(bg_am_ip_select_disc(D, &s));
  complete(&s);
  ck_assert_str_eq(s.gfx->name, "gfx_v11_0");
  ck_assert_uint_eq(s.gfx->pm4_gen, 11);
  ck_assert_int_eq(s.gmc->pt_gen, BG_AM_PT_GFX11);
  ck_assert_uint_eq(s.gmc->pa_bits, 44);
  ck_assert(s.gmc->mm_flush_cid2 && !s.gmc->l2_fragment);
  ck_assert_str_eq(s.sdma->name, "sdma_v6_0");
  ck_assert(!s.sdma->mcu);
  ck_assert(!s.nbio->multi_aid && !s.nbio->gdc_s2a);
  ck_assert(!s.psp->mpasp && !s.psp->boot_time_tmr && s.psp->mode1 == BG_AM_MODE1_DEBUG);
  ck_assert_str_eq(s.smu->name, "smu_v13_0_0");
  ck_assert_str_eq(s.ih->name, "ih_v6_0");
  ck_assert_int_eq(s.ih->utcl2_client, -1);
}
END_TEST

START_TEST(mock_gfx942) {
  bg_am_ipset s;
  parse(discgen_config_gfx942);
  OK(bg_am_ip_select_disc(D, &s));
  complete(&s);
  ck_assert_str_eq(s.gfx->name, "gfx_v9_4_3");
  ck_assert(s.gfx->bringup && !s.gfx->queues && !s.gfx->rlc_autoload && s.gfx->aql);
  ck_assert_int_eq(s.gmc->pt_gen, BG_AM_PT_GFX9);
  ck_assert_uint_eq(s.gmc->pa_bits, 48);
  ck_assert_uint_eq(s.gmc->reserved_vram, 384ull << 20);
  ck_assert(s.gmc->l2_fragment && !s.gmc->l2_cntl5 && !s.gmc->mm_flush_cid2);
  ck_assert_str_eq(s.sdma->name, "sdma_v4_4_2");
  ck_assert(s.sdma->own_regs);
  ck_assert(s.nbio->multi_aid);
  ck_assert(s.psp->boot_time_tmr && !s.psp->autoload_tmr && s.psp->mode1 == BG_AM_MODE1_GFX_DRIVER_RESET);
  ck_assert(s.smu->cdna && s.smu->read_metrics);
  ck_assert_uint_eq(s.ih->sdma_trap_src, 224);
  ck_assert_int_eq(s.ih->utcl2_client, 27);
  ck_assert(!s.hdp->mem_power_ctrl);
}
END_TEST

/* ---------------- the chips ---------------- */

START_TEST(chips) {
  ck_assert_uint_gt(bg_am_chip_count(), 0);
  for (size_t i = 0; i < bg_am_chip_count(); i++) {
    const bg_chip_info *c = bg_am_chip_at(i);
    const struct bg_am_ip_row *gfx = bg_am_ip_find(BG_AM_IP_GFX, c->gc[0], c->gc[1], c->gc[2]);
    const struct bg_am_ip_row *gmc = bg_am_ip_find(BG_AM_IP_GMC, c->gc[0], c->gc[1], c->gc[2]);
    ck_assert_msg(gfx && gmc, "%s (0x%04x): GC %u.%u.%u has no GFX/GMC row", c->chip, c->device, c->gc[0], c->gc[1],
                  c->gc[2]);
    /* the PM4 and page-table generations follow the GC major version */
    unsigned want_pt = c->gc[0] == 9 ? BG_AM_PT_GFX9 : c->gc[0] == 12 ? BG_AM_PT_GFX12 : BG_AM_PT_GFX11;
    ck_assert_uint_eq(gmc->u.gmc->pt_gen, want_pt);
    ck_assert_uint_eq(gfx->u.gfx->pm4_gen, c->gc[0] == 9 ? 9u : c->gc[0]);
    OK(bg_am_gc_check_supported(c->gc[0], c->gc[1], c->gc[2]));
  }
}
END_TEST

/* ---------------- unknown and missing ---------------- */

START_TEST(unknown_gc) {
  bg_am_ipset s;
  parse(discgen_config_gfx11);
  D->ip[GC_HWIP].maj = 10, D->ip[GC_HWIP].min = 3, D->ip[GC_HWIP].rev = 0;
  FAILS(bg_am_ip_select_disc(D, &s), BG_ENOTSUP, "GFX (GC_HWIP) 10.3.0 is not supported");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "9.4.3, 9.5.0, 11.x.x, 12.x.x"));
  ck_assert_ptr_null(s.gfx);
  FAILS(bg_am_gc_check_supported(10, 3, 0), BG_ENOTSUP, "GC IP 10.3.0 (gfx1030) is not supported; AM drives GC 9.4.3");
}
END_TEST

START_TEST(unknown_mp1) {
  bg_am_ipset s;
  parse(discgen_config_gfx942);
  D->ip[MP1_HWIP].rev = 99;
  FAILS(bg_am_ip_select_disc(D, &s), BG_ENOTSUP, "SMU (MP1_HWIP) 13.0.99 is not supported; AM knows 13.0.0, 13.0.6");
  ck_assert_ptr_null(s.psp);
  parse(discgen_config_mock);
  D->ip[NBIO_HWIP].maj = 5;
  FAILS(bg_am_ip_select_disc(D, &s), BG_ENOTSUP, "NBIO (NBIO_HWIP) 5.3.1 is not supported");
  parse(discgen_config_mock);
  D->ip[SDMA0_HWIP].maj = 5;
  FAILS(bg_am_ip_select_disc(D, &s), BG_ENOTSUP, "SDMA (SDMA0_HWIP) 5.0.0");
}
END_TEST

START_TEST(missing_ip) {
  bg_am_ipset s;
  parse(discgen_config_mock);
  D->ip[OSSSYS_HWIP].present = false;
  FAILS(bg_am_ip_select_disc(D, &s), BG_ENOTSUP, "IH needs OSSSYS_HWIP, which is not in the discovery table");
}
END_TEST

/* ---------------- the table itself ---------------- */

static const void *desc(const struct bg_am_ip_row *r) {
  switch (r->block) {
  case BG_AM_IP_GFX: return r->u.gfx ? r->u.gfx->name : NULL;
  case BG_AM_IP_GMC: return r->u.gmc ? r->u.gmc->name : NULL;
  case BG_AM_IP_SDMA: return r->u.sdma ? r->u.sdma->name : NULL;
  case BG_AM_IP_NBIO: return r->u.nbio ? r->u.nbio->name : NULL;
  case BG_AM_IP_PSP: return r->u.psp ? r->u.psp->name : NULL;
  case BG_AM_IP_SMU: return r->u.smu ? r->u.smu->name : NULL;
  case BG_AM_IP_IH: return r->u.ih ? r->u.ih->name : NULL;
  case BG_AM_IP_HDP: return r->u.hdp ? r->u.hdp->name : NULL;
  default: return NULL;
  }
}

START_TEST(table_rows) {
  unsigned per_block[BG_AM_IP_NBLOCKS] = {0};
  for (size_t i = 0; i < bg_am_ip_row_count(); i++) {
    const struct bg_am_ip_row *r = bg_am_ip_row_at(i);
    ck_assert_msg((unsigned)r->block < BG_AM_IP_NBLOCKS, "row %zu: block %d", i, (int)r->block);
    ck_assert_msg(r->hwip == bg_am_ip_block_hwip(r->block), "row %zu: %s selected by %s", i,
                  bg_am_ip_block_name(r->block), bg_am_hwip_name(r->hwip));
    ck_assert_msg(r->lo <= r->hi, "row %zu: empty range", i);
    ck_assert_msg(desc(r) != NULL, "row %zu (%s): no descriptor", i, bg_am_ip_block_name(r->block));
    if (r->block == BG_AM_IP_GFX) /* the functions every generation must have (am_gfx.c, am_boot.c call them) */
      ck_assert_msg(r->u.gfx->config_mec && r->u.gfx->enable_mec && r->u.gfx->sh_mem_config && r->u.gfx->cg_override,
                    "row %zu (%s): a required GFX function is NULL", i, r->u.gfx->name);
    if (r->block == BG_AM_IP_SMU) ck_assert_msg(r->u.smu->msg_ids != NULL, "row %zu: no SMU message ids", i);
    per_block[r->block]++;
    for (size_t j = 0; j < i; j++) { /* one row per version: the selection is unambiguous */
      const struct bg_am_ip_row *o = bg_am_ip_row_at(j);
      ck_assert_msg(o->block != r->block || o->hi < r->lo || r->hi < o->lo, "rows %zu and %zu of %s overlap", j, i,
                    bg_am_ip_block_name(r->block));
    }
  }
  for (int b = 0; b < BG_AM_IP_NBLOCKS; b++) ck_assert_msg(per_block[b] > 0, "%s has no row", bg_am_ip_block_name(b));
  ck_assert_ptr_null(bg_am_ip_row_at(bg_am_ip_row_count()));
  ck_assert_ptr_null(bg_am_ip_find(BG_AM_IP_GFX, 256, 0, 0));
}
END_TEST

int main(void) {
  Suite *s = suite_create("am-ip");
  TCase *tc = tcase_create("ip");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, mock_gfx12);
  tcase_add_test(tc, mock_gfx11);
  tcase_add_test(tc, mock_gfx942);
  tcase_add_test(tc, chips);
  tcase_add_test(tc, unknown_gc);
  tcase_add_test(tc, unknown_mp1);
  tcase_add_test(tc, missing_ip);
  tcase_add_test(tc, table_rows);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
