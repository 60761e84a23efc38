/* tests/unit/usb/test_hcq.c: MOCKUSB+AMD through bg_dev_open (the emulated-hardware plugin's GPU behind its emulated
 * ASM24 bridge): cold bring-up, a kernel launch run by the RDNA3 core (when LLVM is built in), and the USB cost of
 * a queue submit in steady state, which must be one round trip (kernel arguments + ring + wptr queued in the
 * bridge, sent with the doorbell), counted by the transport under the device. Copies through bg_buf_write/read
 * are bit-exact and go as 1 MiB streams (two transfers each). */
#include <stdio.h>
#include <stdlib.h>

#include "am/am_hcq.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#if BG_HAVE_LLVM
#include "amd_test_kernels.h"
#include "compile/llvm_amdgpu.h"
#endif
#include "usb_test.h"
#include "util/clock.h"

/* Signal reads and writes that must succeed: they return 0 or a negative BG_E* (baregpu/error.h). */
static uint64_t sigval(const bg_signal *s) {
  uint64_t v = 0;
  ck_assert_msg(bg_signal_value(s, &v) == 0, "bg_signal_value: %s", bg_last_error());
  return v;
}
#define SIGSET(s, v) ck_assert_msg(bg_signal_set((s), (v)) == 0, "bg_signal_set: %s", bg_last_error())

static bg_dev *HD;

static void hcq_setup(void) {
  setenv("BG_WAIT_TIMEOUT_MS", "20000", 1);
  HD = NULL;
  OK(bg_dev_open("MOCKUSB+AMD", &HD));
}

static void hcq_teardown(void) {
  bg_dev_close(HD);
  HD = NULL;
}

/* The transport under the device (am/am_hcq.h: the AM device's bg_pci_dev is the bridge's). */
static bg_usb_transport *dev_transport(bg_dev *d) {
  const am_hcq *h = d->priv;
  ck_assert(bg_usb_pci_is_usb(h->d->pci));
  return bg_asm24_transport(bg_usb_pci_bridge(h->d->pci));
}

static uint64_t nxfers(const bg_usb_stats *s) {
  uint64_t n = 0;
  for (int k = 0; k < BG_USB_NKINDS; k++) n += s->xfers[k];
  return n;
}

/* Submit q n times; each submit alone must cost exactly one round trip and at most max_xfers transfers. */
static void steady_submits(bg_queue *q, unsigned n, uint64_t max_xfers, const char *what) {
  bg_usb_transport *t = dev_transport(HD);
  OK(bg_queue_submit(q, NULL, 0)); /* the first submit lowers and patches everything */
  OK(bg_dev_synchronize(HD, 0));
  uint64_t xf = 0, rt = 0;
  for (unsigned i = 0; i < n; i++) {
    bg_usb_stats s0 = t->stats;
    OK(bg_queue_submit(q, NULL, 0));
    uint64_t dx = nxfers(&t->stats) - nxfers(&s0), dr = t->stats.round_trips - s0.round_trips;
    ck_assert_msg(dr == 1, "%s: submit %u cost %llu round trips, expected 1", what, i, (unsigned long long)dr);
    ck_assert_msg(dx <= max_xfers, "%s: submit %u cost %llu transfers, expected <= %llu", what, i,
                  (unsigned long long)dx, (unsigned long long)max_xfers);
    xf += dx, rt += dr;
    OK(bg_dev_synchronize(HD, 0));
  }
  printf("MOCKUSB+AMD %s: %.1f USB transfers, %.2f round trips per submit (steady state)\n", what, (double)xf / n,
         (double)rt / n);
}

START_TEST(signals_over_usb) {
  ck_assert_str_eq(bg_dev_arch(HD), "gfx1100");
  ck_assert_uint_gt(dev_transport(HD)->stats.round_trips, 0); /* the cold boot went over the bridge */
  for (int k = 0; k < 2; k++) {
    bg_queue *q;
    OK(bg_queue_new(HD, k ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q));
    bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    /* ring bytes, wptr: 2 queued runs + the doorbell, each a 0xF0 arm and its bulk */
    steady_submits(q, 16, 6, k ? "copy queue wait+signal" : "compute queue wait+signal");
    bg_queue_free(q);
  }
  bg_signal *s;
  OK(bg_signal_new(HD, 7, &s));
  ck_assert_uint_eq(sigval(s), 7);
  SIGSET(s, 0x123456789ull);
  ck_assert_uint_eq(sigval(s), 0x123456789ull);
  bg_signal_free(s);
}
END_TEST

#if BG_HAVE_LLVM
START_TEST(kernel_launch_over_usb) {
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, bg_dev_arch(HD), &obj, &n));
  static const uint8_t sizes[2] = {8, 8};
  bg_program_info info = {"add1", 2, sizes};
  bg_program *p;
  OK(bg_program_load(HD, obj, n, &info, &p));
  free(obj);
  bg_buf *b[2];
  OK(bg_buf_alloc(HD, 128 * 4, 0, &b[0]));
  OK(bg_buf_alloc(HD, 128 * 4, 0, &b[1]));
  float in[128], out[128];
  for (int i = 0; i < 128; i++) in[i] = (float)i * 0.25f;
  OK(bg_buf_write(b[1], 0, in, sizeof(in)));
  const uint32_t g[3] = {4, 1, 1}, l[3] = {32, 1, 1};
  OK(bg_program_run(p, b, 2, NULL, 0, g, l, true, NULL));
  OK(bg_buf_read(b[0], 0, out, sizeof(out)));
  for (int i = 0; i < 128; i++) ck_assert_float_eq(out[i], in[i] + 1.0f);
  /* The launch as a recorded queue program, re-submitted: kernel arguments join the batch (one more run). */
  bg_queue *q;
  OK(bg_queue_new(HD, BG_QUEUE_COMPUTE, &q));
  bg_val args[2] = {bg_addr(b[0], 0), bg_addr(b[0], 0)}; /* in place: + 1 per launch */
  bg_val gv[3] = {bg_const(4), bg_const(1), bg_const(1)}, lv[3] = {bg_const(32), bg_const(1), bg_const(1)};
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_exec(q, p, args, 2, gv, lv);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  steady_submits(q, 8, 8, "kernel launch");
  OK(bg_buf_read(b[0], 0, out, sizeof(out)));
  for (int i = 0; i < 128; i++) ck_assert_float_eq(out[i], in[i] + 10.0f); /* the run + 1 + 8 launches */
  bg_queue_free(q);
  bg_buf_free(b[0]);
  bg_buf_free(b[1]);
  bg_program_free(p);
}
END_TEST

/* The transport's round-trip count, read through a call: synchronize changes it behind the pointer. */
static uint64_t round_trips(const bg_usb_transport *t) { return t->stats.round_trips; }

static unsigned log2_ceil(uint64_t x) {
  unsigned k = 0;
  while (k < 63 && (1ull << k) < x) k++;
  return k;
}

/* A synchronize of a kernel that runs many round trips long costs at most 2 round trips on average (the wait polls
 * when the kernel is expected done, from its last run, and the fault check's reads ride in the signal poll's round
 * trip), counted by the transport: before, it polled back-to-back (~29 round trips for a short kernel). Counts, not
 * times: the design bounds every synchronize, also the first (unknown duration) and one whose kernel ran longer than
 * last time, by log2(duration / round trip) + 2 polls; the average over the steady state is what a loaded machine
 * could at worst push up, by slowing single runs of the emulated core (each then costs that bound, not more). */
START_TEST(synchronize_round_trips) {
  void *obj;
  size_t n;
  OK(bg_llvm_amdgpu_compile(AMD_TEST_SPIN_IR, bg_dev_arch(HD), &obj, &n));
  static const uint8_t sizes[2] = {8, 4};
  bg_program_info info = {"spin", 2, sizes};
  bg_program *p;
  OK(bg_program_load(HD, obj, n, &info, &p));
  free(obj);
  bg_buf *b;
  OK(bg_buf_alloc(HD, 32 * 4, BG_BUF_ZERO, &b));
  bg_usb_transport *t = dev_transport(HD);
  /* The round trip: a signal read, the fastest of a few (a slow one is the machine's load, not the bridge). */
  bg_signal *s;
  OK(bg_signal_new(HD, 0, &s));
  uint64_t t0, v = 0, rtt = UINT64_MAX;
  for (int i = 0; i < 8; i++) {
    t0 = bg_now_ns();
    OK(bg_signal_value(s, &v));
    if (bg_now_ns() - t0 < rtt) rtt = bg_now_ns() - t0;
  }
  bg_signal_free(s);
  /* Enough iterations for a kernel of >= 64 round trips (doubling from 4096 until it is). */
  uint32_t iters = 4096;
  uint64_t dur = 0;
  bg_queue *q = NULL;
  for (;;) {
    OK(bg_queue_new(HD, BG_QUEUE_COMPUTE, &q));
    bg_val args[2] = {bg_addr(b, 0), bg_const(iters)};
    bg_val gv[3] = {bg_const(1), bg_const(1), bg_const(1)}, lv[3] = {bg_const(32), bg_const(1), bg_const(1)};
    bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
    bg_queue_exec(q, p, args, 2, gv, lv);
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    OK(bg_queue_submit(q, NULL, 0)); /* lowering, first patches */
    OK(bg_dev_synchronize(HD, 0));
    t0 = bg_now_ns();
    OK(bg_queue_submit(q, NULL, 0));
    OK(bg_dev_synchronize(HD, 0));
    dur = bg_now_ns() - t0;
    if (dur >= 64 * rtt || iters >= (1u << 24)) break;
    bg_queue_free(q);
    iters *= 2;
  }
  ck_assert_msg(dur >= 64 * rtt, "the loop kernel of %u iterations ran %.0f us, expected >= 64 round trips (%.1f us)",
                iters, dur / 1e3, 64 * rtt / 1e3);
  enum { N = 24 };
  uint64_t total = 0, worst = 0;
  for (int i = 0; i < N; i++) {
    OK(bg_queue_submit(q, NULL, 0));
    uint64_t r0 = round_trips(t), s0 = bg_now_ns();
    OK(bg_dev_synchronize(HD, 0));
    uint64_t rt = round_trips(t) - r0, d = bg_now_ns() - s0;
    /* Every synchronize: the backoff's bound (polls from 1/8 of the estimate or one round trip, doubling). */
    unsigned bound = log2_ceil(d / (rtt ? rtt : 1) + 1) + 3;
    ck_assert_msg(rt <= bound, "synchronize %d: %llu round trips for a %.0f us wait (round trip %.1f us): expected <= "
                  "%u (log2(wait / round trip) + 3)", i, (unsigned long long)rt, d / 1e3, rtt / 1e3, bound);
    total += rt;
    if (rt > worst) worst = rt;
  }
  float out[32];
  OK(bg_buf_read(b, 0, out, sizeof(out)));
  for (int i = 0; i < 32; i++) ck_assert_float_eq(out[i], (float)iters);
  printf("MOCKUSB+AMD loop kernel of %u iterations (~%.0f us, round trip ~%.1f us): %.2f round trips per "
         "synchronize (worst %llu) over %d\n", iters, dur / 1e3, rtt / 1e3, (double)total / N, (unsigned long long)worst, N);
  ck_assert_msg(total <= 2 * N, "%llu round trips for %d synchronizes of a kernel of ~%.0f us (round trip %.1f us): "
                "expected <= 2 per synchronize on average", (unsigned long long)total, N, dur / 1e3, rtt / 1e3);
  bg_queue_free(q);
  bg_buf_free(b);
  bg_program_free(p);
}
END_TEST
#endif

START_TEST(copies_over_usb) {
  const size_t n = (4u << 20) + 12345; /* not a whole number of dwords at the end */
  uint8_t *src = malloc(n), *dst = malloc(n);
  ck_assert(src && dst);
  ux_srand(7);
  for (size_t i = 0; i < n; i++) src[i] = (uint8_t)ux_rand();
  bg_buf *b;
  OK(bg_buf_alloc(HD, n + 3, 0, &b));
  bg_usb_transport *t = dev_transport(HD);
  bg_usb_stats s0 = t->stats;
  OK(bg_buf_write(b, 3, src, n)); /* unaligned start */
  bg_usb_stats s1 = t->stats;
  OK(bg_buf_read(b, 3, dst, n));
  ck_assert(memcmp(src, dst, n) == 0);
  double mib = (double)n / (1 << 20);
  uint64_t xf_in = nxfers(&s1) - nxfers(&s0), xf_out = nxfers(&t->stats) - nxfers(&s1);
  uint64_t rt_in = s1.round_trips - s0.round_trips, rt_out = t->stats.round_trips - s1.round_trips;
  printf("MOCKUSB+AMD bg_buf_write: %.2f transfers, %.2f round trips (1 MiB streams, 4 in flight) per MiB; "
         "bg_buf_read: %.2f, %.2f\n", (double)xf_in / mib, (double)rt_in / mib, (double)xf_out / mib,
         (double)rt_out / mib);
  /* 5 streams of <= 1 MiB (0xF0 + bulk each), byte-enabled TLPs for the partial dwords at both ends, the
   * synchronize's signal read: anything per-dword or per-page would be orders of magnitude more. */
  const uint64_t streams = (n + (1u << 20) - 1) >> 20;
  ck_assert_msg(xf_in <= 2 * streams + 12 && xf_out <= 2 * streams + 12 && rt_in <= streams + 6 &&
                rt_out <= streams + 6, "copies do not stream: %llu/%llu transfers, %llu/%llu round trips for %.1f MiB",
                (unsigned long long)xf_in, (unsigned long long)xf_out, (unsigned long long)rt_in,
                (unsigned long long)rt_out, mib);
  bg_buf_free(b);
  free(src);
  free(dst);
}
END_TEST

/* The plugin's MOCKPCI and MOCKUSB GPUs are different devices side by side in one process; indices beyond
 * MOCKGPU_COUNT are refused by name. */
START_TEST(pci_and_usb_side_by_side) {
  bg_dev *pd = NULL, *bad = NULL;
  OK(bg_dev_open("MOCKPCI+AMD", &pd));
  ck_assert_int_lt(bg_dev_open("MOCKUSB+AMD:1", &bad), 0);
  ck_assert_msg(strstr(bg_last_error(), "out of range"), "%s", bg_last_error());
  bg_dev *devs[2] = {HD, pd};
  for (int k = 0; k < 2; k++) {
    bg_queue *q;
    OK(bg_queue_new(devs[k], BG_QUEUE_COPY, &q));
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    OK(bg_queue_submit(q, NULL, 0));
    OK(bg_dev_synchronize(devs[k], 0));
    bg_queue_free(q);
  }
  const am_hcq *hu = HD->priv, *hp = pd->priv;
  ck_assert(hu->usb && !hp->usb && hu->d != hp->d);
  bg_dev_close(pd);
}
END_TEST

Suite *usb_hcq_suite(void) {
  Suite *s = suite_create("usb-hcq");
  TCase *tc = tcase_create("mockusb-amd");
  tcase_add_checked_fixture(tc, hcq_setup, hcq_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, signals_over_usb);
#if BG_HAVE_LLVM
  tcase_add_test(tc, kernel_launch_over_usb);
  tcase_add_test(tc, synchronize_round_trips);
#endif
  tcase_add_test(tc, copies_over_usb);
  tcase_add_test(tc, pci_and_usb_side_by_side);
  suite_add_tcase(s, tc);
  return s;
}
