/* tests/unit/pci/test_faults.c: faults reported clearly: not root, device vanished, BAR reads
 * all ones, a device that does not answer, and VFIO unavailable in its several ways. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform/pci.h"
#include "platform/pci_lock.h"
#include "platform/vfio.h"
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

/* ---------------- VFIO ---------------- */

START_TEST(vfio_no_module) {
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER | BG_PCI_VFIO, &d), BG_ENOTSUP,
        "VFIO is not available");
  ck_assert(strstr(bg_last_error(), "module/vfio is missing (load it: modprobe vfio-pci") != NULL);
  pid_t pid;
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, 0);
}
END_TEST

START_TEST(vfio_no_group) {
  ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE), 0);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(NV_BDF, BG_PCI_VFIO, &d), BG_ENOTSUP, "0000:41:00.0: no IOMMU group");
  ck_assert(strstr(bg_last_error(), "enable_unsafe_noiommu_mode") != NULL);
  /* It got as far as binding vfio-pci, through driver_override and drivers_probe. */
  ck_assert_str_eq(mock_pci_driver(mock_sysfs_find(fx, NV_BDF)), "vfio-pci");
}
END_TEST

START_TEST(vfio_no_devnodes) {
  ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE), 0);
  char dev[4200];
  snprintf(dev, sizeof(dev), "%s/nodev", mock_sysfs_root(fx));
  setenv("BG_DEV_ROOT", dev, 1);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER | BG_PCI_VFIO, &d), BG_ENOTSUP,
        "VFIO: cannot open");
  ck_assert(strstr(bg_last_error(), "/nodev/vfio/vfio: No such file or directory") != NULL);
  /* What the failed open changed is said. */
  ck_assert(strstr(bg_last_error(), "kernel driver amdgpu stays unbound: hcq_smi bind 0000:03:00.0 amdgpu") != NULL);
}
END_TEST

START_TEST(vfio_not_a_container) {
  ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES), 0);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER | BG_PCI_VFIO, &d), BG_ENOTSUP,
        "vfio/vfio is not a VFIO container");
  /* Without VFIO the same device opens (now unbinding vfio-pci); it has no interrupts. */
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  ck_assert(!bg_pci_has_irq(d));
  bg_pci_close(d);
}
END_TEST

/* A failed bg_vfio_open leaves nothing open. */
START_TEST(vfio_open_cleans_up) {
  ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES), 0);
  bg_vfio v;
  FAILS(bg_vfio_open(AMD_BDF, &v), BG_ENOTSUP, "not a VFIO container");
  ck_assert_int_eq(v.container, -1);
  ck_assert_int_eq(v.group, -1);
  ck_assert_int_eq(v.irq_fd, -1);
  ck_assert_int_eq(v.group_id, 7);
}
END_TEST

TCase *tcase_faults(void) {
  TCase *tc = fx_tcase("faults");
  tcase_add_test(tc, not_root);
  tcase_add_test(tc, vanished_after_open);
  tcase_add_test(tc, config_all_ones);
  tcase_add_test(tc, bar_all_ones);
  tcase_add_test(tc, vfio_no_module);
  tcase_add_test(tc, vfio_no_group);
  tcase_add_test(tc, vfio_no_devnodes);
  tcase_add_test(tc, vfio_not_a_container);
  tcase_add_test(tc, vfio_open_cleans_up);
  return tc;
}
