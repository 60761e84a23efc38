/* tests/unit/tensor/test_tcompile.c: the kernels of one schedule compile in parallel (tensor/tcompile.c).
 * A schedule of several independent kernels compiles on 2 threads with BG_COMPILE_THREADS=2 (the test hook sees two
 * compiles in flight at once on two threads; with serial compiles the first one waits in vain and the test fails),
 * its results are bit-identical to BG_COMPILE_THREADS=1, the first failing kernel in schedule order is reported with
 * its own message even when a later one fails first, the context works afterwards, and a bad BG_COMPILE_THREADS is an
 * error naming it. The hook is internal (tensor_internal.h), so this links the static library. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "baregpu/tensor.h"
#include "tensor/tensor_internal.h"
#include "tctx_fixture.h"

enum { N = 64, MAXT = 8 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned calls, inflight_seen;       /* compiles started; the most started while job 0's hook was waiting */
static pthread_t tids[MAXT];
static unsigned ntids;
static bool wait_for_second;                /* job 0 waits (10 s at most) for another compile to start */
static unsigned fail_a = ~0u, fail_b = ~0u; /* jobs that fail; fail_a waits for fail_b to have failed */
static bool b_failed;

static void wait_until(const bool *flag_or_null, unsigned want_calls) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 10;  /* a bail-out, not a timing assertion: serial compiles never get past it */
  while (flag_or_null ? !*flag_or_null : calls < want_calls)
    if (pthread_cond_timedwait(&cv, &mu, &dl) != 0) break;
}

static int hook(unsigned job) {
  pthread_mutex_lock(&mu);
  calls++;
  bool known = false;
  for (unsigned i = 0; i < ntids; i++) known |= pthread_equal(tids[i], pthread_self()) != 0;
  if (!known && ntids < MAXT) tids[ntids++] = pthread_self();
  pthread_cond_broadcast(&cv);
  if (wait_for_second && job == 0) {
    wait_until(NULL, 2);
    inflight_seen = calls;
  }
  int rc = 0;
  if (job == fail_a) {
    wait_until(&b_failed, 0);
    rc = bg_error(BG_ECOMPILE, "planted failure of job %u", job);
  } else if (job == fail_b) {
    rc = bg_error(BG_EIO, "planted failure of job %u", job);
    b_failed = true;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

static void reset_hook(void) {
  calls = inflight_seen = ntids = 0;
  wait_for_second = b_failed = false;
  fail_a = fail_b = ~0u;
  t_compile_hook = hook;
}

/* Four independent kernels (distinct ASTs) and one that sums them: 5 compiles, 4 of them independent.
 * Inputs depend on seed so every call is a new schedule of the same kernels. */
static bg_tensor *graph(unsigned seed) {
  static const int64_t sh[1] = {N};
  float a[N];
  for (int i = 0; i < N; i++) a[i] = (float)((i * 37 + (int)seed * 11) % 23) / 7.0f - 1.5f;
  bg_tensor *x = bg_tn_from(c, BG_FLOAT32, 1, sh, a);
  bg_tensor *k1 = bg_tn_contiguous(bg_tn_exp(x));
  bg_tensor *k2 = bg_tn_contiguous(bg_tn_sin(x));
  bg_tensor *k3 = bg_tn_contiguous(bg_tn_mulc(x, 3.0));
  bg_tensor *k4 = bg_tn_contiguous(bg_tn_sqrt(bg_tn_mul(x, x)));
  return bg_tn_add(bg_tn_add(k1, k2), bg_tn_add(k3, k4));
}

static void run_with(const char *threads, float *out) {
  setenv("BG_COMPILE_THREADS", threads, 1);
  bg_tctx *own;
  ck_assert_msg(bg_tctx_open(NULL, &own) == 0, "open: %s", bg_last_error());
  bg_tctx *saved = c;
  c = own;
  OK(bg_tn_read(graph(1), out, N * sizeof(float)));
  bg_tstats st;
  bg_tctx_stats(own, &st);
  ck_assert_uint_eq(st.kernels_compiled, 5);
  c = saved;
  bg_tctx_close(own);
}

START_TEST(compiles_on_two_threads) {
  reset_hook();
  wait_for_second = true;
  float par[N], ser[N];
  run_with("2", par);
  ck_assert_msg(inflight_seen >= 2, "while the first compile's hook waited, %u compile(s) had started: the schedule "
                "compiled serially with BG_COMPILE_THREADS=2", inflight_seen);
  ck_assert_msg(ntids == 2, "compiles ran on %u threads with BG_COMPILE_THREADS=2, expected 2", ntids);
  ck_assert_uint_eq(calls, 5);
  reset_hook();
  run_with("1", ser);
  ck_assert_msg(ntids == 1, "compiles ran on %u threads with BG_COMPILE_THREADS=1, expected 1", ntids);
  ck_assert_uint_eq(calls, 5);
  ck_assert_msg(memcmp(par, ser, sizeof par) == 0, "results differ between 2 compile threads and 1");
  for (int i = 0; i < N; i++) ck_assert_msg(par[i] == par[i], "element %d is NaN", i);
  t_compile_hook = NULL;
}
END_TEST

START_TEST(first_failure_in_schedule_order) {
  reset_hook();
  fail_a = 1;  /* job 1 fails only after job 2 has failed: the report must still be job 1's */
  fail_b = 2;
  setenv("BG_COMPILE_THREADS", "2", 1);
  float out[N];
  int rc = bg_tn_read(graph(2), out, sizeof out);
  ck_assert_int_eq(rc, -BG_ECOMPILE);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "planted failure of job 1") && strstr(msg, "tensor: compiling the kernel of a"),
                "error is '%s', expected job 1's planted failure with the compile context", msg);
  ck_assert_msg(!strstr(msg, "job 2"), "error '%s' names job 2, not the first failing kernel", msg);
  ck_assert_uint_eq(stats().kernels_run, 0);
  /* job 0 compiled and was kept; the rest compile on the next realize and the results are right */
  ck_assert_uint_eq(stats().kernels_compiled, 1);
  t_compile_hook = NULL;
  float want[N];
  OK(bg_tn_read(graph(3), out, sizeof out));
  ck_assert_uint_eq(stats().kernels_compiled, 5);
  setenv("BG_COMPILE_THREADS", "1", 1);
  bg_tctx *saved = c;
  ck_assert_msg(bg_tctx_open(NULL, &c) == 0, "open: %s", bg_last_error());
  OK(bg_tn_read(graph(3), want, sizeof want));
  bg_tctx_close(c);
  c = saved;
  ck_assert_msg(memcmp(out, want, sizeof out) == 0, "results after a failed compile differ from a fresh context's");
}
END_TEST

START_TEST(bad_thread_count) {
  t_compile_hook = NULL;
  setenv("BG_COMPILE_THREADS", "many", 1);
  float out[N];
  int rc = bg_tn_read(graph(4), out, sizeof out);
  unsetenv("BG_COMPILE_THREADS");
  ck_assert_int_eq(rc, -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "BG_COMPILE_THREADS=many"), "error '%s' does not name the variable",
                bg_last_error());
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor-compile-threads");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, compiles_on_two_threads);
  tcase_add_test(tc, first_failure_in_schedule_order);
  tcase_add_test(tc, bad_thread_count);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
