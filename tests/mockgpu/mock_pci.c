/* tests/mockgpu/mock_pci.c: the emulated PCI function (mock_pci.h): configuration space, BARs,
 * register hooks, resize, reset, DMA. Config-space layout constants: platform/pci_regs.h. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "mock_internal.h"
#include "mock_shm.h"

static const bg_mmio_ops view_ops;

/* ---------------- configuration space ---------------- */

static void put16(uint8_t *c, uint32_t off, uint16_t v) { memcpy(c + off, &v, 2); }
static void put32(uint8_t *c, uint32_t off, uint32_t v) { memcpy(c + off, &v, 4); }

static void set_wmask32(mock_pci *m, uint32_t off, uint32_t mask) { put32(m->wmask, off, mask); }

static void mark_ident(mock_pci *m, uint32_t off, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) m->ident[off + i] = true;
}

/* Link speed code of PCIe LNKSTA from the sysfs speed text ("16.0 GT/s PCIe" -> 4). */
static unsigned speed_code(const char *s) {
  double gts = s ? atof(s) : 0;
  return gts >= 64 ? 6 : gts >= 32 ? 5 : gts >= 16 ? 4 : gts >= 8 ? 3 : gts >= 5 ? 2 : 1;
}

/* BAR register bits: address bits are writable down to the size, type bits are fixed. */
static void write_bar_regs(mock_pci *m, int i) {
  uint32_t off = BG_PCI_BASE_ADDRESS_0 + 4 * (uint32_t)i;
  const mock_pci_bar_cfg *b = &m->cfg.bars[i];
  uint64_t size = m->bar_size[i], base = m->bar_base[i];
  if (i > 0 && m->cfg.bars[i - 1].is_64 && m->bar_size[i - 1]) return;  /* upper half of BAR i-1 */
  if (!size) {
    put32(m->config, off, 0);
    set_wmask32(m, off, 0);
    return;
  }
  if (b->io) {
    put32(m->config, off, (uint32_t)base | BG_PCI_BASE_ADDRESS_SPACE_IO);
    set_wmask32(m, off, (uint32_t)~(size - 1) & ~3u);
    return;
  }
  uint32_t type = (b->is_64 ? BG_PCI_BASE_ADDRESS_MEM_TYPE_64 : 0) | (b->prefetch ? BG_PCI_BASE_ADDRESS_MEM_PREFETCH : 0);
  put32(m->config, off, ((uint32_t)base & BG_PCI_BASE_ADDRESS_MEM_MASK) | type);
  set_wmask32(m, off, (uint32_t)~(size - 1) & BG_PCI_BASE_ADDRESS_MEM_MASK);
  if (b->is_64) {
    put32(m->config, off + 4, (uint32_t)(base >> 32));
    set_wmask32(m, off + 4, (uint32_t)(~(size - 1) >> 32));
  }
}

static void write_rebar_regs(mock_pci *m) {
  if (!m->rebar_off) return;
  uint32_t k = 0, n = 0;
  for (int i = 0; i < 6; i++) n += m->cfg.bars[i].rebar_sizes != 0;
  for (int i = 0; i < 6; i++) {
    uint32_t sizes = m->cfg.bars[i].rebar_sizes;
    if (!sizes) continue;
    uint32_t at = m->rebar_off + BG_PCI_REBAR_CAP + 8 * k;
    unsigned cur = (unsigned)__builtin_ctzll(m->bar_size[i] >> 20);
    put32(m->config, at, sizes << 4);
    put32(m->config, at + 4, (uint32_t)i | (k == 0 ? n << BG_PCI_REBAR_CTRL_NBAR_SHIFT : 0) |
                                 (cur << BG_PCI_REBAR_CTRL_BAR_SHIFT));
    mark_ident(m, at, 8);
    k++;
  }
}

static void init_config(mock_pci *m) {
  uint8_t *c = m->config;
  const mock_pci_cfg *g = &m->cfg;
  put16(c, BG_PCI_VENDOR_ID, g->vendor);
  put16(c, BG_PCI_DEVICE_ID, g->device);
  put16(c, BG_PCI_STATUS, BG_PCI_STATUS_CAP_LIST);
  put32(c, BG_PCI_CLASS_REVISION, g->class_code << 8 | g->revision);
  put16(c, BG_PCI_SUBSYSTEM_VENDOR_ID, g->subvendor);
  put16(c, BG_PCI_SUBSYSTEM_ID, g->subdevice);
  c[BG_PCI_CAPABILITY_LIST] = 0x40;
  c[BG_PCI_INTERRUPT_PIN] = 1;
  mark_ident(m, 0, 4);
  mark_ident(m, BG_PCI_CLASS_REVISION, 4);
  mark_ident(m, BG_PCI_HEADER_TYPE, 1);
  mark_ident(m, BG_PCI_SUBSYSTEM_VENDOR_ID, 4);
  mark_ident(m, BG_PCI_CAPABILITY_LIST, 1);
  /* Command: I/O, memory, bus master, parity, SERR, INTx disable. */
  put16(m->wmask, BG_PCI_COMMAND, 0x0547);
  m->wmask[0x0c] = m->wmask[0x0d] = m->wmask[BG_PCI_INTERRUPT_LINE] = 0xff;
  /* PCIe capability at 0x40 (device/link control writable), MSI at 0x80 (enable, address, data). */
  put16(c, 0x40, (uint16_t)(BG_PCI_CAP_ID_EXP | (g->no_msi ? 0 : 0x80 << 8)));
  put16(c, 0x42, 0x0002);
  put16(c, 0x40 + BG_PCI_EXP_LNKSTA, (uint16_t)(speed_code(g->link_speed) | (unsigned)g->link_width << 4));
  put16(m->wmask, 0x48, 0xffff);
  put16(m->wmask, 0x50, 0xffff);
  mark_ident(m, 0x40, 2);
  if (!g->no_msi) {
    put16(c, 0x80, BG_PCI_CAP_ID_MSI);
    put16(c, 0x82, 0x0080);
    m->wmask[0x82] = 0x01;
    memset(m->wmask + 0x84, 0xff, 12);
    mark_ident(m, 0x80, 2);
  }
  for (int i = 0; i < 6; i++) write_bar_regs(m, i);
  for (int i = 0; i < 6; i++)
    if (g->bars[i].rebar_sizes) m->rebar_off = BG_PCI_EXT_CAP_START;
  if (m->rebar_off) {
    put32(c, m->rebar_off, BG_PCI_EXT_CAP_ID_REBAR | 1u << 16);
    mark_ident(m, m->rebar_off, 4);
    write_rebar_regs(m);
  }
}

int mock_pci_config_written(mock_pci *m, uint64_t off, const uint8_t *data, size_t n) {
  int r = 0;
  if (off > sizeof(m->config) || n > sizeof(m->config) - off)
    return mock_fail(m->tree, "%s: config write of %zu bytes at 0x%" PRIx64 " beyond 4 KiB", m->bdf, n, off);
  for (size_t i = 0; i < n; i++) {
    size_t at = off + i;
    if (m->ident[at] && data[i] != m->config[at] && r == 0)
      r = mock_fail(m->tree, "%s: config write of 0x%02x to read-only identity byte 0x%zx (holds 0x%02x)", m->bdf,
                    data[i], at, m->config[at]);
    m->config[at] = (uint8_t)((m->config[at] & ~m->wmask[at]) | (data[i] & m->wmask[at]));
  }
  /* Show what the hardware holds now, as a read-back would. */
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/config", m->dir);
  int p = mock_put(m->tree, rel, m->config + off, n, (long)off);
  return r < 0 ? -EIO : p;
}

/* ---------------- files ---------------- */

static int put_text(mock_pci *m, const char *attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int put_text(mock_pci *m, const char *attr, const char *fmt, ...) {
  char rel[320], text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  snprintf(rel, sizeof(rel), "%s/%s", m->dir, attr);
  return mock_put(m->tree, rel, text, strlen(text), -1);
}

static int write_resource(mock_pci *m) {
  char text[1024];
  size_t len = 0;
  for (int i = 0; i < 7; i++) {
    uint64_t s = i < 6 ? m->bar_size[i] : 0, start = 0, end = 0, flags = 0;
    if (s) {
      const mock_pci_bar_cfg *b = &m->cfg.bars[i];
      start = m->bar_base[i];
      end = start + s - 1;
      flags = b->io ? BG_IORESOURCE_IO : BG_IORESOURCE_MEM | (b->prefetch ? BG_IORESOURCE_PREFETCH : 0) |
                                            (b->is_64 ? BG_IORESOURCE_MEM_64 : 0);
    }
    len += (size_t)snprintf(text + len, sizeof(text) - len, "0x%016" PRIx64 " 0x%016" PRIx64 " 0x%016" PRIx64 "\n",
                            start, end, flags);
  }
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/resource", m->dir);
  return mock_put(m->tree, rel, text, len, -1);
}

/* resourceN is as large as the BAR (sparse), so an mmap of an unemulated BAR is plain memory. */
static int write_bar_files(mock_pci *m, int i) {
  const mock_pci_bar_cfg *b = &m->cfg.bars[i];
  char attr[32];
  int r = 0;
  if (!m->bar_size[i]) return 0;
  snprintf(attr, sizeof(attr), "resource%d", i);
  r |= put_text(m, attr, "%s", "");
  char rel[320], path[PATH_MAX];
  snprintf(rel, sizeof(rel), "%s/%s", m->dir, attr);
  if (mock_path(m->tree, rel, path) < 0 || (!b->io && truncate(path, (off_t)m->bar_size[i]) != 0)) r = -1;
  if (b->prefetch && !b->io) {
    snprintf(attr, sizeof(attr), "resource%d_wc", i);
    r |= put_text(m, attr, "%s", "");
    snprintf(rel, sizeof(rel), "%s/%s", m->dir, attr);
    if (mock_path(m->tree, rel, path) < 0 || truncate(path, (off_t)m->bar_size[i]) != 0) r = -1;
  }
  if (b->rebar_sizes) {
    snprintf(attr, sizeof(attr), "resource%d_resize", i);
    r |= put_text(m, attr, "%016llx\n", (unsigned long long)b->rebar_sizes);
  }
  return r;
}

int mock_pci_write_files(mock_pci *m) {
  const mock_pci_cfg *g = &m->cfg;
  int r = 0;
  r |= put_text(m, "vendor", "0x%04x\n", g->vendor);
  r |= put_text(m, "device", "0x%04x\n", g->device);
  r |= put_text(m, "class", "0x%06x\n", g->class_code);
  r |= put_text(m, "subsystem_vendor", "0x%04x\n", g->subvendor);
  r |= put_text(m, "subsystem_device", "0x%04x\n", g->subdevice);
  r |= put_text(m, "revision", "0x%02x\n", g->revision);
  r |= put_text(m, "enable", "0\n");
  r |= put_text(m, "remove", "%s", "");
  r |= put_text(m, "driver_override", "(null)\n");
  if (!g->no_reset) r |= put_text(m, "reset", "%s", "");
  if (g->link_speed) {
    r |= put_text(m, "current_link_speed", "%s\n", g->link_speed);
    r |= put_text(m, "current_link_width", "%d\n", g->link_width);
    r |= put_text(m, "max_link_speed", "%s\n", g->link_speed);
    r |= put_text(m, "max_link_width", "%d\n", g->link_width);
  }
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/config", m->dir);
  r |= mock_put(m->tree, rel, m->config, sizeof(m->config), -1);
  r |= write_resource(m);
  for (int i = 0; i < 6; i++) r |= write_bar_files(m, i);
  return r ? -1 : 0;
}

/* ---------------- BARs ---------------- */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* Addresses the firmware would assign: 64-bit BARs high, 32-bit below 4 GiB. */
static void place_bar(mock_pci *m, int i) {
  mock_sysfs *t = m->tree;
  const mock_pci_bar_cfg *b = &m->cfg.bars[i];
  uint64_t *next = b->io ? &t->next_io : b->is_64 ? &t->next_mem64 : &t->next_mem32;
  m->bar_base[i] = align_up(*next, m->bar_size[i]);
  *next = m->bar_base[i] + m->bar_size[i];
}

static int alloc_backing(mock_pci *m, int i) {
  if (!m->bar_size[i] || m->cfg.bars[i].io) return 0;
  /* shared: the GPU model maps it a second time as the host CPU's view (amd_hdp.h) */
  void *p = mmap(NULL, m->bar_size[i], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return -1;
  m->bar_mem[i] = p;
  return 0;
}

static bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

static int check_cfg(mock_sysfs *t, const mock_pci_cfg *cfg) {
  if (!cfg->bdf || strlen(cfg->bdf) != 12) return mock_fail(t, "mock_pci: bad bdf");
  for (int i = 0; i < 6; i++) {
    const mock_pci_bar_cfg *b = &cfg->bars[i];
    if (!b->size) continue;
    if (!pow2(b->size) || b->size < 16) return mock_fail(t, "mock_pci %s: BAR%d size not a power of two", cfg->bdf, i);
    if (b->is_64 && (i == 5 || cfg->bars[i + 1].size))
      return mock_fail(t, "mock_pci %s: 64-bit BAR%d needs BAR%d free", cfg->bdf, i, i + 1);
    if (b->rebar_sizes && (b->size < (1u << 20) || !((b->rebar_sizes >> __builtin_ctzll(b->size >> 20)) & 1)))
      return mock_fail(t, "mock_pci %s: BAR%d size is not among its resizable sizes", cfg->bdf, i);
  }
  return 0;
}

mock_pci *mock_pci_create(mock_sysfs *t, const mock_pci_cfg *cfg) {
  if (check_cfg(t, cfg) < 0) return NULL;
  mock_pci *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  m->tree = t;
  m->cfg = *cfg;
  snprintf(m->bdf, sizeof(m->bdf), "%s", cfg->bdf);
  snprintf(m->link_speed, sizeof(m->link_speed), "%s", cfg->link_speed ? cfg->link_speed : "");
  m->cfg.bdf = m->bdf;
  m->cfg.link_speed = cfg->link_speed ? m->link_speed : NULL;
  m->cfg.driver = NULL;
  for (int i = 0; i < 6; i++) {
    m->bar_size[i] = cfg->bars[i].size;
    if (m->bar_size[i]) place_bar(m, i);
    if (alloc_backing(m, i) < 0) {
      mock_pci_destroy(m);
      return NULL;
    }
  }
  init_config(m);
  return m;
}

void mock_pci_destroy(mock_pci *m) {
  if (!m) return;
  mock_pci_set_dma_target(m, NULL, NULL);
  for (int i = 0; i < 6; i++)
    if (m->bar_mem[i]) munmap(m->bar_mem[i], m->bar_size[i]);
  free(m->hooks);
  free(m);
}

int mock_pci_hook(mock_pci *m, int bar, uint64_t off, uint64_t len, mock_pci_rd_fn rd, mock_pci_wr_fn wr, void *user) {
  if (bar < 0 || bar > 5 || !len || off > m->bar_size[bar] || len > m->bar_size[bar] - off)
    return mock_fail(m->tree, "%s: hook 0x%" PRIx64 "+0x%" PRIx64 " outside BAR%d", m->bdf, off, len, bar);
  size_t pos = 0;
  while (pos < m->nhooks && (m->hooks[pos].bar < bar || (m->hooks[pos].bar == bar && m->hooks[pos].off < off))) pos++;
  const mock_hook *prev = pos ? &m->hooks[pos - 1] : NULL, *next = pos < m->nhooks ? &m->hooks[pos] : NULL;
  if ((prev && prev->bar == bar && prev->off + prev->len > off) || (next && next->bar == bar && off + len > next->off))
    return mock_fail(m->tree, "%s: hook 0x%" PRIx64 "+0x%" PRIx64 " of BAR%d overlaps another", m->bdf, off, len, bar);
  if (m->nhooks == m->caphooks) {
    size_t cap = m->caphooks ? m->caphooks * 2 : 16;
    mock_hook *nh = realloc(m->hooks, cap * sizeof(*nh));
    if (!nh) return -BG_ENOMEM;
    m->hooks = nh;
    m->caphooks = cap;
  }
  memmove(m->hooks + pos + 1, m->hooks + pos, (m->nhooks - pos) * sizeof(*m->hooks));
  m->hooks[pos] = (mock_hook){bar, off, len, rd, wr, user};
  m->nhooks++;
  return 0;
}

/* The hook overlapping [off, off+n) of bar, or NULL (binary search over sorted ranges). */
static const mock_hook *find_hook(const mock_pci *m, int bar, uint64_t off, size_t n) {
  size_t lo = 0, hi = m->nhooks;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const mock_hook *h = &m->hooks[mid];
    if (h->bar < bar || (h->bar == bar && h->off + h->len <= off)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < m->nhooks && m->hooks[lo].bar == bar && m->hooks[lo].off < off + n) return &m->hooks[lo];
  return NULL;
}

static int hooked_access(mock_pci *m, const mock_hook *h, int bar, uint64_t off, void *buf, size_t n, bool wr) {
  if ((n != 1 && n != 2 && n != 4 && n != 8) || off % n || off < h->off || off + n > h->off + h->len)
    return mock_fail(m->tree, "%s: BAR%d: %s of %zu bytes at 0x%" PRIx64 " straddles or misaligns the register "
                     "range 0x%" PRIx64 "+0x%" PRIx64, m->bdf, bar, wr ? "write" : "read", n, off, h->off, h->len);
  if (wr) {
    uint64_t v = 0;
    memcpy(&v, buf, n);
    if (!h->wr) return mock_fail(m->tree, "%s: BAR%d: write to read-only register 0x%" PRIx64, m->bdf, bar, off);
    h->wr(h->user, m, bar, off, v, (unsigned)n);
  } else {
    if (!h->rd) return mock_fail(m->tree, "%s: BAR%d: read of write-only register 0x%" PRIx64, m->bdf, bar, off);
    uint64_t v = h->rd(h->user, m, bar, off, (unsigned)n);
    memcpy(buf, &v, n);
  }
  return 0;
}

static int view_access(void *ctx, uint64_t off, void *buf, size_t n, bool wr) {
  mock_view *v = ctx;
  mock_pci *m = v->m;
  /* A removed device answers reads with all ones and drops writes, like a real one. */
  if (m->gone || m->dead) {
    if (!wr) memset(buf, 0xff, n);
    return 0;
  }
  if (off > v->size || n > v->size - off)
    return mock_fail(m->tree, "%s: BAR%d: %s of %zu bytes at view offset 0x%" PRIx64 " is outside the 0x%" PRIx64
                     "-byte view at 0x%" PRIx64, m->bdf, v->bar, wr ? "write" : "read", n, off, v->size, v->off);
  uint64_t at = v->off + off;
  if (at > m->bar_size[v->bar] || n > m->bar_size[v->bar] - at)
    return mock_fail(m->tree, "%s: %s of %zu bytes at 0x%" PRIx64 " is outside BAR%d (0x%" PRIx64 " bytes)", m->bdf,
                     wr ? "write" : "read", n, at, v->bar, m->bar_size[v->bar]);
  uint16_t cmd = mock_pci_command(m);
  if (!(cmd & BG_PCI_COMMAND_MEMORY))
    return mock_fail(m->tree, "%s: BAR%d %s at 0x%" PRIx64 " with memory decoding off (command 0x%04x)", m->bdf,
                     v->bar, wr ? "write" : "read", at, cmd);
  const mock_hook *h = find_hook(m, v->bar, at, n);
  if (h) return hooked_access(m, h, v->bar, at, buf, n, wr);
  if (m->strict[v->bar])
    return mock_fail(m->tree, "%s: BAR%d: %s of %zu bytes at 0x%" PRIx64 " hits no modelled register", m->bdf, v->bar,
                     wr ? "write" : "read", n, at);
  if (wr) memcpy(m->bar_mem[v->bar] + at, buf, n);
  else memcpy(buf, m->bar_mem[v->bar] + at, n);
  return 0;
}

static int view_read(void *ctx, uint64_t off, void *dst, size_t n) { return view_access(ctx, off, dst, n, false); }
static int view_write(void *ctx, uint64_t off, const void *src, size_t n) {
  return view_access(ctx, off, (void *)src, n, true);
}
static const bg_mmio_ops view_ops = {view_read, view_write};

static int map_view(mock_pci *m, int bar, uint64_t off, uint64_t size, bool cpu, bg_mmio *out) {
  if (m->gone) return -ENODEV;
  if (!m->bar_mem[bar] || m->cfg.unemulated_bars) return 1;
  if (off > m->bar_size[bar] || size > m->bar_size[bar] - off) {
    mock_fail(m->tree, "%s: map of BAR%d 0x%" PRIx64 "+0x%" PRIx64 " beyond its 0x%" PRIx64 " bytes", m->bdf, bar, off,
              size, m->bar_size[bar]);
    return -EINVAL;
  }
  mock_view *v = malloc(sizeof(*v));
  if (!v) return -ENOMEM;
  *v = (mock_view){m, bar, off, size};
  m->views[bar]++;
  uint8_t *base = cpu && m->cpu_view[bar] ? m->cpu_view[bar] : m->bar_mem[bar];
  if (m->direct[bar]) *out = (bg_mmio){base + off, size, NULL, v};
  else *out = (bg_mmio){NULL, size, &view_ops, v};
  // cppcheck-suppress memleak ; v lives on in out->ctx until mock_pci_unmap
  return 0;
}

int mock_pci_map(mock_pci *m, int bar, uint64_t off, uint64_t size, bg_mmio *out) {
  return map_view(m, bar, off, size, false, out);
}
int mock_pci_map_cpu(mock_pci *m, int bar, uint64_t off, uint64_t size, bg_mmio *out) {
  return map_view(m, bar, off, size, true, out);
}

void mock_pci_unmap(bg_mmio *mm) {
  mock_view *v = mm->ctx;
  if (!v) return;
  v->m->views[v->bar]--;
  free(v);
}

/* ---------------- resize, reset ---------------- */

int mock_pci_resize(mock_pci *m, int bar, const char *val) {
  const mock_pci_bar_cfg *b = &m->cfg.bars[bar];
  char attr[32], *end;
  snprintf(attr, sizeof(attr), "resource%d_resize", bar);
  /* Reading the attribute shows the mask again, whatever was written. */
  put_text(m, attr, "%016llx\n", (unsigned long long)b->rebar_sizes);
  long n = strtol(val, &end, 10);
  if (end == val || (*end && *end != '\n') || n < 0 || n > 31 || !((b->rebar_sizes >> n) & 1)) return -EINVAL;
  if (m->driver[0]) return -EBUSY;  /* the kernel refuses while a driver is bound */
  if (m->views[bar]) {
    mock_fail(m->tree, "%s: BAR%d resized while %u views of it are mapped", m->bdf, bar, m->views[bar]);
    return -EBUSY;
  }
  uint64_t size = (1ull << 20) << n;
  if (m->cfg.bridge_window && size > m->cfg.bridge_window) return -ENOSPC;
  if (m->cfg.resize_ignored || size == m->bar_size[bar]) return 0;
  munmap(m->bar_mem[bar], m->bar_size[bar]);
  m->bar_mem[bar] = NULL;
  m->bar_size[bar] = size;
  place_bar(m, bar);
  if (alloc_backing(m, bar) < 0) return -ENOMEM;
  write_bar_regs(m, bar);
  write_rebar_regs(m);
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/config", m->dir);
  int r = mock_put(m->tree, rel, m->config, sizeof(m->config), 0);
  if (r == 0) r = write_resource(m);
  if (r == 0) r = write_bar_files(m, bar);
  return r < 0 ? -EIO : 0;
}

int mock_pci_reset_written(mock_pci *m, const char *val) {
  if (strcmp(val, "1") != 0 && strcmp(val, "1\n") != 0) return -EINVAL;
  m->resets++;
  /* The kernel saves and restores config space around the reset; BAR contents are lost. */
  for (int i = 0; i < 6; i++)
    if (m->bar_mem[i] && !m->views[i]) madvise(m->bar_mem[i], m->bar_size[i], MADV_REMOVE); /* shared: zeroes */
  if (m->reset_fn) m->reset_fn(m->reset_user, m);
  return 0;
}

/* ---------------- DMA ---------------- */

/* DMA targets other than the tree (mock_pci_set_dma_target), by device. */
#define MAX_DMA_TARGETS 16
static struct {
  const mock_pci *m;
  mock_pci_dma_target_fn fn;
  void *user;
} dma_targets[MAX_DMA_TARGETS];
static pthread_mutex_t dma_targets_lock = PTHREAD_MUTEX_INITIALIZER;  /* GPU engine threads DMA too */

void mock_pci_set_dma_target(mock_pci *m, mock_pci_dma_target_fn fn, void *user) {
  int slot = -1;
  pthread_mutex_lock(&dma_targets_lock);
  for (int i = 0; i < MAX_DMA_TARGETS; i++) {
    if (dma_targets[i].m == m) {
      slot = i;
      break;
    }
    if (!dma_targets[i].m && slot < 0) slot = i;
  }
  if (slot >= 0 && (fn || dma_targets[slot].m == m)) {
    dma_targets[slot].m = fn ? m : NULL;
    dma_targets[slot].fn = fn;
    dma_targets[slot].user = user;
  }
  pthread_mutex_unlock(&dma_targets_lock);
}

/* Host memory behind bus for the device, and the bytes contiguous from there (at most to the page end). */
static uint8_t *dma_host(mock_pci *m, uint64_t bus, size_t *avail, bool wr, bool *refused) {
  *avail = 4096 - (bus & 4095);
  mock_pci_dma_target_fn fn = NULL;
  void *user = NULL;
  pthread_mutex_lock(&dma_targets_lock);
  for (int i = 0; i < MAX_DMA_TARGETS && !fn; i++)
    if (dma_targets[i].m == m) fn = dma_targets[i].fn, user = dma_targets[i].user;
  pthread_mutex_unlock(&dma_targets_lock);
  *refused = false;
  return fn ? fn(user, bus, avail) : mock_dma_host_rw(m->tree, m, bus, wr ? "write" : "read", refused);
}

static int dma(mock_pci *m, uint64_t bus, uint8_t *buf, size_t n, bool wr) {
  if (m->gone) return mock_fail(m->tree, "%s: DMA after the device vanished", m->bdf);
  if (!(mock_pci_command(m) & BG_PCI_COMMAND_MASTER))
    return mock_fail(m->tree, "%s: DMA %s bus 0x%" PRIx64 " with bus mastering off", m->bdf, wr ? "to" : "from", bus);
  while (n) {
    size_t k;
    bool refused;
    uint8_t *host = dma_host(m, bus, &k, wr, &refused);
    if (refused) return -EIO; /* the failure names why (peer_bar) */
    if (!host || !k)
      return mock_fail(m->tree, "%s: DMA %s unmapped bus address 0x%" PRIx64, m->bdf, wr ? "to" : "from", bus);
    if (k > n) k = n;
    if (wr) memcpy(host, buf, k);
    else memcpy(buf, host, k);
    bus += k;
    buf += k;
    n -= k;
  }
  return 0;
}

int mock_pci_dma_read(mock_pci *m, uint64_t bus, void *dst, size_t n) { return dma(m, bus, dst, n, false); }
int mock_pci_dma_write(mock_pci *m, uint64_t bus, const void *src, size_t n) {
  return dma(m, bus, (uint8_t *)src, n, true);
}

/* ---------------- small accessors ---------------- */

void mock_pci_bar_strict(mock_pci *m, int bar, bool on) { m->strict[bar] = on; }
void mock_pci_bar_direct(mock_pci *m, int bar, bool on) { m->direct[bar] = on; }
void *mock_pci_bar_mem(mock_pci *m, int bar) { return m->bar_mem[bar]; }
void mock_pci_bar_cpu_view(mock_pci *m, int bar, void *view) { m->cpu_view[bar] = view; }
uint64_t mock_pci_bar_size(const mock_pci *m, int bar) { return m->bar_size[bar]; }
unsigned mock_pci_bar_views(const mock_pci *m, int bar) { return m->views[bar]; }
void mock_pci_set_dead(mock_pci *m, bool dead) { m->dead = dead; }
unsigned mock_pci_resets(const mock_pci *m) { return m->resets; }
void mock_pci_on_reset(mock_pci *m, void (*fn)(void *user, mock_pci *m), void *user) {
  m->reset_fn = fn;
  m->reset_user = user;
}
const char *mock_pci_bdf(const mock_pci *m) { return m->bdf; }
uint16_t mock_pci_command(const mock_pci *m) {
  uint16_t v;
  memcpy(&v, m->config + BG_PCI_COMMAND, 2);
  return v;
}
const uint8_t *mock_pci_config(const mock_pci *m) { return m->config; }
bool mock_pci_enabled(const mock_pci *m) { return m->enabled; }
const char *mock_pci_driver(const mock_pci *m) { return m->driver; }
