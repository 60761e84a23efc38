/* tensor/treduce.c: reductions (tensor.h "reductions" and "reductions over signed axes"): sum, max, min,
 * prod, mean over a bit mask or a list of signed axes, argmax/argmin, cumsum and softmax, written as
 * tinygrad's Tensor methods (tinygrad/tensor.py) over the graph's one REDUCE_AXIS node:
 *   min = inverse(max(inverse x)) with tinygrad's _inverse (-x, ~x, not x), so ints cannot overflow;
 *   prod is a REDUCE_AXIS with IR_MUL in the sum accumulator dtype (the compilers' REDUCE is generic in its
 *   combining op; its identity is 1), mean = sum / count in float (tinygrad's mean);
 *   argmax = n-1 - max((x == max(x)) ? n-1-i : 0) (tinygrad's argmax: the first index wins; a NaN wins
 *   as numpy's argmax), argmin = argmax(inverse x);
 *   cumsum: a triangular mask over an expanded copy summed along a new axis (tinygrad's _cumalu pools
 *   windows of a padded copy; the mask is the same O(n^2) work per output row and needs no stride tricks);
 *   softmax = exp(x - max) / sum(exp(x - max)). */
#include "tensor/tensor_internal.h"

#define GUARD1(name, a) \
  if (!(a) || t_dead(a)) return (a) ? &(a)->c->err_t : t_null_arg(name, "a", NULL)

static const char *const red_names[] = {"sum", "max", "min", "prod", "mean"};

static enum ir_scalar sc(node x) { return IR_DT_SCALAR(x->dt); }

/* A bit-mask reduction's axes: BG_ALL_AXES is every axis; a bit past the rank latches the error. */
static bool axes_mask(const char *op, const bg_tensor *a, uint32_t *axes) {
  uint32_t all = a->ndim >= 32 ? 0xffffffffu : (1u << a->ndim) - 1u;
  if (*axes == BG_ALL_AXES) *axes = all;
  if (*axes & ~all) {
    tshape s = t_shape_of(a);
    SHSTR(ss, &s);
    t_fail(a->c, "%s: axis %d out of range for shape %s", op, __builtin_ctz(*axes & ~all), ss);
    return false;
  }
  return true;
}

/* A list of signed axes as a mask; naxes 0 is every axis. */
static bool axes_list(const char *op, const bg_tensor *a, const int *axes, unsigned naxes, uint32_t *mask) {
  *mask = naxes ? 0 : BG_ALL_AXES;
  if (!naxes) return axes_mask(op, a, mask);
  if (!axes) {
    t_fail(a->c, "%s: %u axes given but the axes array is NULL", op, naxes);
    return false;
  }
  for (unsigned i = 0; i < naxes; i++) {
    unsigned ax;
    if (!t_axis(a, op, axes[i], &ax)) return false;
    if (*mask & (1u << ax)) {
      tshape s = t_shape_of(a);
      SHSTR(ss, &s);
      t_fail(a->c, "%s: axis %d repeated (axis %u is given twice) for shape %s", op, axes[i], ax, ss);
      return false;
    }
    *mask |= 1u << ax;
  }
  return true;
}

static int64_t reduced_count(bg_tctx *c, node x, uint32_t mask) {
  const tshape *s = t_shape(c, x);
  int64_t n = 1;
  for (unsigned i = 0; i < s->n; i++)
    if ((mask >> i) & 1u) n *= BG_DIM_VALUE(s->d[i]);
  return n;
}

node n_reduce_op(bg_tctx *c, node x, enum bg_reduce_op op, uint32_t mask, bool keepdim) {
  if (!x) return NULL;
  enum ir_scalar s = sc(x), acc = t_sum_acc(s);
  node r;
  switch (op) {
  case BG_REDUCE_SUM: return n_sum(c, x, mask, keepdim);
  case BG_REDUCE_MAX: r = n_reduce(c, x, IR_MAX, mask); break;
  case BG_REDUCE_MIN: r = n_inverse(c, n_reduce(c, n_inverse(c, x), IR_MAX, mask)); break;
  case BG_REDUCE_PROD:
    r = n_reduce(c, n_cast(c, x, acc), IR_MUL, mask);
    if (s == IR_DT_FLOAT16) r = n_cast(c, r, s); /* half back, as sum */
    break;
  case BG_REDUCE_MEAN: {
    enum ir_scalar out = ir_scalar_is_float(s) ? s : IR_DT_FLOAT32;
    r = n_reduce(c, n_cast(c, x, acc), IR_ADD, mask);
    if (!ir_scalar_is_float(acc)) r = n_cast(c, r, IR_DT_FLOAT32);
    if (r) r = n_alu(c, IR_FDIV, r, n_const(c, sc(r), (double)reduced_count(c, x, mask), t_shape(c, r)));
    r = n_cast(c, r, out);
    break;
  }
  default: return NULL;
  }
  return keepdim ? r : n_drop_axes(c, r, mask);
}

static bg_tensor *reduce_mask(bg_tensor *a, enum bg_reduce_op op, uint32_t mask, bool keepdim) {
  GUARD1(red_names[op], a);
  if (!axes_mask(red_names[op], a, &mask)) return &a->c->err_t;
  return t_wrap(a->c, n_reduce_op(a->c, t_node(a), op, mask, keepdim));
}

bg_tensor *bg_tn_sum(bg_tensor *a, uint32_t axes, bool keepdim) { return reduce_mask(a, BG_REDUCE_SUM, axes, keepdim); }
bg_tensor *bg_tn_max(bg_tensor *a, uint32_t axes, bool keepdim) { return reduce_mask(a, BG_REDUCE_MAX, axes, keepdim); }
bg_tensor *bg_tn_min(bg_tensor *a, uint32_t axes, bool keepdim) { return reduce_mask(a, BG_REDUCE_MIN, axes, keepdim); }

bg_tensor *bg_tn_reduce(bg_tensor *a, enum bg_reduce_op op, const int *axes, unsigned naxes, bool keepdim) {
  GUARD1("reduce", a);
  if ((unsigned)op > BG_REDUCE_MEAN) return t_fail(a->c, "reduce: op %d is not a bg_reduce_op (0..%d)", (int)op, BG_REDUCE_MEAN);
  uint32_t mask;
  if (!axes_list(red_names[op], a, axes, naxes, &mask)) return &a->c->err_t;
  return t_wrap(a->c, n_reduce_op(a->c, t_node(a), op, mask, keepdim));
}

/* The shape of rank n with d at position at and 1 elsewhere (an iota placed along one axis). */
static tshape along(unsigned n, unsigned at, int64_t d) {
  tshape s;
  s.n = (uint8_t)n;
  for (unsigned i = 0; i < BG_MAX_DIMS; i++) s.d[i] = i == at ? d : 1;
  return s;
}

static bg_tensor *arg_reduce(const char *name, bg_tensor *a, int axis, bool keepdim, bool is_min) {
  GUARD1(name, a);
  bg_tctx *c = a->c;
  unsigned ax;
  if (!t_axis(a, name, axis, &ax)) return &c->err_t;
  int64_t n = a->shape[ax];
  if (n < 1 || n > 2147483647 || BG_DIM_IS_VAR(n)) {
    tshape s = t_shape_of(a);
    SHSTR(ss, &s);
    return t_fail(c, "%s: axis %d of shape %s has %lld elements, expected 1 to 2^31-1", name, axis, ss,
                  (long long)BG_DIM_VALUE(n));
  }
  node x = t_node(a);
  if (is_min) x = n_inverse(c, x);
  tshape full = *t_shape(c, x), ln = along(full.n, ax, n);
  uint32_t m = 1u << ax;
  node hit = n_alu(c, IR_CMPEQ, x, n_expand(c, n_reduce(c, x, IR_MAX, m), &full));
  if (ir_scalar_is_float(sc(x))) { /* a NaN is the maximum: the first NaN wins where there is one */
    node nan = n_alu(c, IR_CMPNE, x, x);
    hit = n_where(c, n_expand(c, n_reduce(c, nan, IR_MAX, m), &full), nan, hit);
  }
  node i = n_iota(c, n);
  node rev = n_alu(c, IR_SUB, n_const(c, IR_DT_INT32, (double)(n - 1), t_shape(c, i)), i);
  rev = n_expand(c, n_reshape(c, rev, &ln), &full);
  node idx = n_reduce(c, n_where(c, hit, rev, n_const(c, IR_DT_INT32, 0, &full)), IR_MAX, m);
  node r = n_alu(c, IR_SUB, n_const(c, IR_DT_INT32, (double)(n - 1), t_shape(c, idx)), idx);
  return t_wrap(c, keepdim ? r : n_drop_axes(c, r, m));
}

bg_tensor *bg_tn_argmax(bg_tensor *a, int axis, bool keepdim) { return arg_reduce("argmax", a, axis, keepdim, false); }
bg_tensor *bg_tn_argmin(bg_tensor *a, int axis, bool keepdim) { return arg_reduce("argmin", a, axis, keepdim, true); }

/* x (shape S, axis k of size n) seen as S[:k] + (n_out, n_in) + S[k+1:]: element (i, j) is x's element j where
 * the mask keeps j for output i (forward: j <= i, or j < i exclusive; reverse: j >= i, or j > i), else 0;
 * summing over the input axis gives the running sums in the sum's dtype. */
bg_tensor *bg_tn_cumsum(bg_tensor *a, int axis, bool exclusive, bool reverse) {
  GUARD1("cumsum", a);
  bg_tctx *c = a->c;
  unsigned ax;
  if (!t_axis(a, "cumsum", axis, &ax)) return &c->err_t;
  tshape s = t_shape_of(a);
  int64_t n = s.d[ax];
  if (s.n + 1 > BG_MAX_DIMS || BG_DIM_IS_VAR(n) || n > 2147483647) {
    SHSTR(ss, &s);
    return t_fail(c, "cumsum: shape %s along axis %d: needs rank below %d and a concrete size below 2^31", ss, axis,
                  BG_MAX_DIMS);
  }
  tshape one = s, full = s;
  one.n = full.n = (uint8_t)(s.n + 1);
  for (unsigned i = s.n; i > ax; i--) one.d[i] = full.d[i] = s.d[i - 1];
  one.d[ax] = 1;
  full.d[ax] = n;
  node x = n_expand(c, n_reshape(c, t_node(a), &one), &full);
  node io = n_iota(c, n);
  int64_t colv[2] = {n, 1}, rowv[2] = {1, n};
  tshape col = t_mkshape(2, colv), row = t_mkshape(2, rowv), sq = t_mkshape(2, (int64_t[2]){n, n});
  node I = n_expand(c, n_reshape(c, io, &col), &sq), J = n_expand(c, n_reshape(c, io, &row), &sq);
  node lo = reverse ? I : J, hi = reverse ? J : I; /* keep lo < hi, or lo <= hi (lo < hi + 1) */
  if (!exclusive) hi = n_alu(c, IR_ADD, hi, n_const(c, IR_DT_INT32, 1, &sq));
  node mask = n_alu(c, IR_CMPLT, lo, hi);
  tshape ms = along(full.n, ax, n);
  ms.d[ax + 1] = n;
  mask = n_expand(c, n_reshape(c, mask, &ms), &full);
  node v = n_where(c, mask, x, n_const(c, sc(x), 0, &full));
  return t_wrap(c, n_sum(c, v, 1u << (ax + 1), false));
}

bg_tensor *bg_tn_softmax(bg_tensor *a, int axis) {
  GUARD1("softmax", a);
  bg_tctx *c = a->c;
  unsigned ax;
  if (!t_axis(a, "softmax", axis, &ax)) return &c->err_t;
  node x = t_node(a);
  if (!ir_scalar_is_float(sc(x))) x = n_cast(c, x, IR_DT_FLOAT32);
  tshape full = *t_shape(c, x);
  uint32_t m = 1u << ax;
  node d = n_alu(c, IR_SUB, x, n_expand(c, n_reduce(c, x, IR_MAX, m), &full));
  node e = n_unary(c, IR_EXP2, n_alu(c, IR_MUL, d, n_const(c, sc(d), 1.4426950408889634074, &full))); /* exp */
  return t_wrap(c, n_alu(c, IR_FDIV, e, n_expand(c, n_sum(c, e, m, true), &full)));
}
