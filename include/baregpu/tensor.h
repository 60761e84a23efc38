/* baregpu/tensor.h: lazy tensors on a device.
 *
 * A context owns a device, a lazy graph and every tensor made in it (handles live until the
 * context closes). Ops build the graph; bg_tn_realize (or reading a tensor) schedules it into fused
 * kernels, compiles them and runs them on the device's HCQ queues.
 *
 * Errors follow baregpu/error.h, rule 4: a bad shape, axis or reshape records its message in bg_last_error()
 * (BG_EINVAL), latches the first one on the context (a message naming the op and the shapes, bg_tctx_error) and
 * returns the context's error tensor, which every later op passes through; realize/read then fail with
 * -BG_EINVAL and bg_tctx_error() says why. A tensor-building call returns NULL only when it has no context to
 * latch on (every tensor argument NULL); the message is then in bg_last_error(). Calls returning int follow
 * rule 1 (0 or -BG_E*, values through out-parameters) and latch their error on the context as well.
 *
 * Ownership: the context owns every tensor made in it (handles are never freed one by one; they live until
 * bg_tctx_close) and its JITs until bg_jit_free or close. Data passed in (bg_tn_from, shapes, axis orders) is
 * copied; strings returned belong to the context.
 * Thread safety: a context and everything made in it belong to one thread at a time (as a bg_dev in
 * baregpu/hcq.h: the caller serializes calls); different contexts may be used from different threads. */
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

/* float16 and bfloat16 data cross the API as their 16-bit patterns (uint16_t); float64 as double. A device
 * whose compiler cannot run float64 rejects a float64 tensor with a message naming the device (BG_EINVAL). */
enum bg_dtype { BG_BOOL, BG_INT8, BG_UINT8, BG_INT16, BG_UINT16, BG_INT32, BG_UINT32, BG_INT64, BG_UINT64,
                BG_FLOAT16, BG_FLOAT32, BG_FLOAT64, BG_BFLOAT16 };
#define BG_MAX_DIMS 8

/* dev: DEV string, NULL = DEV environment / default device. *out: the caller's, freed by bg_tctx_close, which
 * frees every tensor, buffer and JIT of the context and closes its device (cannot fail). */
int bg_tctx_open(const char *dev, bg_tctx **out);
void bg_tctx_close(bg_tctx *c);
/* First latched error (the message bg_last_error() had when it was latched; the code is BG_EINVAL), or NULL.
 * The string belongs to c and lives until bg_tctx_clear_error or close. */
const char *bg_tctx_error(const bg_tctx *c);
void bg_tctx_clear_error(bg_tctx *c);
const char *bg_tctx_device(const bg_tctx *c);
/* Wait until every kernel launched so far has finished (realize only submits). */
int bg_tctx_sync(bg_tctx *c);
/* Pure functions (any thread): 0 and "invalid" for a value outside enum bg_dtype. */
unsigned bg_dtype_size(enum bg_dtype t);
const char *bg_dtype_name(enum bg_dtype t);

/* Statistics since open: kernels launched, compiled (cache misses), copies; names of the kernels of
 * the last realize, for fusion tests. */
typedef struct bg_tstats {
  unsigned long kernels_run, kernels_compiled, copies_in, copies_out, schedules;
  unsigned last_nkernels;
  char last_kernels[32][64];
} bg_tstats;
void bg_tctx_stats(const bg_tctx *c, bg_tstats *st);   /* fills the caller's *st; cannot fail */

/* ---- creation (data, shapes: copied; the tensors: the context's) ---- */
bg_tensor *bg_tn_from(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, const void *data);
bg_tensor *bg_tn_full(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape, double v);
bg_tensor *bg_tn_zeros(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_ones(bg_tctx *c, enum bg_dtype t, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_scalar(bg_tctx *c, enum bg_dtype t, double v);               /* shape () */
bg_tensor *bg_tn_arange(bg_tctx *c, enum bg_dtype t, double start, double stop, double step);
bg_tensor *bg_tn_eye(bg_tctx *c, enum bg_dtype t, int64_t n);
/* Uniform [0,1) float32 from the context's threefry counter generator (seed via bg_tctx_seed). */
bg_tensor *bg_tn_rand(bg_tctx *c, unsigned ndim, const int64_t *shape);
void bg_tctx_seed(bg_tctx *c, uint64_t seed);   /* cannot fail */

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

/* ---- more elementwise math (tensor/tunary.c). Integer inputs of the transcendental ones compute in
 * float32, as tinygrad. round is half to even (numpy, ONNX Round); sign gives -1/0/1 in a's dtype;
 * erf is float32-accurate (|error| < 1e-6 relative to 1); pow follows tinygrad's Tensor.pow (a negative
 * base with an integral exponent keeps its sign; ints raised to ints stay ints). ---- */
bg_tensor *bg_tn_cos(bg_tensor *a);
bg_tensor *bg_tn_tan(bg_tensor *a);
bg_tensor *bg_tn_tanh(bg_tensor *a);
bg_tensor *bg_tn_sigmoid(bg_tensor *a);
bg_tensor *bg_tn_erf(bg_tensor *a);
bg_tensor *bg_tn_abs(bg_tensor *a);
bg_tensor *bg_tn_sign(bg_tensor *a);
bg_tensor *bg_tn_floor(bg_tensor *a);
bg_tensor *bg_tn_ceil(bg_tensor *a);
bg_tensor *bg_tn_round(bg_tensor *a);
bg_tensor *bg_tn_trunc(bg_tensor *a);
bg_tensor *bg_tn_pow(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_minimum(bg_tensor *a, bg_tensor *b);
/* Integer ops on integer tensors (floats: a clear error): C-style truncating division and remainder
 * (ONNX Mod fmod=1), and floor-style ones (python //, %: ONNX Mod fmod=0 and tinygrad's ints). */
bg_tensor *bg_tn_idiv(bg_tensor *a, bg_tensor *b);
bg_tensor *bg_tn_mod(bg_tensor *a, bg_tensor *b);            /* sign of the divisor (python); floats too */
bg_tensor *bg_tn_fmod(bg_tensor *a, bg_tensor *b);           /* sign of the dividend (C fmod); floats too */
bg_tensor *bg_tn_bitwise(bg_tensor *a, bg_tensor *b, char op); /* op '&', '|', '^', '<' (shl), '>' (shr) */
bg_tensor *bg_tn_logical_not(bg_tensor *a);                  /* bool result; nonzero is true */
bg_tensor *bg_tn_isnan(bg_tensor *a);
bg_tensor *bg_tn_isinf(bg_tensor *a);
bg_tensor *bg_tn_clip(bg_tensor *a, bg_tensor *lo, bg_tensor *hi); /* lo/hi NULL: unbounded */

/* ---- reductions over signed axes (tensor/treduce.c): axes[i] in [-ndim, ndim) (-1 = last), each at most
 * once; naxes 0 = every axis. An axis out of range or repeated latches "OP: axis A out of range for shape S".
 * sum accumulates as bg_tn_sum; mean divides in float (ints give float32); prod accumulates in the sum
 * accumulator dtype; min/max keep the dtype. ---- */
enum bg_reduce_op { BG_REDUCE_SUM, BG_REDUCE_MAX, BG_REDUCE_MIN, BG_REDUCE_PROD, BG_REDUCE_MEAN };
bg_tensor *bg_tn_reduce(bg_tensor *a, enum bg_reduce_op op, const int *axes, unsigned naxes, bool keepdim);
bg_tensor *bg_tn_min(bg_tensor *a, uint32_t axes, bool keepdim);     /* bit-mask form, as bg_tn_max */
/* Index (int32) of the first maximum / minimum along axis (NaN counts as the maximum). */
bg_tensor *bg_tn_argmax(bg_tensor *a, int axis, bool keepdim);
bg_tensor *bg_tn_argmin(bg_tensor *a, int axis, bool keepdim);
/* Running sum along axis (ONNX CumSum: exclusive leaves out the element itself, reverse runs from the end). */
bg_tensor *bg_tn_cumsum(bg_tensor *a, int axis, bool exclusive, bool reverse);
bg_tensor *bg_tn_softmax(bg_tensor *x, int axis);

/* ---- movement ---- */
bg_tensor *bg_tn_reshape(bg_tensor *a, unsigned ndim, const int64_t *shape);  /* one -1 allowed */
bg_tensor *bg_tn_permute(bg_tensor *a, const unsigned *order);
bg_tensor *bg_tn_expand(bg_tensor *a, unsigned ndim, const int64_t *shape);
bg_tensor *bg_tn_pad(bg_tensor *a, const int64_t (*pads)[2]);                 /* (before, after) per axis */
bg_tensor *bg_tn_shrink(bg_tensor *a, const int64_t (*bounds)[2]);            /* [start, end) per axis */
bg_tensor *bg_tn_flip(bg_tensor *a, uint32_t axes);
bg_tensor *bg_tn_cat(bg_tensor *const *ts, unsigned n, int axis);            /* axis may be negative */
bg_tensor *bg_tn_contiguous(bg_tensor *a);

/* ---- linear algebra ---- */
/* numpy matmul: (..., n, k) @ (..., k, m) with the batch axes broadcast; 1-D operands as numpy. */
bg_tensor *bg_tn_matmul(bg_tensor *a, bg_tensor *b);

/* ---- indexing (tensor/tindex.c); indices are any integer dtype, negative ones count from the end
 * (ONNX), out of range ones read as 0 (no fault: a device cannot trap them) ---- */
/* ONNX Gather: out shape = x.shape[:axis] + idx.shape + x.shape[axis+1:]. */
bg_tensor *bg_tn_gather(bg_tensor *x, int axis, bg_tensor *idx);
/* ONNX GatherElements / torch.gather: idx has x's rank; out[i][j] = x[idx[i][j]][j] along axis. */
bg_tensor *bg_tn_gather_elements(bg_tensor *x, int axis, bg_tensor *idx);
/* ONNX ScatterElements: a copy of x with updates written at idx along axis; with a reduction, combined
 * with x's element (duplicate indices combine too). BG_SCATTER_NONE with duplicate indices: the last wins. */
enum bg_scatter_reduce { BG_SCATTER_NONE, BG_SCATTER_ADD, BG_SCATTER_MUL, BG_SCATTER_MAX, BG_SCATTER_MIN };
bg_tensor *bg_tn_scatter_elements(bg_tensor *x, int axis, bg_tensor *idx, bg_tensor *updates,
                                  enum bg_scatter_reduce red);
/* ONNX GatherND / ScatterND (batch_dims 0). */
bg_tensor *bg_tn_gather_nd(bg_tensor *x, bg_tensor *idx);
bg_tensor *bg_tn_scatter_nd(bg_tensor *x, bg_tensor *idx, bg_tensor *updates, enum bg_scatter_reduce red);
/* Bool tensor of idx.shape with a new axis of `depth` inserted at axis (-1 = last): true where the position
 * equals idx (negative idx counts from depth, as ONNX OneHot). */
bg_tensor *bg_tn_one_hot(bg_tensor *idx, int64_t depth, int axis);
/* Padding modes (ONNX Pad): constant (value), reflect (mirror without the edge), edge (repeat the edge),
 * wrap (circular). pads (before, after) per axis; negative pads remove elements. */
enum bg_pad_mode { BG_PAD_CONSTANT, BG_PAD_REFLECT, BG_PAD_EDGE, BG_PAD_WRAP };
bg_tensor *bg_tn_pad_mode(bg_tensor *a, const int64_t (*pads)[2], enum bg_pad_mode mode, double value);

/* ---- realization and reading ---- */
int bg_tn_realize(bg_tensor *const *ts, unsigned n);
/* Realize and copy the elements out in row-major order; cap is dst's size in bytes. */
int bg_tn_read(bg_tensor *t, void *dst, size_t cap);
/* Realize a one-element tensor and return it as a double. */
int bg_tn_item(bg_tensor *t, double *out);

/* ---- autograd (tensor/autograd.c) ----
 * Gradients are lazy tensors built on the same graph: bg_tn_backward only builds them, realizing a
 * gradient (or anything else) runs them through the same fusing scheduler. Parameters should be
 * realized or contiguous() tensors: two equal lazy constants are one graph node and would share a
 * gradient. */
/* Marks t (a float tensor) as needing a gradient; returns t (the error tensor, latched, for a non-float t). */
bg_tensor *bg_tn_requires_grad(bg_tensor *t, bool on);
bool bg_tn_requires_grad_get(const bg_tensor *t);
/* Adds d(loss)/d(t) to t's gradient for every tensor t of the context that requires grad and that the
 * loss depends on (as tinygrad, gradients accumulate over calls). loss must be a float scalar.
 * 0, or -BG_EINVAL with the reason latched on the context. */
int bg_tn_backward(bg_tensor *loss);
/* t's accumulated gradient (shape and dtype of t, owned by the context) in *out: 0 with *out = NULL while no
 * backward reached t; -BG_EINVAL (latched on the context) when t does not require grad or is the error tensor. */
int bg_tn_grad(bg_tensor *t, bg_tensor **out);
/* Forget t's gradient (cannot fail; NULL is a no-op). */
void bg_tn_zero_grad(bg_tensor *t);

/* ---- nn layers (tensor/nn*.c), as tinygrad's Tensor methods and nn classes ---- */
/* x (N, Cin, H, W), w (Cout, Cin, KH, KW), bias (Cout) or NULL -> (N, Cout, OH, OW); zero padding of
 * `padding` on every side; built from movement ops and one reduce (tinygrad's _pool), so its
 * backward is autograd's. */
bg_tensor *bg_tn_conv2d(bg_tensor *x, bg_tensor *w, bg_tensor *bias, int64_t stride, int64_t padding);
/* Max over kernel x kernel windows of the last two axes; stride 0 = kernel (tinygrad's default). */
bg_tensor *bg_tn_max_pool2d(bg_tensor *x, int64_t kernel, int64_t stride);
/* Eval-mode batch norm over axis 1: (x - mean) * weight / sqrt(var + eps) + bias; every parameter
 * has shape (C) (weight/bias may be NULL). */
bg_tensor *bg_tn_batchnorm(bg_tensor *x, bg_tensor *weight, bg_tensor *bias, bg_tensor *mean, bg_tensor *var, double eps);
/* x (..., in) @ w^T + b with w (out, in) and b (out) or NULL, as tinygrad's nn.Linear. */
bg_tensor *bg_tn_linear(bg_tensor *x, bg_tensor *w, bg_tensor *b);
bg_tensor *bg_tn_flatten(bg_tensor *x, unsigned start_axis);   /* axes from start_axis on become one */
bg_tensor *bg_tn_mean(bg_tensor *a, uint32_t axes, bool keepdim);
bg_tensor *bg_tn_log_softmax(bg_tensor *x, int axis);  /* axis may be negative */
/* General convolution over 1 to 3 spatial axes (ONNX Conv / ConvTranspose): x (N, Cin, D...), w (Cout,
 * Cin/groups, K...) for conv and (Cin, Cout/groups, K...) for transpose; per spatial axis: stride (0 = 1),
 * dilation (0 = 1), pads (begin, end), output_padding (transpose only). */
typedef struct bg_conv_opts {
  unsigned groups;                     /* 0 = 1 */
  int64_t stride[3], dilation[3], pads[3][2], output_padding[3];
} bg_conv_opts;
bg_tensor *bg_tn_conv(bg_tensor *x, bg_tensor *w, bg_tensor *bias, const bg_conv_opts *o);
bg_tensor *bg_tn_conv_transpose(bg_tensor *x, bg_tensor *w, bg_tensor *bias, const bg_conv_opts *o);
/* Pooling over the last nk (1 to 3) axes (ONNX MaxPool / AveragePool): kernel, stride (0 = kernel), dilation
 * (0 = 1), pads (begin, end; max pads with -inf), ceil_mode, and for the average whether padded positions count. */
typedef struct bg_pool_opts {
  unsigned nk;
  int64_t kernel[3], stride[3], dilation[3], pads[3][2];
  bool ceil_mode, count_include_pad;
} bg_pool_opts;
bg_tensor *bg_tn_max_pool(bg_tensor *x, const bg_pool_opts *o);
bg_tensor *bg_tn_avg_pool(bg_tensor *x, const bg_pool_opts *o);
/* ONNX LayerNormalization: normalize over axes axis..ndim-1 (axis signed), then * scale + bias (NULL: none). */
bg_tensor *bg_tn_layernorm(bg_tensor *x, bg_tensor *scale, bg_tensor *bias, int axis, double eps);
/* ONNX InstanceNormalization: x (N, C, D...), normalize per (n, c) over the spatial axes; scale, bias (C). */
bg_tensor *bg_tn_instancenorm(bg_tensor *x, bg_tensor *scale, bg_tensor *bias, double eps);
/* Mean over the batch of -log_softmax(logits)[i, labels[i]]; logits (N, C), labels int32 (N). */
bg_tensor *bg_tn_sparse_cross_entropy(bg_tensor *logits, bg_tensor *labels);
/* One SGD step: params[i] <- realized params[i] - lr * grad (a new handle that requires grad; the
 * old one stops requiring it). Parameters no gradient reached stay. 0 or a negative BG_E*. */
int bg_tn_sgd_step(bg_tensor **params, unsigned n, double lr);

/* ---- optimizers that update parameters in place (tensor/optim.c), so a training step runs in a JIT:
 * each step writes the new values into the parameters' own buffers (the handles stay the same and keep
 * requiring grad), as tinygrad's assign. Adam as tinygrad's nn.optim.Adam (bias-corrected, eps outside
 * the square root); lr, b1, b2, eps as PyTorch's defaults when 0 is given for b1/b2/eps. ---- */
typedef struct bg_optim bg_optim;
/* *out: freed by bg_optim_free (before close); params: copied. */
int bg_optim_sgd(bg_tctx *c, bg_tensor *const *params, unsigned n, double lr, double momentum, bg_optim **out);
int bg_optim_adam(bg_tctx *c, bg_tensor *const *params, unsigned n, double lr, double b1, double b2, double eps,
                  bg_optim **out);
/* Builds the update of every parameter from its gradient and realizes it into the parameter's buffer (with the
 * optimizer's state); gradients are dropped afterwards (bg_tn_zero_grad). 0 or a negative BG_E*. */
int bg_optim_step(bg_optim *o);
void bg_optim_free(bg_optim *o);
/* Write src's value into dst's buffer (same shape, src cast to dst's dtype), realized with the next realize of
 * dst: dst's handle keeps its identity (tinygrad's Tensor.assign). dst must be a realized buffer tensor. */
bg_tensor *bg_tn_assign(bg_tensor *dst, bg_tensor *src);

/* ---- loading from files (tensor/tload*.c) ----
 * Reads go through io_uring (liburing: registered staging buffers, several reads in flight, O_DIRECT where the
 * file system takes it) into pinned host staging memory, and each chunk is copied to device memory on the copy
 * queue while the next ones are read; without liburing (or where io_uring_queue_init fails) the same API reads
 * with pread. A terminal (stderr) shows a progress bar for loads of 64 MiB and more (BG_PROGRESS=0: never).
 * Errors name the file and what was expected: a file shorter than offset + size, a bad safetensors header, a
 * tensor outside the data, a special file. */
/* A realized tensor of dtype t and shape (row-major, little-endian) read from path at byte offset. */
bg_tensor *bg_tn_from_file(bg_tctx *c, const char *path, uint64_t offset, enum bg_dtype t, unsigned ndim,
                           const int64_t *shape);
/* Every tensor of a safetensors file (huggingface's format: 8-byte header length, JSON header, data), in file
 * order: *names and *ts arrays of *n entries owned by the context (strings too). */
int bg_tn_load_safetensors(bg_tctx *c, const char *path, const char *const **names, bg_tensor *const **ts,
                           size_t *n);
/* Loader statistics since the context opened: bytes read, reads submitted, the largest number in flight, and
 * whether io_uring (vs pread) and O_DIRECT were used on the last load. */
typedef struct bg_load_stats {
  uint64_t bytes, reads, max_inflight, chunks_copied;
  bool used_uring, used_direct;
} bg_load_stats;
void bg_tctx_load_stats(const bg_tctx *c, bg_load_stats *st);   /* fills the caller's *st; cannot fail */

/* The device buffer holding realized t's elements in row-major order from byte 0, for libraries that move tensor data
 * with queues of their own (baregpu/dist.h). Realizes t and synchronizes the context first; -BG_EINVAL (latched)
 * when t is a view that is not a whole buffer (shrink, permute, expand: take bg_tn_contiguous first). *buf belongs to
 * the context (never freed by the caller); writing into it changes t and every handle on the same buffer. */
struct bg_buf;
int bg_tn_buffer(bg_tensor *t, struct bg_buf **buf);

/* Getters (cannot fail; the shape array belongs to t). */
unsigned bg_tn_ndim(const bg_tensor *t);
const int64_t *bg_tn_shape(const bg_tensor *t);
int64_t bg_tn_numel(const bg_tensor *t);
enum bg_dtype bg_tn_dtype(const bg_tensor *t);
bg_tctx *bg_tn_ctx(const bg_tensor *t);

/* ---- symbolic sizes (tinygrad's Variable) ----
 * A variable has a name and inclusive bounds 0 <= min <= max < 2^31. Binding it to a value gives a
 * symbolic size: a negative int64 token that stands wherever a size goes (shrink bounds, reshape
 * and expand shapes) and comes back in bg_tn_shape. Kernels over a symbolic size take the variable
 * as an int32 argument, so one compiled kernel serves every binding; buffers are allocated for
 * the variable's max. bg_tn_numel and reads use the bound values. Supported: shrink [0, token),
 * reshape/expand keeping a token dimension, elementwise ops, sum/max over it, contiguous; pad and
 * cat along a symbolic axis are not. */
#define BG_DIM_IS_VAR(d) ((d) < -1 && ((uint64_t)(d) >> 62) == 2u)
/* Variable id of a token and its bound value; a plain size is its own value. */
#define BG_DIM_VAR(d) ((unsigned)(((uint64_t)(d) >> 32) & 0x3fffffffu))
#define BG_DIM_VALUE(d) (BG_DIM_IS_VAR(d) ? (int64_t)((uint64_t)(d) & 0xffffffffu) : (int64_t)(d))
/* A variable of context c: its id (>= 0), or a negative BG_E* (bad bounds, or the name exists with
 * other bounds; the same name and bounds give the same id). */
int bg_tvar_new(bg_tctx *c, const char *name, int64_t min, int64_t max);
/* The token of variable v bound to value, in *token: 0, or -BG_EINVAL (latched on the context) when v is not a
 * variable of c or value is outside its bounds (*token untouched). */
int bg_tvar_bind(bg_tctx *c, int v, int64_t value, int64_t *token);
/* The variable's name (owned by c), or NULL when v is not a variable of c. */
const char *bg_tvar_name(const bg_tctx *c, int v);

/* ---- JIT (tinygrad's TinyJit) ----
 * A captured function takes input tensors and returns output tensors. Call 1 runs it normally;
 * call 2 runs it again and captures its kernel launches (programs, buffers, launch dims, variable
 * values); from call 3 on the launches replay as ONE queue program recorded once, whose input and
 * output buffer addresses and kernel variables are queue variables: a replay binds the new input
 * addresses and variable values and submits (only changed patches are written), without running
 * the function, scheduling, compiling or recording. Inputs are realized first and must match the
 * captured dtypes and shapes (a symbolic size matches any binding of its variable). Outputs of a
 * replay are views of the captured output buffers: the next replay overwrites them (as tinygrad).
 * Host copies made inside the function during capture (bg_tn_from data) are not repeated. */
typedef struct bg_jit bg_jit;
/* Fill out[0..nout) (nout is the count given to bg_jit_new); 0 or a negative BG_E*. */
typedef int (*bg_jit_fn)(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout);
/* *out: the caller's, freed by bg_jit_free (before bg_tctx_close); user stays the caller's. */
int bg_jit_new(bg_tctx *c, bg_jit_fn fn, void *user, unsigned nout, bg_jit **out);
/* out[0..nout): tensors of the context (a replay's are views of the captured buffers, see above). */
int bg_jit_call(bg_jit *j, bg_tensor *const *in, unsigned nin, bg_tensor **out);
/* Frees the JIT's queue and its captured buffers (cannot fail; NULL is a no-op). */
void bg_jit_free(bg_jit *j);
typedef struct bg_jit_stats {
  unsigned long calls, fn_calls, replays;
  unsigned nkernels;          /* captured launches */
  unsigned nslots;            /* queue variables: input/output addresses and kernel variables */
  size_t ncmds, npatches, patches_applied_last, submits; /* the replay queue (bg_queue_stats) */
} bg_jit_stats;
void bg_jit_get_stats(const bg_jit *j, bg_jit_stats *st);   /* fills the caller's *st; cannot fail */
/* Replay launch by launch (bg_program_run per captured kernel) instead of the one queue program:
 * the per-launch baseline for benches, and a fallback to tell a queue-program fault from a kernel's. */
void bg_jit_set_per_launch(bg_jit *j, bool per_launch);

/* ---- several devices (tensor/tmulti.c, tensor/shard*.c, tensor/mjit.c) ----
 * A context is one device. bg_tn_to copies a tensor into another context (realized where it is, then one
 * bg_buf_transfer: peer-to-peer where the devices allow it, else through pinned host memory). A mesh is a set of
 * contexts, one per device; a sharded tensor is one tensor per context of its mesh, split along an axis (device i
 * holds the i-th chunk of ceil(size/n) elements along it, the last chunk what is left; every chunk non-empty) or
 * replicated (BG_SHARD_REPLICATED: every device holds the whole tensor). Ops on sharded tensors run per shard, each on
 * its own device; a reduction over the sharded axis and bg_sh_allreduce end in a ring all-reduce (reduce-scatter then
 * all-gather, chunks moved by bg_buf_transfer on the copy queues, adds on each device), whose result is replicated.
 * Errors latch on the mesh (bg_mesh_error) and on the context they happened in; an op given a sharded tensor of
 * another mesh, or shards along different axes where the op needs the same, fails naming both.
 * Ownership: the mesh owns its contexts and every sharded tensor made in it (freed by bg_mesh_close). */
bg_tensor *bg_tn_to(bg_tensor *t, bg_tctx *dst);

typedef struct bg_mesh bg_mesh;
typedef struct bg_sharded bg_sharded;
#define BG_SHARD_REPLICATED (-128)
/* Open one context per DEV string (1..8 of them; the same GPU twice is two contexts of one device). *out: the
 * caller's, freed by bg_mesh_close, which closes the contexts. */
int bg_mesh_open(const char *const *devs, unsigned n, bg_mesh **out);
void bg_mesh_close(bg_mesh *m);
unsigned bg_mesh_size(const bg_mesh *m);
bg_tctx *bg_mesh_ctx(const bg_mesh *m, unsigned i);   /* the mesh's; i < size */
const char *bg_mesh_error(const bg_mesh *m);          /* first latched error or NULL (the mesh's string) */
/* Split t (a tensor of any context) along axis (signed) across the mesh, or replicate it (BG_SHARD_REPLICATED).
 * NULL only when m is NULL; otherwise errors latch and a dead sharded tensor propagates as the error tensor does. */
bg_sharded *bg_tn_shard(bg_mesh *m, bg_tensor *t, int axis);
/* Wrap per-device tensors parts[i] (tensor i in context i of m) as a sharded tensor along axis (their shapes must agree
 * off the axis; BG_SHARD_REPLICATED: equal shapes). */
bg_sharded *bg_sh_from(bg_mesh *m, bg_tensor *const *parts, int axis);
bg_tensor *bg_sh_part(const bg_sharded *s, unsigned i);  /* device i's tensor (in context i) */
int bg_sh_axis(const bg_sharded *s);                     /* non-negative axis or BG_SHARD_REPLICATED */
unsigned bg_sh_ndim(const bg_sharded *s);
const int64_t *bg_sh_shape(const bg_sharded *s);         /* the whole tensor's shape */
/* Elementwise per shard: f is any public single-tensor op (bg_tn_relu, bg_tn_exp ...) or the caller's own function
 * built from them; the two-tensor form takes shards along the same axis (or one side replicated: it is sliced to
 * the other's chunks) and f like bg_tn_add. */
typedef bg_tensor *(*bg_sh_fn1)(bg_tensor *a);
typedef bg_tensor *(*bg_sh_fn2)(bg_tensor *a, bg_tensor *b);
bg_sharded *bg_sh_map(bg_sh_fn1 f, bg_sharded *a);
bg_sharded *bg_sh_map2(bg_sh_fn2 f, bg_sharded *a, bg_sharded *b);
/* a (.., m, k) @ b (k, n). a split along a non-k axis with b replicated: per shard, split the same way. a split along
 * k with b split along its rows: per-shard partial products, then all-reduce (replicated). b split along n with a
 * replicated: split along the last axis. Other layouts: -BG_EINVAL naming them. */
bg_sharded *bg_sh_matmul(bg_sharded *a, bg_sharded *b);
/* Sum over the axes in mask (bit i = axis i); over the sharded axis the per-device sums are all-reduced. */
bg_sharded *bg_sh_sum(bg_sharded *a, uint32_t axes, bool keepdim);
/* Elementwise sum of the per-device tensors (equal shapes), replicated on every device (ring all-reduce). */
bg_sharded *bg_sh_allreduce(bg_sharded *a);
/* The whole tensor in context dst (the shards concatenated along the axis; a replicated one's copy of device 0). */
bg_tensor *bg_sh_gather(bg_sharded *s, bg_tctx *dst);
int bg_sh_realize(bg_sharded *const *s, unsigned n);
/* Read the whole tensor into dst (cap bytes, as bg_tn_read). */
int bg_sh_read(bg_sharded *s, void *dst, size_t cap);

/* Multi-device JIT: as bg_jit, over a mesh. Call 2 captures each device's launches and the transfers between
 * devices; from call 3 on each device replays its captured work as one queue program per device and queue kind
 * (compute, copy), with the cross-device waits recorded in them: a replay binds inputs and submits. */
typedef struct bg_mjit bg_mjit;
typedef int (*bg_mjit_fn)(void *user, bg_sharded *const *in, unsigned nin, bg_sharded **out, unsigned nout);
int bg_mjit_new(bg_mesh *m, bg_mjit_fn fn, void *user, unsigned nout, bg_mjit **out);
int bg_mjit_call(bg_mjit *j, bg_sharded *const *in, unsigned nin, bg_sharded **out);
void bg_mjit_free(bg_mjit *j);
typedef struct bg_mjit_stats {
  unsigned long calls, fn_calls, replays;
  unsigned ndevices;
  unsigned nkernels[8];       /* captured launches per device */
  unsigned ntransfers;        /* captured transfers */
  unsigned nprograms[8];      /* queue programs per device a replay submits */
} bg_mjit_stats;
void bg_mjit_get_stats(const bg_mjit *j, bg_mjit_stats *st);

#ifdef __cplusplus
}
#endif
#endif
