/* compile/klinear.c: linearization of an expanded kernel into a tree of loops (see klinear.h).
 *
 * Emission is demand driven from the stores, with an explicit stack (no recursion over the
 * graph). The current loop path is root, the output loops, then whatever reduce loops are open.
 * A node goes to the outermost scope on the path that binds all its ranges, inserted at that
 * scope's cursor, i.e. before the child loop the path continues into: that is both the hoisting
 * of loop-invariant code and a valid order. A node already emitted in a scope on the path is
 * reused; one emitted in a closed sibling loop is emitted again.
 *
 * A REDUCE is emitted with every other not yet emitted REDUCE of the same ranges and the same
 * result ranges (its group) whose value reaches no other member and no accumulator whose loops are
 * still open (make_group): accumulators first, then
 * the reduce loops (a new child of the target scope), then each member's lanes and update inside
 * the innermost loop; after the loops the accumulator is the REDUCE's value. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/klinear.h"
#include "util/grow.h"

typedef const ir_node *node;

enum { FR_NODE, FR_GROUP };

typedef struct group {
  node *mem;
  unsigned nm;
  kitem **acc;
  node ranges[KMAX_RANGES];
  kitem *ext[KMAX_RANGES];
  unsigned nr;
  kscope *T, *inner;
  kscope **saved;           /* path below T while the group's loops are open */
  unsigned nsaved;
  unsigned m, lane;
  kitem **lanes;
  size_t lanes_cap;
} group;

typedef struct frame {
  int kind;
  unsigned stage, i;
  bool waiting;             /* a child frame was pushed; its result is in lctx.ret */
  node u;
  kitem *it;
  kscope *T;
  group *g;
} frame;

typedef struct lctx {
  ir_ctx *ctx;
  klin *l;
  size_t nn;
  int *bit;                 /* id -> range bit + 1 */
  uint64_t *open;           /* id -> ranges the value depends on */
  uint64_t *own;            /* id -> ranges a REDUCE closes */
  bool *has_red;            /* id -> a REDUCE lies below */
  bool *busy;               /* id -> REDUCE whose accumulator exists but whose loops are still open */
  kitem **inst, **leaf;     /* id -> instances, leaf item */
  node *reduces;            /* every REDUCE, sources first */
  size_t nreduces;
  uint32_t *mark;
  uint32_t gen;
  node *dfs;
  kscope **path;
  unsigned plen, pcap;
  frame *st;
  size_t sp, cap;
  kitem *ret;
  int err;
} lctx;

/* ---- allocation ---- */

static int oom(lctx *c) {
  if (!c->err) c->err = bg_error(BG_ENOMEM, "kernel: out of memory linearizing");
  return c->err;
}

static int fail(lctx *c, node u, const char *what) {
  char d[256];
  kdescribe(u, d, sizeof d);
  if (!c->err) c->err = bg_error(BG_EINVAL, "kernel: linearize: %s: %s", what, d);
  return c->err;
}

static kitem *new_item(lctx *c, enum kitem_kind kind, node u, unsigned nops) {
  klin *l = c->l;
  kitem *it = calloc(1, sizeof *it);
  if (!it || (nops && !(it->ops = calloc(nops, sizeof *it->ops))) ||
      !bg_grow((void **)&l->items, &l->items_cap, l->nitems + 1, sizeof *l->items)) {
    if (it) free(it->ops);
    free(it);
    oom(c);
    return NULL;
  }
  l->items[l->nitems++] = it;
  it->kind = kind;
  it->u = u;
  it->nops = nops;
  return it;
}

static kscope *new_scope(lctx *c, kscope *parent, kitem *loop) {
  klin *l = c->l;
  kscope *s = calloc(1, sizeof *s);
  if (!s || !bg_grow((void **)&l->scopes, &l->scopes_cap, l->nscopes + 1, sizeof *l->scopes)) {
    free(s);
    oom(c);
    return NULL;
  }
  l->scopes[l->nscopes++] = s;
  s->parent = parent;
  s->loop = loop;
  s->depth = parent ? parent->depth + 1 : 0;
  s->bound = parent ? parent->bound : 0;
  s->iters = parent ? parent->iters : 1;
  return s;
}

void klin_free(klin *l) {
  for (size_t i = 0; i < l->nitems; i++) {
    free(l->items[i]->ops);
    free(l->items[i]->text);
    free(l->items[i]);
  }
  for (size_t i = 0; i < l->nscopes; i++) {
    free(l->scopes[i]->saved);
    free(l->scopes[i]);
  }
  free(l->items);
  free(l->scopes);
  memset(l, 0, sizeof *l);
}

/* ---- scopes and the path ---- */

static void place(kscope *s, kitem *it) {
  kitem *before = s->cursor;
  it->scope = s;
  if (before) {
    it->next = before;
    it->prev = before->prev;
    if (before->prev) before->prev->next = it;
    else s->first = it;
    before->prev = it;
  } else {
    it->prev = s->last;
    if (s->last) s->last->next = it;
    else s->first = it;
    s->last = it;
  }
}

static bool path_push(lctx *c, kscope *s) {
  size_t cap = c->pcap;
  if (!bg_grow((void **)&c->path, &cap, c->plen + 1u, sizeof *c->path)) return oom(c), false;
  c->pcap = (unsigned)cap;
  c->path[c->plen++] = s;
  return true;
}

static bool on_path(const lctx *c, const kscope *s) { return s->depth < c->plen && c->path[s->depth] == s; }

/* Opens a loop over r as the last child of s (at its cursor) and enters it. */
static kscope *open_loop(lctx *c, kscope *s, node r, kitem *extent) {
  kitem *it = new_item(c, KI_LOOP, r, 1);
  if (!it) return NULL;
  it->ops[0] = extent;
  place(s, it);
  if (!bg_grow((void **)&s->saved, &s->saved_cap, s->nsaved + 1, sizeof *s->saved)) return oom(c), NULL;
  s->saved[s->nsaved++] = s->cursor;
  s->cursor = it;
  kscope *b = new_scope(c, s, it);
  if (!b) return NULL;
  it->body = b;
  b->bound |= 1ull << (c->bit[r->id] - 1);
  int64_t e = ir_vmax(c->ctx, r->src[0]);
  b->iters = e > 0 ? s->iters * (uint64_t)e : 0;
  return path_push(c, b) ? b : NULL;
}

static void close_loop(lctx *c, kscope *b) {
  kscope *s = b->parent;
  s->cursor = s->saved[--s->nsaved];
  c->plen--;
}

static kscope *target(const lctx *c, uint64_t m) {
  for (unsigned d = 0; d < c->plen; d++)
    if ((c->path[d]->bound & m) == m) return c->path[d];
  return NULL;
}

static kitem *visible(const lctx *c, node u) {
  for (kitem *it = c->inst[u->id]; it; it = it->inst_next)
    if (on_path(c, it->scope)) return it;
  return NULL;
}

static void record(lctx *c, kitem *it) {
  it->inst_next = c->inst[it->u->id];
  c->inst[it->u->id] = it;
}

/* ---- analysis ---- */

static int analyse(lctx *c, node sink) {
  const ir_node *const *t;
  size_t n = ir_toposort(c->ctx, sink, &t);
  node *topo = malloc((n + 1) * sizeof *topo);
  if (!topo) return oom(c);
  memcpy(topo, t, n * sizeof *topo);
  c->reduces = malloc((n + 1) * sizeof *c->reduces);
  c->dfs = malloc((n + 1) * sizeof *c->dfs);
  if (!c->reduces || !c->dfs) {
    free(topo);
    return oom(c);
  }
  klin *l = c->l;
  int nr = kcollect_ranges(c->ctx, sink, l->ranges, KMAX_RANGES);
  if (nr < 0) {
    free(topo);
    return c->err = -BG_EINVAL;
  }
  l->nranges = (unsigned)nr;
  for (unsigned b = 0; b < l->nranges; b++) {
    node r = l->ranges[b];
    if (kr_kind(r) != KR_LOOP && kr_kind(r) != KR_REDUCE) {
      free(topo);
      return fail(c, r, "an upcast/unroll range was not expanded");
    }
    c->bit[r->id] = (int)b + 1;
  }
  for (size_t i = 0; i < n; i++) {
    node u = topo[i];
    uint64_t m = u->op == IR_RANGE ? 1ull << (c->bit[u->id] - 1) : 0;
    bool hr = false;
    for (unsigned k = 0; k < u->nsrc; k++) {
      m |= c->open[u->src[k]->id];
      hr |= c->has_red[u->src[k]->id] || u->src[k]->op == IR_REDUCE;
    }
    if (u->op == IR_REDUCE) {
      uint64_t own = 0;
      for (unsigned k = 1; k < u->nsrc; k++) {
        if (u->src[k]->op != IR_RANGE) {
          free(topo);
          return fail(c, u, "REDUCE source is not a RANGE");
        }
        own |= 1ull << (c->bit[u->src[k]->id] - 1);
      }
      c->own[u->id] = own;
      m &= ~own;
      c->reduces[c->nreduces++] = u;
    }
    c->open[u->id] = m;
    c->has_red[u->id] = hr;
  }
  free(topo);
  return 0;
}

/* Does the value of REDUCE a reach b? Each node is pushed at most once. */
static bool reaches(lctx *c, node a, node b) {
  if (!c->has_red[a->id]) return false;
  if (++c->gen == 0) {
    memset(c->mark, 0, (c->nn + 1) * sizeof *c->mark);
    c->gen = 1;
  }
  size_t sp = 0;
  c->mark[a->id] = c->gen;
  c->dfs[sp++] = a;
  while (sp) {
    node x = c->dfs[--sp];
    for (unsigned k = 0; k < x->nsrc; k++) {
      node s = x->src[k];
      if (s == b) return true;
      if (c->mark[s->id] == c->gen || !c->has_red[s->id]) continue;
      c->mark[s->id] = c->gen;
      c->dfs[sp++] = s;
    }
  }
  return false;
}

/* Does the value of REDUCE a read an accumulator that is not final yet? */
static bool reaches_busy(lctx *c, node a) {
  if (!c->has_red[a->id]) return false;
  if (++c->gen == 0) {
    memset(c->mark, 0, (c->nn + 1) * sizeof *c->mark);
    c->gen = 1;
  }
  size_t sp = 0;
  c->mark[a->id] = c->gen;
  c->dfs[sp++] = a;
  while (sp) {
    node x = c->dfs[--sp];
    for (unsigned k = 0; k < x->nsrc; k++) {
      node s = x->src[k];
      if (s->op == IR_REDUCE && c->busy[s->id]) return true;
      if (c->mark[s->id] == c->gen || !c->has_red[s->id]) continue;
      c->mark[s->id] = c->gen;
      c->dfs[sp++] = s;
    }
  }
  return false;
}

/* ---- emission ---- */

static bool push(lctx *c, int kind, node u) {
  if (!bg_grow((void **)&c->st, &c->cap, c->sp + 1, sizeof *c->st)) return oom(c), false;
  c->st[c->sp++] = (frame){.kind = kind, .u = u};
  return true;
}

static void pop(lctx *c) { c->sp--; }

static unsigned nops_of(node u) {
  switch (u->op) {
  case IR_LOAD: return 2;
  case IR_STORE: return 3;
  default: return u->nsrc;
  }
}

static node operand(node u, unsigned i) {
  node index = u->op == IR_LOAD || u->op == IR_STORE ? u->src[0] : NULL;
  switch (u->op) {
  case IR_LOAD:
  case IR_STORE:
    if (i == 0) return index->src[1];
    if (i == 1) return index->nsrc > 2 ? index->src[2] : NULL;
    return u->src[1];
  default: return u->src[i];
  }
}

static bool is_value_op(node u) {
  enum ir_op_group g = ir_op_group((enum ir_op)u->op);
  return g == IR_G_ALU1 || g == IR_G_ALU2 || g == IR_G_ALU3;
}

static void step_node(lctx *c, frame *f) {
  node u = f->u;
  if (f->stage == 0) {
    if (u->op == IR_CONST || u->op == IR_DEFINE_VAR) {
      kitem *it = c->leaf[u->id];
      if (!it && (it = new_item(c, KI_LEAF, u, 0))) c->leaf[u->id] = it;
      c->ret = it;
      pop(c);
      return;
    }
    if (u->op == IR_RANGE) {
      for (unsigned d = c->plen; d-- > 1;)
        if (c->path[d]->loop->u == u) {
          c->ret = c->path[d]->loop;
          pop(c);
          return;
        }
      fail(c, u, "range used outside its loop");
      return;
    }
    kitem *vis = visible(c, u);
    if (vis) {
      c->ret = vis;
      pop(c);
      return;
    }
    kscope *T = target(c, c->open[u->id]);
    if (!T) {
      fail(c, u, "depends on a range that is not open here");
      return;
    }
    if (u->op == IR_REDUCE) {
      f->stage = 2;
      f->T = T;
      push(c, FR_GROUP, u);
      return;
    }
    enum kitem_kind kind = u->op == IR_LOAD ? KI_LOAD : u->op == IR_STORE ? KI_STORE : KI_EXPR;
    if (kind == KI_EXPR && !is_value_op(u)) {
      fail(c, u, "op cannot be rendered as a value");
      return;
    }
    if (!(f->it = new_item(c, kind, u, nops_of(u)))) return;
    f->T = T;
    f->stage = 1;
  }
  if (f->stage == 1) {
    kitem *it = f->it;
    if (f->waiting) {
      it->ops[f->i - 1] = c->ret;
      f->waiting = false;
    }
    while (f->i < it->nops) {
      node o = operand(u, f->i++);
      if (!o) continue;
      f->waiting = true;
      push(c, FR_NODE, o);
      return;
    }
    place(f->T, it);
    record(c, it);
    c->ret = it;
    pop(c);
    return;
  }
  /* stage 2: the REDUCE's group is done */
  if (!(c->ret = visible(c, u))) fail(c, u, "REDUCE was not emitted");
  else pop(c);
}

static int cmp_bit(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The group of X: X first, then same-key REDUCEs not yet visible that reach no chosen member, that
 * no chosen member reaches, and that read no accumulator still being computed (X itself cannot:
 * the member whose lanes asked for X would then reach a member of its own group). */
static group *make_group(lctx *c, node X, kscope *T) {
  group *g = calloc(1, sizeof *g);
  if (!g || !(g->mem = malloc((c->nreduces + 1) * sizeof *g->mem)) || !(g->acc = calloc(c->nreduces + 1, sizeof *g->acc))) {
    if (g) free(g->mem);
    free(g);
    oom(c);
    return NULL;
  }
  g->T = T;
  g->mem[g->nm++] = X;
  for (size_t i = 0; i < c->nreduces; i++) {
    node r = c->reduces[i];
    if (r == X || c->own[r->id] != c->own[X->id] || c->open[r->id] != c->open[X->id] || visible(c, r) ||
        reaches_busy(c, r))
      continue;
    bool ok = true;
    for (unsigned k = 0; k < g->nm && ok; k++) ok = !reaches(c, r, g->mem[k]) && !reaches(c, g->mem[k], r);
    if (ok) g->mem[g->nm++] = r;
  }
  int bits[KMAX_RANGES] = {0};
  for (unsigned k = 1; k < X->nsrc && g->nr < KMAX_RANGES; k++) bits[g->nr++] = c->bit[X->src[k]->id] - 1;
  qsort(bits, g->nr, sizeof *bits, cmp_bit);
  unsigned n = 0;
  for (unsigned k = 0; k < g->nr; k++)
    if (!k || bits[k] != bits[k - 1]) g->ranges[n++] = c->l->ranges[bits[k]];
  g->nr = n;
  return g;
}

static void free_group(group *g) {
  if (!g) return;
  free(g->mem);
  free(g->acc);
  free(g->saved);
  free(g->lanes);
  free(g);
}

static void step_group(lctx *c, frame *f) {
  group *g = f->g;
  if (f->stage == 0) {
    if (!(g = f->g = make_group(c, f->u, c->st[c->sp - 2].T))) return;
    f->stage = 1;
  }
  if (f->stage == 1) {
    if (f->waiting) {
      g->ext[f->i - 1] = c->ret;
      f->waiting = false;
    }
    if (f->i < g->nr) {
      node e = g->ranges[f->i++]->src[0];
      f->waiting = true;
      push(c, FR_NODE, e);
      return;
    }
    for (unsigned k = 0; k < g->nm; k++) {
      if (!(g->acc[k] = new_item(c, KI_ACC, g->mem[k], 0))) return;
      place(g->T, g->acc[k]);
      record(c, g->acc[k]);
      c->busy[g->mem[k]->id] = true;
    }
    g->nsaved = c->plen - g->T->depth - 1;
    if (g->nsaved && !(g->saved = malloc(g->nsaved * sizeof *g->saved))) {
      oom(c);
      return;
    }
    if (g->nsaved) memcpy(g->saved, c->path + g->T->depth + 1, g->nsaved * sizeof *g->saved);
    c->plen = g->T->depth + 1;
    kscope *s = g->T;
    for (unsigned k = 0; k < g->nr; k++)
      if (!(s = open_loop(c, s, g->ranges[k], g->ext[k]))) return;
    g->inner = s;
    f->stage = 2;
    f->i = 0;
  }
  if (f->stage == 2) {
    while (g->m < g->nm) {
      node value = g->mem[g->m]->src[0];
      unsigned nl = value->op == IR_VECTORIZE ? value->nsrc : 1;
      if (!bg_grow((void **)&g->lanes, &g->lanes_cap, nl, sizeof *g->lanes)) {
        oom(c);
        return;
      }
      if (f->waiting) {
        g->lanes[g->lane - 1] = c->ret;
        f->waiting = false;
      }
      if (g->lane < nl) {
        node lane = value->op == IR_VECTORIZE ? value->src[g->lane] : value;
        g->lane++;
        f->waiting = true;
        push(c, FR_NODE, lane);
        return;
      }
      kitem *up = new_item(c, KI_UPDATE, g->mem[g->m], nl + 1);
      if (!up) return;
      up->ops[0] = g->acc[g->m];
      memcpy(up->ops + 1, g->lanes, nl * sizeof *g->lanes);
      place(g->inner, up);
      g->m++;
      g->lane = 0;
    }
    for (kscope *s = g->inner; s != g->T; s = s->parent) close_loop(c, s);
    for (unsigned k = 0; k < g->nm; k++) c->busy[g->mem[k]->id] = false;
    for (unsigned k = 0; k < g->nsaved; k++) c->path[c->plen++] = g->saved[k];
    free_group(g);
    f->g = NULL;
    pop(c);
  }
}

static kitem *emit(lctx *c, node u) {
  size_t base = c->sp;
  if (!push(c, FR_NODE, u)) return NULL;
  while (c->sp > base && !c->err) {
    frame *f = &c->st[c->sp - 1];
    if (f->kind == FR_NODE) step_node(c, f);
    else step_group(c, f);
  }
  return c->err ? NULL : c->ret;
}

int klinearize(ir_ctx *ctx, const ir_node *sink, klin *l) {
  memset(l, 0, sizeof *l);
  lctx c = {.ctx = ctx, .l = l, .nn = ir_node_count(ctx)};
  size_t nn = c.nn + 1;
  if (!(c.bit = calloc(nn, sizeof *c.bit)) || !(c.open = calloc(nn, sizeof *c.open)) ||
      !(c.own = calloc(nn, sizeof *c.own)) || !(c.has_red = calloc(nn, sizeof *c.has_red)) ||
      !(c.busy = calloc(nn, sizeof *c.busy)) ||
      !(c.inst = calloc(nn, sizeof *c.inst)) || !(c.leaf = calloc(nn, sizeof *c.leaf)) ||
      !(c.mark = calloc(nn, sizeof *c.mark))) {
    oom(&c);
    goto done;
  }
  if (analyse(&c, sink)) goto done;
  if (!(l->root = new_scope(&c, NULL, NULL)) || !path_push(&c, l->root)) goto done;
  kscope *s = l->root;
  for (unsigned b = 0; b < l->nranges; b++) {
    node r = l->ranges[b];
    if (kr_kind(r) != KR_LOOP) continue;
    kitem *e = emit(&c, r->src[0]);
    if (!e || !(s = open_loop(&c, s, r, e))) goto done;
  }
  for (unsigned i = 0; i < sink->nsrc; i++)
    if (!emit(&c, sink->src[i])) goto done;
done:
  for (size_t i = 0; i < c.sp; i++)
    if (c.st[i].kind == FR_GROUP) free_group(c.st[i].g);
  free(c.bit);
  free(c.open);
  free(c.own);
  free(c.has_red);
  free(c.busy);
  free(c.inst);
  free(c.leaf);
  free(c.mark);
  free(c.reduces);
  free(c.dfs);
  free(c.path);
  free(c.st);
  return c.err;
}

/* ---- CPU grid ---- */

static uint64_t scope_work(const kscope *s) {
  uint64_t w = 0;
  for (const kitem *it = s->first; it; it = it->next) {
    w += s->iters;
    if (it->kind == KI_LOOP && it->body) w += scope_work(it->body);
    if (w > UINT64_MAX / 4) return w;   /* only compared with small bounds */
  }
  return w;
}

void klin_plan_cpu_grid(klin *l, uint32_t gsz[3]) {
  gsz[0] = gsz[1] = gsz[2] = 1;
  l->grid_loop = NULL;
  l->grid_chunk = l->grid_extent = 0;
  kitem *loop = NULL;
  for (kitem *it = l->root->first; it; it = it->next) {
    if (it->kind == KI_STORE || it->kind == KI_ACC || it->kind == KI_UPDATE) return;   /* would run once per group */
    if (it->kind != KI_LOOP) continue;
    if (loop) return;   /* two loop nests at the root: one call runs both */
    loop = it;
  }
  int64_t e;
  if (!loop || kr_kind(loop->u) != KR_LOOP || !ir_is_const(loop->u->src[0], &e) || e < 2 || e > INT32_MAX) return;
  uint64_t groups = scope_work(l->root) / KLIN_MIN_WORK;
  if (groups > KLIN_MAX_GROUPS) groups = KLIN_MAX_GROUPS;
  if (groups > (uint64_t)e) groups = (uint64_t)e;
  if (groups < 2) return;
  int64_t chunk = (e + (int64_t)groups - 1) / (int64_t)groups;
  l->grid_loop = loop;
  l->grid_chunk = chunk;
  l->grid_extent = e;
  gsz[0] = (uint32_t)((e + chunk - 1) / chunk);
}
