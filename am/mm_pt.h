/* am/mm_pt.h: GPU page tables of the AM driver, kept in VRAM (tinygrad tinygrad/runtime/support/am/amdev.py AMPageTableEntry; tinygrad tinygrad/runtime/support/am/ip.py AM_GMC).
 *
 * Structure (all generations): 4 levels of 4 KiB tables with 512 8-byte entries. An entry of PDB2 (level
 * 0, the root) covers 2^39 bytes, PDB1 2^30, PDB0 2^21, PTB 2^12. Indices are taken on va - va_base (the VM
 * context start address programmed into the hub). Leaves are 4 KiB PTEs in a PTB, or huge leaves: 2 MiB
 * in PDB0 and 1 GiB in PDB1 (tinygrad would also allow 512 GiB leaves in the root; not used here). How the
 * hardware walks them depends on the generation:
 *   GFX10/11/12: PAGE_TABLE_DEPTH 3 (4 levels), block size 0.
 *   GFX9 (GC 9.4.3/9.5): depth 2 (3 levels, PDB2-PDB1-PDB0) with block size 9: a PDB0 entry is a 2 MiB page
 *   unless it carries TF ("translate further"), then it points to a PTB of 4 KiB pages.
 *
 * Entry encodings (get_pte_flags in tinygrad; Linux amdgpu_vm.h / gmc_v9_0.c / gmc_v11_0.c / gmc_v12_0.c):
 *   all:     address bits 12..47 (mask 0x0000FFFFFFFFF000), VALID; leaves also SYSTEM/SNOOPED, EXECUTABLE |
 *            READABLE | WRITEABLE and FRAG; tables carry only VALID plus:
 *   GFX12:   MTYPE in 54..55 (UC = 3 when uncached); every leaf (PTB or huge) sets bit 63 (AMDGPU_PTE_IS_PTE
 *            == AMDGPU_PDE_PTE_GFX12); leaf detection: bit 63.
 *   GFX10/11: MTYPE in 48..50; huge leaves set AMDGPU_PDE_PTE (bit 54); detection: bit 54.
 *   GFX9:    MTYPE in 57..58; tables in PDB1 set AMDGPU_PDE_BFS(9); tables in PDB0 set AMDGPU_PTE_TF;
 *            1 GiB leaves (in PDB1) set AMDGPU_PDE_PTE; 2 MiB leaves (in PDB0) set neither TF nor PDE_PTE;
 *            detection: a PDB0 entry is a page iff !TF, a PDB1/PDB2 entry iff PDE_PTE.
 *   Examples (entry encodings of tinygrad tinygrad/runtime/support/am/amdev.py AMPageTableEntry): gfx12 uncached 4 KiB host page 0x80C0000000000077 | pa, cached 2 MiB VRAM leaf
 *   0x8000000000000071 | frag << 7 | pa; gfx11 uncached host page 0x0003000000000077 | pa.
 *
 * Deliberate choices (where tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager differs): a huge leaf needs the VA, the physical address and the size to
 * be aligned to its size (tinygrad checks the VA only); the fragment of a run of entries is
 * ctz(va | va - va_base | pa | run_bytes) - 12 (capped at 31), so VA and physical fragments are aligned.
 * Unlike tinygrad, unmap invalidates the TLB too. VRAM addresses (tables and BG_AM_ASPACE_VRAM pages) are
 * written as paddr_base + pa (the XGMI address, tinygrad tinygrad/runtime/support/am/ip.py AM_GMC).
 *
 * The CPU writes entries through the VRAM accessor of the bg_am_vram (BAR0 in the driver, a host buffer in
 * tests); a host-side mirror of the tree (table addresses, valid bitmaps) answers overlap checks and frees
 * without reading VRAM back; bg_am_pt_translate() walks the tables in VRAM. Not thread-safe. */
#ifndef BG_AM_MM_PT_H
#define BG_AM_MM_PT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/mm_vram.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Bit definitions, named and valued as in Linux drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h ---------- */
#define AMDGPU_PTE_VALID (1ull << 0)
#define AMDGPU_PTE_SYSTEM (1ull << 1)
#define AMDGPU_PTE_SNOOPED (1ull << 2)
#define AMDGPU_PTE_TMZ (1ull << 3) /* gfx10+: trusted memory zone */
#define AMDGPU_PTE_EXECUTABLE (1ull << 4)
#define AMDGPU_PTE_READABLE (1ull << 5)
#define AMDGPU_PTE_WRITEABLE (1ull << 6)
#define AMDGPU_PTE_FRAG(x) (((uint64_t)(x) & 0x1full) << 7)
#define AMDGPU_PTE_PRT (1ull << 51)      /* gfx9..11 (partially resident texture); gfx12: bit 56 */
#define AMDGPU_PDE_PTE (1ull << 54)      /* gfx9..11: PDE is a (huge) leaf */
#define AMDGPU_PTE_LOG (1ull << 55)
#define AMDGPU_PTE_TF (1ull << 56)       /* gfx9: PDB0 entry translates further (points to a PTB) */
#define AMDGPU_PTE_NOALLOC (1ull << 58)
#define AMDGPU_PDE_BFS(a) ((uint64_t)(a) << 59)
/* MTYPE: VG10 = gfx9 (bits 57..58), NV10 = gfx10/11 (bits 48..50), GFX12 (bits 54..55). */
#define AMDGPU_PTE_MTYPE_VG10(a) ((uint64_t)(a) << 57)
#define AMDGPU_PTE_MTYPE_VG10_MASK AMDGPU_PTE_MTYPE_VG10(3ull)
#define AMDGPU_PTE_MTYPE_NV10(a) ((uint64_t)(a) << 48)
#define AMDGPU_PTE_MTYPE_NV10_MASK AMDGPU_PTE_MTYPE_NV10(7ull)
#define AMDGPU_PTE_PRT_GFX12 (1ull << 56)
#define AMDGPU_PTE_MTYPE_GFX12(a) ((uint64_t)(a) << 54)
#define AMDGPU_PTE_MTYPE_GFX12_MASK AMDGPU_PTE_MTYPE_GFX12(3ull)
#define AMDGPU_PTE_IS_PTE (1ull << 63)      /* gfx12: entry is a PTE */
#define AMDGPU_PDE_BFS_GFX12(a) (((uint64_t)(a) & 0x1full) << 58)
#define AMDGPU_PDE_PTE_GFX12 (1ull << 63)   /* gfx12: PDE is handled as PTE */
#define AMDGPU_MTYPE_UC 3u                  /* MTYPE_UC in every generation's MTYPE enum */
#define AMDGPU_PTE_ADDR_MASK 0x0000FFFFFFFFF000ull

/* Levels (Linux enum amdgpu_vm_level). */
enum { AMDGPU_VM_PDB2 = 0, AMDGPU_VM_PDB1 = 1, AMDGPU_VM_PDB0 = 2, AMDGPU_VM_PTB = 3 };
#define BG_AM_PT_ENTRIES 512u
/* Bytes one entry of a table at `level` covers: 2^39, 2^30, 2^21, 2^12. */
#define BG_AM_PT_COVERS(level) (1ull << (12u + 9u * (3u - (unsigned)(level))))

/* Entry-format generation. */
enum bg_am_pt_gen {
  BG_AM_PT_GFX9 = 9,   /* GC 9.x (9.4.3, 9.5.0) */
  BG_AM_PT_GFX11 = 11, /* GC 10.x and 11.x (identical layout) */
  BG_AM_PT_GFX12 = 12, /* GC 12.x */
};
/* The generation of a device is its GMC descriptor's pt_gen (am/am_ip.h). */
/* VM_CONTEXT0_CNTL page_table_depth / page_table_block_size for a root at PDB2 (tinygrad tinygrad/runtime/support/am/ip.py AM_GMC): gfx9 2/9, else 3/0. */
unsigned bg_am_pt_hw_depth(enum bg_am_pt_gen gen);
unsigned bg_am_pt_hw_block_size(enum bg_am_pt_gen gen);

/* Mapping flags. */
enum {
  BG_AM_PT_READ = 1u << 0,
  BG_AM_PT_WRITE = 1u << 1,
  BG_AM_PT_EXEC = 1u << 2,
  BG_AM_PT_SNOOPED = 1u << 3,  /* AMDGPU_PTE_SNOOPED (coherent host access) */
  BG_AM_PT_UNCACHED = 1u << 4, /* MTYPE_UC */
  BG_AM_PT_SYSTEM = 1u << 5,   /* encoder only: AMDGPU_PTE_SYSTEM (map() derives it from the aspace) */
};
#define BG_AM_PT_RWX (BG_AM_PT_READ | BG_AM_PT_WRITE | BG_AM_PT_EXEC)

/* Address space of the physical side of a mapping. */
enum bg_am_aspace {
  BG_AM_ASPACE_VRAM = 0, /* local VRAM: written as paddr_base + pa, must lie inside VRAM */
  BG_AM_ASPACE_SYS = 1,  /* host memory / peer BAR: bus address, AMDGPU_PTE_SYSTEM */
  BG_AM_ASPACE_PEER = 2, /* XGMI peer VRAM: raw xgmi address, no SYSTEM bit */
};

/* Encoders (pure). `level` is the level of the table that holds the entry. */
uint64_t bg_am_pt_encode_table(enum bg_am_pt_gen gen, unsigned level, uint64_t table_addr);
uint64_t bg_am_pt_encode_leaf(enum bg_am_pt_gen gen, unsigned level, uint64_t addr, unsigned frag, unsigned flags);
/* Whether a valid entry of a table at `level` is a leaf (a PTB entry always is). */
bool bg_am_pt_entry_is_leaf(enum bg_am_pt_gen gen, unsigned level, uint64_t entry);

/* TLB invalidation, provided by the GMC block (flush GC and MM hubs, vmid 0). A nonzero return is passed
 * on as the map/unmap result (the tables are already updated). */
typedef int (*bg_am_pt_flush_fn)(void *ctx);

struct bg_am_pt_config {
  enum bg_am_pt_gen gen;
  uint64_t va_base;    /* VM context start; 0 = BG_AM_VA_BASE (0x200000000000) */
  uint64_t va_size;    /* VA span; 0 = 2^44; at most 2^48 (512 root entries) */
  uint64_t paddr_base; /* XGMI offset of this GPU's VRAM (0 outside a hive) */
  uint64_t addr_mask;  /* address_space_mask (tinygrad tinygrad/runtime/support/am/ip.py AM_GMC): 2^44-1, or 2^48-1 on GC 9.4/9.5; 0 = 2^48-1 */
  bg_am_pt_flush_fn flush;
  void *flush_ctx;
};

typedef struct bg_am_pt bg_am_pt;

/* A physical segment of a mapping. */
struct bg_am_pt_seg {
  uint64_t addr, size;
};

/* Result of a translation. */
struct bg_am_pt_xlate {
  uint64_t addr;      /* address the hardware uses: entry address + offset (VRAM: paddr_base + pa) */
  uint64_t entry;     /* the leaf entry */
  uint64_t page_size; /* 4 KiB, 2 MiB or 1 GiB */
  unsigned level;     /* level of the table holding the leaf */
  bool system;        /* AMDGPU_PTE_SYSTEM */
};

/* Create the page tables of one VM: the root (PDB2) is allocated zeroed from the boot pool while the
 * VRAM manager boots (the first boot allocation in tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw), else from the page-table pool. The VRAM manager
 * must have an accessor and outlive the page tables. */
int bg_am_pt_create(const struct bg_am_pt_config *cfg, bg_am_vram *vram, bg_am_pt **out);
/* Free the host mirror and return every table (root included) to the VRAM manager; VRAM is not written. */
void bg_am_pt_destroy(bg_am_pt *pt);

/* Local physical address of the root table, and the VM_CONTEXT0_PAGE_TABLE_BASE_ADDR value
 * ((paddr_base + root) | 1, tinygrad tinygrad/runtime/support/am/ip.py AM_GMC). */
uint64_t bg_am_pt_root(const bg_am_pt *pt);
uint64_t bg_am_pt_base_reg(const bg_am_pt *pt);
/* Number of tables (root included) and VA range. */
size_t bg_am_pt_table_count(const bg_am_pt *pt);
uint64_t bg_am_pt_va_base(const bg_am_pt *pt);
uint64_t bg_am_pt_va_size(const bg_am_pt *pt);

/* Map [va, va + total) onto the segments in order (total = sum of sizes). va and every segment's address
 * and size must be 4 KiB aligned; 1 GiB / 2 MiB leaves are used where VA, physical address and remaining
 * size allow, 4 KiB PTEs otherwise; missing tables are allocated zeroed. Errors (nothing is changed then):
 * BG_EINVAL for unaligned addresses, an empty mapping, a VA range outside the VM range, addresses outside
 * VRAM / the address space, no READ/WRITE/EXEC flag, an overlap with an existing mapping (naming both
 * ranges); BG_ENOMEM when VRAM for a table is exhausted (naming the VA; the partial mapping is undone).
 * The flush callback runs once per call (or once at the end of a batch). */
int bg_am_pt_map(bg_am_pt *pt, uint64_t va, const struct bg_am_pt_seg *segs, size_t nsegs,
                 enum bg_am_aspace aspace, unsigned flags);
/* One contiguous physical range. */
int bg_am_pt_map_contig(bg_am_pt *pt, uint64_t va, uint64_t pa, uint64_t size, enum bg_am_aspace aspace,
                        unsigned flags);
/* A list of 4 KiB pages (e.g. host pages with non-contiguous bus addresses), mapped to consecutive VAs. */
int bg_am_pt_map_pages(bg_am_pt *pt, uint64_t va, const uint64_t *pages, size_t npages, enum bg_am_aspace aspace,
                       unsigned flags);
/* Unmap [va, va+size): every page in it must be mapped and no huge leaf may straddle its ends (BG_EINVAL
 * naming the address; nothing is changed then). Entries are zeroed; tables left empty are freed and
 * unlinked (never the root). The flush callback runs once. */
int bg_am_pt_unmap(bg_am_pt *pt, uint64_t va, uint64_t size);

/* Translate a VA by walking the tables in VRAM. BG_EINVAL names the VA and the level when unmapped or
 * outside the VM range. */
int bg_am_pt_translate(const bg_am_pt *pt, uint64_t va, struct bg_am_pt_xlate *out);

/* Batches: between begin and end, map/unmap do not flush; end flushes once if anything changed. Nests. */
void bg_am_pt_batch_begin(bg_am_pt *pt);
int bg_am_pt_batch_end(bg_am_pt *pt);

#ifdef __cplusplus
}
#endif
#endif
