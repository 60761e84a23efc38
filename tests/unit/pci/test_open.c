/* tests/unit/pci/test_open.c: opening through sysfs: driver policy, enable, configuration space,
 * capabilities, and what an open holds. */
#include <unistd.h>

#include "platform/pci.h"
#include "platform/pci_lock.h"
#include "platform/pci_regs.h"
#include "pci_test.h"

START_TEST(open_refuses_bound_driver) {
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, 0, &d), BG_EBUSY, "0000:03:00.0 is bound to kernel driver amdgpu");
  ck_assert_ptr_null(d);
  ck_assert_str_eq(mock_pci_driver(mock_sysfs_find(fx, AMD_BDF)), "amdgpu");
  /* Nothing was changed and nothing is held. */
  ck_assert(!mock_pci_enabled(mock_sysfs_find(fx, AMD_BDF)));
  pid_t pid;
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, 0);
}
END_TEST

START_TEST(open_unbinds_when_asked) {
  bg_pci_dev *d;
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  ck_assert_str_eq(bg_pci_name(d), AMD_BDF);
  ck_assert_str_eq(mock_pci_driver(m), "");
  ck_assert(mock_pci_enabled(m));
  uint16_t want = BG_PCI_COMMAND_MEMORY | BG_PCI_COMMAND_MASTER;
  ck_assert_uint_eq(mock_pci_command(m) & want, want);
  pid_t pid;
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, getpid());
  ck_assert(!bg_pci_has_irq(d));
  FAILS(bg_pci_wait_irq(d, 0), BG_ENOTSUP, "poll instead");
  bg_pci_close(d);
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, 0);
  /* Siblings stay unless asked for. */
  ck_assert_ptr_nonnull(mock_sysfs_find(fx, AUDIO_BDF));
}
END_TEST

START_TEST(open_bad_address) {
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs("03:00.0", 0, &d), BG_EINVAL, "expected DDDD:BB:DD.F");
  FAILS(bg_pci_open_sysfs("0000:03:00.0/../x", 0, &d), BG_EINVAL, "bad PCI address");
  FAILS(bg_pci_open_sysfs("0000:07:00.0", 0, &d), BG_ENODEV, "no PCI device 0000:07:00.0");
}
END_TEST

START_TEST(config_space) {
  bg_pci_dev *d;
  uint32_t v, off;
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  OK(bg_pci_cfg_read(d, BG_PCI_VENDOR_ID, 2, &v));
  ck_assert_uint_eq(v, 0x10de);
  OK(bg_pci_cfg_read(d, BG_PCI_VENDOR_ID, 4, &v));
  ck_assert_uint_eq(v, 0x233510de);
  OK(bg_pci_cfg_read(d, BG_PCI_CLASS_REVISION + 3, 1, &v));
  ck_assert_uint_eq(v, 0x03);
  /* Writable bits stick, read-only ones do not (the model rewrites the file). */
  OK(bg_pci_cfg_write(d, BG_PCI_INTERRUPT_LINE, 1, 0x5a));
  OK(bg_pci_cfg_read(d, BG_PCI_INTERRUPT_LINE, 1, &v));
  ck_assert_uint_eq(v, 0x5a);
  OK(bg_pci_cfg_write(d, BG_PCI_BASE_ADDRESS_0, 4, 0xffffffffu));
  OK(bg_pci_cfg_read(d, BG_PCI_BASE_ADDRESS_0, 4, &v));
  ck_assert_uint_eq(v, ~((16u << 20) - 1));  /* BAR sizing: 16 MiB, 32-bit, not prefetchable */
  OK(bg_pci_find_cap(d, BG_PCI_CAP_ID_EXP, &off));
  ck_assert_uint_eq(off, 0x40);
  OK(bg_pci_find_cap(d, BG_PCI_CAP_ID_MSI, &off));
  ck_assert_uint_eq(off, 0x80);
  OK(bg_pci_find_cap(d, BG_PCI_CAP_ID_MSIX, &off));
  ck_assert_uint_eq(off, 0);
  OK(bg_pci_find_ext_cap(d, BG_PCI_EXT_CAP_ID_REBAR, &off));
  ck_assert_uint_eq(off, 0);  /* the NVIDIA model has no resizable BAR */
  FAILS(bg_pci_cfg_read(d, 3, 2, &v), BG_EINVAL, "naturally aligned");
  FAILS(bg_pci_cfg_read(d, 0x1000, 4, &v), BG_EINVAL, "inside 4 KiB");
  FAILS(bg_pci_cfg_write(d, 0x40, 1, 0x100), BG_EINVAL, "does not fit");
  bg_pci_close(d);
}
END_TEST

/* The model is strict about identity fields: a driver must never write the vendor ID. */
START_TEST(config_identity_write_fails) {
  bg_pci_dev *d;
  uint32_t v;
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  ck_assert_int_lt(bg_pci_cfg_write(d, BG_PCI_VENDOR_ID, 2, 0x1234), 0);
  expect_failures(1, "read-only identity byte 0x0");
  OK(bg_pci_cfg_read(d, BG_PCI_VENDOR_ID, 2, &v));
  ck_assert_uint_eq(v, 0x10de);
  bg_pci_close(d);
}
END_TEST

START_TEST(ext_caps) {
  bg_pci_dev *d;
  uint32_t off, cap, ctrl;
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  OK(bg_pci_find_ext_cap(d, BG_PCI_EXT_CAP_ID_REBAR, &off));
  ck_assert_uint_eq(off, 0x100);
  OK(bg_pci_cfg_read(d, off + BG_PCI_REBAR_CAP, 4, &cap));
  OK(bg_pci_cfg_read(d, off + BG_PCI_REBAR_CTRL, 4, &ctrl));
  ck_assert_uint_eq(cap, 0x700u << 4);
  ck_assert_uint_eq(ctrl & BG_PCI_REBAR_CTRL_BAR_IDX, 0);
  ck_assert_uint_eq((ctrl & BG_PCI_REBAR_CTRL_BAR_SIZE) >> BG_PCI_REBAR_CTRL_BAR_SHIFT, 8);  /* 256 MiB */
  bg_pci_close(d);
}
END_TEST

TCase *tcase_open(void) {
  TCase *tc = fx_tcase("open");
  tcase_add_test(tc, open_refuses_bound_driver);
  tcase_add_test(tc, open_unbinds_when_asked);
  tcase_add_test(tc, open_bad_address);
  tcase_add_test(tc, config_space);
  tcase_add_test(tc, config_identity_write_fails);
  tcase_add_test(tc, ext_caps);
  return tc;
}
