/* util/grow.h: growth of a heap array by doubling, the one copy every layer uses. */
#ifndef BG_UTIL_GROW_H
#define BG_UTIL_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Makes *p (an array of *cap elements of elem bytes) hold at least need elements: nothing when
 * need <= *cap, else a realloc to max(16, *cap) doubled until >= need, the new elements zeroed.
 * Returns false, leaving *p and *cap as they were, when the allocation fails or the byte size
 * (capacity * elem) does not fit in size_t; callers report that in their own words. */
bool bg_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
