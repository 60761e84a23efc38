/* hcq/bump.h: bump allocation in a fixed arena (kernel arguments, command buffers). Internal. */
#ifndef BG_HCQ_BUMP_H
#define BG_HCQ_BUMP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bg_bump { uint64_t base, size, off; bool wrap; } bg_bump;
/* Allocate size bytes aligned to align (power of two). wrap: restart at base when the end is reached (kernel-argument arenas that rely on their size); otherwise -BG_ENOMEM. Size > arena size is -BG_EINVAL. */
int bg_bump_alloc(bg_bump *b, uint64_t size, uint64_t align, uint64_t *addr);

#endif
