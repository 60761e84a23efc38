/* tests/unit/pci/test_admin.c: hcq_smi's actions by address: unbind/bind, reset (through an
 * open device and by address), removing sibling functions. */
#include <errno.h>

#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_attr.h"
#include "platform/pci_regs.h"
#include "pci_test.h"

START_TEST(unbind_bind) {
  char was[32];
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  OK(bg_pci_unbind(AMD_BDF, was, sizeof(was)));
  ck_assert_str_eq(was, "amdgpu");
  ck_assert_str_eq(mock_pci_driver(m), "");
  OK(bg_pci_unbind(AMD_BDF, was, sizeof(was)));  /* nothing bound: nothing to do */
  ck_assert_str_eq(was, "");
  FAILS(bg_pci_bind(AMD_BDF, "nouveau"), BG_ENODEV, "kernel driver nouveau is not loaded");
  OK(bg_pci_bind(AMD_BDF, "amdgpu"));
  ck_assert_str_eq(mock_pci_driver(m), "amdgpu");
  OK(bg_pci_bind(AMD_BDF, "amdgpu"));  /* already */
  FAILS(bg_pci_bind(AMD_BDF, "e1000e"), BG_EBUSY, "bound to amdgpu: unbind it before binding e1000e");
  FAILS(bg_pci_unbind("0000:09:00.0", NULL, 0), BG_ENODEV, "no PCI device 0000:09:00.0");
  FAILS(bg_pci_bind(AMD_BDF, "../x"), BG_EINVAL, "bad driver name");
  /* A VFIO open leaves driver_override=vfio-pci behind; bind clears it, else the kernel refuses. */
  OK(bg_pci_unbind(AMD_BDF, was, sizeof(was)));
  OK(bg_sysfs_write("bus/pci/devices/" AMD_BDF "/driver_override", "vfio-pci"));
  OK(bg_pci_bind(AMD_BDF, "amdgpu"));
  ck_assert_str_eq(mock_pci_driver(m), "amdgpu");
  char over[32];
  OK(bg_sysfs_read("bus/pci/devices/" AMD_BDF "/driver_override", over, sizeof(over)));
  ck_assert_str_eq(over, "(null)");
}
END_TEST

START_TEST(unbind_refused) {
  mock_sysfs_fail_open(fx, "drivers/amdgpu/unbind", EACCES);
  FAILS(bg_pci_unbind(AMD_BDF, NULL, 0), BG_EPERM, "unbind amdgpu: cannot open for writing");
  ck_assert(strstr(bg_last_error(), "run as root") != NULL);
  ck_assert_str_eq(mock_pci_driver(mock_sysfs_find(fx, AMD_BDF)), "amdgpu");
}
END_TEST

static void on_reset(void *user, mock_pci *m) {
  (void)m;
  (*(int *)user)++;
}

START_TEST(reset_open_device) {
  int model_resets = 0;
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  mock_pci_on_reset(m, on_reset, &model_resets);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  OK(bg_pci_reset(d));
  ck_assert_uint_eq(mock_pci_resets(m), 1);
  ck_assert_int_eq(model_resets, 1);
  /* Decoding and bus mastering survive (the kernel restores config space). */
  uint16_t want = BG_PCI_COMMAND_MEMORY | BG_PCI_COMMAND_MASTER;
  ck_assert_uint_eq(mock_pci_command(m) & want, want);
  OK(bg_pci_check_alive(d));
  bg_pci_close(d);
  OK(bg_pci_reset_bdf(AMD_BDF));
  ck_assert_uint_eq(mock_pci_resets(m), 2);
}
END_TEST

START_TEST(reset_unsupported) {
  mock_pci_cfg cfg = {.bdf = "0000:08:00.0", .vendor = 0x10de, .device = 0x2684, .class_code = 0x030000,
                      .bars = {[0] = {.size = 16u << 20}}, .iommu_group = -1, .no_reset = true};
  ck_assert_ptr_nonnull(mock_sysfs_add(fx, &cfg));
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs("0000:08:00.0", 0, &d));
  FAILS(bg_pci_reset(d), BG_ENOTSUP, "no reset method");
  bg_pci_close(d);
  FAILS(bg_pci_reset_bdf("0000:08:00.0"), BG_ENOTSUP, "0000:08:00.0: the kernel knows no reset method");
}
END_TEST

START_TEST(remove_siblings) {
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER | BG_PCI_REMOVE_SIBLINGS, &d));
  ck_assert_ptr_null(mock_sysfs_find(fx, AUDIO_BDF));
  ck_assert_ptr_nonnull(mock_sysfs_find(fx, AMD_BDF));
  bg_pci_close(d);
}
END_TEST

TCase *tcase_admin(void) {
  TCase *tc = fx_tcase("admin");
  tcase_add_test(tc, unbind_bind);
  tcase_add_test(tc, unbind_refused);
  tcase_add_test(tc, reset_open_device);
  tcase_add_test(tc, reset_unsupported);
  tcase_add_test(tc, remove_siblings);
  return tc;
}
