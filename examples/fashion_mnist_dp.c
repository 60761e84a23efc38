/* examples/fashion_mnist_dp.c: data-parallel training of the Fashion-MNIST model of fashion_mnist.c over MPI ranks
 * (bg_dist, baregpu/dist.h), one device per rank.
 *
 * Every rank builds the same model from the same seed and walks the same shuffled order of the training set; step s
 * uses global batch s (--batch images), of which rank r takes its slice (rows [r B/n, (r+1) B/n)). Each rank computes
 * the gradient of the mean loss over its slice, the gradients are all-reduced (mean) with bg_dist, so every rank
 * holds the gradient of the mean loss over the global batch (for slices of equal size), and every rank steps the
 * same optimizer (bg_optim_sgd) with it. The optimizer reads the parameters' own gradients, so the averaged gradient
 * G is put in their place by zeroing them and back-propagating sum(p * G) (its gradient is exactly G). `--world 1`
 * runs the same steps in one process without MPI: the same global batches, the same weights up to the order of the
 * float sums. At the end rank 0 writes the parameters (float32, little-endian, in order conv w, conv b, linear w,
 * linear b) to --out.
 *
 * The IDX reader and the parameter init are fashion_mnist.c's (fmnist_io.c); the model is its first layer: conv(1->C1,
 * 5x5) as a matmul over the 25 shifted views, relu, maxpool 2, linear to 10 classes.
 *
 *   mpirun -np 2 bg-fashion-mnist-dp [--data DIR] [--steps N] [--batch N] [--dev DEV] [--lr X] [--c1 N]
 *                                    [--out FILE] [--world 1]
 * Build: mpicc fashion_mnist_dp.c fmnist_io.c $(pkg-config --cflags --libs baregpu) -lbaregpu-dist -lz -lm */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <baregpu/dist.h>
#include <baregpu/error.h>
#include <baregpu/tensor.h>

#include "fmnist_io.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
enum { ROWS = 28, COLS = 28, PIX = ROWS * COLS, CLASSES = 10, NPARAM = 4 };
static int64_t C1 = 4;
static int rank_ = 0;

typedef struct dataset {
  unsigned char *img, *lbl;
  uint32_t n;
} dataset;

static int load_train(const char *dir, dataset *d) {
  char ip[4096], lp[4096];
  snprintf(ip, sizeof ip, "%s/train-images-idx3-ubyte.gz", dir);
  snprintf(lp, sizeof lp, "%s/train-labels-idx1-ubyte.gz", dir);
  uint32_t id[3], ld[1];
  if (fm_read_idx(ip, 3, id, &d->img) < 0 || fm_read_idx(lp, 1, ld, &d->lbl) < 0) return -1;
  if (id[1] != ROWS || id[2] != COLS || ld[0] != id[0]) {
    fprintf(stderr, "fashion_mnist_dp: %s: %u images of %ux%u, %s: %u labels: expected %dx%d images, one label each\n", ip,
            id[0], id[1], id[2], lp, ld[0], ROWS, COLS);
    return -1;
  }
  for (uint32_t i = 0; i < ld[0]; i++)
    if (d->lbl[i] >= CLASSES) {
      fprintf(stderr, "fashion_mnist_dp: %s: label %u of item %u, expected 0..%d\n", lp, d->lbl[i], i, CLASSES - 1);
      return -1;
    }
  d->n = id[0];
  return 0;
}

/* ---- the model (fashion_mnist.c's, one conv layer) ---- */


static bg_tensor *forward(bg_tensor *const *p, bg_tensor *x) {
  bg_tensor *h = bg_tn_mulc(bg_tn_addc(bg_tn_mulc(bg_tn_cast(x, BG_FLOAT32), 1.0 / 255.0), -0.2860), 1.0 / 0.3530);
  bg_tensor *views[25];
  int64_t b = bg_tn_shape(x)[0];
  for (int k = 0; k < 25; k++) {
    const int64_t bounds[4][2] = {{0, b}, {0, 1}, {k / 5, k / 5 + 24}, {k % 5, k % 5 + 24}};
    views[k] = bg_tn_shrink(h, bounds);
  }
  const int64_t ps[3] = {b, 25, 576}, ws[2] = {C1, 25}, os[4] = {b, C1, 24, 24};
  const unsigned perm[3] = {0, 2, 1};
  bg_tensor *pt = bg_tn_permute(bg_tn_reshape(bg_tn_contiguous(bg_tn_cat(views, 25, 1)), 3, ps), perm);
  bg_tensor *o = bg_tn_linear(pt, bg_tn_reshape(p[0], 2, ws), p[1]);
  h = bg_tn_max_pool2d(bg_tn_relu(bg_tn_contiguous(bg_tn_reshape(bg_tn_permute(o, perm), 4, os))), 2, 0);
  return bg_tn_linear(bg_tn_contiguous(bg_tn_flatten(h, 1)), p[2], p[3]);
}

/* ---- one data-parallel step ---- */

typedef struct trainer {
  bg_tctx *c;
  bg_dist *d;           /* NULL: one process */
  bg_tensor *p[NPARAM];
  bg_optim *o;
} trainer;

static int step(trainer *t, bg_tensor *x, bg_tensor *y, double *loss_out) {
  bg_tensor *loss = bg_tn_sparse_cross_entropy(forward(t->p, x), y), *g[NPARAM] = {0};
  int rc = bg_tn_backward(loss);
  for (unsigned i = 0; i < NPARAM && rc == 0; i++)
    if ((rc = bg_tn_grad(t->p[i], &g[i])) == 0 && !g[i]) rc = bg_error(BG_EINVAL, "parameter %u got no gradient", i);
  bg_tensor *r[1 + NPARAM] = {loss};
  memcpy(r + 1, g, sizeof g);
  if (rc == 0) rc = bg_tn_realize(r, 1 + NPARAM);
  if (rc == 0) rc = bg_tn_item(loss, loss_out);
  /* the mean over the ranks of each rank's mean gradient: the gradient of the global batch's mean loss */
  for (unsigned i = 0; i < NPARAM && rc == 0 && t->d; i++) rc = bg_dist_allreduce(t->d, g[i], BG_DIST_MEAN, &g[i]);
  if (rc < 0) return rc;
  /* G in place of each parameter's gradient: d/dp sum(p * G) = G, exactly (G times the ones of the sum's gradient) */
  bg_tensor *sur = NULL;
  for (unsigned i = 0; i < NPARAM; i++) {
    bg_tn_zero_grad(t->p[i]);
    bg_tensor *s = bg_tn_sum(bg_tn_mul(t->p[i], g[i]), BG_ALL_AXES, false);
    sur = sur ? bg_tn_add(sur, s) : s;
  }
  if ((rc = bg_tn_backward(sur)) == 0) rc = bg_optim_step(t->o);
  return rc;
}

static int write_weights(const char *path, bg_tensor *const *p) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "fashion_mnist_dp: --out %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (unsigned i = 0; i < NPARAM && rc == 0; i++) {
    size_t n = (size_t)bg_tn_numel(p[i]);
    float *v = malloc(n * sizeof *v);
    if (!v || bg_tn_read(p[i], v, n * sizeof *v) < 0 || fwrite(v, sizeof *v, n, f) != n) rc = -1;
    free(v);
  }
  if (fclose(f) != 0) rc = -1;
  if (rc < 0) fprintf(stderr, "fashion_mnist_dp: writing %s failed: %s\n", path, bg_last_error());
  return rc;
}

int main(int argc, char **argv) {
  fm_prog = "fashion_mnist_dp";
  const char *dir = DEFAULT_DATA, *dev = NULL, *out = NULL;
  unsigned steps = 20, batch = 64, world = 0, c1 = 4;
  double lr = 0.05;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true;
    if (!strcmp(a, "--data") && v) dir = v;
    else if (!strcmp(a, "--dev") && v) dev = v;
    else if (!strcmp(a, "--out") && v) out = v;
    else if (!strcmp(a, "--steps")) ok = fm_parse_uint(a, v, 0, 1000000, &steps);
    else if (!strcmp(a, "--batch")) ok = fm_parse_uint(a, v, 1, 60000, &batch);
    else if (!strcmp(a, "--world")) ok = fm_parse_uint(a, v, 1, 1, &world);
    else if (!strcmp(a, "--c1")) ok = fm_parse_uint(a, v, 1, 256, &c1);
    else if (!strcmp(a, "--lr") && v) {
      char *end;
      lr = strtod(v, &end);
      ok = *end == 0 && end != v && lr > 0 && lr < 10;
      if (!ok) fprintf(stderr, "fashion_mnist_dp: --lr '%s': expected a number in (0, 10)\n", v);
    } else {
      fprintf(stderr, "fashion_mnist_dp: unknown option or missing value: %s\n"
                      "usage: [mpirun -np N] bg-fashion-mnist-dp [--data DIR] [--steps N] [--batch N] [--dev DEV]\n"
                      "       [--lr X] [--c1 N] [--out FILE] [--world 1]\n", a);
      return 2;
    }
    if (!ok) return 2;
    i++;
  }
  C1 = c1;
  trainer t = {0};
  int nranks = 1, rc;
  if (!world) {
    if ((rc = bg_dist_init(&argc, &argv, &t.d)) < 0) {
      fprintf(stderr, "fashion_mnist_dp: %s\n", bg_last_error());
      return 1;
    }
    rank_ = bg_dist_rank(t.d);
    nranks = bg_dist_size(t.d);
  }
  if (batch % (unsigned)nranks) {
    fprintf(stderr, "fashion_mnist_dp: --batch %u: expected a multiple of the %d ranks (equal slices: the mean of the "
                    "ranks' means is then the global mean)\n", batch, nranks);
    bg_dist_finalize(t.d);
    return 2;
  }
  dataset train = {0};
  if (load_train(dir, &train) < 0 || (rc = bg_tctx_open(dev, &t.c)) < 0) {
    if (train.n) fprintf(stderr, "fashion_mnist_dp: rank %d: opening the device: %s\n", rank_, bg_last_error());
    bg_dist_finalize(t.d);
    return 1;
  }
  const int64_t s0[4] = {C1, 1, 5, 5}, s1[1] = {C1}, s2[2] = {CLASSES, C1 * 144}, s3[1] = {CLASSES};
  t.p[0] = fm_param(t.c, 4, s0, 25);
  t.p[1] = fm_param(t.c, 1, s1, 25);
  t.p[2] = fm_param(t.c, 2, s2, C1 * 144);
  t.p[3] = fm_param(t.c, 1, s3, C1 * 144);
  rc = bg_optim_sgd(t.c, t.p, NPARAM, lr, 0.9, &t.o);
  uint32_t *order = malloc(train.n * sizeof *order);
  unsigned local = batch / (unsigned)nranks;
  unsigned char *xb = malloc((size_t)local * PIX);
  int32_t *yb = malloc(local * sizeof *yb);
  if (!order || !xb || !yb) rc = bg_error(BG_ENOMEM, "out of memory");
  if (rank_ == 0 && rc == 0)
    printf("fashion_mnist_dp: %d rank%s on %s, global batch %u (%u per rank), %u steps, sgd lr %g momentum 0.9\n",
           nranks, nranks > 1 ? "s" : "", bg_tctx_device(t.c), batch, local, steps, lr);
  unsigned per_epoch = train.n / batch;
  double loss = 0;
  for (unsigned s = 0; s < steps && rc == 0; s++) {
    if (s % per_epoch == 0) { /* the same Fisher-Yates shuffle on every rank (same seed) */
      for (uint32_t i = 0; i < train.n; i++) order[i] = i;
      for (uint32_t i = train.n - 1; i > 0; i--) {
        uint32_t j = fm_rnd() % (i + 1), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
      }
    }
    const uint32_t *idx = order + (size_t)(s % per_epoch) * batch + (size_t)rank_ * local;
    for (unsigned i = 0; i < local; i++) {
      memcpy(xb + (size_t)i * PIX, train.img + (size_t)idx[i] * PIX, PIX);
      yb[i] = train.lbl[idx[i]];
    }
    const int64_t xs[4] = {local, 1, ROWS, COLS}, ys[1] = {local};
    rc = step(&t, bg_tn_from(t.c, BG_UINT8, 4, xs, xb), bg_tn_from(t.c, BG_INT32, 1, ys, yb), &loss);
    if (rc == 0 && rank_ == 0 && (s % 10 == 0 || s + 1 == steps)) printf("step %u: loss %.5f (rank 0's slice)\n", s, loss);
  }
  if (rc < 0) {
    fprintf(stderr, "fashion_mnist_dp: rank %d: %s\n", rank_, bg_tctx_error(t.c) ? bg_tctx_error(t.c) : bg_last_error());
    /* the other ranks may wait in a collective: leave without MPI_Finalize, and mpirun ends the job */
    if (nranks > 1) return 1;
  }
  if (rc == 0 && rank_ == 0 && out) rc = write_weights(out, t.p);
  fflush(stdout);
  bg_optim_free(t.o);
  bg_tctx_close(t.c);
  free(order);
  free(xb);
  free(yb);
  free(train.img);
  free(train.lbl);
  bg_dist_finalize(t.d);
  return rc < 0 ? 1 : 0;
}
