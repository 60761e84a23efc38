/* tests/mockgpu/cdna3/cdna3_internal.h: wave64 state and the helpers the CDNA3 executors share.
 * Exposed to tests/unit/cdna3 too, which run single waves with preset registers. */
#ifndef BG_MOCKGPU_CDNA3_INTERNAL_H
#define BG_MOCKGPU_CDNA3_INTERNAL_H

#include "cdna3.h"

/* Scalar operand numbers of gfx9 (CDNA3 ISA guide "Scalar ALU operands"; LLVM SIDefines.h). */
enum {
  CDNA3_FLAT_SCR_LO = 102, CDNA3_FLAT_SCR_HI = 103, CDNA3_VCC_LO = 106, CDNA3_VCC_HI = 107, CDNA3_M0 = 124,
  CDNA3_EXEC_LO = 126, CDNA3_EXEC_HI = 127,
  CDNA3_SRC_ZERO = 128, CDNA3_SRC_INT_MAX = 192, CDNA3_SRC_NEG_MAX = 208,
  CDNA3_SRC_SHARED_BASE = 235, CDNA3_SRC_SHARED_LIMIT = 236, CDNA3_SRC_PRIVATE_BASE = 237,
  CDNA3_SRC_PRIVATE_LIMIT = 238, CDNA3_SRC_HALF = 240, CDNA3_SRC_INV_2PI = 248,
  CDNA3_SRC_SDWA = 249, CDNA3_SRC_DPP = 250, CDNA3_SRC_VCCZ = 251, CDNA3_SRC_EXECZ = 252, CDNA3_SRC_SCC = 253,
  CDNA3_SRC_LDS_DIRECT = 254, CDNA3_SRC_LITERAL = 255, CDNA3_SRC_VGPR = 256,
};

#define CDNA3_LANES 64
#define CDNA3_NSGPR 128
/* The unified register file of a gfx90a/gfx942 wave64: 512 registers, the architected VGPRs first and the AGPRs
 * from COMPUTE_PGM_RSRC3.ACCUM_OFFSET on (AMDGPUUsage "COMPUTE_PGM_RSRC3", gfx90a/gfx942). */
#define CDNA3_NREG 512
#define CDNA3_NVGPR 256
/* Flat apertures (SRC_SHARED_BASE / SRC_PRIVATE_BASE as the driver programs SH_MEM_BASES). */
#define CDNA3_SHARED_BASE 0x1000000000000ull
#define CDNA3_PRIVATE_BASE 0x2000000000000ull
#define CDNA3_APERTURE_SIZE 0x100000000ull

/* Outstanding loads, as in the RDNA3 core (rdna3.h "Memory latency"): per counter a ring in issue order; an entry
 * holds the data read at issue and lands it when the wave waits. */
enum { CDNA3_VMCNT, CDNA3_LGKMCNT, CDNA3_NCNT };
#define CDNA3_PEND_MAX 16u
typedef struct cdna3_pend {
  uint16_t reg;                  /* SGPR number, or CDNA3_SRC_VGPR + physical register (AGPRs included) */
  uint16_t n;                    /* registers (0: returns nothing) */
  uint64_t lanes;                /* register destinations: lanes written */
  uint32_t mask;                 /* bits of each register written (d16 loads: one half) */
  uint32_t d[4][CDNA3_LANES];    /* register i of lane l; SGPRs: d[0][0..15] */
} cdna3_pend;
typedef struct cdna3_pq {
  unsigned head, n;
  cdna3_pend e[CDNA3_PEND_MAX];
} cdna3_pq;

typedef struct cdna3_wave {
  uint32_t s[CDNA3_NSGPR];       /* VCC, M0, EXEC at their operand numbers */
  uint32_t v[CDNA3_NREG][CDNA3_LANES];
  uint64_t pc;
  bool scc;
  bool done, at_barrier;
  bool gpr_idx_en;               /* MODE.gpr_idx_en (s_set_gpr_idx_on): VGPR operands offset by M0[7:0] */
  uint32_t mode;                 /* HW_REG_MODE as s_getreg/s_setreg see it (the float modes are not modelled) */
  uint32_t wave;
  uint32_t wg[3];
  cdna3_pq pq[CDNA3_NCNT];       /* last: reset clears only the ring heads */
} cdna3_wave;

typedef struct cdna3_ctx {
  const rdna3_mem *mem;
  rdna3_report *rep;
  uint8_t *lds;
  uint32_t lds_size;
  uint64_t scratch_base;         /* 0: no scratch */
  uint32_t scratch_lane_bytes;
  uint32_t wave_flat_id;
  unsigned nvgpr;                /* architected VGPRs usable: ACCUM_OFFSET (or the grant when no AGPRs) */
  unsigned accum_offset;         /* first physical register of the AGPRs */
  unsigned nreg;                 /* registers granted in all (RSRC1.VGPRS, unified file) */
  uint64_t insts, budget;
  rdna3_stats st;
  uint32_t enc[3];
  unsigned avail, ndw;
  uint32_t lit;
  bool jumped;
} cdna3_ctx;

static inline uint64_t cdna3_exec(const cdna3_wave *w) {
  return w->s[CDNA3_EXEC_LO] | (uint64_t)w->s[CDNA3_EXEC_HI] << 32;
}
static inline void cdna3_set_exec(cdna3_wave *w, uint64_t e) {
  w->s[CDNA3_EXEC_LO] = (uint32_t)e, w->s[CDNA3_EXEC_HI] = (uint32_t)(e >> 32);
}

int cdna3_step(cdna3_ctx *c, cdna3_wave *w);
int cdna3_run_wave(cdna3_ctx *c, cdna3_wave *w);  /* 0 at s_endpgm, 1 at s_barrier, -1 failure */
int cdna3_fail(cdna3_ctx *c, const cdna3_wave *w, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cdna3_mem_read(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, void *dst, size_t n);
int cdna3_mem_write(cdna3_ctx *c, const cdna3_wave *w, uint64_t va, const void *src, size_t n);
int cdna3_need(cdna3_ctx *c, const cdna3_wave *w, unsigned n);
int cdna3_take_literal(cdna3_ctx *c, const cdna3_wave *w);

/* Physical register of VGPR r (acc false) or AGPR r (acc true), n registers wide, checked against the grant;
 * -1 with a report naming the register and what the instruction used it for. */
int cdna3_reg(cdna3_ctx *c, const cdna3_wave *w, unsigned r, unsigned n, bool acc, const char *what);

uint32_t cdna3_sreg32(const cdna3_ctx *c, const cdna3_wave *w, unsigned src);
uint64_t cdna3_sreg64(const cdna3_ctx *c, const cdna3_wave *w, unsigned src);
void cdna3_swrite32(cdna3_wave *w, unsigned dst, uint32_t v);
void cdna3_swrite64(cdna3_wave *w, unsigned dst, uint64_t v);

cdna3_pend *cdna3_pend_new(cdna3_wave *w, unsigned cnt, unsigned reg, unsigned n, uint64_t lanes, uint32_t mask);
void cdna3_wait(cdna3_wave *w, unsigned cnt, unsigned k);
void cdna3_wait_all(cdna3_wave *w);
static inline void cdna3_wave_reset_pending(cdna3_wave *w) {
  for (unsigned i = 0; i < CDNA3_NCNT; i++) w->pq[i].head = w->pq[i].n = 0;
}

int cdna3_exec_sop2(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_sopk(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_sop1(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_sopc(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_sopp(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_smem(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_vop(cdna3_ctx *c, cdna3_wave *w);    /* VOP1/VOP2/VOPC (+SDWA), VOP3A/B */
int cdna3_exec_vop3p(cdna3_ctx *c, cdna3_wave *w);  /* packed math, mix, dot, accvgpr, MFMA */
int cdna3_exec_mfma(cdna3_ctx *c, cdna3_wave *w, unsigned op);
int cdna3_exec_ds(cdna3_ctx *c, cdna3_wave *w);
int cdna3_exec_flat(cdna3_ctx *c, cdna3_wave *w);   /* FLAT/GLOBAL/SCRATCH */
int cdna3_exec_mubuf(cdna3_ctx *c, cdna3_wave *w);

void cdna3_disasm(const uint32_t *enc, unsigned ndw, char *buf, size_t n);

#endif
