/* ir/ir_tables.c: static op and dtype tables generated from ir_ops.def / ir_dtypes.def,
 * plus the dtype helpers (width, truncation, value range, names) built on them. */
#include <stdio.h>
#include <string.h>

#include "ir/ir_internal.h"

static const struct {
  const char *name;
  enum ir_op_group group;
  int nsrc;
  enum ir_arg_kind arg;
} op_tab[IR_OP_COUNT] = {
#define IR_OP(name, group, nsrc, argk) {#name, IR_G_##group, nsrc, IR_ARG_##argk},
#include "ir/ir_ops.def"
#undef IR_OP
};

/* Kind letters of ir_dtypes.def: B bool, I signed, U unsigned, F float, V void, X index. */
enum { K_B = 'B', K_I = 'I', K_U = 'U', K_F = 'F', K_V = 'V', K_X = 'X' };

static const struct {
  unsigned size;
  char kind;
} dt_tab[IR_DT_COUNT] = {
#define IR_DTYPE(name, ctype, size, kind) {size, K_##kind},
#include "ir/ir_dtypes.def"
#undef IR_DTYPE
};

/* Lowercase spellings; the unit test checks they match the .def names. */
static const char *const dt_lower[IR_DT_COUNT] = {
    [IR_DT_VOID] = "void",       [IR_DT_BOOL] = "bool",         [IR_DT_INT8] = "int8",
    [IR_DT_UINT8] = "uint8",     [IR_DT_INT16] = "int16",       [IR_DT_UINT16] = "uint16",
    [IR_DT_INT32] = "int32",     [IR_DT_UINT32] = "uint32",     [IR_DT_INT64] = "int64",
    [IR_DT_UINT64] = "uint64",   [IR_DT_FLOAT16] = "float16",   [IR_DT_BFLOAT16] = "bfloat16",
    [IR_DT_FLOAT32] = "float32", [IR_DT_FLOAT64] = "float64",   [IR_DT_INDEX] = "index",
};
_Static_assert(IR_DT_COUNT == 15, "new dtype: add its lowercase name to dt_lower");

const char *ir_op_name(enum ir_op op) { return (unsigned)op < IR_OP_COUNT ? op_tab[op].name : "?"; }
enum ir_op_group ir_op_group(enum ir_op op) { return (unsigned)op < IR_OP_COUNT ? op_tab[op].group : IR_G_META; }
int ir_op_nsrc(enum ir_op op) { return (unsigned)op < IR_OP_COUNT ? op_tab[op].nsrc : -1; }
enum ir_arg_kind ir_op_arg_kind(enum ir_op op) { return (unsigned)op < IR_OP_COUNT ? op_tab[op].arg : IR_ARG_NONE; }

const char *ir_scalar_name(enum ir_scalar s) {
  return (unsigned)s < IR_DT_COUNT && dt_lower[s] ? dt_lower[s] : "?";
}
unsigned ir_scalar_size(enum ir_scalar s) { return (unsigned)s < IR_DT_COUNT ? dt_tab[s].size : 0; }

static char kind_of(enum ir_scalar s) { return (unsigned)s < IR_DT_COUNT ? dt_tab[s].kind : K_V; }
bool ir_scalar_is_int(enum ir_scalar s) {
  char k = kind_of(s);
  return k == K_I || k == K_U || k == K_X;
}
bool ir_scalar_is_signed(enum ir_scalar s) {
  char k = kind_of(s);
  return k == K_I || k == K_X;
}
bool ir_scalar_is_float(enum ir_scalar s) { return kind_of(s) == K_F; }

/* ---- dtype helpers used across ir/ ---- */

unsigned ir_dtype_bits(ir_dtype dt) { return 8u * ir_scalar_size(IR_DT_SCALAR(dt)); }

bool ir_dt_is_intlike(ir_dtype dt) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  return !IR_DT_IS_PTR(dt) && (ir_scalar_is_int(s) || s == IR_DT_BOOL);
}

int64_t ir_norm(ir_dtype dt, int64_t v) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  if (s == IR_DT_BOOL) return v != 0;
  unsigned bits = ir_dtype_bits(dt);
  if (bits == 0 || bits >= 64 || !ir_scalar_is_int(s)) return v;
  uint64_t mask = (UINT64_C(1) << bits) - 1u, u = (uint64_t)v & mask;
  if (ir_scalar_is_signed(s) && (u >> (bits - 1u)) != 0) u |= ~mask;
  int64_t r;
  memcpy(&r, &u, sizeof r); /* two's complement reinterpretation without implementation-defined casts */
  return r;
}

void ir_dtype_range(ir_dtype dt, int64_t *lo, int64_t *hi) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  unsigned bits = ir_dtype_bits(dt);
  *lo = INT64_MIN;
  *hi = INT64_MAX;
  if (IR_DT_IS_PTR(dt)) return;
  if (s == IR_DT_BOOL) {
    *lo = 0;
    *hi = 1;
  } else if (ir_scalar_is_int(s) && bits < 64) {
    if (ir_scalar_is_signed(s)) {
      *lo = -(INT64_C(1) << (bits - 1u));
      *hi = (INT64_C(1) << (bits - 1u)) - 1;
    } else {
      *lo = 0;
      *hi = (INT64_C(1) << bits) - 1;
    }
  }
  /* int64/index: full range; uint64 and non-integers: all int64 bit patterns (unknown) */
}

size_t ir_dtype_str(ir_dtype dt, char *buf, size_t n) {
  static const char *const as_names[4] = {"", "local", "reg", "as3"};
  int len;
  if (IR_DT_IS_PTR(dt))
    len = snprintf(buf, n, "%s*%s", ir_scalar_name(IR_DT_SCALAR(dt)), as_names[IR_DT_ADDRSPACE(dt)]);
  else if (IR_DT_LANES(dt) > 1)
    len = snprintf(buf, n, "%sx%u", ir_scalar_name(IR_DT_SCALAR(dt)), IR_DT_LANES(dt));
  else
    len = snprintf(buf, n, "%s", ir_scalar_name(IR_DT_SCALAR(dt)));
  return len < 0 ? 0 : (size_t)len;
}
