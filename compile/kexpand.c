/* compile/kexpand.c: expansion of UNROLL and UPCAST ranges into copies of their subgraph.
 *
 * Every copy substitutes a constant for the inner range and is re-simplified, so index math folds
 * (r_outer*4 + 2 stays as such, padding gates that became constant disappear). No copy changes
 * an operation's operands or order: a store copy computes exactly what the original loop computed
 * at that iteration, and an unrolled REDUCE combines its lanes into the accumulator in iteration
 * order. Hence results are identical to the unexpanded kernel, floats included. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/kernel_internal.h"

typedef const ir_node *node;

enum { MAX_LANES = 256 };

static node r_unroll(ir_rewriter *rw, node u) {
  if (u->op != IR_REDUCE) return NULL;
  unsigned at = 1;
  while (at < u->nsrc && kr_kind(u->src[at]) != KR_UNROLL) at++;
  if (at == u->nsrc) return NULL;
  ir_ctx *ctx = ir_rw_ctx(rw);
  node w = u->src[at], value = u->src[0], lanes[MAX_LANES];
  int64_t f;
  unsigned n = 0;
  if (!ir_is_const(w->src[0], &f) || f < 1 || f > MAX_LANES) return NULL;
  for (int64_t c = 0; c < f; c++) {
    node k = ir_const_int(ctx, w->dt, c);
    node x = k ? ir_substitute(ctx, value, &w, &k, 1) : NULL;
    if (!x || !(x = ksimplify(ctx, x))) return NULL;
    if (x->op == IR_VECTORIZE) {
      if (n + x->nsrc > MAX_LANES) return NULL;
      memcpy(lanes + n, x->src, x->nsrc * sizeof *lanes);
      n += x->nsrc;
    } else {
      if (n == MAX_LANES) return NULL;
      lanes[n++] = x;
    }
  }
  ir_arg none = {.i = 0};
  node src[KMAX_RANGES + 2];
  unsigned ns = 0;
  src[ns++] = ir_intern(ctx, IR_VECTORIZE, IR_DT_VEC(IR_DT_SCALAR(u->dt), n), none, n, lanes);
  if (!src[0]) return NULL;
  for (unsigned i = 1; i < u->nsrc && ns < KMAX_RANGES + 2; i++)
    if (i != at) src[ns++] = u->src[i];
  return ir_intern(ctx, IR_REDUCE, u->dt, u->arg, ns, src);
}

/* Every value of the upcast ranges (lexicographic, last range fastest) applied to the whole sink;
 * the stores of all copies, each once, in that order. */
static node expand_upcast(ir_ctx *ctx, node sink) {
  const ir_node *rs[KMAX_RANGES + 8], *ups[KMAX_RANGES];
  int nr = kcollect_ranges(ctx, sink, rs, KMAX_RANGES + 8), nu = 0;
  if (nr < 0) return NULL;
  int64_t ext[KMAX_RANGES], total = 1;
  for (int i = 0; i < nr; i++)
    if (kr_kind(rs[i]) == KR_UPCAST) {
      if (!ir_is_const(rs[i]->src[0], &ext[nu]) || ext[nu] < 1) {
        bg_error(BG_EINVAL, "kernel: upcast range r%lld has no constant extent", (long long)kr_axis(rs[i]));
        return NULL;
      }
      total *= ext[nu];
      ups[nu++] = rs[i];
    }
  if (!nu) return sink;
  size_t cap = (size_t)total * sink->nsrc + 1, n = 0;
  node *stores = malloc(cap * sizeof *stores), out = NULL;
  node consts[KMAX_RANGES];
  if (!stores) {
    bg_error(BG_ENOMEM, "kernel: out of memory expanding upcasts");
    return NULL;
  }
  for (int64_t combo = 0; combo < total; combo++) {
    int64_t rest = combo;
    for (int i = nu - 1; i >= 0; i--) {
      if (!(consts[i] = ir_const_int(ctx, IR_DT_INDEX, rest % ext[i]))) goto fail;
      rest /= ext[i];
    }
    node s = ir_substitute(ctx, sink, ups, consts, (size_t)nu);
    if (!s || !(s = ksimplify(ctx, s))) goto fail;
    for (unsigned i = 0; i < s->nsrc; i++) {
      size_t k = 0;
      while (k < n && stores[k] != s->src[i]) k++;
      if (k == n) stores[n++] = s->src[i];
    }
  }
  out = ir_intern(ctx, IR_SINK, sink->dt, sink->arg, (unsigned)n, stores);
  if (!out) goto fail;
  free(stores);
  return out;
fail:
  bg_error(BG_EINVAL, "kernel: expanding upcasts: %s", ir_error(ctx));
  free(stores);
  return NULL;
}

const ir_node *kexpand(ir_ctx *ctx, const ir_node *sink) {
  static const ir_rule rules[] = {r_unroll};
  static const ir_rule_set set = {"kunroll", 1, rules};
  const ir_rule_set *sets[1] = {&set};
  const ir_node *s = ir_rewrite(ctx, sink, sets, 1, NULL);
  if (!s) {
    bg_error(BG_EINVAL, "kernel: expanding unrolled reduces: %s", ir_error(ctx));
    return NULL;
  }
  return expand_upcast(ctx, s);
}
