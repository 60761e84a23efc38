/* tensor/optim.c: optimizers that update parameters in place (tinygrad's nn/optim.py SGD and LAMB with
 * adam=True), so a whole training step replays in a JIT.
 *
 * A step builds every update from the gradients and writes it with bg_tn_assign into the buffers the
 * parameters and the optimizer state already own; the gradients, the state assignments and the parameter
 * assignments are realized in one schedule (the scheduler runs readers of a buffer before its assignment).
 * Adam keeps b1^t and b2^t as one-element tensors assigned each step, so a JIT replay advances the bias
 * correction with everything else:
 *   b1t *= b1; b2t *= b2; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *   p -= lr * (m / (1-b1t)) / (sqrt(v / (1-b2t)) + eps)          (eps outside the square root)
 * SGD (PyTorch's, dampening 0, not Nesterov): b = momentum b + g (b starts at 0); p -= lr * b. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

struct bg_optim {
  bg_tctx *c;
  bool adam;
  unsigned n;
  double lr, momentum, b1, b2, eps;
  bg_tensor **p;       /* the parameters (handles stay the caller's) */
  bg_tensor **m, **v;  /* Adam's moments; SGD's momentum buffers in m (NULL without momentum) */
  bg_tensor *b1t, *b2t;
};

/* A zero-filled buffer of t's shape: contiguous() gives each its own buffer (equal lazy zeros are one node). */
static bg_tensor *state(bg_tctx *c, enum bg_dtype dt, unsigned ndim, const int64_t *shape, double v) {
  return bg_tn_contiguous(bg_tn_full(c, dt, ndim, shape, v));
}

static int64_t buf_uid(node view) { return ((const tbuf_arg *)(const void *)t_view_buffer(view)->arg.b->data)->uid; }

static enum bg_dtype state_dtype(enum bg_dtype p) { return p == BG_FLOAT64 ? BG_FLOAT64 : BG_FLOAT32; }

static int make(bg_tctx *c, bg_tensor *const *params, unsigned n, bool adam, double lr, double momentum, double b1,
                double b2, double eps, bg_optim **out) {
  const char *name = adam ? "optim_adam" : "optim_sgd";
  if (!out) return bg_error(BG_EINVAL, "%s: NULL output", name);
  *out = NULL;
  if (!c) return bg_error(BG_EINVAL, "%s: NULL context", name);
  if (!params || !n) return bg_error(BG_EINVAL, "%s: no parameters (params NULL or n 0)", name);
  if (lr == 0) lr = 1e-3; /* PyTorch's default */
  if (!isfinite(lr) || lr < 0) return bg_error(BG_EINVAL, "%s: lr %g, expected a finite value >= 0", name, lr);
  if (!isfinite(momentum) || momentum < 0)
    return bg_error(BG_EINVAL, "%s: momentum %g, expected a finite value >= 0", name, momentum);
  if (b1 == 0) b1 = 0.9;
  if (b2 == 0) b2 = 0.999;
  if (eps == 0) eps = 1e-8;
  if (!(b1 > 0 && b1 < 1)) return bg_error(BG_EINVAL, "%s: b1 %g, expected 0 < b1 < 1", name, b1);
  if (!(b2 > 0 && b2 < 1)) return bg_error(BG_EINVAL, "%s: b2 %g, expected 0 < b2 < 1", name, b2);
  if (!(eps > 0) || !isfinite(eps)) return bg_error(BG_EINVAL, "%s: eps %g, expected a finite value > 0", name, eps);
  for (unsigned i = 0; i < n; i++) {
    bg_tensor *t = params[i];
    if (!t || t->c != c || !t->u) return bg_error(BG_EINVAL, "%s: parameter %u is NULL, the error tensor or from another context", name, i);
    if (!t->requires_grad) return bg_error(BG_EINVAL, "%s: parameter %u does not require grad (call bg_tn_requires_grad)", name, i);
  }
  int rc = bg_tn_realize(params, n); /* parameters are buffers from here on */
  if (rc < 0) return bg_error_context(rc, "%s: realizing the parameters: ", name);
  for (unsigned i = 0; i < n; i++) {
    node u = t_node(params[i]);
    if (!t_is_view(u)) return bg_error(BG_EINVAL, "%s: parameter %u is not a buffer after realize", name, i);
    for (unsigned k = 0; k < i; k++)
      if (buf_uid(t_node(params[k])) == buf_uid(u))
        return bg_error(BG_EINVAL, "%s: parameters %u and %u are one buffer, expected distinct parameters", name, k, i);
  }
  bg_optim *o = calloc(1, sizeof *o);
  if (!o || !(o->p = calloc(n, sizeof *o->p)) || !(o->m = calloc(n, sizeof *o->m)) || !(o->v = calloc(n, sizeof *o->v))) {
    if (o) {
      free(o->p);
      free(o->m);
    }
    free(o);
    return bg_error(BG_ENOMEM, "%s: out of host memory for %u parameters", name, n);
  }
  o->c = c;
  o->adam = adam;
  o->n = n;
  o->lr = lr;
  o->momentum = momentum;
  o->b1 = b1;
  o->b2 = b2;
  o->eps = eps;
  memcpy(o->p, params, n * sizeof *params);
  bg_tensor *all[2 * 256 + 2];
  unsigned na = 0;
  for (unsigned i = 0; i < n && !rc; i++) {
    const bg_tensor *t = params[i];
    enum bg_dtype sd = state_dtype(t->dt);
    if (adam || momentum > 0) o->m[i] = state(c, sd, t->ndim, t->shape, 0);
    if (adam) o->v[i] = state(c, sd, t->ndim, t->shape, 0);
    bg_tensor *s[2] = {o->m[i], o->v[i]};
    for (unsigned k = 0; k < 2; k++) {
      if (!s[k]) continue;
      all[na++] = s[k];
      if (na == sizeof all / sizeof all[0]) { /* realize in batches */
        rc = bg_tn_realize(all, na);
        na = 0;
      }
    }
  }
  if (adam && !rc) {
    int64_t one = 1;
    all[na++] = o->b1t = state(c, BG_FLOAT32, 1, &one, 1.0);
    all[na++] = o->b2t = state(c, BG_FLOAT32, 1, &one, 1.0);
  }
  if (!rc && na) rc = bg_tn_realize(all, na);
  if (rc < 0) {
    bg_optim_free(o);
    return bg_error_context(rc, "%s: optimizer state: ", name);
  }
  *out = o;
  return 0;
}

int bg_optim_sgd(bg_tctx *c, bg_tensor *const *params, unsigned n, double lr, double momentum, bg_optim **out) {
  return make(c, params, n, false, lr, momentum, 0.9, 0.999, 1e-8, out);
}

int bg_optim_adam(bg_tctx *c, bg_tensor *const *params, unsigned n, double lr, double b1, double b2, double eps,
                  bg_optim **out) {
  return make(c, params, n, true, lr, 0, b1, b2, eps, out);
}

void bg_optim_free(bg_optim *o) {
  if (!o) return;
  free(o->p);
  free(o->m);
  free(o->v);
  free(o);
}

/* The new value of parameter i from its gradient g; the state assignments it needs are made here. */
static bg_tensor *update(bg_optim *o, unsigned i, bg_tensor *g) {
  bg_tensor *p = o->p[i];
  g = bg_tn_cast(g, state_dtype(p->dt));
  if (!o->adam) {
    if (o->m[i]) g = bg_tn_assign(o->m[i], bg_tn_add(bg_tn_mulc(o->m[i], o->momentum), g));
    return bg_tn_sub(p, bg_tn_mulc(g, o->lr));
  }
  bg_tensor *m = bg_tn_assign(o->m[i], bg_tn_add(bg_tn_mulc(o->m[i], o->b1), bg_tn_mulc(g, 1.0 - o->b1)));
  bg_tensor *v = bg_tn_assign(o->v[i], bg_tn_add(bg_tn_mulc(o->v[i], o->b2), bg_tn_mulc(bg_tn_mul(g, g), 1.0 - o->b2)));
  bg_tensor *mhat = bg_tn_div(m, bg_tn_addc(bg_tn_neg(o->b1t), 1.0));
  bg_tensor *vhat = bg_tn_div(v, bg_tn_addc(bg_tn_neg(o->b2t), 1.0));
  bg_tensor *up = bg_tn_div(mhat, bg_tn_addc(bg_tn_sqrt(vhat), o->eps));
  return bg_tn_sub(p, bg_tn_mulc(up, o->lr));
}

int bg_optim_step(bg_optim *o) {
  if (!o) return bg_error(BG_EINVAL, "optim_step: NULL optimizer");
  bg_tctx *c = o->c;
  if (c->has_err) return bg_error(BG_EINVAL, "optim_step: %s", c->err);
  bg_tensor **roots = calloc(4u * o->n + 2, sizeof *roots);
  if (!roots) return bg_error(BG_ENOMEM, "optim_step: out of host memory");
  unsigned nr = 0, ng = 0;
  int rc = 0;
  for (unsigned i = 0; i < o->n && !rc; i++) {
    bg_tensor *g = NULL;
    if ((rc = bg_tn_grad(o->p[i], &g)) < 0) break;
    if (g) roots[nr++] = g; /* realized as buffers: Adam reads each twice */
  }
  ng = nr;
  if (!rc && ng && o->adam) { /* one step of bias correction per step that updates anything */
    roots[nr++] = bg_tn_assign(o->b1t, bg_tn_mulc(o->b1t, o->b1));
    roots[nr++] = bg_tn_assign(o->b2t, bg_tn_mulc(o->b2t, o->b2));
  }
  for (unsigned i = 0, k = 0; i < o->n && !rc; i++) {
    bg_tensor *g = NULL;
    bg_tn_grad(o->p[i], &g);
    if (!g) continue;
    roots[nr++] = bg_tn_assign(o->p[i], bg_tn_cast(update(o, i, roots[k++]), o->p[i]->dt));
    if (o->m[i]) roots[nr++] = o->m[i];
    if (o->v[i]) roots[nr++] = o->v[i];
  }
  if (!rc && c->has_err) rc = bg_error(BG_EINVAL, "optim_step: %s", c->err);
  if (!rc && nr) rc = bg_tn_realize(roots, nr);
  /* handles move to their buffers' fresh views; gradients are dropped (tinygrad's zero_grad) */
  for (unsigned i = 0; i < o->n; i++) {
    t_follow_assign(o->p[i]);
    if (o->m[i]) t_follow_assign(o->m[i]);
    if (o->v[i]) t_follow_assign(o->v[i]);
    if (!rc) bg_tn_zero_grad(o->p[i]);
  }
  if (o->adam) {
    t_follow_assign(o->b1t);
    t_follow_assign(o->b2t);
  }
  free(roots);
  return rc < 0 ? bg_error_context(rc, "optim_step: ") : 0;
}
