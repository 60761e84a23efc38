/* tests/mockgpu/rdna3/rdna3_isa.h: what differs between the shader core generations (rdna3.h rdna3_gen).
 *
 * The executors work in gfx11 opcode numbers (rdna3_ops.h). Per generation and format a table maps an encoded
 * opcode to that internal number: 0 keeps it, -1 says the generation has no such instruction (the core stops with
 * "unimplemented"), k > 0 renames it to internal opcode k - 1. Opcodes that exist on gfx12 only keep their gfx12
 * number internally and are -1 in the gfx11 tables. Facts: AMD "RDNA3" and "RDNA4 Instruction Set Architecture
 * Reference Guide" opcode tables, cross-checked with llvm-mc-22 --disassemble for -mcpu=gfx1100 and gfx1200. */
#ifndef BG_MOCKGPU_RDNA3_ISA_H
#define BG_MOCKGPU_RDNA3_ISA_H

#include <stdbool.h>
#include <stdint.h>

#include "rdna3.h"

typedef struct rdna3_optab {
  const int16_t *map;   /* NULL: every opcode keeps its number */
  unsigned n;           /* entries in map; opcodes beyond keep their number */
} rdna3_optab;

typedef struct rdna3_isa {
  rdna3_gen gen;
  const char *name;     /* "gfx11" */
  const char *mcpu;     /* LLVM processor for the report disassembly */
  rdna3_optab sopp, sop1, sop2, sopc, sopk, vop, vop3p;
  /* the wait counter scalar loads count on: lgkmcnt (gfx11) or kmcnt (gfx12) */
  unsigned smem_counter;
  /* gfx12: WMMA A/B take 4 VGPRs (lanes 16-31 carry K 8..15), D rows 8*(lane/16)+r; gfx11: 8 VGPRs, repeated halves */
  bool wmma_gfx12;
} rdna3_isa;

extern const rdna3_isa rdna3_isa_gfx11, rdna3_isa_gfx12;
const rdna3_isa *rdna3_isa_of(rdna3_gen gen);

/* The internal opcode of op in t, or -1 when the generation has none. */
static inline int rdna3_isa_op(const rdna3_optab *t, unsigned op) {
  int v = t->map && op < t->n ? t->map[op] : 0;
  return v == 0 ? (int)op : v < 0 ? -1 : v - 1;
}

#endif
