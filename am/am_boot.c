/* am/am_boot.c: top-level AM bring-up (am/am_boot.h). */
#include "am/am_boot.h"

#include <inttypes.h>
#include <string.h>

#include "am/am_psp.h"
#include "am/am_smu.h"
#include "baregpu/error.h"
#include "hcq/pci_regs.h"

bool bg_am_boot_check_warm(bg_am_dev *d) {
  if (bg_am_rr(d, BG_AM_R_SCRATCH7) != BG_AM_BOOT_MAGIC) return false;
  return bg_am_rr(d, BG_AM_R_SCRATCH6) == 0 && bg_am_rr(d, BG_AM_R_FAULT_STATUS) == 0;
}

int bg_am_boot_bus_master(bg_am_dev *d, bool on) {
  uint32_t cmd = 0;
  int e = bg_pci_cfg_read(d->pci, BG_PCI_COMMAND, 2, &cmd);
  if (e < 0) return e;
  cmd = on ? (cmd | BG_PCI_COMMAND_MASTER) : (cmd & ~(uint32_t)BG_PCI_COMMAND_MASTER);
  if ((e = bg_pci_cfg_write(d->pci, BG_PCI_COMMAND, 2, cmd)) < 0) return e;
  return bg_pci_cfg_read(d->pci, BG_PCI_COMMAND, 2, &cmd); /* flush */
}

int bg_am_boot_reset_if_alive(bg_am_dev *d, bool *did) {
  *did = false;
  if (!bg_am_psp_sos_alive(d) || !bg_am_smu_alive(d)) return 0;
  int e = bg_am_boot_bus_master(d, false);
  if (e >= 0) e = bg_am_smu_mode1_reset(d);
  int e2 = bg_am_boot_bus_master(d, true);
  if (e < 0) return e;
  *did = true;
  return e2;
}

#define STEP(field, call)                          \
  do {                                             \
    double t0_ = bg_am_now_ms();                   \
    e = (call);                                    \
    r->field = bg_am_now_ms() - t0_;               \
    if (e < 0) return e;                           \
  } while (0)

int bg_am_boot(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep) {
  bg_am_boot_report local = {0};
  bg_am_boot_report *r = rep ? rep : &local;
  memset(r, 0, sizeof(*r));
  int e;
  if (!(opts && opts->force_reset) && bg_am_boot_check_warm(d)) {
    r->warm = true;
    BG_LOG(1, "am: %s: warm start (SCRATCH_REG7 = 0x%x): PSP and SMU left as they are", d->bdf, BG_AM_BOOT_MAGIC);
    return 0;
  }
  STEP(ms_reset, bg_am_boot_reset_if_alive(d, &r->mode1_reset));
  if (r->mode1_reset) BG_LOG(1, "am: %s: mode1 reset %.1f ms", d->bdf, r->ms_reset);
  if ((e = bg_am_boot_bus_master(d, true)) < 0) return e;
  STEP(ms_bootloader, bg_am_psp_bootloader(d, &r->bl_components));
  BG_LOG(1, "am: %s: psp: bootloader %d components %.1f ms", d->bdf, r->bl_components, r->ms_bootloader);
  STEP(ms_ring, bg_am_psp_ring_create(d));
  BG_LOG(1, "am: %s: psp: ring create %.1f ms", d->bdf, r->ms_ring);
  STEP(ms_fw, bg_am_psp_load_fw(d, &r->ring_cmds));
  BG_LOG(1, "am: %s: psp: firmware %d ring commands (%d descriptors) %.1f ms", d->bdf, r->ring_cmds, d->fw->ndescs,
         r->ms_fw);
  STEP(ms_smu, bg_am_smu_init(d));
  BG_LOG(1, "am: %s: smu: init (driver table 0x%" PRIx64 ") %.1f ms", d->bdf, d->bm.smu_table, r->ms_smu);
  return 0;
}
