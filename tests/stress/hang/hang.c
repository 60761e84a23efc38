/* tests/stress/hang/hang.c: hangs and faults recovered in place on the emulated AMD GPU (issue 15).
 *
 * Usage: stress-hang [N] [IFACE...]   (N per kind, default 3; IFACE MOCKPCI and/or MOCKUSB, default both)
 *
 * For each interface it opens IFACE+AMD once and, N times per kind, injects a hang or fault, waits for the device to
 * report it (bg_dev_synchronize must return -BG_EHANG naming a queue; the USB stall excepted, see below), recovers
 * with bg_dev_recover on the same open device, then runs add1 and checks every element. Kinds:
 *   infinite-loop  a kernel spinning on a flag that never changes: the progress check (BG_HANG_CHECK_MS) finds the
 *                  compute queue's read pointer standing at the dispatch; recovery dequeues the HQD, which stops
 *                  the waves (CP_HQD_DEQUEUE_REQUEST)
 *   wild-store     a kernel storing 1 TiB past its buffer: a GPU page fault (interrupt), the address reported
 *   sdma-fault     a copy into an unmapped range: an SDMA page fault; recovery resets the SDMA engine
 *   doorbell-drop  the GPU loses the next doorbell write (mock plugin inject "doorbell-drop"): the compute queue has
 *                  work and a met wait at its read pointer that it never passes
 *   hqd-stuck      an endless kernel on an HQD whose CP ignores the dequeue request (inject "hqd-stuck"): the queue
 *                  reset fails after its 1 s dequeue wait and recovery falls back to a mode1 reset in place (the
 *                  device's count of mode1 recoveries must grow; no other kind may use one)
 *   usb-stall      MOCKUSB only: the bridge stalls the next bulk transfer (inject "usb-stall", implemented with the
 *                  USB transport's recovery in usb/): the add1 run that meets the stall either succeeds (the
 *                  transport recovered) or fails and bg_dev_recover clears the error; add1 must then give the right
 *                  result, and the transport's count of recovered batches must have grown (the stall was met)
 * Output per interface and kind: recovered/total, detection and recovery times (min/median/p90/max ms; recovery =
 * bg_dev_recover + the checking add1 run). Exit status 1 when any injection was not detected as required, not
 * recovered, or a result was wrong; 2 on bad usage or when the device cannot be opened. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_dev.h"
#include "am/am_hcq.h"
#include "baregpu/hcq.h"
#include "compile/llvm_amdgpu.h"
#include "hcq/memmap.h"
#include "hcq/dev_internal.h"
#include "platform/mock_plugin.h"
#include "usb/asm24.h"
#include "usb/usb_pci.h"
#include "usb/usb_transport.h"
#include "util/clock.h"

/* add1(out, in): out[i] = in[i] + 1 (tests/mockgpu/amd_test_kernels.h, work-groups of 32). */
#include "amd_test_kernels.h"

/* spin(flag): loops while *flag == 0 (the flag stays 0: it never ends by itself). */
static const char SPIN_IR[] =
    "define amdgpu_kernel void @spin(ptr addrspace(1) %flag) {\n"
    "entry:\n"
    "  br label %loop\n"
    "loop:\n"
    "  %v = load volatile i32, ptr addrspace(1) %flag\n"
    "  %z = icmp eq i32 %v, 0\n"
    "  br i1 %z, label %loop, label %done\n"
    "done:\n"
    "  ret void\n"
    "}\n";

/* wild(out): stores 1 TiB past out, where nothing is mapped. */
static const char WILD_IR[] =
    "define amdgpu_kernel void @wild(ptr addrspace(1) %out) {\n"
    "  %p = getelementptr i8, ptr addrspace(1) %out, i64 1099511627776\n"
    "  store volatile i32 1, ptr addrspace(1) %p\n"
    "  ret void\n"
    "}\n";

enum { K_LOOP, K_WILD, K_SDMA, K_DOORBELL, K_STUCK, K_USB, NKIND };
static const char *const KIND[NKIND] = {"infinite-loop", "wild-store", "sdma-fault", "doorbell-drop", "hqd-stuck",
                                        "usb-stall"};
#define NFLOAT 64

typedef struct stats {
  unsigned total, recovered;
  double *detect, *recover; /* ms, one per recovered injection */
} stats;

typedef struct ctx {
  const char *iface;
  bg_dev *d;
  bg_program *add1, *spin, *wild;
  bg_buf *in, *out, *flag, *a;
} ctx;

static int load(ctx *c, const char *ir, const char *name, unsigned nargs, bg_program **out) {
  static const uint8_t sizes[2] = {8, 8};
  void *obj;
  size_t n;
  int r = bg_llvm_amdgpu_compile(ir, bg_dev_arch(c->d), &obj, &n);
  if (r < 0) return r;
  bg_program_info info = {name, nargs, sizes};
  r = bg_program_load(c->d, obj, n, &info, out);
  free(obj);
  return r;
}

/* add1 on the device, every element checked. 0, 1 (wrong result) or a negative error. */
static int check_add1(ctx *c) {
  float f[NFLOAT], g[NFLOAT];
  for (int i = 0; i < NFLOAT; i++) f[i] = (float)(i * 3 + 1);
  int r = bg_buf_write(c->in, 0, f, sizeof(f));
  if (r < 0) return r;
  memset(g, 0, sizeof(g));
  if ((r = bg_buf_write(c->out, 0, g, sizeof(g))) < 0) return r;
  bg_buf *bufs[2] = {c->out, c->in};
  const uint32_t gs[3] = {NFLOAT / 32, 1, 1}, ls[3] = {32, 1, 1};
  if ((r = bg_program_run(c->add1, bufs, 2, NULL, 0, gs, ls, true, NULL)) < 0) return r;
  if ((r = bg_buf_read(c->out, 0, g, sizeof(g))) < 0) return r;
  for (int i = 0; i < NFLOAT; i++)
    if (g[i] != f[i] + 1.0f) {
      fprintf(stderr, "%s: add1 after recovery: out[%d] = %g, expected %g\n", c->iface, i, (double)g[i],
              (double)(f[i] + 1.0f));
      return 1;
    }
  return 0;
}

/* A copy of 64 KiB from c->a into a range that was unmapped: the stale range of a freed buffer is put back into the
 * live-allocation map only for the submit (as tests/unit/am/test_queue_faults.c), so the copy reaches the engine. */
static int sdma_fault(ctx *c) {
  bg_buf *victim;
  int r = bg_buf_alloc(c->d, 1u << 16, 0, &victim);
  if (r < 0) return r;
  const uint64_t va = bg_buf_va(victim);
  bg_buf_free(victim);
  if ((r = bg_dev_synchronize(c->d, 0)) < 0) return r; /* retired: released, the page is unmapped */
  bg_queue *q;
  if ((r = bg_queue_new(c->d, BG_QUEUE_COPY, &q)) < 0) return r;
  if ((r = bg_memmap_add(c->d, va, 1u << 16)) < 0) {
    bg_queue_free(q);
    return r;
  }
  bg_queue_copy(q, bg_const(va), bg_addr(c->a, 0), 1u << 16);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  r = bg_queue_submit(q, NULL, 0);
  bg_memmap_remove(c->d, va);
  bg_queue_free(q);
  return r;
}

/* Start the injection of kind k; the hang shows in the synchronize that follows. */
static int inject(ctx *c, int k) {
  const uint32_t one[3] = {1, 1, 1}, l32[3] = {32, 1, 1};
  bg_buf *b1[1];
  switch (k) {
  case K_LOOP:
    b1[0] = c->flag;
    return bg_program_run(c->spin, b1, 1, NULL, 0, one, l32, false, NULL);
  case K_WILD:
    b1[0] = c->out;
    return bg_program_run(c->wild, b1, 1, NULL, 0, one, l32, false, NULL);
  case K_SDMA:
    return sdma_fault(c);
  case K_DOORBELL: {
    int r = bg_mock_plugin_inject(c->iface, 0, "doorbell-drop", 1);
    if (r < 0) return r;
    bg_buf *bufs[2] = {c->out, c->in};
    const uint32_t gs[3] = {NFLOAT / 32, 1, 1};
    return bg_program_run(c->add1, bufs, 2, NULL, 0, gs, l32, false, NULL);
  }
  case K_STUCK: { /* an endless kernel on an HQD that ignores its dequeue request: only a mode1 reset recovers */
    int r = bg_mock_plugin_inject(c->iface, 0, "hqd-stuck", 1);
    if (r < 0) return r;
    b1[0] = c->flag;
    return bg_program_run(c->spin, b1, 1, NULL, 0, one, l32, false, NULL);
  }
  default: /* K_USB */
    return bg_mock_plugin_inject(c->iface, 0, "usb-stall", 1);
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void dist(const char *what, double *v, unsigned n) {
  if (!n) {
    printf("  %s -", what);
    return;
  }
  qsort(v, n, sizeof(*v), cmp_d);
  printf("  %s min %.1f median %.1f p90 %.1f max %.1f ms", what, v[0], v[n / 2], v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1],
         v[n - 1]);
}

/* Failed bulk batches the USB transport has recovered from (usb_transport.h stats.resyncs): a stall that was never
 * met would leave it unchanged and count as recovered without having been. */
static uint64_t usb_resyncs(const ctx *c) {
  const am_hcq *h = c->d->priv;
  return bg_asm24_transport(bg_usb_pci_bridge(h->d->pci))->stats.resyncs;
}

/* One injection of kind k: 0 recovered, 1 failed (said why). */
static int inject_and_recover(ctx *c, int k, double *det_ms, double *rec_ms) {
  uint64_t resyncs = k == K_USB ? usb_resyncs(c) : 0;
  unsigned long mode1 = ((const am_hcq *)c->d->priv)->mode1_recoveries;
  uint64_t t0 = bg_now_ns();
  int r = inject(c, k);
  if (r < 0) {
    fprintf(stderr, "%s: %s: injecting: %s\n", c->iface, KIND[k], bg_last_error());
    return 1;
  }
  /* The USB stall hits the next bulk transfer: the checking add1 itself. The transport recovers it (usb/), or its
   * error latches and bg_dev_recover below clears it; either way add1 must then give the right result. */
  r = k == K_USB ? check_add1(c) : bg_dev_synchronize(c->d, 0);
  if (k == K_USB && r == 1) return 1; /* a wrong result, said why */
  uint64_t t1 = bg_now_ns();
  *det_ms = (double)(t1 - t0) / 1e6;
  if (k != K_USB) {
    if (r != -BG_EHANG) {
      fprintf(stderr, "%s: %s: synchronize returned %d, expected -BG_EHANG: %s\n", c->iface, KIND[k], r,
              r < 0 ? bg_last_error() : "(no error)");
      if (r == 0) return 1;
    } else if (!strstr(bg_last_error(), "queue")) {
      fprintf(stderr, "%s: %s: the report names no queue: %s\n", c->iface, KIND[k], bg_last_error());
      return 1;
    }
  }
  int rr = r < 0 ? bg_dev_recover(c->d) : 0;
  if (rr < 0) {
    fprintf(stderr, "%s: %s: recover: %s\n", c->iface, KIND[k], bg_last_error());
    return 1;
  }
  int ck = check_add1(c);
  *rec_ms = (double)(bg_now_ns() - t1) / 1e6;
  if (ck != 0) {
    if (ck < 0) fprintf(stderr, "%s: %s: add1 after recovery: %s\n", c->iface, KIND[k], bg_last_error());
    return 1;
  }
  unsigned long mode1_now = ((const am_hcq *)c->d->priv)->mode1_recoveries;
  if ((k == K_STUCK) != (mode1_now != mode1)) {
    fprintf(stderr, "%s: %s: recovery %s a mode1 reset\n", c->iface, KIND[k], k == K_STUCK ? "did not fall back to" : "used");
    return 1;
  }
  if (k == K_USB && usb_resyncs(c) == resyncs) {
    fprintf(stderr, "%s: %s: the transport recovered from no stalled transfer (stats.resyncs unchanged)\n", c->iface,
            KIND[k]);
    return 1;
  }
  return r != -BG_EHANG && k != K_USB ? 1 : 0;
}

static int run_iface(const char *iface, unsigned n, stats st[NKIND]) {
  ctx c = {.iface = iface};
  char dev[32];
  snprintf(dev, sizeof(dev), "%s+AMD", iface);
  int r = bg_dev_open(dev, &c.d);
  if (r < 0) {
    fprintf(stderr, "%s: %s\n", dev, bg_last_error());
    return 2;
  }
  if ((r = load(&c, AMD_TEST_ADD1_IR, "add1", 2, &c.add1)) < 0 || (r = load(&c, SPIN_IR, "spin", 1, &c.spin)) < 0 ||
      (r = load(&c, WILD_IR, "wild", 1, &c.wild)) < 0 || (r = bg_buf_alloc(c.d, 4 * NFLOAT, 0, &c.in)) < 0 ||
      (r = bg_buf_alloc(c.d, 4 * NFLOAT, 0, &c.out)) < 0 || (r = bg_buf_alloc(c.d, 4096, BG_BUF_ZERO, &c.flag)) < 0 ||
      (r = bg_buf_alloc(c.d, 1u << 16, 0, &c.a)) < 0 || (r = check_add1(&c)) != 0) {
    fprintf(stderr, "%s: set-up: %s\n", dev, r < 0 ? bg_last_error() : "add1 gave a wrong result");
    bg_dev_close(c.d);
    return 2;
  }
  int bad = 0;
  for (int k = 0; k < NKIND; k++) {
    if (k == K_USB && strcmp(iface, "MOCKUSB") != 0) continue;
    for (unsigned i = 0; i < n; i++) {
      double det = 0, rec = 0;
      int o = inject_and_recover(&c, k, &det, &rec);
      st[k].total++;
      if (o == 0) {
        st[k].detect[st[k].recovered] = det;
        st[k].recover[st[k].recovered++] = rec;
      } else {
        bad = 1;
        if (bg_dev_recover(c.d) < 0) { /* leave a usable device for the next kinds when possible */
          fprintf(stderr, "%s: giving up: %s\n", dev, bg_last_error());
          k = NKIND;
          break;
        }
      }
    }
  }
  bg_program_free(c.add1);
  bg_program_free(c.spin);
  bg_program_free(c.wild);
  bg_buf_free(c.in);
  bg_buf_free(c.out);
  bg_buf_free(c.flag);
  bg_buf_free(c.a);
  bg_dev_close(c.d);
  return bad;
}

int main(int argc, char **argv) {
  unsigned n = 3;
  int argi = 1;
  if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9') {
    char *end;
    long v = strtol(argv[1], &end, 10);
    if (*end || v < 1 || v > 100000) {
      fprintf(stderr, "stress-hang: N must be 1..100000, not '%s'\n", argv[1]);
      return 2;
    }
    n = (unsigned)v;
    argi = 2;
  }
  const char *def[2] = {"MOCKPCI", "MOCKUSB"};
  const char *const *ifs = argi < argc ? (const char *const *)argv + argi : def;
  int nif = argi < argc ? argc - argi : 2;
  int status = 0;
  for (int i = 0; i < nif; i++) {
    if (strcmp(ifs[i], "MOCKPCI") != 0 && strcmp(ifs[i], "MOCKUSB") != 0) {
      fprintf(stderr, "stress-hang: interface '%s': expected MOCKPCI or MOCKUSB\n", ifs[i]);
      return 2;
    }
    stats st[NKIND];
    memset(st, 0, sizeof(st));
    for (int k = 0; k < NKIND; k++) {
      st[k].detect = calloc(n, sizeof(double));
      st[k].recover = calloc(n, sizeof(double));
      if (!st[k].detect || !st[k].recover) {
        fprintf(stderr, "stress-hang: out of memory\n");
        return 2;
      }
    }
    int r = run_iface(ifs[i], n, st);
    if (r == 2) return 2;
    status |= r;
    printf("%s+AMD (%u per kind):\n", ifs[i], n);
    for (int k = 0; k < NKIND; k++) {
      if (k != K_USB || strcmp(ifs[i], "MOCKUSB") == 0) {
        printf("  %-14s recovered %u/%u", KIND[k], st[k].recovered, st[k].total);
        dist("detect", st[k].detect, st[k].recovered);
        dist("recover", st[k].recover, st[k].recovered);
        printf("\n");
        if (st[k].recovered != st[k].total) status = 1;
      }
      free(st[k].detect);
      free(st[k].recover);
    }
  }
  fflush(stdout);
  return status;
}
