/* tensor/handles.c: tensor handles (bg_tensor: made by t_wrap, following realization in t_node), the
 * by-node-id side tables (shapes, realized views, handle counts) and the public tensor accessors. */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"
#include "util/grow.h"

bool t_tables(bg_tctx *c) {
  size_t need = ir_node_count(c->g);
  if (need > c->shapes_cap) {
    size_t cap = c->shapes_cap, cap2 = c->shapes_cap;
    if (!bg_grow((void **)&c->shapes, &cap, need, sizeof *c->shapes) ||
        !bg_grow((void **)&c->has_shape, &cap2, cap, 1))
      return false;
    c->shapes_cap = cap;
  }
  if (need > c->real_cap) {
    size_t cap = c->real_cap, cap2 = c->real_cap;
    if (!bg_grow((void **)&c->real, &cap, need, sizeof *c->real) || !bg_grow((void **)&c->handles, &cap2, cap, sizeof *c->handles))
      return false;
    c->real_cap = cap;
  }
  return true;
}

node t_real(const bg_tctx *c, node u) {
  if (c->cap && u && u->id < c->real_cap && c->real[u->id] && t_jit_masks_real(c, u)) return NULL; /* recompute: jit.c */
  return u && u->id < c->real_cap ? c->real[u->id] : NULL;
}
void t_set_real(bg_tctx *c, node u, node view) {
  if (u->id < c->real_cap) c->real[u->id] = view;
}

static void set_handle_node(bg_tensor *t, node u) {
  bg_tctx *c = t->c;
  if (t->u && t->u->id < c->real_cap && c->handles[t->u->id]) c->handles[t->u->id]--;
  t->u = u;
  if (u && u->id < c->real_cap) c->handles[u->id]++;
}

bg_tensor *t_wrap(bg_tctx *c, node u) {
  if (!u) return c->has_err ? &c->err_t : t_fail(c, "tensor: out of host memory building the graph");
  if (!t_tables(c)) return t_fail(c, "tensor: out of host memory");
  if (!c->chunks || c->chunks->n == TCHUNK) {
    tchunk *k = calloc(1, sizeof *k);
    if (!k) return t_fail(c, "tensor: out of host memory for a tensor handle");
    k->next = c->chunks;
    c->chunks = k;
  }
  bg_tensor *t = &c->chunks->t[c->chunks->n++];
  const tshape *sh = t_shape(c, u);
  t->c = c;
  t->dt = t_bgtype(IR_DT_SCALAR(u->dt));
  t->ndim = sh->n;
  memcpy(t->shape, sh->d, sizeof t->shape);
  set_handle_node(t, u);
  t->graph = u;
  return t;
}

node t_node(const bg_tensor *t) {
  if (!t->u) return NULL;
  node v = t_real(t->c, t->u);
  if (v) set_handle_node((bg_tensor *)t, v); /* follow "becomes" once; handles are owned by the context */
  return t->u;
}

/* Handles that point at a node keep its buffer alive after a realize. */
bool t_has_handle(const bg_tctx *c, node u) { return u->id < c->real_cap && c->handles[u->id] > 0; }

unsigned bg_tn_ndim(const bg_tensor *t) { return t->ndim; }
const int64_t *bg_tn_shape(const bg_tensor *t) { return t->shape; }
enum bg_dtype bg_tn_dtype(const bg_tensor *t) { return t->dt; }
bg_tctx *bg_tn_ctx(const bg_tensor *t) { return t->c; }
int64_t bg_tn_numel(const bg_tensor *t) {
  int64_t n = 1;
  for (unsigned i = 0; i < t->ndim; i++) n *= BG_DIM_VALUE(t->shape[i]);
  return n;
}
