/* tests/unit/am/test_ip_dev.c: the IP selection on an opened device (am/am_ip.h: bg_am_dev_open fills d->ip once, the
 * descriptors of its discovery table) on each emulated GPU of tests/mockgpu, and the one HDP flush of am/
 * (bg_am_flush_hdp: an error naming the remap register until SOC init has programmed it, then a write of 0 to the
 * remapped HDP_MEM_FLUSH_CNTL, pinned) against the model's HDP (tests/mockgpu/amd_hdp.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_dev.h"
#include "am/am_ip.h"
#include "amd_gpu.h"
#include "amd_testbed.h"
#include "baregpu/error.h"

#define BDF "0000:03:00.0"
#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())

static amd_testbed TB;
static bg_am_dev *D;

/* register access observer */
static uint32_t watch;          /* count reads of this address */
static unsigned n_wr, n_watch;
static uint32_t last_addr, last_val;
static void trace(void *ctx, bool write, uint32_t addr, uint32_t val) {
  (void)ctx;
  if (write) n_wr++, last_addr = addr, last_val = val;
  else if (addr == watch) n_watch++;
}

static void open_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  OK(amd_testbed_new(&TB, &cfg, "bg_ip"));
  bg_am_open_opts o = {.fw_dir = TB.fw_dir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1,
                       .trace = trace};
  OK(bg_am_dev_open(BDF, &o, &D));
}

static void close_chip(void) {
  char msg[4096];
  bg_am_dev_close(D);
  D = NULL;
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

START_TEST(selected_at_open) {
  static const struct { mock_amd_chip chip; const char *gfx, *smu; } c[] = {
      {MOCK_AMD_MOCK, "gfx_v12_0", "smu_v14_0_2"},
      {MOCK_AMD_GFX11, "gfx_v11_0", "smu_v13_0_0"},
      {MOCK_AMD_GFX942, "gfx_v9_4_3", "smu_v13_0_6"},
  };
  for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    open_chip(c[i].chip);
    bg_am_ipset s;
    OK(bg_am_ip_select_disc(&D->disc, &s));
    ck_assert(memcmp(&s, &D->ip, sizeof(s)) == 0);
    ck_assert_str_eq(D->ip.gfx->name, c[i].gfx);
    ck_assert_str_eq(D->ip.smu->name, c[i].smu);
    close_chip();
  }
}
END_TEST

START_TEST(hdp_flush) {
  open_chip(MOCK_AMD_MOCK);
  const mock_amd_regmap *R = mock_amd_regs(TB.gpu);
  uint8_t *host = (uint8_t *)(uintptr_t)D->vram.ptr, *eng = mock_amd_vram(TB.gpu);
  ck_assert_ptr_nonnull(host);
  ck_assert_ptr_eq(host, mock_amd_vram_host(TB.gpu));
  /* before SOC init the remap register reads 0: the flush fails naming it, and writes nothing */
  n_wr = 0;
  ck_assert_int_eq(bg_am_flush_hdp(D), -BG_EIO);
  ck_assert_msg(strstr(bg_last_error(), "regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL") && strstr(bg_last_error(), "0x7f000"),
                "%s", bg_last_error());
  ck_assert_uint_eq(n_wr, 0);
  /* a host write through BAR0 is not seen by the engines until an HDP flush */
  unsigned dirty = mock_amd_hdp_dirty(TB.gpu);
  host[0x10004] = 0x5a;
  ck_assert_uint_eq(eng[0x10004], 0);
  ck_assert_uint_eq(host[0x10004], 0x5a);
  ck_assert_uint_eq(mock_amd_hdp_dirty(TB.gpu), dirty + 1);
  /* writing the flush page without the remap is a model failure, and flushes nothing */
  mock_amd_wreg(TB.gpu, R->hdp_hole / 4, 0);
  ck_assert_uint_eq(eng[0x10004], 0);
  ck_assert_msg(mock_amd_nfail(TB.gpu) == 1 && strstr(mock_amd_failures(TB.gpu), "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL"),
                "%s", mock_amd_failures(TB.gpu));
  mock_amd_clear_failures(TB.gpu);
  /* the remap as SOC init programs it (bg_am_soc_init), then the flush writes 0 to the hole */
  ck_assert_uint_eq(D->ip.nbio->hdp_hole, R->hdp_hole);
  mock_amd_wreg(TB.gpu, R->hdp_remap_mem, R->hdp_hole);
  mock_amd_wreg(TB.gpu, R->hdp_remap_reg, R->hdp_hole + 4);
  n_wr = 0;
  OK(bg_am_flush_hdp(D));
  ck_assert_uint_eq(n_wr, 1);
  ck_assert_uint_eq(last_addr, R->hdp_hole / 4);
  ck_assert_uint_eq(last_val, 0);
  ck_assert_uint_eq(eng[0x10004], 0x5a);
  ck_assert_uint_eq(mock_amd_hdp_dirty(TB.gpu), 0);
  /* engine writes show in the host view at once; an engine write to other bytes of a page the host has
   * written meanwhile survives the flush */
  eng[0x20000] = 1;
  ck_assert_uint_eq(host[0x20000], 1);
  host[0x20008] = 2;
  eng[0x20010] = 3;
  ck_assert_uint_eq(eng[0x20008], 0);
  mock_amd_wreg(TB.gpu, R->hdp_flush_req, 1); /* the engines' request (PM4/SDMA HDP flush) */
  ck_assert_uint_eq(eng[0x20008], 2);
  ck_assert_uint_eq(eng[0x20010], 3);
  ck_assert_uint_eq(host[0x20010], 3);
  /* pinned: no register read per flush */
  watch = D->r[BG_AM_R_HDP_REMAP].addr;
  n_watch = 0;
  OK(bg_am_flush_hdp(D));
  ck_assert_uint_eq(n_watch, 0);
  close_chip();
}
END_TEST

int main(void) {
  Suite *s = suite_create("am-ip-dev");
  TCase *tc = tcase_create("dev");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, selected_at_open);
  tcase_add_test(tc, hdp_flush);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
