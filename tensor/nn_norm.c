/* tensor/nn_norm.c: ONNX LayerNormalization and InstanceNormalization from public tensor ops, as
 * tinygrad's Tensor.layernorm: (x - mean) / sqrt(var + eps) with the population variance, then scale
 * and bias. Half inputs are normalized in float32 (ONNX's stash_type 1) and cast back. */
#include "tensor/nn.h"

static bool is_float(enum bg_dtype t) {
  return t == BG_FLOAT16 || t == BG_FLOAT32 || t == BG_FLOAT64 || t == BG_BFLOAT16;
}

/* x normalized over the axes of mask (keepdim statistics), in float32 for 16-bit floats. */
static bg_tensor *normalize(bg_tensor *x, uint32_t mask, double eps) {
  bg_tensor *xf = x->dt == BG_FLOAT16 || x->dt == BG_BFLOAT16 ? bg_tn_cast(x, BG_FLOAT32) : x;
  bg_tensor *d = bg_tn_sub(xf, bg_tn_mean(xf, mask, true));
  bg_tensor *var = bg_tn_mean(bg_tn_mul(d, d), mask, true);
  return bg_tn_mul(d, bg_tn_reciprocal(bg_tn_sqrt(bg_tn_addc(var, eps))));
}

bg_tensor *bg_tn_layernorm(bg_tensor *x, bg_tensor *scale, bg_tensor *bias, int axis_in, double eps) {
  bg_tensor *ts[3] = {x, scale, bias}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  char xs[160];
  nn_shape_str(x, xs, sizeof xs);
  if (!is_float(x->dt)) return nn_fail(x, "layernorm: input %s dtype %s: need a float dtype", xs, bg_dtype_name(x->dt));
  unsigned axis;
  if (!t_axis(x, "layernorm", axis_in, &axis)) return &x->c->err_t;
  /* scale and bias broadcast against the normalized shape x.shape[axis:] (ONNX) */
  bg_tensor *pr[2] = {scale, bias};
  for (unsigned i = 0; i < 2; i++) {
    bg_tensor *p = pr[i];
    if (!p) continue;
    bool ok = p->ndim <= x->ndim - axis;
    for (unsigned j = 0; ok && j < p->ndim; j++) {
      int64_t e = p->shape[p->ndim - 1 - j], want = x->shape[x->ndim - 1 - j];
      ok = e == want || e == 1;
    }
    if (!ok) {
      char ps[160];
      nn_shape_str(p, ps, sizeof ps);
      return nn_fail(x, "layernorm: %s %s does not broadcast to the normalized axes %u.. of input %s", i ? "bias" : "scale",
                     ps, axis, xs);
    }
  }
  uint32_t mask = 0;
  for (unsigned i = axis; i < x->ndim; i++) mask |= 1u << i;
  bg_tensor *y = normalize(x, mask, eps);
  if (scale) y = bg_tn_mul(y, scale);
  if (bias) y = bg_tn_add(y, bias);
  return bg_tn_cast(y, x->dt);
}

bg_tensor *bg_tn_instancenorm(bg_tensor *x, bg_tensor *scale, bg_tensor *bias, double eps) {
  bg_tensor *ts[3] = {x, scale, bias}, *err;
  if (!nn_usable(ts, 3, true, &err)) return err;
  char xs[160];
  nn_shape_str(x, xs, sizeof xs);
  if (!is_float(x->dt)) return nn_fail(x, "instancenorm: input %s dtype %s: need a float dtype", xs, bg_dtype_name(x->dt));
  if (x->ndim < 3) return nn_fail(x, "instancenorm: input %s: need (N,C,D...) with at least one spatial axis", xs);
  int64_t sh[BG_MAX_DIMS];
  for (unsigned i = 0; i < x->ndim; i++) sh[i] = i == 1 ? x->shape[1] : 1;
  bg_tensor *pr[2] = {scale, bias};
  for (unsigned i = 0; i < 2; i++)
    if (pr[i] && (pr[i]->ndim != 1 || pr[i]->shape[0] != x->shape[1])) {
      char ps[160];
      nn_shape_str(pr[i], ps, sizeof ps);
      return nn_fail(x, "instancenorm: %s %s for input %s: expected (%lld)", i ? "bias" : "scale", ps, xs,
                     (long long)x->shape[1]);
    }
  uint32_t mask = 0;
  for (unsigned i = 2; i < x->ndim; i++) mask |= 1u << i;
  bg_tensor *y = normalize(x, mask, eps);
  if (scale) y = bg_tn_mul(y, bg_tn_reshape(scale, x->ndim, sh));
  if (bias) y = bg_tn_add(y, bg_tn_reshape(bias, x->ndim, sh));
  return bg_tn_cast(y, x->dt);
}
