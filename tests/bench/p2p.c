/* tests/bench/p2p.c: bench-p2p [DEV,DEV] [MAX_MIB]: GB/s of bg_buf_transfer between two devices, peer-to-peer (the
 * source's copy queue writing the destination's memory through its BAR) beside staged through pinned host memory
 * (device -> host and host -> device copies overlapped) for the same sizes, the same devices and the same run, with
 * their ratio. Default devices: the two emulated GPUs on one emulated bus (MOCKPCI+AMD:0,MOCKPCI+AMD:1 with
 * MOCKGPU_COUNT=2); on a real multi-GPU machine name them (AMD:0,AMD:1). Where P2P is impossible the P2P column says
 * why. Each row: transfers repeated until 64 MiB or 3 transfers have gone, timed from the first call to the source's
 * synchronize after the last (a P2P transfer returns before its copy ends). Figures only, no timed assertions. On
 * the emulator both columns are host-bound (its SDMA engine copies with memcpy): the ratio shows the cost of the
 * staging hops, not PCIe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "hcq/dev_internal.h"
#include "util/clock.h"

static double run(bg_buf *dst, bg_buf *src, uint64_t n, bool staged, bool *p2p, char *why, size_t whyn) {
  uint64_t reps = (64u << 20) / n;
  if (reps < 3) reps = 3;
  if (reps > 2000) reps = 2000;
  bg_peer_set_staged_only(staged);
  bg_transfer_info ti;
  uint64_t t0 = bg_now_ns();
  for (uint64_t i = 0; i < reps; i++)
    if (bg_buf_transfer(dst, 0, src, 0, n) < 0) {
      fprintf(stderr, "bench-p2p: transfer of %llu bytes: %s\n", (unsigned long long)n, bg_last_error());
      bg_peer_set_staged_only(false);
      return -1;
    }
  bg_transfer_last(&ti);
  if (bg_dev_synchronize(bg_buf_dev(src), 0) < 0 || bg_buf_read(dst, 0, &(char){0}, 1) < 0) {
    fprintf(stderr, "bench-p2p: %s\n", bg_last_error());
    bg_peer_set_staged_only(false);
    return -1;
  }
  uint64_t t1 = bg_now_ns();
  bg_peer_set_staged_only(false);
  *p2p = ti.p2p;
  snprintf(why, whyn, "%s", ti.why);
  return (double)(n * reps) / (double)(t1 - t0); /* bytes per ns = GB/s */
}

int main(int argc, char **argv) {
  const char *list = argc > 1 ? argv[1] : "MOCKPCI+AMD:0,MOCKPCI+AMD:1";
  long max_mib = argc > 2 ? strtol(argv[2], NULL, 10) : 32;
  if (max_mib < 1 || max_mib > 4096) {
    fprintf(stderr, "usage: bench-p2p [DEV,DEV] [MAX_MIB 1..4096]: \"%s\" is not a size in MiB\n", argv[2]);
    return 2;
  }
  if (strstr(list, "MOCK")) setenv("MOCKGPU_COUNT", "2", 0); /* two emulated GPUs on the bus */
  char names[2][48] = {"", ""};
  const char *comma = strchr(list, ',');
  if (!comma || (size_t)(comma - list) >= sizeof names[0] || strlen(comma + 1) >= sizeof names[1]) {
    fprintf(stderr, "bench-p2p: \"%s\": want two devices, DEV,DEV\n", list);
    return 2;
  }
  memcpy(names[0], list, (size_t)(comma - list));
  snprintf(names[1], sizeof names[1], "%s", comma + 1);
  bg_dev *d[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++)
    if (bg_dev_open(names[i], &d[i]) < 0) {
      printf("bench-p2p: %s not present: %s (skipped)\n", names[i], bg_last_error());
      if (i) bg_dev_close(d[0]);
      return 77;
    }
  uint64_t maxn = (uint64_t)max_mib << 20;
  bg_buf *src = NULL, *dst = NULL;
  if (bg_buf_alloc(d[0], maxn, 0, &src) < 0 || bg_buf_alloc(d[1], maxn, 0, &dst) < 0) {
    fprintf(stderr, "bench-p2p: %s\n", bg_last_error());
    return 1;
  }
  uint8_t *init = calloc(1, maxn);
  if (!init || bg_buf_write(src, 0, init, maxn) < 0) {
    fprintf(stderr, "bench-p2p: initializing the source: %s\n", init ? bg_last_error() : "out of host memory");
    return 1;
  }
  free(init);
  char why[160] = "";
  bool can = bg_dev_can_p2p(d[0], d[1], why, sizeof why);
  printf("bench-p2p: %s -> %s, %s%s%s\n", bg_dev_name(d[0]), bg_dev_name(d[1]),
         can ? "peer-to-peer possible" : "no peer-to-peer: ", can ? "" : why, "");
  printf("| bytes | P2P GB/s | staged GB/s | P2P / staged |\n|---:|---:|---:|---:|\n");
  int rc = 0;
  for (uint64_t n = 4096; n <= maxn && rc == 0; n *= 4) {
    bool p2p = false, st = false;
    char w1[160], w2[160];
    double g1 = can ? run(dst, src, n, false, &p2p, w1, sizeof w1) : 0;
    double g2 = run(dst, src, n, true, &st, w2, sizeof w2);
    if (g1 < 0 || g2 < 0) {
      rc = 1;
      break;
    }
    if (can && !p2p) printf("| %llu | (staged: %s) | %.3f | - |\n", (unsigned long long)n, w1, g2);
    else if (can) printf("| %llu | %.3f | %.3f | %.2f |\n", (unsigned long long)n, g1, g2, g1 / g2);
    else printf("| %llu | - | %.3f | - |\n", (unsigned long long)n, g2);
    printf("figures: bytes=%llu p2p_gbs=%.4f staged_gbs=%.4f\n", (unsigned long long)n, can && p2p ? g1 : 0.0, g2);
    if (n * 4 > maxn && n != maxn) n = maxn / 4; /* the largest size is always measured */
  }
  bg_buf_free(src);
  bg_buf_free(dst);
  bg_dev_close(d[0]);
  bg_dev_close(d[1]);
  return rc;
}
