/* tests/mockgpu/nv_pci/nvpci_mmu.h: the emulated NVIDIA GPU's own page-table walker, the MMU every engine access of
 * the emulated GPU goes through.
 *
 * Written from the hardware's description, independently of the driver's nv/nv_mmu.c: the v2 format (Ampere, Ada)
 * as Linux nouveau writes it (drivers/gpu/drm/nouveau/nvkm/subdev/mmu/vmmgp100.c: gp100_vmm_desc_12, gp100_vmm_pde,
 * gp100_vmm_pd0_pde, gp100_vmm_valid), the v3 format (Hopper, Blackwell) from NVIDIA open-gpu-kernel-modules
 * kernel-open/nvidia-uvm/hwref/hopper/gh100/dev_mmu.h (NV_MMU_VER3_PDE, _DUAL_PDE, _PTE). Strict: an entry with a bit
 * the driver has no business setting is a fault, not a guess. */
#ifndef BG_MOCKGPU_NVPCI_MMU_H
#define BG_MOCKGPU_NVPCI_MMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Apertures of a leaf (the PTE's encoding; 1 would be peer memory, never emulated). */
enum { NVPCI_MMU_APER_VID = 0, NVPCI_MMU_APER_SYS_COH = 2, NVPCI_MMU_APER_SYS_NONCOH = 3 };

/* Why a walk stopped (returned negated). */
enum nvpci_mmu_fault {
  NVPCI_MMU_OK = 0,
  NVPCI_MMU_UNMAPPED = 1,  /* an invalid (or sparse) entry on the way */
  NVPCI_MMU_OUTSIDE = 2,   /* a table, entry or page outside VRAM */
  NVPCI_MMU_SYSPDE = 3,    /* a PDE pointing to system memory and no system-memory reader */
  NVPCI_MMU_RESERVED = 4,  /* bits set that the format reserves or the emulator does not emulate */
  NVPCI_MMU_BIGLEAF = 5,   /* a leaf at a level that cannot hold one (only PDE1 512 MiB, PDE0 2 MiB, PTE 4 KiB) */
  NVPCI_MMU_BADVA = 6,     /* VA beyond the format's width (49 bits v2, 57 bits v3) */
  NVPCI_MMU_BADARG = 7,    /* version not 2 or 3, NULL arguments */
  NVPCI_MMU_SYSREAD = 8,   /* the system-memory reader failed */
};

typedef struct nvpci_mmu_result {
  uint64_t pa;          /* address of va itself: page base + offset (a bus address for system memory) */
  uint64_t page_size;   /* 4 KiB, 2 MiB or 512 MiB */
  int aperture;         /* NVPCI_MMU_APER_* */
  int level;            /* level of the leaf (0 = root) */
  bool read_only, uncached, no_atomic;
  uint8_t kind;         /* 0 pitch or 6 generic memory */
} nvpci_mmu_result;

/* Where tables may live: VRAM, and (when sys_read is set) system memory by bus address. */
typedef struct nvpci_mmu_mem {
  const uint8_t *vram;
  uint64_t vram_size;
  int (*sys_read)(void *ctx, uint64_t bus, void *dst, size_t n);  /* 0 or nonzero on failure */
  void *ctx;
} nvpci_mmu_mem;

/* Walk the tables of format ver (2 or 3) rooted at root_pa (in VRAM) for va. 0 with *out, or -NVPCI_MMU_* with a
 * message in why (may be NULL) naming the level, the entry index, the table and what was wrong. */
int nvpci_mmu_translate(const uint8_t *vram, uint64_t vram_size, int ver, uint64_t root_pa, uint64_t va,
                        nvpci_mmu_result *out, char *why, size_t whylen);
/* The same with tables possibly in system memory (root_sys: the root itself is there). */
int nvpci_mmu_walk(const nvpci_mmu_mem *mem, int ver, uint64_t root_pa, bool root_sys, uint64_t va,
                   nvpci_mmu_result *out, char *why, size_t whylen);
/* Name of a fault code ("unmapped", "outside VRAM", ...). */
const char *nvpci_mmu_fault_name(int code);

#endif
