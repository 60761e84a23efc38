/* am/mm_vram.h: physical VRAM manager of the AM driver (tinygrad tinygrad/runtime/support/memory.py TLSFAllocator, tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager; tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw).
 *
 * Layout of a device's VRAM (byte offsets = local physical addresses):
 *
 *   [0, 32 MiB)                      boot pool: its own TLSF; only while booting (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw), an error afterwards
 *   [32 MiB, 32 MiB + P)             page-table pool, only on a small BAR (P = round_up(usable / 512, 1 MiB)):
 *                                    page tables must stay CPU-visible through the BAR; P = 0 on a large BAR
 *   [32 MiB + P, usable)             main pool (everything else, page tables too on a large BAR)
 *   [usable, vram_size)              reserved top (64 MiB; 384 MiB on GC 9.4/9.5): never handed out
 *
 * The allocators are the project's TLSF (hcq/tlsf.h), metadata out of band, so the same sequence of calls
 * yields the same addresses every time: the boot allocations of a partial boot land where the previous
 * driver run put them. Sizes are rounded up to 4 KiB, alignment is at least 4 KiB.
 *
 * The VRAM accessor (bg_am_vram_io) is how the CPU reads and writes VRAM: the driver points it at its BAR0
 * mapping, tests at a host buffer. It is used to zero allocations and, by am/mm_pt.c, to write page tables.
 * Not thread-safe: the caller serializes. */
#ifndef BG_AM_MM_VRAM_H
#define BG_AM_MM_VRAM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_PAGE_SIZE ((uint64_t)0x1000)
#define BG_AM_VRAM_BOOT_SIZE ((uint64_t)32 << 20)          /* tinygrad tinygrad/runtime/support/memory.py TLSFAllocator, tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager */
#define BG_AM_VRAM_RESERVED_TOP ((uint64_t)64 << 20)      /* tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager */
#define BG_AM_VRAM_RESERVED_TOP_GC94 ((uint64_t)384 << 20) /* GC 9.4.x / 9.5.x (MI300/MI350) */

/* CPU access to VRAM at local physical addresses (8-byte aligned). `zero` is optional (NULL: a loop of
 * write64). The callbacks cannot fail: a BAR access either works or the device is gone, which the caller
 * detects elsewhere. */
typedef struct bg_am_vram_io {
  uint64_t (*read64)(void *ctx, uint64_t pa);
  void (*write64)(void *ctx, uint64_t pa, uint64_t val);
  void (*zero)(void *ctx, uint64_t pa, uint64_t size);
  void *ctx;
} bg_am_vram_io;

enum bg_am_vram_pool {
  BG_AM_VRAM_BOOT = 0,   /* boot region: only before bg_am_vram_end_boot() */
  BG_AM_VRAM_PTABLE = 1, /* page tables: the small-BAR pool, or the main pool on a large BAR */
  BG_AM_VRAM_MAIN = 2,
};

struct bg_am_vram_config {
  uint64_t vram_size;     /* total VRAM bytes (rounded down to 4 KiB) */
  uint64_t reserved_top;  /* bytes kept off the top; 0 = BG_AM_VRAM_RESERVED_TOP; per GMC generation: am/am_ip.h */
  uint64_t visible_size;  /* CPU-visible BAR0 bytes; 0 or >= vram_size = large BAR (no page-table pool) */
  const bg_am_vram_io *io;/* may be NULL (then `zero` requests fail with BG_EINVAL); copied */
};

struct bg_am_vram_layout {
  uint64_t vram_size, usable, reserved_top;
  uint64_t boot_base, boot_size;
  uint64_t ptable_base, ptable_size; /* size 0 on a large BAR */
  uint64_t main_base, main_size;
};

typedef struct bg_am_vram bg_am_vram;

/* -BG_EINVAL (naming the sizes) when VRAM cannot hold boot region + reserved top + at least one page of
 * the main pool, or when the small-BAR page-table pool would not fit in the visible BAR. */
int bg_am_vram_create(const struct bg_am_vram_config *cfg, bg_am_vram **out);
void bg_am_vram_destroy(bg_am_vram *v);

/* Allocate `size` bytes (rounded up to 4 KiB) aligned to `align` (power of two; raised to 4 KiB) from a
 * pool; `zero` clears them through the accessor. Errors: BG_EINVAL for the boot pool after boot ended
 * ("boot region [0x0, 0x2000000) is closed ..."), bad size/align, or zero without an accessor; BG_ENOMEM
 * naming the pool's range, the size and the free bytes. */
int bg_am_vram_alloc(bg_am_vram *v, enum bg_am_vram_pool pool, uint64_t size, uint64_t align, bool zero,
                     uint64_t *pa);
/* Free an address returned by bg_am_vram_alloc (any pool, also after boot). BG_EINVAL names an unknown
 * address or one in the reserved top. */
int bg_am_vram_free(bg_am_vram *v, uint64_t pa);

/* Close the boot pool (after init_sw/init_hw of all blocks). */
void bg_am_vram_end_boot(bg_am_vram *v);
bool bg_am_vram_booting(const bg_am_vram *v);

/* Free bytes of one pool (BG_AM_VRAM_PTABLE on a large BAR reports the main pool), and of all pools. */
uint64_t bg_am_vram_free_bytes(const bg_am_vram *v, enum bg_am_vram_pool pool);
uint64_t bg_am_vram_total_free(const bg_am_vram *v);
void bg_am_vram_get_layout(const bg_am_vram *v, struct bg_am_vram_layout *out);
const bg_am_vram_io *bg_am_vram_io_of(const bg_am_vram *v);

/* Zero [pa, pa+size) through the accessor (8-byte aligned). BG_EINVAL without an accessor or outside VRAM. */
int bg_am_vram_zero(bg_am_vram *v, uint64_t pa, uint64_t size);

#ifdef __cplusplus
}
#endif
#endif
