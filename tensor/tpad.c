/* tensor/tpad.c: padding modes (ONNX Pad, numpy.pad): constant with a value, reflect (mirror without
 * the edge, numpy 'reflect'), edge (repeat the edge) and wrap (circular), from movement ops.
 *
 * Reflect and wrap are periodic extensions of an axis of size n: wrap with period n, reflect with period
 * 2(n-1) (x[0..n-1] then x[n-2..1]). One period is built (x, or cat(x, flip(x)[1:n-1])), repeated by an
 * expand and a reshape as tinygrad's Tensor.repeat, and the window [-before, n+after) of the periodic
 * signal is shrunk out of it, so pads wider than the axis work as numpy's do. Negative pads remove
 * elements after the positive ones were added (ONNX reference op_pad.py: pad with the clipped pads, then
 * slice). */
#include <math.h>
#include <string.h>

#include "tensor/tensor_internal.h"

/* Pads axis ax of x by (pb, pe) >= 0 with mode (not constant). */
static bg_tensor *pad_axis(bg_tensor *x, unsigned ax, int64_t pb, int64_t pe, enum bg_pad_mode mode) {
  unsigned nd = x->ndim;
  int64_t n = x->shape[ax], b[BG_MAX_DIMS][2], sh[BG_MAX_DIMS];
  for (unsigned i = 0; i < nd; i++) b[i][0] = 0, b[i][1] = x->shape[i];
  if (mode == BG_PAD_EDGE || (mode == BG_PAD_REFLECT && n == 1)) { /* numpy reflects a single element as edge */
    bg_tensor *parts[3];
    unsigned np = 0;
    memcpy(sh, x->shape, nd * sizeof *sh);
    if (pb) {
      b[ax][0] = 0, b[ax][1] = 1, sh[ax] = pb;
      parts[np++] = bg_tn_expand(bg_tn_shrink(x, b), nd, sh);
    }
    parts[np++] = x;
    if (pe) {
      b[ax][0] = n - 1, b[ax][1] = n, sh[ax] = pe;
      parts[np++] = bg_tn_expand(bg_tn_shrink(x, b), nd, sh);
    }
    return np == 1 ? x : bg_tn_cat(parts, np, (int)ax);
  }
  bg_tensor *period = x;
  int64_t p = n;
  if (mode == BG_PAD_REFLECT && n > 2) {
    b[ax][0] = 1, b[ax][1] = n - 1;
    bg_tensor *parts[2] = {x, bg_tn_flip(bg_tn_shrink(x, b), 1u << ax)};
    period = bg_tn_cat(parts, 2, (int)ax);
    p = 2 * (n - 1);
  }
  int64_t start = ((-pb) % p + p) % p, len = pb + n + pe, reps = (start + len + p - 1) / p;
  if (reps > 1) { /* (..., P, ...) -> (..., 1, P, ...) -> (..., reps, P, ...) -> (..., reps*P, ...) */
    if (nd + 1 > BG_MAX_DIMS) return t_fail(x->c, "pad_mode: a wide %s pad needs one more axis than %d", "periodic", BG_MAX_DIMS);
    memcpy(sh, x->shape, ax * sizeof *sh);
    sh[ax] = 1, sh[ax + 1] = p;
    memcpy(sh + ax + 2, x->shape + ax + 1, (nd - ax - 1) * sizeof *sh);
    period = bg_tn_reshape(period, nd + 1, sh);
    sh[ax] = reps;
    period = bg_tn_expand(period, nd + 1, sh);
    memcpy(sh, x->shape, nd * sizeof *sh);
    sh[ax] = reps * p;
    period = bg_tn_reshape(period, nd, sh);
  }
  b[ax][0] = start, b[ax][1] = start + len;
  return bg_tn_shrink(period, b);
}

bg_tensor *bg_tn_pad_mode(bg_tensor *a, const int64_t (*pads)[2], enum bg_pad_mode mode, double value) {
  if (!a) return t_null_arg("pad_mode", "a", NULL);
  bg_tctx *c = a->c;
  if (t_dead(a)) return &c->err_t;
  if (!pads) return t_fail(c, "pad_mode: pads is NULL");
  if ((unsigned)mode > BG_PAD_WRAP) return t_fail(c, "pad_mode: mode %d: need constant, reflect, edge or wrap", (int)mode);
  tshape s = t_shape_of(a);
  SHSTR(ss, &s);
  int64_t pos[BG_MAX_DIMS][2], crop[BG_MAX_DIMS][2];
  bool any_pos = false, any_neg = false;
  for (unsigned i = 0; i < a->ndim; i++) {
    int64_t n = a->shape[i];
    if (BG_DIM_IS_VAR(n)) return t_fail(c, "pad_mode: shape %s: axis %u has a symbolic size", ss, i);
    for (unsigned j = 0; j < 2; j++) pos[i][j] = pads[i][j] > 0 ? pads[i][j] : 0;
    if (pads[i][0] + pads[i][1] + n < 0)
      return t_fail(c, "pad_mode: shape %s: axis %u pads (%lld, %lld) remove more than its %lld elements", ss, i,
                    (long long)pads[i][0], (long long)pads[i][1], (long long)n);
    if (mode != BG_PAD_CONSTANT && n == 0 && (pos[i][0] || pos[i][1]))
      return t_fail(c, "pad_mode: shape %s: axis %u is empty: only constant padding can grow it", ss, i);
    int64_t m = n + pos[i][0] + pos[i][1];
    crop[i][0] = pads[i][0] < 0 ? -pads[i][0] : 0;
    crop[i][1] = m - (pads[i][1] < 0 ? -pads[i][1] : 0);
    any_pos |= pos[i][0] || pos[i][1];
    any_neg |= pads[i][0] < 0 || pads[i][1] < 0;
  }
  bg_tensor *x = a;
  if (any_pos && mode == BG_PAD_CONSTANT) {
    x = bg_tn_pad(a, pos);
    if (value != 0) { /* padded positions are where a padded all-true mask is false */
      bg_tensor *in = bg_tn_pad(bg_tn_full(c, BG_BOOL, a->ndim, a->shape, 1), pos);
      x = bg_tn_where(in, x, bg_tn_full(c, a->dt, a->ndim, bg_tn_shape(x), value));
    }
  } else if (any_pos) {
    for (unsigned i = 0; i < a->ndim && !t_dead(x); i++)
      if (pos[i][0] || pos[i][1]) x = pad_axis(x, i, pos[i][0], pos[i][1], mode);
  }
  return any_neg ? bg_tn_shrink(x, crop) : x;
}
