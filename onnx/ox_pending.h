/* onnx/ox_pending.h: tensor functions of issue 17 declared in baregpu/tensor.h whose implementations land from other
 * branches (tensor/tunary.c, treduce.c, tindex.c, nn_conv.c, ...). They are weak references here so the front end
 * links before they land: a handler that needs one that is not built reports "unsupported: ... not built" (OX_NEED)
 * and picks it up, unchanged, once the library defines it. Include only from onnx/ox_ops_*.c. */
#ifndef BG_ONNX_OX_PENDING_H
#define BG_ONNX_OX_PENDING_H

#include "baregpu/tensor.h"

#pragma weak bg_tn_cos
#pragma weak bg_tn_tan
#pragma weak bg_tn_tanh
#pragma weak bg_tn_sigmoid
#pragma weak bg_tn_erf
#pragma weak bg_tn_abs
#pragma weak bg_tn_sign
#pragma weak bg_tn_floor
#pragma weak bg_tn_ceil
#pragma weak bg_tn_round
#pragma weak bg_tn_trunc
#pragma weak bg_tn_pow
#pragma weak bg_tn_minimum
#pragma weak bg_tn_idiv
#pragma weak bg_tn_mod
#pragma weak bg_tn_fmod
#pragma weak bg_tn_bitwise
#pragma weak bg_tn_logical_not
#pragma weak bg_tn_isnan
#pragma weak bg_tn_isinf
#pragma weak bg_tn_clip
#pragma weak bg_tn_reduce
#pragma weak bg_tn_min
#pragma weak bg_tn_argmax
#pragma weak bg_tn_argmin
#pragma weak bg_tn_cumsum
#pragma weak bg_tn_softmax
#pragma weak bg_tn_gather
#pragma weak bg_tn_gather_elements
#pragma weak bg_tn_scatter_elements
#pragma weak bg_tn_gather_nd
#pragma weak bg_tn_scatter_nd
#pragma weak bg_tn_one_hot
#pragma weak bg_tn_pad_mode
#pragma weak bg_tn_conv
#pragma weak bg_tn_conv_transpose
#pragma weak bg_tn_max_pool
#pragma weak bg_tn_avg_pool
#pragma weak bg_tn_layernorm
#pragma weak bg_tn_instancenorm
#pragma weak bg_tn_from_file   /* tensor/tload.c */

#define OX_NEED(x, fn) \
  do { \
    if (!(fn)) return ox_unsup((x), #fn " is not built in this library yet"); \
  } while (0)

#endif
