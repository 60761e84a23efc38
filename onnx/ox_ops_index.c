/* onnx/ox_ops_index.c: indexing operators (Gather, GatherElements, Scatter/ScatterElements, GatherND, ScatterND,
 * OneHot, Pad with its modes, Trilu). */
#include <string.h>

#include "ox.h"
#include "ox_ops.h"

static int axis_attr(ox_ctx *x, unsigned nd, int *ax) {
  int64_t a;
  int r = ox_attr_int(x, "axis", 0, &a);
  return r < 0 ? r : ox_axis(x, a, nd, ax);
}

int ox_op_gather(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0), *idx = ox_in(x, 1);
  int ax;
  int r = axis_attr(x, bg_tn_ndim(a), &ax);
  if (r < 0) return r;
  /* a host gather from a host-known 1-D vector (Shape -> Gather) keeps the values on the host */
  ox_val *hv = &x->vals[x->node->in[0]], *iv = &x->vals[x->node->in[1]];
  if (hv->have_ints && iv->have_ints && bg_tn_ndim(a) == 1 && bg_tn_ndim(idx) <= 1 && iv->nints <= BG_MAX_DIMS) {
    int64_t v[BG_MAX_DIMS];
    for (size_t i = 0; i < iv->nints; i++) {
      int64_t k = iv->ints[i] < 0 ? iv->ints[i] + (int64_t)hv->nints : iv->ints[i];
      if (k < 0 || (size_t)k >= hv->nints) return ox_err(x, BG_EFORMAT, "index %lld out of range for %zu",
                                                         (long long)iv->ints[i], hv->nints);
      v[i] = hv->ints[k];
    }
    int64_t sh[1] = {(int64_t)iv->nints};
    bg_tensor *t = bg_tn_cast(bg_tn_from(x->c, BG_INT64, bg_tn_ndim(idx), sh, v), bg_tn_dtype(a));
    return ox_set_ints(x, 0, t, v, iv->nints);
  }
  return ox_set(x, 0, bg_tn_gather(a, ax, idx));
}

int ox_op_gather_elements(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  int ax;
  int r = axis_attr(x, bg_tn_ndim(a), &ax);
  if (r < 0) return r;
  return ox_set(x, 0, bg_tn_gather_elements(a, ax, ox_in(x, 1)));
}

static int reduction(ox_ctx *x, enum bg_scatter_reduce *red) {
  char s[8];
  int r = ox_attr_string(x, "reduction", "none", s, sizeof s);
  if (r < 0) return r;
  if (!strcmp(s, "none")) *red = BG_SCATTER_NONE;
  else if (!strcmp(s, "add")) *red = BG_SCATTER_ADD;
  else if (!strcmp(s, "mul")) *red = BG_SCATTER_MUL;
  else if (!strcmp(s, "max")) *red = BG_SCATTER_MAX;
  else if (!strcmp(s, "min")) *red = BG_SCATTER_MIN;
  else return ox_err(x, BG_EFORMAT, "attribute 'reduction' is '%s'", s);
  return 0;
}

int ox_op_scatter_elements(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  int ax;
  enum bg_scatter_reduce red;
  int r = axis_attr(x, bg_tn_ndim(a), &ax);
  if (r >= 0) r = reduction(x, &red);
  if (r < 0) return r;
  return ox_set(x, 0, bg_tn_scatter_elements(a, ax, ox_in(x, 1), ox_in(x, 2), red));
}

int ox_op_gather_nd(ox_ctx *x) {
  int64_t bd;
  int r = ox_attr_int(x, "batch_dims", 0, &bd);
  if (r < 0) return r;
  if (bd) return ox_unsup(x, "batch_dims %lld", (long long)bd);
  return ox_set(x, 0, bg_tn_gather_nd(ox_in(x, 0), ox_in(x, 1)));
}

int ox_op_scatter_nd(ox_ctx *x) {
  enum bg_scatter_reduce red;
  int r = reduction(x, &red);
  if (r < 0) return r;
  return ox_set(x, 0, bg_tn_scatter_nd(ox_in(x, 0), ox_in(x, 1), ox_in(x, 2), red));
}

int ox_op_one_hot(ox_ctx *x) {
  double depth;
  int64_t axis;
  int r = ox_scalar(x, 1, &depth);
  if (r >= 0) r = ox_attr_int(x, "axis", -1, &axis);
  if (r < 0) return r;
  bg_tensor *vals = ox_in(x, 2);
  if (bg_tn_numel(vals) != 2) return ox_err(x, BG_EFORMAT, "values has %lld elements, expected 2",
                                            (long long)bg_tn_numel(vals));
  bg_tensor *idx = ox_in(x, 0);
  if (ox_is_float(bg_tn_dtype(idx))) idx = bg_tn_cast(idx, BG_INT64);   /* OneHot takes any numeric indices */
  bg_tensor *oh = bg_tn_one_hot(idx, (int64_t)depth, (int)axis);
  int64_t b0[1][2] = {{0, 1}}, b1[1][2] = {{1, 2}};
  bg_tensor *off = bg_tn_reshape(bg_tn_shrink(vals, b0), 0, NULL), *on = bg_tn_reshape(bg_tn_shrink(vals, b1), 0, NULL);
  return ox_set(x, 0, bg_tn_where(oh, on, off));
}

int ox_op_pad(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t p[2 * BG_MAX_DIMS], axes[BG_MAX_DIMS];
  size_t n, na = 0;
  char mode[16];
  double value = 0;
  int r = ox_attr_string(x, "mode", "constant", mode, sizeof mode);
  if (r < 0) return r;
  if (x->m->opset < 11) {
    r = ox_attr_ints(x, x->m->opset < 2 ? "paddings" : "pads", p, 2 * BG_MAX_DIMS, &n);
    if (r >= 0) r = ox_attr_float(x, "value", 0, &value);
  } else {
    r = ox_ints(x, 1, p, 2 * BG_MAX_DIMS, &n);
    if (r >= 0 && ox_has(x, 2) && bg_tn_numel(ox_in(x, 2)) == 1) r = ox_scalar(x, 2, &value);
    if (r >= 0 && ox_has(x, 3)) r = ox_ints(x, 3, axes, BG_MAX_DIMS, &na);
  }
  if (r < 0) return r;
  unsigned k = na ? (unsigned)na : nd;
  if (n != 2 * k) return ox_err(x, BG_EFORMAT, "pads has %zu entries, expected %u", n, 2 * k);
  int64_t pp[BG_MAX_DIMS][2] = {{0}};
  for (unsigned i = 0; i < k; i++) {
    int d = (int)i;
    if (na) {
      r = ox_axis(x, axes[i], nd, &d);
      if (r < 0) return r;
    }
    pp[d][0] = p[i];
    pp[d][1] = p[i + k];
  }
  enum bg_pad_mode pm;
  if (!strcmp(mode, "constant")) pm = BG_PAD_CONSTANT;
  else if (!strcmp(mode, "reflect")) pm = BG_PAD_REFLECT;
  else if (!strcmp(mode, "edge")) pm = BG_PAD_EDGE;
  else if (!strcmp(mode, "wrap")) pm = BG_PAD_WRAP;
  else return ox_err(x, BG_EFORMAT, "attribute 'mode' is '%s'", mode);
  return ox_set(x, 0, bg_tn_pad_mode(a, pp, pm, value));
}

int ox_op_trilu(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  if (nd < 2) return ox_err(x, BG_EFORMAT, "input of rank %u", nd);
  int64_t upper, k = 0;
  int r = ox_attr_int(x, "upper", 1, &upper);
  if (r >= 0 && ox_has(x, 1)) {
    double kv;
    r = ox_scalar(x, 1, &kv);
    k = (int64_t)kv;
  }
  if (r < 0) return r;
  int64_t n = bg_tn_shape(a)[nd - 2], m = bg_tn_shape(a)[nd - 1];
  int64_t sr[2] = {n, 1}, sc[2] = {1, m};
  bg_tensor *row = bg_tn_reshape(bg_tn_arange(x->c, BG_INT32, 0, (double)n, 1), 2, sr);
  bg_tensor *col = bg_tn_reshape(bg_tn_arange(x->c, BG_INT32, 0, (double)m, 1), 2, sc);
  /* upper keeps j - i >= k, lower keeps j - i <= k */
  bg_tensor *diff = bg_tn_sub(col, row);
  bg_tensor *keep = upper ? ox_not(bg_tn_lt(diff, bg_tn_scalar(x->c, BG_INT32, (double)k)))
                          : ox_not(bg_tn_lt(bg_tn_scalar(x->c, BG_INT32, (double)k), diff));
  return ox_set(x, 0, bg_tn_where(keep, a, ox_scalar_like(a, 0)));
}
