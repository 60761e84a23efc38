/* tests/mockgpu/amd_sdma_exec.h: the emulated GPU's SDMA0 engine executing queue 0's ring as am_sdma.c set it up
 * (SDMA 6.0 / 7.0 packet formats, Linux sdma_v6_0_0_pkt_open.h / sdma_v7_0_0_pkt_open.h; amd_cp.h records the ring).
 *
 * A doorbell write (amd_engine.h) carries the write pointer in bytes; the engine reads the ring (4 << RB_CNTL.RB_SIZE
 * bytes, wrapping) through the VM (amd_vm.h) from its read pointer up to it and, with RB_CNTL.RPTR_WRITEBACK_ENABLE,
 * writes the read pointer (bytes, 64-bit) to RB_RPTR_ADDR after each packet. The read pointer restarts at 0 with
 * every ring enable (the driver zeroes RB_RPTR/RB_WPTR).
 *
 * Packets (header op [7:0], sub_op [15:8]):
 *   NOP (0): 1 + header[29:16] dwords; zero dwords pad the ring end
 *   COPY (1) LINEAR (0): count+1 bytes (count [29:0]) from src to dst through the VM, no byte swap
 *   WRITE (2) LINEAR (0): count+1 dwords to a dword-aligned address
 *   INDIRECT (4): an IB (32-byte aligned, VMID 0) executed in place, no nesting
 *   FENCE (5): a 32-bit value to a dword-aligned address
 *   TRAP (6): counted (the interrupt is not injected)
 *   POLL_REGMEM (8): FUNC 0..6 on (value & mask) vs ref, memory (MEM_POLL, dword aligned) or a register; with
 *       HDP_FLUSH it writes ref to the request register (dw2 >> 2) and polls the done register (dw1 >> 2); re-polled
 *       until true (the host writes memory meanwhile) or the queue stops
 *   CONST_FILL (11): count+1 bytes of the 32-bit pattern (FILLSIZE 2, dword aligned) or its low byte (FILLSIZE 0)
 *   TIMESTAMP (13) GET (1) / GET_GLOBAL (2): the 100 MHz GPU clock, 64-bit, to an 8-byte aligned address
 *   SRBM_WRITE (14): a register write (BYTE_EN 0xf); GCR_REQ (17): 5 dwords, no caches to flush
 * Anything else is a failure naming the packet's dwords and its ring/IB byte offset; the queue then hangs, and stays
 * hung across ring enables until the engine is reset (halted, then a GRBM_SOFT_RESET.SOFT_RESET_SDMA0 pulse, as
 * Linux 6.12's sdma_v6_0/v7_0_soft_reset does; or an ASIC reset): a ring enabled again without it is a failure. */
#ifndef BG_MOCKGPU_AMD_SDMA_EXEC_H
#define BG_MOCKGPU_AMD_SDMA_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "amd_gpu.h"

typedef struct mock_amd_sdma_stats {
  uint64_t packets, copies, bytes_copied, traps, waits;
  uint64_t rptr;  /* bytes since the ring was enabled */
  bool hung;
} mock_amd_sdma_stats;

/* false when the chip has no SDMA queue model. */
bool mock_amd_sdma_stats_get(mock_amd *g, mock_amd_sdma_stats *out);
/* GRBM_SOFT_RESET.SOFT_RESET_SDMA0 written 1 (amd_cp.c), halted: {F32|MCU}_CNTL.HALT at that moment. Clears the
 * engine's hung state; with the engine running it is a failure (-1). */
int amd_sdma_soft_reset(mock_amd *g, bool halted);

#endif
