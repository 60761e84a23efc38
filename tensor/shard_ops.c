/* tensor/shard_ops.c: ops on sharded tensors, each run per shard on its own device (tinygrad/multi.py: elementwise
 * ops on matching shards, a replicated operand sliced to the other's chunks, reductions over the sharded axis ended
 * by an all-reduce). */
#include <stdio.h>
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"

/* Both operands of one mesh; false with "op: ... of another mesh" latched on a's mesh. */
static bool same_mesh(const char *op, const bg_sharded *a, const bg_sharded *b) {
  if (a->m == b->m) return true;
  char sa[200], sb[200];
  sh_str(a, sa, sizeof sa);
  sh_str(b, sb, sizeof sb);
  sh_fail(a->m, "%s: operands of different meshes: %s and %s (of another mesh)", op, sa, sb);
  return false;
}

static bg_sharded *dead_of(const bg_sharded *a, const bg_sharded *b) {
  if (a && a->dead) return a->m->has_err ? &a->m->err_s : (bg_sharded *)a;
  return b ? b->m->has_err ? &b->m->err_s : (bg_sharded *)b : NULL;
}

bg_sharded *bg_sh_map(bg_sh_fn1 f, bg_sharded *a) {
  if (!a) {
    bg_error(BG_EINVAL, "sh_map: sharded tensor argument is NULL");
    return NULL;
  }
  if (a->dead) return dead_of(a, NULL);
  if (!f) return sh_fail(a->m, "sh_map: function is NULL");
  bg_tensor *parts[BG_MESH_MAX];
  for (unsigned i = 0; i < a->m->n; i++) parts[i] = f(a->parts[i]);
  return sh_make(a->m, "sh_map", parts, a->axis);
}

/* b (replicated) cut to a's chunks along the axis that lines up with a's (right-aligned, as broadcasting); a size-1 or
 * missing axis is broadcast and stays whole. */
static bg_tensor *slice_to(const bg_sharded *a, const bg_sharded *b, unsigned i) {
  int bax = a->axis - (int)a->ndim + (int)b->ndim;
  bg_tensor *p = b->parts[i];
  if (bax < 0 || b->shape[bax] == 1) return p;
  int64_t start, len, bounds[BG_MAX_DIMS][2];
  sh_chunk(a, i, &start, &len);
  for (unsigned d = 0; d < b->ndim; d++) bounds[d][0] = 0, bounds[d][1] = b->shape[d];
  bounds[bax][0] = start;
  bounds[bax][1] = start + len;
  return bg_tn_shrink(p, bounds);
}

bg_sharded *bg_sh_map2(bg_sh_fn2 f, bg_sharded *a, bg_sharded *b) {
  if (!a || !b) {
    bg_error(BG_EINVAL, "sh_map2: sharded tensor argument '%s' is NULL", a ? "b" : "a");
    return a ? sh_fail(a->m, "sh_map2: sharded tensor argument 'b' is NULL") : b ? sh_fail(b->m, "sh_map2: sharded tensor argument 'a' is NULL") : NULL;
  }
  if (a->dead || b->dead) return dead_of(a, b);
  if (!same_mesh("sh_map2", a, b)) return &a->m->err_s;
  bg_mesh *m = a->m;
  if (!f) return sh_fail(m, "sh_map2: function is NULL");
  unsigned nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  bool ra = a->axis == BG_SHARD_REPLICATED, rb = b->axis == BG_SHARD_REPLICATED;
  /* the axes of the broadcast result */
  int oa = ra ? BG_SHARD_REPLICATED : a->axis + (int)(nd - a->ndim), ob = rb ? BG_SHARD_REPLICATED : b->axis + (int)(nd - b->ndim);
  char sa[200], sb[200];
  sh_str(a, sa, sizeof sa);
  sh_str(b, sb, sizeof sb);
  if (!ra && !rb && oa != ob) return sh_fail(m, "sh_map2: %s and %s are split along different axes", sa, sb);
  bg_tensor *parts[BG_MESH_MAX];
  for (unsigned i = 0; i < m->n; i++) {
    bg_tensor *pa = a->parts[i], *pb = b->parts[i];
    if (!ra && !rb) {
      int64_t s1, l1, s2, l2;
      sh_chunk(a, i, &s1, &l1);
      sh_chunk(b, i, &s2, &l2);
      if (l1 != l2)
        return sh_fail(m, "sh_map2: %s and %s: device %u holds %lld and %lld elements along the axis; expected equal chunks",
                       sa, sb, i, (long long)l1, (long long)l2);
    } else if (ra && !rb) {
      pa = slice_to(b, a, i);
    } else if (!ra && rb) {
      pb = slice_to(a, b, i);
    }
    parts[i] = f(pa, pb);
  }
  return sh_make(m, "sh_map2", parts, ra ? ob : oa);
}

bg_sharded *bg_sh_allreduce(bg_sharded *a) {
  if (!a) {
    bg_error(BG_EINVAL, "sh_allreduce: sharded tensor argument is NULL");
    return NULL;
  }
  if (a->dead) return dead_of(a, NULL);
  bg_tensor *out[BG_MESH_MAX];
  if (t_allreduce(a->m, a->parts, out) < 0) return &a->m->err_s;
  return sh_make(a->m, "sh_allreduce", out, BG_SHARD_REPLICATED);
}

bg_sharded *bg_sh_matmul(bg_sharded *a, bg_sharded *b) {
  if (!a || !b) {
    bg_error(BG_EINVAL, "sh_matmul: sharded tensor argument '%s' is NULL", a ? "b" : "a");
    return a ? sh_fail(a->m, "sh_matmul: sharded tensor argument 'b' is NULL") : b ? sh_fail(b->m, "sh_matmul: sharded tensor argument 'a' is NULL") : NULL;
  }
  if (a->dead || b->dead) return dead_of(a, b);
  if (!same_mesh("sh_matmul", a, b)) return &a->m->err_s;
  bg_mesh *m = a->m;
  char sa[200], sb[200];
  sh_str(a, sa, sizeof sa);
  sh_str(b, sb, sizeof sb);
  if (a->ndim < 2 || b->ndim != 2) return sh_fail(m, "sh_matmul: %s @ %s: expected a (..., m, k) and b (k, n)", sa, sb);
  bool ra = a->axis == BG_SHARD_REPLICATED, rb = b->axis == BG_SHARD_REPLICATED;
  int kax = (int)a->ndim - 1;
  bg_tensor *parts[BG_MESH_MAX];
  int axis;
  bool reduce = false;
  if (ra && rb) axis = BG_SHARD_REPLICATED;
  else if (!ra && a->axis != kax && rb) axis = a->axis;      /* rows (or batch) per device, b whole */
  else if (ra && b->axis == 1) axis = kax;                    /* columns of b per device, a whole */
  else if (!ra && a->axis == kax && b->axis == 0) {           /* k split: partial products, then all-reduce */
    for (unsigned i = 0; i < m->n; i++)
      if (a->parts[i]->shape[kax] != b->parts[i]->shape[0])
        return sh_fail(m, "sh_matmul: %s @ %s: device %u holds %lld of k in a and %lld in b; expected equal chunks", sa, sb, i,
                       (long long)a->parts[i]->shape[kax], (long long)b->parts[i]->shape[0]);
    axis = BG_SHARD_REPLICATED;
    reduce = true;
  } else {
    return sh_fail(m, "sh_matmul: %s @ %s: unsupported layout; expected a split along a non-k axis with b replicated, a "
                      "split along k with b split along its rows, or a replicated with b split along n", sa, sb);
  }
  for (unsigned i = 0; i < m->n; i++) parts[i] = bg_tn_matmul(a->parts[i], b->parts[i]);
  if (reduce) {
    for (unsigned i = 0; i < m->n; i++)
      if (t_dead(parts[i])) return sh_make(m, "sh_matmul", parts, axis); /* latches the context's message */
    bg_tensor *out[BG_MESH_MAX];
    if (t_allreduce(m, parts, out) < 0) return &m->err_s;
    return sh_make(m, "sh_matmul", out, axis);
  }
  return sh_make(m, "sh_matmul", parts, axis);
}

bg_sharded *bg_sh_sum(bg_sharded *a, uint32_t axes, bool keepdim) {
  if (!a) {
    bg_error(BG_EINVAL, "sh_sum: sharded tensor argument is NULL");
    return NULL;
  }
  if (a->dead) return dead_of(a, NULL);
  bg_mesh *m = a->m;
  uint32_t mask = a->ndim >= 32 ? axes : axes & ((1u << a->ndim) - 1u);
  bg_tensor *parts[BG_MESH_MAX];
  for (unsigned i = 0; i < m->n; i++) parts[i] = bg_tn_sum(a->parts[i], mask, keepdim);
  if (a->axis == BG_SHARD_REPLICATED) return sh_make(m, "sh_sum", parts, BG_SHARD_REPLICATED);
  if (mask & (1u << a->axis)) { /* over the sharded axis: per-device sums, all-reduced */
    for (unsigned i = 0; i < m->n; i++)
      if (t_dead(parts[i])) return sh_make(m, "sh_sum", parts, BG_SHARD_REPLICATED);
    bg_tensor *out[BG_MESH_MAX];
    if (t_allreduce(m, parts, out) < 0) return &m->err_s;
    return sh_make(m, "sh_sum", out, BG_SHARD_REPLICATED);
  }
  int axis = a->axis;
  if (!keepdim)
    for (int d = 0; d < a->axis; d++) axis -= (mask >> d) & 1u;
  return sh_make(m, "sh_sum", parts, axis);
}
