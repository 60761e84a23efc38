/* ir/ir_walk.c: iterative graph walks (toposort, variable collection). Explicit stacks, because
 * index expressions can be thousands of nodes deep. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_internal.h"

/* Starts a walk generation: a node is visited iff mark[id] == gen, so marks never need clearing. */
static bool begin_walk(ir_ctx *ctx) {
  if (!ir_grow((void **)&ctx->mark, &ctx->mark_cap, ctx->nnodes, sizeof *ctx->mark)) return false;
  if (++ctx->gen == 0) {
    memset(ctx->mark, 0, ctx->mark_cap * sizeof *ctx->mark);
    ctx->gen = 1;
  }
  return true;
}

size_t ir_walk(ir_ctx *ctx, const ir_node *root, const ir_node ***buf, size_t *cap) {
  if (!root) return 0;
  if (!begin_walk(ctx)) goto oom;
  size_t n = 0, sp = 0;
  const uint32_t gen = ctx->gen;
  if (!ir_grow((void **)&ctx->wstack, &ctx->wstack_cap, 1, sizeof *ctx->wstack)) goto oom;
  ctx->mark[root->id] = gen;
  ctx->wstack[sp++] = (ir_walk_frame){root, 0};
  while (sp) {
    ir_walk_frame *f = &ctx->wstack[sp - 1];
    if (f->i < f->n->nsrc) {
      const ir_node *s = f->n->src[f->i++];
      if (ctx->mark[s->id] == gen) continue;
      ctx->mark[s->id] = gen;
      if (!ir_grow((void **)&ctx->wstack, &ctx->wstack_cap, sp + 1, sizeof *ctx->wstack)) goto oom;
      ctx->wstack[sp++] = (ir_walk_frame){s, 0};
      continue;
    }
    if (!ir_grow((void **)buf, cap, n + 1, sizeof **buf)) goto oom;
    (*buf)[n++] = f->n;
    sp--;
  }
  return n;
oom:
  ir_set_error(ctx, "ir: out of memory in graph walk");
  return (size_t)-1;
}

size_t ir_toposort(ir_ctx *ctx, const ir_node *root, const ir_node *const **out) {
  size_t n = ir_walk(ctx, root, &ctx->topo, &ctx->topo_cap);
  if (n == (size_t)-1) n = 0;
  *out = ctx->topo;
  return n;
}

size_t ir_vars(ir_ctx *ctx, const ir_node *root, const ir_node **out, size_t max) {
  /* a private buffer so a caller's ir_toposort result stays valid */
  const ir_node **buf = NULL;
  size_t cap = 0, n = ir_walk(ctx, root, &buf, &cap), count = 0;
  if (n == (size_t)-1) n = 0;
  /* postorder emits each leaf right when it is first reached, so this is first-visit order */
  for (size_t i = 0; i < n; i++) {
    if (buf[i]->op != IR_DEFINE_VAR) continue;
    if (count < max && out) out[count] = buf[i];
    count++;
  }
  free(buf);
  return count;
}
