/* am/mm_va.c: GPU VA allocator (TLSF over the VM range). See mm_va.h. */
#include "am/mm_va.h"

#include <inttypes.h>
#include <stdlib.h>

#include "am/mm_vram.h"
#include "baregpu/error.h"
#include "hcq/tlsf.h"

struct bg_am_va {
  uint64_t base, size;
  bg_tlsf *t;
};

int bg_am_va_create(uint64_t base, uint64_t size, bg_am_va **out) {
  if (!out) return bg_error(BG_EINVAL, "va: create: NULL argument");
  *out = NULL;
  if (size == 0 || ((base | size) & (BG_AM_PAGE_SIZE - 1)) || base > UINT64_MAX - size)
    return bg_error(BG_EINVAL, "va: range [0x%" PRIx64 ", +0x%" PRIx64 ") is empty, not 4 KiB aligned or wraps",
                    base, size);
  bg_am_va *va = calloc(1, sizeof(*va));
  if (!va) return bg_error(BG_ENOMEM, "va: out of host memory");
  va->base = base;
  va->size = size;
  int err = bg_tlsf_create(base, size, BG_AM_PAGE_SIZE, &va->t);
  if (err) {
    free(va);
    return bg_error_context(err, "va: ");
  }
  *out = va;
  return 0;
}

void bg_am_va_destroy(bg_am_va *va) {
  if (!va) return;
  bg_tlsf_destroy(va->t);
  free(va);
}

uint64_t bg_am_va_align_for(uint64_t size, uint64_t align) {
  if (size > UINT64_MAX - BG_AM_PAGE_SIZE) size = UINT64_MAX - BG_AM_PAGE_SIZE;
  size = (size + BG_AM_PAGE_SIZE - 1) & ~(BG_AM_PAGE_SIZE - 1);
  uint64_t a = size ? 1ull << (63 - __builtin_clzll(size)) : BG_AM_PAGE_SIZE;
  if (a < align) a = align;
  return a < BG_AM_PAGE_SIZE ? BG_AM_PAGE_SIZE : a;
}

int bg_am_va_alloc(bg_am_va *va, uint64_t size, uint64_t align, uint64_t *addr) {
  if (!va || !addr) return bg_error(BG_EINVAL, "va: alloc: NULL argument");
  if (size == 0) return bg_error(BG_EINVAL, "va: allocation of 0 bytes");
  if (align & (align - 1))
    return bg_error(BG_EINVAL, "va: allocation of %" PRIu64 " bytes: alignment 0x%" PRIx64 " is not a power of two",
                    size, align);
  if (size > va->size)
    return bg_error(BG_ENOMEM, "va: allocation of %" PRIu64 " bytes exceeds the VM range [0x%" PRIx64 ", 0x%" PRIx64 ")",
                    size, va->base, va->base + va->size);
  uint64_t a = bg_am_va_align_for(size, align);
  int err = bg_tlsf_alloc(va->t, size, a, addr);
  return err ? bg_error_context(err, "va: VM range [0x%" PRIx64 ", 0x%" PRIx64 "): ", va->base, va->base + va->size)
             : 0;
}

int bg_am_va_free(bg_am_va *va, uint64_t addr) {
  if (!va) return bg_error(BG_EINVAL, "va: free: NULL allocator");
  int err = bg_tlsf_free(va->t, addr);
  return err ? bg_error_context(err, "va: ") : 0;
}

uint64_t bg_am_va_free_bytes(const bg_am_va *va) { return va ? bg_tlsf_free_bytes(va->t) : 0; }
uint64_t bg_am_va_base(const bg_am_va *va) { return va ? va->base : 0; }
uint64_t bg_am_va_size(const bg_am_va *va) { return va ? va->size : 0; }
