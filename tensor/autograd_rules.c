/* tensor/autograd_rules.c: the gradient of each graph op with respect to its sources, as node
 * builders (tinygrad's gradient rules, written for this graph's ops: it keeps SUB and FDIV, and
 * REDUCE_AXIS keeps the reduced axes as 1, so a reduce's gradient is a plain EXPAND). */
#include <math.h>
#include <string.h>

#include "tensor/autograd.h"

static const double LN2 = 0.69314718055994530942, HALF_PI = 1.57079632679489661923;

static node konst(bg_tctx *c, node like, double v) { return n_const(c, IR_DT_SCALAR(like->dt), v, t_shape(c, like)); }
static node mul(bg_tctx *c, node a, node b) { return n_alu(c, IR_MUL, a, b); }
static node divide(bg_tctx *c, node a, node b) { return n_alu(c, IR_FDIV, a, b); }
static node neg(bg_tctx *c, node a) { return n_unary(c, IR_NEG, a); }

/* The int64 values of a movement node's blob {src ndim, v...}. */
static const int64_t *move_args(node u) { return (const int64_t *)u->arg.b->data + 1; }

/* EXPAND: sum the gradient over the broadcast axes (in the sum accumulator dtype, as tinygrad). */
static node expand_grad(bg_tctx *c, node u, node g) {
  const tshape *in = t_shape(c, u->src[0]), *out = t_shape(c, u);
  tshape src = *in;
  uint32_t mask = 0;
  unsigned off = (unsigned)(out->n - in->n); /* builders expand at equal rank; leading axes are summed too */
  for (unsigned i = 0; i < out->n; i++)
    if (i < off || (in->d[i - off] == 1 && out->d[i] != 1)) mask |= 1u << i;
  node r = n_cast(c, n_sum(c, g, mask, true), IR_DT_SCALAR(u->dt));
  return n_reshape(c, r, &src);
}

static node permute_grad(bg_tctx *c, node u, node g) {
  const int64_t *order = move_args(u);
  unsigned inv[BG_MAX_DIMS], n = t_shape(c, u)->n;
  for (unsigned i = 0; i < n; i++) inv[order[i]] = i;
  return n_permute(c, g, inv);
}

/* PAD <-> SHRINK: the gradient of a pad is the unpadded window, that of a shrink is zero-padded. */
static node pad_grad(bg_tctx *c, node u, node g) {
  const int64_t *p = move_args(u);
  const tshape *in = t_shape(c, u->src[0]);
  int64_t b[BG_MAX_DIMS][2];
  for (unsigned i = 0; i < in->n; i++) {
    b[i][0] = p[2 * i];
    b[i][1] = p[2 * i] + in->d[i];
  }
  return n_shrink(c, g, b);
}

static node shrink_grad(bg_tctx *c, node u, node g) {
  const int64_t *b = move_args(u);
  const tshape *in = t_shape(c, u->src[0]);
  int64_t p[BG_MAX_DIMS][2];
  for (unsigned i = 0; i < in->n; i++) {
    p[i][0] = b[2 * i];
    p[i][1] = in->d[i] - b[2 * i + 1];
  }
  return n_pad(c, g, p);
}

static node flip_grad(bg_tctx *c, node u, node g) {
  const int64_t *f = move_args(u);
  uint32_t mask = 0;
  for (unsigned i = 0; i < t_shape(c, u)->n; i++)
    if (f[i]) mask |= 1u << i;
  return n_flip(c, g, mask);
}

/* REDUCE_AXIS keeps its axes as 1: the gradient broadcasts back with one EXPAND. A max spreads it
 * evenly over the elements equal to the maximum (tinygrad's tie rule: mask / count). */
static node reduce_grad(bg_tctx *c, node u, node g) {
  const int64_t *a = (const int64_t *)u->arg.b->data;
  node x = u->src[0];
  const tshape *xs = t_shape(c, x);
  tshape full = *xs;
  if (a[0] == IR_ADD) return n_expand(c, g, &full);
  if (a[0] == IR_MUL) return divide(c, n_expand(c, mul(c, g, u), &full), x); /* prod: g * ret / x (tinygrad) */
  node mask = n_cast(c, n_alu(c, IR_CMPEQ, x, n_expand(c, u, &full)), IR_DT_SCALAR(u->dt));
  node count = n_reduce(c, mask, IR_ADD, (uint32_t)a[1]);
  return mul(c, divide(c, mask, n_expand(c, count, &full)), n_expand(c, g, &full));
}

/* Binary max: the larger source takes the gradient, a tie splits it in halves (as tinygrad). */
static void max_grad(bg_tctx *c, node u, node g, node out[3]) {
  node a = u->src[0], b = u->src[1];
  node zero = konst(c, g, 0), half = mul(c, g, konst(c, g, 0.5));
  node tie = n_where(c, n_alu(c, IR_CMPNE, a, b), zero, half);
  out[0] = n_where(c, n_alu(c, IR_CMPLT, b, a), g, tie);
  out[1] = n_where(c, n_alu(c, IR_CMPLT, a, b), g, tie);
}

bool ag_src_grads(bg_tctx *c, node u, node g, node out[3]) {
  out[0] = out[1] = out[2] = NULL;
  node x = u->nsrc ? u->src[0] : NULL, y = u->nsrc > 1 ? u->src[1] : NULL;
  switch ((enum ir_op)u->op) {
    case IR_ADD: out[0] = out[1] = g; break;
    case IR_SUB: out[0] = g; out[1] = neg(c, g); break;
    case IR_MUL: out[0] = mul(c, g, y); out[1] = mul(c, g, x); break;
    case IR_FDIV: out[0] = divide(c, g, y); out[1] = neg(c, divide(c, mul(c, g, u), y)); break; /* d(x/y)/dy = -(x/y)/y */
    case IR_MAX: max_grad(c, u, g, out); break;
    case IR_NEG: out[0] = neg(c, g); break;
    case IR_EXP2: out[0] = mul(c, g, mul(c, u, konst(c, u, LN2))); break;
    case IR_LOG2: out[0] = divide(c, g, mul(c, x, konst(c, x, LN2))); break;
    case IR_SQRT: out[0] = divide(c, g, mul(c, u, konst(c, u, 2))); break;
    case IR_RECIP: out[0] = neg(c, mul(c, g, mul(c, u, u))); break;
    case IR_SIN: out[0] = mul(c, g, n_unary(c, IR_SIN, n_alu(c, IR_SUB, konst(c, x, HALF_PI), x))); break;
    case IR_WHERE: {
      node z = konst(c, g, 0);
      out[1] = n_where(c, x, g, z);
      out[2] = n_where(c, x, z, g);
      break;
    }
    case IR_CAST: /* only float sources carry gradients; the gradient comes back in their dtype */
      if (ir_scalar_is_float(IR_DT_SCALAR(x->dt))) out[0] = n_cast(c, g, IR_DT_SCALAR(x->dt));
      break;
    case IR_BUFFERIZE:
    case IR_CONTIGUOUS: out[0] = g; break;
    case IR_RESHAPE: out[0] = n_reshape(c, g, t_shape(c, x)); break;
    case IR_EXPAND: out[0] = expand_grad(c, u, g); break;
    case IR_PERMUTE: out[0] = permute_grad(c, u, g); break;
    case IR_PAD: out[0] = pad_grad(c, u, g); break;
    case IR_SHRINK: out[0] = shrink_grad(c, u, g); break;
    case IR_FLIP: out[0] = flip_grad(c, u, g); break;
    case IR_REDUCE_AXIS: out[0] = reduce_grad(c, u, g); break;
    default: return true; /* comparisons, bit ops, THREEFRY, BITCAST, TRUNC, leaves: no gradient */
  }
  for (unsigned i = 0; i < u->nsrc && i < 3; i++)
    if (!out[i] && u->op != IR_WHERE && u->op != IR_CAST) return false;
  return true;
}
