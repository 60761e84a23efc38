/* hcq/tlsf.c: two-level segregated-fit (TLSF) allocator over a device address range.
 *
 * Sizes are classified in units of min_align. First level: floor(log2(units)); second level: SL_COUNT
 * linear subdivisions of that power-of-two range (units below SL_COUNT map one class per unit).
 * A bitmap per level finds a non-empty class in O(1). Every block (free or used) is a host-side
 * struct in an address-ordered doubly linked list, so freeing coalesces with both neighbours at
 * once. Used blocks are found by address through a chained hash map.
 *
 * Allocation first rounds the request (plus worst-case alignment padding) up to the next class
 * boundary, so any block of the class found fits ("good fit", O(1)). Only when that fails does it
 * scan the lists of the classes below, which may still hold a block that fits exactly; that is
 * what lets an allocation of the whole free range succeed. Alignment padding in front of a block
 * and the unused tail are split off and returned to the free lists. */
#include "hcq/tlsf.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "baregpu/error.h"

#define SL_LOG 5
#define SL_COUNT (1u << SL_LOG)
#define FL_COUNT (64 - SL_LOG + 1)

typedef struct blk {
  uint64_t addr, size;           /* bytes */
  struct blk *pprev, *pnext;     /* address-ordered neighbours */
  struct blk *fprev, *fnext;     /* free list of the block's class (free blocks only) */
  struct blk *hnext;             /* hash chain (used blocks) or spare list */
  bool free;
} blk;

struct bg_tlsf {
  uint64_t base, size, min_align;
  unsigned align_log;
  uint64_t free_bytes;
  uint64_t fl_bitmap;
  uint32_t sl_bitmap[FL_COUNT];
  blk *heads[FL_COUNT][SL_COUNT];
  blk **buckets;                 /* used blocks by address */
  unsigned hbits;
  size_t hcount;
  blk *spare;                    /* recycled structs */
  blk *first;                    /* lowest-address block */
};

static unsigned log2_u64(uint64_t v) { return 63u - (unsigned)__builtin_clzll(v); }

static void class_of_units(uint64_t u, unsigned *fl, unsigned *sl) {
  if (u < SL_COUNT) {
    *fl = 0;
    *sl = (unsigned)u;
  } else {
    unsigned l = log2_u64(u);
    *fl = l - SL_LOG + 1;
    *sl = (unsigned)(u >> (l - SL_LOG)) & (SL_COUNT - 1);
  }
}

/* Class of a block of `bytes` (a non-zero multiple of min_align). */
static void mapping_insert(const bg_tlsf *t, uint64_t bytes, unsigned *fl, unsigned *sl) {
  class_of_units(bytes >> t->align_log, fl, sl);
}

/* Smallest class all of whose blocks hold `bytes` (a multiple of min_align); false when no such class exists. */
static bool mapping_search(const bg_tlsf *t, uint64_t bytes, unsigned *fl, unsigned *sl) {
  uint64_t u = bytes >> t->align_log;  /* bytes is a multiple of min_align */
  if (u >= SL_COUNT) {
    uint64_t round = (1ull << (log2_u64(u) - SL_LOG)) - 1;
    if (u > UINT64_MAX - round) return false;
    u += round;
  }
  class_of_units(u, fl, sl);
  return *fl < FL_COUNT;
}

/* First non-empty class at or above (fl, sl); false if none. */
static bool find_class(const bg_tlsf *t, unsigned *fl, unsigned *sl) {
  if (*fl >= FL_COUNT) return false;
  uint32_t slmap = *sl >= SL_COUNT ? 0 : t->sl_bitmap[*fl] & (~0u << *sl);
  if (!slmap) {
    uint64_t flmap = t->fl_bitmap & (~0ull << (*fl + 1));  /* *fl + 1 <= FL_COUNT < 64 */
    if (!flmap) return false;
    *fl = (unsigned)__builtin_ctzll(flmap);
    slmap = t->sl_bitmap[*fl];
  }
  *sl = (unsigned)__builtin_ctz(slmap);
  return true;
}

static void free_insert(bg_tlsf *t, blk *b) {
  unsigned fl, sl;
  mapping_insert(t, b->size, &fl, &sl);
  b->free = true;
  b->fprev = NULL;
  b->fnext = t->heads[fl][sl];
  if (b->fnext) b->fnext->fprev = b;
  t->heads[fl][sl] = b;
  t->sl_bitmap[fl] |= 1u << sl;
  t->fl_bitmap |= 1ull << fl;
}

static void free_remove(bg_tlsf *t, blk *b) {
  unsigned fl, sl;
  mapping_insert(t, b->size, &fl, &sl);
  if (b->fprev) b->fprev->fnext = b->fnext;
  else t->heads[fl][sl] = b->fnext;
  if (b->fnext) b->fnext->fprev = b->fprev;
  b->fprev = b->fnext = NULL;
  b->free = false;
  if (!t->heads[fl][sl]) {
    t->sl_bitmap[fl] &= ~(1u << sl);
    if (!t->sl_bitmap[fl]) t->fl_bitmap &= ~(1ull << fl);
  }
}

/* ---- address -> used block hash map ---- */

static size_t hash_idx(const bg_tlsf *t, uint64_t addr) {
  return (size_t)(((addr >> t->align_log) * 0x9E3779B97F4A7C15ull) >> (64 - t->hbits));
}

static int hash_grow(bg_tlsf *t) {
  unsigned nbits = t->hbits + 1;
  blk **nb = calloc((size_t)1 << nbits, sizeof *nb);
  if (!nb) return bg_error(BG_ENOMEM, "tlsf: out of host memory growing the block map to 2^%u buckets", nbits);
  blk **old = t->buckets;
  size_t oldn = (size_t)1 << t->hbits;
  t->buckets = nb;
  t->hbits = nbits;
  for (size_t i = 0; i < oldn; i++) {
    for (blk *b = old[i], *n; b; b = n) {
      n = b->hnext;
      size_t h = hash_idx(t, b->addr);
      b->hnext = nb[h];
      nb[h] = b;
    }
  }
  free(old);
  return 0;
}

static void hash_insert(bg_tlsf *t, blk *b) {
  size_t h = hash_idx(t, b->addr);
  b->hnext = t->buckets[h];
  t->buckets[h] = b;
  t->hcount++;
}

static blk *hash_remove(bg_tlsf *t, uint64_t addr) {
  for (blk **pp = &t->buckets[hash_idx(t, addr)]; *pp; pp = &(*pp)->hnext) {
    blk *b = *pp;
    if (b->addr == addr) {
      *pp = b->hnext;
      b->hnext = NULL;
      t->hcount--;
      return b;
    }
  }
  return NULL;
}

/* ---- block structs ---- */

static blk *blk_get(bg_tlsf *t) {
  blk *b = t->spare;
  if (b) t->spare = b->hnext;
  else b = malloc(sizeof *b);
  if (b) *b = (blk){0};
  return b;
}

static void blk_put(bg_tlsf *t, blk *b) {
  b->hnext = t->spare;
  t->spare = b;
}

/* Make sure n structs are ready so that a split cannot fail half-way. */
static int blk_reserve(bg_tlsf *t, unsigned n) {
  unsigned have = 0;
  for (blk *b = t->spare; b && have < n; b = b->hnext) have++;
  for (; have < n; have++) {
    blk *b = malloc(sizeof *b);
    if (!b) return bg_error(BG_ENOMEM, "tlsf: out of host memory for block metadata");
    blk_put(t, b);
  }
  return 0;
}

/* Insert n after p in address order (p may be NULL: n becomes first). */
static void phys_link_after(bg_tlsf *t, blk *p, blk *n) {
  n->pprev = p;
  n->pnext = p ? p->pnext : t->first;
  if (n->pnext) n->pnext->pprev = n;
  if (p) p->pnext = n;
  else t->first = n;
}

static void phys_unlink(bg_tlsf *t, blk *b) {
  if (b->pprev) b->pprev->pnext = b->pnext;
  else t->first = b->pnext;
  if (b->pnext) b->pnext->pprev = b->pprev;
}

/* ---- public ---- */

int bg_tlsf_create(uint64_t base, uint64_t size, uint64_t min_align, bg_tlsf **out) {
  if (!out) return bg_error(BG_EINVAL, "tlsf: create: out is NULL");
  *out = NULL;
  if (min_align == 0 || (min_align & (min_align - 1)))
    return bg_error(BG_EINVAL, "tlsf: min_align %" PRIu64 " is not a power of two", min_align);
  if (base & (min_align - 1))
    return bg_error(BG_EINVAL, "tlsf: base 0x%" PRIx64 " is not aligned to min_align 0x%" PRIx64, base, min_align);
  size &= ~(min_align - 1);
  if (size == 0)
    return bg_error(BG_EINVAL, "tlsf: range size is smaller than min_align 0x%" PRIx64, min_align);
  if (size - 1 > UINT64_MAX - base)
    return bg_error(BG_EINVAL, "tlsf: range 0x%" PRIx64 "+0x%" PRIx64 " wraps past 2^64", base, size);

  bg_tlsf *t = calloc(1, sizeof *t);
  if (!t) return bg_error(BG_ENOMEM, "tlsf: out of host memory");
  t->base = base;
  t->size = size;
  t->min_align = min_align;
  t->align_log = log2_u64(min_align);
  t->hbits = 6;
  t->buckets = calloc((size_t)1 << t->hbits, sizeof *t->buckets);
  blk *b = blk_get(t);
  if (!t->buckets || !b) {
    free(b);
    free(t->buckets);
    free(t);
    return bg_error(BG_ENOMEM, "tlsf: out of host memory");
  }
  b->addr = base;
  b->size = size;
  phys_link_after(t, NULL, b);
  free_insert(t, b);
  t->free_bytes = size;
  *out = t;
  return 0;
}

void bg_tlsf_destroy(bg_tlsf *t) {
  if (!t) return;
  for (blk *b = t->first, *n; b; b = n) {
    n = b->pnext;
    free(b);
  }
  for (blk *b = t->spare, *n; b; b = n) {
    n = b->hnext;
    free(b);
  }
  free(t->buckets);
  free(t);
}

static uint64_t pad_for(uint64_t addr, uint64_t align) { return (align - (addr & (align - 1))) & (align - 1); }

static bool block_fits(const blk *b, uint64_t size, uint64_t align) {
  uint64_t pad = pad_for(b->addr, align);
  return pad <= b->size && size <= b->size - pad;
}

/* Slow path: scan every non-empty class from the one `size` itself maps to, for a block that holds
 * size bytes at the alignment. Reached only when the good-fit search found nothing. */
static blk *scan_fit(const bg_tlsf *t, uint64_t size, uint64_t align) {
  unsigned fl, sl;
  mapping_insert(t, size, &fl, &sl);
  while (find_class(t, &fl, &sl)) {
    for (blk *b = t->heads[fl][sl]; b; b = b->fnext)
      if (block_fits(b, size, align)) return b;
    if (++sl >= SL_COUNT) {
      sl = 0;
      fl++;
    }
  }
  return NULL;
}

int bg_tlsf_alloc(bg_tlsf *t, uint64_t size, uint64_t align, uint64_t *addr) {
  if (!t || !addr) return bg_error(BG_EINVAL, "tlsf: alloc: NULL argument");
  if (size == 0) return bg_error(BG_EINVAL, "tlsf: alloc of 0 bytes");
  if (align == 0 || (align & (align - 1)))
    return bg_error(BG_EINVAL, "tlsf: alloc of %" PRIu64 " bytes: alignment %" PRIu64 " is not a power of two", size,
                    align);
  if (align < t->min_align) align = t->min_align;
  uint64_t req = size;
  if (req > t->size) goto nomem;
  req = (req + t->min_align - 1) & ~(t->min_align - 1);

  blk *b = NULL;
  uint64_t extra = align - t->min_align;  /* worst-case padding */
  if (req <= UINT64_MAX - extra) {
    unsigned fl, sl;
    if (mapping_search(t, req + extra, &fl, &sl) && find_class(t, &fl, &sl)) b = t->heads[fl][sl];
  }
  if (!b) b = scan_fit(t, req, align);
  if (!b) goto nomem;

  int err = blk_reserve(t, 2);
  if (err) return err;
  if (t->hcount + 1 > ((size_t)1 << t->hbits) && (err = hash_grow(t))) return err;

  free_remove(t, b);
  uint64_t pad = pad_for(b->addr, align);
  if (pad) {
    blk *f = blk_get(t);
    f->addr = b->addr;
    f->size = pad;
    phys_link_after(t, b->pprev, f);
    b->addr += pad;
    b->size -= pad;
    free_insert(t, f);
  }
  if (b->size > req) {
    blk *tail = blk_get(t);
    tail->addr = b->addr + req;
    tail->size = b->size - req;
    phys_link_after(t, b, tail);
    b->size = req;
    free_insert(t, tail);
  }
  hash_insert(t, b);
  t->free_bytes -= req;
  *addr = b->addr;
  return 0;

nomem:
  return bg_error(BG_ENOMEM,
                  "tlsf: cannot allocate %" PRIu64 " bytes (align %" PRIu64 ") in [0x%" PRIx64 ", +0x%" PRIx64
                  "): %" PRIu64 " bytes free, largest free block %" PRIu64 " bytes",
                  size, align, t->base, t->size, t->free_bytes, bg_tlsf_largest_free(t));
}

int bg_tlsf_free(bg_tlsf *t, uint64_t addr) {
  if (!t) return bg_error(BG_EINVAL, "tlsf: free: NULL allocator");
  blk *b = hash_remove(t, addr);
  if (!b) {
    if (addr < t->base || addr - t->base >= t->size)
      return bg_error(BG_EINVAL, "tlsf: free of 0x%" PRIx64 ": address outside the managed range [0x%" PRIx64
                      ", +0x%" PRIx64 ")", addr, t->base, t->size);
    return bg_error(BG_EINVAL, "tlsf: free of 0x%" PRIx64 ": no allocated block starts there (double free or "
                    "not an address returned by bg_tlsf_alloc)", addr);
  }
  t->free_bytes += b->size;
  blk *p = b->pprev, *n = b->pnext;
  if (p && p->free) {
    free_remove(t, p);
    p->size += b->size;
    phys_unlink(t, b);
    blk_put(t, b);
    b = p;
  }
  if (n && n->free) {
    free_remove(t, n);
    b->size += n->size;
    phys_unlink(t, n);
    blk_put(t, n);
  }
  free_insert(t, b);
  return 0;
}

uint64_t bg_tlsf_free_bytes(const bg_tlsf *t) { return t ? t->free_bytes : 0; }

uint64_t bg_tlsf_largest_free(const bg_tlsf *t) {
  if (!t || !t->fl_bitmap) return 0;
  unsigned fl = log2_u64(t->fl_bitmap);
  unsigned sl = 31u - (unsigned)__builtin_clz(t->sl_bitmap[fl]);
  uint64_t best = 0;
  for (const blk *b = t->heads[fl][sl]; b; b = b->fnext)
    if (b->size > best) best = b->size;
  return best;
}
