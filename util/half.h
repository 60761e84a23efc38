/* util/half.h: host conversions between float32 and the 16-bit float formats (IEEE 754 binary16
 * "float16" and bfloat16), bit patterns in uint16_t. They match the C renderer's prelude
 * (compile/kprelude.c), so a constant folded on the host equals the value a kernel computes. */
#ifndef BG_UTIL_HALF_H
#define BG_UTIL_HALF_H

#include <stdint.h>

/* float32 -> float16, round to nearest even; overflow gives +-inf, NaN stays a quiet NaN keeping the
 * top payload bits, values below half the smallest denormal give +-0. */
uint16_t bg_f32_to_f16(float f);
/* float16 -> float32, exact (denormals included). */
float bg_f16_to_f32(uint16_t h);
/* float32 -> bfloat16, round to nearest even; NaN stays a quiet NaN. */
uint16_t bg_f32_to_bf16(float f);
/* bfloat16 -> float32, exact. */
float bg_bf16_to_f32(uint16_t h);

#endif
