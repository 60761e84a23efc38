/* onnx/ox_ops_nn.c: neural-network operators (MatMul, Gemm, Conv, ConvTranspose, MaxPool, AveragePool, global pools,
 * BatchNormalization, InstanceNormalization, LayerNormalization, LpNormalization). */
#include <math.h>
#include <string.h>

#include "ox.h"
#include "ox_ops.h"

int ox_op_matmul(ox_ctx *x) { return ox_set(x, 0, bg_tn_matmul(ox_in(x, 0), ox_in(x, 1))); }

static bg_tensor *t2(bg_tensor *a) {
  static const unsigned o[2] = {1, 0};
  return bg_tn_permute(a, o);
}

int ox_op_gemm(ox_ctx *x) {
  double alpha, beta;
  int64_t ta, tb;
  int r = ox_attr_float(x, "alpha", 1.0, &alpha);
  if (r >= 0) r = ox_attr_float(x, "beta", 1.0, &beta);
  if (r >= 0) r = ox_attr_int(x, "transA", 0, &ta);
  if (r >= 0) r = ox_attr_int(x, "transB", 0, &tb);
  if (r < 0) return r;
  bg_tensor *a = ox_in(x, 0), *b = ox_in(x, 1), *c = ox_in(x, 2);
  if (bg_tn_ndim(a) != 2 || bg_tn_ndim(b) != 2) return ox_err(x, BG_EFORMAT, "A and B must be 2-D");
  if (ta) a = t2(a);
  if (tb) b = t2(b);
  bg_tensor *o = bg_tn_matmul(a, b);
  if (alpha != 1.0) o = bg_tn_mulc(o, alpha);
  if (c) o = bg_tn_add(o, beta != 1.0 ? bg_tn_mulc(c, beta) : c);
  return ox_set(x, 0, o);
}

/* Spatial options shared by Conv, ConvTranspose and the pools: kernel_shape, strides, dilations, pads and auto_pad
 * (SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning; Operators.md "Conv"). in: spatial input
 * sizes; k: kernel sizes (from the weights where kernel_shape is absent). */
typedef struct spatial {
  unsigned n;
  int64_t k[3], s[3], d[3], p[3][2];
} spatial;

static int spatial_opts(ox_ctx *x, unsigned n, const int64_t *in, const int64_t *wk, spatial *o, bool transpose) {
  int64_t v[6];
  size_t c;
  char ap[16];
  memset(o, 0, sizeof *o);
  if (n < 1 || n > 3) return ox_unsup(x, "%u spatial axes (1 to 3 supported)", n);
  o->n = n;
  int r = ox_attr_ints(x, "kernel_shape", v, 3, &c);
  if (r < 0) return r;
  for (unsigned i = 0; i < n; i++) o->k[i] = c ? v[i] : wk ? wk[i] : 0;
  if (c && c != n) return ox_err(x, BG_EFORMAT, "kernel_shape has %zu entries for %u spatial axes", c, n);
  if (!c && !wk) return ox_err(x, BG_EFORMAT, "attribute 'kernel_shape' is missing");
  r = ox_attr_ints(x, "strides", v, 3, &c);
  if (r < 0) return r;
  if (c && c != n) return ox_err(x, BG_EFORMAT, "strides has %zu entries for %u spatial axes", c, n);
  for (unsigned i = 0; i < n; i++) o->s[i] = c ? v[i] : 1;
  r = ox_attr_ints(x, "dilations", v, 3, &c);
  if (r < 0) return r;
  if (c && c != n) return ox_err(x, BG_EFORMAT, "dilations has %zu entries for %u spatial axes", c, n);
  for (unsigned i = 0; i < n; i++) o->d[i] = c ? v[i] : 1;
  r = ox_attr_ints(x, "pads", v, 6, &c);
  if (r < 0) return r;
  if (c && c != 2 * n) return ox_err(x, BG_EFORMAT, "pads has %zu entries for %u spatial axes", c, n);
  for (unsigned i = 0; i < n; i++) {
    o->p[i][0] = c ? v[i] : 0;
    o->p[i][1] = c ? v[i + n] : 0;
  }
  r = ox_attr_string(x, "auto_pad", "NOTSET", ap, sizeof ap);
  if (r < 0) return r;
  if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
    for (unsigned i = 0; i < n; i++) {
      int64_t ek = (o->k[i] - 1) * o->d[i] + 1, total;
      if (transpose) {
        total = o->s[i] * (in[i] - 1) + ek - in[i] * o->s[i];
      } else {
        int64_t out = (in[i] + o->s[i] - 1) / o->s[i];
        total = (out - 1) * o->s[i] + ek - in[i];
      }
      if (total < 0) total = 0;
      bool upper = ap[5] == 'U';
      o->p[i][0] = upper ? total / 2 : total - total / 2;
      o->p[i][1] = total - o->p[i][0];
    }
  } else if (!strcmp(ap, "VALID")) {
    for (unsigned i = 0; i < n; i++) o->p[i][0] = o->p[i][1] = 0;
  } else if (strcmp(ap, "NOTSET")) {
    return ox_err(x, BG_EFORMAT, "attribute 'auto_pad' is '%s'", ap);
  }
  return 0;
}

static int conv_common(ox_ctx *x, bool transpose) {
  bg_tensor *in = ox_in(x, 0), *w = ox_in(x, 1), *b = ox_in(x, 2);
  unsigned nd = bg_tn_ndim(in);
  if (nd < 3 || bg_tn_ndim(w) != nd) return ox_err(x, BG_EFORMAT, "X of rank %u and W of rank %u", nd, bg_tn_ndim(w));
  spatial s;
  int r = spatial_opts(x, nd - 2, bg_tn_shape(in) + 2, bg_tn_shape(w) + 2, &s, transpose);
  if (r < 0) return r;
  int64_t g;
  r = ox_attr_int(x, "group", 1, &g);
  if (r < 0) return r;
  if (g < 1) return ox_err(x, BG_EFORMAT, "attribute 'group' is %lld", (long long)g);
  bg_conv_opts o = {.groups = (unsigned)g};
  for (unsigned i = 0; i < s.n; i++) {
    o.stride[i] = s.s[i];
    o.dilation[i] = s.d[i];
    o.pads[i][0] = s.p[i][0];
    o.pads[i][1] = s.p[i][1];
  }
  if (transpose) {
    int64_t op[3], osh[3];
    size_t c, cs;
    r = ox_attr_ints(x, "output_padding", op, 3, &c);
    if (r >= 0) r = ox_attr_ints(x, "output_shape", osh, 3, &cs);
    if (r < 0) return r;
    for (unsigned i = 0; i < s.n; i++) o.output_padding[i] = c ? op[i] : 0;
    if (cs) {
      /* total padding from the requested output shape (Operators.md "ConvTranspose") */
      for (unsigned i = 0; i < s.n; i++) {
        int64_t total = s.s[i] * (bg_tn_shape(in)[2 + i] - 1) + o.output_padding[i] + ((s.k[i] - 1) * s.d[i] + 1) -
                        osh[i];
        /* the reference's split (onnx/reference/ops/op_conv_transpose.py, floor division); a negative end pad
         * (an output_shape past the full result) is extra output padding */
        int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
        bool upper = ox_attr(x, "auto_pad") && ox_attr(x, "auto_pad")->s.len == 10 &&
                     !memcmp(ox_attr(x, "auto_pad")->s.data, "SAME_UPPER", 10);
        o.pads[i][0] = upper ? half : total - half;
        o.pads[i][1] = upper ? total - half : half;
        if (o.pads[i][1] < 0) {
          o.output_padding[i] -= o.pads[i][1];
          o.pads[i][1] = 0;
        }
        if (o.pads[i][0] < 0) return ox_unsup(x, "output_shape that needs a negative begin padding");
      }
    }
    return ox_set(x, 0, bg_tn_conv_transpose(in, w, b, &o));
  }
  return ox_set(x, 0, bg_tn_conv(in, w, b, &o));
}

int ox_op_conv(ox_ctx *x) { return conv_common(x, !strcmp(x->node->pb->op_type, "ConvTranspose")); }

int ox_op_pool(ox_ctx *x) {
  bool avg = !strcmp(x->node->pb->op_type, "AveragePool");
  bg_tensor *in = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(in);
  if (nd < 3) return ox_err(x, BG_EFORMAT, "X of rank %u", nd);
  spatial s;
  int r = spatial_opts(x, nd - 2, bg_tn_shape(in) + 2, NULL, &s, false);
  if (r < 0) return r;
  int64_t ceil_mode, cip, order;
  r = ox_attr_int(x, "ceil_mode", 0, &ceil_mode);
  if (r >= 0) r = ox_attr_int(x, "count_include_pad", 0, &cip);
  if (r >= 0) r = ox_attr_int(x, "storage_order", 0, &order);
  if (r < 0) return r;
  if (x->nout > 1 && x->node->out[1] >= 0) return ox_unsup(x, "MaxPool's Indices output");
  bg_pool_opts o = {.nk = s.n, .ceil_mode = ceil_mode != 0, .count_include_pad = cip != 0};
  for (unsigned i = 0; i < s.n; i++) {
    o.kernel[i] = s.k[i];
    o.stride[i] = s.s[i];
    o.dilation[i] = s.d[i];
    o.pads[i][0] = s.p[i][0];
    o.pads[i][1] = s.p[i][1];
  }
  if (avg) {
    return ox_set(x, 0, bg_tn_avg_pool(in, &o));
  }
  return ox_set(x, 0, bg_tn_max_pool(in, &o));
}

int ox_op_global_pool(ox_ctx *x) {
  bg_tensor *in = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(in);
  if (nd < 3) return ox_err(x, BG_EFORMAT, "X of rank %u", nd);
  uint32_t mask = (uint32_t)((1u << nd) - 1) & ~3u;
  bool avg = !strcmp(x->node->pb->op_type, "GlobalAveragePool");
  return ox_set(x, 0, avg ? bg_tn_mean(in, mask, true) : bg_tn_max(in, mask, true));
}

int ox_op_batchnorm(ox_ctx *x) {
  double eps;
  int64_t training;
  int r = ox_attr_float(x, "epsilon", 1e-5, &eps);
  if (r >= 0) r = ox_attr_int(x, "training_mode", 0, &training);
  if (r < 0) return r;
  if (training || (x->nout > 1 && x->m->opset >= 14)) return ox_unsup(x, "training_mode (a training op)");
  if (x->nout > 1 && x->m->opset < 9) {
    int64_t is_test;
    r = ox_attr_int(x, "is_test", 0, &is_test);
    if (r < 0) return r;
    if (!is_test) return ox_unsup(x, "training outputs (a training op)");
  }
  bg_tensor *in = ox_in(x, 0);
  if (bg_tn_ndim(in) < 2) return ox_err(x, BG_EFORMAT, "X of rank %u", bg_tn_ndim(in));
  return ox_set(x, 0, bg_tn_batchnorm(in, ox_in(x, 1), ox_in(x, 2), ox_in(x, 3), ox_in(x, 4), eps));
}

/* (x - mean) / sqrt(var + eps) over the mask's axes (population variance). */
static bg_tensor *normalize(bg_tensor *a, uint32_t mask, double eps) {
  bg_tensor *mu = bg_tn_mean(a, mask, true);
  bg_tensor *d = bg_tn_sub(a, mu);
  bg_tensor *var = bg_tn_mean(bg_tn_mul(d, d), mask, true);
  return bg_tn_mul(d, bg_tn_reciprocal(bg_tn_sqrt(bg_tn_addc(var, eps))));
}

int ox_op_instancenorm(ox_ctx *x) {
  double eps;
  int r = ox_attr_float(x, "epsilon", 1e-5, &eps);
  if (r < 0) return r;
  bg_tensor *a = ox_in(x, 0), *sc = ox_in(x, 1), *b = ox_in(x, 2);
  unsigned nd = bg_tn_ndim(a);
  if (nd < 3) return ox_err(x, BG_EFORMAT, "input of rank %u", nd);
  int64_t cs[BG_MAX_DIMS];
  cs[0] = bg_tn_shape(a)[1];
  for (unsigned d = 1; d + 1 < nd; d++) cs[d] = 1;
  bg_tensor *n = normalize(a, (uint32_t)((1u << nd) - 1) & ~3u, eps);
  return ox_set(x, 0, bg_tn_add(bg_tn_mul(n, bg_tn_reshape(sc, nd - 1, cs)), bg_tn_reshape(b, nd - 1, cs)));
}

int ox_op_layernorm(ox_ctx *x) {
  double eps;
  int64_t axis, stash;
  int r = ox_attr_float(x, "epsilon", 1e-5, &eps);
  if (r >= 0) r = ox_attr_int(x, "axis", -1, &axis);
  if (r >= 0) r = ox_attr_int(x, "stash_type", 1, &stash);
  if (r < 0) return r;
  if (stash != 1) return ox_unsup(x, "stash_type %lld (only float32 statistics)", (long long)stash);
  bg_tensor *a = ox_in(x, 0);
  unsigned nd = bg_tn_ndim(a);
  int ax;
  r = ox_axis(x, axis, nd, &ax);
  if (r < 0) return r;
  /* statistics in float32 (stash_type 1), the result in the input's dtype; Mean and InvStdDev keep the normalized
   * axes as 1 (Operators.md "LayerNormalization") */
  enum bg_dtype dt = bg_tn_dtype(a);
  bg_tensor *af = dt == BG_FLOAT32 ? a : bg_tn_cast(a, BG_FLOAT32);
  uint32_t mask = (uint32_t)((1u << nd) - 1) & ~((1u << ax) - 1);
  bg_tensor *mu = bg_tn_mean(af, mask, true);
  bg_tensor *d = bg_tn_sub(af, mu);
  bg_tensor *inv = bg_tn_reciprocal(bg_tn_sqrt(bg_tn_addc(bg_tn_mean(bg_tn_mul(d, d), mask, true), eps)));
  bg_tensor *n = bg_tn_mul(d, inv);
  if (dt != BG_FLOAT32) n = bg_tn_cast(n, dt);
  n = bg_tn_mul(n, ox_in(x, 1));
  if (ox_in(x, 2)) n = bg_tn_add(n, ox_in(x, 2));
  r = ox_set(x, 0, n);
  if (r >= 0 && x->nout > 1) r = ox_set(x, 1, mu);
  if (r >= 0 && x->nout > 2) r = ox_set(x, 2, inv);
  return r;
}

int ox_op_lpnorm(ox_ctx *x) {
  int64_t axis, p;
  int r = ox_attr_int(x, "axis", -1, &axis);
  if (r >= 0) r = ox_attr_int(x, "p", 2, &p);
  if (r < 0) return r;
  bg_tensor *a = ox_in(x, 0);
  int ax;
  r = ox_axis(x, axis, bg_tn_ndim(a), &ax);
  if (r < 0) return r;
  if (p == 2) return ox_set(x, 0, bg_tn_div(a, bg_tn_sqrt(bg_tn_sum(bg_tn_mul(a, a), 1u << ax, true))));
  if (p != 1) return ox_err(x, BG_EFORMAT, "attribute 'p' is %lld, expected 1 or 2", (long long)p);
  return ox_set(x, 0, bg_tn_div(a, bg_tn_sum(bg_tn_abs(a), 1u << ax, true)));
}
