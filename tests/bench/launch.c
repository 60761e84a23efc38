/* tests/bench/launch.c: host nanoseconds per kernel launch of an empty kernel.
 * (a) fresh: record wait/exec/signal into a queue, lower it and submit, every launch;
 * (b) replay: re-submit one recorded queue program with a changed argument (patches only).
 * Prints both and their ratio; tinygrad's figure for a replayed launch (~150 us, from the issue)
 * is printed beside them for scale. Usage: bench-launch [DEV] [launches]
 *
 * The kernel is C for the CPU device and LLVM IR compiled for the device's arch otherwise (AMD). Host time is
 * wall time minus the time spent in the submit's two register writes (HDP flush and doorbell: on MOCKPCI+AMD these
 * are the emulator's hooks, which take its device lock and wake its engine threads); the submitting thread's CPU
 * time (CLOCK_THREAD_CPUTIME_ID) is printed beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am_hcq.h"
#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

static const char *empty_ir =
    "define amdgpu_kernel void @empty(ptr addrspace(1) %a) {\n"
    "  ret void\n"
    "}\n";

static const char *empty_src =
    "#include <stdint.h>\n"
    "void empty(const void *a, const uint32_t g[3], const uint32_t s[3], const uint32_t l[3]) {\n"
    "  (void)a; (void)g; (void)s; (void)l;\n"
    "}\n";

static uint64_t clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static uint64_t cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* Time spent in the HDP flush + doorbell writes of submits so far (AMD devices; 0 elsewhere). */
static uint64_t kick_ns(bg_dev *d) {
  if (strcmp(d->ops->kind, "AMD") != 0) return 0;
  const am_hcq *h = d->priv;
  uint64_t t = 0;
  for (int k = 0; k < 2; k++)
    if (h->q[k]) t += h->q[k]->kick_ns;
  return t;
}

/* The empty kernel's binary for the device: a shared object for the host, a code object for a GPU arch. */
static int build_kernel(bg_dev *d, void **bin, size_t *sz) {
  if (strcmp(bg_dev_arch(d), "host") == 0) return bg_compile_c(empty_src, "", bin, sz);
#if BG_HAVE_LLVM
  return bg_llvm_amdgpu_compile(empty_ir, bg_dev_arch(d), bin, sz);
#else
  (void)empty_ir;
  return bg_error(BG_ENOTSUP, "no LLVM in this build: no kernel for %s", bg_dev_arch(d));
#endif
}

#define TRY(x) do { if ((x) < 0) { fprintf(stderr, "bench-launch: %s: %s\n", #x, bg_last_error()); exit(1); } } while (0)

typedef struct launch_ns { double fresh, replay; } launch_ns;

/* Both measurements on one device, printed; *out gets the host ns per launch. */
static void bench_dev(const char *devname, int n, launch_ns *out) {
  const int batch = 500; /* synchronize between batches, outside the timed region */
  bg_dev *d;
  TRY(bg_dev_open(devname, &d));
  void *so;
  size_t sz;
  TRY(build_kernel(d, &so, &sz));
  static const uint8_t sizes[] = {8};
  bg_program_info info = {"empty", 1, sizes};
  bg_program *p;
  TRY(bg_program_load(d, so, sz, &info, &p));
  free(so);
  bg_buf *buf;
  TRY(bg_buf_alloc(d, 4096, 0, &buf));
  bg_val one[3] = {bg_const(1), bg_const(1), bg_const(1)};

  /* (a) fresh recording per launch */
  bg_queue *q;
  TRY(bg_queue_new(d, BG_QUEUE_COMPUTE, &q));
  uint64_t fresh_ns = 0, fresh_cpu = 0, fresh_db = 0;
  for (int i = 0; i < n; i += batch) {
    uint64_t t0 = now_ns(), c0 = cpu_ns(), b0 = kick_ns(d);
    for (int k = 0; k < batch; k++) {
      bg_queue_reset(q);
      bg_val arg = bg_addr(buf, (uint64_t)(k % 64) * 8);
      bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
      bg_queue_exec(q, p, &arg, 1, one, one);
      bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
      TRY(bg_queue_submit(q, NULL, 0));
    }
    fresh_ns += now_ns() - t0;
    fresh_cpu += cpu_ns() - c0;
    fresh_db += kick_ns(d) - b0;
    TRY(bg_dev_synchronize(d, 0));
  }

  /* (b) one recorded program, re-submitted with a changed argument */
  bg_queue_reset(q);
  bg_val arg = bg_var(q, 0, "buf", 0, UINT64_MAX);
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_exec(q, p, &arg, 1, one, one);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  uint64_t replay_ns = 0, replay_cpu = 0, replay_db = 0;
  for (int i = 0; i < n; i += batch) {
    uint64_t t0 = now_ns(), c0 = cpu_ns(), b0 = kick_ns(d);
    for (int k = 0; k < batch; k++) {
      uint64_t v = bg_buf_va(buf) + (uint64_t)(k % 64) * 8;
      TRY(bg_queue_submit(q, &v, 1));
    }
    replay_ns += now_ns() - t0;
    replay_cpu += cpu_ns() - c0;
    replay_db += kick_ns(d) - b0;
    TRY(bg_dev_synchronize(d, 0));
  }
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);

  /* Host time: wall time minus the HDP flush + doorbell writes (the emulator's hooks on MOCKPCI). */
  double fresh = (double)(fresh_ns - fresh_db) / n, replay = (double)(replay_ns - replay_db) / n;
  printf("launch bench on %s, %d launches each (empty kernel, host time only)\n", bg_dev_name(d), n);
  printf("  %-44s %10.0f ns/launch  (wall %.0f, HDP flush + doorbell %.0f, thread CPU %.0f)\n",
         "fresh record + lower + submit", fresh, (double)fresh_ns / n, (double)fresh_db / n, (double)fresh_cpu / n);
  printf("  %-44s %10.0f ns/launch  (wall %.0f, HDP flush + doorbell %.0f, thread CPU %.0f; %zu patches, %zu applied "
         "per submit)\n", "re-submit recorded program, new argument", replay, (double)replay_ns / n, (double)replay_db / n,
         (double)replay_cpu / n, st.npatches, st.patches_applied_last);
  printf("  %-44s %10.2fx\n", "fresh / re-submit", fresh / replay);
  printf("  %-44s %10.0f ns/launch  (%.0fx ours)\n", "tinygrad replayed launch (issue's figure)", 150000.0, 150000.0 / replay);
  bg_queue_free(q);
  bg_buf_free(buf);
  bg_program_free(p);
  bg_dev_close(d);
  *out = (launch_ns){fresh, replay};
}

int main(int argc, char **argv) {
  const char *devname = argc > 1 ? argv[1] : NULL;
  int n = argc > 2 ? atoi(argv[2]) : 20000;
  launch_ns dev, cpu;
  bench_dev(devname, n, &dev);
  if (devname && strcmp(devname, "CPU") != 0) { /* the CPU device beside it, in the same run */
    bench_dev("CPU", n, &cpu);
    printf("%s vs CPU (host ns per launch)\n", devname);
    printf("  %-44s %10.0f vs %.0f  (CPU / %s = %.2fx)\n", "fresh record + lower + submit", dev.fresh, cpu.fresh, devname,
           cpu.fresh / dev.fresh);
    printf("  %-44s %10.0f vs %.0f  (CPU / %s = %.2fx)\n", "re-submit recorded program", dev.replay, cpu.replay, devname,
           cpu.replay / dev.replay);
  }
  return 0;
}
