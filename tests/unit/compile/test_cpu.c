/* tests/unit/compile/test_cpu.c: the CPU device end to end: kernels compiled by bg_compile_c,
 * loaded and run through HCQ queues; memory, queue ordering, symbolic operands, ring wrap-around,
 * faults. (The full HCQ conformance suite runs on CPU too; this is the backend's own check.) */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "hcq/backend.h"
#include "cpu/cpu.h"
#include "util/clock.h"
#include "../check_helpers.h"

/* Signal reads and writes that must succeed: they return 0 or a negative BG_E* (baregpu/error.h). */
static double sigts_us(const bg_signal *s) {
  double v = 0;
  ck_assert_msg(bg_signal_timestamp_us(s, &v) == 0, "bg_signal_timestamp_us: %s", bg_last_error());
  return v;
}

static bg_dev *dev;

static void open_cpu(void) { ck_assert_msg(bg_dev_open("CPU", &dev) == 0, "open: %s", bg_last_error()); }
static void close_cpu(void) {
  bg_dev_close(dev);
  dev = NULL;
}

static uint64_t now_ms(void) { return bg_now_ns() / 1000000u; }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}


/* Index of the first non-zero byte, or n (one assertion per buffer: Check reports every
 * assertion to its parent process, which is slow in byte loops). */
static uint64_t first_nonzero(const uint8_t *p, uint64_t n) {
  uint64_t i = 0;
  while (i < n && p[i] == 0) i++;
  return i;
}

/* ---------------- device and memory ---------------- */

START_TEST(cpu_properties) {
  ck_assert_str_eq(bg_dev_name(dev), "CPU");
  ck_assert_str_eq(bg_dev_arch(dev), "host");
  ck_assert(bg_dev_has_copy_queue(dev));
  ck_assert(bg_dev_ticks_per_us(dev) == 1000.0);
  bg_dev *other = NULL;
  ck_assert_int_eq(bg_dev_open("CPU:1", &other), -BG_ENODEV);
  ck_assert_ptr_null(other);
}
END_TEST

START_TEST(cpu_alloc_zero_and_reuse) {
  const uint64_t sizes[] = {1, 100, 4096, 65536, 3u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    bg_buf *b;
    OK(bg_buf_alloc(dev, sizes[i], BG_BUF_ZERO, &b));
    ck_assert_ptr_eq(bg_buf_cpu(b), (void *)(uintptr_t)bg_buf_va(b));   /* unified addressing */
    ck_assert_uint_eq(bg_buf_va(b) % (sizes[i] >= 65536 ? 4096 : 64), 0);
    uint8_t *p = bg_buf_cpu(b);
    ck_assert_uint_eq(first_nonzero(p, sizes[i]), sizes[i]);
    memset(p, 0xa5, sizes[i]);
    bg_buf_free(b);
    /* The same range handed out again with ZERO reads zero, dirty pages or not. */
    OK(bg_buf_alloc(dev, sizes[i], BG_BUF_ZERO, &b));
    p = bg_buf_cpu(b);
    ck_assert_uint_eq(first_nonzero(p, sizes[i]), sizes[i]);
    bg_buf_free(b);
  }
  /* Sub-page dirt under a later large ZERO allocation. */
  bg_buf *small[64];
  for (int i = 0; i < 64; i++) {
    OK(bg_buf_alloc(dev, 1000, 0, &small[i]));
    memset(bg_buf_cpu(small[i]), 0xff, 1000);
  }
  for (int i = 0; i < 64; i++) bg_buf_free(small[i]);
  bg_buf *big;
  OK(bg_buf_alloc(dev, 1u << 20, BG_BUF_ZERO, &big));
  ck_assert_uint_eq(first_nonzero(bg_buf_cpu(big), 1u << 20), 1u << 20);
  bg_buf_free(big);
  /* Too large for the reservation: a clear error, not a crash. */
  bg_buf *huge = NULL;
  ck_assert_int_eq(bg_buf_alloc(dev, 1ull << 50, 0, &huge), -BG_ENOMEM);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "cpu"));
}
END_TEST

/* ---------------- kernels ---------------- */

static const char *add_src =
  "#include <stdint.h>\n"
  "void add_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  float *o = ((float *const *)ka)[0];\n"
  "  const float *a = ((const float *const *)ka)[1];\n"
  "  int32_t k = *(const int32_t *)((const char *)ka + 16);\n"
  "  uint32_t row = gid[1] * gsz[0] + gid[0];\n"
  "  for (uint32_t l = 0; l < lsz[0]; l++) { uint32_t i = row * lsz[0] + l; o[i] = a[i] + (float)k; }\n"
  "}\n";

static bg_program *load_add(void) {
  void *so;
  size_t n;
  OK(bg_compile_c(add_src, NULL, &so, &n));
  static const uint8_t sizes[3] = {8, 8, 4};
  bg_program_info info = {"add_k", 3, sizes};
  bg_program *p;
  OK(bg_program_load(dev, so, n, &info, &p));
  free(so);
  ck_assert_uint_eq(bg_program_kernargs_size(p), 32);
  return p;
}

START_TEST(cpu_run_kernel) {
  bg_program *p = load_add();
  enum { N = 4096 };
  bg_buf *o, *a;
  OK(bg_buf_alloc(dev, N * 4, BG_BUF_ZERO, &o));
  OK(bg_buf_alloc(dev, N * 4, 0, &a));
  float *af = bg_buf_cpu(a), *of = bg_buf_cpu(o);
  for (int i = 0; i < N; i++) af[i] = (float)i;
  bg_buf *bufs[2] = {o, a};
  uint64_t k = 5;
  const uint32_t g[3] = {32, 16, 1}, l[3] = {8, 1, 1};   /* a 2-D grid: every gid is visited once */
  double us = -1;
  OK(bg_program_run(p, bufs, 2, &k, 1, g, l, true, &us));
  ck_assert(us >= 0);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += of[i] != (float)i + 5;
  ck_assert_int_eq(bad, 0);
  /* Asynchronous reruns patch only the changed scalar; the last one wins. */
  for (k = 0; k < 500; k++) OK(bg_program_run(p, bufs, 2, &k, 1, g, l, false, NULL));
  OK(bg_dev_synchronize(dev, 0));
  for (int i = 0; i < N; i++) bad += of[i] != (float)i + 499;
  ck_assert_int_eq(bad, 0);
  bg_buf_free(o);
  bg_buf_free(a);
  bg_program_free(p);
}
END_TEST

START_TEST(cpu_bad_programs) {
  static const uint8_t sizes[1] = {8};
  bg_program_info info = {"nope", 1, sizes};
  bg_program *p = NULL;
  const char junk[] = "this is not a shared object";
  ck_assert_int_lt(bg_program_load(dev, junk, sizeof junk, &info, &p), 0);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "nope"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "dlopen"));
  void *so;
  size_t n;
  OK(bg_compile_c(add_src, NULL, &so, &n));
  ck_assert_int_lt(bg_program_load(dev, so, n, &info, &p), 0);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "entry symbol"));
  free(so);
  ck_assert_ptr_null(p);
}
END_TEST

START_TEST(cpu_many_programs_reload) {
  /* Load and free programs repeatedly: each library must be its own (no stale handle reuse). */
  for (int i = 0; i < 20; i++) {
    char src[256];
    snprintf(src, sizeof src,
             "#include <stdint.h>\nvoid k%d(const void *ka, const uint32_t *g, const uint32_t *s, const uint32_t *l)"
             "{ (void)g; (void)s; (void)l; **(int32_t *const *)ka = %d; }\n", i % 3, i);
    void *so;
    size_t n;
    OK(bg_compile_c(src, NULL, &so, &n));
    static const uint8_t sizes[1] = {8};
    char name[8];
    snprintf(name, sizeof name, "k%d", i % 3);
    bg_program_info info = {name, 1, sizes};
    bg_program *p;
    OK(bg_program_load(dev, so, n, &info, &p));
    free(so);
    bg_buf *b;
    OK(bg_buf_alloc(dev, 4, BG_BUF_ZERO, &b));
    const uint32_t one[3] = {1, 1, 1};
    OK(bg_program_run(p, &b, 1, NULL, 0, one, one, true, NULL));
    ck_assert_int_eq(*(int32_t *)bg_buf_cpu(b), i);
    bg_buf_free(b);
    bg_program_free(p);
  }
}
END_TEST

/* ---------------- queues ---------------- */

START_TEST(cpu_wait_blocks_until_signalled) {
  bg_signal *gate, *done;
  OK(bg_signal_new(dev, 0, &gate));
  OK(bg_signal_new(dev, 0, &done));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_signal(bg_queue_wait(q, bg_sig(gate), bg_const(3)), bg_sig(done), bg_const(7));
  OK(bg_queue_submit(q, NULL, 0));
  sleep_ms(30);
  ck_assert_uint_eq(sigval(done), 0);
  SIGSET(gate, 2);   /* not enough */
  sleep_ms(10);
  ck_assert_uint_eq(sigval(done), 0);
  SIGSET(gate, 3);
  OK(bg_signal_wait(done, 7, 5000));
  bg_queue_free(q);
  bg_signal_free(gate);
  bg_signal_free(done);
}
END_TEST

START_TEST(cpu_copy_queue_symbolic) {
  enum { N = (1 << 20) + 3 };
  bg_buf *a, *b, *c;
  OK(bg_buf_alloc(dev, N, 0, &a));
  OK(bg_buf_alloc(dev, N, BG_BUF_ZERO, &b));
  OK(bg_buf_alloc(dev, N, BG_BUF_ZERO, &c));
  uint8_t *ap = bg_buf_cpu(a);
  for (int i = 0; i < N; i++) ap[i] = (uint8_t)(i * 31 + 7);
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COPY, &q));
  bg_val dst = bg_var(q, 0, "dst", 0, UINT64_MAX), src = bg_var(q, 1, "src", 0, UINT64_MAX);
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_copy(q, dst, src, N);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  uint64_t v1[2] = {bg_buf_va(b), bg_buf_va(a)};
  OK(bg_queue_submit(q, v1, 2));
  uint64_t v2[2] = {bg_buf_va(c), bg_buf_va(b)};   /* ordered after the first by the timeline */
  OK(bg_queue_submit(q, v2, 2));
  OK(bg_dev_synchronize(dev, 0));
  ck_assert_mem_eq(bg_buf_cpu(b), ap, N);
  ck_assert_mem_eq(bg_buf_cpu(c), ap, N);
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  ck_assert_uint_eq(st.submits, 2);
  bg_queue_free(q);
  bg_buf_free(a);
  bg_buf_free(b);
  bg_buf_free(c);
}
END_TEST

START_TEST(cpu_timestamps) {
  bg_signal *s0, *s1;
  OK(bg_signal_new(dev, 0, &s0));
  OK(bg_signal_new(dev, 0, &s1));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_timestamp(q, bg_sig(s0));
  bg_queue_memory_barrier(q);
  bg_queue_timestamp(q, bg_sig(s1));
  bg_queue_signal(q, bg_sig(s1), bg_const(1));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_signal_wait(s1, 1, 5000));
  ck_assert_uint_gt(sigts(s0), 0);
  ck_assert_uint_ge(sigts(s1), sigts(s0));
  ck_assert_uint_eq(sigval(s0), 0);   /* a timestamp leaves the value alone */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now_us = (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
  ck_assert(sigts_us(s1) <= now_us && sigts_us(s1) > now_us - 5e6);
  bg_queue_free(q);
  bg_signal_free(s0);
  bg_signal_free(s1);
}
END_TEST

START_TEST(cpu_ping_pong_between_queues) {
  /* Compute and copy queues hand a counter back and forth through one signal, 2000 rounds each,
   * every round a re-submit of the same recording with a new variable value. */
  enum { ROUNDS = 2000 };
  bg_signal *s;
  OK(bg_signal_new(dev, 0, &s));
  bg_queue *qc, *qx;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &qc));
  OK(bg_queue_new(dev, BG_QUEUE_COPY, &qx));
  bg_val ic = bg_mul(qc, bg_var(qc, 0, "i", 0, ROUNDS), bg_const(2));
  bg_queue_signal(bg_queue_wait(qc, bg_sig(s), ic), bg_sig(s), bg_add(qc, ic, bg_const(1)));
  bg_val ix = bg_add(qx, bg_mul(qx, bg_var(qx, 0, "i", 0, ROUNDS), bg_const(2)), bg_const(1));
  bg_queue_signal(bg_queue_wait(qx, bg_sig(s), ix), bg_sig(s), bg_add(qx, ix, bg_const(1)));
  for (uint64_t i = 0; i < ROUNDS; i++) {
    OK(bg_queue_submit(qx, &i, 1));   /* the copy side first: it must wait for compute */
    OK(bg_queue_submit(qc, &i, 1));
  }
  OK(bg_signal_wait(s, 2 * ROUNDS, 10000));
  ck_assert_uint_eq(sigval(s), 2 * ROUNDS);
  bg_queue_free(qc);
  bg_queue_free(qx);
  bg_signal_free(s);
}
END_TEST

START_TEST(cpu_ring_wraps_with_backpressure) {
  /* 120 submits of 1000 commands (more than seven times the ring) while the worker is held
   * back by a gate: submit must wait for room, then everything runs in order. */
  bg_signal *gate, *s;
  OK(bg_signal_new(dev, 0, &gate));
  OK(bg_signal_new(dev, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_val base = bg_var(q, 0, "base", 0, UINT32_MAX);
  bg_queue_wait(q, bg_sig(gate), bg_const(1));
  for (int i = 1; i < 1000; i++) bg_queue_signal(q, bg_sig(s), bg_add(q, base, bg_const((uint64_t)i)));
  uint64_t b = 0;
  OK(bg_queue_submit(q, &b, 1));
  SIGSET(gate, 1);
  for (int r = 1; r < 120; r++) {
    b = (uint64_t)r * 1000;
    OK(bg_queue_submit(q, &b, 1));
  }
  OK(bg_signal_wait(s, 119 * 1000 + 999, 10000));
  ck_assert_uint_eq(sigval(s), 119 * 1000 + 999);
  bg_queue_free(q);
  bg_signal_free(gate);
  bg_signal_free(s);
}
END_TEST

START_TEST(cpu_program_larger_than_ring) {
  bg_signal *s;
  OK(bg_signal_new(dev, 0, &s));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  for (int i = 0; i < CPU_RING_SLOTS + 1; i++) bg_queue_signal(q, bg_sig(s), bg_const(1));
  ck_assert_int_eq(bg_queue_submit(q, NULL, 0), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "ring"));
  bg_queue_free(q);
  bg_signal_free(s);
}
END_TEST

START_TEST(cpu_free_queue_blocked_in_wait) {
  bg_signal *never;
  OK(bg_signal_new(dev, 0, &never));
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_sig(never), bg_const(1));
  OK(bg_queue_submit(q, NULL, 0));
  sleep_ms(20);
  uint64_t t0 = now_ms();
  bg_queue_free(q);   /* must not hang on the worker */
  ck_assert_uint_lt(now_ms() - t0, 2000);
  bg_signal_free(never);
}
END_TEST

START_TEST(cpu_close_stops_live_queues) {
  /* A hardware queue the core does not know about, blocked in a wait: close must stop it. */
  bg_signal *never;
  OK(bg_signal_new(dev, 0, &never));
  bg_queue_hw *hq;
  OK(dev->ops->queue_create(dev, BG_QUEUE_COMPUTE, &hq));
  cpu_slot slot = {.op = CPU_OP_WAIT, .a = bg_signal_va(never), .b = 1};
  OK(dev->ops->submit(dev, hq, &slot, sizeof slot));
  bg_signal_free(never);
  uint64_t t0 = now_ms();
  close_cpu();
  ck_assert_uint_lt(now_ms() - t0, 2000);
  open_cpu();
}
END_TEST

/* ---------------- faults ---------------- */

static int wait_fault(void) {
  for (int i = 0; i < 1000; i++) {
    int r = dev->ops->sleep(dev, 1);
    if (r < 0) return r;
  }
  return 0;
}

START_TEST(cpu_unknown_opcode_faults) {
  bg_queue_hw *hq;
  OK(dev->ops->queue_create(dev, BG_QUEUE_COMPUTE, &hq));
  uint8_t zeros[2 * CPU_SLOT_SIZE] = {0};
  ck_assert_int_eq(dev->ops->submit(dev, hq, zeros, 10), -BG_EINVAL);   /* not whole slots */
  OK(dev->ops->submit(dev, hq, zeros, sizeof zeros));
  ck_assert_int_eq(wait_fault(), -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "unknown opcode") != NULL, "%s", bg_last_error());
  ck_assert_msg(strstr(bg_last_error(), "compute queue") != NULL, "%s", bg_last_error());
  dev->ops->queue_destroy(dev, hq);
}
END_TEST

START_TEST(cpu_bad_address_faults) {
  setenv("BG_WAIT_TIMEOUT_MS", "5000", 1);
  bg_queue *q;
  OK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_queue_signal(q, bg_const(0x1000), bg_const(1));   /* not device memory */
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  OK(bg_queue_submit(q, NULL, 0));
  int r = bg_dev_synchronize(dev, 0);
  ck_assert_int_eq(r, -BG_EHANG);
  ck_assert_msg(strstr(bg_last_error(), "outside device memory") != NULL, "%s", bg_last_error());
  bg_queue_free(q);
  /* The device stays in its error state; closing it still works (the fixture does). */
  ck_assert_int_eq(bg_dev_synchronize(dev, 0), -BG_EHANG);
}
END_TEST

static Suite *cpu_suite(void) {
  Suite *s = suite_create("cpu");
  TCase *tc = tcase_create("device");
  tcase_add_checked_fixture(tc, open_cpu, close_cpu);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, cpu_properties);
  tcase_add_test(tc, cpu_alloc_zero_and_reuse);
  tcase_add_test(tc, cpu_run_kernel);
  tcase_add_test(tc, cpu_bad_programs);
  tcase_add_test(tc, cpu_many_programs_reload);
  tcase_add_test(tc, cpu_wait_blocks_until_signalled);
  tcase_add_test(tc, cpu_copy_queue_symbolic);
  tcase_add_test(tc, cpu_timestamps);
  tcase_add_test(tc, cpu_ping_pong_between_queues);
  tcase_add_test(tc, cpu_ring_wraps_with_backpressure);
  tcase_add_test(tc, cpu_program_larger_than_ring);
  tcase_add_test(tc, cpu_free_queue_blocked_in_wait);
  tcase_add_test(tc, cpu_close_stops_live_queues);
  tcase_add_test(tc, cpu_unknown_opcode_faults);
  tcase_add_test(tc, cpu_bad_address_faults);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(cpu_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
