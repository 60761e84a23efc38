/* am/am_gfx.h: GFX / CP / MEC / RLC of the AM bring-up (tinygrad tinygrad/runtime/support/am/ip.py AM_GFX), GC 11.x / 12.x (RS64 CP, one XCC) and GC 9.4.3
 * (MI300: MEC v1 loaded by the PSP, CP_MEC_CNTL, every step per live XCC, v9 MQDs, SRIOV_SPATIAL_PART mode 1 when
 * there are several XCCs, PM4 queue 0 on the first XCC and AQL queue 1 on every XCC).
 *
 *   bg_am_gfx_create   init_sw (after the SMU allocations, tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw, the MQD allocations): two MQD pages (PM4 queue 0, AQL queue 1;
 *                      boot region, so a warm start finds them at the same address), and for compute queue 0 a
 *                      16 MiB PM4 ring, a 4 KiB EOP buffer and a 4 KiB rptr/wptr page (main pool, zeroed)
 *   bg_am_gfx_init     cold: wait for the RLC autoload (CP_STAT == 0 && RLC_RLCS_BOOTLOAD_STATUS bit31, Linux's
 *                      condition; a timeout names the register and its last value), config_mec (PFP/ME on GC >= 12,
 *                      MEC RS64 program counters = ucode_start >> 2 from fw_load, pipe0 reset pulse), golden
 *                      TCP_CNTL, RLC_CNTL/RLC_SRM_CNTL/RLC_SPM_MC_CNTL, S2A doorbell routing ports 0 and 3,
 *                      GRBM_CNTL.read_timeout, SH_MEM_CONFIG = 0xc00c / SH_MEM_BASES = 0x10002 for vmid 0..15,
 *                      MEC doorbell range 0..0xf8, enable_mec (RS64 pipe0 active, un-halted)
 *                      warm (partial boot, tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__, AMDev.fini): GC hub init, reset_mec (dequeue active HQDs, GC < 12 GRBM soft reset
 *                      of CP/CPC, config_mec, enable_mec)
 *   bg_am_gfx_setup_queue   compute HQD ME1 pipe0 queue0 from a v11/v12 MQD written to VRAM, the MQD's 56 register
 *                      dwords CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI copied to the registers, then CP_HQD_ACTIVE = 1;
 *                      doorbell index 3 (BAR2 + 3*8); PQ_CONTROL 0x515 for the 16 MiB ring
 *   bg_am_gfx_dequeue  fini: CP_HQD_DEQUEUE_REQUEST = 2 and wait for CP_HQD_ACTIVE == 0 on active queues
 * Not done: the AQL queue on RDNA (its MQD page is reserved). */
#ifndef BG_AM_GFX_H
#define BG_AM_GFX_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"
#include "am/am_gmc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_GFX_RING_SIZE ((uint64_t)16 << 20)
#define BG_AM_GFX_EOP_SIZE 0x1000u
#define BG_AM_GFX_DOORBELL 3u        /* AMDGPU_NAVI10_DOORBELL_MEC_RING0 */
#define BG_AM_GFX_DOORBELL_AQL 4u    /* AMDGPU_NAVI10_DOORBELL_MEC_RING1 (tinygrad has one queue, on RING0) */
#define BG_AM_MQD_HEADER 0xC0310800u

typedef struct bg_am_gfx {
  bg_am_dev *d;
  bg_am_gmc *gmc;
  uint64_t mqd[2];              /* MQD pages (VRAM offsets, boot region) */
  uint64_t ring, eop, ptrs;     /* queue 0: ring, EOP, rptr at ptrs + 0x80, wptr at ptrs + 0x38 (as the trace) */
  uint32_t pq_control;          /* as programmed */
  bool hqd_active;
  /* GC 9.4.3: the AQL queue 1 on every XCC (one ring, EOP and rptr/wptr page shared by the XCCs) */
  unsigned xccs;                /* live XCCs (1 on RDNA) */
  uint64_t aql_ring, aql_eop, aql_ptrs;
  uint32_t aql_pq_control;      /* XCC 0's (the others set NO_UPDATE_RPTR) */
  bool aql_active;
} bg_am_gfx;

int bg_am_gfx_create(bg_am_dev *d, bg_am_gmc *gmc, bg_am_gfx **out);
void bg_am_gfx_destroy(bg_am_gfx *x);
int bg_am_gfx_init(bg_am_gfx *x, bool warm);
int bg_am_gfx_setup_queue(bg_am_gfx *x);
int bg_am_gfx_dequeue(bg_am_gfx *x);
/* AQL compute queue 1 on every XCC (GC 9.4.3), doorbell BG_AM_GFX_DOORBELL_AQL. */
int bg_am_gfx_setup_aql(bg_am_gfx *x);
/* grbm_select(me, pipe, queue, vmid) on GRBM_GFX_CNTL (gfx11/12 layout). */
int bg_am_gfx_grbm_select(bg_am_dev *d, unsigned me, unsigned pipe, unsigned queue, unsigned vmid);

#ifdef __cplusplus
}
#endif
#endif
