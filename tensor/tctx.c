/* tensor/tctx.c: contexts (device, lazy graph, handles, side tables), the error latch, stats and
 * the tensor accessors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

int bg_tctx_open(const char *dev, bg_tctx **out) {
  *out = NULL;
  bg_tctx *c = calloc(1, sizeof *c);
  if (!c) return bg_error(BG_ENOMEM, "tensor: out of host memory opening a context");
  int r = bg_dev_open(dev, &c->dev);
  if (r < 0) {
    free(c);
    return bg_error_context(r, "tensor: ");
  }
  c->g = ir_new();
  if (!c->g) {
    bg_dev_close(c->dev);
    free(c);
    return bg_error(BG_ENOMEM, "tensor: out of host memory opening a context");
  }
  c->err_t.c = c;
  c->err_t.dt = BG_FLOAT32;
  *out = c;
  return 0;
}

void bg_tctx_close(bg_tctx *c) {
  if (!c) return;
  if (bg_dev_synchronize(c->dev, 0) < 0) BG_LOG(1, "tensor: closing after a failed sync: %s", bg_last_error());
  for (size_t i = 0; i < c->nprogs; i++) {
    bg_program_free(c->progs[i].prg);
    bg_kernel_free(&c->progs[i].k);
    free(c->progs[i].key);
  }
  free(c->progs);
  for (size_t i = 0; i < c->nbufs; i++)
    if (c->bufs[i].b) bg_buf_free(c->bufs[i].b);
  free(c->bufs);
  for (tchunk *k = c->chunks, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  free(c->shapes);
  free(c->has_shape);
  free(c->real);
  free(c->handles);
  free(c->vars);
  ir_free(c->g);
  bg_dev_close(c->dev);
  free(c);
}

const char *bg_tctx_error(const bg_tctx *c) { return c && c->has_err ? c->err : NULL; }
void bg_tctx_clear_error(bg_tctx *c) {
  c->has_err = false;
  c->err[0] = 0;
}
const char *bg_tctx_device(const bg_tctx *c) { return bg_dev_name(c->dev); }
void bg_tctx_stats(const bg_tctx *c, bg_tstats *st) { *st = c->st; }

void bg_tctx_seed(bg_tctx *c, uint64_t seed) {
  c->seed = seed;
  c->rng_counter = 0;
}

bg_tensor *t_fail(bg_tctx *c, const char *fmt, ...) {
  char msg[sizeof c->err]; /* formatted apart: an argument may be bg_last_error() itself */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bg_error(BG_EINVAL, "%s", msg); /* baregpu/error.h rule 4: the failing call's message is in bg_last_error() */
  if (!c->has_err) {
    memcpy(c->err, msg, sizeof c->err);
    c->has_err = true;
    BG_LOG(1, "tensor: %s", c->err);
  }
  return &c->err_t;
}

bg_tensor *t_null_arg(const char *op, const char *arg, bg_tensor *other) {
  if (strncmp(op, "bg_tn_", 6) == 0) op += 6;   /* callers pass __func__ */
  bg_error(BG_EINVAL, "%s: tensor argument '%s' is NULL", op, arg);
  return other ? t_fail(other->c, "%s: tensor argument '%s' is NULL", op, arg) : NULL;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap : 256;
  while (ncap < need) ncap *= 2;
  void *np = realloc(*p, ncap * elem);
  if (!np) return false;
  memset((char *)np + *cap * elem, 0, (ncap - *cap) * elem);
  *p = np;
  *cap = ncap;
  return true;
}

bool t_tables(bg_tctx *c) {
  size_t need = ir_node_count(c->g);
  if (need > c->shapes_cap) {
    size_t cap = c->shapes_cap, cap2 = c->shapes_cap;
    if (!grow((void **)&c->shapes, &cap, need, sizeof *c->shapes) ||
        !grow((void **)&c->has_shape, &cap2, cap, 1))
      return false;
    c->shapes_cap = cap;
  }
  if (need > c->real_cap) {
    size_t cap = c->real_cap, cap2 = c->real_cap;
    if (!grow((void **)&c->real, &cap, need, sizeof *c->real) || !grow((void **)&c->handles, &cap2, cap, sizeof *c->handles))
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

int bg_tctx_sync(bg_tctx *c) { return bg_dev_synchronize(c->dev, 0); }
