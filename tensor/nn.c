/* tensor/nn.c: the nn layers of the public API (conv2d, max_pool2d, eval batch norm, linear,
 * flatten, mean, log_softmax, sparse cross-entropy) and an SGD step, written with the public tensor
 * ops as tinygrad writes them with its Tensor methods, so autograd differentiates them op by op. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/nn.h"


void nn_shape_str(const bg_tensor *t, char *buf, size_t n) {
  tshape s = t_mkshape(t->ndim, t->shape);
  t_shape_str(&s, buf, n);
}

bg_tensor *nn_fail(bg_tensor *x, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return t_fail(x->c, "%s", msg);
}

/* A layer's tensors are usable: none NULL (past the first, NULL is allowed when optional_tail),
 * all of one context, none the error tensor. Otherwise *err is what the layer returns (the error
 * tensor of the first tensor's context, NULL without one). */
bool nn_usable(bg_tensor *const *ts, unsigned n, bool optional_tail, bg_tensor **err) {
  *err = ts[0] ? &ts[0]->c->err_t : NULL;
  for (unsigned i = 0; i < n; i++) {
    if (!ts[i] && optional_tail && i > 0) continue;
    if (!ts[i]) return false;
    if (ts[i]->c != ts[0]->c) {
      t_fail(ts[0]->c, "nn: tensors belong to different contexts");
      return false;
    }
    if (t_dead(ts[i])) return false;
  }
  return true;
}

bg_tensor *bg_tn_conv2d(bg_tensor *x, bg_tensor *w, bg_tensor *bias, int64_t stride, int64_t padding) {
  bg_tensor *ts[3] = {x, w, bias}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  char xs[160], ws[160];
  nn_shape_str(x, xs, sizeof xs);
  nn_shape_str(w, ws, sizeof ws);
  if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1])
    return nn_fail(x, "conv2d: input %s and weight %s: need (N,Cin,H,W) and (Cout,Cin,KH,KW) with equal Cin", xs, ws);
  int64_t cout = w->shape[0];
  if (bias && (bias->ndim != 1 || bias->shape[0] != cout)) {
    char bs[160];
    nn_shape_str(bias, bs, sizeof bs);
    return nn_fail(x, "conv2d: bias %s for weight %s: expected (%lld)", bs, ws, (long long)cout);
  }
  if (stride < 1 || padding < 0)
    return nn_fail(x, "conv2d: stride %lld and padding %lld: need stride >= 1 and padding >= 0", (long long)stride,
                   (long long)padding);
  /* the general conv (nn_conv.c) builds the same graph for groups 1 and two spatial axes */
  bg_conv_opts o = {.groups = 1, .stride = {stride, stride}, .pads = {{padding, padding}, {padding, padding}}};
  return bg_tn_conv(x, w, bias, &o);
}

bg_tensor *bg_tn_max_pool2d(bg_tensor *x, int64_t kernel, int64_t stride) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  if (stride == 0) stride = kernel;
  int64_t k[2] = {kernel, kernel}, s[2] = {stride, stride};
  bg_tensor *p = nn_pool("max_pool2d", x, k, s); /* its checks and messages; the windows are the general pool's */
  if (t_dead(p)) return p;
  bg_pool_opts o = {.nk = 2, .kernel = {kernel, kernel}, .stride = {stride, stride}};
  return bg_tn_max_pool(x, &o);
}

/* A (C) parameter as (1, C, 1, ...) against x. */
static bg_tensor *per_channel(bg_tensor *x, bg_tensor *p, const char *name) {
  char xs[160], ps[160];
  nn_shape_str(x, xs, sizeof xs);
  nn_shape_str(p, ps, sizeof ps);
  if (x->ndim < 2 || p->ndim != 1 || p->shape[0] != x->shape[1])
    return nn_fail(x, "batchnorm: %s %s for input %s: expected (%lld)", name, ps, xs, x->ndim < 2 ? -1LL : (long long)x->shape[1]);
  int64_t sh[BG_MAX_DIMS];
  for (unsigned i = 0; i < x->ndim; i++) sh[i] = i == 1 ? x->shape[1] : 1;
  return bg_tn_reshape(p, x->ndim, sh);
}

bg_tensor *bg_tn_batchnorm(bg_tensor *x, bg_tensor *weight, bg_tensor *bias, bg_tensor *mean, bg_tensor *var, double eps) {
  bg_tensor *ts[5] = {x, mean, var, weight, bias}, *err;
  if (!nn_usable(ts, 3, false, &err) || !nn_usable(ts, 5, true, &err)) return err;
  bg_tensor *y = bg_tn_sub(x, per_channel(x, mean, "mean"));
  if (weight) y = bg_tn_mul(y, per_channel(x, weight, "weight"));
  bg_tensor *invstd = bg_tn_reciprocal(bg_tn_sqrt(bg_tn_addc(var, eps)));
  y = bg_tn_mul(y, per_channel(x, invstd, "var"));
  return bias ? bg_tn_add(y, per_channel(x, bias, "bias")) : y;
}

bg_tensor *bg_tn_linear(bg_tensor *x, bg_tensor *w, bg_tensor *b) {
  bg_tensor *ts[3] = {x, w, b}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  char xs[160], ws[160];
  nn_shape_str(x, xs, sizeof xs);
  nn_shape_str(w, ws, sizeof ws);
  if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
    return nn_fail(x, "linear: input %s and weight %s: need (..., in) and (out, in)", xs, ws);
  if (b && (b->ndim != 1 || b->shape[0] != w->shape[0])) {
    char bs[160];
    nn_shape_str(b, bs, sizeof bs);
    return nn_fail(x, "linear: bias %s for weight %s: expected (%lld)", bs, ws, (long long)w->shape[0]);
  }
  static const unsigned transpose[2] = {1, 0};
  bg_tensor *y = bg_tn_matmul(x, bg_tn_permute(w, transpose));
  return b ? bg_tn_add(y, b) : y;
}

bg_tensor *bg_tn_flatten(bg_tensor *x, unsigned start_axis) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  if (start_axis >= x->ndim && !(x->ndim == 0 && start_axis == 0)) {
    char xs[160];
    nn_shape_str(x, xs, sizeof xs);
    return nn_fail(x, "flatten: start axis %u out of range for shape %s", start_axis, xs);
  }
  int64_t sh[BG_MAX_DIMS];
  memcpy(sh, x->shape, start_axis * sizeof *sh);
  sh[start_axis] = -1;
  return bg_tn_reshape(x, start_axis + 1, sh);
}

bg_tensor *bg_tn_mean(bg_tensor *a, uint32_t axes, bool keepdim) {
  if (t_dead(a)) return a ? &a->c->err_t : NULL;
  bg_tensor *s = bg_tn_sum(a, axes, keepdim);
  if (t_dead(s)) return s;
  double count = 1;
  for (unsigned i = 0; i < a->ndim; i++)
    if (axes == BG_ALL_AXES || (axes >> i) & 1u) count *= (double)a->shape[i];
  bool half = s->dt == BG_FLOAT16 || s->dt == BG_BFLOAT16;
  bg_tensor *r = bg_tn_div(s, bg_tn_scalar(a->c, half ? s->dt : BG_FLOAT32, count));
  return bg_tn_cast(r, half ? s->dt : r->dt);
}

/* x - max - log(sum(exp(x - max))): the max keeps exp in range, as tinygrad. */
bg_tensor *bg_tn_log_softmax(bg_tensor *x, int axis_in) {
  if (t_dead(x)) return x ? &x->c->err_t : NULL;
  unsigned axis;
  if (!t_axis(x, "log_softmax", axis_in, &axis)) return &x->c->err_t;
  bg_tensor *m = bg_tn_sub(x, bg_tn_max(x, 1u << axis, true));
  return bg_tn_sub(m, bg_tn_log(bg_tn_sum(bg_tn_exp(m), 1u << axis, true)));
}

bg_tensor *bg_tn_sparse_cross_entropy(bg_tensor *logits, bg_tensor *labels) {
  bg_tensor *ts[2] = {logits, labels}, *err;
  if (!nn_usable(ts, 2, false, &err)) return err;
  char ls[160], ys[160];
  nn_shape_str(logits, ls, sizeof ls);
  nn_shape_str(labels, ys, sizeof ys);
  if (logits->ndim != 2 || labels->ndim != 1 || labels->shape[0] != logits->shape[0] || labels->dt != BG_INT32)
    return nn_fail(logits, "sparse_cross_entropy: logits %s and labels %s %s: need (N,C) and int32 (N)", ls, ys,
                   bg_dtype_name(labels->dt));
  int64_t n = logits->shape[0], cls = logits->shape[1], row[2] = {1, cls}, col[2] = {n, 1};
  bg_tensor *classes = bg_tn_reshape(bg_tn_arange(logits->c, BG_INT32, 0, (double)cls, 1), 2, row);
  bg_tensor *onehot = bg_tn_cast(bg_tn_eq(classes, bg_tn_reshape(labels, 2, col)), logits->dt);
  bg_tensor *picked = bg_tn_sum(bg_tn_mul(bg_tn_log_softmax(logits, 1), onehot), BG_ALL_AXES, false);
  return bg_tn_neg(bg_tn_div(picked, bg_tn_scalar(logits->c, logits->dt, (double)n)));
}

int bg_tn_sgd_step(bg_tensor **params, unsigned n, double lr) {
  if (!params || !n) return bg_error(BG_EINVAL, "sgd_step: no parameters");
  for (unsigned i = 0; i < n; i++)
    if (t_dead(params[i])) return bg_error(BG_EINVAL, "sgd_step: parameter %u is NULL or the error tensor", i);
  bg_tensor **next = calloc(n, sizeof *next);
  unsigned *idx = calloc(n, sizeof *idx), m = 0;
  int rc = next && idx ? 0 : bg_error(BG_ENOMEM, "sgd_step: out of host memory for %u parameters", n);
  for (unsigned i = 0; !rc && i < n; i++) {
    bg_tensor *g = params[i]->requires_grad ? params[i]->grad : NULL;
    if (!g) continue;
    next[m] = bg_tn_sub(params[i], bg_tn_mulc(g, lr));
    idx[m++] = i;
  }
  if (!rc && m) rc = bg_tn_realize(next, m); /* all updates in one schedule */
  for (unsigned j = 0; !rc && j < m; j++) {
    bg_tn_requires_grad(params[idx[j]], false);
    params[idx[j]] = bg_tn_requires_grad(next[j], true);
  }
  free(next);
  free(idx);
  return rc;
}
