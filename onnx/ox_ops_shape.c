/* onnx/ox_ops_shape.c: shape and movement operators (Reshape, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice,
 * Expand, Flatten, Shape, Size, Tile, Constant, ConstantOfShape, Range, DepthToSpace, SpaceToDepth). Shape-valued
 * inputs are read on the host (ox_ints); Shape and Size outputs carry their values on the host as well, so the
 * usual Shape -> Gather/Slice -> Concat -> Reshape chains never reach the device. */
#include <stdlib.h>
#include <string.h>

#include "ox.h"
#include "ox_ops.h"

#define MAXV 4096

static int set_shape_val(ox_ctx *x, unsigned o, const int64_t *v, size_t n, bool scalar) {
  int64_t sh[1] = {(int64_t)n};
  bg_tensor *t = bg_tn_from(x->c, BG_INT64, scalar ? 0 : 1, sh, v);
  return ox_set_ints(x, o, t, v, n);
}

int ox_op_reshape(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  int64_t sh[BG_MAX_DIMS + 1];
  size_t n;
  int r = x->m->opset < 5 ? ox_attr_ints(x, "shape", sh, BG_MAX_DIMS + 1, &n) : ox_ints(x, 1, sh, BG_MAX_DIMS + 1, &n);
  if (r < 0) return r;
  if (n > BG_MAX_DIMS) return ox_unsup(x, "target shape of %zu dimensions (at most %d)", n, BG_MAX_DIMS);
  int64_t allowzero;
  r = ox_attr_int(x, "allowzero", 0, &allowzero);
  if (r < 0) return r;
  for (size_t d = 0; d < n; d++) {
    if (sh[d] == 0 && !allowzero) {
      if (d >= bg_tn_ndim(a)) return ox_err(x, BG_EFORMAT, "shape[%zu] = 0 copies a dimension the input lacks", d);
      sh[d] = bg_tn_shape(a)[d];
    }
    if (sh[d] < -1) return ox_err(x, BG_EFORMAT, "shape[%zu] = %lld", d, (long long)sh[d]);
  }
  return ox_set(x, 0, bg_tn_reshape(a, (unsigned)n, sh));
}

int ox_op_transpose(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t perm[BG_MAX_DIMS];
  size_t n;
  int r = ox_attr_ints(x, "perm", perm, BG_MAX_DIMS, &n);
  if (r < 0) return r;
  unsigned order[BG_MAX_DIMS];
  if (n == 0) {
    for (unsigned d = 0; d < nd; d++) order[d] = nd - 1 - d;
  } else {
    if (n != nd) return ox_err(x, BG_EFORMAT, "attribute 'perm' has %zu entries for rank %u", n, nd);
    for (unsigned d = 0; d < nd; d++) {
      int ax;
      r = ox_axis(x, perm[d], nd, &ax);
      if (r < 0) return r;
      order[d] = (unsigned)ax;
    }
  }
  return ox_set(x, 0, nd ? bg_tn_permute(a, order) : a);
}

static int axes_of(ox_ctx *x, bool input, int64_t *ax, size_t *n) {
  if (input) return ox_has(x, 1) ? ox_ints(x, 1, ax, BG_MAX_DIMS, n) : (*n = 0, 0);
  return ox_attr_ints(x, "axes", ax, BG_MAX_DIMS, n);
}

int ox_op_squeeze(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t ax[BG_MAX_DIMS];
  size_t n;
  int r = axes_of(x, x->m->opset >= 13, ax, &n);
  if (r < 0) return r;
  uint32_t mask = 0;
  for (size_t i = 0; i < n; i++) {
    int d;
    r = ox_axis(x, ax[i], nd, &d);
    if (r < 0) return r;
    if (bg_tn_shape(a)[d] != 1) return ox_err(x, BG_EFORMAT, "axis %d has size %lld, not 1", d,
                                              (long long)bg_tn_shape(a)[d]);
    mask |= 1u << d;
  }
  int64_t sh[BG_MAX_DIMS];
  unsigned k = 0;
  for (unsigned d = 0; d < nd; d++) {
    bool drop = n ? (mask >> d & 1) : bg_tn_shape(a)[d] == 1;
    if (!drop) sh[k++] = bg_tn_shape(a)[d];
  }
  return ox_set(x, 0, bg_tn_reshape(a, k, sh));
}

int ox_op_unsqueeze(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t ax[BG_MAX_DIMS];
  size_t n;
  int r = axes_of(x, x->m->opset >= 13, ax, &n);
  if (r < 0) return r;
  unsigned on = nd + (unsigned)n;
  if (on > BG_MAX_DIMS) return ox_unsup(x, "result of %u dimensions (at most %d)", on, BG_MAX_DIMS);
  uint32_t mask = 0;
  for (size_t i = 0; i < n; i++) {
    int d;
    r = ox_axis(x, ax[i], on, &d);
    if (r < 0) return r;
    if (mask >> d & 1) return ox_err(x, BG_EFORMAT, "axis %d given twice", d);
    mask |= 1u << d;
  }
  int64_t sh[BG_MAX_DIMS];
  for (unsigned d = 0, k = 0; d < on; d++) sh[d] = (mask >> d & 1) ? 1 : bg_tn_shape(a)[k++];
  /* host values follow (unsqueezing a scalar shape element is common) */
  ox_val *v = &x->vals[x->node->in[0]];
  return ox_set_ints(x, 0, bg_tn_reshape(a, on, sh), v->have_ints ? v->ints : NULL, v->nints);
}

int ox_op_concat(ox_ctx *x) {
  int64_t axis;
  int r = ox_attr_int(x, "axis", x->m->opset < 4 ? 1 : 0x7fffffff, &axis);
  if (r < 0) return r;
  if (axis == 0x7fffffff) return ox_err(x, BG_EFORMAT, "attribute 'axis' is missing");
  bg_tensor *ts[64];
  unsigned n = 0;
  int64_t vals[MAXV];
  size_t nv = 0;
  bool host = true;
  for (unsigned i = 0; i < x->nin; i++) {
    if (!ox_has(x, i)) continue;
    if (n == 64) return ox_unsup(x, "more than 64 inputs");
    bg_tensor *t = ox_in(x, i);
    ox_val *v = &x->vals[x->node->in[i]];
    if (v->have_ints && nv + v->nints <= MAXV && bg_tn_ndim(t) == 1) {
      memcpy(vals + nv, v->ints, v->nints * sizeof *vals);
      nv += v->nints;
    } else {
      host = false;
    }
    if (bg_tn_numel(t) == 0 && bg_tn_ndim(t) == 1) continue;   /* empty 1-D pieces add nothing */
    ts[n++] = t;
  }
  if (n == 0) return ox_set_ints(x, 0, ox_in(x, 0), NULL, 0);
  int ax;
  r = ox_axis(x, axis, bg_tn_ndim(ts[0]), &ax);
  if (r < 0) return r;
  bg_tensor *o = n == 1 ? ts[0] : bg_tn_cat(ts, n, ax);
  return ox_set_ints(x, 0, o, host ? vals : NULL, nv);
}

/* [start, end) with step along one axis: flip for negative steps, then take every step-th element by padding the
 * axis to a multiple of step, splitting it into (n, step) and keeping column 0. */
static bg_tensor *slice_axis(bg_tensor *a, unsigned ax, int64_t start, int64_t end, int64_t step) {
  unsigned nd = bg_tn_ndim(a);
  int64_t dim = bg_tn_shape(a)[ax];
  if (step < 0) {
    a = bg_tn_flip(a, 1u << ax);
    start = dim - 1 - start;
    end = dim - 1 - end;
    step = -step;
  }
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  int64_t b[BG_MAX_DIMS][2];
  for (unsigned d = 0; d < nd; d++) {
    b[d][0] = 0;
    b[d][1] = bg_tn_shape(a)[d];
  }
  if (step == 1 || len == 0) {
    b[ax][0] = len ? start : 0;
    b[ax][1] = len ? end : 0;
    return bg_tn_shrink(a, b);
  }
  /* elements start + i*step for i < len: shrink to [start, min(dim, start + len*step)), pad to len*step */
  int64_t stop = start + len * step;
  b[ax][0] = start;
  b[ax][1] = stop < dim ? stop : dim;
  a = bg_tn_shrink(a, b);
  if (stop > dim) {
    int64_t p[BG_MAX_DIMS][2] = {{0}};
    p[ax][1] = stop - dim;
    a = bg_tn_pad(a, p);
  }
  int64_t sh[BG_MAX_DIMS + 1];
  for (unsigned d = 0, k = 0; d < nd; d++) {
    if (d == ax) {
      sh[k++] = len;
      sh[k++] = step;
    } else {
      sh[k++] = bg_tn_shape(a)[d];
    }
  }
  if (nd + 1 > BG_MAX_DIMS) return NULL;
  a = bg_tn_reshape(a, nd + 1, sh);
  int64_t b2[BG_MAX_DIMS][2];
  for (unsigned d = 0; d < nd + 1; d++) {
    b2[d][0] = 0;
    b2[d][1] = sh[d];
  }
  b2[ax + 1][1] = 1;
  a = bg_tn_shrink(a, b2);
  int64_t out[BG_MAX_DIMS];
  for (unsigned d = 0; d < nd; d++) out[d] = d == ax ? len : sh[d < ax ? d : d + 1];
  return bg_tn_reshape(a, nd, out);
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

int ox_op_slice(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t st[BG_MAX_DIMS], en[BG_MAX_DIMS], ax[BG_MAX_DIMS], sp[BG_MAX_DIMS];
  size_t ns, ne, na = 0, np = 0;
  int r;
  if (x->m->opset < 10) {
    r = ox_attr_ints(x, "starts", st, BG_MAX_DIMS, &ns);
    if (r >= 0) r = ox_attr_ints(x, "ends", en, BG_MAX_DIMS, &ne);
    if (r >= 0) r = ox_attr_ints(x, "axes", ax, BG_MAX_DIMS, &na);
  } else {
    r = ox_ints(x, 1, st, BG_MAX_DIMS, &ns);
    if (r >= 0) r = ox_ints(x, 2, en, BG_MAX_DIMS, &ne);
    if (r >= 0 && ox_has(x, 3)) r = ox_ints(x, 3, ax, BG_MAX_DIMS, &na);
    if (r >= 0 && ox_has(x, 4)) r = ox_ints(x, 4, sp, BG_MAX_DIMS, &np);
  }
  if (r < 0) return r;
  if (ns != ne || (na && na != ns) || (np && np != ns))
    return ox_err(x, BG_EFORMAT, "starts (%zu), ends (%zu), axes (%zu) and steps (%zu) differ in length", ns, ne, na,
                  np);
  ox_val *hv = &x->vals[x->node->in[0]];
  int64_t hvals[MAXV];
  bool host = hv->have_ints && nd == 1;
  if (host) memcpy(hvals, hv->ints, hv->nints * sizeof *hvals);
  size_t hn = host ? hv->nints : 0;
  for (size_t i = 0; i < ns; i++) {
    int d;
    r = ox_axis(x, na ? ax[i] : (int64_t)i, nd, &d);
    if (r < 0) return r;
    int64_t step = np ? sp[i] : 1;
    if (step == 0) return ox_err(x, BG_EFORMAT, "steps[%zu] is 0", i);
    int64_t dim = bg_tn_shape(a)[d];
    int64_t s = st[i], e = en[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = clampi(s, 0, dim);
      e = clampi(e, 0, dim);
    } else {
      s = clampi(s, -1, dim - 1);
      e = clampi(e, -1, dim - 1);
    }
    if (host) {
      size_t k = 0;
      for (int64_t j = s; step > 0 ? j < e : j > e; j += step) hvals[k++] = hv->ints[j];
      hn = k;
    }
    a = slice_axis(a, (unsigned)d, s, e, step);
    if (!a) return ox_unsup(x, "a strided slice of a rank-8 tensor");
  }
  return ox_set_ints(x, 0, a, host ? hvals : NULL, hn);
}

int ox_op_split(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t axis, sp[64];
  size_t n = 0;
  int r = ox_attr_int(x, "axis", 0, &axis);
  if (r < 0) return r;
  if (x->m->opset >= 13 || ox_has(x, 1)) r = ox_has(x, 1) ? ox_ints(x, 1, sp, 64, &n) : 0;
  else r = ox_attr_ints(x, "split", sp, 64, &n);
  if (r < 0) return r;
  int d;
  r = ox_axis(x, axis, nd, &d);
  if (r < 0) return r;
  int64_t dim = bg_tn_shape(a)[d];
  unsigned no = x->nout;
  if (n == 0) {
    int64_t num;
    r = ox_attr_int(x, "num_outputs", no, &num);
    if (r < 0) return r;
    int64_t each = (dim + (int64_t)no - 1) / (int64_t)no;
    for (unsigned i = 0; i < no; i++) sp[i] = i + 1 < no ? each : dim - each * (no - 1);
    n = no;
  }
  if (n != no) return ox_err(x, BG_EFORMAT, "split has %zu sizes for %u outputs", n, no);
  int64_t off = 0;
  for (unsigned i = 0; i < no; i++) {
    int64_t b[BG_MAX_DIMS][2];
    for (unsigned k = 0; k < nd; k++) {
      b[k][0] = 0;
      b[k][1] = bg_tn_shape(a)[k];
    }
    if (sp[i] < 0 || off + sp[i] > dim) return ox_err(x, BG_EFORMAT, "split sizes exceed dimension %lld",
                                                       (long long)dim);
    b[d][0] = off;
    b[d][1] = off + sp[i];
    off += sp[i];
    r = ox_set(x, i, bg_tn_shrink(a, b));
    if (r < 0) return r;
  }
  return 0;
}

/* numpy broadcast of a's shape with sh (Expand is bidirectional). */
int ox_op_expand(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  int64_t sh[BG_MAX_DIMS];
  size_t n;
  int r = ox_ints(x, 1, sh, BG_MAX_DIMS, &n);
  if (r < 0) return r;
  unsigned nd = bg_tn_ndim(a);
  unsigned on = nd > n ? nd : (unsigned)n;
  int64_t in[BG_MAX_DIMS], out[BG_MAX_DIMS];
  for (unsigned d = 0; d < on; d++) {
    int64_t ad = d + nd >= on ? bg_tn_shape(a)[d + nd - on] : 1;
    int64_t sd = d + n >= on ? sh[d + n - on] : 1;
    in[d] = ad;
    if (ad != sd && ad != 1 && sd != 1) return ox_err(x, BG_EFORMAT, "shape %lld does not broadcast with %lld",
                                                      (long long)ad, (long long)sd);
    out[d] = ad == 1 ? sd : ad;
  }
  return ox_set(x, 0, bg_tn_expand(bg_tn_reshape(a, on, in), on, out));
}

int ox_op_flatten(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t axis;
  int r = ox_attr_int(x, "axis", 1, &axis);
  if (r < 0) return r;
  if (axis < -(int64_t)nd || axis > (int64_t)nd) return ox_err(x, BG_EFORMAT, "axis %lld out of range for rank %u",
                                                               (long long)axis, nd);
  if (axis < 0) axis += nd;
  int64_t sh[2] = {1, 1};
  for (unsigned d = 0; d < nd; d++) sh[(int64_t)d < axis ? 0 : 1] *= bg_tn_shape(a)[d];
  return ox_set(x, 0, bg_tn_reshape(a, 2, sh));
}

int ox_op_shape(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  int64_t nd = bg_tn_ndim(a), s, e;
  int r = ox_attr_int(x, "start", 0, &s);
  if (r >= 0) r = ox_attr_int(x, "end", nd, &e);
  if (r < 0) return r;
  if (s < 0) s += nd;
  if (e < 0) e += nd;
  s = clampi(s, 0, nd);
  e = clampi(e, 0, nd);
  int64_t v[BG_MAX_DIMS];
  size_t n = 0;
  for (int64_t d = s; d < e; d++) v[n++] = bg_tn_shape(a)[d];
  return set_shape_val(x, 0, v, n, false);
}

int ox_op_size(ox_ctx *x) {
  int64_t v = bg_tn_numel(ox_in(x, 0));
  return set_shape_val(x, 0, &v, 1, true);
}

int ox_op_tile(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int64_t rep[BG_MAX_DIMS];
  size_t n;
  int r = ox_ints(x, 1, rep, BG_MAX_DIMS, &n);
  if (r < 0) return r;
  if (n != nd) return ox_err(x, BG_EFORMAT, "repeats has %zu entries for rank %u", n, nd);
  if (2 * nd > BG_MAX_DIMS) {
    /* axis by axis */
    for (unsigned d = 0; d < nd; d++) {
      bg_tensor *ts[64];
      if (rep[d] > 64 || rep[d] < 0) return ox_unsup(x, "repeats[%u] = %lld", d, (long long)rep[d]);
      for (int64_t k = 0; k < rep[d]; k++) ts[k] = a;
      if (rep[d] != 1) a = bg_tn_cat(ts, (unsigned)rep[d], (int)d);
    }
    return ox_set(x, 0, a);
  }
  int64_t s1[BG_MAX_DIMS], s2[BG_MAX_DIMS], s3[BG_MAX_DIMS];
  for (unsigned d = 0; d < nd; d++) {
    s1[2 * d] = 1;
    s1[2 * d + 1] = bg_tn_shape(a)[d];
    s2[2 * d] = rep[d];
    s2[2 * d + 1] = bg_tn_shape(a)[d];
    s3[d] = rep[d] * bg_tn_shape(a)[d];
  }
  a = bg_tn_expand(bg_tn_reshape(a, 2 * nd, s1), 2 * nd, s2);
  return ox_set(x, 0, bg_tn_reshape(bg_tn_contiguous(a), nd, s3));
}

int ox_op_constant(ox_ctx *x) {
  const Onnx__NodeProto *n = x->node->pb;
  if (n->n_attribute != 1) return ox_err(x, BG_EFORMAT, "%zu attributes, expected exactly one value", n->n_attribute);
  const Onnx__AttributeProto *at = n->attribute[0];
  const char *nm = at->name;
  ox_val v = {0};
  bg_tensor *t = NULL;
  int r = 0;
  if (!strcmp(nm, "value")) {
    if (!at->t) return ox_err(x, BG_EFORMAT, "attribute 'value' has no tensor (AttributeProto.t, field 5)");
    char where[128];
    snprintf(where, sizeof where, "node %zu (Constant '%s'): attribute 'value'", x->index, n->name ? n->name : "");
    r = ox_tensor_from_proto(x->m, x->c, at->t, where, &t, &v);
  } else if (!strcmp(nm, "value_float") || !strcmp(nm, "value_int")) {
    bool f = nm[6] == 'f';
    int64_t i = 0;
    double d = 0;
    r = f ? ox_attr_float(x, nm, 0, &d) : ox_attr_int(x, nm, 0, &i);
    if (r < 0) return r;
    float ff = (float)d;
    t = f ? bg_tn_from(x->c, BG_FLOAT32, 0, NULL, &ff) : bg_tn_from(x->c, BG_INT64, 0, NULL, &i);
    if (!f) return ox_set_ints(x, 0, t, &i, 1);
  } else if (!strcmp(nm, "value_floats")) {
    float fs[MAXV];
    size_t k;
    r = ox_attr_floats(x, nm, fs, MAXV, &k);
    if (r < 0) return r;
    int64_t sh[1] = {(int64_t)k};
    t = bg_tn_from(x->c, BG_FLOAT32, 1, sh, fs);
  } else if (!strcmp(nm, "value_ints")) {
    int64_t is[MAXV];
    size_t k;
    r = ox_attr_ints(x, nm, is, MAXV, &k);
    if (r < 0) return r;
    int64_t sh[1] = {(int64_t)k};
    return ox_set_ints(x, 0, bg_tn_from(x->c, BG_INT64, 1, sh, is), is, k);
  } else if (!strncmp(nm, "value_string", 12) || !strcmp(nm, "sparse_value")) {
    return ox_unsup(x, "attribute '%s' (%s)", nm, nm[6] == 's' && nm[7] == 't' ? "strings" : "a sparse tensor");
  } else {
    return ox_err(x, BG_EFORMAT, "unknown attribute '%s'", nm);
  }
  if (r < 0) {
    free(v.ints);
    return r;
  }
  r = ox_set_ints(x, 0, t, v.have_ints ? v.ints : NULL, v.nints);
  free(v.ints);
  return r;
}

int ox_op_constant_of_shape(ox_ctx *x) {
  int64_t sh[BG_MAX_DIMS];
  size_t n;
  int r = ox_ints(x, 0, sh, BG_MAX_DIMS, &n);
  if (r < 0) return r;
  const Onnx__AttributeProto *at = ox_attr(x, "value");
  enum bg_dtype dt = BG_FLOAT32;
  bg_tensor *v = NULL;
  if (at) {
    if (!at->t) return ox_err(x, BG_EFORMAT, "attribute 'value' has no tensor (AttributeProto.t, field 5)");
    r = ox_tensor_from_proto(x->m, x->c, at->t, "ConstantOfShape attribute 'value'", &v, NULL);
    if (r < 0) return r;
    if (bg_tn_numel(v) != 1) return ox_err(x, BG_EFORMAT, "attribute 'value' has %lld elements, expected 1",
                                           (long long)bg_tn_numel(v));
    dt = bg_tn_dtype(v);
  }
  for (size_t d = 0; d < n; d++)
    if (sh[d] < 0) return ox_err(x, BG_EFORMAT, "input 0: dimension %lld", (long long)sh[d]);
  if (!v) return ox_set(x, 0, bg_tn_zeros(x->c, dt, (unsigned)n, sh));
  int64_t ones[BG_MAX_DIMS];
  for (size_t d = 0; d < n; d++) ones[d] = 1;
  return ox_set(x, 0, bg_tn_contiguous(bg_tn_expand(bg_tn_reshape(v, (unsigned)n, ones), (unsigned)n, sh)));
}

int ox_op_range(ox_ctx *x) {
  double s, l, d;
  int r = ox_scalar(x, 0, &s);
  if (r >= 0) r = ox_scalar(x, 1, &l);
  if (r >= 0) r = ox_scalar(x, 2, &d);
  if (r < 0) return r;
  if (d == 0) return ox_err(x, BG_EFORMAT, "delta is 0");
  enum bg_dtype dt = bg_tn_dtype(ox_in(x, 0));
  int64_t n = (int64_t)__builtin_ceil((l - s) / d);
  if (n < 0) n = 0;
  if (n > (1 << 24)) return ox_unsup(x, "a range of %lld elements", (long long)n);
  bg_tensor *idx = bg_tn_arange(x->c, BG_FLOAT32, 0, (double)n, 1);
  bg_tensor *o = bg_tn_addc(bg_tn_mulc(idx, d), s);
  if (!ox_is_float(dt)) {
    int64_t sh[1] = {n};
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) return ox_err(x, BG_ENOMEM, "out of host memory");
    for (int64_t i = 0; i < n; i++) v[i] = (int64_t)s + i * (int64_t)d;
    bg_tensor *t = bg_tn_cast(bg_tn_from(x->c, BG_INT64, 1, sh, v), dt);
    r = ox_set_ints(x, 0, t, n <= MAXV ? v : NULL, (size_t)n);
    free(v);
    return r;
  }
  return ox_set(x, 0, bg_tn_cast(o, dt));
}

int ox_op_depth_space(ox_ctx *x) {
  bg_tensor *a = ox_in(x, 0);
  if (bg_tn_ndim(a) != 4) return ox_err(x, BG_EFORMAT, "input of rank %u, expected 4", bg_tn_ndim(a));
  int64_t bs;
  char mode[8];
  int r = ox_attr_int(x, "blocksize", 0, &bs);
  if (r >= 0) r = ox_attr_string(x, "mode", "DCR", mode, sizeof mode);
  if (r < 0) return r;
  if (bs <= 0) return ox_err(x, BG_EFORMAT, "attribute 'blocksize' is %lld", (long long)bs);
  const int64_t *s = bg_tn_shape(a);
  int64_t b = s[0], c = s[1], h = s[2], w = s[3];
  if (!strcmp(x->node->pb->op_type, "DepthToSpace")) {
    if (c % (bs * bs)) return ox_err(x, BG_EFORMAT, "channels %lld not divisible by blocksize^2", (long long)c);
    bool crd = !strcmp(mode, "CRD");
    int64_t s6[6] = {b, bs, bs, c / (bs * bs), h, w}, c6[6] = {b, c / (bs * bs), bs, bs, h, w};
    unsigned p_dcr[6] = {0, 3, 4, 1, 5, 2}, p_crd[6] = {0, 1, 4, 2, 5, 3};
    a = bg_tn_permute(bg_tn_reshape(a, 6, crd ? c6 : s6), crd ? p_crd : p_dcr);
    int64_t o[4] = {b, c / (bs * bs), h * bs, w * bs};
    return ox_set(x, 0, bg_tn_reshape(bg_tn_contiguous(a), 4, o));
  }
  if (h % bs || w % bs) return ox_err(x, BG_EFORMAT, "spatial size not divisible by blocksize");
  int64_t s6[6] = {b, c, h / bs, bs, w / bs, bs};
  unsigned p[6] = {0, 3, 5, 1, 2, 4};
  a = bg_tn_permute(bg_tn_reshape(a, 6, s6), p);
  int64_t o[4] = {b, c * bs * bs, h / bs, w / bs};
  return ox_set(x, 0, bg_tn_reshape(bg_tn_contiguous(a), 4, o));
}
