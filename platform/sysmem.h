/* platform/sysmem.h: host memory a PCI device can DMA to, and its bus addresses.
 *
 * Pages are mapped shared, populated, locked (mlock) and kept out of fork children; their bus
 * addresses are the physical addresses from /proc/self/pagemap (tinygrad tinygrad/runtime/support/system.py System.alloc_sysmem):
 * the design programs no IOMMU, so bus address == physical address. Reading physical frame
 * numbers needs CAP_SYS_ADMIN: without it the kernel reports frame 0, which is said plainly.
 *
 * Test hooks: BG_PAGEMAP names a file to read instead of /proc/self/pagemap (a fake one the test
 * writes); BG_PROC_ROOT replaces /proc for the sysctl files. */
#ifndef BG_HCQ_SYSMEM_H
#define BG_HCQ_SYSMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/mmio.h"

#define BG_SYSMEM_PAGE 4096u
#define BG_SYSMEM_HUGE_PAGE (2u << 20)

enum bg_sysmem_flags {
  BG_SYSMEM_CONTIGUOUS = 1u << 0,  /* physically contiguous: one page, or one 2 MiB hugepage */
  BG_SYSMEM_HUGE = 1u << 1,        /* 2 MiB pages when the system has free ones, else 4 KiB */
};

typedef struct bg_sysmem {
  bg_mmio view;        /* CPU view: a direct pointer for host memory */
  uint64_t size;       /* requested size rounded up to 4 KiB */
  uint64_t *bus;       /* bus address of each 4 KiB page (malloc'd) */
  size_t npages;
  bool huge;           /* backed by 2 MiB pages */
  void *map_base;      /* what munmap needs (NULL: not host memory) */
  uint64_t map_size;
} bg_sysmem;

/* Map size bytes (rounded up to 4 KiB) at fixed_va (NULL: anywhere; otherwise MAP_FIXED, so the
 * caller must own that range, e.g. a reserved VA window; hugepage mappings cover whole 2 MiB
 * pages there) and lock them. out->bus is allocated
 * but not filled: translate with bg_sysmem_translate or a device's own translation. */
int bg_sysmem_map(uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out);
/* bg_sysmem_map + pagemap translation + the contiguity checks the flags ask for. */
int bg_sysmem_alloc(uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out);
void bg_sysmem_free(bg_sysmem *m);

/* Bus addresses of the npages 4 KiB pages from va (page-aligned) through pagemap: each entry
 * must have the present bit and a non-zero frame. */
int bg_sysmem_translate(const void *va, size_t npages, uint64_t *bus);
/* Physical contiguity: bus[i] == bus[0] + i*4096 and bus[0] % align == 0. what names the memory. */
int bg_sysmem_check_contiguous(const uint64_t *bus, size_t npages, uint64_t align, const char *what);
/* What the flags promise of a translated allocation: every 2 MiB page of a huge one whole and
 * aligned, a contiguous one contiguous. */
int bg_sysmem_check_layout(const bg_sysmem *m, unsigned flags);
/* Lock existing memory (a CPU buffer the device will read): mlock with a message on failure. */
int bg_sysmem_lock(void *va, uint64_t size);

const char *bg_sysmem_pagemap_path(void);
/* $BG_PROC_ROOT or "/proc". */
const char *bg_sysmem_proc_root(void);
/* Free 2 MiB hugepages according to <proc>/meminfo (0 when unknown). */
unsigned long bg_sysmem_free_hugepages(void);

#endif
