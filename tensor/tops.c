/* tensor/tops.c: creation and elementwise ops of the public API (more math in tunary.c, the public
 * reductions in treduce.c; n_sum here is the sum every file builds on). Each checks its
 * arguments, latches an error naming the op and the shapes on failure, and passes the error tensor
 * through; the graph is built by the node-level builders of tgraph.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tensor/tensor_internal.h"

/* ---- argument checks ---- */

static bool check_shape(bg_tctx *c, const char *op, unsigned ndim, const int64_t *shape) {
  if (ndim > BG_MAX_DIMS) {
    t_fail(c, "%s: %u dimensions, at most %d", op, ndim, BG_MAX_DIMS);
    return false;
  }
  if (ndim && !shape) {
    t_fail(c, "%s: no shape given for %u dimensions", op, ndim);
    return false;
  }
  int64_t n = 1;
  for (unsigned i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] && n > INT64_MAX / shape[i])) {
      tshape s = t_mkshape(ndim, shape);
      SHSTR(ss, &s);
      t_fail(c, "%s: invalid shape %s: %s", op, ss, shape[i] < 0 ? "negative dimension" : "too many elements");
      return false;
    }
    n *= shape[i];
  }
  return true;
}

static bool check_dtype(bg_tctx *c, const char *op, enum bg_dtype t) {
  if (t_dtype_ok(t)) return true;
  t_fail(c, "%s: unknown dtype %d", op, (int)t);
  return false;
}

/* ---- creation ---- */

bg_tensor *bg_tn_from(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, const void *data) {
  if (!check_dtype(c, "from", t) || !check_shape(c, "from", ndim, shape)) return &c->err_t;
  tshape sh = t_mkshape(ndim, shape);
  if (!data && t_numel(&sh)) return t_fail(c, "from: no data for %lld elements", (long long)t_numel(&sh));
  node u = t_from_host(c, t_scalar(t), &sh, data);
  return u ? t_wrap(c, u) : t_fail(c, "from: %s", bg_last_error());
}

bg_tensor *bg_tn_full(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, double v) {
  if (!check_dtype(c, "full", t) || !check_shape(c, "full", ndim, shape)) return &c->err_t;
  tshape sh = t_mkshape(ndim, shape);
  return t_wrap(c, n_const(c, t_scalar(t), v, &sh));
}

bg_tensor *bg_tn_zeros(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape) {
  return bg_tn_full(c, t, ndim, shape, 0.0);
}
bg_tensor *bg_tn_ones(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape) {
  return bg_tn_full(c, t, ndim, shape, 1.0);
}
bg_tensor *bg_tn_scalar(bg_tctx *c, enum bg_dtype t, double v) { return bg_tn_full(c, t, 0, NULL, v); }

bg_tensor *bg_tn_arange(bg_tctx *c, enum bg_dtype t, double start, double stop, double step) {
  if (!check_dtype(c, "arange", t)) return &c->err_t;
  if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
    return t_fail(c, "arange: start %g, stop %g, step %g: need finite values and a non-zero step", start, stop, step);
  double cnt = ceil((stop - start) / step);
  if (cnt > 2147483647.0) return t_fail(c, "arange: %g elements, at most 2^31-1", cnt);
  int64_t n = cnt > 0 ? (int64_t)cnt : 0;
  enum ir_scalar s = t_scalar(t);
  tshape sh = t_mkshape(1, &n);
  /* start + i*step computed in the result dtype, as tinygrad */
  node i = n_cast(c, n_iota(c, n), s);
  node v = n_alu(c, IR_ADD, n_alu(c, IR_MUL, i, n_const(c, s, step, &sh)), n_const(c, s, start, &sh));
  return t_wrap(c, v);
}

bg_tensor *bg_tn_eye(bg_tctx *c, enum bg_dtype t, int64_t n) {
  if (!check_dtype(c, "eye", t)) return &c->err_t;
  if (n < 0 || n > 2147483647) return t_fail(c, "eye: size %lld out of range", (long long)n);
  /* (arange(n)[:,None] == arange(n)[None,:]): pure index math, one kernel when realized */
  int64_t col[2] = {n, 1}, row[2] = {1, n}, sq[2] = {n, n};
  tshape sc = t_mkshape(2, col), sr = t_mkshape(2, row), ss = t_mkshape(2, sq);
  node i = n_iota(c, n);
  node a = n_expand(c, n_reshape(c, i, &sc), &ss), b = n_expand(c, n_reshape(c, i, &sr), &ss);
  return t_wrap(c, n_cast(c, n_alu(c, IR_CMPEQ, a, b), t_scalar(t)));
}

/* Threefry counter generator: element i gets the low 32 bits of THREEFRY(counter + i, key); the
 * counter and key travel in a small uint64 buffer so every rand() of one size is the same kernel.
 * Those bits become a float in [1,2) through the mantissa ((bits >> 9) | 0x3f800000), minus 1. */
bg_tensor *bg_tn_rand(bg_tctx *c, unsigned ndim, const int64_t *shape) {
  if (!check_shape(c, "rand", ndim, shape)) return &c->err_t;
  tshape sh = t_mkshape(ndim, shape);
  int64_t n = t_numel(&sh);
  if (n > 2147483647) return t_fail(c, "rand: %lld elements, at most 2^31-1", (long long)n);
  if (n == 0) return t_wrap(c, n_const(c, IR_DT_FLOAT32, 0, &sh));
  uint64_t words[2] = {c->rng_counter, (c->seed & 0xffffffffu) << 32 | 0x9e3779b1u};
  c->rng_counter += (uint64_t)n;
  int64_t two = 2, one_[2][2] = {{0, 1}}, two_[2][2] = {{1, 2}};
  tshape s2 = t_mkshape(1, &two), flat = t_mkshape(1, &n);
  node st = t_from_host(c, IR_DT_UINT64, &s2, words);
  if (!st) return t_fail(c, "rand: %s", bg_last_error());
  node ctr = n_broadcast_to(c, n_shrink(c, st, one_), &flat), key = n_broadcast_to(c, n_shrink(c, st, two_), &flat);
  node x = n_alu(c, IR_ADD, ctr, n_cast(c, n_iota(c, n), IR_DT_UINT64));
  node bits = n_cast(c, n_alu(c, IR_THREEFRY, x, key), IR_DT_UINT32);
  node m = n_alu(c, IR_OR, n_alu(c, IR_SHR, bits, n_const(c, IR_DT_UINT32, 9, &flat)),
                 n_const(c, IR_DT_UINT32, 0x3f800000u, &flat));
  node f = n_alu(c, IR_SUB, n_bitcast(c, m, IR_DT_FLOAT32), n_const(c, IR_DT_FLOAT32, 1.0, &flat));
  return t_wrap(c, n_reshape(c, f, &sh));
}

/* ---- elementwise ---- */

enum bkind { B_ARITH, B_CMP, B_DIV };

/* A NULL operand leaves a message (t_null_arg); the error tensor passes through. */
#define GUARD(a) \
  if (!(a) || t_dead(a)) return (a) ? &(a)->c->err_t : t_null_arg(__func__, #a, NULL)

/* Bools have no ring: + and max are or, * is and (as tinygrad's bool ALU). */
static enum ir_op bool_op(enum ir_op op, enum ir_scalar s) {
  if (s != IR_DT_BOOL) return op;
  return op == IR_ADD || op == IR_MAX ? IR_OR : op == IR_MUL ? IR_AND : op;
}

static bg_tensor *binary(const char *name, enum ir_op op, enum bkind kind, bg_tensor *a, bg_tensor *b) {
  if (!a || !b) return t_null_arg(name, a ? "b" : "a", a ? a : b);
  bg_tctx *c = a->c;
  if (b->c != c) return t_fail(c, "%s: tensors belong to different contexts", name);
  if (t_dead(a) || t_dead(b)) return &c->err_t;
  node x = t_node(a), y = t_node(b);
  if (!n_broadcast(c, &x, &y)) {
    SHSTR(sa, t_shape(c, t_node(a)));
    SHSTR(sb, t_shape(c, t_node(b)));
    return t_fail(c, "%s: shapes %s and %s do not broadcast", name, sa, sb);
  }
  enum ir_scalar s = t_promote(IR_DT_SCALAR(x->dt), IR_DT_SCALAR(y->dt));
  if (kind == B_DIV && !ir_scalar_is_float(s)) s = IR_DT_FLOAT32;
  if (op == IR_SUB && s == IR_DT_BOOL) return t_fail(c, "%s: subtracting bools is not defined", name);
  return t_wrap(c, n_alu(c, bool_op(op, s), n_cast(c, x, s), n_cast(c, y, s)));
}

bg_tensor *bg_tn_add(bg_tensor *a, bg_tensor *b) { return binary("add", IR_ADD, B_ARITH, a, b); }
bg_tensor *bg_tn_sub(bg_tensor *a, bg_tensor *b) { return binary("sub", IR_SUB, B_ARITH, a, b); }
bg_tensor *bg_tn_mul(bg_tensor *a, bg_tensor *b) { return binary("mul", IR_MUL, B_ARITH, a, b); }
bg_tensor *bg_tn_div(bg_tensor *a, bg_tensor *b) { return binary("div", IR_FDIV, B_DIV, a, b); }
bg_tensor *bg_tn_maximum(bg_tensor *a, bg_tensor *b) { return binary("maximum", IR_MAX, B_ARITH, a, b); }
bg_tensor *bg_tn_lt(bg_tensor *a, bg_tensor *b) { return binary("lt", IR_CMPLT, B_CMP, a, b); }
bg_tensor *bg_tn_eq(bg_tensor *a, bg_tensor *b) { return binary("eq", IR_CMPEQ, B_CMP, a, b); }
bg_tensor *bg_tn_ne(bg_tensor *a, bg_tensor *b) { return binary("ne", IR_CMPNE, B_CMP, a, b); }

bg_tensor *bg_tn_where(bg_tensor *cond, bg_tensor *x, bg_tensor *y) {
  if (!cond || !x || !y)
    return t_null_arg("where", !cond ? "cond" : !x ? "x" : "y", cond ? cond : x ? x : y);
  bg_tctx *c = cond->c;
  if (x->c != c || y->c != c) return t_fail(c, "where: tensors belong to different contexts");
  if (t_dead(cond) || t_dead(x) || t_dead(y)) return &c->err_t;
  node k = t_node(cond), a = t_node(x), b = t_node(y);
  if (!n_broadcast(c, &a, &b) || !n_broadcast(c, &k, &a) || !n_broadcast(c, &a, &b)) {
    SHSTR(sk, t_shape(c, t_node(cond)));
    SHSTR(sa, t_shape(c, t_node(x)));
    SHSTR(sb, t_shape(c, t_node(y)));
    return t_fail(c, "where: shapes %s, %s and %s do not broadcast", sk, sa, sb);
  }
  enum ir_scalar s = t_promote(IR_DT_SCALAR(a->dt), IR_DT_SCALAR(b->dt));
  return t_wrap(c, n_where(c, n_cast(c, k, IR_DT_BOOL), n_cast(c, a, s), n_cast(c, b, s)));
}

static node konst(bg_tctx *c, node like, double v) { return n_const(c, IR_DT_SCALAR(like->dt), v, t_shape(c, like)); }

bg_tensor *bg_tn_addc(bg_tensor *a, double v) {
  GUARD(a);
  node x = t_node(a);
  return t_wrap(a->c, n_alu(a->c, bool_op(IR_ADD, IR_DT_SCALAR(x->dt)), x, konst(a->c, x, v)));
}

bg_tensor *bg_tn_mulc(bg_tensor *a, double v) {
  GUARD(a);
  node x = t_node(a);
  return t_wrap(a->c, n_alu(a->c, bool_op(IR_MUL, IR_DT_SCALAR(x->dt)), x, konst(a->c, x, v)));
}

bg_tensor *bg_tn_neg(bg_tensor *a) {
  GUARD(a);
  node x = t_node(a);
  if (IR_DT_SCALAR(x->dt) == IR_DT_BOOL) return t_wrap(a->c, n_alu(a->c, IR_CMPNE, x, konst(a->c, x, 1))); /* logical not */
  return t_wrap(a->c, n_unary(a->c, IR_NEG, x));
}

/* Transcendentals work on floats: ints and bools become float32 first. */
static node floaty(bg_tctx *c, node x) {
  return ir_scalar_is_float(IR_DT_SCALAR(x->dt)) ? x : n_cast(c, x, IR_DT_FLOAT32);
}

static bg_tensor *unary_f(const char *name, bg_tensor *a, enum ir_op op) {
  if (!a || t_dead(a)) return a ? &a->c->err_t : t_null_arg(name, "a", NULL);
  return t_wrap(a->c, n_unary(a->c, op, floaty(a->c, t_node(a))));
}

bg_tensor *bg_tn_exp2(bg_tensor *a) { return unary_f("exp2", a, IR_EXP2); }
bg_tensor *bg_tn_log2(bg_tensor *a) { return unary_f("log2", a, IR_LOG2); }
bg_tensor *bg_tn_sin(bg_tensor *a) { return unary_f("sin", a, IR_SIN); }
bg_tensor *bg_tn_sqrt(bg_tensor *a) { return unary_f("sqrt", a, IR_SQRT); }
bg_tensor *bg_tn_reciprocal(bg_tensor *a) { return unary_f("reciprocal", a, IR_RECIP); }

static const double LN2 = 0.69314718055994530942;

static node n_exp(bg_tctx *c, node x) {
  x = floaty(c, x);
  return n_unary(c, IR_EXP2, n_alu(c, IR_MUL, x, konst(c, x, 1.0 / LN2)));
}

bg_tensor *bg_tn_exp(bg_tensor *a) {
  GUARD(a);
  return t_wrap(a->c, n_exp(a->c, t_node(a)));
}

bg_tensor *bg_tn_log(bg_tensor *a) {
  GUARD(a);
  node x = floaty(a->c, t_node(a));
  return t_wrap(a->c, n_alu(a->c, IR_MUL, n_unary(a->c, IR_LOG2, x), konst(a->c, x, LN2)));
}

/* (x > 0).where(x, 0): NaN maps to 0 as in tinygrad */
static node n_relu(bg_tctx *c, node x) {
  node z = konst(c, x, 0);
  return n_where(c, n_alu(c, IR_CMPLT, z, x), x, z);
}

bg_tensor *bg_tn_relu(bg_tensor *a) {
  GUARD(a);
  return t_wrap(a->c, n_relu(a->c, t_node(a)));
}

/* tinygrad: relu(x) - alpha * relu(1 - exp(x)) */
bg_tensor *bg_tn_elu(bg_tensor *a, double alpha) {
  GUARD(a);
  bg_tctx *c = a->c;
  node x = floaty(c, t_node(a));
  node neg = n_relu(c, n_alu(c, IR_SUB, konst(c, x, 1), n_exp(c, x)));
  return t_wrap(c, n_alu(c, IR_SUB, n_relu(c, x), n_alu(c, IR_MUL, konst(c, x, alpha), neg)));
}

bg_tensor *bg_tn_cast(bg_tensor *a, enum bg_dtype t) {
  GUARD(a);
  if (!check_dtype(a->c, "cast", t)) return &a->c->err_t;
  return t_wrap(a->c, n_cast(a->c, t_node(a), t_scalar(t)));
}

/* ---- reductions ---- */

node n_drop_axes(bg_tctx *c, node u, uint32_t mask) {
  const tshape *in = t_shape(c, u);
  tshape out;
  memset(&out, 0, sizeof out);
  for (unsigned i = 0; i < in->n; i++)
    if (!((mask >> i) & 1u)) out.d[out.n++] = in->d[i];
  return n_reshape(c, u, &out);
}

node n_sum(bg_tctx *c, node u, uint32_t mask, bool keepdim) {
  if (!u) return NULL;
  enum ir_scalar s = IR_DT_SCALAR(u->dt), acc = t_sum_acc(s);
  node r = n_reduce(c, n_cast(c, u, acc), IR_ADD, mask);
  if (ir_scalar_is_float(s) && acc != s) r = n_cast(c, r, s); /* 16-bit float sums accumulate in float32, as tinygrad */
  return keepdim ? r : n_drop_axes(c, r, mask);
}
