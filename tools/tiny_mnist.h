/* tools/tiny_mnist.h: bg-tiny's mnist and mnist_backward tests (tinygrad test/test_tiny.py) and the
 * plain C reference layers they are checked against. */
#ifndef BG_TOOLS_TINY_MNIST_H
#define BG_TOOLS_TINY_MNIST_H

#include <stddef.h>

#include "baregpu/tensor.h"

/* The tests: 0 when they pass, -1 with the reason in err. */
int tiny_mnist(bg_tctx *c, char *err, size_t errlen);
int tiny_mnist_backward(bg_tctx *c, char *err, size_t errlen);

/* ---- reference layers (tiny_mnist_ref.c): double, NCHW row-major, stride 1, no padding ---- */
void ref_conv2d(const double *x, int n, int ci, int h, int w, const double *wt, const double *b, int co, int k, double *out);
void ref_conv2d_backward(const double *x, int n, int ci, int h, int w, const double *wt, int co, int k, const double *dout,
                         double *dx, double *dw, double *db);
void ref_relu(double *x, size_t n);
void ref_batchnorm(double *x, int n, int c, int hw, const double *weight, const double *bias, const double *mean, const double *var,
                   double eps);
void ref_maxpool2(const double *x, int nc, int h, int w, double *out);
void ref_linear(const double *x, int n, int in, const double *w, const double *b, int o, double *out);

#endif
