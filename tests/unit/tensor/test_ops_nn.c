/* tests/unit/tensor/test_ops_nn.c: general conv / conv_transpose, max / avg pooling, layer and instance
 * norm on the device DEV names (CPU by default), each against plain nested C loops in double precision
 * written from the ONNX operator definitions (Conv, ConvTranspose, MaxPool, AveragePool,
 * LayerNormalization, InstanceNormalization), on seeded random data: 1-D, 2-D and 3-D, groups > 1,
 * dilation > 1, asymmetric pads, strides, output_padding, ceil_mode, count_include_pad on and off; one
 * fixed example from the ONNX operator docs (averagepool_2d_ceil); error messages; and central
 * finite-difference gradient checks (as test_autograd.c) of conv with groups and dilation, avg_pool,
 * layernorm and gather.
 *
 * Tolerances: float32 sums of at most a few hundred products against double loops: 1e-4 * (1 + |want|). */
#include "ops_ref.h"

static const double TOL = 1e-4;

/* ---------------- conv / conv_transpose ---------------- */

typedef struct convc {
  unsigned nk;
  int64_t n, cin, cout, g, d[3], k[3];
  bg_conv_opts o;
  bool bias;
} convc;

static int64_t opt(int64_t v) { return v ? v : 1; }

/* Weight (Cout, Cin/g, K...) for conv, (Cin, Cout/g, K...) for transpose. */
static void conv_run(const convc *t, bool transpose) {
  unsigned nk = t->nk, r = 2 + nk;
  int64_t g = t->g, cg = t->cin / g, f = t->cout / g;
  int64_t xs[5] = {t->n, t->cin}, ws[5] = {transpose ? t->cin : t->cout, transpose ? f : cg}, os[5] = {t->n, t->cout};
  int64_t s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, kn = 1;
  for (unsigned a = 0; a < nk; a++) {
    xs[2 + a] = t->d[a], ws[2 + a] = t->k[a], s[a] = opt(t->o.stride[a]), dl[a] = opt(t->o.dilation[a]), kn *= t->k[a];
    int64_t span = dl[a] * (t->k[a] - 1), pads = t->o.pads[a][0] + t->o.pads[a][1];
    os[2 + a] = transpose ? (t->d[a] - 1) * s[a] - pads + span + t->o.output_padding[a] + 1
                          : (t->d[a] + pads - span - 1) / s[a] + 1;
  }
  int64_t xn = numel_of(r, xs), wn = numel_of(r, ws), on = numel_of(r, os);
  float *x = rand_f(xn), *w = rand_f(wn), *b = rand_f(t->cout);
  bg_tensor *bt = t->bias ? up_f(1, &t->cout, b) : NULL;
  bg_conv_opts oo = t->o;
  oo.groups = (unsigned)g;
  bg_tensor *o = (transpose ? bg_tn_conv_transpose : bg_tn_conv)(up_f(r, xs, x), up_f(r, ws, w), bt, &oo);
  char what[128];
  snprintf(what, sizeof what, "%s %uD groups %lld k %lld s %lld d %lld pads (%lld,%lld)", transpose ? "conv_transpose" : "conv",
           nk, (long long)g, (long long)t->k[0], (long long)s[0], (long long)dl[0], (long long)t->o.pads[0][0],
           (long long)t->o.pads[0][1]);
  expect_shape(o, r, os, what);
  double *want = calloc((size_t)on, sizeof *want);
  int64_t sp[3] = {1, 1, 1}, osp[3] = {1, 1, 1}, kk[3] = {1, 1, 1}, kc[3], ic[3], oc[3];
  for (unsigned a = 0; a < nk; a++) sp[a] = t->d[a], osp[a] = os[2 + a], kk[a] = t->k[a];
  int64_t spn = sp[0] * sp[1] * sp[2], ospn = osp[0] * osp[1] * osp[2];
  for (int64_t n = 0; n < t->n; n++)
    for (int64_t co = 0; co < t->cout; co++)
      for (int64_t i = 0; i < ospn; i++) want[(n * t->cout + co) * ospn + i] = t->bias ? b[co] : 0;
  if (!transpose) {
    for (int64_t n = 0; n < t->n; n++)
      for (int64_t co = 0; co < t->cout; co++)
        for (int64_t op = 0; op < ospn; op++) {
          unravel(op, 3, osp, oc);
          double acc = 0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t kf = 0; kf < kn; kf++) {
              unravel(kf, 3, kk, kc);
              bool in = true;
              for (unsigned a = 0; a < 3; a++) {
                ic[a] = a < nk ? oc[a] * s[a] - t->o.pads[a][0] + kc[a] * dl[a] : 0;
                in &= ic[a] >= 0 && ic[a] < sp[a];
              }
              if (!in) continue;
              int64_t xc = co / f * cg + ci;
              acc += (double)x[(n * t->cin + xc) * spn + ravel(ic, 3, sp)] * w[(co * cg + ci) * kn + kf];
            }
          want[(n * t->cout + co) * ospn + op] += acc;
        }
  } else {
    for (int64_t n = 0; n < t->n; n++)
      for (int64_t ci = 0; ci < t->cin; ci++)
        for (int64_t ip = 0; ip < spn; ip++) {
          unravel(ip, 3, sp, ic);
          for (int64_t fo = 0; fo < f; fo++)
            for (int64_t kf = 0; kf < kn; kf++) {
              unravel(kf, 3, kk, kc);
              bool in = true;
              for (unsigned a = 0; a < 3; a++) {
                oc[a] = a < nk ? ic[a] * s[a] - t->o.pads[a][0] + kc[a] * dl[a] : 0;
                in &= oc[a] >= 0 && oc[a] < osp[a];
              }
              if (!in) continue;
              int64_t co = ci / cg * f + fo;
              want[(n * t->cout + co) * ospn + ravel(oc, 3, osp)] +=
                (double)x[(n * t->cin + ci) * spn + ip] * w[(ci * f + fo) * kn + kf];
            }
        }
  }
  check_close(what, o, want, on, TOL);
  free(x), free(w), free(b), free(want);
}

static const convc CONVS[] = {
  {2, 2, 3, 4, 1, {6, 7}, {3, 3}, {0}, true},
  {2, 1, 4, 6, 2, {7, 8}, {3, 2}, {.stride = {2, 1}, .dilation = {2, 1}, .pads = {{1, 2}, {0, 1}}}, true},
  {2, 2, 4, 4, 4, {5, 5}, {3, 3}, {.groups = 4, .pads = {{1, 1}, {1, 1}}}, false},          /* depthwise */
  {1, 2, 6, 3, 3, {11}, {3}, {.groups = 3, .stride = {2}, .dilation = {2}, .pads = {{2, 1}}}, true},
  {1, 1, 2, 2, 1, {5}, {5}, {0}, false},
  {3, 1, 2, 4, 2, {4, 5, 3}, {2, 3, 2}, {.groups = 2, .stride = {1, 2, 1}, .dilation = {1, 1, 2}, .pads = {{1, 0}, {0, 1}, {1, 1}}}, true},
};

START_TEST(conv_ops) {
  rng_seed(1001);
  for (unsigned i = 0; i < sizeof CONVS / sizeof CONVS[0]; i++) conv_run(&CONVS[i], false);
}
END_TEST

static const convc CONVTS[] = {
  {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {.groups = 2, .stride = {2, 3}, .pads = {{1, 0}, {0, 1}}, .output_padding = {1, 2}}, true},
  {2, 1, 3, 2, 1, {4, 3}, {2, 3}, {.dilation = {2, 1}, .pads = {{0, 1}, {1, 1}}}, false},
  {1, 2, 2, 3, 1, {5}, {3}, {.stride = {2}, .dilation = {2}, .output_padding = {1}}, true},
  {3, 1, 2, 2, 2, {2, 3, 2}, {2, 2, 2}, {.groups = 2, .stride = {2, 1, 2}, .pads = {{0, 1}, {1, 0}, {0, 0}}}, true},
};

START_TEST(conv_transpose_ops) {
  rng_seed(1002);
  for (unsigned i = 0; i < sizeof CONVTS / sizeof CONVTS[0]; i++) conv_run(&CONVTS[i], true);
}
END_TEST

/* ---------------- pooling ---------------- */

static void pool_run(unsigned lead, const int64_t *leads, const int64_t *sp_in, const bg_pool_opts *po, bool avg) {
  unsigned nk = po->nk, r = lead + nk;
  int64_t xs[BG_MAX_DIMS], os[BG_MAX_DIMS], k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0}, pe[3] = {0};
  int64_t sp[3] = {1, 1, 1}, osp[3] = {1, 1, 1};
  memcpy(xs, leads, lead * sizeof *xs);
  memcpy(os, leads, lead * sizeof *os);
  for (unsigned a = 0; a < nk; a++) {
    sp[a] = xs[lead + a] = sp_in[a];
    k[a] = po->kernel[a], s[a] = po->stride[a] ? po->stride[a] : k[a], dl[a] = opt(po->dilation[a]);
    pb[a] = po->pads[a][0], pe[a] = po->pads[a][1];
    int64_t span = dl[a] * (k[a] - 1) + 1, len = sp[a] + pb[a] + pe[a] - span;
    int64_t o = po->ceil_mode ? (len + s[a] - 1) / s[a] + 1 : len / s[a] + 1;
    if (po->ceil_mode && (o - 1) * s[a] >= sp[a] + pb[a]) o--; /* a window must start inside the input or its begin pad */
    osp[a] = os[lead + a] = o;
  }
  int64_t xn = numel_of(r, xs), on = numel_of(r, os), m = numel_of(lead, leads), spn = sp[0] * sp[1] * sp[2];
  int64_t ospn = osp[0] * osp[1] * osp[2], kn = k[0] * k[1] * k[2], oc[3], kc[3], ic[3];
  float *x = rand_f(xn);
  bg_tensor *o = (avg ? bg_tn_avg_pool : bg_tn_max_pool)(up_f(r, xs, x), po);
  char what[128];
  snprintf(what, sizeof what, "%s %uD k %lld s %lld d %lld pads (%lld,%lld) ceil %d include_pad %d", avg ? "avg_pool" : "max_pool",
           nk, (long long)k[0], (long long)s[0], (long long)dl[0], (long long)pb[0], (long long)pe[0], po->ceil_mode,
           po->count_include_pad);
  expect_shape(o, r, os, what);
  double *want = malloc((size_t)on * sizeof *want);
  for (int64_t l = 0; l < m; l++)
    for (int64_t op = 0; op < ospn; op++) {
      unravel(op, 3, osp, oc);
      double acc = avg ? 0 : -INFINITY, cnt = 0;
      for (int64_t kf = 0; kf < kn; kf++) {
        unravel(kf, 3, k, kc);
        bool in = true, inpad = true;
        for (unsigned a = 0; a < 3; a++) {
          ic[a] = oc[a] * s[a] - pb[a] + kc[a] * dl[a];
          in &= ic[a] >= 0 && ic[a] < sp[a];
          inpad &= ic[a] >= -pb[a] && ic[a] < sp[a] + pe[a];
        }
        if (avg) cnt += po->count_include_pad ? inpad : in;
        if (!in) continue;
        double v = x[l * spn + ravel(ic, 3, sp)];
        acc = avg ? acc + v : (v > acc ? v : acc);
      }
      want[l * ospn + op] = avg ? acc / cnt : acc;
    }
  check_close(what, o, want, on, TOL);
  free(x), free(want);
}

static const bg_pool_opts POOLS[] = {
  {.nk = 2, .kernel = {2, 2}},
  {.nk = 2, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 1}, {1, 1}}, .ceil_mode = true},
  {.nk = 2, .kernel = {3, 2}, .stride = {2, 1}, .dilation = {2, 1}, .pads = {{1, 0}, {0, 1}}},
  {.nk = 2, .kernel = {3, 3}, .stride = {2, 2}, .pads = {{1, 2}, {2, 1}}, .count_include_pad = true},
  {.nk = 2, .kernel = {3, 3}, .stride = {2, 3}, .pads = {{1, 1}, {0, 1}}, .ceil_mode = true, .count_include_pad = true},
  {.nk = 1, .kernel = {3}, .stride = {2}, .pads = {{1, 0}}, .ceil_mode = true},
  {.nk = 1, .kernel = {2}, .stride = {1}, .dilation = {3}, .pads = {{2, 2}}, .count_include_pad = true},
  {.nk = 1, .kernel = {2}, .stride = {3}, .pads = {{0, 2}}, .ceil_mode = true}, /* the last window would start in the end pad: dropped */
  {.nk = 3, .kernel = {2, 2, 3}, .stride = {1, 2, 2}, .pads = {{0, 1}, {1, 0}, {1, 1}}, .ceil_mode = true},
};

START_TEST(pool_ops) {
  rng_seed(1003);
  int64_t leads[2] = {2, 3}, sp2[3] = {7, 8, 1}, sp1[3] = {9, 1, 1}, sp3[3] = {4, 5, 6};
  for (unsigned i = 0; i < sizeof POOLS / sizeof POOLS[0]; i++)
    for (int avg = 0; avg < 2; avg++) {
      const bg_pool_opts *p = &POOLS[i];
      pool_run(p->nk == 1 ? 1 : 2, leads, p->nk == 1 ? sp1 : p->nk == 2 ? sp2 : sp3, p, avg);
    }
}
END_TEST

/* ONNX's operator docs, AveragePool averagepool_2d_ceil: 1..16 as 4x4, kernel 3, stride 2, ceil_mode. */
START_TEST(avg_pool_onnx_example) {
  float x[16];
  for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
  int64_t sh[4] = {1, 1, 4, 4};
  bg_pool_opts o = {.nk = 2, .kernel = {3, 3}, .stride = {2, 2}, .ceil_mode = true};
  static const double want[4] = {6, 7.5, 12, 13.5};
  check_close("averagepool_2d_ceil", bg_tn_avg_pool(up_f(4, sh, x), &o), want, 4, 1e-6);
}
END_TEST

/* ---------------- norms ---------------- */

static void layernorm_run(unsigned r, const int64_t *xs, int axis, unsigned pr, const int64_t *ps, bool half) {
  unsigned ax = axis < 0 ? (unsigned)(axis + (int)r) : (unsigned)axis;
  int64_t xn = numel_of(r, xs), inner = numel_of(r - ax, xs + ax), pn = pr ? numel_of(pr, ps) : 0;
  float *x = rand_f(xn), *sc = rand_f(pn), *bi = rand_f(pn);
  bg_tensor *xt = up_f(r, xs, x);
  if (half) xt = bg_tn_cast(xt, BG_FLOAT16);
  bg_tensor *o = bg_tn_layernorm(xt, pr ? up_f(pr, ps, sc) : NULL, pr ? up_f(pr, ps, bi) : NULL, axis, 1e-5);
  if (half) { /* the reference reads the rounded inputs back */
    float *xr = read_f(xt);
    memcpy(x, xr, (size_t)xn * sizeof *x);
    free(xr);
    ck_assert_int_eq(bg_tn_dtype(o), BG_FLOAT16);
  }
  expect_shape(o, r, xs, "layernorm");
  double *want = malloc((size_t)xn * sizeof *want);
  int64_t co[BG_MAX_DIMS], pc[BG_MAX_DIMS];
  for (int64_t row = 0; row < xn / inner; row++) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; i++) mean += x[row * inner + i];
    mean /= (double)inner;
    for (int64_t i = 0; i < inner; i++) var += (x[row * inner + i] - mean) * (x[row * inner + i] - mean);
    var /= (double)inner;
    for (int64_t i = 0; i < inner; i++) {
      double v = (x[row * inner + i] - mean) / sqrt(var + 1e-5);
      if (pr) { /* scale/bias broadcast from the right against x */
        unravel(row * inner + i, r, xs, co);
        for (unsigned j = 0; j < pr; j++) pc[j] = ps[j] == 1 ? 0 : co[r - pr + j];
        int64_t p = ravel(pc, pr, ps);
        v = v * sc[p] + bi[p];
      }
      want[row * inner + i] = v;
    }
  }
  char what[64];
  snprintf(what, sizeof what, "layernorm axis %d%s", axis, half ? " float16" : "");
  check_close(what, o, want, xn, half ? 1e-2 : TOL);
  free(x), free(sc), free(bi), free(want);
}

START_TEST(layernorm_ops) {
  rng_seed(1004);
  int64_t x3[3] = {3, 4, 6}, p1[1] = {6}, p2[2] = {4, 6}, p2b[2] = {1, 6}, x2[2] = {5, 8};
  layernorm_run(3, x3, -1, 1, p1, false);
  layernorm_run(3, x3, 1, 2, p2, false);
  layernorm_run(3, x3, -2, 2, p2b, false);
  layernorm_run(3, x3, 0, 0, NULL, false);
  layernorm_run(2, x2, -1, 0, NULL, true);
}
END_TEST

START_TEST(instancenorm_ops) {
  rng_seed(1005);
  int64_t shs[3][5] = {{2, 3, 7}, {2, 3, 4, 5}, {1, 2, 2, 3, 4}};
  const unsigned rs[3] = {3, 4, 5};
  for (unsigned t = 0; t < 3; t++) {
    unsigned r = rs[t];
    const int64_t *xs = shs[t];
    int64_t xn = numel_of(r, xs), C = xs[1], inner = numel_of(r - 2, xs + 2);
    float *x = rand_f(xn), *sc = rand_f(C), *bi = rand_f(C);
    bg_tensor *o = bg_tn_instancenorm(up_f(r, xs, x), up_f(1, &C, sc), up_f(1, &C, bi), 1e-5);
    expect_shape(o, r, xs, "instancenorm");
    double *want = malloc((size_t)xn * sizeof *want);
    for (int64_t row = 0; row < xn / inner; row++) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; i++) mean += x[row * inner + i];
      mean /= (double)inner;
      for (int64_t i = 0; i < inner; i++) var += (x[row * inner + i] - mean) * (x[row * inner + i] - mean);
      var /= (double)inner;
      for (int64_t i = 0; i < inner; i++)
        want[row * inner + i] = (x[row * inner + i] - mean) / sqrt(var + 1e-5) * sc[row % C] + bi[row % C];
    }
    check_close("instancenorm", o, want, xn, TOL);
    free(x), free(sc), free(bi), free(want);
  }
}
END_TEST

/* ---------------- errors ---------------- */

START_TEST(nn_errors) {
  int64_t xs[4] = {1, 6, 5, 5}, w4[4] = {4, 3, 3, 3}, w3[3] = {4, 6, 3}, b3[1] = {3};
  bg_tensor *x = bg_tn_zeros(c, BG_FLOAT32, 4, xs);
  bg_conv_opts g4 = {.groups = 4};
  bg_tn_conv(x, bg_tn_zeros(c, BG_FLOAT32, 4, w4), NULL, &g4);
  expect_error("conv groups", (const char *const[]){"conv", "(1,6,5,5)", "channels 6 not divisible by groups 4", NULL});
  bg_conv_opts g2 = {.groups = 2};
  bg_tn_conv(x, bg_tn_zeros(c, BG_FLOAT32, 4, (int64_t[]){4, 6, 3, 3}), NULL, &g2);
  expect_error("conv weight channels", (const char *const[]){"conv", "groups 2", "weight axis 1 must be 3", NULL});
  bg_tn_conv(x, bg_tn_zeros(c, BG_FLOAT32, 3, w3), NULL, &g2);
  expect_error("conv rank", (const char *const[]){"conv", "(1,6,5,5)", "(4,6,3)", "same rank", NULL});
  bg_tn_conv(x, bg_tn_zeros(c, BG_FLOAT32, 4, w4), bg_tn_zeros(c, BG_FLOAT32, 1, b3), &g2);
  expect_error("conv bias", (const char *const[]){"conv", "bias (3)", "expected (4)", NULL});
  bg_tn_conv(x, bg_tn_zeros(c, BG_FLOAT32, 4, (int64_t[]){2, 6, 6, 3}), NULL, &(bg_conv_opts){0});
  expect_error("conv kernel", (const char *const[]){"conv", "kernel 6", "does not fit the input size 5", NULL});
  bg_conv_opts op = {.stride = {2, 2}, .output_padding = {2, 0}};
  bg_tn_conv_transpose(x, bg_tn_zeros(c, BG_FLOAT32, 4, (int64_t[]){6, 2, 3, 3}), NULL, &op);
  expect_error("conv_transpose output_padding", (const char *const[]){"conv_transpose", "output_padding 2", NULL});
  bg_pool_opts po = {.nk = 2, .kernel = {4, 4}, .dilation = {2, 1}};
  bg_tn_max_pool(x, &po);
  expect_error("pool window", (const char *const[]){"max_pool", "axis 2", "window of 7", "padded input 5", NULL});
  bg_pool_opts p4 = {.nk = 4, .kernel = {2, 2}};
  bg_tn_avg_pool(x, &p4);
  expect_error("pool nk", (const char *const[]){"avg_pool", "nk 4", NULL});
  bg_tn_layernorm(x, NULL, NULL, 4, 1e-5);
  expect_error("layernorm axis", (const char *const[]){"layernorm", "axis 4 out of range", NULL});
  bg_tn_layernorm(x, bg_tn_zeros(c, BG_FLOAT32, 1, b3), NULL, -1, 1e-5);
  expect_error("layernorm scale", (const char *const[]){"layernorm", "scale (3)", "normalized axes 3", NULL});
  bg_tn_instancenorm(x, bg_tn_zeros(c, BG_FLOAT32, 1, b3), NULL, 1e-5);
  expect_error("instancenorm scale", (const char *const[]){"instancenorm", "scale (3)", "expected (6)", NULL});
}
END_TEST

/* ---------------- finite-difference gradients ---------------- */

/* loss = sum(f(inputs) * R) with R fixed random weights; analytic gradients of the float inputs against
 * central differences, step h, |g - fd| <= 1e-2 + 2e-2 * |fd| (test_autograd.c's layer tolerance). */
typedef bg_tensor *(*gfn)(bg_tensor *const *in);
typedef struct gin {
  unsigned nd;
  int64_t sh[5];
  int64_t idx_hi; /* > 0: an int32 index input with values in [-idx_hi, idx_hi) (no gradient) */
} gin;

static void make_inputs(unsigned nin, const gin *g, float *const *v, bg_tensor **in) {
  for (unsigned i = 0; i < nin; i++) {
    if (!g[i].idx_hi) {
      in[i] = up_f(g[i].nd, g[i].sh, v[i]);
      continue;
    }
    int64_t n = numel_of(g[i].nd, g[i].sh), *iv = malloc((size_t)n * sizeof *iv);
    ck_assert(iv);
    for (int64_t j = 0; j < n; j++) iv[j] = (int64_t)v[i][j];
    in[i] = up_i(BG_INT32, g[i].nd, g[i].sh, iv);
    free(iv);
  }
}

static double eval_loss(gfn f, unsigned nin, const gin *g, float *const *v, const float *R, bg_tensor **in,
                        bg_tensor **loss_out) {
  make_inputs(nin, g, v, in);
  if (loss_out)
    for (unsigned i = 0; i < nin; i++)
      if (!g[i].idx_hi) bg_tn_requires_grad(in[i], true);
  bg_tensor *out = f(in);
  int64_t on = bg_tn_numel(out);
  bg_tensor *loss = bg_tn_sum(bg_tn_mul(out, bg_tn_reshape(up_f(1, &on, R), bg_tn_ndim(out), bg_tn_shape(out))), BG_ALL_AXES,
                              false);
  if (loss_out) *loss_out = loss;
  double l = 0;
  ck_assert_msg(bg_tn_item(loss, &l) == 0, "loss: %s (%s)", bg_last_error(), bg_tctx_error(c) ? bg_tctx_error(c) : "");
  return l;
}

static void grad_check(const char *what, gfn f, unsigned nin, const gin *g) {
  float *v[4];
  bg_tensor *in[4], *loss;
  for (unsigned i = 0; i < nin; i++) {
    int64_t n = numel_of(g[i].nd, g[i].sh);
    v[i] = rand_f(n);
    if (g[i].idx_hi)
      for (int64_t j = 0; j < n; j++) v[i][j] = (float)irand(-g[i].idx_hi, g[i].idx_hi - 1);
  }
  make_inputs(nin, g, v, in); /* the output's size, for the weights */
  float *R = rand_f(bg_tn_numel(f(in)));
  eval_loss(f, nin, g, v, R, in, &loss);
  OK(bg_tn_backward(loss));
  const float h = 1e-2f;
  for (unsigned i = 0; i < nin; i++) {
    if (g[i].idx_hi) continue;
    bg_tensor *gt = NULL;
    OK(bg_tn_grad(in[i], &gt));
    ck_assert_msg(gt != NULL, "%s: input %u got no gradient", what, i);
    float *ga = read_f(gt);
    int64_t n = numel_of(g[i].nd, g[i].sh);
    bg_tensor *scratch[4];
    for (int64_t j = 0; j < n; j++) {
      float keep = v[i][j];
      v[i][j] = keep + h;
      double lp = eval_loss(f, nin, g, v, R, scratch, NULL);
      v[i][j] = keep - h;
      double lm = eval_loss(f, nin, g, v, R, scratch, NULL);
      v[i][j] = keep;
      double fd = (lp - lm) / (2 * h);
      ck_assert_msg(fabs(ga[j] - fd) <= 1e-2 + 2e-2 * fabs(fd), "%s: input %u element %lld: gradient %.6g, finite difference %.6g",
                    what, i, (long long)j, ga[j], fd);
    }
    free(ga);
  }
  for (unsigned i = 0; i < nin; i++) free(v[i]);
  free(R);
}

static bg_tensor *f_conv_gd(bg_tensor *const *in) {
  bg_conv_opts o = {.groups = 2, .dilation = {2, 1}, .stride = {1, 2}, .pads = {{1, 0}, {0, 1}}};
  return bg_tn_conv(in[0], in[1], in[2], &o);
}
static bg_tensor *f_avg_pool(bg_tensor *const *in) {
  bg_pool_opts o = {.nk = 2, .kernel = {3, 2}, .stride = {2, 1}, .pads = {{1, 1}, {0, 1}}, .ceil_mode = true};
  return bg_tn_avg_pool(in[0], &o);
}
static bg_tensor *f_layernorm(bg_tensor *const *in) { return bg_tn_layernorm(in[0], in[1], in[2], -1, 1e-5); }
static bg_tensor *f_gather(bg_tensor *const *in) { return bg_tn_gather(in[0], -2, in[1]); }
static bg_tensor *f_conv_t(bg_tensor *const *in) {
  bg_conv_opts o = {.groups = 2, .stride = {2}, .output_padding = {1}, .pads = {{1, 0}}};
  return bg_tn_conv_transpose(in[0], in[1], NULL, &o);
}

START_TEST(grad_fd) {
  rng_seed(1006);
  grad_check("conv groups 2 dilation 2", f_conv_gd, 3,
             (gin[]){{4, {1, 4, 5, 4}, 0}, {4, {2, 2, 2, 2}, 0}, {1, {2}, 0}});
  grad_check("avg_pool ceil pads", f_avg_pool, 1, (gin[]){{4, {1, 2, 5, 4}, 0}});
  grad_check("layernorm", f_layernorm, 3, (gin[]){{2, {3, 5}, 0}, {1, {5}, 0}, {1, {5}, 0}});
  grad_check("gather", f_gather, 2, (gin[]){{3, {2, 4, 3}, 0}, {1, {5}, 4}});
  grad_check("conv_transpose groups 2 stride 2", f_conv_t, 2, (gin[]){{3, {1, 4, 3}, 0}, {3, {4, 1, 3}, 0}});
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tensor-ops-nn");
  TCase *t = tcase_create("ops");
  tcase_set_timeout(t, 900);
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, conv_ops);
  tcase_add_test(t, conv_transpose_ops);
  tcase_add_test(t, pool_ops);
  tcase_add_test(t, avg_pool_onnx_example);
  tcase_add_test(t, layernorm_ops);
  tcase_add_test(t, instancenorm_ops);
  tcase_add_test(t, nn_errors);
  tcase_add_test(t, grad_fd);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
