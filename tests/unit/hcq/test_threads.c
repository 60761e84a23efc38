/* tests/unit/hcq/test_threads.c: the thread-safety contract of include/baregpu/hcq.h under stress.
 *
 * Several threads each repeatedly open the device DEV names (CPU when unset), allocate buffers, submit a copy and a
 * signal, synchronize, check the results and close, all at once on the same physical device. Every call must
 * succeed and every result must be right. Before the process-wide registry of open devices this failed on
 * MOCKPCI+AMD with "in use by pid <own pid>" (two first opens raced for the lock file) and on MOCKUSB+AMD with
 * interleaved bridge requests (two bridges opened on one USB device). Iterations are bounded: a few seconds. */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "platform/mock_plugin.h"
#include "usb/asm24.h"

#define NTHREADS 4
#define NITERS 12
#define BUF_BYTES 4096u
#define BIG_BYTES (256u << 10) /* host reads from this size on go through the AMD driver's SDMA staging buffer */

typedef struct worker {
  pthread_t th;
  unsigned id;
  pthread_barrier_t *start;
  unsigned iters_done;
  char fail[1024];  /* first failure, empty when every call succeeded */
} worker;

static void failf(worker *w, unsigned it, const char *what, const char *detail) {
  if (!w->fail[0]) snprintf(w->fail, sizeof(w->fail), "thread %u, iteration %u: %s: %s", w->id, it, what, detail);
}

/* One open-to-close round; 0 or -1 with w->fail set. */
static int round_trip(worker *w, unsigned it) {
  bg_dev *d = NULL;
  bg_buf *src = NULL, *dst = NULL, *big = NULL;
  bg_signal *sig = NULL;
  bg_queue *cq = NULL, *sq = NULL;
  uint8_t *in = malloc(BUF_BYTES), *out = calloc(1, BUF_BYTES), *bin = malloc(BIG_BYTES), *bout = malloc(BIG_BYTES);
  int ok = -1;
  if (!in || !out || !bin || !bout) {
    failf(w, it, "malloc", "out of host memory");
    goto done;
  }
  /* A pattern unique to (thread, iteration): a copy that lands in another thread's buffer shows. */
  for (unsigned i = 0; i < BUF_BYTES; i++) in[i] = (uint8_t)(w->id * 67u + it * 13u + i * 7u + 1u);
  for (unsigned i = 0; i < BIG_BYTES; i++) bin[i] = (uint8_t)(w->id * 29u + it * 3u + i / 5u);
#define TRY(call)                                \
  do {                                           \
    if ((call) < 0) {                            \
      failf(w, it, #call, bg_last_error());      \
      goto done;                                 \
    }                                            \
  } while (0)
  TRY(bg_dev_open(NULL, &d));
  TRY(bg_buf_alloc(d, BUF_BYTES, 0, &src));
  TRY(bg_buf_alloc(d, BUF_BYTES, BG_BUF_ZERO, &dst));
  TRY(bg_buf_write(src, 0, in, BUF_BYTES));
  TRY(bg_buf_write(dst, 0, out, BUF_BYTES));
  TRY(bg_signal_new(d, 0, &sig));
  /* A copy on the copy queue where there is one, ordered on the device timeline. */
  TRY(bg_queue_new(d, bg_dev_has_copy_queue(d) ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &cq));
  bg_queue_wait(cq, bg_timeline_addr(cq), bg_timeline_value(cq, -1));
  bg_queue_copy(cq, bg_addr(dst, 0), bg_addr(src, 0), BUF_BYTES);
  bg_queue_signal(cq, bg_timeline_addr(cq), bg_timeline_value(cq, 0));
  TRY(bg_queue_submit(cq, NULL, 0));
  /* A signal on the compute queue after the copy. */
  TRY(bg_queue_new(d, BG_QUEUE_COMPUTE, &sq));
  bg_queue_wait(sq, bg_timeline_addr(sq), bg_timeline_value(sq, -1));
  bg_queue_signal(sq, bg_sig(sig), bg_const(1000u + it));
  bg_queue_signal(sq, bg_timeline_addr(sq), bg_timeline_value(sq, 0));
  TRY(bg_queue_submit(sq, NULL, 0));
  TRY(bg_dev_synchronize(d, 0));
  uint64_t seen = 0;
  TRY(bg_signal_value(sig, &seen));
  if (seen != 1000u + it) {
    char msg[96];
    snprintf(msg, sizeof(msg), "signal is %" PRIu64 ", expected %u", seen, 1000u + it);
    failf(w, it, "signal after synchronize", msg);
    goto done;
  }
  TRY(bg_buf_read(dst, 0, out, BUF_BYTES));
  for (unsigned i = 0; i < BUF_BYTES; i++)
    if (out[i] != in[i]) {
      char msg[96];
      snprintf(msg, sizeof(msg), "byte %u is 0x%02x, expected 0x%02x", i, out[i], in[i]);
      failf(w, it, "copied buffer", msg);
      goto done;
    }
  /* A host round trip big enough for the staging path, which the bg_devs of one GPU share. */
  TRY(bg_buf_alloc(d, BIG_BYTES, 0, &big));
  TRY(bg_buf_write(big, 0, bin, BIG_BYTES));
  TRY(bg_buf_read(big, 0, bout, BIG_BYTES));
  if (memcmp(bin, bout, BIG_BYTES) != 0) {
    failf(w, it, "big buffer", "reads back other bytes than written");
    goto done;
  }
#undef TRY
  ok = 0;
done:
  bg_queue_free(sq);
  bg_queue_free(cq);
  if (sig) bg_signal_free(sig);
  bg_buf_free(big);
  bg_buf_free(dst);
  bg_buf_free(src);
  bg_dev_close(d);
  free(in);
  free(out);
  free(bin);
  free(bout);
  return ok;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start);
  for (unsigned it = 0; it < NITERS; it++) {
    if (round_trip(w, it) < 0) break;
    w->iters_done++;
  }
  return NULL;
}

static void run_workers(unsigned n) {
  worker ws[NTHREADS];
  pthread_barrier_t start;
  ck_assert_int_eq(pthread_barrier_init(&start, NULL, n), 0);
  for (unsigned i = 0; i < n; i++) {
    ws[i] = (worker){.id = i, .start = &start};
    ck_assert_int_eq(pthread_create(&ws[i].th, NULL, worker_main, &ws[i]), 0);
  }
  for (unsigned i = 0; i < n; i++) pthread_join(ws[i].th, NULL);
  pthread_barrier_destroy(&start);
  for (unsigned i = 0; i < n; i++) {
    ck_assert_msg(ws[i].fail[0] == '\0', "%s", ws[i].fail);
    ck_assert_uint_eq(ws[i].iters_done, NITERS);
  }
}

/* Every thread opens, works on and closes its own bg_dev of the same physical device, all at once. */
START_TEST(open_submit_close_in_parallel) { run_workers(NTHREADS); }
END_TEST

/* While one thread keeps the device open, the others' opens share it and their closes leave it running. */
static void *holder_main(void *arg) {
  bg_dev **d = arg;
  if (bg_dev_open(NULL, d) < 0) *d = NULL;
  return NULL;
}

START_TEST(open_close_while_held) {
  bg_dev *held = NULL;
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, holder_main, &held), 0);
  pthread_join(th, NULL);
  ck_assert_msg(held != NULL, "opening the held device: %s", bg_last_error());
  run_workers(NTHREADS - 1);
  /* The held device still works after every other bg_dev of it closed. */
  bg_buf *b = NULL;
  uint32_t v = 0x5eed1234u, back = 0;
  ck_assert_msg(bg_buf_alloc(held, 64, 0, &b) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_buf_write(b, 0, &v, sizeof(v)) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_buf_read(b, 0, &back, sizeof(back)) == 0, "%s", bg_last_error());
  ck_assert_uint_eq(back, v);
  bg_buf_free(b);
  ck_assert_msg(bg_dev_synchronize(held, 0) == 0, "%s", bg_last_error());
  bg_dev_close(held);
}
END_TEST

/* MOCKUSB+AMD: threads issuing bridge requests on one bridge without a lock of their own (the bridge takes it): each
 * thread's queued and direct writes and its reads of VRAM through BAR0 stay its own. Before the bridge locked every
 * request itself, the threads' transfers mixed in its shared transfer list and the firmware saw requests arrive
 * while another thread's stream write was armed. */
#define BRIDGE_ROUNDS 1500
typedef struct bridge_worker {
  pthread_t th;
  bg_asm24 *b;
  pthread_barrier_t *start;
  uint64_t base;
  unsigned id;
  char fail[512];
} bridge_worker;

static void *bridge_main(void *arg) {
  bridge_worker *w = arg;
  uint8_t out[4096], in[4096];
  pthread_barrier_wait(w->start);
  for (unsigned r = 0; r < BRIDGE_ROUNDS && !w->fail[0]; r++) {
    for (unsigned i = 0; i < sizeof(out); i++) out[i] = (uint8_t)(w->id * 31u + r * 5u + i);
    uint64_t at = w->base + w->id * 0x10000u + (r % 4u) * 0x1000u;
    /* Queued (batched) writes go out with this thread's read, or another thread's flush: either way before it. */
    if (bg_asm24_mem_write(w->b, at, out, sizeof(out), r % 2u == 0) < 0 ||
        bg_asm24_mem_read(w->b, at, in, sizeof(in)) < 0) {
      snprintf(w->fail, sizeof(w->fail), "thread %u, round %u: %s", w->id, r, bg_last_error());
      break;
    }
    if (memcmp(in, out, sizeof(in)) != 0)
      snprintf(w->fail, sizeof(w->fail), "thread %u, round %u: VRAM at 0x%llx reads back other bytes", w->id, r,
               (unsigned long long)at);
  }
  return NULL;
}

START_TEST(bridge_requests_from_threads) {
  bg_mock_devices md;
  bg_usb_transport *t = NULL;
  bg_asm24 *b = NULL;
  bg_asm24_bar bars[6];
  ck_assert_msg(bg_mock_plugin_start("MOCKUSB", "AMD", &md) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_mock_plugin_usb_transport(0, &t) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_asm24_open(t, &b) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_asm24_setup_bars(b, BG_ASM24_GPU_BUS, BG_ASM24_MEM_BASE, BG_ASM24_PREF_BASE, bars) == 0, "%s",
                bg_last_error());
  ck_assert_uint_ge(bars[0].size, NTHREADS * 0x10000u);
  bridge_worker ws[NTHREADS];
  pthread_barrier_t start;
  ck_assert_int_eq(pthread_barrier_init(&start, NULL, NTHREADS), 0);
  for (unsigned i = 0; i < NTHREADS; i++) {
    ws[i] = (bridge_worker){.b = b, .start = &start, .base = bars[0].addr, .id = i};
    ck_assert_int_eq(pthread_create(&ws[i].th, NULL, bridge_main, &ws[i]), 0);
  }
  for (unsigned i = 0; i < NTHREADS; i++) pthread_join(ws[i].th, NULL);
  pthread_barrier_destroy(&start);
  bg_asm24_close(b);
  for (unsigned i = 0; i < NTHREADS; i++) ck_assert_msg(ws[i].fail[0] == '\0', "%s", ws[i].fail);
}
END_TEST

int main(void) {
  Suite *s = suite_create("hcq-threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, open_submit_close_in_parallel);
  tcase_add_test(tc, open_close_while_held);
  const char *dev = getenv("DEV");
  if (dev && strcmp(dev, "MOCKUSB+AMD") == 0) tcase_add_test(tc, bridge_requests_from_threads);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
