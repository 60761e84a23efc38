/* hcq/tlsf.h: two-level segregated-fit allocator for device address space.
 *
 * Manages the range [base, base+size) without touching it: all block metadata lives in host-side
 * structures (address-ordered neighbour links, segregated free lists with bitmaps, and an
 * address -> block hash map for frees). Allocation and free are O(1) apart from the hash map and a
 * fallback scan of the lists below the good-fit class near exhaustion. Not thread-safe: callers
 * serialize (the CPU device holds a mutex). Internal: not installed. */
#ifndef BG_HCQ_TLSF_H
#define BG_HCQ_TLSF_H

#include <stdint.h>

typedef struct bg_tlsf bg_tlsf;

/* Manage [base, base+size); base must be a multiple of min_align (a power of two), size is rounded
 * down to a multiple of it. Metadata is out of band (it manages device address space, never touches it). */
int bg_tlsf_create(uint64_t base, uint64_t size, uint64_t min_align, bg_tlsf **out);
void bg_tlsf_destroy(bg_tlsf *t);
/* -BG_ENOMEM with a message naming size and free bytes when it cannot fit; -BG_EINVAL for size 0 or
 * a non-power-of-two align. Sizes are rounded up to min_align; align below min_align is raised to it. */
int bg_tlsf_alloc(bg_tlsf *t, uint64_t size, uint64_t align, uint64_t *addr);
/* -BG_EINVAL on an unknown address or a double free. */
int bg_tlsf_free(bg_tlsf *t, uint64_t addr);
uint64_t bg_tlsf_free_bytes(const bg_tlsf *t);
uint64_t bg_tlsf_largest_free(const bg_tlsf *t);

#endif
