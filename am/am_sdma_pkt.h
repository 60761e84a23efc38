/* am/am_sdma_pkt.h: SDMA packet encoders for the copy queue (tinygrad tinygrad/runtime/ops_amd.py AMDCopyQueue; opcodes and fields as Linux's
 * sdma_v6_0_0_pkt_open.h / navi10_sdma_pkt_open.h name them).
 *
 * Header dword: op in bits 0..7, sub-op in 8..15, op-specific bits above. Each encoder writes its packet into dw
 * and returns the dwords written; patchable fields sit at the BG_SDMA_*_DW_* indices (64-bit addresses as lo32,
 * hi32, so one 8-byte patch fills both). Ring pointers of the SDMA queue count bytes. */
#ifndef BG_AM_SDMA_PKT_H
#define BG_AM_SDMA_PKT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SDMA_OP_NOP = 0,
  SDMA_OP_COPY = 1,
  SDMA_OP_WRITE = 2,
  SDMA_OP_INDIRECT = 4,
  SDMA_OP_FENCE = 5,
  SDMA_OP_TRAP = 6,
  SDMA_OP_SEM = 7,
  SDMA_OP_POLL_REGMEM = 8,
  SDMA_OP_COND_EXE = 9,
  SDMA_OP_ATOMIC = 10,
  SDMA_OP_CONST_FILL = 11,
  SDMA_OP_PTEPDE = 12,
  SDMA_OP_TIMESTAMP = 13,
  SDMA_OP_SRBM_WRITE = 14,
  SDMA_OP_PRE_EXE = 15,
  SDMA_OP_GPUVM_INV = 16,
  SDMA_OP_GCR_REQ = 17,
  SDMA_OP_DUMMY_TRAP = 32,
};
enum { SDMA_SUBOP_COPY_LINEAR = 0, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL = 2 };

#define SDMA_PKT_HEADER_OP(x) ((uint32_t)(x) & 0xffu)
#define SDMA_PKT_HEADER_SUB_OP(x) (((uint32_t)(x) & 0xffu) << 8)
#define SDMA_PKT_FENCE_HEADER_MTYPE(x) (((uint32_t)(x) & 7u) << 16)
#define SDMA_PKT_POLL_REGMEM_HEADER_FUNC(x) (((uint32_t)(x) & 7u) << 28)
#define SDMA_PKT_POLL_REGMEM_HEADER_MEM_POLL(x) (((uint32_t)(x) & 1u) << 31)
#define SDMA_PKT_POLL_REGMEM_DW5_INTERVAL(x) ((uint32_t)(x) & 0xffffu)
#define SDMA_PKT_POLL_REGMEM_DW5_RETRY_COUNT(x) (((uint32_t)(x) & 0xfffu) << 16)
#define SDMA_PKT_NOP_HEADER_COUNT(x) (((uint32_t)(x) & 0x3fffu) << 16)
enum { SDMA_POLL_FUNC_GEQ = 5 };

/* COPY_LINEAR count field: bytes - 1 in 30 bits (SDMA >= 5; tinygrad's max_copy_size 0x40000000) or 22 bits
 * (SDMA 4.x, 0x400000). */
#define BG_SDMA_MAX_COPY_V5 ((uint64_t)0x40000000)
#define BG_SDMA_MAX_COPY_V4 ((uint64_t)0x400000)

enum {
  BG_SDMA_COPY_DW = 7, BG_SDMA_COPY_DW_SRC = 3, BG_SDMA_COPY_DW_DST = 5,
  BG_SDMA_FENCE_DW = 4, BG_SDMA_FENCE_DW_ADDR = 1, BG_SDMA_FENCE_DW_DATA = 3,
  BG_SDMA_POLL_DW = 6, BG_SDMA_POLL_DW_ADDR = 1, BG_SDMA_POLL_DW_VALUE = 3,
  BG_SDMA_TIMESTAMP_DW = 3, BG_SDMA_TIMESTAMP_DW_ADDR = 1,
  BG_SDMA_TRAP_DW = 2,
};

/* One COPY_LINEAR of n bytes (1 <= n <= max copy of the engine). */
unsigned bg_sdma_copy_linear(uint32_t *dw, uint64_t dst, uint64_t src, uint32_t n);
/* Number of COPY_LINEAR packets for n bytes at `max` bytes each. */
uint64_t bg_sdma_copy_packets(uint64_t n, uint64_t max);
/* FENCE: write the 32-bit value to addr once the preceding packets are done. mtype 3 (UC) except on SDMA 4. */
unsigned bg_sdma_fence(uint32_t *dw, unsigned sdma_major, uint64_t addr, uint32_t value);
/* POLL_REGMEM on memory: wait until *(u32 *)addr >= value (mask 0xffffffff, interval 4, retry 0xfff). */
unsigned bg_sdma_poll_geq(uint32_t *dw, uint64_t addr, uint32_t value);
/* TIMESTAMP GET_GLOBAL: the 64-bit global GPU timestamp to addr (8-byte aligned). */
unsigned bg_sdma_timestamp(uint32_t *dw, uint64_t addr);
/* TRAP with an interrupt context. */
unsigned bg_sdma_trap(uint32_t *dw, uint32_t int_context);
/* n dwords of NOP: one NOP header with count n-1, zero dwords after it (each zero dword is a NOP itself). */
unsigned bg_sdma_nop(uint32_t *dw, unsigned n);
/* Name of an SDMA opcode ("SDMA_OP_COPY") or NULL. */
const char *bg_sdma_op_name(uint32_t op);

#ifdef __cplusplus
}
#endif
#endif
