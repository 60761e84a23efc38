/* tests/mockgpu/amd_pm4.h: the emulated GPU's command processor for the compute queue the driver activated (ME1
 * pipe0 queue0, amd_cp.h records it): GC 11.x / 12.x, PM4 type-3 packets as Linux's nvd.h / soc15d.h define them.
 *
 * A doorbell write (amd_engine.h) carries the write pointer in dwords; the engine reads the ring at
 * CP_HQD_PQ_BASE (2^(PQ_CONTROL.QUEUE_SIZE+1) dwords, wrapping per dword) through the VM (amd_vm.h) from its read
 * pointer up to it, executes each packet and writes the read pointer (dwords, 64-bit) to PQ_RPTR_REPORT_ADDR after
 * each one. The read pointer restarts at 0 with every activation (the MQD's CP_HQD_PQ_RPTR).
 *
 * Packets (opcode: what is checked / done):
 *   NOP 0x10, type-2 filler: skipped
 *   SET_SH_REG 0x76: every register is a COMPUTE_* register of the gc table inside 0x2c00..0x2fff (PM4 register
 *       space = MMIO dwords with GC segment 0 at 0x1260, as on Navi); stored in the register file
 *   SET_UCONFIG_REG 0x79: 0xc000.. registers of the gc table, stored
 *   DISPATCH_DIRECT 0x15: the grid with the COMPUTE_* registers -> rdna3_dispatch (tests/mockgpu/rdna3); without
 *       the shader core a failure "no shader core"; a shader fault or an unimplemented instruction is a failure
 *   ACQUIRE_MEM 0x58 (7 payload dwords): GCR_CNTL.GLK_INV (bit 7) invalidates the shader core's scalar cache (K$,
 *       rdna3.h): scalar loads of a later dispatch read memory changed since (by the host, SDMA, the CP or a vector
 *       store) only after it; the vector caches are coherent (not modelled)
 *   EVENT_WRITE 0x46 (CS_PARTIAL_FLUSH 7, CACHE_FLUSH 6, CACHE_FLUSH_TS 4, CACHE_FLUSH_AND_INV_TS 0x14,
 *       CACHE_FLUSH_AND_INV 0x16, BOTTOM_OF_PIPE_TS 0x28): nothing to do
 *   RELEASE_MEM 0x49: end-of-pipe (EVENT_INDEX 5) of CACHE_FLUSH_TS / CACHE_FLUSH_AND_INV_TS / BOTTOM_OF_PIPE_TS;
 *       DATA_SEL 0 none, 1 32-bit, 2 64-bit, 3 GPU clock (100 MHz) to DST_SEL 0/1 memory (aligned to the size);
 *       INT_SEL != 0 counts an EOP interrupt
 *   WAIT_REG_MEM 0x3C: memory (MEM_SPACE 1, dword aligned) or register (0; OPERATION 1 writes REF to the first
 *       register, e.g. HDP_FLUSH_REQ, then polls the second); FUNCTION 0..6 (always, <, <=, ==, !=, >=, >) on
 *       (value & mask) vs ref; re-polled until true (the host writes memory meanwhile), or the queue stops
 *   WRITE_DATA 0x37: DST_SEL 0 registers, 5 memory; WR_ONE_ADDR honoured
 *   INDIRECT_BUFFER 0x3F: VALID set, VMID 0, dword aligned, size < 2^20; executed from the ring, an IB may only
 *       chain (CHAIN bit) to another IB
 *   PRED_EXEC 0x23 (in an AQL vendor packet's IB only): one body dword, DEVICE_SELECT [31:24] != 0, EXEC_COUNT [13:0]
 *       1..the dwords left; the XCC whose bit is clear skips those dwords
 * Anything else (unknown opcode, wrong length, bad field, packet past the write pointer) is a failure naming the
 * packet's dwords and its ring/IB offset, and the queue hangs (ignores doorbells) until it is activated again. */
#ifndef BG_MOCKGPU_AMD_PM4_H
#define BG_MOCKGPU_AMD_PM4_H

#include <stdbool.h>
#include <stdint.h>

#include "amd_gpu.h"

typedef struct mock_amd_pm4_stats {
  uint64_t packets, dispatches, eop_irqs, waits; /* executed packets (ring and IBs), DISPATCH_DIRECTs, ... */
  uint64_t acquires;                             /* ACQUIRE_MEMs */
  uint64_t rptr;                                 /* read pointer (dwords since activation) */
  bool hung;                                     /* stopped at a bad packet or a fault */
} mock_amd_pm4_stats;

/* false when the chip has no compute queue model. */
bool mock_amd_pm4_stats_get(mock_amd *g, mock_amd_pm4_stats *out);

/* ---- internal: PM4 IBs run by another engine (the AQL packet processor of gfx942, amd_aql.c) ----
 * The soc15 (gfx9) dialect: ACQUIRE_MEM has 6 payload dwords (CP_COHER_CNTL in dword 1, SH_KCACHE_ACTION_ENA
 * invalidates the scalar cache kcache, an rdna3_kcache or NULL), RELEASE_MEM's gfx9 cache bits (EOP_TC_WB_ACTION_EN,
 * EOP_TC_NC_ACTION_EN) are accepted; SET_SH_REG / SET_UCONFIG_REG / DISPATCH_DIRECT are refused (the AQL queue
 * dispatches with KERNEL_DISPATCH packets). Waits poll and failures are reported on the host engine. */
typedef struct pm4 amd_pm4;
struct amd_engine;
struct amd_vm;
amd_pm4 *amd_pm4_ib_new(struct amd_engine *host, void *kcache);
/* Execute ndw dwords at va (chains allowed) through vm as logical XCC xcc's CP (PRED_EXEC: the next dwords run only
 * where DEVICE_SELECT has bit xcc), counting into *st: AMD_X_OK, AMD_X_HUNG (failure recorded), AMD_X_STOPPED. Lock
 * held (dropped while it polls). */
int amd_pm4_ib_run(amd_pm4 *p, const struct amd_vm *vm, unsigned xcc, uint64_t va, uint32_t ndw,
                   mock_amd_pm4_stats *st);
void amd_pm4_ib_free(amd_pm4 *p);

#ifdef BG_MOCK_RDNA3
/* The device's cumulative shader statistics (amd_gpu.h) gain one dispatch's counters (the RDNA3 core's, or the CDNA3
 * core's for one XCC's share of an AQL dispatch), failed ones up to their failure; the caller counts dispatches. */
struct rdna3_stats;
void amd_shader_stats_add(mock_amd_shader_stats *t, const struct rdna3_stats *d);
#endif

#endif
