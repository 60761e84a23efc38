/* tensor/lower.c: one kernel AST per realized node (compile/kernel.h's contract).
 *
 * The graph under a realized node is walked with an index vector: movement ops turn the vector
 * of the node's shape into its source's (RESHAPE linearizes and re-splits with // and %, PERMUTE
 * reorders, EXPAND pins broadcast axes to 0, PAD shifts and adds a validity mask, SHRINK offsets,
 * FLIP mirrors), elementwise ops pass it on, REDUCE_AXIS opens new reduce RANGEs, and realized
 * nodes and buffers become LOADs at the row-major linear index. Index math goes through
 * ir_simplify. Values are memoized per (node, index vector, validity): the kernel ctx interns, so
 * the same vector is the same pointer, and a node used twice at one index is computed once.
 *
 * Fusion decisions made here (the scheduler reruns when one of them realizes a node):
 *  - "ending ranges": a REDUCE_AXIS whose index misses a range that is live around it (an output
 *    range, or a reduce range it sits in) would be recomputed per value of that range, as in
 *    x - x.max(keepdim); it is realized instead;
 *  - a computing node reached at two different index vectors in one kernel is realized (tinygrad
 *    realizes when consumers disagree on ranges); movement ops, constants and loads are free to
 *    recompute and never are;
 *  - an assign's kernel (tassign.c) reads its target only at the element it stores: another read realizes the
 *    assigned value into a buffer of its own first (the assign then copies it).
 * The walk uses an explicit stack: graphs can be deeper than the C stack. */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

typedef struct frame {
  node g, vec, valid;
  uint64_t live;                 /* bit per axis number of the ranges open around this value */
  bool root, expanded;
  uint8_t nkid, nred;
  node kvec[3], kvalid[3];       /* kid i is g->src[i] at (kvec[i], kvalid[i]) */
  node padvalid;
  node red[BG_MAX_DIMS];
} frame;

typedef struct lw {
  tsched *s;
  bg_tctx *c;
  ir_ctx *k;
  tmap memo, seen;
  tkernel *kern;
  unsigned next_axis;
  frame *st;
  size_t n, cap;
  int err;                       /* 0, 1 (restart: realized more) or -BG_E* */
  int64_t tgt;                   /* an assign kernel: its target buffer uid (tassign.c), else -1 */
  node out_lin;                  /* ... and the index it stores at */
} lw;

static node fail_oom(lw *L) {
  if (!L->err) L->err = bg_error(BG_ENOMEM, "tensor: building a kernel: %s", ir_error(L->k));
  return NULL;
}

static node ic(lw *L, int64_t v) { return ir_const_int(L->k, IR_DT_INDEX, v); }
static node simp(lw *L, node x) { return x ? ir_simplify(L->k, x) : NULL; }
static node a2(lw *L, enum ir_op op, node a, node b) { return ir_alu2(L->k, op, a, b); }

static node vec_of(lw *L, unsigned n, const node *idx) {
  for (unsigned i = 0; i < n; i++)
    if (!idx[i]) return NULL;
  ir_arg a = {.i = 0};
  return ir_intern(L->k, IR_NOOP, IR_DT_VOID, a, n, idx);
}

static uint64_t vkey(node vec, node valid) { return (uint64_t)vec->id << 32 | (valid ? valid->id + 1u : 0u); }

static bool is_true(node v) {
  int64_t x;
  return !v || (ir_is_const(v, &x) && x);
}
static bool is_false(node v) {
  int64_t x;
  return v && ir_is_const(v, &x) && !x;
}

static node and_valid(lw *L, node a, node b) {
  if (is_true(a)) return b;
  if (is_true(b)) return a;
  return simp(L, a2(L, IR_AND, a, b));
}

/* A dimension as an index expression: its constant, or the DEFINE_VAR of a symbolic size (tvar.c). */
static node dimn(lw *L, int64_t d) {
  node x = t_dim_node(L->c, L->k, L->kern, d);
  if (!x && !L->err) L->err = -BG_EINVAL;
  return x;
}

/* stride * d, folding constants so concrete shapes keep constant strides. */
static node stride_mul(lw *L, node stride, int64_t d) {
  int64_t s;
  if (!BG_DIM_IS_VAR(d) && stride && ir_is_const(stride, &s)) return ic(L, s * d);
  return simp(L, a2(L, IR_MUL, stride, dimn(L, d)));
}

/* Row-major linear index of vec in shape sh. */
static node linear(lw *L, const tshape *sh, node vec) {
  node lin = ic(L, 0), stride = ic(L, 1);
  for (int i = sh->n - 1; i >= 0; i--) {
    lin = a2(L, IR_ADD, lin, a2(L, IR_MUL, vec->src[i], stride));
    stride = stride_mul(L, stride, sh->d[i]);
  }
  return simp(L, lin);
}

static int slot_of(lw *L, node key) {
  tkernel *K = L->kern;
  for (unsigned i = 0; i < K->nin; i++)
    if (K->in[i] == key) return (int)i + 1;
  if (K->nin == sizeof K->in / sizeof K->in[0]) {
    L->err = bg_error(BG_ENOTSUP, "tensor: a kernel would read more than %zu buffers", sizeof K->in / sizeof K->in[0]);
    return -1;
  }
  K->in[K->nin++] = key;
  return (int)K->nin;
}

static node global(lw *L, int slot, enum ir_scalar s) {
  ir_arg a = {.i = slot};
  return ir_intern(L->k, IR_DEFINE_GLOBAL, IR_DT_PTR(s, IR_AS_GLOBAL), a, 0, NULL);
}

static void realize_more(lw *L, node g);

/* The device buffer a load key reads: a BUFFER's uid, an assign's target, or -1. */
static int64_t key_uid(node key) {
  return key->op == IR_BUFFER ? ((const tbuf_arg *)(const void *)key->arg.b->data)->uid : t_assign_target(key);
}

/* LOAD of buffer `key` (a BUFFER node or a node realized by this schedule) laid out as sh. */
static node load(lw *L, node key, const tshape *sh, node vec, node valid) {
  enum ir_scalar s = IR_DT_SCALAR(key->dt);
  if (is_false(valid)) return ir_const_int(L->k, s, 0);
  node lin = linear(L, sh, vec);
  /* An assign kernel may read its target only at the element it writes (x <- x - lr*g); any other read could
   * see an element already overwritten, so the value is computed into a buffer of its own first (a copy). */
  if (L->tgt >= 0 && lin && key_uid(key) == L->tgt && lin != L->out_lin) {
    node v = L->kern->out->src[0];
    if (t_sched_is_realized(L->s, v)) { /* cannot happen: a realized value is loaded as itself */
      L->err = bg_error(BG_EINVAL, "assign: the value reads its target buffer at another index");
      return NULL;
    }
    realize_more(L, v);
    return NULL;
  }
  int slot = slot_of(L, key);
  if (slot < 0) return NULL;
  node g = global(L, slot, s);
  node src[3] = {g, lin, valid};
  ir_arg a = {.i = 0};
  node idx = lin && g ? ir_intern(L->k, IR_INDEX, g->dt, a, is_true(valid) ? 2 : 3, src) : NULL;
  return idx ? ir_intern(L->k, IR_LOAD, s, a, 1, &idx) : NULL;
}

static bool computes(node g) {
  enum ir_op_group gr = ir_op_group((enum ir_op)g->op);
  return gr == IR_G_ALU1 || gr == IR_G_ALU2 || gr == IR_G_ALU3 || g->op == IR_REDUCE_AXIS;
}

static uint64_t range_bits(lw *L, node vec) {
  const ir_node *const *topo;
  size_t n = ir_toposort(L->k, vec, &topo);
  uint64_t bits = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned ax = (unsigned)(topo[i]->arg.i >> 8);
    if (topo[i]->op == IR_RANGE && ax < 64) bits |= 1ull << ax;
  }
  return bits;
}

static node new_range(lw *L, int64_t extent, unsigned kind) {
  ir_arg a = {.i = (int64_t)(L->next_axis++ << 8 | kind)};
  node e = dimn(L, extent);
  return e ? ir_intern(L->k, IR_RANGE, IR_DT_INDEX, a, 1, &e) : NULL;
}

/* Index vector of g's source for a movement op at vec; *pv gets PAD's validity. */
static node move_vec(lw *L, node g, node vec, node *pv) {
  bg_tctx *c = L->c;
  const tshape *out = t_shape(c, g), *in = t_shape(c, g->src[0]);
  const int64_t *arg = (const int64_t *)(const void *)g->arg.b->data + 1;
  node idx[BG_MAX_DIMS];
  *pv = NULL;
  switch ((enum ir_op)g->op) {
  case IR_RESHAPE: {
    node lin = linear(L, out, vec), stride = ic(L, 1);
    for (int j = in->n - 1; j >= 0; j--) {
      idx[j] = simp(L, a2(L, IR_MOD, a2(L, IR_IDIV, lin, stride), in->d[j] ? dimn(L, in->d[j]) : ic(L, 1)));
      stride = stride_mul(L, stride, in->d[j]);
    }
    break;
  }
  case IR_EXPAND:
    for (unsigned i = 0; i < in->n; i++) idx[i] = in->d[i] == 1 ? ic(L, 0) : vec->src[i];
    break;
  case IR_PERMUTE:
    for (unsigned i = 0; i < in->n; i++) idx[arg[i]] = vec->src[i];
    break;
  case IR_SHRINK:
    for (unsigned i = 0; i < in->n; i++) idx[i] = simp(L, a2(L, IR_ADD, vec->src[i], ic(L, arg[2 * i])));
    break;
  case IR_FLIP:
    for (unsigned i = 0; i < in->n; i++)
      idx[i] = arg[i] ? simp(L, a2(L, IR_SUB, ic(L, in->d[i] - 1), vec->src[i])) : vec->src[i];
    break;
  case IR_PAD: {
    node v = NULL;
    for (unsigned i = 0; i < in->n; i++) {
      int64_t lo = arg[2 * i], hi = arg[2 * i + 1];
      idx[i] = vec->src[i];
      if (!lo && !hi) continue;
      idx[i] = simp(L, a2(L, IR_ADD, vec->src[i], ic(L, -lo)));
      node ok = a2(L, IR_AND, a2(L, IR_CMPLT, ic(L, lo - 1), vec->src[i]), a2(L, IR_CMPLT, vec->src[i], ic(L, lo + in->d[i])));
      v = and_valid(L, v, simp(L, ok));
    }
    *pv = v;
    break;
  }
  default: return NULL;
  }
  return vec_of(L, in->n, idx);
}

static bool push(lw *L, node g, node vec, node valid, uint64_t live, bool root) {
  if (L->n == L->cap) {
    size_t ncap = L->cap ? L->cap * 2 : 64;
    frame *ns = realloc(L->st, ncap * sizeof *ns);
    if (!ns) {
      fail_oom(L);
      return false;
    }
    L->st = ns;
    L->cap = ncap;
  }
  frame *f = &L->st[L->n++];
  memset(f, 0, sizeof *f);
  f->g = g;
  f->vec = vec;
  f->valid = valid;
  f->live = live;
  f->root = root;
  return true;
}

static node memo_get(lw *L, node g, node vec, node valid) {
  tmap_ent *e = tmap_get(&L->memo, g->id, vkey(vec, valid));
  return e ? (node)(uintptr_t)e->v : NULL;
}

static void realize_more(lw *L, node g) {
  t_sched_realize(L->s, g);
  if (!L->err) L->err = 1;
}

/* First visit of frame f: a leaf value (returned), or kids set up (NULL, f->expanded). */
static node expand(lw *L, frame *f) {
  bg_tctx *c = L->c;
  node g = f->g, vec = f->vec, v;
  if (!f->root && (v = t_real(c, g))) return load(L, t_view_buffer(v), t_shape(c, g), vec, f->valid);
  if (!f->root && t_sched_is_realized(L->s, g)) return load(L, g, t_shape(c, g), vec, f->valid);
  switch ((enum ir_op)g->op) {
  case IR_BUFFER: return load(L, g, t_shape(c, g), vec, f->valid);
  case IR_CONST: return ir_intern(L->k, IR_CONST, g->dt, g->arg, 0, NULL);
  case IR_RANGE: return ir_cast(L->k, g->dt, vec->src[0]);
  default: break;
  }
  if (computes(g)) {
    tmap_ent *e = tmap_put(&L->seen, g->id, 0);
    if (!e) return fail_oom(L);
    if (e->v && e->v != vkey(vec, f->valid)) { /* consumers disagree on ranges */
      realize_more(L, g);
      return NULL;
    }
    e->v = vkey(vec, f->valid);
  }
  enum ir_op_group gr = ir_op_group((enum ir_op)g->op);
  if (gr == IR_G_MOVE) {
    f->kvec[0] = move_vec(L, g, vec, &f->padvalid);
    f->kvalid[0] = and_valid(L, f->valid, f->padvalid);
    if (!f->kvec[0] || (f->padvalid && !f->kvalid[0])) return fail_oom(L);
    f->nkid = 1;
  } else if (g->op == IR_REDUCE_AXIS) {
    if (!f->root && (f->live & ~range_bits(L, vec))) { /* ending ranges */
      realize_more(L, g);
      return NULL;
    }
    const int64_t *ra = (const int64_t *)(const void *)g->arg.b->data;
    const tshape *in = t_shape(c, g->src[0]);
    node idx[BG_MAX_DIMS];
    for (unsigned i = 0; i < in->n; i++) {
      idx[i] = vec->src[i];
      if (!((ra[1] >> i) & 1) || in->d[i] == 1) continue; /* symbolic sizes get a range too */
      idx[i] = f->red[f->nred++] = new_range(L, in->d[i], 1);
      unsigned ax = (unsigned)(idx[i] ? idx[i]->arg.i >> 8 : 64);
      if (ax < 64) f->live |= 1ull << ax; /* kids inherit f->live below */
    }
    f->kvec[0] = vec_of(L, in->n, idx);
    f->kvalid[0] = f->valid;
    if (!f->kvec[0]) return fail_oom(L);
    f->nkid = 1;
  } else if (g->op == IR_BUFFERIZE || gr == IR_G_ALU1 || gr == IR_G_ALU2 || gr == IR_G_ALU3) {
    f->nkid = (uint8_t)g->nsrc;
    for (unsigned i = 0; i < g->nsrc; i++) {
      f->kvec[i] = vec;
      f->kvalid[i] = f->valid;
    }
  } else {
    L->err = bg_error(BG_EINVAL, "tensor: cannot lower %s into a kernel", ir_op_name((enum ir_op)g->op));
    return NULL;
  }
  f->expanded = true;
  return NULL;
}

/* All kids of f are memoized: build f's value. */
static node combine(lw *L, frame *f) {
  node g = f->g, kv[3];
  for (unsigned i = 0; i < f->nkid; i++)
    if (!(kv[i] = memo_get(L, g->src[i], f->kvec[i], f->kvalid[i]))) return fail_oom(L);
  ir_arg a = {.i = 0};
  switch (ir_op_group((enum ir_op)g->op)) {
  case IR_G_MOVE:
    if (!f->padvalid || is_true(f->padvalid)) return kv[0];
    if (is_false(f->padvalid)) return ir_const_int(L->k, g->dt, 0);
    return ir_alu3(L->k, IR_WHERE, f->padvalid, kv[0], ir_const_int(L->k, g->dt, 0));
  case IR_G_ALU1:
  case IR_G_ALU2:
  case IR_G_ALU3: return ir_intern(L->k, (enum ir_op)g->op, g->dt, a, g->nsrc, kv);
  default: break;
  }
  if (g->op == IR_BUFFERIZE) return kv[0];
  /* REDUCE_AXIS */
  node src[1 + BG_MAX_DIMS];
  src[0] = kv[0];
  for (unsigned i = 0; i < f->nred; i++) src[1 + i] = f->red[i];
  a.i = ((const int64_t *)(const void *)g->arg.b->data)[0];
  return f->nred ? ir_intern(L->k, IR_REDUCE, g->dt, a, 1u + f->nred, src) : kv[0];
}

static node run(lw *L, node g, node vec, uint64_t live) {
  if (!push(L, g, vec, NULL, live, true)) return NULL;
  while (L->n && !L->err) {
    frame *f = &L->st[L->n - 1];
    node v = NULL;
    if (!f->expanded) {
      if (memo_get(L, f->g, f->vec, f->valid)) {
        L->n--;
        continue;
      }
      v = expand(L, f);
      if (L->err) break;
      if (!v && !f->expanded) return fail_oom(L);
      if (f->expanded) {
        size_t at = L->n - 1;
        for (int i = f->nkid - 1; i >= 0; i--) {
          frame *p = &L->st[at];
          if (!memo_get(L, p->g->src[i], p->kvec[i], p->kvalid[i]) &&
              !push(L, p->g->src[i], p->kvec[i], p->kvalid[i], p->live, false))
            break;
        }
        continue;
      }
    } else if (!(v = combine(L, f))) {
      fail_oom(L);
      break;
    }
    f = &L->st[L->n - 1];
    tmap_ent *e = tmap_put(&L->memo, f->g->id, vkey(f->vec, f->valid));
    if (!e) return fail_oom(L);
    e->v = (uint64_t)(uintptr_t)v;
    L->n--;
  }
  return L->err ? NULL : memo_get(L, g, vec, NULL);
}

int t_lower(tsched *s, node out, tkernel *kern) {
  bg_tctx *c = t_sched_ctx(s);
  lw L;
  memset(&L, 0, sizeof L);
  memset(kern, 0, sizeof *kern);
  L.s = s;
  L.c = c;
  L.kern = kern;
  kern->out = out;
  if (!(L.k = kern->k = ir_new())) return bg_error(BG_ENOMEM, "tensor: out of host memory for a kernel");
  const tshape *sh = t_shape(c, out);
  node idx[BG_MAX_DIMS];
  uint64_t live = 0;
  for (unsigned i = 0; i < sh->n; i++) {
    bool ranged = sh->d[i] > 1 || BG_DIM_IS_VAR(sh->d[i]);
    idx[i] = ranged ? new_range(&L, sh->d[i], 0) : ic(&L, 0);
    if (ranged && L.next_axis <= 64) live |= 1ull << (L.next_axis - 1);
  }
  node vec = vec_of(&L, sh->n, idx);
  L.tgt = t_assign_target(out);
  L.out_lin = vec && L.tgt >= 0 ? linear(&L, sh, vec) : NULL;
  node value = vec ? run(&L, out, vec, live) : fail_oom(&L);
  if (value) {
    enum ir_scalar os = IR_DT_SCALAR(out->dt);
    node g = global(&L, 0, os), lin = linear(&L, sh, vec);
    ir_arg a = {.i = 0};
    node isrc[2] = {g, lin};
    node ix = g && lin ? ir_intern(L.k, IR_INDEX, g->dt, a, 2, isrc) : NULL;
    node ssrc[2] = {ix, value};
    node st = ix ? ir_intern(L.k, IR_STORE, IR_DT_VOID, a, 2, ssrc) : NULL;
    a.b = NULL;
    kern->sink = st ? ir_intern(L.k, IR_SINK, IR_DT_VOID, a, 1, &st) : NULL;
    if (!kern->sink) fail_oom(&L);
  } else if (!L.err) {
    fail_oom(&L);
  }
  tmap_free(&L.memo);
  tmap_free(&L.seen);
  free(L.st);
  if (L.err) {
    ir_free(kern->k);
    kern->k = NULL;
    kern->sink = NULL;
  }
  return L.err;
}
