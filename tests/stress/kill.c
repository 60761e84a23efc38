/* tests/stress/kill.c: a process SIGKILLed at a random point leaves a device the next process opens.
 *
 * usage: kill [KILLS [SEED [DEV]]]   (defaults: 10, 1, MOCKPCI+AMD; scripts: tests/stress/kill.sh 50)
 *
 * The parent starts the emulated devices with MOCKGPU_SHARED=1 (tests/mockgpu/mock_shm.h: the GPU's registers, VRAM
 * and engine state live in memory shared with the children, as real hardware outlives a process), compiles the add1
 * kernel (tests/mockgpu/amd_test_kernels.h) once, and then KILLS times forks a worker that opens DEV (bring-up) and
 * loops over an SDMA copy and a kernel, publishing its phase in a shared word. The parent picks the phase to kill in
 * (round robin: cold bring-up (the worker sets AM_RESET=1), warm bring-up, copy, kernel), waits until the worker is
 * in it, sleeps a random part of that phase's length (calibrated by one unkilled worker) and SIGKILLs it. Then a fresh
 * child opens the device and checks a kernel's and a copy's results, and closes it. The phase the kill landed in is
 * the worker's last published one. Figures: kills per phase, opens OK, cold/warm boots of the checking opens (from
 * the driver's BG_DEBUG=1 lines "warm start" / "mode1 reset"). Exit 0 when every check passed, 77 without LLVM. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "amd_test_kernels.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "platform/mock_plugin.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

enum { PH_NONE, PH_COLD, PH_WARM, PH_COPY, PH_KERNEL, PH_IDLE, PH_N };
static const char *const PH_NAME[PH_N] = {"not started", "bring-up (cold)", "bring-up (warm)", "copy", "kernel",
                                          "between steps"};

/* Shared with the children (MAP_SHARED page). */
typedef struct shared {
  volatile int phase;
  volatile unsigned entered[PH_N]; /* times the worker entered each phase */
  volatile uint64_t ns[PH_N];      /* calibration: time spent in each phase */
} shared;

static shared *SH;
static void *OBJ;
static size_t OBJ_N;
static const char *DEV;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64: the sequence depends only on the printed seed */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void enter(int ph) {
  SH->phase = ph;
  __atomic_add_fetch(&SH->entered[ph], 1, __ATOMIC_SEQ_CST);
}

/* One SDMA copy src -> VRAM -> dst of n bytes; 0 when the bytes came back. src/dst are host memory the GPU reaches
 * (DMA) where the device gives it a CPU view (PCI), else VRAM written and read through the BAR (USB). */
static int do_copy(bg_dev *d, size_t n, unsigned salt) {
  bg_buf *src = NULL, *vram = NULL, *dst = NULL;
  bg_queue *q = NULL;
  uint8_t *want = malloc(n), *got = malloc(n);
  int r = want && got ? 0 : bg_error(BG_ENOMEM, "copy: out of memory");
  if (r == 0) r = bg_buf_alloc(d, n, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &src);
  bool host = r == 0 && bg_buf_cpu(src) != NULL;
  if (r == 0 && !host) {
    bg_buf_free(src);
    r = bg_buf_alloc(d, n, 0, &src);
  }
  if (r == 0) r = bg_buf_alloc(d, n, 0, &vram);
  if (r == 0) r = bg_buf_alloc(d, n, host ? BG_BUF_HOST | BG_BUF_CPU_ACCESS | BG_BUF_ZERO : 0, &dst);
  if (r == 0) r = bg_queue_new(d, BG_QUEUE_COPY, &q);
  if (r == 0) {
    for (size_t i = 0; i < n; i++) want[i] = (uint8_t)(i * 131 + salt);
    r = bg_buf_write(src, 0, want, n);
  }
  if (r == 0) {
    bg_queue_copy(q, bg_addr(vram, 0), bg_addr(src, 0), n);
    bg_queue_copy(q, bg_addr(dst, 0), bg_addr(vram, 0), n);
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    r = bg_queue_submit(q, NULL, 0);
  }
  if (r == 0) r = bg_dev_synchronize(d, 0);
  if (r == 0) r = bg_buf_read(dst, 0, got, n);
  if (r == 0 && memcmp(got, want, n) != 0) r = bg_error(BG_EIO, "copy: the bytes read back differ");
  if (q) bg_queue_free(q);
  bg_buf_free(dst);
  bg_buf_free(vram);
  bg_buf_free(src);
  free(want);
  free(got);
  return r;
}

/* add1 over 128 work-groups of 32 (long enough to be killed in); 0 when out[i] == in[i] + 1. */
#define KN 4096
static int do_kernel(bg_dev *d, bg_program *p, unsigned salt) {
  bg_buf *b[2] = {NULL, NULL};
  static float in[KN], out[KN];
  for (int i = 0; i < KN; i++) in[i] = (float)(i % 1000 + (int)salt % 7) * 0.5f;
  int r = bg_buf_alloc(d, sizeof(in), 0, &b[0]);
  if (r == 0) r = bg_buf_alloc(d, sizeof(in), 0, &b[1]);
  if (r == 0) r = bg_buf_write(b[1], 0, in, sizeof(in));
  const uint32_t g[3] = {KN / 32, 1, 1}, l[3] = {32, 1, 1};
  if (r == 0) r = bg_program_run(p, b, 2, NULL, 0, g, l, true, NULL);
  if (r == 0) r = bg_buf_read(b[0], 0, out, sizeof(out));
  for (int i = 0; r == 0 && i < KN; i++)
    if (out[i] != in[i] + 1.0f) r = bg_error(BG_EIO, "kernel: out[%d] = %g, expected %g", i, (double)out[i],
                                             (double)(in[i] + 1.0f));
  bg_buf_free(b[0]);
  bg_buf_free(b[1]);
  return r;
}

static int load(bg_dev *d, bg_program **p) {
  static const uint8_t sizes[2] = {8, 8};
  bg_program_info info = {"add1", 2, sizes};
  return bg_program_load(d, OBJ, OBJ_N, &info, p);
}

/* The worker: bring-up, then copies and kernels until killed (iters < 0) or iters rounds. kill_at > 0: the emulated
 * GPU SIGKILLs it just before its kill_at-th register write (fault kind "kill-reg-write"). only = PH_COPY or PH_KERNEL:
 * after the bring-up it does nothing else, so a kill aimed at that phase lands in it however slow the machine is
 * (PH_NONE: both, with the idle step between). Exit 0 or 1. */
static void worker(bool cold, int iters, unsigned kill_at, int only) {
  if (cold) setenv("AM_RESET", "1", 1);
  char iface[16];
  snprintf(iface, sizeof(iface), "%.*s", (int)strcspn(DEV, "+"), DEV);
  if (kill_at && bg_mock_plugin_inject(iface, 0, "kill-reg-write", kill_at) < 0) {
    fprintf(stderr, "kill: inject: %s\n", bg_last_error());
    _exit(1);
  }
  uint64_t t = now_ns();
  enter(cold ? PH_COLD : PH_WARM);
  bg_dev *d = NULL;
  bg_program *p = NULL;
  if (bg_dev_open(DEV, &d) < 0 || load(d, &p) < 0) {
    fprintf(stderr, "kill: worker: %s\n", bg_last_error());
    _exit(1);
  }
  SH->ns[cold ? PH_COLD : PH_WARM] = now_ns() - t;
  bool failed = false;
  for (int i = 0; !failed && (iters < 0 || i < iters); i++) {
    if (only == PH_NONE) enter(PH_IDLE);
    if (only != PH_KERNEL) {
      t = now_ns();
      enter(PH_COPY);
      failed = do_copy(d, 1u << 20, (unsigned)i) < 0;
      SH->ns[PH_COPY] = now_ns() - t;
    }
    if (only != PH_COPY) {
      t = now_ns();
      enter(PH_KERNEL);
      failed = failed || do_kernel(d, p, (unsigned)i) < 0;
      SH->ns[PH_KERNEL] = now_ns() - t;
    }
  }
  if (failed) fprintf(stderr, "kill: worker: %s\n", bg_last_error());
  enter(PH_IDLE);
  bg_program_free(p);
  bg_dev_close(d);
  _exit(failed || iters < 0 ? 1 : 0);
}

/* Fork only while every other thread of this process sleeps (the emulated GPUs' engine threads, started by
 * bg_dev_list). A thread caught inside the sanitizer runtime or the allocator at fork() leaves that lock taken in
 * the child, whose own engine threads then never start: under ASan on a loaded machine the calibration worker's
 * first SDMA doorbell kicked a thread that never ran, 1 run in 10-20. Bounded: after 2 s it forks anyway. */
static void wait_threads_asleep(void) {
  char self[32];
  snprintf(self, sizeof self, "%d", (int)getpid());
  for (int tries = 0; tries < 2000; tries++) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return;
    bool all_asleep = true;
    struct dirent *de;
    while ((de = readdir(dir)) && all_asleep) {
      if (de->d_name[0] == '.' || strcmp(de->d_name, self) == 0) continue;
      char path[64], buf[256];
      snprintf(path, sizeof path, "/proc/self/task/%.16s/stat", de->d_name);
      FILE *f = fopen(path, "r");
      if (!f) continue; /* it exited */
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      buf[n] = 0;
      const char *st = strrchr(buf, ')'); /* "tid (comm) S ...": the state follows the last ')' */
      if (st && st[1] == ' ' && st[2] != 'S') all_asleep = false;
    }
    closedir(dir);
    if (all_asleep) return;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

/* The checker: open, kernel, copy, close; stderr to log (the driver's BG_DEBUG=1 lines). Exit 0 when all passed. */
static void checker(const char *log) {
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
  close(fd);
  unsetenv("AM_RESET");
  bg_dev *d = NULL;
  bg_program *p = NULL;
  int r = bg_dev_open(DEV, &d);
  if (r == 0) r = load(d, &p);
  if (r == 0) r = do_kernel(d, p, 3);
  if (r == 0) r = do_copy(d, 3u << 20, 5);
  if (r < 0) fprintf(stderr, "kill: check: %s\n", bg_last_error());
  if (p) bg_program_free(p);
  if (d) bg_dev_close(d);
  _exit(r < 0 ? 1 : 0);
}

static int wait_child(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* wait_child with a bound: a child still running after ms is SIGKILLed and -2 returned (a hung open). */
static int wait_child_ms(pid_t pid, unsigned ms) {
  for (unsigned t = 0; t < ms; t += 10) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (r < 0 && errno != EINTR) return -1;
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  wait_child(pid);
  return -2;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static bool has(const char *log, const char *what) {
  FILE *f = fopen(log, "r");
  if (!f) return false;
  char line[1024];
  bool hit = false;
  while (!hit && fgets(line, sizeof(line), f)) hit = strstr(line, what) != NULL;
  fclose(f);
  return hit;
}

/* The bring-up's register writes ("am: wreg" lines of BG_DEBUG=3 before the driver's "<cold|warm> boot, gfx"), cut
 * into steps at the driver's step lines (BG_DEBUG=1 "am: <bdf>: psp: bootloader ...": the writes since the previous
 * step line are that step's). Kills of bring-up go round robin over the steps, at a random write inside one. */
#define MAX_STEPS 16
typedef struct steps {
  unsigned n, writes;
  unsigned end[MAX_STEPS]; /* last write (1-based) of each step */
  char name[MAX_STEPS][24];
} steps;

static void parse_steps(const char *log, steps *st) {
  memset(st, 0, sizeof(*st));
  FILE *f = fopen(log, "r");
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof(line), f) && !strstr(line, " boot, gfx")) {
    if (strstr(line, "am: wreg")) {
      st->writes++;
      continue;
    }
    const char *p = strstr(line, "bg[1] am: ");
    const char *b = p ? strstr(p + 10, ": ") : NULL;
    if (!b || st->n == MAX_STEPS || (st->n && st->end[st->n - 1] == st->writes) || st->writes == 0) continue;
    b += 2; /* the step's name: its words up to a number or a parenthesis */
    size_t k = 0;
    while (b[k] && b[k] != '\n' && b[k] != '(' && !(b[k] >= '0' && b[k] <= '9') && k < sizeof(st->name[0]) - 1) k++;
    while (k && (b[k - 1] == ' ' || b[k - 1] == ',')) k--;
    snprintf(st->name[st->n], sizeof(st->name[0]), "%.*s", (int)k, b);
    st->end[st->n++] = st->writes;
  }
  fclose(f);
  if (st->writes && (!st->n || st->end[st->n - 1] != st->writes) && st->n < MAX_STEPS) { /* queues and magic */
    snprintf(st->name[st->n], sizeof(st->name[0]), "queues, magic");
    st->end[st->n++] = st->writes;
  }
}

/* The step write w (1-based) belongs to. */
static unsigned step_of(const steps *st, unsigned w) {
  unsigned i = 0;
  while (i + 1 < st->n && w > st->end[i]) i++;
  return i;
}

static void dump(const char *log) {
  FILE *f = fopen(log, "r");
  if (!f) return;
  char line[1024];
  while (fgets(line, sizeof(line), f))
    if (!strstr(line, "am: wreg") && !strstr(line, "am: rreg")) fprintf(stderr, "  | %s", line);
  fclose(f);
}

static int parse_int(const char *s, const char *what, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "kill: %s must be an integer in %ld..%ld, not '%s'\n", what, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

int main(int argc, char **argv) {
  long kills = 10, seed = 1;
  if (argc > 4 || (argc > 1 && parse_int(argv[1], "KILLS", 1, 100000, &kills) < 0) ||
      (argc > 2 && parse_int(argv[2], "SEED", 0, 0x7fffffffL, &seed) < 0)) {
    fprintf(stderr, "usage: kill [KILLS [SEED [DEV]]]\n");
    return 2;
  }
  DEV = argc > 3 ? argv[3] : "MOCKPCI+AMD";
#if !BG_HAVE_LLVM
  fprintf(stderr, "kill: built without LLVM: no kernel to run (skipped)\n");
  return 77;
#else
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Before the library reads them: shared emulated hardware, boot lines in the checkers' logs. */
  setenv("MOCKGPU_SHARED", "1", 1);
  setenv("BG_DEBUG", "3", 1); /* register writes (am: wreg) counted in the calibration logs */
  if (!getenv("BG_WAIT_TIMEOUT_MS")) setenv("BG_WAIT_TIMEOUT_MS", "20000", 1);
  rng_state = (uint64_t)seed;
  printf("kill: %ld kills, seed %ld, %s\n", kills, seed, DEV);
  char names[16][48];
  if (bg_dev_list(true, names, 16) <= 0) { /* starts the emulated devices: the children share them */
    fprintf(stderr, "kill: no devices: %s\n", bg_last_error());
    return 1;
  }
  /* The device's lock file (platform/pci_lock.c: <lock dir>/baregpu-<name>.lock; MOCKUSB: mockusb:<index>). */
  char iface[16], lockpath[512];
  snprintf(iface, sizeof(iface), "%.*s", (int)strcspn(DEV, "+"), DEV);
  bg_mock_devices md;
  if (bg_mock_plugin_start(iface, "AMD", &md) < 0) {
    fprintf(stderr, "kill: %s: %s\n", iface, bg_last_error());
    return 1;
  }
  snprintf(lockpath, sizeof(lockpath), "%s/baregpu-%s.lock", md.lock_dir, strcmp(iface, "MOCKUSB") ? md.bdf[0] :
           "mockusb:0");
  if (bg_llvm_amdgpu_compile(AMD_TEST_ADD1_IR, "gfx1100", &OBJ, &OBJ_N) < 0) {
    fprintf(stderr, "kill: compile: %s\n", bg_last_error());
    return 1;
  }
  SH = mmap(NULL, sizeof(*SH), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (SH == MAP_FAILED) return 1;
  char log[] = "/tmp/bg-kill-XXXXXX";
  int lfd = mkstemp(log);
  if (lfd < 0) return 1;
  close(lfd);

  /* Calibration: one cold and one warm worker run to the end (their phase lengths bound the random delays), each
   * followed by a checker like every kill. */
  int failures = 0;
  steps stp[PH_N];
  memset(stp, 0, sizeof(stp));
  for (int c = 0; c < 2; c++) {
    wait_threads_asleep();
    pid_t w = fork();
    if (w == 0) {
      int fd = open(log, O_WRONLY | O_TRUNC);
      if (fd < 0 || dup2(fd, 2) < 0) _exit(3);
      worker(c == 0, 2, 0, PH_NONE);
    }
    int rc = wait_child(w);
    if (rc != 0) {
      fprintf(stderr, "kill: calibration worker (%s) failed (exit status %d)\n", c == 0 ? "cold" : "warm", rc);
      dump(log);
      return 1;
    }
    parse_steps(log, &stp[c == 0 ? PH_COLD : PH_WARM]);
  }
  for (int ph = PH_COLD; ph <= PH_KERNEL; ph++) {
    printf("kill: calibration: %s %.1f ms", PH_NAME[ph], (double)SH->ns[ph] / 1e6);
    if (ph <= PH_WARM) {
      printf(", %u register writes in %u steps:", stp[ph].writes, stp[ph].n);
      for (unsigned i = 0; i < stp[ph].n; i++) printf(" %s (..%u)%s", stp[ph].name[i], stp[ph].end[i], i + 1 < stp[ph].n ? "," : "");
    }
    printf("\n");
  }
  if (!stp[PH_COLD].writes || !stp[PH_WARM].writes) {
    fprintf(stderr, "kill: no register writes seen in the bring-up logs (BG_DEBUG=3 lines 'am: wreg')\n");
    return 1;
  }

  unsigned landed[PH_N] = {0}, opens_ok = 0, cold = 0, warm = 0, stale = 0;
  static const int TARGETS[] = {PH_COLD, PH_WARM, PH_COPY, PH_KERNEL};
  for (long k = 0; k < kills; k++) {
    int target = TARGETS[k % 4];
    memset((void *)SH->entered, 0, sizeof(SH->entered));
    SH->phase = PH_NONE;
    unsigned nth = 1 + (unsigned)(rnd() % 2); /* copies and kernels: the 1st or 2nd one */
    uint64_t span = SH->ns[target] * 4 / 5; /* most of the phase (the calibrated one may have been a faster one) */
    uint64_t delay = rnd() % (span ? span : 1000000u);
    /* Bring-up: the emulated GPU kills the worker just before a random one of the boot's register writes. */
    unsigned kill_at = 0, step = 0;
    if (target <= PH_WARM) { /* the next step of this kind round robin, a random write inside it */
      const steps *st = &stp[target];
      step = (unsigned)(k / 4) % st->n;
      unsigned lo = step ? st->end[step - 1] + 1 : 1;
      kill_at = lo + (unsigned)(rnd() % (st->end[step] - lo + 1));
      step = step_of(st, kill_at);
    }
    wait_threads_asleep();
    pid_t w = fork();
    if (w < 0) return 1;
    if (w == 0) {
      int dn = open("/dev/null", O_WRONLY);
      if (dn >= 0) dup2(dn, 2);
      worker(target == PH_COLD, -1, kill_at, target >= PH_COPY ? target : PH_NONE);
    }
    uint64_t t0 = now_ns();
    bool died = false, self = false;
    /* wait for the phase (bring-up: for the worker's death at its register write, or its first copy) */
    int until = kill_at ? PH_COPY : target;
    while (SH->entered[until] < (target >= PH_COPY ? nth : 1u)) {
      int st;
      if (waitpid(w, &st, WNOHANG) == w) {
        self = kill_at && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        died = !self;
        break;
      }
      if (now_ns() - t0 > 60000000000ull) break;
      sleep_ns(50000);
    }
    if (!died && !self) {
      if (!kill_at) sleep_ns(delay);
      kill(w, SIGKILL);
      wait_child(w);
    }
    int at = SH->phase;
    landed[at]++;
    /* A worker killed after its open left its pid in the lock file; the kernel dropped its flock, so the file is
     * stale and the next open takes it (platform/pci_lock.c). */
    int lf = open(lockpath, O_RDONLY);
    if (lf >= 0) {
      char buf[24] = "";
      ssize_t nr = pread(lf, buf, sizeof(buf) - 1, 0);
      bool named = nr > 0 && atoi(buf) == (int)w, free_now = flock(lf, LOCK_SH | LOCK_NB) == 0;
      stale += named && free_now;
      if (named && !free_now) {
        printf("kill %3ld: the dead worker %d still holds its lock file %s\n", k + 1, (int)w, lockpath);
        failures++;
      }
      close(lf);
    }
    wait_threads_asleep();
    pid_t c = fork();
    if (c == 0) checker(log);
    int rc = wait_child_ms(c, 120000); /* far beyond an open's few seconds: a lock left by the dead worker */
    bool ok = rc == 0, wm = has(log, "warm start"), m1 = has(log, "mode1 reset");
    /* Killed after its bring-up, the worker left SCRATCH_REG6 = 1 ("in use", am/am_boot.h): the device must not be
     * trusted, the next open resets it (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__). */
    bool must_reset = at >= PH_COPY && !died, wrong = must_reset && (wm || !m1);
    opens_ok += ok;
    warm += ok && wm;
    cold += ok && !wm;
    char how[64];
    if (kill_at) snprintf(how, sizeof(how), "write %3u/%u (%s)", kill_at, stp[target].writes, stp[target].name[step]);
    else snprintf(how, sizeof(how), "delay %.2f ms", (double)delay / 1e6);
    printf("kill %3ld: target %-15s %-34s -> killed in %-15s%s | next open: %s, %s%s%s\n", k + 1, PH_NAME[target], how,
           PH_NAME[at], died ? " (worker died first)" : "",
           ok ? "kernel and copy correct" : rc == -2 ? "HUNG (killed after 120 s)" : "FAILED", wm ? "warm" : "cold", m1 ? " (mode1 reset)" : "",
           wrong ? " WRONG: a device left in use must be reset" : "");
    if (!ok || died || wrong) {
      failures++;
      dump(log);
    }
    if (rc == -2) { /* the device lock is held for ever: nothing later can open it */
      printf("kill: stopping: the device stays locked by the dead worker\n");
      break;
    }
  }
  unlink(log);
  printf("kill: kills per phase:");
  for (int ph = PH_COLD; ph < PH_N; ph++) printf(" %s %u;", PH_NAME[ph], landed[ph]);
  printf("\nkill: opens OK %u/%ld, cold boots %u, warm boots %u; stale lock files of a dead worker taken over: %u\n",
         opens_ok, kills, cold, warm, stale);
  for (int ph = PH_COLD; ph <= PH_KERNEL; ph++)
    if (!landed[ph] && kills >= 8) {
      printf("kill: no kill landed in %s\n", PH_NAME[ph]);
      failures++;
    }
  printf("kill: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
#endif
}
