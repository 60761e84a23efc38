/* tests/bench/usb.c: bench-usb [N [LATENCY_US]]: USB transfers, bytes, caller waits and sequential USB transactions
 * on the critical path (usb/usb_transport.h bg_usb_stats: no transfer is handed to the host before every earlier one
 * on another endpoint completed, so a stream costs two steps) per kernel-launch-sized queue submit (ring bytes + wptr
 * + doorbell) and per MiB copied in and out, over the emulated ASM24 bridge (its endpoints serviced in a seeded
 * random order), with the latency that critical path gives at LATENCY_US per transaction (default 125 us: one
 * microframe of completion-to-next-submission turnaround), beside the fewest the protocol allows with that ordering
 * rule (tinygrad tinygrad/runtime/support/usb.py ASM24Controller; tinygrad tinygrad/runtime/ops_amd.py USBIface) and
 * tinygrad's figure. "waits" is what the previous, batched driver counted as round trips. Then the same
 * through the real HCQ path on MOCKUSB+AMD (bg_dev_open; the plugin's GPU behind its bridge): a recorded kernel
 * launch (wait, exec, signal; LLVM builds only, else wait + signal) re-submitted with bg_queue_submit, and
 * bg_buf_write/read. The counts are what a real bridge would see (the transport counts them); the MB/s and us are
 * the emulator's, host-bound (its engines' execution time is shown to be subtracted), and only show that the
 * pipelines do not stall. Figures only, no timed assertions. The "fewest" rows are computed from the protocol and
 * the tinygrad rows are quoted (source beside each), not measured in this run; the output says so. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am_query.h"
#include "amd_gpu.h"
#include "amd_test_kernels.h"
#include "asm24.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "platform/mock_plugin.h"
#include "mock_sysfs.h"
#include "usb/usb_pci.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif
#include "util/clock.h"

#define RING_BYTES 128u       /* a PM4 dispatch with its setup packets (launch-sized) */
/* Quoted, not measured: baregpu issue 7 (tinygrad writes the ring a dword at a time: 178 transfers, 89 round trips
 * per kernel launch). */
#define TINYGRAD_XFERS_PER_LAUNCH 178
/* tinygrad's transfers are synchronous (libusb_control_transfer, libusb_bulk_transfer): each one is a step. */
#define TINYGRAD_STEPS_PER_LAUNCH 178

static double lat_us = 125.0; /* per sequential transaction */
static double lat_ms(double steps) { return steps * lat_us / 1e3; }

static double now_s(void) { return (double)bg_now_ns() * 1e-9; }

static uint64_t xfers(const bg_usb_stats *s) {
  uint64_t n = 0;
  for (int k = 0; k < BG_USB_NKINDS; k++) n += s->xfers[k];
  return n;
}

static uint64_t bytes(const bg_usb_stats *s) {
  uint64_t n = 0;
  for (int k = 0; k < BG_USB_NKINDS; k++) n += s->bytes[k];
  return n;
}

/* The transport's round-trip count, read through a call: submit and synchronize change it behind the pointer. */
static uint64_t round_trips(const bg_usb_transport *t) { return t->stats.round_trips; }

static int die(const char *what) {
  fprintf(stderr, "bench-usb: %s: %s\n", what, bg_last_error());
  return 1;
}

/* n submits: ring bytes and wptr through a view of BAR0 mapped with wc, then the doorbell-like uncached write. */
/* per[]: transfers, bytes, waits, sequential transactions (critical path) per submit. */
static int submits(bg_pci_dev *d, unsigned flags, unsigned n, uint32_t db_reg, double per[4]) {
  bg_mmio vram, mmio;
  if (bg_pci_map_bar(d, 0, 0, 0, flags, &vram) < 0 || bg_pci_map_bar(d, 5, 0, 0, 0, &mmio) < 0) return -1;
  bg_usb_transport *t = bg_asm24_transport(bg_usb_pci_bridge(d));
  uint8_t ring[RING_BYTES];
  memset(ring, 0xA5, sizeof(ring));
  bg_usb_stats s0 = t->stats;
  int r = 0;
  uint64_t wptr = 0;
  for (unsigned i = 0; i < n && r == 0; i++) {
    uint64_t at = 0x100000 + (wptr * 4) % 0x2000;  /* a 0x2000-byte ring, as on USB (tinygrad tinygrad/runtime/ops_amd.py USBIface) */
    wptr += RING_BYTES / 4;
    r = bg_mmio_write(&vram, at, ring, sizeof(ring));
    if (r == 0) r = bg_mmio_wr64(&vram, 0x200000, wptr);
    if (r == 0) r = bg_mmio_wr32(&mmio, db_reg * 4ull, (uint32_t)wptr);
  }
  per[0] = (double)(xfers(&t->stats) - xfers(&s0)) / n;
  per[1] = (double)(bytes(&t->stats) - bytes(&s0)) / n;
  per[2] = (double)(t->stats.round_trips - s0.round_trips) / n;
  per[3] = (double)(t->stats.critical - s0.critical) / n;
  bg_pci_unmap_bar(d, &vram);
  bg_pci_unmap_bar(d, &mmio);
  return r;
}

/* per[]: transfers, bytes, waits per MiB, MB/s (emulator), sequential transactions per MiB. */
static int copies(bg_pci_dev *d, size_t mib, bool in, double per[5]) {
  bg_asm24 *b = bg_usb_pci_bridge(d);
  bg_usb_transport *t = bg_asm24_transport(b);
  bg_pci_bar bar0;
  if (bg_pci_bar_info(d, 0, &bar0) < 0) return -1;
  size_t n = mib << 20;
  uint8_t *buf = malloc(n);
  if (!buf) return -1;
  memset(buf, 0x3C, n);
  bg_usb_stats s0 = t->stats;
  double t0 = now_s();
  int r = in ? bg_asm24_copy_in(b, bar0.base, buf, n, NULL, NULL) : bg_asm24_copy_out(b, bar0.base, buf, n, NULL, NULL);
  double secs = now_s() - t0;
  free(buf);
  per[0] = (double)(xfers(&t->stats) - xfers(&s0)) / (double)mib;
  per[1] = (double)(bytes(&t->stats) - bytes(&s0)) / (double)mib;
  per[2] = (double)(t->stats.round_trips - s0.round_trips) / (double)mib;
  per[3] = (double)n / 1e6 / secs;
  per[4] = (double)(t->stats.critical - s0.critical) / (double)mib;
  return r;
}

/* ---------------- through the HCQ path: MOCKUSB+AMD ---------------- */

#if BG_HAVE_LLVM
static const char *add1_ir =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "define amdgpu_kernel void @add1(ptr addrspace(1) %out, ptr addrspace(1) %in) {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %pi = getelementptr float, ptr addrspace(1) %in, i32 %l\n"
    "  %v = load float, ptr addrspace(1) %pi\n"
    "  %r = fadd float %v, 1.0\n"
    "  %po = getelementptr float, ptr addrspace(1) %out, i32 %l\n"
    "  store float %r, ptr addrspace(1) %po\n"
    "  ret void\n"
    "}\n";
#endif

#if BG_HAVE_LLVM
/* An empty kernel; the loop kernel is amd_test_kernels.h AMD_TEST_SPIN_IR. */
static const char *empty_ir = "define amdgpu_kernel void @empty(ptr addrspace(1) %out, i32 %n) {\n  ret void\n}\n";
#endif

static bg_usb_transport *dev_transport(bg_dev *d) {
  return bg_asm24_transport(bg_usb_pci_bridge(bg_am_query_pci(bg_am_query_of(d))));
}

/* Record the launch into q (exec when LLVM is built in); *what names it. */
static int record_launch(bg_dev *d, bg_queue *q, bg_buf *buf, bg_program **prg, const char **what) {
  *prg = NULL;
  *what = "wait + signal (no LLVM in this build)";
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
#if BG_HAVE_LLVM
  void *obj;
  size_t n;
  static const uint8_t sizes[2] = {8, 8};
  bg_program_info info = {"add1", 2, sizes};
  if (bg_llvm_amdgpu_compile(add1_ir, bg_dev_arch(d), &obj, &n) < 0) return -1;
  int r = bg_program_load(d, obj, n, &info, prg);
  free(obj);
  if (r < 0) return r;
  bg_val args[2] = {bg_addr(buf, 0), bg_addr(buf, 0)};
  bg_val g[3] = {bg_const(1), bg_const(1), bg_const(1)}, l[3] = {bg_const(32), bg_const(1), bg_const(1)};
  bg_queue_exec(q, *prg, args, 2, g, l);
  *what = "wait + exec + signal";
#else
  (void)d, (void)buf;
#endif
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  return 0;
}

/* per[]: transfers, bytes, waits per submit; host us per launch (submit + sync); emulator engine us per launch; waits
 * per synchronize (signal polls); sequential transactions per submit and per synchronize. */
static int hcq_launches(bg_dev *d, unsigned n, double per[8], const char **what) {
  bg_usb_transport *t = dev_transport(d);
  bg_buf *buf;
  bg_queue *q;
  bg_program *prg = NULL;
  int r = bg_buf_alloc(d, 32 * 4, BG_BUF_ZERO, &buf);
  if (r < 0) return r;
  if ((r = bg_queue_new(d, BG_QUEUE_COMPUTE, &q)) < 0) return r;
  if ((r = record_launch(d, q, buf, &prg, what)) == 0 && (r = bg_queue_submit(q, NULL, 0)) == 0)
    r = bg_dev_synchronize(d, 0); /* lowering and the first patches are not steady state */
  uint64_t xf = 0, by = 0, rt = 0, sync_rt = 0, cp = 0, sync_cp = 0, e0 = bg_mock_plugin_exec_ns();
  double t0 = now_s();
  for (unsigned i = 0; i < n && r == 0; i++) {
    bg_usb_stats s0 = t->stats;
    r = bg_queue_submit(q, NULL, 0);
    bg_usb_stats s1 = t->stats;
    xf += xfers(&s1) - xfers(&s0), by += bytes(&s1) - bytes(&s0), rt += s1.round_trips - s0.round_trips;
    cp += s1.critical - s0.critical;
    if (r == 0) r = bg_dev_synchronize(d, 0);
    sync_rt += t->stats.round_trips - s1.round_trips;
    sync_cp += t->stats.critical - s1.critical;
  }
  double secs = now_s() - t0;
  per[0] = (double)xf / n, per[1] = (double)by / n, per[2] = (double)rt / n;
  per[3] = secs * 1e6 / n, per[4] = (double)(bg_mock_plugin_exec_ns() - e0) / 1e3 / n, per[5] = (double)sync_rt / n;
  per[6] = (double)cp / n, per[7] = (double)sync_cp / n;
  float out[32];
  if (r == 0 && prg && (r = bg_buf_read(buf, 0, out, sizeof(out))) == 0 && out[0] != (float)(n + 1))
    r = bg_error(BG_EIO, "the kernel ran %.0f times, expected %u", (double)out[0], n + 1);
  bg_queue_free(q);
  bg_program_free(prg);
  bg_buf_free(buf);
  return r;
}

#if BG_HAVE_LLVM
/* n synchronizes of kernel `name` with iters iterations, each after its submit (replayed): per[0] waits per
 * synchronize (signal polls + the fault check), per[1] per submit, per[2] us per synchronize, per[3] sequential
 * transactions per synchronize. */
static int hcq_syncs(bg_dev *d, const char *ir, const char *name, uint32_t iters, unsigned n, double per[4]) {
  bg_usb_transport *t = dev_transport(d);
  void *obj;
  size_t sz;
  static const uint8_t sizes[2] = {8, 4};
  bg_program_info info = {name, 2, sizes};
  bg_program *p = NULL;
  bg_buf *buf = NULL;
  bg_queue *q = NULL;
  int r = bg_llvm_amdgpu_compile(ir, bg_dev_arch(d), &obj, &sz);
  if (r < 0) return r;
  r = bg_program_load(d, obj, sz, &info, &p);
  free(obj);
  if (r == 0) r = bg_buf_alloc(d, 32 * 4, BG_BUF_ZERO, &buf);
  if (r == 0) r = bg_queue_new(d, BG_QUEUE_COMPUTE, &q);
  if (r == 0) {
    bg_val args[2] = {bg_addr(buf, 0), bg_const(iters)};
    bg_val g[3] = {bg_const(1), bg_const(1), bg_const(1)}, l[3] = {bg_const(32), bg_const(1), bg_const(1)};
    bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
    bg_queue_exec(q, p, args, 2, g, l);
    bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
    if ((r = bg_queue_submit(q, NULL, 0)) == 0) r = bg_dev_synchronize(d, 0); /* lowering, first patches */
  }
  uint64_t rt = 0, srt = 0, ns = 0, cp = 0;
  for (unsigned i = 0; i < n && r == 0; i++) {
    uint64_t r0 = round_trips(t);
    r = bg_queue_submit(q, NULL, 0);
    uint64_t r1 = round_trips(t), c1 = t->stats.critical, t0 = bg_now_ns();
    if (r == 0) r = bg_dev_synchronize(d, 0);
    ns += bg_now_ns() - t0, srt += r1 - r0, rt += round_trips(t) - r1, cp += t->stats.critical - c1;
  }
  per[0] = (double)rt / n, per[1] = (double)srt / n, per[2] = (double)ns / 1e3 / n, per[3] = (double)cp / n;
  bg_queue_free(q);
  bg_buf_free(buf);
  bg_program_free(p);
  return r;
}

/* The round trips of a synchronize side by side: an empty kernel, and a loop kernel calibrated to run >= 64 round
 * trips (a signal read, the fastest of 8). */
static int sync_section(bg_dev *d, unsigned n) {
  bg_signal *s;
  int r = bg_signal_new(d, 0, &s);
  if (r < 0) return r;
  uint64_t v, rtt = UINT64_MAX;
  for (int i = 0; i < 8 && r == 0; i++) {
    uint64_t t0 = bg_now_ns();
    r = bg_signal_value(s, &v);
    if (bg_now_ns() - t0 < rtt) rtt = bg_now_ns() - t0;
  }
  bg_signal_free(s);
  double e[4], l[4] = {0, 0, 0, 0};
  if (r == 0) r = hcq_syncs(d, empty_ir, "empty", 0, n, e);
  uint32_t iters = 4096;
  while (r == 0 && (r = hcq_syncs(d, AMD_TEST_SPIN_IR, "spin", iters, 4, l)) == 0 && l[2] * 1e3 < 64.0 * (double)rtt &&
         iters < (1u << 24))
    iters *= 2;
  unsigned nl = n > 50 ? 50 : n; /* long kernels: fewer runs */
  if (r == 0) r = hcq_syncs(d, AMD_TEST_SPIN_IR, "spin", iters, nl, l);
  if (r < 0) return r;
  printf("%-34s %12s %12s %10s %14s %12s\n", "per synchronize (bg_dev_synchronize)", "waits", "sequential", "ms at L",
         "us per sync*", "waits/submit");
  printf("%-34s %12.2f %12.2f %10.3f %14.1f %12.2f   (%u runs)\n", "empty kernel", e[0], e[3], lat_ms(e[3]), e[2], e[1],
         n);
  printf("%-34s %12.2f %12.2f %10.3f %14.1f %12.2f   (%u runs; loop of %u, %.0f round trips of %.1f us)\n",
         "loop kernel", l[0], l[3], lat_ms(l[3]), l[2], l[1], nl, iters, l[2] * 1e3 / (double)rtt, (double)rtt / 1e3);
  printf("%-34s %12s %12s %10s %14s %12s\n", "aim (issue 16)", "<= 2", "-", "-", "-", "1");
  return 0;
}
#endif

static int hcq_copies(bg_dev *d, size_t mib, bool in, double per[5]) {
  bg_usb_transport *t = dev_transport(d);
  size_t n = mib << 20;
  bg_buf *b;
  uint8_t *host = malloc(n);
  if (!host) return bg_error(BG_ENOMEM, "bench buffer");
  memset(host, 0x5A, n);
  int r = bg_buf_alloc(d, n, 0, &b);
  if (r < 0) {
    free(host);
    return r;
  }
  if (!in) r = bg_buf_write(b, 0, host, n);
  bg_usb_stats s0 = t->stats;
  double t0 = now_s();
  if (r == 0) r = in ? bg_buf_write(b, 0, host, n) : bg_buf_read(b, 0, host, n);
  double secs = now_s() - t0;
  per[0] = (double)(xfers(&t->stats) - xfers(&s0)) / (double)mib;
  per[1] = (double)(bytes(&t->stats) - bytes(&s0)) / (double)mib;
  per[2] = (double)(t->stats.round_trips - s0.round_trips) / (double)mib;
  per[3] = (double)n / 1e6 / secs;
  per[4] = (double)(t->stats.critical - s0.critical) / (double)mib;
  bg_buf_free(b);
  free(host);
  return r;
}

static int hcq_section(unsigned n, size_t mib) {
  bg_dev *d;
  if (bg_dev_open("MOCKUSB+AMD", &d) < 0) return die("DEV=MOCKUSB+AMD");
  double l[8], cin[5], cout[5];
  const char *what = "";
  if (hcq_launches(d, n, l, &what) < 0 || hcq_copies(d, mib, true, cin) < 0 || hcq_copies(d, mib, false, cout) < 0) {
    bg_dev_close(d);
    return die("MOCKUSB+AMD");
  }
  printf("\nthrough the HCQ path on MOCKUSB+AMD (bg_dev_open, cold boot, %s): %u launches\n", what, n);
  printf("%-34s %10s %14s %8s %12s %10s\n", "per kernel launch (bg_queue_submit)", "transfers", "bytes on wire", "waits",
         "sequential", "ms at L");
  printf("%-34s %10.1f %14.1f %8.2f %12.2f %10.3f\n", "baregpu (kargs+ring+wptr, doorbell)", l[0], l[1], l[2], l[6],
         lat_ms(l[6]));
  /* ring and wptr streams and the 64-bit doorbell as a stream: three arms and their data */
  printf("%-34s %10d %14s %8d %12d %10.3f\n", "fewest (computed; kargs inline)", 6, "-", 1, 6, lat_ms(6));
  printf("%-34s %10d %14s %8d %12d %10.3f\n", "tinygrad (quoted***)", TINYGRAD_XFERS_PER_LAUNCH, "-",
         TINYGRAD_STEPS_PER_LAUNCH, TINYGRAD_STEPS_PER_LAUNCH, lat_ms(TINYGRAD_STEPS_PER_LAUNCH));
  printf("%-34s %10s %14s %8.2f %12.2f %10.3f   per synchronize (signal polls)\n", "", "", "", l[5], l[7], lat_ms(l[7]));
  printf("%-34s %12.1f us host per launch + sync, of which %.1f us emulated engines* (measured)\n", "", l[3], l[4]);
#if BG_HAVE_LLVM
  if (sync_section(d, n > 200 ? 200 : n) < 0) {
    bg_dev_close(d);
    return die("MOCKUSB+AMD synchronize");
  }
#endif
  printf("%-34s %10s %14s %8s %12s %10s %8s\n", "per MiB (bg_buf_write/read)", "transfers", "bytes on wire", "waits",
         "sequential", "ms at L", "MB/s*");
  printf("%-34s %10.2f %14.0f %8.2f %12.2f %10.3f %8.0f\n", "bg_buf_write", cin[0], cin[1], cin[2], cin[4],
         lat_ms(cin[4]), cin[3]);
  printf("%-34s %10.2f %14.0f %8.2f %12.2f %10.3f %8.0f\n", "bg_buf_read", cout[0], cout[1], cout[2], cout[4],
         lat_ms(cout[4]), cout[3]);
  bg_dev_close(d);
  return 0;
}

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1000;
  if (!n) n = 1;
  if (argc > 2 && (lat_us = strtod(argv[2], NULL)) <= 0) {
    fprintf(stderr, "bench-usb: LATENCY_US must be a positive number of microseconds, not %s\n", argv[2]);
    return 2;
  }
  size_t mib = n >= 1000 ? 64 : 8;
  mock_sysfs *tree = mock_sysfs_new();
  mock_amd_cfg cfg = {.chip = MOCK_AMD_GFX11, .bdf = "0000:03:00.0", .vram_size = 256ull << 20};
  mock_amd *g = tree ? mock_amd_new(tree, &cfg) : NULL;
  mock_asm24 *br = g ? mock_asm24_new(mock_amd_pci(g)) : NULL;
  if (!br) {
    fprintf(stderr, "bench-usb: cannot create the emulated GPU and bridge\n");
    return 1;
  }
  bg_pci_dev *d;
  if (bg_usb_pci_open(mock_asm24_transport(br), &d) < 0) return die("open");
  uint32_t db = mock_amd_regs(g)->scratch7;  /* stands in for the doorbell: an uncached 32-bit write */
  double wc[4], uc[4], cin[5], cout[5];
  if (submits(d, BG_PCI_MAP_WC, n, db, wc) < 0 || submits(d, 0, n, db, uc) < 0) return die("submit");
  if (copies(d, mib, true, cin) < 0 || copies(d, mib, false, cout) < 0) return die("copy");
  printf("bench-usb: %u submits of %u ring bytes + 8-byte wptr + doorbell; %zu MiB copies (emulated ASM24 bridge, "
         "host-order seed %llu); L = %.0f us per sequential USB transaction\n", n, RING_BYTES, mib,
         (unsigned long long)mock_asm24_get_seed(br), lat_us);
  printf("%-34s %10s %14s %8s %12s %10s\n", "per queue submit", "transfers", "bytes on wire", "waits", "sequential",
         "ms at L");
  printf("%-34s %10.1f %14.1f %8.2f %12.2f %10.3f\n", "batched (VRAM mapped WC)", wc[0], wc[1], wc[2], wc[3],
         lat_ms(wc[3]));
  printf("%-34s %10.1f %14.1f %8.2f %12.2f %10.3f\n", "unbatched (every write flushed)", uc[0], uc[1], uc[2], uc[3],
         lat_ms(uc[3]));
  printf("%-34s %10d %14u %8d %12d %10.3f\n", "fewest (computed; 2 streams + TLP)", 5, 3 * 12 + RING_BYTES + 8, 1, 5,
         lat_ms(5));
  printf("%-34s %10d %14s %8d %12d %10.3f\n", "tinygrad (quoted***)", TINYGRAD_XFERS_PER_LAUNCH, "-",
         TINYGRAD_STEPS_PER_LAUNCH, TINYGRAD_STEPS_PER_LAUNCH, lat_ms(TINYGRAD_STEPS_PER_LAUNCH));
  printf("%-34s %10s %14s %8s %12s %10s %8s\n", "per MiB copied", "transfers", "bytes on wire", "waits", "sequential",
         "ms at L", "MB/s*");
  printf("%-34s %10.2f %14.0f %8.2f %12.2f %10.3f %8.0f\n", "copy in (1 MiB streams, 4 queued)", cin[0], cin[1], cin[2],
         cin[4], lat_ms(cin[4]), cin[3]);
  printf("%-34s %10.2f %14.0f %8.2f %12.2f %10.3f %8.0f\n", "copy out", cout[0], cout[1], cout[2], cout[4],
         lat_ms(cout[4]), cout[3]);
  printf("%-34s %10.2f %14.0f %8s %12.2f %10s %8s\n", "fewest (computed; 1 stream/copy)", 2.0 / (double)mib,
         1048576.0 + 12.0 / (double)mib, "<1", 2.0 / (double)mib, "-", "-");
  printf("%-34s %10.2f %14.0f %8s %12s %10s %8s\n", "SRAM path (512 KiB per 0xF2 arm)", 4.0, 1048576.0, "-", "-", "-",
         "323**");
  printf("*emulator, host-bound, measured in this run; **quoted, not measured here: tinygrad's copy-in on hardware,\n"
         " tinygrad commit 3082956a17 (AMDAllocator._copyin with async arm/drain, comma hardware); ***quoted, not measured "
         "here: baregpu issue 7\n (178 synchronous transfers per launch: the ring a dword per stream); \"ms at L\": "
         "sequential x L, the wire's turnarounds only (no bandwidth term)\n");
  bg_pci_close(d);
  unsigned nf = mock_asm24_nfail(br) + mock_amd_nfail(g);
  mock_asm24_free(br);
  mock_amd_free(g);
  mock_sysfs_free(tree);
  if (nf) {
    fprintf(stderr, "bench-usb: the emulated hardware recorded %u failures\n", nf);
    return 1;
  }
  return hcq_section(n, mib);
}
