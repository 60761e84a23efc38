/* tests/bench/allreduce.c: all-reduce bus bandwidth across MPI ranks: bg_dist on device tensors and on raw device
 * buffers beside MPI_Allreduce of host buffers of the same size, in the same run (mpirun -np 2 bench-allreduce).
 *
 * Bus bandwidth as nccl-tests define it (doc/PERFORMANCE.md there): busbw = 2 (n-1)/n * bytes / time for n ranks,
 * the bytes each rank's link carries in a ring all-reduce; time is the slowest rank's mean over the iterations
 * (each timed region starts at a barrier). The tensor column includes the copy of the input into the result's own
 * buffer (a device kernel), as a user of bg_dist_allreduce pays it; the buffer column is the staging pipeline alone.
 *
 *   mpirun -np 2 bench-allreduce [DEV] [MAX_BYTES]     DEV: CPU (default), MOCKPCI+AMD ...; sizes 4 KiB .. MAX_BYTES
 *                                                      (default 64 MiB), times 4 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <baregpu/dist.h>
#include <baregpu/error.h>
#include <baregpu/hcq.h>
#include <baregpu/tensor.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The slowest rank's time. */
static double slowest(double t) {
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

static int fail(int rank, const char *what) {
  fprintf(stderr, "bench-allreduce: rank %d: %s: %s\n", rank, what, bg_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

int main(int argc, char **argv) {
  bg_dist *d = NULL;
  if (bg_dist_init(&argc, &argv, &d) < 0) {
    fprintf(stderr, "bench-allreduce: %s\n", bg_last_error());
    return 1;
  }
  int rank = bg_dist_rank(d), n = bg_dist_size(d);
  const char *dev = argc > 1 ? argv[1] : "CPU";
  unsigned long long max = argc > 2 ? strtoull(argv[2], NULL, 0) : 64ull << 20;
  if (max < 4096 || max > (1ull << 30)) {
    if (rank == 0) fprintf(stderr, "bench-allreduce: MAX_BYTES %llu: expected 4096 .. 2^30\n", max);
    bg_dist_finalize(d);
    return 2;
  }
  if (rank == 0) {
    printf("all-reduce (sum, float32) on %d ranks, device %s; busbw = 2(n-1)/n * bytes / time, GB/s\n", n, dev);
    printf("%10s %6s %14s %14s %14s %8s\n", "bytes", "iters", "bg_dist tensor", "bg_dist buf", "MPI_Allreduce",
           "tn/MPI");
  }
  for (unsigned long long bytes = 4096; bytes <= max; bytes *= 4) {
    int iters = bytes <= (1u << 20) ? 20 : bytes <= (16u << 20) ? 5 : 3;
    size_t count = bytes / 4;
    float *h = malloc(bytes), *m = malloc(bytes);
    if (!h || !m) return fail(rank, "out of host memory");
    for (size_t i = 0; i < count; i++) h[i] = (float)(i % 1000) + (float)rank;
    bg_tctx *c = NULL; /* a context per size: the results of the iterations live until it closes */
    if (bg_tctx_open(dev, &c) < 0) return fail(rank, "opening the device");
    const int64_t shape[1] = {(int64_t)count};
    bg_tensor *t = bg_tn_from(c, BG_FLOAT32, 1, shape, h), *r = NULL;
    bg_buf *b = NULL;
    if (bg_tn_buffer(t, &b) < 0) return fail(rank, "realizing the input");
    /* warm-up: compiles the copy kernel, first-touches MPI's and the staging's memory */
    if (bg_dist_allreduce(d, t, BG_DIST_SUM, &r) < 0) return fail(rank, "bg_dist_allreduce");
    if (bg_tn_read(r, m, bytes) < 0) return fail(rank, "reading the result");
    float want = (float)((count - 1) % 1000) * (float)n;  /* the last element: sum over the ranks q of (c % 1000 + q) */
    for (int q = 0; q < n; q++) want += (float)q;
    if (m[count - 1] != want) {
      fprintf(stderr, "bench-allreduce: rank %d: last element %g, expected %g\n", rank, m[count - 1], want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double tt = 0, tb = 0, tm = 0;
    for (int it = 0; it < iters; it++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_s();
      if (bg_dist_allreduce(d, t, BG_DIST_SUM, &r) < 0) return fail(rank, "bg_dist_allreduce");
      tt += now_s() - t0;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now_s();
      if (bg_dist_allreduce_buf(d, b, 0, count, BG_FLOAT32, BG_DIST_SUM) < 0) return fail(rank, "bg_dist_allreduce_buf");
      tb += now_s() - t0;
      memcpy(m, h, bytes);
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now_s();
      MPI_Allreduce(MPI_IN_PLACE, m, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      tm += now_s() - t0;
    }
    tt = slowest(tt / iters);
    tb = slowest(tb / iters);
    tm = slowest(tm / iters);
    double f = n > 1 ? 2.0 * (n - 1) / n * (double)bytes * 1e-9 : (double)bytes * 1e-9;
    if (rank == 0)
      printf("%10llu %6d %14.3f %14.3f %14.3f %8.2f\n", bytes, iters, f / tt, f / tb, f / tm, tm / tt);
    fflush(stdout);
    bg_tctx_close(c);
    free(h);
    free(m);
  }
  bg_dist_stats st;
  bg_dist_last_stats(d, &st);
  if (rank == 0) printf("staging: %s\n", st.pinned ? "pinned host buffers of the device, copy queue" : "host memory");
  bg_dist_finalize(d);
  return 0;
}
