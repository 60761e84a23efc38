/* tests/mockgpu/asm24_fabric.c: the PCIe side of the emulated bridge (asm24.h): four PCI-PCI bridge
 * ports (type 1 headers) on buses 0..3 and the GPU (a mock_pci) on bus 4, config and memory TLPs. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "asm24_internal.h"
#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "mock_internal.h"

/* Type-1 header offsets (PCI-to-PCI bridge spec). */
enum { P_BUSES = 0x18, P_MEM_BASE = 0x20, P_MEM_LIMIT = 0x22, P_PREF_BASE = 0x24, P_PREF_LIMIT = 0x26,
       P_PREF_BASE_HI = 0x28, P_PREF_LIMIT_HI = 0x2C, P_BRIDGE_CTL = 0x3E };
/* The ports' identity: ASMedia's PCI vendor id; the device id is the model's choice. */
#define PORT_VENDOR 0x1B21u
#define PORT_DEVICE 0x2464u

static uint32_t rd(const uint8_t *c, unsigned off, unsigned n) {
  uint32_t v = 0;
  memcpy(&v, c + off, n);
  return v;
}

static void wr16(uint8_t *c, unsigned off, uint16_t v) { memcpy(c + off, &v, 2); }

void m24_fabric_init(mock_asm24 *m) {
  uint8_t *w = m->port_wmask;
  memset(w, 0, 4096);
  wr16(w, BG_PCI_COMMAND, 0x0547);
  memset(w + P_BUSES, 0xff, 4);
  wr16(w, P_MEM_BASE, 0xfff0);
  wr16(w, P_MEM_LIMIT, 0xfff0);
  wr16(w, P_PREF_BASE, 0xfff0);
  wr16(w, P_PREF_LIMIT, 0xfff0);
  memset(w + P_PREF_BASE_HI, 0xff, 8);
  wr16(w, P_BRIDGE_CTL, 0xffff);
  for (int p = 0; p < M24_NPORTS; p++) {
    uint8_t *c = m->port_cfg[p];
    memset(c, 0, 4096);
    wr16(c, BG_PCI_VENDOR_ID, PORT_VENDOR);
    wr16(c, BG_PCI_DEVICE_ID, PORT_DEVICE);
    c[BG_PCI_CLASS_REVISION + 3] = 0x06; /* bridge */
    c[BG_PCI_CLASS_REVISION + 2] = 0x04; /* PCI-to-PCI */
    c[BG_PCI_HEADER_TYPE] = 0x01;
    wr16(c, P_PREF_BASE, 0x0001);        /* 64-bit prefetchable window */
    wr16(c, P_PREF_LIMIT, 0x0001);
  }
}

void m24_fabric_free(mock_asm24 *m) {
  for (int i = 0; i < 6; i++)
    if (m->gpu_view[i].ops || m->gpu_view[i].ptr) mock_pci_unmap(&m->gpu_view[i]);
  memset(m->gpu_view, 0, sizeof(m->gpu_view));
}

/* The port a config request to bus reaches through (bus == port: the port itself); -1: not routed. */
static int route_bus(const mock_asm24 *m, unsigned bus) {
  for (unsigned cur = 0; cur < bus; cur++) {
    if (cur >= M24_NPORTS) return -1;
    const uint8_t *c = m->port_cfg[cur];
    unsigned sec = c[P_BUSES + 1], sub = c[P_BUSES + 2];
    if (sec != cur + 1 || bus < sec || bus > sub) return -1;
  }
  return (int)bus;
}

static void port_cfg_write(mock_asm24 *m, int port, unsigned off, uint8_t b) {
  uint8_t *c = m->port_cfg[port];
  c[off] = (uint8_t)((c[off] & ~m->port_wmask[off]) | (b & m->port_wmask[off]));
}

/* Resizable BAR control writes go to the model's resize (config writes to them are refused there). */
static bool gpu_rebar_write(mock_asm24 *m, unsigned off, const uint8_t *data, unsigned n) {
  mock_pci *g = m->gpu;
  if (!g->rebar_off || off + n <= g->rebar_off + 8 || off >= g->rebar_off + 8 + 8 * 6) return false;
  unsigned ctl_off = g->rebar_off + 8 + ((off - g->rebar_off - 8) & ~7u);
  if (off != ctl_off || n != 4) {
    m24_fail(m, "GPU: Resizable BAR control written with %u bytes at 0x%x (expected one dword at 0x%x)", n, off,
             ctl_off);
    return true;
  }
  uint32_t v;
  memcpy(&v, data, 4);
  int bar = (int)(rd(g->config, ctl_off, 4) & 7u);
  unsigned idx = (v >> 8) & 0x3f;
  if (m->gpu_view[bar].ops || m->gpu_view[bar].ptr) mock_pci_unmap(&m->gpu_view[bar]);
  memset(&m->gpu_view[bar], 0, sizeof(m->gpu_view[bar]));
  char val[16];
  snprintf(val, sizeof(val), "%u", idx);
  int r = mock_pci_resize(g, bar, val);
  if (r < 0) m24_fail(m, "GPU: BAR%d resize to 2^%u MiB refused (%d)", bar, idx, r);
  return true;
}

static unsigned cfg_tlp(mock_asm24 *m, bool write, bool type1, uint64_t addr, unsigned lane, unsigned size,
                        uint32_t value, uint32_t *dword) {
  unsigned bus = (unsigned)(addr >> 24) & 0xff, dev = (unsigned)(addr >> 19) & 31, fn = (unsigned)(addr >> 16) & 7;
  unsigned reg = (unsigned)addr & 0xffc;
  m->st.cfg_tlps++;
  if (type1 != (bus > 0)) {
    m24_fail(m, "Cfg%s%d to bus %u: type %d is for %s", write ? "Wr" : "Rd", type1, bus, type1,
             type1 ? "buses behind a bridge" : "bus 0");
    return 1;
  }
  int port = route_bus(m, bus);
  if (port < 0 || dev != 0 || fn != 0) return 1; /* nothing answers: UR (probing may do this) */
  uint8_t bytes[4];
  memcpy(bytes, &value, 4);
  if (bus < M24_NPORTS) {
    if (write)
      for (unsigned i = 0; i < size; i++) port_cfg_write(m, port, reg + lane + i, bytes[lane + i]);
    *dword = rd(m->port_cfg[port], reg, 4);
    return 0;
  }
  if (bus != M24_GPU_BUS) return 1;
  if (write && !gpu_rebar_write(m, reg + lane, bytes + lane, size))
    mock_pci_config_written(m->gpu, reg + lane, bytes + lane, size);
  *dword = rd(mock_pci_config(m->gpu), reg, 4);
  return 0;
}

/* A BAR of the GPU as the bridge assigned it: address from its config registers. */
static uint64_t gpu_bar_addr(const mock_asm24 *m, int i) {
  const uint8_t *c = mock_pci_config(m->gpu);
  uint32_t lo = rd(c, BG_PCI_BASE_ADDRESS_0 + 4 * (unsigned)i, 4);
  uint64_t a = lo & 0xfffffff0u;
  if ((lo & 6u) == BG_PCI_BASE_ADDRESS_MEM_TYPE_64 && i < 5)
    a |= (uint64_t)rd(c, BG_PCI_BASE_ADDRESS_0 + 4 * (unsigned)i + 4, 4) << 32;
  return a;
}

static bool in_window(uint64_t a, size_t n, uint64_t base, uint64_t limit) {
  return base <= limit && a >= base && a + n - 1 <= limit && a + n - 1 >= a;
}

int m24_route_mem(mock_asm24 *m, uint64_t addr, size_t n, int *bar, uint64_t *off) {
  if (!n) return m24_fail(m, "memory TLP of 0 bytes at 0x%" PRIx64, addr);
  for (int p = 0; p < M24_NPORTS; p++) {
    const uint8_t *c = m->port_cfg[p];
    uint64_t mb = (uint64_t)(rd(c, P_MEM_BASE, 2) & 0xfff0) << 16;
    uint64_t ml = (uint64_t)(rd(c, P_MEM_LIMIT, 2) & 0xfff0) << 16 | 0xfffff;
    uint64_t pb = (uint64_t)(rd(c, P_PREF_BASE, 2) & 0xfff0) << 16 | (uint64_t)rd(c, P_PREF_BASE_HI, 4) << 32;
    uint64_t pl = ((uint64_t)(rd(c, P_PREF_LIMIT, 2) & 0xfff0) << 16 | 0xfffff) |
                  (uint64_t)rd(c, P_PREF_LIMIT_HI, 4) << 32;
    if (!(rd(c, BG_PCI_COMMAND, 2) & BG_PCI_COMMAND_MEMORY))
      return m24_fail(m, "memory TLP at 0x%" PRIx64 ": bridge port on bus %d has memory forwarding off", addr, p);
    if (!in_window(addr, n, mb, ml) && !in_window(addr, n, pb, pl))
      return m24_fail(m, "memory TLP of %zu bytes at 0x%" PRIx64 ": outside the windows of the bridge port on bus %d "
                      "(0x%" PRIx64 "-0x%" PRIx64 ", prefetchable 0x%" PRIx64 "-0x%" PRIx64 ")", n, addr, p, mb, ml,
                      pb, pl);
  }
  for (int i = 0; i < 6; i++) {
    uint64_t size = mock_pci_bar_size(m->gpu, i), base = gpu_bar_addr(m, i);
    if (!size || !base || addr < base || addr - base >= size) continue;
    if (n > size - (addr - base))
      return m24_fail(m, "memory TLP of %zu bytes at 0x%" PRIx64 " runs past the end of GPU BAR%d", n, addr, i);
    *bar = i;
    *off = addr - base;
    return 0;
  }
  return m24_fail(m, "memory TLP of %zu bytes at 0x%" PRIx64 ": no GPU BAR is assigned there", n, addr);
}

static bg_mmio *gpu_view(mock_asm24 *m, int bar) {
  bg_mmio *v = &m->gpu_view[bar];
  if (!v->ops && !v->ptr) {
    int r = mock_pci_map(m->gpu, bar, 0, mock_pci_bar_size(m->gpu, bar), v);
    if (r != 0) {
      m24_fail(m, "GPU BAR%d cannot be mapped by the model (%d)", bar, r);
      memset(v, 0, sizeof(*v));
      return NULL;
    }
  }
  return v;
}

static int access(mock_asm24 *m, int bar, uint64_t off, uint8_t *buf, size_t n, bool write) {
  bg_mmio *v = gpu_view(m, bar);
  if (!v) return -BG_EIO;
  if (!v->ops) {
    if (write) memcpy((uint8_t *)v->ptr + off, buf, n);
    else memcpy(buf, (const uint8_t *)v->ptr + off, n);
    return 0;
  }
  return write ? v->ops->write(v->ctx, off, buf, n) : v->ops->read(v->ctx, off, buf, n);
}

int m24_mem_stream(mock_asm24 *m, uint64_t addr, uint8_t *buf, size_t n, bool write) {
  int bar;
  uint64_t off;
  int r = m24_route_mem(m, addr, n, &bar, &off);
  if (r < 0) return r;
  bg_mmio *v = gpu_view(m, bar);
  if (!v) return -BG_EIO;
  if (!v->ops) return access(m, bar, off, buf, n, write);
  /* Register BARs: one access per dword, except one 8-byte aligned qword (a 64-bit doorbell). */
  if (n == 8 && off % 8 == 0) return access(m, bar, off, buf, 8, write);
  for (size_t i = 0; i < n && r == 0; i += 4) r = access(m, bar, off + i, buf + i, 4, write);
  return r;
}

void m24_tlp(mock_asm24 *m, uint8_t fmt, uint8_t be, uint64_t addr, uint32_t value, uint8_t cpl[8]) {
  memset(cpl, 0, 8);
  unsigned lane = be ? (unsigned)__builtin_ctz(be) : 0, size = (unsigned)__builtin_popcount(be);
  bool write = fmt & 0x40, cfg = (fmt & 0xBE) == 0x04, mem = (fmt & 0x9F) == 0x00;
  unsigned status = 0;
  uint32_t dword = 0;
  if (!be || be > 0xF || ((be >> lane) & ((be >> lane) + 1)) != 0 || (addr & 3)) {
    m24_fail(m, "TLP 0x%02x at 0x%" PRIx64 ": byte enables 0x%x are not one contiguous run in a dword-aligned "
             "request", fmt, addr, be);
    status = 1;
  } else if (!mock_asm24_link_up(m)) {
    m24_fail(m, "TLP 0x%02x at 0x%" PRIx64 " with the PCIe link down (power it on with 0xF3 first)", fmt, addr);
    status = 1;
  } else if (cfg) {
    status = cfg_tlp(m, write, fmt & 1, addr, lane, size, value, &dword);
  } else if (mem) {
    m->st.mem_tlps++;
    uint8_t bytes[4];
    memcpy(bytes, &value, 4);
    int bar;
    uint64_t off;
    if (m24_route_mem(m, addr + lane, size, &bar, &off) < 0) {
      status = 1;
    } else if (size == 3) {
      for (unsigned i = 0; i < 3 && status == 0; i++)
        status = access(m, bar, off + i, bytes + lane + i, 1, write) < 0;
    } else {
      status = access(m, bar, off, bytes + lane, size, write) < 0;
    }
    memcpy(&dword, bytes, 4);
  } else {
    m24_fail(m, "TLP fmt_type 0x%02x is not modelled (memory and config only)", fmt);
    status = 1;
  }
  memcpy(cpl, &dword, 4);
  cpl[4] = (uint8_t)(status << 5);
}
