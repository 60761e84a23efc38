/* am/mm_pt.c: GPU page tables in VRAM with a host-side mirror of the tree. See mm_pt.h. */
#include "am/mm_pt.h"

#include <inttypes.h>
#include <stdlib.h>

#include "am/mm_va.h"
#include "baregpu/error.h"

#define COV(level) BG_AM_PT_COVERS(level)
#define MAX_FRAG 31u

typedef struct node {
  uint64_t pa;          /* local physical address of the table */
  unsigned level;
  unsigned nvalid;      /* valid entries */
  uint64_t valid[BG_AM_PT_ENTRIES / 64];
  struct node **child;  /* per entry: the next-level table (NULL for leaves/empty); NULL array for a PTB */
} node;

struct bg_am_pt {
  enum bg_am_pt_gen gen;
  uint64_t va_base, va_size, paddr_base, addr_mask, vram_size;
  bg_am_pt_flush_fn flush;
  void *flush_ctx;
  bg_am_vram *vram;
  bg_am_vram_io io;
  node *root;
  size_t ntables;
  int batch;
  bool dirty;
};

/* ---- encoders -------------------------------------------------------------------------------------- */

unsigned bg_am_pt_hw_depth(enum bg_am_pt_gen gen) { return gen == BG_AM_PT_GFX9 ? 2u : 3u; }
unsigned bg_am_pt_hw_block_size(enum bg_am_pt_gen gen) { return gen == BG_AM_PT_GFX9 ? 9u : 0u; }

uint64_t bg_am_pt_encode_table(enum bg_am_pt_gen gen, unsigned level, uint64_t table_addr) {
  uint64_t e = (table_addr & AMDGPU_PTE_ADDR_MASK) | AMDGPU_PTE_VALID;
  if (gen == BG_AM_PT_GFX9) { /* gmc_v9_0_get_vm_pde with translate_further */
    if (level == AMDGPU_VM_PDB1) e |= AMDGPU_PDE_BFS(9);
    else if (level == AMDGPU_VM_PDB0) e |= AMDGPU_PTE_TF;
  }
  return e;
}

uint64_t bg_am_pt_encode_leaf(enum bg_am_pt_gen gen, unsigned level, uint64_t addr, unsigned frag, unsigned flags) {
  uint64_t e = (addr & AMDGPU_PTE_ADDR_MASK) | AMDGPU_PTE_VALID | AMDGPU_PTE_FRAG(frag);
  if (flags & BG_AM_PT_SYSTEM) e |= AMDGPU_PTE_SYSTEM;
  if (flags & BG_AM_PT_SNOOPED) e |= AMDGPU_PTE_SNOOPED;
  if (flags & BG_AM_PT_EXEC) e |= AMDGPU_PTE_EXECUTABLE;
  if (flags & BG_AM_PT_READ) e |= AMDGPU_PTE_READABLE;
  if (flags & BG_AM_PT_WRITE) e |= AMDGPU_PTE_WRITEABLE;
  uint64_t mtype = (flags & BG_AM_PT_UNCACHED) ? AMDGPU_MTYPE_UC : 0;
  switch (gen) {
  case BG_AM_PT_GFX12:
    e |= AMDGPU_PTE_MTYPE_GFX12(mtype) | (level == AMDGPU_VM_PTB ? AMDGPU_PTE_IS_PTE : AMDGPU_PDE_PTE_GFX12);
    break;
  case BG_AM_PT_GFX11:
    e |= AMDGPU_PTE_MTYPE_NV10(mtype) | (level != AMDGPU_VM_PTB ? AMDGPU_PDE_PTE : 0);
    break;
  case BG_AM_PT_GFX9:
    /* PDB0 leaves are plain PTEs (no TF); PDB1/PDB2 leaves are PDEs handled as PTEs. */
    e |= AMDGPU_PTE_MTYPE_VG10(mtype) | (level < AMDGPU_VM_PDB0 ? AMDGPU_PDE_PTE : 0);
    break;
  }
  return e;
}

bool bg_am_pt_entry_is_leaf(enum bg_am_pt_gen gen, unsigned level, uint64_t entry) {
  if (level >= AMDGPU_VM_PTB) return true;
  switch (gen) {
  case BG_AM_PT_GFX12: return (entry & AMDGPU_PDE_PTE_GFX12) != 0;
  case BG_AM_PT_GFX11: return (entry & AMDGPU_PDE_PTE) != 0;
  case BG_AM_PT_GFX9: return level == AMDGPU_VM_PDB0 ? !(entry & AMDGPU_PTE_TF) : (entry & AMDGPU_PDE_PTE) != 0;
  }
  return false;
}

/* ---- mirror helpers -------------------------------------------------------------------------------- */

static bool is_valid(const node *n, unsigned i) { return (n->valid[i / 64] >> (i % 64)) & 1; }
static void set_valid(node *n, unsigned i) {
  n->valid[i / 64] |= 1ull << (i % 64);
  n->nvalid++;
}
static void clr_valid(node *n, unsigned i) {
  n->valid[i / 64] &= ~(1ull << (i % 64));
  n->nvalid--;
}
static node *child_of(const node *n, unsigned i) { return n->child ? n->child[i] : NULL; }
static void put(bg_am_pt *pt, const node *n, unsigned i, uint64_t v) { pt->io.write64(pt->io.ctx, n->pa + 8ull * i, v); }

static const char *size_name(uint64_t cov) {
  return cov == (1ull << 12) ? "4 KiB" : cov == (1ull << 21) ? "2 MiB" : cov == (1ull << 30) ? "1 GiB" : "512 GiB";
}

/* Allocate a zeroed table from `pool`. The VRAM error message is kept (the caller adds the VA). */
static int node_new(bg_am_pt *pt, unsigned level, enum bg_am_vram_pool pool, node **out) {
  node *n = calloc(1, sizeof(*n));
  if (!n) return bg_error(BG_ENOMEM, "out of host memory for a page-table mirror");
  if (level < AMDGPU_VM_PTB && !(n->child = calloc(BG_AM_PT_ENTRIES, sizeof(*n->child)))) {
    free(n);
    return bg_error(BG_ENOMEM, "out of host memory for a page-table mirror");
  }
  int err = bg_am_vram_alloc(pt->vram, pool, BG_AM_PAGE_SIZE, BG_AM_PAGE_SIZE, true, &n->pa);
  if (err) {
    free(n->child);
    free(n);
    return err;
  }
  n->level = level;
  pt->ntables++;
  *out = n;
  return 0;
}

/* Free a table (its VRAM must already be all zero, i.e. every entry cleared) and its mirror. */
static void node_free(bg_am_pt *pt, node *n) {
  (void)bg_am_vram_free(pt->vram, n->pa);
  pt->ntables--;
  free(n->child);
  free(n);
}

/* Free a whole subtree without touching VRAM (destroy). */
static void node_free_tree(bg_am_pt *pt, node *n) {
  if (!n) return;
  if (n->child)
    for (unsigned i = 0; i < BG_AM_PT_ENTRIES; i++) node_free_tree(pt, n->child[i]);
  node_free(pt, n);
}

/* ---- create / destroy ------------------------------------------------------------------------------ */

int bg_am_pt_create(const struct bg_am_pt_config *cfg, bg_am_vram *vram, bg_am_pt **out) {
  if (!cfg || !vram || !out) return bg_error(BG_EINVAL, "pt: create: NULL argument");
  *out = NULL;
  const bg_am_vram_io *io = bg_am_vram_io_of(vram);
  if (!io) return bg_error(BG_EINVAL, "pt: the VRAM manager has no accessor to write page tables with");
  if (cfg->gen != BG_AM_PT_GFX9 && cfg->gen != BG_AM_PT_GFX11 && cfg->gen != BG_AM_PT_GFX12)
    return bg_error(BG_EINVAL, "pt: unknown page-table generation %d", (int)cfg->gen);
  uint64_t base = cfg->va_base ? cfg->va_base : BG_AM_VA_BASE;
  uint64_t size = cfg->va_size ? cfg->va_size : BG_AM_VA_SIZE;
  if (((base | size) & (BG_AM_PAGE_SIZE - 1)) || size > (1ull << 48) || base > UINT64_MAX - size)
    return bg_error(BG_EINVAL, "pt: VM range [0x%" PRIx64 ", +0x%" PRIx64 ") is not 4 KiB aligned, exceeds 2^48 bytes or wraps",
                    base, size);
  if (cfg->paddr_base & (BG_AM_PAGE_SIZE - 1))
    return bg_error(BG_EINVAL, "pt: paddr_base 0x%" PRIx64 " is not 4 KiB aligned", cfg->paddr_base);
  bg_am_pt *pt = calloc(1, sizeof(*pt));
  if (!pt) return bg_error(BG_ENOMEM, "pt: out of host memory");
  struct bg_am_vram_layout L;
  bg_am_vram_get_layout(vram, &L);
  pt->gen = cfg->gen;
  pt->va_base = base;
  pt->va_size = size;
  pt->paddr_base = cfg->paddr_base;
  pt->addr_mask = cfg->addr_mask ? cfg->addr_mask : (1ull << 48) - 1;
  pt->vram_size = L.vram_size;
  pt->flush = cfg->flush;
  pt->flush_ctx = cfg->flush_ctx;
  pt->vram = vram;
  pt->io = *io;
  int err = node_new(pt, AMDGPU_VM_PDB2, bg_am_vram_booting(vram) ? BG_AM_VRAM_BOOT : BG_AM_VRAM_PTABLE, &pt->root);
  if (err) {
    free(pt);
    return bg_error_context(err, "pt: root page directory: ");
  }
  if (pt->paddr_base + pt->root->pa > pt->addr_mask) {
    uint64_t r = pt->root->pa;
    node_free(pt, pt->root);
    free(pt);
    return bg_error(BG_EINVAL, "pt: root table at 0x%" PRIx64 " + paddr_base 0x%" PRIx64 " exceeds the address mask 0x%" PRIx64,
                    r, cfg->paddr_base, cfg->addr_mask);
  }
  *out = pt;
  return 0;
}

void bg_am_pt_destroy(bg_am_pt *pt) {
  if (!pt) return;
  node_free_tree(pt, pt->root);
  free(pt);
}

uint64_t bg_am_pt_root(const bg_am_pt *pt) { return pt ? pt->root->pa : 0; }
uint64_t bg_am_pt_base_reg(const bg_am_pt *pt) { return pt ? (pt->paddr_base + pt->root->pa) | 1 : 0; }
size_t bg_am_pt_table_count(const bg_am_pt *pt) { return pt ? pt->ntables : 0; }
uint64_t bg_am_pt_va_base(const bg_am_pt *pt) { return pt ? pt->va_base : 0; }
uint64_t bg_am_pt_va_size(const bg_am_pt *pt) { return pt ? pt->va_size : 0; }

/* ---- walkers (VAs relative to va_base; [rva, end) lies inside the node's span starting at nbase) ---- */

static unsigned first_idx(const node *n, uint64_t nbase, uint64_t rva) { return (unsigned)((rva - nbase) / COV(n->level)); }

/* First existing leaf overlapping [rva, end): its start and size. */
static bool find_mapped(const node *n, uint64_t nbase, uint64_t rva, uint64_t end, uint64_t *hit, uint64_t *hsize) {
  uint64_t cov = COV(n->level);
  for (unsigned i = first_idx(n, nbase, rva); i < BG_AM_PT_ENTRIES && nbase + i * cov < end; i++) {
    if (!is_valid(n, i)) continue;
    uint64_t eb = nbase + i * cov;
    const node *c = child_of(n, i);
    if (c) {
      if (find_mapped(c, eb, rva > eb ? rva : eb, end < eb + cov ? end : eb + cov, hit, hsize)) return true;
    } else {
      *hit = eb;
      *hsize = cov;
      return true;
    }
  }
  return false;
}

/* Whether every page of [rva, end) is mapped by leaves lying wholly inside it; else the offending VA and
 * (for a straddling leaf) its size. */
static bool all_mapped(const node *n, uint64_t nbase, uint64_t rva, uint64_t end, uint64_t *bad, uint64_t *bsize) {
  uint64_t cov = COV(n->level);
  for (unsigned i = first_idx(n, nbase, rva); i < BG_AM_PT_ENTRIES && nbase + i * cov < end; i++) {
    uint64_t eb = nbase + i * cov, lo = rva > eb ? rva : eb, hi = end < eb + cov ? end : eb + cov;
    if (!is_valid(n, i)) {
      *bad = lo;
      *bsize = 0;
      return false;
    }
    const node *c = child_of(n, i);
    if (c) {
      if (!all_mapped(c, eb, lo, hi, bad, bsize)) return false;
    } else if (lo != eb || hi != eb + cov) {
      *bad = eb;
      *bsize = cov;
      return false;
    }
  }
  return true;
}

/* Zero the leaves in [rva, end) (all wholly inside) and free tables that become empty. */
static void clear_range(bg_am_pt *pt, node *n, uint64_t nbase, uint64_t rva, uint64_t end) {
  uint64_t cov = COV(n->level);
  for (unsigned i = first_idx(n, nbase, rva); i < BG_AM_PT_ENTRIES && nbase + i * cov < end; i++) {
    if (!is_valid(n, i)) continue;
    uint64_t eb = nbase + i * cov;
    node *c = child_of(n, i);
    if (c) {
      clear_range(pt, c, eb, rva > eb ? rva : eb, end < eb + cov ? end : eb + cov);
      if (c->nvalid) continue;
      node_free(pt, c);
      n->child[i] = NULL;
    }
    put(pt, n, i, 0);
    clr_valid(n, i);
  }
}

/* Map *len bytes at *rva onto *pa (entry addresses) below node n, advancing all three. */
static int map_node(bg_am_pt *pt, node *n, uint64_t nbase, uint64_t *rva, uint64_t *pa, uint64_t *len, unsigned flags) {
  uint64_t cov = COV(n->level), nend = nbase + BG_AM_PT_ENTRIES * cov;
  while (*len && *rva < nend) {
    unsigned i = first_idx(n, nbase, *rva);
    bool leaf = n->level == AMDGPU_VM_PTB ||
                (n->level >= AMDGPU_VM_PDB1 && !((*rva | *pa) & (cov - 1)) && *len >= cov && !child_of(n, i));
    if (leaf) {
      unsigned cnt = 0;
      while (i + cnt < BG_AM_PT_ENTRIES && (uint64_t)(cnt + 1) * cov <= *len && !child_of(n, i + cnt)) cnt++;
      uint64_t run = (uint64_t)cnt * cov;
      unsigned frag = (unsigned)__builtin_ctzll((pt->va_base + *rva) | *rva | *pa | run) - 12u;
      if (frag > MAX_FRAG) frag = MAX_FRAG;
      for (unsigned k = 0; k < cnt; k++) {
        put(pt, n, i + k, bg_am_pt_encode_leaf(pt->gen, n->level, *pa + k * cov, frag, flags));
        set_valid(n, i + k);
      }
      *rva += run, *pa += run, *len -= run;
      continue;
    }
    node *c = n->child[i];
    if (!c) {
      int err = node_new(pt, n->level + 1, BG_AM_VRAM_PTABLE, &c);
      if (err)
        return bg_error_context(err, "cannot allocate a %s page table for VA 0x%" PRIx64 ": ",
                                n->level + 1 == AMDGPU_VM_PTB ? "PTB" : n->level + 1 == AMDGPU_VM_PDB0 ? "PDB0" : "PDB1",
                                pt->va_base + *rva);
      n->child[i] = c;
      put(pt, n, i, bg_am_pt_encode_table(pt->gen, n->level, pt->paddr_base + c->pa));
      set_valid(n, i);
    }
    int err = map_node(pt, c, nbase + i * cov, rva, pa, len, flags);
    if (err) return err;
  }
  return 0;
}

static int flush_or_defer(bg_am_pt *pt) {
  if (pt->batch) {
    pt->dirty = true;
    return 0;
  }
  if (!pt->flush) return 0;
  int err = pt->flush(pt->flush_ctx);
  return err ? bg_error_context(err, "pt: TLB invalidation: ") : 0;
}

void bg_am_pt_batch_begin(bg_am_pt *pt) {
  if (pt) pt->batch++;
}

int bg_am_pt_batch_end(bg_am_pt *pt) {
  if (!pt || pt->batch == 0) return bg_error(BG_EINVAL, "pt: batch_end without batch_begin");
  if (--pt->batch || !pt->dirty) return 0;
  pt->dirty = false;
  return flush_or_defer(pt);
}

/* ---- map / unmap / translate ----------------------------------------------------------------------- */

static const char *aspace_name(enum bg_am_aspace a) {
  return a == BG_AM_ASPACE_VRAM ? "VRAM" : a == BG_AM_ASPACE_SYS ? "system" : "peer";
}

/* Validate [va, va+size) against the VM range; the message names the range. */
static int check_va(const bg_am_pt *pt, const char *op, uint64_t va, uint64_t size) {
  if ((va | size) & (BG_AM_PAGE_SIZE - 1))
    return bg_error(BG_EINVAL, "pt: %s [0x%" PRIx64 ", +0x%" PRIx64 "): VA or size not 4 KiB aligned", op, va, size);
  if (size == 0) return bg_error(BG_EINVAL, "pt: %s at VA 0x%" PRIx64 ": empty range", op, va);
  if (va < pt->va_base || va - pt->va_base > pt->va_size || size > pt->va_size - (va - pt->va_base))
    return bg_error(BG_EINVAL, "pt: %s [0x%" PRIx64 ", +0x%" PRIx64 "): outside the VM range [0x%" PRIx64 ", 0x%" PRIx64 ")",
                    op, va, size, pt->va_base, pt->va_base + pt->va_size);
  return 0;
}

int bg_am_pt_map(bg_am_pt *pt, uint64_t va, const struct bg_am_pt_seg *segs, size_t nsegs, enum bg_am_aspace aspace,
                 unsigned flags) {
  if (!pt || (!segs && nsegs)) return bg_error(BG_EINVAL, "pt: map: NULL argument");
  if (!(flags & BG_AM_PT_RWX))
    return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": no READ, WRITE or EXEC permission given", va);
  if (aspace != BG_AM_ASPACE_VRAM && aspace != BG_AM_ASPACE_SYS && aspace != BG_AM_ASPACE_PEER)
    return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": unknown address space %d", va, (int)aspace);
  uint64_t total = 0;
  uint64_t amask = aspace == BG_AM_ASPACE_SYS ? (1ull << 48) - 1 : pt->addr_mask;
  uint64_t off = aspace == BG_AM_ASPACE_VRAM ? pt->paddr_base : 0;
  for (size_t s = 0; s < nsegs; s++) {
    uint64_t a = segs[s].addr, sz = segs[s].size;
    if ((a | sz) & (BG_AM_PAGE_SIZE - 1) || sz == 0)
      return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": %s segment %zu [0x%" PRIx64 ", +0x%" PRIx64
                      ") is empty or not 4 KiB aligned", va, aspace_name(aspace), s, a, sz);
    if (aspace == BG_AM_ASPACE_VRAM && (a > pt->vram_size || sz > pt->vram_size - a))
      return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": VRAM segment [0x%" PRIx64 ", 0x%" PRIx64
                      ") lies outside the %" PRIu64 "-byte VRAM", va, a, a + sz, pt->vram_size);
    if (a + off < a || a + off > amask || sz - 1 > amask - (a + off))
      return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": %s segment [0x%" PRIx64 ", +0x%" PRIx64
                      ") exceeds the address mask 0x%" PRIx64, va, aspace_name(aspace), a + off, sz, amask);
    if (sz > UINT64_MAX - total) return bg_error(BG_EINVAL, "pt: map at VA 0x%" PRIx64 ": total size overflows", va);
    total += sz;
  }
  int err = check_va(pt, "map", va, total);
  if (err) return err;
  uint64_t rva = va - pt->va_base, hit, hsize;
  if (find_mapped(pt->root, 0, rva, rva + total, &hit, &hsize))
    return bg_error(BG_EINVAL, "pt: map [0x%" PRIx64 ", 0x%" PRIx64 "): overlaps the existing %s mapping at [0x%" PRIx64
                    ", 0x%" PRIx64 ")", va, va + total, size_name(hsize), pt->va_base + hit, pt->va_base + hit + hsize);
  unsigned lf = (flags & (BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED)) |
                (aspace == BG_AM_ASPACE_SYS ? BG_AM_PT_SYSTEM : 0);
  uint64_t cur = rva;
  for (size_t s = 0; s < nsegs && !err; s++) {
    uint64_t pa = segs[s].addr + off, len = segs[s].size;
    err = map_node(pt, pt->root, 0, &cur, &pa, &len, lf);
  }
  if (err) {
    clear_range(pt, pt->root, 0, rva, rva + total); /* the range was empty: everything in it is ours */
    return bg_error_context(err, "pt: map [0x%" PRIx64 ", 0x%" PRIx64 "): ", va, va + total);
  }
  return flush_or_defer(pt);
}

int bg_am_pt_map_contig(bg_am_pt *pt, uint64_t va, uint64_t pa, uint64_t size, enum bg_am_aspace aspace,
                        unsigned flags) {
  struct bg_am_pt_seg s = {pa, size};
  return bg_am_pt_map(pt, va, &s, 1, aspace, flags);
}

int bg_am_pt_map_pages(bg_am_pt *pt, uint64_t va, const uint64_t *pages, size_t npages, enum bg_am_aspace aspace,
                       unsigned flags) {
  if (!pt || (!pages && npages)) return bg_error(BG_EINVAL, "pt: map_pages: NULL argument");
  if (npages == 0) return bg_error(BG_EINVAL, "pt: map_pages at VA 0x%" PRIx64 ": no pages", va);
  if (npages > SIZE_MAX / sizeof(struct bg_am_pt_seg))
    return bg_error(BG_EINVAL, "pt: map_pages at VA 0x%" PRIx64 ": %zu pages", va, npages);
  struct bg_am_pt_seg *segs = malloc(npages * sizeof(*segs));
  if (!segs) return bg_error(BG_ENOMEM, "pt: map_pages: out of host memory for %zu pages", npages);
  for (size_t i = 0; i < npages; i++) segs[i] = (struct bg_am_pt_seg){pages[i], BG_AM_PAGE_SIZE};
  int err = bg_am_pt_map(pt, va, segs, npages, aspace, flags);
  free(segs);
  return err;
}

int bg_am_pt_unmap(bg_am_pt *pt, uint64_t va, uint64_t size) {
  if (!pt) return bg_error(BG_EINVAL, "pt: unmap: NULL page tables");
  int err = check_va(pt, "unmap", va, size);
  if (err) return err;
  uint64_t rva = va - pt->va_base, bad, bsize;
  if (!all_mapped(pt->root, 0, rva, rva + size, &bad, &bsize)) {
    if (bsize)
      return bg_error(BG_EINVAL, "pt: unmap [0x%" PRIx64 ", 0x%" PRIx64 ") would split the %s mapping at [0x%" PRIx64
                      ", 0x%" PRIx64 ")", va, va + size, size_name(bsize), pt->va_base + bad, pt->va_base + bad + bsize);
    return bg_error(BG_EINVAL, "pt: unmap [0x%" PRIx64 ", 0x%" PRIx64 "): VA 0x%" PRIx64 " is not mapped", va, va + size,
                    pt->va_base + bad);
  }
  clear_range(pt, pt->root, 0, rva, rva + size);
  return flush_or_defer(pt);
}

int bg_am_pt_translate(const bg_am_pt *pt, uint64_t va, struct bg_am_pt_xlate *out) {
  if (!pt || !out) return bg_error(BG_EINVAL, "pt: translate: NULL argument");
  if (va < pt->va_base || va - pt->va_base >= pt->va_size)
    return bg_error(BG_EINVAL, "pt: translate 0x%" PRIx64 ": outside the VM range [0x%" PRIx64 ", 0x%" PRIx64 ")", va,
                    pt->va_base, pt->va_base + pt->va_size);
  uint64_t rva = va - pt->va_base, table = pt->root->pa;
  static const char *const names[] = {"PDB2", "PDB1", "PDB0", "PTB"};
  for (unsigned lv = AMDGPU_VM_PDB2; lv <= AMDGPU_VM_PTB; lv++) {
    uint64_t cov = COV(lv), idx = (rva / cov) % BG_AM_PT_ENTRIES;
    uint64_t e = pt->io.read64(pt->io.ctx, table + 8 * idx);
    if (!(e & AMDGPU_PTE_VALID))
      return bg_error(BG_EINVAL, "pt: translate 0x%" PRIx64 ": not mapped (%s entry %" PRIu64 " at 0x%" PRIx64 " is invalid)",
                      va, names[lv], idx, table + 8 * idx);
    if (bg_am_pt_entry_is_leaf(pt->gen, lv, e)) {
      out->entry = e;
      out->page_size = cov;
      out->level = lv;
      out->addr = (e & AMDGPU_PTE_ADDR_MASK) + (rva & (cov - 1));
      out->system = (e & AMDGPU_PTE_SYSTEM) != 0;
      return 0;
    }
    uint64_t next = e & AMDGPU_PTE_ADDR_MASK;
    if (next < pt->paddr_base || next - pt->paddr_base > pt->vram_size - BG_AM_PAGE_SIZE)
      return bg_error(BG_EFORMAT, "pt: translate 0x%" PRIx64 ": %s entry 0x%" PRIx64 " points outside VRAM", va, names[lv], e);
    table = next - pt->paddr_base;
  }
  return bg_error(BG_EFORMAT, "pt: translate 0x%" PRIx64 ": no leaf below the PTB", va);
}
