/* tests/unit/usb/test_bridge.c: the bridge protocol (usb/asm24.c) and the PCI-device interface over it
 * (usb/usb_pci.c) against the emulated bridge: link bring-up, hierarchy and BAR set-up, config and memory
 * TLPs, completion errors and retries, batching (round trips per queue submit), XDATA windows, sysmem in
 * SRAM with the GPU's DMA, strictness of the model, a vanished device. */
#include <stdio.h>

#include "platform/pci_regs.h"
#include "mock_pci.h"
#include "usb_test.h"

START_TEST(open_sets_up_hierarchy) {
  ck_assert(mock_asm24_link_up(UB));
  ck_assert(bg_usb_pci_is_usb(UP));
  bg_pci_bar b;
  OK(bg_pci_bar_info(UP, 0, &b));
  ck_assert_uint_eq(b.base, 32ull << 30);   /* tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars: prefetchable pool at 32 GiB */
  ck_assert_uint_eq(b.size, 256ull << 20);
  ck_assert(b.is_64 && b.prefetch);
  OK(bg_pci_bar_info(UP, 2, &b));
  ck_assert_uint_eq(b.base, (32ull << 30) + (256ull << 20));
  ck_assert_uint_eq(b.size, 2ull << 20);
  OK(bg_pci_bar_info(UP, 5, &b));
  ck_assert_uint_eq(b.base, 0x10000000ull);  /* non-prefetchable pool */
  ck_assert_uint_eq(b.size, 2ull << 20);
  uint32_t v;
  OK(bg_pci_cfg_read(UP, BG_PCI_VENDOR_ID, 2, &v));
  ck_assert_uint_eq(v, 0x1002);
  OK(bg_pci_cfg_read(UP, BG_PCI_DEVICE_ID, 2, &v));
  ck_assert_uint_eq(v, 0x744c);
  ck_assert_uint_eq(mock_pci_command(mock_amd_pci(UG)) & 7, 7);
  for (unsigned bus = 0; bus < 4; bus++) {
    OK(bg_asm24_cfg_read(ux_bridge(), bus, 0, 0, 0x18, 4, &v));
    ck_assert_uint_eq(v & 0xffffff, (bus + 1) << 8 | 4u << 16);  /* primary 0, as the reference writes it */
  }
  OK(bg_pci_check_alive(UP));
}
END_TEST

START_TEST(register_read_and_write) {
  bg_mmio mmio;
  OK(bg_pci_map_bar(UP, 5, 0, 0, 0, &mmio));
  ck_assert_uint_eq(bg_mmio_rd32(&mmio, 0xde3 * 4), 256);  /* RCC_CONFIG_MEMSIZE: VRAM MiB */
  uint32_t scratch = mock_amd_regs(UG)->scratch6;
  ck_assert_int_eq(bg_mmio_wr32(&mmio, scratch * 4ull, 0xC0FFEE01u), 0);
  ck_assert_uint_eq(mock_amd_peek(UG, scratch), 0xC0FFEE01u);
  ck_assert_uint_eq(bg_mmio_rd32(&mmio, scratch * 4ull), 0xC0FFEE01u);
  /* byte writes to VRAM go as byte-enabled single TLPs */
  bg_mmio vram;
  OK(bg_pci_map_bar(UP, 0, 0, 0, BG_PCI_MAP_WC, &vram));
  ck_assert_int_eq(bg_mmio_wr8(&vram, 0x1001, 0x5A), 0);
  ck_assert_int_eq(bg_mmio_wr16(&vram, 0x1002, 0xBEEF), 0);
  ck_assert_uint_eq(bg_mmio_rd32(&vram, 0x1000), 0xBEEF5A00u);
  ck_assert_uint_eq(mock_amd_vram(UG)[0x1001], 0x5A);
  bg_pci_unmap_bar(UP, &vram);
  bg_pci_unmap_bar(UP, &mmio);
}
END_TEST

START_TEST(tlp_completion_errors) {
  bg_asm24 *b = ux_bridge();
  uint32_t v = 0;
  /* nothing behind bus 7: Unsupported Request, named */
  ck_assert_int_eq(bg_asm24_cfg_read(b, 7, 0, 0, 0, 4, &v), -BG_EIO);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "CfgRd1") && strstr(msg, "07:00.0") && strstr(msg, "Unsupported Request"), "%s", msg);
  /* a Type 0 request to bus 4 is a driver bug: UR and a model failure */
  ck_assert_int_eq(bg_asm24_tlp(b, 0x04, 0x04000000ull, 4, &v), -BG_EIO);
  ux_expect_failures(1, "type 0 is for bus 0");
  /* a memory read where no BAR is: UR */
  ck_assert_int_eq(bg_asm24_tlp(b, 0x20, 0x20000000ull, 4, &v), -BG_EIO);
  ck_assert_msg(strstr(bg_last_error(), "MRd64 of 4 bytes at 0x20000000"), "%s", bg_last_error());
  ux_expect_failures(1, "no GPU BAR is assigned there");
  /* the firmware's error byte: re-issued and recovered */
  mock_asm24_inject(UB, MOCK_ASM24_CPL_ERROR, 0, 3);
  OK(bg_asm24_cfg_read(b, 4, 0, 0, 0, 2, &v));
  ck_assert_uint_eq(v, 0x1002);
  ck_assert_uint_eq(mock_asm24_get_stats(UB)->faults_fired, 3);
  /* ... or, when it persists, a clean error after 10 retries */
  mock_asm24_inject(UB, MOCK_ASM24_CPL_ERROR, 0, 100);
  ck_assert_int_eq(bg_asm24_cfg_read(b, 4, 0, 0, 0, 2, &v), -BG_EIO);
  ck_assert_msg(strstr(bg_last_error(), "after 10 retries"), "%s", bg_last_error());
  mock_asm24_clear_faults(UB);
  /* streaming read of an unassigned range: refused, never reported as data */
  uint8_t buf[16];
  ck_assert_int_lt(bg_asm24_mem_read(b, 0x30000000ull, buf, sizeof(buf)), 0);
  ck_assert_msg(strstr(bg_last_error(), "0x30000000"), "%s", bg_last_error());
  ck_assert_uint_ge(mock_asm24_nfail(UB), 1);
  mock_asm24_clear_failures(UB);
}
END_TEST

/* A queue submit: ring bytes and wptr into VRAM (write-combined), then the doorbell-like uncached write: one wait,
 * two transfers per contiguous run and one (a single MWr TLP) for the doorbell. */
START_TEST(submit_is_one_round_trip) {
  bg_mmio vram, mmio;
  OK(bg_pci_map_bar(UP, 0, 0, 0, BG_PCI_MAP_WC, &vram));
  OK(bg_pci_map_bar(UP, 5, 0, 0, 0, &mmio));
  bg_usb_transport *t = bg_asm24_transport(ux_bridge());
  uint32_t ring[24];
  for (int i = 0; i < 24; i++) ring[i] = 0xC0000000u | (uint32_t)i;
  uint32_t db = mock_amd_regs(UG)->scratch7;
  bg_usb_stats s0 = t->stats;
  ck_assert_int_eq(bg_mmio_write(&vram, 0x10000, ring, sizeof(ring)), 0);
  ck_assert_int_eq(bg_mmio_wr64(&vram, 0x20000, 24), 0);
  ck_assert_uint_eq(t->stats.round_trips, s0.round_trips);  /* queued */
  ck_assert_uint_eq(bg_asm24_pending(ux_bridge()), sizeof(ring) + 8);
  ck_assert_int_eq(bg_mmio_wr32(&mmio, db * 4ull, 24), 0);
  ck_assert_uint_eq(t->stats.round_trips - s0.round_trips, 1);
  ck_assert_uint_eq(t->stats.xfers[BG_USB_CTRL_OUT] - s0.xfers[BG_USB_CTRL_OUT], 3);
  ck_assert_uint_eq(t->stats.xfers[BG_USB_BULK_OUT] - s0.xfers[BG_USB_BULK_OUT], 2);
  ck_assert_uint_eq(t->stats.critical - s0.critical, 5); /* arm, ring, arm, wptr, doorbell */
  ck_assert(memcmp(mock_amd_vram(UG) + 0x10000, ring, sizeof(ring)) == 0);
  uint64_t wptr;
  memcpy(&wptr, mock_amd_vram(UG) + 0x20000, 8);
  ck_assert_uint_eq(wptr, 24);
  ck_assert_uint_eq(mock_amd_peek(UG, db), 24);
  /* contiguous writes merge into one stream; a read carries queued writes in its round trip */
  s0 = t->stats;
  for (int i = 0; i < 16; i++) ck_assert_int_eq(bg_mmio_wr32(&vram, 0x30000 + 4ull * (unsigned)i, (uint32_t)i), 0);
  ck_assert_uint_eq(bg_mmio_rd32(&vram, 0x3003c), 15);
  ck_assert_uint_eq(t->stats.round_trips - s0.round_trips, 1);
  ck_assert_uint_eq(t->stats.xfers[BG_USB_BULK_OUT] - s0.xfers[BG_USB_BULK_OUT], 1);
  /* an uncached write right after a WC run stays a TLP of its own (a doorbell keeps its width): a single MWr, no
   * bulk transfer */
  s0 = t->stats;
  uint64_t tlps0 = mock_asm24_get_stats(UB)->mem_tlps;
  ck_assert_int_eq(bg_mmio_wr32(&vram, 0x40000, 1), 0);
  ck_assert_int_eq(bg_asm24_mem_write(ux_bridge(), (32ull << 30) + 0x40004, &(uint32_t){2}, 4, false), 0);
  ck_assert_uint_eq(t->stats.xfers[BG_USB_BULK_OUT] - s0.xfers[BG_USB_BULK_OUT], 1);
  ck_assert_uint_eq(mock_asm24_get_stats(UB)->mem_tlps - tlps0, 1);
  ck_assert_uint_eq(t->stats.round_trips - s0.round_trips, 1);
  bg_pci_unmap_bar(UP, &vram);
  bg_pci_unmap_bar(UP, &mmio);
}
END_TEST

START_TEST(xdata_windows) {
  bg_asm24 *b = ux_bridge();
  bg_usb_transport *t = bg_asm24_transport(b);
  uint64_t fence = 0x1122334455667788ull;
  bg_usb_stats s0 = t->stats;
  OK(bg_asm24_xdata_write(b, 0xA800, &fence, 8));
  ck_assert_uint_eq(t->stats.xfers[BG_USB_CTRL_OUT] - s0.xfers[BG_USB_CTRL_OUT], 8);  /* one per byte */
  ck_assert_uint_eq(t->stats.round_trips - s0.round_trips, 1);
  ck_assert(memcmp(mock_asm24_sys(UB, 0x820800, NULL), &fence, 8) == 0);
  uint8_t big[600];
  for (int i = 0; i < 600; i++) mock_asm24_sys(UB, 0x820000, NULL)[i] = (uint8_t)(i * 7);
  s0 = t->stats;
  OK(bg_asm24_xdata_read(b, 0xA000, big, sizeof(big)));
  ck_assert_uint_eq(t->stats.xfers[BG_USB_CTRL_IN] - s0.xfers[BG_USB_CTRL_IN], 3);  /* 255-byte requests */
  for (int i = 0; i < 600; i++) ck_assert_uint_eq(big[i], (uint8_t)(i * 7));
  bg_mmio cq;
  OK(bg_usb_pci_map_window(UP, BG_ASM24_WIN_CQBUF, &cq));
  ck_assert_int_eq(bg_mmio_wr32(&cq, 12, 0xFFFFFFFFu), 0);
  ck_assert_uint_eq(bg_mmio_rd32(&cq, 12), 0xFFFFFFFFu);
  ck_assert_uint_eq(mock_asm24_sys(UB, 0x82200C, NULL)[0], 0xFF);
  bg_pci_unmap_bar(UP, &cq);
}
END_TEST

START_TEST(sysmem_in_sram) {
  bg_sysmem m;
  OK(bg_pci_alloc_sysmem(UP, 20000, 0, NULL, &m));
  ck_assert_uint_eq(m.size, 0x8000);
  ck_assert_uint_eq(m.bus[0], 0x200000);
  ck_assert_uint_eq(m.bus[7], 0x200000 + 7 * 4096);
  uint8_t pat[5000], back[5000];
  for (int i = 0; i < 5000; i++) pat[i] = (uint8_t)(i ^ 0x5C);
  OK(bg_mmio_write(&m.view, 777, pat, sizeof(pat)));
  ck_assert(memcmp(mock_asm24_sram(UB) + 777, pat, sizeof(pat)) == 0);
  /* the GPU's DMA sees it at the bus address */
  mock_pci *gpu = mock_amd_pci(UG);
  OK(mock_pci_dma_read(gpu, m.bus[0] + 777, back, sizeof(back)));
  ck_assert(memcmp(back, pat, sizeof(pat)) == 0);
  /* GPU writes, host reads through the view */
  OK(mock_pci_dma_write(gpu, m.bus[1] + 5, pat, 100));
  memset(back, 0, sizeof(back));
  OK(bg_mmio_read(&m.view, 4096 + 5, back, 100));
  ck_assert(memcmp(back, pat, 100) == 0);
  bg_sysmem m2;
  OK(bg_pci_alloc_sysmem(UP, 4096, 0, NULL, &m2));
  ck_assert_uint_eq(m2.bus[0], 0x208000);
  bg_sysmem m3;
  ck_assert_int_eq(bg_pci_alloc_sysmem(UP, 0x80000, 0, NULL, &m3) < 0, 1);
  ck_assert_msg(strstr(bg_last_error(), "512 KiB"), "%s", bg_last_error());
  uint64_t bus;
  ck_assert_int_eq(bg_pci_dma_map(UP, pat, 4096, &bus), -BG_ENOTSUP);
  bg_pci_free_sysmem(UP, &m2);
  bg_pci_free_sysmem(UP, &m);
  /* DMA outside the bridge windows is a failure of the tree's device */
  ck_assert_int_lt(mock_pci_dma_read(gpu, 0x300000, back, 4), 0);
  ck_assert_uint_eq(mock_sysfs_nfail(UT), 1);
  mock_sysfs_clear_failures(UT);
}
END_TEST

/* Raw fixture: the bridge before bg_asm24_open. */
START_TEST(link_and_strictness) {
  bg_usb_transport *t = mock_asm24_transport(UB);
  ck_assert(!mock_asm24_link_up(UB));
  /* a config TLP with the link down completes with UR and is a failure */
  uint8_t p[12], cpl[8] = {0};
  uint16_t wv;
  OK(bg_asm24_tlp_encode(0x04, 0, 4, 0, &wv, p));
  bg_usb_xfer x[2] = {{.kind = BG_USB_CTRL_OUT, .req = 0xF0, .val = wv, .idx = 0, .buf = p, .len = 12},
                      {.kind = BG_USB_CTRL_IN, .req = 0xF0, .buf = cpl, .len = 8}};
  OK(bg_usb_run(t, x, 2));
  ck_assert_uint_eq(cpl[4] >> 5, BG_CPL_UR);
  ux_expect_failures(1, "link down");
  /* bulk data nothing armed for */
  uint8_t data[512] = {0};
  bg_usb_xfer bo = {.kind = BG_USB_BULK_OUT, .buf = data, .len = sizeof(data)};
  ck_assert_int_eq(bg_usb_run(t, &bo, 1), -BG_EIO);
  ux_expect_failures(1, "bulk OUT of 512 bytes while nothing");
  /* a request while an SRAM write is armed */
  bg_usb_xfer arm = {.kind = BG_USB_CTRL_OUT, .req = 0xF2, .val = 1, .idx = 1 << 8}  /* slot 0, one slot */;
  OK(bg_usb_run(t, &arm, 1));
  ck_assert_int_eq(bg_usb_run(t, &arm, 1), -BG_EIO);
  ux_expect_failures(1, "still armed");
  /* wrong slot count, unknown request */
  arm.idx = 0;
  ck_assert_int_eq(bg_usb_run(t, &arm, 1), -BG_EIO);
  ux_expect_failures(1, "ceil(len/16K)");
  bg_usb_xfer unk = {.kind = BG_USB_CTRL_OUT, .req = 0xE7};
  ck_assert_int_eq(bg_usb_run(t, &unk, 1), -BG_EIO);
  ux_expect_failures(1, "unknown vendor request 0xE7");
  /* open powers the link on */
  bg_asm24 *b;
  OK(bg_asm24_open(t, &b));
  ck_assert(mock_asm24_link_up(UB));
  bg_asm24_close(b);
}
END_TEST

START_TEST(device_gone) {
  mock_asm24_inject(UB, MOCK_ASM24_GONE, 0, 1);
  uint32_t v;
  ck_assert_int_eq(bg_pci_cfg_read(UP, 0, 4, &v), -BG_ENODEV);
  ck_assert_msg(strstr(bg_last_error(), "device gone"), "%s", bg_last_error());
  ck_assert_int_eq(bg_pci_check_alive(UP), -BG_ENODEV);
  ck_assert_msg(strstr(bg_last_error(), "vanished"), "%s", bg_last_error());
}
END_TEST

/* A device with a Resizable BAR: the set-up picks the largest size before placing the BARs. */
START_TEST(rebar_largest_size) {
  mock_sysfs *t = mock_sysfs_new();
  ck_assert_ptr_nonnull(t);
  mock_pci_cfg cfg = {.bdf = "0000:05:00.0", .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
                      .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true, .rebar_sizes = 0x700},
                               [2] = {.size = 2u << 20, .is_64 = true, .prefetch = true},
                               [5] = {.size = 1u << 20}}};
  mock_pci *gpu = mock_sysfs_add(t, &cfg);
  ck_assert_ptr_nonnull(gpu);
  mock_asm24 *br = mock_asm24_new(gpu);
  bg_pci_dev *d;
  OK(bg_usb_pci_open(mock_asm24_transport(br), &d));
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  ck_assert_uint_eq(b.size, 1ull << 30);  /* 0x700: 256 MiB, 512 MiB, 1 GiB supported */
  ck_assert_uint_eq(mock_pci_bar_size(gpu, 0), 1ull << 30);
  ck_assert_uint_eq(b.base, 32ull << 30);
  OK(bg_pci_bar_info(d, 2, &b));
  ck_assert_uint_eq(b.base, (32ull << 30) + (1ull << 30));
  bg_mmio v;
  OK(bg_pci_map_bar(d, 0, 0, 0, BG_PCI_MAP_WC, &v));
  ck_assert_int_eq(bg_mmio_wr64(&v, (1ull << 30) - 8, 0x0123456789abcdefull), 0);
  ck_assert_uint_eq(bg_mmio_rd64(&v, (1ull << 30) - 8), 0x0123456789abcdefull);
  bg_pci_unmap_bar(d, &v);
  bg_pci_close(d);
  unsigned nf = mock_asm24_nfail(br) + mock_sysfs_nfail(t);
  char msg[8192];
  snprintf(msg, sizeof(msg), "%s%s", mock_asm24_failures(br), mock_sysfs_failures(t));
  mock_asm24_free(br);
  mock_sysfs_free(t);
  ck_assert_msg(nf == 0, "model failures:\n%s", msg);
}
END_TEST

Suite *usb_bridge_suite(void) {
  Suite *s = suite_create("usb-bridge");
  TCase *tc = ux_tcase("bridge", true);
  tcase_add_test(tc, open_sets_up_hierarchy);
  tcase_add_test(tc, register_read_and_write);
  tcase_add_test(tc, tlp_completion_errors);
  tcase_add_test(tc, submit_is_one_round_trip);
  tcase_add_test(tc, xdata_windows);
  tcase_add_test(tc, sysmem_in_sram);
  tcase_add_test(tc, device_gone);
  suite_add_tcase(s, tc);
  TCase *raw = ux_tcase("bridge-raw", false);
  tcase_add_test(raw, link_and_strictness);
  suite_add_tcase(s, raw);
  TCase *own = tcase_create("bridge-rebar");
  tcase_add_test(own, rebar_largest_size);
  suite_add_tcase(s, own);
  return s;
}
