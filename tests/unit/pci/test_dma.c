/* tests/unit/pci/test_dma.c: DMA memory of an open device: bus addresses from the emulated
 * device, device-initiated DMA into the host buffers, and its strict failures. */
#include <stdlib.h>

#include "platform/pci.h"
#include "platform/pci_regs.h"
#include "pci_test.h"

START_TEST(sysmem_and_device_dma) {
  bg_pci_dev *d;
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(d, 5 * 4096, 0, NULL, &s));
  ck_assert_uint_eq(s.npages, 5);
  ck_assert_uint_eq(mock_sysfs_dma_ranges(fx), 1);
  /* Not asked contiguous: the model hands the pages out in reverse. */
  for (size_t i = 1; i < 5; i++) ck_assert_uint_eq(s.bus[i], s.bus[0] - i * 4096);
  ck_assert_uint_ge(s.bus[4], 1ull << 32);
  uint8_t *host = (uint8_t *)s.view.ptr;
  ck_assert_int_eq(mock_pci_dma_write(m, s.bus[2] + 16, "hello", 5), 0);
  ck_assert_mem_eq(host + 2 * 4096 + 16, "hello", 5);
  /* Across a page boundary in bus space: the end of page 1 continues at page 0. */
  ck_assert_int_eq(mock_pci_dma_write(m, s.bus[1] + 4092, "abcdefgh", 8), 0);
  ck_assert_mem_eq(host + 4096 + 4092, "abcd", 4);
  ck_assert_mem_eq(host, "efgh", 4);
  char back[6] = {0};
  memcpy(host + 3 * 4096, "world", 5);
  ck_assert_int_eq(mock_pci_dma_read(m, s.bus[3], back, 5), 0);
  ck_assert_str_eq(back, "world");
  /* Strict: an address nobody mapped, and DMA with bus mastering off. */
  ck_assert_int_lt(mock_pci_dma_write(m, 0x1000, "x", 1), 0);
  expect_failures(1, "DMA to unmapped bus address 0x1000");
  uint32_t cmd;
  OK(bg_pci_cfg_read(d, BG_PCI_COMMAND, 2, &cmd));
  OK(bg_pci_cfg_write(d, BG_PCI_COMMAND, 2, cmd & ~BG_PCI_COMMAND_MASTER));
  ck_assert_int_lt(mock_pci_dma_read(m, s.bus[0], back, 1), 0);
  expect_failures(1, "with bus mastering off");
  OK(bg_pci_cfg_write(d, BG_PCI_COMMAND, 2, cmd));
  bg_pci_free_sysmem(d, &s);
  bg_pci_free_sysmem(d, &s);  /* a second free is a no-op */
  ck_assert_uint_eq(mock_sysfs_dma_ranges(fx), 0);
  /* One page, contiguous. */
  OK(bg_pci_alloc_sysmem(d, 100, BG_SYSMEM_CONTIGUOUS, NULL, &s));
  ck_assert_uint_eq(s.npages, 1);
  ck_assert_uint_eq(s.bus[0] % (2u << 20), 0);
  bg_pci_free_sysmem(d, &s);
  bg_pci_close(d);
}
END_TEST

START_TEST(map_host_buffer) {
  bg_pci_dev *d;
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  uint8_t *buf = aligned_alloc(4096, 2 * 4096);
  ck_assert_ptr_nonnull(buf);
  memset(buf, 0, 2 * 4096);
  uint64_t bus[2];
  OK(bg_pci_dma_map(d, buf, 2 * 4096, bus));
  ck_assert_int_eq(mock_pci_dma_write(m, bus[1] + 8, "gpu", 3), 0);
  ck_assert_mem_eq(buf + 4096 + 8, "gpu", 3);
  bg_pci_dma_unmap(d, buf, 2 * 4096);
  ck_assert_uint_eq(mock_sysfs_dma_ranges(fx), 0);
  FAILS(bg_pci_dma_map(d, buf + 1, 4096, bus), BG_EINVAL, "whole 4 KiB pages");
  free(buf);
  bg_pci_close(d);
}
END_TEST

TCase *tcase_dma(void) {
  TCase *tc = fx_tcase("dma");
  tcase_add_test(tc, sysmem_and_device_dma);
  tcase_add_test(tc, map_host_buffer);
  return tc;
}
