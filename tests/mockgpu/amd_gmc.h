/* tests/mockgpu/amd_gmc.h: the emulated GPU's GMC and IH side (amd_gmc.c): a page-table walker over the
 * context-0 registers a hub was programmed with, TLB-invalidation counters, and IH ring entry injection. */
#ifndef BG_MOCKGPU_AMD_GMC_H
#define BG_MOCKGPU_AMD_GMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amd_gpu.h"

/* Walk the tables of VM context 0 of hub instance 0 (gc: GC hub, else MMHUB) like the UTCL2 would: needs
 * VM_CONTEXT0_CNTL.ENABLE_CONTEXT, PAGE_TABLE_DEPTH 3 (gfx10+ layout: gfx12 leaf bit 63, gfx11 bit 54),
 * START_ADDR <= va <= END_ADDR, a valid BASE_ADDR inside VRAM and mock_amd_hub_check. 0 with *addr / *system set, or -1 with the
 * reason in why (not recorded as a failure: a query). */
int mock_amd_translate(mock_amd *g, bool gc, uint64_t va, uint64_t *addr, bool *system, char *why, size_t n);
/* Whether hub instance 0 (gc: GC, else MMHUB) may translate: -1 with the reason in why when it was enabled
 * (VM_CONTEXT0_CNTL.ENABLE_CONTEXT) but no VM_INVALIDATE_ENG17_REQ reached it since, or when it is off because
 * the RLC autoload reset it after the driver had programmed it (GC hub, gfx11/12: the model resets every
 * GCVM_* / GCMC_VM_* register at PSP AUTOLOAD_RLC, as the hardware loses that state). 0 otherwise (a hub never
 * enabled is not judged here). Translations (mock_amd_translate, the engines' amd_vm) fail with this reason. */
int mock_amd_hub_check(const mock_amd *g, bool gc, char *why, size_t n);
/* Accepted VM_INVALIDATE_ENG17_REQ writes on hub instance 0 (gc: GC, else MMHUB). */
unsigned mock_amd_tlb_invalidations(const mock_amd *g, bool gc);
/* Write an 8-dword entry into IH ring 0 at IH_RB_WPTR, advance the WPTR register (byte offset) and the
 * writeback dword at IH_RB_WPTR_ADDR. Refused (failure recorded, -1) unless ring 0 is enabled with a sane
 * base (in VRAM, 256-byte aligned) and RB_SIZE. */
int mock_amd_ih_inject(mock_amd *g, const uint32_t entry[8]);
/* A UTCL2 page fault on the GC hub: GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) = status, FAULT_ADDR_LO32/HI32 =
 * va >> 12, and an IH entry (client, src 0, vmid) injected. */
int mock_amd_vm_fault(mock_amd *g, uint32_t client, unsigned vmid, uint64_t va, uint32_t status);

#endif
