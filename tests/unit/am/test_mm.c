/* tests/unit/am/test_mm.c: AM memory manager: VRAM pools, VA allocator, page tables (encodings, map,
 * unmap, translate, errors) on a host buffer standing in for VRAM, and a randomized map/unmap run checked
 * against a reference model. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/mm_pt.h"
#include "am/mm_va.h"
#include "am/mm_vram.h"
#include "baregpu/error.h"
#include "../check_helpers.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define VA0 BG_AM_VA_BASE

/* Hot-path check: unlike ck_assert, a passing check does not talk to the Check runner (which writes to a
 * pipe for every passed assertion in fork mode). */
#define CHECK(cond, ...)                  \
  do {                                    \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ---- fake VRAM: only the low `backed` bytes exist (tables live there); anything else is a bug ---- */
typedef struct {
  uint8_t *buf;
  uint64_t backed;
  uint64_t writes;
} fake_vram;

static uint64_t fv_read(void *ctx, uint64_t pa) {
  fake_vram *f = ctx;
  CHECK(pa + 8 <= f->backed && !(pa & 7), "read64 at 0x%" PRIx64 " outside the backed VRAM", pa);
  uint64_t v;
  memcpy(&v, f->buf + pa, 8);
  return v;
}
static void fv_write(void *ctx, uint64_t pa, uint64_t v) {
  fake_vram *f = ctx;
  CHECK(pa + 8 <= f->backed && !(pa & 7), "write64 at 0x%" PRIx64 " outside the backed VRAM", pa);
  memcpy(f->buf + pa, &v, 8);
  f->writes++;
}
static void fv_zero(void *ctx, uint64_t pa, uint64_t size) {
  fake_vram *f = ctx;
  CHECK(pa + size <= f->backed, "zero at 0x%" PRIx64 " outside the backed VRAM", pa);
  memset(f->buf + pa, 0, size);
}

static fake_vram FV;
static bool fv_zero_from(uint64_t from) {
  for (uint64_t o = from; o < FV.backed; o++)
    if (FV.buf[o]) return false;
  return true;
}
static bg_am_vram_io IO;
static int flushes;
static int flush_cb(void *ctx) {
  (void)ctx;
  flushes++;
  return 0;
}

static int flush_fail(void *ctx) {
  (void)ctx;
  return bg_error(BG_ETIMEDOUT, "invalidate ENG17 timed out");
}

static void fv_setup(uint64_t backed) {
  FV.buf = calloc(1, backed);
  ck_assert(FV.buf);
  FV.backed = backed;
  FV.writes = 0;
  IO = (bg_am_vram_io){fv_read, fv_write, fv_zero, &FV};
  flushes = 0;
}
static void fv_teardown(void) {
  free(FV.buf);
  memset(&FV, 0, sizeof(FV));
}

static bg_am_vram *mk_vram(uint64_t size, uint64_t visible) {
  struct bg_am_vram_config c = {.vram_size = size, .visible_size = visible, .io = &IO};
  bg_am_vram *v = NULL;
  OK(bg_am_vram_create(&c, &v));
  return v;
}

static bg_am_pt *mk_pt(bg_am_vram *v, enum bg_am_pt_gen gen) {
  struct bg_am_pt_config c = {.gen = gen, .flush = flush_cb};
  bg_am_pt *pt = NULL;
  OK(bg_am_pt_create(&c, v, &pt));
  return pt;
}

/* ---- VRAM pools -------------------------------------------------------------------------------------- */

/* init_sw boot allocations of tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw (MP0 14.0.2, 1 XCC): size, align, expected mock paddr. */
static const struct { uint64_t size, align, pa; } boot_seq[] = {
    {0x1000, 0x1000, 0x1000},     {0x1000, 0x1000, 0x2000},    {0x40000, 0x1000, 0x3000},  {0x1000, 0x1000, 0x43000},
    {0x40000, 0x1000, 0x44000},   {0x1000, 0x1000, 0x84000},   {0x100000, 0x100000, 0x100000},
    {0x1000, 0x1000, 0x85000},    {0x1000, 0x1000, 0x86000},   {0x10000, 0x1000, 0x87000}, {0x4000, 0x1000, 0x97000},
    {0x1000, 0x1000, 0x9b000},    {0x1000, 0x1000, 0x9c000},
};

static void run_boot(uint64_t *got) {
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, BG_AM_PT_GFX12); /* #1: the MM root page directory */
  got[0] = bg_am_pt_root(pt);
  for (size_t i = 0; i < sizeof(boot_seq) / sizeof(boot_seq[0]); i++)
    OK(bg_am_vram_alloc(v, BG_AM_VRAM_BOOT, boot_seq[i].size, boot_seq[i].align, true, &got[i + 1]));
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
}

START_TEST(test_boot_deterministic) {
  fv_setup(64 * MIB);
  uint64_t a[16], b[16];
  run_boot(a);
  run_boot(b);
  size_t n = sizeof(boot_seq) / sizeof(boot_seq[0]);
  ck_assert_uint_eq(a[0], 0);
  for (size_t i = 0; i <= n; i++) ck_assert_uint_eq(a[i], b[i]);
  /* Each allocation is aligned, inside the boot region, disjoint from the others, and at the paddr the
   * tinygrad mock shows (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw), so a partial boot after a tinygrad run finds its blocks in place. */
  for (size_t i = 1; i <= n; i++) {
    ck_assert_uint_eq(a[i] % boot_seq[i - 1].align, 0);
    ck_assert(a[i] + boot_seq[i - 1].size <= BG_AM_VRAM_BOOT_SIZE);
    for (size_t j = 1; j < i; j++)
      ck_assert(a[i] + boot_seq[i - 1].size <= a[j] || a[j] + boot_seq[j - 1].size <= a[i]);
  }
  for (size_t i = 1; i <= n; i++)
    ck_assert_msg(a[i] == boot_seq[i - 1].pa, "boot allocation %zu at 0x%" PRIx64 ", tinygrad mock 0x%" PRIx64, i + 1, a[i],
                  boot_seq[i - 1].pa);
  fv_teardown();
}
END_TEST

START_TEST(test_boot_closed) {
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  uint64_t pa;
  ck_assert(bg_am_vram_booting(v));
  OK(bg_am_vram_alloc(v, BG_AM_VRAM_BOOT, 4096, 4096, false, &pa));
  bg_am_vram_end_boot(v);
  ck_assert(!bg_am_vram_booting(v));
  FAILS(bg_am_vram_alloc(v, BG_AM_VRAM_BOOT, 4096, 4096, false, &pa), BG_EINVAL, "boot region [0x0, 0x2000000) is closed");
  OK(bg_am_vram_free(v, 0)); /* frees still work */
  /* A page table created after boot gets its root from the main pool. */
  bg_am_pt *pt = mk_pt(v, BG_AM_PT_GFX11);
  ck_assert_uint_ge(bg_am_pt_root(pt), BG_AM_VRAM_BOOT_SIZE);
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_reserved_top) {
  fv_setup(64 * MIB);
  /* Tiny VRAM: boot 32 MiB + main 1 MiB + reserved 64 MiB; exhaust main and check nothing lands above. */
  bg_am_vram *v = mk_vram(97 * MIB, 0);
  struct bg_am_vram_layout L;
  bg_am_vram_get_layout(v, &L);
  ck_assert_uint_eq(L.usable, 33 * MIB);
  ck_assert_uint_eq(L.main_base, 32 * MIB);
  ck_assert_uint_eq(L.main_size, 1 * MIB);
  ck_assert_uint_eq(L.ptable_size, 0);
  uint64_t pa, n = 0;
  while (bg_am_vram_alloc(v, BG_AM_VRAM_MAIN, 4096, 4096, false, &pa) == 0) {
    ck_assert_uint_ge(pa, 32 * MIB);
    ck_assert_uint_lt(pa, L.usable);
    n++;
  }
  ck_assert_uint_eq(n, 256);
  ck_assert_msg(strstr(bg_last_error(), "vram: main pool") != NULL, "%s", bg_last_error());
  FAILS(bg_am_vram_alloc(v, BG_AM_VRAM_MAIN, 4096, 4096, false, &pa), BG_ENOMEM, "main pool");
  FAILS(bg_am_vram_free(v, L.usable), BG_EINVAL, "reserved top");
  FAILS(bg_am_vram_free(v, 33 * MIB - 4096 - 4096 * 300), BG_EINVAL, "");
  FAILS(bg_am_vram_alloc(v, BG_AM_VRAM_MAIN, 0, 4096, false, &pa), BG_EINVAL, "0 bytes");
  bg_am_vram_destroy(v);

  /* the reserved top per GC generation comes from the GMC rows of am/am_ip.c (test am-ip) */
  ck_assert_uint_eq(BG_AM_VRAM_RESERVED_TOP_GC94, 384 * MIB);
  struct bg_am_vram_config c = {.vram_size = 192 * GIB, .reserved_top = BG_AM_VRAM_RESERVED_TOP_GC94, .io = &IO};
  OK(bg_am_vram_create(&c, &v));
  bg_am_vram_get_layout(v, &L);
  ck_assert_uint_eq(L.usable, 192 * GIB - 384 * MIB);
  bg_am_vram_destroy(v);
  /* Too small to hold boot + reserved. */
  c = (struct bg_am_vram_config){.vram_size = 96 * MIB, .io = &IO};
  FAILS(bg_am_vram_create(&c, &v), BG_EINVAL, "cannot hold");
  fv_teardown();
}
END_TEST

START_TEST(test_small_bar_pool) {
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(16 * GIB, 256 * MIB);
  struct bg_am_vram_layout L;
  bg_am_vram_get_layout(v, &L);
  uint64_t usable = 16 * GIB - 64 * MIB;
  ck_assert_uint_eq(L.ptable_base, 32 * MIB);
  ck_assert_uint_eq(L.ptable_size, ((usable / 512) + MIB - 1) & ~(MIB - 1));
  ck_assert_uint_eq(L.main_base, L.ptable_base + L.ptable_size);
  bg_am_vram_end_boot(v);
  uint64_t pa;
  OK(bg_am_vram_alloc(v, BG_AM_VRAM_PTABLE, 4096, 4096, true, &pa));
  ck_assert(pa >= L.ptable_base && pa < L.main_base);
  OK(bg_am_vram_free(v, pa));
  OK(bg_am_vram_alloc(v, BG_AM_VRAM_MAIN, 4096, 4096, false, &pa));
  ck_assert_uint_ge(pa, L.main_base);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_va_alloc) {
  bg_am_va *va;
  OK(bg_am_va_create(BG_AM_VA_BASE, BG_AM_VA_SIZE, &va));
  ck_assert_uint_eq(bg_am_va_align_for(1, 0), 4096);
  ck_assert_uint_eq(bg_am_va_align_for(3 * MIB, 0), 2 * MIB);
  ck_assert_uint_eq(bg_am_va_align_for(5 * GIB, 0), 4 * GIB);
  ck_assert_uint_eq(bg_am_va_align_for(8192, 64 * KIB), 64 * KIB);
  uint64_t a, b, c;
  OK(bg_am_va_alloc(va, 4096, 0, &a));
  OK(bg_am_va_alloc(va, 3 * MIB, 0, &b));
  OK(bg_am_va_alloc(va, GIB + 4096, 0, &c));
  ck_assert_uint_ge(a, BG_AM_VA_BASE);
  ck_assert_uint_eq(b % (2 * MIB), 0);
  ck_assert_uint_eq(c % GIB, 0);
  ck_assert_uint_eq(bg_am_va_free_bytes(va), BG_AM_VA_SIZE - 4096 - 3 * MIB - GIB - 4096);
  FAILS(bg_am_va_alloc(va, 0, 0, &a), BG_EINVAL, "0 bytes");
  FAILS(bg_am_va_alloc(va, 4096, 3, &a), BG_EINVAL, "not a power of two");
  FAILS(bg_am_va_alloc(va, BG_AM_VA_SIZE, 0, &a), BG_ENOMEM, "");
  FAILS(bg_am_va_free(va, a + 4096 * 7), BG_EINVAL, "");
  OK(bg_am_va_free(va, a));
  OK(bg_am_va_free(va, b));
  OK(bg_am_va_free(va, c));
  ck_assert_uint_eq(bg_am_va_free_bytes(va), BG_AM_VA_SIZE);
  /* Deterministic: same calls, same addresses. */
  uint64_t d;
  OK(bg_am_va_alloc(va, 4096, 0, &d));
  ck_assert_uint_eq(d, a);
  bg_am_va_destroy(va);
  FAILS(bg_am_va_create(0x1234, 4096, &va), BG_EINVAL, "not 4 KiB aligned");
}
END_TEST

/* ---- encodings ---------------------------------------------------------------------------------------- */

START_TEST(test_encodings) {
  const unsigned rwx = BG_AM_PT_RWX;
  const unsigned host_uc = rwx | BG_AM_PT_SYSTEM | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED;
  /* Linux amdgpu_vm.h positions. */
  ck_assert_uint_eq(AMDGPU_PTE_FRAG(9), 0x480);
  ck_assert_uint_eq(AMDGPU_PTE_MTYPE_VG10(3), 0x0600000000000000ull);
  ck_assert_uint_eq(AMDGPU_PTE_MTYPE_NV10(3), 0x0003000000000000ull);
  ck_assert_uint_eq(AMDGPU_PTE_MTYPE_GFX12(3), 0x00C0000000000000ull);
  ck_assert_uint_eq(AMDGPU_PDE_BFS(9), 0x4800000000000000ull);
  ck_assert_uint_eq(BG_AM_PT_COVERS(AMDGPU_VM_PDB2), 1ull << 39);
  ck_assert_uint_eq(BG_AM_PT_COVERS(AMDGPU_VM_PTB), 4096);

  /* tinygrad tinygrad/runtime/support/am/amdev.py AMPageTableEntry examples. gfx12 uncached 4 KiB host page: 0x80C0000000000077 | pa. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX12, AMDGPU_VM_PTB, 0x12345000, 0, host_uc), 0x80C0000012345077ull);
  /* gfx12 cached VRAM 2 MiB leaf: 0x8000000000000071 | frag<<7 | pa. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX12, AMDGPU_VM_PDB0, 0x40200000, 9, rwx), 0x8000000040200071ull | (9ull << 7));
  /* gfx11 uncached host page: 0x0003000000000077 | pa. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX11, AMDGPU_VM_PTB, 0xfedcba000, 0, host_uc), 0x0003000FEDCBA077ull);
  /* gfx11 huge leaves carry PDE_PTE (bit 54); 1 GiB, cached, read-only. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX11, AMDGPU_VM_PDB1, 0x80000000, 18, BG_AM_PT_READ),
                    0x0040000080000000ull | (18ull << 7) | 0x21);
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX11, AMDGPU_VM_PDB0, 0x200000, 9, rwx), 0x0040000000200000ull | 0x4f1);
  /* gfx12 1 GiB leaf: bit 63 too. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX12, AMDGPU_VM_PDB1, 0x40000000, 18, BG_AM_PT_WRITE),
                    0x8000000040000000ull | (18ull << 7) | 0x41);
  /* gfx9: MTYPE at 57..58; PDB0 leaves plain, PDB1 leaves PDE_PTE. */
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PTB, 0x1000, 0, host_uc), 0x0600000000001077ull);
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB0, 0x200000, 9, rwx), 0x00000000002004f1ull);
  ck_assert_uint_eq(bg_am_pt_encode_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB1, 0x40000000, 18, rwx | BG_AM_PT_UNCACHED),
                    0x0640000040000971ull);
  /* Tables: VALID + address; gfx9 PDB1 -> BFS(9), PDB0 -> TF. Address bits above 47 are dropped. */
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX12, AMDGPU_VM_PDB2, 0x2001000), 0x2001001ull);
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX11, AMDGPU_VM_PDB0, 0x2001000), 0x2001001ull);
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX9, AMDGPU_VM_PDB2, 0x2001000), 0x2001001ull);
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX9, AMDGPU_VM_PDB1, 0x2001000), 0x4800000002001001ull);
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX9, AMDGPU_VM_PDB0, 0x2001000), 0x0100000002001001ull);
  ck_assert_uint_eq(bg_am_pt_encode_table(BG_AM_PT_GFX12, AMDGPU_VM_PDB1, 0xff0001234567f000ull), 0x0001234567f001ull);

  /* Leaf detection. */
  ck_assert(bg_am_pt_entry_is_leaf(BG_AM_PT_GFX12, AMDGPU_VM_PDB0, 0x8000000000200071ull));
  ck_assert(!bg_am_pt_entry_is_leaf(BG_AM_PT_GFX12, AMDGPU_VM_PDB0, 0x2001001ull));
  ck_assert(bg_am_pt_entry_is_leaf(BG_AM_PT_GFX11, AMDGPU_VM_PDB1, 0x0040000040000071ull));
  ck_assert(!bg_am_pt_entry_is_leaf(BG_AM_PT_GFX11, AMDGPU_VM_PDB1, 0x2001001ull));
  ck_assert(bg_am_pt_entry_is_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB0, 0x2004f1ull));
  ck_assert(!bg_am_pt_entry_is_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB0, 0x0100000002001001ull));
  ck_assert(!bg_am_pt_entry_is_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB1, 0x4800000002001001ull));
  ck_assert(bg_am_pt_entry_is_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PDB1, 0x0040000040000971ull));
  ck_assert(bg_am_pt_entry_is_leaf(BG_AM_PT_GFX9, AMDGPU_VM_PTB, 0x1001ull));

  /* the generation per GC version comes from the GMC rows of am/am_ip.c (test am-ip) */
  ck_assert_uint_eq(bg_am_pt_hw_depth(BG_AM_PT_GFX9), 2);
  ck_assert_uint_eq(bg_am_pt_hw_block_size(BG_AM_PT_GFX9), 9);
  ck_assert_uint_eq(bg_am_pt_hw_depth(BG_AM_PT_GFX12), 3);
  ck_assert_uint_eq(bg_am_pt_hw_block_size(BG_AM_PT_GFX11), 0);
}
END_TEST

/* ---- map / translate ---------------------------------------------------------------------------------- */

static const enum bg_am_pt_gen gens[] = {BG_AM_PT_GFX9, BG_AM_PT_GFX11, BG_AM_PT_GFX12};

static void expect_xlate(bg_am_pt *pt, uint64_t va, uint64_t addr, uint64_t page, unsigned level) {
  struct bg_am_pt_xlate x;
  int r = bg_am_pt_translate(pt, va, &x);
  ck_assert_msg(r == 0, "translate 0x%" PRIx64 ": %s", va, bg_last_error());
  ck_assert_msg(x.addr == addr, "translate 0x%" PRIx64 " = 0x%" PRIx64 ", want 0x%" PRIx64, va, x.addr, addr);
  ck_assert_uint_eq(x.page_size, page);
  ck_assert_uint_eq(x.level, level);
}

START_TEST(test_map_4k) {
  enum bg_am_pt_gen gen = gens[_i];
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, gen);
  bg_am_vram_end_boot(v);
  uint64_t free0 = bg_am_vram_total_free(v);
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  ck_assert_uint_eq(bg_am_pt_base_reg(pt), bg_am_pt_root(pt) | 1);
  /* 3 pages at a VA that is only 4K aligned: 3 tables (PDB1, PDB0, PTB) + 3 PTEs. */
  uint64_t va = VA0 + 5 * GIB + 7 * 4096, pa = 0x4000000;
  OK(bg_am_pt_map_contig(pt, va, pa, 3 * 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  ck_assert_int_eq(flushes, 1);
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 4);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0 - 3 * 4096);
  for (int i = 0; i < 3; i++) expect_xlate(pt, va + i * 4096 + 0x123, pa + i * 4096 + 0x123, 4096, AMDGPU_VM_PTB);
  struct bg_am_pt_xlate x;
  OK(bg_am_pt_translate(pt, va, &x));
  ck_assert_uint_eq(x.entry, bg_am_pt_encode_leaf(gen, AMDGPU_VM_PTB, pa, 0, BG_AM_PT_RWX));
  ck_assert(!x.system);
  FAILS(bg_am_pt_translate(pt, va + 3 * 4096, &x), BG_EINVAL, "not mapped (PTB entry");
  FAILS(bg_am_pt_translate(pt, va - 4096, &x), BG_EINVAL, "not mapped");
  FAILS(bg_am_pt_translate(pt, VA0 + 9 * GIB, &x), BG_EINVAL, "PDB1 entry");
  /* Table entries in VRAM carry the generation's table bits: read the root entry and the PDB1 entry. */
  uint64_t root = bg_am_pt_root(pt);
  uint64_t e0 = fv_read(&FV, root + 0);
  ck_assert_uint_eq(e0 & ~AMDGPU_PTE_ADDR_MASK, AMDGPU_PTE_VALID);
  uint64_t e1 = fv_read(&FV, (e0 & AMDGPU_PTE_ADDR_MASK) + 8 * 5);
  ck_assert_uint_eq(e1, bg_am_pt_encode_table(gen, AMDGPU_VM_PDB1, e1 & AMDGPU_PTE_ADDR_MASK));
  uint64_t e2 = fv_read(&FV, (e1 & AMDGPU_PTE_ADDR_MASK) + 0);
  ck_assert_uint_eq(e2, bg_am_pt_encode_table(gen, AMDGPU_VM_PDB0, e2 & AMDGPU_PTE_ADDR_MASK));
  /* Fragment: 16 pages at a 64 KiB aligned VA and PA -> frag 4. */
  uint64_t va2 = VA0 + 5 * GIB + 64 * KIB;
  OK(bg_am_pt_map_contig(pt, va2, 0x8010000, 64 * KIB, BG_AM_ASPACE_VRAM, BG_AM_PT_READ | BG_AM_PT_UNCACHED));
  OK(bg_am_pt_translate(pt, va2 + 5 * 4096, &x));
  ck_assert_uint_eq(x.entry, bg_am_pt_encode_leaf(gen, AMDGPU_VM_PTB, 0x8015000, 4, BG_AM_PT_READ | BG_AM_PT_UNCACHED));
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 4); /* same PTB */
  /* Unmap: tables stay while the second mapping lives, then everything is freed. */
  OK(bg_am_pt_unmap(pt, va, 3 * 4096));
  ck_assert_int_eq(flushes, 3);
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 4);
  FAILS(bg_am_pt_translate(pt, va, &x), BG_EINVAL, "not mapped");
  OK(bg_am_pt_unmap(pt, va2, 64 * KIB));
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  ck_assert_uint_eq(fv_read(&FV, root), 0);
  ck_assert(fv_zero_from(32 * MIB));
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_map_2m_1g) {
  enum bg_am_pt_gen gen = gens[_i];
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(64 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, gen);
  bg_am_vram_end_boot(v);
  uint64_t free0 = bg_am_vram_total_free(v);
  /* 2 MiB + 4 KiB at a 2 MiB aligned VA/PA: one PDB0 leaf, then a PTB with one PTE. */
  uint64_t va = VA0 + 3 * GIB, pa = 6 * GIB + 2 * MIB;
  OK(bg_am_pt_map_contig(pt, va, pa, 2 * MIB + 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  expect_xlate(pt, va + 0x12345, pa + 0x12345, 2 * MIB, AMDGPU_VM_PDB0);
  expect_xlate(pt, va + 2 * MIB + 8, pa + 2 * MIB + 8, 4096, AMDGPU_VM_PTB);
  struct bg_am_pt_xlate x;
  OK(bg_am_pt_translate(pt, va, &x));
  ck_assert_uint_eq(x.entry, bg_am_pt_encode_leaf(gen, AMDGPU_VM_PDB0, pa, 9, BG_AM_PT_RWX));
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 4); /* root, PDB1, PDB0, PTB */
  /* 4 GiB + 2 MiB at a 1 GiB aligned VA/PA: 4 PDB1 leaves (frag 20: 4 GiB run), then a 2 MiB leaf.
   * Only entries are written: no 4 KiB tables for the 1 GiB part. */
  uint64_t va1 = VA0 + 8 * GIB, pa1 = 16 * GIB;
  uint64_t w0 = FV.writes;
  OK(bg_am_pt_map_contig(pt, va1, pa1, 4 * GIB + 2 * MIB, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  ck_assert_uint_eq(FV.writes - w0, 4 + 1 + 1); /* 4 GiB leaves, a PDE to a new PDB0, one 2 MiB leaf */
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 5);
  for (int i = 0; i < 4; i++) expect_xlate(pt, va1 + i * GIB + 0xabc000, pa1 + i * GIB + 0xabc000, GIB, AMDGPU_VM_PDB1);
  expect_xlate(pt, va1 + 4 * GIB + 0x1000, pa1 + 4 * GIB + 0x1000, 2 * MIB, AMDGPU_VM_PDB0);
  OK(bg_am_pt_translate(pt, va1 + GIB, &x));
  ck_assert_uint_eq(x.entry, bg_am_pt_encode_leaf(gen, AMDGPU_VM_PDB1, pa1 + GIB, 20, BG_AM_PT_RWX));
  /* VA aligned but PA not (only 2 MiB aligned): 2 MiB leaves instead of a 1 GiB one. */
  uint64_t va2 = VA0 + 16 * GIB;
  OK(bg_am_pt_map_contig(pt, va2, 40 * GIB + 2 * MIB, GIB, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  expect_xlate(pt, va2 + (0x3fffffff & ~0xfffull), 40 * GIB + 2 * MIB + (0x3fffffff & ~0xfffull), 2 * MIB, AMDGPU_VM_PDB0);
  /* Unmapping part of a huge leaf is refused; unmapping a middle 1 GiB leaf is fine. */
  FAILS(bg_am_pt_unmap(pt, va1 + GIB, 2 * MIB), BG_EINVAL, "would split the 1 GiB mapping");
  FAILS(bg_am_pt_unmap(pt, va + 4096, 2 * MIB), BG_EINVAL, "would split the 2 MiB mapping");
  OK(bg_am_pt_unmap(pt, va1 + GIB, GIB));
  FAILS(bg_am_pt_translate(pt, va1 + GIB, &x), BG_EINVAL, "not mapped (PDB1");
  expect_xlate(pt, va1 + 2 * GIB, pa1 + 2 * GIB, GIB, AMDGPU_VM_PDB1);
  FAILS(bg_am_pt_unmap(pt, va1, 4 * GIB + 2 * MIB), BG_EINVAL, "is not mapped");
  OK(bg_am_pt_unmap(pt, va1, GIB));
  OK(bg_am_pt_unmap(pt, va1 + 2 * GIB, 2 * GIB + 2 * MIB));
  OK(bg_am_pt_unmap(pt, va2, GIB));
  OK(bg_am_pt_unmap(pt, va, 2 * MIB + 4096));
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_map_pages) {
  enum bg_am_pt_gen gen = gens[_i];
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, gen);
  uint64_t free0 = bg_am_vram_total_free(v);
  /* 600 host pages with scattered bus addresses, across a PTB boundary (VA starts 100 pages below 2 MiB). */
  enum { N = 600 };
  uint64_t pages[N];
  for (int i = 0; i < N; i++) pages[i] = 0x7f0000000000ull + (uint64_t)((i * 7919) % 100003) * 4096;
  uint64_t va = VA0 + 2 * GIB + 2 * MIB - 100 * 4096;
  unsigned fl = BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED;
  OK(bg_am_pt_map_pages(pt, va, pages, N, BG_AM_ASPACE_SYS, fl));
  ck_assert_int_eq(flushes, 1);
  for (int i = 0; i < N; i++) {
    struct bg_am_pt_xlate x;
    OK(bg_am_pt_translate(pt, va + (uint64_t)i * 4096 + 0x10, &x));
    ck_assert_uint_eq(x.addr, pages[i] + 0x10);
    ck_assert(x.system);
    ck_assert_uint_eq(x.entry, bg_am_pt_encode_leaf(gen, AMDGPU_VM_PTB, pages[i], 0, fl | BG_AM_PT_SYSTEM));
  }
  if (gen == BG_AM_PT_GFX12) {
    struct bg_am_pt_xlate x;
    OK(bg_am_pt_translate(pt, va, &x));
    ck_assert_uint_eq(x.entry, 0x80C0000000000077ull | pages[0]);
  }
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 5); /* root, PDB1, PDB0, 2 PTBs */
  /* Peer (XGMI) pages: no SYSTEM bit. */
  uint64_t peer[2] = {0x100000000000ull, 0x100000005000ull};
  OK(bg_am_pt_map_pages(pt, VA0 + 7 * GIB, peer, 2, BG_AM_ASPACE_PEER, BG_AM_PT_RWX));
  struct bg_am_pt_xlate x;
  OK(bg_am_pt_translate(pt, VA0 + 7 * GIB + 4096, &x));
  ck_assert(!x.system);
  ck_assert_uint_eq(x.addr, peer[1]);
  OK(bg_am_pt_unmap(pt, VA0 + 7 * GIB, 8192));
  OK(bg_am_pt_unmap(pt, va, (uint64_t)N * 4096));
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_segments_and_batch) {
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, BG_AM_PT_GFX12);
  /* A greedy-chunk VRAM buffer: 2 MiB chunk + 2 MiB chunk elsewhere + 3 pages. */
  struct bg_am_pt_seg segs[] = {{1 * GIB, 2 * MIB}, {3 * GIB + 4 * MIB, 2 * MIB}, {0x5000000, 3 * 4096}};
  uint64_t va = VA0 + 64 * MIB;
  bg_am_pt_batch_begin(pt);
  OK(bg_am_pt_map(pt, va, segs, 3, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  OK(bg_am_pt_map_contig(pt, va + 16 * MIB, 0x6000000, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  ck_assert_int_eq(flushes, 0);
  OK(bg_am_pt_batch_end(pt));
  ck_assert_int_eq(flushes, 1);
  FAILS(bg_am_pt_batch_end(pt), BG_EINVAL, "without batch_begin");
  expect_xlate(pt, va + 4096, GIB + 4096, 2 * MIB, AMDGPU_VM_PDB0);
  expect_xlate(pt, va + 2 * MIB + 4096, 3 * GIB + 4 * MIB + 4096, 2 * MIB, AMDGPU_VM_PDB0);
  expect_xlate(pt, va + 4 * MIB + 2 * 4096, 0x5000000 + 2 * 4096, 4096, AMDGPU_VM_PTB);
  /* An empty batch does not flush. */
  bg_am_pt_batch_begin(pt);
  OK(bg_am_pt_batch_end(pt));
  ck_assert_int_eq(flushes, 1);
  OK(bg_am_pt_unmap(pt, va, 4 * MIB + 3 * 4096));
  OK(bg_am_pt_unmap(pt, va + 16 * MIB, 4096));
  ck_assert_int_eq(flushes, 3);
  /* A failing TLB invalidation is reported (the tables are updated). */
  bg_am_pt_destroy(pt);
  struct bg_am_pt_config fc = {.gen = BG_AM_PT_GFX11, .flush = flush_fail};
  OK(bg_am_pt_create(&fc, v, &pt));
  FAILS(bg_am_pt_map_contig(pt, VA0, 0, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_ETIMEDOUT,
        "pt: TLB invalidation: invalidate ENG17 timed out");
  expect_xlate(pt, VA0, 0, 4096, AMDGPU_VM_PTB);
  FAILS(bg_am_pt_unmap(pt, VA0, 4096), BG_ETIMEDOUT, "TLB invalidation");
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  /* paddr_base (XGMI offset): VRAM addresses in entries are paddr_base + pa, tables too. */
  bg_am_pt_destroy(pt);
  struct bg_am_pt_config c = {.gen = BG_AM_PT_GFX12, .paddr_base = 0x400000000ull, .addr_mask = (1ull << 44) - 1};
  OK(bg_am_pt_create(&c, v, &pt));
  ck_assert_uint_eq(bg_am_pt_base_reg(pt), (0x400000000ull + bg_am_pt_root(pt)) | 1);
  OK(bg_am_pt_map_contig(pt, VA0, 0x200000, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  expect_xlate(pt, VA0, 0x400200000ull, 4096, AMDGPU_VM_PTB);
  ck_assert_uint_eq(fv_read(&FV, bg_am_pt_root(pt)) & AMDGPU_PTE_ADDR_MASK & 0xf00000000ull, 0x400000000ull);
  OK(bg_am_pt_map_contig(pt, VA0 + GIB, 0, 4096, BG_AM_ASPACE_SYS, BG_AM_PT_RWX));
  FAILS(bg_am_pt_map_contig(pt, VA0 + 2 * GIB, 1ull << 44, 4096, BG_AM_ASPACE_PEER, BG_AM_PT_RWX), BG_EINVAL,
        "exceeds the address mask 0xfffffffffff");
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_errors) {
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(8 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, BG_AM_PT_GFX11);
  uint64_t va = VA0 + GIB;
  OK(bg_am_pt_map_contig(pt, va, 0x4000000, 4 * MIB, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  int f0 = flushes;
  uint64_t free0 = bg_am_vram_total_free(v);
  /* Overlap: names both ranges. */
  FAILS(bg_am_pt_map_contig(pt, va + 4 * MIB - 4096, 0, 8192, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "map [0x2000403ff000, 0x200040401000): overlaps the existing 2 MiB mapping at [0x200040200000, 0x200040400000)");
  FAILS(bg_am_pt_map_contig(pt, va - 2 * MIB, 0, 8 * MIB, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL, "overlaps");
  /* Unaligned VA, PA, size. */
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB + 1, 0, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "[0x200040800001, +0x1000): VA or size not 4 KiB aligned");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 0x1800, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "segment 0 [0x1800, +0x1000) is empty or not 4 KiB aligned");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 0, 100, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL, "not 4 KiB aligned");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 0, 0, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL, "empty");
  FAILS(bg_am_pt_unmap(pt, va + 100, 4096), BG_EINVAL, "not 4 KiB aligned");
  /* VA outside the VM range. */
  FAILS(bg_am_pt_map_contig(pt, VA0 - 4096, 0, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "map [0x1ffffffff000, +0x1000): outside the VM range [0x200000000000, 0x300000000000)");
  FAILS(bg_am_pt_map_contig(pt, VA0 + BG_AM_VA_SIZE - 4096, 0, 8192, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "outside the VM range");
  FAILS(bg_am_pt_map_contig(pt, UINT64_MAX & ~0xfffull, 0, 8192, BG_AM_ASPACE_SYS, BG_AM_PT_RWX), BG_EINVAL,
        "outside the VM range");
  FAILS(bg_am_pt_unmap(pt, VA0 + BG_AM_VA_SIZE, 4096), BG_EINVAL, "outside the VM range");
  struct bg_am_pt_xlate x;
  FAILS(bg_am_pt_translate(pt, VA0 + BG_AM_VA_SIZE, &x), BG_EINVAL, "outside the VM range");
  /* VRAM segment outside VRAM; system address beyond 48 bits; no permission; bad aspace. */
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 8 * GIB - 4096, 8192, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_EINVAL,
        "VRAM segment [0x1fffff000, 0x200001000) lies outside the 8589934592-byte VRAM");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 1ull << 48, 4096, BG_AM_ASPACE_SYS, BG_AM_PT_RWX), BG_EINVAL,
        "exceeds the address mask");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 0, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_SNOOPED), BG_EINVAL,
        "no READ, WRITE or EXEC");
  FAILS(bg_am_pt_map_contig(pt, va + 8 * MIB, 0, 4096, (enum bg_am_aspace)7, BG_AM_PT_RWX), BG_EINVAL,
        "unknown address space");
  FAILS(bg_am_pt_map_pages(pt, va + 8 * MIB, NULL, 0, BG_AM_ASPACE_SYS, BG_AM_PT_RWX), BG_EINVAL, "no pages");
  /* Unmap of something not mapped. */
  FAILS(bg_am_pt_unmap(pt, va + 4 * MIB, 4096), BG_EINVAL, "unmap [0x200040400000, 0x200040401000): VA 0x200040400000 is not mapped");
  FAILS(bg_am_pt_unmap(pt, va + 2 * MIB, 4 * MIB), BG_EINVAL, "VA 0x200040400000 is not mapped");
  /* Nothing changed, nothing flushed. */
  ck_assert_int_eq(flushes, f0);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  expect_xlate(pt, va, 0x4000000, 2 * MIB, AMDGPU_VM_PDB0);
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  /* Create errors. */
  struct bg_am_vram_config vc = {.vram_size = 8 * GIB};
  OK(bg_am_vram_create(&vc, &v));
  struct bg_am_pt_config pc = {.gen = BG_AM_PT_GFX12};
  FAILS(bg_am_pt_create(&pc, v, &pt), BG_EINVAL, "no accessor");
  uint64_t pa;
  FAILS(bg_am_vram_alloc(v, BG_AM_VRAM_MAIN, 4096, 4096, true, &pa), BG_EINVAL, "without a VRAM accessor");
  bg_am_vram_destroy(v);
  v = mk_vram(8 * GIB, 0);
  pc.gen = (enum bg_am_pt_gen)10;
  FAILS(bg_am_pt_create(&pc, v, &pt), BG_EINVAL, "unknown page-table generation");
  pc = (struct bg_am_pt_config){.gen = BG_AM_PT_GFX12, .va_size = 1ull << 49};
  FAILS(bg_am_pt_create(&pc, v, &pt), BG_EINVAL, "exceeds 2^48");
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

START_TEST(test_vram_exhausted) {
  fv_setup(64 * MIB);
  /* Main pool of 2 pages: a 4 KiB map needs 3 tables below the root. */
  bg_am_vram *v = mk_vram(32 * MIB + 64 * MIB + 8192, 0);
  bg_am_pt *pt = mk_pt(v, BG_AM_PT_GFX12);
  bg_am_vram_end_boot(v);
  uint64_t free0 = bg_am_vram_total_free(v);
  FAILS(bg_am_pt_map_contig(pt, VA0 + 3 * GIB, 0x10000, 4096, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_ENOMEM,
        "pt: map [0x2000c0000000, 0x2000c0001000): cannot allocate a PTB page table for VA 0x2000c0000000: vram: main");
  ck_assert_int_eq(flushes, 0);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0); /* rolled back */
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  ck_assert_uint_eq(fv_read(&FV, bg_am_pt_root(pt)), 0);
  /* A 2 MiB leaf needs only PDB1 + PDB0: fits. */
  OK(bg_am_pt_map_contig(pt, VA0 + 3 * GIB, 0x200000, 2 * MIB, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX));
  /* A multi-segment map failing on its second segment undoes the first. */
  struct bg_am_pt_seg segs[] = {{0x400000, 2 * MIB}, {0x800000, 4096}};
  FAILS(bg_am_pt_map(pt, VA0 + 3 * GIB + 2 * MIB, segs, 2, BG_AM_ASPACE_VRAM, BG_AM_PT_RWX), BG_ENOMEM, "VA 0x2000c0400000");
  FAILS(bg_am_pt_translate(pt, VA0 + 3 * GIB + 2 * MIB, &(struct bg_am_pt_xlate){0}), BG_EINVAL, "not mapped");
  expect_xlate(pt, VA0 + 3 * GIB, 0x200000, 2 * MIB, AMDGPU_VM_PDB0);
  OK(bg_am_pt_unmap(pt, VA0 + 3 * GIB, 2 * MIB));
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

/* ---- randomized map/unmap against a reference model ---------------------------------------------------- */

typedef struct {
  uint64_t va, size;
  uint64_t pa;     /* contiguous mappings */
  uint64_t *pages; /* page-list mappings (SYS) */
  bool live;
} mapping;

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static uint64_t rnd_below(uint64_t n) { return rnd() % n; }

#define MAXMAP 4096
static mapping M[MAXMAP];
static size_t nM;

static const mapping *model_find(uint64_t va) {
  for (size_t i = 0; i < nM; i++)
    if (M[i].live && va >= M[i].va && va < M[i].va + M[i].size) return &M[i];
  return NULL;
}
static bool model_overlaps(uint64_t va, uint64_t size) {
  for (size_t i = 0; i < nM; i++)
    if (M[i].live && va < M[i].va + M[i].size && M[i].va < va + size) return true;
  return false;
}
static void model_check(bg_am_pt *pt, uint64_t va) {
  const mapping *m = model_find(va);
  struct bg_am_pt_xlate x;
  int r = bg_am_pt_translate(pt, va, &x);
  if (!m) {
    CHECK(r == -BG_EINVAL, "VA 0x%" PRIx64 " should be unmapped (r=%d addr 0x%" PRIx64 ")", va, r, x.addr);
    return;
  }
  CHECK(r == 0, "VA 0x%" PRIx64 ": %s", va, bg_last_error());
  uint64_t off = va - m->va;
  uint64_t want = m->pages ? m->pages[off / 4096] + off % 4096 : m->pa + off;
  CHECK(x.addr == want, "VA 0x%" PRIx64 " -> 0x%" PRIx64 ", want 0x%" PRIx64, va, x.addr, want);
  CHECK(x.system == (m->pages != NULL), "VA 0x%" PRIx64 ": system bit", va);
  CHECK(x.addr % x.page_size == va % x.page_size, "VA 0x%" PRIx64 ": page offset", va);
}

START_TEST(test_random) {
  enum bg_am_pt_gen gen = gens[_i];
  fv_setup(64 * MIB);
  bg_am_vram *v = mk_vram(64 * GIB, 0);
  bg_am_pt *pt = mk_pt(v, gen);
  bg_am_vram_end_boot(v);
  uint64_t free0 = bg_am_vram_total_free(v);
  rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)gen;
  nM = 0;
  int ok_ops = 0, overlaps = 0, leaves_1g = 0, leaves_2m = 0;
  const uint64_t window = 32 * GIB; /* VAs inside [VA0 + k*512 GiB, +32 GiB) so tables are shared */
  for (int it = 0; it < 4000; it++) {
    size_t live = 0;
    for (size_t i = 0; i < nM; i++) live += M[i].live;
    if (nM < MAXMAP && (live < 20 || rnd_below(100) < 55)) {
      uint64_t size, align;
      unsigned kind = (unsigned)rnd_below(100);
      if (kind < 50) size = (1 + rnd_below(40)) * 4096, align = 4096ull << rnd_below(5);
      else if (kind < 85) size = (1 + rnd_below(4)) * 2 * MIB + rnd_below(3) * 4096, align = 2 * MIB;
      else if (kind < 93) size = (1 + rnd_below(600)) * 4096, align = 4096;
      else size = (1 + rnd_below(2)) * GIB + rnd_below(2) * 2 * MIB, align = GIB;
      uint64_t va = VA0 + rnd_below(3) * (512 * GIB) + (rnd_below(window - size) & ~(align - 1));
      if (rnd_below(8) == 0) va = (va & ~(align - 1)) + 4096 * rnd_below(4); /* perturb alignment */
      mapping m = {.va = va, .size = size, .live = true};
      int r;
      bool sys = size <= 64 * 4096 && rnd_below(4) == 0;
      unsigned fl = BG_AM_PT_RWX | (rnd_below(2) ? BG_AM_PT_UNCACHED : 0);
      if (sys) {
        size_t n = size / 4096;
        m.pages = malloc(n * sizeof(*m.pages));
        ck_assert(m.pages);
        for (size_t k = 0; k < n; k++) m.pages[k] = (rnd() & 0xfffffffff000ull);
        r = bg_am_pt_map_pages(pt, va, m.pages, n, BG_AM_ASPACE_SYS, fl | BG_AM_PT_SNOOPED);
      } else {
        uint64_t palign = rnd_below(4) ? align : 4096;
        m.pa = rnd_below(64 * GIB - size) & ~(palign - 1);
        r = bg_am_pt_map_contig(pt, va, m.pa, size, BG_AM_ASPACE_VRAM, fl);
      }
      if (model_overlaps(va, size)) {
        ck_assert_msg(r == -BG_EINVAL && strstr(bg_last_error(), "overlaps"), "map [0x%" PRIx64 ", +0x%" PRIx64 "): %d %s",
                      va, size, r, bg_last_error());
        overlaps++;
        free(m.pages);
      } else {
        ck_assert_msg(r == 0, "map [0x%" PRIx64 ", +0x%" PRIx64 "): %s", va, size, bg_last_error());
        ok_ops++;
        M[nM++] = m;
        struct bg_am_pt_xlate x;
        OK(bg_am_pt_translate(pt, va + size - 4096, &x));
        leaves_1g += x.page_size == GIB;
        leaves_2m += x.page_size == 2 * MIB;
        model_check(pt, va);
        model_check(pt, va + size - 1);
        model_check(pt, va + rnd_below(size));
      }
    } else {
      size_t k;
      do k = (size_t)rnd_below(nM); while (!M[k].live);
      OK(bg_am_pt_unmap(pt, M[k].va, M[k].size));
      ok_ops++;
      M[k].live = false;
      free(M[k].pages);
      M[k].pages = NULL;
      model_check(pt, M[k].va);
      model_check(pt, M[k].va + M[k].size - 1);
    }
    /* Random probes, and a probe of every live mapping now and then. */
    for (int p = 0; p < 4; p++) model_check(pt, VA0 + rnd_below(3) * (512 * GIB) + (rnd_below(window) & ~7ull));
    if (it % 500 == 499)
      for (size_t i = 0; i < nM; i++)
        if (M[i].live) model_check(pt, M[i].va + rnd_below(M[i].size));
    CHECK(flushes == ok_ops, "%d flushes after %d map/unmap calls", flushes, ok_ops);
  }
  for (size_t i = 0; i < nM; i++)
    if (M[i].live) {
      OK(bg_am_pt_unmap(pt, M[i].va, M[i].size));
      free(M[i].pages);
      M[i].pages = NULL;
      M[i].live = false;
    }
  printf("random gfx%d: %d ops ok, %d overlaps refused, %d 1 GiB / %d 2 MiB leaves\n", (int)gen, ok_ops, overlaps,
         leaves_1g, leaves_2m);
  ck_assert_int_gt(overlaps, 10);
  ck_assert_int_gt(leaves_1g, 0);
  ck_assert_int_gt(leaves_2m, 10);
  ck_assert_uint_eq(bg_am_pt_table_count(pt), 1);
  ck_assert_uint_eq(bg_am_vram_total_free(v), free0);
  ck_assert(fv_zero_from(0));
  bg_am_pt_destroy(pt);
  bg_am_vram_destroy(v);
  fv_teardown();
}
END_TEST

static Suite *mm_suite(void) {
  Suite *s = suite_create("am-mm");
  TCase *tc = tcase_create("vram");
  tcase_add_test(tc, test_boot_deterministic);
  tcase_add_test(tc, test_boot_closed);
  tcase_add_test(tc, test_reserved_top);
  tcase_add_test(tc, test_small_bar_pool);
  tcase_add_test(tc, test_va_alloc);
  suite_add_tcase(s, tc);
  tc = tcase_create("pt");
  tcase_add_test(tc, test_encodings);
  tcase_add_loop_test(tc, test_map_4k, 0, 3);
  tcase_add_loop_test(tc, test_map_2m_1g, 0, 3);
  tcase_add_loop_test(tc, test_map_pages, 0, 3);
  tcase_add_test(tc, test_segments_and_batch);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_vram_exhausted);
  suite_add_tcase(s, tc);
  tc = tcase_create("random");
  tcase_set_timeout(tc, 240);
  tcase_add_loop_test(tc, test_random, 0, 3);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(mm_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
