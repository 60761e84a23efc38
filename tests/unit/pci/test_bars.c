/* tests/unit/pci/test_bars.c: BAR info and mappings: register hooks of a device model, strict
 * accesses (outside a BAR, unmodelled registers, decoding off), write-combined and plain views. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "platform/pci.h"
#include "platform/pci_regs.h"
#include "pci_test.h"

/* A tiny device model: a scratch register at BAR5+0x100, a read-only id at +0x0, doorbells
 * (64-bit writes) anywhere in BAR2. */
typedef struct toy {
  uint32_t scratch;
  uint64_t last_doorbell, doorbell_off;
  unsigned doorbells;
} toy;

static uint64_t toy_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  (void)m;
  (void)bar;
  (void)size;
  toy *t = user;
  return off == 0x100 ? t->scratch : 0x4c744c74u;
}

static void toy_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  (void)m;
  (void)bar;
  (void)off;
  (void)size;
  ((toy *)user)->scratch = (uint32_t)v;
}

static void toy_doorbell(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  (void)m;
  (void)bar;
  ck_assert_uint_eq(size, 8);
  toy *t = user;
  t->last_doorbell = v;
  t->doorbell_off = off;
  t->doorbells++;
}

static bg_pci_dev *open_amd(toy *t) {
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  ck_assert_int_eq(mock_pci_hook(m, 5, 0x0, 4, toy_rd, NULL, t), 0);
  ck_assert_int_eq(mock_pci_hook(m, 5, 0x100, 4, toy_rd, toy_wr, t), 0);
  ck_assert_int_eq(mock_pci_hook(m, 2, 0, 2u << 20, NULL, toy_doorbell, t), 0);
  mock_pci_bar_strict(m, 5, true);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, BG_PCI_UNBIND_DRIVER, &d));
  return d;
}

START_TEST(bar_info) {
  toy t = {0};
  bg_pci_dev *d = open_amd(&t);
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  ck_assert_uint_eq(b.size, 256u << 20);
  ck_assert_uint_eq(b.base, 0x4000000000ull);
  ck_assert(b.is_64 && b.prefetch && !b.is_io);
  OK(bg_pci_bar_info(d, 1, &b));
  ck_assert_uint_eq(b.size, 0);
  OK(bg_pci_bar_info(d, 4, &b));
  ck_assert(b.is_io);
  FAILS(bg_pci_bar_info(d, 6, &b), BG_EINVAL, "no BAR6");
  bg_pci_close(d);
}
END_TEST

START_TEST(register_hooks) {
  toy t = {0};
  bg_pci_dev *d = open_amd(&t);
  bg_mmio regs, bells;
  OK(bg_pci_map_bar(d, 5, 0, 0, 0, &regs));
  ck_assert_uint_eq(regs.size, 1u << 20);
  ck_assert_ptr_nonnull(regs.ops);  /* the model's callbacks, not memory */
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0), 0x4c744c74u);
  OK(bg_mmio_wr32(&regs, 0x100, 0xdeadbeef));
  ck_assert_uint_eq(t.scratch, 0xdeadbeef);
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0x100), 0xdeadbeef);
  OK(bg_pci_check_bar(d, 5, &regs, 0));
  /* A second, smaller window of the same BAR. */
  bg_mmio win;
  OK(bg_pci_map_bar(d, 5, 0, 0x2000, 0, &win));
  ck_assert_uint_eq(bg_mmio_rd32(&win, 0x100), 0xdeadbeef);
  bg_pci_unmap_bar(d, &win);
  OK(bg_pci_map_bar(d, 2, 0, 0, BG_PCI_MAP_WC, &bells));
  ck_assert_str_eq(mock_sysfs_last_open(fx), "bus/pci/devices/" AMD_BDF "/resource2_wc");
  OK(bg_mmio_wr64(&bells, 0x18, 0x1122334455667788ull));
  ck_assert_uint_eq(t.doorbells, 1);
  ck_assert_uint_eq(t.doorbell_off, 0x18);
  ck_assert_uint_eq(t.last_doorbell, 0x1122334455667788ull);
  ck_assert_uint_eq(mock_pci_bar_views(mock_sysfs_find(fx, AMD_BDF), 5), 1);
  bg_pci_unmap_bar(d, &regs);
  ck_assert_uint_eq(mock_pci_bar_views(mock_sysfs_find(fx, AMD_BDF), 5), 0);
  ck_assert_ptr_null(regs.ops);
  bg_pci_close(d);  /* also drops the doorbell view */
  ck_assert_uint_eq(mock_pci_bar_views(mock_sysfs_find(fx, AMD_BDF), 2), 0);
}
END_TEST

START_TEST(strict_accesses) {
  toy t = {0};
  bg_pci_dev *d = open_amd(&t);
  bg_mmio regs;
  OK(bg_pci_map_bar(d, 5, 0, 0, 0, &regs));
  /* An unmodelled register of a strict BAR. */
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0x200), 0xffffffffu);
  expect_failures(1, "BAR5: read of 4 bytes at 0x200 hits no modelled register");
  /* An access running past a hooked register. */
  ck_assert_int_lt(bg_mmio_wr64(&regs, 0x100, 1), 0);
  expect_failures(1, "straddles or misaligns");
  /* Read of a write-only register. */
  bg_mmio bells;
  OK(bg_pci_map_bar(d, 2, 0, 0, 0, &bells));
  ck_assert_uint_eq(bg_mmio_rd64(&bells, 0), ~0ull);
  expect_failures(1, "read of write-only register");
  /* Past the end of the view: the accessor refuses before the model sees it. */
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 1u << 20), 0xffffffffu);
  ck_assert(strstr(bg_last_error(), "outside the view") != NULL);
  ck_assert_int_lt(bg_mmio_wr32(&regs, 0x101, 0), 0);
  ck_assert(strstr(bg_last_error(), "misaligned") != NULL);
  /* A caller going around the accessor: the model catches the access outside its BAR. */
  uint32_t v;
  ck_assert_int_lt(regs.ops->read(regs.ctx, 1u << 20, &v, 4), 0);
  expect_failures(1, "outside the 0x100000-byte view");
  /* Memory decoding off: BAR accesses are a driver bug. */
  uint32_t cmd;
  OK(bg_pci_cfg_read(d, BG_PCI_COMMAND, 2, &cmd));
  OK(bg_pci_cfg_write(d, BG_PCI_COMMAND, 2, cmd & ~BG_PCI_COMMAND_MEMORY));
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0x100), 0xffffffffu);
  expect_failures(1, "with memory decoding off");
  OK(bg_pci_cfg_write(d, BG_PCI_COMMAND, 2, cmd));
  ck_assert_uint_eq(bg_mmio_rd32(&regs, 0), 0x4c744c74u);
  bg_pci_close(d);
}
END_TEST

START_TEST(map_arguments) {
  toy t = {0};
  bg_pci_dev *d = open_amd(&t);
  bg_mmio m;
  FAILS(bg_pci_map_bar(d, 1, 0, 0, 0, &m), BG_EINVAL, "BAR1 is not implemented");
  FAILS(bg_pci_map_bar(d, 4, 0, 0, 0, &m), BG_EINVAL, "I/O BAR");
  FAILS(bg_pci_map_bar(d, 5, 0x800, 0x1000, 0, &m), BG_EINVAL, "not page-aligned");
  FAILS(bg_pci_map_bar(d, 5, 0xff000, 0x2000, 0, &m), BG_EINVAL, "inside its 0x100000 bytes");
  FAILS(bg_pci_map_bar(d, 5, 2u << 20, 0, 0, &m), BG_EINVAL, "BAR5 window");
  ck_assert_ptr_null(m.ops);
  bg_pci_close(d);
}
END_TEST

/* VRAM-like BARs can be direct pointers into the model's memory; a non-prefetchable BAR has
 * no resourceN_wc, so a WC request falls back to resourceN. */
START_TEST(direct_and_wc_fallback) {
  toy t = {0};
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  mock_pci_bar_direct(m, 0, true);
  bg_pci_dev *d = open_amd(&t);
  bg_mmio vram, regs;
  OK(bg_pci_map_bar(d, 0, 1u << 20, 1u << 20, BG_PCI_MAP_WC, &vram));
  ck_assert_str_eq(mock_sysfs_last_open(fx), "bus/pci/devices/" AMD_BDF "/resource0_wc");
  ck_assert_ptr_nonnull((void *)vram.ptr);
  OK(bg_mmio_write(&vram, 16, "vram", 4));
  ck_assert_mem_eq((char *)mock_pci_bar_mem(m, 0) + (1u << 20) + 16, "vram", 4);
  OK(bg_pci_map_bar(d, 5, 0, 0x1000, BG_PCI_MAP_WC, &regs));
  ck_assert_str_eq(mock_sysfs_last_open(fx), "bus/pci/devices/" AMD_BDF "/resource5");
  bg_pci_unmap_bar(d, &vram);
  bg_pci_unmap_bar(d, &regs);
  bg_pci_close(d);
}
END_TEST

/* Without a model behind a BAR, the view is an mmap of resourceN: plain memory. */
START_TEST(plain_mmap) {
  mock_pci_cfg cfg = {.bdf = "0000:05:00.0", .vendor = 0x1002, .device = 0x7480, .class_code = 0x030000,
                      .bars = {[0] = {.size = 1u << 20}}, .iommu_group = -1, .unemulated_bars = true};
  ck_assert_ptr_nonnull(mock_sysfs_add(fx, &cfg));
  bg_pci_dev *d;
  bg_mmio m;
  OK(bg_pci_open_sysfs("0000:05:00.0", 0, &d));
  OK(bg_pci_map_bar(d, 0, 0x1000, 0x1000, 0, &m));
  ck_assert_ptr_null(m.ops);
  OK(bg_mmio_wr32(&m, 8, 0xcafef00d));
  char path[4200];
  snprintf(path, sizeof(path), "%s/devices/0000:05:00.0/resource0", mock_sysfs_root(fx));
  int fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  uint32_t v = 0;
  ck_assert_int_eq(pread(fd, &v, 4, 0x1008), 4);
  close(fd);
  ck_assert_uint_eq(v, 0xcafef00d);
  bg_pci_unmap_bar(d, &m);
  bg_pci_close(d);
}
END_TEST

static void count_progress(void *ctx, uint64_t done, uint64_t total) {
  uint64_t *c = ctx;
  c[0]++;
  c[1] = done;
  c[2] = total;
}

/* bg_pci_copy_in/out on sysfs (no transport copy): the BAR pages holding the range are mapped and copied through,
 * progress once at the end; a range outside the memory BARs is refused naming the address. */
START_TEST(bulk_copy_mapped) {
  toy t = {0};
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  mock_pci_bar_direct(m, 0, true);
  bg_pci_dev *d = open_amd(&t);
  ck_assert_uint_eq(bg_pci_features(d), 0);
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  char in[9000], out[9000];
  for (size_t i = 0; i < sizeof(in); i++) in[i] = (char)(i * 7 + 1);
  uint64_t c[3] = {0, 0, 0};
  OK(bg_pci_copy_in(d, b.base + 0x3003, in, sizeof(in), count_progress, c));
  ck_assert_mem_eq((char *)mock_pci_bar_mem(m, 0) + 0x3003, in, sizeof(in));
  ck_assert_uint_eq(c[0], 1);
  ck_assert_uint_eq(c[1], sizeof(in));
  OK(bg_pci_copy_out(d, b.base + 0x3003, out, sizeof(out), NULL, NULL));
  ck_assert_mem_eq(out, in, sizeof(in));
  FAILS(bg_pci_copy_in(d, b.base + b.size - 4, in, 8, NULL, NULL), BG_EINVAL, "inside one memory BAR");
  bg_pci_close(d);
}
END_TEST

START_TEST(mmio_views) {
  uint32_t mem[4] = {1, 2, 3, 4};
  bg_mmio v = {(volatile uint8_t *)mem, sizeof(mem), NULL, NULL}, sub;
  ck_assert_uint_eq(bg_mmio_rd32(&v, 12), 4);
  ck_assert_uint_eq(bg_mmio_rd64(&v, 8), 3ull | 4ull << 32);
  OK(bg_mmio_sub(&v, 8, 8, &sub));
  ck_assert_uint_eq(bg_mmio_rd32(&sub, 4), 4);
  ck_assert_uint_eq(bg_mmio_rd32(&sub, 8), 0xffffffffu);
  ck_assert_int_lt(bg_mmio_sub(&v, 8, 16, &sub), 0);
  uint8_t buf[6];
  ck_assert_int_lt(bg_mmio_read(&v, 12, buf, 6), 0);
  OK(bg_mmio_read(&v, 1, buf, 6));
  ck_assert_uint_eq(buf[3], 2);
}
END_TEST

TCase *tcase_bars(void) {
  TCase *tc = fx_tcase("bars");
  tcase_add_test(tc, bar_info);
  tcase_add_test(tc, register_hooks);
  tcase_add_test(tc, strict_accesses);
  tcase_add_test(tc, map_arguments);
  tcase_add_test(tc, direct_and_wc_fallback);
  tcase_add_test(tc, plain_mmap);
  tcase_add_test(tc, mmio_views);
  tcase_add_test(tc, bulk_copy_mapped);
  return tc;
}
