/* tests/mockgpu/mock_topo.c: the PCI hierarchy above the emulated GPUs (mock_sysfs.h "Topology"): host bridges
 * (devices/pciDDDD:BB), root ports and switch ports as PCI-to-PCI bridges with type 1 headers, laid out the way
 * Linux shows a multi-GPU machine (drivers/pci/probe.c: a function's directory is below its bus's bridge). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "platform/pci_regs.h"
#include "mock_internal.h"
#include "sysfs_tree.h"

/* Type 1 header bytes (PCI-to-PCI Bridge Architecture Specification 1.2, 3.2; Linux include/uapi/linux/pci_regs.h). */
enum {
  HEADER_TYPE_BRIDGE = 0x01,
  PRIMARY_BUS = 0x18, SECONDARY_BUS = 0x19, SUBORDINATE_BUS = 0x1a,
  IO_BASE = 0x1c, IO_LIMIT = 0x1d,
  MEMORY_BASE = 0x20, MEMORY_LIMIT = 0x22,
  PREF_MEMORY_BASE = 0x24, PREF_MEMORY_LIMIT = 0x26,
  BRIDGE_CLASS = 0x060400,  /* bridge, PCI-to-PCI, normal decode */
  EXP_FLAGS = 0x42,         /* PCIe capability (at 0x40 in mock_pci.c) flags: version 2, port type in bits 7:4 */
};

int mock_topology_parse(const char *s, mock_topology *out) {
  if (!s || !*s || strcmp(s, "switch") == 0) *out = MOCK_TOPO_SWITCH;
  else if (strcmp(s, "split") == 0) *out = MOCK_TOPO_SPLIT;
  else return -1;
  return 0;
}

int mock_sysfs_add_root(mock_sysfs *t, unsigned domain, unsigned bus) {
  unsigned key = domain << 8 | (bus & 0xff);
  for (size_t i = 0; i < t->nroots; i++)
    if (t->roots[i] == key) return 0;
  if (t->nroots == MOCK_MAX_ROOTS) return mock_fail(t, "mock_sysfs: more than %d host bridges", MOCK_MAX_ROOTS);
  char rel[64];
  snprintf(rel, sizeof(rel), "devices/pci%04x:%02x", domain, bus & 0xff);
  int r = sysfs_tree_mkdir(t->root, rel);
  if (r < 0) return mock_fail(t, "mock_sysfs: cannot create %s: %s", rel, strerror(-r));
  t->roots[t->nroots++] = key;
  return 0;
}

static void put16(uint8_t *c, unsigned off, uint16_t v) { memcpy(c + off, &v, 2); }

mock_pci *mock_sysfs_add_bridge(mock_sysfs *t, const char *bdf, uint16_t vendor, uint16_t device, mock_port_type type,
                                unsigned sec, unsigned sub) {
  if (sec > 0xff || sub > 0xff || sub < sec) {
    mock_fail(t, "mock_sysfs: bridge %s: bus range %u..%u is not within 0..255", bdf ? bdf : "(null)", sec, sub);
    return NULL;
  }
  mock_pci_cfg cfg = {.bdf = bdf, .vendor = vendor, .device = device, .subvendor = vendor, .subdevice = device,
                      .class_code = BRIDGE_CLASS, .driver = "pcieport", .link_speed = "16.0 GT/s PCIe",
                      .link_width = 16, .no_reset = true, .iommu_group = -1};
  mock_pci *m = mock_sysfs_add(t, &cfg);
  if (!m) return NULL;
  unsigned dom = 0, bus = 0;
  sscanf(bdf, "%x:%x", &dom, &bus);
  m->bridge = true;
  m->sec_bus = (uint8_t)sec;
  m->sub_bus = (uint8_t)sub;
  uint8_t *c = m->config;
  c[BG_PCI_HEADER_TYPE] = HEADER_TYPE_BRIDGE;
  c[PRIMARY_BUS] = (uint8_t)bus;
  c[SECONDARY_BUS] = (uint8_t)sec;
  c[SUBORDINATE_BUS] = (uint8_t)sub;
  m->wmask[PRIMARY_BUS] = m->wmask[SECONDARY_BUS] = m->wmask[SUBORDINATE_BUS] = 0xff;
  /* No windows yet (base above limit: closed); the emulated GPUs' BARs are placed by mock_pci.c alone. */
  c[IO_BASE] = 0xf0;
  c[IO_LIMIT] = 0x00;
  put16(c, MEMORY_BASE, 0xfff0);
  put16(c, MEMORY_LIMIT, 0x0000);
  put16(c, PREF_MEMORY_BASE, 0xfff1);  /* low bits 1: 64-bit prefetchable window */
  put16(c, PREF_MEMORY_LIMIT, 0x0001);
  put16(c, EXP_FLAGS, (uint16_t)(0x0002 | (unsigned)type << 4));
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/config", m->dir);
  if (mock_put(t, rel, c, sizeof(m->config), 0) < 0) {
    mock_fail(t, "mock_sysfs: cannot write the config space of bridge %s", bdf);
    return NULL;
  }
  return m;
}

/* Root port (AMD Starship/Matisse GPP bridge 1022:1483) and switch ports (the AMD/ATI PCIe switch of Navi boards:
 * upstream 1002:1478, downstream 1002:1479), ids as lspci shows them on such machines. */
static int add_chain(mock_sysfs *t, unsigned base, unsigned first_down, int ndown) {
  char bdf[32];
  unsigned last = base + 3 + first_down + (unsigned)ndown - 1;
  if (last > 0xff) return mock_fail(t, "mock_sysfs: GPU bus 0x%x beyond 0xff", last);
  int r = mock_sysfs_add_root(t, 0, base);
  snprintf(bdf, sizeof(bdf), "0000:%02x:01.0", base);
  if (r == 0 && !mock_sysfs_add_bridge(t, bdf, 0x1022, 0x1483, MOCK_PORT_ROOT, base + 1, last)) r = -EIO;
  snprintf(bdf, sizeof(bdf), "0000:%02x:00.0", base + 1);
  if (r == 0 && !mock_sysfs_add_bridge(t, bdf, 0x1002, 0x1478, MOCK_PORT_UPSTREAM, base + 2, last)) r = -EIO;
  for (int k = 0; r == 0 && k < ndown; k++) {
    unsigned sec = base + 3 + first_down + (unsigned)k;
    snprintf(bdf, sizeof(bdf), "0000:%02x:%02x.0", (base + 2) & 0xffu, (first_down + (unsigned)k) & 0x1fu);
    if (!mock_sysfs_add_bridge(t, bdf, 0x1002, 0x1479, MOCK_PORT_DOWNSTREAM, sec, sec)) r = -EIO;
  }
  return r;
}

int mock_sysfs_gpu_topology(mock_sysfs *t, mock_topology topo, int count, char (*bdf)[16]) {
  if (count < 1 || count > 29) return mock_fail(t, "mock_sysfs: %d GPUs in a topology (1..29)", count);
  if (topo == MOCK_TOPO_SWITCH) {
    int r = add_chain(t, 0, 0, count);
    for (int i = 0; r == 0 && i < count; i++) snprintf(bdf[i], 16, "0000:%02x:00.0", 3 + i);
    return r;
  }
  /* Root complexes as on a two-socket machine (pci0000:00, pci0000:40, ...; 0x20 apart beyond four). */
  unsigned step = count <= 4 ? 0x40 : count <= 8 ? 0x20 : 0;
  if (!step) return mock_fail(t, "mock_sysfs: %d GPUs do not fit split root complexes (1..8)", count);
  for (int i = 0; i < count; i++) {
    unsigned base = step * (unsigned)i;
    int r = add_chain(t, base, 0, 1);
    if (r < 0) return r;
    snprintf(bdf[i], 16, "0000:%02x:00.0", base + 3);
  }
  return 0;
}
