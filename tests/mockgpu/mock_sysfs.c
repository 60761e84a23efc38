/* tests/mockgpu/mock_sysfs.c: the fake sysfs tree and the hooks that connect platform/pci's sysfs
 * code to the emulated devices (mock_sysfs.h, platform/pci_hook.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_hook.h"
#include "platform/pci_regs.h"
#include "platform/sysmem.h"
#include "mock_internal.h"
#include "mock_vfio.h"
#include "sysfs_tree.h"

/* ---------------- files (sysfs_tree.c, relative to this tree's root) ---------------- */

int mock_path(const mock_sysfs *t, const char *rel, char *buf) { return sysfs_tree_path(t->root, rel, buf); }

int mock_put(mock_sysfs *t, const char *rel, const void *data, size_t n, long off) {
  return sysfs_tree_put(t->root, rel, data, n, off);
}

static int mkdir_rel(mock_sysfs *t, const char *rel) { return sysfs_tree_mkdir(t->root, rel); }

static void unlink_rel(mock_sysfs *t, const char *rel) { sysfs_tree_unlink(t->root, rel); }

void mock_rm_tree(const char *path) { sysfs_tree_rm(path); }
int mock_tmpdir_sweep(void) { return sysfs_tree_tmpdir_sweep(); }
int mock_tmpdir_new(const char *tag, char *buf, size_t n) { return sysfs_tree_tmpdir_new(tag, buf, n); }

/* ---------------- failures ---------------- */

int mock_fail(mock_sysfs *t, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  t->nfail++;
  size_t len = strlen(t->failures);
  snprintf(t->failures + len, sizeof(t->failures) - len, "%s\n", msg);
  BG_LOG(1, "mockgpu: strictness failure: %s", msg);
  return bg_error(BG_EIO, "mockgpu: %s", msg);
}

const char *mock_sysfs_last_open(const mock_sysfs *t) { return t->last_open; }
unsigned mock_sysfs_nfail(const mock_sysfs *t) { return t->nfail; }
const char *mock_sysfs_failures(const mock_sysfs *t) { return t->failures; }
void mock_sysfs_clear_failures(mock_sysfs *t) {
  t->nfail = 0;
  t->failures[0] = '\0';
}

void mock_sysfs_fail_open(mock_sysfs *t, const char *suffix, int err) {
  if (!err) {
    t->nfaults = 0;
    return;
  }
  if (t->nfaults == MOCK_MAX_FAULTS) return;
  snprintf(t->faults[t->nfaults].suffix, sizeof(t->faults[0].suffix), "%s", suffix);
  t->faults[t->nfaults++].err = err;
}

/* ---------------- devices and drivers ---------------- */

mock_pci *mock_sysfs_find(mock_sysfs *t, const char *bdf) {
  for (size_t i = 0; i < t->ndevs; i++)
    if (strcmp(t->devs[i]->bdf, bdf) == 0 && !t->devs[i]->gone) return t->devs[i];
  return NULL;
}

int mock_sysfs_add_driver(mock_sysfs *t, const char *name) {
  char rel[320];
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", name);
  int r = mkdir_rel(t, rel);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/bind", name);
  if (r == 0) r = mock_put(t, rel, "", 0, -1);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/unbind", name);
  if (r == 0) r = mock_put(t, rel, "", 0, -1);
  return r;
}

static bool driver_exists(mock_sysfs *t, const char *name) {
  char rel[320], path[PATH_MAX];
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", name);
  return mock_path(t, rel, path) == 0 && access(path, F_OK) == 0;
}

static int bind_links(mock_pci *m, const char *drv) {
  char rel[320], target[320];
  snprintf(rel, sizeof(rel), "%s/driver", m->dir);
  snprintf(target, sizeof(target), "bus/pci/drivers/%s", drv);
  int r = mock_link(m->tree, target, rel);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/%s", drv, m->bdf);
  if (r == 0) r = mock_link(m->tree, m->dir, rel);
  if (r == 0) snprintf(m->driver, sizeof(m->driver), "%s", drv);
  return r;
}

static void unbind_links(mock_pci *m) {
  char rel[320];
  if (!m->driver[0]) return;
  snprintf(rel, sizeof(rel), "%s/driver", m->dir);
  unlink_rel(m->tree, rel);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s/%s", m->driver, m->bdf);
  unlink_rel(m->tree, rel);
  m->driver[0] = '\0';
}

int mock_link(mock_sysfs *t, const char *target, const char *rel) { return sysfs_tree_link(t->root, target, rel); }

/* Linux puts a function below the bridge whose secondary bus it sits on, and a function on a root bus below that
 * host bridge's "pciDDDD:BB" directory (drivers/pci/probe.c pci_setup_device: dev->dev.parent = bus->bridge). A bus
 * nothing leads to (the flat trees of the unit tests, MOCKUSB GPUs) keeps the device directly in devices/. */
void mock_sysfs_place(mock_sysfs *t, mock_pci *m) {
  unsigned dom = 0, bus = 0;
  snprintf(m->dir, sizeof(m->dir), "devices/%s", m->bdf);
  m->rc[0] = '\0';
  if (sscanf(m->bdf, "%x:%x", &dom, &bus) != 2) return;
  for (size_t i = 0; i < t->ndevs; i++) {
    const mock_pci *p = t->devs[i];
    unsigned pd = 0;
    if (!p->bridge || p->gone || p->sec_bus != bus || sscanf(p->bdf, "%x", &pd) != 1 || pd != dom) continue;
    char dir[sizeof(m->dir)];
    if (snprintf(dir, sizeof(dir), "%s/%s", p->dir, m->bdf) >= (int)sizeof(dir)) break; /* too deep: stays flat */
    memcpy(m->dir, dir, sizeof(dir));
    snprintf(m->rc, sizeof(m->rc), "%s", p->rc);
    return;
  }
  for (size_t i = 0; i < t->nroots; i++)
    if (t->roots[i] == (dom << 8 | bus)) {
      snprintf(m->rc, sizeof(m->rc), "pci%04x:%02x", dom, bus);
      snprintf(m->dir, sizeof(m->dir), "devices/%s/%s", m->rc, m->bdf);
      return;
    }
}

static int vfio_group_node(mock_sysfs *t, int group);

/* MOCKGPU_VFIO=1|type1 (an IOMMU: group nodes /dev/vfio/<N>) or noiommu (/dev/vfio/noiommu-<N>): every display
 * function added without a driver gets an IOMMU group of its own and is bound to vfio-pci, so DEV=MOCKPCI+AMD opens
 * it through VFIO (platform/pci_vfio.h). 0 when unset. */
static unsigned env_vfio(void) {
  const char *v = getenv("MOCKGPU_VFIO");
  if (!v || !*v || strcmp(v, "0") == 0) return 0;
  return MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES | (strcmp(v, "noiommu") == 0 ? 0 : MOCK_VFIO_TYPE1);
}

mock_pci *mock_sysfs_add(mock_sysfs *t, const mock_pci_cfg *given) {
  if (t->ndevs == MOCK_MAX_DEVS) {
    mock_fail(t, "mock_sysfs: more than %d devices", MOCK_MAX_DEVS);
    return NULL;
  }
  mock_pci_cfg vcfg = *given;
  const mock_pci_cfg *cfg = &vcfg;
  unsigned venv = env_vfio();
  bool to_vfio = venv && (given->class_code >> 16) == 0x03 && !given->driver;
  if (to_vfio) {
    if (!t->vfio_flags && mock_sysfs_add_vfio(t, venv) != 0) {
      mock_fail(t, "mock_sysfs: MOCKGPU_VFIO: cannot create the VFIO module and nodes");
      return NULL;
    }
    if (vcfg.iommu_group < 0) vcfg.iommu_group = 100 + (int)t->ndevs;
    vcfg.driver = "vfio-pci";
  }
  mock_pci *m = mock_pci_create(t, cfg);
  if (!m) return NULL;
  char rel[320];
  mock_sysfs_place(t, m);
  int r = mkdir_rel(t, m->dir);
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", m->bdf);
  if (r == 0) r = mock_link(t, m->dir, rel);
  if (r == 0) r = mock_pci_write_files(m);
  if (r == 0 && cfg->driver && !driver_exists(t, cfg->driver)) r = mock_sysfs_add_driver(t, cfg->driver);
  if (r == 0 && cfg->driver) r = bind_links(m, cfg->driver);
  if (r == 0 && cfg->iommu_group >= 0) {
    char target[64];
    snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d", cfg->iommu_group);
    r = mkdir_rel(t, rel);
    snprintf(rel, sizeof(rel), "%s/iommu_group", m->dir);
    snprintf(target, sizeof(target), "kernel/iommu_groups/%d", cfg->iommu_group);
    if (r == 0) r = mock_link(t, target, rel);
    /* kernel/iommu_groups/<n>/devices/<bdf> -> the device, as the IOMMU core links the group's members. */
    snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", cfg->iommu_group);
    if (r == 0) r = mkdir_rel(t, rel);
    snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices/%s", cfg->iommu_group, m->bdf);
    if (r == 0) r = mock_link(t, m->dir, rel);
    if (r == 0 && (t->vfio_flags & MOCK_VFIO_DEVNODES)) r = vfio_group_node(t, cfg->iommu_group);
  }
  if (r != 0) {
    mock_fail(t, "mock_sysfs: cannot create the files of %s: %s", m->bdf, strerror(r < 0 ? -r : EIO));
    mock_pci_destroy(m);
    return NULL;
  }
  t->devs[t->ndevs++] = m;
  return m;
}

int mock_sysfs_vanish(mock_sysfs *t, const char *bdf) {
  mock_pci *m = mock_sysfs_find(t, bdf);
  if (!m) return -ENODEV;
  /* An open config fd keeps reading this inode: make it read all ones first. */
  uint8_t ones[4096];
  memset(ones, 0xff, sizeof(ones));
  char rel[320], path[PATH_MAX];
  snprintf(rel, sizeof(rel), "%s/config", m->dir);
  mock_put(t, rel, ones, sizeof(ones), 0);
  unbind_links(m);
  m->gone = true;
  snprintf(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
  unlink_rel(t, rel);
  if (mock_path(t, m->dir, path) == 0) mock_rm_tree(path);
  return 0;
}

/* The group's node: /dev/vfio/<n> behind an IOMMU, /dev/vfio/noiommu-<n> in no-IOMMU mode (none when it is off). */
static int vfio_group_node(mock_sysfs *t, int group) {
  char rel[64];
  if (t->vfio_flags & MOCK_VFIO_NOIOMMU_OFF) return 0;
  snprintf(rel, sizeof(rel), t->vfio_flags & MOCK_VFIO_TYPE1 ? "dev/vfio/%d" : "dev/vfio/noiommu-%d", group);
  return mock_put(t, rel, "", 0, -1);
}

int mock_sysfs_add_vfio(mock_sysfs *t, unsigned flags) {
  int r = 0;
  if (flags & MOCK_VFIO_MODULE) {
    r = mkdir_rel(t, "module/vfio");
    if (r == 0) r = mkdir_rel(t, "module/vfio/parameters");
    const char *mode = flags & MOCK_VFIO_NOIOMMU_OFF ? "N\n" : "Y\n";
    if (r == 0) r = mock_put(t, "module/vfio/parameters/enable_unsafe_noiommu_mode", mode, 2, -1);
    if (r == 0 && !driver_exists(t, "vfio-pci")) r = mock_sysfs_add_driver(t, "vfio-pci");
    /* The type1 backend's limit on a container's mappings (Linux vfio_iommu_type1.c), read at each SET_IOMMU. */
    const char *lim = getenv("MOCKGPU_VFIO_DMA_LIMIT");
    char val[24];
    snprintf(val, sizeof(val), "%s\n", lim && *lim ? lim : "65535");
    if (r == 0 && (flags & MOCK_VFIO_TYPE1)) r = mkdir_rel(t, "module/vfio_iommu_type1");
    if (r == 0 && (flags & MOCK_VFIO_TYPE1)) r = mkdir_rel(t, "module/vfio_iommu_type1/parameters");
    if (r == 0 && (flags & MOCK_VFIO_TYPE1))
      r = mock_put(t, "module/vfio_iommu_type1/parameters/dma_entry_limit", val, strlen(val), -1);
  }
  t->vfio_flags = flags;
  if (r == 0) r = mock_vfio_init(t);
  if (r == 0 && (flags & MOCK_VFIO_DEVNODES)) {
    r = mkdir_rel(t, "dev");
    if (r == 0) r = mkdir_rel(t, "dev/vfio");
    if (r == 0) r = mock_put(t, "dev/vfio/vfio", "", 0, -1);
    for (size_t i = 0; r == 0 && i < t->ndevs; i++)
      if (t->devs[i]->cfg.iommu_group >= 0) r = vfio_group_node(t, t->devs[i]->cfg.iommu_group);
    char path[PATH_MAX];
    if (r == 0) r = mock_path(t, "dev", path);
    if (r == 0) setenv("BG_DEV_ROOT", path, 1);
  }
  return r;
}

/* ---------------- hooks: opens ---------------- */

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Attributes the kernel lets root open for writing; the rest have no store method (EACCES). */
static bool writable(const char *rel) {
  static const char *const names[] = {"config", "enable", "reset", "remove", "driver_override", "bind", "unbind",
                                      "drivers_probe", "enable_unsafe_noiommu_mode"};
  const char *base = strrchr(rel, '/');
  base = base ? base + 1 : rel;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(base, names[i]) == 0) return true;
  int bar, len = 0;
  if (sscanf(base, "resource%d%n", &bar, &len) == 1 && bar >= 0 && bar < 6)
    return base[len] == '\0' || strcmp(base + len, "_wc") == 0 || strcmp(base + len, "_resize") == 0;
  return false;
}

static int hook_open(void *ctx, const char *rel, int oflags) {
  mock_sysfs *t = ctx;
  snprintf(t->last_open, sizeof(t->last_open), "%s", rel);
  for (size_t i = 0; i < t->nfaults; i++)
    if (ends_with(rel, t->faults[i].suffix)) return -t->faults[i].err;
  if ((oflags & O_ACCMODE) != O_RDONLY && !writable(rel)) {
    mock_fail(t, "open of read-only attribute %s for writing", rel);
    return -EACCES;
  }
  return 0;
}

/* ---------------- hooks: writes ---------------- */

static int enable_written(mock_pci *m, const char *val) {
  if (strcmp(val, "1") != 0 && strcmp(val, "0") != 0) return -EINVAL;
  m->enabled = val[0] == '1';
  /* pci_enable_device turns on decoding of the BARs that have resources. */
  if (m->enabled) {
    uint8_t cmd = m->config[4] | 0x02;
    mock_pci_config_written(m, 4, &cmd, 1);
  }
  char rel[320];
  snprintf(rel, sizeof(rel), "%s/enable", m->dir);
  return mock_put(m->tree, rel, m->enabled ? "1\n" : "0\n", 2, -1);
}

static int device_written(mock_sysfs *t, const char *rest, uint64_t off, const void *data, size_t n, const char *val) {
  char bdf[16], rel[320];
  if (strlen(rest) < 14 || rest[12] != '/') return mock_fail(t, "write to %s: not a device attribute", rest);
  memcpy(bdf, rest, 12);
  bdf[12] = '\0';
  const char *attr = rest + 13;
  mock_pci *m = mock_sysfs_find(t, bdf);
  if (!m) return -ENODEV;
  int bar, len = 0;
  if (strcmp(attr, "config") == 0) return mock_pci_config_written(m, off, data, n) < 0 ? -EIO : 0;
  if (strcmp(attr, "enable") == 0) return enable_written(m, val);
  if (strcmp(attr, "reset") == 0) {
    snprintf(rel, sizeof(rel), "%s/reset", m->dir);
    mock_put(t, rel, "", 0, -1);
    return mock_pci_reset_written(m, val);
  }
  if (strcmp(attr, "remove") == 0) return strcmp(val, "1") == 0 ? mock_sysfs_vanish(t, bdf) : -EINVAL;
  if (strcmp(attr, "driver_override") == 0) {
    snprintf(m->override, sizeof(m->override), "%s", val);
    snprintf(rel, sizeof(rel), "%s/driver_override", m->dir);
    char text[sizeof(m->override) + 8];
    snprintf(text, sizeof(text), "%s\n", val[0] ? val : "(null)");
    return mock_put(t, rel, text, strlen(text), -1);
  }
  if (sscanf(attr, "resource%d%n", &bar, &len) == 1 && strcmp(attr + len, "_resize") == 0 && bar >= 0 && bar < 6)
    return mock_pci_resize(m, bar, val);
  return mock_fail(t, "write to %s: the emulated device does not take writes there", rest);
}

static int driver_written(mock_sysfs *t, const char *rest, const char *val) {
  char drv[64], rel[320];
  const char *slash = strchr(rest, '/');
  if (!slash || (size_t)(slash - rest) >= sizeof(drv)) return mock_fail(t, "write to drivers/%s", rest);
  memcpy(drv, rest, (size_t)(slash - rest));
  drv[slash - rest] = '\0';
  mock_pci *m = mock_sysfs_find(t, val);
  snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", rest);
  mock_put(t, rel, "", 0, -1);
  if (!m) return -ENODEV;
  if (strcmp(slash + 1, "unbind") == 0) {
    if (strcmp(m->driver, drv) != 0) return -ENODEV;
    unbind_links(m);
    return 0;
  }
  if (strcmp(slash + 1, "bind") == 0) {
    if (m->driver[0]) return -EBUSY;
    if (m->override[0] && strcmp(m->override, drv) != 0) return -ENODEV;
    return bind_links(m, drv) == 0 ? 0 : -EIO;
  }
  return mock_fail(t, "write to drivers/%s", rest);
}

static int hook_written(void *ctx, const char *rel, uint64_t off, const void *data, size_t n) {
  mock_sysfs *t = ctx;
  char val[64];
  size_t k = n < sizeof(val) - 1 ? n : sizeof(val) - 1;
  memcpy(val, data, k);
  val[k] = '\0';
  while (k > 0 && val[k - 1] == '\n') val[--k] = '\0';
  static const char dev_prefix[] = "bus/pci/devices/", drv_prefix[] = "bus/pci/drivers/";
  if (strncmp(rel, dev_prefix, sizeof(dev_prefix) - 1) == 0)
    return device_written(t, rel + sizeof(dev_prefix) - 1, off, data, n, val);
  if (strncmp(rel, drv_prefix, sizeof(drv_prefix) - 1) == 0) return driver_written(t, rel + sizeof(drv_prefix) - 1, val);
  if (strcmp(rel, "bus/pci/drivers_probe") == 0) {
    mock_put(t, rel, "", 0, -1);
    mock_pci *m = mock_sysfs_find(t, val);
    if (!m) return -ENODEV;
    if (!m->driver[0] && m->override[0] && driver_exists(t, m->override)) return bind_links(m, m->override) ? -EIO : 0;
    return 0;
  }
  if (strcmp(rel, "module/vfio/parameters/enable_unsafe_noiommu_mode") == 0) return 0;
  return mock_fail(t, "write to %s: nothing in the emulated tree takes it", rel);
}

/* ---------------- hooks: BARs and DMA ---------------- */

static int hook_bar_map(void *ctx, const char *bdf, int bar, uint64_t off, uint64_t size, bg_mmio *out) {
  mock_pci *m = mock_sysfs_find(ctx, bdf);
  return m ? mock_pci_map_cpu(m, bar, off, size, out) : -ENODEV; /* the driver: the host CPU's view */
}

static void hook_bar_unmap(void *ctx, bg_mmio *v) {
  (void)ctx;
  mock_pci_unmap(v);
}

/* The DMA table is read by GPU engine threads (mock_dma_host from tests/mockgpu/amd_vm.c) while the driver maps. */
static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;

static int hook_dma_map(void *ctx, const char *bdf, void *va, size_t npages, unsigned flags, uint64_t *bus) {
  mock_sysfs *t = ctx;
  mock_pci *m = mock_sysfs_find(t, bdf);
  if (!m) return -ENODEV;
  pthread_mutex_lock(&dma_lock);
  if (t->ndma == t->capdma) {
    size_t cap = t->capdma ? t->capdma * 2 : 16;
    mock_dma *nd = realloc(t->dma, cap * sizeof(*nd));
    if (!nd) {
      pthread_mutex_unlock(&dma_lock);
      return -ENOMEM;
    }
    t->dma = nd;
    t->capdma = cap;
  }
  /* Fake physical addresses above 4 GiB, each range 2 MiB aligned. Memory the driver did not
   * ask to be contiguous gets its pages in reverse order. */
  uint64_t base = (t->next_bus + BG_SYSMEM_HUGE_PAGE - 1) & ~(uint64_t)(BG_SYSMEM_HUGE_PAGE - 1);
  bool reversed = !(flags & (BG_SYSMEM_CONTIGUOUS | BG_SYSMEM_HUGE));
  t->next_bus = base + npages * BG_SYSMEM_PAGE;
  t->dma[t->ndma++] = (mock_dma){base, npages, va, reversed, m, NULL};
  for (size_t i = 0; i < npages; i++) bus[i] = base + (reversed ? npages - 1 - i : i) * BG_SYSMEM_PAGE;
  pthread_mutex_unlock(&dma_lock);
  return 0;
}

static void hook_dma_unmap(void *ctx, const char *bdf, void *va, size_t npages) {
  mock_sysfs *t = ctx;
  pthread_mutex_lock(&dma_lock);
  for (size_t i = 0; i < t->ndma; i++)
    if (t->dma[i].dev && t->dma[i].va == va && t->dma[i].npages == npages &&
        strcmp(t->dma[i].dev->bdf, bdf) == 0) {
      t->dma[i] = t->dma[--t->ndma];
      pthread_mutex_unlock(&dma_lock);
      return;
    }
  pthread_mutex_unlock(&dma_lock);
  mock_fail(t, "%s: DMA unmap of %p (%zu pages) that was never mapped", bdf, va, npages);
}

/* Peer-to-peer (PCIe Base Spec 7.x "Peer-to-peer transactions"): a TLP to another function's BAR window goes up to
 * the lowest bridge that decodes it and down again, so it reaches the peer's memory when both sit below one root
 * complex. Between host bridges the root complexes need not route it (Linux drivers/pci/p2pdma.c
 * pci_p2pdma_distance: devices below different host bridges are "not supported" unless whitelisted): here they never
 * do. Flat trees (no host bridge: the unit tests' fixture) count as one root complex. Only plain-memory BARs (VRAM,
 * no register hooks) with memory decoding on are reachable. Returns the peer's bytes at bus; NULL with *hit false
 * when no peer BAR holds bus, NULL with *hit true (and a failure recorded) when one does but the TLP cannot land. */
static uint8_t *peer_bar(mock_sysfs *t, const mock_pci *m, uint64_t bus, const char *what, bool *hit) {
  *hit = false;
  for (size_t i = 0; i < t->ndevs; i++) {
    mock_pci *p = t->devs[i];
    if (!p || p == m || p->gone) continue;
    for (int b = 0; b < 6; b++) {
      if (!p->bar_size[b] || p->cfg.bars[b].io || bus < p->bar_base[b] || bus - p->bar_base[b] >= p->bar_size[b])
        continue;
      *hit = true;
      uint64_t off = bus - p->bar_base[b];
      if (strcmp(m->rc, p->rc) != 0) {
        mock_fail(t, "peer-to-peer %s from %s (%s) to %s BAR%d (%s) is not routed between root complexes", what, m->bdf,
                  m->rc[0] ? m->rc : "no host bridge", p->bdf, b, p->rc[0] ? p->rc : "no host bridge");
        return NULL;
      }
      if (!(p->config[BG_PCI_COMMAND] & BG_PCI_COMMAND_MEMORY)) {
        mock_fail(t, "peer-to-peer %s from %s to %s BAR%d at 0x%" PRIx64 " with the peer's memory decoding off", what,
                  m->bdf, p->bdf, b, off);
        return NULL;
      }
      for (size_t h = 0; h < p->nhooks; h++)
        if (p->hooks[h].bar == b) {
          mock_fail(t, "peer-to-peer %s from %s to %s BAR%d at 0x%" PRIx64 ": a register/doorbell BAR (hooked), not "
                    "plain memory", what, m->bdf, p->bdf, b, off);
          return NULL;
        }
      if (!p->bar_mem[b] || p->cfg.unemulated_bars) {
        mock_fail(t, "peer-to-peer %s from %s to %s BAR%d at 0x%" PRIx64 " beyond its backed memory (none behind "
                  "the 0x%" PRIx64 "-byte window)", what, m->bdf, p->bdf, b, off, p->bar_size[b]);
        return NULL;
      }
      return p->bar_mem[b] + off;
    }
  }
  return NULL;
}

uint8_t *mock_dma_host_rw(mock_sysfs *t, mock_pci *m, uint64_t bus, const char *what, bool *refused) {
  uint8_t *host = NULL;
  bool hit = false;
  if (refused) *refused = false;
  /* Behind an emulated IOMMU the device reaches only its container's IOVAs; without one, the physical pages and the
   * peers' BARs. */
  const void *domain = m ? mock_vfio_domain(t, m) : NULL;
  if (m && !domain && ((host = peer_bar(t, m, bus, what, &hit)) != NULL || hit)) {
    if (refused) *refused = !host;
    return host;
  }
  pthread_mutex_lock(&dma_lock);
  for (size_t i = 0; i < t->ndma && !host; i++) {
    const mock_dma *d = &t->dma[i];
    if (d->domain != domain || bus < d->bus || bus >= d->bus + d->npages * BG_SYSMEM_PAGE) continue;
    size_t page = (size_t)((bus - d->bus) / BG_SYSMEM_PAGE);
    if (d->reversed) page = d->npages - 1 - page;
    host = d->va + page * BG_SYSMEM_PAGE + (bus % BG_SYSMEM_PAGE);
  }
  pthread_mutex_unlock(&dma_lock);
  return host;
}

uint8_t *mock_dma_host(mock_sysfs *t, mock_pci *m, uint64_t bus) { return mock_dma_host_rw(t, m, bus, "access", NULL); }

size_t mock_sysfs_dma_ranges(const mock_sysfs *t) { return t->ndma; }

int mock_sysfs_dma_add(mock_sysfs *t, const void *domain, uint64_t bus, void *va, size_t npages) {
  pthread_mutex_lock(&dma_lock);
  if (t->ndma == t->capdma) {
    size_t cap = t->capdma ? t->capdma * 2 : 16;
    mock_dma *nd = realloc(t->dma, cap * sizeof(*nd));
    if (!nd) {
      pthread_mutex_unlock(&dma_lock);
      return -ENOMEM;
    }
    t->dma = nd;
    t->capdma = cap;
  }
  t->dma[t->ndma++] = (mock_dma){bus, npages, va, false, NULL, domain};
  pthread_mutex_unlock(&dma_lock);
  return 0;
}

void mock_sysfs_dma_del(mock_sysfs *t, const void *domain, uint64_t bus) {
  pthread_mutex_lock(&dma_lock);
  for (size_t i = 0; i < t->ndma; i++)
    if (t->dma[i].bus == bus && t->dma[i].domain == domain) {
      t->dma[i] = t->dma[--t->ndma];
      break;
    }
  pthread_mutex_unlock(&dma_lock);
}

static const bg_pci_hooks tree_hooks = {hook_open, hook_written, hook_bar_map, hook_bar_unmap, hook_dma_map,
                                        hook_dma_unmap, &mock_vfio_syscalls};

/* ---------------- the tree ---------------- */

static const char *const env_names[4] = {"BG_SYSFS_ROOT", "BG_LOCK_DIR", "BG_DEV_ROOT", "BG_PROC_ROOT"};

/* Where trees attach their hooks (mock_sysfs.h): the plugin module swaps in the library's bg_pci_set_hooks. */
static mock_sysfs_set_hooks_fn set_hooks = bg_pci_set_hooks;
void mock_sysfs_use_set_hooks(mock_sysfs_set_hooks_fn fn) { set_hooks = fn ? fn : bg_pci_set_hooks; }

mock_sysfs *mock_sysfs_new(void) {
  mock_sysfs *t = calloc(1, sizeof(*t));
  if (!t) return NULL;
  int e = mock_tmpdir_new("sysfs", t->root, sizeof(t->root));
  if (e < 0) {
    fprintf(stderr, "mockgpu: cannot create the tree's temp dir in %s: %s\n", sysfs_tree_tmp_base(), strerror(-e));
    free(t);
    return NULL;
  }
  static const char *const dirs[] = {"devices", "bus", "bus/pci", "bus/pci/devices", "bus/pci/drivers", "kernel",
                                     "kernel/iommu_groups", "module", "lock", "proc", "proc/sys", "proc/sys/vm"};
  int r = 0;
  for (size_t i = 0; r == 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++) r = mkdir_rel(t, dirs[i]);
  if (r == 0) r = mock_put(t, "bus/pci/drivers_probe", "", 0, -1);
  if (r == 0) r = mock_put(t, "proc/sys/vm/compact_unevictable_allowed", "1\n", 2, -1);
  t->next_bus = 1ull << 32;
  t->next_mem64 = 0x4000000000ull;
  t->next_mem32 = 0xe0000000ull;
  t->next_io = 0xe000;
  if (r == 0) r = set_hooks(t->root, &tree_hooks, t);
  if (r != 0) {
    fprintf(stderr, "mockgpu: cannot build the tree under %s\n", t->root);
    mock_rm_tree(t->root);
    free(t);
    return NULL;
  }
  for (int i = 0; i < 4; i++) {
    const char *v = getenv(env_names[i]);
    t->saved_env[i] = v ? strdup(v) : NULL;
  }
  char lock[PATH_MAX], proc[PATH_MAX];
  mock_path(t, "lock", lock);
  mock_path(t, "proc", proc);
  setenv("BG_SYSFS_ROOT", t->root, 1);
  setenv("BG_LOCK_DIR", lock, 1);
  /* The host's /proc/sys stays untouched; pagemap must be named (BG_PAGEMAP) or come from hooks. */
  setenv("BG_PROC_ROOT", proc, 1);
  return t;
}

const char *mock_sysfs_root(const mock_sysfs *t) { return t->root; }

void mock_sysfs_free(mock_sysfs *t) {
  if (!t) return;
  mock_vfio_free(t);
  set_hooks(t->root, NULL, NULL);
  for (size_t i = 0; i < t->ndevs; i++) mock_pci_destroy(t->devs[i]);
  mock_rm_tree(t->root);
  for (int i = 0; i < 4; i++) {
    if (t->saved_env[i]) setenv(env_names[i], t->saved_env[i], 1);
    else unsetenv(env_names[i]);
    free(t->saved_env[i]);
  }
  free(t->dma);
  free(t);
}
