/* tests/unit/usb/test_stall.c: stalled bulk transfers recovered in place (usb/asm24.c bg_asm24_run, asm24_copy.c):
 * each variant of the emulated bridge's stall (tests/mockgpu/asm24.h: the endpoint halts or the transfer times out,
 * before or after the command ran) during a register read, a register write, pipelined BAR copies in and out (4
 * streams in flight); the data is right, the pipe was resynchronised once (both bulk halts cleared, the armed
 * command dropped), only the failed command went again, and the model saw no protocol violation (the teardown
 * asserts it). A stall that persists is a clean error naming the operation and the address, and the bridge goes on;
 * an SRAM read (whose arm the failure consumed) is reported, never re-sent. Through the plugin: MOCKUSB+AMD with
 * "usb-stall" injected keeps its buffers and kernels right. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "am/am_hcq.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "platform/mock_plugin.h"
#if BG_HAVE_LLVM
#include "amd_test_kernels.h"
#include "compile/llvm_amdgpu.h"
#endif
#include "usb_test.h"

static const mock_asm24_fault VARIANTS[4] = {MOCK_ASM24_HALT, MOCK_ASM24_HALT_AFTER, MOCK_ASM24_HANG,
                                             MOCK_ASM24_HANG_AFTER};
static const char *const VNAMES[4] = {"halt before", "halt after", "timeout before", "timeout after"};

static uint64_t stalls_fired(mock_asm24_fault v) { return mock_asm24_get_stats(UB)->stalls[v - MOCK_ASM24_HALT]; }

/* One stall was met and recovered from: one resync of the pipe (both endpoints), which dropped the command the
 * bridge still had armed when the stall came before it ran. */
static void one_recovery(const bg_usb_stats *s0, uint64_t halts0, uint64_t dropped0, mock_asm24_fault v,
                         uint64_t fired0, int i) {
  bg_usb_transport *t = bg_asm24_transport(ux_bridge());
  bool before = v == MOCK_ASM24_HALT || v == MOCK_ASM24_HANG;
  ck_assert_msg(mock_asm24_get_stats(UB)->dropped_arms - dropped0 == (before ? 1u : 0u), "%s: armed commands dropped",
                VNAMES[i]);
  ck_assert_msg(stalls_fired(v) == fired0 + 1, "%s: the stall did not fire", VNAMES[i]);
  ck_assert_msg(t->stats.resyncs - s0->resyncs == 1, "%s: %llu resyncs, expected 1", VNAMES[i],
                (unsigned long long)(t->stats.resyncs - s0->resyncs));
  ck_assert_uint_eq(mock_asm24_get_stats(UB)->clear_halts - halts0, 2);
}

START_TEST(register_read_stalls) {
  bg_mmio mmio;
  OK(bg_pci_map_bar(UP, 5, 0, 0, 0, &mmio));
  uint32_t scratch = mock_amd_regs(UG)->scratch6;
  for (int i = 0; i < 4; i++) {
    mock_amd_poke(UG, scratch, 0x5EED0000u + (uint32_t)i);
    bg_usb_stats s0 = bg_asm24_transport(ux_bridge())->stats;
    uint64_t h0 = mock_asm24_get_stats(UB)->clear_halts, f0 = stalls_fired(VARIANTS[i]);
    uint64_t d0 = mock_asm24_get_stats(UB)->dropped_arms;
    mock_asm24_inject(UB, VARIANTS[i], 0, 1);  /* the read's bulk IN is the first bulk transfer */
    uint32_t v = 0;
    ck_assert_msg(bg_mmio_read(&mmio, scratch * 4ull, &v, 4) == 0, "%s: %s", VNAMES[i], bg_last_error());
    ck_assert_msg(v == 0x5EED0000u + (uint32_t)i, "%s: read 0x%08x", VNAMES[i], v);
    one_recovery(&s0, h0, d0, VARIANTS[i], f0, i);
  }
  bg_pci_unmap_bar(UP, &mmio);
}
END_TEST

/* A queue submit (ring bytes and wptr queued into VRAM, then the doorbell-like register write, a single MWr TLP) whose
 * wptr data stalls: the wptr goes again, then the doorbell, once; never the ring before it (it completed: re-sending
 * completed commands behind work the GPU may have taken would re-write memory it may have moved on from). */
START_TEST(register_write_stalls) {
  bg_mmio vram, mmio;
  OK(bg_pci_map_bar(UP, 0, 0, 0, BG_PCI_MAP_WC, &vram));
  OK(bg_pci_map_bar(UP, 5, 0, 0, 0, &mmio));
  bg_usb_transport *t = bg_asm24_transport(ux_bridge());
  uint32_t db = mock_amd_regs(UG)->scratch7;
  for (int i = 0; i < 4; i++) {
    uint32_t ring[16];
    for (int k = 0; k < 16; k++) ring[k] = 0xC0DE0000u | (uint32_t)(i << 8 | k);
    ck_assert_int_eq(bg_mmio_write(&vram, 0x10000, ring, sizeof(ring)), 0);
    ck_assert_int_eq(bg_mmio_wr64(&vram, 0x20000, 16u * (unsigned)(i + 1)), 0);
    bg_usb_stats s0 = t->stats;
    uint64_t h0 = mock_asm24_get_stats(UB)->clear_halts, f0 = stalls_fired(VARIANTS[i]);
    uint64_t d0 = mock_asm24_get_stats(UB)->dropped_arms;
    uint64_t w0 = mock_asm24_get_stats(UB)->stream_writes;
    uint64_t tlps0 = mock_asm24_get_stats(UB)->mem_tlps;
    mock_asm24_inject(UB, VARIANTS[i], 3, 1);  /* ctrl, bulk (ring), ctrl, bulk (wptr), ctrl (doorbell TLP) */
    ck_assert_msg(bg_mmio_write(&mmio, db * 4ull, &(uint32_t){16u * (unsigned)(i + 1)}, 4) == 0, "%s: %s", VNAMES[i],
                  bg_last_error());
    ck_assert_uint_eq(mock_amd_peek(UG, db), 16u * (unsigned)(i + 1));
    ck_assert(memcmp(mock_amd_vram(UG) + 0x10000, ring, sizeof(ring)) == 0);
    uint64_t wptr;
    memcpy(&wptr, mock_amd_vram(UG) + 0x20000, 8);
    ck_assert_uint_eq(wptr, 16u * (unsigned)(i + 1));
    one_recovery(&s0, h0, d0, VARIANTS[i], f0, i);
    /* ring, wptr, then the wptr's again: 3 bulk OUT transfers, 3 streams armed; the doorbell TLP reached the GPU once */
    ck_assert_msg(t->stats.xfers[BG_USB_BULK_OUT] - s0.xfers[BG_USB_BULK_OUT] == 3, "%s: %llu bulk OUT transfers, "
                  "expected 3 (only the wptr re-sent)", VNAMES[i],
                  (unsigned long long)(t->stats.xfers[BG_USB_BULK_OUT] - s0.xfers[BG_USB_BULK_OUT]));
    ck_assert_uint_eq(mock_asm24_get_stats(UB)->stream_writes - w0, 3);
    ck_assert_uint_eq(mock_asm24_get_stats(UB)->mem_tlps - tlps0, 1);
  }
  bg_pci_unmap_bar(UP, &vram);
  bg_pci_unmap_bar(UP, &mmio);
}
END_TEST

static void fill(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)ux_rand();
}

/* 7 streams of 1 MiB, 4 in flight: the third stream's bulk transfer stalls while the fourth is in flight. */
START_TEST(pipelined_copy_stalls) {
  ux_srand(0x5ea11001);
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  const size_t n = (6u << 20) + 4096;
  uint8_t *src = malloc(n), *dst = malloc(n);
  ck_assert(src && dst);
  uint8_t *vram = mock_amd_vram(UG);
  for (int dir = 0; dir < 2; dir++)
    for (int i = 0; i < 4; i++) {
      fill(src, n);
      uint64_t off = (uint64_t)(1 + i) << 22;
      if (dir) memcpy(vram + off, src, n);
      else memset(vram + off, 0, n);
      memset(dst, 0, n);
      bg_usb_stats s0 = bg_asm24_transport(b)->stats;
      uint64_t h0 = mock_asm24_get_stats(UB)->clear_halts, f0 = stalls_fired(VARIANTS[i]);
      uint64_t d0 = mock_asm24_get_stats(UB)->dropped_arms;
      mock_asm24_inject(UB, VARIANTS[i], 5, 1);  /* (arm, bulk) x 2, arm, then the third stream's bulk */
      int r = dir ? bg_asm24_copy_out(b, bar0.base + off, dst, n, NULL, NULL)
                  : bg_asm24_copy_in(b, bar0.base + off, src, n, NULL, NULL);
      ck_assert_msg(r == 0, "%s, copy %s: %s", VNAMES[i], dir ? "out" : "in", bg_last_error());
      ck_assert_msg(memcmp(dir ? dst : vram + off, src, n) == 0, "%s: copy %s differs", VNAMES[i], dir ? "out" : "in");
      one_recovery(&s0, h0, d0, VARIANTS[i], f0, i);
    }
  free(src);
  free(dst);
}
END_TEST

/* Stalls that do not clear: BG_EIO (BG_ETIMEDOUT for timeouts) naming the operation and the failed command's address,
 * after 10 retries; then the bridge takes new work (the device is not closed). */
START_TEST(permanent_stall) {
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0, bar5;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  OK(bg_pci_bar_info(UP, 5, &bar5));
  uint32_t scratch = mock_amd_regs(UG)->scratch6;
  uint64_t reg = bar5.base + scratch * 4ull;
  char want[64];
  mock_asm24_inject(UB, MOCK_ASM24_HALT, 0, 1000);
  /* 8 bytes: a stream (a lone dword would go as a TLP, with no bulk transfer to stall) */
  ck_assert_int_eq(bg_asm24_mem_write(b, reg, &(uint64_t){0xABCD}, 8, false), -BG_EIO);
  const char *msg = bg_last_error();
  snprintf(want, sizeof(want), "MWr stream of 8 bytes at 0x%llx", (unsigned long long)reg);
  ck_assert_msg(strstr(msg, "flush of queued PCIe memory writes") && strstr(msg, want) &&
                strstr(msg, "after 10 retries") && strstr(msg, "endpoint halted"), "%s", msg);
  ck_assert_uint_eq(mock_asm24_get_stats(UB)->stalls[0], 11);
  ck_assert_uint_eq(bg_asm24_pending(b), 0);
  mock_asm24_clear_faults(UB);
  mock_asm24_inject(UB, MOCK_ASM24_HANG, 0, 1000);
  uint32_t v;
  ck_assert_int_eq(bg_asm24_mem_read(b, reg, &v, 4), -BG_ETIMEDOUT);
  msg = bg_last_error();
  snprintf(want, sizeof(want), "MRd stream of 4 bytes at 0x%llx", (unsigned long long)reg);
  ck_assert_msg(strstr(msg, "PCIe memory read of 4 bytes") && strstr(msg, want) && strstr(msg, "timeout after 10"),
                "%s", msg);
  mock_asm24_clear_faults(UB);
  /* a pipelined copy: the stream that kept failing, by address */
  uint8_t *src = calloc(1, 3u << 20);
  ck_assert_ptr_nonnull(src);
  mock_asm24_inject(UB, MOCK_ASM24_HALT_AFTER, 3, 1000);
  ck_assert_int_eq(bg_asm24_copy_in(b, bar0.base, src, 3u << 20, NULL, NULL), -BG_EIO);
  msg = bg_last_error();
  snprintf(want, sizeof(want), "MWr stream at 0x%llx", (unsigned long long)bar0.base + (1u << 20));
  ck_assert_msg(strstr(msg, "copy in of 3145728 bytes") && strstr(msg, want) && strstr(msg, "after 10 retries"),
                "%s", msg);
  mock_asm24_clear_faults(UB);
  /* the same through the injection of the plugin's "usb-stall": every variant in turn, each error clean */
  mock_asm24_inject_stall(UB, 1000);
  int r = bg_asm24_mem_read(b, reg, &v, 4);
  ck_assert_msg(r == -BG_EIO || r == -BG_ETIMEDOUT, "%d: %s", r, bg_last_error());
  ck_assert_msg(strstr(bg_last_error(), "after 10 retries"), "%s", bg_last_error());
  mock_asm24_clear_faults(UB);
  /* and the bridge goes on */
  OK(bg_asm24_mem_write(b, reg, &(uint32_t){0x600D}, 4, false));
  OK(bg_asm24_mem_read(b, reg, &v, 4));
  ck_assert_uint_eq(v, 0x600D);
  OK(bg_asm24_copy_in(b, bar0.base, src, 3u << 20, NULL, NULL));
  free(src);
}
END_TEST

/* An SRAM read is the bulk transfer that is not safe to re-send: reported by name and address, the pipe resynchronised
 * (the arm dropped), and the next arm and read work. */
START_TEST(sram_read_stall_reported) {
  bg_asm24 *b = ux_bridge();
  uint8_t *sram = mock_asm24_sram(UB), buf[1024];
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < 1024; k++) sram[k] = (uint8_t)(k * 7 + i);
    OK(bg_asm24_sram_read_arm(b, sizeof(buf)));
    mock_asm24_inject(UB, VARIANTS[i], 0, 1);
    ck_assert_int_eq(bg_asm24_sram_read(b, buf, sizeof(buf)), i < 2 ? -BG_EIO : -BG_ETIMEDOUT);
    const char *msg = bg_last_error();
    ck_assert_msg(strstr(msg, "SRAM read of 1024 bytes") && strstr(msg, "0x200000") && strstr(msg, "not re-sent"), "%s",
                  msg);
    OK(bg_asm24_sram_read_arm(b, sizeof(buf)));
    OK(bg_asm24_sram_read(b, buf, sizeof(buf)));
    ck_assert(memcmp(buf, sram, sizeof(buf)) == 0);
  }
}
END_TEST

/* BG_DEBUG=1 reports each recovery: the operation, its address, the failed transfer and the retry. */
static void debug_setup(void) {
  setenv("BG_DEBUG", "1", 1);
  ux_setup();
}

START_TEST(recovery_is_logged) {
  ck_assert_int_eq(bg_debug_level(), 1);
  bg_pci_bar bar5;
  OK(bg_pci_bar_info(UP, 5, &bar5));
  uint64_t reg = bar5.base + mock_amd_regs(UG)->scratch6 * 4ull;
  char path[] = "/tmp/bg_stall_log_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  mock_asm24_inject(UB, MOCK_ASM24_HALT, 0, 1);
  uint32_t v;
  int r = bg_asm24_mem_read(ux_bridge(), reg, &v, 4);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ck_assert_msg(r == 0, "%s", bg_last_error());
  char log[4096] = "";
  ssize_t got = pread(fd, log, sizeof(log) - 1, 0);
  close(fd);
  unlink(path);
  ck_assert_int_gt(got, 0);
  char want[96];
  snprintf(want, sizeof(want), "PCIe memory read of 4 bytes at 0x%llx", (unsigned long long)reg);
  ck_assert_msg(strstr(log, "bg[1] usb: mockusb:") && strstr(log, want) && strstr(log, "stalled (endpoint halted)") &&
                strstr(log, "bulk endpoint halts cleared") && strstr(log, "(retry 1 of 10)") &&
                strstr(log, "recovered after 1 retry"), "%s", log);
}
END_TEST

/* Recoveries of the transport under the device (am/am_hcq.h), reached as test_hcq.c does. */
static uint64_t dev_resyncs(bg_dev *d) {
  const am_hcq *h = d->priv;
  ck_assert(bg_usb_pci_is_usb(h->d->pci));
  return bg_asm24_transport(bg_usb_pci_bridge(h->d->pci))->stats.resyncs;
}

/* MOCKUSB+AMD through the plugin's "usb-stall": every variant during buffer copies and a kernel launch. */
START_TEST(plugin_usb_stall) {
  setenv("BG_WAIT_TIMEOUT_MS", "20000", 1);
  bg_dev *d = NULL;
  OK(bg_dev_open("MOCKUSB+AMD", &d));
  ck_assert_int_eq(bg_mock_plugin_inject("MOCKUSB", 0, "usb-stall", 0), 0);
  ck_assert_int_eq(bg_mock_plugin_inject("MOCKPCI", 0, "usb-stall", 1), -BG_EINVAL);  /* a USB fault */
  ck_assert_msg(strstr(bg_last_error(), "usb-stall (MOCKUSB)"), "%s", bg_last_error());
  uint64_t r0 = dev_resyncs(d);
  ux_srand(0x5ea11002);
  bg_buf *b;
  const size_t n = (2u << 20) + 20;
  OK(bg_buf_alloc(d, n, 0, &b));
  uint8_t *src = malloc(n), *dst = malloc(n);
  ck_assert(src && dst);
  for (int i = 0; i < 8; i++) {
    fill(src, n);
    OK(bg_mock_plugin_inject("MOCKUSB", 0, "usb-stall", 1 + (unsigned)(i & 1)));
    OK(bg_buf_write(b, 0, src, n));
    memset(dst, 0, n);
    OK(bg_buf_read(b, 0, dst, n));
    ck_assert_msg(memcmp(dst, src, n) == 0, "injection %d: the buffer differs", i);
  }
  /* every stall met and recovered from (12 injected: each variant three times) */
  ck_assert_uint_eq(dev_resyncs(d) - r0, 12);
  bg_buf_free(b);
#if BG_HAVE_LLVM
  void *obj;
  size_t on;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, bg_dev_arch(d), &obj, &on));
  static const uint8_t sizes[2] = {8, 8};
  bg_program_info info = {"add1", 2, sizes};
  bg_program *p;
  OK(bg_program_load(d, obj, on, &info, &p));
  free(obj);
  bg_buf *kb[2];
  OK(bg_buf_alloc(d, 128 * 4, 0, &kb[0]));
  OK(bg_buf_alloc(d, 128 * 4, 0, &kb[1]));
  float in[128], out[128];
  const uint32_t g[3] = {4, 1, 1}, l[3] = {32, 1, 1};
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < 128; k++) in[k] = (float)(k + i) * 0.5f;
    OK(bg_buf_write(kb[1], 0, in, sizeof(in)));
    OK(bg_mock_plugin_inject("MOCKUSB", 0, "usb-stall", 1));
    OK(bg_program_run(p, kb, 2, NULL, 0, g, l, true, NULL));
    OK(bg_buf_read(kb[0], 0, out, sizeof(out)));
    for (int k = 0; k < 128; k++) ck_assert_float_eq(out[k], in[k] + 1.0f);
  }
  ck_assert_uint_eq(dev_resyncs(d) - r0, 16);
  bg_buf_free(kb[0]);
  bg_buf_free(kb[1]);
  bg_program_free(p);
#endif
  free(src);
  free(dst);
  bg_dev_close(d);
}
END_TEST

Suite *usb_stall_suite(void) {
  Suite *s = suite_create("usb-stall");
  TCase *tc = ux_tcase("stall", true);
  tcase_add_test(tc, register_read_stalls);
  tcase_add_test(tc, register_write_stalls);
  tcase_add_test(tc, pipelined_copy_stalls);
  tcase_add_test(tc, permanent_stall);
  tcase_add_test(tc, sram_read_stall_reported);
  suite_add_tcase(s, tc);
  TCase *dbg = tcase_create("stall-debug");
  tcase_add_checked_fixture(dbg, debug_setup, ux_teardown);
  tcase_add_test(dbg, recovery_is_logged);
  suite_add_tcase(s, dbg);
  TCase *plug = tcase_create("stall-plugin");
  tcase_set_timeout(plug, 240);
  tcase_add_test(plug, plugin_usb_stall);
  suite_add_tcase(s, plug);
  return s;
}
