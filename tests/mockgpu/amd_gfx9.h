/* tests/mockgpu/amd_gfx9.h: the emulated MI300 (GC 9.4.3 x8 XCCs, NBIO 7.9 over 4 AIDs, SDMA 4.4.2) parts of the
 * AMD GPU model that RDNA lacks (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access; tinygrad tinygrad/runtime/support/am/ip.py AM_SOC, AM_GFX, AM_SDMA). Strict like the rest of the model:
 *
 * NBIO 7.9: BIF_BX0_PCIE_INDEX2 / PCIE_INDEX2_HI / PCIE_DATA2 of AID 0 reach the NBIO registers of AID (hi & 3) when
 * INDEX2_HI bit 2 (address bit 34) is set, else AID 0. S2A_DOORBELL_ENTRY_<p>_CTRL of any AID written directly (the
 * RDNA doorbell_enable) is a failure: MI300 routes them only through PCIE_DATA2. XCC_DOORBELL_FENCE is recorded per
 * AID; every AID > 0 must get SHUB_SLV_MODE before a queue starts.
 *
 * Compute HQDs of MEC1 pipe 0 queues 0 and 1 on each XCC, banked by that XCC's GRBM_GFX_CNTL: CP_HQD_ACTIVE reads the
 * selected queue's state. CP_HQD_ACTIVE = 1 is accepted only with me 1 / pipe 0 / queue 0|1 / vmid 0 selected, the
 * MEC firmware (CP_MEC) and the RLC register list (REG_LIST) loaded by the PSP, CP_MEC_CNTL = 0 on that XCC (MEC
 * un-halted, out of reset; it reads MEC_ME1_HALT | MEC_ME2_HALT after a reset), the SOC fences set, with several XCCs the PSP spatial partition set first, an MQD with
 * header 0xC0310800 whose register image equals the registers, a ring of PQ_CONTROL.queue_size in VRAM, rptr/wptr
 * addresses and doorbell_en; an AQL queue (CP_HQD_AQL_CONTROL = 1) also needs PQ_CONTROL.{queue_full_en,
 * slot_based_wptr = 2} and, with several XCCs, MQD compute_current_logic_xcc_id = its XCC index and
 * cp_mqd_stride_size = 0x1000. CP_HQD_DEQUEUE_REQUEST != 0 drains the selected active queue at once.
 *
 * SDMA 4.4.2 instance 0 GFX ring: SDMA_GFX_RB_CNTL.rb_enable = 1 needs the SDMA firmware loaded, SDMA_CNTL.{trap,
 * utc_l1}_enable on instance 0, AID 0's DOORBELL0_CTRL_ENTRY_1 (range size 20, offset 0x200) and S2A port 1 enabled,
 * MINOR_PTR_UPDATE = 0, a ring in VRAM, rptr/wptr-poll addresses and the doorbell enabled with an offset.
 * Other HQD registers are not banked (the register file keeps the last written queue's values). */
#ifndef BG_MOCKGPU_AMD_GFX9_H
#define BG_MOCKGPU_AMD_GFX9_H

#include <stdbool.h>
#include <stdint.h>

#include "amd_cp.h"

#define MOCK_GFX9_MAX_XCC 8
#define MOCK_GFX9_MAX_AID 4

typedef struct mock_amd_hqd9 {
  mock_amd_hqd q;                  /* as on RDNA (pq_base, mqd, controls, activation counts) */
  bool aql;
  uint32_t xcc_id, tg_chunk, stride; /* v9_mqd dwords 39, 41, 226 at activation */
} mock_amd_hqd9;

/* NULL unless the chip is gfx942 (or xcc/queue out of range); xcc is the GC instance number. */
const mock_amd_hqd9 *mock_amd_gfx9_hqd(const mock_amd *g, unsigned xcc, unsigned queue);
const mock_amd_sdma_rb *mock_amd_sdma9_ring(const mock_amd *g);
/* XCC_DOORBELL_FENCE as last written on an AID (*written false when never since reset); S2A port control per AID. */
uint32_t mock_amd_xcc_fence(const mock_amd *g, unsigned aid, bool *written);
uint32_t mock_amd_s2a(const mock_amd *g, unsigned aid, unsigned port);
unsigned mock_amd_pcie_writes(const mock_amd *g);

/* ---- wiring (amd_cp.c) ---- */
enum {
  AMD_H_G9_FIRST = 0x200, AMD_H_G9_PCIE_DATA2 = AMD_H_G9_FIRST, AMD_H_G9_S2A, AMD_H_G9_FENCE, AMD_H_G9_HQD_ACTIVE,
  AMD_H_G9_HQD_DEQUEUE, AMD_H_G9_SDMA_RB_CNTL,
};
int amd_gfx9_hooks(mock_amd *g, amd_hook_fn hook);
uint32_t amd_gfx9_read(mock_amd *g, int kind, uint32_t addr);
void amd_gfx9_write(mock_amd *g, int kind, uint32_t addr, uint32_t v);
void amd_gfx9_reset(mock_amd *g);
void amd_gfx9_free(const mock_amd *g);

#endif
