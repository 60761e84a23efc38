/* compile/ksimplify.c: symbolic simplification of a kernel with the gated-INDEX rules.
 *
 * INDEX(buf, idx, valid): valid is split into its AND clauses. A clause bounding a range or
 * variable (v + d < c, c < v + d, and their negations written as CMPNE/CMPEQ/XOR with a bool
 * constant) narrows v's bounds: idx is simplified with v replaced by a proxy variable carrying
 * those bounds, then v is put back (tinygrad's uop_given_valid). That is sound because idx is only
 * dereferenced where valid holds. A valid that is always true disappears; clauses that contradict
 * each other make it false. A LOAD through a never-valid INDEX is 0; such a STORE is dropped.
 * Two rewrites: the symbolic fixed point with the constant-gate rules, then the index-given-valid
 * rule alone (see r_index_given_valid). */
#include <stdio.h>
#include <stdlib.h>

#include "compile/kernel_internal.h"

typedef const ir_node *node;

enum { MAX_CLAUSES = 16, MAX_BOUNDED = 8 };

static bool kconst(node u, int64_t *v) { return ir_is_const(u, v); }

static bool is_base(node u) { return u->op == IR_RANGE || u->op == IR_DEFINE_VAR; }

/* X = v or v + d with a constant d. */
static bool base_offset(node x, node *v, int64_t *d) {
  if (is_base(x)) {
    *v = x;
    *d = 0;
    return true;
  }
  if (x->op == IR_ADD && is_base(x->src[0]) && kconst(x->src[1], d)) {
    *v = x->src[0];
    return true;
  }
  return false;
}

/* A clause c as bounds lo <= v <= hi (only one side tightened). */
static bool clause_bounds(node c, node *v, int64_t *lo, int64_t *hi) {
  bool neg = false;
  int64_t k, d;
  if ((c->op == IR_CMPNE || c->op == IR_XOR) && kconst(c->src[1], &k) && k == 1 && c->src[0]->op == IR_CMPLT) {
    neg = true;
    c = c->src[0];
  } else if (c->op == IR_CMPEQ && kconst(c->src[1], &k) && k == 0 && c->src[0]->op == IR_CMPLT) {
    neg = true;
    c = c->src[0];
  }
  if (c->op != IR_CMPLT) return false;
  *lo = INT64_MIN;
  *hi = INT64_MAX;
  if (kconst(c->src[1], &k) && base_offset(c->src[0], v, &d)) {
    /* v + d < k   <=>  v <= k - d - 1;   negated: v >= k - d */
    if (__builtin_sub_overflow(k, d, &k)) return false;
    if (neg) *lo = k;
    else if (k == INT64_MIN) return false;
    else *hi = k - 1;
    return true;
  }
  if (kconst(c->src[0], &k) && base_offset(c->src[1], v, &d)) {
    /* k < v + d   <=>  v >= k - d + 1;   negated: v <= k - d */
    if (__builtin_sub_overflow(k, d, &k)) return false;
    if (neg) *hi = k;
    else if (k == INT64_MAX) return false;
    else *lo = k + 1;
    return true;
  }
  return false;
}

static int split_and(node valid, node *out, int max) {
  node stack[MAX_CLAUSES * 2];
  int sp = 0, n = 0;
  stack[sp++] = valid;
  while (sp) {
    node c = stack[--sp];
    if (c->op == IR_AND && IR_DT_SCALAR(c->dt) == IR_DT_BOOL && sp + 2 <= MAX_CLAUSES * 2) {
      stack[sp++] = c->src[1];
      stack[sp++] = c->src[0];
    } else if (n < max) {
      out[n++] = c;
    } else {
      return -1;
    }
  }
  return n;
}

/* idx simplified under the bounds the clauses put on ranges and variables; sets *never when two
 * clauses contradict. Returns idx unchanged when nothing applies, NULL on failure. */
static node idx_given_valid(ir_ctx *ctx, node idx, node valid, bool *never) {
  node clauses[MAX_CLAUSES], vars[MAX_BOUNDED];
  int64_t lo[MAX_BOUNDED], hi[MAX_BOUNDED];
  int nc = split_and(valid, clauses, MAX_CLAUSES), nv = 0;
  *never = false;
  if (nc < 0) return idx;
  for (int i = 0; i < nc; i++) {
    node v;
    int64_t l, h;
    if (!clause_bounds(clauses[i], &v, &l, &h)) continue;
    int k = 0;
    while (k < nv && vars[k] != v) k++;
    if (k == nv) {
      if (nv == MAX_BOUNDED) continue;
      vars[nv] = v;
      lo[nv] = ir_vmin(ctx, v);
      hi[nv] = ir_vmax(ctx, v);
      nv++;
    }
    if (l > lo[k]) lo[k] = l;
    if (h < hi[k]) hi[k] = h;
  }
  node proxy[MAX_BOUNDED];
  int np = 0;
  for (int k = 0; k < nv; k++) {
    if (lo[k] > hi[k]) {
      *never = true;
      return idx;
    }
    if (lo[k] == ir_vmin(ctx, vars[k]) && hi[k] == ir_vmax(ctx, vars[k])) continue;
    char name[48];
    snprintf(name, sizeof name, "kgate.%u", vars[k]->id);
    vars[np] = vars[k];
    if (!(proxy[np] = ir_var(ctx, vars[k]->dt, name, lo[k], hi[k]))) return NULL;
    np++;
  }
  if (!np) return idx;
  node x = ir_substitute(ctx, idx, vars, proxy, (size_t)np);
  if (!x || !(x = ir_simplify(ctx, x))) return NULL;
  return ir_substitute(ctx, x, proxy, vars, (size_t)np);
}

/* INDEX with a constant valid: true drops it (false is left to the LOAD/SINK rules). */
static node r_index_const_valid(ir_rewriter *rw, node u) {
  int64_t k;
  if (u->op != IR_INDEX || u->nsrc != 3 || !kconst(u->src[2], &k) || !k) return NULL;
  return ir_intern(ir_rw_ctx(rw), IR_INDEX, u->dt, u->arg, 2, u->src);
}

/* The index simplified under its valid's bounds. Runs as a pass of its own after the symbolic
 * fixed point: the index put back in terms of the ranges is not in the symbolic rules' canonical
 * operand order, and re-canonicalizing it inside the same rewrite would undo it forever. */
static node r_index_given_valid(ir_rewriter *rw, node u) {
  int64_t k;
  if (u->op != IR_INDEX || u->nsrc != 3 || kconst(u->src[2], &k)) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node idx = u->src[1], valid = u->src[2];
  bool never;
  node nidx = idx_given_valid(ctx, idx, valid, &never);
  if (!nidx) return NULL;
  if (never) valid = ir_const_bool(ctx, false);
  if (nidx == idx && valid == u->src[2]) return NULL;
  node src[3] = {u->src[0], nidx, valid};
  return ir_intern(ctx, IR_INDEX, u->dt, u->arg, 3, src);
}

static bool never_valid(node index) {
  int64_t k;
  return index->op == IR_INDEX && index->nsrc == 3 && kconst(index->src[2], &k) && !k;
}

static node r_load_never(ir_rewriter *rw, node u) {
  if (u->op != IR_LOAD || !never_valid(u->src[0])) return NULL;
  return ir_const_int(ir_rw_ctx(rw), u->dt, 0);
}

static node r_sink_never(ir_rewriter *rw, node u) {
  if (u->op != IR_SINK) return NULL;
  unsigned n = 0;
  for (unsigned i = 0; i < u->nsrc; i++) n += u->src[i]->op == IR_STORE && never_valid(u->src[i]->src[0]);
  if (!n) return NULL;
  node *keep = malloc((u->nsrc - n + 1) * sizeof *keep);
  if (!keep) return NULL;
  n = 0;
  for (unsigned i = 0; i < u->nsrc; i++)
    if (!(u->src[i]->op == IR_STORE && never_valid(u->src[i]->src[0]))) keep[n++] = u->src[i];
  node r = ir_intern(ir_rw_ctx(rw), IR_SINK, u->dt, u->arg, n, keep);
  free(keep);
  return r;
}

static const ir_rule gate_rules[] = {r_index_const_valid, r_load_never, r_sink_never};
static const ir_rule_set kgate_rules = {"kgate", sizeof gate_rules / sizeof gate_rules[0], gate_rules};
static const ir_rule given_rules[] = {r_index_given_valid, r_load_never, r_sink_never};
static const ir_rule_set given_set = {"kgate-valid", sizeof given_rules / sizeof given_rules[0], given_rules};

const ir_node *ksimplify(ir_ctx *ctx, const ir_node *root) {
  const ir_rule_set *sets[2] = {&ir_symbolic_rules, &kgate_rules}, *given[1] = {&given_set};
  const ir_node *s = ir_rewrite(ctx, root, sets, 2, NULL);
  return s ? ir_rewrite(ctx, s, given, 1, NULL) : NULL;
}
