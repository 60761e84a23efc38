/* tensor/tgraph.c: the shape side table and node-level graph builders. Builders assume valid
 * arguments (the public ops check and latch errors) and fold no-ops so equal values intern to one
 * node: an identity reshape/permute/expand/pad returns its source, reshape chains collapse. */
#include <stdio.h>
#include <string.h>

#include "tensor/tensor_internal.h"
#include "util/half.h"

static const tshape scalar_shape = {0, {0}};

const tshape *t_shape(const bg_tctx *c, node u) {
  return u && u->id < c->shapes_cap && c->has_shape[u->id] ? &c->shapes[u->id] : &scalar_shape;
}

int64_t t_numel(const tshape *s) {
  int64_t n = 1;
  for (unsigned i = 0; i < s->n; i++) n *= BG_DIM_VALUE(s->d[i]); /* symbolic sizes count as bound */
  return n;
}

void t_shape_str(const tshape *s, char *buf, size_t n) {
  size_t len = 0;
  len += (size_t)snprintf(buf, n, "(");
  for (unsigned i = 0; i < s->n && len < n; i++)
    len += BG_DIM_IS_VAR(s->d[i]) ? (size_t)snprintf(buf + len, n - len, "%sv%u=%lld", i ? "," : "", BG_DIM_VAR(s->d[i]), (long long)BG_DIM_VALUE(s->d[i]))
                                  : (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "", (long long)s->d[i]);
  if (len < n) snprintf(buf + len, n - len, ")");
}

tshape t_mkshape(unsigned n, const int64_t *d) {
  tshape s;
  memset(&s, 0, sizeof s);
  s.n = (uint8_t)n;
  if (n) memcpy(s.d, d, n * sizeof *d);
  return s;
}

static bool same_shape(const tshape *a, const tshape *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->d, b->d, a->n * sizeof a->d[0]) == 0);
}

/* sh may point into the side table itself, which t_tables may move: copy it first. */
static node with_shape(bg_tctx *c, node u, const tshape *sh) {
  tshape s = *sh;
  if (!u || !t_tables(c)) return NULL;
  if (!c->has_shape[u->id]) {
    c->shapes[u->id] = s;
    c->has_shape[u->id] = 1;
  }
  return u;
}

node n_node(bg_tctx *c, enum ir_op op, ir_dtype dt, ir_arg arg, unsigned nsrc, const node *src, const tshape *sh) {
  for (unsigned i = 0; i < nsrc; i++)
    if (!src[i]) return NULL;
  return with_shape(c, ir_intern(c->g, op, dt, arg, nsrc, src), sh);
}

/* A movement op with an int64 blob {n, v[0..m)}. */
static node move(bg_tctx *c, enum ir_op op, node u, const int64_t *v, unsigned m, const tshape *sh) {
  int64_t blob[1 + 2 * BG_MAX_DIMS];
  blob[0] = t_shape(c, u)->n;
  if (m) memcpy(blob + 1, v, m * sizeof *v);
  ir_arg a = {.b = ir_blob_intern(c->g, blob, (1 + m) * sizeof *v)};
  if (!a.b) return NULL;
  return n_node(c, op, u->dt, a, 1, &u, sh);
}

/* Builders taking a shape copy it first: callers often pass t_shape()'s pointer into the side
 * table, which moves when a new node grows it. */
node n_const(bg_tctx *c, enum ir_scalar s, double v, const tshape *shp) {
  tshape sh0 = *shp, *sh = &sh0;
  if (s == IR_DT_FLOAT16) v = bg_f16_to_f32(bg_f32_to_f16((float)v)); /* the value a half can hold */
  if (s == IR_DT_BFLOAT16) v = bg_bf16_to_f32(bg_f32_to_bf16((float)v));
  node k = with_shape(c, ir_const_float(c->g, s, v), &scalar_shape);
  return k && sh->n ? n_broadcast_to(c, k, sh) : k;
}

node n_iota(bg_tctx *c, int64_t n) {
  node ext = ir_const_int(c->g, IR_DT_INDEX, n);
  tshape sh = t_mkshape(1, &n);
  ir_arg a = {.i = 0};
  return n_node(c, IR_RANGE, IR_DT_INT32, a, 1, &ext, &sh);
}

node n_buffer(bg_tctx *c, int64_t uid, int64_t numel, enum ir_scalar s) {
  tbuf_arg ba = {uid, numel};
  ir_arg a = {.b = ir_blob_intern(c->g, &ba, sizeof ba)};
  tshape sh = t_mkshape(1, &numel);
  return a.b ? n_node(c, IR_BUFFER, s, a, 0, NULL, &sh) : NULL;
}

node n_reshape(bg_tctx *c, node u, const tshape *shp) {
  tshape sh0 = *shp, *sh = &sh0;
  if (!u) return NULL;
  if (u->op == IR_RESHAPE) u = u->src[0]; /* reshape of a reshape is one reshape */
  if (same_shape(t_shape(c, u), sh)) return u;
  return move(c, IR_RESHAPE, u, sh->d, sh->n, sh);
}

node n_expand(bg_tctx *c, node u, const tshape *shp) {
  tshape sh0 = *shp, *sh = &sh0;
  if (!u) return NULL;
  if (same_shape(t_shape(c, u), sh)) return u;
  return move(c, IR_EXPAND, u, sh->d, sh->n, sh);
}

node n_permute(bg_tctx *c, node u, const unsigned *order) {
  if (!u) return NULL;
  const tshape *in = t_shape(c, u);
  tshape sh = *in;
  int64_t v[BG_MAX_DIMS];
  bool ident = true;
  for (unsigned i = 0; i < in->n; i++) {
    v[i] = order[i];
    sh.d[i] = in->d[order[i]];
    ident &= order[i] == i;
  }
  return ident ? u : move(c, IR_PERMUTE, u, v, in->n, &sh);
}

node n_pad(bg_tctx *c, node u, const int64_t (*p)[2]) {
  if (!u) return NULL;
  const tshape *in = t_shape(c, u);
  tshape sh = *in;
  int64_t v[2 * BG_MAX_DIMS];
  bool ident = true;
  for (unsigned i = 0; i < in->n; i++) {
    v[2 * i] = p[i][0];
    v[2 * i + 1] = p[i][1];
    sh.d[i] = in->d[i] + p[i][0] + p[i][1];
    ident &= p[i][0] == 0 && p[i][1] == 0;
  }
  return ident ? u : move(c, IR_PAD, u, v, 2 * in->n, &sh);
}

node n_shrink(bg_tctx *c, node u, const int64_t (*b)[2]) {
  if (!u) return NULL;
  const tshape *in = t_shape(c, u);
  tshape sh = *in;
  int64_t v[2 * BG_MAX_DIMS];
  bool ident = true;
  for (unsigned i = 0; i < in->n; i++) {
    v[2 * i] = b[i][0];
    v[2 * i + 1] = b[i][1];
    sh.d[i] = b[i][1] - b[i][0];
    ident &= b[i][0] == 0 && b[i][1] == in->d[i];
  }
  return ident ? u : move(c, IR_SHRINK, u, v, 2 * in->n, &sh);
}

node n_flip(bg_tctx *c, node u, uint32_t mask) {
  if (!u) return NULL;
  const tshape *in = t_shape(c, u);
  tshape sh = *in;
  int64_t v[BG_MAX_DIMS];
  bool any = false;
  for (unsigned i = 0; i < in->n; i++) {
    v[i] = (mask >> i) & 1u && in->d[i] > 1; /* flipping a size-1 axis changes nothing */
    any |= v[i] != 0;
  }
  return any ? move(c, IR_FLIP, u, v, in->n, &sh) : u;
}

node n_cast(bg_tctx *c, node u, enum ir_scalar s) {
  if (!u) return NULL;
  if (IR_DT_SCALAR(u->dt) == s) return u;
  ir_arg a = {.i = 0};
  return n_node(c, IR_CAST, s, a, 1, &u, t_shape(c, u));
}

node n_bitcast(bg_tctx *c, node u, enum ir_scalar s) {
  if (!u) return NULL;
  if (IR_DT_SCALAR(u->dt) == s) return u;
  ir_arg a = {.i = 0};
  return n_node(c, IR_BITCAST, s, a, 1, &u, t_shape(c, u));
}

static bool is_compare(enum ir_op op) { return op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ; }

node n_alu(bg_tctx *c, enum ir_op op, node a, node b) {
  if (!a || !b) return NULL;
  node src[2] = {a, b};
  ir_arg arg = {.i = 0};
  return n_node(c, op, is_compare(op) ? IR_DT_BOOL : a->dt, arg, 2, src, t_shape(c, a));
}

node n_where(bg_tctx *c, node cond, node x, node y) {
  if (!cond || !x || !y) return NULL;
  node src[3] = {cond, x, y};
  ir_arg arg = {.i = 0};
  return n_node(c, IR_WHERE, x->dt, arg, 3, src, t_shape(c, x));
}

node n_unary(bg_tctx *c, enum ir_op op, node a) {
  if (!a) return NULL;
  ir_arg arg = {.i = 0};
  return n_node(c, op, a->dt, arg, 1, &a, t_shape(c, a));
}

node n_reduce(bg_tctx *c, node u, enum ir_op op, uint32_t mask) {
  if (!u) return NULL;
  tshape sh = *t_shape(c, u);
  bool real = false;
  for (unsigned i = 0; i < sh.n; i++) {
    if (!((mask >> i) & 1u)) continue;
    real |= sh.d[i] != 1;
    sh.d[i] = 1;
  }
  if (!real) return u; /* reducing size-1 axes is the identity */
  int64_t v[2] = {op, (int64_t)(mask & ((sh.n < 32 ? 1u << sh.n : 0u) - 1u))};
  ir_arg a = {.b = ir_blob_intern(c->g, v, sizeof v)};
  return a.b ? n_node(c, IR_REDUCE_AXIS, u->dt, a, 1, &u, &sh) : NULL;
}

node n_bufferize(bg_tctx *c, node u) {
  if (!u) return NULL;
  int64_t tag = ++c->next_tag;
  ir_arg a = {.b = ir_blob_intern(c->g, &tag, sizeof tag)};
  return a.b ? n_node(c, IR_BUFFERIZE, u->dt, a, 1, &u, t_shape(c, u)) : NULL;
}

node n_broadcast_to(bg_tctx *c, node u, const tshape *shp) {
  tshape sh0 = *shp, *sh = &sh0;
  if (!u) return NULL;
  const tshape *in = t_shape(c, u);
  tshape mid = *sh;
  unsigned off = (unsigned)(sh->n - in->n);
  for (unsigned i = 0; i < sh->n; i++) mid.d[i] = i < off ? 1 : in->d[i - off];
  return n_expand(c, n_reshape(c, u, &mid), sh);
}

bool n_broadcast(bg_tctx *c, node *a, node *b) {
  const tshape *sa = t_shape(c, *a), *sb = t_shape(c, *b);
  tshape out;
  memset(&out, 0, sizeof out);
  out.n = sa->n > sb->n ? sa->n : sb->n;
  for (unsigned i = 0; i < out.n; i++) {
    int64_t x = i + sa->n >= out.n ? sa->d[i + sa->n - out.n] : 1;
    int64_t y = i + sb->n >= out.n ? sb->d[i + sb->n - out.n] : 1;
    if (x != y && x != 1 && y != 1) return false;
    out.d[i] = x == 1 ? y : x;
  }
  *a = n_broadcast_to(c, *a, &out);
  *b = n_broadcast_to(c, *b, &out);
  return true;
}

bool t_is_view(node u) { return u && (u->op == IR_BUFFER || (u->op == IR_RESHAPE && u->src[0]->op == IR_BUFFER)); }
node t_view_buffer(node u) { return u->op == IR_BUFFER ? u : u->src[0]; }
