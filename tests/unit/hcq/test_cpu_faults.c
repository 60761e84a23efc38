/* tests/unit/hcq/test_cpu_faults.c: CPU kernels that fault or never finish (cpu/cpu_fault.c,
 * cpu_worker.c, cpu_queue.c). A faulting kernel is a fault of its queue, reported with the kernel,
 * the address and the work-group, not a crash of the process; faults outside kernels still reach
 * the application's handler or the default action; closing a device whose kernel loops for ever
 * returns after the wait timeout, with the worker thread gone. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' not in: %s", (sub), (s))

/* An address below mmap_min_addr: never mapped. */
#define WILD_ADDR 0x1230u

/* Writes through the address it is given, in work-group 3 only. */
static const char *wild_src =
  "#include <stdint.h>\n"
  "void wild_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  int32_t *o = ((int32_t *const *)ka)[0];\n"
  "  volatile int32_t *wild = (volatile int32_t *)((const uintptr_t *)ka)[1];\n"
  "  o[gid[0]] = 1;\n"
  "  if (gid[0] == 3) *wild = 7;\n"
  "}\n";

/* 100 / d with d a kernel argument: the compiler cannot fold it away. */
static const char *div_src =
  "#include <stdint.h>\n"
  "void div_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gsz; (void)lsz;\n"
  "  int32_t *o = ((int32_t *const *)ka)[0];\n"
  "  int32_t d = *(const int32_t *)((const char *)ka + 8);\n"
  "  o[gid[0]] = 100 / d;\n"
  "}\n";

/* Recurses without end, 4 KiB a frame: the worker's stack overflows. */
static const char *deep_src =
  "#include <stdint.h>\n"
  "static int deep(volatile int *p, int n) {\n"
  "  volatile char frame[4096];\n"
  "  frame[n % 4096] = (char)n;\n"
  "  return deep(p, n + 1) + frame[0] + *p;\n"
  "}\n"
  "void deep_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gid; (void)gsz; (void)lsz;\n"
  "  int *o = ((int *const *)ka)[0];\n"
  "  o[0] = deep(o, 0);\n"
  "}\n";

/* Never returns; counts in device memory so the test sees it running. */
static const char *spin_src =
  "#include <stdint.h>\n"
  "void spin_k(const void *ka, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
  "  (void)gid; (void)gsz; (void)lsz;\n"
  "  volatile uint32_t *c = ((uint32_t *const *)ka)[0];\n"
  "  for (;;) c[0] = c[0] + 1;\n"
  "}\n";

static bg_program *load(bg_dev *d, const char *src, const char *name, unsigned nargs, const uint8_t *sizes) {
  void *so;
  size_t n;
  OK(bg_compile_c(src, NULL, &so, &n));
  bg_program_info info = {name, nargs, sizes};
  bg_program *p;
  OK(bg_program_load(d, so, n, &info, &p));
  free(so);
  return p;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs wild_k on a 5-wide grid on d; returns bg_program_run's result. */
static int run_wild(bg_dev *d) {
  static const uint8_t sizes[2] = {8, 8};
  bg_program *p = load(d, wild_src, "wild_k", 2, sizes);
  bg_buf *o;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &o));
  uint64_t wild = WILD_ADDR;
  const uint32_t g[3] = {5, 1, 1}, l[3] = {1, 1, 1};
  int r = bg_program_run(p, &o, 1, &wild, 1, g, l, true, NULL);
  bg_buf_free(o);
  bg_program_free(p);
  return r;
}

START_TEST(cpu_kernel_wild_write_is_a_queue_fault) {
  bg_dev *d;
  OK(bg_dev_open("CPU", &d));
  ck_assert_int_eq(run_wild(d), -BG_EHANG);
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", bg_last_error());
  HAS(msg, "kernel 'wild_k' faulted");
  HAS(msg, "SIGSEGV");
  HAS(msg, "accessing address 0x1230");
  HAS(msg, "work-group [3,0,0]");
  /* The fault is latched: every later wait reports the same. */
  ck_assert_int_eq(bg_dev_synchronize(d, 0), -BG_EHANG);
  HAS(bg_last_error(), "kernel 'wild_k' faulted");
  bg_dev_close(d);
  /* The process goes on: a new device runs kernels, and faults are caught again. */
  OK(bg_dev_open("CPU", &d));
  ck_assert_int_eq(run_wild(d), -BG_EHANG);
  HAS(bg_last_error(), "accessing address 0x1230");
  bg_dev_close(d);
}
END_TEST

START_TEST(cpu_kernel_divide_by_zero_is_a_queue_fault) {
#if defined(__x86_64__) || defined(__i386__)   /* AArch64 and RISC-V divide by zero without a trap */
  bg_dev *d;
  OK(bg_dev_open("CPU", &d));
  static const uint8_t sizes[2] = {8, 4};
  bg_program *p = load(d, div_src, "div_k", 2, sizes);
  bg_buf *o;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &o));
  const uint32_t g[3] = {4, 1, 1}, l[3] = {1, 1, 1};
  uint64_t div = 4;
  OK(bg_program_run(p, &o, 1, &div, 1, g, l, true, NULL));
  ck_assert_int_eq(((int32_t *)bg_buf_cpu(o))[3], 25);
  div = 0;
  ck_assert_int_eq(bg_program_run(p, &o, 1, &div, 1, g, l, true, NULL), -BG_EHANG);
  HAS(bg_last_error(), "kernel 'div_k' faulted");
  HAS(bg_last_error(), "SIGFPE (integer divide by zero)");
  HAS(bg_last_error(), "(div_k+0x");   /* the faulting instruction, named */
  ck_assert_int_eq(bg_dev_synchronize(d, 0), -BG_EHANG);
  bg_buf_free(o);
  bg_program_free(p);
  bg_dev_close(d);
#endif
}
END_TEST

START_TEST(cpu_kernel_stack_overflow_is_a_queue_fault) {
  /* The handler runs on the worker's own signal stack: the overflowed one has no room left. */
  bg_dev *d;
  OK(bg_dev_open("CPU", &d));
  static const uint8_t sizes[1] = {8};
  bg_program *p = load(d, deep_src, "deep_k", 1, sizes);
  bg_buf *o;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &o));
  const uint32_t one[3] = {1, 1, 1};
  ck_assert_int_eq(bg_program_run(p, &o, 1, NULL, 0, one, one, true, NULL), -BG_EHANG);
  HAS(bg_last_error(), "kernel 'deep_k' faulted");
  HAS(bg_last_error(), "SIGSEGV");
  bg_buf_free(o);
  bg_program_free(p);
  bg_dev_close(d);
}
END_TEST

/* ---------------- faults outside kernels keep their meaning (in a child process) ---------------- */

static volatile uintptr_t wild_addr = WILD_ADDR;

static void app_handler(int sig) { _exit(sig == SIGSEGV ? 42 : 43); }

/* Opens the CPU device (installing the handlers), runs a faulting kernel, then faults on the main
 * thread; returns the child's wait status. */
static int child_status(bool app_has_handler) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGALRM, SIG_DFL);   /* not the Check runner's timeout handler */
    alarm(10);   /* a handler that swallowed the fault would loop for ever */
    if (app_has_handler) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = app_handler;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGSEGV, &sa, NULL);
    }
    bg_dev *d;
    if (bg_dev_open("CPU", &d) != 0) _exit(10);
    if (run_wild(d) != -BG_EHANG || !strstr(bg_last_error(), "wild_k")) _exit(11);
    bg_dev_close(d);
    *(volatile int *)wild_addr = 1;   /* a real crash of the application */
    _exit(12);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

START_TEST(cpu_fault_outside_kernel_reaches_app_handler) {
  int st = child_status(true);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42, "child: exited %d (status %d), signal %d",
                WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
END_TEST

START_TEST(cpu_fault_outside_kernel_still_crashes) {
  int st = child_status(false);
#if defined(__SANITIZE_ADDRESS__)
  /* AddressSanitizer's handler was there first: it reports the SEGV and exits non-zero. */
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) < 10, "child status %d", st);
#else
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "child: exited %d (status %d), signal %d",
                WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
#endif
}
END_TEST

/* ---------------- a kernel that never finishes ---------------- */

static int count_threads(void) {
  DIR *dir = opendir("/proc/self/task");
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dir));) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

/* Waits (at most ~10 s) until *c differs from `from`. */
static bool changes(const volatile uint32_t *c, uint32_t from) {
  for (int i = 0; i < 10000 && *c == from; i++) sleep_ms(1);
  return *c != from;
}

START_TEST(cpu_close_returns_when_a_kernel_never_finishes) {
  setenv("BG_WAIT_TIMEOUT_MS", "300", 1);
  int threads = count_threads();
  bg_dev *d;
  OK(bg_dev_open("CPU", &d));
  static const uint8_t sizes[1] = {8};
  bg_program *p = load(d, spin_src, "spin_k", 1, sizes);
  bg_buf *c;
  OK(bg_buf_alloc(d, 64, BG_BUF_ZERO, &c));
  const volatile uint32_t *count = bg_buf_cpu(c);
  const uint32_t one[3] = {1, 1, 1};
  OK(bg_program_run(p, &c, 1, NULL, 0, one, one, false, NULL));
  ck_assert_msg(changes(count, 0), "the kernel never started");
  ck_assert_int_eq(bg_dev_synchronize(d, 0), -BG_ETIMEDOUT);
  /* Freeing the program must not unload the code the worker still runs. */
  bg_program_free(p);
  ck_assert_msg(changes(count, *count), "the kernel stopped when its program was freed");
  bg_buf_free(c);
  bg_clear_error();
  bg_dev_close(d);   /* returns: the test's timeout catches a hang */
  HAS(bg_last_error(), "kernel 'spin_k' still running 300 ms");
  HAS(bg_last_error(), "cancelled");
  ck_assert_int_eq(count_threads(), threads);   /* the worker is gone, not left spinning */
  unsetenv("BG_WAIT_TIMEOUT_MS");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("cpu-faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, cpu_kernel_wild_write_is_a_queue_fault);
  tcase_add_test(tc, cpu_kernel_divide_by_zero_is_a_queue_fault);
  tcase_add_test(tc, cpu_kernel_stack_overflow_is_a_queue_fault);
  tcase_add_test(tc, cpu_fault_outside_kernel_reaches_app_handler);
  tcase_add_test(tc, cpu_fault_outside_kernel_still_crashes);
  tcase_add_test(tc, cpu_close_returns_when_a_kernel_never_finishes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
