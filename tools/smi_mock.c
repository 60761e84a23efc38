/* tools/smi_mock.c: the emulated devices of tests/mockgpu for hcq_smi and bg-bringup (--dev MOCKPCI+AMD,
 * and `hcq_smi list --all`).
 *
 * Emulated GPUs live in the process that starts them: the library's loader (platform/mock_plugin.h) dlopens
 * libbaregpu-mock.so, which builds a fake sysfs tree whose files carry the devices' register hooks, a lock
 * directory and a firmware directory with correctly-headed images. The tools then run their usual sysfs code on
 * that tree: BG_SYSFS_ROOT, BG_LOCK_DIR and BG_FIRMWARE_DIR name the plugin's directories, as MOCKPCI+AMD's own
 * open does (am/am_iface.c). Each process gets its GPU powered on but not booted, so a command that needs a
 * running SMU (list's metrics, reset's mode1 reset) boots it first (smi_mock_enter with boot).
 *
 * MOCKUSB+AMD's GPUs sit behind emulated ASM24 bridges: they are reached as the driver reaches them, through the
 * plugin's USB transport and usb/usb_pci.h (config space and BARs over the bridge, "04:00.0" behind it), booted
 * over it (as MOCKUSB+AMD's open does) and listed with their SMU metrics under the bridge's name "mockusb:N". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_query.h"
#include "baregpu/error.h"
#include "platform/mock_plugin.h"
#include "platform/pci.h"
#include "tools/smi.h"
#include "platform/pci_usb.h"

/* The firmware folder's variable is the driver's: am/ reads BG_FIRMWARE_DIR, nv/ BG_NV_FIRMWARE_DIR (nv/nv_fw.h). */
static const char *const ENV_NAMES[2][SMI_MOCK_NENV] = {{"BG_SYSFS_ROOT", "BG_LOCK_DIR", "BG_FIRMWARE_DIR"},
                                                        {"BG_SYSFS_ROOT", "BG_LOCK_DIR", "BG_NV_FIRMWARE_DIR"}};

/* The MOCKPCI+AMD devices the plugin reported (its tree may also hold other interfaces' devices, e.g. the GPU
 * behind MOCKUSB+AMD's emulated bridge). */
static bg_mock_devices started;

bool smi_mock_is_device(const char *bdf) {
  for (int i = 0; i < started.count && i < BG_MOCK_MAX_DEVICES; i++)
    if (strcmp(started.bdf[i], bdf) == 0) return true;
  return false;
}

bool smi_sel_is_mockpci(const smi_opts *o) {
  return o->sel == SMI_SEL_TARGET && strcmp(o->target.iface, "MOCKPCI") == 0;
}

/* Cold boot of one emulated GPU: the path MOCKPCI+AMD's open takes, without attaching queues. */
static int boot_one(const bg_mock_devices *md, int i, char *err, size_t n) {
  bg_am_query_open oo = {.fw_dir = md->fw_dir[0] ? md->fw_dir : NULL, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  int e = bg_am_query_dev_open(md->bdf[i], &oo, &d);
  bg_am_query_boot rep;
  if (e >= 0) e = bg_am_query_boot_run(d, false, &rep);
  if (e < 0) snprintf(err, n, "booting the emulated GPU %s: %s", md->bdf[i], bg_last_error());
  bg_am_query_dev_close(d);
  return e;
}

int smi_mock_enter(const char *kind, bool boot, smi_mock_env *saved, char *err, size_t n) {
  memset(saved, 0, sizeof(*saved));
  bool nv = kind && strcmp(kind, "NV") == 0;
  saved->nv = nv;
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKPCI", nv ? "NV" : "AMD", &md);
  if (e < 0) {
    snprintf(err, n, "MOCKPCI+%s: %s", nv ? "NV" : "AMD", bg_last_error());
    return e;
  }
  const char *vals[SMI_MOCK_NENV] = {md.sysfs_root, md.lock_dir, md.fw_dir};
  for (int k = 0; k < SMI_MOCK_NENV; k++) {
    const char *name = ENV_NAMES[nv][k], *old = getenv(name);
    saved->had[k] = old != NULL;
    if (old) snprintf(saved->old[k], sizeof(saved->old[k]), "%s", old);
    if (vals[k][0] && setenv(name, vals[k], 1) < 0) {
      smi_mock_leave(saved);
      snprintf(err, n, "MOCKPCI+%s: cannot set %s", nv ? "NV" : "AMD", name);
      return -BG_ENOMEM;
    }
  }
  saved->entered = true;
  started = md;
  snprintf(saved->root, sizeof(saved->root), "%s", md.sysfs_root);
  saved->count = md.count;
  /* NV: hcq_smi's NV facts come from the kernel module's RM (tools/smi_nv.c); on the bare-metal path the devices are
   * listed, reset and rebound at the PCI level, cold, and bg-bringup boots them itself. */
  for (int i = 0; boot && !nv && i < md.count; i++)
    if ((e = boot_one(&md, i, err, n)) < 0) return e;
  return 0;
}

void smi_mock_leave(smi_mock_env *saved) {
  for (int k = 0; k < SMI_MOCK_NENV; k++) {
    if (saved->had[k]) setenv(ENV_NAMES[saved->nv][k], saved->old[k], 1);
    else unsetenv(ENV_NAMES[saved->nv][k]);
  }
  saved->entered = false;
}

smi_inventory *smi_mock_inventory(void) {
  smi_inventory *emu = calloc(1, sizeof(*emu));
  if (!emu) return NULL;
  smi_opts o = {0};
  char err[512];
  smi_mock_env env = {0};
  if (smi_sel_parse("MOCKPCI+AMD", &o, err, sizeof(err)) < 0 || smi_mock_enter("AMD", true, &env, err, sizeof(err)) < 0) {
    if (env.entered) smi_mock_leave(&env);
    emu->pci_err = -BG_ENODEV;
    snprintf(emu->pci_msg, sizeof(emu->pci_msg), "%s", err);
    snprintf(emu->pci_source, sizeof(emu->pci_source), "MOCKPCI+AMD");
    return emu;
  }
  if (smi_inventory_collect(&o, emu) == 0) smi_am_collect(emu);
  smi_mock_leave(&env);
  return emu;
}

void smi_mock_inventory_free(smi_inventory *emu) {
  if (!emu) return;
  free(emu->am);
  emu->am = NULL;
  smi_inventory_free(emu);
  free(emu);
}

bool smi_sel_is_mockusb(const smi_opts *o) {
  return o && o->sel == SMI_SEL_TARGET && strcmp(o->target.iface, "MOCKUSB") == 0;
}

/* The GPU behind emulated bridge i: ids, class and BARs read over the bridge, then booted through am/ and its
 * metrics read. 0, or -BG_E* when the bridge or the GPU's config space cannot be reached. */
static int usb_gpu(const bg_mock_devices *md, int i, bg_pci_info *p, smi_am_metrics *am) {
  bg_usb_transport *t = NULL;
  bg_pci_dev *pci = NULL;
  int e = bg_mock_plugin_usb_transport(i, &t);
  if (e >= 0) e = bg_usb_pci_open(t, &pci);
  if (e < 0) return e;
  memset(p, 0, sizeof(*p));
  snprintf(p->bdf, sizeof(p->bdf), "mockusb:%u", (unsigned)(unsigned char)i); /* i < BG_MOCK_MAX_DEVICES */
  p->bus = 4;
  uint32_t id = 0, cls = 0, sub = 0;
  if ((e = bg_pci_cfg_read(pci, 0x00, 4, &id)) < 0 || (e = bg_pci_cfg_read(pci, 0x08, 4, &cls)) < 0 ||
      (e = bg_pci_cfg_read(pci, 0x2c, 4, &sub)) < 0) {
    bg_pci_close(pci);
    return e;
  }
  p->vendor = (uint16_t)id, p->device = (uint16_t)(id >> 16);
  p->revision = (uint8_t)cls, p->class_code = cls >> 8;
  p->subvendor = (uint16_t)sub, p->subdevice = (uint16_t)(sub >> 16);
  p->chip = bg_pci_chip_lookup(p->vendor, p->device);
  p->is_gpu = bg_pci_is_gpu(p->vendor, p->device, p->class_code);
  p->bars_known = true;
  for (int b = 0; b < BG_PCI_NBARS; b++)
    if (bg_pci_bar_info(pci, b, &p->bars[b]) < 0) memset(&p->bars[b], 0, sizeof(p->bars[b]));
  snprintf(p->note, sizeof(p->note), "PCIe 04:00.0 behind the emulated ASM24 bridge mockusb:%d", i);
  snprintf(p->link_speed, sizeof(p->link_speed), "USB (ASM24 bridge)");
  /* The bridge's GPU starts powered on, not booted: boot it (am/ takes pci) so its SMU answers. */
  bg_am_query_open oo = {.fw_dir = md->fw_dir[0] ? md->fw_dir : NULL, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  bg_am_query_boot rep;
  e = bg_am_query_dev_open_pci(pci, &oo, &d);
  if (e >= 0) e = bg_am_query_boot_run(d, false, &rep);
  if (e < 0) {
    am->state = SMI_AM_ERROR;
    snprintf(am->msg, sizeof(am->msg), "booting it over the emulated bridge: %s", bg_last_error());
  } else {
    smi_am_metrics_dev(d, am);
  }
  bg_am_query_dev_close(d);
  return 0;
}

smi_inventory *smi_mockusb_inventory(const smi_opts *o) {
  smi_inventory *emu = calloc(1, sizeof(*emu));
  if (!emu) return NULL;
  snprintf(emu->pci_source, sizeof(emu->pci_source), "MOCKUSB+AMD: emulated ASM24 bridges");
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKUSB", "AMD", &md);
  int n = e < 0 ? 0 : md.count;
  bool keep[BG_MOCK_MAX_DEVICES];
  for (int i = 0; i < BG_MOCK_MAX_DEVICES; i++) keep[i] = i < n;
  if (e >= 0 && smi_sel_is_mockusb(o)) e = smi_select_visible(o, keep, (size_t)n);
  if (e >= 0 && (!(emu->pci = calloc((size_t)n + 1, sizeof(*emu->pci))) ||
                 !(emu->pci_owner = calloc((size_t)n + 1, sizeof(*emu->pci_owner))) ||
                 !(emu->pci_mem = calloc((size_t)n + 1, sizeof(*emu->pci_mem))) ||
                 !(emu->am = calloc((size_t)n + 1, sizeof(*emu->am)))))
    e = bg_error(BG_ENOMEM, "out of memory listing the MOCKUSB+AMD devices");
  for (int i = 0; e >= 0 && i < n; i++) {
    if (!keep[i]) continue;
    size_t k = emu->npci;
    if ((e = usb_gpu(&md, i, &emu->pci[k], &emu->am[k])) < 0) break;
    emu->pci_owner[k].known = true;   /* the emulated bridges take no lock: nobody else can reach them */
    emu->pci_mem[k].used_known = true;
    emu->pci_scanned++;
    emu->pci_gpus += emu->pci[k].is_gpu;
    emu->npci++;
  }
  if (e < 0) {
    emu->pci_err = e;
    snprintf(emu->pci_msg, sizeof(emu->pci_msg), "MOCKUSB+AMD: %s", bg_last_error());
  }
  return emu;
}
