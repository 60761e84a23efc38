/* baregpu/tensor.h: lazy tensors on a device.
 *
 * A context owns a device, a lazy graph and every tensor made in it (handles live until the
 * context closes). Ops build the graph; bg_tn_realize (or reading a tensor) schedules it into fused
 * kernels, compiles them and runs them on the device's HCQ queues.
 *
 * Errors never abort: a bad shape, axis or reshape latches the first error on the context (with a
 * message naming the op and the shapes) and returns the context's error tensor, which every later op
 * passes through; realize/read then fail with -BG_EINVAL and bg_tctx_error() says why. */
#ifndef BAREGPU_TENSOR_H
#define BAREGPU_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_tctx bg_tctx;
typedef struct bg_tensor bg_tensor;

enum bg_dtype { BG_BOOL, BG_INT8, BG_UINT8, BG_INT16, BG_UINT16, BG_INT32, BG_UINT32, BG_INT64, BG_UINT64,
                BG_FLOAT16, BG_FLOAT32 };
#define BG_MAX_DIMS 8

/* dev: DEV string, NULL = DEV environment / default device. */
int bg_tctx_open(const char *dev, bg_tctx **out);
void bg_tctx_close(bg_tctx *c);
const char *bg_tctx_error(const bg_tctx *c);      /* first latched error, or NULL */
void bg_tctx_clear_error(bg_tctx *c);
const char *bg_tctx_device(const bg_tctx *c);
/* Wait until every kernel launched so far has finished (realize only submits). */
int bg_tctx_sync(bg_tctx *c);
unsigned bg_dtype_size(enum bg_dtype t);
const char *bg_dtype_name(enum bg_dtype t);

/* Statistics since open: kernels launched, compiled (cache misses), copies; names of the kernels of
 * the last realize, for fusion tests. */
typedef struct bg_tstats {
  unsigned long kernels_run, kernels_compiled, copies_in, copies_out, schedules;
  unsigned last_nkernels;
  char last_kernels[32][64];
} bg_tstats;
void bg_tctx_stats(const bg_tctx *c, bg_tstats *st);

/* ---- creation ---- */
bg_tensor *bg_tn_from(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, const void *data);
bg_tensor *bg_tn_full(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, double v);
bg_tensor *bg_tn_zeros(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_ones(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_scalar(bg_tctx *c, enum bg_dtype t, double v);               /* shape () */
bg_tensor *bg_tn_arange(bg_tctx *c, enum bg_dtype t, double start, double stop, double step);
bg_tensor *bg_tn_eye(bg_tctx *c, enum bg_dtype t, int64_t n);
/* Uniform [0,1) float32 from the context's threefry counter generator (seed via bg_tctx_seed). */
bg_tensor *bg_tn_rand(bg_tctx *c, unsigned ndim, const int64_t *shape);
void bg_tctx_seed(bg_tctx *c, uint64_t seed);

/* ---- elementwise (broadcasting as numpy/tinygrad; mixed dtypes promote as tinygrad) ---- */
bg_tensor *bg_tn_add(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_sub(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_mul(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_div(bg_tensor *a, bg_tensor *b);       /* true division (ints give float32) */
bg_tensor *bg_tn_maximum(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_lt(bg_tensor *a, bg_tensor *b);        /* bool results */
bg_tensor *bg_tn_eq(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_ne(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_where(bg_tensor *cond, bg_tensor *x, bg_tensor *y);
bg_tensor *bg_tn_addc(bg_tensor *a, double v);          /* a + scalar, in a's dtype */
bg_tensor *bg_tn_mulc(bg_tensor *a, double v);
bg_tensor *bg_tn_neg(bg_tensor *a);
bg_tensor *bg_tn_exp2(bg_tensor *a);
bg_tensor *bg_tn_log2(bg_tensor *a);
bg_tensor *bg_tn_exp(bg_tensor *a);
bg_tensor *bg_tn_log(bg_tensor *a);
bg_tensor *bg_tn_sin(bg_tensor *a);
bg_tensor *bg_tn_sqrt(bg_tensor *a);
bg_tensor *bg_tn_reciprocal(bg_tensor *a);
bg_tensor *bg_tn_relu(bg_tensor *a);
bg_tensor *bg_tn_elu(bg_tensor *a, double alpha);
bg_tensor *bg_tn_cast(bg_tensor *a, enum bg_dtype t);

/* ---- reductions: axes as a bit mask (bit i = axis i; negative axes are the caller's business) ---- */
bg_tensor *bg_tn_sum(bg_tensor *a, uint32_t axes, bool keepdim);
bg_tensor *bg_tn_max(bg_tensor *a, uint32_t axes, bool keepdim);
#define BG_ALL_AXES 0xffffffffu

/* ---- movement ---- */
bg_tensor *bg_tn_reshape(bg_tensor *a, unsigned ndim, const int64_t *shape);  /* one -1 allowed */
bg_tensor *bg_tn_permute(bg_tensor *a, const unsigned *order);
bg_tensor *bg_tn_expand(bg_tensor *a, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_pad(bg_tensor *a, const int64_t (*pads)[2]);                 /* (before, after) per axis */
bg_tensor *bg_tn_shrink(bg_tensor *a, const int64_t (*bounds)[2]);            /* [start, end) per axis */
bg_tensor *bg_tn_flip(bg_tensor *a, uint32_t axes);
bg_tensor *bg_tn_cat(bg_tensor *const *ts, unsigned n, unsigned axis);
bg_tensor *bg_tn_contiguous(bg_tensor *a);

/* ---- linear algebra ---- */
bg_tensor *bg_tn_matmul(bg_tensor *a, bg_tensor *b);   /* (..., n, k) @ (k, m); 1-D operands as numpy */

/* ---- realization and reading ---- */
int bg_tn_realize(bg_tensor *const *ts, unsigned n);
/* Realize and copy the elements out in row-major order; cap is dst's size in bytes. */
int bg_tn_read(bg_tensor *t, void *dst, size_t cap);
/* Realize a one-element tensor and return it as a double. */
int bg_tn_item(bg_tensor *t, double *out);

unsigned bg_tn_ndim(const bg_tensor *t);
const int64_t *bg_tn_shape(const bg_tensor *t);
int64_t bg_tn_numel(const bg_tensor *t);
enum bg_dtype bg_tn_dtype(const bg_tensor *t);
bg_tctx *bg_tn_ctx(const bg_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
