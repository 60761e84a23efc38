/* tests/mockgpu/rdna3/rdna3_valu.h: the VALU's decoded form. Every VOP1/VOP2/VOPC/VOP3/VOP3SD/VOPD
 * instruction becomes an rdna3_vinst in VOP3 opcode numbering; operand types come from a table. */
#ifndef BG_MOCKGPU_RDNA3_VALU_H
#define BG_MOCKGPU_RDNA3_VALU_H

#include "rdna3_internal.h"

/* Operand types: they decide inline-constant values, width and where abs/neg apply. */
enum { VT_NONE, VT_B16, VT_F16, VT_B32, VT_F32, VT_B64, VT_F64 };

typedef struct rdna3_vop_info {
  const char *name;
  uint8_t src[3], dst;
} rdna3_vop_info;

extern const rdna3_vop_info rdna3_vops[];

static inline bool rdna3_vt16(uint8_t t) { return t == VT_B16 || t == VT_F16; }
static inline bool rdna3_vt64(uint8_t t) { return t == VT_B64 || t == VT_F64; }
/* VOP3SD: the SDST field replaces ABS/OPSEL (carry-out or VCC-like result). */
bool rdna3_is_vop3sd(unsigned op);
/* The entry for op (VOPC ops are derived from their range), or NULL when not implemented. */
const rdna3_vop_info *rdna3_vop_lookup(unsigned op, rdna3_vop_info *scratch);

typedef struct rdna3_vinst {
  unsigned op;
  unsigned src[3];      /* 9-bit operand numbers */
  unsigned vdst;        /* VGPR number (16-bit destinations: dst_hi picks the half) */
  unsigned sdst;        /* VOP3SD carry-out / VOPC destination SGPR */
  unsigned abs, neg;    /* per source bit masks */
  unsigned src_hi;      /* per source: 16-bit operand takes the high half */
  bool dst_hi, clamp;
  unsigned omod;
  bool e32;             /* VOP1/VOP2/VOPC encoding: implicit VCC for carries, cndmask, compares */
} rdna3_vinst;

/* One lane's operands and result. cin: carry-in / condition bit; cout: carry-out / compare bit. */
typedef struct rdna3_lane {
  uint64_t s[3];
  uint64_t d;
  bool cin, cout;
  unsigned lane;
} rdna3_lane;

/* The VOPC condition of op (VOP3 numbering) on operands of type t. */
bool rdna3_vopc_compare(unsigned op, uint8_t t, uint64_t a, uint64_t b);
/* Compute one lane of op; 0, or -1 when op has no lane semantics here. */
int rdna3_lane_op(unsigned op, rdna3_lane *l);

/* Execute a decoded instruction on every active lane; results written before return. results:
 * when not NULL, results are stored there instead (VOPD pairs commit after both ran). */
typedef struct rdna3_vresult {
  uint64_t d[RDNA3_LANES];
  uint32_t mask;        /* lanes written */
  const rdna3_vop_info *info;
  rdna3_vinst in;
} rdna3_vresult;
int rdna3_valu_run(rdna3_ctx *c, rdna3_wave *w, const rdna3_vinst *in, rdna3_vresult *defer);
void rdna3_valu_commit(rdna3_wave *w, const rdna3_vresult *r);

int rdna3_exec_vop3p(rdna3_ctx *c, rdna3_wave *w);
/* V_WMMA_* (rdna3_wmma.c); called by rdna3_exec_vop3p with the two dwords fetched. */
int rdna3_exec_wmma(rdna3_ctx *c, rdna3_wave *w);

/* Whole-wave fast path for common 32-bit opcodes (rdna3_valu_fast.c): d[l] = op(a[l], b[l], c[l])
 * for all 32 lanes; false when op is not one of them. */
bool rdna3_valu_fast(unsigned op, const uint32_t *a, const uint32_t *b, const uint32_t *c, uint32_t *d);
/* Carry-in/out and condition forms (v_cndmask, v_add/sub_co[_ci]): cin and *cout one bit a lane. */
bool rdna3_valu_fast_carry(unsigned op, const uint32_t *a, const uint32_t *b, uint32_t cin, uint32_t *d,
                           uint32_t *cout);
/* 32-bit integer and float compares: *mask gets every lane's result. */
bool rdna3_valu_fast_cmp(unsigned op, const uint32_t *a, const uint32_t *b, uint32_t *mask);

#endif
