/* ir/ir_build.c: typed constructors over ir_intern (constants, variables, ALU ops, casts). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_internal.h"

const ir_node *ir_const_int(ir_ctx *ctx, ir_dtype dt, int64_t v) {
  if (ir_scalar_is_float(IR_DT_SCALAR(dt))) return ir_const_float(ctx, dt, (double)v);
  ir_arg a = {.i = ir_norm(dt, v)};
  return ir_intern(ctx, IR_CONST, dt, a, 0, NULL);
}

const ir_node *ir_const_float(ir_ctx *ctx, ir_dtype dt, double v) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  if (!ir_scalar_is_float(s)) {
    /* C's conversion, made total: NaN -> 0, out of range saturates */
    int64_t i = isnan(v) ? 0 : v >= 9223372036854775807.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    if (s == IR_DT_BOOL) i = v != 0.0;
    return ir_const_int(ctx, dt, i);
  }
  /* float32 constants hold the float32 value so equal constants intern to one node */
  ir_arg a = {.f = s == IR_DT_FLOAT32 ? (double)(float)v : v};
  return ir_intern(ctx, IR_CONST, dt, a, 0, NULL);
}

const ir_node *ir_const_bool(ir_ctx *ctx, bool v) { return ir_const_int(ctx, IR_DT_BOOL, v); }

const ir_node *ir_var(ir_ctx *ctx, ir_dtype dt, const char *name, int64_t min, int64_t max) {
  if (!name || min > max) {
    ir_set_error(ctx, "ir_var: %s (name %s, bounds %lld..%lld)", name ? "empty range" : "no name",
                 name ? name : "NULL", (long long)min, (long long)max);
    return NULL;
  }
  size_t len = strlen(name), size = sizeof(ir_var_info) + len + 1;
  ir_var_info *vi = calloc(1, size);
  if (!vi) {
    ir_set_error(ctx, "ir_var: out of memory");
    return NULL;
  }
  vi->min = min;
  vi->max = max;
  memcpy(vi->name, name, len + 1);
  const ir_blob *b = ir_blob_intern(ctx, vi, size);
  free(vi);
  if (!b) return NULL;
  ir_arg a = {.b = b};
  return ir_intern(ctx, IR_DEFINE_VAR, dt, a, 0, NULL);
}

static bool check_group(ir_ctx *ctx, enum ir_op op, enum ir_op_group g, const char *fn) {
  if ((unsigned)op < IR_OP_COUNT && ir_op_group(op) == g) return true;
  ir_set_error(ctx, "%s: %s is not an op of this arity", fn, ir_op_name(op));
  return false;
}

static bool is_compare(enum ir_op op) { return op == IR_CMPLT || op == IR_CMPNE || op == IR_CMPEQ; }

const ir_node *ir_alu1(ir_ctx *ctx, enum ir_op op, const ir_node *a) {
  if (!a || !check_group(ctx, op, IR_G_ALU1, "ir_alu1")) return NULL;
  ir_arg arg = {.i = 0};
  return ir_intern(ctx, op, a->dt, arg, 1, &a);
}

const ir_node *ir_alu2(ir_ctx *ctx, enum ir_op op, const ir_node *a, const ir_node *b) {
  if (!a || !b || !check_group(ctx, op, IR_G_ALU2, "ir_alu2")) return NULL;
  ir_dtype dt = is_compare(op) ? IR_DT_VEC(IR_DT_BOOL, IR_DT_LANES(a->dt)) : a->dt;
  const ir_node *src[2] = {a, b};
  ir_arg arg = {.i = 0};
  return ir_intern(ctx, op, dt, arg, 2, src);
}

const ir_node *ir_alu3(ir_ctx *ctx, enum ir_op op, const ir_node *a, const ir_node *b, const ir_node *c) {
  if (!a || !b || !c || !check_group(ctx, op, IR_G_ALU3, "ir_alu3")) return NULL;
  const ir_node *src[3] = {a, b, c};
  ir_arg arg = {.i = 0};
  return ir_intern(ctx, op, op == IR_WHERE ? b->dt : a->dt, arg, 3, src);
}

const ir_node *ir_cast(ir_ctx *ctx, ir_dtype dt, const ir_node *a) {
  if (!a) return NULL;
  ir_arg arg = {.i = 0};
  return ir_intern(ctx, IR_CAST, dt, arg, 1, &a);
}

bool ir_is_const(const ir_node *u, int64_t *v) {
  if (!u || u->op != IR_CONST || !ir_dt_is_intlike(u->dt)) return false;
  if (v) *v = u->arg.i;
  return true;
}

const ir_var_info *ir_var_get(const ir_node *u) {
  if (!u || u->op != IR_DEFINE_VAR || !u->arg.b || u->arg.b->size < sizeof(ir_var_info) + 1) return NULL;
  return (const ir_var_info *)(const void *)u->arg.b->data;
}
