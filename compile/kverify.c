/* compile/kverify.c: the kernel AST contract of compile/kernel.h, checked before any pass runs.
 *
 * Besides ir_verify's arity and dtype rules: only kernel-level ops, scalar dtypes, DEFINE_GLOBAL
 * slots dense from 0 with one dtype each, RANGEs of index dtype with a known kind and a unique
 * axis, extents free of ranges, INDEX/LOAD/STORE shapes and dtypes, REDUCE closing reduce ranges
 * (never one already closed inside it), STOREs only under the SINK and free of open reduce
 * ranges, and stored values depending only on output ranges that their index uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "compile/kernel_internal.h"

static void dtype_str(ir_dtype dt, char *buf, size_t n) {
  snprintf(buf, n, "%s%s", ir_scalar_name(IR_DT_SCALAR(dt)), IR_DT_IS_PTR(dt) ? "*" : "");
  if (IR_DT_LANES(dt) > 1) {
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, ".vec(%u)", IR_DT_LANES(dt));
  }
}

void kdescribe(const ir_node *u, char *buf, size_t n) {
  char dts[32], expr[160];
  dtype_str(u->dt, dts, sizeof dts);
  ir_render_expr(u, expr, sizeof expr);
  snprintf(buf, n, "%s %s '%s'", ir_op_name((enum ir_op)u->op), dts, expr);
}

static int bad(const ir_node *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const ir_node *u, const char *fmt, ...) {
  char what[256], node[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  kdescribe(u, node, sizeof node);
  return bg_error(BG_EINVAL, "kernel: %s: %s", what, node);
}

static bool allowed_op(enum ir_op op) {
  switch (ir_op_group(op)) {
  case IR_G_ALU1:
  case IR_G_ALU2:
  case IR_G_ALU3: return true;
  default: break;
  }
  switch (op) {
  case IR_CONST: case IR_DEFINE_VAR: case IR_DEFINE_GLOBAL: case IR_RANGE: case IR_INDEX: case IR_LOAD:
  case IR_STORE: case IR_REDUCE: case IR_SINK: return true;
  default: return false;
  }
}

static bool is_intlike(ir_dtype dt) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  return !IR_DT_IS_PTR(dt) && IR_DT_LANES(dt) == 1 && (ir_scalar_is_int(s) || s == IR_DT_BOOL);
}

static int cmp_range(const void *a, const void *b) {
  const ir_node *x = *(const ir_node *const *)a, *y = *(const ir_node *const *)b;
  int kx = kr_kind(x), ky = kr_kind(y);
  if (kx != ky) return kx < ky ? -1 : 1;
  return kr_axis(x) < kr_axis(y) ? -1 : kr_axis(x) > kr_axis(y);
}

/* A private copy of ir_toposort's result. */
static const ir_node **topo_copy(ir_ctx *ctx, const ir_node *root, size_t *n) {
  const ir_node *const *t;
  *n = ir_toposort(ctx, root, &t);
  const ir_node **out = malloc((*n ? *n : 1) * sizeof *out);
  if (out && *n) memcpy(out, t, *n * sizeof *out);
  return out;
}

int kcollect_ranges(ir_ctx *ctx, const ir_node *root, const ir_node **out, int max) {
  size_t n;
  const ir_node **t = topo_copy(ctx, root, &n);
  if (!t) return bg_error(BG_ENOMEM, "kernel: out of memory"), -1;
  int k = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i]->op != IR_RANGE) continue;
    if (k == max) {
      free(t);
      bg_error(BG_EINVAL, "kernel: more than %d ranges", max);
      return -1;
    }
    out[k++] = t[i];
  }
  free(t);
  qsort(out, (size_t)k, sizeof *out, cmp_range);
  return k;
}

typedef struct vstate {
  ir_ctx *ctx;
  kinfo *info;
  const ir_node *ranges[KMAX_RANGES];   /* bit -> RANGE */
  unsigned nranges;
  int *bit;                             /* id -> bit (RANGE nodes only) */
  uint64_t *open, *closed;              /* id -> ranges the value depends on / closed inside it */
  const ir_node *slots[KMAX_BUFS];
} vstate;

static int range_name(const vstate *v, uint64_t m, char *buf, size_t n) {
  for (unsigned b = 0; b < v->nranges; b++)
    if (m >> b & 1) {
      snprintf(buf, n, "r%lld", (long long)kr_axis(v->ranges[b]));
      return (int)b;
    }
  snprintf(buf, n, "?");
  return -1;
}

static uint64_t kind_mask(const vstate *v, int kind) {
  uint64_t m = 0;
  for (unsigned b = 0; b < v->nranges; b++)
    if (kr_kind(v->ranges[b]) == kind) m |= 1ull << b;
  return m;
}

static int check_node(vstate *v, const ir_node *u, bool root) {
  enum ir_op op = (enum ir_op)u->op;
  char dts[32];
  if (!allowed_op(op)) return bad(u, "op %s is not part of a kernel AST", ir_op_name(op));
  if (op == IR_SINK && !root) return bad(u, "SINK inside the kernel");
  if (op != IR_SINK && root) return bad(u, "the kernel root is not a SINK");
  if (op != IR_DEFINE_GLOBAL && op != IR_SINK && op != IR_STORE && op != IR_INDEX &&
      (IR_DT_IS_PTR(u->dt) || IR_DT_LANES(u->dt) != 1 || IR_DT_SCALAR(u->dt) == IR_DT_VOID))
    return bad(u, "not a scalar dtype");
  for (unsigned i = 0; i < u->nsrc; i++) {
    const ir_node *s = u->src[i];
    bool mem_src = (op == IR_INDEX && i == 0) || ((op == IR_LOAD || op == IR_STORE) && i == 0) ||
                   (op == IR_SINK) || (op == IR_REDUCE && i > 0);
    if (!mem_src && (s->op == IR_DEFINE_GLOBAL || s->op == IR_INDEX || s->op == IR_STORE))
      return bad(u, "source %u is a %s", i, ir_op_name((enum ir_op)s->op));
    if (s->op == IR_STORE && op != IR_SINK) return bad(u, "a STORE used as a value");
  }
  switch (op) {
  case IR_DEFINE_GLOBAL: {
    enum ir_scalar s = IR_DT_SCALAR(u->dt);
    if (!IR_DT_IS_PTR(u->dt) || IR_DT_ADDRSPACE(u->dt) != IR_AS_GLOBAL || IR_DT_LANES(u->dt) != 1 ||
        s == IR_DT_VOID || s == IR_DT_INDEX)
      return bad(u, "buffer dtype is not a global pointer to a scalar");
    if (u->arg.i < 0 || u->arg.i >= KMAX_BUFS) return bad(u, "buffer slot %lld outside 0..%d", (long long)u->arg.i, KMAX_BUFS - 1);
    const ir_node *o = v->slots[u->arg.i];
    if (o && o != u) return bad(u, "buffer slot %lld defined twice with different dtypes", (long long)u->arg.i);
    v->slots[u->arg.i] = u;
    return 0;
  }
  case IR_DEFINE_VAR:
    if (IR_DT_SCALAR(u->dt) != IR_DT_INT32 && IR_DT_SCALAR(u->dt) != IR_DT_INDEX)
      return bad(u, "variable dtype, expected int32 or index");
    return 0;
  case IR_RANGE: {
    if (IR_DT_SCALAR(u->dt) != IR_DT_INDEX) return bad(u, "RANGE dtype is not index");
    if (kr_kind(u) != KR_LOOP && kr_kind(u) != KR_REDUCE) return bad(u, "RANGE kind %d, expected 0 (output) or 1 (reduce)", kr_kind(u));
    if (u->arg.i < 0) return bad(u, "negative RANGE axis");
    if (!is_intlike(u->src[0]->dt) || IR_DT_SCALAR(u->src[0]->dt) == IR_DT_BOOL) return bad(u, "RANGE extent is not an integer");
    int64_t e;
    if (ir_is_const(u->src[0], &e) && e < 0) return bad(u, "negative RANGE extent %lld", (long long)e);
    if (v->open[u->src[0]->id]) return bad(u, "RANGE extent depends on a range");
    for (unsigned b = 0; b < v->nranges; b++)
      if (kr_axis(v->ranges[b]) == kr_axis(u)) return bad(u, "axis %lld used by two RANGEs", (long long)kr_axis(u));
    if (v->nranges == KMAX_RANGES) return bad(u, "more than %d ranges", KMAX_RANGES);
    v->bit[u->id] = (int)v->nranges;
    v->ranges[v->nranges] = u;
    v->open[u->id] = 1ull << v->nranges++;
    if (kr_axis(u) > v->info->max_axis) v->info->max_axis = kr_axis(u);
    return 0;
  }
  case IR_INDEX:
    if (u->nsrc > 3 || u->src[0]->op != IR_DEFINE_GLOBAL) return bad(u, "INDEX is not (DEFINE_GLOBAL, idx[, valid])");
    if (!is_intlike(u->src[1]->dt) || IR_DT_SCALAR(u->src[1]->dt) == IR_DT_BOOL) return bad(u, "INDEX offset is not an integer");
    if (u->nsrc == 3 && (IR_DT_SCALAR(u->src[2]->dt) != IR_DT_BOOL || !is_intlike(u->src[2]->dt)))
      return bad(u, "INDEX valid is not bool");
    return 0;
  case IR_LOAD:
    if (u->nsrc != 1 || u->src[0]->op != IR_INDEX) return bad(u, "LOAD is not LOAD(INDEX)");
    if (IR_DT_SCALAR(u->src[0]->src[0]->dt) != IR_DT_SCALAR(u->dt)) {
      dtype_str(u->src[0]->src[0]->dt, dts, sizeof dts);
      return bad(u, "LOAD dtype differs from its buffer %s", dts);
    }
    return 0;
  case IR_STORE:
    if (u->nsrc != 2 || u->src[0]->op != IR_INDEX) return bad(u, "STORE is not STORE(INDEX, value)");
    if (IR_DT_SCALAR(u->src[0]->src[0]->dt) != IR_DT_SCALAR(u->src[1]->dt) || IR_DT_LANES(u->src[1]->dt) != 1) {
      dtype_str(u->src[0]->src[0]->dt, dts, sizeof dts);
      return bad(u, "stored value's dtype differs from its buffer %s", dts);
    }
    v->info->buf_written[u->src[0]->src[0]->arg.i] = true;
    return 0;
  case IR_REDUCE:
    if (u->arg.i != IR_ADD && u->arg.i != IR_MAX && u->arg.i != IR_MUL) return bad(u, "REDUCE op is not ADD, MUL or MAX");
    if (u->nsrc < 2) return bad(u, "REDUCE without ranges");
    if (u->dt != u->src[0]->dt) return bad(u, "REDUCE dtype differs from its value");
    if (IR_DT_SCALAR(u->dt) == IR_DT_BOOL && u->arg.i != IR_MAX) return bad(u, "REDUCE of bool is only MAX");
    for (unsigned i = 1; i < u->nsrc; i++)
      if (u->src[i]->op != IR_RANGE || kr_kind(u->src[i]) != KR_REDUCE) return bad(u, "REDUCE source %u is not a reduce RANGE", i);
    v->info->has_reduce = true;
    return 0;
  case IR_THREEFRY:
    if (IR_DT_SCALAR(u->dt) != IR_DT_UINT64 || IR_DT_SCALAR(u->src[0]->dt) != IR_DT_UINT64 ||
        IR_DT_SCALAR(u->src[1]->dt) != IR_DT_UINT64)
      return bad(u, "THREEFRY is uint64 (x, key) -> uint64");
    return 0;
  case IR_SINK:
    for (unsigned i = 0; i < u->nsrc; i++)
      if (u->src[i]->op != IR_STORE) return bad(u->src[i], "SINK source %u is not a STORE", i);
    return 0;
  default: return 0;
  }
}

/* Range masks after u's own checks. */
static int propagate(vstate *v, const ir_node *u) {
  char rn[64];
  if (u->op == IR_RANGE) return 0;
  uint64_t open = 0, closed = 0;
  for (unsigned i = 0; i < u->nsrc; i++) {
    open |= v->open[u->src[i]->id];
    closed |= v->closed[u->src[i]->id];
  }
  if (u->op == IR_REDUCE) {
    uint64_t own = 0, inner_closed = v->closed[u->src[0]->id];
    for (unsigned i = 1; i < u->nsrc; i++) own |= 1ull << v->bit[u->src[i]->id];
    if (own & inner_closed) {
      range_name(v, own & inner_closed, rn, sizeof rn);
      return bad(u, "range %s is closed again by a REDUCE inside this one", rn);
    }
    open &= ~own;
    closed |= own;
  }
  if (u->op == IR_STORE) {
    uint64_t red = open & kind_mask(v, KR_REDUCE);
    if (red) {
      char expr[160];
      range_name(v, red, rn, sizeof rn);
      ir_render_expr(u->src[0]->src[1], expr, sizeof expr);
      return bad(u, "STORE to data%lld uses reduce range %s outside a REDUCE closing it (index '%s')",
                 (long long)u->src[0]->src[0]->arg.i, rn, expr);
    }
    uint64_t stray = open & ~v->open[u->src[0]->id];
    if (stray) {
      range_name(v, stray, rn, sizeof rn);
      return bad(u, "stored value depends on output range %s which the STORE's index does not use", rn);
    }
  }
  v->open[u->id] = open;
  v->closed[u->id] = closed;
  return 0;
}

int kverify(ir_ctx *ctx, const ir_node *sink, kinfo *info) {
  memset(info, 0, sizeof *info);
  info->max_axis = -1;
  if (!sink) return bg_error(BG_EINVAL, "kernel: no kernel AST (NULL sink)");
  if (ir_verify(ctx, sink)) return bg_error(BG_EINVAL, "kernel: %s", ir_error(ctx));
  size_t n, nn = ir_node_count(ctx);
  const ir_node **t = topo_copy(ctx, sink, &n);
  vstate *v = calloc(1, sizeof *v);
  int rc = -BG_ENOMEM;
  if (!t || !v || !(v->bit = calloc(nn, sizeof *v->bit)) || !(v->open = calloc(nn, sizeof *v->open)) ||
      !(v->closed = calloc(nn, sizeof *v->closed))) {
    bg_error(BG_ENOMEM, "kernel: out of memory verifying the AST");
    goto done;
  }
  v->ctx = ctx;
  v->info = info;
  for (size_t i = 0; i < n; i++)
    if ((rc = check_node(v, t[i], t[i] == sink)) || (rc = propagate(v, t[i]))) goto done;
  for (unsigned s = 0; s < KMAX_BUFS; s++)
    if (v->slots[s]) info->nbufs = s + 1;
  for (unsigned s = 0; s < info->nbufs; s++) {
    if (!v->slots[s]) {
      rc = bg_error(BG_EINVAL, "kernel: buffer slots are not dense: slot %u is missing of 0..%u", s, info->nbufs - 1);
      goto done;
    }
    info->buf_dt[s] = IR_DT_SCALAR(v->slots[s]->dt);
  }
  size_t nv = ir_vars(ctx, sink, info->vars, KMAX_VARS);
  if (nv > KMAX_VARS) {
    rc = bg_error(BG_EINVAL, "kernel: %zu variables, at most %d", nv, KMAX_VARS);
    goto done;
  }
  info->nvars = (unsigned)nv;
  if (info->nbufs + info->nvars > 64) {
    rc = bg_error(BG_EINVAL, "kernel: %u buffers + %u variables exceed 64 arguments", info->nbufs, info->nvars);
    goto done;
  }
  for (unsigned b = 0; b < v->nranges; b++) {
    const ir_node *r = v->ranges[b];
    if (kr_kind(r) == KR_LOOP) info->out[info->nout++] = r;
    else info->red[info->nred++] = r;
  }
  qsort(info->out, info->nout, sizeof *info->out, cmp_range);
  qsort(info->red, info->nred, sizeof *info->red, cmp_range);
  rc = 0;
done:
  if (v) {
    free(v->bit);
    free(v->open);
    free(v->closed);
  }
  free(v);
  free(t);
  return rc;
}
