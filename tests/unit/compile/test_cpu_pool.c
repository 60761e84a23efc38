/* tests/unit/compile/test_cpu_pool.c: one CPU launch's grid on several threads (cpu/cpu_pool.c, contract C2 of
 * issue 16). Kernels written in C record which thread ran each work-group (pthread_self, and the thread's name:
 * pool threads are "bg-cpu-pool", a queue's worker "bg-cpu-comp<n>"): with BG_CPU_THREADS=2 a grid runs on two
 * threads, each id of [0,gsz) exactly once; two kernels on one queue stay ordered around a signal; the timestamps
 * around a launch bracket every work-group; a fault in a pool thread's work-group faults the queue naming the kernel;
 * a kernel that never returns on the pool is cancelled at close; two queues launch at once; BG_CPU_THREADS=0 / abc
 * are refused by name. No timed assertions: waits are bounded only to turn a hang into a failure. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "../check_helpers.h"

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' lacks '%s'", (s), (sub))

/* Each work-group: its thread (tid), the count of its runs (cnt), CLOCK_MONOTONIC at start and end (t0, t1), and
 * 1 in pool[] when a pool thread ran it. Work-group 0 waits (at most wait_ms, the sixth argument) until some work-group was run by another
 * thread: with two threads that always happens, so the grid's spread does not depend on scheduling luck. */
static const char *spread_src =
  "#define _GNU_SOURCE\n"
  "#include <pthread.h>\n"
  "#include <stdint.h>\n"
  "#include <string.h>\n"
  "#include <time.h>\n"
  "static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
  "  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec; }\n"
  "void spread_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)lsz;\n"
  "  uint64_t *tid = ((uint64_t *const *)ka)[0];\n"
  "  uint32_t *cnt = ((uint32_t *const *)ka)[1];\n"
  "  uint64_t *t0 = ((uint64_t *const *)ka)[2], *t1 = ((uint64_t *const *)ka)[3];\n"
  "  uint32_t *pool = ((uint32_t *const *)ka)[4];\n"
  "  uint64_t wait_ms = ((const uint64_t *)ka)[5];\n"
  "  uint32_t n = gsz[0] * gsz[1] * gsz[2], i = (gid[2] * gsz[1] + gid[1]) * gsz[0] + gid[0];\n"
  "  t0[i] = now();\n"
  "  uint64_t me = (uint64_t)pthread_self();\n"
  "  char name[16] = \"\";\n"
  "  pthread_getname_np(pthread_self(), name, sizeof name);\n"
  "  pool[i] = strcmp(name, \"bg-cpu-pool\") == 0;\n"
  "  __atomic_store_n(&tid[i], me, __ATOMIC_RELEASE);\n"
  "  __atomic_fetch_add(&cnt[i], 1, __ATOMIC_RELAXED);\n"
  "  for (uint64_t w = 0; i == 0 && w < wait_ms; w++) {\n"
  "    for (uint32_t j = 0; j < n; j++) {\n"
  "      uint64_t o = __atomic_load_n(&tid[j], __ATOMIC_ACQUIRE);\n"
  "      if (o && o != me) goto done;\n"
  "    }\n"
  "    struct timespec ts = {0, 1000000};\n"
  "    nanosleep(&ts, 0);\n"
  "  }\n"
  "done:\n"
  "  t1[i] = now();\n"
  "}\n";

/* Faults (writes to 0x1230) in the first work-group a pool thread runs; work-groups on the queue's thread wait (at
 * most 10 s) until a pool thread took one, so the fault is a pool thread's. at[0] is that work-group's x. */
static const char *pfault_src =
  "#define _GNU_SOURCE\n"
  "#include <pthread.h>\n"
  "#include <stdint.h>\n"
  "#include <string.h>\n"
  "#include <time.h>\n"
  "void pfault_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  volatile uint32_t *at = ((uint32_t *const *)ka)[0];\n"
  "  char name[16] = \"\";\n"
  "  pthread_getname_np(pthread_self(), name, sizeof name);\n"
  "  if (strcmp(name, \"bg-cpu-pool\") == 0) {\n"
  "    at[0] = gid[0];\n"
  "    __atomic_store_n(&at[1], 1, __ATOMIC_RELEASE);\n"
  "    *(volatile int *)(uintptr_t)0x1230 = 7;\n"
  "  }\n"
  "  for (int w = 0; w < 10000 && !__atomic_load_n(&at[1], __ATOMIC_ACQUIRE); w++) {\n"
  "    struct timespec ts = {0, 1000000};\n"
  "    nanosleep(&ts, 0);\n"
  "  }\n"
  "}\n";

/* Never returns, on every thread that runs it. */
static const char *spin_src =
  "#include <stdint.h>\n"
  "void spin_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  volatile uint32_t *c = ((uint32_t *const *)ka)[0];\n"
  "  for (;;) c[gid[0]] = c[gid[0]] + 1;\n"
  "}\n";

/* Work-group i writes a[i] = i + 1 (slowly: 200 µs); the next kernel reads a neighbour's value. */
static const char *produce_src =
  "#include <stdint.h>\n"
  "#include <time.h>\n"
  "void produce_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  uint32_t *a = ((uint32_t *const *)ka)[0];\n"
  "  struct timespec ts = {0, 200000};\n"
  "  nanosleep(&ts, 0);\n"
  "  a[gid[0]] = gid[0] + 1;\n"
  "}\n";
static const char *consume_src =
  "#include <stdint.h>\n"
  "void consume_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)lsz;\n"
  "  const uint32_t *a = ((const uint32_t *const *)ka)[0];\n"
  "  uint32_t *b = ((uint32_t *const *)ka)[1];\n"
  "  b[gid[0]] = a[(gid[0] + 1) % gsz[0]] * 2;\n"
  "}\n";

static bg_program *load(bg_dev *d, const char *src, const char *name, unsigned nargs) {
  void *so;
  size_t n;
  OK(bg_compile_c(src, NULL, &so, &n));
  static const uint8_t sizes[8] = {8, 8, 8, 8, 8, 8, 8, 8};
  bg_program_info info = {name, nargs, sizes};
  bg_program *p;
  OK(bg_program_load(d, so, n, &info, &p));
  free(so);
  return p;
}

static bg_dev *open_threads(const char *threads) {
  setenv("BG_CPU_THREADS", threads, 1);
  bg_dev *d;
  OK(bg_dev_open("CPU", &d));
  return d;
}

static void close_dev(bg_dev *d) {
  bg_dev_close(d);
  unsetenv("BG_CPU_THREADS");
}

enum { GX = 5, GY = 3, GZ = 4, N = GX * GY * GZ };

typedef struct grid_bufs {
  bg_buf *b[5];
  uint64_t *tid, *t0, *t1;
  uint32_t *cnt, *pool;
} grid_bufs;

static void grid_alloc(bg_dev *d, grid_bufs *g) {
  for (int i = 0; i < 5; i++) OK(bg_buf_alloc(d, N * 8, BG_BUF_ZERO, &g->b[i]));
  g->tid = bg_buf_cpu(g->b[0]);
  g->cnt = bg_buf_cpu(g->b[1]);
  g->t0 = bg_buf_cpu(g->b[2]);
  g->t1 = bg_buf_cpu(g->b[3]);
  g->pool = bg_buf_cpu(g->b[4]);
}
static void grid_free(grid_bufs *g) {
  for (int i = 0; i < 5; i++) bg_buf_free(g->b[i]);
}

/* Every id of the grid ran exactly once; returns the number of distinct threads and of pool-run work-groups. */
static unsigned grid_check(const grid_bufs *g, unsigned *pool_runs) {
  uint64_t seen[N] = {0};
  unsigned nseen = 0;
  *pool_runs = 0;
  for (int i = 0; i < N; i++) {
    ck_assert_msg(g->cnt[i] == 1, "work-group %d ran %u times", i, g->cnt[i]);
    ck_assert_msg(g->tid[i] != 0, "work-group %d has no thread", i);
    *pool_runs += g->pool[i];
    bool known = false;
    for (unsigned k = 0; k < nseen; k++) known |= seen[k] == g->tid[i];
    if (!known) seen[nseen++] = g->tid[i];
  }
  return nseen;
}

START_TEST(pool_spreads_grid_over_threads) {
  bg_dev *d = open_threads("2");
  bg_program *p = load(d, spread_src, "spread_k", 6);
  grid_bufs g;
  grid_alloc(d, &g);
  const uint32_t gs[3] = {GX, GY, GZ}, ls[3] = {1, 1, 1};
  uint64_t wait_ms = 10000;
  OK(bg_program_run(p, g.b, 5, &wait_ms, 1, gs, ls, true, NULL));
  unsigned pool_runs, threads = grid_check(&g, &pool_runs);
  ck_assert_msg(threads == 2, "the grid ran on %u thread(s), expected 2 (BG_CPU_THREADS=2)", threads);
  ck_assert_uint_gt(pool_runs, 0);
  ck_assert_uint_lt(pool_runs, N);   /* the queue's worker took part */
  grid_free(&g);
  bg_program_free(p);
  close_dev(d);
}
END_TEST

START_TEST(pool_one_thread_runs_on_queue) {
  bg_dev *d = open_threads("1");
  bg_program *p = load(d, spread_src, "spread_k", 6);
  grid_bufs g;
  grid_alloc(d, &g);
  const uint32_t gs[3] = {4, 1, 1}, ls[3] = {1, 1, 1};
  uint64_t wait_ms = 0;   /* no other thread will come */
  OK(bg_program_run(p, g.b, 5, &wait_ms, 1, gs, ls, true, NULL));
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(g.cnt[i], 1);
  for (int i = 1; i < 4; i++) ck_assert(g.tid[i] == g.tid[0]);
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(g.pool[i], 0);
  grid_free(&g);
  bg_program_free(p);
  close_dev(d);
}
END_TEST

/* The queue's TIMESTAMPs around an EXEC bracket every work-group's run, on whichever thread. */
START_TEST(pool_timestamps_bracket_grid) {
  bg_dev *d = open_threads("2");
  bg_program *p = load(d, spread_src, "spread_k", 6);
  grid_bufs g;
  grid_alloc(d, &g);
  bg_signal *s0, *s1;
  OK(bg_signal_new(d, 0, &s0));
  OK(bg_signal_new(d, 0, &s1));
  bg_queue *q;
  OK(bg_queue_new(d, BG_QUEUE_COMPUTE, &q));
  bg_val args[6], gs[3] = {bg_const(GX), bg_const(GY), bg_const(GZ)}, ls[3] = {bg_const(1), bg_const(1), bg_const(1)};
  for (int i = 0; i < 5; i++) args[i] = bg_addr(g.b[i], 0);
  args[5] = bg_const(10000);
  bg_queue_timestamp(q, bg_sig(s0));
  bg_queue_exec(q, p, args, 6, gs, ls);
  bg_queue_timestamp(q, bg_sig(s1));
  bg_queue_signal(q, bg_sig(s1), bg_const(1));
  OK(bg_queue_submit(q, NULL, 0));
  OK(bg_signal_wait(s1, 1, 30000));
  unsigned pool_runs, threads = grid_check(&g, &pool_runs);
  ck_assert_uint_eq(threads, 2);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < N; i++) {
    lo = g.t0[i] < lo ? g.t0[i] : lo;
    hi = g.t1[i] > hi ? g.t1[i] : hi;
  }
  ck_assert_msg(sigts(s0) <= lo, "start timestamp %llu after the first work-group began %llu",
                (unsigned long long)sigts(s0), (unsigned long long)lo);
  ck_assert_msg(sigts(s1) >= hi, "end timestamp %llu before the last work-group ended %llu",
                (unsigned long long)sigts(s1), (unsigned long long)hi);
  bg_queue_free(q);
  bg_signal_free(s0);
  bg_signal_free(s1);
  grid_free(&g);
  bg_program_free(p);
  close_dev(d);
}
END_TEST

/* Two kernels on one queue with a signal between them: the second sees every work-group of the first, and the
 * signal is set only after the whole first grid. Repeated, two queues at once (the pool serves one, the other runs
 * on its own thread), each result exact. */
START_TEST(pool_orders_kernels_on_a_queue) {
  bg_dev *d = open_threads("2");
  bg_program *prod = load(d, produce_src, "produce_k", 1), *cons = load(d, consume_src, "consume_k", 2);
  enum { M = 48, Q = 2, ROUNDS = 4 };
  bg_buf *a[Q], *b[Q];
  bg_signal *mid[Q], *end[Q];
  bg_queue *q[Q];
  for (int k = 0; k < Q; k++) {
    OK(bg_buf_alloc(d, M * 4, BG_BUF_ZERO, &a[k]));
    OK(bg_buf_alloc(d, M * 4, BG_BUF_ZERO, &b[k]));
    OK(bg_signal_new(d, 0, &mid[k]));
    OK(bg_signal_new(d, 0, &end[k]));
    OK(bg_queue_new(d, BG_QUEUE_COMPUTE, &q[k]));
    bg_val pa[1] = {bg_addr(a[k], 0)}, ca[2] = {bg_addr(a[k], 0), bg_addr(b[k], 0)};
    bg_val gs[3] = {bg_const(M), bg_const(1), bg_const(1)}, ls[3] = {bg_const(1), bg_const(1), bg_const(1)};
    bg_val round = bg_var(q[k], 0, "round", 1, ROUNDS);
    bg_queue_exec(q[k], prod, pa, 1, gs, ls);
    bg_queue_signal(q[k], bg_sig(mid[k]), round);
    bg_queue_exec(q[k], cons, ca, 2, gs, ls);
    bg_queue_signal(q[k], bg_sig(end[k]), round);
  }
  for (uint64_t r = 1; r <= ROUNDS; r++) {
    for (int k = 0; k < Q; k++) memset(bg_buf_cpu(a[k]), 0, M * 4);
    for (int k = 0; k < Q; k++) OK(bg_queue_submit(q[k], &r, 1));
    for (int k = 0; k < Q; k++) {
      OK(bg_signal_wait(mid[k], r, 30000));
      /* The signal after the first kernel: every one of its work-groups is done. */
      const uint32_t *av = bg_buf_cpu(a[k]);
      for (int i = 0; i < M; i++) ck_assert_msg(av[i] == (uint32_t)i + 1, "queue %d round %llu: a[%d] = %u at the "
                                                "signal", k, (unsigned long long)r, i, av[i]);
      OK(bg_signal_wait(end[k], r, 30000));
      const uint32_t *bv = bg_buf_cpu(b[k]);
      for (int i = 0; i < M; i++) ck_assert_uint_eq(bv[i], 2u * (uint32_t)((i + 1) % M + 1));
    }
  }
  for (int k = 0; k < Q; k++) {
    bg_queue_free(q[k]);
    bg_signal_free(mid[k]);
    bg_signal_free(end[k]);
    bg_buf_free(a[k]);
    bg_buf_free(b[k]);
  }
  bg_program_free(prod);
  bg_program_free(cons);
  close_dev(d);
}
END_TEST

START_TEST(pool_thread_fault_faults_queue) {
  bg_dev *d = open_threads("2");
  bg_program *p = load(d, pfault_src, "pfault_k", 1);
  bg_buf *at;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &at));
  const uint32_t gs[3] = {16, 1, 1}, ls[3] = {1, 1, 1};
  ck_assert_int_eq(bg_program_run(p, &at, 1, NULL, 0, gs, ls, true, NULL), -BG_EHANG);
  char msg[1024], wg[32];
  snprintf(msg, sizeof msg, "%s", bg_last_error());
  HAS(msg, "kernel 'pfault_k' faulted");
  HAS(msg, "accessing address 0x1230");
  snprintf(wg, sizeof wg, "work-group [%u,0,0] of [16,1,1]", ((const uint32_t *)bg_buf_cpu(at))[0]);
  HAS(msg, wg);
  ck_assert_int_eq(bg_dev_synchronize(d, 0), -BG_EHANG);   /* latched */
  bg_buf_free(at);
  bg_program_free(p);
  close_dev(d);
  /* The pool threads survived the fault: a new device spreads a grid again. */
  d = open_threads("2");
  p = load(d, spread_src, "spread_k", 6);
  grid_bufs g;
  grid_alloc(d, &g);
  const uint32_t gs2[3] = {GX, GY, GZ};
  uint64_t wait_ms = 10000;
  OK(bg_program_run(p, g.b, 5, &wait_ms, 1, gs2, ls, true, NULL));
  unsigned pool_runs;
  ck_assert_uint_eq(grid_check(&g, &pool_runs), 2);
  grid_free(&g);
  bg_program_free(p);
  close_dev(d);
}
END_TEST

static int count_threads(void) {
  DIR *dir = opendir("/proc/self/task");
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dir));) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

/* A kernel that never returns, on the queue's worker and on the pool thread: close cancels both. */
START_TEST(pool_close_cancels_never_ending_grid) {
  setenv("BG_WAIT_TIMEOUT_MS", "300", 1);
  int threads = count_threads();
  bg_dev *d = open_threads("2");
  bg_program *p = load(d, spin_src, "spin_k", 1);
  bg_buf *c;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &c));
  const volatile uint32_t *count = bg_buf_cpu(c);
  const uint32_t gs[3] = {2, 1, 1}, ls[3] = {1, 1, 1};
  OK(bg_program_run(p, &c, 1, NULL, 0, gs, ls, false, NULL));
  for (int i = 0; i < 10000 && (!count[0] || !count[1]); i++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  ck_assert_msg(count[0] && count[1], "both work-groups should be running (%u, %u)", count[0], count[1]);
  ck_assert_int_eq(bg_dev_synchronize(d, 0), -BG_ETIMEDOUT);
  bg_program_free(p);
  bg_buf_free(c);
  bg_clear_error();
  bg_dev_close(d);
  HAS(bg_last_error(), "kernel 'spin_k' still running 300 ms");
  HAS(bg_last_error(), "cancelled");
  ck_assert_int_eq(count_threads(), threads);   /* the queue's worker and the pool thread are gone */
  unsetenv("BG_WAIT_TIMEOUT_MS");
  unsetenv("BG_CPU_THREADS");
}
END_TEST

/* A launch whose work-groups proved tiny runs on its queue's thread alone (no pool wake-up): after the first launch
 * (no estimate yet: the pool), one of the next ones is wholly the queue worker's. A grid of one never uses the pool. */
START_TEST(pool_small_grids_run_inline) {
  bg_dev *d = open_threads("2");
  static const char *tiny_src =
    "#define _GNU_SOURCE\n#include <pthread.h>\n#include <stdint.h>\n#include <string.h>\n"
    "void tiny_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
    "  (void)gsz; (void)lsz; char name[16] = \"\";\n"
    "  pthread_getname_np(pthread_self(), name, sizeof name);\n"
    "  ((uint32_t *const *)ka)[0][gid[0]] = strcmp(name, \"bg-cpu-pool\") == 0 ? 2 : 1;\n"
    "}\n";
  bg_program *p = load(d, tiny_src, "tiny_k", 1);
  bg_buf *o;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &o));
  uint32_t *v = bg_buf_cpu(o);
  const uint32_t one[3] = {1, 1, 1}, gs[3] = {8, 1, 1};
  OK(bg_program_run(p, &o, 1, NULL, 0, one, one, true, NULL));
  ck_assert_uint_eq(v[0], 1);
  bool inline_run = false;
  for (int run = 0; run < 20 && !inline_run; run++) {
    memset(v, 0, 64);
    OK(bg_program_run(p, &o, 1, NULL, 0, gs, one, true, NULL));
    int on_queue = 0;
    for (int i = 0; i < 8; i++) on_queue += v[i] == 1;
    for (int i = 0; i < 8; i++) ck_assert_uint_ne(v[i], 0);
    inline_run = run > 0 && on_queue == 8;
  }
  ck_assert_msg(inline_run, "a grid of 8 tiny work-groups never ran on its queue's thread alone");
  bg_buf_free(o);
  bg_program_free(p);
  close_dev(d);
}
END_TEST

START_TEST(pool_bad_thread_count_named) {
  const char *bad[] = {"0", "abc", "257", "-1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("BG_CPU_THREADS", bad[i], 1);
    bg_dev *d = NULL;
    FAILS(bg_dev_open("CPU", &d), BG_EINVAL, "BG_CPU_THREADS");
    HAS(bg_last_error(), bad[i]);
    HAS(bg_last_error(), "from 1 to 256");
    ck_assert_ptr_null(d);
  }
  unsetenv("BG_CPU_THREADS");
}
END_TEST

static Suite *pool_suite(void) {
  Suite *s = suite_create("cpu-pool");
  TCase *tc = tcase_create("pool");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, pool_spreads_grid_over_threads);
  tcase_add_test(tc, pool_one_thread_runs_on_queue);
  tcase_add_test(tc, pool_timestamps_bracket_grid);
  tcase_add_test(tc, pool_orders_kernels_on_a_queue);
  tcase_add_test(tc, pool_thread_fault_faults_queue);
  tcase_add_test(tc, pool_close_cancels_never_ending_grid);
  tcase_add_test(tc, pool_small_grids_run_inline);
  tcase_add_test(tc, pool_bad_thread_count_named);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(pool_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
