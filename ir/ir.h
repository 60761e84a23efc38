/* ir/ir.h: the one graph IR of baregpu.
 *
 * Nodes are immutable and hash-consed ("interned") inside an ir_ctx: building the same
 * (op, dtype, arg, sources) twice returns the same pointer, so pointer equality is
 * structural equality and every node gets a dense id usable as an index into side tables.
 * ir/ depends on nothing but libc. Not thread-safe: one context per thread of use. */
#ifndef BG_IR_H
#define BG_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ir_op {
#define IR_OP(name, group, nsrc, argk) IR_##name,
#include "ir_ops.def"
#undef IR_OP
  IR_OP_COUNT
};

enum ir_op_group { IR_G_LEAF, IR_G_DEF, IR_G_LOOP, IR_G_MEM, IR_G_ALU1, IR_G_ALU2, IR_G_ALU3, IR_G_META,
                   IR_G_VEC, IR_G_CTRL, IR_G_TGRAPH, IR_G_MOVE };
enum ir_arg_kind { IR_ARG_NONE, IR_ARG_INT, IR_ARG_SCALAR, IR_ARG_BLOB };

enum ir_scalar {
#define IR_DTYPE(name, ctype, size, kind) IR_DT_##name,
#include "ir_dtypes.def"
#undef IR_DTYPE
  IR_DT_COUNT
};

/* A dtype is packed: scalar (bits 0-7) | lanes-1 (bits 8-15) | pointer flag (bit 16) | address space (17-18). */
typedef uint32_t ir_dtype;
#define IR_DT_PTR_FLAG     (1u << 16)
#define IR_DT_SCALAR(dt)   ((enum ir_scalar)((dt) & 0xffu))
#define IR_DT_LANES(dt)    ((((dt) >> 8) & 0xffu) + 1u)
#define IR_DT_IS_PTR(dt)   (((dt) & IR_DT_PTR_FLAG) != 0)
#define IR_DT_ADDRSPACE(dt) (((dt) >> 17) & 3u)
#define IR_DT_VEC(s, n)    ((ir_dtype)(s) | ((ir_dtype)((n) - 1u) << 8))
#define IR_DT_PTR(s, as)   ((ir_dtype)(s) | IR_DT_PTR_FLAG | ((ir_dtype)(as) << 17))
enum { IR_AS_GLOBAL = 0, IR_AS_LOCAL = 1, IR_AS_REG = 2 };

/* Interned immutable byte string: pointer equality is content equality within a context. */
typedef struct ir_blob {
  uint32_t size;
  uint32_t hash;
  const uint8_t *data;
} ir_blob;

typedef union ir_arg {
  int64_t i;          /* integer CONST (sign-extended bits), slot, axis, lanes, reduce op */
  double f;           /* float CONST: hashed and compared by its bits */
  const ir_blob *b;   /* shapes, names, variable info */
} ir_arg;

typedef struct ir_node {
  uint32_t id;        /* dense, creation order: side tables are plain arrays indexed by id */
  uint32_t hash;
  uint16_t op;        /* enum ir_op */
  uint16_t nsrc;
  ir_dtype dt;
  ir_arg arg;
  const struct ir_node *src[]; /* nsrc sources, interned before this node */
} ir_node;

/* DEFINE_VAR's blob: bounds are inclusive. */
typedef struct ir_var_info {
  int64_t min, max;
  char name[];        /* NUL-terminated */
} ir_var_info;

typedef struct ir_ctx ir_ctx;

/* ---- static tables (from the .def X-macro lists) ---- */
const char *ir_op_name(enum ir_op op);
enum ir_op_group ir_op_group(enum ir_op op);
int ir_op_nsrc(enum ir_op op);                       /* -1 for variadic */
enum ir_arg_kind ir_op_arg_kind(enum ir_op op);
const char *ir_scalar_name(enum ir_scalar s);        /* "float32", "int32", ... as tinygrad names them */
unsigned ir_scalar_size(enum ir_scalar s);           /* bytes */
bool ir_scalar_is_int(enum ir_scalar s);             /* signed, unsigned or index (not bool) */
bool ir_scalar_is_signed(enum ir_scalar s);          /* signed ints and index */
bool ir_scalar_is_float(enum ir_scalar s);

/* ---- context and interning ---- */
ir_ctx *ir_new(void);                                 /* NULL on out of memory */
void ir_free(ir_ctx *ctx);
size_t ir_node_count(const ir_ctx *ctx);             /* nodes interned so far (ids are < this) */
const char *ir_error(const ir_ctx *ctx);             /* message of the last failing call, "" if none */
const ir_blob *ir_blob_intern(ir_ctx *ctx, const void *data, size_t size);
const ir_node *ir_intern(ir_ctx *ctx, enum ir_op op, ir_dtype dt, ir_arg arg, unsigned nsrc,
                         const ir_node *const *src);  /* NULL on out of memory (message in ir_error) */

/* ---- constructors (dtype inference: comparisons give BOOL, other ALU ops the dtype of src[0]
 *      for binary ops; WHERE the dtype of src[1]) ---- */
const ir_node *ir_const_int(ir_ctx *ctx, ir_dtype dt, int64_t v);   /* value truncated to dt's width */
const ir_node *ir_const_float(ir_ctx *ctx, ir_dtype dt, double v);
const ir_node *ir_const_bool(ir_ctx *ctx, bool v);
const ir_node *ir_var(ir_ctx *ctx, ir_dtype dt, const char *name, int64_t min, int64_t max);
const ir_node *ir_alu1(ir_ctx *ctx, enum ir_op op, const ir_node *a);
const ir_node *ir_alu2(ir_ctx *ctx, enum ir_op op, const ir_node *a, const ir_node *b);
const ir_node *ir_alu3(ir_ctx *ctx, enum ir_op op, const ir_node *a, const ir_node *b, const ir_node *c);
const ir_node *ir_cast(ir_ctx *ctx, ir_dtype dt, const ir_node *a);
bool ir_is_const(const ir_node *u, int64_t *v);      /* integer/bool CONST: true and its value */
const ir_var_info *ir_var_get(const ir_node *u);     /* DEFINE_VAR info, NULL for other ops */

/* ---- graph walks ---- */
/* Sources before users, each node once. *out is context memory valid until the next call. */
size_t ir_toposort(ir_ctx *ctx, const ir_node *root, const ir_node *const **out);
/* Variables (DEFINE_VAR) reachable from root, in first-visit order; returns the count (may exceed max). */
size_t ir_vars(ir_ctx *ctx, const ir_node *root, const ir_node **out, size_t max);

/* ---- rewrite engine ----
 * A rule returns NULL for "no change" or a replacement node. Sources are rewritten before users
 * (bottom-up, memoized by id); every rebuilt or replaced node is fed to the rules again until none
 * fires (fixed point). A node rewritten more than ir_rewrite's iteration cap fails with a message
 * naming the rule set and op. */
typedef struct ir_rewriter ir_rewriter;
typedef const ir_node *(*ir_rule)(ir_rewriter *rw, const ir_node *u);
typedef struct ir_rule_set {
  const char *name;
  size_t n;
  const ir_rule *rules;
} ir_rule_set;
ir_ctx *ir_rw_ctx(ir_rewriter *rw);
void *ir_rw_user(ir_rewriter *rw);
/* NULL on failure (message in ir_error). */
const ir_node *ir_rewrite(ir_ctx *ctx, const ir_node *root, const ir_rule_set *const *sets, size_t nsets,
                          void *user);
const ir_node *ir_substitute(ir_ctx *ctx, const ir_node *root, const ir_node *const *from,
                             const ir_node *const *to, size_t n);

/* ---- symbolic algebra ---- */
extern const ir_rule_set ir_symbolic_rules;           /* folding, identities, div/mod over ranges */
int64_t ir_vmin(ir_ctx *ctx, const ir_node *u);      /* bounds of an integer/bool expression */
int64_t ir_vmax(ir_ctx *ctx, const ir_node *u);
const ir_node *ir_simplify(ir_ctx *ctx, const ir_node *u);   /* ir_rewrite with ir_symbolic_rules */

/* ---- evaluation of integer/bool expressions ----
 * ADD/SUB/MUL wrap modulo 2^width of the dtype, IDIV/MOD follow C (truncating), SHR is logical
 * for unsigned and arithmetic for signed dtypes, results are truncated to the dtype's width and
 * returned sign- or zero-extended as int64 bits. Returns 0, or -1 with a message in ir_error on an
 * unbound variable, division by zero or a non-integer op. */
typedef bool (*ir_var_lookup)(void *user, const ir_node *var, int64_t *value);
int ir_eval(ir_ctx *ctx, const ir_node *u, ir_var_lookup lookup, void *user, int64_t *out);

/* ---- printing and verification ---- */
/* Stable text: one line per node in toposort order, "%<id> = OP dtype (srcs) arg". */
int ir_print(ir_ctx *ctx, const ir_node *root, FILE *f);
/* Short infix form for integer expressions, e.g. "((i*4)+j)//4"; writes at most n bytes, returns length. */
size_t ir_render_expr(const ir_node *u, char *buf, size_t n);
/* Arity, arg kind and dtype rules; 0 if valid, else -1 with a message naming the node in ir_error. */
int ir_verify(ir_ctx *ctx, const ir_node *root);

#endif
