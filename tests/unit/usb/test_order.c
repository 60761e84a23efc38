/* tests/unit/usb/test_order.c: no order assumed across USB endpoints (usb/usb_order.c, usb/usb_transport.h
 * "Ordering") and the emulated bridge that judges it (tests/mockgpu/asm24.h: three endpoint queues serviced in a
 * seeded random order, the firmware strict or holding early data back).
 *
 * - The gate itself, on a scripted transport that completes in-flight transfers in a random order across endpoints
 *   and records what was in flight together: never two endpoints at once, a stream's data only after its arm, the
 *   critical path and chain counts, the cancellation after a failure.
 * - The emulated bridge as a judge: the same arm + data pairs handed to it without the gate (as a batch-in-order
 *   driver did) are rejected under random orders ("still armed", "data before its arm"), pass only in start order
 *   (seed 0), and in the holding firmware mode wait for their arm (or time out when none comes).
 * - The operations the issue found broken, each under 20 seeds with the strict firmware: a queue submit (ring bytes,
 *   wptr, doorbell through a write-combined BAR view), a write followed by a read, partial-dword writes with a body
 *   and a 3 MiB copy in and out, every byte checked. */
#include <stdio.h>
#include <stdlib.h>

#include "usb_test.h"

#define SEEDS 20

/* ---------------- the gate on a scripted transport ---------------- */

typedef struct fake {
  bg_usb_transport t;
  bg_usb_xfer *fl[64];
  size_t nfl;
  unsigned max_eps;           /* most distinct endpoints in flight together */
  bool data_before_arm;       /* a bulk started while the control transfer before it was in flight */
  unsigned starts;
  uint64_t rng;
  int fail_nth;               /* the nth completion (1-based) fails with -BG_EIO; 0: none */
  unsigned completions;
} fake;

static unsigned eps_in_flight(const fake *f) {
  bool seen[3] = {false, false, false};
  unsigned n = 0;
  for (size_t i = 0; i < f->nfl; i++) {
    unsigned e = bg_usb_endpoint_slot(f->fl[i]->kind);
    if (!seen[e]) n++;
    seen[e] = true;
  }
  return n;
}

static int f_start(bg_usb_transport *t, bg_usb_xfer *x) {
  fake *f = (fake *)t;
  ck_assert_uint_lt(f->nfl, 64);
  bool bulk = x->kind == BG_USB_BULK_OUT || x->kind == BG_USB_BULK_IN;
  for (size_t i = 0; i < f->nfl; i++)
    if (bulk && (f->fl[i]->kind == BG_USB_CTRL_OUT || f->fl[i]->kind == BG_USB_CTRL_IN)) f->data_before_arm = true;
  f->fl[f->nfl++] = x;
  f->starts++;
  unsigned e = eps_in_flight(f);
  if (e > f->max_eps) f->max_eps = e;
  return 0;
}

static void f_cancel(bg_usb_transport *t, bg_usb_xfer *x) {
  (void)t;
  x->status = -BG_EIO;
}

/* Completes the head of a randomly drawn endpoint (per-endpoint order kept, as a host controller does). */
static int f_poll(bg_usb_transport *t) {
  fake *f = (fake *)t;
  ck_assert_uint_gt(f->nfl, 0);
  f->rng ^= f->rng << 13, f->rng ^= f->rng >> 7, f->rng ^= f->rng << 17;
  size_t pick = (size_t)(f->rng % f->nfl);
  unsigned e = bg_usb_endpoint_slot(f->fl[pick]->kind);
  for (size_t i = 0; i < pick; i++)
    if (bg_usb_endpoint_slot(f->fl[i]->kind) == e) {
      pick = i;  /* the oldest on that endpoint goes first */
      break;
    }
  bg_usb_xfer *x = f->fl[pick];
  memmove(&f->fl[pick], &f->fl[pick + 1], (f->nfl - pick - 1) * sizeof(f->fl[0]));
  f->nfl--;
  f->completions++;
  if (x->status == 0) {
    x->actual = x->len;
    if (f->fail_nth && (int)f->completions == f->fail_nth) {
      x->status = -BG_EIO;
      x->actual = 0;
    }
  }
  t->complete(t->complete_ctx, x);
  return 0;
}

static void f_close(bg_usb_transport *t) { (void)t; }
static const bg_usb_transport_ops fake_ops = {f_start, f_cancel, f_poll, f_close, NULL};

static fake *fake_new(uint64_t seed) {
  fake *f = calloc(1, sizeof(*f));
  ck_assert_ptr_nonnull(f);
  f->t.ops = &fake_ops;
  snprintf(f->t.name, sizeof(f->t.name), "fake:%llu", (unsigned long long)seed);
  f->rng = seed * 0x9E3779B97F4A7C15ull | 1;
  return f;
}

static void fake_free(fake *f) {
  bg_usb_transport_close(&f->t);
  free(f);
}

static uint8_t payload[12], data[4][64];

static bg_usb_xfer arm(void) {
  return (bg_usb_xfer){.kind = BG_USB_CTRL_OUT, .req = 0xF0, .idx = 1, .buf = payload, .len = 12};
}
static bg_usb_xfer bulk_out(int i) { return (bg_usb_xfer){.kind = BG_USB_BULK_OUT, .buf = data[i], .len = 64}; }

START_TEST(gate_one_endpoint_at_a_time) {
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    fake *f = fake_new(seed);
    /* three streams, then three control requests in a row */
    bg_usb_xfer x[9] = {arm(), bulk_out(0), arm(), bulk_out(1), arm(), bulk_out(2), arm(), arm(), arm()};
    OK(bg_usb_run(&f->t, x, 9));
    ck_assert_uint_eq(f->max_eps, 1);
    ck_assert(!f->data_before_arm);
    ck_assert_uint_eq(f->starts, 9);
    /* arm, data, arm, data, arm, data, then the three requests pipelined on EP0: 7 sequential steps; every transfer
     * but the first was started from a completion */
    ck_assert_uint_eq(f->t.stats.critical, 7);
    ck_assert_uint_eq(f->t.stats.chained, 8);
    ck_assert_uint_eq(f->t.stats.round_trips, 1);
    /* a second batch after the wait: it starts at the caller's depth */
    bg_usb_xfer y[2] = {arm(), bulk_out(3)};
    OK(bg_usb_run(&f->t, y, 2));
    ck_assert_uint_eq(f->t.stats.critical, 9);
    fake_free(f);
  }
}
END_TEST

/* The same transfers sent as tinygrad sends them (one synchronous transfer at a time) cost one step each. */
START_TEST(gate_synchronous_costs_a_step_each) {
  fake *f = fake_new(1);
  bg_usb_xfer x[6] = {arm(), arm(), arm(), arm(), arm(), arm()};
  for (int i = 0; i < 6; i++) OK(bg_usb_run(&f->t, &x[i], 1));
  ck_assert_uint_eq(f->t.stats.critical, 6);
  ck_assert_uint_eq(f->t.stats.round_trips, 6);
  ck_assert_uint_eq(f->t.stats.chained, 0);
  fake_free(f);
}
END_TEST

/* After a failure nothing later reaches the wire; the caller learns the first failure; the next batch starts clean. */
START_TEST(gate_cancels_after_a_failure) {
  fake *f = fake_new(3);
  f->fail_nth = 1;
  bg_usb_xfer x[4] = {arm(), bulk_out(0), arm(), bulk_out(1)};
  ck_assert_int_eq(bg_usb_run(&f->t, x, 4), -BG_EIO);
  ck_assert_uint_eq(f->starts, 1); /* the data and the rest were never handed over */
  for (int i = 1; i < 4; i++) ck_assert_int_eq(x[i].status, -BG_EIO);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "0xF0"));
  f->fail_nth = 0;
  OK(bg_usb_run(&f->t, x, 4));
  ck_assert_uint_eq(f->starts, 5);
  fake_free(f);
}
END_TEST

/* Pipelines: batches submitted before the earlier ones were waited for keep the order too. */
START_TEST(gate_overlapping_batches) {
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    fake *f = fake_new(seed);
    bg_usb_xfer a[2] = {arm(), bulk_out(0)}, b[2] = {arm(), bulk_out(1)}, c[2] = {arm(), bulk_out(2)};
    OK(bg_usb_submit(&f->t, a, 2));
    OK(bg_usb_submit(&f->t, b, 2));
    OK(bg_usb_submit(&f->t, c, 2));
    OK(bg_usb_wait(&f->t, a, 2));
    OK(bg_usb_wait(&f->t, b, 2));
    OK(bg_usb_wait(&f->t, c, 2));
    ck_assert_uint_eq(f->max_eps, 1);
    ck_assert(!f->data_before_arm);
    ck_assert_uint_eq(f->t.stats.critical, 6);
    ck_assert_int_eq(bg_usb_wait(&f->t, a, 2), -BG_EINVAL); /* already waited for */
    fake_free(f);
  }
}
END_TEST

/* ---------------- the emulated bridge as a judge ---------------- */

/* Hand x[0..n) to the bridge's transport all at once, without the gate (the old batch-in-order driver), and
 * collect the completions. */
static unsigned ungated_done;
static void count_done(void *ctx, bg_usb_xfer *x) {
  (void)ctx, (void)x;
  ungated_done++;
}

static void run_ungated(bg_usb_transport *t, bg_usb_xfer *x, size_t n) {
  t->complete = count_done;
  t->complete_ctx = NULL;
  ungated_done = 0;
  for (size_t i = 0; i < n; i++) OK(t->ops->start(t, &x[i]));
  while (ungated_done < n) OK(t->ops->poll(t));
}

/* Three MWr streams into VRAM (BAR0 at its reset address 0 is routed once the hierarchy is set up: done by open). */
// cppcheck-suppress constParameter ; bufs becomes the transfers' (non-const) data pointers
static void three_streams(bg_usb_xfer x[6], uint8_t payloads[3][12], uint8_t bufs[3][256], uint64_t base) {
  for (int i = 0; i < 3; i++) {
    uint16_t wv;
    bg_asm24_stream_encode(true, base + 0x1000u * (unsigned)i, 64, &wv, payloads[i]);
    x[2 * i] = (bg_usb_xfer){.kind = BG_USB_CTRL_OUT, .req = 0xF0, .val = wv, .idx = 1, .buf = payloads[i], .len = 12};
    x[2 * i + 1] = (bg_usb_xfer){.kind = BG_USB_BULK_OUT, .buf = bufs[i], .len = 256};
  }
}

/* The opened fixture, then the bridge's host order and firmware mode for what follows, and a second, raw transport
 * to it (no gate); *bar0 = BAR0's bus address. */
static bg_usb_transport *raw_bridge(uint64_t seed, mock_asm24_fw_mode mode, uint64_t *bar0) {
  ux_setup();
  bg_pci_bar b;
  OK(bg_pci_bar_info(UP, 0, &b));
  *bar0 = b.base;
  mock_asm24_set_seed(UB, seed);
  mock_asm24_set_fw_mode(UB, mode);
  bg_usb_transport *raw = mock_asm24_transport(UB);
  ck_assert_ptr_nonnull(raw);
  return raw;
}

START_TEST(bridge_rejects_ungated_order) {
  unsigned caught = 0;
  for (uint64_t seed = 0; seed <= SEEDS; seed++) {
    uint64_t bar0;
    bg_usb_transport *raw = raw_bridge(seed, MOCK_ASM24_FW_STRICT, &bar0);
    uint8_t payloads[3][12], bufs[3][256];
    memset(bufs, 0x5A, sizeof(bufs));
    bg_usb_xfer x[6];
    three_streams(x, payloads, bufs, bar0);
    run_ungated(raw, x, 6);
    OK(bg_usb_resync(raw)); /* whatever the chaos left halted or armed is dropped */
    bg_usb_transport_close(raw);
    unsigned nf = mock_asm24_nfail(UB);
    if (seed == 0) {
      ck_assert_msg(nf == 0, "start order (seed 0) must pass:\n%s", mock_asm24_failures(UB));
    } else if (nf) {
      const char *all = mock_asm24_failures(UB);
      ck_assert_msg(strstr(all, "still armed") || strstr(all, "data before its arm"), "seed %llu: %s",
                    (unsigned long long)seed, all);
      ck_assert_uint_gt(mock_asm24_get_stats(UB)->overtakes, 0);
      caught++;
    }
    mock_asm24_clear_failures(UB);
    ux_teardown();
  }
  /* a host may service control first: most seeds must catch a driver that relies on the batch order */
  ck_assert_msg(caught >= SEEDS / 2, "only %u of %d seeds caught the ungated order", caught, SEEDS);
}
END_TEST

/* Holding firmware: data that comes early waits for its arm (flow control), so the same ungated pairs land; data
 * nothing will arm times out, as the host's timeout would end it. Nothing is recorded as a failure. */
START_TEST(bridge_hold_mode) {
  unsigned held = 0;
  for (uint64_t seed = 1; seed <= SEEDS; seed++) {
    uint64_t bar0;
    bg_usb_transport *raw = raw_bridge(seed, MOCK_ASM24_FW_HOLD, &bar0);
    uint8_t payloads[3][12], bufs[3][256];
    for (int i = 0; i < 3; i++) memset(bufs[i], 0x10 + i, sizeof(bufs[i]));
    /* one pair at a time: with the next arm queued behind the data, the firmware would see a request while armed */
    for (int i = 0; i < 3; i++) {
      bg_usb_xfer x[6];
      three_streams(x, payloads, bufs, bar0);
      run_ungated(raw, &x[2 * i], 2);
      ck_assert_int_eq(x[2 * i].status, 0);
      ck_assert_int_eq(x[2 * i + 1].status, 0);
    }
    held += (unsigned)mock_asm24_get_stats(UB)->held;
    uint8_t *vram = mock_amd_vram(UG);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(memcmp(vram + 0x1000u * (unsigned)i, bufs[i], 256), 0);
    bg_usb_xfer lone = bulk_out(0);
    run_ungated(raw, &lone, 1);
    ck_assert_int_eq(lone.status, -BG_ETIMEDOUT);
    bg_usb_transport_close(raw);
    ck_assert_uint_eq(mock_asm24_nfail(UB), 0);
    ux_teardown();
  }
  ck_assert_uint_gt(held, 0);
}
END_TEST

/* ---------------- the driver under random orders ---------------- */

static void ops_under_seed(uint64_t seed, uint8_t *src, uint8_t *dst, size_t big) {
  ux_setup_raw();
  mock_asm24_set_seed(UB, seed);
  OK(bg_usb_pci_open(mock_asm24_transport(UB), &UP));
  bg_asm24 *b = ux_bridge();
  bg_pci_bar bar0;
  OK(bg_pci_bar_info(UP, 0, &bar0));
  uint8_t *vram = mock_amd_vram(UG);
  ux_srand(seed);
  for (size_t i = 0; i < big; i++) src[i] = (uint8_t)ux_rand();
  /* a queue submit: 128 ring bytes through a write-combined view, the 8-byte wptr, then an uncached doorbell-like
   * write, three times */
  bg_mmio wc, uc;
  OK(bg_pci_map_bar(UP, 0, 0, 0, BG_PCI_MAP_WC, &wc));
  OK(bg_pci_map_bar(UP, 0, 0, 0, 0, &uc));
  for (uint64_t k = 1; k <= 3; k++) {
    OK(bg_mmio_write(&wc, 0x100000 + 128 * k, src + 128 * k, 128));
    OK(bg_mmio_wr64(&wc, 0x200000, k * 32));
    OK(bg_mmio_wr32(&uc, 0x200100, (uint32_t)k));
    OK(bg_asm24_flush(b));
    ck_assert_int_eq(memcmp(vram + 0x100000 + 128 * k, src + 128 * k, 128), 0);
    uint64_t w;
    memcpy(&w, vram + 0x200000, 8);
    ck_assert_uint_eq(w, k * 32);
    ck_assert_uint_eq(bg_mmio_rd32(&uc, 0x200100), k);
  }
  bg_pci_unmap_bar(UP, &wc);
  bg_pci_unmap_bar(UP, &uc);
  /* a write followed by a read of the same bytes, the write still queued */
  OK(bg_asm24_mem_write(b, bar0.base + 0x300000, src, 64, true));
  OK(bg_asm24_mem_read(b, bar0.base + 0x300000, dst, 64));
  ck_assert_int_eq(memcmp(dst, src, 64), 0);
  /* partial dwords at both ends of a body */
  OK(bg_asm24_mem_write(b, bar0.base + 0x300101, src + 7, 13, true));
  OK(bg_asm24_mem_read(b, bar0.base + 0x300101, dst, 13));
  ck_assert_int_eq(memcmp(dst, src + 7, 13), 0);
  /* a 3 MiB copy in and out, unaligned */
  OK(bg_asm24_copy_in(b, bar0.base + 0x400003, src, big, NULL, NULL));
  ck_assert_int_eq(memcmp(vram + 0x400003, src, big), 0);
  memset(dst, 0, big);
  OK(bg_asm24_copy_out(b, bar0.base + 0x400003, dst, big, NULL, NULL));
  ck_assert_int_eq(memcmp(dst, src, big), 0);
  const mock_asm24_stats *st = mock_asm24_get_stats(UB);
  ck_assert_uint_eq(st->early_bulk, 0);
  ck_assert_uint_eq(st->overtakes, 0); /* nothing was in flight on two endpoints at once */
  ux_teardown();                       /* asserts that the bridge recorded no failure */
}

START_TEST(driver_ops_under_seeds) {
  size_t big = 3u << 20;
  uint8_t *src = malloc(big), *dst = malloc(big);
  ck_assert(src && dst);
  for (uint64_t seed = 1; seed <= SEEDS; seed++) ops_under_seed(seed, src, dst, big);
  free(src);
  free(dst);
}
END_TEST

Suite *usb_order_suite(void) {
  Suite *s = suite_create("usb-order");
  TCase *tc = tcase_create("gate");
  tcase_add_test(tc, gate_one_endpoint_at_a_time);
  tcase_add_test(tc, gate_synchronous_costs_a_step_each);
  tcase_add_test(tc, gate_cancels_after_a_failure);
  tcase_add_test(tc, gate_overlapping_batches);
  suite_add_tcase(s, tc);
  tc = tcase_create("bridge");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, bridge_rejects_ungated_order);
  tcase_add_test(tc, bridge_hold_mode);
  tcase_add_test(tc, driver_ops_under_seeds);
  suite_add_tcase(s, tc);
  return s;
}
