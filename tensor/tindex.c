/* tensor/tindex.c: indexing ops (ONNX Gather, GatherElements, ScatterElements, GatherND, ScatterND,
 * OneHot) from public tensor ops, as tinygrad's Tensor.gather: an index becomes a one-hot compare of
 * the index against an arange of the axis, and a gather is a sum over that axis of where(onehot, x, 0),
 * so it fuses into one reduce kernel, needs no data-dependent addressing, and autograd differentiates it
 * (the backward of where and sum). An index out of range matches no position and reads 0.
 *
 * Scatters apply their updates one slice of the scattered axis at a time (acc = where(hit, combine(acc,
 * update), acc)): within a slice no two updates meet, so duplicates combine in index order and, without
 * a reduction, the last one wins; every step is elementwise, so the whole scatter is one kernel. */
#include <string.h>

#include "tensor/tensor_internal.h"

static bool is_int(enum bg_dtype t) { return t >= BG_INT8 && t <= BG_UINT64; }

/* The index dtype the compares run in: int64 for 64-bit and uint32 indices or big axes, else int32. */
static enum bg_dtype work_dtype(enum bg_dtype t, int64_t span) {
  return t == BG_INT64 || t == BG_UINT64 || t == BG_UINT32 || span > INT32_MAX / 2 ? BG_INT64 : BG_INT32;
}

/* Common argument checks: both tensors usable and of one context, the index an integer tensor. */
static bool check2(const char *op, bg_tensor *x, bg_tensor *idx, bg_tensor **err) {
  if (!x || !idx) {
    *err = t_null_arg(op, x ? "indices" : "x", x ? x : idx);
    return false;
  }
  *err = &x->c->err_t;
  if (idx->c != x->c) {
    t_fail(x->c, "%s: tensors belong to different contexts", op);
    return false;
  }
  if (t_dead(x) || t_dead(idx)) return false;
  if (!is_int(idx->dt)) {
    t_fail(x->c, "%s: indices dtype %s: need an integer dtype", op, bg_dtype_name(idx->dt));
    return false;
  }
  return true;
}

/* idx in dtype wd with negative entries counted from dim (ONNX). */
static bg_tensor *wrap_index(bg_tensor *idx, int64_t dim, enum bg_dtype wd) {
  bg_tensor *i = bg_tn_cast(idx, wd);
  if (idx->dt == BG_UINT8 || idx->dt == BG_UINT16 || idx->dt == BG_UINT32 || idx->dt == BG_UINT64) return i;
  return bg_tn_where(bg_tn_lt(i, bg_tn_scalar(idx->c, wd, 0)), bg_tn_addc(i, (double)dim), i);
}

/* A reshape of t to shape (ones before, t's shape, ones after) or a 1-D arange placed at axis `at` of rank r. */
static bg_tensor *arange_at(bg_tctx *c, enum bg_dtype wd, int64_t n, unsigned at, unsigned r) {
  int64_t sh[BG_MAX_DIMS];
  for (unsigned i = 0; i < r; i++) sh[i] = i == at ? n : 1;
  return bg_tn_reshape(bg_tn_arange(c, wd, 0, (double)n, 1), r, sh);
}

/* out = x.shape[:axis] + idx.shape + x.shape[axis+1:]: sum over x's axis of where(widx == arange, x, 0);
 * widx already wrapped (any value outside [0, D) matches nothing). */
static bg_tensor *gather_core(const char *op, bg_tensor *x, unsigned axis, bg_tensor *widx) {
  bg_tctx *c = x->c;
  unsigned r = x->ndim, q = widx->ndim, rank = r + q;
  if (rank > BG_MAX_DIMS) {
    tshape xs = t_shape_of(x), is = t_shape_of(widx);
    SHSTR(xss, &xs);
    SHSTR(iss, &is);
    return t_fail(c, "%s: input %s and indices %s: the one-hot compare needs %u axes, more than %d", op, xss, iss, rank,
                  BG_MAX_DIMS);
  }
  int64_t xsh[BG_MAX_DIMS], ish[BG_MAX_DIMS], osh[BG_MAX_DIMS];
  unsigned n = 0;
  for (unsigned i = 0; i < axis; i++) xsh[n] = x->shape[i], ish[n++] = 1;
  for (unsigned i = 0; i < q; i++) xsh[n] = 1, ish[n++] = widx->shape[i];
  xsh[n] = x->shape[axis], ish[n++] = 1;
  for (unsigned i = axis + 1; i < r; i++) xsh[n] = x->shape[i], ish[n++] = 1;
  bg_tensor *oh = bg_tn_eq(bg_tn_reshape(widx, n, ish), arange_at(c, widx->dt, x->shape[axis], axis + q, n));
  bg_tensor *sel = bg_tn_where(oh, bg_tn_reshape(x, n, xsh), bg_tn_scalar(c, x->dt, 0));
  bg_tensor *s = bg_tn_sum(sel, 1u << (axis + q), true);
  unsigned m = 0;
  for (unsigned i = 0; i < n; i++)
    if (i != axis + q) osh[m++] = bg_tn_shape(sel)[i];
  return bg_tn_cast(bg_tn_reshape(s, m, osh), x->dt);
}

bg_tensor *bg_tn_gather(bg_tensor *x, int axis_in, bg_tensor *idx) {
  bg_tensor *err;
  if (!check2("gather", x, idx, &err)) return err;
  unsigned axis;
  if (!t_axis(x, "gather", axis_in, &axis)) return &x->c->err_t;
  int64_t d = x->shape[axis];
  return gather_core("gather", x, axis, wrap_index(idx, d, work_dtype(idx->dt, d)));
}

/* idx's shape fits x for the elementwise ops: same rank, no larger than x off the axis. */
static bool check_elements(const char *op, bg_tensor *x, bg_tensor *idx, unsigned axis) {
  tshape xs = t_shape_of(x), is = t_shape_of(idx);
  SHSTR(xss, &xs);
  SHSTR(iss, &is);
  if (idx->ndim != x->ndim) {
    t_fail(x->c, "%s: input %s and indices %s: index rank %u must equal the input rank %u", op, xss, iss, idx->ndim,
           x->ndim);
    return false;
  }
  for (unsigned i = 0; i < x->ndim; i++)
    if (i != axis && idx->shape[i] > x->shape[i]) {
      t_fail(x->c, "%s: input %s and indices %s: indices axis %u is larger than the input's", op, xss, iss, i);
      return false;
    }
  return true;
}

bg_tensor *bg_tn_gather_elements(bg_tensor *x, int axis_in, bg_tensor *idx) {
  bg_tensor *err;
  if (!check2("gather_elements", x, idx, &err)) return err;
  unsigned axis, r = x->ndim;
  if (!t_axis(x, "gather_elements", axis_in, &axis) || !check_elements("gather_elements", x, idx, axis))
    return &x->c->err_t;
  if (r + 1 > BG_MAX_DIMS) return t_fail(x->c, "gather_elements: rank %u: at most %d", r, BG_MAX_DIMS - 1);
  bg_tctx *c = x->c;
  int64_t d = x->shape[axis], b[BG_MAX_DIMS][2], sh[BG_MAX_DIMS];
  bg_tensor *w = wrap_index(idx, d, work_dtype(idx->dt, d));
  /* x cut to idx's extent off the axis, the axis moved last and a 1 left in its place: (I with 1 at axis, D) */
  for (unsigned i = 0; i < r; i++) b[i][0] = 0, b[i][1] = i == axis ? d : idx->shape[i];
  unsigned order[BG_MAX_DIMS], n = 0;
  for (unsigned i = 0; i < r; i++)
    if (i != axis) order[n++] = i;
  order[n] = axis;
  for (unsigned i = 0; i < r; i++) sh[i] = i == axis ? 1 : idx->shape[i];
  sh[r] = d;
  bg_tensor *xs = bg_tn_reshape(bg_tn_permute(bg_tn_shrink(x, b), order), r + 1, sh);
  memcpy(sh, idx->shape, r * sizeof *sh);
  sh[r] = 1;
  bg_tensor *oh = bg_tn_eq(bg_tn_reshape(w, r + 1, sh), arange_at(c, w->dt, d, r, r + 1));
  bg_tensor *s = bg_tn_sum(bg_tn_where(oh, xs, bg_tn_scalar(c, x->dt, 0)), 1u << r, false);
  return bg_tn_cast(s, x->dt);
}

/* acc where hit, combined with upd by red (shapes broadcast). */
static bg_tensor *scatter_step(bg_tensor *acc, bg_tensor *hit, bg_tensor *upd, enum bg_scatter_reduce red) {
  bg_tensor *v;
  switch (red) {
  case BG_SCATTER_ADD: v = bg_tn_add(acc, upd); break;
  case BG_SCATTER_MUL: v = bg_tn_mul(acc, upd); break;
  case BG_SCATTER_MAX: v = bg_tn_maximum(acc, upd); break;
  case BG_SCATTER_MIN: v = bg_tn_where(bg_tn_lt(upd, acc), upd, acc); break;
  default: v = upd; break;
  }
  return bg_tn_cast(bg_tn_where(hit, v, acc), acc->dt);
}

static bool check_updates(const char *op, bg_tensor *x, bg_tensor *updates, enum bg_scatter_reduce red, bg_tensor **err) {
  if (!updates) {
    *err = t_null_arg(op, "updates", x);
    return false;
  }
  if (updates->c != x->c) {
    t_fail(x->c, "%s: tensors belong to different contexts", op);
    return false;
  }
  if (t_dead(updates)) return false;
  if ((unsigned)red > BG_SCATTER_MIN) {
    t_fail(x->c, "%s: reduction %d: need none, add, mul, max or min", op, (int)red);
    return false;
  }
  return true;
}

bg_tensor *bg_tn_scatter_elements(bg_tensor *x, int axis_in, bg_tensor *idx, bg_tensor *updates,
                                  enum bg_scatter_reduce red) {
  bg_tensor *err;
  if (!check2("scatter_elements", x, idx, &err) || !check_updates("scatter_elements", x, updates, red, &err)) return err;
  unsigned axis, r = x->ndim;
  if (!t_axis(x, "scatter_elements", axis_in, &axis) || !check_elements("scatter_elements", x, idx, axis))
    return &x->c->err_t;
  tshape is = t_shape_of(idx), us = t_shape_of(updates);
  if (t_numel(&is) != t_numel(&us) || idx->ndim != updates->ndim || memcmp(idx->shape, updates->shape, r * sizeof(int64_t))) {
    SHSTR(iss, &is);
    SHSTR(uss, &us);
    return t_fail(x->c, "scatter_elements: indices %s and updates %s: shapes must be equal", iss, uss);
  }
  bg_tctx *c = x->c;
  int64_t d = x->shape[axis], b[BG_MAX_DIMS][2], p[BG_MAX_DIMS][2], sh[BG_MAX_DIMS];
  bg_tensor *w = wrap_index(idx, d, work_dtype(idx->dt, d)), *u = bg_tn_cast(updates, x->dt), *acc = x;
  bg_tensor *pos = arange_at(c, w->dt, d, axis, r);
  for (unsigned i = 0; i < r; i++) {
    b[i][0] = 0, b[i][1] = idx->shape[i];
    p[i][0] = 0, p[i][1] = i == axis ? 0 : x->shape[i] - idx->shape[i];
    sh[i] = i == axis ? d : idx->shape[i];
  }
  bool padded = false;
  for (unsigned i = 0; i < r; i++) padded |= p[i][1] != 0;
  for (int64_t k = 0; k < idx->shape[axis] && !t_dead(acc); k++) {
    b[axis][0] = k, b[axis][1] = k + 1;
    bg_tensor *hit = bg_tn_eq(bg_tn_shrink(w, b), pos);  /* (I with D at axis) */
    bg_tensor *uk = bg_tn_expand(bg_tn_shrink(u, b), r, sh);
    if (padded) hit = bg_tn_pad(hit, p), uk = bg_tn_pad(uk, p);
    acc = scatter_step(acc, hit, uk, red);
  }
  return acc;
}

/* The row-major flat position of idx's last axis in x's first m axes (shape idx.shape[:-1]); any coordinate
 * out of range gives T = prod(x.shape[:m]), which matches no position. */
static bg_tensor *flat_index(const char *op, bg_tensor *x, bg_tensor *idx, int64_t *total) {
  bg_tctx *c = x->c;
  tshape xs = t_shape_of(x), is = t_shape_of(idx);
  SHSTR(xss, &xs);
  SHSTR(iss, &is);
  if (idx->ndim < 1 || idx->shape[idx->ndim - 1] < 1 || idx->shape[idx->ndim - 1] > (int64_t)x->ndim) {
    t_fail(c, "%s: input %s and indices %s: the indices' last axis must be 1 to the input rank %u", op, xss, iss, x->ndim);
    return NULL;
  }
  unsigned m = (unsigned)idx->shape[idx->ndim - 1], q = idx->ndim;
  int64_t t = 1;
  for (unsigned i = 0; i < m; i++) t *= x->shape[i];
  *total = t;
  enum bg_dtype wd = work_dtype(idx->dt, t);
  int64_t b[BG_MAX_DIMS][2], stride = t;
  for (unsigned i = 0; i < q; i++) b[i][0] = 0, b[i][1] = idx->shape[i];
  bg_tensor *f = bg_tn_full(c, wd, q - 1, idx->shape, 0), *out = bg_tn_scalar(c, wd, (double)t);
  for (unsigned j = 0; j < m; j++) {
    stride /= x->shape[j];
    b[q - 1][0] = j, b[q - 1][1] = j + 1;
    bg_tensor *w = wrap_index(bg_tn_reshape(bg_tn_shrink(idx, b), q - 1, idx->shape), x->shape[j], wd);
    bg_tensor *ok = bg_tn_where(bg_tn_lt(w, bg_tn_scalar(c, wd, 0)), bg_tn_full(c, BG_BOOL, 0, NULL, 0),
                                bg_tn_lt(w, bg_tn_scalar(c, wd, (double)x->shape[j])));
    f = bg_tn_where(ok, bg_tn_add(f, bg_tn_mulc(w, (double)stride)), out);
  }
  return f;
}

bg_tensor *bg_tn_gather_nd(bg_tensor *x, bg_tensor *idx) {
  bg_tensor *err;
  if (!check2("gather_nd", x, idx, &err)) return err;
  int64_t t;
  bg_tensor *f = flat_index("gather_nd", x, idx, &t);
  if (!f) return &x->c->err_t;
  unsigned m = (unsigned)idx->shape[idx->ndim - 1], r = x->ndim;
  int64_t sh[BG_MAX_DIMS] = {t};
  memcpy(sh + 1, x->shape + m, (r - m) * sizeof *sh);
  return gather_core("gather_nd", bg_tn_reshape(x, 1 + r - m, sh), 0, f);
}

bg_tensor *bg_tn_scatter_nd(bg_tensor *x, bg_tensor *idx, bg_tensor *updates, enum bg_scatter_reduce red) {
  bg_tensor *err;
  if (!check2("scatter_nd", x, idx, &err) || !check_updates("scatter_nd", x, updates, red, &err)) return err;
  int64_t t;
  bg_tensor *f = flat_index("scatter_nd", x, idx, &t);
  if (!f) return &x->c->err_t;
  bg_tctx *c = x->c;
  unsigned m = (unsigned)idx->shape[idx->ndim - 1], r = x->ndim, q = idx->ndim;
  /* updates: idx.shape[:-1] + x.shape[m:] */
  bool ok = updates->ndim == q - 1 + r - m;
  for (unsigned i = 0; ok && i < q - 1; i++) ok = updates->shape[i] == idx->shape[i];
  for (unsigned i = 0; ok && i < r - m; i++) ok = updates->shape[q - 1 + i] == x->shape[m + i];
  if (!ok) {
    tshape xs = t_shape_of(x), is = t_shape_of(idx), us = t_shape_of(updates);
    SHSTR(xss, &xs);
    SHSTR(iss, &is);
    SHSTR(uss, &us);
    return t_fail(c, "scatter_nd: input %s, indices %s, updates %s: updates must be indices.shape[:-1] + input.shape[%u:]",
                  xss, iss, uss, m);
  }
  int64_t kn = bg_tn_numel(f), sh[BG_MAX_DIMS] = {t}, ush[BG_MAX_DIMS] = {kn}, b[BG_MAX_DIMS][2];
  memcpy(sh + 1, x->shape + m, (r - m) * sizeof *sh);
  memcpy(ush + 1, x->shape + m, (r - m) * sizeof *ush);
  unsigned n = 1 + r - m;
  int64_t one[BG_MAX_DIMS];
  for (unsigned i = 0; i < n; i++) one[i] = 1, b[i][0] = 0, b[i][1] = ush[i];
  bg_tensor *fl = bg_tn_reshape(f, 1, &kn), *u = bg_tn_reshape(bg_tn_cast(updates, x->dt), n, ush);
  bg_tensor *acc = bg_tn_reshape(x, n, sh), *pos = arange_at(c, f->dt, t, 0, n);
  int64_t b1[1][2];
  for (int64_t k = 0; k < kn && !t_dead(acc); k++) {
    b1[0][0] = k, b1[0][1] = k + 1;
    b[0][0] = k, b[0][1] = k + 1;
    bg_tensor *hit = bg_tn_eq(bg_tn_reshape(bg_tn_shrink(fl, b1), n, one), pos); /* (T, 1, ...) */
    acc = scatter_step(acc, hit, bg_tn_shrink(u, b), red);
  }
  return bg_tn_reshape(acc, r, x->shape);
}

bg_tensor *bg_tn_one_hot(bg_tensor *idx, int64_t depth, int axis) {
  if (!idx) return t_null_arg("one_hot", "indices", NULL);
  bg_tctx *c = idx->c;
  if (t_dead(idx)) return &c->err_t;
  if (!is_int(idx->dt)) return t_fail(c, "one_hot: indices dtype %s: need an integer dtype", bg_dtype_name(idx->dt));
  unsigned r = idx->ndim + 1;
  tshape is = t_shape_of(idx);
  SHSTR(iss, &is);
  if (r > BG_MAX_DIMS) return t_fail(c, "one_hot: indices %s: the result would have more than %d axes", iss, BG_MAX_DIMS);
  if (depth < 1) return t_fail(c, "one_hot: depth %lld: need depth >= 1", (long long)depth);
  if (axis < -(int)r || axis >= (int)r)
    return t_fail(c, "one_hot: axis %d out of range for the %u-axis result of indices %s", axis, r, iss);
  unsigned ax = axis < 0 ? (unsigned)(axis + (int)r) : (unsigned)axis;
  int64_t sh[BG_MAX_DIMS];
  for (unsigned i = 0, j = 0; i < r; i++) sh[i] = i == ax ? 1 : idx->shape[j++];
  bg_tensor *w = wrap_index(idx, depth, work_dtype(idx->dt, depth));
  return bg_tn_eq(bg_tn_reshape(w, r, sh), arange_at(c, w->dt, depth, ax, r));
}
