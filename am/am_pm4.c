/* am/am_pm4.c: PM4 type-3 packet encoders (am/am_pm4.h, tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue). */
#include "am/am_pm4.h"

#include <stddef.h>
#include <string.h>

static uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }

unsigned bg_pm4_nop(uint32_t *dw, unsigned n) {
  if (n == 0) return 0;
  /* A NOP's count is payload - 1; a 1-dword NOP uses the 0x3fff count that means "header only" (nvd.h). */
  dw[0] = n == 1 ? PACKET3(PACKET3_NOP, 0x3fff) : PACKET3(PACKET3_NOP, n - 2);
  if (n > 1) memset(dw + 1, 0, (n - 1) * sizeof(uint32_t));
  return n;
}

static unsigned set_reg(uint32_t *dw, unsigned op, uint32_t reg, const uint32_t *vals, unsigned n) {
  dw[0] = PACKET3(op, n);
  dw[1] = reg;
  memcpy(dw + 2, vals, n * sizeof(uint32_t));
  return 2 + n;
}

unsigned bg_pm4_set_sh_reg(uint32_t *dw, uint32_t reg, const uint32_t *vals, unsigned n) {
  return set_reg(dw, PACKET3_SET_SH_REG, reg, vals, n);
}

unsigned bg_pm4_set_uconfig_reg(uint32_t *dw, uint32_t reg, const uint32_t *vals, unsigned n) {
  return set_reg(dw, PACKET3_SET_UCONFIG_REG, reg, vals, n);
}

unsigned bg_pm4_wait_mem(uint32_t *dw, unsigned func, uint64_t addr, uint32_t ref, uint32_t mask) {
  dw[0] = PACKET3(PACKET3_WAIT_REG_MEM, 5);
  dw[1] = WAIT_REG_MEM_FUNCTION(func) | WAIT_REG_MEM_MEM_SPACE(1) | WAIT_REG_MEM_OPERATION(0) | WAIT_REG_MEM_ENGINE(0);
  dw[2] = lo32(addr);
  dw[3] = hi32(addr);
  dw[4] = ref;
  dw[5] = mask;
  dw[6] = 4; /* poll interval */
  return BG_PM4_WAIT_MEM_DW;
}

unsigned bg_pm4_hdp_flush(uint32_t *dw, uint32_t req_reg, uint32_t done_reg) {
  dw[0] = PACKET3(PACKET3_WAIT_REG_MEM, 5);
  dw[1] = WAIT_REG_MEM_FUNCTION(WAIT_REG_MEM_FUNC_GEQ) | WAIT_REG_MEM_MEM_SPACE(0) | WAIT_REG_MEM_OPERATION(1) |
          WAIT_REG_MEM_ENGINE(0);
  dw[2] = req_reg;
  dw[3] = done_reg;
  dw[4] = 0xffffffffu;
  dw[5] = 0xffffffffu;
  dw[6] = 4;
  return BG_PM4_HDP_FLUSH_DW;
}

unsigned bg_pm4_acquire_mem(uint32_t *dw, unsigned gfx, bg_pm4_caches c) {
  if (gfx < 10) {
    dw[0] = PACKET3(PACKET3_ACQUIRE_MEM, 5);
    dw[1] = PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(c.gli) |
            PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA(c.glk) |
            PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(c.gl2) |
            PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA(c.gl1) |
            PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(c.gl2);
    dw[2] = 0xffffffffu; /* CP_COHER_SIZE */
    dw[3] = 0xffffffffu; /* CP_COHER_SIZE_HI */
    dw[4] = 0;           /* CP_COHER_BASE */
    dw[5] = 0;
    dw[6] = 0xA;         /* poll interval */
    return BG_PM4_ACQUIRE_MEM_DW_GFX9;
  }
  dw[0] = PACKET3(PACKET3_ACQUIRE_MEM, 6);
  dw[1] = 0;           /* CP_COHER_CNTL */
  dw[2] = 0xffffffffu; /* size */
  dw[3] = 0xffffffffu;
  dw[4] = 0;           /* base */
  dw[5] = 0;
  dw[6] = 0;           /* poll interval */
  dw[7] = PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(c.gli) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(c.glm) |
          PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(c.glm) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB(c.glk) |
          PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(c.glk) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(c.glv) |
          PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(c.gl1) | PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(c.gl2) |
          PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(c.gl2);
  return BG_PM4_ACQUIRE_MEM_DW_GFX10;
}

unsigned bg_pm4_release_mem(uint32_t *dw, unsigned gfx, uint64_t addr, uint64_t data, unsigned data_sel,
                            unsigned int_sel, bool cache_flush) {
  uint32_t flush = 0;
  if (cache_flush)
    flush = gfx < 10 ? EOP_TC_WB_ACTION_EN | EOP_TC_NC_ACTION_EN
                     : PACKET3_RELEASE_MEM_GCR_GLM_WB | PACKET3_RELEASE_MEM_GCR_GLM_INV |
                           PACKET3_RELEASE_MEM_GCR_GLV_INV | PACKET3_RELEASE_MEM_GCR_GL1_INV |
                           PACKET3_RELEASE_MEM_GCR_GL2_INV | PACKET3_RELEASE_MEM_GCR_GL2_WB |
                           PACKET3_RELEASE_MEM_GCR_SEQ;
  dw[0] = PACKET3(PACKET3_RELEASE_MEM, 6);
  dw[1] = EVENT_TYPE(CACHE_FLUSH_AND_INV_TS_EVENT) | EVENT_INDEX(5) | flush;
  dw[2] = PACKET3_RELEASE_MEM_DATA_SEL(data_sel) | PACKET3_RELEASE_MEM_INT_SEL(int_sel) |
          PACKET3_RELEASE_MEM_DST_SEL(0);
  dw[3] = lo32(addr);
  dw[4] = hi32(addr);
  dw[5] = lo32(data);
  dw[6] = hi32(data);
  dw[7] = 0; /* ctxid */
  return BG_PM4_RELEASE_MEM_DW;
}

unsigned bg_pm4_dispatch_direct(uint32_t *dw, unsigned gfx, uint32_t gx, uint32_t gy, uint32_t gz, bool wave32) {
  dw[0] = PACKET3(PACKET3_DISPATCH_DIRECT, 3);
  dw[1] = gx;
  dw[2] = gy;
  dw[3] = gz;
  dw[4] = COMPUTE_DISPATCH_INITIATOR_COMPUTE_SHADER_EN | COMPUTE_DISPATCH_INITIATOR_FORCE_START_AT_000 |
          (wave32 && gfx >= 10 ? COMPUTE_DISPATCH_INITIATOR_CS_W32_EN : 0);
  return BG_PM4_DISPATCH_DW;
}

unsigned bg_pm4_event_write(uint32_t *dw, uint32_t event, uint32_t index) {
  dw[0] = PACKET3(PACKET3_EVENT_WRITE, 0);
  dw[1] = EVENT_TYPE(event) | EVENT_INDEX(index);
  return BG_PM4_EVENT_WRITE_DW;
}

unsigned bg_pm4_indirect_buffer(uint32_t *dw, uint64_t addr, uint32_t ndw) {
  dw[0] = PACKET3(PACKET3_INDIRECT_BUFFER, 2);
  dw[1] = lo32(addr);
  dw[2] = hi32(addr);
  dw[3] = ndw | INDIRECT_BUFFER_VALID;
  return BG_PM4_INDIRECT_DW;
}

uint32_t bg_pm4_rsrc3_reg(unsigned gfx) { return gfx < 10 ? COMPUTE_PGM_RSRC3_GFX9 : COMPUTE_PGM_RSRC3_GFX10; }

const char *bg_pm4_opcode_name(uint32_t op) {
  static const struct { uint32_t op; const char *name; } names[] = {
    {PACKET3_NOP, "PACKET3_NOP"}, {PACKET3_DISPATCH_DIRECT, "PACKET3_DISPATCH_DIRECT"},
    {PACKET3_PRED_EXEC, "PACKET3_PRED_EXEC"}, {PACKET3_WAIT_REG_MEM, "PACKET3_WAIT_REG_MEM"},
    {PACKET3_INDIRECT_BUFFER, "PACKET3_INDIRECT_BUFFER"}, {PACKET3_COPY_DATA, "PACKET3_COPY_DATA"},
    {PACKET3_EVENT_WRITE, "PACKET3_EVENT_WRITE"}, {PACKET3_RELEASE_MEM, "PACKET3_RELEASE_MEM"},
    {PACKET3_ACQUIRE_MEM, "PACKET3_ACQUIRE_MEM"}, {PACKET3_SET_SH_REG, "PACKET3_SET_SH_REG"},
    {PACKET3_SET_UCONFIG_REG, "PACKET3_SET_UCONFIG_REG"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].op == op) return names[i].name;
  return NULL;
}
