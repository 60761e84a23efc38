/* tensor/tdtype.c: the public dtypes, their ir scalars, tinygrad's promotion lattice and host
 * values of elements (float16 and bfloat16 data cross the API as their 16-bit patterns in uint16_t,
 * util/half.h; float64 as IEEE binary64 doubles). */
#include <math.h>
#include <string.h>

#include "tensor/tensor_internal.h"
#include "util/half.h"

static const enum ir_scalar to_ir[] = {
    [BG_BOOL] = IR_DT_BOOL,     [BG_INT8] = IR_DT_INT8,       [BG_UINT8] = IR_DT_UINT8,
    [BG_INT16] = IR_DT_INT16,   [BG_UINT16] = IR_DT_UINT16,   [BG_INT32] = IR_DT_INT32,
    [BG_UINT32] = IR_DT_UINT32, [BG_INT64] = IR_DT_INT64,     [BG_UINT64] = IR_DT_UINT64,
    [BG_FLOAT16] = IR_DT_FLOAT16, [BG_FLOAT32] = IR_DT_FLOAT32, [BG_FLOAT64] = IR_DT_FLOAT64,
    [BG_BFLOAT16] = IR_DT_BFLOAT16,
};
enum { NDTYPES = sizeof to_ir / sizeof to_ir[0] };

bool t_dtype_ok(enum bg_dtype t) { return (unsigned)t < NDTYPES; }
enum ir_scalar t_scalar(enum bg_dtype t) { return t_dtype_ok(t) ? to_ir[t] : IR_DT_FLOAT32; }

enum bg_dtype t_bgtype(enum ir_scalar s) {
  for (unsigned t = 0; t < NDTYPES; t++)
    if (to_ir[t] == s) return (enum bg_dtype)t;
  return BG_FLOAT32;
}

unsigned bg_dtype_size(enum bg_dtype t) { return t_dtype_ok(t) ? ir_scalar_size(to_ir[t]) : 0; }
const char *bg_dtype_name(enum bg_dtype t) { return t_dtype_ok(t) ? ir_scalar_name(to_ir[t]) : "invalid"; }

/* tinygrad's promo_lattice (tinygrad/dtype.py): the direct parents of each dtype. fp8 sits between
 * the 64-bit ints and the 16-bit floats there; without fp8 the 64-bit ints go straight to float16 and
 * bfloat16. float16 and bfloat16 meet in float32, float32 below float64. */
static uint32_t parents(enum ir_scalar s) {
#define B(x) (1u << IR_DT_##x)
  switch (s) {
  case IR_DT_BOOL: return B(INT8) | B(UINT8);
  case IR_DT_INT8: return B(INT16);
  case IR_DT_INT16: return B(INT32);
  case IR_DT_INT32: return B(INT64);
  case IR_DT_INT64: return B(FLOAT16) | B(BFLOAT16);
  case IR_DT_UINT8: return B(INT16) | B(UINT16);
  case IR_DT_UINT16: return B(INT32) | B(UINT32);
  case IR_DT_UINT32: return B(INT64) | B(UINT64);
  case IR_DT_UINT64: return B(FLOAT16) | B(BFLOAT16);
  case IR_DT_FLOAT16: case IR_DT_BFLOAT16: return B(FLOAT32);
  case IR_DT_FLOAT32: return B(FLOAT64);
  default: return 0;
  }
#undef B
}

static uint32_t upper_set(enum ir_scalar s) {
  uint32_t set = 1u << s, prev = 0;
  while (set != prev) {
    prev = set;
    for (int k = 0; k < IR_DT_COUNT; k++)
      if (set & (1u << k)) set |= parents((enum ir_scalar)k);
  }
  return set;
}

/* The least upper bound: the lowest common ancestor in ir's dtype order (tinygrad's priority:
 * float16 11 < bfloat16 12 < float32 13 < float64 14, the order of ir_dtypes.def). */
enum ir_scalar t_promote(enum ir_scalar a, enum ir_scalar b) {
  if (a == b) return a;
  uint32_t common = upper_set(a) & upper_set(b);
  for (int k = 0; k < IR_DT_COUNT; k++)
    if (common & (1u << k)) return (enum ir_scalar)k;
  return IR_DT_FLOAT32;
}

/* tinygrad's sum_acc_dtype: floats sum in at least float32 (the 16-bit ones are cast back by
 * n_sum), float64 in float64; unsigned ints in at least uint32, the others in at least int32. */
enum ir_scalar t_sum_acc(enum ir_scalar s) {
  if (ir_scalar_is_float(s)) return t_promote(s, IR_DT_FLOAT32);
  if (ir_scalar_is_int(s) && !ir_scalar_is_signed(s)) return t_promote(s, IR_DT_UINT32);
  return t_promote(s, IR_DT_INT32);
}

double t_value_double(enum ir_scalar s, const void *p) {
  switch (s) {
  case IR_DT_BOOL: return *(const uint8_t *)p != 0;
  case IR_DT_INT8: return *(const int8_t *)p;
  case IR_DT_UINT8: return *(const uint8_t *)p;
  case IR_DT_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
  case IR_DT_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
  case IR_DT_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
  case IR_DT_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
  case IR_DT_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
  case IR_DT_UINT64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
  case IR_DT_FLOAT16: { uint16_t v; memcpy(&v, p, 2); return bg_f16_to_f32(v); }
  case IR_DT_BFLOAT16: { uint16_t v; memcpy(&v, p, 2); return bg_bf16_to_f32(v); }
  case IR_DT_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
  case IR_DT_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
  default: return NAN;
  }
}
