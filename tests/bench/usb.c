/* tests/bench/usb.c: bench-usb [N]: USB transfers, bytes and round trips per kernel-launch-sized queue submit
 * (ring bytes + wptr + doorbell) and per MiB copied in and out, over the emulated ASM24 bridge, printed beside
 * the fewest the protocol allows (reference hcq_usb_sys.md 1.4, 1.9, 1.10) and tinygrad's figure. The counts
 * are what a real bridge would see (the transport counts them); the MB/s are the emulator's, host-bound, and
 * only show that the pipelines do not stall. Figures only, no timed assertions. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd_gpu.h"
#include "asm24.h"
#include "baregpu/error.h"
#include "mock_sysfs.h"
#include "usb/usb_pci.h"

#define RING_BYTES 128u       /* a PM4 dispatch with its setup packets (launch-sized) */
#define TINYGRAD_XFERS_PER_LAUNCH 178

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

static int die(const char *what) {
  fprintf(stderr, "bench-usb: %s: %s\n", what, bg_last_error());
  return 1;
}

/* n submits: ring bytes and wptr through a view of BAR0 mapped with wc, then the doorbell-like uncached write. */
static int submits(bg_pci_dev *d, unsigned flags, unsigned n, uint32_t db_reg, double per[3]) {
  bg_mmio vram, mmio;
  if (bg_pci_map_bar(d, 0, 0, 0, flags, &vram) < 0 || bg_pci_map_bar(d, 5, 0, 0, 0, &mmio) < 0) return -1;
  bg_usb_transport *t = bg_asm24_transport(bg_usb_pci_bridge(d));
  uint8_t ring[RING_BYTES];
  memset(ring, 0xA5, sizeof(ring));
  bg_usb_stats s0 = t->stats;
  int r = 0;
  uint64_t wptr = 0;
  for (unsigned i = 0; i < n && r == 0; i++) {
    uint64_t at = 0x100000 + (wptr * 4) % 0x2000;  /* a 0x2000-byte ring, as on USB (reference 1.9) */
    wptr += RING_BYTES / 4;
    r = bg_mmio_write(&vram, at, ring, sizeof(ring));
    if (r == 0) r = bg_mmio_wr64(&vram, 0x200000, wptr);
    if (r == 0) r = bg_mmio_wr32(&mmio, db_reg * 4ull, (uint32_t)wptr);
  }
  per[0] = (double)(xfers(&t->stats) - xfers(&s0)) / n;
  per[1] = (double)(bytes(&t->stats) - bytes(&s0)) / n;
  per[2] = (double)(t->stats.round_trips - s0.round_trips) / n;
  bg_pci_unmap_bar(d, &vram);
  bg_pci_unmap_bar(d, &mmio);
  return r;
}

static int copies(bg_pci_dev *d, size_t mib, bool in, double per[4]) {
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
  return r;
}

int main(int argc, char **argv) {
  unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1000;
  if (!n) n = 1;
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
  double wc[3], uc[3], cin[4], cout[4];
  if (submits(d, BG_PCI_MAP_WC, n, db, wc) < 0 || submits(d, 0, n, db, uc) < 0) return die("submit");
  if (copies(d, mib, true, cin) < 0 || copies(d, mib, false, cout) < 0) return die("copy");
  printf("bench-usb: %u submits of %u ring bytes + 8-byte wptr + doorbell; %zu MiB copies (emulated ASM24 bridge)\n",
         n, RING_BYTES, mib);
  printf("%-34s %12s %14s %12s\n", "per queue submit", "transfers", "bytes on wire", "round trips");
  printf("%-34s %12.1f %14.1f %12.2f\n", "batched (VRAM mapped WC)", wc[0], wc[1], wc[2]);
  printf("%-34s %12.1f %14.1f %12.2f\n", "unbatched (every write flushed)", uc[0], uc[1], uc[2]);
  printf("%-34s %12d %14u %12d\n", "fewest (3 runs x F0 + bulk)", 6, 3 * 12 + RING_BYTES + 8 + 4, 1);
  printf("%-34s %12d %14s %12s\n", "tinygrad (per launch)", TINYGRAD_XFERS_PER_LAUNCH, "-", "-");
  printf("%-34s %12s %14s %12s %10s\n", "per MiB copied", "transfers", "bytes on wire", "round trips", "MB/s*");
  printf("%-34s %12.2f %14.0f %12.2f %10.0f\n", "copy in (1 MiB streams, 4 in flight)", cin[0], cin[1], cin[2], cin[3]);
  printf("%-34s %12.2f %14.0f %12.2f %10.0f\n", "copy out", cout[0], cout[1], cout[2], cout[3]);
  printf("%-34s %12.2f %14.0f %12s %10s\n", "fewest (one stream per copy)", 2.0 / (double)mib,
         1048576.0 + 12.0 / (double)mib, "<1", "-");
  printf("%-34s %12.2f %14.0f %12s %10s\n", "SRAM path (512 KiB per 0xF2 arm)", 4.0, 1048576.0, "-", "323**");
  printf("*emulator, host-bound; **tinygrad's measured copy-in on hardware (reference 1.10)\n");
  bg_pci_close(d);
  unsigned nf = mock_asm24_nfail(br) + mock_amd_nfail(g);
  mock_asm24_free(br);
  mock_amd_free(g);
  mock_sysfs_free(tree);
  if (nf) fprintf(stderr, "bench-usb: the emulated hardware recorded %u failures\n", nf);
  return nf ? 1 : 0;
}
