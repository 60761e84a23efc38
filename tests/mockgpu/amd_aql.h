/* tests/mockgpu/amd_aql.h: the emulated MI300's AQL packet processor: the compute queue 1 that the driver activated
 * on every XCC (amd_gfx9.h records each XCC's HQD; CP_HQD_AQL_CONTROL = 1), run from one engine thread (amd_engine.h).
 * Packet formats from the HSA Platform System Architecture / Runtime specifications (hsa.h: hsa_kernel_dispatch_packet_t,
 * hsa_barrier_and_packet_t, hsa_barrier_or_packet_t) and ROCm's amd_hsa_queue.h / amd_hsa_signal.h (amd_queue_t,
 * amd_signal_t) and amd_aql_pm4_ib_packet_t (AMD_AQL_FORMAT_PM4_IB); the kernel descriptor and the initial user SGPRs
 * from LLVM AMDGPUUsage ("Kernel Descriptor", "Initial Kernel Execution State").
 *
 * The ring: CP_HQD_PQ_BASE, 2^(PQ_CONTROL.QUEUE_SIZE+1) dwords, 64-byte packets; packet i sits at (i * 64) % size. A
 * doorbell write carries the index of the last packet written (write_dispatch_id - 1); packets run in order up to it.
 * A packet whose header type is still INVALID is waited for (the producer has not published it yet). After each
 * packet: its completion signal is decremented, its header type set to INVALID (1), and read_dispatch_id (u64, the
 * index of the next packet) written to CP_HQD_PQ_RPTR_REPORT_ADDR (XCC 0's; the others have NO_UPDATE_RPTR).
 *
 *   KERNEL_DISPATCH (2): setup.dimensions 1..3 (other setup bits 0), each workgroup size >= 1 and at most 1024 threads
 *       in all, unused dimensions 1, each grid size a multiple of its workgroup size (partial work-groups are not
 *       modelled); kernel_object 64-byte aligned and mapped; kernarg_address 16-byte aligned. From the kernel
 *       descriptor: COMPUTE_PGM = kernel_object + kernel_code_entry_byte_offset (256-byte aligned), RSRC1/2/3
 *       (RSRC2.LDS_SIZE from the packet's group_segment_size in 512-byte blocks, at most 64 KiB), the user SGPRs in
 *       AMDGPUUsage order: private segment buffer (amd_queue_t.scratch_resource_descriptor, base + this XCC's part),
 *       dispatch ptr (the packet in the ring), queue ptr (the amd_queue_t), kernarg segment ptr, dispatch id, private
 *       segment size; their count must equal RSRC2.USER_SGPR. Refused: ENABLE_WAVEFRONT_SIZE32 (gfx9 runs wave64),
 *       ENABLE_SGPR_FLAT_SCRATCH_INIT (architected flat scratch on gfx940+), reserved properties bits, kernarg
 *       preload. Scratch (private_segment_size > 0): amd_queue_t.scratch_backing_memory_location split evenly over
 *       the XCCs, COMPUTE_TMPRING_SIZE = amd_queue_t.compute_tmpring_size. The amd_queue_t sits at the rptr report
 *       address - 128 (its read_dispatch_id field; read_dispatch_id_field_base_byte_offset must say 128).
 *       Then cdna3_dispatch_run once per XCC (xcc = the MQD's compute_current_logic_xcc_id, nxcc = the XCC count
 *       when compute_tg_chunk_size is 1): XCC k runs the work-groups whose linear id % nxcc == k.
 *   BARRIER_AND (3) / BARRIER_OR (5): dep_signal[0..4] (0: none) polled until every / any value (amd_signal_t.value,
 *       int64 at handle + 8) is 0; reserved fields 0.
 *   VENDOR_SPECIFIC (0) with amd_format 1 (PM4_IB): ib_jump_cmd = INDIRECT_BUFFER (PACKET3(0x3F, 2), VALID), dword 5
 *       (dw_cnt_remain) = 10, reserved dwords 0; the IB runs through the PM4 engine's soc15 dialect (amd_pm4.h) once
 *       per XCC, as each XCC's CP executes it.
 *   Header: BARRIER bit honoured trivially (packets complete in order); acquire/release fence scope 3 (reserved)
 *       refused. Any other packet type (AGENT_DISPATCH 4, 6..255) is refused.
 * Completion signal (any packet): amd_signal_t 64-byte aligned; value decremented atomically by 1; with
 * amd_queue_t.queue_properties.ENABLE_PROFILING the signal's start_ts / end_ts get the GPU clock.
 * Anything refused or a VM fault is a failure naming the packet and field; the queue hangs until it is activated
 * again (as the PM4 engine). */
#ifndef BG_MOCKGPU_AMD_AQL_H
#define BG_MOCKGPU_AMD_AQL_H

#include <stdbool.h>
#include <stdint.h>

#include "amd_gfx9.h"
#include "amd_gpu.h"

/* hsa_packet_type_t (hsa.h) */
enum { AQL_PKT_VENDOR = 0, AQL_PKT_INVALID = 1, AQL_PKT_KERNEL_DISPATCH = 2, AQL_PKT_BARRIER_AND = 3,
       AQL_PKT_AGENT_DISPATCH = 4, AQL_PKT_BARRIER_OR = 5 };

typedef struct mock_amd_aql_stats {
  uint64_t packets, dispatches, barriers_and, barriers_or, vendor_ibs, completions;
  uint64_t pm4_packets, pm4_waits;           /* inside vendor-specific IBs (all XCCs) */
  uint64_t rptr;                             /* read_dispatch_id */
  unsigned nxcc;
  uint64_t xcc_dispatches[MOCK_GFX9_MAX_XCC]; /* shader-core runs per XCC */
  uint64_t xcc_workgroups[MOCK_GFX9_MAX_XCC]; /* work-groups each XCC was given (linear id % nxcc) */
  uint64_t xcc_waves[MOCK_GFX9_MAX_XCC];      /* waves the core reported per XCC */
  bool hung;
} mock_amd_aql_stats;

/* false when the chip has no AQL queue model (not gfx942). */
bool mock_amd_aql_stats_get(mock_amd *g, mock_amd_aql_stats *out);
/* Work-groups of a grid of total linear work-groups that XCC xcc of nxcc runs (COMPUTE_TG_CHUNK_SIZE 1: round robin). */
uint64_t mock_amd_aql_xcc_share(uint64_t total, unsigned xcc, unsigned nxcc);

#endif
