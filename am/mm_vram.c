/* am/mm_vram.c: physical VRAM pools (boot / page-table / main) over TLSF allocators. See mm_vram.h. */
#include "am/mm_vram.h"

#include <inttypes.h>
#include <stdlib.h>

#include "baregpu/error.h"
#include "hcq/tlsf.h"

#define MIB (1ull << 20)

struct bg_am_vram {
  struct bg_am_vram_layout lay;
  bg_tlsf *boot, *ptable, *main; /* ptable NULL on a large BAR */
  bool booting;
  bool has_io;
  bg_am_vram_io io;
};

static const char *const pool_names[] = {"boot", "page-table", "main"};

int bg_am_vram_create(const struct bg_am_vram_config *cfg, bg_am_vram **out) {
  if (!cfg || !out) return bg_error(BG_EINVAL, "vram: create: NULL argument");
  *out = NULL;
  uint64_t size = cfg->vram_size & ~(BG_AM_PAGE_SIZE - 1);
  uint64_t rsv = cfg->reserved_top ? cfg->reserved_top : BG_AM_VRAM_RESERVED_TOP;
  if (rsv & (BG_AM_PAGE_SIZE - 1))
    return bg_error(BG_EINVAL, "vram: reserved top 0x%" PRIx64 " is not a multiple of 4 KiB", rsv);
  if (size <= rsv || size - rsv <= BG_AM_VRAM_BOOT_SIZE)
    return bg_error(BG_EINVAL,
                    "vram: %" PRIu64 " bytes of VRAM cannot hold the %" PRIu64 "-byte boot region, the %" PRIu64
                    "-byte reserved top and a main pool",
                    cfg->vram_size, BG_AM_VRAM_BOOT_SIZE, rsv);
  struct bg_am_vram_layout L = {0};
  L.vram_size = size;
  L.reserved_top = rsv;
  L.usable = size - rsv;
  L.boot_base = 0;
  L.boot_size = BG_AM_VRAM_BOOT_SIZE;
  L.ptable_base = BG_AM_VRAM_BOOT_SIZE;
  bool small_bar = cfg->visible_size && cfg->visible_size < size;
  if (small_bar) {
    L.ptable_size = ((L.usable / 512) + MIB - 1) & ~(MIB - 1);
    if (L.ptable_base + L.ptable_size > cfg->visible_size || L.ptable_base + L.ptable_size >= L.usable)
      return bg_error(BG_EINVAL,
                      "vram: page-table pool [0x%" PRIx64 ", 0x%" PRIx64 ") does not fit the %" PRIu64
                      "-byte visible BAR / %" PRIu64 " usable bytes",
                      L.ptable_base, L.ptable_base + L.ptable_size, cfg->visible_size, L.usable);
  }
  L.main_base = L.ptable_base + L.ptable_size;
  L.main_size = L.usable - L.main_base;

  bg_am_vram *v = calloc(1, sizeof(*v));
  if (!v) return bg_error(BG_ENOMEM, "vram: out of host memory");
  v->lay = L;
  v->booting = true;
  if (cfg->io) {
    v->io = *cfg->io;
    v->has_io = v->io.read64 && v->io.write64;
  }
  int err = bg_tlsf_create(L.boot_base, L.boot_size, BG_AM_PAGE_SIZE, &v->boot);
  if (!err && L.ptable_size) err = bg_tlsf_create(L.ptable_base, L.ptable_size, BG_AM_PAGE_SIZE, &v->ptable);
  if (!err) err = bg_tlsf_create(L.main_base, L.main_size, BG_AM_PAGE_SIZE, &v->main);
  if (err) {
    bg_am_vram_destroy(v);
    return bg_error_context(err, "vram: ");
  }
  *out = v;
  return 0;
}

void bg_am_vram_destroy(bg_am_vram *v) {
  if (!v) return;
  bg_tlsf_destroy(v->boot);
  bg_tlsf_destroy(v->ptable);
  bg_tlsf_destroy(v->main);
  free(v);
}

static bg_tlsf *pool_tlsf(const bg_am_vram *v, enum bg_am_vram_pool pool) {
  switch (pool) {
  case BG_AM_VRAM_BOOT: return v->boot;
  case BG_AM_VRAM_PTABLE: return v->ptable ? v->ptable : v->main;
  case BG_AM_VRAM_MAIN: return v->main;
  }
  return NULL;
}

int bg_am_vram_zero(bg_am_vram *v, uint64_t pa, uint64_t size) {
  if (!v) return bg_error(BG_EINVAL, "vram: zero: NULL manager");
  if (!v->has_io) return bg_error(BG_EINVAL, "vram: cannot zero [0x%" PRIx64 ", +0x%" PRIx64 "): no VRAM accessor", pa, size);
  if ((pa | size) & 7 || pa > v->lay.vram_size || size > v->lay.vram_size - pa)
    return bg_error(BG_EINVAL, "vram: zero [0x%" PRIx64 ", +0x%" PRIx64 ") is unaligned or outside the %" PRIu64
                    "-byte VRAM", pa, size, v->lay.vram_size);
  if (v->io.zero) {
    v->io.zero(v->io.ctx, pa, size);
  } else {
    for (uint64_t o = 0; o < size; o += 8) v->io.write64(v->io.ctx, pa + o, 0);
  }
  return 0;
}

int bg_am_vram_alloc(bg_am_vram *v, enum bg_am_vram_pool pool, uint64_t size, uint64_t align, bool zero,
                     uint64_t *pa) {
  if (!v || !pa) return bg_error(BG_EINVAL, "vram: alloc: NULL argument");
  bg_tlsf *t = pool_tlsf(v, pool);
  if (!t) return bg_error(BG_EINVAL, "vram: alloc: unknown pool %d", (int)pool);
  if (pool == BG_AM_VRAM_BOOT && !v->booting)
    return bg_error(BG_EINVAL,
                    "vram: boot region [0x%" PRIx64 ", 0x%" PRIx64 ") is closed: allocation of %" PRIu64
                    " bytes after boot ended",
                    v->lay.boot_base, v->lay.boot_base + v->lay.boot_size, size);
  if (zero && !v->has_io)
    return bg_error(BG_EINVAL, "vram: zeroed allocation of %" PRIu64 " bytes without a VRAM accessor", size);
  if (size == 0) return bg_error(BG_EINVAL, "vram: allocation of 0 bytes");
  if (size > UINT64_MAX - BG_AM_PAGE_SIZE) return bg_error(BG_ENOMEM, "vram: allocation of %" PRIu64 " bytes", size);
  size = (size + BG_AM_PAGE_SIZE - 1) & ~(BG_AM_PAGE_SIZE - 1);
  if (align < BG_AM_PAGE_SIZE) align = BG_AM_PAGE_SIZE;
  int err = bg_tlsf_alloc(t, size, align, pa);
  if (err) {
    const char *name = pool_names[pool];
    if (pool == BG_AM_VRAM_PTABLE && !v->ptable) name = "main (page tables)";
    return bg_error_context(err, "vram: %s pool: ", name);
  }
  if (zero) (void)bg_am_vram_zero(v, *pa, size);
  return 0;
}

int bg_am_vram_free(bg_am_vram *v, uint64_t pa) {
  if (!v) return bg_error(BG_EINVAL, "vram: free: NULL manager");
  const struct bg_am_vram_layout *L = &v->lay;
  bg_tlsf *t;
  const char *name;
  if (pa < L->boot_base + L->boot_size) {
    t = v->boot, name = "boot";
  } else if (pa < L->ptable_base + L->ptable_size) {
    t = v->ptable, name = "page-table";
  } else if (pa < L->usable) {
    t = v->main, name = "main";
  } else {
    return bg_error(BG_EINVAL, "vram: free of 0x%" PRIx64 ": address in the reserved top [0x%" PRIx64 ", 0x%" PRIx64
                    ") or beyond VRAM, never allocated", pa, L->usable, L->vram_size);
  }
  int err = bg_tlsf_free(t, pa);
  return err ? bg_error_context(err, "vram: %s pool: ", name) : 0;
}

void bg_am_vram_end_boot(bg_am_vram *v) {
  if (v) v->booting = false;
}

bool bg_am_vram_booting(const bg_am_vram *v) { return v && v->booting; }

uint64_t bg_am_vram_free_bytes(const bg_am_vram *v, enum bg_am_vram_pool pool) {
  if (!v) return 0;
  return bg_tlsf_free_bytes(pool_tlsf(v, pool));
}

uint64_t bg_am_vram_total_free(const bg_am_vram *v) {
  if (!v) return 0;
  return bg_tlsf_free_bytes(v->boot) + (v->ptable ? bg_tlsf_free_bytes(v->ptable) : 0) + bg_tlsf_free_bytes(v->main);
}

void bg_am_vram_get_layout(const bg_am_vram *v, struct bg_am_vram_layout *out) {
  if (v && out) *out = v->lay;
}

const bg_am_vram_io *bg_am_vram_io_of(const bg_am_vram *v) { return v && v->has_io ? &v->io : NULL; }
