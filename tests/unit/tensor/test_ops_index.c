/* tests/unit/tensor/test_ops_index.c: indexing ops, pad modes and batched matmul on the device DEV names
 * (CPU by default), each against a plain C reference loop in double precision written from the op's
 * definition (ONNX Gather, GatherElements, ScatterElements, GatherND, ScatterND, OneHot, Pad; numpy
 * matmul). Data are seeded random; indices span [-D, D) so negative ones are exercised, a few fall out of
 * range (they read 0 / are dropped), scatter indices repeat so duplicates combine under every reduction. */
#include "ops_ref.h"

static const enum bg_dtype IDX_T[] = {BG_INT32, BG_INT64, BG_INT8, BG_UINT8, BG_INT16};

/* A random index for an axis of size d: negative ones too, except for unsigned index dtypes. */
static int64_t rand_index(enum bg_dtype it, int64_t d) { return irand(it == BG_UINT8 ? 0 : -d, d - 1); }

/* ---------------- gather ---------------- */

static void gather_case(unsigned xr, const int64_t *xsh, int axis, unsigned ir, const int64_t *ish, enum bg_dtype it,
                        bool oob) {
  int64_t xn = numel_of(xr, xsh), in = numel_of(ir, ish);
  unsigned ax = axis < 0 ? (unsigned)(axis + (int)xr) : (unsigned)axis;
  int64_t d = xsh[ax];
  float *x = rand_f(xn);
  int64_t *idx = malloc((size_t)in * sizeof *idx);
  bool uns = it == BG_UINT8;
  for (int64_t i = 0; i < in; i++) idx[i] = irand(uns ? 0 : -d, d - 1);
  if (oob && in > 1) idx[0] = d, idx[in - 1] = uns ? d + 3 : -d - 1; /* out of range: 0 */
  bg_tensor *r = bg_tn_gather(up_f(xr, xsh, x), axis, up_i(it, ir, ish, idx));
  unsigned orank = xr - 1 + ir;
  int64_t osh[BG_MAX_DIMS], n = 0;
  for (unsigned i = 0; i < ax; i++) osh[n++] = xsh[i];
  for (unsigned i = 0; i < ir; i++) osh[n++] = ish[i];
  for (unsigned i = ax + 1; i < xr; i++) osh[n++] = xsh[i];
  expect_shape(r, orank, osh, "gather");
  int64_t on = numel_of(orank, osh), co[BG_MAX_DIMS], xc[BG_MAX_DIMS];
  double *want = calloc((size_t)on, sizeof *want);
  for (int64_t f = 0; f < on; f++) {
    unravel(f, orank, osh, co);
    int64_t j = idx[ravel(co + ax, ir, ish)];
    if (j < 0) j += d;
    if (j < 0 || j >= d) continue;
    for (unsigned i = 0; i < ax; i++) xc[i] = co[i];
    xc[ax] = j;
    for (unsigned i = ax + 1; i < xr; i++) xc[i] = co[i - 1 + ir];
    want[f] = x[ravel(xc, xr, xsh)];
  }
  char what[96];
  snprintf(what, sizeof what, "gather axis %d index %s", axis, bg_dtype_name(it));
  check_close(what, r, want, on, 0);
  free(x), free(idx), free(want);
}

START_TEST(gather_ops) {
  rng_seed(101);
  int64_t x3[3] = {3, 4, 5}, i2[2] = {2, 3}, i1[1] = {7}, x1[1] = {6};
  for (int axis = -3; axis < 3; axis++) gather_case(3, x3, axis, 2, i2, IDX_T[(axis + 3) % 5], axis == 1);
  gather_case(3, x3, -1, 1, i1, BG_INT64, true);
  gather_case(1, x1, 0, 2, i2, BG_INT16, false);
  gather_case(1, x1, 0, 0, NULL, BG_INT32, false); /* scalar index: the axis disappears */
  /* integer data: exact */
  int64_t xi[6] = {10, -20, 30, -40, 50, 60}, ii[4] = {-1, 0, 5, 2}, n6 = 6, n4 = 4;
  bg_tensor *r = bg_tn_gather(up_i(BG_INT32, 1, &n6, xi), 0, up_i(BG_INT64, 1, &n4, ii));
  int32_t got[4];
  OK(bg_tn_read(r, got, sizeof got));
  for (int i = 0; i < 4; i++) ck_assert_int_eq(got[i], xi[(ii[i] + 6) % 6]);
}
END_TEST

/* ---------------- gather_elements / scatter_elements ---------------- */

START_TEST(gather_elements_ops) {
  rng_seed(202);
  struct {
    unsigned r;
    int64_t xs[3], is[3];
    int axis;
  } cs[] = {{2, {4, 5}, {6, 5}, 0}, {3, {4, 5, 3}, {4, 2, 3}, 1}, {3, {4, 5, 3}, {3, 5, 2}, -1}, {3, {2, 3, 4}, {1, 2, 7}, -1}};
  for (unsigned t = 0; t < sizeof cs / sizeof cs[0]; t++) {
    unsigned r = cs[t].r, ax = cs[t].axis < 0 ? (unsigned)(cs[t].axis + (int)r) : (unsigned)cs[t].axis;
    int64_t xn = numel_of(r, cs[t].xs), in = numel_of(r, cs[t].is), d = cs[t].xs[ax], co[3];
    float *x = rand_f(xn);
    int64_t *idx = malloc((size_t)in * sizeof *idx);
    for (int64_t i = 0; i < in; i++) idx[i] = rand_index(IDX_T[t % 5], d);
    bg_tensor *o = bg_tn_gather_elements(up_f(r, cs[t].xs, x), cs[t].axis, up_i(IDX_T[t % 5], r, cs[t].is, idx));
    expect_shape(o, r, cs[t].is, "gather_elements");
    double *want = calloc((size_t)in, sizeof *want);
    for (int64_t f = 0; f < in; f++) {
      unravel(f, r, cs[t].is, co);
      co[ax] = idx[f] < 0 ? idx[f] + d : idx[f];
      want[f] = x[ravel(co, r, cs[t].xs)];
    }
    check_close("gather_elements", o, want, in, 0);
    free(x), free(idx), free(want);
  }
}
END_TEST

static double combine(enum bg_scatter_reduce red, double a, double u) {
  switch (red) {
  case BG_SCATTER_ADD: return a + u;
  case BG_SCATTER_MUL: return a * u;
  case BG_SCATTER_MAX: return a > u ? a : u;
  case BG_SCATTER_MIN: return a < u ? a : u;
  default: return u;
  }
}

START_TEST(scatter_elements_ops) {
  rng_seed(303);
  struct {
    unsigned r;
    int64_t xs[3], is[3];
    int axis;
  } cs[] = {{2, {4, 5}, {6, 5}, 0}, {2, {4, 5}, {3, 7}, -1}, {3, {3, 4, 2}, {2, 5, 2}, 1}};
  for (unsigned t = 0; t < sizeof cs / sizeof cs[0]; t++)
    for (int red = BG_SCATTER_NONE; red <= BG_SCATTER_MIN; red++) {
      unsigned r = cs[t].r, ax = cs[t].axis < 0 ? (unsigned)(cs[t].axis + (int)r) : (unsigned)cs[t].axis;
      int64_t xn = numel_of(r, cs[t].xs), in = numel_of(r, cs[t].is), d = cs[t].xs[ax], co[3];
      float *x = rand_f(xn), *u = rand_f(in);
      int64_t *idx = malloc((size_t)in * sizeof *idx);
      enum bg_dtype it = IDX_T[(t + (unsigned)red) % 5];
      for (int64_t i = 0; i < in; i++) idx[i] = rand_index(it, d); /* more updates than the axis: duplicates */
      bg_tensor *o = bg_tn_scatter_elements(up_f(r, cs[t].xs, x), cs[t].axis, up_i(it, r, cs[t].is, idx),
                                            up_f(r, cs[t].is, u), (enum bg_scatter_reduce)red);
      expect_shape(o, r, cs[t].xs, "scatter_elements");
      double *want = malloc((size_t)xn * sizeof *want);
      for (int64_t i = 0; i < xn; i++) want[i] = x[i];
      for (int64_t f = 0; f < in; f++) { /* row-major order: the last duplicate wins without a reduction */
        unravel(f, r, cs[t].is, co);
        co[ax] = idx[f] < 0 ? idx[f] + d : idx[f];
        int64_t p = ravel(co, r, cs[t].xs);
        want[p] = combine((enum bg_scatter_reduce)red, want[p], u[f]);
      }
      char what[64];
      snprintf(what, sizeof what, "scatter_elements case %u reduction %d", t, red);
      check_close(what, o, want, xn, 1e-6);
      free(x), free(u), free(idx), free(want);
    }
}
END_TEST

/* ---------------- gather_nd / scatter_nd ---------------- */

START_TEST(gather_nd_ops) {
  rng_seed(404);
  int64_t xs[3] = {4, 3, 5};
  struct {
    unsigned q;
    int64_t is[3];
  } cs[] = {{3, {2, 3, 2}}, {2, {6, 1}}, {2, {2, 3}}, {1, {3}}};
  float *x = rand_f(60);
  for (unsigned t = 0; t < 4; t++) {
    unsigned q = cs[t].q, m = (unsigned)cs[t].is[q - 1], orank = q - 1 + 3 - m;
    int64_t in = numel_of(q, cs[t].is), k = in / m, rest = numel_of(3 - m, xs + m), co[3];
    int64_t *idx = malloc((size_t)in * sizeof *idx);
    for (int64_t i = 0; i < in; i++) idx[i] = rand_index(IDX_T[t], xs[i % m]);
    if (t == 1) idx[2] = 7; /* out of range: a row of zeros */
    bg_tensor *o = bg_tn_gather_nd(up_f(3, xs, x), up_i(IDX_T[t], q, cs[t].is, idx));
    int64_t osh[BG_MAX_DIMS], n = 0;
    for (unsigned i = 0; i + 1 < q; i++) osh[n++] = cs[t].is[i];
    for (unsigned i = m; i < 3; i++) osh[n++] = xs[i];
    expect_shape(o, orank, osh, "gather_nd");
    double *want = calloc((size_t)(k * rest), sizeof *want);
    for (int64_t j = 0; j < k; j++) {
      bool ok = true;
      memset(co, 0, sizeof co);
      for (unsigned a = 0; a < m; a++) {
        int64_t v = idx[j * m + a];
        co[a] = v < 0 ? v + xs[a] : v;
        ok &= co[a] >= 0 && co[a] < xs[a];
      }
      for (int64_t e = 0; ok && e < rest; e++) want[j * rest + e] = x[ravel(co, 3, xs) + e];
    }
    check_close("gather_nd", o, want, k * rest, 0);
    free(idx), free(want);
  }
  free(x);
}
END_TEST

START_TEST(scatter_nd_ops) {
  rng_seed(505);
  int64_t xs[3] = {4, 3, 5};
  struct {
    unsigned q;
    int64_t is[3];
  } cs[] = {{2, {6, 2}}, {3, {2, 2, 1}}, {2, {5, 3}}};
  float *x = rand_f(60);
  for (unsigned t = 0; t < 3; t++)
    for (int red = BG_SCATTER_NONE; red <= BG_SCATTER_MIN; red++) {
      unsigned q = cs[t].q, m = (unsigned)cs[t].is[q - 1];
      int64_t in = numel_of(q, cs[t].is), k = in / m, rest = numel_of(3 - m, xs + m), co[3];
      int64_t *idx = malloc((size_t)in * sizeof *idx);
      enum bg_dtype it = IDX_T[(t + (unsigned)red) % 5];
      for (int64_t j = 0; j < k; j++) /* few distinct positions: duplicates */
        for (unsigned a = 0; a < m; a++) idx[j * m + a] = a == 0 ? rand_index(it, 2) : rand_index(it, xs[a]);
      int64_t ush[BG_MAX_DIMS], n = 0;
      for (unsigned i = 0; i + 1 < q; i++) ush[n++] = cs[t].is[i];
      for (unsigned i = m; i < 3; i++) ush[n++] = xs[i];
      float *u = rand_f(k * rest);
      bg_tensor *o = bg_tn_scatter_nd(up_f(3, xs, x), up_i(it, q, cs[t].is, idx),
                                      up_f((unsigned)n, ush, u), (enum bg_scatter_reduce)red);
      expect_shape(o, 3, xs, "scatter_nd");
      double *want = malloc(60 * sizeof *want);
      for (int i = 0; i < 60; i++) want[i] = x[i];
      for (int64_t j = 0; j < k; j++) {
        memset(co, 0, sizeof co);
        for (unsigned a = 0; a < m; a++) co[a] = idx[j * m + a] < 0 ? idx[j * m + a] + xs[a] : idx[j * m + a];
        int64_t p = ravel(co, 3, xs);
        for (int64_t e = 0; e < rest; e++) want[p + e] = combine((enum bg_scatter_reduce)red, want[p + e], u[j * rest + e]);
      }
      char what[64];
      snprintf(what, sizeof what, "scatter_nd case %u reduction %d", t, red);
      check_close(what, o, want, 60, 1e-6);
      free(idx), free(u), free(want);
    }
  free(x);
}
END_TEST

/* ---------------- one_hot ---------------- */

START_TEST(one_hot_ops) {
  rng_seed(606);
  int64_t is[2] = {3, 4}, depth = 5, idx[12];
  int axes[4] = {-1, 0, 1, -3};
  for (unsigned t = 0; t < 4; t++) {
    for (int i = 0; i < 12; i++) idx[i] = rand_index(IDX_T[t], depth);
    idx[5] = depth, idx[7] = IDX_T[t] == BG_UINT8 ? 200 : -depth - 1; /* out of range: all false */
    bg_tensor *o = bg_tn_one_hot(up_i(IDX_T[t], 2, is, idx), depth, axes[t]);
    unsigned ax = axes[t] < 0 ? (unsigned)(axes[t] + 3) : (unsigned)axes[t];
    int64_t osh[3], co[3], n = 0;
    for (unsigned i = 0, j = 0; i < 3; i++) osh[n++] = i == ax ? depth : is[j++];
    expect_shape(o, 3, osh, "one_hot");
    ck_assert_int_eq(bg_tn_dtype(o), BG_BOOL);
    bool got[60];
    OK(bg_tn_read(o, got, sizeof got));
    for (int64_t f = 0; f < 60; f++) {
      unravel(f, 3, osh, co);
      int64_t pos = co[ax], ic[2] = {0, 0}, k = 0;
      for (unsigned i = 0; i < 3; i++)
        if (i != ax) ic[k++] = co[i];
      int64_t v = idx[ravel(ic, 2, is)];
      if (v < 0) v += depth;
      ck_assert_msg(got[f] == (v == pos), "one_hot axis %d: element %lld is %d", axes[t], (long long)f, got[f]);
    }
  }
}
END_TEST

/* ---------------- pad modes ---------------- */

/* numpy.pad's source index of padded position i (in [-pb, n + pe)) of an axis of size n. */
static int64_t pad_src(int64_t i, int64_t n, enum bg_pad_mode m) {
  if (i >= 0 && i < n) return i;
  switch (m) {
  case BG_PAD_EDGE: return i < 0 ? 0 : n - 1;
  case BG_PAD_WRAP: return ((i % n) + n) % n;
  case BG_PAD_REFLECT: {
    if (n == 1) return 0;
    int64_t p = 2 * (n - 1), j = ((i % p) + p) % p;
    return j < n ? j : p - j;
  }
  default: return -1; /* constant */
  }
}

static void pad_case(unsigned r, const int64_t *xs, const int64_t (*pads)[2], enum bg_pad_mode m, double value) {
  int64_t xn = numel_of(r, xs), osh[4], co[4], xc[4];
  float *x = rand_f(xn);
  bg_tensor *o = bg_tn_pad_mode(up_f(r, xs, x), pads, m, value);
  for (unsigned i = 0; i < r; i++) osh[i] = xs[i] + pads[i][0] + pads[i][1];
  char what[96];
  snprintf(what, sizeof what, "pad mode %d rank %u pads[0] (%lld,%lld)", m, r, (long long)pads[0][0], (long long)pads[0][1]);
  expect_shape(o, r, osh, what);
  int64_t on = numel_of(r, osh);
  double *want = malloc((size_t)on * sizeof *want);
  for (int64_t f = 0; f < on; f++) {
    unravel(f, r, osh, co);
    bool in = true;
    for (unsigned i = 0; i < r; i++) {
      xc[i] = pad_src(co[i] - pads[i][0], xs[i], m);
      in &= xc[i] >= 0;
    }
    want[f] = in ? x[ravel(xc, r, xs)] : value;
  }
  check_close(what, o, want, on, 0);
  free(x), free(want);
}

START_TEST(pad_mode_ops) {
  rng_seed(707);
  int64_t s2[2] = {3, 4}, s3[3] = {2, 5, 3}, s1[1] = {1};
  const int64_t p2a[2][2] = {{1, 2}, {2, 1}}, p2wide[2][2] = {{5, 7}, {3, 9}}, p2neg[2][2] = {{-1, 2}, {2, -2}};
  const int64_t p3[3][2] = {{1, 0}, {4, 6}, {0, 2}}, p1[1][2] = {{2, 3}};
  for (int m = BG_PAD_CONSTANT; m <= BG_PAD_WRAP; m++) {
    pad_case(2, s2, p2a, (enum bg_pad_mode)m, m == BG_PAD_CONSTANT ? 2.5 : 0);
    pad_case(2, s2, p2wide, (enum bg_pad_mode)m, 0); /* wider than the axis: numpy's periodic extension */
    pad_case(2, s2, p2neg, (enum bg_pad_mode)m, -1.5);
    pad_case(3, s3, p3, (enum bg_pad_mode)m, 0);
    pad_case(1, s1, p1, (enum bg_pad_mode)m, 0);
  }
}
END_TEST

/* ---------------- matmul with broadcast batch axes ---------------- */

static void matmul_case(unsigned ar, const int64_t *as, unsigned br, const int64_t *bs) {
  int64_t an = numel_of(ar, as), bn = numel_of(br, bs);
  float *a = rand_f(an), *b = rand_f(bn);
  bg_tensor *o = bg_tn_matmul(up_f(ar, as, a), up_f(br, bs, b));
  /* numpy: 1-D a is (1, k) and 1-D b is (k, 1), those axes dropped from the result */
  int64_t A[BG_MAX_DIMS], B[BG_MAX_DIMS];
  unsigned ra = ar == 1 ? 2 : ar, rb = br == 1 ? 2 : br;
  if (ar == 1) A[0] = 1, A[1] = as[0];
  else memcpy(A, as, ar * sizeof *A);
  if (br == 1) B[0] = bs[0], B[1] = 1;
  else memcpy(B, bs, br * sizeof *B);
  unsigned nb = (ra > rb ? ra : rb) - 2;
  int64_t batch[BG_MAX_DIMS], n = A[ra - 2], k = A[ra - 1], mm = B[rb - 1];
  for (unsigned i = 0; i < nb; i++) {
    int64_t da = i + ra - 2 >= nb ? A[i + ra - 2 - nb] : 1, db = i + rb - 2 >= nb ? B[i + rb - 2 - nb] : 1;
    batch[i] = da > db ? da : db;
  }
  int64_t osh[BG_MAX_DIMS], on = 0;
  for (unsigned i = 0; i < nb; i++) osh[on++] = batch[i];
  if (ar != 1) osh[on++] = n;
  if (br != 1) osh[on++] = mm;
  expect_shape(o, (unsigned)on, osh, "matmul");
  int64_t bt = numel_of(nb, batch), co[BG_MAX_DIMS], ca[BG_MAX_DIMS], cb[BG_MAX_DIMS];
  double *want = calloc((size_t)(bt * n * mm), sizeof *want);
  for (int64_t t = 0; t < bt; t++) {
    unravel(t, nb, batch, co);
    for (unsigned i = 0; i < ra - 2; i++) ca[i] = A[i] == 1 ? 0 : co[i + nb - (ra - 2)];
    for (unsigned i = 0; i < rb - 2; i++) cb[i] = B[i] == 1 ? 0 : co[i + nb - (rb - 2)];
    int64_t ao = ravel(ca, ra - 2, A) * n * k, bo = ravel(cb, rb - 2, B) * k * mm;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < mm; j++) {
        double s = 0;
        for (int64_t l = 0; l < k; l++) s += (double)a[ao + i * k + l] * b[bo + l * mm + j];
        want[(t * n + i) * mm + j] = s;
      }
  }
  check_close("matmul", o, want, bt * n * mm, 1e-5);
  free(a), free(b), free(want);
}

START_TEST(matmul_batched) {
  rng_seed(808);
  int64_t a1[4] = {2, 3, 4, 5}, b1[2] = {5, 6}, a2[4] = {3, 1, 4, 5}, b2[3] = {2, 5, 3}, v5[1] = {5}, a3[3] = {2, 3, 4},
          v4[1] = {4}, b3[3] = {2, 5, 3};
  matmul_case(4, a1, 2, b1);
  matmul_case(4, a2, 3, b2);
  matmul_case(2, b1, 4, (int64_t[]){2, 1, 6, 3});
  matmul_case(1, v5, 3, b3);
  matmul_case(3, a3, 1, v4);
  matmul_case(1, v4, 1, v4);
}
END_TEST

/* ---------------- errors ---------------- */

START_TEST(index_errors) {
  int64_t s23[2] = {2, 3}, s2[1] = {2}, s32[2] = {3, 2}, s3[1] = {3}, z[8] = {0};
  bg_tensor *x = bg_tn_zeros(c, BG_FLOAT32, 2, s23);
  bg_tn_gather(x, 0, bg_tn_zeros(c, BG_FLOAT32, 1, s2));
  expect_error("float indices", (const char *const[]){"gather", "indices dtype float32", "integer", NULL});
  bg_tn_gather(x, 2, up_i(BG_INT32, 1, s2, z));
  expect_error("gather axis", (const char *const[]){"gather", "axis 2", "(2,3)", NULL});
  bg_tn_gather_elements(x, 0, up_i(BG_INT32, 1, s2, z));
  expect_error("gather_elements rank", (const char *const[]){"gather_elements", "(2,3)", "(2)", "index rank 1", NULL});
  bg_tn_gather_elements(x, 0, up_i(BG_INT32, 2, (int64_t[]){2, 4}, z));
  expect_error("gather_elements extent", (const char *const[]){"gather_elements", "axis 1 is larger", NULL});
  bg_tn_scatter_elements(x, 1, up_i(BG_INT32, 2, s23, z), bg_tn_zeros(c, BG_FLOAT32, 2, s32), BG_SCATTER_ADD);
  expect_error("scatter_elements updates", (const char *const[]){"scatter_elements", "updates (3,2)", "equal", NULL});
  bg_tn_gather_nd(x, up_i(BG_INT32, 2, (int64_t[]){1, 3}, z));
  expect_error("gather_nd last axis", (const char *const[]){"gather_nd", "(1,3)", "last axis must be 1 to the input rank 2", NULL});
  bg_tn_scatter_nd(x, up_i(BG_INT32, 2, (int64_t[]){2, 1}, z), bg_tn_zeros(c, BG_FLOAT32, 1, s3), BG_SCATTER_NONE);
  expect_error("scatter_nd updates", (const char *const[]){"scatter_nd", "updates (3)", "input.shape[1:]", NULL});
  bg_tn_one_hot(up_i(BG_INT32, 1, s2, z), 4, 2);
  expect_error("one_hot axis", (const char *const[]){"one_hot", "axis 2 out of range", NULL});
  bg_tn_pad_mode(x, (const int64_t[2][2]){{0, 0}, {-2, -2}}, BG_PAD_CONSTANT, 0);
  expect_error("pad remove", (const char *const[]){"pad_mode", "axis 1", "remove more than its 3", NULL});
  bg_tn_matmul(bg_tn_zeros(c, BG_FLOAT32, 3, (int64_t[]){2, 2, 3}), bg_tn_zeros(c, BG_FLOAT32, 3, (int64_t[]){3, 3, 2}));
  expect_error("matmul batch", (const char *const[]){"matmul", "(2,2,3)", "(3,3,2)", "batch dimensions do not broadcast", NULL});
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tensor-ops-index");
  TCase *t = tcase_create("ops");
  tcase_set_timeout(t, 600);
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, gather_ops);
  tcase_add_test(t, gather_elements_ops);
  tcase_add_test(t, scatter_elements_ops);
  tcase_add_test(t, gather_nd_ops);
  tcase_add_test(t, scatter_nd_ops);
  tcase_add_test(t, one_hot_ops);
  tcase_add_test(t, pad_mode_ops);
  tcase_add_test(t, matmul_batched);
  tcase_add_test(t, index_errors);
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
