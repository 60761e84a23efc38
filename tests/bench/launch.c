/* tests/bench/launch.c: host nanoseconds per kernel launch of an empty kernel.
 * (a) fresh: record wait/exec/signal into a queue, lower it and submit, every launch;
 * (b) replay: re-submit one recorded queue program with a changed argument (patches only).
 * Usage: bench-launch [DEV] [launches]   (DEV e.g. CPU, MOCKPCI+AMD, MOCKNVK+NV, NVK+NV)
 *
 * Three figures per mode, all measured in this run and none derived from another: the host wall time per launch, the
 * submitting thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and, on an emulated GPU, the wall time the submitting thread
 * spent inside the emulator's code. Nothing is subtracted anywhere: the emulator column says how much of the wall time
 * is the emulated hardware's, it is not taken off the launch (on a real GPU the register and bridge writes of a submit
 * are part of the launch a user waits for, and there is no emulator column). On MOCKPCI+AMD the emulator is
 * reached through the BAR views its PCI hooks handed out (platform/pci_hook.h bar_map: HDP flush and doorbell writes,
 * which take the emulated device's lock and wake its engine threads); on MOCKUSB+AMD through the USB transport
 * (usb/usb_transport.h: the emulated bridge runs every transfer, and the GPU behind it, inside submit). The bench
 * times those calls at that boundary by wrapping the views' and the transport's ops (emu_wrap below); the engines'
 * own execution runs on their threads and is not in the submitting thread's wall or CPU time, while the emulator
 * code that runs on the submitting thread (its BAR and transport handlers) is in both, as on the device it stands for
 * the hardware's time is in the wall; the third column says how much wall that code took.
 *
 * On MOCKNVK+NV the emulator is reached through the system-call table the driver calls (nv/nv_sys.h: the doorbell,
 * which wakes the emulated GPU's engine, and any ioctl a submit makes); the bench times those calls by swapping the
 * device's table for a timed copy.
 *
 * The kernel is C for the CPU device, LLVM IR compiled for the device's arch on AMD, and PTX text on NVIDIA (the
 * backend makes the cubin). On a real NVIDIA GPU (NVK+NV) a reference column is measured in the same run: the same
 * empty kernel through the CUDA driver API (libcuda.so.1 loaded with dlopen: cuModuleLoadData of a cubin made with
 * compile/ptx_compile.h, cuLaunchKernel N times, cuCtxSynchronize between batches), with the ratio ours / CUDA; when
 * that is impossible the bench says the CUDA column was skipped and why. tinygrad's figure is not measured here: it
 * is printed as quoted, with its source. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am_query.h"
#include "baregpu/compile.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "compile/ptx_compile.h"
#include "hcq/backend.h"
#include "nv/nv_hcq.h"
#include "usb/usb_pci.h"
#include "util/clock.h"
#include "launch_cuda.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

/* Quoted, not measured: baregpu issue 2 ("tinygrad spends about 150 µs per replayed launch"). */
#define TINYGRAD_REPLAY_NS_QUOTED 150000.0

static const char *empty_ir =
    "define amdgpu_kernel void @empty(ptr addrspace(1) %a) {\n"
    "  ret void\n"
    "}\n";

/* The empty kernel in PTX; the header (.version introducing the target, PTX ISA "Release Notes") per sm. */
static const char *empty_ptx_fmt =
    ".version %s\n.target %s\n.address_size 64\n\n"
    ".visible .entry empty(\n\t.param .u64 .ptr .global .align 4 empty_param_0\n)\n{\n\tret;\n}\n";
static const char *const ptx_isa[][2] = {{"sm_80", "7.0"}, {"sm_86", "7.1"}, {"sm_89", "7.8"},
                                         {"sm_90", "7.8"}, {"sm_100", "8.6"}, {"sm_120", "8.7"}};

/* The empty kernel's PTX for sm ("sm_90"), malloc'd; NULL with the error set for an sm not in the table. */
static char *empty_ptx(const char *sm) {
  for (size_t i = 0; i < sizeof ptx_isa / sizeof *ptx_isa; i++) {
    if (strcmp(ptx_isa[i][0], sm) != 0) continue;
    size_t n = strlen(empty_ptx_fmt) + 32;
    char *p = malloc(n);
    if (p) snprintf(p, n, empty_ptx_fmt, ptx_isa[i][1], sm);
    else bg_error(BG_ENOMEM, "out of memory for the PTX");
    return p;
  }
  bg_error(BG_ENOTSUP, "no PTX ISA version known for %s (expected sm_80, 86, 89, 90, 100 or 120)", sm);
  return NULL;
}

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
static uint64_t cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* ---------------- time inside the emulator, measured at its boundary ---------------- */

static _Atomic uint64_t emu_ns; /* host time spent in emulator calls since emu_wrap */

/* A BAR view whose accesses the emulator's hooks serve (ops set): the original ops, called through timed ones. */
typedef struct emu_view {
  bg_mmio *view;
  bg_mmio orig;
} emu_view;

static int emu_view_read(void *ctx, uint64_t off, void *dst, size_t n) {
  const emu_view *v = ctx;
  uint64_t t0 = bg_now_ns();
  int r = v->orig.ops->read(v->orig.ctx, off, dst, n);
  atomic_fetch_add(&emu_ns, bg_now_ns() - t0);
  return r;
}
static int emu_view_write(void *ctx, uint64_t off, const void *src, size_t n) {
  const emu_view *v = ctx;
  uint64_t t0 = bg_now_ns();
  int r = v->orig.ops->write(v->orig.ctx, off, src, n);
  atomic_fetch_add(&emu_ns, bg_now_ns() - t0);
  return r;
}
static const bg_mmio_ops emu_view_ops = {emu_view_read, emu_view_write};

/* The emulated bridge's transport: poll runs the transfers (and the GPU behind the bridge); start and cancel only
 * queue and mark them. */
static bg_usb_transport *emu_xport;
static const bg_usb_transport_ops *emu_xport_orig;
static int emu_xport_start(bg_usb_transport *t, bg_usb_xfer *x) { return emu_xport_orig->start(t, x); }
static void emu_xport_cancel(bg_usb_transport *t, bg_usb_xfer *x) { emu_xport_orig->cancel(t, x); }
static int emu_xport_poll(bg_usb_transport *t) {
  uint64_t t0 = bg_now_ns();
  int r = emu_xport_orig->poll(t);
  atomic_fetch_add(&emu_ns, bg_now_ns() - t0);
  return r;
}
static void emu_xport_close(bg_usb_transport *t) { emu_xport_orig->close(t); }
static int emu_xport_clear_halt(bg_usb_transport *t, uint8_t ep) {
  return emu_xport_orig->clear_halt ? emu_xport_orig->clear_halt(t, ep) : 0;
}
static const bg_usb_transport_ops emu_xport_ops = {emu_xport_start, emu_xport_cancel, emu_xport_poll,
                                                   emu_xport_close, emu_xport_clear_halt};

/* MOCKNVK+NV: the device's system-call table, replaced by a copy whose emulator calls are timed. */
static nv_gpu *emu_nv;
static const bg_nv_sys *emu_nv_orig;
static bg_nv_sys emu_nv_sys;
static int emu_nv_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  uint64_t t0 = bg_now_ns();
  int r = emu_nv_orig->ioctl(ctx, fd, request, arg);
  atomic_fetch_add(&emu_ns, bg_now_ns() - t0);
  return r;
}
static void emu_nv_doorbell(void *ctx, volatile uint32_t *reg, uint32_t token) {
  uint64_t t0 = bg_now_ns();
  emu_nv_orig->doorbell(ctx, reg, token);
  atomic_fetch_add(&emu_ns, bg_now_ns() - t0);
}

static emu_view emu_views[3];
static size_t emu_nviews;

/* Route d's emulator calls through the timed wrappers. false for a device that is not emulated (nothing to do). */
static bool emu_wrap(bg_dev *d) {
  const char *iface = d->target.iface;
  if (strncmp(iface, "MOCK", 4) != 0) return false;
  if (strcmp(d->ops->kind, "NV") == 0) {
    nv_gpu *g = bg_nv_gpu(d);
    emu_nv = g;
    emu_nv_orig = g->sys;
    emu_nv_sys = *g->sys;
    emu_nv_sys.ioctl = emu_nv_ioctl;
    emu_nv_sys.doorbell = emu_nv_doorbell;
    g->sys = &emu_nv_sys;
    return true;
  }
  if (strcmp(d->ops->kind, "AMD") != 0) return false;
  bg_am_dev *am = bg_am_query_of(d);
  if (!am) return false;
  if (bg_am_query_is_usb(d)) { /* the BAR views are the library's bridge code; the emulator starts at the transport */
    emu_xport = bg_asm24_transport(bg_usb_pci_bridge(bg_am_query_pci(am)));
    emu_xport_orig = emu_xport->ops;
    emu_xport->ops = &emu_xport_ops;
    return true;
  }
  bg_mmio *views[3];
  bg_am_query_views(am, &views[0], &views[1], &views[2]);
  for (int k = 0; k < 3; k++) {
    if (!views[k]->ops) continue; /* a direct mapping (emulated VRAM is plain memory): no emulator code runs */
    emu_view *v = &emu_views[emu_nviews++];
    *v = (emu_view){views[k], *views[k]};
    views[k]->ops = &emu_view_ops;
    views[k]->ctx = v;
  }
  return true;
}

static void emu_unwrap(void) {
  for (size_t k = 0; k < emu_nviews; k++) *emu_views[k].view = emu_views[k].orig;
  emu_nviews = 0;
  if (emu_xport) emu_xport->ops = emu_xport_orig;
  emu_xport = NULL;
  if (emu_nv) emu_nv->sys = emu_nv_orig;
  emu_nv = NULL;
}

/* ---------------- the bench ---------------- */

/* The empty kernel's binary for the device: a shared object for the host, PTX text (NUL included) for an NVIDIA
 * arch, a code object for an AMD one. */
static int build_kernel(bg_dev *d, void **bin, size_t *sz) {
  if (strcmp(bg_dev_arch(d), "host") == 0) return bg_compile_c(empty_src, "", bin, sz);
  if (strncmp(bg_dev_arch(d), "sm_", 3) == 0) {
    char *ptx = empty_ptx(bg_dev_arch(d));
    if (!ptx) return -BG_ENOTSUP;
    *bin = ptx;
    *sz = strlen(ptx) + 1;
    return 0;
  }
#if BG_HAVE_LLVM
  return bg_llvm_amdgpu_compile(empty_ir, bg_dev_arch(d), bin, sz);
#else
  (void)empty_ir;
  return bg_error(BG_ENOTSUP, "no LLVM in this build: no kernel for %s", bg_dev_arch(d));
#endif
}

#define TRY(x) do { if ((x) < 0) { fprintf(stderr, "bench-launch: %s: %s\n", #x, bg_last_error()); exit(1); } } while (0)

/* Totals of one mode over n launches: wall, the submitting thread's CPU, wall inside the emulator. */
typedef struct launch_t { uint64_t wall, cpu, emu; } launch_t;
/* Per launch, both modes (ns). */
typedef struct launch_ns { double fresh, replay, fresh_cpu, replay_cpu, fresh_emu, replay_emu; } launch_ns;

static void print_mode(const char *what, const launch_t *t, int n, bool emulated) {
  double wall = (double)t->wall / n, emu = (double)t->emu / n, cpu = (double)t->cpu / n;
  if (emulated) printf("  %-40s %10.0f %12.0f %12.0f\n", what, wall, cpu, emu);
  else printf("  %-40s %10.0f %12.0f\n", what, wall, cpu);
}

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
  bg_queue *q;
  TRY(bg_queue_new(d, BG_QUEUE_COMPUTE, &q)); /* creates the hardware queue: its views exist from here */
  bool emulated = emu_wrap(d);

  /* (a) fresh recording per launch */
  launch_t fresh = {0, 0, 0};
  for (int i = 0; i < n; i += batch) {
    uint64_t t0 = bg_now_ns(), c0 = cpu_ns(), e0 = atomic_load(&emu_ns);
    for (int k = 0; k < batch; k++) {
      bg_queue_reset(q);
      bg_val arg = bg_addr(buf, (uint64_t)(k % 64) * 8);
      bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
      bg_queue_exec(q, p, &arg, 1, one, one);
      bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
      TRY(bg_queue_submit(q, NULL, 0));
    }
    fresh.wall += bg_now_ns() - t0;
    fresh.cpu += cpu_ns() - c0;
    fresh.emu += atomic_load(&emu_ns) - e0;
    TRY(bg_dev_synchronize(d, 0));
  }

  /* (b) one recorded program, re-submitted with a changed argument */
  bg_queue_reset(q);
  bg_val arg = bg_var(q, 0, "buf", 0, UINT64_MAX);
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_exec(q, p, &arg, 1, one, one);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  launch_t replay = {0, 0, 0};
  for (int i = 0; i < n; i += batch) {
    uint64_t t0 = bg_now_ns(), c0 = cpu_ns(), e0 = atomic_load(&emu_ns);
    for (int k = 0; k < batch; k++) {
      uint64_t v = bg_buf_va(buf) + (uint64_t)(k % 64) * 8;
      TRY(bg_queue_submit(q, &v, 1));
    }
    replay.wall += bg_now_ns() - t0;
    replay.cpu += cpu_ns() - c0;
    replay.emu += atomic_load(&emu_ns) - e0;
    TRY(bg_dev_synchronize(d, 0));
  }
  emu_unwrap();
  bg_queue_stats st;
  bg_queue_get_stats(q, &st);

  n = (n + batch - 1) / batch * batch; /* launches actually timed */
  printf("launch bench on %s, %d launches each (empty kernel, ns per launch)\n", bg_dev_name(d), n);
  if (emulated) printf("  %-40s %10s %12s %12s\n", "", "wall", "thread CPU", "in emulator");
  else printf("  %-40s %10s %12s\n", "", "wall", "thread CPU");
  print_mode("fresh record + lower + submit", &fresh, n, emulated);
  print_mode("re-submit recorded program, new arg", &replay, n, emulated);
  printf("  %-40s %zu patches, %zu applied per submit\n", "", st.npatches, st.patches_applied_last);
  launch_ns r = {(double)fresh.wall / n, (double)replay.wall / n, (double)fresh.cpu / n, (double)replay.cpu / n,
                 (double)fresh.emu / n, (double)replay.emu / n};
  /* each ratio divides a column by the same column */
  printf("  %-40s %9.2fx %11.2fx", "fresh / re-submit", r.fresh / r.replay, r.fresh_cpu / r.replay_cpu);
  if (emulated) printf(" %11.2fx", r.fresh_emu / r.replay_emu);
  printf("\n");
  printf("  %-40s %10.0f   quoted wall, not measured (baregpu issue 2; tests/bench/vs-tinygrad.sh measures it): "
         "%.0fx this run's re-submit wall\n", "tinygrad replayed launch", TINYGRAD_REPLAY_NS_QUOTED,
         TINYGRAD_REPLAY_NS_QUOTED / r.replay);
  bg_queue_free(q);
  bg_buf_free(buf);
  bg_program_free(p);
  bg_dev_close(d);
  /* The figures are only what they say if the emulator's calls were seen: a submit on an emulated GPU always writes
   * its doorbell (MOCKPCI) or sends transfers (MOCKUSB). */
  if (emulated && (fresh.emu == 0 || replay.emu == 0)) {
    fprintf(stderr, "bench-launch: %s: no time measured inside the emulator: its boundary was missed, the emulator column "
                    "would be wrong\n", devname);
    exit(1);
  }
  *out = r;
}

/* The CUDA driver API column for a real NVIDIA device: measured before baregpu's (so it is printed even when ours
 * fails), with its own context, destroyed before baregpu opens the GPU for the bench. *ref->ran false: skipped. */
static void cuda_column(const char *devname, int n, cuda_ref *ref) {
  memset(ref, 0, sizeof *ref);
  bg_dev *d;
  TRY(bg_dev_open(devname, &d));
  bool nv = strcmp(d->ops->kind, "NV") == 0, mock = strncmp(d->target.iface, "MOCK", 4) == 0;
  char arch[32], bdf[16] = "";
  snprintf(arch, sizeof arch, "%s", bg_dev_arch(d));
  if (nv && !mock) snprintf(bdf, sizeof bdf, "%s", bg_nv_gpu(d)->bdf);
  bg_dev_close(d);
  if (!nv) {
    snprintf(ref->why, sizeof ref->why, "%s is not an NVIDIA device", devname);
    return;
  }
  if (mock) {
    snprintf(ref->why, sizeof ref->why, "%s is emulated (the CUDA driver runs real GPUs only)", devname);
    return;
  }
  char *ptx = empty_ptx(arch);
  if (!ptx) {
    snprintf(ref->why, sizeof ref->why, "%s", bg_last_error());
    return;
  }
  cuda_launch_ref(ptx, "empty", (unsigned)strtoul(arch + 3, NULL, 10), bdf, n, 500, ref);
  free(ptx);
  if (ref->ran) printf("CUDA driver API %d.%d on %s: %.0f host ns per cuLaunchKernel of the empty kernel (%s)\n",
                       ref->driver / 1000, ref->driver % 1000 / 10, devname, ref->ns, ref->image);
}

int main(int argc, char **argv) {
  const char *devname = argc > 1 ? argv[1] : NULL;
  char *end = NULL;
  long n = argc > 2 ? strtol(argv[2], &end, 10) : 20000;
  if (argc > 3 || (end && (*end || end == argv[2])) || n < 1 || n > 100000000) {
    fprintf(stderr, "usage: bench-launch [DEV] [launches: 1..100000000]\n");
    return 2;
  }
  /* The emulated AMD GPU's HDP model (tests/mockgpu/amd_hdp.h) tracks the driver's BAR0 stores with page faults
   * taken inside those stores, which the emulator-time wrap below cannot separate from the driver's own work; real
   * hardware takes no fault there. So the bench runs it coherent unless MOCKGPU_HDP says otherwise, and says so. */
  if (devname && strstr(devname, "MOCK") && setenv("MOCKGPU_HDP", getenv("MOCKGPU_HDP") ? getenv("MOCKGPU_HDP") : "coherent", 1) == 0)
    printf("emulated GPU: MOCKGPU_HDP=%s (the HDP model's write faults are not the driver's cost)\n", getenv("MOCKGPU_HDP"));
  launch_ns dev, cpu;
  cuda_ref cuda = {.ran = false};
  bool nv_dev = devname && (strstr(devname, "NV") != NULL);
  if (nv_dev) cuda_column(devname, (int)n, &cuda);
  bench_dev(devname, (int)n, &dev);
  if (devname && strcmp(devname, "CPU") != 0) { /* the CPU device beside it, in the same run */
    bench_dev("CPU", (int)n, &cpu);
    printf("%s vs CPU (ns per launch, both measured in this run; wall vs wall, thread CPU vs thread CPU)\n", devname);
    printf("  %-40s %10.0f vs %-8.0f (%s / CPU = %.2fx)\n", "fresh, wall", dev.fresh, cpu.fresh, devname, dev.fresh / cpu.fresh);
    printf("  %-40s %10.0f vs %-8.0f (%s / CPU = %.2fx)\n", "fresh, thread CPU", dev.fresh_cpu, cpu.fresh_cpu, devname,
           dev.fresh_cpu / cpu.fresh_cpu);
    printf("  %-40s %10.0f vs %-8.0f (%s / CPU = %.2fx)\n", "re-submit, wall", dev.replay, cpu.replay, devname,
           dev.replay / cpu.replay);
    printf("  %-40s %10.0f vs %-8.0f (%s / CPU = %.2fx)\n", "re-submit, thread CPU", dev.replay_cpu, cpu.replay_cpu, devname,
           dev.replay_cpu / cpu.replay_cpu);
  }
  if (nv_dev && cuda.ran) {
    printf("%s vs the CUDA driver API (host ns per launch, both measured in this run)\n", devname);
    printf("  %-40s %10.0f vs %.0f  (ours / CUDA = %.2fx)\n", "fresh record + lower + submit", dev.fresh, cuda.ns,
           dev.fresh / cuda.ns);
    printf("  %-40s %10.0f vs %.0f  (ours / CUDA = %.2fx)\n", "re-submit recorded program", dev.replay, cuda.ns,
           dev.replay / cuda.ns);
  } else if (nv_dev) {
    printf("CUDA column skipped: %s\n", cuda.why);
  }
  /* One line for scripts (tests/device/nv-check): this run's figures, host ns per launch. */
  printf("figures: dev=%s fresh_ns=%.0f resubmit_ns=%.0f fresh_cpu_ns=%.0f resubmit_cpu_ns=%.0f", devname ? devname : "default",
         dev.fresh, dev.replay, dev.fresh_cpu, dev.replay_cpu);
  if (dev.fresh_emu > 0) printf(" fresh_emu_ns=%.0f resubmit_emu_ns=%.0f", dev.fresh_emu, dev.replay_emu);
  if (devname && strcmp(devname, "CPU") != 0)
    printf(" cpu_fresh_ns=%.0f cpu_resubmit_ns=%.0f cpu_fresh_cpu_ns=%.0f cpu_resubmit_cpu_ns=%.0f", cpu.fresh, cpu.replay,
           cpu.fresh_cpu, cpu.replay_cpu);
  if (cuda.ran) printf(" cuda_ns=%.0f ours_fresh_over_cuda=%.2f ours_resubmit_over_cuda=%.2f", cuda.ns, dev.fresh / cuda.ns,
                       dev.replay / cuda.ns);
  printf("\n");
  return 0;
}
