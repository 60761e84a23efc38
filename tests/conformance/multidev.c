/* tests/conformance/multidev.c: hcq-multidev, the conformance tests of several devices in one process
 * (baregpu/hcq.h "several devices") on every pair of the present devices of a list.
 *
 *   hcq-multidev [--expect=p2p|staged] [--why=TEXT] DEV[,DEV...]     (or the list in $MULTIDEV)
 *   hcq-multidev --present      every device bg_dev_list finds (emulated ones left out), with a second CPU device
 *                               when that is fewer than two (two CPU opens are two devices): scripts/main.sh
 *
 * Devices of the list that do not open are left out (named); fewer than two present: skipped (exit 77). Each test
 * runs for the pair (A, B) and again for (B, A). --expect says how transfers between the pairs must go (peer-to-peer,
 * or staged through host memory with a reason containing --why). Tests:
 *   cross_wait      B's queue waits for A's signal (set later by A's queue, then by the host); an unreached value
 *                   keeps B waiting
 *   transfer        sizes 4 B .. 8 MiB at odd offsets, data and bytes around the range checked, bg_transfer_last
 *   order           a P2P transfer waits for the work submitted before it on the source and on the destination
 *   dep_exact       a kernel on B reads what A's transfer wrote (queued behind a gate the host opens later) and sees
 *                   the new data, while A's unrelated later work (another gate, opened only after B's read) is not
 *                   waited for
 *   map_mark        A's copy queue writes B's buffer through bg_buf_map_peer, bg_buf_mark_written; B's kernel sees it
 *   map_reuse       mapping again gives the same address; the mapping goes with the buffer's free and with the
 *                   mapping device's close (a copy to it is refused: no live allocation)
 *   wrap            a dependency recorded before two wraps of the writer's timeline (its signal reset to 0) is complete
 *   wait_host       where B cannot see A's signals, bg_dev_wait_bufs waits on the host until A's write is complete
 *   errors          overrunning transfers name the buffer and the numbers; NULL arguments */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "hcq/dev_internal.h"

#define GATE_MS 300 /* how long a gated device is watched for work that must not happen (a broken wait shows then) */

typedef struct md {
  bg_dev *a, *b;
  cf_ctx ka, kb;              /* kernels of A and B */
  const char *expect;         /* "p2p", "staged" or NULL (whatever bg_dev_can_p2p says) */
  const char *why;
  char msg[1024];
} md;

static int md_fail(md *m, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int md_fail(md *m, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = snprintf(m->msg, sizeof(m->msg), "line %d: ", line);
  vsnprintf(m->msg + k, sizeof(m->msg) - (size_t)k, fmt, ap);
  va_end(ap);
  return CF_FAIL;
}

#define EXPECT(cond, ...) \
  do { \
    if (!(cond)) return md_fail(m, __LINE__, __VA_ARGS__); \
  } while (0)
#define OK(expr) \
  do { \
    int r_ = (expr); \
    if (r_ < 0) return md_fail(m, __LINE__, "%s: %s: %s", #expr, bg_strerror(r_), bg_last_error()); \
  } while (0)
#define SKIP(...) \
  do { \
    snprintf(m->msg, sizeof(m->msg), __VA_ARGS__); \
    return CF_SKIP; \
  } while (0)

static bool expect_p2p(const md *m) {
  if (m->expect) return strcmp(m->expect, "p2p") == 0;
  return bg_dev_can_p2p(m->a, m->b, NULL, 0);
}

/* A queue that waits for signal address sig >= v then signals mark = 1. */
static int queue_wait_mark(md *m, bg_dev *d, uint64_t sig, uint64_t v, bg_signal *mark, bg_queue **out) {
  OK(bg_queue_new(d, BG_QUEUE_COMPUTE, out));
  bg_queue_wait(*out, bg_const(sig), bg_const(v));
  bg_queue_signal(*out, bg_sig(mark), bg_const(1));
  OK(bg_queue_submit(*out, NULL, 0));
  return CF_PASS;
}

/* Gate: d's compute queue waits for g >= 1 and claims a timeline value (everything d submits later waits behind it). */
static int gate(md *m, bg_dev *d, bg_signal *g, bg_queue **out) {
  OK(bg_queue_new(d, BG_QUEUE_COMPUTE, out));
  bg_queue_wait(*out, bg_timeline_addr(*out), bg_timeline_value(*out, -1));
  bg_queue_wait(*out, bg_sig(g), bg_const(1));
  bg_queue_signal(*out, bg_timeline_addr(*out), bg_timeline_value(*out, 0));
  OK(bg_queue_submit(*out, NULL, 0));
  return CF_PASS;
}

/* ---------------- tests ---------------- */

static int t_cross_wait(md *m) {
  bg_signal *s = NULL, *mark = NULL;
  bg_queue *qa = NULL, *qb = NULL;
  uint64_t va = 0, v = 0;
  int rc = CF_PASS;
  OK(bg_signal_new(m->a, 0, &s));
  OK(bg_signal_new(m->b, 0, &mark));
  int r = bg_signal_va_on(s, m->b, &va);
  if (r == -BG_ENOTSUP && !expect_p2p(m)) { /* a GPU behind USB, devices of different kinds */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", bg_last_error());
    bg_signal_free(s);
    bg_signal_free(mark);
    SKIP("%s cannot see %s's signals: %s", bg_dev_name(m->b), bg_dev_name(m->a), msg);
  }
  if (r < 0) rc = md_fail(m, __LINE__, "bg_signal_va_on: %s", bg_last_error());
  /* B waits for 2; A's queue signals 1 (not enough), then 2 */
  if (rc == CF_PASS) rc = queue_wait_mark(m, m->b, va, 2, mark, &qb);
  if (rc == CF_PASS) {
    OK(bg_queue_new(m->a, BG_QUEUE_COMPUTE, &qa));
    bg_queue_signal(qa, bg_sig(s), bg_var(qa, 0, "v", 0, 16));
    uint64_t one = 1;
    OK(bg_queue_submit(qa, &one, 1));
    OK(bg_signal_wait(s, 1, CF_TIMEOUT_MS));
    r = bg_signal_wait(mark, 1, GATE_MS);
    bg_signal_value(mark, &v);
    if (r == 0 || v != 0) rc = md_fail(m, __LINE__, "B went past its wait for 2 while A's signal was 1 (mark %llu)",
                                       (unsigned long long)v);
    uint64_t two = 2;
    if (rc == CF_PASS) OK(bg_queue_submit(qa, &two, 1));
    if (rc == CF_PASS && bg_signal_wait(mark, 1, CF_TIMEOUT_MS) < 0)
      rc = md_fail(m, __LINE__, "B did not see A's queue signal 2: %s", bg_last_error());
  }
  /* the host sets it */
  if (rc == CF_PASS) {
    OK(bg_signal_set(mark, 0));
    bg_queue_free(qb);
    qb = NULL;
    rc = queue_wait_mark(m, m->b, va, 3, mark, &qb);
    if (rc == CF_PASS && bg_signal_wait(mark, 1, GATE_MS) == 0)
      rc = md_fail(m, __LINE__, "B went past its wait for 3 before the host set it");
    if (rc == CF_PASS) OK(bg_signal_set(s, 3));
    if (rc == CF_PASS && bg_signal_wait(mark, 1, CF_TIMEOUT_MS) < 0)
      rc = md_fail(m, __LINE__, "B did not see the host's 3: %s", bg_last_error());
  }
  if (rc != CF_PASS) bg_signal_set(s, 100); /* release B */
  bg_dev_synchronize(m->a, 0);
  bg_dev_synchronize(m->b, 0);
  bg_queue_free(qa);
  bg_queue_free(qb);
  bg_signal_free(s);
  bg_signal_free(mark);
  return rc;
}

static void pattern(uint8_t *p, size_t n, unsigned seed) {
  uint32_t x = 0x9e3779b9u ^ seed;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    p[i] = (uint8_t)x;
  }
}

static int check_last(md *m, uint64_t n) {
  bg_transfer_info ti;
  bg_transfer_last(&ti);
  bool want = expect_p2p(m);
  EXPECT(ti.bytes == n, "bg_transfer_last: %llu bytes, want %llu", (unsigned long long)ti.bytes, (unsigned long long)n);
  EXPECT(ti.p2p == want, "transfer %s -> %s went %s, want %s (why: \"%s\")", bg_dev_name(m->a), bg_dev_name(m->b),
         ti.p2p ? "peer-to-peer" : "staged", want ? "peer-to-peer" : "staged", ti.why);
  if (!ti.p2p) {
    EXPECT(ti.why[0], "a staged transfer without a reason");
    EXPECT(!m->why || strstr(ti.why, m->why), "reason \"%s\" does not mention \"%s\"", ti.why, m->why);
    char why[160];
    EXPECT(!bg_dev_can_p2p(m->a, m->b, why, sizeof why) && strcmp(why, ti.why) == 0,
           "bg_dev_can_p2p disagrees with the transfer: \"%s\" vs \"%s\"", why, ti.why);
  } else {
    EXPECT(ti.why[0] == '\0', "peer-to-peer with a reason \"%s\"", ti.why);
  }
  return CF_PASS;
}

static int t_transfer(md *m) {
  static const uint64_t sizes[] = {4, 5, 4096 + 3, 65536 + 1, (1u << 20) + 7, 8u << 20};
  const uint64_t soff = 3, doff = 5, pad = 64;
  uint64_t big = (8u << 20) + pad * 2;
  uint8_t *src = malloc(big), *got = malloc(big), *want = malloc(big);
  bg_buf *bs = NULL, *bd = NULL;
  int rc = CF_PASS;
  if (!src || !got || !want) rc = md_fail(m, __LINE__, "out of host memory");
  if (rc == CF_PASS && bg_buf_alloc(m->a, big, 0, &bs) < 0) rc = md_fail(m, __LINE__, "alloc A: %s", bg_last_error());
  if (rc == CF_PASS && bg_buf_alloc(m->b, big, 0, &bd) < 0) rc = md_fail(m, __LINE__, "alloc B: %s", bg_last_error());
  for (size_t i = 0; rc == CF_PASS && i < sizeof sizes / sizeof sizes[0]; i++) {
    uint64_t n = sizes[i];
    pattern(src, big, (unsigned)i);
    memset(want, 0xee, big);
    memcpy(want + doff, src + soff, n);
    int r = bg_buf_write(bs, 0, src, big);
    memset(got, 0xee, big);
    if (r == 0) r = bg_buf_write(bd, 0, got, big);
    if (r == 0) r = bg_buf_transfer(bd, doff, bs, soff, n);
    if (r < 0) {
      rc = md_fail(m, __LINE__, "%llu bytes: %s", (unsigned long long)n, bg_last_error());
      break;
    }
    rc = check_last(m, n);
    if (rc != CF_PASS) break;
    if (bg_buf_read(bd, 0, got, big) < 0) {
      rc = md_fail(m, __LINE__, "read back: %s", bg_last_error());
      break;
    }
    for (uint64_t k = 0; k < big; k++)
      if (got[k] != want[k]) {
        rc = md_fail(m, __LINE__, "%llu bytes from offset %llu to %llu: byte %llu is 0x%02x, want 0x%02x%s",
                     (unsigned long long)n, (unsigned long long)soff, (unsigned long long)doff, (unsigned long long)k,
                     got[k], want[k], k < doff || k >= doff + n ? " (outside the range)" : "");
        break;
      }
  }
  bg_buf_free(bs);
  bg_buf_free(bd);
  free(src);
  free(got);
  free(want);
  return rc;
}

/* y = x + 1 on B with x's writers waited for (bg_dev_wait_bufs), not waiting on the host. */
static int kernel_after(md *m, bg_buf *x, bg_buf *y, uint32_t n) {
  bg_buf *const deps[1] = {x};
  OK(bg_dev_wait_bufs(m->b, deps, 1));
  bg_buf *bufs[2] = {y, x};
  uint64_t vals[1] = {n};
  uint32_t g[3] = {n, 1, 1}, l[3] = {1, 1, 1};
  OK(bg_program_run(m->kb.add1, bufs, 2, vals, 1, g, l, false, NULL));
  return CF_PASS;
}

static int check_y(md *m, bg_buf *y, const float *x, uint32_t n) {
  float got[64];
  OK(bg_dev_synchronize(m->b, CF_TIMEOUT_MS));
  OK(bg_buf_read(y, 0, got, n * sizeof(float)));
  for (uint32_t i = 0; i < n; i++)
    EXPECT(got[i] == x[i] + 1, "B's kernel read element %u as %g, want %g (it ran before A's write landed?)", i,
           (double)(got[i] - 1), (double)x[i]);
  return CF_PASS;
}

static int t_dep_exact(md *m) {
  if (!m->kb.kernels) SKIP("no kernels on %s: %.400s", bg_dev_name(m->b), m->kb.no_kernels);
  enum { N = 16 };
  float xs[N], zero[N] = {0};
  for (int i = 0; i < N; i++) xs[i] = 10.0f + (float)i;
  bg_buf *sa = NULL, *x = NULL, *y = NULL;
  bg_signal *g1 = NULL, *g2 = NULL;
  bg_queue *q1 = NULL, *q2 = NULL;
  int rc = CF_PASS;
  OK(bg_buf_alloc(m->a, sizeof xs, 0, &sa));
  OK(bg_buf_alloc(m->b, sizeof xs, 0, &x));
  OK(bg_buf_alloc(m->b, sizeof xs, 0, &y));
  OK(bg_buf_write(sa, 0, xs, sizeof xs));
  OK(bg_buf_write(x, 0, zero, sizeof zero));
  OK(bg_signal_new(m->a, 0, &g1));
  OK(bg_signal_new(m->a, 0, &g2));
  bool p2p = expect_p2p(m);
  /* P2P: A's transfer queues behind gate 1; staged transfers are synchronous, so the gate opens first */
  if (p2p) rc = gate(m, m->a, g1, &q1);
  if (rc == CF_PASS && bg_buf_transfer(x, 0, sa, 0, sizeof xs) < 0)
    rc = md_fail(m, __LINE__, "transfer: %s", bg_last_error());
  if (rc == CF_PASS) rc = gate(m, m->a, g2, &q2); /* A's unrelated later work, opened only after B's read */
  if (rc == CF_PASS) rc = kernel_after(m, x, y, N);
  if (rc == CF_PASS) {
    OK(bg_signal_set(g1, 1));
    rc = check_y(m, y, xs, N);
  }
  bg_signal_set(g1, 1);
  bg_signal_set(g2, 1);
  if (bg_dev_synchronize(m->a, CF_TIMEOUT_MS) < 0 && rc == CF_PASS)
    rc = md_fail(m, __LINE__, "A: %s", bg_last_error());
  bg_queue_free(q1);
  bg_queue_free(q2);
  bg_signal_free(g1);
  bg_signal_free(g2);
  bg_buf_free(sa);
  bg_buf_free(x);
  bg_buf_free(y);
  return rc;
}

static int t_map_mark(md *m) {
  if (!m->kb.kernels) SKIP("no kernels on %s: %.400s", bg_dev_name(m->b), m->kb.no_kernels);
  enum { N = 8 };
  float xs[N], zero[N] = {0};
  for (int i = 0; i < N; i++) xs[i] = 3.5f * (float)i;
  bg_buf *sa = NULL, *x = NULL, *y = NULL;
  bg_signal *g = NULL;
  bg_queue *q = NULL;
  uint64_t va;
  OK(bg_buf_alloc(m->b, sizeof xs, 0, &x));
  int r = bg_buf_map_peer(x, m->a, &va);
  if (!expect_p2p(m)) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", bg_last_error());
    bg_buf_free(x);
    EXPECT(r == -BG_ENOTSUP, "bg_buf_map_peer without P2P: %d (%s)", r, msg);
    EXPECT(!m->why || strstr(msg, m->why), "the refusal \"%s\" does not mention \"%s\"", msg, m->why);
    SKIP("no peer mapping %s -> %s: %s", bg_dev_name(m->a), bg_dev_name(m->b), msg);
  }
  OK(r);
  OK(bg_buf_alloc(m->a, sizeof xs, 0, &sa));
  OK(bg_buf_alloc(m->b, sizeof xs, 0, &y));
  OK(bg_buf_write(sa, 0, xs, sizeof xs));
  OK(bg_buf_write(x, 0, zero, sizeof zero));
  OK(bg_signal_new(m->a, 0, &g));
  OK(bg_queue_new(m->a, bg_dev_has_copy_queue(m->a) ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q));
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_wait(q, bg_sig(g), bg_const(1));
  bg_queue_copy(q, bg_const(va), bg_addr(sa, 0), sizeof xs);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  int rc = CF_PASS;
  if (bg_queue_submit(q, NULL, 0) < 0) rc = md_fail(m, __LINE__, "A's copy into B's mapping: %s", bg_last_error());
  bg_buf_mark_written(x, m->a);
  if (rc == CF_PASS) rc = kernel_after(m, x, y, N);
  bg_signal_set(g, 1);
  if (rc == CF_PASS) rc = check_y(m, y, xs, N);
  bg_dev_synchronize(m->a, CF_TIMEOUT_MS);
  bg_queue_free(q);
  bg_signal_free(g);
  bg_buf_free(sa);
  bg_buf_free(x);
  bg_buf_free(y);
  return rc;
}

/* A copy on d's queue to va: 0 or the submit's error (message kept in msg). */
static int copy_to(bg_dev *d, uint64_t va, bg_buf *src, char *msg, size_t n) {
  bg_queue *q;
  int r = bg_queue_new(d, bg_dev_has_copy_queue(d) ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q);
  if (r < 0) return r;
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_copy(q, bg_const(va), bg_addr(src, 0), 4);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  r = bg_queue_submit(q, NULL, 0);
  snprintf(msg, n, "%s", r < 0 ? bg_last_error() : "");
  bg_queue_free(q);
  if (r == 0) r = bg_dev_synchronize(d, CF_TIMEOUT_MS);
  return r;
}

static int t_map_reuse(md *m) {
  if (!expect_p2p(m)) SKIP("no peer mappings between %s and %s", bg_dev_name(m->a), bg_dev_name(m->b));
  bg_buf *x = NULL, *s = NULL;
  uint64_t va1, va2, va3;
  char msg[512];
  OK(bg_buf_alloc(m->a, 4096, 0, &x));
  OK(bg_buf_alloc(m->b, 64, 0, &s));
  OK(bg_buf_map_peer(x, m->b, &va1));
  OK(bg_buf_map_peer(x, m->b, &va2));
  EXPECT(va1 == va2, "mapping twice: 0x%llx then 0x%llx", (unsigned long long)va1, (unsigned long long)va2);
  size_t nmaps = 0;
  for (const struct bg_peer_map *p = x->peers; p; p = *(struct bg_peer_map *const *)p) nmaps++; /* next is first */
  EXPECT(nmaps == 1, "mapping twice into one device left %zu mappings, want 1", nmaps);
  OK(bg_buf_map_peer(x, m->a, &va3));
  EXPECT(va3 == bg_buf_va(x), "a buffer mapped into its own device: 0x%llx, its va 0x%llx", (unsigned long long)va3,
         (unsigned long long)bg_buf_va(x));
  EXPECT(copy_to(m->b, va1, s, msg, sizeof msg) == 0, "B's copy into the mapping: %s", msg);
  bg_buf_free(x);
  int r = copy_to(m->b, va1, s, msg, sizeof msg);
  EXPECT(r == -BG_EINVAL && strstr(msg, "no live allocation"), "B's copy to 0x%llx after the buffer's free: %d (%s)",
         (unsigned long long)va1, r, msg);
  /* the mapping device's close drops it: a third device, opened like B */
  bg_dev *c = NULL;
  OK(bg_buf_alloc(m->a, 4096, 0, &x));
  OK(bg_dev_open(bg_dev_name(m->b), &c));
  int rc = CF_PASS;
  if (bg_buf_map_peer(x, c, &va1) < 0) rc = md_fail(m, __LINE__, "map into a second %s: %s", bg_dev_name(c),
                                                     bg_last_error());
  if (rc == CF_PASS && !x->peers) rc = md_fail(m, __LINE__, "no mapping recorded in the buffer");
  bg_dev_close(c);
  if (rc == CF_PASS && x->peers) rc = md_fail(m, __LINE__, "the mapping outlived its device's close");
  bg_buf_free(x);
  bg_buf_free(s);
  return rc;
}

static int t_wrap(md *m) {
  if (!expect_p2p(m)) SKIP("staged transfers record no dependency");
  const uint64_t wrap = 1ull << 31;
  bg_buf *sa = NULL, *x = NULL;
  uint32_t v = 0x12345678, got = 0;
  OK(bg_dev_synchronize(m->a, CF_TIMEOUT_MS));
  bg_dev_set_timeline(m->a, wrap - 8);
  OK(bg_buf_alloc(m->a, 4, 0, &sa));
  OK(bg_buf_alloc(m->b, 4, 0, &x));
  OK(bg_buf_write(sa, 0, &v, 4));
  OK(bg_buf_transfer(x, 0, sa, 0, 4));
  uint64_t recorded = x->writer.value;
  EXPECT(recorded >= wrap - 8, "the transfer recorded value %llu, want >= %llu", (unsigned long long)recorded,
         (unsigned long long)(wrap - 8));
  for (int k = 0; k < 2; k++) { /* two wraps: the recorded signal is the timeline again, reset to 0 */
    OK(bg_dev_synchronize(m->a, CF_TIMEOUT_MS));
    bg_dev_set_timeline(m->a, wrap + 2);
    OK(bg_dev_synchronize(m->a, CF_TIMEOUT_MS));
  }
  uint64_t now = 0;
  OK(bg_signal_value(x->writer.sig, &now));
  EXPECT(now < recorded, "the recorded signal is at %llu after two wraps, want it reset (< %llu)",
         (unsigned long long)now, (unsigned long long)recorded);
  bg_buf *const deps[1] = {x};
  OK(bg_dev_wait_bufs(m->b, deps, 1));
  OK(bg_dev_synchronize(m->b, CF_TIMEOUT_MS));
  OK(bg_buf_read(x, 0, &got, 4));
  EXPECT(got == v, "read 0x%x, want 0x%x", got, v);
  bg_buf_free(sa);
  bg_buf_free(x);
  return CF_PASS;
}

/* A P2P transfer runs after the work submitted so far on both devices: gated work on A (the source), then on B (the
 * destination), each keeps it from completing (A's timeline stays below the value recorded for it) until opened. */
static int t_order(md *m) {
  if (!expect_p2p(m)) SKIP("staged transfers are synchronous (they synchronize both devices)");
  uint32_t v = 0xa5a5f00d, got = 0;
  int rc = CF_PASS;
  for (int side = 0; side < 2 && rc == CF_PASS; side++) {
    bg_dev *gated = side ? m->b : m->a;
    bg_buf *sa = NULL, *x = NULL;
    bg_signal *g = NULL;
    bg_queue *q = NULL;
    OK(bg_buf_alloc(m->a, 4, 0, &sa));
    OK(bg_buf_alloc(m->b, 4, 0, &x));
    OK(bg_buf_write(sa, 0, &v, 4));
    OK(bg_signal_new(gated, 0, &g));
    rc = gate(m, gated, g, &q);
    if (rc == CF_PASS && bg_buf_transfer(x, 0, sa, 0, 4) < 0) rc = md_fail(m, __LINE__, "%s", bg_last_error());
    if (rc == CF_PASS && bg_signal_wait(bg_dev_timeline(m->a), x->writer.value, GATE_MS) == 0)
      rc = md_fail(m, __LINE__, "the transfer completed while %s's earlier work waited for the host",
                   side ? "the destination" : "the source");
    bg_signal_set(g, 1);
    if (rc == CF_PASS && (bg_buf_read(x, 0, &got, 4) < 0 || got != v))
      rc = md_fail(m, __LINE__, "read 0x%x, want 0x%x (%s)", got, v, bg_last_error());
    bg_dev_synchronize(gated, CF_TIMEOUT_MS);
    bg_queue_free(q);
    bg_signal_free(g);
    bg_buf_free(sa);
    bg_buf_free(x);
  }
  return rc;
}

typedef struct opener {
  bg_signal *g;
} opener;

/* Opens gate g after a while (on another thread: the caller is in a host wait); what the caller must then see is
 * checked by value, not by time. */
static void *open_later(void *arg) {
  opener *o = arg;
  struct timespec ts = {0, 200 * 1000000L};
  nanosleep(&ts, NULL);
  bg_signal_set(o->g, 1);
  return NULL;
}

/* Where B cannot see A's signals (USB, different kinds), bg_dev_wait_bufs waits on the host: it returns only when A's
 * recorded write is complete. */
static int t_wait_host(md *m) {
  uint64_t va;
  bg_signal *probe = NULL;
  OK(bg_signal_new(m->a, 0, &probe));
  int r = bg_signal_va_on(probe, m->b, &va);
  bg_signal_free(probe);
  if (r == 0) SKIP("%s sees %s's signals: bg_dev_wait_bufs waits on the GPU (dep_exact)", bg_dev_name(m->b),
                   bg_dev_name(m->a));
  bg_buf *x = NULL;
  bg_signal *g = NULL;
  bg_queue *q = NULL;
  OK(bg_buf_alloc(m->b, 64, 0, &x));
  OK(bg_signal_new(m->a, 0, &g));
  int rc = gate(m, m->a, g, &q);
  bg_buf_mark_written(x, m->a); /* A's gated work writes x */
  uint64_t want = x->writer.value, seen = 0;
  pthread_t th;
  opener o = {g};
  if (rc == CF_PASS && pthread_create(&th, NULL, open_later, &o) != 0) rc = md_fail(m, __LINE__, "pthread_create");
  if (rc == CF_PASS) {
    bg_buf *const deps[1] = {x};
    r = bg_dev_wait_bufs(m->b, deps, 1);
    bg_signal_value(bg_dev_timeline(m->a), &seen);
    pthread_join(th, NULL);
    if (r < 0) rc = md_fail(m, __LINE__, "bg_dev_wait_bufs: %s", bg_last_error());
    else if (seen < want)
      rc = md_fail(m, __LINE__, "bg_dev_wait_bufs returned while A's timeline was at %llu, before its write (%llu)",
                   (unsigned long long)seen, (unsigned long long)want);
  }
  bg_signal_set(g, 1);
  bg_dev_synchronize(m->a, CF_TIMEOUT_MS);
  bg_queue_free(q);
  bg_signal_free(g);
  bg_buf_free(x);
  return rc;
}

static int t_errors(md *m) {
  bg_buf *s = NULL, *d = NULL;
  OK(bg_buf_alloc(m->a, 100, 0, &s));
  OK(bg_buf_alloc(m->b, 50, 0, &d));
  int r = bg_buf_transfer(d, 40, s, 0, 20);
  const char *e = bg_last_error();
  EXPECT(r == -BG_EINVAL && strstr(e, "destination") && strstr(e, bg_dev_name(m->b)) && strstr(e, "50") &&
         strstr(e, "40"), "destination overrun: %d (%s)", r, e);
  r = bg_buf_transfer(d, 0, s, 90, 20);
  e = bg_last_error();
  EXPECT(r == -BG_EINVAL && strstr(e, "source") && strstr(e, bg_dev_name(m->a)) && strstr(e, "100") &&
         strstr(e, "90"), "source overrun: %d (%s)", r, e);
  r = bg_buf_transfer(NULL, 0, s, 0, 1);
  EXPECT(r == -BG_EINVAL && strstr(bg_last_error(), "destination"), "NULL destination: %d (%s)", r, bg_last_error());
  bg_buf_free(s);
  bg_buf_free(d);
  return CF_PASS;
}

typedef struct md_test {
  const char *name;
  int (*fn)(md *m);
} md_test;

static const md_test tests[] = {
  {"cross_wait", t_cross_wait}, {"transfer", t_transfer},   {"order", t_order},         {"dep_exact", t_dep_exact},
  {"map_mark", t_map_mark},     {"map_reuse", t_map_reuse}, {"wrap", t_wrap},           {"wait_host", t_wait_host},
  {"errors", t_errors},
};

/* "DEV,DEV,..." of every openable non-emulated device, padded with CPU devices to a pair. */
static const char *present_list(char *buf, size_t n) {
  char names[8][48];
  int found = bg_dev_list(false, names, 8);
  size_t k = found < 0 ? 0 : found > 8 ? 8 : (size_t)found, at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < k; i++) at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "," : "", names[i]);
  for (size_t i = k; i < 2; i++) at += (size_t)snprintf(buf + at, n - at, "%sCPU", at ? "," : "");
  return buf;
}

int main(int argc, char **argv) {
  char present[8 * 49 + 8];
  const char *expect = NULL, *why = NULL, *list = getenv("MULTIDEV");
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--expect=", 9) == 0) expect = argv[i] + 9;
    else if (strncmp(argv[i], "--why=", 6) == 0) why = argv[i] + 6;
    else if (strcmp(argv[i], "--present") == 0) list = present_list(present, sizeof present);
    else if (argv[i][0] != '-') list = argv[i];
    else {
      fprintf(stderr, "usage: %s [--expect=p2p|staged] [--why=TEXT] DEV[,DEV...] (or $MULTIDEV) | --present\n", argv[0]);
      return 2;
    }
  }
  if (expect && strcmp(expect, "p2p") && strcmp(expect, "staged")) {
    fprintf(stderr, "--expect: \"%s\" is neither p2p nor staged\n", expect);
    return 2;
  }
  if (!list || !*list) {
    fprintf(stderr, "hcq-multidev: no device list (argument or MULTIDEV=DEV,DEV...)\n");
    return 2;
  }
  enum { MAXD = 8 };
  cf_ctx ks[MAXD];
  bg_dev *devs[MAXD];
  size_t nd = 0;
  char *copy = strdup(list), *save = NULL;
  for (char *t = strtok_r(copy, ", ", &save); t && nd < MAXD; t = strtok_r(NULL, ", ", &save)) {
    bg_dev *d;
    if (bg_dev_open(t, &d) < 0) {
      printf("not present: %s: %s\n", t, bg_last_error());
      continue;
    }
    memset(&ks[nd], 0, sizeof ks[nd]);
    ks[nd].d = d;
    if (cf_load_kernels(&ks[nd]) < 0) {
      printf("FAIL %s: kernels: %s\n", bg_dev_name(d), bg_last_error());
      return 1;
    }
    devs[nd++] = d;
  }
  free(copy);
  if (nd < 2) {
    printf("SKIP: %zu device(s) of \"%s\" present, a pair needs 2\n", nd, list);
    return 77;
  }
  int fails = 0, passes = 0, skips = 0;
  for (size_t i = 0; i < nd; i++)
    for (size_t j = 0; j < nd; j++) {
      if (i == j) continue;
      for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        md m;
        memset(&m, 0, sizeof m);
        m.a = devs[i], m.b = devs[j], m.ka = ks[i], m.kb = ks[j], m.expect = expect, m.why = why;
        int r = tests[t].fn(&m);
        const char *tag = r == CF_PASS ? "PASS" : r == CF_SKIP ? "SKIP" : "FAIL";
        printf("%s %-11s %s -> %s%s%s\n", tag, tests[t].name, bg_dev_name(m.a), bg_dev_name(m.b), m.msg[0] ? ": " : "",
               m.msg);
        fflush(stdout);
        fails += r == CF_FAIL, passes += r == CF_PASS, skips += r == CF_SKIP;
      }
    }
  for (size_t i = 0; i < nd; i++) {
    bg_program_free(ks[i].add1);
    bg_program_free(ks[i].count);
    bg_dev_close(devs[i]);
  }
  cf_kernels_free();
  printf("%d passed, %d failed, %d skipped\n", passes, fails, skips);
  return fails ? 1 : 0;
}
