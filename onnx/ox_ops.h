/* onnx/ox_ops.h: the operator handlers of onnx/ox_ops_*.c (one per ONNX operator or family), listed in the table
 * of ox_ops.c; helpers they share. */
#ifndef BG_ONNX_OX_OPS_H
#define BG_ONNX_OX_OPS_H

#include "ox.h"

/* ox_ops_elem.c */
int ox_op_unary(ox_ctx *x);
int ox_op_binary(ox_ctx *x);
int ox_op_variadic(ox_ctx *x);
int ox_op_where(ox_ctx *x);
int ox_op_clip(ox_ctx *x);
int ox_op_activation(ox_ctx *x);
int ox_op_isinf(ox_ctx *x);
int ox_op_cast(ox_ctx *x);
int ox_op_dropout(ox_ctx *x);
bg_tensor *ox_scalar_like(bg_tensor *a, double v);
bg_tensor *ox_minimum(bg_tensor *a, bg_tensor *b);
bg_tensor *ox_not(bg_tensor *a);
/* ox_ops_reduce.c */
int ox_op_reduce(ox_ctx *x);
int ox_op_argmax(ox_ctx *x);
int ox_op_softmax(ox_ctx *x);
int ox_op_cumsum(ox_ctx *x);
/* ox_ops_shape.c */
int ox_op_reshape(ox_ctx *x);
int ox_op_transpose(ox_ctx *x);
int ox_op_squeeze(ox_ctx *x);
int ox_op_unsqueeze(ox_ctx *x);
int ox_op_concat(ox_ctx *x);
int ox_op_slice(ox_ctx *x);
int ox_op_split(ox_ctx *x);
int ox_op_expand(ox_ctx *x);
int ox_op_flatten(ox_ctx *x);
int ox_op_shape(ox_ctx *x);
int ox_op_size(ox_ctx *x);
int ox_op_tile(ox_ctx *x);
int ox_op_constant(ox_ctx *x);
int ox_op_constant_of_shape(ox_ctx *x);
int ox_op_range(ox_ctx *x);
int ox_op_depth_space(ox_ctx *x);
/* ox_ops_nn.c */
int ox_op_matmul(ox_ctx *x);
int ox_op_gemm(ox_ctx *x);
int ox_op_conv(ox_ctx *x);
int ox_op_pool(ox_ctx *x);
int ox_op_global_pool(ox_ctx *x);
int ox_op_batchnorm(ox_ctx *x);
int ox_op_instancenorm(ox_ctx *x);
int ox_op_layernorm(ox_ctx *x);
int ox_op_lpnorm(ox_ctx *x);
/* ox_ops_index.c */
int ox_op_gather(ox_ctx *x);
int ox_op_gather_elements(ox_ctx *x);
int ox_op_scatter_elements(ox_ctx *x);
int ox_op_gather_nd(ox_ctx *x);
int ox_op_scatter_nd(ox_ctx *x);
int ox_op_one_hot(ox_ctx *x);
int ox_op_pad(ox_ctx *x);
int ox_op_trilu(ox_ctx *x);

#endif
