/* tests/unit/pci/test_faults.c: faults reported clearly: not root, device vanished, BAR reads
 * all ones, a device that does not answer. VFIO refusals: test_vfio.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform/pci.h"
#include "platform/pci_lock.h"
#include "pci_test.h"

START_TEST(not_root) {
  bg_pci_dev *d;
  mock_sysfs_fail_open(fx, "/" NV_BDF "/enable", EACCES);
  FAILS(bg_pci_open_sysfs(NV_BDF, 0, &d), BG_EPERM, "run as root");
  ck_assert(strstr(bg_last_error(), "bus/pci/devices/" NV_BDF "/enable") != NULL);
  ck_assert_ptr_null(d);
  /* The failed open released its lock and changed nothing. */
  pid_t pid;
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, 0);
  ck_assert(!mock_pci_enabled(mock_sysfs_find(fx, NV_BDF)));
  mock_sysfs_fail_open(fx, NULL, 0);
  mock_sysfs_fail_open(fx, "/" NV_BDF "/config", EPERM);
  FAILS(bg_pci_open_sysfs(NV_BDF, 0, &d), BG_EPERM, "config");
  mock_sysfs_fail_open(fx, NULL, 0);
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  bg_pci_close(d);
}
END_TEST

START_TEST(vanished_after_open) {
  bg_pci_dev *d;
  bg_mmio regs;
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  OK(bg_pci_map_bar(d, 0, 0, 0x1000, 0, &regs));
  OK(bg_pci_check_alive(d));
  ck_assert_int_eq(mock_sysfs_vanish(fx, NV_BDF), 0);
  FAILS(bg_pci_check_alive(d), BG_ENODEV, "device 0000:41:00.0 vanished");
  uint32_t v;
  OK(bg_pci_cfg_read(d, 0, 4, &v));
  ck_assert_uint_eq(v, 0xffffffffu);
  /* The existing view reads all ones, and the check says why. */
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0), 0xffffffffu);
  FAILS(bg_pci_check_bar(d, 0, &regs, 0), BG_ENODEV, "device 0000:41:00.0 vanished");
  bg_mmio more;
  FAILS(bg_pci_map_bar(d, 0, 0, 0x1000, 0, &more), BG_ENODEV, "vanished");
  FAILS(bg_pci_reset(d), BG_ENODEV, "vanished");
  uint64_t size;
  FAILS(bg_pci_resize_bar(d, 0, &size), BG_ENODEV, "vanished");
  bg_pci_close(d);
  FAILS(bg_pci_open_sysfs(NV_BDF, 0, &d), BG_ENODEV, "no PCI device 0000:41:00.0");
}
END_TEST

/* A device still listed whose config space reads all ones (powered off, D3cold). */
START_TEST(config_all_ones) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/devices/%s/config", mock_sysfs_root(fx), NV_BDF);
  int fd = open(path, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  uint8_t ones[64];
  memset(ones, 0xff, sizeof(ones));
  ck_assert_int_eq(pwrite(fd, ones, sizeof(ones), 0), (ssize_t)sizeof(ones));
  close(fd);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(NV_BDF, 0, &d), BG_ENODEV,
        "device 0000:41:00.0 does not answer: its configuration space reads 0xffffffff");
}
END_TEST

START_TEST(bar_all_ones) {
  bg_pci_dev *d;
  bg_mmio regs;
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  OK(bg_pci_map_bar(d, 0, 0, 0, 0, &regs));
  OK(bg_pci_check_bar(d, 0, &regs, 0));
  mock_pci_set_dead(mock_sysfs_find(fx, NV_BDF), true);
  FAILS(bg_pci_check_bar(d, 0, &regs, 0), BG_EIO,
        "BAR0 of 0000:41:00.0 reads 0xffffffff: the device is dead or the VM has no usable IOMMU");
  OK(bg_pci_check_alive(d));  /* config space still answers: not vanished */
  FAILS(bg_pci_check_bar(d, 0, &regs, 1u << 30), BG_EINVAL, "outside the view");
  bg_pci_close(d);
}
END_TEST

TCase *tcase_faults(void) {
  TCase *tc = fx_tcase("faults");
  tcase_add_test(tc, not_root);
  tcase_add_test(tc, vanished_after_open);
  tcase_add_test(tc, config_all_ones);
  tcase_add_test(tc, bar_all_ones);
  return tc;
}
