/* am/am_iface.c: the AMD interfaces of the device registry (hcq/registry.c), registered by name in am/meson.build
 * (backend_ifaces, which generates the registry's table; a new one here needs its line there):
 *   PCI+AMD      AMD GPUs AM supports on the PCI bus (sysfs), opened, booted (cold or warm) and driven as HCQ devices
 *   MOCKPCI+AMD  the emulated GPUs of tests/mockgpu: the plugin (platform/mock_plugin.h) builds a fake sysfs tree with
 *                its devices, then the same driver path as PCI+AMD opens them; never chosen unless named.
 *   USB+AMD      GPUs behind ASM24 USB bridges with the custom firmware (platform/pci_usb.h: the bridge as a bg_pci_dev)
 *   MOCKUSB+AMD  the plugin's emulated GPUs behind emulated ASM24 bridges, reached through its USB transports
 * PCI ends in open_bdf (bg_am_dev_open), USB in open_usb (bg_usb_pci_open + bg_am_dev_open_pci); both then
 * bg_am_boot_ex -> bg_am_hcq_attach (boot_attach). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_hcq.h"
#include "am/chips.h"
#include "hcq/dev_internal.h"
#include "platform/mock_plugin.h"
#include "hcq/gpu_scan.h"
#include "platform/pci_usb.h"

/* Boot an opened AM device and make it dev's backend; on failure am is closed. */
static int boot_attach(bg_dev *dev, bg_am_dev *am, bool mock, const char *key) {
  bg_am_blocks blk = {0};
  bg_am_boot_report rep;
  int e;
  if ((e = bg_am_boot_ex(am, NULL, &rep, &blk)) < 0 || (e = bg_am_hcq_attach(dev, am, &blk, mock, key)) < 0) {
    bg_am_blocks_free(&blk);
    bg_am_dev_close(am);
    return bg_error_context(e, "%s: ", dev->name);
  }
  BG_LOG(1, "am: %s: %s boot, %s, VRAM %llu MiB", am->bdf, rep.warm ? "warm" : "cold", am->disc.arch,
         (unsigned long long)(am->vram_size >> 20));
  return 0;
}

static int open_bdf(bg_dev *dev, const char *bdf, const bg_am_open_opts *opts, bool mock) {
  /* One AM device per function and process (tinygrad's device singleton): a second open shares it. */
  char key[320];
  snprintf(key, sizeof(key), "%s/%s", bg_pci_sysfs_root(), bdf);
  /* Held from the share to the attach: a second thread's open waits, then shares, instead of taking the lock file
   * a second time ("in use by pid <this process>"); am_close holds it across the last close the same way. */
  bg_phys_key *k;
  int e = bg_phys_lock(key, &k);
  if (e < 0) return e;
  e = bg_am_hcq_share(dev, key);
  if (e == 0) {
    bg_am_dev *am = NULL;
    e = bg_am_dev_open(bdf, opts, &am);
    if (e >= 0) e = boot_attach(dev, am, mock, key);
  }
  bg_phys_unlock(k);
  return e < 0 ? e : 0;
}

/* A GPU behind a bridge: key names it process-wide; the transport is opened only when it is not open already. */
static int open_usb_locked(bg_dev *dev, const char *key, int index, const bg_am_open_opts *opts, bool mock) {
  int e = bg_am_hcq_share(dev, key);
  if (e != 0) return e < 0 ? e : 0;
  bg_pci_dev *pci = NULL;
  if (mock) {
    bg_usb_transport *t = NULL;
    /* The emulated bridge holds its device's lock like a libusb one ("in use by pid N" to a second process). */
    if ((e = bg_mock_plugin_usb_transport(index, &t)) >= 0 && (e = bg_usb_transport_lock(&t)) >= 0)
      e = bg_usb_pci_open(t, &pci);
  } else {
    e = bg_usb_pci_open_index(index, &pci);
  }
  if (e < 0) return bg_error_context(e, "%s: ", dev->name);
  bg_am_dev *am = NULL;
  if ((e = bg_am_dev_open_pci(pci, opts, &am)) < 0) return bg_error_context(e, "%s: ", dev->name);
  return boot_attach(dev, am, mock, key);
}

/* One bridge per GPU and process: the key is held from the share to the attach (and across the last close), so two
 * threads never open two transports to one bridge, whose requests would interleave on the wire. */
static int open_usb(bg_dev *dev, const char *key, int index, const bg_am_open_opts *opts, bool mock) {
  bg_phys_key *k;
  int e = bg_phys_lock(key, &k);
  if (e < 0) return e;
  e = open_usb_locked(dev, key, index, opts, mock);
  bg_phys_unlock(k);
  return e;
}

/* ---------------- PCI+AMD ---------------- */

/* BDFs of the AMD GPUs AM supports, in bus order; count or a negative error. */
static int scan_amd(char (*bdfs)[16], int max) {
  bg_pci_info *list = NULL;
  size_t n = 0;
  int e = bg_pci_scan(0, &list, &n, NULL);
  if (e < 0) return e;
  int cnt = 0;
  for (size_t i = 0; i < n; i++) {
    if (list[i].vendor != BG_AM_PCI_VENDOR_AMD || !bg_am_chip_lookup(list[i].device)) continue;
    if (cnt < max) snprintf(bdfs[cnt], 16, "%s", list[i].bdf);
    cnt++;
  }
  bg_pci_free(list);
  return cnt;
}

static int pci_count(void) {
  char bdfs[1][16];
  int n = scan_amd(bdfs, 0);
  return n < 0 ? 0 : n; /* no PCI access in this build or no /sys: no devices */
}

static int pci_open(bg_dev *dev, int index) {
  char bdfs[64][16];
  int n = scan_amd(bdfs, 64);
  if (n < 0) return n;
  if (index >= n || index >= 64) return bg_error(BG_ENODEV, "PCI+AMD: device %d of %d does not exist", index, n);
  bg_am_open_opts opts = {0};
  return open_bdf(dev, bdfs[index], &opts, false);
}

const bg_iface bg_am_pci_iface = {.kind = "AMD", .name = "PCI", .mock = false, .count = pci_count, .open = pci_open,
                                  .chip_lookup = bg_am_chip_info};

/* ---------------- MOCKPCI+AMD ---------------- */

static int mock_count(void) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKPCI", "AMD", &md);
  if (e < 0) BG_LOG(1, "MOCKPCI+AMD: %s", bg_last_error());
  return e < 0 ? e : md.count; /* the error (plugin not found: paths tried) reaches DEV=MOCKPCI+AMD */
}

static int mock_open(bg_dev *dev, int index) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKPCI", "AMD", &md);
  if (e < 0) return e;
  if (index >= md.count) return bg_error(BG_ENODEV, "MOCKPCI+AMD: device %d of %d does not exist", index, md.count);
  if ((e = bg_mock_plugin_enter(&md, true, "MOCKPCI+AMD")) < 0) return e;
  bg_am_open_opts opts = {.fw_dir = md.fw_dir[0] ? md.fw_dir : NULL, .settle_ms = -1, .reset_delay_ms = -1};
  return open_bdf(dev, md.bdf[index], &opts, true);
}

const bg_iface bg_am_mockpci_iface = {
  .kind = "AMD", .name = "MOCKPCI", .mock = true, .count = mock_count, .open = mock_open, .chip_lookup = bg_am_chip_info};

/* ---------------- USB+AMD ---------------- */

static int usb_count(void) {
  char names[1][16];
  int n = bg_usb_pci_scan(names, 0);
  return n < 0 ? 0 : n; /* built without libusb, or no USB access: no devices */
}

static int usb_open(bg_dev *dev, int index) {
  char names[64][16];
  int n = bg_usb_pci_scan(names, 64);
  if (n < 0) return n;
  if (index >= n || index >= 64) return bg_error(BG_ENODEV, "USB+AMD: bridge %d of %d does not exist", index, n);
  bg_am_open_opts opts = {0};
  return open_usb(dev, names[index], index, &opts, false);
}

const bg_iface bg_am_usb_iface = {.kind = "AMD", .name = "USB", .mock = false, .count = usb_count, .open = usb_open,
                                  .chip_lookup = bg_am_chip_info};

/* ---------------- MOCKUSB+AMD ---------------- */

static int mockusb_count(void) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKUSB", "AMD", &md);
  if (e < 0) BG_LOG(1, "MOCKUSB+AMD: %s", bg_last_error());
  return e < 0 ? e : md.count;
}

static int mockusb_open(bg_dev *dev, int index) {
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKUSB", "AMD", &md);
  if (e < 0) return e;
  if (index >= md.count) return bg_error(BG_ENODEV, "MOCKUSB+AMD: device %d of %d does not exist", index, md.count);
  if ((e = bg_mock_plugin_enter(&md, false, "MOCKUSB+AMD")) < 0) return e;
  char key[32];
  snprintf(key, sizeof(key), "mockusb:%d", index);
  bg_am_open_opts opts = {.fw_dir = md.fw_dir[0] ? md.fw_dir : NULL, .settle_ms = -1, .reset_delay_ms = -1};
  return open_usb(dev, key, index, &opts, true);
}

const bg_iface bg_am_mockusb_iface = {
  .kind = "AMD", .name = "MOCKUSB", .mock = true, .count = mockusb_count, .open = mockusb_open, .chip_lookup = bg_am_chip_info};
