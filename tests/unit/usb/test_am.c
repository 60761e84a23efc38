/* tests/unit/usb/test_am.c: cold bring-up of the emulated gfx11 GPU over the emulated bridge through am/,
 * unchanged: bg_am_dev_open_pci on the USB bg_pci_dev, then bg_am_boot (SOC, GMC, IH, PSP, SMU, GFX/MEC,
 * SDMA), with zero model failures, the PSP/SMU state the model recorded, and the USB traffic it cost. */
#include <stdio.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_psp.h"
#include "amd_testbed.h"
#include "usb_test.h"

START_TEST(cold_boot_over_usb) {
  char fwdir[64];
  OK(amd_testbed_fw_new(UG, "bg_usb_fw", fwdir, sizeof(fwdir))); /* gfx11's firmware, fused into UG */
  bg_usb_transport *t = bg_asm24_transport(ux_bridge());
  bg_usb_stats s0 = t->stats;
  bg_am_open_opts o = {.fw_dir = fwdir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  bg_pci_dev *pci = UP;
  UP = NULL;  /* the AM device owns it now */
  OK(bg_am_dev_open_pci(pci, &o, &d));
  ck_assert_str_eq(d->bdf, t->name);
  bg_am_boot_report rep;
  OK(bg_am_boot(d, NULL, &rep));
  ck_assert(!rep.warm && !rep.mode1_reset);
  ck_assert(mock_amd_sos_alive(UG) && mock_amd_psp_ring(UG) && mock_amd_rlc_autoloaded(UG));
  ck_assert(mock_amd_smu_features(UG));
  ck_assert_uint_eq(mock_amd_smu_driver_table(UG), d->bm.smu_table);
  ck_assert(bg_am_psp_sos_alive(d));
  ck_assert_int_eq(rep.ring_cmds, 4 + d->fw->ndescs);  /* gfx11 / MP0 13.0.0: real TMR */
  uint64_t xf = 0, by = 0;
  for (int k = 0; k < BG_USB_NKINDS; k++) {
    xf += t->stats.xfers[k] - s0.xfers[k];
    by += t->stats.bytes[k] - s0.bytes[k];
  }
  printf("cold boot over USB (gfx11): %llu register reads, %llu writes; %llu USB transfers, %.1f MiB, %llu round trips\n",
         (unsigned long long)d->nrreg, (unsigned long long)d->nwreg, (unsigned long long)xf, (double)by / (1 << 20),
         (unsigned long long)(t->stats.round_trips - s0.round_trips));
  bg_am_dev_close(d);
  amd_testbed_rm_dir(fwdir);
}
END_TEST

/* A failing open hands the device back closed and names the step. */
START_TEST(open_without_firmware_fails_cleanly) {
  bg_am_open_opts o = {.fw_dir = "/nonexistent/bg_usb_fw", .timeout_ms = 100, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  bg_pci_dev *pci = UP;
  UP = NULL;
  ck_assert_int_lt(bg_am_dev_open_pci(pci, &o, &d), 0);
  ck_assert_ptr_null(d);
  ck_assert_msg(strstr(bg_last_error(), "firmware"), "%s", bg_last_error());
}
END_TEST

Suite *usb_am_suite(void) {
  Suite *s = suite_create("usb-am");
  TCase *tc = ux_tcase("am", true);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, cold_boot_over_usb);
  tcase_add_test(tc, open_without_firmware_fails_cleanly);
  suite_add_tcase(s, tc);
  return s;
}
