/* tests/unit/nv/test_nv_mmu.c: the bare-metal GPU page tables (nv/nv_mmu.h) in both formats, over a host buffer
 * standing in for VRAM.
 *
 * Two independent readings of the format must agree: every mapping made by nv_mmu.c is also walked by the emulated
 * GPU's walker (tests/mockgpu/nv_pci/nvpci_mmu.c, written from nouveau vmmgp100.c and the gh100 dev_mmu.h, not from
 * nv_mmu.c). The golden encodings below are worked out by hand from the NV_MMU_VER2_* / NV_MMU_VER3_* bit ranges of
 * NVIDIA open-gpu-kernel-modules kernel-open/nvidia-uvm/hwref/hopper/gh100/dev_mmu.h. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_mmu.h"
#include "nvpci_mmu.h"

#define KB 1024ull
#define MB (1024ull * KB)
#define GB (1024ull * MB)
#define VRAM_SIZE (2 * GB)   /* mapped lazily: only table pages are touched */
#define NTAB 4096u           /* table pages: the first 16 MiB of VRAM */

/* ---- the host "VRAM" and the ops over it ---- */

typedef struct hostvram {
  uint8_t *mem;
  uint8_t used[NTAB];
  uint64_t live;              /* table pages allocated */
  uint64_t writes;            /* write64 calls */
  uint64_t unflushed;         /* writes since the last invalidate */
  uint64_t invalidates;
  long alloc_budget;          /* allocations left before ENOMEM; < 0 unlimited */
} hostvram;

static hostvram hv;

static uint64_t h_read64(void *ctx, uint64_t pa) {
  hostvram *h = ctx;
  ck_assert_msg(pa % 8 == 0 && pa + 8 <= VRAM_SIZE, "read64 at 0x%" PRIx64, pa);
  uint64_t v;
  memcpy(&v, h->mem + pa, 8);
  return v;
}

static void h_write64(void *ctx, uint64_t pa, uint64_t v) {
  hostvram *h = ctx;
  ck_assert_msg(pa % 8 == 0 && pa < NTAB * 4096ull, "write64 at 0x%" PRIx64 " outside the table pages", pa);
  ck_assert_msg(h->used[pa / 4096], "write64 at 0x%" PRIx64 " into a table page not allocated", pa);
  memcpy(h->mem + pa, &v, 8);
  h->writes++;
  h->unflushed++;
}

static int h_alloc(void *ctx, uint64_t *pa) {
  hostvram *h = ctx;
  if (h->alloc_budget == 0) return bg_error(BG_ENOMEM, "test: table pages exhausted (budget)");
  for (unsigned i = 0; i < NTAB; i++) {
    if (h->used[i]) continue;
    h->used[i] = 1;
    h->live++;
    if (h->alloc_budget > 0) h->alloc_budget--;
    memset(h->mem + i * 4096ull, 0, 4096);
    *pa = i * 4096ull;
    return 0;
  }
  return bg_error(BG_ENOMEM, "test: no table page left");
}

static void h_free(void *ctx, uint64_t pa) {
  hostvram *h = ctx;
  ck_assert_msg(pa % 4096 == 0 && pa / 4096 < NTAB && h->used[pa / 4096], "free_table 0x%" PRIx64 " not allocated", pa);
  h->used[pa / 4096] = 0;
  h->live--;
  memset(h->mem + pa, 0xa5, 4096); /* a freed table still linked would now decode as garbage */
}

static void h_invalidate(void *ctx) {
  hostvram *h = ctx;
  h->invalidates++;
  h->unflushed = 0;
}

static const bg_nv_mmu_ops hops = {&hv, h_read64, h_write64, h_alloc, h_free, h_invalidate};

static void setup(void) {
  void *p = mmap(NULL, VRAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert_msg(p != MAP_FAILED, "mmap of the host VRAM");
  memset(&hv, 0, sizeof(hv));
  hv.mem = p;
  hv.alloc_budget = -1;
}

static void teardown(void) { munmap(hv.mem, VRAM_SIZE); }

static const bg_nv_map_attr VRAM = {BG_NV_APER_VIDMEM, false, false, false};
static const bg_nv_map_attr SMALL = {BG_NV_APER_VIDMEM, false, false, true};

/* Both readings agree that va maps pa with a page of ps bytes (and the attributes of a). */
static void agree(const bg_nv_mmu *m, uint64_t va, uint64_t pa, uint64_t ps, const bg_nv_map_attr *a) {
  bg_nv_pte e;
  uint64_t got_ps = 0;
  OK(bg_nv_mmu_translate(m, va, &e, &got_ps));
  ck_assert_msg(e.addr + (va & (got_ps - 1)) == pa && got_ps == ps,
                "v%d nv_mmu: VA 0x%" PRIx64 " -> 0x%" PRIx64 " page 0x%" PRIx64 ", want 0x%" PRIx64 " page 0x%" PRIx64,
                m->ver, va, e.addr + (va & (got_ps - 1)), got_ps, pa, ps);
  ck_assert(e.aperture == a->aperture && e.uncached == a->uncached && e.read_only == a->read_only && e.kind == 6);
  nvpci_mmu_result r;
  char why[256];
  int rc = nvpci_mmu_translate(hv.mem, VRAM_SIZE, m->ver, m->root_pa, va, &r, why, sizeof(why));
  ck_assert_msg(rc == 0, "v%d walker: VA 0x%" PRIx64 ": %s", m->ver, va, why);
  ck_assert_msg(r.pa == pa && r.page_size == ps,
                "v%d walker: VA 0x%" PRIx64 " -> 0x%" PRIx64 " page 0x%" PRIx64 ", want 0x%" PRIx64 " page 0x%" PRIx64,
                m->ver, va, r.pa, r.page_size, pa, ps);
  ck_assert_int_eq(r.aperture, (int)a->aperture);
  ck_assert(r.uncached == a->uncached && r.read_only == a->read_only && r.kind == 6);
}

/* Neither reading finds va mapped. */
static void unmapped(const bg_nv_mmu *m, uint64_t va) {
  bg_nv_pte e;
  FAILS(bg_nv_mmu_translate(m, va, &e, NULL), BG_ENOENT, "not mapped");
  nvpci_mmu_result r;
  char why[256];
  int rc = nvpci_mmu_translate(hv.mem, VRAM_SIZE, m->ver, m->root_pa, va, &r, why, sizeof(why));
  ck_assert_msg(rc == -NVPCI_MMU_UNMAPPED, "v%d walker: VA 0x%" PRIx64 ": %d (%s), want unmapped", m->ver, va, rc, why);
}

static void enc(int ver, int lv, bg_nv_pte e, uint64_t want_lo, uint64_t want_hi) {
  uint64_t lo = 0, hi = 0;
  OK(bg_nv_mmu_encode(ver, lv, &e, &lo, &hi));
  ck_assert_msg(lo == want_lo && hi == want_hi, "v%d level %d: 0x%016" PRIx64 "_%016" PRIx64 ", want 0x%016" PRIx64
                "_%016" PRIx64, ver, lv, hi, lo, want_hi, want_lo);
  bg_nv_pte d;
  OK(bg_nv_mmu_decode(ver, lv, lo, hi, &d));
  ck_assert(d.valid == e.valid && d.is_pte == e.is_pte && d.aperture == e.aperture && d.addr == e.addr &&
            d.uncached == e.uncached && d.read_only == e.read_only && d.kind == e.kind);
}

/* ---- entry formats ---- */

START_TEST(golden_v2) {
  ck_assert_int_eq(bg_nv_mmu_levels(2), 5);
  ck_assert_uint_eq(bg_nv_mmu_root_entries(2), 4);
  /* PTE, VRAM: VALID 0, VOL 3, READ_ONLY 6, ADDRESS_VID 32:8 = pa >> 12, KIND 63:56 = 6 */
  enc(2, 4, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 0x12345000, true, true, 6}, 0x0600000001234549ull, 0);
  /* PTE, coherent sysmem: APERTURE 2:1 = 2, ADDRESS_SYS 53:8 */
  enc(2, 4, (bg_nv_pte){true, true, BG_NV_APER_SYSMEM_COH, 0x0123456789abc000ull, false, false, 6}, 0x06123456789abc05ull,
      0);
  /* PDE2 -> table at 0x5000 in VRAM: APERTURE 2:1 = 1 (VIDEO_MEMORY), NO_ATS 5, ADDRESS 53:8 = 5 */
  enc(2, 1, (bg_nv_pte){true, false, BG_NV_APER_VIDMEM, 0x5000, false, false, 0}, 0x522, 0);
  /* PDE3 (root) -> non-coherent sysmem table, VOL */
  enc(2, 0, (bg_nv_pte){true, false, BG_NV_APER_SYSMEM_NONCOH, 0x1000000000ull, true, false, 0}, 0x10000002eull, 0);
  /* dual PDE0 -> PTE table at 0x7000: low half NO_ATS, high half APERTURE_SMALL 66:65 = 1, ADDRESS_SMALL 117:72 */
  enc(2, 3, (bg_nv_pte){true, false, BG_NV_APER_VIDMEM, 0x7000, false, false, 0}, 0x20, 0x702);
  /* 2 MiB leaf in the low half of PDE0, high half 0 */
  enc(2, 3, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 1 * GB, false, false, 6}, 0x0600000004000001ull, 0);
  /* 512 MiB leaf at PDE1 */
  enc(2, 2, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 512 * MB, false, false, 6}, 0x0600000002000001ull, 0);
  enc(2, 2, (bg_nv_pte){0}, 0, 0);
  uint64_t lo, hi;
  bg_nv_pte e = {true, true, BG_NV_APER_VIDMEM, 1ull << 37, false, false, 6};
  FAILS(bg_nv_mmu_encode(2, 4, &e, &lo, &hi), BG_EINVAL, "NV_MMU_VER2_PTE_ADDRESS_VID");
  e.aperture = BG_NV_APER_SYSMEM_COH; /* the sysmem field is wider */
  OK(bg_nv_mmu_encode(2, 4, &e, &lo, &hi));
  e.addr = 2 * MB + 4096; /* a big leaf must be aligned to its size */
  FAILS(bg_nv_mmu_encode(2, 3, &e, &lo, &hi), BG_EINVAL, "aligned");
  e.addr = 0;
  FAILS(bg_nv_mmu_encode(2, 1, &e, &lo, &hi), BG_EINVAL, "PDE2 entry cannot be a leaf");
  e.is_pte = false;
  FAILS(bg_nv_mmu_encode(2, 4, &e, &lo, &hi), BG_EINVAL, "always a leaf");
  FAILS(bg_nv_mmu_encode(4, 0, &e, &lo, &hi), BG_EINVAL, "MMU version 4");
  FAILS(bg_nv_mmu_encode(2, 5, &e, &lo, &hi), BG_EINVAL, "level 5");
  /* decode refuses what the driver never writes, naming the field */
  bg_nv_pte d;
  FAILS(bg_nv_mmu_decode(2, 4, 0x0600000001234549ull | (1u << 5), 0, &d), BG_EFORMAT, "NV_MMU_VER2_PTE_PRIVILEGE");
  FAILS(bg_nv_mmu_decode(2, 4, 0x0600000001234549ull | (1ull << 40), 0, &d), BG_EFORMAT, "COMPTAGLINE");
  FAILS(bg_nv_mmu_decode(2, 1, 0x502, 0, &d), BG_EFORMAT, "NV_MMU_VER2_PDE_NO_ATS");
  FAILS(bg_nv_mmu_decode(2, 1, 0x523, 0, &d), BG_EFORMAT, "cannot hold a leaf");
  FAILS(bg_nv_mmu_decode(2, 3, 0x22, 0x702, &d), BG_EFORMAT, "NV_MMU_VER2_DUAL_PDE_APERTURE_BIG");
  FAILS(bg_nv_mmu_decode(2, 4, 0x0600000001234543ull, 0, &d), BG_EFORMAT, "PEER_MEMORY");
  FAILS(bg_nv_mmu_decode(2, 4, 0x8, 0, &d), BG_EFORMAT, "invalid"); /* sparse */
}
END_TEST

START_TEST(golden_v3) {
  ck_assert_int_eq(bg_nv_mmu_levels(3), 6);
  ck_assert_uint_eq(bg_nv_mmu_root_entries(3), 2);
  /* PTE: VALID 0, PCF 7:3 = REGULAR_RO_ATOMIC_UNCACHED_ACE (5), KIND 11:8 = 6, ADDRESS 51:12 */
  enc(3, 5, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 0x1234567000ull, true, true, 6}, 0x1234567629ull, 0);
  /* PTE, coherent sysmem at the top of the 52-bit field, PCF REGULAR_RW_ATOMIC_CACHED_ACE (0) */
  enc(3, 5, (bg_nv_pte){true, true, BG_NV_APER_SYSMEM_COH, 0xffffffffff000ull, false, false, 6}, 0xffffffffff605ull, 0);
  /* PCF REGULAR_RW_ATOMIC_UNCACHED_ACE (1), REGULAR_RO_ATOMIC_CACHED_ACE (4) */
  enc(3, 5, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 0x1000, true, false, 6}, 0x1609, 0);
  enc(3, 5, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 0x1000, false, true, 6}, 0x1621, 0);
  /* PDE: APERTURE 1, PCF 5:3 = VALID_CACHED_ATS_NOT_ALLOWED (2) / VALID_UNCACHED_ATS_NOT_ALLOWED (3) */
  enc(3, 2, (bg_nv_pte){true, false, BG_NV_APER_VIDMEM, 0x9000, false, false, 0}, 0x9012, 0);
  enc(3, 0, (bg_nv_pte){true, false, BG_NV_APER_VIDMEM, 0x9000, true, false, 0}, 0x901a, 0);
  /* dual PDE0: low half 0, high half APERTURE_SMALL 66:65 = 1, PCF_SMALL 69:67 = 2, ADDRESS_SMALL 115:76 */
  enc(3, 4, (bg_nv_pte){true, false, BG_NV_APER_VIDMEM, 0xa000, false, false, 0}, 0, 0xa012);
  enc(3, 4, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 2 * MB, false, false, 6}, 0x200601, 0);
  /* 512 MiB leaf at PDE1 (level 3 in v3) */
  enc(3, 3, (bg_nv_pte){true, true, BG_NV_APER_VIDMEM, 512 * MB, false, false, 6}, 0x20000601, 0);
  uint64_t lo, hi;
  bg_nv_pte e = {true, true, BG_NV_APER_VIDMEM, 0x1000, false, false, 16};
  FAILS(bg_nv_mmu_encode(3, 5, &e, &lo, &hi), BG_EINVAL, "NV_MMU_VER3_PTE_KIND");
  e.kind = 6;
  e.addr = 1ull << 52;
  FAILS(bg_nv_mmu_encode(3, 5, &e, &lo, &hi), BG_EINVAL, "NV_MMU_VER3_PTE_ADDRESS");
  e.addr = 0;
  FAILS(bg_nv_mmu_encode(3, 2, &e, &lo, &hi), BG_EINVAL, "PDE2 entry cannot be a leaf");
  FAILS(bg_nv_mmu_encode(3, 4, &e, &lo, NULL), BG_EINVAL, "hi is NULL");
  bg_nv_pte d;
  /* PCF PRIVILEGE_RW_ATOMIC_CACHED_ACE (2): never written by the driver */
  FAILS(bg_nv_mmu_decode(3, 5, 0x1611, 0, &d), BG_EFORMAT, "NV_MMU_VER3_PTE_PCF");
  FAILS(bg_nv_mmu_decode(3, 5, 0x1601ull | (1ull << 61), 0, &d), BG_EFORMAT, "NV_MMU_VER3_PTE_PEER_ID");
  /* PDE PCF VALID_CACHED_ATS_ALLOWED (0) */
  FAILS(bg_nv_mmu_decode(3, 2, 0x9002, 0, &d), BG_EFORMAT, "NV_MMU_VER3_PDE_PCF");
  FAILS(bg_nv_mmu_decode(3, 4, 0x200601, 0xa012, &d), BG_EFORMAT, "APERTURE_SMALL");
  FAILS(bg_nv_mmu_decode(3, 5, 0, 1, &d), BG_EFORMAT, "64-bit");
}
END_TEST

/* encode -> decode over every level, both versions, every combination of the fields; then each of the 128 bits of
 * an encoded entry flipped: decode either refuses it or reads an entry that encodes back to exactly those bits. */
START_TEST(roundtrip_all) {
  static const enum bg_nv_aperture apers[] = {BG_NV_APER_VIDMEM, BG_NV_APER_SYSMEM_COH, BG_NV_APER_SYSMEM_NONCOH};
  static const uint8_t kinds[] = {0, 6, 15};
  unsigned checked = 0, flipped_ok = 0, flipped_refused = 0;
  for (int ver = 2; ver <= 3; ver++) {
    int levels = bg_nv_mmu_levels(ver);
    for (int lv = 0; lv < levels; lv++) {
      uint64_t page = lv == levels - 1 ? 4 * KB : lv == levels - 2 ? 2 * MB : lv == levels - 3 ? 512 * MB : 0;
      const uint64_t addrs[] = {0, 512 * MB, 16 * GB, 64 * GB + 512 * MB};
      for (int leaf = 0; leaf < 2; leaf++) {
        if ((leaf && !page) || (!leaf && lv == levels - 1)) continue;
        for (unsigned a = 0; a < 3; a++)
          for (unsigned ai = 0; ai < 4; ai++)
            for (int unc = 0; unc < 2; unc++)
              for (int ro = 0; ro < 2 * leaf || (ro == 0 && !leaf); ro++)
                for (unsigned k = 0; k < (leaf ? 3u : 1u); k++) {
                  bg_nv_pte e = {true, leaf != 0, apers[a], addrs[ai] + (leaf ? 0 : 0x3000), unc != 0, ro != 0,
                                 leaf ? kinds[k] : 0};
                  uint64_t w[2] = {0, 0};
                  OK(bg_nv_mmu_encode(ver, lv, &e, &w[0], &w[1]));
                  bg_nv_pte d;
                  OK(bg_nv_mmu_decode(ver, lv, w[0], w[1], &d));
                  ck_assert_msg(d.valid == e.valid && d.is_pte == e.is_pte && d.aperture == e.aperture &&
                                d.addr == e.addr && d.uncached == e.uncached && d.read_only == e.read_only &&
                                d.kind == e.kind,
                                "v%d level %d round trip of 0x%016" PRIx64 "_%016" PRIx64, ver, lv, w[1], w[0]);
                  checked++;
                  for (unsigned bit = 0; bit < 128; bit++) {
                    uint64_t x[2] = {w[0], w[1]};
                    x[bit / 64] ^= 1ull << (bit % 64);
                    if (bg_nv_mmu_decode(ver, lv, x[0], x[1], &d) != 0) {
                      flipped_refused++;
                      continue;
                    }
                    uint64_t y[2] = {0, 0};
                    OK(bg_nv_mmu_encode(ver, lv, &d, &y[0], &y[1]));
                    ck_assert_msg(y[0] == x[0] && y[1] == x[1], "v%d level %d: 0x%016" PRIx64 "_%016" PRIx64
                                  " decodes but encodes back as 0x%016" PRIx64 "_%016" PRIx64, ver, lv, x[1], x[0],
                                  y[1], y[0]);
                    flipped_ok++;
                  }
                }
      }
    }
  }
  ck_assert_uint_gt(checked, 500);
  ck_assert_uint_gt(flipped_ok, 1000);   /* address and flag bits */
  ck_assert_uint_gt(flipped_refused, 1000);
}
END_TEST

/* ---- map / translate / unmap ---- */

static void init(bg_nv_mmu *m, int ver) {
  hv.invalidates = 0;
  OK(bg_nv_mmu_init(m, ver, &hops));
  ck_assert_uint_eq(m->tables, 1);
  ck_assert_uint_eq(hv.live, 1);
}

static void fini(bg_nv_mmu *m) {
  bg_nv_mmu_fini(m);
  ck_assert_uint_eq(hv.live, 0);
}

/* Scattered 4 KiB pages, every one cross-checked; unmap frees the tables and invalidates. */
START_TEST(map_scattered) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    uint64_t pa[16], va = 0x100000000ull + 0x3000;
    for (unsigned i = 0; i < 16; i++) pa[i] = 64 * MB + (uint64_t)((i * 7) % 16) * 0x5000; /* not contiguous */
    bg_nv_map_attr ro = {BG_NV_APER_VIDMEM, true, true, false};
    OK(bg_nv_mmu_map(&m, va, 16 * 4096, pa, 16, &ro));
    ck_assert_uint_eq(m.invalidates, 1);
    ck_assert_uint_eq(hv.invalidates, 1);
    ck_assert_uint_eq(hv.unflushed, 0);
    ck_assert_uint_eq(m.tables, (uint64_t)bg_nv_mmu_levels(ver)); /* root + one table per level below */
    ck_assert_uint_eq(hv.live, m.tables);
    for (unsigned i = 0; i < 16; i++) agree(&m, va + i * 4096 + 0x123, pa[i] + 0x123, 4096, &ro);
    unmapped(&m, va - 4096);
    unmapped(&m, va + 16 * 4096);
    /* sysmem pages: the aperture reaches both readings */
    bg_nv_map_attr sys = {BG_NV_APER_SYSMEM_COH, false, false, false};
    uint64_t spa[2] = {0x7fff00000000ull, 0x1000};
    OK(bg_nv_mmu_map(&m, 0x200000000ull, 2 * 4096, spa, 2, &sys));
    agree(&m, 0x200000000ull, spa[0], 4096, &sys);
    agree(&m, 0x200001000ull, spa[1], 4096, &sys);
    ck_assert_uint_eq(m.invalidates, 2);
    OK(bg_nv_mmu_unmap(&m, va, 16 * 4096));
    ck_assert_uint_eq(m.invalidates, 3);
    ck_assert_uint_eq(hv.unflushed, 0);
    OK(bg_nv_mmu_unmap(&m, 0x200000000ull, 2 * 4096));
    ck_assert_uint_eq(m.invalidates, 4);
    ck_assert_uint_eq(hv.invalidates, 4);
    ck_assert_uint_eq(hv.unflushed, 0);
    ck_assert_uint_eq(m.tables, 1);
    ck_assert_uint_eq(hv.live, 1);
    for (unsigned i = 0; i < 16; i++) unmapped(&m, va + i * 4096);
    fini(&m);
  }
}
END_TEST

/* Greedy leaves: 512 MiB, then 2 MiB, then 4 KiB where VA, PA and size align; small_only: 4 KiB only. */
START_TEST(map_greedy) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    uint64_t va = 3 * GB, pa = 512 * MB, size = 512 * MB + 2 * MB + 4096;
    OK(bg_nv_mmu_map_contig(&m, va, size, pa, &VRAM));
    agree(&m, va, pa, 512 * MB, &VRAM);
    agree(&m, va + 512 * MB - 8, pa + 512 * MB - 8, 512 * MB, &VRAM);
    agree(&m, va + 512 * MB + 0x1234, pa + 512 * MB + 0x1234, 2 * MB, &VRAM);
    agree(&m, va + 514 * MB + 8, pa + 514 * MB + 8, 4096, &VRAM);
    unmapped(&m, va + size);
    /* root, the table above PDE1, PDE1, PDE0, PTE: one each */
    ck_assert_uint_eq(m.tables, (uint64_t)bg_nv_mmu_levels(ver));
    uint64_t writes = hv.writes;
    OK(bg_nv_mmu_unmap(&m, va, size));
    ck_assert_uint_lt(hv.writes - writes, 16); /* three leaves and a few PDEs, not 131585 PTEs */
    ck_assert_uint_eq(m.tables, 1);

    /* PA aligned only to 4 KiB: 4 KiB pages although VA and size allow 2 MiB */
    OK(bg_nv_mmu_map_contig(&m, 4 * GB, 4 * MB, 512 * MB + 4096, &VRAM));
    agree(&m, 4 * GB, 512 * MB + 4096, 4096, &VRAM);
    agree(&m, 4 * GB + 3 * MB, 512 * MB + 4096 + 3 * MB, 4096, &VRAM);
    OK(bg_nv_mmu_unmap(&m, 4 * GB, 4 * MB));

    /* a page list with one contiguous aligned 2 MiB run in the middle */
    uint64_t n = 3 * 512, *pl = malloc(n * sizeof(*pl));
    ck_assert_ptr_nonnull(pl);
    for (uint64_t i = 0; i < n; i++) pl[i] = (i >= 512 && i < 1024) ? 32 * MB + (i - 512) * 4096 : 100 * MB + (n - i) * 8192;
    OK(bg_nv_mmu_map(&m, 8 * GB, n * 4096, pl, n, &VRAM));
    agree(&m, 8 * GB + 2 * MB + 0x10, 32 * MB + 0x10, 2 * MB, &VRAM);
    agree(&m, 8 * GB, pl[0], 4096, &VRAM);
    agree(&m, 8 * GB + 4 * MB + 4096, pl[1025], 4096, &VRAM);
    OK(bg_nv_mmu_unmap(&m, 8 * GB, n * 4096));

    /* small_only: the 512 MiB range of the first map in 4 KiB pages */
    OK(bg_nv_mmu_map_contig(&m, va, 512 * MB + 2 * MB, pa, &SMALL));
    agree(&m, va, pa, 4096, &SMALL);
    agree(&m, va + 300 * MB + 0x10, pa + 300 * MB + 0x10, 4096, &SMALL);
    agree(&m, va + 513 * MB, pa + 513 * MB, 4096, &SMALL);
    /* 257 PTE tables, two PDE0 tables (one per 512 MiB), one PDE1 table, the root and the tables above PDE1 */
    ck_assert_uint_eq(m.tables, 257 + 2 + 1 + (uint64_t)(bg_nv_mmu_levels(ver) - 3));
    OK(bg_nv_mmu_unmap(&m, va, 512 * MB + 2 * MB));
    ck_assert_uint_eq(m.tables, 1);
    ck_assert_uint_eq(hv.live, 1);
    free(pl);
    fini(&m);
  }
}
END_TEST

/* Every map and every unmap ends with one invalidate, after the last table write. */
START_TEST(invalidate_after_map_and_unmap) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    for (unsigned round = 0; round < 3; round++) {
      uint64_t before = hv.invalidates;
      OK(bg_nv_mmu_map_contig(&m, 2 * GB + round * 2 * MB, 2 * MB + 4096, 8 * MB, &VRAM));
      ck_assert_uint_eq(hv.invalidates, before + 1);
      ck_assert_msg(hv.unflushed == 0, "v%d: %" PRIu64 " table writes after the last invalidate of map", ver,
                    hv.unflushed);
      OK(bg_nv_mmu_unmap(&m, 2 * GB + round * 2 * MB, 2 * MB + 4096));
      ck_assert_msg(hv.invalidates == before + 2, "v%d: unmap did not invalidate the TLB (%" PRIu64 " invalidates)",
                    ver, hv.invalidates - before);
      ck_assert_msg(hv.unflushed == 0, "v%d: %" PRIu64 " table writes after the last invalidate of unmap", ver,
                    hv.unflushed);
    }
    ck_assert_uint_eq(m.invalidates, hv.invalidates);
    fini(&m);
  }
}
END_TEST

/* Overlaps, bad arguments and partial unmaps fail with the field named and nothing written. */
START_TEST(map_errors) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    OK(bg_nv_mmu_map_contig(&m, 1 * GB, 4 * MB, 64 * MB, &VRAM)); /* two 2 MiB leaves */
    OK(bg_nv_mmu_map_contig(&m, 1 * GB + 8 * MB, 8 * 4096, 96 * MB + 4096, &VRAM));
    uint64_t writes = hv.writes, tables = m.tables, inv = m.invalidates;
    /* overlapping the end of the 2 MiB leaves / the 4 KiB pages: the first VA in common is named */
    FAILS(bg_nv_mmu_map_contig(&m, 1 * GB - 8192, 3 * 4096, 80 * MB, &VRAM), BG_EEXIST, "VA 0x40000000 is already mapped");
    FAILS(bg_nv_mmu_map_contig(&m, 1 * GB + 8 * MB + 7 * 4096, 2 * 4096, 80 * MB, &VRAM), BG_EEXIST,
          "VA 0x40807000 is already mapped");
    FAILS(bg_nv_mmu_map_contig(&m, 1 * GB + 3 * MB, 4096, 80 * MB, &SMALL), BG_EEXIST, "VA 0x40300000");
    /* unaligned and impossible arguments */
    FAILS(bg_nv_mmu_map_contig(&m, 0x1001, 4096, 0, &VRAM), BG_EINVAL, "4 KiB aligned");
    FAILS(bg_nv_mmu_map_contig(&m, 0x1000, 0x800, 0, &VRAM), BG_EINVAL, "4 KiB aligned");
    FAILS(bg_nv_mmu_map_contig(&m, 0x1000, 0, 0, &VRAM), BG_EINVAL, "size is 0");
    FAILS(bg_nv_mmu_map_contig(&m, 0x1000, 4096, 0x10, &VRAM), BG_EINVAL, "pa[0] 0x10 is not 4 KiB aligned");
    uint64_t pl[2] = {0x2000, 0x3008};
    FAILS(bg_nv_mmu_map(&m, 0x1000, 2 * 4096, pl, 2, &VRAM), BG_EINVAL, "pa[1]");
    FAILS(bg_nv_mmu_map(&m, 0x1000, 2 * 4096, pl, 1, &VRAM), BG_EINVAL, "1 pages given");
    bg_nv_map_attr peer = {(enum bg_nv_aperture)1, false, false, false};
    FAILS(bg_nv_mmu_map_contig(&m, 0x1000, 4096, 0, &peer), BG_EINVAL, "aperture 1");
    if (ver == 2) FAILS(bg_nv_mmu_map_contig(&m, 0x1000, 4096, 1ull << 37, &VRAM), BG_EINVAL, "ADDRESS_VID");
    /* partial unmaps: half a 2 MiB leaf, a range with a hole, an unmapped range */
    FAILS(bg_nv_mmu_unmap(&m, 1 * GB, 4096), BG_EINVAL, "split the 2 MiB page at VA 0x40000000");
    FAILS(bg_nv_mmu_unmap(&m, 1 * GB + 2 * MB, 3 * MB), BG_EINVAL, "not mapped");
    FAILS(bg_nv_mmu_unmap(&m, 1 * GB + 8 * MB, 9 * 4096), BG_EINVAL, "VA 0x40808000 is not mapped");
    FAILS(bg_nv_mmu_unmap(&m, 1 * GB + 8 * MB + 4096, 0x800), BG_EINVAL, "4 KiB aligned");
    ck_assert_uint_eq(hv.writes, writes);
    ck_assert_uint_eq(m.tables, tables);
    ck_assert_uint_eq(m.invalidates, inv);
    agree(&m, 1 * GB + 4 * MB - 4096, 64 * MB + 4 * MB - 4096, 2 * MB, &VRAM);
    unmapped(&m, 1 * GB - 8192);
    /* whole leaves unmap */
    OK(bg_nv_mmu_unmap(&m, 1 * GB + 2 * MB, 2 * MB));
    agree(&m, 1 * GB, 64 * MB, 2 * MB, &VRAM);
    unmapped(&m, 1 * GB + 2 * MB);
    fini(&m);
  }
}
END_TEST

/* The VA widths: v2 ends at 2^49; v3's root is indexed by bit 56 alone. */
START_TEST(va_limits) {
  bg_nv_mmu m;
  init(&m, 2);
  uint64_t top2 = (1ull << 49) - 4096;
  OK(bg_nv_mmu_map_contig(&m, top2, 4096, 0x5000000, &VRAM));
  agree(&m, top2 + 0xff8, 0x5000ff8, 4096, &VRAM);
  unmapped(&m, top2 & ((1ull << 47) - 1)); /* same lower bits, other root entry */
  FAILS(bg_nv_mmu_map_contig(&m, 1ull << 49, 4096, 0, &VRAM), BG_EINVAL, "49-bit VA space");
  FAILS(bg_nv_mmu_map_contig(&m, top2, 2 * 4096, 0, &VRAM), BG_EINVAL, "49-bit VA space");
  bg_nv_pte e;
  FAILS(bg_nv_mmu_translate(&m, 1ull << 49, &e, NULL), BG_EINVAL, "49-bit");
  nvpci_mmu_result r;
  ck_assert_int_eq(nvpci_mmu_translate(hv.mem, VRAM_SIZE, 2, m.root_pa, 1ull << 49, &r, NULL, 0), -NVPCI_MMU_BADVA);
  fini(&m);

  init(&m, 3);
  uint64_t hi = (1ull << 56) + 0x1000, lo = 0x1000;
  OK(bg_nv_mmu_map_contig(&m, hi, 4096, 0x6000000, &VRAM));
  agree(&m, hi, 0x6000000, 4096, &VRAM);
  unmapped(&m, lo);
  OK(bg_nv_mmu_map_contig(&m, lo, 4096, 0x7000000, &VRAM));
  agree(&m, lo, 0x7000000, 4096, &VRAM);
  agree(&m, hi, 0x6000000, 4096, &VRAM);
  uint64_t top3 = (1ull << 57) - 4096;
  OK(bg_nv_mmu_map_contig(&m, top3, 4096, 0x8000000, &VRAM));
  agree(&m, top3, 0x8000000, 4096, &VRAM);
  FAILS(bg_nv_mmu_map_contig(&m, 1ull << 57, 4096, 0, &VRAM), BG_EINVAL, "57-bit VA space");
  ck_assert_int_eq(nvpci_mmu_translate(hv.mem, VRAM_SIZE, 3, m.root_pa, 1ull << 57, &r, NULL, 0), -NVPCI_MMU_BADVA);
  OK(bg_nv_mmu_unmap(&m, hi, 4096));
  unmapped(&m, hi);
  agree(&m, lo, 0x7000000, 4096, &VRAM);
  fini(&m);
}
END_TEST

/* A map that runs out of table pages part way leaves nothing behind. */
START_TEST(map_rollback) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    OK(bg_nv_mmu_map_contig(&m, 0, 4096, 0x100000, &VRAM));
    uint64_t tables = m.tables;
    hv.alloc_budget = 2; /* the PTE tables of [4, 6) and [6, 8) MiB, not the one of [8, 10) MiB */
    FAILS(bg_nv_mmu_map_contig(&m, 6 * MB - 8192, 4 * 4096 + 2 * MB + 2 * 4096, 128 * MB, &SMALL), BG_ENOMEM,
          "table pages exhausted");
    hv.alloc_budget = -1;
    ck_assert_uint_eq(m.tables, tables);
    ck_assert_uint_eq(hv.live, tables);
    ck_assert_uint_eq(hv.unflushed, 0);
    unmapped(&m, 6 * MB - 8192);
    unmapped(&m, 6 * MB);
    agree(&m, 0, 0x100000, 4096, &VRAM);
    fini(&m);
  }
}
END_TEST

typedef struct slot {
  uint64_t va, size, pa;
  bool on, small;
} slot;

/* Random maps and unmaps against a model of which page maps where, both readings checked after each step. */
START_TEST(random_ops) {
  enum { SLOTS = 64 };
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    slot s[SLOTS] = {{0}};
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)ver;
    for (unsigned step = 0; step < 400; step++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      unsigned k = (unsigned)(seed >> 33) % SLOTS;
      /* slot k owns VA [k * 8 MiB + base, +8 MiB), spread over the root entries */
      uint64_t root = ver == 2 ? (uint64_t)(k % 4) << 47 : ((uint64_t)(k % 2) << 56) | ((uint64_t)(k / 2 % 2) << 47);
      uint64_t base = root + (uint64_t)k * 8 * MB;
      if (s[k].on) {
        OK(bg_nv_mmu_unmap(&m, s[k].va, s[k].size));
        unmapped(&m, s[k].va);
        s[k].on = false;
      } else {
        uint64_t off = ((seed >> 20) % 3) * 2 * MB + ((seed >> 40) & 1) * 4096;
        uint64_t size = ((seed >> 12) % 2 ? 2 * MB : 0) + (((seed >> 24) % 4) + 1) * 4096;
        uint64_t pa = 32 * MB + ((seed >> 44) % 256) * 2 * MB + ((seed >> 50) & 1) * 4096;
        s[k] = (slot){base + off, size, pa, true, ((seed >> 55) & 1) != 0};
        OK(bg_nv_mmu_map_contig(&m, s[k].va, size, pa, s[k].small ? &SMALL : &VRAM));
      }
      for (unsigned j = 0; j < SLOTS; j++) {
        if (!s[j].on) continue;
        bool big = !s[j].small && !(s[j].va & (2 * MB - 1)) && !(s[j].pa & (2 * MB - 1)) && s[j].size >= 2 * MB;
        agree(&m, s[j].va, s[j].pa, big ? 2 * MB : 4096, s[j].small ? &SMALL : &VRAM);
        /* sizes are 2 MiB + 1..4 pages or 1..4 pages: the last page is always a 4 KiB one */
        agree(&m, s[j].va + s[j].size - 8, s[j].pa + s[j].size - 8, 4096, s[j].small ? &SMALL : &VRAM);
      }
      ck_assert_uint_eq(hv.live, m.tables);
      ck_assert_uint_eq(hv.unflushed, 0);
    }
    for (unsigned j = 0; j < SLOTS; j++)
      if (s[j].on) OK(bg_nv_mmu_unmap(&m, s[j].va, s[j].size));
    ck_assert_uint_eq(m.tables, 1);
    fini(&m);
  }
}
END_TEST

/* ---- the emulator's walker on entries the driver never writes ---- */

static uint64_t *qw(uint64_t pa) { return (uint64_t *)(void *)(hv.mem + pa); }

static void walker_fails(const bg_nv_mmu *m, uint64_t va, int code, const char *sub) {
  nvpci_mmu_result r;
  char why[256];
  int rc = nvpci_mmu_translate(hv.mem, VRAM_SIZE, m->ver, m->root_pa, va, &r, why, sizeof(why));
  ck_assert_msg(rc == -code, "v%d walker VA 0x%" PRIx64 ": %d (%s), want -%d (%s)", m->ver, va, rc, why, code,
                nvpci_mmu_fault_name(code));
  ck_assert_msg(strstr(why, sub), "walker message '%s' lacks '%s'", why, sub);
}

/* Address of the entry at level lv for va (walking the valid PDEs above). */
static uint64_t entry_at(const bg_nv_mmu *m, int lv, uint64_t va) {
  static const uint8_t sh2[] = {47, 38, 29, 21, 12}, sh3[] = {56, 47, 38, 29, 21, 12};
  const uint8_t *sh = m->ver == 2 ? sh2 : sh3;
  int levels = bg_nv_mmu_levels(m->ver);
  uint64_t table = m->root_pa;
  for (int l = 0;; l++) {
    unsigned bits = l == 0 ? (m->ver == 2 ? 2 : 1) : l == levels - 2 ? 8 : 9, esz = l == levels - 2 ? 16 : 8;
    uint64_t at = table + ((va >> sh[l]) & ((1u << bits) - 1)) * esz;
    if (l == lv) return at;
    bg_nv_pte e;
    OK(bg_nv_mmu_decode(m->ver, l, qw(at)[0], l == levels - 2 ? qw(at)[1] : 0, &e));
    table = e.addr;
  }
}

START_TEST(walker_strict) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    int levels = bg_nv_mmu_levels(ver), pde2 = levels - 4, pde0 = levels - 2, pte = levels - 1;
    const char *n2 = "PDE2[";
    uint64_t va = 5 * GB + 3 * MB + 0x5000;
    OK(bg_nv_mmu_map_contig(&m, va, 4096, 0x9000000, &VRAM));
    agree(&m, va, 0x9000000, 4096, &VRAM);
    unmapped(&m, va + 4096);
    walker_fails(&m, va + 4096, NVPCI_MMU_UNMAPPED, "PTE[262]"); /* VA bits 20:12 of 0x306000 */
    walker_fails(&m, va + 2 * MB, NVPCI_MMU_UNMAPPED, "PDE0[");
    uint64_t *e2 = qw(entry_at(&m, pde2, va)), save = *e2;
    /* a reserved bit in the PDE2 entry (v2 bit 4, v3 bit 6) */
    *e2 = save | (ver == 2 ? 0x10 : 0x40);
    walker_fails(&m, va, NVPCI_MMU_RESERVED, n2);
    bg_nv_pte d;
    FAILS(bg_nv_mmu_translate(&m, va, &d, NULL), BG_EFORMAT, "PDE2");
    /* the PDE2 entry pointing to system memory */
    *e2 = (save & ~6ull) | (2ull << 1);
    walker_fails(&m, va, NVPCI_MMU_SYSPDE, "system memory");
    /* ... to a table beyond VRAM */
    *e2 = ver == 2 ? (save & 0xff) | ((VRAM_SIZE >> 12) << 8) : (save & 0xfff) | VRAM_SIZE;
    walker_fails(&m, va, NVPCI_MMU_OUTSIDE, "outside VRAM");
    /* ... a leaf where none can be */
    *e2 = 0x0600000000000001ull & (ver == 2 ? ~0ull : 0x601);
    walker_fails(&m, va, NVPCI_MMU_BIGLEAF, "PDE2 cannot hold one");
    FAILS(bg_nv_mmu_translate(&m, va, &d, NULL), BG_EFORMAT, "cannot hold a leaf");
    *e2 = save;
    agree(&m, va, 0x9000000, 4096, &VRAM);
    /* the PTE: privileged, a peer aperture, an odd kind */
    uint64_t *p = qw(entry_at(&m, pte, va)), psave = *p;
    *p = psave | (ver == 2 ? 1u << 5 : 2u << 3);
    walker_fails(&m, va, NVPCI_MMU_RESERVED, "PRIVILEGE");
    *p = psave | (1u << 1);
    walker_fails(&m, va, NVPCI_MMU_RESERVED, "peer");
    *p = ver == 2 ? (psave & ~(0xffull << 56)) | (0x11ull << 56) : (psave & ~0xf00ull) | 0x300;
    walker_fails(&m, va, NVPCI_MMU_RESERVED, "kind");
    *p = psave;
    /* the dual PDE0 with a big-page table in its low half */
    uint64_t *d0 = qw(entry_at(&m, pde0, va)), dsave = d0[0];
    d0[0] = dsave | (1u << 1);
    walker_fails(&m, va, NVPCI_MMU_RESERVED, "big-page table");
    d0[0] = dsave;
    agree(&m, va, 0x9000000, 4096, &VRAM);
    /* a 2 MiB page running past the end of VRAM */
    OK(bg_nv_mmu_map_contig(&m, 64 * GB, 2 * MB, VRAM_SIZE - 2 * MB, &VRAM));
    agree(&m, 64 * GB, VRAM_SIZE - 2 * MB, 2 * MB, &VRAM);
    OK(bg_nv_mmu_unmap(&m, 64 * GB, 2 * MB));
    OK(bg_nv_mmu_map_contig(&m, 64 * GB, 2 * MB, VRAM_SIZE, &VRAM));
    walker_fails(&m, 64 * GB, NVPCI_MMU_OUTSIDE, "outside VRAM");
    OK(bg_nv_mmu_unmap(&m, 64 * GB, 2 * MB));
    fini(&m);
  }
}
END_TEST

/* System memory for the walker's reader: one 4 KiB page at bus address SYS_BUS. */
#define SYS_BUS 0x7ff000000000ull
static uint8_t sysmem[4096];
static unsigned sys_reads;

static int sys_read(void *ctx, uint64_t bus, void *dst, size_t n) {
  (void)ctx;
  sys_reads++;
  if (bus < SYS_BUS || bus - SYS_BUS + n > sizeof(sysmem)) return -1;
  memcpy(dst, sysmem + (bus - SYS_BUS), n);
  return 0;
}

/* A PTE table moved to system memory: followed with a reader, a fault without one, and refused by the driver (which
 * keeps its tables in VRAM); invalid entries with stray bits are faults of their own. */
START_TEST(walker_sysmem_and_invalid) {
  for (int ver = 2; ver <= 3; ver++) {
    bg_nv_mmu m;
    init(&m, ver);
    int levels = bg_nv_mmu_levels(ver), pde0 = levels - 2, pte = levels - 1;
    uint64_t va = 7 * GB + 0x3000;
    OK(bg_nv_mmu_map_contig(&m, va, 2 * 4096, 0x4000000, &VRAM));
    uint64_t *d0 = qw(entry_at(&m, pde0, va));
    const uint64_t save[2] = {d0[0], d0[1]};
    bg_nv_pte t;
    OK(bg_nv_mmu_decode(ver, pde0, d0[0], d0[1], &t));
    memcpy(sysmem, hv.mem + t.addr, 4096);
    t.aperture = BG_NV_APER_SYSMEM_COH;
    t.addr = SYS_BUS;
    OK(bg_nv_mmu_encode(ver, pde0, &t, &d0[0], &d0[1]));
    nvpci_mmu_mem mem = {hv.mem, VRAM_SIZE, sys_read, NULL};
    nvpci_mmu_result r;
    char why[256];
    sys_reads = 0;
    ck_assert_int_eq(nvpci_mmu_walk(&mem, ver, m.root_pa, false, va + 4096 + 8, &r, why, sizeof(why)), 0);
    ck_assert_uint_eq(r.pa, 0x4001008);
    ck_assert_uint_eq(r.page_size, 4096);
    ck_assert_uint_eq(sys_reads, 1);
    walker_fails(&m, va, NVPCI_MMU_SYSPDE, "system memory");
    bg_nv_pte d;
    FAILS(bg_nv_mmu_translate(&m, va, &d, NULL), BG_EFORMAT, "system memory");
    /* a reader that fails */
    OK(bg_nv_mmu_encode(ver, pde0, &(bg_nv_pte){true, false, BG_NV_APER_SYSMEM_COH, 0x1000, false, false, 0}, &d0[0],
                        &d0[1]));
    ck_assert_int_eq(nvpci_mmu_walk(&mem, ver, m.root_pa, false, va, &r, why, sizeof(why)), -NVPCI_MMU_SYSREAD);
    d0[0] = save[0];
    d0[1] = save[1];
    agree(&m, va, 0x4000000, 4096, &VRAM);
    /* invalid PTEs: sparse (v2 VOL, v3 PCF SPARSE) is unmapped, anything else set is reserved */
    uint64_t *p = qw(entry_at(&m, pte, va + 2 * 4096));
    ck_assert_uint_eq(*p, 0);
    *p = 1u << 3; /* v2 VOL, v3 PCF SPARSE (1) */
    walker_fails(&m, va + 2 * 4096, NVPCI_MMU_UNMAPPED, "invalid PTE");
    *p = 1u << 6;
    walker_fails(&m, va + 2 * 4096, NVPCI_MMU_RESERVED, "invalid PTE");
    *p = 0;
    /* an invalid dual PDE0 with its small half's address set */
    uint64_t *e0 = qw(entry_at(&m, pde0, va + 2 * MB));
    e0[1] = 0x5000;
    walker_fails(&m, va + 2 * MB, NVPCI_MMU_RESERVED, "invalid dual entry");
    e0[1] = 0;
    walker_fails(&m, va + 2 * MB, NVPCI_MMU_UNMAPPED, "PDE0[");
    /* a 2 MiB leaf whose address is not 2 MiB aligned */
    bg_nv_pte big = {true, true, BG_NV_APER_VIDMEM, 0x4000000, false, false, 6};
    OK(bg_nv_mmu_encode(ver, pde0, &big, &e0[0], &e0[1]));
    agree(&m, va + 2 * MB - 0x3000 + 0x10, 0x4000010, 2 * MB, &VRAM); /* the PDE0 entry of 7 GiB + 2 MiB */
    e0[0] += 1ull << (ver == 2 ? 8 : 12); /* + 4 KiB */
    walker_fails(&m, 7 * GB + 2 * MB, NVPCI_MMU_RESERVED, "not aligned");
    e0[0] = 0;
    OK(bg_nv_mmu_unmap(&m, va, 2 * 4096));
    ck_assert_uint_eq(m.tables, 1);
    fini(&m);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-mmu");
  TCase *tc = tcase_create("mmu");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, golden_v2);
  tcase_add_test(tc, golden_v3);
  tcase_add_test(tc, roundtrip_all);
  tcase_add_test(tc, map_scattered);
  tcase_add_test(tc, map_greedy);
  tcase_add_test(tc, invalidate_after_map_and_unmap);
  tcase_add_test(tc, map_errors);
  tcase_add_test(tc, va_limits);
  tcase_add_test(tc, map_rollback);
  tcase_add_test(tc, random_ops);
  tcase_add_test(tc, walker_strict);
  tcase_add_test(tc, walker_sysmem_and_invalid);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
