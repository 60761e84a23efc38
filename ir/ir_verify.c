/* ir/ir_verify.c: structural checks of a graph: arity, arg kind and the dtype rules of the ALU ops.
 * The first violation is reported as "ir_verify: node %<id> <OP> <dtype>: <what>, expected <what>". */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_internal.h"

static int fail(ir_ctx *ctx, const ir_node *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ir_ctx *ctx, const ir_node *u, const char *fmt, ...) {
  char what[320], dts[32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ir_dtype_str(u->dt, dts, sizeof dts);
  ir_set_error(ctx, "ir_verify: node %%%u %s %s: %s", u->id, ir_op_name((enum ir_op)u->op), dts, what);
  return -1;
}

/* Minimum source counts of the variadic ops. */
static int min_srcs(enum ir_op op) {
  switch (op) {
  case IR_INDEX:
  case IR_STORE: return 2;
  case IR_END:
  case IR_LOAD:
  case IR_REDUCE:
  case IR_VECTORIZE:
  case IR_BUFFERIZE: return 1;
  default: return 0;
  }
}

static bool valid_dtype(ir_dtype dt) { return IR_DT_SCALAR(dt) < IR_DT_COUNT && (dt >> 19) == 0; }

static int check_arg(ir_ctx *ctx, const ir_node *u) {
  enum ir_op op = (enum ir_op)u->op;
  switch (ir_op_arg_kind(op)) {
  case IR_ARG_BLOB:
    if (!u->arg.b && op != IR_SINK) return fail(ctx, u, "no blob argument, expected one");
    if (op == IR_DEFINE_VAR) {
      const ir_var_info *vi = ir_var_get(u);
      const ir_blob *b = u->arg.b;
      if (!vi || b->data[b->size - 1] != 0) return fail(ctx, u, "argument is not an ir_var_info blob, expected min, max, name");
      if (vi->min > vi->max)
        return fail(ctx, u, "bounds %lld..%lld are empty, expected min <= max", (long long)vi->min, (long long)vi->max);
    }
    break;
  case IR_ARG_SCALAR:
    if (ir_dt_is_intlike(u->dt) && ir_norm(u->dt, u->arg.i) != u->arg.i)
      return fail(ctx, u, "value %lld does not fit the dtype, expected it truncated", (long long)u->arg.i);
    break;
  default: break;
  }
  return 0;
}

static int check_alu(ir_ctx *ctx, const ir_node *u) {
  enum ir_op op = (enum ir_op)u->op;
  const ir_node *a = u->src[0], *b = u->nsrc > 1 ? u->src[1] : NULL;
  enum ir_scalar sa = IR_DT_SCALAR(a->dt);
  char d0[32], d1[32];
  ir_dtype_str(a->dt, d0, sizeof d0);
  ir_dtype_str(b ? b->dt : a->dt, d1, sizeof d1);
  switch (op) {
  case IR_CAST: return 0;
  case IR_BITCAST:
    if (ir_dtype_bits(a->dt) * IR_DT_LANES(a->dt) != ir_dtype_bits(u->dt) * IR_DT_LANES(u->dt))
      return fail(ctx, u, "source %s has another size, expected the same number of bits", d0);
    return 0;
  case IR_EXP2: case IR_LOG2: case IR_SIN: case IR_SQRT: case IR_RECIP: case IR_TRUNC: case IR_FDIV:
    if (!ir_scalar_is_float(sa)) return fail(ctx, u, "source dtype %s, expected a float dtype", d0);
    break;
  case IR_IDIV: case IR_MOD: case IR_SHL: case IR_SHR:
    if (!ir_scalar_is_int(sa) || (b && !ir_scalar_is_int(IR_DT_SCALAR(b->dt))))
      return fail(ctx, u, "sources (%s, %s), expected integer dtypes", d0, d1);
    break;
  case IR_AND: case IR_OR: case IR_XOR:
    if (!ir_dt_is_intlike(a->dt)) return fail(ctx, u, "source dtype %s, expected an integer or bool dtype", d0);
    break;
  case IR_WHERE:
    if (IR_DT_SCALAR(a->dt) != IR_DT_BOOL || IR_DT_IS_PTR(a->dt) ||
        (IR_DT_LANES(a->dt) != 1 && IR_DT_LANES(a->dt) != IR_DT_LANES(u->dt)))
      return fail(ctx, u, "condition dtype %s, expected bool", d0);
    if (u->src[1]->dt != u->src[2]->dt || u->src[1]->dt != u->dt) {
      ir_dtype_str(u->src[2]->dt, d0, sizeof d0);
      return fail(ctx, u, "branches (%s, %s), expected both of the result dtype", d1, d0);
    }
    return 0;
  default: break;
  }
  if (b && a->dt != b->dt && op != IR_SHL && op != IR_SHR)
    return fail(ctx, u, "sources have different dtypes (%s, %s), expected equal dtypes", d0, d1);
  if (op == IR_MULACC && u->src[2]->dt != a->dt) return fail(ctx, u, "third source differs, expected equal dtypes");
  if (op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ) {
    if (u->dt != IR_DT_VEC(IR_DT_BOOL, IR_DT_LANES(a->dt))) return fail(ctx, u, "comparison result, expected bool");
  } else if (u->dt != a->dt) {
    return fail(ctx, u, "result dtype differs from source %s, expected the source's dtype", d0);
  }
  return 0;
}

static int check_node(ir_ctx *ctx, const ir_node *u) {
  enum ir_op op = (enum ir_op)u->op;
  if ((unsigned)op >= IR_OP_COUNT) return fail(ctx, u, "unknown op %u, expected an ir_op", (unsigned)op);
  if (!valid_dtype(u->dt)) return fail(ctx, u, "bad dtype 0x%x, expected a packed ir_dtype", (unsigned)u->dt);
  int want = ir_op_nsrc(op);
  if (want >= 0 && u->nsrc != want) return fail(ctx, u, "%u sources, expected %d", u->nsrc, want);
  if (want < 0 && u->nsrc < min_srcs(op)) return fail(ctx, u, "%u sources, expected at least %d", u->nsrc, min_srcs(op));
  if (check_arg(ctx, u)) return -1;
  switch (ir_op_group(op)) {
  case IR_G_LEAF:
    if (IR_DT_SCALAR(u->dt) == IR_DT_VOID || IR_DT_IS_PTR(u->dt)) return fail(ctx, u, "constant of void or pointer dtype, expected a value dtype");
    return 0;
  case IR_G_ALU1:
  case IR_G_ALU2:
  case IR_G_ALU3: return check_alu(ctx, u);
  default: break;
  }
  if (op == IR_DEFINE_VAR && (!ir_dt_is_intlike(u->dt) || IR_DT_SCALAR(u->dt) == IR_DT_BOOL))
    return fail(ctx, u, "variable dtype, expected an integer dtype");
  if ((op == IR_RANGE || op == IR_SPECIAL) && !ir_scalar_is_int(IR_DT_SCALAR(u->src[0]->dt)))
    return fail(ctx, u, "extent is not an integer, expected an integer extent");
  return 0;
}

int ir_verify(ir_ctx *ctx, const ir_node *root) {
  if (!root) {
    ir_set_error(ctx, "ir_verify: NULL graph");
    return -1;
  }
  const ir_node **buf = NULL;
  size_t cap = 0, n = ir_walk(ctx, root, &buf, &cap);
  int rc = n == (size_t)-1 ? -1 : 0;
  for (size_t k = 0; k < n && rc == 0; k++) rc = check_node(ctx, buf[k]);
  free(buf);
  return rc;
}
