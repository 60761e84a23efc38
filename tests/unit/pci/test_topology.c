/* tests/unit/pci/test_topology.c: several emulated GPUs in one PCI hierarchy (tests/mockgpu/mock_topo.c): the sysfs
 * layout through host bridges, root ports and switch ports, the scan listing only the GPUs, root complexes and
 * peer-to-peer reach (platform/pci_topology.h), peer DMA into another GPU's BAR routed only within a root complex,
 * and the plugin's MOCKGPU_TOPOLOGY. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "hcq/gpu_scan.h"
#include "platform/mock_plugin.h"
#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_regs.h"
#include "platform/pci_scan.h"
#include "platform/pci_topology.h"
#include "mock_sysfs.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define VRAM (64u << 20)

static mock_sysfs *T;
static char gpu[8][16];
static mock_pci *dev[8];

/* A GPU like tests/unit/pci's fixture: BAR0 VRAM (plain memory), BAR2 doorbells, BAR5 registers. */
static mock_pci *add_gpu(const char *bdf, int group) {
  mock_pci_cfg c = {.bdf = bdf, .vendor = 0x1002, .device = 0x744c, .subvendor = 0x1da2, .subdevice = 0x471e,
                    .class_code = 0x030000, .revision = 0xc8,
                    .bars = {[0] = {.size = VRAM, .is_64 = true, .prefetch = true},
                             [2] = {.size = 2u << 20, .is_64 = true, .prefetch = true},
                             [5] = {.size = 1u << 20}},
                    .driver = "amdgpu", .link_speed = "16.0 GT/s PCIe", .link_width = 16, .iommu_group = group};
  mock_pci *m = mock_sysfs_add(T, &c);
  ck_assert_msg(m != NULL, "adding %s: %s", bdf, mock_sysfs_failures(T));
  return m;
}

/* A tree with n GPUs laid out as topo. */
static void build(mock_topology topo, int n) {
  T = mock_sysfs_new();
  ck_assert_ptr_nonnull(T);
  ck_assert_msg(mock_sysfs_gpu_topology(T, topo, n, gpu) == 0, "%s", mock_sysfs_failures(T));
  for (int i = 0; i < n; i++) dev[i] = add_gpu(gpu[i], 10 + i);
}

static void teardown(void) {
  if (!T) return;
  unsigned n = mock_sysfs_nfail(T);
  char msg[4096];
  snprintf(msg, sizeof(msg), "%s", mock_sysfs_failures(T));
  mock_sysfs_free(T);
  T = NULL;
  ck_assert_msg(n == 0, "the emulated tree recorded %u unexpected failures:\n%s", n, msg);
}

static void expect_failure(const char *needle) {
  const char *all = mock_sysfs_failures(T);
  ck_assert_msg(mock_sysfs_nfail(T) == 1, "expected 1 model failure, got %u:\n%s", mock_sysfs_nfail(T), all);
  ck_assert_msg(strstr(all, needle) != NULL, "model failure lacks '%s':\n%s", needle, all);
  mock_sysfs_clear_failures(T);
}

/* realpath of root/rel, which must exist. */
static void real(const char *rel, char *out) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/%s", mock_sysfs_root(T), rel);
  ck_assert_msg(realpath(path, out) != NULL, "%s does not resolve", path);
}

static void read_file(const char *rel, void *buf, size_t n) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/%s", mock_sysfs_root(T), rel);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  ck_assert_uint_eq(got, n);
}

/* bus/pci/devices/<bdf> resolves to devices/<dir> and the device's files are there. */
static void link_is(const char *bdf, const char *dir) {
  char rel[512], a[PATH_MAX], b[PATH_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
  real(rel, a);
  snprintf(rel, sizeof(rel), "devices/%s", dir);
  real(rel, b);
  ck_assert_str_eq(a, b);
  snprintf(rel, sizeof(rel), "devices/%s/config", dir);
  real(rel, b);
}

START_TEST(switch_layout) {
  build(MOCK_TOPO_SWITCH, 3);
  const char *sw = "pci0000:00/0000:00:01.0/0000:01:00.0";
  char dir[256], rel[512], a[PATH_MAX], b[PATH_MAX];
  link_is("0000:00:01.0", "pci0000:00/0000:00:01.0");
  link_is("0000:01:00.0", sw);
  for (int k = 0; k < 3; k++) {
    char port[16];
    snprintf(port, sizeof(port), "0000:02:%02x.0", k);
    char want[16];
    snprintf(want, sizeof(want), "0000:%02x:00.0", 3 + k);
    ck_assert_str_eq(gpu[k], want);
    snprintf(dir, sizeof(dir), "%s/%s", sw, port);
    link_is(port, dir);
    snprintf(dir, sizeof(dir), "%s/%s/%s", sw, port, gpu[k]);
    link_is(gpu[k], dir);
    /* driver and iommu_group links work from the deeper directory */
    snprintf(rel, sizeof(rel), "devices/%s/driver", dir);
    real(rel, a);
    real("bus/pci/drivers/amdgpu", b);
    ck_assert_str_eq(a, b);
    snprintf(rel, sizeof(rel), "bus/pci/drivers/amdgpu/%s", gpu[k]);
    real(rel, a);
    snprintf(rel, sizeof(rel), "devices/%s", dir);
    real(rel, b);
    ck_assert_str_eq(a, b);
    snprintf(rel, sizeof(rel), "devices/%s/iommu_group", dir);
    real(rel, a);
    snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d", 10 + k);
    real(rel, b);
    ck_assert_str_eq(a, b);
    /* the downstream port: a bridge with a type 1 header leading to the GPU's bus */
    uint8_t cfg[256];
    char cls[9] = {0};
    snprintf(rel, sizeof(rel), "bus/pci/devices/%s/config", port);
    read_file(rel, cfg, sizeof(cfg));
    snprintf(rel, sizeof(rel), "bus/pci/devices/%s/class", port);
    read_file(rel, cls, 8);
    ck_assert_str_eq(cls, "0x060400");
    ck_assert_uint_eq(cfg[BG_PCI_HEADER_TYPE] & 0x7f, 1);
    ck_assert_uint_eq(cfg[0x0b], 0x06); /* base class: bridge */
    ck_assert_uint_eq(cfg[0x0a], 0x04); /* PCI-to-PCI */
    ck_assert_uint_eq(cfg[0x18], 0x02); /* primary bus */
    ck_assert_uint_eq(cfg[0x19], 3 + k); /* secondary: the GPU's bus */
    ck_assert_uint_eq((cfg[0x42] >> 4) & 0xf, 6); /* PCIe downstream port */
  }
  uint8_t cfg[256];
  read_file("bus/pci/devices/0000:00:01.0/config", cfg, sizeof(cfg));
  ck_assert_uint_eq(cfg[BG_PCI_HEADER_TYPE] & 0x7f, 1);
  ck_assert_uint_eq(cfg[0x19], 1);
  ck_assert_uint_eq(cfg[0x1a], 5); /* subordinate: the last GPU's bus */
  ck_assert_uint_eq((cfg[0x42] >> 4) & 0xf, 4); /* root port */
  read_file("bus/pci/devices/0000:01:00.0/config", cfg, sizeof(cfg));
  ck_assert_uint_eq((cfg[0x42] >> 4) & 0xf, 5); /* switch upstream port */
  /* The GPU's config space still has its type 0 header. */
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s/config", gpu[0]);
  read_file(rel, cfg, sizeof(cfg));
  ck_assert_uint_eq(cfg[BG_PCI_HEADER_TYPE], 0);
  teardown();
}
END_TEST

START_TEST(split_layout) {
  build(MOCK_TOPO_SPLIT, 2);
  ck_assert_str_eq(gpu[0], "0000:03:00.0");
  ck_assert_str_eq(gpu[1], "0000:43:00.0");
  link_is(gpu[0], "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
  link_is(gpu[1], "pci0000:40/0000:40:01.0/0000:41:00.0/0000:42:00.0/0000:43:00.0");
  link_is("0000:40:01.0", "pci0000:40/0000:40:01.0");
  /* A device on a bus no bridge leads to stays flat (the MOCKUSB GPUs, the unit tests' fixture). */
  add_gpu("0000:13:00.0", -1);
  link_is("0000:13:00.0", "0000:13:00.0");
  teardown();
}
END_TEST

/* The default scan (GPUs only) lists exactly the n GPUs, never the bridges; BG_PCI_SCAN_ALL sees the bridges too. */
static void scan_case(mock_topology topo, int n, size_t nbridges) {
  build(topo, n);
  bg_pci_info *list;
  size_t got, seen;
  OK(bg_pci_enumerate(0, NULL, &list, &got, &seen));
  ck_assert_uint_eq(got, (size_t)n);
  ck_assert_uint_eq(seen, (size_t)n + nbridges);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(list[i].bdf, gpu[i]);
    ck_assert(list[i].is_gpu);
    ck_assert(list[i].bars_known);
    ck_assert_uint_eq(list[i].bars[0].size, VRAM);
    ck_assert_str_eq(list[i].driver, "amdgpu");
  }
  bg_pci_free(list);
  /* with the backends' chip tables (exact-id chips are GPUs whatever their class) */
  OK(bg_pci_scan(0, &list, &got, &seen));
  ck_assert_uint_eq(got, (size_t)n);
  for (int i = 0; i < n; i++) ck_assert_str_eq(list[i].bdf, gpu[i]);
  bg_pci_free(list);
  OK(bg_pci_enumerate(BG_PCI_SCAN_ALL, NULL, &list, &got, &seen));
  ck_assert_uint_eq(got, (size_t)n + nbridges);
  size_t bridges = 0;
  for (size_t i = 0; i < got; i++) bridges += list[i].class_code == 0x060400 && !list[i].is_gpu;
  ck_assert_uint_eq(bridges, nbridges);
  bg_pci_free(list);
  teardown();
}

START_TEST(scan_switch) { scan_case(MOCK_TOPO_SWITCH, 4, 2 + 4); }
END_TEST
START_TEST(scan_split) { scan_case(MOCK_TOPO_SPLIT, 3, 3 * 3); }
END_TEST

START_TEST(root_complex_switch) {
  build(MOCK_TOPO_SWITCH, 2);
  char rc[16], why[160];
  for (int i = 0; i < 2; i++) {
    OK(bg_pci_root_complex(gpu[i], rc, sizeof(rc)));
    ck_assert_str_eq(rc, "pci0000:00");
  }
  OK(bg_pci_root_complex("0000:01:00.0", rc, sizeof(rc)));
  ck_assert_str_eq(rc, "pci0000:00");
  OK(bg_pci_p2p_distance(gpu[0], gpu[1], why, sizeof(why)));
  ck_assert_str_eq(why, "same root complex pci0000:00, same switch (below 0000:01:00.0)");
  /* Another root port of the same root complex: P2P through the root complex, no switch in common. */
  ck_assert_ptr_nonnull(mock_sysfs_add_bridge(T, "0000:00:03.1", 0x1022, 0x1483, MOCK_PORT_ROOT, 0x20, 0x20));
  add_gpu("0000:20:00.0", -1);
  OK(bg_pci_p2p_distance(gpu[0], "0000:20:00.0", why, sizeof(why)));
  ck_assert_str_eq(why, "same root complex pci0000:00, no common switch");
  /* Errors: a flat device (no host bridge above it), no such device, no room. */
  add_gpu("0000:13:00.0", -1);
  ck_assert_int_eq(bg_pci_root_complex("0000:13:00.0", rc, sizeof(rc)), -BG_ENODEV);
  ck_assert_msg(strstr(bg_last_error(), "bus/pci/devices/0000:13:00.0 is not a PCI device link"), "%s",
                bg_last_error());
  ck_assert_int_eq(bg_pci_p2p_distance(gpu[0], "0000:13:00.0", why, sizeof(why)), -BG_ENODEV);
  ck_assert_msg(strstr(why, "not a PCI device link"), "%s", why);
  ck_assert_int_eq(bg_pci_root_complex("0000:77:00.0", rc, sizeof(rc)), -BG_ENODEV);
  ck_assert_msg(strstr(bg_last_error(), "bus/pci/devices/0000:77:00.0"), "%s", bg_last_error());
  ck_assert_int_eq(bg_pci_root_complex(gpu[0], rc, 4), -BG_EINVAL);
  teardown();
}
END_TEST

START_TEST(root_complex_split) {
  build(MOCK_TOPO_SPLIT, 2);
  char rc[16], why[160];
  OK(bg_pci_root_complex(gpu[0], rc, sizeof(rc)));
  ck_assert_str_eq(rc, "pci0000:00");
  OK(bg_pci_root_complex(gpu[1], rc, sizeof(rc)));
  ck_assert_str_eq(rc, "pci0000:40");
  ck_assert_int_eq(bg_pci_p2p_distance(gpu[0], gpu[1], why, sizeof(why)), -BG_ENOTSUP);
  ck_assert_str_eq(why, "different root complexes (pci0000:00, pci0000:40)");
  ck_assert_int_eq(bg_pci_p2p_distance(gpu[1], gpu[0], NULL, 0), -BG_ENOTSUP);
  OK(bg_pci_p2p_distance(gpu[1], gpu[1], why, sizeof(why)));
  teardown();
}
END_TEST

/* GPU 0 writes into GPU 1's BAR0 at the bus address bg_pci_bar_info gives (the resource start). */
static int peer_write(bg_pci_dev *d1, uint64_t off, const char *s, bg_pci_bar *bar) {
  OK(bg_pci_bar_info(d1, 0, bar));
  ck_assert_uint_eq(bar->size, VRAM);
  ck_assert(bar->base != 0);
  return mock_pci_dma_write(dev[0], bar->base + off, s, strlen(s));
}

START_TEST(peer_dma_switch) {
  build(MOCK_TOPO_SWITCH, 3);
  bg_pci_dev *d0, *d1, *d2;
  OK(bg_pci_open_sysfs(gpu[0], BG_PCI_UNBIND_DRIVER, &d0));
  OK(bg_pci_open_sysfs(gpu[1], BG_PCI_UNBIND_DRIVER, &d1));
  bg_pci_bar bar;
  /* across a page boundary: both pages land in GPU 1's VRAM */
  ck_assert_int_eq(peer_write(d1, 0x10ffe, "peer!", &bar), 0);
  ck_assert_mem_eq((uint8_t *)mock_pci_bar_mem(dev[1], 0) + 0x10ffe, "peer!", 5);
  char back[6] = {0};
  memcpy((uint8_t *)mock_pci_bar_mem(dev[1], 0) + VRAM - 5, "tail!", 5);
  ck_assert_int_eq(mock_pci_dma_read(dev[0], bar.base + VRAM - 5, back, 5), 0);
  ck_assert_str_eq(back, "tail!");
  ck_assert_uint_eq(mock_sysfs_nfail(T), 0);
  /* the peer's memory decoding off */
  uint32_t cmd;
  OK(bg_pci_cfg_read(d1, BG_PCI_COMMAND, 2, &cmd));
  OK(bg_pci_cfg_write(d1, BG_PCI_COMMAND, 2, cmd & ~BG_PCI_COMMAND_MEMORY));
  ck_assert_int_lt(peer_write(d1, 0, "x", &bar), 0);
  expect_failure("peer-to-peer write from 0000:03:00.0 to 0000:04:00.0 BAR0 at 0x0 with the peer's memory decoding off");
  OK(bg_pci_cfg_write(d1, BG_PCI_COMMAND, 2, cmd));
  /* a register/doorbell BAR (hooked) is not memory a peer may write */
  ck_assert_int_eq(mock_pci_hook(dev[1], 2, 0, 4096, NULL, NULL, NULL), 0);
  OK(bg_pci_bar_info(d1, 2, &bar));
  ck_assert_int_lt(mock_pci_dma_write(dev[0], bar.base + 8, "x", 1), 0);
  expect_failure("peer-to-peer write from 0000:03:00.0 to 0000:04:00.0 BAR2 at 0x8: a register/doorbell BAR");
  /* GPU 2 reaches GPU 1 too (another downstream port of the switch) */
  OK(bg_pci_open_sysfs(gpu[2], BG_PCI_UNBIND_DRIVER, &d2));
  OK(bg_pci_bar_info(d1, 0, &bar));
  ck_assert_int_eq(mock_pci_dma_write(dev[2], bar.base + 64, "two", 3), 0);
  ck_assert_mem_eq((uint8_t *)mock_pci_bar_mem(dev[1], 0) + 64, "two", 3);
  bg_pci_close(d2);
  bg_pci_close(d1);
  bg_pci_close(d0);
  teardown();
}
END_TEST

START_TEST(peer_dma_unbacked) {
  T = mock_sysfs_new();
  ck_assert_ptr_nonnull(T);
  ck_assert_int_eq(mock_sysfs_gpu_topology(T, MOCK_TOPO_SWITCH, 2, gpu), 0);
  dev[0] = add_gpu(gpu[0], -1);
  mock_pci_cfg c = {.bdf = gpu[1], .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
                    .bars = {[0] = {.size = 1u << 20, .is_64 = true, .prefetch = true}}, .iommu_group = -1,
                    .unemulated_bars = true};
  dev[1] = mock_sysfs_add(T, &c);
  ck_assert_ptr_nonnull(dev[1]);
  bg_pci_dev *d0, *d1;
  OK(bg_pci_open_sysfs(gpu[0], BG_PCI_UNBIND_DRIVER, &d0));
  OK(bg_pci_open_sysfs(gpu[1], 0, &d1));
  bg_pci_bar bar;
  OK(bg_pci_bar_info(d1, 0, &bar));
  ck_assert_int_lt(mock_pci_dma_write(dev[0], bar.base + 0x100, "x", 1), 0);
  expect_failure("peer-to-peer write from 0000:03:00.0 to 0000:04:00.0 BAR0 at 0x100 beyond its backed memory");
  bg_pci_close(d1);
  bg_pci_close(d0);
  teardown();
}
END_TEST

START_TEST(peer_dma_split) {
  build(MOCK_TOPO_SPLIT, 2);
  bg_pci_dev *d0, *d1;
  OK(bg_pci_open_sysfs(gpu[0], BG_PCI_UNBIND_DRIVER, &d0));
  OK(bg_pci_open_sysfs(gpu[1], BG_PCI_UNBIND_DRIVER, &d1));
  bg_pci_bar bar;
  ck_assert_int_lt(peer_write(d1, 0x2000, "peer!", &bar), 0);
  /* exactly one failure, naming both devices and root complexes; GPU 1's VRAM untouched */
  expect_failure("peer-to-peer write from 0000:03:00.0 (pci0000:00) to 0000:43:00.0 BAR0 (pci0000:40) is not routed "
                 "between root complexes");
  ck_assert(memcmp((uint8_t *)mock_pci_bar_mem(dev[1], 0) + 0x2000, "peer!", 5) != 0);
  /* host DMA is unaffected */
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(d0, 4096, 0, NULL, &s));
  ck_assert_int_eq(mock_pci_dma_write(dev[0], s.bus[0] + 8, "host", 4), 0);
  ck_assert_mem_eq((uint8_t *)s.view.ptr + 8, "host", 4);
  bg_pci_free_sysmem(d0, &s);
  bg_pci_close(d1);
  bg_pci_close(d0);
  teardown();
}
END_TEST

/* Unbind, bind, reset and remove go through the deeper links as before. */
START_TEST(admin_in_hierarchy) {
  build(MOCK_TOPO_SWITCH, 2);
  char was[64];
  OK(bg_pci_unbind(gpu[1], was, sizeof(was)));
  ck_assert_str_eq(was, "amdgpu");
  ck_assert_str_eq(mock_pci_driver(dev[1]), "");
  OK(bg_pci_bind(gpu[1], "amdgpu"));
  ck_assert_str_eq(mock_pci_driver(dev[1]), "amdgpu");
  OK(bg_pci_unbind(gpu[1], was, sizeof(was)));
  OK(bg_pci_reset_bdf(gpu[1]));
  ck_assert_uint_eq(mock_pci_resets(dev[1]), 1);
  ck_assert_int_eq(mock_sysfs_vanish(T, gpu[1]), 0);
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/%s", mock_sysfs_root(T),
           gpu[1]);
  ck_assert_int_ne(access(path, F_OK), 0);
  snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0", mock_sysfs_root(T));
  ck_assert_int_eq(access(path, F_OK), 0); /* its port stays */
  bg_pci_info *list;
  size_t got;
  OK(bg_pci_enumerate(0, NULL, &list, &got, NULL));
  ck_assert_uint_eq(got, 1);
  bg_pci_free(list);
  teardown();
}
END_TEST

/* VFIO binds vfio-pci (driver_override, drivers_probe) and finds the IOMMU group through the deeper links. */
START_TEST(vfio_in_hierarchy) {
  build(MOCK_TOPO_SWITCH, 2);
  ck_assert_int_eq(mock_sysfs_add_vfio(T, MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES), 0);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(gpu[1], BG_PCI_UNBIND_DRIVER | BG_PCI_VFIO, &d));
  ck_assert_str_eq(mock_pci_driver(dev[1]), "vfio-pci");
  ck_assert(bg_pci_has_irq(d));
  bg_pci_close(d);
  /* Taking it from its driver (vfio-pci included) without asking for VFIO: sysfs, no interrupts. */
  OK(bg_pci_open_sysfs(gpu[1], BG_PCI_UNBIND_DRIVER, &d));
  ck_assert(!bg_pci_has_irq(d));
  bg_pci_close(d);
  teardown();
}
END_TEST

/* ---------------- the plugin: MOCKGPU_TOPOLOGY (each test forks: one plugin start per process) ---------------- */

static void plugin_env(const char *topo, const char *count) {
  if (topo) setenv("MOCKGPU_TOPOLOGY", topo, 1);
  else unsetenv("MOCKGPU_TOPOLOGY");
  setenv("MOCKGPU_COUNT", count, 1);
  setenv("MOCKGPU_VRAM_MB", "64", 1);
}

START_TEST(plugin_split) {
  plugin_env("split", "2");
  bg_mock_devices md;
  OK(bg_mock_plugin_start("MOCKPCI", "AMD", &md));
  ck_assert_int_eq(md.count, 2);
  ck_assert_str_eq(md.bdf[0], "0000:03:00.0");
  ck_assert_str_eq(md.bdf[1], "0000:43:00.0");
  setenv("BG_SYSFS_ROOT", md.sysfs_root, 1);
  char rc[16], why[160];
  OK(bg_pci_root_complex(md.bdf[1], rc, sizeof(rc)));
  ck_assert_str_eq(rc, "pci0000:40");
  ck_assert_int_eq(bg_pci_p2p_distance(md.bdf[0], md.bdf[1], why, sizeof(why)), -BG_ENOTSUP);
  ck_assert_str_eq(why, "different root complexes (pci0000:00, pci0000:40)");
  bg_pci_info *list;
  size_t got, seen;
  OK(bg_pci_scan(0, &list, &got, &seen));
  ck_assert_uint_eq(got, 2);
  ck_assert_uint_eq(seen, 2 + 3 * 2);
  ck_assert_str_eq(list[1].bdf, "0000:43:00.0");
  bg_pci_free(list);
}
END_TEST

START_TEST(plugin_switch_and_usb) {
  plugin_env(NULL, "2"); /* default: switch */
  bg_mock_devices md, mu;
  OK(bg_mock_plugin_start("MOCKPCI", "AMD", &md));
  OK(bg_mock_plugin_start("MOCKUSB", "AMD", &mu));
  ck_assert_str_eq(md.bdf[1], "0000:04:00.0");
  ck_assert_str_eq(mu.bdf[0], "0000:13:00.0");
  setenv("BG_SYSFS_ROOT", md.sysfs_root, 1);
  char why[160], rc[16];
  OK(bg_pci_p2p_distance(md.bdf[0], md.bdf[1], why, sizeof(why)));
  ck_assert_str_eq(why, "same root complex pci0000:00, same switch (below 0000:01:00.0)");
  /* the MOCKUSB GPUs are not in the PCI hierarchy: reached over USB */
  ck_assert_int_eq(bg_pci_root_complex(mu.bdf[0], rc, sizeof(rc)), -BG_ENODEV);
  bg_pci_info *list;
  size_t got;
  OK(bg_pci_scan(0, &list, &got, NULL));
  ck_assert_uint_eq(got, 4);
  bg_pci_free(list);
}
END_TEST

START_TEST(plugin_bad_topology) {
  plugin_env("ring", "2");
  bg_mock_devices md;
  ck_assert_int_eq(bg_mock_plugin_start("MOCKPCI", "AMD", &md), -BG_EINVAL);
  ck_assert_msg(strstr(bg_last_error(), "MOCKGPU_TOPOLOGY must be switch or split, not ring"), "%s", bg_last_error());
}
END_TEST

int main(void) {
  Suite *s = suite_create("pci-topology");
  TCase *tc = tcase_create("tree");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, switch_layout);
  tcase_add_test(tc, split_layout);
  tcase_add_test(tc, scan_switch);
  tcase_add_test(tc, scan_split);
  tcase_add_test(tc, root_complex_switch);
  tcase_add_test(tc, root_complex_split);
  tcase_add_test(tc, peer_dma_switch);
  tcase_add_test(tc, peer_dma_unbacked);
  tcase_add_test(tc, peer_dma_split);
  tcase_add_test(tc, admin_in_hierarchy);
  tcase_add_test(tc, vfio_in_hierarchy);
  suite_add_tcase(s, tc);
  TCase *tp = tcase_create("plugin");
  tcase_set_timeout(tp, 120);
  tcase_add_test(tp, plugin_split);
  tcase_add_test(tp, plugin_switch_and_usb);
  tcase_add_test(tp, plugin_bad_topology);
  suite_add_tcase(s, tp);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK); /* a tree, and the plugin's devices, per process */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
