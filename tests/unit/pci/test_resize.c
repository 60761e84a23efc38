/* tests/unit/pci/test_resize.c: resizable BAR through resourceN_resize: accepted, already at
 * the largest size, refused by the kernel (bridge window), silently ignored, not resizable,
 * mapped, and without privilege. */
#include <errno.h>

#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_regs.h"
#include "pci_test.h"

static bg_pci_dev *open_amd(void) {
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  return d;
}

START_TEST(resize_accepted) {
  bg_pci_dev *d = open_amd();
  uint64_t size = 0;
  OK(bg_pci_resize_bar(d, 0, &size));
  ck_assert_uint_eq(size, 1ull << 30);
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  ck_assert_uint_eq(b.size, 1ull << 30);
  ck_assert_uint_eq(b.base % (1ull << 30), 0);
  ck_assert_uint_eq(mock_pci_bar_size(mock_sysfs_find(fx, AMD_BDF), 0), 1ull << 30);
  /* Config space agrees: the ReBAR control register and BAR sizing show 1 GiB. */
  uint32_t ctrl, lo, hi;
  OK(bg_pci_cfg_read(d, 0x100 + BG_PCI_REBAR_CTRL, 4, &ctrl));
  ck_assert_uint_eq((ctrl & BG_PCI_REBAR_CTRL_BAR_SIZE) >> BG_PCI_REBAR_CTRL_BAR_SHIFT, 10);
  OK(bg_pci_cfg_write(d, BG_PCI_BASE_ADDRESS_0, 4, 0xffffffffu));
  OK(bg_pci_cfg_write(d, BG_PCI_BASE_ADDRESS_0 + 4, 4, 0xffffffffu));
  OK(bg_pci_cfg_read(d, BG_PCI_BASE_ADDRESS_0, 4, &lo));
  OK(bg_pci_cfg_read(d, BG_PCI_BASE_ADDRESS_0 + 4, 4, &hi));
  ck_assert_uint_eq(((uint64_t)hi << 32 | (lo & ~0xfu)), ~((1ull << 30) - 1));
  /* The whole GiB maps, and a second resize has nothing to do. */
  bg_mmio vram;
  OK(bg_pci_map_bar(d, 0, 0, 0, BG_PCI_MAP_WC, &vram));
  ck_assert_uint_eq(vram.size, 1ull << 30);
  OK(bg_mmio_wr32(&vram, (1ull << 30) - 4, 7));
  OK(bg_pci_resize_bar(d, 0, &size));
  ck_assert_uint_eq(size, 1ull << 30);
  bg_pci_unmap_bar(d, &vram);
  bg_pci_close(d);
}
END_TEST

START_TEST(resize_refused_by_kernel) {
  mock_pci_cfg cfg = {.bdf = "0000:06:00.0", .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
                      .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true, .rebar_sizes = 0x700}},
                      .iommu_group = -1, .bridge_window = 256u << 20};
  ck_assert_ptr_nonnull(mock_sysfs_add(fx, &cfg));
  bg_pci_dev *d;
  uint64_t size = 0;
  OK(bg_pci_open_sysfs("0000:06:00.0", 0, &d));
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_EIO, "0000:06:00.0: BAR0: resize from 256 MiB to 1024 MiB refused");
  ck_assert(strstr(bg_last_error(), "No space left on device") != NULL);
  ck_assert(strstr(bg_last_error(), "Above 4G Decoding") != NULL);
  ck_assert_uint_eq(size, 256u << 20);
  /* The device is still usable at its old size. */
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  ck_assert_uint_eq(b.size, 256u << 20);
  bg_pci_close(d);
}
END_TEST

START_TEST(resize_ignored) {
  mock_pci_cfg cfg = {.bdf = "0000:06:00.0", .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
                      .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true, .rebar_sizes = 0x300}},
                      .iommu_group = -1, .resize_ignored = true};
  ck_assert_ptr_nonnull(mock_sysfs_add(fx, &cfg));
  bg_pci_dev *d;
  uint64_t size = 0;
  OK(bg_pci_open_sysfs("0000:06:00.0", 0, &d));
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_EIO, "BAR0: resize to 512 MiB refused: still 256 MiB");
  ck_assert_uint_eq(size, 256u << 20);
  bg_pci_close(d);
}
END_TEST

START_TEST(resize_not_possible) {
  bg_pci_dev *d = open_amd();
  uint64_t size;
  FAILS(bg_pci_resize_bar(d, 5, &size), BG_ENOTSUP, "BAR5 is not resizable");
  bg_mmio vram;
  OK(bg_pci_map_bar(d, 0, 0, 0x1000, 0, &vram));
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_EBUSY, "BAR0 is mapped: unmap it before resizing");
  bg_pci_unmap_bar(d, &vram);
  mock_sysfs_fail_open(fx, "/resource0_resize", EACCES);
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_EPERM, "run as root");
  ck_assert(strstr(bg_last_error(), "resource0_resize") != NULL);
  mock_sysfs_fail_open(fx, NULL, 0);
  OK(bg_pci_resize_bar(d, 0, &size));
  bg_pci_close(d);
}
END_TEST

/* The kernel refuses while a driver is bound (EBUSY). */
START_TEST(resize_with_driver_bound) {
  bg_pci_dev *d = open_amd();
  OK(bg_pci_bind(AMD_BDF, "amdgpu"));
  uint64_t size;
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_EBUSY, "BAR0: resize from 256 MiB to 1024 MiB refused");
  ck_assert(strstr(bg_last_error(), "Device or resource busy") != NULL);
  bg_pci_close(d);
}
END_TEST

TCase *tcase_resize(void) {
  TCase *tc = fx_tcase("resize");
  tcase_add_test(tc, resize_accepted);
  tcase_add_test(tc, resize_refused_by_kernel);
  tcase_add_test(tc, resize_ignored);
  tcase_add_test(tc, resize_not_possible);
  tcase_add_test(tc, resize_with_driver_bound);
  return tc;
}
