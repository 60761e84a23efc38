/* nv/nv_mmu.c: NVIDIA GPU page tables in the v2 (Ampere/Ada) and v3 (Hopper/Blackwell) formats. See nv_mmu.h.
 *
 * Entry fields: NVIDIA open-gpu-kernel-modules kernel-open/nvidia-uvm/hwref/hopper/gh100/dev_mmu.h, which carries both
 * NV_MMU_VER2_* (the Ampere/Ada format, the same lines as hwref/turing/tu102/dev_mmu.h) and NV_MMU_VER3_*; the v2 writer of Linux nouveau
 * (nvkm/subdev/mmu/vmmgp100.c: gp100_vmm_pde, gp100_vmm_valid) agrees. Each block's fields are a table below under
 * the hardware's names; the code sets and reads fields by role, so an error names the field it is about.
 *
 * The tree is kept only in the tables themselves (read back through ops.read64): no host mirror to drift from what
 * the GPU walks. A table is freed when an unmap leaves it all zero. */
#include "nv/nv_mmu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "baregpu/error.h"

/* ---- field tables ------------------------------------------------------------------------------------ */

/* Roles of fields; a block lacks the roles it has no field for (name NULL). The roles after F_KIND are fields this
 * driver never sets: they only name the bits of an entry it refuses to decode. */
enum fld {
  F_VALID,        /* VALID / IS_PTE (bit 0) */
  F_APER, F_VOL, F_NO_ATS, F_PCF, F_RO, F_ADDR_SYS, F_ADDR_VID,
  F_APER_SMALL, F_VOL_SMALL, F_PCF_SMALL, F_ADDR_SMALL_SYS, F_ADDR_SMALL_VID,
  F_KIND,
  F_ENCRYPTED, F_PRIVILEGE, F_ATOMIC_DISABLE, F_PEER, F_COMPTAGLINE, F_APER_BIG, F_VOL_BIG, F_PCF_BIG, F_ADDR_BIG,
  F_N
};

typedef struct field {
  const char *name;
  uint8_t hi, lo;  /* bit positions in the (up to 128-bit) entry */
} field;

typedef struct block {
  const char *name;
  field f[F_N];
} block;

#define FLD(n, h, l) {"NV_MMU_" n, h, l}

static const block v2_pde = {"NV_MMU_VER2_PDE", {
  [F_VALID] = FLD("VER2_PDE_IS_PTE", 0, 0),
  [F_APER] = FLD("VER2_PDE_APERTURE", 2, 1),
  [F_VOL] = FLD("VER2_PDE_VOL", 3, 3),
  [F_NO_ATS] = FLD("VER2_PDE_NO_ATS", 5, 5),
  [F_ADDR_SYS] = FLD("VER2_PDE_ADDRESS_SYS", 53, 8),
  [F_ADDR_VID] = FLD("VER2_PDE_ADDRESS_VID", 32, 8),
  [F_PEER] = FLD("VER2_PDE_ADDRESS_VID_PEER", 35, 33),
}};

static const block v2_dual = {"NV_MMU_VER2_DUAL_PDE", {
  [F_VALID] = FLD("VER2_DUAL_PDE_IS_PTE", 0, 0),
  [F_APER_BIG] = FLD("VER2_DUAL_PDE_APERTURE_BIG", 2, 1),
  [F_VOL_BIG] = FLD("VER2_DUAL_PDE_VOL_BIG", 3, 3),
  [F_NO_ATS] = FLD("VER2_DUAL_PDE_NO_ATS", 5, 5),
  [F_ADDR_BIG] = FLD("VER2_DUAL_PDE_ADDRESS_BIG_SYS", 53, 4),
  [F_APER_SMALL] = FLD("VER2_DUAL_PDE_APERTURE_SMALL", 66, 65),
  [F_VOL_SMALL] = FLD("VER2_DUAL_PDE_VOL_SMALL", 67, 67),
  [F_ADDR_SMALL_SYS] = FLD("VER2_DUAL_PDE_ADDRESS_SMALL_SYS", 117, 72),
  [F_ADDR_SMALL_VID] = FLD("VER2_DUAL_PDE_ADDRESS_SMALL_VID", 96, 72),
  [F_PEER] = FLD("VER2_DUAL_PDE_ADDRESS_SMALL_VID_PEER", 99, 97),
}};

static const block v2_pte = {"NV_MMU_VER2_PTE", {
  [F_VALID] = FLD("VER2_PTE_VALID", 0, 0),
  [F_APER] = FLD("VER2_PTE_APERTURE", 2, 1),
  [F_VOL] = FLD("VER2_PTE_VOL", 3, 3),
  [F_ENCRYPTED] = FLD("VER2_PTE_ENCRYPTED", 4, 4),
  [F_PRIVILEGE] = FLD("VER2_PTE_PRIVILEGE", 5, 5),
  [F_RO] = FLD("VER2_PTE_READ_ONLY", 6, 6),
  [F_ATOMIC_DISABLE] = FLD("VER2_PTE_ATOMIC_DISABLE", 7, 7),
  [F_ADDR_SYS] = FLD("VER2_PTE_ADDRESS_SYS", 53, 8),
  [F_ADDR_VID] = FLD("VER2_PTE_ADDRESS_VID", 32, 8),
  [F_PEER] = FLD("VER2_PTE_ADDRESS_VID_PEER", 35, 33),
  [F_COMPTAGLINE] = FLD("VER2_PTE_COMPTAGLINE", 55, 36),
  [F_KIND] = FLD("VER2_PTE_KIND", 63, 56),
}};

static const block v3_pde = {"NV_MMU_VER3_PDE", {
  [F_VALID] = FLD("VER3_PDE_IS_PTE", 0, 0),
  [F_APER] = FLD("VER3_PDE_APERTURE", 2, 1),
  [F_PCF] = FLD("VER3_PDE_PCF", 5, 3),
  [F_ADDR_SYS] = FLD("VER3_PDE_ADDRESS", 51, 12),
  [F_ADDR_VID] = FLD("VER3_PDE_ADDRESS", 51, 12),
}};

static const block v3_dual = {"NV_MMU_VER3_DUAL_PDE", {
  [F_VALID] = FLD("VER3_DUAL_PDE_IS_PTE", 0, 0),
  [F_APER_BIG] = FLD("VER3_DUAL_PDE_APERTURE_BIG", 2, 1),
  [F_PCF_BIG] = FLD("VER3_DUAL_PDE_PCF_BIG", 5, 3),
  [F_ADDR_BIG] = FLD("VER3_DUAL_PDE_ADDRESS_BIG", 51, 8),
  [F_APER_SMALL] = FLD("VER3_DUAL_PDE_APERTURE_SMALL", 66, 65),
  [F_PCF_SMALL] = FLD("VER3_DUAL_PDE_PCF_SMALL", 69, 67),
  [F_ADDR_SMALL_SYS] = FLD("VER3_DUAL_PDE_ADDRESS_SMALL", 115, 76),
  [F_ADDR_SMALL_VID] = FLD("VER3_DUAL_PDE_ADDRESS_SMALL", 115, 76),
}};

static const block v3_pte = {"NV_MMU_VER3_PTE", {
  [F_VALID] = FLD("VER3_PTE_VALID", 0, 0),
  [F_APER] = FLD("VER3_PTE_APERTURE", 2, 1),
  [F_PCF] = FLD("VER3_PTE_PCF", 7, 3),
  [F_KIND] = FLD("VER3_PTE_KIND", 11, 8),
  [F_ADDR_SYS] = FLD("VER3_PTE_ADDRESS", 51, 12),
  [F_ADDR_VID] = FLD("VER3_PTE_ADDRESS", 51, 12),
  [F_PEER] = FLD("VER3_PTE_PEER_ID", 63, 61),
}};

/* Values (same sources). PDE apertures count VIDEO_MEMORY as 1 where PTEs use 0 (PTE 1 is PEER_MEMORY). */
enum {
  PDE_APERTURE_INVALID = 0, PDE_APERTURE_VIDEO_MEMORY = 1,
  PTE_APERTURE_PEER_MEMORY = 1,
  /* NV_MMU_VER3_PDE_PCF_VALID_{CACHED,UNCACHED}_ATS_NOT_ALLOWED */
  V3_PDE_PCF_VALID_CACHED_ATS_NOT_ALLOWED = 2, V3_PDE_PCF_VALID_UNCACHED_ATS_NOT_ALLOWED = 3,
  /* NV_MMU_VER3_PTE_PCF_REGULAR_{RW,RO}_ATOMIC_{CACHED,UNCACHED}_ACE = 0, 1, 4, 5: bit 0 uncached, bit 2 read-only */
  V3_PTE_PCF_UNCACHED = 1, V3_PTE_PCF_RO = 4,
};

static uint64_t fmask(unsigned width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

static uint64_t fget(const uint64_t w[2], const field *f) {
  unsigned q = f->lo / 64, lo = f->lo % 64, width = (unsigned)(f->hi - f->lo) + 1;
  return (w[q] >> lo) & fmask(width);
}

static int fset(uint64_t w[2], const field *f, uint64_t v) {
  unsigned q = f->lo / 64, lo = f->lo % 64, width = (unsigned)(f->hi - f->lo) + 1;
  if (!f->name) return bg_error(BG_EINVAL, "nv mmu: field not in this entry format");
  if (v & ~fmask(width))
    return bg_error(BG_EINVAL, "nv mmu: %s (bits %u:%u) cannot hold 0x%" PRIx64 ": %u bits", f->name, f->hi, f->lo, v,
                    width);
  w[q] = (w[q] & ~(fmask(width) << lo)) | (v << lo);
  return 0;
}

/* ---- geometry ---------------------------------------------------------------------------------------- */

#define PAGE ((uint64_t)4096)
#define MAXLV 6

typedef struct geo {
  int levels;
  unsigned va_bits;
  uint8_t shift[MAXLV], bits[MAXLV];
  const char *name[MAXLV];
  const block *pde, *dual, *pte;
} geo;

static const geo geo_v2 = {5, 49, {47, 38, 29, 21, 12}, {2, 9, 9, 8, 9}, {"PDE3", "PDE2", "PDE1", "PDE0", "PTE"},
                           &v2_pde, &v2_dual, &v2_pte};
static const geo geo_v3 = {6, 57, {56, 47, 38, 29, 21, 12}, {1, 9, 9, 9, 8, 9},
                           {"PDE4", "PDE3", "PDE2", "PDE1", "PDE0", "PTE"}, &v3_pde, &v3_dual, &v3_pte};

static const geo *geo_of(int ver) { return ver == 2 ? &geo_v2 : ver == 3 ? &geo_v3 : NULL; }

static bool is_dual(const geo *g, int lv) { return lv == g->levels - 2; }
static bool is_pte_level(const geo *g, int lv) { return lv == g->levels - 1; }
/* Leaves: PTE (4 KiB), PDE0 (2 MiB, low half of the dual entry), PDE1 (512 MiB). */
static bool can_leaf(const geo *g, int lv) { return lv >= g->levels - 3; }
static uint64_t span(const geo *g, int lv) { return 1ull << g->shift[lv]; }
static unsigned entries(const geo *g, int lv) { return 1u << g->bits[lv]; }
static unsigned esize(const geo *g, int lv) { return is_dual(g, lv) ? 16u : 8u; }
static unsigned idx_of(const geo *g, int lv, uint64_t va) {
  return (unsigned)((va >> g->shift[lv]) & (entries(g, lv) - 1));
}

int bg_nv_mmu_levels(int ver) {
  const geo *g = geo_of(ver);
  if (!g) return bg_error(BG_EINVAL, "nv mmu: MMU version %d: expected 2 (Ampere/Ada) or 3 (Hopper/Blackwell)", ver);
  return g->levels;
}

unsigned bg_nv_mmu_root_entries(int ver) {
  const geo *g = geo_of(ver);
  return g ? entries(g, 0) : 0;
}

/* ---- encode / decode --------------------------------------------------------------------------------- */

static int check_aperture(enum bg_nv_aperture a, const char *what) {
  if (a == BG_NV_APER_VIDMEM || a == BG_NV_APER_SYSMEM_COH || a == BG_NV_APER_SYSMEM_NONCOH) return 0;
  return bg_error(BG_EINVAL, "nv mmu: %s aperture %d: expected VIDMEM (0), SYSMEM_COH (2) or SYSMEM_NONCOH (3)", what,
                  (int)a);
}

/* The address field of the aperture: ADDRESS_VID (narrower: the rest is the peer index) for video memory. */
static int set_addr(uint64_t w[2], const field *sys, const field *vid, enum bg_nv_aperture a, uint64_t addr) {
  return fset(w, a == BG_NV_APER_VIDMEM ? vid : sys, addr >> 12);
}

static int encode_leaf(int ver, const geo *g, int lv, const bg_nv_pte *e, uint64_t w[2]) {
  const block *b = g->pte;
  int r = check_aperture(e->aperture, "leaf");
  if (r) return r;
  if (e->addr & (span(g, lv) - 1))
    return bg_error(BG_EINVAL, "nv mmu: %s leaf address 0x%" PRIx64 " is not aligned to its page size 0x%" PRIx64,
                    g->name[lv], e->addr, span(g, lv));
  if ((r = fset(w, &b->f[F_VALID], 1)) || (r = fset(w, &b->f[F_APER], (uint64_t)e->aperture)) ||
      (r = set_addr(w, &b->f[F_ADDR_SYS], &b->f[F_ADDR_VID], e->aperture, e->addr)) ||
      (r = fset(w, &b->f[F_KIND], e->kind)))
    return r;
  if (ver == 2) {
    if ((r = fset(w, &b->f[F_VOL], e->uncached)) || (r = fset(w, &b->f[F_RO], e->read_only))) return r;
  } else {
    uint64_t pcf = (e->uncached ? V3_PTE_PCF_UNCACHED : 0) | (e->read_only ? V3_PTE_PCF_RO : 0);
    if ((r = fset(w, &b->f[F_PCF], pcf))) return r;
  }
  return 0;
}

static int encode_pde(int ver, const geo *g, int lv, const bg_nv_pte *e, uint64_t w[2]) {
  int r = check_aperture(e->aperture, "PDE");
  if (r) return r;
  if (e->read_only || e->kind)
    return bg_error(BG_EINVAL, "nv mmu: a %s pointing to a table has no read-only or kind field (read_only %d, kind %u)",
                    g->name[lv], (int)e->read_only, (unsigned)e->kind);
  if (e->addr & (PAGE - 1))
    return bg_error(BG_EINVAL, "nv mmu: %s table address 0x%" PRIx64 " is not 4 KiB aligned", g->name[lv], e->addr);
  uint64_t aper = e->aperture == BG_NV_APER_VIDMEM ? PDE_APERTURE_VIDEO_MEMORY : (uint64_t)e->aperture;
  uint64_t pcf = e->uncached ? V3_PDE_PCF_VALID_UNCACHED_ATS_NOT_ALLOWED : V3_PDE_PCF_VALID_CACHED_ATS_NOT_ALLOWED;
  if (is_dual(g, lv)) { /* only the small-page half: no 64 KiB big-page tables */
    const block *b = g->dual;
    if ((r = fset(w, &b->f[F_APER_SMALL], aper)) ||
        (r = set_addr(w, &b->f[F_ADDR_SMALL_SYS], &b->f[F_ADDR_SMALL_VID], e->aperture, e->addr)))
      return r;
    if (ver == 3) return fset(w, &b->f[F_PCF_SMALL], pcf);
    return (r = fset(w, &b->f[F_NO_ATS], 1)) ? r : fset(w, &b->f[F_VOL_SMALL], e->uncached);
  }
  const block *b = g->pde;
  if ((r = fset(w, &b->f[F_APER], aper)) || (r = set_addr(w, &b->f[F_ADDR_SYS], &b->f[F_ADDR_VID], e->aperture, e->addr)))
    return r;
  if (ver == 3) return fset(w, &b->f[F_PCF], pcf);
  return (r = fset(w, &b->f[F_NO_ATS], 1)) ? r : fset(w, &b->f[F_VOL], e->uncached);
}

static int check_level(int ver, int level, const geo **g) {
  *g = geo_of(ver);
  if (!*g) return bg_nv_mmu_levels(ver);
  if (level < 0 || level >= (*g)->levels)
    return bg_error(BG_EINVAL, "nv mmu: level %d of a v%d table: expected 0..%d", level, ver, (*g)->levels - 1);
  return 0;
}

int bg_nv_mmu_encode(int ver, int level, const bg_nv_pte *e, uint64_t *lo, uint64_t *hi) {
  const geo *g;
  int r = check_level(ver, level, &g);
  if (r) return r;
  if (!e || !lo) return bg_error(BG_EINVAL, "nv mmu: encode: entry or lo is NULL");
  if (is_dual(g, level) && !hi) return bg_error(BG_EINVAL, "nv mmu: encode: %s entries are 128-bit: hi is NULL", g->name[level]);
  uint64_t w[2] = {0, 0};
  if (e->valid) {
    if (e->is_pte) {
      if (!can_leaf(g, level))
        return bg_error(BG_EINVAL, "nv mmu: a %s entry cannot be a leaf (leaves: PDE1 512 MiB, PDE0 2 MiB, PTE 4 KiB)",
                        g->name[level]);
      r = encode_leaf(ver, g, level, e, w);
    } else {
      if (is_pte_level(g, level)) return bg_error(BG_EINVAL, "nv mmu: a PTE entry is always a leaf (is_pte false)");
      r = encode_pde(ver, g, level, e, w);
    }
    if (r) return r;
  }
  *lo = w[0];
  if (hi) *hi = w[1];
  return 0;
}

/* Names of the fields of b covering bit `bit` of the entry. */
static void name_bits(const block *b, unsigned bit, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int f = 0; f < F_N; f++) {
    const field *x = &b->f[f];
    if (!x->name || bit < x->lo || bit > x->hi || strstr(out, x->name)) continue;
    int k = snprintf(out + len, n - len, "%s%s", len ? ", " : "", x->name);
    if (k < 0 || (size_t)k >= n - len) break;
    len += (size_t)k;
  }
  if (!out[0]) snprintf(out, n, "reserved");
}

static int decode_leaf(int ver, const geo *g, int lv, const uint64_t w[2], bg_nv_pte *e) {
  const block *b = g->pte;
  uint64_t aper = fget(w, &b->f[F_APER]);
  if (aper == PTE_APERTURE_PEER_MEMORY)
    return bg_error(BG_EFORMAT, "nv mmu: %s leaf 0x%016" PRIx64 ": %s is PEER_MEMORY (peers are not used)",
                    g->name[lv], w[0], b->f[F_APER].name);
  e->valid = e->is_pte = true;
  e->aperture = (enum bg_nv_aperture)aper;
  e->addr = fget(w, aper == BG_NV_APER_VIDMEM ? &b->f[F_ADDR_VID] : &b->f[F_ADDR_SYS]) << 12;
  e->kind = (uint8_t)fget(w, &b->f[F_KIND]);
  if (ver == 2) {
    e->uncached = fget(w, &b->f[F_VOL]) != 0;
    e->read_only = fget(w, &b->f[F_RO]) != 0;
  } else {
    uint64_t pcf = fget(w, &b->f[F_PCF]);
    e->uncached = (pcf & V3_PTE_PCF_UNCACHED) != 0;
    e->read_only = (pcf & V3_PTE_PCF_RO) != 0;
  }
  return 0;
}

static int decode_pde(int ver, const geo *g, int lv, const uint64_t w[2], bg_nv_pte *e) {
  bool dual = is_dual(g, lv);
  const block *b = dual ? g->dual : g->pde;
  const field *af = &b->f[dual ? F_APER_SMALL : F_APER];
  uint64_t aper = fget(w, af);
  if (aper == PDE_APERTURE_INVALID) return 0; /* invalid: the caller checks the rest is zero */
  e->valid = true;
  e->aperture = aper == PDE_APERTURE_VIDEO_MEMORY ? BG_NV_APER_VIDMEM : (enum bg_nv_aperture)aper;
  const field *addr = &b->f[dual ? (e->aperture == BG_NV_APER_VIDMEM ? F_ADDR_SMALL_VID : F_ADDR_SMALL_SYS)
                                 : (e->aperture == BG_NV_APER_VIDMEM ? F_ADDR_VID : F_ADDR_SYS)];
  e->addr = fget(w, addr) << 12;
  if (ver == 2) e->uncached = fget(w, &b->f[dual ? F_VOL_SMALL : F_VOL]) != 0;
  else e->uncached = fget(w, &b->f[dual ? F_PCF_SMALL : F_PCF]) == V3_PDE_PCF_VALID_UNCACHED_ATS_NOT_ALLOWED;
  return 0;
}

int bg_nv_mmu_decode(int ver, int level, uint64_t lo, uint64_t hi, bg_nv_pte *e) {
  const geo *g;
  int r = check_level(ver, level, &g);
  if (r) return r;
  if (!e) return bg_error(BG_EINVAL, "nv mmu: decode: entry is NULL");
  if (!is_dual(g, level) && hi)
    return bg_error(BG_EFORMAT, "nv mmu: %s entries are 64-bit: hi 0x%016" PRIx64 " must be 0", g->name[level], hi);
  memset(e, 0, sizeof(*e));
  uint64_t w[2] = {lo, hi};
  const block *b = is_dual(g, level) ? g->dual : is_pte_level(g, level) ? g->pte : g->pde;
  if (lo & 1) { /* VALID (PTE) / IS_PTE (PDE levels): a leaf in the PTE format, in the low half of a dual entry */
    if (!can_leaf(g, level))
      return bg_error(BG_EFORMAT, "nv mmu: %s entry 0x%016" PRIx64 " has %s set: this level cannot hold a leaf",
                      g->name[level], lo, b->f[F_VALID].name);
    b = g->pte;
    r = decode_leaf(ver, g, level, w, e);
  } else if (!is_pte_level(g, level)) {
    r = decode_pde(ver, g, level, w, e);
  }
  if (r) return r;
  /* Strict: the entry must be exactly what encode writes for what was read; other bits (sparse, privileged,
   * encrypted, ATS allowed, a 64 KiB big-page half, ...) are entries this driver never makes. */
  uint64_t x[2] = {0, 0};
  if (e->valid && (r = bg_nv_mmu_encode(ver, level, e, &x[0], &x[1])) != 0) {
    bg_error_context(r, "nv mmu: %s entry 0x%016" PRIx64 "_%016" PRIx64 " is not an entry this driver writes: ",
                     g->name[level], hi, lo);
    return -BG_EFORMAT;
  }
  for (unsigned q = 0; q < 2; q++) {
    uint64_t d = w[q] ^ x[q];
    if (!d) continue;
    unsigned bit = q * 64 + (unsigned)__builtin_ctzll(d);
    char names[256];
    name_bits(bit >= 64 && is_dual(g, level) ? g->dual : b, bit, names, sizeof(names));
    return bg_error(BG_EFORMAT, "nv mmu: %s %s entry (%s) 0x%016" PRIx64 "_%016" PRIx64 ": bit %u (%s) is %s where this "
                    "driver writes %s", g->name[level], e->valid ? "valid" : "invalid", b->name, hi, lo, bit, names,
                    (w[q] >> (bit % 64)) & 1 ? "1" : "0", (x[q] >> (bit % 64)) & 1 ? "1" : "0");
  }
  return 0;
}

/* ---- table access ------------------------------------------------------------------------------------ */

static int rd(const bg_nv_mmu *m, const geo *g, int lv, uint64_t table, unsigned i, bg_nv_pte *e) {
  uint64_t at = table + (uint64_t)i * esize(g, lv);
  uint64_t lo = m->ops.read64(m->ops.ctx, at), hi = is_dual(g, lv) ? m->ops.read64(m->ops.ctx, at + 8) : 0;
  int r = bg_nv_mmu_decode(m->ver, lv, lo, hi, e);
  if (r) return bg_error_context(r, "nv mmu: table at 0x%" PRIx64 " entry %u: ", table, i);
  if (e->valid && !e->is_pte && e->aperture != BG_NV_APER_VIDMEM)
    return bg_error(BG_EFORMAT, "nv mmu: %s table at 0x%" PRIx64 " entry %u points to a table in system memory "
                    "(this driver keeps its tables in VRAM)", g->name[lv], table, i);
  return 0;
}

/* Writes the entry; a dual entry's half that makes it valid goes last (lo for a leaf, hi for a table). */
static int wr(bg_nv_mmu *m, const geo *g, int lv, uint64_t table, unsigned i, const bg_nv_pte *e) {
  uint64_t lo, hi = 0, at = table + (uint64_t)i * esize(g, lv);
  int r = bg_nv_mmu_encode(m->ver, lv, e, &lo, &hi);
  if (r) return r;
  if (!is_dual(g, lv)) {
    m->ops.write64(m->ops.ctx, at, lo);
  } else if (e->valid && e->is_pte) {
    m->ops.write64(m->ops.ctx, at + 8, hi);
    m->ops.write64(m->ops.ctx, at, lo);
  } else {
    m->ops.write64(m->ops.ctx, at, lo);
    m->ops.write64(m->ops.ctx, at + 8, hi);
  }
  return 0;
}

static bool table_empty(const bg_nv_mmu *m, const geo *g, int lv, uint64_t table) {
  uint64_t qwords = (uint64_t)entries(g, lv) * esize(g, lv) / 8;
  for (uint64_t q = 0; q < qwords; q++)
    if (m->ops.read64(m->ops.ctx, table + q * 8)) return false;
  return true;
}

static void invalidate(bg_nv_mmu *m) {
  m->ops.invalidate(m->ops.ctx);
  m->invalidates++;
}

/* ---- init / fini ------------------------------------------------------------------------------------- */

int bg_nv_mmu_init(bg_nv_mmu *m, int ver, const bg_nv_mmu_ops *ops) {
  if (!m || !ops) return bg_error(BG_EINVAL, "nv mmu: init: mmu or ops is NULL");
  memset(m, 0, sizeof(*m));
  int r = bg_nv_mmu_levels(ver);
  if (r < 0) return r;
  if (!ops->read64 || !ops->write64 || !ops->alloc_table || !ops->free_table || !ops->invalidate)
    return bg_error(BG_EINVAL, "nv mmu: init: ops need read64, write64, alloc_table, free_table and invalidate");
  m->ver = ver;
  m->ops = *ops;
  if ((r = ops->alloc_table(ops->ctx, &m->root_pa)) != 0) return bg_error_context(r, "nv mmu: root table: ");
  if (m->root_pa & (PAGE - 1)) {
    ops->free_table(ops->ctx, m->root_pa);
    return bg_error(BG_EINVAL, "nv mmu: alloc_table gave 0x%" PRIx64 ", not 4 KiB aligned", m->root_pa);
  }
  m->tables = 1;
  return 0;
}

static void free_tree(bg_nv_mmu *m, const geo *g, int lv, uint64_t table) {
  if (!is_pte_level(g, lv)) {
    for (unsigned i = 0; i < entries(g, lv); i++) {
      bg_nv_pte e;
      if (rd(m, g, lv, table, i, &e) == 0 && e.valid && !e.is_pte) free_tree(m, g, lv + 1, e.addr);
    }
  }
  m->ops.free_table(m->ops.ctx, table);
  m->tables--;
}

void bg_nv_mmu_fini(bg_nv_mmu *m) {
  const geo *g = m ? geo_of(m->ver) : NULL;
  if (!g || !m->tables) return;
  free_tree(m, g, 0, m->root_pa);
  m->root_pa = 0;
}

/* ---- walking ranges ---------------------------------------------------------------------------------- */

static int check_va(const bg_nv_mmu *m, const geo **g, uint64_t va, uint64_t size, const char *what) {
  *g = m ? geo_of(m->ver) : NULL;
  if (!*g || !m->tables) return bg_error(BG_EINVAL, "nv mmu: %s: the MMU is not initialized", what);
  uint64_t lim = 1ull << (*g)->va_bits;
  if ((va | size) & (PAGE - 1))
    return bg_error(BG_EINVAL, "nv mmu: %s: va 0x%" PRIx64 " and size 0x%" PRIx64 " must be 4 KiB aligned", what, va,
                    size);
  if (!size) return bg_error(BG_EINVAL, "nv mmu: %s: size is 0", what);
  if (va >= lim || size > lim - va)
    return bg_error(BG_EINVAL, "nv mmu: %s: [0x%" PRIx64 ", +0x%" PRIx64 ") is beyond the %u-bit VA space of MMU v%d",
                    what, va, size, (*g)->va_bits, m->ver);
  return 0;
}

static const char *size_name(uint64_t s) { return s == (512ull << 20) ? "512 MiB" : s == (2ull << 20) ? "2 MiB" : "4 KiB"; }

/* Any leaf inside [lo, hi) below `table` (whose first entry maps `base`): BG_EEXIST naming the VA. */
static int check_free(const bg_nv_mmu *m, const geo *g, int lv, uint64_t table, uint64_t base, uint64_t lo,
                      uint64_t hi) {
  uint64_t s = span(g, lv);
  for (uint64_t eb = base + ((lo - base) & ~(s - 1)); eb < hi; eb += s) {
    bg_nv_pte e;
    int r = rd(m, g, lv, table, idx_of(g, lv, eb), &e);
    if (r) return r;
    if (!e.valid) continue;
    uint64_t from = eb > lo ? eb : lo, to = eb + s < hi ? eb + s : hi;
    if (e.is_pte)
      return bg_error(BG_EEXIST, "nv mmu: map: VA 0x%" PRIx64 " is already mapped (a %s page at VA 0x%" PRIx64 ")",
                      from, size_name(s), eb);
    if ((r = check_free(m, g, lv + 1, e.addr, eb, from, to))) return r;
  }
  return 0;
}

enum walk_mode { W_CHECK, W_CLEAR, W_ROLLBACK };

/* Unmap [lo, hi) below `table`. W_CHECK: every page mapped and no leaf straddling lo or hi, nothing written.
 * W_CLEAR: clear leaves and free tables left empty. W_ROLLBACK: as W_CLEAR, skipping unmapped pages (undoing a map
 * that stopped part way, tables it made included). *wrote counts entries written. */
static bool pinned(const bg_nv_mmu *m, uint64_t table) {
  for (unsigned i = 0; i < m->npinned; i++)
    if (m->pinned[i] == table) return true;
  return false;
}

static int walk_unmap(bg_nv_mmu *m, const geo *g, int lv, uint64_t table, uint64_t base, uint64_t lo, uint64_t hi,
                      enum walk_mode mode, uint64_t *wrote) {
  static const bg_nv_pte zero;
  uint64_t s = span(g, lv);
  for (uint64_t eb = base + ((lo - base) & ~(s - 1)); eb < hi; eb += s) {
    unsigned i = idx_of(g, lv, eb);
    bg_nv_pte e;
    int r = rd(m, g, lv, table, i, &e);
    if (r) return r;
    uint64_t from = eb > lo ? eb : lo, to = eb + s < hi ? eb + s : hi;
    if (!e.valid) {
      if (mode == W_CHECK)
        return bg_error(BG_EINVAL, "nv mmu: unmap: VA 0x%" PRIx64 " is not mapped (%s entry %u invalid)", from,
                        g->name[lv], i);
      continue;
    }
    if (e.is_pte) {
      if (eb < lo || eb + s > hi)
        return bg_error(BG_EINVAL, "nv mmu: unmap [0x%" PRIx64 ", 0x%" PRIx64 ") would split the %s page at VA 0x%" PRIx64
                        ": unmap it whole", lo, hi, size_name(s), eb);
      if (mode != W_CHECK) {
        if ((r = wr(m, g, lv, table, i, &zero))) return r;
        (*wrote)++;
      }
      continue;
    }
    if ((r = walk_unmap(m, g, lv + 1, e.addr, eb, from, to, mode, wrote))) return r;
    if (mode != W_CHECK && !pinned(m, e.addr) && table_empty(m, g, lv + 1, e.addr)) {
      if ((r = wr(m, g, lv, table, i, &zero))) return r;
      m->ops.free_table(m->ops.ctx, e.addr);
      m->tables--;
      (*wrote)++;
    }
  }
  return 0;
}

/* The table of level `lv` covering va, made (zeroed, linked from its parent) where missing. */
static int table_for(bg_nv_mmu *m, const geo *g, int lv, uint64_t va, uint64_t *out) {
  uint64_t table = m->root_pa;
  for (int l = 0; l < lv; l++) {
    unsigned i = idx_of(g, l, va);
    bg_nv_pte e;
    int r = rd(m, g, l, table, i, &e);
    if (r) return r;
    if (e.valid && e.is_pte)
      return bg_error(BG_EEXIST, "nv mmu: map: VA 0x%" PRIx64 " is already mapped (a %s leaf)", va, g->name[l]);
    if (!e.valid) {
      uint64_t pa = 0;
      if ((r = m->ops.alloc_table(m->ops.ctx, &pa))) return bg_error_context(r, "nv mmu: %s table: ", g->name[l + 1]);
      m->tables++;
      bg_nv_pte t = {.valid = true, .aperture = BG_NV_APER_VIDMEM, .addr = pa};
      if ((r = wr(m, g, l, table, i, &t))) {
        m->ops.free_table(m->ops.ctx, pa);
        m->tables--;
        return r;
      }
      e = t;
    }
    table = e.addr;
  }
  *out = table;
  return 0;
}

int bg_nv_mmu_table_path(bg_nv_mmu *m, uint64_t va, int n, uint64_t *pa, unsigned *shift) {
  const geo *g;
  int r = check_va(m, &g, va, PAGE, "table path");
  if (r) return r;
  if (n < 1 || n >= g->levels) return bg_error(BG_EINVAL, "nv mmu: table path: %d levels (1..%d)", n, g->levels - 1);
  for (int l = 0; l < n; l++) {
    if ((r = table_for(m, g, l, va, &pa[l]))) return r;
    shift[l] = g->shift[l];
    if (l > 0 && !pinned(m, pa[l])) {
      if (m->npinned >= sizeof m->pinned / sizeof m->pinned[0])
        return bg_error(BG_ENOMEM, "nv mmu: table path: more than %zu pinned tables",
                        sizeof m->pinned / sizeof m->pinned[0]);
      m->pinned[m->npinned++] = pa[l];
    }
  }
  return 0;
}

/* ---- map / unmap / translate ------------------------------------------------------------------------- */

typedef struct pa_src {
  const uint64_t *pa;  /* NULL: contiguous from base */
  uint64_t base;
} pa_src;

static uint64_t pa_at(const pa_src *s, uint64_t i) { return s->pa ? s->pa[i] : s->base + i * PAGE; }

static bool contiguous(const pa_src *s, uint64_t i, uint64_t n) {
  if (!s->pa) return true;
  for (uint64_t k = 1; k < n; k++)
    if (s->pa[i + k] != s->pa[i] + k * PAGE) return false;
  return true;
}

static int map_range(bg_nv_mmu *m, uint64_t va, uint64_t size, const pa_src *src, uint64_t npages,
                     const bg_nv_map_attr *attr) {
  static const bg_nv_map_attr dflt;
  const geo *g;
  int r = check_va(m, &g, va, size, "map");
  if (r) return r;
  if (!attr) attr = &dflt;
  if ((r = check_aperture(attr->aperture, "map"))) return r;
  if (npages != size / PAGE)
    return bg_error(BG_EINVAL, "nv mmu: map: %" PRIu64 " pages given for size 0x%" PRIx64 " (%" PRIu64 " pages)", npages,
                    size, size / PAGE);
  /* Every address is checked before anything is written: a field too narrow fails here, not half way. */
  bg_nv_pte probe = {.valid = true, .is_pte = true, .aperture = attr->aperture};
  for (uint64_t i = 0; i < npages; i++) {
    uint64_t lo, hi;
    probe.addr = pa_at(src, i);
    if (probe.addr & (PAGE - 1))
      return bg_error(BG_EINVAL, "nv mmu: map: pa[%" PRIu64 "] 0x%" PRIx64 " is not 4 KiB aligned", i, probe.addr);
    if ((r = bg_nv_mmu_encode(m->ver, g->levels - 1, &probe, &lo, &hi)))
      return bg_error_context(r, "nv mmu: map: pa[%" PRIu64 "]: ", i);
    if (!src->pa && i == 0 && npages > 1) i = npages - 2; /* contiguous: the first and the last say it all */
  }
  if ((r = check_free(m, g, 0, m->root_pa, 0, va, va + size))) return r;

  /* The table of the last leaf is reused while the leaves stay in it: a walk from the root per 4 KiB page would cost
   * levels-1 BAR1 reads each on the device. Nothing is freed during a map, so the cached table stays valid. */
  uint64_t i = 0, c_table = 0, c_key = 0;
  int c_lv = -1;
  while (i < npages && r == 0) {
    uint64_t v = va + i * PAGE, p = pa_at(src, i), left = (npages - i) * PAGE;
    int lv = g->levels - 1;
    for (int cand = g->levels - 3; cand < g->levels - 1 && !attr->small_only; cand++) { /* greedy: biggest first */
      uint64_t s = span(g, cand);
      if (!((v | p) & (s - 1)) && left >= s && contiguous(src, i, s / PAGE)) {
        lv = cand;
        break;
      }
    }
    uint64_t table = c_table, key = v >> g->shift[lv - 1];
    if (lv != c_lv || key != c_key) {
      if ((r = table_for(m, g, lv, v, &table))) break;
      c_lv = lv;
      c_key = key;
      c_table = table;
    }
    bg_nv_pte e = {.valid = true, .is_pte = true, .aperture = attr->aperture, .addr = p, .uncached = attr->uncached,
                   .read_only = attr->read_only, .kind = 6 /* NV_MMU_PTE_KIND_GENERIC_MEMORY */};
    if ((r = wr(m, g, lv, table, idx_of(g, lv, v), &e))) break;
    i += span(g, lv) / PAGE;
  }
  if (r) { /* undo the part mapped and the tables made, keeping the message of the failure */
    char why[512];
    uint64_t wrote = 0;
    snprintf(why, sizeof(why), "%s", bg_last_error());
    walk_unmap(m, g, 0, m->root_pa, 0, va, va + size, W_ROLLBACK, &wrote);
    invalidate(m);
    return bg_error(-r, "%s", why);
  }
  invalidate(m);
  return 0;
}

int bg_nv_mmu_map(bg_nv_mmu *m, uint64_t va, uint64_t size, const uint64_t *pa, uint64_t npages,
                  const bg_nv_map_attr *attr) {
  if (!pa) return bg_error(BG_EINVAL, "nv mmu: map: pa is NULL");
  pa_src s = {pa, 0};
  return map_range(m, va, size, &s, npages, attr);
}

int bg_nv_mmu_map_contig(bg_nv_mmu *m, uint64_t va, uint64_t size, uint64_t pa, const bg_nv_map_attr *attr) {
  pa_src s = {NULL, pa};
  return map_range(m, va, size, &s, size / PAGE, attr);
}

int bg_nv_mmu_unmap(bg_nv_mmu *m, uint64_t va, uint64_t size) {
  const geo *g;
  int r = check_va(m, &g, va, size, "unmap");
  if (r) return r;
  uint64_t wrote = 0;
  if ((r = walk_unmap(m, g, 0, m->root_pa, 0, va, va + size, W_CHECK, &wrote))) return r;
  r = walk_unmap(m, g, 0, m->root_pa, 0, va, va + size, W_CLEAR, &wrote);
  invalidate(m); /* also after a failure part way: some entries may be gone */
  return r;
}

int bg_nv_mmu_translate(const bg_nv_mmu *m, uint64_t va, bg_nv_pte *e, uint64_t *page_size) {
  const geo *g;
  int r = check_va(m, &g, va & ~(PAGE - 1), PAGE, "translate");
  if (r) return r;
  if (!e) return bg_error(BG_EINVAL, "nv mmu: translate: entry is NULL");
  uint64_t table = m->root_pa;
  for (int lv = 0; lv < g->levels; lv++) {
    unsigned i = idx_of(g, lv, va);
    if ((r = rd(m, g, lv, table, i, e))) return r;
    if (!e->valid)
      return bg_error(BG_ENOENT, "nv mmu: translate: VA 0x%" PRIx64 " is not mapped: %s entry %u (table 0x%" PRIx64
                      ") is invalid", va, g->name[lv], i, table);
    if (e->is_pte) {
      if (page_size) *page_size = span(g, lv);
      return 0;
    }
    table = e->addr;
  }
  return bg_error(BG_EFORMAT, "nv mmu: translate: VA 0x%" PRIx64 ": no leaf below the PTE level", va);
}
