/* tests/unit/usb/test_main.c: fixture and runner of the `usb` suite (usb/, tests/mockgpu/asm24). */
#include <stdio.h>
#include <stdlib.h>

#include "usb_test.h"

mock_sysfs *UT;
mock_amd *UG;
mock_asm24 *UB;
bg_pci_dev *UP;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
void ux_srand(uint64_t seed) { rng = seed ? seed : 1; }
uint64_t ux_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

void ux_setup_raw(void) {
  UT = mock_sysfs_new();
  ck_assert_ptr_nonnull(UT);
  mock_amd_cfg cfg = {.chip = MOCK_AMD_GFX11, .bdf = "0000:03:00.0", .vram_size = 256ull << 20};
  UG = mock_amd_new(UT, &cfg);
  ck_assert_ptr_nonnull(UG);
  UB = mock_asm24_new(mock_amd_pci(UG));
  ck_assert_ptr_nonnull(UB);
  UP = NULL;
}

void ux_setup(void) {
  ux_setup_raw();
  OK(bg_usb_pci_open(mock_asm24_transport(UB), &UP));
}

void ux_teardown(void) {
  bg_pci_close(UP);
  UP = NULL;
  unsigned nb = mock_asm24_nfail(UB), ng = mock_amd_nfail(UG), nt = mock_sysfs_nfail(UT);
  char msg[8192];
  snprintf(msg, sizeof(msg), "%s%s%s", mock_asm24_failures(UB), mock_amd_failures(UG), mock_sysfs_failures(UT));
  mock_asm24_free(UB);
  mock_amd_free(UG);
  mock_sysfs_free(UT);
  ck_assert_msg(nb == 0 && ng == 0 && nt == 0, "unexpected model failures:\n%s", msg);
}

void ux_expect_failures(unsigned n, const char *needle) {
  const char *all = mock_asm24_failures(UB);
  ck_assert_msg(mock_asm24_nfail(UB) == n, "expected %u bridge failures, got %u:\n%s", n, mock_asm24_nfail(UB), all);
  ck_assert_msg(strstr(all, needle) != NULL, "bridge failures lack '%s':\n%s", needle, all);
  mock_asm24_clear_failures(UB);
}

bg_asm24 *ux_bridge(void) { return bg_usb_pci_bridge(UP); }

TCase *ux_tcase(const char *name, bool open) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, open ? ux_setup : ux_setup_raw, ux_teardown);
  tcase_set_timeout(tc, 120);
  return tc;
}

int main(void) {
  SRunner *sr = srunner_create(usb_proto_suite());
  srunner_add_suite(sr, usb_bridge_suite());
  srunner_add_suite(sr, usb_copy_suite());
  srunner_add_suite(sr, usb_am_suite());
  srunner_add_suite(sr, usb_tool_suite());
  srunner_add_suite(sr, usb_hcq_suite());
  srunner_add_suite(sr, usb_stall_suite());
  srunner_add_suite(sr, usb_order_suite());
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
