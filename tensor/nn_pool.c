/* tensor/nn_pool.c: sliding windows over the last two axes from movement ops only (tinygrad's
 * _pool), the building block of conv2d and max_pool2d: no im2col buffer, and the backward of a
 * window is autograd's movement-op rules (an expand becomes a sum, a shrink a pad).
 *
 * x (..., H, W) -> (..., OH, OW, KH, KW) with O = ceil((I - (K-1)) / S). */
#include <string.h>

#include "tensor/nn.h"

static int64_t ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Kernel wider than the stride: repeat each axis r times so that, read with a row length of
 * I*f + 1, consecutive rows are shifted by one element; row k then holds the window offsets k. */
static bg_tensor *pool_overlapping(bg_tensor *x, const int64_t *k, const int64_t *s, const int64_t *o) {
  unsigned nd = bg_tn_ndim(x), lead = nd - 2;
  const int64_t *xs = bg_tn_shape(x);
  int64_t in[2] = {xs[lead], xs[lead + 1]}, f[2], r[2], sh[BG_MAX_DIMS + 2], b[BG_MAX_DIMS + 2][2];
  for (unsigned a = 0; a < 2; a++) {
    f[a] = 1 + (o[a] * s[a] > in[a] - (k[a] - 1));
    r[a] = ceildiv(k[a] * (in[a] * f[a] + 1), in[a]);
  }
  /* repeat: (..., H, W) -> (..., 1, H, 1, W) -> (..., rH, H, rW, W) -> (..., rH*H, rW*W) */
  memcpy(sh, xs, lead * sizeof *sh);
  int64_t *t = sh + lead;
  t[0] = 1, t[1] = in[0], t[2] = 1, t[3] = in[1];
  x = bg_tn_reshape(x, lead + 4, sh);
  t[0] = r[0], t[2] = r[1];
  x = bg_tn_expand(x, lead + 4, sh);
  t[0] = r[0] * in[0], t[1] = r[1] * in[1];
  x = bg_tn_reshape(x, lead + 2, sh);
  /* rows of length I*f + 1: (..., K, I*f+1) per axis */
  memset(b, 0, sizeof b);
  for (unsigned i = 0; i < lead; i++) b[i][1] = xs[i];
  for (unsigned a = 0; a < 2; a++) b[lead + a][1] = k[a] * (in[a] * f[a] + 1);
  x = bg_tn_shrink(x, b);
  t[0] = k[0], t[1] = in[0] * f[0] + 1, t[2] = k[1], t[3] = in[1] * f[1] + 1;
  x = bg_tn_reshape(x, lead + 4, sh);
  /* stride: keep O*S of each row, split it (O, S) and keep offset 0 */
  for (unsigned a = 0; a < 2; a++) {
    b[lead + 2 * a][0] = 0, b[lead + 2 * a][1] = k[a];
    b[lead + 2 * a + 1][0] = 0, b[lead + 2 * a + 1][1] = o[a] * s[a];
  }
  x = bg_tn_shrink(x, b);
  int64_t *u = sh + lead;
  u[0] = k[0], u[1] = o[0], u[2] = s[0], u[3] = k[1], u[4] = o[1], u[5] = s[1];
  x = bg_tn_reshape(x, lead + 6, sh);
  for (unsigned a = 0; a < 6; a++) b[lead + a][0] = 0, b[lead + a][1] = a % 3 == 2 ? 1 : u[a];
  x = bg_tn_shrink(x, b);
  u[0] = k[0], u[1] = o[0], u[2] = k[1], u[3] = o[1];
  x = bg_tn_reshape(x, lead + 4, sh);
  /* (..., KH, OH, KW, OW) -> (..., OH, OW, KH, KW) */
  unsigned order[BG_MAX_DIMS];
  for (unsigned i = 0; i < lead; i++) order[i] = i;
  order[lead] = lead + 1, order[lead + 1] = lead + 3, order[lead + 2] = lead, order[lead + 3] = lead + 2;
  return bg_tn_permute(x, order);
}

/* Kernel no wider than the stride: pad or crop each axis to O*S, split it (O, S), keep K. */
static bg_tensor *pool_disjoint(bg_tensor *x, const int64_t *k, const int64_t *s, const int64_t *o) {
  unsigned nd = bg_tn_ndim(x), lead = nd - 2;
  const int64_t *xs = bg_tn_shape(x);
  int64_t p[BG_MAX_DIMS + 2][2], sh[BG_MAX_DIMS + 2];
  memset(p, 0, sizeof p);
  for (unsigned a = 0; a < 2; a++) p[lead + a][1] = o[a] * s[a] - xs[lead + a]; /* negative: crop */
  x = bg_tn_pad(x, p);
  memcpy(sh, bg_tn_shape(x), lead * sizeof *sh);
  sh[lead] = o[0], sh[lead + 1] = s[0], sh[lead + 2] = o[1], sh[lead + 3] = s[1];
  x = bg_tn_reshape(x, lead + 4, sh);
  int64_t b[BG_MAX_DIMS + 2][2];
  for (unsigned i = 0; i < lead + 4; i++) b[i][0] = 0, b[i][1] = sh[i];
  b[lead + 1][1] = k[0], b[lead + 3][1] = k[1];
  x = bg_tn_shrink(x, b);
  unsigned order[BG_MAX_DIMS];
  for (unsigned i = 0; i < lead; i++) order[i] = i;
  order[lead] = lead, order[lead + 1] = lead + 2, order[lead + 2] = lead + 1, order[lead + 3] = lead + 3;
  return bg_tn_permute(x, order);
}

bg_tensor *nn_pool(const char *op, bg_tensor *x, const int64_t *k, const int64_t *s) {
  unsigned nd = bg_tn_ndim(x);
  const int64_t *xs = bg_tn_shape(x);
  if (nd < 2 || nd + 2 > BG_MAX_DIMS)
    return nn_fail(x, "%s: input has %u axes: need 2 to %d (the window slides over the last two)", op, nd, BG_MAX_DIMS - 2);
  int64_t o[2];
  for (unsigned a = 0; a < 2; a++) {
    int64_t in = xs[nd - 2 + a];
    if (k[a] < 1 || s[a] < 1 || k[a] > in)
      return nn_fail(x, "%s: kernel %lldx%lld with stride %lldx%lld does not fit the input", op, (long long)k[0],
                     (long long)k[1], (long long)s[0], (long long)s[1]);
    o[a] = ceildiv(in - (k[a] - 1), s[a]);
  }
  bool overlap = k[0] > s[0] || k[1] > s[1];
  return overlap ? pool_overlapping(x, k, s, o) : pool_disjoint(x, k, s, o);
}
