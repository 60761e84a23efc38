/* hcq/memmap.c: live allocations per address space (hcq/memmap.h). */
#include "hcq/memmap.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
  uintptr_t space;   /* bg_dev.priv (or the bg_dev when it has none) */
  uint64_t va, size;
  const bg_dev *owner;
} span;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t nfrees; /* allocations forgotten: bumped before the span goes, read without the lock */
static span *spans;
static size_t nspans, cap;

static uintptr_t space_of(const bg_dev *d) { return (uintptr_t)(d->priv ? d->priv : (const void *)d); }

static bool before(uintptr_t s, uint64_t va, const span *x) { return s < x->space || (s == x->space && va < x->va); }

/* Index of the first span after (s, va). */
static size_t upper(uintptr_t s, uint64_t va) {
  size_t lo = 0, hi = nspans;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (before(s, va, &spans[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

int bg_buf_flags_check(const bg_dev *d, unsigned flags) {
  if (!(flags & ~(unsigned)BG_BUF_KNOWN_FLAGS)) return 0;
  return bg_error(BG_EINVAL, "%s: bg_buf_alloc: unknown flag bits 0x%x in flags 0x%x (known: BG_BUF_HOST 0x1, "
                  "BG_BUF_UNCACHED 0x2, BG_BUF_CPU_ACCESS 0x4, BG_BUF_CONTIGUOUS 0x8, BG_BUF_ZERO 0x10)", d->name,
                  flags & ~(unsigned)BG_BUF_KNOWN_FLAGS, flags);
}

int bg_memmap_add(bg_dev *d, uint64_t va, uint64_t size) {
  uintptr_t s = space_of(d);
  pthread_mutex_lock(&lock);
  if (nspans == cap) {
    size_t nc = cap ? cap * 2 : 64;
    span *n = realloc(spans, nc * sizeof(*n));
    if (!n) {
      pthread_mutex_unlock(&lock);
      return bg_error(BG_ENOMEM, "%s: out of host memory recording an allocation", d->name);
    }
    spans = n;
    cap = nc;
  }
  size_t at = upper(s, va);
  memmove(&spans[at + 1], &spans[at], (nspans - at) * sizeof(*spans));
  spans[at] = (span){s, va, size, d};
  nspans++;
  pthread_mutex_unlock(&lock);
  return 0;
}

void bg_memmap_remove(bg_dev *d, uint64_t va) {
  uintptr_t s = space_of(d);
  pthread_mutex_lock(&lock);
  size_t at = upper(s, va);
  if (at > 0 && spans[at - 1].space == s && spans[at - 1].va == va) {
    memmove(&spans[at - 1], &spans[at], (nspans - at) * sizeof(*spans));
    nspans--;
    atomic_fetch_add(&nfrees, 1);
  }
  pthread_mutex_unlock(&lock);
}

uint64_t bg_memmap_frees(void) { return atomic_load(&nfrees); }

void bg_memmap_drop_dev(const bg_dev *d) {
  pthread_mutex_lock(&lock);
  size_t k = 0;
  for (size_t i = 0; i < nspans; i++)
    if (spans[i].owner != d) spans[k++] = spans[i];
  if (k != nspans) atomic_fetch_add(&nfrees, 1);
  nspans = k;
  if (!nspans) {
    free(spans);
    spans = NULL;
    cap = 0;
  }
  pthread_mutex_unlock(&lock);
}

int bg_memmap_check(const bg_dev *d, uint64_t va, uint64_t n, const char *what) {
  uintptr_t s = space_of(d);
  pthread_mutex_lock(&lock);
  size_t at = upper(s, va);
  span x = at > 0 ? spans[at - 1] : (span){0, 0, 0, NULL};
  pthread_mutex_unlock(&lock);
  bool inside = at > 0 && x.space == s && va - x.va < x.size;
  if (inside && n <= x.size - (va - x.va)) return 0;
  if (inside)
    return bg_error(BG_EINVAL, "%s 0x%" PRIx64 " + %" PRIu64 " bytes runs %" PRIu64 " bytes past the end of its buffer "
                    "[0x%" PRIx64 ", +%" PRIu64 ")", what, va, n, n - (x.size - (va - x.va)), x.va, x.size);
  return bg_error(BG_EINVAL, "%s 0x%" PRIx64 " + %" PRIu64 " bytes is in no live allocation of %s", what, va, n,
                  d->name);
}
