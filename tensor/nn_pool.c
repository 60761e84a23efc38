/* tensor/nn_pool.c: sliding windows over the last nk axes from movement ops only (tinygrad's
 * Tensor._pool, with dilation), the building block of conv, max_pool and avg_pool: no im2col buffer,
 * and the backward of a window is autograd's movement-op rules (an expand becomes a sum, a shrink a
 * pad). Also the pooling layers themselves (ONNX MaxPool / AveragePool semantics).
 *
 * x (..., I...) -> (..., O..., K...) with O = ceil((I - D*(K-1)) / S). */
#include <math.h>
#include <string.h>

#include "tensor/nn.h"

static int64_t ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Kernel wider than the stride, or dilated: repeat each axis r times so that, read with a row length of
 * I*f + D, consecutive rows are shifted by D elements; row k then holds the window offsets k*D. */
static bg_tensor *pool_overlapping(bg_tensor *x, unsigned nk, const int64_t *k, const int64_t *s, const int64_t *d,
                                   const int64_t *o) {
  unsigned nd = bg_tn_ndim(x), lead = nd - nk;
  const int64_t *xs = bg_tn_shape(x);
  int64_t in[3], f[3], r[3], row[3], sh[BG_MAX_DIMS], b[BG_MAX_DIMS][2];
  for (unsigned a = 0; a < nk; a++) {
    in[a] = xs[lead + a];
    f[a] = 1 + (o[a] * s[a] > in[a] - d[a] * (k[a] - 1));
    row[a] = in[a] * f[a] + d[a];
    r[a] = ceildiv(k[a] * row[a], in[a]);
  }
  /* repeat: (..., I0, I1) -> (..., 1, I0, 1, I1) -> (..., r0, I0, r1, I1) -> (..., r0*I0, r1*I1) */
  memcpy(sh, xs, lead * sizeof *sh);
  int64_t *t = sh + lead;
  for (unsigned a = 0; a < nk; a++) t[2 * a] = 1, t[2 * a + 1] = in[a];
  x = bg_tn_reshape(x, lead + 2 * nk, sh);
  for (unsigned a = 0; a < nk; a++) t[2 * a] = r[a];
  x = bg_tn_expand(x, lead + 2 * nk, sh);
  for (unsigned a = 0; a < nk; a++) t[a] = r[a] * in[a];
  x = bg_tn_reshape(x, lead + nk, sh);
  /* rows of length I*f + D: (..., K, I*f+D) per axis */
  memset(b, 0, sizeof b);
  for (unsigned i = 0; i < lead; i++) b[i][1] = xs[i];
  for (unsigned a = 0; a < nk; a++) b[lead + a][1] = k[a] * row[a];
  x = bg_tn_shrink(x, b);
  for (unsigned a = 0; a < nk; a++) t[2 * a] = k[a], t[2 * a + 1] = row[a];
  x = bg_tn_reshape(x, lead + 2 * nk, sh);
  /* stride: keep O*S of each row, split it (O, S) and keep offset 0 */
  for (unsigned a = 0; a < nk; a++) {
    b[lead + 2 * a][0] = 0, b[lead + 2 * a][1] = k[a];
    b[lead + 2 * a + 1][0] = 0, b[lead + 2 * a + 1][1] = o[a] * s[a];
  }
  x = bg_tn_shrink(x, b);
  if (lead + 3 * nk <= BG_MAX_DIMS) { /* every axis at once (tinygrad's order) */
    for (unsigned a = 0; a < nk; a++) t[3 * a] = k[a], t[3 * a + 1] = o[a], t[3 * a + 2] = s[a];
    x = bg_tn_reshape(x, lead + 3 * nk, sh);
    for (unsigned a = 0; a < 3 * nk; a++) b[lead + a][0] = 0, b[lead + a][1] = a % 3 == 2 ? 1 : t[a];
    x = bg_tn_shrink(x, b);
  } else { /* one axis at a time, so the rank stays within BG_MAX_DIMS */
    for (unsigned a = 0; a < nk; a++) {
      for (unsigned j = 0; j < nk; j++) t[2 * j] = k[j], t[2 * j + 1] = o[j] * s[j];
      for (unsigned j = 0; j < a; j++) t[2 * j + 1] = o[j];
      int64_t tail[BG_MAX_DIMS];
      unsigned at = lead + 2 * a + 1, n = lead + 2 * nk;
      memcpy(tail, sh + at + 1, (n - at - 1) * sizeof *tail);
      sh[at] = o[a], sh[at + 1] = s[a];
      memcpy(sh + at + 2, tail, (n - at - 1) * sizeof *tail);
      x = bg_tn_reshape(x, n + 1, sh);
      for (unsigned i = 0; i < n + 1; i++) b[i][0] = 0, b[i][1] = sh[i];
      b[at + 1][1] = 1;
      x = bg_tn_shrink(x, b);
      memmove(sh + at + 1, sh + at + 2, (n - at - 1) * sizeof *sh);
      x = bg_tn_reshape(x, n, sh);
    }
  }
  for (unsigned a = 0; a < nk; a++) t[2 * a] = k[a], t[2 * a + 1] = o[a];
  x = bg_tn_reshape(x, lead + 2 * nk, sh);
  /* (..., K0, O0, K1, O1) -> (..., O0, O1, K0, K1) */
  unsigned order[BG_MAX_DIMS];
  for (unsigned i = 0; i < lead; i++) order[i] = i;
  for (unsigned a = 0; a < nk; a++) order[lead + a] = lead + 2 * a + 1, order[lead + nk + a] = lead + 2 * a;
  return bg_tn_permute(x, order);
}

/* Kernel no wider than the stride: pad or crop each axis to O*S, split it (O, S), keep K. */
static bg_tensor *pool_disjoint(bg_tensor *x, unsigned nk, const int64_t *k, const int64_t *s, const int64_t *o) {
  unsigned nd = bg_tn_ndim(x), lead = nd - nk;
  const int64_t *xs = bg_tn_shape(x);
  int64_t p[BG_MAX_DIMS][2], sh[BG_MAX_DIMS];
  memset(p, 0, sizeof p);
  for (unsigned a = 0; a < nk; a++) p[lead + a][1] = o[a] * s[a] - xs[lead + a]; /* negative: crop */
  x = bg_tn_pad(x, p);
  memcpy(sh, bg_tn_shape(x), lead * sizeof *sh);
  for (unsigned a = 0; a < nk; a++) sh[lead + 2 * a] = o[a], sh[lead + 2 * a + 1] = s[a];
  x = bg_tn_reshape(x, lead + 2 * nk, sh);
  int64_t b[BG_MAX_DIMS][2];
  for (unsigned i = 0; i < lead + 2 * nk; i++) b[i][0] = 0, b[i][1] = sh[i];
  for (unsigned a = 0; a < nk; a++) b[lead + 2 * a + 1][1] = k[a];
  x = bg_tn_shrink(x, b);
  unsigned order[BG_MAX_DIMS];
  for (unsigned i = 0; i < lead; i++) order[i] = i;
  for (unsigned a = 0; a < nk; a++) order[lead + a] = lead + 2 * a, order[lead + nk + a] = lead + 2 * a + 1;
  return bg_tn_permute(x, order);
}

bg_tensor *nn_windows(const char *op, bg_tensor *x, unsigned nk, const int64_t *k, const int64_t *s, const int64_t *d) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  unsigned nd = bg_tn_ndim(x);
  const int64_t *xs = bg_tn_shape(x);
  if (nk < 1 || nk > 3 || nd < nk || nd + nk > BG_MAX_DIMS)
    return nn_fail(x, "%s: input has %u axes: need %u to %u (the window slides over the last %u)", op, nd, nk,
                   BG_MAX_DIMS - nk, nk);
  int64_t o[3];
  bool overlap = false;
  for (unsigned a = 0; a < nk; a++) {
    int64_t in = xs[nd - nk + a];
    if (k[a] < 1 || s[a] < 1 || d[a] < 1 || d[a] * (k[a] - 1) + 1 > in)
      return nn_fail(x, "%s: axis %u: kernel %lld with stride %lld and dilation %lld does not fit the input size %lld",
                     op, nd - nk + a, (long long)k[a], (long long)s[a], (long long)d[a], (long long)in);
    o[a] = ceildiv(in - d[a] * (k[a] - 1), s[a]);
    overlap |= k[a] > s[a] || d[a] != 1;
  }
  if (!overlap) return pool_disjoint(x, nk, k, s, o);
  unsigned lead = nd - nk;
  if (lead <= 1 || lead + 2 * nk + 1 <= BG_MAX_DIMS) return pool_overlapping(x, nk, k, s, d, o);
  /* too many axes for the repeat: the leading ones become one, and come back at the end */
  int64_t sh[BG_MAX_DIMS];
  sh[0] = 1;
  for (unsigned i = 0; i < lead; i++) sh[0] *= xs[i];
  memcpy(sh + 1, xs + lead, nk * sizeof *sh);
  int64_t keep[BG_MAX_DIMS];
  memcpy(keep, xs, lead * sizeof *keep);
  bg_tensor *p = pool_overlapping(bg_tn_reshape(x, 1 + nk, sh), nk, k, s, d, o);
  for (unsigned a = 0; a < nk; a++) keep[lead + a] = o[a], keep[lead + nk + a] = k[a];
  return bg_tn_reshape(p, lead + 2 * nk, keep);
}

bg_tensor *nn_pool(const char *op, bg_tensor *x, const int64_t *k, const int64_t *s) {
  static const int64_t one[2] = {1, 1};
  unsigned nd = bg_tn_ndim(x);
  const int64_t *xs = bg_tn_shape(x);
  if (nd < 2 || nd + 2 > BG_MAX_DIMS)
    return nn_fail(x, "%s: input has %u axes: need 2 to %d (the window slides over the last two)", op, nd, BG_MAX_DIMS - 2);
  for (unsigned a = 0; a < 2; a++)
    if (k[a] < 1 || s[a] < 1 || k[a] > xs[nd - 2 + a])
      return nn_fail(x, "%s: kernel %lldx%lld with stride %lldx%lld does not fit the input", op, (long long)k[0],
                     (long long)k[1], (long long)s[0], (long long)s[1]);
  return nn_windows(op, x, 2, k, s, one);
}

/* ---- MaxPool / AveragePool ---- */

typedef struct pool_plan {
  unsigned nk, lead;
  int64_t k[3], s[3], d[3], pads[BG_MAX_DIMS][2], extra[BG_MAX_DIMS][2]; /* ONNX pads, then ceil_mode's tail */
  bool any_pad, any_extra;
} pool_plan;

/* Checks the options and works out the pads: ONNX pads, and with ceil_mode the extra end padding the last
 * (partial) window needs; a last window that would start past the input and its begin pad is dropped
 * (PyTorch's rule, which ONNX's reference follows). */
static bool plan_pool(const char *op, bg_tensor *x, const bg_pool_opts *o, pool_plan *pl) {
  memset(pl, 0, sizeof *pl);
  if (!o) {
    nn_fail(x, "%s: options are NULL", op);
    return false;
  }
  char xs[160];
  nn_shape_str(x, xs, sizeof xs);
  if (o->nk < 1 || o->nk > 3 || x->ndim < o->nk) {
    nn_fail(x, "%s: nk %u for input %s: need 1 to 3 pooled axes, at most the input's rank", op, o->nk, xs);
    return false;
  }
  pl->nk = o->nk;
  pl->lead = x->ndim - o->nk;
  for (unsigned a = 0; a < o->nk; a++) {
    unsigned ax = pl->lead + a;
    int64_t k = o->kernel[a], s = o->stride[a] ? o->stride[a] : k, d = o->dilation[a] ? o->dilation[a] : 1;
    int64_t pb = o->pads[a][0], pe = o->pads[a][1], in = x->shape[ax];
    if (k < 1 || s < 1 || d < 1 || pb < 0 || pe < 0) {
      nn_fail(x, "%s: axis %u: kernel %lld, stride %lld, dilation %lld, pads (%lld, %lld): need positive kernel, "
                 "stride, dilation and pads >= 0", op, ax, (long long)k, (long long)s, (long long)d, (long long)pb,
              (long long)pe);
      return false;
    }
    int64_t span = d * (k - 1) + 1, padded = in + pb + pe;
    if (span > padded) {
      nn_fail(x, "%s: axis %u: window of %lld (kernel %lld, dilation %lld) is larger than the padded input %lld of %s",
              op, ax, (long long)span, (long long)k, (long long)d, (long long)padded, xs);
      return false;
    }
    int64_t out = (padded - span) / s + 1;
    if (o->ceil_mode) {
      out = ceildiv(padded - span, s) + 1;
      if ((out - 1) * s >= in + pb) out--;
    }
    int64_t need = (out - 1) * s + span;
    pl->k[a] = k, pl->s[a] = s, pl->d[a] = d;
    pl->pads[ax][0] = pb, pl->pads[ax][1] = pe;
    /* ceil_mode: negative when a window was dropped (its elements are cropped, as the windows follow the length);
     * floor mode leaves the input alone (the windows already stop where they must) */
    pl->extra[ax][1] = o->ceil_mode ? need - padded : 0;
    pl->any_pad |= pb || pe;
    pl->any_extra |= pl->extra[ax][1] != 0;
  }
  return true;
}

/* x padded with v (ONNX pads), then with v again for ceil_mode's tail (or cut to the windows kept). */
static bg_tensor *pool_pad(bg_tensor *x, const pool_plan *pl, double v) {
  if (pl->any_pad) x = bg_tn_pad_mode(x, pl->pads, BG_PAD_CONSTANT, v);
  if (pl->any_extra) x = bg_tn_pad_mode(x, pl->extra, BG_PAD_CONSTANT, v);
  return x;
}

static uint32_t window_mask(const pool_plan *pl) {
  uint32_t m = 0;
  for (unsigned a = 0; a < pl->nk; a++) m |= 1u << (pl->lead + pl->nk + a);
  return m;
}

/* The lowest value of x's dtype: what max pooling pads with. */
static double lowest(enum bg_dtype t) {
  switch (t) {
  case BG_BOOL: case BG_UINT8: case BG_UINT16: case BG_UINT32: case BG_UINT64: return 0;
  case BG_INT8: return INT8_MIN;
  case BG_INT16: return INT16_MIN;
  case BG_INT32: return INT32_MIN;
  case BG_INT64: return (double)INT64_MIN;
  default: return -INFINITY;
  }
}

bg_tensor *bg_tn_max_pool(bg_tensor *x, const bg_pool_opts *o) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  pool_plan pl;
  if (!plan_pool("max_pool", x, o, &pl)) return &x->c->err_t;
  bg_tensor *p = nn_windows("max_pool", pool_pad(x, &pl, lowest(x->dt)), pl.nk, pl.k, pl.s, pl.d);
  if (t_dead(p)) return p;
  return bg_tn_max(p, window_mask(&pl), false);
}

/* Sum of each window over the count of its positions: every padded one (count_include_pad) or only the input's;
 * positions of ceil_mode's tail never count (ONNX reference, PyTorch). The count is the same windows over a
 * ones tensor of the pooled axes' shape, so it folds into index math. */
bg_tensor *bg_tn_avg_pool(bg_tensor *x, const bg_pool_opts *o) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  pool_plan pl;
  if (!plan_pool("avg_pool", x, o, &pl)) return &x->c->err_t;
  if (x->dt != BG_FLOAT32 && x->dt != BG_FLOAT16 && x->dt != BG_FLOAT64 && x->dt != BG_BFLOAT16)
    return nn_fail(x, "avg_pool: input dtype %s: need a float dtype", bg_dtype_name(x->dt));
  uint32_t m = window_mask(&pl);
  bg_tensor *sum = bg_tn_sum(nn_windows("avg_pool", pool_pad(x, &pl, 0), pl.nk, pl.k, pl.s, pl.d), m, false);
  if (t_dead(sum)) return sum;
  int64_t osh[BG_MAX_DIMS];
  for (unsigned i = 0; i < x->ndim; i++) osh[i] = i < pl.lead ? 1 : x->shape[i];
  bg_tensor *ones = bg_tn_ones(x->c, BG_FLOAT32, x->ndim, osh);
  if (pl.any_pad) ones = bg_tn_pad_mode(ones, pl.pads, BG_PAD_CONSTANT, o->count_include_pad ? 1 : 0);
  if (pl.any_extra) ones = bg_tn_pad_mode(ones, pl.extra, BG_PAD_CONSTANT, 0);
  bg_tensor *cnt = bg_tn_sum(nn_windows("avg_pool", ones, pl.nk, pl.k, pl.s, pl.d), m, false);
  return bg_tn_cast(bg_tn_div(sum, bg_tn_cast(cnt, sum->dt)), x->dt);
}
