/* tensor/nn_conv.c: general convolution over 1 to 3 spatial axes (ONNX Conv / ConvTranspose) from
 * public tensor ops, as tinygrad's Tensor.conv2d and conv_transpose2d: the windows of the padded input
 * (nn_windows: stride, dilation), broadcast against the weight per group, one sum. The transpose is a
 * conv of the input with zeros inserted between elements (stride), padded by (K-1)*D - pad, with the
 * weight's kernel flipped and its channel axes swapped per group. Autograd differentiates both op by op. */
#include <string.h>

#include "tensor/nn.h"

typedef struct conv_args {
  unsigned nk;
  int64_t groups, s[3], d[3], pads[BG_MAX_DIMS][2]; /* pads per axis of x (0 on N and C) */
} conv_args;

/* x (N, Cin, D...) and w (Cout, Cin/groups, K...) checked; pads may be negative (a crop). */
static bg_tensor *conv_core(bg_tensor *x, bg_tensor *w, bg_tensor *bias, const conv_args *a) {
  unsigned nk = a->nk;
  int64_t n = x->shape[0], cin = x->shape[1], cout = w->shape[0], g = a->groups, cg = cin / g, f = cout / g;
  bool pad = false;
  for (unsigned i = 0; i < 2 + nk; i++) pad |= a->pads[i][0] || a->pads[i][1];
  if (pad) x = bg_tn_pad_mode(x, a->pads, BG_PAD_CONSTANT, 0);
  const int64_t *k = w->shape + 2;
  bg_tensor *p = nn_windows("conv", x, nk, k, a->s, a->d); /* (N, Cin, O..., K...) */
  if (t_dead(p)) return p;
  int64_t o[3] = {1, 1, 1}, on = 1, kn = 1;
  for (unsigned i = 0; i < nk; i++) o[i] = p->shape[2 + i], on *= o[i], kn *= k[i];
  /* (N, G, Cg, 1, O..., K...) -> expand F -> (N, G, F, O..., Cg, K...); three spatial axes flatten O and K
   * so the rank stays within BG_MAX_DIMS. */
  unsigned sp = nk <= 2 ? nk : 1;
  int64_t sh[BG_MAX_DIMS] = {n, g, cg, 1}, wsh[BG_MAX_DIMS] = {1, g, f};
  for (unsigned i = 0; i < sp; i++) {
    sh[4 + i] = nk <= 2 ? o[i] : on;
    sh[4 + sp + i] = nk <= 2 ? k[i] : kn;
    wsh[3 + i] = 1;
    wsh[4 + sp + i] = sh[4 + sp + i];
  }
  wsh[3 + sp] = cg;
  unsigned r = 4 + 2 * sp;
  p = bg_tn_reshape(p, r, sh);
  sh[3] = f;
  p = bg_tn_expand(p, r, sh);
  unsigned order[BG_MAX_DIMS] = {0, 1, 3};
  for (unsigned i = 0; i < sp; i++) order[3 + i] = 4 + i, order[4 + sp + i] = 4 + sp + i;
  order[3 + sp] = 2;
  p = bg_tn_permute(p, order);
  bg_tensor *prod = bg_tn_mul(p, bg_tn_reshape(w, r, wsh));
  uint32_t mask = 0;
  for (unsigned i = 3 + sp; i < r; i++) mask |= 1u << i;
  int64_t osh[2 + 3] = {n, cout};
  memcpy(osh + 2, o, nk * sizeof *o);
  bg_tensor *out = bg_tn_reshape(bg_tn_sum(prod, mask, true), 2 + nk, osh);
  if (bias) {
    int64_t bsh[2 + 3] = {1, cout, 1, 1, 1};
    out = bg_tn_add(out, bg_tn_reshape(bias, 2 + nk, bsh));
  }
  /* A layer output is a kernel boundary: the next layer reads every element many times. */
  return bg_tn_contiguous(out);
}

/* Shared checks: ranks, groups, bias; fills a->nk, groups, stride, dilation. wch: the weight axis that holds
 * the input channels per group (1 for conv, none for transpose where axis 0 holds all Cin). */
static bool conv_check(const char *op, bg_tensor *x, bg_tensor *w, bg_tensor *bias, const bg_conv_opts *o,
                       bool transpose, conv_args *a) {
  char xs[160], ws[160];
  nn_shape_str(x, xs, sizeof xs);
  nn_shape_str(w, ws, sizeof ws);
  memset(a, 0, sizeof *a);
  if (!o) {
    nn_fail(x, "%s: options are NULL", op);
    return false;
  }
  if (w->ndim < 3 || w->ndim > 5 || x->ndim != w->ndim) {
    nn_fail(x, "%s: input %s and weight %s: need (N,C,D...) and a weight of the same rank with 1 to 3 spatial axes",
            op, xs, ws);
    return false;
  }
  a->nk = w->ndim - 2;
  a->groups = o->groups ? o->groups : 1;
  int64_t cin = x->shape[1], g = a->groups;
  if (cin % g) {
    nn_fail(x, "%s: input %s: channels %lld not divisible by groups %lld", op, xs, (long long)cin, (long long)g);
    return false;
  }
  if (transpose ? w->shape[0] != cin : w->shape[1] * g != cin) {
    nn_fail(x, "%s: input %s and weight %s with groups %lld: weight axis %d must be %lld", op, xs, ws, (long long)g,
            transpose ? 0 : 1, transpose ? (long long)cin : (long long)(cin / g));
    return false;
  }
  if (!transpose && w->shape[0] % g) {
    nn_fail(x, "%s: weight %s: output channels %lld not divisible by groups %lld", op, ws, (long long)w->shape[0],
            (long long)g);
    return false;
  }
  int64_t cout = transpose ? w->shape[1] * g : w->shape[0];
  if (bias && (bias->ndim != 1 || bias->shape[0] != cout)) {
    char bs[160];
    nn_shape_str(bias, bs, sizeof bs);
    nn_fail(x, "%s: bias %s for weight %s: expected (%lld)", op, bs, ws, (long long)cout);
    return false;
  }
  for (unsigned i = 0; i < a->nk; i++) {
    a->s[i] = o->stride[i] ? o->stride[i] : 1;
    a->d[i] = o->dilation[i] ? o->dilation[i] : 1;
    if (a->s[i] < 1 || a->d[i] < 1 || w->shape[2 + i] < 1) {
      nn_fail(x, "%s: spatial axis %u: stride %lld, dilation %lld, kernel %lld: need each >= 1", op, i,
              (long long)a->s[i], (long long)a->d[i], (long long)w->shape[2 + i]);
      return false;
    }
  }
  return true;
}

bg_tensor *bg_tn_conv(bg_tensor *x, bg_tensor *w, bg_tensor *bias, const bg_conv_opts *o) {
  bg_tensor *ts[3] = {x, w, bias}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  conv_args a;
  if (!conv_check("conv", x, w, bias, o, false, &a)) return &x->c->err_t;
  for (unsigned i = 0; i < a.nk; i++) {
    a.pads[2 + i][0] = o->pads[i][0], a.pads[2 + i][1] = o->pads[i][1];
    if (o->pads[i][0] < 0 || o->pads[i][1] < 0)
      return nn_fail(x, "conv: spatial axis %u: pads (%lld, %lld): need pads >= 0", i, (long long)o->pads[i][0],
                     (long long)o->pads[i][1]);
  }
  return conv_core(x, w, bias, &a);
}

bg_tensor *bg_tn_conv_transpose(bg_tensor *x, bg_tensor *w, bg_tensor *bias, const bg_conv_opts *o) {
  bg_tensor *ts[3] = {x, w, bias}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  conv_args a;
  if (!conv_check("conv_transpose", x, w, bias, o, true, &a)) return &x->c->err_t;
  unsigned nk = a.nk;
  int64_t g = a.groups, cin = x->shape[1], f = w->shape[1];
  for (unsigned i = 0; i < nk; i++) {
    int64_t k = w->shape[2 + i], op = o->output_padding[i], pb = o->pads[i][0], pe = o->pads[i][1];
    if (op < 0 || (op >= a.s[i] && op >= a.d[i]) || pb < 0 || pe < 0)
      return nn_fail(x, "conv_transpose: spatial axis %u: output_padding %lld, pads (%lld, %lld): need pads >= 0 and "
                        "0 <= output_padding < stride or dilation", i, (long long)op, (long long)pb, (long long)pe);
    a.pads[2 + i][0] = (k - 1) * a.d[i] - pb;
    a.pads[2 + i][1] = (k - 1) * a.d[i] - pe + op;
  }
  /* weight (Cin, F, K...) -> (G, Cin/G, F, K...) -> (G, F, Cin/G, K...), kernel flipped -> (G*F, Cin/G, K...) */
  int64_t wsh[BG_MAX_DIMS] = {g, cin / g, f};
  memcpy(wsh + 3, w->shape + 2, nk * sizeof *wsh);
  bg_tensor *wt = bg_tn_reshape(w, 3 + nk, wsh);
  unsigned order[BG_MAX_DIMS] = {0, 2, 1, 3, 4, 5};
  wt = bg_tn_permute(wt, order);
  uint32_t flip = 0;
  for (unsigned i = 0; i < nk; i++) flip |= 1u << (3 + i);
  wt = bg_tn_flip(wt, flip);
  wsh[0] = g * f, wsh[1] = cin / g;
  memcpy(wsh + 2, w->shape + 2, nk * sizeof *wsh);
  wt = bg_tn_reshape(wt, 2 + nk, wsh);
  /* stride: (D) -> (D, 1) -> pad -> (D, S) -> (D*S) -> drop the last S-1 zeros */
  bool strided = false;
  for (unsigned i = 0; i < nk; i++) strided |= a.s[i] > 1;
  if (strided) {
    int64_t sh[BG_MAX_DIMS] = {x->shape[0], cin}, p[BG_MAX_DIMS][2], b[BG_MAX_DIMS][2];
    memset(p, 0, sizeof p);
    memset(b, 0, sizeof b);
    for (unsigned i = 0; i < nk; i++) sh[2 + 2 * i] = x->shape[2 + i], sh[3 + 2 * i] = 1, p[3 + 2 * i][1] = a.s[i] - 1;
    bg_tensor *y = bg_tn_pad(bg_tn_reshape(x, 2 + 2 * nk, sh), p);
    for (unsigned i = 0; i < nk; i++) sh[2 + i] = x->shape[2 + i] * a.s[i];
    y = bg_tn_reshape(y, 2 + nk, sh);
    b[0][1] = sh[0], b[1][1] = sh[1];
    for (unsigned i = 0; i < nk; i++) b[2 + i][1] = sh[2 + i] - (a.s[i] - 1);
    x = bg_tn_shrink(y, b);
    if (t_dead(x)) return x;
  }
  for (unsigned i = 0; i < nk; i++) a.s[i] = 1;
  return conv_core(x, wt, bias, &a);
}
