/* tools/smi_mock.c: the emulated devices of tests/mockgpu for hcq_smi and bg-bringup (--dev MOCKPCI+AMD,
 * and `hcq_smi list --all`).
 *
 * Emulated GPUs live in the process that starts them: the library's loader (hcq/mock_plugin.h) dlopens
 * libbaregpu-mock.so, which builds a fake sysfs tree whose files carry the devices' register hooks, a lock
 * directory and a firmware directory with correctly-headed images. The tools then run their usual sysfs code on
 * that tree: BG_SYSFS_ROOT, BG_LOCK_DIR and BG_FIRMWARE_DIR name the plugin's directories, as MOCKPCI+AMD's own
 * open does (am/am_iface.c). Each process gets its GPU powered on but not booted, so a command that needs a
 * running SMU (list's metrics, reset's mode1 reset) boots it first (smi_mock_enter with boot). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "baregpu/error.h"
#include "hcq/mock_plugin.h"
#include "tools/smi.h"

static const char *const ENV_NAMES[SMI_MOCK_NENV] = {"BG_SYSFS_ROOT", "BG_LOCK_DIR", "BG_FIRMWARE_DIR"};

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
  bg_am_open_opts oo = {.fw_dir = md->fw_dir[0] ? md->fw_dir : NULL, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  int e = bg_am_dev_open(md->bdf[i], &oo, &d);
  bg_am_boot_report rep;
  if (e >= 0) e = bg_am_boot(d, NULL, &rep);
  if (e < 0) snprintf(err, n, "booting the emulated GPU %s: %s", md->bdf[i], bg_last_error());
  bg_am_dev_close(d);
  return e;
}

int smi_mock_enter(bool boot, smi_mock_env *saved, char *err, size_t n) {
  memset(saved, 0, sizeof(*saved));
  bg_mock_devices md;
  int e = bg_mock_plugin_start("MOCKPCI", "AMD", &md);
  if (e < 0) {
    snprintf(err, n, "MOCKPCI+AMD: %s", bg_last_error());
    return e;
  }
  const char *vals[SMI_MOCK_NENV] = {md.sysfs_root, md.lock_dir, md.fw_dir};
  for (int k = 0; k < SMI_MOCK_NENV; k++) {
    const char *old = getenv(ENV_NAMES[k]);
    saved->had[k] = old != NULL;
    if (old) snprintf(saved->old[k], sizeof(saved->old[k]), "%s", old);
    if (vals[k][0] && setenv(ENV_NAMES[k], vals[k], 1) < 0) {
      smi_mock_leave(saved);
      snprintf(err, n, "MOCKPCI+AMD: cannot set %s", ENV_NAMES[k]);
      return -BG_ENOMEM;
    }
  }
  saved->entered = true;
  started = md;
  snprintf(saved->root, sizeof(saved->root), "%s", md.sysfs_root);
  saved->count = md.count;
  for (int i = 0; boot && i < md.count; i++)
    if ((e = boot_one(&md, i, err, n)) < 0) return e;
  return 0;
}

void smi_mock_leave(smi_mock_env *saved) {
  for (int k = 0; k < SMI_MOCK_NENV; k++) {
    if (saved->had[k]) setenv(ENV_NAMES[k], saved->old[k], 1);
    else unsetenv(ENV_NAMES[k]);
  }
  saved->entered = false;
}

smi_inventory *smi_mock_inventory(void) {
  smi_inventory *emu = calloc(1, sizeof(*emu));
  if (!emu) return NULL;
  smi_opts o = {0};
  char err[512];
  smi_mock_env env = {0};
  if (smi_sel_parse("MOCKPCI+AMD", &o, err, sizeof(err)) < 0 || smi_mock_enter(true, &env, err, sizeof(err)) < 0) {
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
