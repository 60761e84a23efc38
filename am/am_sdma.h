/* am/am_sdma.h: SDMA of the AM bring-up (tinygrad tinygrad/runtime/support/am/ip.py AM_SDMA), SDMA 6.x (F32) / 7.x (MCU) with registers in the GC table.
 *
 *   bg_am_sdma_create  init_sw: queue 0's 16 MiB ring and a 4 KiB rptr/wptr page (main pool, zeroed)
 *   bg_am_sdma_init    WATCHDOG_CNTL.queue_hang_count = 100, UTCL1_CNTL.{resp_mode 3, redo_delay 9},
 *                      UTCL1_PAGE.{rd 2, wr 3, F32: llc_noalloc}, {F32|MCU}_CNTL un-halted, SDMA0_CNTL.trap_enable,
 *                      S2A doorbell routing port 2 (awid 0xe, offset 0x200, size 4)
 *   bg_am_sdma_setup_queue   SDMA0_QUEUE0: MINOR_PTR_UPDATE = 1, pointers 0, RB_BASE, RPTR_ADDR, WPTR_POLL_ADDR,
 *                      DOORBELL_OFFSET = 256*2, DOORBELL.enable, MINOR_PTR_UPDATE = 0, RB_CNTL (0x84182d for
 *                      16 MiB), IB_CNTL.ib_enable; doorbell index 256 (BAR2 + 256*8)
 *   bg_am_sdma_fini    RB/IB disable, doorbell off
 *   bg_am_sdma_reset   recovery: fini, {F32|MCU}_CNTL halt + thread reset, GRBM_SOFT_RESET.SOFT_RESET_SDMA0 pulse,
 *                      un-halt (Linux sdma_v6_0_soft_reset / sdma_v7_0_soft_reset)
 * SDMA 4.4.x (gfx942, like tinygrad): init = SDMA_CNTL.{trap_enable, utc_l1_enable} on all 16 instances, per AID
 * DOORBELL0_CTRL_ENTRY_<1+k+4*aid> {range_size 20, range_offset (256 + (entry-1)*10)*2} and S2A ports 1/2/5/6 through
 * indirect PCIe writes; queue 0 = regSDMA_GFX_* of instance 0 (doorbell 256), RB_CNTL without a wptr-poll bit.
 * Not done: queues other than 0. */
#ifndef BG_AM_SDMA_H
#define BG_AM_SDMA_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_SDMA_RING_SIZE ((uint64_t)16 << 20)
#define BG_AM_SDMA_DOORBELL 256u

typedef struct bg_am_sdma {
  bg_am_dev *d;
  bool mcu;                 /* SDMA >= 7: MCU engine, else F32 */
  uint64_t ring, ptrs;      /* rptr at ptrs + 0x80, wptr at ptrs + 0x38 */
  uint32_t rb_cntl;         /* as programmed */
  bool ring_on;
  bool v44;                 /* SDMA 4.4.x (MI300): 16 instances, registers regSDMA_* of the sdma table */
} bg_am_sdma;

int bg_am_sdma_create(bg_am_dev *d, bg_am_sdma **out);
void bg_am_sdma_destroy(bg_am_sdma *s);
int bg_am_sdma_init(bg_am_sdma *s);
int bg_am_sdma_setup_queue(bg_am_sdma *s);
int bg_am_sdma_fini(bg_am_sdma *s);
/* Queue 0 reset for recovery (sdma_v6_0/v7_0_soft_reset): ring off, engine halted and its thread reset, GRBM soft
 * reset pulse of SDMA0, engine un-halted; the caller sets the ring up again (bg_am_sdma_setup_queue). */
int bg_am_sdma_reset(bg_am_sdma *s);
/* doorbell_enable (tinygrad tinygrad/runtime/support/am/ip.py AM_SOC): S2A_DOORBELL_ENTRY_<port>_CTRL (GDC_S2A0_ prefix on GC >= 12), full write. */
int bg_am_doorbell_enable(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset, unsigned size);
/* The same for AID `aid`; on NBIO 7.9.x (MI300) always through indirect PCIe writes (am/am_soc.h). */
int bg_am_doorbell_enable_aid(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset,
                              unsigned size, unsigned aid);

#ifdef __cplusplus
}
#endif
#endif
