/* hcq/bump.c: bump allocation in a fixed arena, optionally wrapping to its start.
 *
 * Alignment is of the absolute address (base + off). A wrapping arena reuses memory without any
 * fencing: callers rely on the arena being large enough that nothing still in flight is
 * overwritten (tinygrad's kernargs BumpAllocator). */
#include "hcq/bump.h"

#include <inttypes.h>

#include "baregpu/error.h"

static uint64_t pad_for(uint64_t addr, uint64_t align) { return (align - (addr & (align - 1))) & (align - 1); }

/* Offset (from base) at which size bytes fit when starting the search at off, or UINT64_MAX. */
static uint64_t fit_at(const bg_bump *b, uint64_t off, uint64_t size, uint64_t align) {
  if (off > b->size) return UINT64_MAX;
  uint64_t pad = pad_for(b->base + off, align);
  if (pad > b->size - off || size > b->size - off - pad) return UINT64_MAX;
  return off + pad;
}

int bg_bump_alloc(bg_bump *b, uint64_t size, uint64_t align, uint64_t *addr) {
  if (!b || !addr) return bg_error(BG_EINVAL, "bump: alloc: NULL argument");
  if (align == 0 || (align & (align - 1)))
    return bg_error(BG_EINVAL, "bump: alloc of %" PRIu64 " bytes: alignment %" PRIu64 " is not a power of two", size,
                    align);
  if (size > b->size)
    return bg_error(BG_EINVAL, "bump: alloc of %" PRIu64 " bytes exceeds the arena size %" PRIu64, size, b->size);
  if (fit_at(b, 0, size, align) == UINT64_MAX)
    return bg_error(BG_EINVAL, "bump: alloc of %" PRIu64 " bytes at alignment %" PRIu64 " can never fit the arena "
                    "[0x%" PRIx64 ", +%" PRIu64 ")", size, align, b->base, b->size);
  uint64_t at = fit_at(b, b->off, size, align);
  if (at == UINT64_MAX) {
    if (!b->wrap)
      return bg_error(BG_ENOMEM, "bump: arena [0x%" PRIx64 ", +%" PRIu64 ") exhausted: %" PRIu64 " bytes (align %" PRIu64
                      ") requested, %" PRIu64 " bytes left", b->base, b->size, size, align,
                      b->off <= b->size ? b->size - b->off : 0);
    at = fit_at(b, 0, size, align);
  }
  b->off = at + size;
  *addr = b->base + at;
  return 0;
}
