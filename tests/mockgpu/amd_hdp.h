/* tests/mockgpu/amd_hdp.h: the emulated GPU's Host Data Path: host CPU writes to VRAM through BAR0 reach the
 * engines (CP, SDMA, shader core, PSP/SMU/IH models) only at an HDP flush.
 *
 * Hardware: host writes through the BAR are posted in the HDP; the GPU's engines see them after an HDP flush,
 * requested either by the host (a write of 0 to HDP_MEM_FLUSH_CNTL, reached through the MMIO page the driver
 * points BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL at: Linux nbio_v4_3/nbif_v6_3_1/nbio_v7_9 remap_hdp_registers,
 * hdp_v6_0/v7_0/v4_0 flush_hdp) or by an engine (GPU_HDP_FLUSH_REQ/DONE: gfx_v11_0_ring_emit_hdp_flush,
 * tinygrad tinygrad/runtime/ops_amd.py AMDComputeQueue memory_barrier).
 *
 * Model: two views of one VRAM. The engine view is the BAR's backing memory (mock_pci_bar_mem, a MAP_SHARED
 * mapping), which every engine model already uses. The host view (what the driver maps as BAR0) is a second
 * mapping of the same pages, read-only: the host reads what the engines wrote. The first host write to a page
 * after a flush faults (SIGSEGV, handled here; other faults go to the handler installed before, e.g. ASan's);
 * the page of the host view is then switched to a shadow copy of it and a pre-image is kept. A flush switches
 * every dirty page back to the engine view and writes into the engine view the bytes the host changed (shadow !=
 * pre-image), so engine writes to other bytes of the page meanwhile are kept. Until then the engines read the
 * old bytes. Costs: one fault and one remap per page written per flush interval, one remap per run of dirty pages
 * per flush.
 *
 * Limits: bytes the host rewrote with their pre-image value while an engine changed them are not flushed (the
 * engine's value stays); a host read of a page it has written since the last flush shows the host's bytes, not an
 * engine write made after them (the HDP of hdp_v6/v7 has no read cache to model). Writes that do not come from
 * the host CPU's mapping (the USB bridge's PCIe writes, MM_INDEX/MM_DATA, the models themselves) go to the engine
 * view and are coherent. The host view's page state belongs to the process that made it (a forked child's view
 * is its own copy of the mapping layout, recorded per process). With MOCKGPU_SHARED the dirty list is shared: the
 * first HDP access of another process drains the writes a killed (or earlier) user left pending, as the hardware
 * drains posted writes, and the lock a killed holder held is taken over.
 *
 * All memory here is MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE (views by mremap with old size 0). */
#ifndef BG_MOCKGPU_AMD_HDP_H
#define BG_MOCKGPU_AMD_HDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct amd_hdp amd_hdp;

/* Host view of vram (size bytes, page multiple, a MAP_SHARED mapping). coherent: the host view is vram itself
 * (MOCKGPU_HDP=coherent: no write tracking, for benches that time the driver's BAR stores, where the model's page
 * faults would count as the driver's; nothing is held back, so a missing flush goes unnoticed). NULL with the
 * reason in err. */
amd_hdp *amd_hdp_new(uint8_t *vram, uint64_t size, bool coherent, char *err, size_t errn);
void amd_hdp_free(amd_hdp *h);
uint8_t *amd_hdp_host_view(const amd_hdp *h);
/* Make every host write so far visible to the engines. Thread-safe. */
void amd_hdp_flush(amd_hdp *h);
/* Drop the host writes not flushed (a function reset loses them). */
void amd_hdp_discard(amd_hdp *h);
/* Pages written by the host since the last flush; flushes and write faults so far. */
unsigned amd_hdp_dirty_pages(const amd_hdp *h);
uint64_t amd_hdp_flushes(const amd_hdp *h);
uint64_t amd_hdp_faults(const amd_hdp *h);

#endif
