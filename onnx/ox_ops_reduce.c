/* onnx/ox_ops_reduce.c: reductions (ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp), ArgMax/ArgMin,
 * Softmax/LogSoftmax (the opset < 13 forms flatten at axis first, Operators.md "Softmax-11"), CumSum. */
#include <string.h>

#include "ox.h"
#include "ox_ops.h"

/* The reduction's axes as a bit mask over ndim: from the attribute (older opsets) or input 1. */
static int reduce_axes(ox_ctx *x, unsigned ndim, bool from_input, uint32_t *mask, bool *noop) {
  int64_t ax[BG_MAX_DIMS];
  size_t n = 0;
  int r;
  *noop = false;
  if (from_input) {
    r = ox_has(x, 1) ? ox_ints(x, 1, ax, BG_MAX_DIMS, &n) : 0;
  } else {
    r = ox_attr_ints(x, "axes", ax, BG_MAX_DIMS, &n);
  }
  if (r < 0) return r;
  int64_t noop_empty;
  r = ox_attr_int(x, "noop_with_empty_axes", 0, &noop_empty);
  if (r < 0) return r;
  if (n == 0) {
    *noop = noop_empty != 0;
    *mask = ndim ? (uint32_t)((1u << ndim) - 1) : 0;
    return 0;
  }
  *mask = 0;
  for (size_t i = 0; i < n; i++) {
    int a;
    r = ox_axis(x, ax[i], ndim, &a);
    if (r < 0) return r;
    *mask |= 1u << a;
  }
  return 0;
}

static bg_tensor *mask_min(bg_tensor *a, uint32_t mask, bool keep) {
  return bg_tn_min(a, mask, keep);
}

int ox_op_reduce(ox_ctx *x) {
  const char *op = x->node->pb->op_type + 6;   /* after "Reduce" */
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t keep;
  int r = ox_attr_int(x, "keepdims", 1, &keep);
  if (r < 0) return r;
  /* axes became an input in opset 13 for ReduceSum, 18 for the others */
  bool from_input = !strcmp(op, "Sum") ? x->m->opset >= 13 : x->m->opset >= 18;
  uint32_t mask;
  bool noop;
  r = reduce_axes(x, nd, from_input, &mask, &noop);
  if (r < 0) return r;
  if (noop) return ox_set(x, 0, a);
  if (nd == 0) mask = 0;
  bool k = keep != 0;
  bg_tensor *o;
  if (!strcmp(op, "Sum")) o = bg_tn_sum(a, mask, k);
  else if (!strcmp(op, "Mean")) o = bg_tn_mean(a, mask, k);
  else if (!strcmp(op, "Max")) o = bg_tn_max(a, mask, k);
  else if (!strcmp(op, "Min")) o = mask_min(a, mask, k);
  else if (!strcmp(op, "SumSquare")) o = bg_tn_sum(bg_tn_mul(a, a), mask, k);
  else if (!strcmp(op, "L2")) o = bg_tn_sqrt(bg_tn_sum(bg_tn_mul(a, a), mask, k));
  else if (!strcmp(op, "LogSum")) o = bg_tn_log(bg_tn_sum(a, mask, k));
  else if (!strcmp(op, "LogSumExp")) {
    bg_tensor *m = bg_tn_max(a, mask, true);
    o = bg_tn_add(bg_tn_log(bg_tn_sum(bg_tn_exp(bg_tn_sub(a, m)), mask, true)), m);
    if (!k) {
      int64_t sh[BG_MAX_DIMS];
      unsigned n = 0;
      for (unsigned d = 0; d < nd; d++)
        if (!(mask >> d & 1)) sh[n++] = bg_tn_shape(a)[d];
      o = bg_tn_reshape(o, n, sh);
    }
  } else if (!strcmp(op, "L1")) {
    o = bg_tn_sum(bg_tn_abs(a), mask, k);
  } else if (!strcmp(op, "Prod")) {
    int axes[BG_MAX_DIMS];
    unsigned n = 0;
    for (unsigned d = 0; d < nd; d++)
      if (mask >> d & 1) axes[n++] = (int)d;
    o = n ? bg_tn_reduce(a, BG_REDUCE_PROD, axes, n, k) : a;
  } else {
    return ox_unsup(x, "no reduction mapping");
  }
  /* integer sums keep the input's dtype in ONNX */
  if (bg_tn_dtype(o) != bg_tn_dtype(a) && strcmp(op, "Mean")) o = bg_tn_cast(o, bg_tn_dtype(a));
  return ox_set(x, 0, o);
}

int ox_op_argmax(ox_ctx *x) {
  int64_t axis, keep, last;
  int r = ox_attr_int(x, "axis", 0, &axis);
  if (r >= 0) r = ox_attr_int(x, "keepdims", 1, &keep);
  if (r >= 0) r = ox_attr_int(x, "select_last_index", 0, &last);
  if (r < 0) return r;
  bg_tensor *a = ox_in(x, 0);
  int ax;
  r = ox_axis(x, axis, bg_tn_ndim(a), &ax);
  if (r < 0) return r;
  bool mx = !strcmp(x->node->pb->op_type, "ArgMax");
  if (last) {   /* the last extreme: the first of the flipped axis, mapped back */
    bg_tensor *f = bg_tn_flip(a, 1u << ax);
    bg_tensor *i = mx ? bg_tn_argmax(f, ax, keep != 0) : bg_tn_argmin(f, ax, keep != 0);
    bg_tensor *n1 = bg_tn_scalar(x->c, bg_tn_dtype(i), (double)(bg_tn_shape(a)[ax] - 1));
    return ox_set(x, 0, bg_tn_cast(bg_tn_sub(n1, i), BG_INT64));
  }
  bg_tensor *i = mx ? bg_tn_argmax(a, ax, keep != 0) : bg_tn_argmin(a, ax, keep != 0);
  return ox_set(x, 0, bg_tn_cast(i, BG_INT64));
}

static bg_tensor *softmax_last(bg_tensor *a, int ax, bool log) {
  uint32_t m = 1u << ax;
  bg_tensor *s = bg_tn_sub(a, bg_tn_max(a, m, true));
  bg_tensor *e = bg_tn_exp(s);
  bg_tensor *sum = bg_tn_sum(e, m, true);
  return log ? bg_tn_sub(s, bg_tn_log(sum)) : bg_tn_div(e, sum);
}

int ox_op_softmax(ox_ctx *x) {
  bool log = !strcmp(x->node->pb->op_type, "LogSoftmax");
  bool hard = !strcmp(x->node->pb->op_type, "Hardmax");
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  bool old = x->m->opset < 13;
  int64_t axis;
  int r = ox_attr_int(x, "axis", old ? 1 : -1, &axis);
  if (r < 0) return r;
  int ax;
  r = ox_axis(x, axis, nd, &ax);
  if (r < 0) return r;
  if (hard) return ox_unsup(x, "Hardmax is not mapped");
  if (!old) return ox_set(x, 0, softmax_last(a, ax, log));
  /* opset < 13: coerce to 2-D (prod of dims before axis, prod of dims from axis) */
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < (int)nd; d++) {
    if (d < ax) outer *= bg_tn_shape(a)[d];
    else inner *= bg_tn_shape(a)[d];
  }
  int64_t sh2[2] = {outer, inner};
  bg_tensor *o = softmax_last(bg_tn_reshape(a, 2, sh2), 1, log);
  return ox_set(x, 0, bg_tn_reshape(o, nd, bg_tn_shape(a)));
}

int ox_op_cumsum(ox_ctx *x) {
  int64_t ex, rev, ax[1];
  size_t n;
  int r = ox_attr_int(x, "exclusive", 0, &ex);
  if (r >= 0) r = ox_attr_int(x, "reverse", 0, &rev);
  if (r >= 0) r = ox_ints(x, 1, ax, 1, &n);
  if (r < 0) return r;
  if (n != 1) return ox_err(x, BG_EFORMAT, "input 1 (axis) has %zu elements, expected 1", n);
  bg_tensor *a = ox_in(x, 0);
  int axis;
  r = ox_axis(x, ax[0], bg_tn_ndim(a), &axis);
  if (r < 0) return r;
  return ox_set(x, 0, bg_tn_cumsum(a, axis, ex != 0, rev != 0));
}
