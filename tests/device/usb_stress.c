/* tests/device/usb_stress.c: usb-stress DEV [OPS [COPY_MIB [LAUNCHES]]]: the ordering stress of a GPU behind an ASM24
 * bridge (DEV = USB+AMD on a real enclosure, MOCKUSB+AMD on the emulated one), for tests/device/usb-check.
 *
 * 1. OPS random operations, each checked byte for byte against a host copy of the buffer: writes and reads of random
 *    sizes (1 byte to 3 MiB) at random offsets (partial dwords at both ends, bodies of every length), a write
 *    followed at once by a read of what it wrote, and kernel launches (add1 in place: each element + 1, when LLVM is
 *    built in) between them, so stream arms, their data, single TLPs, reads and doorbells meet in every order the
 *    driver can produce them. On a real host controller this is the test of usb/usb_order.c's rule.
 * 2. A copy of COPY_MIB MiB in and out, bit-exact, with MB/s each way.
 * 3. LAUNCHES kernel launches each followed by a synchronize: wall us per launch + sync, and per launch the USB
 *    transfers, caller waits and sequential transactions on the critical path (bg_usb_stats).
 * Prints "figures:" lines (key=value) for usb-check; exit 0 when every check passed, 1 otherwise, 2 on usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_query.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "bg_config.h"
#include "usb/asm24.h"
#include "usb/usb_pci.h"
#include "util/clock.h"
#if BG_HAVE_LLVM
#include "compile/llvm_amdgpu.h"
#endif

static const char *add1_ir =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "define amdgpu_kernel void @add1(ptr addrspace(1) %buf, i32 %n) {\n"
    "  %l = call i32 @llvm.amdgcn.workitem.id.x()\n"
    "  %g = call i32 @llvm.amdgcn.workgroup.id.x()\n"
    "  %b = mul i32 %g, 64\n"
    "  %i = add i32 %b, %l\n"
    "  %in = icmp ult i32 %i, %n\n"
    "  br i1 %in, label %go, label %done\n"
    "go:\n"
    "  %p = getelementptr i32, ptr addrspace(1) %buf, i32 %i\n"
    "  %v = load i32, ptr addrspace(1) %p\n"
    "  %r = add i32 %v, 1\n"
    "  store i32 %r, ptr addrspace(1) %p\n"
    "  br label %done\n"
    "done:\n"
    "  ret void\n"
    "}\n";

static uint64_t rng = 0x5eed;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int fail(const char *what) {
  fprintf(stderr, "usb-stress: %s: %s\n", what, bg_last_error());
  return 1;
}

static bg_usb_transport *transport(bg_dev *d) {
  return bg_asm24_transport(bg_usb_pci_bridge(bg_am_query_pci(bg_am_query_of(d))));
}

typedef struct kernel {
  bg_program *p;
  bg_queue *q;
} kernel;

/* add1 over the first n dwords of buf, waited for. */
static int launch(bg_dev *d, kernel *k, bg_buf *buf, uint32_t n) {
  if (!k->p) return 0;
  bg_val args[2] = {bg_addr(buf, 0), bg_const(n)};
  bg_val g[3] = {bg_const((n + 63) / 64), bg_const(1), bg_const(1)}, l[3] = {bg_const(64), bg_const(1), bg_const(1)};
  bg_queue_wait(k->q, bg_timeline_addr(k->q), bg_timeline_value(k->q, -1));
  bg_queue_exec(k->q, k->p, args, 2, g, l);
  bg_queue_signal(k->q, bg_timeline_addr(k->q), bg_timeline_value(k->q, 0));
  int r = bg_queue_submit(k->q, NULL, 0);
  if (r == 0) r = bg_dev_synchronize(d, 0);
  if (r == 0) bg_queue_reset(k->q);
  return r;
}

static int load_kernel(bg_dev *d, kernel *k) {
  k->p = NULL;
  int r = bg_queue_new(d, BG_QUEUE_COMPUTE, &k->q);
  if (r < 0) return r;
#if BG_HAVE_LLVM
  void *obj;
  size_t n;
  static const uint8_t sizes[2] = {8, 4};
  bg_program_info info = {"add1", 2, sizes};
  if ((r = bg_llvm_amdgpu_compile(add1_ir, bg_dev_arch(d), &obj, &n)) < 0) return r;
  r = bg_program_load(d, obj, n, &info, &k->p);
  free(obj);
#else
  (void)add1_ir;
#endif
  return r;
}

static int stress(bg_dev *d, kernel *k, unsigned ops) {
  const size_t size = 8u << 20, maxn = 3u << 20;
  uint8_t *ref = malloc(size), *tmp = malloc(maxn);
  bg_buf *b;
  if (!ref || !tmp || bg_buf_alloc(d, size, 0, &b) < 0) {
    free(ref);
    free(tmp);
    return fail("8 MiB buffer");
  }
  for (size_t i = 0; i < size; i++) ref[i] = (uint8_t)rnd();
  int r = bg_buf_write(b, 0, ref, size);
  unsigned counts[4] = {0, 0, 0, 0};
  for (unsigned i = 0; i < ops && r == 0; i++) {
    unsigned kind = (unsigned)(rnd() % 8);
    size_t n = rnd() % 16 == 0 ? (size_t)(rnd() % maxn) + 1 : (size_t)(rnd() % 4096) + 1;
    size_t off = (size_t)(rnd() % (size - n));
    if (kind < 3) { /* write, then read it back at once */
      for (size_t j = 0; j < n; j++) ref[off + j] = (uint8_t)rnd();
      if ((r = bg_buf_write(b, off, ref + off, n)) == 0 && (r = bg_buf_read(b, off, tmp, n)) == 0 &&
          memcmp(tmp, ref + off, n) != 0)
        r = bg_error(BG_EIO, "op %u: %zu bytes written at %zu read back different", i, n, off);
      counts[0]++;
    } else if (kind < 6) { /* read */
      if ((r = bg_buf_read(b, off, tmp, n)) == 0 && memcmp(tmp, ref + off, n) != 0)
        r = bg_error(BG_EIO, "op %u: %zu bytes read at %zu differ", i, n, off);
      counts[1]++;
    } else if (kind < 7) { /* write only */
      for (size_t j = 0; j < n; j++) ref[off + j] = (uint8_t)rnd();
      r = bg_buf_write(b, off, ref + off, n);
      counts[2]++;
    } else if (k->p) { /* the kernel over the first dwords */
      uint32_t nd = (uint32_t)(rnd() % 4096) + 1;
      if ((r = launch(d, k, b, nd)) == 0)
        for (uint32_t j = 0; j < nd; j++) {
          uint32_t v;
          memcpy(&v, ref + 4 * j, 4);
          v++;
          memcpy(ref + 4 * j, &v, 4);
        }
      counts[3]++;
    }
  }
  if (r == 0 && (r = bg_buf_read(b, 0, tmp, maxn)) == 0 && memcmp(tmp, ref, maxn) != 0)
    r = bg_error(BG_EIO, "the final read of the first 3 MiB differs");
  bg_buf_free(b);
  free(ref);
  free(tmp);
  if (r < 0) return fail("ordering stress");
  printf("figures: stress_ops=%u write_read=%u reads=%u writes=%u stress_launches=%u\n", ops, counts[0], counts[1],
         counts[2], counts[3]);
  return 0;
}

static int big_copy(bg_dev *d, size_t mib) {
  size_t n = mib << 20;
  uint8_t *src = malloc(n), *dst = malloc(n);
  bg_buf *b;
  if (!src || !dst || bg_buf_alloc(d, n, 0, &b) < 0) {
    free(src);
    free(dst);
    return fail("copy buffer");
  }
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rnd();
    memcpy(src + i, &v, n - i < 8 ? n - i : 8);
  }
  uint64_t t0 = bg_now_ns();
  int r = bg_buf_write(b, 0, src, n);
  uint64_t t1 = bg_now_ns();
  if (r == 0) r = bg_buf_read(b, 0, dst, n);
  uint64_t t2 = bg_now_ns();
  if (r == 0 && memcmp(src, dst, n) != 0) r = bg_error(BG_EIO, "the %zu MiB copy came back different", mib);
  bg_buf_free(b);
  free(src);
  free(dst);
  if (r < 0) return fail("big copy");
  printf("figures: copy_mib=%zu in_mbs=%.1f out_mbs=%.1f\n", mib, (double)n / 1e6 / ((double)(t1 - t0) * 1e-9),
         (double)n / 1e6 / ((double)(t2 - t1) * 1e-9));
  return 0;
}

static int launches(bg_dev *d, kernel *k, unsigned n) {
  if (!k->p) {
    printf("figures: launches_skipped=no_LLVM_in_this_build\n");
    return 0;
  }
  bg_buf *b;
  if (bg_buf_alloc(d, 256, BG_BUF_ZERO, &b) < 0) return fail("launch buffer");
  bg_usb_transport *t = transport(d);
  int r = launch(d, k, b, 64); /* first lowering is not steady state */
  bg_usb_stats s0 = t->stats;
  uint64_t t0 = bg_now_ns();
  for (unsigned i = 0; i < n && r == 0; i++) r = launch(d, k, b, 64);
  uint64_t ns = bg_now_ns() - t0;
  uint32_t v = 0;
  if (r == 0 && (r = bg_buf_read(b, 0, &v, 4)) == 0 && v != n + 1)
    r = bg_error(BG_EIO, "the kernel ran %u times, expected %u", v, n + 1);
  bg_buf_free(b);
  if (r < 0) return fail("launches");
  uint64_t xf = 0;
  for (int i = 0; i < BG_USB_NKINDS; i++) xf += t->stats.xfers[i] - s0.xfers[i];
  printf("figures: launches=%u us_per_launch_sync=%.1f transfers_per_launch=%.2f waits_per_launch=%.2f "
         "sequential_per_launch=%.2f\n", n, (double)ns / 1e3 / n, (double)xf / n,
         (double)(t->stats.round_trips - s0.round_trips) / n, (double)(t->stats.critical - s0.critical) / n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || strstr(argv[1], "USB") == NULL) {
    fprintf(stderr, "usage: usb-stress DEV [OPS [COPY_MIB [LAUNCHES]]]  (DEV: USB+AMD or MOCKUSB+AMD)\n");
    return 2;
  }
  unsigned ops = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 2000;
  size_t mib = argc > 3 ? (size_t)strtoul(argv[3], NULL, 0) : 1024;
  unsigned nl = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 1000;
  if (!mib || !nl) {
    fprintf(stderr, "usb-stress: COPY_MIB and LAUNCHES must be positive\n");
    return 2;
  }
  bg_dev *d;
  if (bg_dev_open(argv[1], &d) < 0) return fail(argv[1]);
  kernel k;
  int rc = load_kernel(d, &k) < 0 ? fail("add1") : 0;
  if (rc == 0) rc = stress(d, &k, ops);
  if (rc == 0) rc = big_copy(d, mib);
  if (rc == 0) rc = launches(d, &k, nl);
  bg_program_free(k.p);
  bg_queue_free(k.q);
  bg_dev_close(d);
  return rc;
}
