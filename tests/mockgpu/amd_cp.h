/* tests/mockgpu/amd_cp.h: the emulated AMD GPU's command processors, part 1: compute HQD and SDMA ring bring-up
 * (GC 11.x / 12.x; tinygrad tinygrad/runtime/support/am/ip.py AM_GFX, AM_SDMA). This part checks how the driver activates a queue and records the queue's
 * parameters; the queues are executed from that record by amd_pm4.c / amd_sdma_exec.c (amd_engine.h).
 *
 * Compute HQD (ME1 pipe0 queue0, the only one modelled): CP_HQD_ACTIVE = 1 is accepted only if GRBM_GFX_CNTL selects
 * me 1 / pipe 0 / queue 0 / vmid 0, the RLC autoload ran (PSP AUTOLOAD_RLC), CP_MEC_RS64_CNTL has pipe0 active, not
 * in reset, not halted, CP_MQD_BASE_ADDR(_HI) points into VRAM at an MQD with header 0xC0310800 whose register
 * image (dwords 0x80.., CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI, CP_HQD_ACTIVE excepted) equals the registers,
 * PQ_BASE(_HI) is a ring of PQ_CONTROL.queue_size inside VRAM, PQ_RPTR_REPORT_ADDR and PQ_WPTR_POLL_ADDR are set
 * and PQ_DOORBELL_CONTROL.doorbell_en is set. Otherwise it is a failure and the queue stays inactive.
 * CP_HQD_DEQUEUE_REQUEST != 0 on an active queue deactivates it.
 * SDMA0_QUEUE0_RB_CNTL.rb_enable = 1 is accepted only after the RLC autoload, with SDMA0_CNTL.trap_enable set, the
 * engine not halted ({F32|MCU}_CNTL.halt = 0), MINOR_PTR_UPDATE = 0, RB_BASE(_HI) a ring of RB_CNTL.rb_size inside
 * VRAM, RB_RPTR_ADDR and RB_WPTR_POLL_ADDR set, DOORBELL.enable set with a nonzero DOORBELL_OFFSET.
 * The register file keeps the values; the accepted activation is recorded below. A mode1/function reset clears it. */
#ifndef BG_MOCKGPU_AMD_CP_H
#define BG_MOCKGPU_AMD_CP_H

#include <stdbool.h>
#include <stdint.h>

#include "amd_gpu.h"

typedef struct mock_amd_hqd {
  bool active;
  unsigned nactivate, ndequeue;  /* accepted activations, dequeues */
  uint64_t mqd, pq_base, rptr_report, wptr_poll, eop_base; /* byte addresses (MC) */
  uint32_t pq_control, doorbell_control, eop_control, persistent_state, ib_control, mqd_control;
} mock_amd_hqd;

typedef struct mock_amd_sdma_rb {
  bool enabled;
  unsigned nenable;
  uint64_t base, rptr_addr, wptr_poll;  /* byte addresses (MC) */
  uint32_t rb_cntl, doorbell, doorbell_offset;
} mock_amd_sdma_rb;

/* NULL on gfx942, whose per-XCC HQDs and SDMA 4.4.2 ring are modelled by amd_gfx9.h. */
const mock_amd_hqd *mock_amd_cp_hqd(const mock_amd *g);
/* Fault injection: the CP ignores the next count CP_HQD_DEQUEUE_REQUEST writes (the HQD stays active until a reset),
 * so the driver's queue reset fails and recovery must fall back to a mode1 reset. -1: no CP model (gfx942). */
int mock_amd_inject_hqd_stuck(mock_amd *g, unsigned count);
const mock_amd_sdma_rb *mock_amd_sdma_ring(const mock_amd *g);

/* ---- wiring (amd_gpu.c) ---- */
enum { AMD_H_CP_FIRST = 0x100, AMD_H_CP_HQD_ACTIVE = AMD_H_CP_FIRST, AMD_H_CP_HQD_DEQUEUE, AMD_H_SDMA_RB_CNTL,
       AMD_H_VM_FAULT_CNTL, AMD_H_GRBM_SOFT_RESET };
typedef int (*amd_hook_fn)(mock_amd *g, uint32_t addr, int kind, unsigned hub);
int amd_cp_hooks(mock_amd *g, amd_hook_fn hook);
uint32_t amd_cp_read(mock_amd *g, int kind, uint32_t addr);
void amd_cp_write(mock_amd *g, int kind, uint32_t addr, uint32_t v);
void amd_cp_reset(mock_amd *g);
void amd_cp_free(const mock_amd *g);
/* The activation checks (amd_cp.c, amd_gfx9.c): unless cond, record the failure on the model g and set the caller's
 * `bad`, so that every unmet condition is reported, not only the first. */
#define AMD_NEED(cond, ...)     \
  do {                          \
    if (!(cond)) {              \
      amd_fail(g, __VA_ARGS__); \
      bad = 1;                  \
    }                           \
  } while (0)
/* The SDMA ring registers, in this order (GC 11/12 SDMA0_QUEUE0_*, gfx942 SDMA_GFX_*). */
enum { AMD_SDMA_RB_CNTL, AMD_SDMA_RB_BASE, AMD_SDMA_RB_BASE_HI, AMD_SDMA_RB_RPTR_LO, AMD_SDMA_RB_RPTR_HI,
       AMD_SDMA_RB_WPTR_LO, AMD_SDMA_RB_WPTR_HI, AMD_SDMA_DOORBELL, AMD_SDMA_DOORBELL_OFFSET };
/* The write v of RB_CNTL at addr (amd_cp.c, amd_gfx9.c): an enable the model refused is stored with rb_enable
 * cleared; an accepted enable records the ring from regs (absolute addresses, in the order above). */
void amd_sdma_rb_cntl_write(mock_amd *g, mock_amd_sdma_rb *rb, const uint32_t *regs, uint32_t addr, uint32_t v,
                            bool refused);

#endif
