/* tests/dist/test_collectives.c: bg_dist's collectives under mpirun (any number of ranks, the suite runs 2), on the
 * device DEV names (CPU by default). Every value is one each rank can compute from the ranks' numbers, so a wrong
 * element names itself. Sizes are odd and the chunk small, so the pipeline runs many chunks and a short last one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <baregpu/dist.h>
#include <baregpu/error.h>
#include <baregpu/hcq.h>
#include <baregpu/tensor.h>

static int fails, rank, size;

#define CHECK(cond, ...)                                       \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                            \
      fputc('\n', stderr);                                     \
      fails++;                                                 \
    }                                                          \
  } while (0)
#define OK(call) CHECK((call) == 0, "%s: %s", #call, bg_last_error())

/* Element i of rank r's input: exact in float32 (integers below 2^24) and different on every rank. */
static double val(int r, int64_t i) { return (double)(r * 1000 + (i % 997)) - 300.0; }

static void allreduce_tensor(bg_dist *d, bg_tctx *c, enum bg_dtype dt, enum bg_dist_op op, int64_t n) {
  float *f = malloc((size_t)n * sizeof *f);
  double *g = malloc((size_t)n * sizeof *g);
  int32_t *k = malloc((size_t)n * sizeof *k);
  for (int64_t i = 0; i < n; i++) f[i] = (float)(g[i] = val(rank, i)), k[i] = (int32_t)val(rank, i);
  const void *src = dt == BG_FLOAT32 ? (void *)f : dt == BG_FLOAT64 ? (void *)g : (void *)k;
  const int64_t shape[2] = {n / 7, 7};
  bg_tensor *t = bg_tn_from(c, dt, 2, shape, src), *r = NULL;
  OK(bg_dist_allreduce(d, t, op, &r));
  if (r) {
    CHECK(bg_tn_ndim(r) == 2 && bg_tn_shape(r)[0] == n / 7 && bg_tn_dtype(r) == dt, "all-reduce result shape/dtype");
    OK(bg_tn_read(r, dt == BG_FLOAT32 ? (void *)f : dt == BG_FLOAT64 ? (void *)g : (void *)k, (size_t)n * bg_dtype_size(dt)));
    int bad = 0;
    for (int64_t i = 0; i < n / 7 * 7 && bad < 5; i++) {
      double want = 0;
      for (int q = 0; q < size; q++) want += val(q, i);
      if (op == BG_DIST_MEAN) want /= size;
      double got = dt == BG_FLOAT32 ? f[i] : dt == BG_FLOAT64 ? g[i] : k[i];
      if (got != want) {
        CHECK(0, "all-reduce %s %s of %lld: element %lld is %g, expected %g", bg_dtype_name(dt),
              op == BG_DIST_MEAN ? "mean" : "sum", (long long)n, (long long)i, got, want);
        bad++;
      }
    }
  }
  /* the input is untouched: the collective works on a copy */
  if (dt == BG_INT32) {
    OK(bg_tn_read(t, k, (size_t)(n / 7 * 7) * sizeof *k));
    CHECK(k[5] == (int32_t)val(rank, 5), "all-reduce changed its input: %d", k[5]);
  }
  free(f);
  free(g);
  free(k);
}

static void broadcast_and_gather(bg_dist *d, bg_tctx *c) {
  enum { R = 13, C = 11 };
  float v[R * C], out[64 * R * C];
  for (int i = 0; i < R * C; i++) v[i] = (float)val(rank, i);
  const int64_t shape[2] = {R, C};
  bg_tensor *t = bg_tn_from(c, BG_FLOAT32, 2, shape, v), *b = NULL, *g = NULL;
  int root = size - 1;
  OK(bg_dist_broadcast(d, t, root, &b));
  if (b && bg_tn_read(b, out, sizeof v) == 0)
    for (int i = 0; i < R * C; i++)
      if (out[i] != (float)val(root, i)) {
        CHECK(0, "broadcast from %d: element %d is %g, expected %g", root, i, out[i], val(root, i));
        break;
      }
  OK(bg_dist_allgather(d, t, &g));
  if (g && size <= 64) {
    CHECK(bg_tn_ndim(g) == 3 && bg_tn_shape(g)[0] == size && bg_tn_shape(g)[1] == R && bg_tn_shape(g)[2] == C,
          "all-gather shape");
    OK(bg_tn_read(g, out, (size_t)size * sizeof v));
    for (int r = 0, bad = 0; r < size && !bad; r++)
      for (int i = 0; i < R * C && !bad; i++)
        if (out[r * R * C + i] != (float)val(r, i)) {
          CHECK(0, "all-gather: [%d][%d] is %g, expected %g", r, i, out[r * R * C + i], val(r, i));
          bad = 1;
        }
  }
}

static void raw_buffers(bg_dist *d, bg_dev *dev) {
  enum { N = 4099, OFF = 24 };  /* odd count at an offset */
  bg_buf *b = NULL, *g = NULL;
  OK(bg_buf_alloc(dev, 8 * N + OFF, 0, &b));
  OK(bg_buf_alloc(dev, (uint64_t)size * (4 * N + 3) + OFF, 0, &g));
  if (!b || !g) return;
  double *h = malloc(8 * (size_t)N * (size_t)size);
  for (int i = 0; i < N; i++) h[i] = val(rank, i) * 0.25;
  OK(bg_buf_write(b, OFF, h, 8 * N));
  OK(bg_dist_allreduce_buf(d, b, OFF, N, BG_FLOAT64, BG_DIST_SUM));
  OK(bg_buf_read(b, OFF, h, 8 * N));
  for (int i = 0; i < N; i++) {
    double want = 0;
    for (int q = 0; q < size; q++) want += val(q, i) * 0.25;
    if (h[i] != want) {
      CHECK(0, "all-reduce buf: element %d is %g, expected %g", i, h[i], want);
      break;
    }
  }
  /* broadcast bytes from rank 0, an odd byte count */
  unsigned char *u = (unsigned char *)h;
  for (int i = 0; i < 4 * N + 1; i++) u[i] = (unsigned char)(rank * 31 + i);
  OK(bg_buf_write(b, 3, u, 4 * N + 1));
  OK(bg_dist_broadcast_buf(d, b, 3, 4 * N + 1, 0));
  OK(bg_buf_read(b, 3, u, 4 * N + 1));
  for (int i = 0; i < 4 * N + 1; i++)
    if (u[i] != (unsigned char)i) {
      CHECK(0, "broadcast buf: byte %d is %u, expected %u", i, u[i], (unsigned)(unsigned char)i);
      break;
    }
  /* all-gather 4 N + 3 bytes of each rank */
  for (int i = 0; i < 4 * N + 3; i++) u[i] = (unsigned char)(rank * 7 + i * 3);
  OK(bg_buf_write(b, 0, u, 4 * N + 3));
  OK(bg_dist_allgather_buf(d, g, OFF, b, 0, 4 * N + 3));
  OK(bg_buf_read(g, OFF, u, (uint64_t)size * (4 * N + 3)));
  for (int r = 0, bad = 0; r < size && !bad; r++)
    for (int i = 0; i < 4 * N + 3 && !bad; i++)
      if (u[(size_t)r * (4 * N + 3) + (size_t)i] != (unsigned char)(r * 7 + i * 3)) {
        CHECK(0, "all-gather buf: rank %d byte %d is %u", r, i, u[(size_t)r * (4 * N + 3) + (size_t)i]);
        bad = 1;
      }
  /* a range outside the buffer names it */
  int rc = bg_dist_allreduce_buf(d, b, OFF, N + 1, BG_FLOAT64, BG_DIST_SUM);
  CHECK(rc == -BG_EINVAL && strstr(bg_last_error(), "'b' range"), "out-of-range all-reduce: %d %s", rc, bg_last_error());
  free(h);
  bg_buf_free(b);
  bg_buf_free(g);
}

/* Rank 0 gives (3,5), the others (3,4): every rank fails with both shapes named, and nobody hangs. */
static void mismatch(bg_dist *d, bg_tctx *c) {
  if (size < 2) return;
  const int64_t shape[2] = {3, rank == 0 ? 5 : 4};
  bg_tensor *t = bg_tn_zeros(c, BG_FLOAT32, 2, shape), *r = (bg_tensor *)&r;
  int rc = bg_dist_allreduce(d, t, BG_DIST_SUM, &r);
  const char *e = bg_last_error();
  CHECK(rc == -BG_EINVAL && r == NULL, "mismatched all-reduce: rc %d", rc);
  CHECK(strstr(e, "(3,5)") && strstr(e, "(3,4)") && strstr(e, "rank 0") && strstr(e, "rank 1"),
        "mismatch message names both shapes and ranks: %s", e);
  /* a float16 on one rank, float32 on the other: the dtype is named */
  bg_tensor *h = bg_tn_zeros(c, rank == 0 ? BG_FLOAT16 : BG_FLOAT32, 2, shape);
  rc = bg_dist_broadcast(d, h, 0, &r);
  CHECK(rc == -BG_EINVAL && strstr(bg_last_error(), "float16"), "mismatched dtype: %d %s", rc, bg_last_error());
  /* the same call on every rank still works afterwards */
  const int64_t s1[1] = {5};
  OK(bg_dist_allreduce(d, bg_tn_ones(c, BG_FLOAT32, 1, s1), BG_DIST_SUM, &r));
  double x = 0;
  if (r) OK(bg_tn_item(bg_tn_sum(r, BG_ALL_AXES, false), &x));
  CHECK(x == 5.0 * size, "after a mismatch: sum %g, expected %g", x, 5.0 * size);
}

int main(int argc, char **argv) {
  bg_dist *d = NULL;
  if (bg_dist_init(&argc, &argv, &d) < 0) {
    fprintf(stderr, "test_collectives: %s\n", bg_last_error());
    return 1;
  }
  rank = bg_dist_rank(d);
  size = bg_dist_size(d);
  bg_tctx *c = NULL;
  if (bg_tctx_open(NULL, &c) < 0) {
    fprintf(stderr, "rank %d: test_collectives: %s\n", rank, bg_last_error());
    bg_dist_finalize(d);
    return 1;
  }
  OK(bg_dist_set_chunk(d, 4096));   /* many chunks */
  CHECK(bg_dist_set_chunk(d, 8) == -BG_EINVAL, "chunk of 8 bytes accepted");
  allreduce_tensor(d, c, BG_FLOAT32, BG_DIST_SUM, 7 * 3001);
  bg_dist_stats st;
  bg_dist_last_stats(d, &st);
  CHECK(st.chunks == (7 * 3001 * 4 + 4095) / 4096, "chunks %llu, expected %d", (unsigned long long)st.chunks,
        (7 * 3001 * 4 + 4095) / 4096);
  if (rank == 0) printf("staging on %s: %s\n", bg_tctx_device(c), st.pinned ? "pinned host buffers, copy queue" : "host memory");
  allreduce_tensor(d, c, BG_FLOAT32, BG_DIST_MEAN, 7 * 1001);
  allreduce_tensor(d, c, BG_FLOAT64, BG_DIST_MEAN, 7 * 333);
  allreduce_tensor(d, c, BG_INT32, BG_DIST_SUM, 7 * 2049);
  const int64_t s1[1] = {4};
  bg_tensor *r = NULL;
  int rc = bg_dist_allreduce(d, bg_tn_zeros(c, BG_INT32, 1, s1), BG_DIST_MEAN, &r);
  CHECK(rc == -BG_EINVAL && strstr(bg_last_error(), "mean of int32"), "int32 mean: %d %s", rc, bg_last_error());
  bg_dist *d2 = (bg_dist *)&d2;
  rc = bg_dist_init(NULL, NULL, &d2);
  CHECK(rc == -BG_EBUSY && d2 == NULL, "a second bg_dist_init: %d %s", rc, bg_last_error());
  rc = bg_dist_allreduce(d, bg_tn_zeros(c, BG_FLOAT16, 1, s1), BG_DIST_SUM, &r);
  CHECK(rc == -BG_ENOTSUP && strstr(bg_last_error(), "float16"), "float16 all-reduce: %d %s", rc, bg_last_error());
  rc = bg_dist_broadcast(d, bg_tn_zeros(c, BG_FLOAT32, 1, s1), size, &r);
  CHECK(rc == -BG_EINVAL && strstr(bg_last_error(), "root"), "broadcast from root %d: %d %s", size, rc, bg_last_error());
  OK(bg_dist_set_chunk(d, 1 << 20));  /* one chunk */
  allreduce_tensor(d, c, BG_FLOAT32, BG_DIST_SUM, 7 * 11);
  OK(bg_dist_set_chunk(d, 512));
  broadcast_and_gather(d, c);
  bg_dev *dev = NULL;  /* the raw-buffer collectives on a bg_dev of their own (the same device DEV names) */
  OK(bg_dev_open(NULL, &dev));
  if (dev) raw_buffers(d, dev);
  bg_dev_close(dev);
  mismatch(d, c);
  OK(bg_dist_barrier(d));
  bg_tctx_close(c);
  if (rank == 0 || fails) printf("rank %d: %s (%d failures)\n", rank, fails ? "FAIL" : "ok", fails);
  bg_dist_finalize(d);
  return fails ? 1 : 0;
}
