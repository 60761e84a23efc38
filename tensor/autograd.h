/* tensor/autograd.h: private to tensor/: the per-op gradient rules autograd.c applies while it walks
 * the lazy graph from the loss back to the tensors that require gradients.
 *
 * Gradients are graph nodes like any other: nothing is computed until they are realized, and then
 * they go through the same scheduler as the forward pass (tinygrad's compute_gradient does the same on
 * its UOp graph). */
#ifndef BG_TENSOR_AUTOGRAD_H
#define BG_TENSOR_AUTOGRAD_H

#include "tensor/tensor_internal.h"

/* The gradients of u's sources given g, the gradient of u (same shape and dtype as u). Fills
 * out[0..u->nsrc) (NULL: no gradient flows to that source, e.g. a comparison or a WHERE condition).
 * Returns false when building a node failed (out of memory). */
bool ag_src_grads(bg_tctx *c, node u, node g, node out[3]);

#endif
