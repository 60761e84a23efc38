/* tests/mockgpu/rdna3/rdna3_internal.h: wave state and the helpers the instruction executors share.
 * Exposed to tests/unit/rdna3 too, which run single waves with preset registers. */
#ifndef BG_MOCKGPU_RDNA3_INTERNAL_H
#define BG_MOCKGPU_RDNA3_INTERNAL_H

#include "rdna3.h"
#include "rdna3_isa.h"

/* Scalar operand numbers (RDNA3 ISA guide, "Scalar ALU operands"; LLVM SIDefines.h). */
enum {
  RDNA3_VCC_LO = 106, RDNA3_VCC_HI = 107, RDNA3_NULL = 124, RDNA3_M0 = 125,
  RDNA3_EXEC_LO = 126, RDNA3_EXEC_HI = 127,
  RDNA3_SRC_ZERO = 128, RDNA3_SRC_INT_MAX = 192, RDNA3_SRC_NEG_MAX = 208,
  RDNA3_SRC_SHARED_BASE = 235, RDNA3_SRC_SHARED_LIMIT = 236,
  RDNA3_SRC_PRIVATE_BASE = 237, RDNA3_SRC_PRIVATE_LIMIT = 238,
  RDNA3_SRC_HALF = 240, RDNA3_SRC_INV_2PI = 248,
  RDNA3_SRC_DPP8 = 233, RDNA3_SRC_DPP8FI = 234, RDNA3_SRC_DPP16 = 250,
  RDNA3_SRC_VCCZ = 251, RDNA3_SRC_EXECZ = 252, RDNA3_SRC_SCC = 253, RDNA3_SRC_LDS_DIRECT = 254,
  RDNA3_SRC_LITERAL = 255, RDNA3_SRC_VGPR = 256,
};

#define RDNA3_LANES 32
#define RDNA3_NSGPR 128
#define RDNA3_NVGPR 256
/* Apertures the flat instructions decode (SH_MEM_BASES as the AM driver programs them). */
#define RDNA3_SHARED_BASE 0x1000000000000ull
#define RDNA3_PRIVATE_BASE 0x2000000000000ull
#define RDNA3_APERTURE_SIZE 0x100000000ull

/* Outstanding loads (rdna3.h "Memory latency"): per counter a ring in issue order. An entry holds
 * the data read at issue and lands it in the destination when the wave waits. */
/* gfx11: vmcnt and lgkmcnt (LDS and scalar loads in one order). gfx12 splits them: loadcnt (RDNA3_VMCNT), dscnt
 * (RDNA3_LGKMCNT, LDS only) and kmcnt (scalar loads, rdna3_isa.smem_counter). */
enum { RDNA3_VMCNT, RDNA3_LGKMCNT, RDNA3_KMCNT, RDNA3_NCNT };
#define RDNA3_PEND_MAX 16u
typedef struct rdna3_pend {
  uint16_t reg;                            /* first destination: SGPR number, or RDNA3_SRC_VGPR + VGPR */
  uint16_t n;                              /* registers (0: an op that returns nothing, e.g. ds_store) */
  uint32_t lanes;                          /* VGPR destinations: lanes written */
  uint32_t mask;                           /* bits of each register written (d16 loads: one half) */
  uint32_t d[4][RDNA3_LANES];              /* VGPR i of lane l; SGPRs: d[0][0..15] */
} rdna3_pend;
typedef struct rdna3_pq {
  unsigned head, n;
  rdna3_pend e[RDNA3_PEND_MAX];
} rdna3_pq;

typedef struct rdna3_wave {
  uint32_t s[RDNA3_NSGPR];                 /* includes VCC, M0, EXEC at their operand numbers */
  uint32_t v[RDNA3_NVGPR][RDNA3_LANES];
  uint64_t pc;
  bool scc;
  bool done, at_barrier;
  bool barrier_signaled;                   /* gfx12: s_barrier_signal done, s_barrier_wait not yet */
  uint32_t wave;                           /* index within the workgroup */
  uint16_t wmma_d;                         /* the last VALU op was a WMMA writing v[wmma_d-1 ..+8) (0: not) */
  uint32_t wg[3];
  /* Last: rdna3_wave_reset clears only the ring heads, not the entries. */
  rdna3_pq pq[RDNA3_NCNT];
} rdna3_wave;

/* What one dispatch shares between its waves. */
typedef struct rdna3_ctx {
  const rdna3_isa *isa;                    /* the generation's tables; NULL: gfx11 */
  const rdna3_mem *mem;
  rdna3_report *rep;
  uint8_t *lds;
  uint32_t lds_size;
  uint64_t scratch_base;                   /* 0: no scratch */
  uint32_t scratch_lane_bytes;             /* per work-item */
  uint32_t wave_flat_id;                   /* wave index within the dispatch, for scratch */
  uint32_t denorm_mode;                    /* RSRC1 FLOAT_DENORM_MODE_32 (0: flush) */
  unsigned nvgpr;                          /* VGPRs granted to each wave (RSRC1.VGPRS), <= RDNA3_NVGPR */
  uint64_t insts, budget;
  rdna3_stats st;                          /* counted as the waves run; copied to the report at the end */
  /* The instruction being executed, for reports. */
  uint32_t enc[3];
  unsigned avail;                          /* dwords of enc that are mapped code */
  unsigned ndw;                            /* the instruction's size in dwords, literal included */
  uint32_t lit;                            /* its literal constant (valid when it has one) */
  bool jumped;                             /* it set the pc (branch): no advance */
  uint16_t prev_wmma_d;                    /* VALU ops: the wave's wmma_d before this one (rdna3_wmma.c hazard) */
} rdna3_ctx;

/* Execute one instruction of w at w->pc (fetching, decoding, advancing pc). 0, or -1 with the
 * report filled. */
int rdna3_step(rdna3_ctx *c, rdna3_wave *w);
/* Run w until s_endpgm, s_barrier (returns 1) or a failure (-1); 0 at s_endpgm. */
int rdna3_run_wave(rdna3_ctx *c, rdna3_wave *w);

/* Report a failure on w's current instruction: message, pc, dwords, disassembly. Returns -1. */
int rdna3_fail(rdna3_ctx *c, const rdna3_wave *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* GPU memory through mem->xlate; a fault fills the report. 0 or -1. */
int rdna3_mem_read(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, void *dst, size_t n);
int rdna3_mem_write(rdna3_ctx *c, const rdna3_wave *w, uint64_t va, const void *src, size_t n);

/* VGPRs r..r+n-1 inside the wave's grant, else -1 with a report naming the register, the limit
 * and what the instruction used it for. */
int rdna3_vgpr_fail(rdna3_ctx *c, const rdna3_wave *w, unsigned r, unsigned n, const char *what);
static inline int rdna3_vgprs(rdna3_ctx *c, const rdna3_wave *w, unsigned r, unsigned n, const char *what) {
  return r + n <= c->nvgpr ? 0 : rdna3_vgpr_fail(c, w, r, n, what);
}

/* Outstanding loads (rdna3_wait.c). rdna3_pend_new: a new entry of counter cnt for n registers
 * from reg (SGPR number or RDNA3_SRC_VGPR + VGPR), lanes and mask as in rdna3_pend; when the ring
 * is full its oldest entry lands first. The caller fills d. */
rdna3_pend *rdna3_pend_new(rdna3_wave *w, unsigned cnt, unsigned reg, unsigned n, uint32_t lanes, uint32_t mask);
/* Land the oldest entries of cnt until at most k are outstanding. */
void rdna3_wait(rdna3_wave *w, unsigned cnt, unsigned k);
void rdna3_wait_all(rdna3_wave *w);
static inline void rdna3_wave_reset_pending(rdna3_wave *w) {
  for (unsigned i = 0; i < RDNA3_NCNT; i++) w->pq[i].head = w->pq[i].n = 0;
}

/* Per-format executors; the instruction's dwords are c->enc[0..]; c->ndw is the base size and
 * rdna3_take_literal grows it. They return 0 or -1. */
int rdna3_exec_sop2(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_sopk(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_sop1(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_sopc(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_sopp(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_smem(rdna3_ctx *c, rdna3_wave *w);
int rdna3_exec_vop(rdna3_ctx *c, rdna3_wave *w);   /* VOP1/VOP2/VOPC/VOP3/VOP3SD/VOP3P/VOPD */
int rdna3_exec_ds(rdna3_ctx *c, rdna3_wave *w);
/* LDS banks (rdna3_lds.c; RDNA3 ISA guide 12.1 "Overview": 64 dword-wide banks per WGP in two sets of 32,
 * each set serving one pair of SIMD32s, so one wave's access meets 32 banks; dwords are placed in the banks
 * serially: dword d is in bank d % 32). The extra cycles bank conflicts cost one DS access: addr[a][l] is address
 * a (naddr 1, or 2 for the two-address forms) of lane l, each ndw dwords wide; only lanes in exec count. */
#define RDNA3_LDS_BANKS 32u
uint64_t rdna3_lds_conflicts(const uint32_t addr[2][RDNA3_LANES], unsigned naddr, unsigned ndw, uint32_t exec);
int rdna3_exec_flat(rdna3_ctx *c, rdna3_wave *w);  /* FLAT/GLOBAL/SCRATCH */
int rdna3_exec_mubuf(rdna3_ctx *c, rdna3_wave *w); /* buffer_gl0_inv/gl1_inv only */

/* At least n dwords of the current instruction in c->enc (translating the next page only when
 * the instruction continues there). 0 or -1 with the report filled. */
int rdna3_need(rdna3_ctx *c, const rdna3_wave *w, unsigned n);
/* The literal dword after the instruction's base dwords: -1 when it is outside mapped code. */
int rdna3_take_literal(rdna3_ctx *c, const rdna3_wave *w);

/* Scalar source operand (SSRC 0..255, literal in c->enc[1]) as 32 or 64 bits. */
uint32_t rdna3_sreg32(const rdna3_ctx *c, const rdna3_wave *w, unsigned src);
uint64_t rdna3_sreg64(const rdna3_ctx *c, const rdna3_wave *w, unsigned src);
void rdna3_swrite32(rdna3_wave *w, unsigned dst, uint32_t v);
void rdna3_swrite64(rdna3_wave *w, unsigned dst, uint64_t v);

static inline uint32_t rdna3_exec_mask(const rdna3_wave *w) { return w->s[RDNA3_EXEC_LO]; }

#endif
