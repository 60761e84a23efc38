/* tensor/nn.h: private to tensor/: helpers shared by the nn layer files (nn.c, nn_pool.c). The
 * layers are written with the public tensor API, so argument errors of the ops they use latch as
 * usual; these helpers add the layer-level checks. */
#ifndef BG_TENSOR_NN_H
#define BG_TENSOR_NN_H

#include "tensor/tensor_internal.h"

/* Latches a layer error (message naming the layer and the shapes) and returns the error tensor of
 * x's context. */
bg_tensor *nn_fail(bg_tensor *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The windows of size k[0] x k[1] and stride s[0] x s[1] over x's last two axes:
 * (..., H, W) -> (..., OH, OW, KH, KW) (tinygrad's _pool, no dilation). */
bg_tensor *nn_pool(const char *op, bg_tensor *x, const int64_t *k, const int64_t *s);
/* The windows over x's last nk (1 to 3) axes with kernel k, stride s and dilation d (each >= 1):
 * (..., I...) -> (..., O..., K...), O = ceil((I - d*(k-1)) / s) (tinygrad's _pool). */
bg_tensor *nn_windows(const char *op, bg_tensor *x, unsigned nk, const int64_t *k, const int64_t *s, const int64_t *d);
/* A layer's tensors are usable: none NULL (past the first, NULL is allowed when optional_tail), all of one
 * context, none the error tensor. Otherwise *err is what the layer returns. */
bool nn_usable(bg_tensor *const *ts, unsigned n, bool optional_tail, bg_tensor **err);
/* "(2,3)" into buf. */
void nn_shape_str(const bg_tensor *t, char *buf, size_t n);

#endif
