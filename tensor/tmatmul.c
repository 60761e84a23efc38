/* tensor/tmatmul.c: matmul of the public API (argument checks and error messages here; the graph
 * is movement ops, a multiply and a sum from tgraph.c/tops.c). */
#include "tensor/tensor_internal.h"


/* tinygrad's dot: x (..., n, 1, k) * w^T (..., 1, m, k), summed over k (in float32 for half),
 * cast back to the promoted dtype. 1-D operands as numpy: a (k) is (1, k), b (k) is (k, 1). */
bg_tensor *bg_tn_matmul(bg_tensor *a, bg_tensor *b) {
  if (!a || !b) return t_null_arg("matmul", a ? "b" : "a", a ? a : b);
  bg_tctx *c = a->c;
  if (b->c != c) return t_fail(c, "matmul: tensors belong to different contexts");
  if (t_dead(a) || t_dead(b)) return &c->err_t;
  tshape sa = t_shape_of(a), sb = t_shape_of(b);
  SHSTR(sas, &sa);
  SHSTR(sbs, &sb);
  if (!sa.n || !sb.n) return t_fail(c, "matmul: shapes %s and %s: scalars cannot be multiplied as matrices", sas, sbs);
  node x = t_node(a), w = t_node(b);
  bool a1 = sa.n == 1, b1 = sb.n == 1;
  if (a1) {
    int64_t d[2] = {1, sa.d[0]};
    sa = t_mkshape(2, d);
    x = n_reshape(c, x, &sa);
  }
  if (b1) {
    int64_t d[2] = {sb.d[0], 1};
    sb = t_mkshape(2, d);
    w = n_reshape(c, w, &sb);
  }
  int64_t k = sa.d[sa.n - 1], kb = sb.d[sb.n - 2];
  if (k != kb)
    return t_fail(c, "matmul: shapes %s and %s: inner dimensions %lld and %lld differ", sas, sbs, (long long)k, (long long)kb);
  if (sa.n + 1 > BG_MAX_DIMS || sb.n + 1 > BG_MAX_DIMS) return t_fail(c, "matmul: shapes %s and %s: too many dimensions", sas, sbs);
  tshape xs = sa, ws = sb;
  xs.d[xs.n - 1] = 1;
  xs.d[xs.n++] = k;
  unsigned order[BG_MAX_DIMS];
  for (unsigned i = 0; i < sb.n; i++) order[i] = i;
  order[sb.n - 2] = sb.n - 1;
  order[sb.n - 1] = sb.n - 2;
  w = n_permute(c, w, order);
  ws.d[ws.n - 2] = 1;
  ws.d[ws.n - 1] = sb.d[sb.n - 1];
  ws.d[ws.n++] = k;
  x = n_reshape(c, x, &xs);
  w = n_reshape(c, w, &ws);
  if (!x || !w || !n_broadcast(c, &x, &w)) return t_fail(c, "matmul: shapes %s and %s: batch dimensions do not broadcast", sas, sbs);
  enum ir_scalar s = t_promote(IR_DT_SCALAR(x->dt), IR_DT_SCALAR(w->dt));
  node prod = n_alu(c, s == IR_DT_BOOL ? IR_AND : IR_MUL, n_cast(c, x, s), n_cast(c, w, s));
  unsigned last = t_shape(c, prod)->n - 1;
  node r = n_cast(c, n_sum(c, prod, 1u << last, false), s);
  unsigned nd = last; /* result rank before dropping the 1-D axes */
  uint32_t drop = (a1 ? 1u << (nd - 2) : 0) | (b1 ? 1u << (nd - 1) : 0);
  return t_wrap(c, drop ? n_drop_axes(c, r, drop) : r);
}
