/* nv/nv_iface.c: the NVIDIA interfaces of the device registry (hcq/registry.c), registered by name in nv/meson.build
 * (backend_ifaces):
 *   NVK+NV      GPUs of the nvidia kernel module, through its RM and UVM ioctls (nv_sys.c: the system's calls)
 *   MOCKNVK+NV  the emulated kernel module and GPUs of tests/mockgpu (platform/mock_plugin.h: the plugin's system-call
 *               table); never chosen unless named
 *   PCI+NV      bare metal: GPUs no kernel driver holds, booted from their BARs, RM over GSP RPC (nv_pci_hcq.c)
 *   MOCKPCI+NV  the same on the emulated PCI GPUs of tests/mockgpu/nv_pci; never chosen unless named
 *   USB+NV      bare metal behind an ASM24 USB bridge: no host DMA, every buffer in VRAM reached through BAR1
 *   MOCKUSB+NV  the same behind the emulated bridge; never chosen unless named
 * and the bg_backend_ops table both use. One GPU is opened once per process and shared by the bg_devs that open it
 * (as am/am_hcq.c does): its channels, objects and memory are the nv_gpu's, used under nv_gpu.lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "hcq/dev_internal.h"
#include "nv/nv_hcq.h"
#include "hcq/gpu_scan.h"
#include "nv/nv_chips.h"
#include "platform/mock_plugin.h"
#include "platform/pci_usb.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static nv_gpu *registry;

static int queue_create(bg_dev *d, enum bg_queue_kind kind, bg_queue_hw **out) {
  nv_gpu *g = bg_nv_gpu(d);
  if ((unsigned)kind > 1 || !g->q[kind]) return bg_error(BG_EINVAL, "%s: no channel of kind %d", g->name, (int)kind);
  *out = g->q[kind]; /* the GPU's channel: every bg_dev of the GPU submits into it, in order */
  return 0;
}

static void queue_destroy(bg_dev *d, bg_queue_hw *hq) { (void)d, (void)hq; /* the channels live as long as the GPU */ }

static int locked_lower(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t n, bg_tmpl *t) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  int e = bg_nv_lower(d, hq, cmds, n, t);
  pthread_mutex_unlock(&g->lock);
  return e;
}

static int locked_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  int e = bg_nv_program_load(d, bin, size, info, handle);
  pthread_mutex_unlock(&g->lock);
  return e;
}

static void locked_program_free(bg_dev *d, void *handle) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  bg_nv_program_free(d, handle);
  pthread_mutex_unlock(&g->lock);
}

static int locked_copyin(bg_dev *d, bg_mem *dst, uint64_t off, const void *src, uint64_t n) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  int e = bg_nv_copyin(d, dst, off, src, n);
  pthread_mutex_unlock(&g->lock);
  return e;
}

static int locked_copyout(bg_dev *d, const bg_mem *src, uint64_t off, void *dst, uint64_t n) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  int e = bg_nv_copyout(d, src, off, dst, n);
  pthread_mutex_unlock(&g->lock);
  return e;
}

static void nv_close(bg_dev *d);

/* The operations every NV interface shares; behind the USB bridge memory has no CPU pointer and the core reaches
 * signals and kernel arguments through mem_read/mem_write (BAR1). */
#define NV_OPS_COMMON \
  .kind = "NV", \
  .ticks_per_us = BG_NV_TICKS_PER_US, \
  .has_copy_queue = true, \
  .alloc = bg_nv_alloc, \
  .free = bg_nv_free, \
  .copyin = locked_copyin, \
  .copyout = locked_copyout, \
  .queue_create = queue_create, \
  .queue_destroy = queue_destroy, \
  .lower = locked_lower, \
  .submit = bg_nv_submit, \
  .program_load = locked_program_load, \
  .program_free = locked_program_free, \
  .sleep = bg_nv_sleep, \
  .fault_check = bg_nv_fault_check, \
  .program_max_workgroup = bg_nv_program_max_workgroup, \
  .max_workgroup = 1024, \
  .close = nv_close

static const bg_backend_ops nv_ops = {NV_OPS_COMMON};
static const bg_backend_ops nv_usb_ops = {NV_OPS_COMMON, .mem_read = bg_nv_pci_mem_read,
                                          .mem_write = bg_nv_pci_mem_write};

/* The channels' first pushbuffers (nv_lower.c: SET_OBJECT, shared and local memory windows), each waited for. */
static int setup_channels(nv_gpu *g) {
  for (int k = 0; k < 2; k++) {
    uint32_t *buf = NULL;
    size_t len = 0, cap = 0;
    int e = bg_nv_channel_setup_cmds(g, (enum bg_queue_kind)k, &buf, &len, &cap);
    if (e == 0 && len) e = bg_nv_submit(NULL, g->q[k], buf, len);
    free(buf);
    if (e == 0) e = bg_nv_channel_wait_idle(g->q[k]);
    if (e) return bg_error_context(e, "%s: open step '%s setup pushbuffer': ", g->name, k ? "copy" : "compute");
  }
  return 0;
}

static void attach(bg_dev *d, nv_gpu *g) {
  g->devs[g->ndevs++] = d;
  d->ops = bg_nv_pci_bridged(g) ? &nv_usb_ops : &nv_ops;
  d->priv = g;
  snprintf(d->arch, sizeof d->arch, "sm_%u", g->sm);
}

enum nv_way { WAY_NVK, WAY_MOCKNVK, WAY_PCI, WAY_MOCKPCI, WAY_USB, WAY_MOCKUSB };
static const char *const way_name[] = {"NVK", "MOCKNVK", "PCI", "MOCKPCI", "USB", "MOCKUSB"};

/* BDFs of the NVIDIA GPUs the bare-metal interface claims (nv_chips.h), in bus order; count or a negative error. */
static int scan_nv(char (*bdfs)[16], int max) {
  bg_pci_info *list = NULL;
  size_t n = 0;
  int e = bg_pci_scan(0, &list, &n, NULL);
  if (e < 0) return e;
  int cnt = 0;
  for (size_t i = 0; i < n; i++) {
    if (!bg_nv_pci_claims(list[i].vendor, list[i].device, list[i].class_code)) continue;
    if (cnt < max) snprintf(bdfs[cnt], 16, "%s", list[i].bdf);
    cnt++;
  }
  bg_pci_free(list);
  return cnt;
}

/* The PCI function of a bare-metal GPU, opened, and its firmware folder (NULL: the environment, linux-firmware). */
static int open_pci_function(int index, bool mock, bg_pci_dev **pci, char *fw_dir, size_t cap) {
  char bdf[16];
  fw_dir[0] = '\0';
  if (mock) {
    bg_mock_devices md;
    int e = bg_mock_plugin_start("MOCKPCI", "NV", &md);
    if (e < 0) return e;
    if (index >= md.count) return bg_error(BG_ENODEV, "MOCKPCI+NV: device %d of %d does not exist", index, md.count);
    if ((e = bg_mock_plugin_enter(&md, true, "MOCKPCI+NV")) < 0) return e;
    snprintf(bdf, sizeof bdf, "%s", md.bdf[index]);
    snprintf(fw_dir, cap, "%s", md.fw_dir);
  } else {
    char bdfs[64][16];
    int n = scan_nv(bdfs, 64);
    if (n < 0) return n;
    if (index >= n || index >= 64) return bg_error(BG_ENODEV, "PCI+NV: device %d of %d does not exist", index, n);
    snprintf(bdf, sizeof bdf, "%s", bdfs[index]);
  }
  return bg_pci_open_sysfs(bdf, 0, pci); /* a GPU nvidia.ko holds: BG_EBUSY naming the driver (hcq_smi unbind) */
}

/* The GPU behind bridge `index` (the emulated one's transport is locked like a libusb one: "in use by pid N"). */
static int open_usb_function(int index, bool mock, bg_pci_dev **pci, char *fw_dir, size_t cap) {
  fw_dir[0] = '\0';
  if (!mock) return bg_usb_pci_open_index(index, pci);
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKUSB", "NV", &md);
  if (e < 0) return e;
  if (index >= md.count) return bg_error(BG_ENODEV, "MOCKUSB+NV: device %d of %d does not exist", index, md.count);
  if ((e = bg_mock_plugin_enter(&md, false, "MOCKUSB+NV")) < 0) return e;
  snprintf(fw_dir, cap, "%s", md.fw_dir);
  bg_usb_transport *t = NULL;
  if ((e = bg_mock_plugin_usb_transport(index, &t)) >= 0 && (e = bg_usb_transport_lock(&t)) >= 0)
    e = bg_usb_pci_open(t, pci);
  return e;
}

static int gpu_open(enum nv_way way, int index, nv_gpu **g) {
  if (way == WAY_USB || way == WAY_MOCKUSB) {
    bg_pci_dev *pci = NULL;
    char fw[256];
    int e = open_usb_function(index, way == WAY_MOCKUSB, &pci, fw, sizeof fw);
    if (e < 0) return e;
    return bg_nv_pci_gpu_open(pci, fw[0] ? fw : NULL, index, way_name[way], g);
  }
  if (way == WAY_PCI || way == WAY_MOCKPCI) {
    bg_pci_dev *pci = NULL;
    char fw[256];
    int e = open_pci_function(index, way == WAY_MOCKPCI, &pci, fw, sizeof fw);
    if (e < 0) return e;
    return bg_nv_pci_gpu_open(pci, fw[0] ? fw : NULL, index, way_name[way], g);
  }
  const bg_nv_sys *sys = &bg_nv_sys_real;
  if (way == WAY_MOCKNVK) {
    bg_mock_devices md;
    int e = bg_mock_plugin_start("MOCKNVK", "NV", &md);
    if (e < 0) return e;
    if (index >= md.count) return bg_error(BG_ENODEV, "MOCKNVK+NV: device %d of %d does not exist", index, md.count);
    if ((e = bg_mock_plugin_nv_sys(&sys)) < 0) return e;
  }
  return bg_nv_gpu_open(sys, index, way_name[way], g);
}

/* Under the GPU's key: share an open GPU of this process, else open it. */
static int open_locked(bg_dev *d, int index, enum nv_way way, const char *key) {
  pthread_mutex_lock(&registry_lock);
  nv_gpu *g = registry;
  while (g && strcmp(g->key, key) != 0) g = g->next;
  int e = 0;
  if (g && g->ndevs >= sizeof g->devs / sizeof g->devs[0])
    e = bg_error(BG_EBUSY, "%s: open %u times in this process already", g->name, g->ndevs);
  else if (g)
    attach(d, g);
  pthread_mutex_unlock(&registry_lock);
  if (g) {
    if (e == 0) BG_LOG(1, "%s: shared with an open device of this process", g->name);
    return e;
  }
  if ((e = gpu_open(way, index, &g)) < 0) return e;
  g->mock = way == WAY_MOCKNVK || way == WAY_MOCKPCI || way == WAY_MOCKUSB; /* PTX through the emulator's assembler */
  snprintf(g->key, sizeof g->key, "%s", key);
  if ((e = setup_channels(g)) < 0) {
    bg_nv_gpu_close(g);
    return e;
  }
  pthread_mutex_lock(&registry_lock);
  attach(d, g);
  g->next = registry;
  registry = g;
  pthread_mutex_unlock(&registry_lock);
  return 0;
}

static int open_dev(bg_dev *d, int index, enum nv_way way) {
  char key[32];
  snprintf(key, sizeof key, "%s:%d", way_name[way], index);
  bg_phys_key *k;
  int e = bg_phys_lock(key, &k);
  if (e < 0) return e;
  e = open_locked(d, index, way, key);
  bg_phys_unlock(k);
  return e < 0 ? e : 0;
}

static void nv_close(bg_dev *d) {
  nv_gpu *g = bg_nv_gpu(d);
  if (!g) return;
  bg_nv_copy_fini(d); /* this device's staging buffer and copy queue (nv_copy.c) */
  bg_phys_key *k = NULL;
  if (bg_phys_lock(g->key, &k) < 0) BG_LOG(1, "%s: close without the device registry: %s", g->name, bg_last_error());
  pthread_mutex_lock(&registry_lock);
  pthread_mutex_lock(&g->lock);
  unsigned n = 0;
  for (unsigned i = 0; i < g->ndevs; i++)
    if (g->devs[i] != d) g->devs[n++] = g->devs[i];
  g->ndevs = n;
  pthread_mutex_unlock(&g->lock);
  /* Behind the USB bridge there is no function reset to boot GSP-RM again after it unloads (WPR2 stays set: nv_pci.h),
   * so the GPU stays up, its channels idle, for the rest of the process and the next open of it shares it (tinygrad
   * keeps its devices for the process's life too). After an error too: closing could not make it usable again, and
   * the next open meets whatever state its channels are in (a stopped channel fails that open's first wait). */
  bool keep = n == 0 && bg_nv_pci_bridged(g);
  if (keep) BG_LOG(1, "%s: kept up for the next open in this process (no function reset behind the bridge)", g->name);
  if (n == 0 && !keep)
    for (nv_gpu **pp = &registry; *pp; pp = &(*pp)->next)
      if (*pp == g) {
        *pp = g->next;
        break;
      }
  pthread_mutex_unlock(&registry_lock);
  d->priv = NULL;
  if (n == 0 && !keep) {
    /* the core synchronized the device; what other work the channels hold drains before their objects go */
    for (int q = 0; q < 2; q++)
      if (g->q[q] && !d->error && bg_nv_channel_wait_idle(g->q[q]) < 0)
        BG_LOG(1, "%s: close: %s", g->name, bg_last_error());
    bg_nv_local_fini(g); /* local memory (nv_prog.c) */
    bg_nv_gpu_close(g);
  }
  if (k) bg_phys_unlock(k);
}

/* ---------------- NVK+NV ---------------- */

static int nvk_count(void) { return bg_nv_card_count(&bg_nv_sys_real); }
static int nvk_open(bg_dev *d, int index) { return open_dev(d, index, WAY_NVK); }

const bg_iface bg_nvk_iface = {.kind = "NV", .name = "NVK", .mock = false, .count = nvk_count, .open = nvk_open};

/* ---------------- MOCKNVK+NV ---------------- */

static int mock_count(void) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKNVK", "NV", &md);
  if (e < 0) BG_LOG(1, "MOCKNVK+NV: %s", bg_last_error());
  return e < 0 ? e : md.count;
}

static int mock_open(bg_dev *d, int index) { return open_dev(d, index, WAY_MOCKNVK); }

const bg_iface bg_mocknvk_iface = {.kind = "NV", .name = "MOCKNVK", .mock = true, .count = mock_count, .open = mock_open};

/* ---------------- PCI+NV ---------------- */

static int pci_count(void) {
  char bdfs[1][16];
  int n = scan_nv(bdfs, 0);
  return n < 0 ? 0 : n; /* no PCI access in this build or no /sys: no devices */
}

static int pci_open(bg_dev *d, int index) { return open_dev(d, index, WAY_PCI); }

const bg_iface bg_nv_pci_iface = {.kind = "NV", .name = "PCI", .mock = false, .count = pci_count, .open = pci_open};

/* ---------------- MOCKPCI+NV ---------------- */

static int mockpci_count(void) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKPCI", "NV", &md);
  if (e < 0) BG_LOG(1, "MOCKPCI+NV: %s", bg_last_error());
  return e < 0 ? e : md.count;
}

static int mockpci_open(bg_dev *d, int index) { return open_dev(d, index, WAY_MOCKPCI); }

const bg_iface bg_nv_mockpci_iface = {
    .kind = "NV", .name = "MOCKPCI", .mock = true, .count = mockpci_count, .open = mockpci_open};

/* ---------------- USB+NV ---------------- */

static int usb_count(void) {
  char names[1][16];
  int n = bg_usb_pci_scan(names, 0);
  return n < 0 ? 0 : n; /* built without libusb, or no USB access: no bridges (which GPU is behind one shows at open) */
}

static int usb_open(bg_dev *d, int index) { return open_dev(d, index, WAY_USB); }

const bg_iface bg_nv_usb_iface = {.kind = "NV", .name = "USB", .mock = false, .count = usb_count, .open = usb_open};

/* ---------------- MOCKUSB+NV ---------------- */

static int mockusb_count(void) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKUSB", "NV", &md);
  if (e < 0) BG_LOG(1, "MOCKUSB+NV: %s", bg_last_error());
  return e < 0 ? e : md.count;
}

static int mockusb_open(bg_dev *d, int index) { return open_dev(d, index, WAY_MOCKUSB); }

const bg_iface bg_nv_mockusb_iface = {
    .kind = "NV", .name = "MOCKUSB", .mock = true, .count = mockusb_count, .open = mockusb_open};
