/* compile/ktc.h: the tensor-core (bg_kopts.tc) form of each AMD processor: which matrix instruction the LLVM
 * renderer emits for a 16x16x16 float16/bfloat16 -> float32 tile, in which wave size and lane layout, and
 * whether the default heuristics choose it.
 *   RDNA3 (gfx11): wave32 WMMA, llvm.amdgcn.wmma.f32.16x16x16.f16 on <16 x half>; lane l holds row (A) /
 *     column (B) l%16 along all 16 k, lanes 16-31 repeat 0-15; accumulator element i is D[2i + l/16][l%16]
 *     (RDNA3 ISA guide "Wave Matrix Multiply Accumulate"). Opt-in only: RDNA3's WMMA issues no faster than
 *     the VALU path for these sizes (tinygrad keeps it behind TC=1 there too).
 *   RDNA4 (gfx12): wave32 WMMA on <8 x half>; lane l holds row/column l%16, k = 8*(l/16) .. +7; element i
 *     is D[8*(l/16) + i][l%16] (RDNA4 ISA guide "WMMA").
 *   CDNA3 (gfx942, gfx950): wave64 MFMA llvm.amdgcn.mfma.f32.16x16x16f16 (bfloat16: ..16x16x16bf16.1k) on
 *     <4 x half>, <4 x float> accumulator, cbsz/abid/blgp 0; lane l holds row/column l%16, k = 4*(l/16) .. +3;
 *     element i is D[4*(l/16) + i][l%16] (CDNA3 ISA guide "Matrix fused multiply-add", the AMD matrix
 *     instruction calculator's v_mfma_f32_16x16x16f16). */
#ifndef BG_COMPILE_KTC_H
#define BG_COMPILE_KTC_H

#include <stdbool.h>

typedef enum ktc_form { KTC_NONE, KTC_RDNA3_WMMA, KTC_RDNA4_WMMA, KTC_CDNA3_MFMA } ktc_form;

typedef struct ktc_shape {
  const char *name;       /* "RDNA3 WMMA" */
  unsigned wave;          /* lanes per wave: one wave computes one 16 x 16 tile */
  unsigned k_per_lane;    /* A (and B) elements each lane carries per 16-deep step */
  unsigned k_lane_step;   /* k of lane l starts at k_lane_step * (l / 16) */
  unsigned nacc;          /* accumulator elements per lane */
  unsigned row_mul, row_hi;  /* accumulator element i is row row_mul * i + row_hi * (l / 16) */
  bool by_default;        /* the heuristics choose it for a float16/bfloat16 matmul that fits */
} ktc_shape;

/* The form of processor mcpu (LLVM's -mcpu, "gfx1100"); KTC_NONE for others and NULL. */
ktc_form ktc_form_of(const char *mcpu);
/* Its shape; NULL for KTC_NONE. */
const ktc_shape *ktc_shape_of(ktc_form f);

#endif
