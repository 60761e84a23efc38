/* examples/fashion_mnist.c: train a small convnet on Fashion-MNIST with the public tensor API only.
 *
 * Loads the gzip'd IDX files (Zalando's fashion-mnist, the format of LeCun's MNIST page) with zlib and a
 * progress bar of its own, then trains conv(1->32, 5x5) relu maxpool2, linear(4608->10) with Adam (default) or
 * SGD with momentum (--c2 N adds conv(32->N, 5x5) relu maxpool2 before the linear layer, through bg_tn_conv2d).
 * The first conv is a matmul of the 25 shifted 24x24 views of the image (the image needs no gradient, and the
 * weight gradient is then one plain reduction); --conv2d uses bg_tn_conv2d for it too. Each training step
 * (forward, backward, the optimizer's in-place update) is one bg_jit_call: from the third step on it replays the
 * captured kernels without scheduling or compiling. Prints per epoch the mean training loss, the test accuracy
 * and the mean time per replayed step. `--check-loss-falls` makes the exit status say whether the mean loss of
 * the last tenth of the steps is below that of the first tenth (the CI short run).
 *
 *   fashion_mnist [--data DIR] [--epochs N] [--steps N] [--batch N] [--dev DEV] [--lr X] [--optim adam|sgd]
 *                 [--test-limit N] [--c1 N] [--c2 N] [--small] [--conv2d] [--check-loss-falls]
 * Build: cc fashion_mnist.c fmnist_io.c $(pkg-config --cflags --libs baregpu) -lz -lm */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <baregpu/error.h>
#include <baregpu/tensor.h>

#include "fmnist_io.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
enum { ROWS = 28, COLS = 28, PIX = ROWS * COLS, CLASSES = 10, NPARAM = 6 };
/* Conv channels: one conv layer of 32 (the fastest to 88 % on CPU here); --c2 N adds a second conv layer of N
 * channels; --small: 4 and 8. */
static int64_t C1 = 32, C2 = 0;
static bool IM2COL = true; /* the first conv as a matmul of the image's shifted views; --conv2d: bg_tn_conv2d */

typedef struct dataset {
  unsigned char *img, *lbl;
  uint32_t n;
} dataset;

static int load_set(const char *dir, const char *prefix, dataset *d) {
  char ip[4096], lp[4096];
  snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
  snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  uint32_t id[3], ld[1];
  if (fm_read_idx(ip, 3, id, &d->img) < 0) return -1;
  if (id[1] != ROWS || id[2] != COLS) {
    fprintf(stderr, "fashion_mnist: %s: images of %ux%u, expected %dx%d\n", ip, id[1], id[2], ROWS, COLS);
    return -1;
  }
  if (fm_read_idx(lp, 1, ld, &d->lbl) < 0) return -1;
  if (ld[0] != id[0]) {
    fprintf(stderr, "fashion_mnist: %s has %u labels, %s %u images: expected as many\n", lp, ld[0], ip, id[0]);
    return -1;
  }
  for (uint32_t i = 0; i < ld[0]; i++)
    if (d->lbl[i] >= CLASSES) {
      fprintf(stderr, "fashion_mnist: %s: label %u of item %u, expected 0..%d\n", lp, d->lbl[i], i, CLASSES - 1);
      return -1;
    }
  d->n = id[0];
  return 0;
}

/* ---- the model ---- */

typedef struct model {
  bg_tctx *c;
  bg_tensor *p[NPARAM]; /* conv1 w, b; conv2 w, b; linear w, b */
  bg_optim *o;
} model;


/* Pixels arrive as uint8 (a quarter of the bytes to copy); normalized with the training set's mean and std. */
static bg_tensor *forward(model *m, bg_tensor *x) {
  bg_tensor *h = bg_tn_mulc(bg_tn_addc(bg_tn_mulc(bg_tn_cast(x, BG_FLOAT32), 1.0 / 255.0), -0.2860), 1.0 / 0.3530);
  if (IM2COL) {
    /* conv1 as a matmul over the 25 shifted 24x24 views of the image (the input needs no gradient) */
    bg_tensor *views[25];
    int64_t b = bg_tn_shape(x)[0];
    for (int k = 0; k < 25; k++) {
      const int64_t bounds[4][2] = {{0, b}, {0, 1}, {k / 5, k / 5 + 24}, {k % 5, k % 5 + 24}};
      views[k] = bg_tn_shrink(h, bounds);
    }
    const int64_t ps[3] = {b, 25, 576}, ws[2] = {C1, 25}, os[4] = {b, C1, 24, 24};
    const unsigned perm[3] = {0, 2, 1};
    bg_tensor *pt = bg_tn_permute(bg_tn_reshape(bg_tn_contiguous(bg_tn_cat(views, 25, 1)), 3, ps), perm); /* (b,576,25) */
    bg_tensor *o = bg_tn_linear(pt, bg_tn_reshape(m->p[0], 2, ws), m->p[1]);                                /* (b,576,C1) */
    h = bg_tn_reshape(bg_tn_permute(o, perm), 4, os);
    h = bg_tn_max_pool2d(bg_tn_relu(bg_tn_contiguous(h)), 2, 0);
  } else {
    h = bg_tn_max_pool2d(bg_tn_relu(bg_tn_conv2d(h, m->p[0], m->p[1], 1, 0)), 2, 0);
  }
  if (C2) h = bg_tn_max_pool2d(bg_tn_relu(bg_tn_conv2d(h, m->p[2], m->p[3], 1, 0)), 2, 0);
  /* the pooled features realized once: the linear layer's weight gradient reads them instead of recomputing the
   * pooling's max inside its own reduction over the batch */
  return bg_tn_linear(bg_tn_contiguous(bg_tn_flatten(h, 1)), m->p[4], m->p[5]);
}

/* One training step: in[0] images (B,1,28,28) uint8, in[1] labels (B) int32; out[0] the loss before the update. */
static int train_step(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  model *m = user;
  bg_tensor *loss = bg_tn_sparse_cross_entropy(forward(m, in[0]), in[1]);
  int rc = bg_tn_backward(loss);
  /* the loss with the gradients, in one schedule (they share the forward), before the update */
  bg_tensor *r[1 + NPARAM];
  unsigned nr = 0;
  r[nr++] = loss;
  for (unsigned i = 0; i < NPARAM && rc == 0; i++)
    if (m->p[i] && (rc = bg_tn_grad(m->p[i], &r[nr])) == 0 && r[nr]) nr++;
  if (rc == 0) rc = bg_tn_realize(r, nr);
  if (rc == 0) rc = bg_optim_step(m->o);
  out[0] = loss;
  return rc;
}

/* out[0]: the number of correct predictions in the batch (int32 scalar). */
static int eval_step(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)nin;
  (void)nout;
  bg_tensor *logits = forward(user, in[0]);
  /* argmax as "the logit equals the row's max", first match only matters for ties (rare with floats) */
  bg_tensor *best = bg_tn_eq(logits, bg_tn_max(logits, 1u << 1, true));
  const int64_t sh[1] = {CLASSES};
  bg_tensor *cls = bg_tn_arange(bg_tn_ctx(logits), BG_INT32, 0, CLASSES, 1);
  bg_tensor *pred = bg_tn_max(bg_tn_where(best, bg_tn_expand(cls, 1, sh), bg_tn_full(bg_tn_ctx(logits), BG_INT32, 1, sh, -1)), 1u << 1, false);
  out[0] = bg_tn_sum(bg_tn_cast(bg_tn_eq(pred, in[1]), BG_INT32), BG_ALL_AXES, false);
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Tensors of batch rows idx[0..b) of d: images (b,1,28,28) uint8, labels (b) int32. */
static int make_batch(bg_tctx *c, const dataset *d, const uint32_t *idx, unsigned b, unsigned char *xb, int32_t *yb,
                      bg_tensor **in) {
  for (unsigned i = 0; i < b; i++) {
    memcpy(xb + (size_t)i * PIX, d->img + (size_t)idx[i] * PIX, PIX);
    yb[i] = d->lbl[idx[i]];
  }
  const int64_t xs[4] = {b, 1, ROWS, COLS}, ys[1] = {b};
  in[0] = bg_tn_from(c, BG_UINT8, 4, xs, xb);
  in[1] = bg_tn_from(c, BG_INT32, 1, ys, yb);
  return bg_tctx_error(c) ? -1 : 0;
}

static double test_accuracy(model *m, bg_jit *ej, const dataset *test, unsigned limit, unsigned eb) {
  unsigned n = limit && limit < test->n ? limit : test->n, correct = 0, seen = 0;
  uint32_t *idx = malloc(eb * sizeof *idx);
  unsigned char *xb = malloc((size_t)eb * PIX);
  int32_t *yb = malloc(eb * sizeof *yb);
  int rc = idx && xb && yb ? 0 : -1;
  for (unsigned at = 0; at + eb <= n && !rc; at += eb) { /* whole batches: one captured shape */
    bg_tensor *in[2], *out[1];
    for (unsigned i = 0; i < eb; i++) idx[i] = at + i;
    double v;
    if ((rc = make_batch(m->c, test, idx, eb, xb, yb, in)) < 0 || (rc = bg_jit_call(ej, in, 2, out)) < 0 ||
        (rc = bg_tn_item(out[0], &v)) < 0)
      break;
    correct += (unsigned)v;
    seen += eb;
  }
  free(idx);
  free(xb);
  free(yb);
  if (rc < 0) {
    fprintf(stderr, "fashion_mnist: evaluation: %s\n", bg_tctx_error(m->c) ? bg_tctx_error(m->c) : bg_last_error());
    return -1;
  }
  return seen ? 100.0 * correct / seen : 0;
}

static void usage(void) {
  fprintf(stderr, "usage: fashion_mnist [--data DIR] [--epochs N] [--steps N] [--batch N] [--dev DEV] [--lr X]\n"
                  "                     [--optim adam|sgd] [--test-limit N] [--c1 N] [--c2 N] [--small] [--conv2d]\n"
                  "                     [--check-loss-falls]\n");
}

int main(int argc, char **argv) {
  const char *dir = DEFAULT_DATA, *dev = NULL, *optim = "adam";
  unsigned epochs = 2, steps = 0, batch = 64, test_limit = 0;
  double lr = 0;
  bool check = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true;
    if (!strcmp(a, "--data") && v) dir = v;
    else if (!strcmp(a, "--dev") && v) dev = v;
    else if (!strcmp(a, "--optim") && v) optim = v;
    else if (!strcmp(a, "--epochs")) ok = fm_parse_uint(a, v, 1, 1000, &epochs);
    else if (!strcmp(a, "--steps")) ok = fm_parse_uint(a, v, 1, 100000000, &steps);
    else if (!strcmp(a, "--batch")) ok = fm_parse_uint(a, v, 1, 60000, &batch);
    else if (!strcmp(a, "--test-limit")) ok = fm_parse_uint(a, v, 1, 10000, &test_limit);
    else if (!strcmp(a, "--lr") && v) {
      char *end;
      lr = strtod(v, &end);
      ok = *end == 0 && end != v && lr > 0 && lr < 10;
      if (!ok) fprintf(stderr, "fashion_mnist: --lr '%s': expected a number in (0, 10)\n", v);
    } else if (!strcmp(a, "--check-loss-falls")) {
      check = true;
      continue;
    } else if (!strcmp(a, "--small")) {
      C1 = 4;
      C2 = 8;
      continue;
    } else if (!strcmp(a, "--conv2d")) {
      IM2COL = false;
      continue;
    } else if (!strcmp(a, "--c1") || !strcmp(a, "--c2")) {
      unsigned ch;
      ok = fm_parse_uint(a, v, a[3] == '1' ? 1 : 0, 256, &ch);
      if (a[3] == '1') C1 = ch;
      else C2 = ch;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage();
      return 0;
    } else {
      fprintf(stderr, "fashion_mnist: unknown option or missing value: %s\n", a);
      usage();
      return 2;
    }
    if (!ok) return 2;
    i++;
  }
  bool adam = !strcmp(optim, "adam");
  if (!adam && strcmp(optim, "sgd")) {
    fprintf(stderr, "fashion_mnist: --optim '%s': expected adam or sgd\n", optim);
    return 2;
  }
  if (lr == 0) lr = adam ? 2e-3 : 0.02;

  dataset train = {0}, test = {0};
  if (load_set(dir, "train", &train) < 0 || load_set(dir, "t10k", &test) < 0) return 1;
  if (batch > train.n) batch = train.n;

  model m = {0};
  int rc = bg_tctx_open(dev, &m.c);
  if (rc < 0) {
    fprintf(stderr, "fashion_mnist: opening the device: %s\n", bg_last_error());
    return 1;
  }
  const int64_t s0[4] = {C1, 1, 5, 5}, s1[1] = {C1}, s2[4] = {C2, C1, 5, 5}, s3[1] = {C2}, s5[1] = {CLASSES};
  int64_t s4[2] = {CLASSES, 0};
  m.p[0] = fm_param(m.c, 4, s0, 25);
  m.p[1] = fm_param(m.c, 1, s1, 25);
  int64_t flat = C2 ? C2 * 16 : C1 * 144; /* (C2,4,4) after two convs and pools, (C1,12,12) after one */
  if (C2) {
    m.p[2] = fm_param(m.c, 4, s2, C1 * 25);
    m.p[3] = fm_param(m.c, 1, s3, C1 * 25);
  }
  s4[1] = flat;
  m.p[4] = fm_param(m.c, 2, s4, flat);
  m.p[5] = fm_param(m.c, 1, s5, flat);
  bg_tensor *ps[NPARAM];
  unsigned np = 0;
  for (unsigned i = 0; i < NPARAM; i++)
    if (m.p[i]) ps[np++] = m.p[i];
  rc = adam ? bg_optim_adam(m.c, ps, np, lr, 0, 0, 0, &m.o) : bg_optim_sgd(m.c, ps, np, lr, 0.9, &m.o);
  bg_jit *tj = NULL, *ej = NULL;
  if (rc == 0) rc = bg_jit_new(m.c, train_step, &m, 1, &tj);
  if (rc == 0) rc = bg_jit_new(m.c, eval_step, &m, 1, &ej);
  if (rc < 0) {
    fprintf(stderr, "fashion_mnist: setting up: %s\n", bg_last_error());
    bg_tctx_close(m.c);
    return 1;
  }
  printf("fashion_mnist: device %s, %u training and %u test images, batch %u, %s lr %g\n", bg_tctx_device(m.c), train.n,
         test.n, batch, adam ? "adam" : "sgd (momentum 0.9)", lr);

  unsigned per_epoch = train.n / batch, total = steps ? steps : per_epoch * epochs, done = 0;
  unsigned tenth = total / 10 ? total / 10 : 1;
  double first_sum = 0, last_sum = 0;
  uint32_t *order = malloc(train.n * sizeof *order);
  unsigned char *xb = malloc((size_t)batch * PIX);
  int32_t *yb = malloc(batch * sizeof *yb);
  if (!order || !xb || !yb) {
    fprintf(stderr, "fashion_mnist: out of memory\n");
    return 1;
  }
  for (unsigned e = 0; e < epochs && done < total && rc == 0; e++) {
    for (uint32_t i = 0; i < train.n; i++) order[i] = i;
    for (uint32_t i = train.n - 1; i > 0; i--) { /* Fisher-Yates */
      uint32_t j = fm_rnd() % (i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    double loss_sum = 0, t_steps = 0;
    unsigned n = 0;
    for (unsigned s = 0; s < per_epoch && done < total; s++, done++, n++) {
      bg_tensor *in[2], *out[1];
      double loss;
      if ((rc = make_batch(m.c, &train, order + (size_t)s * batch, batch, xb, yb, in)) < 0) break;
      double t0 = now_s();
      if ((rc = bg_jit_call(tj, in, 2, out)) < 0 || (rc = bg_tn_item(out[0], &loss)) < 0) break;
      double dt = now_s() - t0;
      if (done >= 2) t_steps += dt; /* replays only: calls 1 and 2 schedule and compile */
      if (!isfinite(loss)) {
        fprintf(stderr, "fashion_mnist: step %u: loss is %g\n", done, loss);
        rc = -1;
        break;
      }
      loss_sum += loss;
      if (done < tenth) first_sum += loss;
      if (done >= total - tenth) last_sum += loss;
      if (isatty(STDERR_FILENO) && (s % 20 == 0 || s + 1 == per_epoch))
        fprintf(stderr, "\repoch %u step %u/%u loss %.4f", e + 1, s + 1, per_epoch, loss);
    }
    if (isatty(STDERR_FILENO)) fputc('\n', stderr);
    if (rc < 0) break;
    double acc = test_accuracy(&m, ej, &test, test_limit, test_limit && test_limit < 500 ? test_limit : 500);
    if (acc < 0) {
      rc = -1;
      break;
    }
    unsigned timed = n > 2 && e == 0 ? n - 2 : n;
    printf("epoch %u: %u steps, mean loss %.4f, test accuracy %.2f %%, %.2f ms/step\n", e + 1, n, loss_sum / (n ? n : 1),
           acc, timed ? 1e3 * t_steps / timed : 0.0);
    fflush(stdout);
  }
  if (rc < 0 && bg_tctx_error(m.c)) fprintf(stderr, "fashion_mnist: %s\n", bg_tctx_error(m.c));
  else if (rc < 0) fprintf(stderr, "fashion_mnist: %s\n", bg_last_error());
  bg_jit_stats js;
  bg_jit_get_stats(tj, &js);
  printf("fashion_mnist: jit: %lu calls, %lu function runs, %lu replays of %u kernels\n", js.calls, js.fn_calls,
         js.replays, js.nkernels);
  double first = first_sum / tenth, last = last_sum / tenth;
  printf("loss_first=%.6f loss_last=%.6f steps=%u\n", first, last, done);
  bool falls = rc == 0 && last < first;
  if (check && rc == 0 && !falls) fprintf(stderr, "fashion_mnist: the loss did not fall: %.6f -> %.6f\n", first, last);
  bg_jit_free(tj);
  bg_jit_free(ej);
  bg_optim_free(m.o);
  bg_tctx_close(m.c);
  free(order);
  free(xb);
  free(yb);
  free(train.img);
  free(train.lbl);
  free(test.img);
  free(test.lbl);
  if (rc < 0) return 1;
  return check && !falls ? 1 : 0;
}
