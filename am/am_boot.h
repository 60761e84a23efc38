/* am/am_boot.h: the top-level AM bring-up sequence, as far as it is implemented (am.md §4 top level, §5):
 *
 *   bg_am_dev_open     open, PCI id, BARs, MEMSIZE, discovery, register tables, firmware (validated before any
 *                      register write), boot-region allocations
 *   bg_am_boot_check_warm   SCRATCH_REG7 == BG_AM_BOOT_MAGIC (0xB6000001, ours, not tinygrad's 0xA0000008)
 *                      && SCRATCH_REG6 == 0 && GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) == 0
 *   bg_am_boot_reset_if_alive   sOS and SMU answering (left by amdgpu or a previous run): bus mastering off,
 *                      SMU mode1 reset, bus mastering on
 *   bg_am_psp_init     bootloader, ring, firmware (am/am_psp.h)
 *   bg_am_smu_init     driver table, features (am/am_smu.h)
 *
 * Each step is timed and logged at BG_DEBUG=1 ("am: psp: bootloader 8 components 1.2 ms"). Not implemented and
 * not called: SOC, GMC, IH (which precede PSP in tinygrad's init_hw), GFX, SDMA, clock gating, and writing
 * SCRATCH_REG7/6 at the end (only a complete boot may claim the magic, so this partial sequence never writes it).
 * A warm device (magic present) is left as it is: bg_am_boot returns with warm = true. */
#ifndef BG_AM_BOOT_H
#define BG_AM_BOOT_H

#include <stdbool.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_am_boot_opts {
  bool force_reset;   /* AM_RESET=1: ignore the warm-start magic */
} bg_am_boot_opts;

typedef struct bg_am_boot_report {
  bool warm;          /* previous run's state reused; nothing was initialised */
  bool mode1_reset;   /* sOS/SMU were alive and were reset first */
  int bl_components;  /* sOS components loaded by the bootloader */
  int ring_cmds;      /* PSP ring commands issued */
  double ms_reset, ms_bootloader, ms_ring, ms_fw, ms_smu;
} bg_am_boot_report;

/* Whether the device carries our magic and a clean state (reads only). */
bool bg_am_boot_check_warm(bg_am_dev *d);
/* If sOS and SMU answer: bus mastering off, mode1 reset, bus mastering on (*did set accordingly). */
int bg_am_boot_reset_if_alive(bg_am_dev *d, bool *did);
/* Toggle PCI_COMMAND bus mastering (write, then read back). */
int bg_am_boot_bus_master(bg_am_dev *d, bool on);
/* The sequence above; rep and opts may be NULL. */
int bg_am_boot(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep);

#ifdef __cplusplus
}
#endif
#endif
