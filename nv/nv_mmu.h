/* nv/nv_mmu.h: the GPU page tables the bare-metal interface builds itself (on the NVK path the kernel module and UVM
 * own them), in the two formats NVIDIA GPUs walk:
 *
 *   v2 (Ampere, Ada; 49-bit VA):     PDE3 [48:47] 4, PDE2 [46:38] 512, PDE1 [37:29] 512, PDE0 [28:21] 256 dual, PTE [20:12] 512
 *   v3 (Hopper, Blackwell; 57-bit):  PDE4 [56] 2, PDE3 [55:47], PDE2, PDE1, PDE0 (dual), PTE
 *
 * Entry layouts: open-gpu-kernel-modules kernel-open/nvidia-uvm/hwref/{ampere/ga100,hopper/gh100}/dev_mmu.h
 * (NV_MMU_VER2_*, NV_MMU_VER3_*), Linux nouveau nvkm/subdev/mmu/vmmgp100.c, tinygrad tinygrad/runtime/support/nv/nvdev.py. Leaf pages of
 * 4 KiB (PTE), 2 MiB (PDE0, low half of the dual entry) and 512 MiB (PDE1), chosen greedily where VA, PA and size
 * align. Tables are one 4 KiB page each (PDE0 tables: 256 entries of 16 B), zeroed when made.
 *
 * The TLB is invalidated after every map AND every unmap (tinygrad invalidates only after map: tinygrad/runtime/support/memory.py), through
 * the caller's invalidate hook (NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE on the device). Not thread-safe. */
#ifndef BG_NV_MMU_H
#define BG_NV_MMU_H

#include <stdbool.h>
#include <stdint.h>

enum bg_nv_aperture { BG_NV_APER_VIDMEM = 0, BG_NV_APER_SYSMEM_COH = 2, BG_NV_APER_SYSMEM_NONCOH = 3 };

/* One decoded entry (any level). */
typedef struct bg_nv_pte {
  bool valid;
  bool is_pte;            /* a leaf (at PDE1/PDE0 levels: a big page) */
  enum bg_nv_aperture aperture;
  uint64_t addr;          /* physical (or bus) address of the page or the next table */
  bool uncached;          /* v2: VOL; v3: PCF uncached */
  bool read_only;
  uint8_t kind;           /* 6: generic memory */
} bg_nv_pte;

/* Encode / decode one entry. level: 0 = root .. levels-1 = PTE; dual PDE0 entries are 128-bit (lo, hi). */
int bg_nv_mmu_levels(int ver);                 /* 5 (v2: PDE3..PTE) or 6 (v3: PDE4..PTE) */
int bg_nv_mmu_encode(int ver, int level, const bg_nv_pte *e, uint64_t *lo, uint64_t *hi);
int bg_nv_mmu_decode(int ver, int level, uint64_t lo, uint64_t hi, bg_nv_pte *e);

/* Where the tables live and how the CPU reaches them (BAR1 on the device, a host buffer in tests). */
typedef struct bg_nv_mmu_ops {
  void *ctx;
  uint64_t (*read64)(void *ctx, uint64_t pa);
  void (*write64)(void *ctx, uint64_t pa, uint64_t v);
  int (*alloc_table)(void *ctx, uint64_t *pa);   /* a zeroed 4 KiB VRAM page */
  void (*free_table)(void *ctx, uint64_t pa);
  void (*invalidate)(void *ctx);                 /* TLB invalidate (all VAs, all PDBs, sysmembar) */
} bg_nv_mmu_ops;

typedef struct bg_nv_mmu {
  int ver;
  uint64_t root_pa;
  bg_nv_mmu_ops ops;
  uint64_t tables;        /* table pages in use */
  uint64_t invalidates;   /* TLB invalidations issued */
  uint64_t pinned[8];     /* tables an unmap never frees (bg_nv_mmu_table_path: GSP-RM holds their addresses) */
  unsigned npinned;
} bg_nv_mmu;

int bg_nv_mmu_init(bg_nv_mmu *m, int ver, const bg_nv_mmu_ops *ops);
/* Free every table (not the pages mapped). */
void bg_nv_mmu_fini(bg_nv_mmu *m);
/* Root table entries for SET_PAGE_DIRECTORY numEntries: 4 (v2) or 2 (v3). */
unsigned bg_nv_mmu_root_entries(int ver);

typedef struct bg_nv_map_attr {
  enum bg_nv_aperture aperture;
  bool uncached, read_only;
  bool small_only;        /* 4 KiB pages only (no 2 MiB / 512 MiB leaves) */
} bg_nv_map_attr;

/* Map [va, va+size) to the physical pages pa[0..npages) of 4 KiB each (contiguous runs use big pages where they
 * align); va and size 4 KiB aligned; a VA already mapped: BG_EEXIST naming it. Invalidates once at the end. */
int bg_nv_mmu_map(bg_nv_mmu *m, uint64_t va, uint64_t size, const uint64_t *pa, uint64_t npages,
                  const bg_nv_map_attr *attr);
/* Map a physically contiguous range. */
int bg_nv_mmu_map_contig(bg_nv_mmu *m, uint64_t va, uint64_t size, uint64_t pa, const bg_nv_map_attr *attr);
/* Unmap (the whole range must be mapped, with leaves not straddling its ends: BG_EINVAL otherwise); empty tables
 * are freed; invalidates once at the end. */
int bg_nv_mmu_unmap(bg_nv_mmu *m, uint64_t va, uint64_t size);
/* The tables of levels 0..n-1 on the path to va (made where missing, zeroed, and pinned: an unmap never frees them),
 * pa[l] the table of level l and shift[l] log2 of the VA span of one of its entries. For a range whose entries of
 * level n-1 another agent fills in (VASPACE_COPY_SERVER_RESERVED_PDES: GSP-RM's own 512 MiB). n in 1..levels-1. */
int bg_nv_mmu_table_path(bg_nv_mmu *m, uint64_t va, int n, uint64_t *pa, unsigned *shift);
/* Walk: the leaf mapping va (0 with *e and the page size), or BG_ENOENT naming the level where the walk stopped. */
int bg_nv_mmu_translate(const bg_nv_mmu *m, uint64_t va, bg_nv_pte *e, uint64_t *page_size);

#endif
