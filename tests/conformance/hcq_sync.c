/* tests/conformance/hcq_sync.c: signals, waits, the timeline and its wrap-around, host-side wait
 * timeouts, sticky recording errors (test_hcq.py: test_signal*, test_wait*, test_timeline_signal_rollover). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "hcq/dev_internal.h" /* bg_dev_set_timeline: test hook, not exported */

/* signal(tl, tv) completes; the symbolic form claims a timeline value per submit, the constant
 * form uses a value the caller took with bg_dev_next_timeline. */
static int test_signal(cf_ctx *c) {
  bg_queue *q, *q2, *q3;
  CF_OK(cf_queue(c, c->qk, &q));
  cf_tl_signal(q);
  for (int i = 0; i < 3; i++) CF_OK(cf_submit_wait(c, q, NULL, 0));

  CF_OK(cf_queue(c, c->qk, &q2));
  bg_signal *tl = bg_dev_timeline(c->d);
  uint64_t v = bg_dev_next_timeline(c->d);
  bg_queue_signal(q2, bg_sig(tl), bg_const(v));
  CF_OK(bg_queue_submit(q2, NULL, 0));
  CF_EXPECT(bg_dev_timeline_value(c->d) == v + 1, "a queue signalling a constant moved the timeline to %" PRIu64
            " (expected %" PRIu64 ")", bg_dev_timeline_value(c->d), v + 1);
  CF_OK(bg_signal_wait(tl, v, CF_TIMEOUT_MS));
  uint64_t seen;
  CF_OK(bg_signal_value(tl, &seen));
  CF_EXPECT(seen == v, "timeline is %" PRIu64 " after signalling %" PRIu64, seen, v);

  /* A plain signal gets exactly the value written. */
  bg_signal *s;
  CF_OK(cf_signal(c, 0, &s));
  CF_OK(cf_queue(c, c->qk, &q3));
  bg_queue_signal(q3, bg_sig(s), bg_const(0x42));
  CF_OK(bg_queue_submit(q3, NULL, 0));
  CF_OK(bg_signal_wait(s, 0x42, CF_TIMEOUT_MS));
  CF_OK(bg_signal_value(s, &seen));
  CF_EXPECT(seen == 0x42, "signal is 0x%" PRIx64 ", expected 0x42", seen);
  return CF_PASS;
}

/* A virtual signal (address variable) and a value variable, bound differently at each submit. */
static int test_signal_update(cf_ctx *c) {
  bg_queue *q;
  bg_signal *s2;
  CF_OK(cf_queue(c, c->qk, &q));
  CF_OK(cf_signal(c, 0, &s2));
  bg_queue_signal(q, bg_var(q, 0, "sig_addr", 0, UINT64_MAX), bg_var(q, 1, "sig_val", 0, UINT32_MAX));
  for (int i = 0; i < 4; i++) {
    if (i % 2 == 0) {
      bg_signal *tl = bg_dev_timeline(c->d);
      uint64_t vars[2] = {bg_signal_va(tl), bg_dev_next_timeline(c->d)};
      CF_OK(bg_queue_submit(q, vars, 2));
      CF_OK(bg_signal_wait(tl, vars[1], CF_TIMEOUT_MS));
    } else {
      uint64_t vars[2] = {bg_signal_va(s2), 0x30u + (uint64_t)i};
      CF_OK(bg_queue_submit(q, vars, 2));
      CF_OK(bg_signal_wait(s2, vars[1], CF_TIMEOUT_MS));
      uint64_t seen;
      CF_OK(bg_signal_value(s2, &seen));
      CF_EXPECT(seen == vars[1], "virtual signal: 0x%" PRIx64 ", expected 0x%" PRIx64, seen, vars[1]);
    }
  }
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);
  CF_EXPECT(st.ncmds == 1 && st.submits == 4, "stats: %zu commands, %zu submits (expected 1 and 4: lowered once)",
            st.ncmds, st.submits);
  return CF_PASS;
}

/* A host-set signal satisfies the queue's wait (>=), and the queue then signals the timeline. */
static int test_wait(cf_ctx *c) {
  bg_signal *s;
  bg_queue *q, *q2;
  CF_OK(cf_signal(c, 0, &s));
  CF_OK(bg_signal_set(s, 1));
  CF_OK(cf_queue(c, c->qk, &q));
  bg_queue_wait(q, bg_sig(s), bg_const(1));
  cf_tl_signal(q);
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  CF_OK(bg_signal_set(s, 7));
  CF_OK(cf_queue(c, c->qk, &q2));
  bg_queue_wait(q2, bg_sig(s), bg_const(5));  /* the comparison is >= */
  cf_tl_signal(q2);
  CF_OK(cf_submit_wait(c, q2, NULL, 0));
  return CF_PASS;
}

/* wait(virtual signal, virtual value) bound to real signals. */
static int test_wait_update(cf_ctx *c) {
  bg_signal *s, *s2;
  bg_queue *q;
  CF_OK(cf_signal(c, 0x30, &s));
  CF_OK(cf_signal(c, 0x40, &s2));
  CF_OK(cf_queue(c, c->qk, &q));
  bg_queue_wait(q, bg_var(q, 0, "sig_addr", 0, UINT64_MAX), bg_var(q, 1, "sig_val", 0, UINT32_MAX));
  cf_tl_signal(q);
  uint64_t v1[2] = {bg_signal_va(s), 0x30}, v2[2] = {bg_signal_va(s2), 0x3f};
  CF_OK(cf_submit_wait(c, q, v1, 2));
  CF_OK(cf_submit_wait(c, q, v2, 2));
  return CF_PASS;
}

/* The queue waits on a signal still 0: a host wait on the timeline times out naming what it
 * expected and saw; once the host sets the signal the queue completes. */
static int test_wait_late_set(cf_ctx *c) {
  bg_signal *s;
  bg_queue *q;
  /* A distinctive timeline value, so the message check cannot match by accident. */
  bg_dev_set_timeline(c->d, 1000003);
  CF_OK(cf_signal(c, 0, &s));
  CF_OK(cf_queue(c, c->qk, &q));
  bg_queue_wait(q, bg_sig(s), bg_const(1));
  cf_tl_signal(q);
  uint64_t tv = bg_dev_timeline_value(c->d);
  CF_OK(bg_queue_submit(q, NULL, 0));
  uint64_t t0 = cf_now_us();
  int r = bg_signal_wait(bg_dev_timeline(c->d), tv, 500);
  uint64_t dt = cf_now_us() - t0;
  const char *msg = bg_last_error();
  CF_EXPECT(r == -BG_ETIMEDOUT, "host wait returned %s (expected BG_ETIMEDOUT): %s", bg_strerror(r), r ? msg : "");
  CF_EXPECT(dt >= 450000, "host wait with a 500 ms timeout returned after %" PRIu64 " us", dt);
  CF_EXPECT(cf_mentions(msg, tv) && cf_mentions(msg, tv - 1),
            "timeout message should name the expected %" PRIu64 " and the seen %" PRIu64 ": '%s'", tv, tv - 1, msg);
  uint64_t seen = 0;
  int rv = bg_signal_value(bg_dev_timeline(c->d), &seen);
  int rs = bg_signal_set(s, 1); /* before any check can return: the queue must not stay blocked */
  CF_OK(rv);
  CF_OK(rs);
  CF_EXPECT(seen == tv - 1, "the queue went past its unsatisfied wait");
  CF_OK(bg_signal_wait(bg_dev_timeline(c->d), tv, CF_TIMEOUT_MS));
  return CF_PASS;
}

/* ---- host wait timeouts ---- */

struct bumper { bg_signal *s; int n, ms; };

static void *bump_thread(void *arg) {
  struct bumper *b = arg;
  for (int i = 0; i < b->n; i++) {
    struct timespec ts = {0, (long)b->ms * 1000000L};
    nanosleep(&ts, NULL);
    uint64_t v;
    if (bg_signal_value(b->s, &v) < 0 || bg_signal_set(b->s, v + 1) < 0) break; /* the waiter then times out */
  }
  return NULL;
}

static int test_wait_timeout(cf_ctx *c) {
  bg_signal *s;
  CF_OK(cf_signal(c, 0x1234, &s));
  uint64_t t0 = cf_now_us();
  int r = bg_signal_wait(s, 0x1235, 200);
  uint64_t dt = cf_now_us() - t0;
  const char *msg = bg_last_error();
  CF_EXPECT(r == -BG_ETIMEDOUT, "wait returned %s, expected BG_ETIMEDOUT", bg_strerror(r));
  CF_EXPECT(dt >= 180000 && dt < 5000000, "a 200 ms timeout took %" PRIu64 " us", dt);
  CF_EXPECT(cf_mentions(msg, 0x1235) && cf_mentions(msg, 0x1234),
            "timeout message should name the expected 0x1235 and the seen 0x1234: '%s'", msg);
  CF_EXPECT(strstr(msg, "timeout") || strstr(msg, "timed out"), "message does not say it timed out: '%s'", msg);
  CF_EXPECT(cf_mentions(msg, bg_signal_va(s)), "message does not name the signal 0x%" PRIx64 ": '%s'", bg_signal_va(s),
            msg);
  /* The timeout restarts on progress: 12 steps of 40 ms finish well past a 150 ms timeout. */
  struct bumper b = {s, 12, 40};
  pthread_t th;
  CF_EXPECT(pthread_create(&th, NULL, bump_thread, &b) == 0, "pthread_create failed");
  t0 = cf_now_us();
  r = bg_signal_wait(s, 0x1234 + 12, 150);
  dt = cf_now_us() - t0;
  pthread_join(th, NULL);
  CF_EXPECT(r == 0, "a wait making progress every 40 ms timed out with a 150 ms timeout after %" PRIu64 " us: %s", dt,
            bg_last_error());
  CF_EXPECT(dt >= 400000, "the wait for 12 steps of 40 ms returned after %" PRIu64 " us", dt);
  /* A host signal wait does not latch the device's error state. */
  CF_OK(bg_dev_synchronize(c->d, CF_TIMEOUT_MS));
  return CF_PASS;
}

/* A failed synchronize latches the device's error: later syncs fail with the same message even
 * once the work finished. The runner reopens the device afterwards. */
static int test_sync_error_latched(cf_ctx *c) {
  bg_signal *s;
  bg_queue *q, *q2;
  CF_OK(cf_signal(c, 0, &s));
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_sig(s), bg_const(1));
  cf_tl_signal(q);
  CF_OK(bg_queue_submit(q, NULL, 0));
  int r = bg_dev_synchronize(c->d, 300);
  char first[1024];
  snprintf(first, sizeof first, "%s", bg_last_error());
  CF_OK(bg_signal_set(s, 1));
  CF_EXPECT(r == -BG_ETIMEDOUT, "synchronize on a blocked queue returned %s, expected BG_ETIMEDOUT", bg_strerror(r));
  CF_OK(bg_signal_wait(bg_dev_timeline(c->d), bg_dev_timeline_value(c->d) - 1, CF_TIMEOUT_MS));
  r = bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
  CF_EXPECT(r == -BG_ETIMEDOUT, "synchronize after a failed one returned %s, expected the latched BG_ETIMEDOUT",
            bg_strerror(r));
  CF_EXPECT(strstr(bg_last_error(), first), "the latched error '%s' does not repeat the first '%s'", bg_last_error(),
            first);
  r = bg_queue_new(c->d, BG_QUEUE_COMPUTE, &q2);
  if (r == 0) bg_queue_free(q2);
  CF_EXPECT(r < 0, "a device in the error state created a new queue");
  return CF_PASS;
}

/* Timeline wrap-around (test_timeline_signal_rollover): start near 2^32 (symbolic timeline,
 * one recorded queue) and just below 2^31 (constant operands re-recorded every time). */
static int test_timeline_rollover(cf_ctx *c) {
  bg_queue *q;
  CF_OK(cf_queue(c, c->qk, &q));
  bg_dev_set_timeline(c->d, (1ull << 32) - 20);
  cf_tl_wait(q);
  cf_tl_signal(q);
  for (int i = 0; i < 40; i++) {
    uint64_t tv = bg_dev_timeline_value(c->d);
    CF_OK(bg_queue_submit(q, NULL, 0));
    int r = bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
    CF_EXPECT(r == 0, "iteration %d (timeline value %" PRIu64 "): synchronize: %s", i, tv, bg_last_error());
  }
  uint64_t tv = bg_dev_timeline_value(c->d);
  CF_EXPECT(tv <= (1ull << 31), "the timeline did not wrap: next value %" PRIu64, tv);
  uint64_t seen;
  CF_OK(bg_signal_value(bg_dev_timeline(c->d), &seen));
  CF_EXPECT(seen == tv - 1, "timeline signal %" PRIu64 ", next value %" PRIu64, seen, tv);

  bg_dev_set_timeline(c->d, (1ull << 31) - 20);
  bool wrapped = false;
  for (int i = 0; i < 40; i++) {
    bg_queue_reset(q);
    bg_signal *tl = bg_dev_timeline(c->d);
    uint64_t prev = bg_dev_timeline_value(c->d) - 1, next = bg_dev_next_timeline(c->d);
    bg_queue_wait(q, bg_sig(tl), bg_const(prev));
    bg_queue_signal(q, bg_sig(tl), bg_const(next));
    CF_OK(bg_queue_submit(q, NULL, 0));
    int r = bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
    CF_EXPECT(r == 0, "constant iteration %d (value %" PRIu64 "): synchronize: %s", i, next, bg_last_error());
    if (bg_dev_timeline_value(c->d) < next) wrapped = true;
  }
  CF_EXPECT(wrapped, "the timeline never wrapped passing 2^31 (next value %" PRIu64 ")", bg_dev_timeline_value(c->d));
  /* Ordinary work still runs after the wraps. */
  bg_queue_reset(q);
  cf_tl_wait(q);
  cf_tl_signal(q);
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  return CF_PASS;
}

/* Recording errors are sticky: the first one is returned by submit, nothing is submitted, and a
 * reset clears it. */
static int test_error_sticky(cf_ctx *c) {
  bg_queue *q;
  bg_signal *scratch;
  CF_OK(cf_signal(c, 0, &scratch));
  CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &q));
  uint64_t tv = bg_dev_timeline_value(c->d);
  bg_val bad = bg_var(q, BG_MAX_VARS, "bogus_var", 0, 10);
  bg_queue_signal(q, bg_sig(scratch), bad);
  cf_tl_signal(q);
  int r = bg_queue_submit(q, NULL, 0);
  CF_EXPECT(r == -BG_EINVAL, "submit after an out-of-range variable slot returned %s, expected BG_EINVAL",
            bg_strerror(r));
  CF_EXPECT(strstr(bg_last_error(), "bogus_var"), "the error does not name the variable: '%s'", bg_last_error());
  r = bg_queue_submit(q, NULL, 0);
  CF_EXPECT(r == -BG_EINVAL && strstr(bg_last_error(), "bogus_var"), "a second submit lost the error: %s '%s'",
            bg_strerror(r), bg_last_error());
  CF_EXPECT(bg_dev_timeline_value(c->d) == tv, "a failed submit advanced the timeline");

  bg_queue_reset(q);
  cf_tl_wait(q);
  cf_tl_signal(q);
  CF_OK(cf_submit_wait(c, q, NULL, 0));
  /* Recording after a submit without a reset is an error too. */
  cf_tl_signal(q);
  r = bg_queue_submit(q, NULL, 0);
  CF_EXPECT(r == -BG_EINVAL, "recording into a submitted queue: submit returned %s", bg_strerror(r));

  /* A variable the program reads must be bound. */
  bg_queue_reset(q);
  bg_queue_wait(q, bg_var(q, 0, "sig_addr", 0, UINT64_MAX), bg_var(q, 1, "sig_val", 0, UINT32_MAX));
  cf_tl_signal(q);
  tv = bg_dev_timeline_value(c->d);
  r = bg_queue_submit(q, NULL, 0);
  CF_EXPECT(r == -BG_EINVAL && strstr(bg_last_error(), "sig_addr"),
            "submit without binding 'sig_addr' returned %s: '%s'", bg_strerror(r), bg_last_error());
  CF_EXPECT(bg_dev_timeline_value(c->d) == tv, "a failed submit advanced the timeline");

  if (c->has_copy) {
    bg_queue *cq;
    CF_OK(cf_queue(c, BG_QUEUE_COPY, &cq));
    bg_queue_memory_barrier(cq);
    bg_queue_wait(cq, bg_var(cq, BG_MAX_VARS + 3, "later_error", 0, 1), bg_const(0));  /* not the first error */
    r = bg_queue_submit(cq, NULL, 0);
    CF_EXPECT(r == -BG_EINVAL && strstr(bg_last_error(), "memory_barrier") && !strstr(bg_last_error(), "later_error"),
              "memory_barrier on a copy queue: submit returned %s: '%s' (expected the first error)", bg_strerror(r),
              bg_last_error());
  }
  if (c->kernels) {
    bg_queue *kq;
    CF_OK(cf_queue(c, BG_QUEUE_COMPUTE, &kq));
    bg_val args[2] = {bg_addr(c->b, 0), bg_addr(c->a, 0)};
    bg_val one[3] = {bg_const(1), bg_const(1), bg_const(1)};
    bg_queue_exec(kq, c->add1, args, 2, one, one);
    r = bg_queue_submit(kq, NULL, 0);
    CF_EXPECT(r == -BG_EINVAL && strstr(bg_last_error(), "cf_add1"),
              "exec with 2 of 3 arguments: submit returned %s: '%s'", bg_strerror(r), bg_last_error());
  }
  return CF_PASS;
}

const cf_test cf_sync_tests[] = {
  {"signal", test_signal, CF_PER_QUEUE},
  {"signal_update", test_signal_update, CF_PER_QUEUE},
  {"wait", test_wait, CF_PER_QUEUE},
  {"wait_update", test_wait_update, CF_PER_QUEUE},
  {"wait_late_set", test_wait_late_set, CF_PER_QUEUE},
  {"wait_timeout", test_wait_timeout, 0},
  {"timeline_signal_rollover", test_timeline_rollover, CF_PER_QUEUE},
  {"error_sticky", test_error_sticky, 0},
  {"sync_error_latched", test_sync_error_latched, CF_REOPENS},
};
const size_t cf_nsync_tests = sizeof cf_sync_tests / sizeof cf_sync_tests[0];
