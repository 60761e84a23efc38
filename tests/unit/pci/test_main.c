/* tests/unit/pci/test_main.c: the PCI device layer (platform/pci*, sysmem, vfio) against the emulated
 * tree of tests/mockgpu: fixture and suite. */
#include <stdio.h>
#include <stdlib.h>

#include "pci_test.h"

mock_sysfs *fx;

static const mock_pci_cfg devices[] = {
  {.bdf = AMD_BDF, .vendor = 0x1002, .device = 0x744c, .subvendor = 0x1da2, .subdevice = 0x471e,
   .class_code = 0x030000, .revision = 0xc8,
   .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true, .rebar_sizes = 0x700},
            [2] = {.size = 2u << 20, .is_64 = true, .prefetch = true},
            [4] = {.size = 256, .io = true},
            [5] = {.size = 1u << 20}},
   .driver = "amdgpu", .link_speed = "16.0 GT/s PCIe", .link_width = 16, .iommu_group = 7},
  {.bdf = AUDIO_BDF, .vendor = 0x1002, .device = 0xab30, .class_code = 0x040300,
   .bars = {[0] = {.size = 16u << 10}}, .driver = "snd_hda_intel", .iommu_group = 7},
  {.bdf = NV_BDF, .vendor = 0x10de, .device = 0x2335, .class_code = 0x030200,
   .bars = {[0] = {.size = 16u << 20}, [1] = {.size = 64u << 20, .is_64 = true, .prefetch = true}},
   .iommu_group = -1},
  {.bdf = NIC_BDF, .vendor = 0x8086, .device = 0x15fa, .class_code = 0x020000,
   .bars = {[0] = {.size = 128u << 10}}, .driver = "e1000e", .link_speed = "2.5 GT/s PCIe", .link_width = 1,
   .iommu_group = -1},
};

void fx_setup(void) {
  fx = mock_sysfs_new();
  ck_assert_ptr_nonnull(fx);
  for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
    ck_assert_msg(mock_sysfs_add(fx, &devices[i]) != NULL, "adding %s: %s", devices[i].bdf,
                  mock_sysfs_failures(fx));
  unsetenv("BG_PAGEMAP");
  /* The emulated IOMMU's defaults (tests/mockgpu/README.md) unless a test says otherwise. */
  unsetenv("MOCKGPU_VFIO_IOVA");
  unsetenv("MOCKGPU_VFIO_PGSIZES");
  unsetenv("MOCKGPU_VFIO_DMA_LIMIT");
}

void fx_teardown(void) {
  unsigned n = mock_sysfs_nfail(fx);
  char msg[4096];
  snprintf(msg, sizeof(msg), "%s", mock_sysfs_failures(fx));
  mock_sysfs_free(fx);
  fx = NULL;
  ck_assert_msg(n == 0, "the emulated device recorded %u unexpected failures:\n%s", n, msg);
}

void expect_failures(unsigned n, const char *needle) {
  const char *all = mock_sysfs_failures(fx);
  ck_assert_msg(mock_sysfs_nfail(fx) == n, "expected %u model failures, got %u:\n%s", n, mock_sysfs_nfail(fx), all);
  ck_assert_msg(strstr(all, needle) != NULL, "model failures lack '%s':\n%s", needle, all);
  mock_sysfs_clear_failures(fx);
}

TCase *fx_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
  tcase_set_timeout(tc, 60);
  return tc;
}

int main(void) {
  Suite *s = suite_create("pci");
  suite_add_tcase(s, tcase_discovery());
  suite_add_tcase(s, tcase_open());
  suite_add_tcase(s, tcase_bars());
  suite_add_tcase(s, tcase_resize());
  suite_add_tcase(s, tcase_admin());
  suite_add_tcase(s, tcase_faults());
  suite_add_tcase(s, tcase_sysmem());
  suite_add_tcase(s, tcase_dma());
  suite_add_tcase(s, tcase_lock());
  suite_add_tcase(s, tcase_vfio());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
