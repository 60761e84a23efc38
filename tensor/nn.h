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
/* "(2,3)" into buf. */
void nn_shape_str(const bg_tensor *t, char *buf, size_t n);

#endif
