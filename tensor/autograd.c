/* tensor/autograd.c: requires_grad, backward and grad of the public API.
 *
 * backward walks the loss's graph (the nodes it was built from, even when it was realized since) in
 * reverse topological order, pushing each node's gradient to its sources with the rules of
 * autograd_rules.c, but only along paths that reach a tensor requiring gradients. A tensor is
 * reached through the node it was made from or through the buffer that node became, so a
 * parameter realized before or after the model was built is found either way. Gradients are lazy
 * nodes: they are realized with whatever is realized next, through the same scheduler. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/autograd.h"

/* What identifies a parameter in a graph: the buffer a node is a view of (once realized), else the
 * node. Builders collapse reshape chains, so a graph may reach a parameter's buffer through a
 * different reshape than the parameter's own view; matching by buffer finds it either way. */
static node key_of(const bg_tctx *c, node u) {
  node v = t_real(c, u);
  if (v) u = v;
  return t_is_view(u) ? t_view_buffer(u) : u;
}

static bool is_float_node(node u) { return ir_scalar_is_float(IR_DT_SCALAR(u->dt)); }

bg_tensor *bg_tn_requires_grad(bg_tensor *t, bool on) {
  if (!t || !t->u) return t ? &t->c->err_t : NULL;
  if (on && !is_float_node(t->u)) {
    tshape s = t_mkshape(t->ndim, t->shape);
    SHSTR(ss, &s);
    return t_fail(t->c, "requires_grad: tensor %s of dtype %s: only float tensors can have gradients", ss, bg_dtype_name(t->dt));
  }
  t->requires_grad = on;
  return t;
}

bool bg_tn_requires_grad_get(const bg_tensor *t) { return t && t->u && t->requires_grad; }

int bg_tn_grad(bg_tensor *t, bg_tensor **out) {
  if (!t || !out) return bg_error(BG_EINVAL, "grad: %s is NULL", t ? "out" : "tensor argument 't'");
  if (!t->u) {
    t_fail(t->c, "grad: the tensor is the error tensor");
    return -BG_EINVAL;
  }
  if (!t->requires_grad) {
    tshape s = t_mkshape(t->ndim, t->shape);
    SHSTR(ss, &s);
    t_fail(t->c, "grad: tensor %s of dtype %s does not require grad (call bg_tn_requires_grad first)", ss,
           bg_dtype_name(t->dt));
    return -BG_EINVAL;
  }
  *out = t->grad;
  return 0;
}

void bg_tn_zero_grad(bg_tensor *t) {
  if (t) t->grad = NULL;
}

/* ---- backward ---- */

typedef struct walk {
  bg_tctx *c;
  const ir_node **topo;  /* sources before users */
  size_t n;
  tmap targets;          /* key_of(parameter) id -> 1 */
  tmap path;             /* node id -> 1: some tensor requiring grad is reachable from it */
  tmap grads;            /* node id -> gradient node */
  tmap found;            /* key_of(parameter) id -> summed gradient, flat */
} walk;

static void walk_free(walk *w) {
  free(w->topo);
  tmap_free(&w->targets);
  tmap_free(&w->path);
  tmap_free(&w->grads);
  tmap_free(&w->found);
}

static node map_node(const tmap *m, node u) {
  tmap_ent *e = tmap_get(m, u->id, 0);
  return e ? (node)(uintptr_t)e->v : NULL;
}

/* m[u] += g; false on out of memory. */
static bool accumulate(bg_tctx *c, tmap *m, node u, node g) {
  tmap_ent *e = tmap_put(m, u->id, 0);
  if (!e || !g) return false;
  node prev = (node)(uintptr_t)e->v;
  node sum = prev ? n_alu(c, IR_ADD, prev, g) : g;
  if (!sum) return false;
  e->v = (uint64_t)(uintptr_t)sum;
  return true;
}

/* Calls fn on every handle of the context that requires grad (handles live in chunks); false
 * when fn failed. fn NULL: only says whether there is one. */
static bool each_param(bg_tctx *c, bool (*fn)(walk *, bg_tensor *), walk *w) {
  bool any = false;
  for (tchunk *k = c->chunks; k; k = k->next)
    for (unsigned i = 0; i < k->n; i++) {
      bg_tensor *t = &k->t[i];
      if (!t->u || !t->requires_grad) continue;
      any = true;
      if (fn && !fn(w, t)) return false;
    }
  return any;
}

static bool add_target(walk *w, bg_tensor *t) {
  tmap_ent *e = tmap_put(&w->targets, key_of(w->c, t->u)->id, 0);
  if (e) e->v = 1;
  return e != NULL;
}

static bool is_target(const walk *w, node u) { return tmap_get(&w->targets, key_of(w->c, u)->id, 0) != NULL; }

/* Which nodes lie on a path to a target, sources first. */
static bool mark_paths(walk *w) {
  for (size_t i = 0; i < w->n; i++) {
    node u = w->topo[i];
    bool on = is_target(w, u);
    for (unsigned s = 0; s < u->nsrc && !on; s++) on = tmap_get(&w->path, u->src[s]->id, 0) != NULL;
    if (!on || !is_float_node(u)) continue;
    tmap_ent *e = tmap_put(&w->path, u->id, 0);
    if (!e) return false;
    e->v = 1;
  }
  return true;
}

/* Gradients found for one parameter may come in different shapes (its view, its buffer): they are
 * summed flat and reshaped to the parameter at the end. */
static node flat(bg_tctx *c, node g) {
  int64_t n = t_numel(t_shape(c, g));
  tshape s = t_mkshape(1, &n);
  return n_reshape(c, g, &s);
}

static bool propagate(walk *w) {
  bg_tctx *c = w->c;
  for (size_t i = w->n; i-- > 0;) {
    node u = w->topo[i], g = map_node(&w->grads, u);
    if (!g || !tmap_get(&w->path, u->id, 0)) continue;
    node key = key_of(c, u);
    bool target = is_target(w, u);
    if (target && !accumulate(c, &w->found, key, flat(c, g))) return false;
    node sg[3];
    if (!ag_src_grads(c, u, g, sg)) return false;
    for (unsigned s = 0; s < u->nsrc && s < 3; s++) {
      node src = u->src[s];
      if (!sg[s] || !tmap_get(&w->path, src->id, 0)) continue;
      if (target && key_of(c, src) == key) continue; /* a view's buffer: the same parameter, counted once */
      if (!accumulate(c, &w->grads, src, sg[s])) return false;
    }
  }
  return true;
}

/* t.grad += the gradient found for t's node (cast to t's dtype; tinygrad accumulates too). */
static bool store_grad(walk *w, bg_tensor *t) {
  bg_tctx *c = w->c;
  node g = map_node(&w->found, key_of(c, t->u));
  if (!g) return true;
  tshape ts = t_mkshape(t->ndim, t->shape);
  g = n_reshape(c, n_cast(c, g, t_scalar(t->dt)), &ts);
  if (t->grad && t->grad->u) g = n_alu(c, IR_ADD, t_node(t->grad), g);
  bg_tensor *h = g ? t_wrap(c, g) : NULL;
  if (!h || !h->u) return false;
  t->grad = h;
  return true;
}

int bg_tn_backward(bg_tensor *loss) {
  if (!loss) return bg_error(BG_EINVAL, "backward: NULL loss");
  bg_tctx *c = loss->c;
  if (c->has_err) return bg_error(BG_EINVAL, "backward: %s", c->err);
  if (!loss->u) return bg_error(BG_EINVAL, "backward: the loss is the error tensor");
  tshape ls = t_mkshape(loss->ndim, loss->shape);
  SHSTR(lss, &ls);
  node root = loss->graph ? loss->graph : loss->u;
  if (loss->ndim != 0 || !is_float_node(root)) {
    t_fail(c, "backward: loss has shape %s and dtype %s; backward needs a float scalar (shape ())", lss,
           bg_dtype_name(loss->dt));
    return bg_error(BG_EINVAL, "%s", c->err);
  }
  walk w;
  memset(&w, 0, sizeof w);
  w.c = c;
  const char *oom = NULL;
  if (!each_param(c, NULL, NULL)) {
    t_fail(c, "backward: no tensor of the context requires grad");
    return bg_error(BG_EINVAL, "%s", c->err);
  }
  const ir_node *const *topo;
  w.n = ir_toposort(c->g, root, &topo);
  w.topo = malloc((w.n ? w.n : 1) * sizeof *w.topo);
  if (!w.topo) oom = "the walk";
  else memcpy(w.topo, topo, w.n * sizeof *w.topo);
  if (!oom && !each_param(c, add_target, &w)) oom = "the target set";
  if (!oom && !mark_paths(&w)) oom = "the path marks";
  if (!oom && !tmap_get(&w.path, root->id, 0)) {
    walk_free(&w);
    t_fail(c, "backward: the loss %s does not depend on any tensor that requires grad", lss);
    return bg_error(BG_EINVAL, "%s", c->err);
  }
  if (!oom && !accumulate(c, &w.grads, root, n_const(c, IR_DT_SCALAR(root->dt), 1.0, &ls))) oom = "the seed gradient";
  if (!oom && !propagate(&w)) oom = "the gradient graph";
  if (!oom && !each_param(c, store_grad, &w)) oom = "a gradient handle";
  walk_free(&w);
  if (oom) {
    t_fail(c, "backward: out of host memory building %s", oom);
    return bg_error(BG_ENOMEM, "%s", c->err);
  }
  return 0;
}
