/* tests/mockgpu/amd_vm.h: how the emulated GPU's engines (CP, SDMA, shader core) reach memory: GPU virtual
 * addresses of VMID 0 translated like the GC hub's UTCL2 does, from the registers the driver programmed.
 *
 * An address inside the system aperture (GCMC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR, 256 KiB units, MX_L1_TLB_CNTL
 * SYSTEM_ACCESS_MODE 3 as the driver sets it) is a physical VRAM address (FB_LOCATION_BASE is 0). Anything else
 * walks GCVM_CONTEXT0's page tables: CNTL.ENABLE_CONTEXT, PAGE_TABLE_DEPTH 3 / BLOCK_SIZE 0 (the gfx10+ layout: 4
 * levels of 512 entries, huge leaves in PDB1/PDB0), START <= va <= END, BASE_ADDR with its valid bit, indices on
 * va - START. Entries (AMD's hardware formats, Linux amdgpu_vm.h names): VALID bit 0, SYSTEM bit 1, READABLE bit 5,
 * WRITEABLE bit 6, address bits 12..47; a directory entry is a leaf with PTE_IS_PTE (bit 63) on gfx12, PDE_PTE
 * (bit 54) on gfx11. gfx9 (GC 9.4.3: Linux gmc_v9_0 with translate_further): PAGE_TABLE_DEPTH 2 / BLOCK_SIZE 9,
 * the same 4 index levels, a PDB2/PDB1 leaf has PDE_PTE (bit 54), a PDB0 entry is a 2 MiB page unless it has TF
 * (bit 56, a table of 4 KiB pages); the XCC 0 GC hub's registers are used. A leaf in VRAM must lie inside VRAM; a
 * SYSTEM leaf is a bus address, reached through the PCI model's DMA translation (bus mastering on, a page the
 * driver mapped).
 *
 * Nothing translates, system aperture included, while the GC hub is enabled but its TLB was never invalidated
 * since, or while it is off because the RLC autoload reset it after the driver programmed it (mock_amd_hub_check
 * in amd_gmc.h): the engines' first access faults with that reason.
 *
 * A translation that fails is a VM fault (amd_vm_fault): GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) gets
 * MAPPING_ERROR or PERMISSION_FAULTS (bit 1 read, bit 2 write: the model's choice, Linux only prints the field),
 * CID, RW, VMID (fields from the generated gc tables; a pending fault only adds
 * MORE_FAULTS, as the hardware latches the first), FAULT_ADDR_LO32/HI32 = va >> 12, an IH entry (UTCL2 client
 * 0x1b) is injected, and the fault is a model failure naming the engine and the reason. The faulting engine
 * stops (its caller's job). */
#ifndef BG_MOCKGPU_AMD_VM_H
#define BG_MOCKGPU_AMD_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amd_gpu.h"

/* UTCL2 client ids of the GC hub (Linux gfxhub_v3_0.c gfxhub_client_ids[]): the CID field of the fault status. */
enum { AMD_VM_CID_CPC = 0x5, AMD_VM_CID_TCP = 0x8, AMD_VM_CID_SDMA0 = 0xd };

/* A snapshot of VMID 0's translation registers (taken with the device lock held; the walk itself reads only
 * VRAM and DMA pages, so it may run without the lock), plus a one-page TLB. */
typedef struct amd_vm {
  mock_amd *g;
  bool ok;                  /* context 0 enabled with a sane depth and a valid base */
  bool blocked;             /* the GC hub may not translate at all (mock_amd_hub_check): reason in `bad` */
  char bad[320];
  bool gfx12, gfx9;
  uint64_t ap_lo, ap_hi;    /* system aperture, bytes, inclusive */
  uint64_t start, end;      /* context 0 range, bytes, inclusive */
  uint64_t root;            /* PDB2 address in VRAM */
  uint32_t cntl;
  uint8_t *vram;
  uint64_t vram_size;
  uint64_t tlb_page;        /* va >> 12 of the cached page + 1 (0: empty) */
  uint8_t *tlb_host;
  bool tlb_writable;
} amd_vm;

/* Load the registers (caller holds the device lock). */
void amd_vm_load(amd_vm *vm, mock_amd *g);
/* Host pointer of va valid for *avail bytes (up to the end of its 4 KiB page), or NULL with the reason in why
 * (not recorded: the caller decides, usually with amd_vm_fault). */
uint8_t *amd_vm_xlate(amd_vm *vm, uint64_t va, bool write, size_t *avail, char *why, size_t whyn);
/* Copy n bytes from / to GPU virtual memory, page by page. 0, or -1 after recording the fault as a VM fault of
 * `engine` (cid as above). */
int amd_vm_read(amd_vm *vm, uint64_t va, void *dst, size_t n, const char *engine, unsigned cid);
int amd_vm_write(amd_vm *vm, uint64_t va, const void *src, size_t n, const char *engine, unsigned cid);
/* Naturally aligned 32/64-bit store / 32-bit load (atomic, release / acquire: the host polls these words). 0, or
 * -1 after recording a VM fault (or a failure for a misaligned address). */
int amd_vm_store(amd_vm *vm, uint64_t va, uint64_t v, unsigned size, const char *engine, unsigned cid);
int amd_vm_load32(amd_vm *vm, uint64_t va, uint32_t *v, const char *engine, unsigned cid);
/* Record a VM fault like the hardware (see above). Takes the device lock. */
void amd_vm_fault(mock_amd *g, const char *engine, unsigned cid, uint64_t va, bool write, bool permission,
                  const char *why);

#endif
