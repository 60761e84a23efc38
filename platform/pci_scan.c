/* platform/pci_scan.c: read-only PCI discovery (platform/pci_scan.h).
 *
 * The real bus is read through libpciaccess; a BG_SYSFS_ROOT tree is read file by file in the
 * layout of /sys/bus/pci/devices (Linux Documentation/ABI/testing/sysfs-bus-pci, drivers/pci/pci-sysfs.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "util/fd_io.h"
#include "platform/pci_resource.h"
#include "platform/pci_scan.h"

#if BG_HAVE_PCIACCESS
#include <pciaccess.h>
#endif

bool bg_pci_class_is_gpu(uint16_t vendor, uint32_t class_code, const bg_chip_info *chip) {
  if (vendor != BG_PCI_VENDOR_AMD && vendor != BG_PCI_VENDOR_NV) return false;
  unsigned base = (class_code >> 16) & 0xff;
  /* 0x03: display/3D controller; 0x12: processing accelerator (MI-series parts use it). */
  if (base == 0x03 || base == 0x12) return true;
  return chip && chip->mask == 0xffff;
}

const char *bg_pci_vendor_name(uint16_t vendor) {
  switch (vendor) {
  case 0x1002: return "AMD";
  case 0x10de: return "NVIDIA";
  case 0x8086: return "Intel";
  case 0x1022: return "AMD (host)";
  case 0x1af4: return "Red Hat (virtio)";
  case 0x1b36: return "Red Hat (QEMU)";
  case 0x174c: return "ASMedia";
  case 0x1b21: return "ASMedia";
  default: return NULL;
  }
}

/* ---------------- sysfs attributes ---------------- */

/* Copy src into dst[n], truncating. */
static void copy_trunc(char *dst, size_t n, const char *src) {
  size_t len = strnlen(src, n - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

/* Read a small attribute of device bdf into buf, trailing whitespace stripped. */
static int read_attr(const char *bdf, const char *name, char *buf, size_t n) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", bg_pci_sysfs_root(), bdf, name);
  int fd;
  if (bg_open_regular(path, O_RDONLY, &fd) < 0) return errno ? -errno : -EINVAL; /* a FIFO: refused, not waited on */
  ssize_t got = read(fd, buf, n - 1);
  int e = errno;
  close(fd);
  if (got < 0) return -e;
  size_t len = (size_t)got;
  buf[len] = '\0';
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = '\0';
  return 0;
}

static int read_hex(const char *bdf, const char *name, unsigned long *v) {
  char buf[64], *end;
  int r = read_attr(bdf, name, buf, sizeof(buf));
  if (r < 0) return r;
  errno = 0;
  *v = strtoul(buf, &end, 16);
  return (end == buf || *end || errno) ? -EINVAL : 0;
}

/* Bound driver and PCIe link; absent files just leave the fields empty. */
static void read_extras(bg_pci_info *p) {
  char path[PATH_MAX], target[PATH_MAX];
  snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver", bg_pci_sysfs_root(), p->bdf);
  ssize_t len = readlink(path, target, sizeof(target) - 1);
  if (len > 0) {
    target[len] = '\0';
    const char *base = strrchr(target, '/');
    copy_trunc(p->driver, sizeof(p->driver), base ? base + 1 : target);
  }
  if (read_attr(p->bdf, "current_link_speed", p->link_speed, sizeof(p->link_speed)) < 0)
    p->link_speed[0] = '\0';
  /* Width is decimal in sysfs; tolerate a leading "x". */
  char wbuf[16];
  if (read_attr(p->bdf, "current_link_width", wbuf, sizeof(wbuf)) == 0) {
    unsigned long w = strtoul(wbuf[0] == 'x' ? wbuf + 1 : wbuf, NULL, 10);
    p->link_width = w <= 64 ? (int)w : 0;
  }
}

/* BARs from the sysfs "resource" file (pci_resource.c parses each line). */
static int read_resource(bg_pci_info *p) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/resource", bg_pci_sysfs_root(), p->bdf);
  int fd;
  if (bg_open_regular(path, O_RDONLY, &fd) < 0) { /* a FIFO: refused, not waited on */
    int e = errno;
    snprintf(p->note, sizeof(p->note), "BARs unknown: %s", bg_last_error());
    return e ? -e : -EINVAL;
  }
  FILE *f = fdopen(fd, "r");
  if (!f) {
    int e = errno;
    close(fd);
    return -e;
  }
  char line[128];
  for (int i = 0; i < BG_PCI_NBARS && fgets(line, sizeof(line), f); i++) {
    if (!bg_pci_resource_line(line, &p->bars[i])) {
      fclose(f);
      return -EINVAL;
    }
  }
  fclose(f);
  return 0;
}

/* ---------------- collecting and sorting ---------------- */

typedef struct scan_acc {
  bg_pci_info *v;
  size_t n, cap, nscanned;
  unsigned flags;
  bg_pci_chip_fn chip_of;
} scan_acc;

/* Account a seen function; returns a zeroed slot to fill, or NULL if filtered out (*err set on ENOMEM). */
static bg_pci_info *acc_add(scan_acc *a, uint16_t vendor, uint16_t device, uint32_t class_code, int *err) {
  a->nscanned++;
  const bg_chip_info *chip = a->chip_of ? a->chip_of(vendor, device) : NULL;
  bool gpu = bg_pci_class_is_gpu(vendor, class_code, chip);
  if (!gpu && !(a->flags & BG_PCI_SCAN_ALL)) return NULL;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 16;
    bg_pci_info *nv = realloc(a->v, cap * sizeof(*nv));
    if (!nv) {
      *err = bg_error(BG_ENOMEM, "pci scan: out of memory for %zu devices", cap);
      return NULL;
    }
    a->v = nv;
    a->cap = cap;
  }
  bg_pci_info *p = &a->v[a->n++];
  memset(p, 0, sizeof(*p));
  p->vendor = vendor;
  p->device = device;
  p->class_code = class_code;
  p->is_gpu = gpu;
  p->chip = chip;
  return p;
}

static int cmp_bdf(const void *a, const void *b) {
  const bg_pci_info *x = a, *y = b;
  if (x->domain != y->domain) return x->domain < y->domain ? -1 : 1;
  return strcmp(x->bdf, y->bdf);
}

/* ---------------- source: a sysfs tree (BG_SYSFS_ROOT) ---------------- */

static int scan_sysfs(scan_acc *a) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof(dir), "%s/bus/pci/devices", bg_pci_sysfs_root());
  DIR *d = opendir(dir);
  if (!d) {
    int e = errno;
    return bg_error(e == EACCES || e == EPERM ? BG_EPERM : BG_ENODEV, "pci scan: cannot list %s: %s (errno %d)%s",
                    dir, strerror(e), e, e == ENOENT ? "; BG_SYSFS_ROOT must point at a tree with bus/pci/devices" : "");
  }
  int err = 0;
  struct dirent *de;
  while (!err && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    const char *bdf = de->d_name;
    if (strlen(bdf) >= sizeof(((bg_pci_info *)0)->bdf)) {
      BG_LOG(1, "pci scan: %s/%s: name longer than a BDF, skipped", dir, bdf);
      continue;
    }
    unsigned long vendor, device, cls;
    if (read_hex(bdf, "vendor", &vendor) < 0 || read_hex(bdf, "device", &device) < 0 ||
        read_hex(bdf, "class", &cls) < 0) {
      BG_LOG(1, "pci scan: %s/%s: unreadable vendor/device/class, skipped", dir, bdf);
      continue;
    }
    bg_pci_info *p = acc_add(a, (uint16_t)vendor, (uint16_t)device, (uint32_t)cls, &err);
    if (!p) continue;
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    /* Emulated trees may use names that are not BDFs (tinygrad's "mock:am:0"); keep the name. */
    if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) dom = bus = dev = fn = 0;
    p->domain = dom;
    p->bus = (uint8_t)bus;
    p->dev = (uint8_t)dev;
    p->fn = (uint8_t)fn;
    copy_trunc(p->bdf, sizeof(p->bdf), bdf);
    unsigned long v;
    if (read_hex(bdf, "subsystem_vendor", &v) == 0) p->subvendor = (uint16_t)v;
    if (read_hex(bdf, "subsystem_device", &v) == 0) p->subdevice = (uint16_t)v;
    if (read_hex(bdf, "revision", &v) == 0) p->revision = (uint8_t)v;
    int r = read_resource(p);
    p->bars_known = r == 0;
    if (r < 0 && !p->note[0])
      snprintf(p->note, sizeof(p->note), "BARs unknown: cannot read %s/resource: %s", p->bdf, strerror(-r));
    read_extras(p);
  }
  closedir(d);
  return err;
}

/* ---------------- source: libpciaccess ---------------- */

#if BG_HAVE_PCIACCESS
/* libpciaccess keeps one global system object: serialize scans inside this process. */
static pthread_mutex_t pciaccess_lock = PTHREAD_MUTEX_INITIALIZER;

static int pciaccess_errcode(int e) {
  if (e == EACCES || e == EPERM) return BG_EPERM;
  if (e == ENOMEM) return BG_ENOMEM;
  if (e == ENOENT || e == ENODEV || e == ENOSYS) return BG_ENODEV;
  return BG_EIO;
}

static int scan_pciaccess(scan_acc *a) {
  pthread_mutex_lock(&pciaccess_lock);
  int e = pci_system_init();
  if (e != 0) {
    pthread_mutex_unlock(&pciaccess_lock);
    return bg_error(pciaccess_errcode(e), "pci scan: pci_system_init failed: %s (errno %d)%s", strerror(e), e,
                    e == ENOENT ? "; is sysfs mounted with /sys/bus/pci present?"
                    : (e == EACCES || e == EPERM) ? "; no permission to read /sys/bus/pci" : "");
  }
  struct pci_slot_match any = {PCI_MATCH_ANY, PCI_MATCH_ANY, PCI_MATCH_ANY, PCI_MATCH_ANY, 0};
  struct pci_device_iterator *it = pci_slot_match_iterator_create(&any);
  int err = it ? 0 : bg_error(BG_ENOMEM, "pci scan: pci_slot_match_iterator_create failed");
  struct pci_device *pd;
  while (!err && (pd = pci_device_next(it)) != NULL) {
    bg_pci_info *p = acc_add(a, pd->vendor_id, pd->device_id, pd->device_class, &err);
    if (!p) continue;
    p->domain = pd->domain;
    p->bus = pd->bus;
    p->dev = pd->dev;
    p->fn = pd->func;
    snprintf(p->bdf, sizeof(p->bdf), "%04x:%02x:%02x.%x", pd->domain, pd->bus, pd->dev, pd->func);
    p->subvendor = pd->subvendor_id;
    p->subdevice = pd->subdevice_id;
    p->revision = pd->revision;
    /* Probing reads config space and the resource file; it never maps or writes anything. */
    int r = pci_device_probe(pd);
    if (r == 0) {
      p->bars_known = true;
      for (int i = 0; i < BG_PCI_NBARS; i++) {
        const struct pci_mem_region *m = &pd->regions[i];
        p->bars[i] = (bg_pci_bar){m->base_addr, m->size, m->is_IO, m->is_64, m->is_prefetchable};
      }
    } else {
      snprintf(p->note, sizeof(p->note), "BARs unknown: pci_device_probe: %s (errno %d)", strerror(r), r);
    }
    read_extras(p);
  }
  if (it) pci_iterator_destroy(it);
  pci_system_cleanup();
  pthread_mutex_unlock(&pciaccess_lock);
  return err;
}
#endif

int bg_pci_enumerate(unsigned flags, bg_pci_chip_fn chip_of, bg_pci_info **out, size_t *n, size_t *nscanned) {
  *out = NULL;
  *n = 0;
  if (nscanned) *nscanned = 0;
  scan_acc a = {NULL, 0, 0, 0, flags, chip_of};
  int r;
  const char *root = getenv("BG_SYSFS_ROOT");
  if (root && *root) {
    r = scan_sysfs(&a);
  } else {
#if BG_HAVE_PCIACCESS
    r = scan_pciaccess(&a);
#else
    r = bg_error(BG_ENOTSUP, "pci scan: baregpu was built without libpciaccess (install libpciaccess-dev and "
                 "reconfigure with -Dpci=enabled), or set BG_SYSFS_ROOT to scan a sysfs tree");
#endif
  }
  if (r < 0) {
    free(a.v);
    return r;
  }
  if (a.n > 1) qsort(a.v, a.n, sizeof(*a.v), cmp_bdf);
  *out = a.v;
  *n = a.n;
  if (nscanned) *nscanned = a.nscanned;
  return 0;
}

void bg_pci_free(bg_pci_info *list) { free(list); }
