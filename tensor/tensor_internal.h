/* tensor/tensor_internal.h: private to tensor/: the context, tensor handles, the shape side table
 * and the node-level graph builders the public ops are made of.
 *
 * The lazy graph lives in the context's ir_ctx `g` (tensor level). Node kinds and their args:
 *   BUFFER        arg blob tbuf_arg {uid, numel}; shape (numel); the device buffer c->bufs[uid].
 *   CONST         a scalar, shape (); broadcast by RESHAPE + EXPAND.
 *   RANGE         "iota": element i is i (int32), shape (n); src[0] = CONST index n. arange and eye
 *                 are built from it so they fuse into index math (tinygrad folds its arange reduce).
 *   RESHAPE/EXPAND arg blob int64[ndim] new shape; PERMUTE int64[ndim] order; PAD/SHRINK
 *                 int64[2*ndim] (before, after) / [start, end); FLIP int64[ndim] 0/1.
 *   ALU ops, CAST, BITCAST, THREEFRY: sources of equal shape (broadcast before).
 *   REDUCE_AXIS   arg blob int64[2] {IR_ADD | IR_MAX, axis mask}; keeps the reduced axes as 1.
 *   BUFFERIZE     contiguous(): arg blob int64[1] unique tag. CONTIGUOUS's arg is NONE, so two
 *                 contiguous() of one value would intern to one node; tinygrad gives each its own
 *                 buffer (plus_big launches 3 kernels), so each call gets a tagged BUFFERIZE.
 * A node's shape is a function of the node, so one side table indexed by node id holds them. */
#ifndef BG_TENSOR_INTERNAL_H
#define BG_TENSOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "baregpu/tensor.h"
#include "compile/kernel.h"
#include "ir/ir.h"

typedef const ir_node *node;

typedef struct tshape {
  uint8_t n;
  int64_t d[BG_MAX_DIMS];
} tshape;

struct bg_tensor {
  bg_tctx *c;
  node u;                     /* NULL for the error tensor */
  enum bg_dtype dt;
  unsigned ndim;
  int64_t shape[BG_MAX_DIMS]; /* a copy: the side table moves when it grows */
  /* autograd (autograd.c): `graph` is the node the handle was made from and never follows
   * realization, so backward can walk a loss that was realized (read) first. */
  node graph;
  bool requires_grad;
  bg_tensor *grad;            /* accumulated by bg_tn_backward; NULL until reached */
};

typedef struct tbuf_arg {
  int64_t uid, numel;
} tbuf_arg;

typedef struct tbuf {
  bg_buf *b;
  int64_t numel;
  enum ir_scalar s;
} tbuf;

typedef struct tprog {           /* one compiled kernel, keyed by its printed AST */
  uint64_t hash;
  char *key;
  bg_kernel k;
  bg_program *prg;
  int vid[16];                   /* the context variable of each kernel variable, in argument order */
} tprog;

enum { TCHUNK = 256 };
typedef struct tchunk {
  struct tchunk *next;
  unsigned n;
  bg_tensor t[TCHUNK];
} tchunk;

struct bg_tctx {
  bg_dev *dev;
  ir_ctx *g;                     /* the lazy graph */
  char err[512];
  bool has_err;
  bg_tensor err_t;               /* what ops return after an error */
  tchunk *chunks;                /* tensor handles, freed at close */
  tshape *shapes;                /* by node id */
  uint8_t *has_shape;
  size_t shapes_cap;
  node *real;                    /* by node id: the buffer view a realized node became */
  uint32_t *handles;             /* by node id: tensor handles pointing at the node */
  size_t real_cap;
  tbuf *bufs;                    /* by uid; b == NULL once freed */
  size_t nbufs, bufs_cap;
  tprog *progs;
  size_t nprogs, progs_cap;
  int64_t next_tag;              /* BUFFERIZE tags */
  uint64_t seed, rng_counter;
  bg_tstats st;
  struct tvar *vars;             /* symbolic-size variables (tvar.c), by id */
  unsigned nvars, vars_cap;
  struct tjit_cap *cap;          /* a JIT capture in progress (jit.c), or NULL */
  bg_load_stats load_st;         /* file loads (tload*.c) */
  struct tload_mem *load_mem;    /* safetensors name/tensor arrays, freed at close (safetensors.c) */
};

/* ---- symbolic sizes (tvar.c) ---- */
typedef struct tvar {
  char name[32];
  int64_t min, max;
} tvar;
struct tkernel;
/* The value of dimension d in kernel context k: a CONST index, or the DEFINE_VAR of a token's
 * variable (its binding recorded in kern; a second, different binding in one kernel is an error).
 * NULL on failure (message set). */
const ir_node *t_dim_node(bg_tctx *c, ir_ctx *k, struct tkernel *kern, int64_t d);
/* Elements for the variables' max values (what a buffer of shape s must hold). */
int64_t t_numel_max(const bg_tctx *c, const tshape *s);
/* Whether [lo, hi) is a valid shrink of a dimension of size d: a symbolic hi needs lo == 0 and its
 * variable's max within d (or d the same variable). */
bool t_shrink_ok(const bg_tctx *c, int64_t d, int64_t lo, int64_t hi);
/* The binding in kern of the variable called name, or -1 if the kernel does not use it. */
int64_t t_kernel_var_value(const bg_tctx *c, const struct tkernel *kern, const char *name);

/* ---- context (context.c) and handles, side tables (handles.c) ---- */
/* Latches the first error (later ones are dropped); returns the error tensor. */
bg_tensor *t_fail(bg_tctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A NULL tensor argument `arg` of op: "op: tensor argument 'arg' is NULL" for bg_last_error() and latched on the
 * context of `other` (a non-NULL argument of the same call); the error tensor, or NULL when there is no context. */
bg_tensor *t_null_arg(const char *op, const char *arg, bg_tensor *other);
/* A handle for node u (shape and dtype from the side table); the error tensor on NULL. */
bg_tensor *t_wrap(bg_tctx *c, node u);
/* The node a handle stands for now (follows realization). */
node t_node(const bg_tensor *t);
/* Grows the by-id side tables to cover every node of g; false on out of memory. */
bool t_tables(bg_tctx *c);
node t_real(const bg_tctx *c, node u);        /* buffer view of a realized node, or NULL */
void t_set_real(bg_tctx *c, node u, node view);
bool t_has_handle(const bg_tctx *c, node u);  /* some handle points at u */

/* A signed axis of t (-1 = last) in *out; false with "op: axis A out of range for shape S" latched. */
bool t_axis(const bg_tensor *t, const char *op, int axis, unsigned *out);

/* ---- dtypes (tdtype.c) ---- */
enum ir_scalar t_scalar(enum bg_dtype t);
enum bg_dtype t_bgtype(enum ir_scalar s);
bool t_dtype_ok(enum bg_dtype t);
enum ir_scalar t_promote(enum ir_scalar a, enum ir_scalar b);
/* Accumulator dtype of a sum (tinygrad's sum_acc_dtype). */
enum ir_scalar t_sum_acc(enum ir_scalar s);
double t_value_double(enum ir_scalar s, const void *p);

/* ---- ops shared by the public entry points (tops.c) ---- */
node n_sum(bg_tctx *c, node u, uint32_t mask, bool keepdim);      /* tinygrad's sum: acc dtype, half back */
node n_drop_axes(bg_tctx *c, node u, uint32_t mask);                /* reshape the masked size-1 axes away */

/* ---- shapes and graph builders (tgraph.c); NULL on out of memory or an invalid argument ---- */
const tshape *t_shape(const bg_tctx *c, node u);
int64_t t_numel(const tshape *s);
void t_shape_str(const tshape *s, char *buf, size_t n);
tshape t_mkshape(unsigned n, const int64_t *d);
/* Shape of a tensor handle (t->u set). */
static inline tshape t_shape_of(const bg_tensor *t) { return t_mkshape(t->ndim, t->shape); }
/* A handle whose graph node is gone (an earlier error): the op returns the context's error tensor. */
static inline bool t_dead(const bg_tensor *t) { return !t || !t->u; }
/* Declares char name[160] holding the shape's text, for error messages. */
#define SHSTR(name, sh)  \
  char name[160];        \
  t_shape_str((sh), name, sizeof name)
node n_node(bg_tctx *c, enum ir_op op, ir_dtype dt, ir_arg arg, unsigned nsrc, const node *src, const tshape *sh);
node n_const(bg_tctx *c, enum ir_scalar s, double v, const tshape *sh);
node n_iota(bg_tctx *c, int64_t n);
node n_buffer(bg_tctx *c, int64_t uid, int64_t numel, enum ir_scalar s);
node n_reshape(bg_tctx *c, node u, const tshape *sh);
node n_expand(bg_tctx *c, node u, const tshape *sh);
node n_permute(bg_tctx *c, node u, const unsigned *order);
node n_pad(bg_tctx *c, node u, const int64_t (*p)[2]);
node n_shrink(bg_tctx *c, node u, const int64_t (*b)[2]);
node n_flip(bg_tctx *c, node u, uint32_t mask);
node n_cast(bg_tctx *c, node u, enum ir_scalar s);
node n_bitcast(bg_tctx *c, node u, enum ir_scalar s);
node n_alu(bg_tctx *c, enum ir_op op, node a, node b);            /* equal shapes and dtypes */
node n_where(bg_tctx *c, node cond, node x, node y);
node n_unary(bg_tctx *c, enum ir_op op, node a);
node n_reduce(bg_tctx *c, node u, enum ir_op op, uint32_t mask);   /* keepdim */
node n_bufferize(bg_tctx *c, node u);
/* Broadcasts *a and *b to one shape (align right, reshape in ones, expand). false: the shapes
 * do not broadcast (nothing latched). */
bool n_broadcast(bg_tctx *c, node *a, node *b);
node n_broadcast_to(bg_tctx *c, node u, const tshape *sh);
bool t_is_view(node u);                    /* BUFFER, or RESHAPE of a BUFFER: a contiguous buffer */
node t_view_buffer(node u);                /* the BUFFER of a view */

/* ---- scheduling and running (sched.c, lower.c, realize.c) ---- */
typedef struct tkernel {
  node out;                   /* the graph node this kernel stores */
  ir_ctx *k;
  node sink;
  unsigned nin;
  node in[47];                /* slot i+1: a BUFFER node or a node realized by this schedule (compile/ takes 48 slots) */
  unsigned nvar;              /* variables of symbolic sizes this kernel reads, and their bindings */
  int vid[16];
  int64_t vval[16];
} tkernel;

typedef struct tsched tsched;
/* Lowers the kernel of realized node `out`: fills kern, or asks for more realization (returns 1
 * after adding nodes to the realize set), or fails (negative BG_E*). */
int t_lower(tsched *s, node out, tkernel *kern);
bool t_sched_is_realized(const tsched *s, node u);   /* realized by this schedule */
void t_sched_realize(tsched *s, node u);             /* add to the realize set */
bg_tctx *t_sched_ctx(const tsched *s);

int t_realize(bg_tctx *c, const node *roots, unsigned n);
/* A new device buffer of numel elements of s (at least one byte); its uid in *uid. */
int t_new_buffer(bg_tctx *c, enum ir_scalar s, int64_t numel, int64_t *uid);
/* A buffer filled from host data, as a node of shape sh (the "copy" of tinygrad's test_copy). */
node t_from_host(bg_tctx *c, enum ir_scalar s, const tshape *sh, const void *data);
int t_run_kernels(bg_tctx *c, tkernel *ks, unsigned nk, const node *roots, unsigned nroots);
/* Compiles every kernel of ks[0..nk) that has no program in c->progs on BG_COMPILE_THREADS threads (tcompile.c) and
 * sets prog[i] to the index in c->progs of kernel i's program (SIZE_MAX for an empty kernel). Errors: the first failing
 * kernel in schedule order, with its message; programs compiled before it stay in c->progs, the others are freed. */
int t_compile_schedule(bg_tctx *c, tkernel *ks, unsigned nk, size_t *prog);
/* Tests only: called on the compiling thread before each compile with the compile's index among the schedule's new
 * kernels (schedule order); a negative return fails that compile with the message the hook set. NULL: none. */
extern int (*t_compile_hook)(unsigned job);

/* ---- JIT capture (jit.c): hooks t_run_kernels calls while c->cap is set ---- */
/* A launch of program c->progs[prog] on buffers uids[0..nbufs) (slot order) with kernel variable
 * values vals[0..prog's nvars). */
int t_jit_record(bg_tctx *c, size_t prog, const int64_t *uids, unsigned nbufs, const uint64_t *vals);
/* An intermediate buffer a replay reuses: the capture keeps it instead of freeing it. */
int t_jit_keep(bg_tctx *c, int64_t uid);
/* Whether u's value depends on a captured input buffer: such a node realized before the capture
 * (e.g. by call 1 on the same inputs) must be recomputed so its kernel is captured. */
bool t_jit_masks_real(const bg_tctx *c, node u);

/* ---- small id-keyed hash map (idmap.c) ---- */
typedef struct tmap_ent {
  uint64_t k1, k2;
  uint64_t v;
  bool used;
} tmap_ent;
typedef struct tmap {
  tmap_ent *e;
  size_t cap, n;
} tmap;
tmap_ent *tmap_get(const tmap *m, uint64_t k1, uint64_t k2);
tmap_ent *tmap_put(tmap *m, uint64_t k1, uint64_t k2);   /* find or insert (v = 0); NULL on OOM */
void tmap_free(tmap *m);
void tmap_clear(tmap *m);

/* ---- math and reductions (tunary.c, treduce.c) ---- */
/* tinygrad's _inverse: an order-reversing involution that cannot overflow (-x, ~x, not x). */
node n_inverse(bg_tctx *c, node x);
/* op over the masked axes (sum: n_sum; prod in the sum accumulator dtype; mean in float; min/max keep it). */
node n_reduce_op(bg_tctx *c, node x, enum bg_reduce_op op, uint32_t mask, bool keepdim);
/* ---- file loads (tload.c, safetensors.c; tensor/tload.h has the loader's own interface) ---- */
void t_load_free(bg_tctx *c);   /* the arrays bg_tn_load_safetensors returned; at close */

#endif
