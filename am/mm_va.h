/* am/mm_va.h: GPU virtual address allocator of the AM driver (tinygrad tinygrad/runtime/support/memory.py TLSFAllocator, tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager "Global GPU VA allocator").
 *
 * A TLSF (hcq/tlsf.h) over the VM range, by default [0x200000000000, +2^44): the VM context start address
 * the hubs are programmed with (tinygrad tinygrad/runtime/support/am/ip.py AM_GMC) and the span the page tables cover (tinygrad tinygrad/runtime/support/am/amdev.py AMPageTableEntry). tinygrad keeps one such
 * allocator shared by all devices so that a buffer has the same VA on every GPU; the driver decides whether
 * to share one bg_am_va. Alignment rule: max(largest power of two <= size, align, 4 KiB), so big buffers get
 * naturally aligned VAs and can be mapped with 2 MiB / 1 GiB leaves and large fragments (am/mm_pt.h).
 * Deterministic: same calls, same addresses. Not thread-safe. */
#ifndef BG_AM_MM_VA_H
#define BG_AM_MM_VA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BG_AM_VA_BASE ((uint64_t)0x200000000000) /* tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager: GPU VA window base */
#define BG_AM_VA_SIZE ((uint64_t)1 << 44) /* tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager: GPU VA window size */

typedef struct bg_am_va bg_am_va;

/* base and size must be multiples of 4 KiB and size > 0 (BG_EINVAL otherwise). */
int bg_am_va_create(uint64_t base, uint64_t size, bg_am_va **out);
void bg_am_va_destroy(bg_am_va *va);
/* Alignment bg_am_va_alloc uses for (size, align): max(largest power of two <= round_up(size, 4K), align, 4K). */
uint64_t bg_am_va_align_for(uint64_t size, uint64_t align);
/* Allocate round_up(size, 4 KiB) bytes of VA at bg_am_va_align_for(size, align). BG_EINVAL for size 0 or
 * a non-power-of-two align; BG_ENOMEM naming size, alignment and the free bytes of the range. */
int bg_am_va_alloc(bg_am_va *va, uint64_t size, uint64_t align, uint64_t *addr);
/* BG_EINVAL naming the address when it was not returned by bg_am_va_alloc. */
int bg_am_va_free(bg_am_va *va, uint64_t addr);
uint64_t bg_am_va_free_bytes(const bg_am_va *va);
uint64_t bg_am_va_base(const bg_am_va *va);
uint64_t bg_am_va_size(const bg_am_va *va);

#ifdef __cplusplus
}
#endif
#endif
