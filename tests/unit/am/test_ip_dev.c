/* tests/unit/am/test_ip_dev.c: the IP selection on an opened device (am/am_ip.h: bg_am_dev_open fills d->ip once, the
 * descriptors of its discovery table) on each emulated GPU of tests/mockgpu, and the one HDP flush of am/
 * (bg_am_flush_hdp: the remap register read at each flush until pinned, nothing written while it reads 0). */
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
  uint32_t remap = D->r[BG_AM_R_HDP_REMAP].addr;
  watch = remap;
  /* the flush dword is whatever the remap register points at: SCRATCH_REG6 here, an address the model accepts */
  mock_amd_poke(TB.gpu, remap, R->scratch6 * 4);
  n_wr = n_watch = 0;
  bg_am_flush_hdp(D);
  ck_assert_uint_eq(n_watch, 1);
  ck_assert_uint_eq(n_wr, 1);
  ck_assert_uint_eq(last_addr, R->scratch6);
  ck_assert_uint_eq(last_val, 0);
  /* not programmed yet (reads 0): nothing written */
  mock_amd_poke(TB.gpu, remap, 0);
  n_wr = n_watch = 0;
  bg_am_flush_hdp(D);
  ck_assert_uint_eq(n_watch, 1);
  ck_assert_uint_eq(n_wr, 0);
  /* pinned: no register read per flush, the dword read at pin time */
  mock_amd_poke(TB.gpu, remap, R->scratch6 * 4);
  bg_am_flush_hdp_pin(D);
  mock_amd_poke(TB.gpu, remap, R->scratch7 * 4);
  n_wr = n_watch = 0;
  bg_am_flush_hdp(D);
  bg_am_flush_hdp(D);
  ck_assert_uint_eq(n_watch, 0);
  ck_assert_uint_eq(n_wr, 2);
  ck_assert_uint_eq(last_addr, R->scratch6);
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
