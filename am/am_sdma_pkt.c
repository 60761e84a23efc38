/* am/am_sdma_pkt.c: SDMA packet encoders (am/am_sdma_pkt.h, tinygrad tinygrad/runtime/ops_amd.py AMDCopyQueue). */
#include "am/am_sdma_pkt.h"

#include <stddef.h>
#include <string.h>

static uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }

unsigned bg_sdma_copy_linear(uint32_t *dw, uint64_t dst, uint64_t src, uint32_t n) {
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_COPY) | SDMA_PKT_HEADER_SUB_OP(SDMA_SUBOP_COPY_LINEAR);
  dw[1] = n - 1; /* count: bytes - 1 */
  dw[2] = 0;     /* parameter: no swap */
  dw[3] = lo32(src);
  dw[4] = hi32(src);
  dw[5] = lo32(dst);
  dw[6] = hi32(dst);
  return BG_SDMA_COPY_DW;
}

uint64_t bg_sdma_copy_packets(uint64_t n, uint64_t max) { return n == 0 ? 0 : (n + max - 1) / max; }

unsigned bg_sdma_fence(uint32_t *dw, unsigned sdma_major, uint64_t addr, uint32_t value) {
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_FENCE) | (sdma_major >= 5 ? SDMA_PKT_FENCE_HEADER_MTYPE(3) : 0);
  dw[1] = lo32(addr);
  dw[2] = hi32(addr);
  dw[3] = value;
  return BG_SDMA_FENCE_DW;
}

unsigned bg_sdma_poll_geq(uint32_t *dw, uint64_t addr, uint32_t value) {
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_POLL_REGMEM) | SDMA_PKT_POLL_REGMEM_HEADER_FUNC(SDMA_POLL_FUNC_GEQ) |
          SDMA_PKT_POLL_REGMEM_HEADER_MEM_POLL(1);
  dw[1] = lo32(addr);
  dw[2] = hi32(addr);
  dw[3] = value;
  dw[4] = 0xffffffffu; /* mask */
  dw[5] = SDMA_PKT_POLL_REGMEM_DW5_INTERVAL(4) | SDMA_PKT_POLL_REGMEM_DW5_RETRY_COUNT(0xfff);
  return BG_SDMA_POLL_DW;
}

unsigned bg_sdma_timestamp(uint32_t *dw, uint64_t addr) {
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_TIMESTAMP) | SDMA_PKT_HEADER_SUB_OP(SDMA_SUBOP_TIMESTAMP_GET_GLOBAL);
  dw[1] = lo32(addr);
  dw[2] = hi32(addr);
  return BG_SDMA_TIMESTAMP_DW;
}

unsigned bg_sdma_trap(uint32_t *dw, uint32_t int_context) {
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_TRAP);
  dw[1] = int_context & 0x0fffffffu;
  return BG_SDMA_TRAP_DW;
}

unsigned bg_sdma_nop(uint32_t *dw, unsigned n) {
  if (n == 0) return 0;
  memset(dw, 0, n * sizeof(uint32_t));
  dw[0] = SDMA_PKT_HEADER_OP(SDMA_OP_NOP) | SDMA_PKT_NOP_HEADER_COUNT(n - 1);
  return n;
}

const char *bg_sdma_op_name(uint32_t op) {
  static const struct { uint32_t op; const char *name; } names[] = {
    {SDMA_OP_NOP, "SDMA_OP_NOP"}, {SDMA_OP_COPY, "SDMA_OP_COPY"}, {SDMA_OP_WRITE, "SDMA_OP_WRITE"},
    {SDMA_OP_INDIRECT, "SDMA_OP_INDIRECT"}, {SDMA_OP_FENCE, "SDMA_OP_FENCE"}, {SDMA_OP_TRAP, "SDMA_OP_TRAP"},
    {SDMA_OP_SEM, "SDMA_OP_SEM"}, {SDMA_OP_POLL_REGMEM, "SDMA_OP_POLL_REGMEM"}, {SDMA_OP_TIMESTAMP, "SDMA_OP_TIMESTAMP"},
    {SDMA_OP_GCR_REQ, "SDMA_OP_GCR_REQ"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].op == op) return names[i].name;
  return NULL;
}
