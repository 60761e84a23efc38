/* tools/tiny_mnist.c: tinygrad's test_tiny mnist model in C and bg-tiny's two tests of it.
 *
 * mnist: Conv2d(1,32,5) relu Conv2d(32,32,5) relu BatchNorm(32) max_pool2d Conv2d(32,64,3) relu
 * Conv2d(64,64,3) relu BatchNorm(64) max_pool2d flatten Linear(576,10) on a random (2,1,28,28)
 * batch. tinygrad's test sets every parameter to 1 and checks only the output length; here the
 * parameters are drawn with the context's rand (convs and linear uniform in +-1/sqrt(fan_in) as
 * tinygrad's default init, batch-norm statistics random too, so a mixed-up channel shows) and the
 * output is compared with the double reference of tiny_mnist_ref.c.
 *
 * mnist_backward: Conv2d(1,8,5) relu Conv2d(8,8,5) relu on a random (4,1,14,14) batch, loss = sum
 * (as tinygrad's test); the loss and the four gradients are realized together and compared with the
 * reference backward; then one SGD step, and the new loss must drop and match the reference model
 * stepped with the reference gradients. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "tools/tiny_mnist.h"

typedef struct param_def {
  const char *name;
  unsigned nd;
  int64_t sh[4];
  double lo, hi; /* uniform init range; lo = -hi = 0: +-1/sqrt(fan_in) with fan_in = numel / shape[0] */
} param_def;

#define UNI 0, 0
static const param_def mnist_defs[] = {
  {"conv1.weight", 4, {32, 1, 5, 5}, UNI},  {"conv1.bias", 1, {32}, -0.2, 0.2},
  {"conv2.weight", 4, {32, 32, 5, 5}, UNI}, {"conv2.bias", 1, {32}, -0.035, 0.035},
  {"bn1.weight", 1, {32}, 0.5, 1.5},        {"bn1.bias", 1, {32}, -0.5, 0.5},
  {"bn1.running_mean", 1, {32}, -0.1, 0.1}, {"bn1.running_var", 1, {32}, 0.5, 1.5},
  {"conv3.weight", 4, {64, 32, 3, 3}, UNI}, {"conv3.bias", 1, {64}, -0.06, 0.06},
  {"conv4.weight", 4, {64, 64, 3, 3}, UNI}, {"conv4.bias", 1, {64}, -0.04, 0.04},
  {"bn2.weight", 1, {64}, 0.5, 1.5},        {"bn2.bias", 1, {64}, -0.5, 0.5},
  {"bn2.running_mean", 1, {64}, -0.1, 0.1}, {"bn2.running_var", 1, {64}, 0.5, 1.5},
  {"l1.weight", 2, {10, 576}, UNI},         {"l1.bias", 1, {10}, -0.04, 0.04},
};
enum { MNIST_NP = sizeof mnist_defs / sizeof mnist_defs[0] };

static const param_def backward_defs[] = {
  {"conv1.weight", 4, {8, 1, 5, 5}, UNI},
  {"conv1.bias", 1, {8}, -0.2, 0.2},
  {"conv2.weight", 4, {8, 8, 5, 5}, UNI},
  {"conv2.bias", 1, {8}, -0.07, 0.07},
};
enum { BACKWARD_NP = 4 };
static const double BN_EPS = 1e-5;

typedef struct host {
  double *v;
  int64_t n;
} host;

static int say(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

static int64_t numel(unsigned nd, const int64_t *sh) {
  int64_t n = 1;
  for (unsigned i = 0; i < nd; i++) n *= sh[i];
  return n;
}

/* lo + (hi - lo) * rand, made contiguous so every parameter is its own buffer. */
static bg_tensor *uniform(bg_tctx *c, unsigned nd, const int64_t *sh, double lo, double hi) {
  return bg_tn_contiguous(bg_tn_addc(bg_tn_mulc(bg_tn_rand(c, nd, sh), hi - lo), lo));
}

static void init_params(bg_tctx *c, const param_def *defs, unsigned np, bg_tensor **p) {
  for (unsigned i = 0; i < np; i++) {
    double lo = defs[i].lo, hi = defs[i].hi;
    if (lo == 0 && hi == 0) {
      hi = 1.0 / sqrt((double)(numel(defs[i].nd, defs[i].sh) / defs[i].sh[0]));
      lo = -hi;
    }
    p[i] = uniform(c, defs[i].nd, defs[i].sh, lo, hi);
  }
}

/* Why the last call failed: the context's latched error, else the thread's last error. */
static const char *why(bg_tctx *c) { return bg_tctx_error(c) ? bg_tctx_error(c) : bg_last_error(); }

/* Realized float32 contents as doubles. */
static int to_host(bg_tctx *c, bg_tensor *t, host *h, char *err, size_t errlen) {
  h->n = bg_tn_numel(t);
  h->v = NULL;
  float *f = malloc((size_t)h->n * sizeof *f + 4);
  h->v = malloc((size_t)h->n * sizeof *h->v + 8);
  if (!f || !h->v) {
    free(f);
    return say(err, errlen, "out of host memory");
  }
  int rc = bg_tn_read(t, f, (size_t)h->n * sizeof *f);
  if (rc < 0) {
    free(f);
    return say(err, errlen, "read: %s", why(c));
  }
  for (int64_t i = 0; i < h->n; i++) h->v[i] = f[i];
  free(f);
  return 0;
}

static void free_hosts(host *h, unsigned n) {
  for (unsigned i = 0; i < n; i++) free(h[i].v);
}

/* |got - want| <= rel * max|want| per element: float32 sums of hundreds of terms against double. */
static int compare(const char *what, const host *got, const double *want, double rel, char *err, size_t errlen) {
  double scale = 0;
  for (int64_t i = 0; i < got->n; i++) scale = fmax(scale, fabs(want[i]));
  for (int64_t i = 0; i < got->n; i++)
    if (!(fabs(got->v[i] - want[i]) <= rel * scale + 1e-30))
      return say(err, errlen, "%s: element %lld is %.7g, reference %.7g (tolerance %.2g of max %.4g)", what, (long long)i,
                 got->v[i], want[i], rel, scale);
  return 0;
}

/* ---------------- mnist ---------------- */

static bg_tensor *mnist_forward(bg_tensor *x, bg_tensor *const *p) {
  bg_tensor *h = bg_tn_relu(bg_tn_conv2d(x, p[0], p[1], 1, 0));
  h = bg_tn_relu(bg_tn_conv2d(h, p[2], p[3], 1, 0));
  h = bg_tn_max_pool2d(bg_tn_batchnorm(h, p[4], p[5], p[6], p[7], BN_EPS), 2, 0);
  h = bg_tn_relu(bg_tn_conv2d(h, p[8], p[9], 1, 0));
  h = bg_tn_relu(bg_tn_conv2d(h, p[10], p[11], 1, 0));
  h = bg_tn_max_pool2d(bg_tn_batchnorm(h, p[12], p[13], p[14], p[15], BN_EPS), 2, 0);
  return bg_tn_linear(bg_tn_flatten(h, 1), p[16], p[17]);
}

/* The same model on host arrays; out (n, 10). */
static int mnist_reference(const double *x, int n, const host *p, double *out) {
  double *a = malloc(sizeof(double) * (size_t)n * 32 * 24 * 24), *b = malloc(sizeof(double) * (size_t)n * 32 * 20 * 20);
  double *c = malloc(sizeof(double) * (size_t)n * 32 * 10 * 10), *d = malloc(sizeof(double) * (size_t)n * 64 * 8 * 8);
  double *e = malloc(sizeof(double) * (size_t)n * 64 * 6 * 6), *f = malloc(sizeof(double) * (size_t)n * 64 * 3 * 3);
  int rc = a && b && c && d && e && f ? 0 : -1;
  if (!rc) {
    ref_conv2d(x, n, 1, 28, 28, p[0].v, p[1].v, 32, 5, a);
    ref_relu(a, (size_t)n * 32 * 24 * 24);
    ref_conv2d(a, n, 32, 24, 24, p[2].v, p[3].v, 32, 5, b);
    ref_relu(b, (size_t)n * 32 * 20 * 20);
    ref_batchnorm(b, n, 32, 400, p[4].v, p[5].v, p[6].v, p[7].v, BN_EPS);
    ref_maxpool2(b, n * 32, 20, 20, c);
    ref_conv2d(c, n, 32, 10, 10, p[8].v, p[9].v, 64, 3, d);
    ref_relu(d, (size_t)n * 64 * 8 * 8);
    ref_conv2d(d, n, 64, 8, 8, p[10].v, p[11].v, 64, 3, e);
    ref_relu(e, (size_t)n * 64 * 6 * 6);
    ref_batchnorm(e, n, 64, 36, p[12].v, p[13].v, p[14].v, p[15].v, BN_EPS);
    ref_maxpool2(e, n * 64, 6, 6, f);
    ref_linear(f, n, 576, p[16].v, p[17].v, 10, out);
  }
  free(a), free(b), free(c), free(d), free(e), free(f);
  return rc;
}

int tiny_mnist(bg_tctx *c, char *err, size_t errlen) {
  enum { N = 2 };
  bg_tensor *p[MNIST_NP];
  init_params(c, mnist_defs, MNIST_NP, p);
  const int64_t xsh[4] = {N, 1, 28, 28};
  bg_tensor *x = bg_tn_contiguous(bg_tn_rand(c, 4, xsh));
  if (bg_tn_realize(p, MNIST_NP) < 0 || bg_tn_realize(&x, 1) < 0)
    return say(err, errlen, "realizing the parameters: %s", why(c));
  bg_tensor *out = mnist_forward(x, p);
  if (bg_tctx_error(c)) return say(err, errlen, "building the model: %s", bg_tctx_error(c));
  if (bg_tn_ndim(out) != 2 || bg_tn_shape(out)[0] != N || bg_tn_shape(out)[1] != 10 || bg_tn_dtype(out) != BG_FLOAT32)
    return say(err, errlen, "output has %u axes (%lld, ...) of %s, expected (2,10) float32", bg_tn_ndim(out),
               (long long)bg_tn_shape(out)[0], bg_dtype_name(bg_tn_dtype(out)));
  host hp[MNIST_NP], hx, ho;
  memset(hp, 0, sizeof hp);
  memset(&hx, 0, sizeof hx);
  memset(&ho, 0, sizeof ho);
  int rc = to_host(c, out, &ho, err, errlen);
  for (unsigned i = 0; !rc && i < MNIST_NP; i++) rc = to_host(c, p[i], &hp[i], err, errlen);
  if (!rc) rc = to_host(c, x, &hx, err, errlen);
  double want[N * 10];
  if (!rc && mnist_reference(hx.v, N, hp, want) < 0) rc = say(err, errlen, "out of host memory for the reference");
  if (!rc) rc = compare("mnist output", &ho, want, 1e-4, err, errlen);
  free_hosts(hp, MNIST_NP);
  free(hx.v);
  free(ho.v);
  return rc;
}

/* ---------------- mnist_backward ---------------- */

static bg_tensor *small_forward(bg_tensor *x, bg_tensor *const *p) {
  bg_tensor *h = bg_tn_relu(bg_tn_conv2d(x, p[0], p[1], 1, 0));
  return bg_tn_relu(bg_tn_conv2d(h, p[2], p[3], 1, 0));
}

typedef struct small_ref {
  double loss, *grad[BACKWARD_NP];
} small_ref;

/* Loss (and, when grads, the gradients) of the small model on host arrays. */
static int small_reference(const double *x, const double *const *p, small_ref *r, bool grads) {
  enum { N = 4 };
  size_t n1 = N * 8 * 10 * 10, n2 = N * 8 * 6 * 6;
  double *a1 = malloc(n1 * sizeof *a1), *r1 = malloc(n1 * sizeof *r1), *a2 = malloc(n2 * sizeof *a2);
  double *d2 = malloc(n2 * sizeof *d2), *d1 = malloc(n1 * sizeof *d1);
  int rc = a1 && r1 && a2 && d2 && d1 ? 0 : -1;
  if (!rc) {
    ref_conv2d(x, N, 1, 14, 14, p[0], p[1], 8, 5, a1);
    memcpy(r1, a1, n1 * sizeof *r1);
    ref_relu(r1, n1);
    ref_conv2d(r1, N, 8, 10, 10, p[2], p[3], 8, 5, a2);
    r->loss = 0;
    for (size_t i = 0; i < n2; i++) {
      r->loss += a2[i] > 0 ? a2[i] : 0;
      d2[i] = a2[i] > 0 ? 1.0 : 0.0; /* d sum(relu(a2)) / d a2 */
    }
  }
  if (!rc && grads) {
    ref_conv2d_backward(r1, N, 8, 10, 10, p[2], 8, 5, d2, d1, r->grad[2], r->grad[3]);
    for (size_t i = 0; i < n1; i++) d1[i] = a1[i] > 0 ? d1[i] : 0.0;
    ref_conv2d_backward(x, N, 1, 14, 14, p[0], 8, 5, d1, NULL, r->grad[0], r->grad[1]);
  }
  free(a1), free(r1), free(a2), free(d2), free(d1);
  return rc;
}

int tiny_mnist_backward(bg_tctx *c, char *err, size_t errlen) {
  const double lr = 1e-4;
  bg_tensor *p[BACKWARD_NP];
  init_params(c, backward_defs, BACKWARD_NP, p);
  const int64_t xsh[4] = {4, 1, 14, 14};
  bg_tensor *x = bg_tn_contiguous(bg_tn_rand(c, 4, xsh));
  if (bg_tn_realize(p, BACKWARD_NP) < 0 || bg_tn_realize(&x, 1) < 0) return say(err, errlen, "realizing the parameters: %s", why(c));
  for (unsigned i = 0; i < BACKWARD_NP; i++) bg_tn_requires_grad(p[i], true);
  bg_tensor *loss = bg_tn_sum(small_forward(x, p), BG_ALL_AXES, false);
  if (bg_tn_backward(loss) < 0) return say(err, errlen, "backward: %s", why(c));
  bg_tensor *all[1 + BACKWARD_NP] = {loss};
  for (unsigned i = 0; i < BACKWARD_NP; i++) {
    if (bg_tn_grad(p[i], &all[1 + i]) < 0) return say(err, errlen, "gradient of %s: %s", backward_defs[i].name, why(c));
    if (!all[1 + i]) return say(err, errlen, "no gradient reached %s", backward_defs[i].name);
  }
  if (bg_tn_realize(all, 1 + BACKWARD_NP) < 0) return say(err, errlen, "realizing the loss and the gradients: %s", why(c));

  host hx, hp[BACKWARD_NP], hg[BACKWARD_NP], hl, hl2;
  memset(&hx, 0, sizeof hx), memset(hp, 0, sizeof hp), memset(hg, 0, sizeof hg), memset(&hl, 0, sizeof hl), memset(&hl2, 0, sizeof hl2);
  small_ref ref;
  memset(&ref, 0, sizeof ref);
  int rc = to_host(c, x, &hx, err, errlen);
  if (!rc) rc = to_host(c, loss, &hl, err, errlen);
  for (unsigned i = 0; !rc && i < BACKWARD_NP; i++) {
    rc = to_host(c, p[i], &hp[i], err, errlen);
    if (!rc) rc = to_host(c, all[1 + i], &hg[i], err, errlen);
    if (!rc && !(ref.grad[i] = malloc((size_t)hp[i].n * sizeof(double)))) rc = say(err, errlen, "out of host memory");
  }
  const double *pv[BACKWARD_NP];
  for (unsigned i = 0; i < BACKWARD_NP; i++) pv[i] = hp[i].v;
  if (!rc && small_reference(hx.v, pv, &ref, true) < 0) rc = say(err, errlen, "out of host memory for the reference");
  if (!rc) rc = compare("loss", &hl, &ref.loss, 1e-5, err, errlen);
  for (unsigned i = 0; !rc && i < BACKWARD_NP; i++) {
    char what[64];
    snprintf(what, sizeof what, "gradient of %s", backward_defs[i].name);
    rc = compare(what, &hg[i], ref.grad[i], 1e-4, err, errlen);
  }
  /* one SGD step: the loss must drop, to what the reference model stepped the same way gives */
  if (!rc && bg_tn_sgd_step(p, BACKWARD_NP, lr) < 0) rc = say(err, errlen, "sgd step: %s", why(c));
  if (!rc && to_host(c, bg_tn_sum(small_forward(x, p), BG_ALL_AXES, false), &hl2, err, errlen) < 0) rc = -1;
  if (!rc) {
    for (unsigned i = 0; i < BACKWARD_NP; i++)
      for (int64_t j = 0; j < hp[i].n; j++) hp[i].v[j] -= lr * ref.grad[i][j];
    if (small_reference(hx.v, pv, &ref, false) < 0) rc = say(err, errlen, "out of host memory for the reference");
    else if (!(hl2.v[0] < hl.v[0])) rc = say(err, errlen, "loss did not drop after an SGD step: %.7g -> %.7g", hl.v[0], hl2.v[0]);
    else rc = compare("loss after the SGD step", &hl2, &ref.loss, 1e-5, err, errlen);
  }
  for (unsigned i = 0; i < BACKWARD_NP; i++) free(ref.grad[i]);
  free_hosts(hp, BACKWARD_NP);
  free_hosts(hg, BACKWARD_NP);
  free(hx.v), free(hl.v), free(hl2.v);
  return rc;
}
