/* ir/ir_rewrite.c: the fixed-point rewrite engine and simultaneous substitution.
 *
 * ir_rewrite computes rw(u) for every node with an explicit stack: sources first (memoised by id),
 * then u is rebuilt on the rewritten sources and offered to the rules; a replacement r is itself
 * rewritten completely (sources, then rules again), so the result is a fixed point of every rule.
 * Each frame carries the number of rule firings on its path from the input graph; past the cap the
 * rules evidently never settle. A node met again while it is still being rewritten means the rules
 * cycle (stateless rules would repeat forever), which is also reported rather than looped on. */
#include <stdlib.h>

#include "ir/ir_internal.h"

enum { REWRITE_CAP = 1000 };
enum { ST_NEW = 0, ST_BUSY = 1, ST_DONE = 2 };       /* map aux: rewrite state of a node */
enum { F_SRCS, F_RULES, F_WAIT };                    /* frame stages */

struct ir_rewriter {
  ir_ctx *ctx;
  void *user;
};

ir_ctx *ir_rw_ctx(ir_rewriter *rw) { return rw->ctx; }
void *ir_rw_user(ir_rewriter *rw) { return rw->user; }

typedef struct frame {
  const ir_node *u;      /* node whose rw() this frame computes */
  const ir_node *n;      /* u rebuilt on rewritten sources */
  const ir_node *r;      /* replacement being rewritten (F_WAIT) */
  const char *set;       /* rule set that fired last on this path */
  uint32_t i;            /* next source */
  uint32_t count;        /* rule firings on the path from the input graph */
  int stage;
} frame;

typedef struct engine {
  ir_ctx *ctx;
  ir_map memo;           /* id -> (state, result) */
  frame *st;
  size_t sp, cap;
  const ir_node **tmp;   /* rebuilt source list */
  size_t tmp_cap;
} engine;

static int state_of(const engine *e, const ir_node *n, const ir_node **res) {
  const ir_map_ent *m = ir_map_get(&e->memo, n->id);
  if (!m) return ST_NEW;
  if (res) *res = m->ptr;
  return (int)m->aux;
}

static bool set_state(engine *e, const ir_node *n, int state, const ir_node *res) {
  ir_map_ent *m = ir_map_put(&e->memo, n->id);
  if (!m) return false;
  m->aux = (uint32_t)state;
  m->ptr = res;
  return true;
}

static bool push(engine *e, const ir_node *u, uint32_t count, const char *set) {
  if (!ir_grow((void **)&e->st, &e->cap, e->sp + 1, sizeof *e->st) || !set_state(e, u, ST_BUSY, NULL))
    return false;
  e->st[e->sp++] = (frame){.u = u, .count = count, .set = set, .stage = F_SRCS};
  return true;
}

static const ir_node *apply_rules(ir_rewriter *rw, const ir_node *n, const ir_rule_set *const *sets,
                                  size_t nsets, const char **set) {
  for (size_t s = 0; s < nsets; s++)
    for (size_t k = 0; k < sets[s]->n; k++) {
      const ir_node *r = sets[s]->rules[k](rw, n);
      if (r && r != n) {
        *set = sets[s]->name;
        return r;
      }
    }
  return NULL;
}

/* Rebuilds f->u on its rewritten sources; returns NULL on OOM. */
static const ir_node *rebuild(engine *e, const ir_node *u) {
  bool changed = false;
  if (!ir_grow((void **)&e->tmp, &e->tmp_cap, u->nsrc + 1u, sizeof *e->tmp)) return NULL;
  for (unsigned i = 0; i < u->nsrc; i++) {
    const ir_node *res = u->src[i];
    state_of(e, u->src[i], &res);
    e->tmp[i] = res;
    changed |= res != u->src[i];
  }
  return changed ? ir_intern(e->ctx, (enum ir_op)u->op, u->dt, u->arg, u->nsrc, e->tmp) : u;
}

static void cycle_error(ir_ctx *ctx, const char *set, const ir_node *n) {
  ir_set_error(ctx, "ir_rewrite: rule set '%s' cycles: rewriting a %s node (id %u) leads back to a node still "
               "being rewritten", set ? set : "?", ir_op_name((enum ir_op)n->op), n->id);
}

const ir_node *ir_rewrite(ir_ctx *ctx, const ir_node *root, const ir_rule_set *const *sets, size_t nsets,
                          void *user) {
  if (!root) return NULL;
  engine e = {.ctx = ctx};
  ir_rewriter rw = {ctx, user};
  const ir_node *out = NULL;
  if (!push(&e, root, 0, NULL)) goto oom;
  while (e.sp) {
    frame *f = &e.st[e.sp - 1];
    const ir_node *res = NULL;
    if (f->stage == F_SRCS) {
      if (f->i < f->u->nsrc) {
        const ir_node *s = f->u->src[f->i];
        int st = state_of(&e, s, NULL);
        if (st == ST_DONE) {
          f->i++;
        } else if (st == ST_BUSY) {
          cycle_error(ctx, f->set, s);
          goto fail;
        } else if (!push(&e, s, f->count, f->set)) {
          goto oom;
        }
        continue;
      }
      f->n = rebuild(&e, f->u);
      if (!f->n) goto fail;
      if (f->n != f->u) {
        int st = state_of(&e, f->n, &res);
        if (st == ST_BUSY) {
          cycle_error(ctx, f->set, f->n);
          goto fail;
        }
        if (st == ST_DONE) goto finish;
        if (!set_state(&e, f->n, ST_BUSY, NULL)) goto oom;
      }
      f->stage = F_RULES;
    }
    if (f->stage == F_RULES) {
      const char *set = NULL;
      const ir_node *r = apply_rules(&rw, f->n, sets, nsets, &set);
      if (!r) {
        res = f->n;
        goto finish;
      }
      int st = state_of(&e, r, &res);
      if (st == ST_DONE) goto finish;
      if (st == ST_BUSY) {
        cycle_error(ctx, set, r);
        goto fail;
      }
      if (f->count + 1 > REWRITE_CAP) {
        ir_set_error(ctx, "ir_rewrite: rule set '%s' rewrote a %s node more than %d times without reaching a "
                     "fixed point", set, ir_op_name((enum ir_op)f->n->op), REWRITE_CAP);
        goto fail;
      }
      f->r = r;
      f->set = set;
      f->stage = F_WAIT;
      if (!push(&e, r, f->count + 1, set)) goto oom;
      continue;
    }
    state_of(&e, f->r, &res); /* F_WAIT: the replacement is done */
  finish:
    if (!set_state(&e, f->u, ST_DONE, res)) goto oom;
    if (f->n && f->n != f->u && !set_state(&e, f->n, ST_DONE, res)) goto oom;
    e.sp--;
  }
  state_of(&e, root, &out);
  goto done;
oom:
  ir_set_error(ctx, "ir_rewrite: out of memory");
fail:
  out = NULL;
done:
  ir_map_free(&e.memo);
  free(e.st);
  free(e.tmp);
  return out;
}

/* Simultaneous, single pass: nodes equal to from[i] become to[i]; the to[] nodes are not walked. */
const ir_node *ir_substitute(ir_ctx *ctx, const ir_node *root, const ir_node *const *from,
                             const ir_node *const *to, size_t n) {
  if (!root) return NULL;
  ir_map memo = {0};
  ir_walk_frame *st = NULL;
  const ir_node **tmp = NULL, *out = NULL;
  size_t cap = 0, sp = 0, tcap = 0;
  for (size_t i = 0; i < n; i++) {
    ir_map_ent *m = from[i] && to[i] ? ir_map_put(&memo, from[i]->id) : NULL;
    if (!m) {
      if (from[i] && to[i]) goto fail;
      ir_set_error(ctx, "ir_substitute: NULL entry %zu", i);
      goto done;
    }
    m->ptr = to[i];
  }
  if (ir_map_get(&memo, root->id)) {
    out = ir_map_get(&memo, root->id)->ptr;
    goto done;
  }
  if (!ir_grow((void **)&st, &cap, 1, sizeof *st)) goto fail;
  st[sp++] = (ir_walk_frame){root, 0};
  while (sp) {
    ir_walk_frame *f = &st[sp - 1];
    if (f->i < f->n->nsrc) {
      const ir_node *s = f->n->src[f->i++];
      if (ir_map_get(&memo, s->id)) continue;
      if (!ir_grow((void **)&st, &cap, sp + 1, sizeof *st)) goto fail;
      st[sp++] = (ir_walk_frame){s, 0};
      continue;
    }
    const ir_node *u = f->n, *res = u;
    bool changed = false;
    if (!ir_grow((void **)&tmp, &tcap, u->nsrc + 1u, sizeof *tmp)) goto fail;
    for (unsigned i = 0; i < u->nsrc; i++) {
      tmp[i] = ir_map_get(&memo, u->src[i]->id)->ptr;
      changed |= tmp[i] != u->src[i];
    }
    if (changed && !(res = ir_intern(ctx, (enum ir_op)u->op, u->dt, u->arg, u->nsrc, tmp))) goto done;
    ir_map_ent *m = ir_map_put(&memo, u->id);
    if (!m) goto fail;
    m->ptr = res;
    sp--;
  }
  out = ir_map_get(&memo, root->id)->ptr;
  goto done;
fail:
  ir_set_error(ctx, "ir_substitute: out of memory");
done:
  ir_map_free(&memo);
  free(st);
  free(tmp);
  return out;
}
