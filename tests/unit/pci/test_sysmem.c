/* tests/unit/pci/test_sysmem.c: DMA memory: pagemap translation through a fake pagemap file
 * (BG_PAGEMAP), the no-privilege message, contiguity and hugepage checks, the real pagemap. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/sysmem.h"
#include "pci_test.h"

#define PRESENT (1ull << 63)

/* Write pagemap entries for the pages at va into a fake pagemap and point BG_PAGEMAP at it. */
static void fake_pagemap(const void *va, size_t npages, const uint64_t *entries) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/pagemap", mock_sysfs_root(fx));
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  ck_assert_int_ge(fd, 0);
  off_t at = (off_t)((uintptr_t)va / 4096 * 8);
  ck_assert_int_eq(pwrite(fd, entries, npages * 8, at), (ssize_t)(npages * 8));
  close(fd);
  setenv("BG_PAGEMAP", path, 1);
}

/* A reserved range to allocate at, so the fake entries can be written first. */
static void *reserve(size_t size, size_t align) {
  uint8_t *p = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert(p != MAP_FAILED);
  uint8_t *a = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  return a;
}

START_TEST(translate_fake) {
  bg_sysmem m;
  OK(bg_sysmem_map(4 * 4096, 0, NULL, &m));
  ck_assert_uint_eq(m.npages, 4);
  ck_assert_ptr_nonnull((void *)m.view.ptr);
  uint64_t ent[4], bus[4];
  for (int i = 0; i < 4; i++) ent[i] = PRESENT | (1ull << 62) | (0x12340u + 3u * (unsigned)i);
  fake_pagemap(m.map_base, 4, ent);
  OK(bg_sysmem_translate(m.map_base, 4, bus));
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(bus[i], (0x12340ull + 3u * (unsigned)i) * 4096);
  bg_sysmem_free(&m);
}
END_TEST

START_TEST(alloc_at_fixed_va) {
  uint8_t *va = reserve(3 * 4096, 4096);
  uint64_t ent[3] = {PRESENT | 0x500, PRESENT | 0x501, PRESENT | 0x777};
  fake_pagemap(va, 3, ent);
  bg_sysmem m;
  OK(bg_sysmem_alloc(3 * 4096 - 100, 0, va, &m));
  ck_assert_ptr_eq((void *)m.view.ptr, va);
  ck_assert_uint_eq(m.size, 3 * 4096);
  ck_assert_uint_eq(m.bus[0], 0x500000);
  ck_assert_uint_eq(m.bus[2], 0x777000);
  bg_mmio_wr32(&m.view, 8188, 0x1234);  /* host memory: a plain view */
  ck_assert_uint_eq(*(uint32_t *)(va + 8188), 0x1234);
  bg_sysmem_free(&m);
  /* Asked contiguous, pages that are not: refused. */
  fake_pagemap(va, 1, ent);
  OK(bg_sysmem_alloc(4096, BG_SYSMEM_CONTIGUOUS, va, &m));  /* one page is always contiguous */
  bg_sysmem_free(&m);
}
END_TEST

START_TEST(no_privilege) {
  bg_sysmem m;
  OK(bg_sysmem_map(2 * 4096, 0, NULL, &m));
  uint64_t ent[2] = {PRESENT, PRESENT}, bus[2];
  fake_pagemap(m.map_base, 2, ent);
  FAILS(bg_sysmem_translate(m.map_base, 2, bus), BG_EPERM,
        "reports frame 0 for present page");
  ck_assert(strstr(bg_last_error(), "needs CAP_SYS_ADMIN (run as root)") != NULL);
  bg_sysmem_free(&m);
}
END_TEST

START_TEST(not_present_and_short) {
  bg_sysmem m;
  OK(bg_sysmem_map(2 * 4096, 0, NULL, &m));
  uint64_t ent[2] = {PRESENT | 0x99, 0x99}, bus[2];
  fake_pagemap(m.map_base, 2, ent);
  FAILS(bg_sysmem_translate(m.map_base, 2, bus), BG_EIO, "is not present");
  /* Entries past the end of the file. */
  FAILS(bg_sysmem_translate((uint8_t *)m.map_base + 2 * 4096, 1, bus), BG_EIO, "short read");
  setenv("BG_PAGEMAP", "/nonexistent/pagemap", 1);
  FAILS(bg_sysmem_translate(m.map_base, 1, bus), BG_ENOTSUP, "cannot open /nonexistent/pagemap");
  FAILS(bg_sysmem_translate((uint8_t *)m.map_base + 1, 1, bus), BG_EINVAL, "not page-aligned");
  bg_sysmem_free(&m);
}
END_TEST

START_TEST(contiguity_checks) {
  uint64_t bus[512];
  for (int i = 0; i < 512; i++) bus[i] = 0x40000000ull + (uint64_t)i * 4096;
  OK(bg_sysmem_check_contiguous(bus, 512, 2u << 20, "x"));
  bg_sysmem m = {.huge = true, .bus = bus, .npages = 512};
  OK(bg_sysmem_check_layout(&m, BG_SYSMEM_CONTIGUOUS));
  m.bus[100] += 4096;
  FAILS(bg_sysmem_check_layout(&m, 0), BG_EIO, "a 2 MiB hugepage is not physically contiguous: page 100");
  for (int i = 0; i < 512; i++) m.bus[i] = 0x40001000ull + (uint64_t)i * 4096;
  FAILS(bg_sysmem_check_layout(&m, 0), BG_EIO, "a 2 MiB hugepage starts at bus address 0x40001000, not aligned");
  m.huge = false;
  OK(bg_sysmem_check_layout(&m, BG_SYSMEM_CONTIGUOUS));
  m.bus[3] = 0;
  FAILS(bg_sysmem_check_layout(&m, BG_SYSMEM_CONTIGUOUS), BG_EIO, "contiguous allocation is not physically");
}
END_TEST

START_TEST(bad_requests) {
  bg_sysmem m;
  FAILS(bg_sysmem_map(0, 0, NULL, &m), BG_EINVAL, "bad allocation size 0");
  FAILS(bg_sysmem_map(4u << 20, BG_SYSMEM_CONTIGUOUS, NULL, &m), BG_EINVAL, "exceeds one 2 MiB hugepage");
  FAILS(bg_sysmem_map(4096, 0, (void *)0x1001, &m), BG_EINVAL, "not 4 KiB aligned");
}
END_TEST

static bool have_hugepages(void) {
  void *p = mmap(NULL, 2u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
  if (p == MAP_FAILED) return false;
  munmap(p, 2u << 20);
  return true;
}

/* 2 MiB pages: with the system's hugepages, the physical alignment check on fake frames;
 * without, the clear failure of a contiguous request and the 4 KiB fallback. */
START_TEST(hugepages) {
  bg_sysmem m;
  if (!have_hugepages()) {
    FAILS(bg_sysmem_map(8192, BG_SYSMEM_CONTIGUOUS, NULL, &m), BG_ENOMEM, "needs a 2 MiB hugepage");
    ck_assert(strstr(bg_last_error(), "nr_hugepages") != NULL);
    OK(bg_sysmem_map(8192, BG_SYSMEM_HUGE, NULL, &m));
    ck_assert(!m.huge);
    bg_sysmem_free(&m);
    fprintf(stderr, "pci/hugepages: no 2 MiB hugepages on this system: alignment check on real hugepages skipped\n");
    return;
  }
  uint8_t *va = reserve(2u << 20, 2u << 20);
  static uint64_t ent[512];
  for (int i = 0; i < 512; i++) ent[i] = PRESENT | (0x80000u + (unsigned)i);  /* 2 GiB: aligned */
  fake_pagemap(va, 512, ent);
  OK(bg_sysmem_alloc(8192, BG_SYSMEM_CONTIGUOUS, va, &m));
  ck_assert(m.huge);
  ck_assert_uint_eq(m.map_size, 2u << 20);
  ck_assert_uint_eq(m.bus[1], 0x80001000ull);
  bg_sysmem_free(&m);
  for (int i = 0; i < 512; i++) ent[i] = PRESENT | (0x80001u + (unsigned)i);
  fake_pagemap(va, 512, ent);
  FAILS(bg_sysmem_alloc(2u << 20, BG_SYSMEM_HUGE, va, &m), BG_EIO, "not aligned to 0x200000");
}
END_TEST

/* Without BG_PAGEMAP the pagemap is <proc>/self/pagemap, and the first translation turns off
 * compaction of locked pages (here in the emulated /proc). */
START_TEST(proc_root_pagemap) {
  char dir[4200], path[4300];
  snprintf(dir, sizeof(dir), "%s/proc/self", mock_sysfs_root(fx));
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  unsetenv("BG_PAGEMAP");
  bg_sysmem m;
  OK(bg_sysmem_map(4096, 0, NULL, &m));
  snprintf(path, sizeof(path), "%s/pagemap", dir);
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  uint64_t ent = PRESENT | 0x4242, bus;
  ck_assert_int_eq(pwrite(fd, &ent, 8, (off_t)((uintptr_t)m.map_base / 4096 * 8)), 8);
  close(fd);
  ck_assert_str_eq(bg_sysmem_pagemap_path(), path);
  OK(bg_sysmem_translate(m.map_base, 1, &bus));
  ck_assert_uint_eq(bus, 0x4242000);
  snprintf(path, sizeof(path), "%s/proc/sys/vm/compact_unevictable_allowed", mock_sysfs_root(fx));
  char c = 0;
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, &c, 1), 1);
  close(fd);
  ck_assert_int_eq(c, '0');
  bg_sysmem_free(&m);
}
END_TEST

/* The real /proc/self/pagemap: frames when privileged, the no-privilege message otherwise. */
START_TEST(real_pagemap) {
  setenv("BG_PAGEMAP", "/proc/self/pagemap", 1);
  bg_sysmem m;
  int r = bg_sysmem_alloc(8192, 0, NULL, &m);
  if (r == 0) {
    ck_assert_uint_ne(m.bus[0], 0);
    ck_assert_uint_eq(m.bus[0] % 4096, 0);
    bg_sysmem_free(&m);
    /* Privileged and with hugepages: a real 2 MiB frame, checked aligned and contiguous. */
    if (have_hugepages()) {
      OK(bg_sysmem_alloc(64 * 4096, BG_SYSMEM_CONTIGUOUS, NULL, &m));
      ck_assert(m.huge);
      ck_assert_uint_eq(m.bus[0] % (2u << 20), 0);
      ck_assert_uint_eq(m.bus[63], m.bus[0] + 63 * 4096);
      bg_sysmem_free(&m);
    }
  } else {
    ck_assert_msg(r == -BG_EPERM && strstr(bg_last_error(), "CAP_SYS_ADMIN"), "unexpected: %s", bg_last_error());
  }
}
END_TEST

TCase *tcase_sysmem(void) {
  TCase *tc = fx_tcase("sysmem");
  tcase_add_test(tc, translate_fake);
  tcase_add_test(tc, alloc_at_fixed_va);
  tcase_add_test(tc, no_privilege);
  tcase_add_test(tc, not_present_and_short);
  tcase_add_test(tc, contiguity_checks);
  tcase_add_test(tc, bad_requests);
  tcase_add_test(tc, hugepages);
  tcase_add_test(tc, proc_root_pagemap);
  tcase_add_test(tc, real_pagemap);
  return tc;
}
