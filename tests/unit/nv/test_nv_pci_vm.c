/* tests/unit/nv/test_nv_pci_vm.c (meson test nv-pci-vm): the bare-metal driver's own GPU virtual memory
 * (nv/nv_pci_vm.c) on the emulated GPUs of tests/mockgpu/nv_pci, in process: after a cold boot the emulated GSP-RM
 * holds the root the driver built (SET_PAGE_DIRECTORY), allocations are translated by the emulator's own MMU walker
 * (nvpci_mmu.c, written independently of nv/nv_mmu.c) to the memory the driver allocated, CPU writes land there,
 * every map and unmap is followed by a TLB invalidate, and a refused SET_PAGE_DIRECTORY names the step and status. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "mock_internal.h"
#include "mock_sysfs.h"
#include "nv/nv_pci.h"
#include "nvpci_gsp_internal.h"
#include "nvpci_internal.h"
#include "nvpci_mmu.h"

#define BDF "0000:05:00.0"

typedef struct bed {
  mock_sysfs *tree;
  nvpci_gpu *g;
  nvpci_gsp *gsp;
  bg_pci_dev *pci;
  char dir[256];
  /* the BAR0 register hook, wrapped: at the BAR1 block write (GSP-RM up, RM objects next) the GSP-RM model's chip
   * may be swapped for `swap` (a refusal planted in the emulator, not in the driver) */
  mock_pci_rd_fn rd;
  mock_pci_wr_fn wr;
  void *user;
  const gspm_chip *swap;
} bed;

static void bed_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  bed *b = user;
  if (b->swap && (off == NV_PBUS_BAR1_BLOCK || off == NV_VF_BAR1_BLOCK_LOW)) b->gsp->chip = b->swap;
  b->wr(b->user, m, bar, off, v, size);
}

static uint64_t bed_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  bed *b = user;
  return b->rd(b->user, m, bar, off, size);
}

static void bed_new(bed *b, const char *chip, bool small_bar) {
  memset(b, 0, sizeof(*b));
  b->tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(b->tree);
  nvpci_cfg cfg = {.chip = chip, .bdf = BDF, .vram_size = 512ull << 20, .fuse_version = 1, .small_bar = small_bar};
  b->g = nvpci_new(b->tree, &cfg);
  ck_assert_ptr_nonnull(b->g);
  b->gsp = nvpci_gsp_new(b->g);
  ck_assert_ptr_nonnull(b->gsp);
  nvpci_set_gsp(b->g, b->gsp);
  OK(mock_tmpdir_new("nvvm", b->dir, sizeof(b->dir)));
  OK(nvpci_write_firmware(b->g, b->dir));
  mock_pci *m = nvpci_pci(b->g);
  for (size_t i = 0; i < m->nhooks; i++)
    if (m->hooks[i].bar == 0) {
      b->rd = m->hooks[i].rd, b->wr = m->hooks[i].wr, b->user = m->hooks[i].user;
      m->hooks[i].rd = bed_rd, m->hooks[i].wr = bed_wr, m->hooks[i].user = b;
    }
  ck_assert_ptr_nonnull(b->wr);
  OK(bg_pci_open_sysfs(BDF, 0, &b->pci));
}

static void bed_free(bed *b) {
  bg_pci_close(b->pci);
  ck_assert_msg(nvpci_nfail(b->g) == 0, "emulated GPU failures: %s", nvpci_failures(b->g));
  ck_assert_msg(mock_sysfs_nfail(b->tree) == 0, "emulated PCI failures: %s", mock_sysfs_failures(b->tree));
  nvpci_gsp_free(b->gsp);
  nvpci_free(b->g);
  mock_rm_tree(b->dir);
  mock_sysfs_free(b->tree);
}

/* The emulator's walk of va must end at want (VRAM address or bus address) in aperture aper. */
static void maps_to(bed *b, uint64_t va, uint64_t want, int aper) {
  uint64_t pa = 0;
  int a = -1;
  char why[256] = "";
  int r = nvpci_translate(b->g, va, &pa, &a, why, sizeof(why));
  ck_assert_msg(r == 0, "VA 0x%llx: the GPU's walker faults: %s (%s)", (unsigned long long)va,
                nvpci_mmu_fault_name(-r), why);
  ck_assert_msg(pa == want && a == aper, "VA 0x%llx -> 0x%llx aperture %d (0x%llx aperture %d expected)",
                (unsigned long long)va, (unsigned long long)pa, a, (unsigned long long)want, aper);
}

static void unmapped(bed *b, uint64_t va) {
  char why[256] = "";
  int r = nvpci_translate(b->g, va, NULL, NULL, why, sizeof(why));
  ck_assert_msg(r == -NVPCI_MMU_UNMAPPED, "VA 0x%llx still translates after free (walker: %d %s)",
                (unsigned long long)va, r, why);
}

/* One VRAM allocation: mapped where the driver put it (first, middle and last page), CPU writes through the view
 * land in emulated VRAM at that address; invalidated after map and after unmap; unmapped after free. */
static void vram_case(bed *b, bg_nv_pci *d, uint64_t size, uint64_t page) {
  uint64_t inv = nvpci_tlb_invalidates(b->g);
  bg_nv_pci_mem m;
  OK(bg_nv_pci_alloc(d, size, BG_NV_MEM_CPU, &m)); /* VRAM (BG_NV_MEM_VRAM is 0) */
  ck_assert_msg(nvpci_tlb_invalidates(b->g) > inv, "no TLB invalidate after mapping 0x%llx bytes of VRAM",
                (unsigned long long)size);
  ck_assert_uint_eq(m.page, page);
  ck_assert(m.va >= BG_NV_PCI_VA_BASE && m.va % page == 0 && m.size >= size);
  uint64_t offs[] = {0x10, m.size / 2 + 0x238, m.size - 8};
  uint64_t vsize = 0;
  uint8_t *vram = nvpci_vram(b->g, &vsize);
  for (size_t i = 0; i < 3; i++) {
    maps_to(b, m.va + offs[i], m.vram_pa + offs[i], NVPCI_MMU_APER_VID);
    uint64_t v = 0x5eed0000ull + i + (m.va << 8);
    OK(bg_mmio_write(&m.view, offs[i], &v, 8));
    uint64_t got = 0;
    memcpy(&got, vram + m.vram_pa + offs[i], 8);
    ck_assert_msg(got == v, "CPU write at +0x%llx did not reach VRAM 0x%llx", (unsigned long long)offs[i],
                  (unsigned long long)(m.vram_pa + offs[i]));
  }
  uint64_t va = m.va, last = m.va + m.size - 8;
  inv = nvpci_tlb_invalidates(b->g);
  bg_nv_pci_free(d, &m);
  ck_assert_msg(nvpci_tlb_invalidates(b->g) > inv, "no TLB invalidate after unmapping VA 0x%llx",
                (unsigned long long)va);
  unmapped(b, va);
  unmapped(b, last);
}

/* System memory of 3 pages (not contiguous): each page at its own bus address, coherent; CPU writes seen by DMA. */
static void sysmem_case(bed *b, bg_nv_pci *d) {
  uint64_t inv = nvpci_tlb_invalidates(b->g);
  bg_nv_pci_mem m;
  OK(bg_nv_pci_alloc(d, 3 * 4096 - 100, BG_NV_MEM_SYSMEM | BG_NV_MEM_CPU, &m));
  ck_assert(nvpci_tlb_invalidates(b->g) > inv);
  ck_assert_uint_eq(m.size, 3 * 4096);
  ck_assert_uint_eq(m.sys.npages, 3);
  for (size_t i = 0; i < 3; i++) {
    maps_to(b, m.va + i * 4096 + 0x40 * i, m.sys.bus[i] + 0x40 * i, NVPCI_MMU_APER_SYS_COH);
    uint32_t v = 0xc0ffee00u + (uint32_t)i, got = 0;
    OK(bg_mmio_write(&m.view, i * 4096 + 0x40 * i, &v, 4));
    ck_assert_int_eq(nvpci_dma_read(b->g, m.sys.bus[i] + 0x40 * i, &got, 4), 0);
    ck_assert_uint_eq(got, v);
  }
  uint64_t va = m.va;
  inv = nvpci_tlb_invalidates(b->g);
  bg_nv_pci_free(d, &m);
  ck_assert(nvpci_tlb_invalidates(b->g) > inv);
  for (size_t i = 0; i < 3; i++) unmapped(b, va + i * 4096);
}

/* A cold boot gives GSP-RM the driver's root with the format's root entry count (4 in v2, 2 in v3: dev_mmu.h). */
static void vm_on(const char *chip, bool small_bar, unsigned root_entries) {
  bed b;
  bed_new(&b, chip, small_bar);
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  uint32_t client = 0, hva = 0;
  uint64_t root = 0;
  unsigned n = 0;
  ck_assert_msg(nvpci_gsp_page_directory(b.gsp, &client, &hva, &root, &n) == 0, "GSP-RM saw no SET_PAGE_DIRECTORY");
  ck_assert_uint_eq(client, d->client);
  ck_assert_uint_eq(hva, d->hvaspace);
  ck_assert_uint_ne(hva, 0);
  ck_assert_uint_eq(root, d->mmu.root_pa);
  ck_assert_msg(root < (2u << 20), "root 0x%llx outside the boot region [0, 2 MiB)", (unsigned long long)root);
  ck_assert_uint_eq(n, root_entries);
  ck_assert_int_eq(d->mmu.ver, nvpci_gsp_mmu_version(b.gsp));
  bool step = false;
  for (unsigned i = 0; i < d->nsteps; i++) step |= strcmp(d->steps[i].name, "VA space") == 0 && d->steps[i].rpcs == 2;
  ck_assert_msg(step, "no step 'VA space' with its 2 RPCs");

  vram_case(&b, d, 64 << 10, 4096);
  vram_case(&b, d, 16 << 20, 2u << 20);
  sysmem_case(&b, d);
  bg_nv_pci_close(d);
  bed_free(&b);
}

START_TEST(vm_ga102) { vm_on("ga102", false, 4); }
END_TEST
START_TEST(vm_gh100) { vm_on("gh100", false, 2); }
END_TEST
START_TEST(vm_small_bar_ad102) { vm_on("ad102", true, 4); }
END_TEST

/* GSP-RM refuses SET_PAGE_DIRECTORY (the emulator's chip made to expect the other format's entry count once GSP-RM is
 * up): the open fails naming the step and the RPC with RM's status, and nothing is left behind. */
START_TEST(refused_set_page_directory) {
  bed b;
  bed_new(&b, "ga102", false);
  gspm_chip other = *gspm_chip_find("ga102");
  other.mmu_ver = 3;
  b.swap = &other;
  bg_nv_pci *d = NULL;
  int e = bg_nv_pci_open(b.pci, b.dir, &d);
  ck_assert_int_lt(e, 0);
  ck_assert_ptr_null(d);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "step 'VA space'") && strstr(msg, "SET_PAGE_DIRECTORY") && strstr(msg, "INVALID_ARGUMENT"),
                "error does not name the step, the RPC and the status: %s", msg);
  bed_free(&b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("nv-pci-vm");
  TCase *t = tcase_create("emulated");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, vm_ga102);
  tcase_add_test(t, vm_gh100);
  tcase_add_test(t, vm_small_bar_ad102);
  tcase_add_test(t, refused_set_page_directory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
