/* platform/pci_mmio.c: the out-of-line half of platform/mmio.h. */
#include "baregpu/error.h"
#include "platform/mmio.h"

int bg_mmio_fault(const bg_mmio *m, uint64_t off, size_t n, bool write) {
  const char *why = m->size < n || off > m->size - n ? "is outside the view" : "is misaligned in the view";
  return bg_error(BG_EINVAL, "mmio: %s of %zu bytes at offset 0x%llx %s of 0x%llx bytes", write ? "write" : "read", n,
                  (unsigned long long)off, why, (unsigned long long)m->size);
}

int bg_mmio_sub(const bg_mmio *m, uint64_t off, uint64_t size, bg_mmio *out) {
  if (m->ops) return bg_error(BG_EINVAL, "mmio: only direct views can be narrowed");
  if (m->size < size || off > m->size - size)
    return bg_error(BG_EINVAL, "mmio: window 0x%llx+0x%llx is outside the view of 0x%llx bytes",
                    (unsigned long long)off, (unsigned long long)size, (unsigned long long)m->size);
  *out = (bg_mmio){m->ptr + off, size, NULL, NULL};
  return 0;
}
