/* tests/bench/load.c: bench-load [MiB] [--mock-mib N] [--usb-mib N]: GB/s of loading a file (default 1 GiB, written
 * in BG_BENCH_DIR or /tmp and removed afterwards) side by side:
 *   - read() of the cached file into host memory (the page cache's speed), pread into host memory warm and cold;
 *   - bg_tn_from_file to CPU: io_uring with O_DIRECT (the default), io_uring and pread through the page cache, warm
 *     and cold (posix_fadvise DONTNEED before: the file's pages dropped);
 *   - bg_tn_from_file to MOCKPCI+AMD (copy queue) and MOCKUSB+AMD (bg_buf_write over the emulated bridge): the
 *     emulated GPU has 512 MiB of VRAM and its engines and bridge run in software, so they get smaller files
 *     (--mock-mib, default 256; --usb-mib, default 64) and the output says so.
 * Figures only, no assertions on them (tests/bench/README.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/tensor.h"
#include "tensor/tload.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char path[512];

static void drop_cache(void) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

static void warm(uint8_t *buf, uint64_t bytes) {
  int fd = open(path, O_RDONLY);
  for (uint64_t o = 0; fd >= 0 && o < bytes;) {
    ssize_t r = read(fd, buf, bytes - o < (1u << 20) ? bytes - o : (1u << 20));
    if (r <= 0) break;
    o += (uint64_t)r;
  }
  if (fd >= 0) close(fd);
}

static void row(const char *what, uint64_t bytes, double secs, const char *note) {
  printf("%-44s %6llu  %7.2f  %s\n", what, (unsigned long long)(bytes >> 20), secs > 0 ? (double)bytes / secs / 1e9 : 0.0,
         note ? note : "");
  fflush(stdout);
}

/* read() (step 1 MiB) or pread (step: the loader's chunk) of bytes into host memory. */
static double host_read(uint8_t *buf, uint64_t bytes, bool use_pread) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  uint64_t step = use_pread ? (4u << 20) : (1u << 20);
  double t0 = now();
  for (uint64_t o = 0; o < bytes;) {
    uint64_t n = bytes - o < step ? bytes - o : step;
    ssize_t r = use_pread ? pread(fd, buf + o, n, (off_t)o) : read(fd, buf + o, n);
    if (r <= 0) {
      close(fd);
      return -1;
    }
    o += (uint64_t)r;
  }
  double t = now() - t0;
  close(fd);
  return t;
}

/* bg_tn_from_file of the first `bytes` bytes on dev (a fresh context each time): seconds, or < 0 (printed). */
static double load(const char *dev, uint64_t bytes, bool use_pread, bool direct, bool cold, bg_load_stats *st) {
  bg_tctx *c;
  if (bg_tctx_open(dev, &c) < 0) {
    printf("  (%s: %s)\n", dev, bg_last_error());
    return -1;
  }
  t_load_force_pread = use_pread;
  t_load_no_direct = !direct;
  if (cold) drop_cache();
  const int64_t shape[1] = {(int64_t)bytes};
  double t0 = now();
  bg_tensor *x = bg_tn_from_file(c, path, 0, BG_UINT8, 1, shape);
  double t = now() - t0;
  (void)x;
  if (bg_tctx_error(c)) {
    printf("  (%s: %s)\n", dev, bg_tctx_error(c));
    t = -1;
  }
  bg_tctx_load_stats(c, st);
  bg_tctx_close(c);
  return t;
}

static void load_row(const char *label, const char *dev, uint64_t bytes, bool use_pread, bool direct, bool cold) {
  bg_load_stats st;
  double t = load(dev, bytes, use_pread, direct, cold, &st);
  char note[160];
  snprintf(note, sizeof note, "%s%s, %llu reads, up to %llu in flight", st.used_uring ? "io_uring" : "pread",
           st.used_direct ? " O_DIRECT" : "", (unsigned long long)st.reads, (unsigned long long)st.max_inflight);
  if (t >= 0) row(label, bytes, t, note);
}

int main(int argc, char **argv) {
  uint64_t mib = 1024, mock_mib = 256, usb_mib = 64;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mock-mib") && i + 1 < argc) mock_mib = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--usb-mib") && i + 1 < argc) usb_mib = strtoull(argv[++i], NULL, 0);
    else if (argv[i][0] != '-' && strtoull(argv[i], NULL, 0) > 0) mib = strtoull(argv[i], NULL, 0);
    else {
      fprintf(stderr, "usage: bench-load [MiB (default 1024)] [--mock-mib N (default 256)] [--usb-mib N (default 64)]\n");
      return 2;
    }
  }
  if (mock_mib > mib) mock_mib = mib;
  if (usb_mib > mib) usb_mib = mib;
  uint64_t bytes = mib << 20;
  const char *d = getenv("BG_BENCH_DIR") && *getenv("BG_BENCH_DIR") ? getenv("BG_BENCH_DIR") : "/tmp";
  char dirp[400];
  snprintf(dirp, sizeof dirp, "%s/bg-bench-load-XXXXXX", d);
  if (!mkdtemp(dirp)) {
    fprintf(stderr, "bench-load: mkdtemp %s: %s\n", dirp, strerror(errno));
    return 1;
  }
  snprintf(path, sizeof path, "%s/data.bin", dirp);
  uint8_t *buf = malloc(bytes);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!buf || fd < 0) {
    fprintf(stderr, "bench-load: %s\n", !buf ? "out of memory" : strerror(errno));
    return 1;
  }
  uint32_t x = 12345;
  for (uint64_t i = 0; i < bytes / 4; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    memcpy(buf + 4 * i, &x, 4);
  }
  int rc = 0;
  for (uint64_t o = 0; o < bytes;) {
    ssize_t w = write(fd, buf + o, bytes - o < (64u << 20) ? bytes - o : (64u << 20));
    if (w <= 0) {
      fprintf(stderr, "bench-load: writing %s: %s\n", path, strerror(errno));
      rc = 1;
      break;
    }
    o += (uint64_t)w;
  }
  fsync(fd);
  close(fd);
  if (!rc) {
    printf("bench-load: %llu MiB file %s (chunk 4 MiB, 4 staging buffers, 8 reads in flight)\n",
           (unsigned long long)mib, path);
    printf("%-44s %6s  %7s  %s\n", "path", "MiB", "GB/s", "how");
    warm(buf, bytes);
    row("read() page cache -> host memory", bytes, host_read(buf, bytes, false), "warm, 1 MiB reads");
    row("pread -> host memory (warm)", bytes, host_read(buf, bytes, true), "4 MiB reads");
    drop_cache();
    row("pread -> host memory (cold)", bytes, host_read(buf, bytes, true), "4 MiB reads, DONTNEED before");
    free(buf);
    buf = NULL;
    load_row("from_file CPU io_uring O_DIRECT", "CPU", bytes, false, true, false);
    load_row("from_file CPU io_uring O_DIRECT (cold)", "CPU", bytes, false, true, true);
    load_row("from_file CPU io_uring page cache (warm)", "CPU", bytes, false, false, false);
    load_row("from_file CPU io_uring page cache (cold)", "CPU", bytes, false, false, true);
    load_row("from_file CPU pread page cache (warm)", "CPU", bytes, true, false, false);
    load_row("from_file CPU pread page cache (cold)", "CPU", bytes, true, false, true);
    load_row("from_file CPU pread O_DIRECT (cold)", "CPU", bytes, true, true, true);
    printf("emulated GPUs (512 MiB of VRAM, engines in software): %llu MiB to MOCKPCI+AMD, %llu MiB to MOCKUSB+AMD\n",
           (unsigned long long)mock_mib, (unsigned long long)usb_mib);
    if (mock_mib) {
      load_row("from_file MOCKPCI+AMD io_uring O_DIRECT", "MOCKPCI+AMD", mock_mib << 20, false, true, false);
      load_row("from_file MOCKPCI+AMD pread page cache", "MOCKPCI+AMD", mock_mib << 20, true, false, false);
    }
    if (usb_mib) load_row("from_file MOCKUSB+AMD io_uring O_DIRECT", "MOCKUSB+AMD", usb_mib << 20, false, true, false);
  }
  free(buf);
  unlink(path);
  rmdir(dirp);
  return rc;
}
