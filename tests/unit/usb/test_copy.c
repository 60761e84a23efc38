/* tests/unit/usb/test_copy.c: copies in and out over the bridge, bit-exact: 1,000+ random sizes and offsets
 * (VRAM through BAR0: pipelined streams with unaligned ends; batched small writes; SRAM slots), 64 MiB in all,
 * and the same under injected faults: retries recover, or the error is clean and the call reports failure. */
#include <stdio.h>
#include <stdlib.h>

#include "usb_test.h"

#define VRAM_SPAN (200ull << 20)   /* stays below the discovery table at the top of 256 MiB */

static uint8_t *src, *dst;
#define BUF_MAX (8u << 20)

static void bufs(void) {
  src = malloc(BUF_MAX);
  dst = malloc(BUF_MAX);
  ck_assert(src && dst);
}

static void fill(uint8_t *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t r = ux_rand();
    memcpy(p + i, &r, 8);
  }
  for (; i < n; i++) p[i] = (uint8_t)ux_rand();
}

/* Sizes: mostly small and odd, some up to 8 MiB; ~64 MiB over 1,000 cases. */
static size_t pick_size(unsigned i) {
  if (i % 125 == 7) return (size_t)(ux_rand() % BUF_MAX) + 1;
  if (i % 10 == 3) return (size_t)(ux_rand() % (256u << 10)) + 1;
  return (size_t)(ux_rand() % 4096) + 1;
}

START_TEST(random_copies) {
  bufs();
  ux_srand(0x5eed0001);
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  uint8_t *vram = mock_amd_vram(UG);
  uint64_t total = 0;
  unsigned cases = 1000;
  for (unsigned i = 0; i < cases; i++) {
    size_t n = pick_size(i);
    uint64_t off = ux_rand() % (VRAM_SPAN - n);
    fill(src, n);
    int mode = (int)(ux_rand() % 3);
    if (mode == 0 || n > (256u << 10)) OK(bg_asm24_copy_in(b, bar0.base + off, src, n, NULL, NULL));
    else OK(bg_asm24_mem_write(b, bar0.base + off, src, n, mode == 1));
    OK(bg_asm24_flush(b));
    ck_assert_msg(memcmp(vram + off, src, n) == 0, "case %u: copy in of %zu bytes at 0x%llx differs", i, n,
                  (unsigned long long)off);
    /* read back from a random sub-range */
    size_t k = n > 1 ? (size_t)(ux_rand() % n) : 0, m = n - k;
    if (ux_rand() & 1) OK(bg_asm24_copy_out(b, bar0.base + off + k, dst, m, NULL, NULL));
    else OK(bg_asm24_mem_read(b, bar0.base + off + k, dst, m));
    ck_assert_msg(memcmp(dst, src + k, m) == 0, "case %u: copy out of %zu bytes at 0x%llx differs", i, m,
                  (unsigned long long)(off + k));
    total += n + m;
  }
  const bg_usb_stats *st = &bg_asm24_transport(b)->stats;
  printf("random copies: %u cases, %.1f MiB moved, %llu transfers, %llu round trips\n", cases, (double)total / (1 << 20),
         (unsigned long long)(st->xfers[0] + st->xfers[1] + st->xfers[2] + st->xfers[3]),
         (unsigned long long)st->round_trips);
  ck_assert_uint_ge(total, 64ull << 20);
  free(src);
  free(dst);
}
END_TEST

static void progress_count(void *ctx, uint64_t done, uint64_t total) {
  uint64_t *c = ctx;
  ck_assert_uint_le(done, total);
  c[0]++;
  c[1] = done;
}

START_TEST(sram_slots_and_progress) {
  bufs();
  ux_srand(0x5eed0002);
  bg_asm24 *b = ux_bridge();
  for (unsigned i = 0; i < 200; i++) {
    unsigned slot = (unsigned)(ux_rand() % 32);
    size_t n = (size_t)(ux_rand() % ((32 - slot) * 0x4000u)) + 1;
    fill(src, n);
    OK(bg_asm24_sram_write(b, slot, src, n));
    ck_assert(memcmp(mock_asm24_sram(UB) + slot * 0x4000u, src, n) == 0);
    size_t rd = slot * 0x4000u + n;
    OK(bg_asm24_sram_read_arm(b, rd));
    OK(bg_asm24_sram_read(b, dst, rd));
    ck_assert(memcmp(dst + slot * 0x4000u, src, n) == 0);
  }
  /* progress is reported per stream and ends at the total */
  uint64_t c[2] = {0, 0};
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  fill(src, 5u << 20);
  OK(bg_asm24_copy_in(b, bar0.base + 3, src, 5u << 20, progress_count, c));
  ck_assert_uint_ge(c[0], 5);
  ck_assert_uint_eq(c[1], 5u << 20);
  free(src);
  free(dst);
}
END_TEST

/* Faults that clear within the retry budget: the copy succeeds and is bit-exact. */
START_TEST(faults_recover) {
  bufs();
  ux_srand(0x5eed0003);
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  uint8_t *vram = mock_amd_vram(UG);
  const mock_asm24_fault kinds[] = {MOCK_ASM24_STALL, MOCK_ASM24_TIMEOUT, MOCK_ASM24_SHORT};
  for (unsigned i = 0; i < 120; i++) {
    size_t n = i % 10 == 0 ? (size_t)(ux_rand() % (6u << 20)) + 1 : (size_t)(ux_rand() % 20000) + 1;
    uint64_t off = ux_rand() % (VRAM_SPAN - n);
    fill(src, n);
    memset(vram + off, 0, n);
    mock_asm24_inject(UB, kinds[i % 3], (unsigned)(ux_rand() % 6), 1 + (unsigned)(ux_rand() % 3));
    int dir = (int)(ux_rand() % 3);
    if (dir == 0) {
      OK(bg_asm24_copy_in(b, bar0.base + off, src, n, NULL, NULL));
    } else if (dir == 1) {
      OK(bg_asm24_mem_write(b, bar0.base + off, src, n < 4096 ? n : 4096, false));
      if (n > 4096) OK(bg_asm24_copy_in(b, bar0.base + off + 4096, src + 4096, n - 4096, NULL, NULL));
    } else {
      mock_asm24_clear_faults(UB);
      memcpy(vram + off, src, n);
      mock_asm24_inject(UB, kinds[i % 3], (unsigned)(ux_rand() % 6), 1 + (unsigned)(ux_rand() % 3));
      OK(bg_asm24_copy_out(b, bar0.base + off, dst, n, NULL, NULL));
      ck_assert_msg(memcmp(dst, src, n) == 0, "case %u: copy out under faults differs", i);
    }
    mock_asm24_clear_faults(UB);
    ck_assert_msg(memcmp(vram + off, src, n) == 0, "case %u: %zu bytes under faults differ", i, n);
  }
  printf("faults fired and recovered from: %llu\n", (unsigned long long)mock_asm24_get_stats(UB)->faults_fired);
  ck_assert_uint_ge(mock_asm24_get_stats(UB)->faults_fired, 100);
  /* the SRAM engine and XDATA recover too */
  mock_asm24_inject(UB, MOCK_ASM24_SHORT, 0, 2);
  fill(src, 70000);
  OK(bg_asm24_sram_write(b, 3, src, 70000));
  ck_assert(memcmp(mock_asm24_sram(UB) + 3 * 0x4000, src, 70000) == 0);
  mock_asm24_inject(UB, MOCK_ASM24_TIMEOUT, 2, 2);
  OK(bg_asm24_xdata_write(b, 0xA000, src, 8));
  ck_assert(memcmp(mock_asm24_sys(UB, 0x820000, NULL), src, 8) == 0);
  mock_asm24_clear_faults(UB);
  free(src);
  free(dst);
}
END_TEST

/* Faults that persist: a clean error naming the request and the retries; never success. */
START_TEST(faults_persist) {
  bufs();
  ux_srand(0x5eed0004);
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  fill(src, 3u << 20);
  mock_asm24_inject(UB, MOCK_ASM24_STALL, 3, 1000);
  ck_assert_int_eq(bg_asm24_copy_in(b, bar0.base + 64, src, 3u << 20, NULL, NULL), -BG_EIO);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "copy in of 3145728 bytes") && strstr(msg, "after 10 retries"), "%s", msg);
  mock_asm24_clear_faults(UB);
  mock_asm24_inject(UB, MOCK_ASM24_TIMEOUT, 0, 1000);
  ck_assert_int_eq(bg_asm24_mem_read(b, bar0.base, dst, 64), -BG_ETIMEDOUT);
  ck_assert_msg(strstr(bg_last_error(), "timeout after 10 retries"), "%s", bg_last_error());
  mock_asm24_clear_faults(UB);
  /* queued writes whose flush fails are reported by the flush, and not re-sent later */
  OK(bg_asm24_mem_write(b, bar0.base + 0x100, src, 64, true));
  mock_asm24_inject(UB, MOCK_ASM24_SHORT, 0, 1000);
  ck_assert_int_eq(bg_asm24_flush(b), -BG_EIO);
  ck_assert_uint_eq(bg_asm24_pending(b), 0);
  mock_asm24_clear_faults(UB);
  /* gone: no retries, ENODEV */
  mock_asm24_inject(UB, MOCK_ASM24_GONE, 1, 1);
  ck_assert_int_eq(bg_asm24_copy_out(b, bar0.base, dst, 1u << 20, NULL, NULL), -BG_ENODEV);
  ck_assert_msg(strstr(bg_last_error(), "device gone"), "%s", bg_last_error());
  free(src);
  free(dst);
}
END_TEST

/* The host half of the SRAM copy-in pipeline: wire images with sentinels in alternating windows, the fence
 * read in the arm's round trip, a stalled GPU reported, a short bulk re-armed and resent. */
START_TEST(copyin_stage_windows) {
  bufs();
  ux_srand(0x5eed0005);
  bg_asm24 *b = ux_bridge();
  uint8_t *fence = mock_asm24_sys(UB, 0x820800, NULL);
  for (uint32_t seq = 1; seq <= 6; seq++) {
    size_t n = seq == 3 ? BG_ASM24_COPYIN_CHUNK : (size_t)(ux_rand() % BG_ASM24_COPYIN_CHUNK) + 1;
    fill(src, n);
    uint64_t drained = seq - 1;  /* the emulated GPU drained everything before */
    memcpy(fence, &drained, 8);
    if (seq == 4) mock_asm24_inject(UB, MOCK_ASM24_SHORT, 0, 1);
    size_t wire;
    uint64_t f;
    OK(bg_asm24_copyin_stage(b, seq, src, n, 1000, &wire, &f));
    ck_assert_uint_eq(f, drained);
    ck_assert_uint_eq(wire, (n + 4 + 511) / 512 * 512);
    const uint8_t *win = mock_asm24_sram(UB) + BG_ASM24_COPYIN_WINDOW(seq) * 0x4000u;
    ck_assert(memcmp(win, src, n) == 0);
    uint32_t sentinel;
    memcpy(&sentinel, win + wire - 4, 4);
    ck_assert_uint_eq(sentinel, 0x51000000u | seq);
  }
  ck_assert_uint_eq(BG_ASM24_COPYIN_WINDOW(7), 16);
  /* the GPU stopped at chunk 4: chunk 7 must not overwrite window 1 */
  uint64_t stuck = 5;
  memcpy(fence, &stuck, 8);
  size_t wire;
  ck_assert_int_eq(bg_asm24_copyin_stage(b, 7, src, 100, 20, &wire, NULL), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "not draining") && strstr(bg_last_error(), "0xa800"), "%s", bg_last_error());
  uint32_t v;
  OK(bg_asm24_cfg_read(b, 4, 0, 0, 0, 2, &v));  /* nothing left armed by the failure */
  ck_assert_uint_eq(v, 0x1002);
  ck_assert_int_eq(bg_asm24_copyin_stage(b, 8, src, 0, 20, &wire, NULL), -BG_EINVAL);
  free(src);
  free(dst);
}
END_TEST

/* The PCI device interface's bulk copy (platform/pci.h bg_pci_copy_in/out, what am/am_hcq_usb.c calls) is the
 * bridge's pipelined copy: bit-exact, progress reported per 1 MiB stream (the mapped-BAR fallback reports once), the
 * device marked as one that cannot reach host RAM, and a range outside the BARs refused by name. */
START_TEST(pci_copy_op) {
  bufs();
  ux_srand(0x5eed0004);
  ck_assert(bg_pci_features(UP) & BG_PCI_FEAT_NO_HOST_DMA);
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  const size_t n = (3u << 20) + 77;
  fill(src, n);
  uint64_t c[2] = {0, 0};
  OK(bg_pci_copy_in(UP, bar0.base + 5, src, n, progress_count, c));
  ck_assert_uint_ge(c[0], 3);
  ck_assert_uint_eq(c[1], n);
  ck_assert(memcmp(mock_amd_vram(UG) + 5, src, n) == 0);
  memset(dst, 0, n);
  c[0] = c[1] = 0;
  OK(bg_pci_copy_out(UP, bar0.base + 5, dst, n, progress_count, c));
  ck_assert_uint_ge(c[0], 3);
  ck_assert_uint_eq(c[1], n);
  ck_assert(memcmp(dst, src, n) == 0);
  free(src);
  free(dst);
}
END_TEST

Suite *usb_copy_suite(void) {
  Suite *s = suite_create("usb-copy");
  TCase *tc = ux_tcase("copy", true);
  tcase_add_test(tc, random_copies);
  tcase_add_test(tc, sram_slots_and_progress);
  tcase_add_test(tc, faults_recover);
  tcase_add_test(tc, faults_persist);
  tcase_add_test(tc, copyin_stage_windows);
  tcase_add_test(tc, pci_copy_op);
  suite_add_tcase(s, tc);
  return s;
}
