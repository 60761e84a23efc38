/* am/am_pm4.h: PM4 type-3 packet encoders for the compute queue (tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue; opcodes and bit fields as Linux's
 * nvd.h / soc15d.h name them, layouts as tinygrad's ops_amd.py emits them for gfx9 and gfx10+).
 *
 * Each encoder writes its packet into dw (which must hold BG_PM4_*_DW dwords) and returns the number of dwords
 * written. Operand fields that a queue template patches sit at fixed dword indices (BG_PM4_*_DW_* below); 64-bit
 * addresses are a lo32 dword followed by the hi32 dword, so one little-endian 8-byte patch fills both.
 * `gfx` is the GC major version (9, 11, 12): gfx9 differs in ACQUIRE_MEM, RELEASE_MEM cache bits, RSRC3's offset
 * and has no wave32 dispatch. */
#ifndef BG_AM_PM4_H
#define BG_AM_PM4_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Type-3 header: PACKET3(op, n) with n = payload dwords - 1. */
#define PACKET3(op, n) ((3u << 30) | (((uint32_t)(op) & 0xffu) << 8) | (((uint32_t)(n) & 0x3fffu) << 16))
#define PACKET3_OPCODE(hdr) (((hdr) >> 8) & 0xffu)
#define PACKET3_COUNT(hdr) (((hdr) >> 16) & 0x3fffu)
#define PACKET_TYPE(hdr) ((hdr) >> 30)

/* Opcodes (nvd.h / soc15d.h). */
enum {
  PACKET3_NOP = 0x10,
  PACKET3_DISPATCH_DIRECT = 0x15,
  PACKET3_PRED_EXEC = 0x23,
  PACKET3_WAIT_REG_MEM = 0x3C,
  PACKET3_INDIRECT_BUFFER = 0x3F,
  PACKET3_COPY_DATA = 0x40,
  PACKET3_EVENT_WRITE = 0x46,
  PACKET3_RELEASE_MEM = 0x49,
  PACKET3_ACQUIRE_MEM = 0x58,
  PACKET3_SET_SH_REG = 0x76,
  PACKET3_SET_UCONFIG_REG = 0x79,
};
#define PACKET3_SET_SH_REG_START 0x2c00u
#define PACKET3_SET_SH_REG_END 0x3000u
#define PACKET3_SET_UCONFIG_REG_START 0xc000u
#define INDIRECT_BUFFER_VALID (1u << 23)

/* WAIT_REG_MEM (nvd.h WAIT_REG_MEM_*). */
#define WAIT_REG_MEM_FUNCTION(x) ((uint32_t)(x) << 0)
#define WAIT_REG_MEM_MEM_SPACE(x) ((uint32_t)(x) << 4)
#define WAIT_REG_MEM_OPERATION(x) ((uint32_t)(x) << 6)
#define WAIT_REG_MEM_ENGINE(x) ((uint32_t)(x) << 8)
enum { WAIT_REG_MEM_FUNC_EQ = 3, WAIT_REG_MEM_FUNC_NEQ = 4, WAIT_REG_MEM_FUNC_GEQ = 5 };

/* EVENT_WRITE / RELEASE_MEM event fields. */
#define EVENT_TYPE(x) ((uint32_t)(x) << 0)
#define EVENT_INDEX(x) ((uint32_t)(x) << 8)
enum { CS_PARTIAL_FLUSH = 0x07, CACHE_FLUSH_AND_INV_TS_EVENT = 0x14 };
/* RELEASE_MEM dword 1 cache actions, gfx10+ (nvd.h PACKET3_RELEASE_MEM_GCR_*) and gfx9 (soc15d.h EOP_*). */
#define PACKET3_RELEASE_MEM_GCR_GLM_WB (1u << 12)
#define PACKET3_RELEASE_MEM_GCR_GLM_INV (1u << 13)
#define PACKET3_RELEASE_MEM_GCR_GLV_INV (1u << 14)
#define PACKET3_RELEASE_MEM_GCR_GL1_INV (1u << 15)
#define PACKET3_RELEASE_MEM_GCR_GL2_INV (1u << 20)
#define PACKET3_RELEASE_MEM_GCR_GL2_WB (1u << 21)
#define PACKET3_RELEASE_MEM_GCR_SEQ (1u << 22)
#define EOP_TC_WB_ACTION_EN (1u << 15)
#define EOP_TC_NC_ACTION_EN (1u << 19)
/* RELEASE_MEM dword 2. */
#define PACKET3_RELEASE_MEM_DATA_SEL(x) ((uint32_t)(x) << 29)
#define PACKET3_RELEASE_MEM_INT_SEL(x) ((uint32_t)(x) << 24)
#define PACKET3_RELEASE_MEM_DST_SEL(x) ((uint32_t)(x) << 16)
enum { RELEASE_MEM_DATA_NONE = 0, RELEASE_MEM_DATA_32 = 1, RELEASE_MEM_DATA_64 = 2, RELEASE_MEM_DATA_CLOCK = 3 };

/* ACQUIRE_MEM GCR_CNTL (gfx10+, nvd.h PACKET3_ACQUIRE_MEM_GCR_CNTL_*) and gfx9 CP_COHER_CNTL bits. */
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(x) ((uint32_t)(x) << 0)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(x) ((uint32_t)(x) << 4)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(x) ((uint32_t)(x) << 5)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(x) ((uint32_t)(x) << 6)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(x) ((uint32_t)(x) << 7)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(x) ((uint32_t)(x) << 8)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(x) ((uint32_t)(x) << 9)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(x) ((uint32_t)(x) << 14)
#define PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(x) ((uint32_t)(x) << 15)
#define PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(x) ((uint32_t)(x) << 29)
#define PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA(x) ((uint32_t)(x) << 27)
#define PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(x) ((uint32_t)(x) << 23)
#define PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA(x) ((uint32_t)(x) << 22)
#define PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(x) ((uint32_t)(x) << 18)

/* DISPATCH_DIRECT initiator (COMPUTE_DISPATCH_INITIATOR fields). */
#define COMPUTE_DISPATCH_INITIATOR_COMPUTE_SHADER_EN (1u << 0)
#define COMPUTE_DISPATCH_INITIATOR_FORCE_START_AT_000 (1u << 2)
#define COMPUTE_DISPATCH_INITIATOR_CS_W32_EN (1u << 15)

/* SH register offsets from PACKET3_SET_SH_REG_START (GC seg0 base + mmCOMPUTE_* - 0x2c00, tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue). */
enum {
  COMPUTE_DISPATCH_INITIATOR = 0x200,
  COMPUTE_START_X = 0x204, /* START_X/Y/Z, NUM_THREAD_X/Y/Z, PIPELINESTAT_ENABLE, PERFCOUNT_ENABLE follow */
  COMPUTE_NUM_THREAD_X = 0x207,
  COMPUTE_PGM_LO = 0x20c,
  COMPUTE_PGM_HI = 0x20d,
  COMPUTE_DISPATCH_SCRATCH_BASE_LO = 0x210,
  COMPUTE_PGM_RSRC1 = 0x212,
  COMPUTE_PGM_RSRC2 = 0x213,
  COMPUTE_RESOURCE_LIMITS = 0x215,
  COMPUTE_STATIC_THREAD_MGMT_SE0 = 0x216,
  COMPUTE_TMPRING_SIZE = 0x218,
  COMPUTE_RESTART_X = 0x21b,
  COMPUTE_PGM_RSRC3_GFX10 = 0x228,
  COMPUTE_PGM_RSRC3_GFX9 = 0x22d,
  COMPUTE_USER_DATA_0 = 0x240,
};
#define BG_PM4_MAX_USER_DATA 16u

/* Packet sizes in dwords and the dword index of patchable fields. */
enum {
  BG_PM4_WAIT_MEM_DW = 7, BG_PM4_WAIT_DW_ADDR = 2, BG_PM4_WAIT_DW_REF = 4, BG_PM4_WAIT_DW_MASK = 5,
  BG_PM4_RELEASE_MEM_DW = 8, BG_PM4_RELEASE_DW_ADDR = 3, BG_PM4_RELEASE_DW_DATA = 5,
  BG_PM4_ACQUIRE_MEM_DW_GFX10 = 8, BG_PM4_ACQUIRE_MEM_DW_GFX9 = 7,
  BG_PM4_DISPATCH_DW = 5, BG_PM4_DISPATCH_DW_X = 1,
  BG_PM4_EVENT_WRITE_DW = 2,
  BG_PM4_INDIRECT_DW = 4,
  BG_PM4_HDP_FLUSH_DW = 7,
};

/* Which caches an ACQUIRE_MEM invalidates/writes back. */
typedef struct bg_pm4_caches {
  bool gli, glm, glk, glv, gl1, gl2;
} bg_pm4_caches;
#define BG_PM4_ALL_CACHES ((bg_pm4_caches){true, true, true, true, true, true})
/* The dispatch prologue: everything but the instruction cache and L2 (gcr 0x3F0). */
#define BG_PM4_DISPATCH_CACHES ((bg_pm4_caches){false, true, true, true, true, false})

/* PACKET3_NOP filling n >= 1 dwords (header + n-1 ignored dwords, zeroed). */
unsigned bg_pm4_nop(uint32_t *dw, unsigned n);
/* SET_SH_REG of n consecutive registers from `reg` (offset from 0x2c00). 2 + n dwords. */
unsigned bg_pm4_set_sh_reg(uint32_t *dw, uint32_t reg, const uint32_t *vals, unsigned n);
/* SET_UCONFIG_REG (offset from 0xc000). 2 + n dwords. */
unsigned bg_pm4_set_uconfig_reg(uint32_t *dw, uint32_t reg, const uint32_t *vals, unsigned n);
/* WAIT_REG_MEM on memory: wait until (*(u32 *)addr & mask) <func> ref, poll interval 4. */
unsigned bg_pm4_wait_mem(uint32_t *dw, unsigned func, uint64_t addr, uint32_t ref, uint32_t mask);
/* HDP flush as tinygrad's memory_barrier: WAIT_REG_MEM register mode write-then-wait (OPERATION 1) on the absolute
 * dword registers GPU_HDP_FLUSH_REQ / GPU_HDP_FLUSH_DONE, ref = mask = 0xffffffff. */
unsigned bg_pm4_hdp_flush(uint32_t *dw, uint32_t req_reg, uint32_t done_reg);
/* ACQUIRE_MEM over the whole address range. */
unsigned bg_pm4_acquire_mem(uint32_t *dw, unsigned gfx, bg_pm4_caches c);
/* RELEASE_MEM at end of pipe (CACHE_FLUSH_AND_INV_TS_EVENT, EVENT_INDEX 5): write `data_sel` data to addr after
 * the preceding work, optionally writing back/invalidating the caches first; int_sel 0 = no interrupt. */
unsigned bg_pm4_release_mem(uint32_t *dw, unsigned gfx, uint64_t addr, uint64_t data, unsigned data_sel,
                            unsigned int_sel, bool cache_flush);
/* DISPATCH_DIRECT of gx*gy*gz work-groups. */
unsigned bg_pm4_dispatch_direct(uint32_t *dw, unsigned gfx, uint32_t gx, uint32_t gy, uint32_t gz, bool wave32);
/* EVENT_WRITE of an event type with its index (CS_PARTIAL_FLUSH uses index 4). */
unsigned bg_pm4_event_write(uint32_t *dw, uint32_t event, uint32_t index);
/* INDIRECT_BUFFER of ndw dwords at addr (4-byte aligned), valid bit set. */
unsigned bg_pm4_indirect_buffer(uint32_t *dw, uint64_t addr, uint32_t ndw);
/* Offset of COMPUTE_PGM_RSRC3 for a GC major. */
uint32_t bg_pm4_rsrc3_reg(unsigned gfx);
/* Name of an opcode ("PACKET3_RELEASE_MEM") or NULL, for fault reports and dumps. */
const char *bg_pm4_opcode_name(uint32_t op);

#ifdef __cplusplus
}
#endif
#endif
