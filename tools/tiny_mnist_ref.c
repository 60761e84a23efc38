/* tools/tiny_mnist_ref.c: the mnist layers as plain loops over host arrays in double, the
 * independent reference bg-tiny's mnist tests compare the tensor layer with (NCHW, row-major). */
#include <math.h>
#include <string.h>

#include "tools/tiny_mnist.h"

/* out (n, co, h-k+1, w-k+1) = b + sum x * w: valid correlation, stride 1 (as nn.Conv2d). */
void ref_conv2d(const double *x, int n, int ci, int h, int w, const double *wt, const double *b, int co, int k, double *out) {
  int oh = h - k + 1, ow = w - k + 1;
  for (int in = 0; in < n; in++)
    for (int o = 0; o < co; o++)
      for (int y = 0; y < oh; y++)
        for (int xx = 0; xx < ow; xx++) {
          double acc = b ? b[o] : 0.0;
          for (int c = 0; c < ci; c++)
            for (int ky = 0; ky < k; ky++)
              for (int kx = 0; kx < k; kx++)
                acc += x[((in * ci + c) * h + y + ky) * w + xx + kx] * wt[((o * ci + c) * k + ky) * k + kx];
          out[((in * co + o) * oh + y) * ow + xx] = acc;
        }
}

/* Given dout = dL/dout of ref_conv2d: dx (may be NULL), dw and db (may be NULL), overwritten. */
void ref_conv2d_backward(const double *x, int n, int ci, int h, int w, const double *wt, int co, int k, const double *dout,
                         double *dx, double *dw, double *db) {
  int oh = h - k + 1, ow = w - k + 1;
  if (dx) memset(dx, 0, sizeof(double) * (size_t)(n * ci * h * w));
  memset(dw, 0, sizeof(double) * (size_t)(co * ci * k * k));
  if (db) memset(db, 0, sizeof(double) * (size_t)co);
  for (int in = 0; in < n; in++)
    for (int o = 0; o < co; o++)
      for (int y = 0; y < oh; y++)
        for (int xx = 0; xx < ow; xx++) {
          double g = dout[((in * co + o) * oh + y) * ow + xx];
          if (db) db[o] += g;
          for (int c = 0; c < ci; c++)
            for (int ky = 0; ky < k; ky++)
              for (int kx = 0; kx < k; kx++) {
                size_t xi = (size_t)(((in * ci + c) * h + y + ky) * w + xx + kx), wi = (size_t)(((o * ci + c) * k + ky) * k + kx);
                dw[wi] += g * x[xi];
                if (dx) dx[xi] += g * wt[wi];
              }
        }
}

void ref_relu(double *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0.0;
}

/* Eval batch norm over axis 1 of (n, c, hw). */
void ref_batchnorm(double *x, int n, int c, int hw, const double *weight, const double *bias, const double *mean, const double *var,
                   double eps) {
  for (int in = 0; in < n; in++)
    for (int ch = 0; ch < c; ch++) {
      double scale = weight[ch] / sqrt(var[ch] + eps);
      for (int i = 0; i < hw; i++) {
        double *v = &x[(in * c + ch) * hw + i];
        *v = (*v - mean[ch]) * scale + bias[ch];
      }
    }
}

/* 2x2 max pool, stride 2, of (nc, h, w) -> (nc, h/2, w/2). */
void ref_maxpool2(const double *x, int nc, int h, int w, double *out) {
  int oh = h / 2, ow = w / 2;
  for (int p = 0; p < nc; p++)
    for (int y = 0; y < oh; y++)
      for (int xx = 0; xx < ow; xx++) {
        const double *b = &x[(p * h + 2 * y) * w + 2 * xx];
        double m = fmax(fmax(b[0], b[1]), fmax(b[w], b[w + 1]));
        out[(p * oh + y) * ow + xx] = m;
      }
}

/* out (n, o) = x (n, i) @ w^T (w is (o, i)) + b. */
void ref_linear(const double *x, int n, int in, const double *w, const double *b, int o, double *out) {
  for (int r = 0; r < n; r++)
    for (int j = 0; j < o; j++) {
      double acc = b[j];
      for (int i = 0; i < in; i++) acc += x[r * in + i] * w[j * in + i];
      out[r * o + j] = acc;
    }
}
