/* tensor/tmove.c: movement ops, cat and contiguous of the public API (argument checks and error
 * messages here; the graph nodes come from tgraph.c). matmul: tmatmul.c. */
#include <stdio.h>
#include <string.h>

#include "tensor/tensor_internal.h"

/* A NULL operand leaves a message (t_null_arg); the error tensor passes through. */
#define GUARD(a) \
  if (!(a) || t_dead(a)) return (a) ? &(a)->c->err_t : t_null_arg(__func__, #a, NULL)


/* A shape as given by the caller: may hold -1, so printed from the raw numbers. */
static void raw_str(unsigned n, const int64_t *d, char *buf, size_t len) {
  tshape s = t_mkshape(n, d);
  t_shape_str(&s, buf, len);
}

bg_tensor *bg_tn_reshape(bg_tensor *a, unsigned ndim, const int64_t *shape) {
  GUARD(a);
  bg_tctx *c = a->c;
  tshape in = t_shape_of(a);
  SHSTR(si, &in);
  char so[160] = "()";
  if (ndim > BG_MAX_DIMS || (ndim && !shape)) return t_fail(c, "reshape: %u dimensions for %s, at most %d", ndim, si, BG_MAX_DIMS);
  raw_str(ndim, shape, so, sizeof so);
  int64_t known = 1, total = t_numel(&in);
  int infer = -1;
  for (unsigned i = 0; i < ndim; i++) {
    if (shape[i] == -1 && infer < 0) infer = (int)i;
    else if (shape[i] < 0 && !BG_DIM_IS_VAR(shape[i])) return t_fail(c, "reshape: cannot reshape %s to %s: bad dimension %lld", si, so, (long long)shape[i]);
    else if (BG_DIM_VALUE(shape[i]) && known > INT64_MAX / BG_DIM_VALUE(shape[i])) return t_fail(c, "reshape: cannot reshape %s to %s: too many elements", si, so);
    else known *= BG_DIM_VALUE(shape[i]); /* a symbolic size counts as bound */
  }
  tshape out = t_mkshape(ndim, shape);
  if (infer >= 0) {
    if (known == 0 || total % known)
      return t_fail(c, "reshape: cannot reshape %s to %s: %lld elements do not divide by %lld", si, so, (long long)total,
                    (long long)known);
    out.d[infer] = total / known;
    known = total;
  }
  if (known != total)
    return t_fail(c, "reshape: cannot reshape %s to %s: %lld elements vs %lld", si, so, (long long)total, (long long)known);
  return t_wrap(c, n_reshape(c, t_node(a), &out));
}

bg_tensor *bg_tn_permute(bg_tensor *a, const unsigned *order) {
  GUARD(a);
  uint32_t seen = 0;
  char os[160] = "(";
  size_t len = 1;
  for (unsigned i = 0; i < a->ndim && order; i++) len += (size_t)snprintf(os + len, sizeof os - len, "%s%u", i ? "," : "", order[i]);
  snprintf(os + len, sizeof os - len, ")");
  for (unsigned i = 0; i < a->ndim; i++) {
    if (!order || order[i] >= a->ndim || (seen >> order[i]) & 1u) {
      tshape s = t_shape_of(a);
      SHSTR(ss, &s);
      return t_fail(a->c, "permute: order %s is not a permutation of the %u axes of %s", order ? os : "NULL", a->ndim, ss);
    }
    seen |= 1u << order[i];
  }
  return t_wrap(a->c, n_permute(a->c, t_node(a), order));
}

bg_tensor *bg_tn_expand(bg_tensor *a, unsigned ndim, const int64_t *shape) {
  GUARD(a);
  bg_tctx *c = a->c;
  tshape in = t_shape_of(a);
  SHSTR(si, &in);
  char so[160] = "()";
  if (ndim > BG_MAX_DIMS || (ndim && !shape)) return t_fail(c, "expand: %u dimensions for %s, at most %d", ndim, si, BG_MAX_DIMS);
  raw_str(ndim, shape, so, sizeof so);
  if (ndim < in.n) return t_fail(c, "expand: cannot expand %s to %s: fewer dimensions", si, so);
  tshape out = t_mkshape(ndim, shape);
  unsigned off = ndim - in.n;
  for (unsigned i = 0; i < ndim; i++) {
    int64_t src = i < off ? 1 : in.d[i - off];
    if (shape[i] == -1 && i >= off) out.d[i] = src;
    else if ((shape[i] < 0 && !BG_DIM_IS_VAR(shape[i])) || (src != 1 && src != shape[i]))
      return t_fail(c, "expand: cannot expand %s to %s: axis %u has size %lld", si, so, i, (long long)src);
  }
  return t_wrap(c, n_broadcast_to(c, t_node(a), &out));
}

bg_tensor *bg_tn_pad(bg_tensor *a, const int64_t (*pads)[2]) {
  GUARD(a);
  bg_tctx *c = a->c;
  tshape in = t_shape_of(a);
  SHSTR(si, &in);
  if (!pads && a->ndim) return t_fail(c, "pad: no padding given for %s", si);
  /* negative padding crops, as in tinygrad: shrink first, then pad */
  int64_t sb[BG_MAX_DIMS][2], pb[BG_MAX_DIMS][2];
  for (unsigned i = 0; i < a->ndim; i++) {
    int64_t lo = pads[i][0], hi = pads[i][1];
    if (BG_DIM_IS_VAR(in.d[i]) && (lo || hi)) return t_fail(c, "pad: axis %u of %s is symbolic, padding it is not supported", i, si);
    if (lo + hi + in.d[i] < 0 || -lo > in.d[i] || -hi > in.d[i])
      return t_fail(c, "pad: padding (%lld,%lld) of axis %u leaves a negative size in %s", (long long)lo, (long long)hi, i, si);
    sb[i][0] = lo < 0 ? -lo : 0;
    sb[i][1] = in.d[i] - (hi < 0 ? -hi : 0);
    pb[i][0] = lo > 0 ? lo : 0;
    pb[i][1] = hi > 0 ? hi : 0;
  }
  return t_wrap(c, n_pad(c, n_shrink(c, t_node(a), sb), pb));
}

bg_tensor *bg_tn_shrink(bg_tensor *a, const int64_t (*bounds)[2]) {
  GUARD(a);
  bg_tctx *c = a->c;
  tshape in = t_shape_of(a);
  SHSTR(si, &in);
  if (!bounds && a->ndim) return t_fail(c, "shrink: no bounds given for %s", si);
  for (unsigned i = 0; i < a->ndim; i++)
    if (!t_shrink_ok(c, in.d[i], bounds[i][0], bounds[i][1]))
      return t_fail(c, "shrink: bounds [%lld,%lld) of axis %u are outside %s", (long long)bounds[i][0], (long long)bounds[i][1],
                    i, si);
  return t_wrap(c, n_shrink(c, t_node(a), bounds));
}

bg_tensor *bg_tn_flip(bg_tensor *a, uint32_t axes) {
  GUARD(a);
  uint32_t all = a->ndim >= 32 ? 0xffffffffu : (1u << a->ndim) - 1u;
  if (axes == BG_ALL_AXES) axes = all;
  if (axes & ~all) {
    tshape s = t_shape_of(a);
    SHSTR(ss, &s);
    return t_fail(a->c, "flip: axis %d out of range for shape %s", __builtin_ctz(axes & ~all), ss);
  }
  return t_wrap(a->c, n_flip(a->c, t_node(a), axes));
}

bool t_axis(const bg_tensor *t, const char *op, int axis, unsigned *out) {
  int n = (int)t->ndim;
  if (axis < -n || axis >= n) {
    tshape s = t_shape_of(t);
    SHSTR(ss, &s);
    t_fail(t->c, "%s: axis %d out of range for shape %s (expected %d..%d)", op, axis, ss, -n, n - 1);
    return false;
  }
  *out = (unsigned)(axis < 0 ? axis + n : axis);
  return true;
}

/* tinygrad's cat: pad every piece to the full extent of the axis and add them up. */
bg_tensor *bg_tn_cat(bg_tensor *const *ts, unsigned n, int axis_in) {
  if (!ts || !n) {   /* no tensor, so no context to latch on: NULL and the message */
    bg_error(BG_EINVAL, "cat: %s, expected at least one tensor", ts ? "n is 0" : "the tensor array is NULL");
    return NULL;
  }
  bg_tensor *any = NULL;
  for (unsigned i = 0; i < n && !any; i++) any = ts[i];
  if (!any) {
    bg_error(BG_EINVAL, "cat: all %u tensors are NULL", n);
    return NULL;
  }
  bg_tctx *c = any->c;
  for (unsigned i = 0; i < n; i++) {
    if (!ts[i]) {
      bg_error(BG_EINVAL, "cat: tensor %u is NULL", i);
      return t_fail(c, "cat: tensor %u is NULL", i);
    }
    if (ts[i]->c != c) return t_fail(c, "cat: tensors belong to different contexts");
    if (t_dead(ts[i])) return &c->err_t;
  }
  tshape s0 = t_shape_of(ts[0]);
  SHSTR(s0s, &s0);
  unsigned axis;
  if (!t_axis(ts[0], "cat", axis_in, &axis)) return &c->err_t;
  int64_t total = 0;
  enum ir_scalar s = IR_DT_SCALAR(t_node(ts[0])->dt);
  for (unsigned i = 0; i < n; i++) {
    tshape si = t_shape_of(ts[i]);
    bool ok = si.n == s0.n;
    for (unsigned k = 0; ok && k < s0.n; k++) ok = k == axis || si.d[k] == s0.d[k];
    if (!ok) {
      SHSTR(sis, &si);
      return t_fail(c, "cat: shapes %s and %s differ outside axis %u", s0s, sis, axis);
    }
    total += si.d[axis];
    s = t_promote(s, IR_DT_SCALAR(t_node(ts[i])->dt));
  }
  node acc = NULL;
  int64_t at = 0, pads[BG_MAX_DIMS][2];
  memset(pads, 0, sizeof pads);
  for (unsigned i = 0; i < n; i++) {
    int64_t len = ts[i]->shape[axis];
    pads[axis][0] = at;
    pads[axis][1] = total - at - len;
    at += len;
    node p = n_pad(c, n_cast(c, t_node(ts[i]), s), pads);
    acc = acc ? n_alu(c, s == IR_DT_BOOL ? IR_OR : IR_ADD, acc, p) : p;
  }
  return t_wrap(c, acc);
}

bg_tensor *bg_tn_contiguous(bg_tensor *a) {
  GUARD(a);
  node u = t_node(a);
  return t_is_view(u) ? a : t_wrap(a->c, n_bufferize(a->c, u));
}
