/* am/am_boot.h: the top-level AM bring-up sequence, as far as it is implemented (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__, AMDev.fini):
 *
 *   bg_am_dev_open     open, PCI id, BARs, MEMSIZE, discovery, register tables, firmware (validated before any
 *                      register write), boot-region allocations
 *   bg_am_boot_check_warm   SCRATCH_REG7 == BG_AM_BOOT_MAGIC (0xB6000001, ours, not tinygrad's 0xA0000008)
 *                      && SCRATCH_REG6 == 0 && GCVM_L2_PROTECTION_FAULT_STATUS(_LO32) == 0
 *   bg_am_boot_reset_if_alive   sOS and SMU answering (left by amdgpu or a previous run): bus mastering off,
 *                      SMU mode1 reset, bus mastering on
 *   init_sw relayout   (every boot, also warm) the boot region in tinygrad's init_sw order: the PSP/SMU
 *                      allocations bg_am_dev_open made are freed, then GMC (root page table, memscratch, dummy
 *                      page), IH (2 rings + wptr pages) and the PSP/SMU buffers are allocated again in that order,
 *                      so the addresses are those of tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw (until am_dev.c's init_sw calls GMC/IH itself)
 *   bg_am_soc_init     (am/am_soc.h)
 *   bg_am_gmc_init     MMHUB and GC hubs (am/am_gmc.h)
 *   bg_am_ih_init      IH rings (am/am_ih.h)
 *   bg_am_psp_init     bootloader, ring, firmware (am/am_psp.h)
 *   bg_am_smu_init     driver table, features (am/am_smu.h)
 *   bg_am_gfx_init     RLC autoload wait, MEC start, SH_MEM (am/am_gfx.h); bg_am_sdma_init (am/am_sdma.h)
 *   queues             compute HQD ME1 pipe0 queue0 from an MQD (doorbell 3), SDMA0 queue0 ring (doorbell 256)
 *                      (GC 9.4.3: also the AQL queue 1 on every XCC, doorbell 4; SDMA 4.4.2 instance 0 GFX ring)
 *   magic              SCRATCH_REG7 = BG_AM_BOOT_MAGIC, SCRATCH_REG6 = 1 ("in use"; bg_am_boot_fini writes 0)
 *
 * Warm start (magic present, SCRATCH_REG6 == 0, no GC fault pending, !force_reset; tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__ partial boot): SOC, GMC
 * hw init (MMHUB), IH, PSP (sOS, ring, firmware, RLC autoload) and SMU (driver table, features) are left as the
 * previous run left them, reusing in place the boot-region structures init_sw lays out at the same addresses (MM
 * root page table, IH rings, PSP ring/fence/cmd, SMU driver table, MQD pages). Redone: GC hub init, reset_mec
 * (dequeue, config_mec, enable_mec), SDMA init, both queues, and the magic/SCRATCH_REG6 writes. The previous
 * run must have called bg_am_boot_fini (SCRATCH_REG6 = 0), else the next boot is cold (mode1 reset first).
 *
 * Each step is timed and logged at BG_DEBUG=1 ("am: psp: bootloader 8 components 1.2 ms"). Post-boot:
 * set_clocks(-1) (AM_POWER_LIMIT=<W>: SetPptLimit + unlimited soft clocks), SOC/GFX clock gating: every boot, after SDMA init. */
#ifndef BG_AM_BOOT_H
#define BG_AM_BOOT_H

#include <stdbool.h>

#include "am/am_dev.h"
#include "am/am_gfx.h"
#include "am/am_gmc.h"
#include "am/am_ih.h"
#include "am/am_sdma.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_am_boot_opts {
  bool force_reset;   /* ignore the warm-start magic (also when the environment has AM_RESET=1) */
} bg_am_boot_opts;

typedef struct bg_am_boot_report {
  bool warm;          /* previous run's state reused; nothing was initialised */
  bool mode1_reset;   /* sOS/SMU were alive and were reset first */
  int bl_components;  /* sOS components loaded by the bootloader */
  int ring_cmds;      /* PSP ring commands issued */
  double ms_reset, ms_soc, ms_gmc, ms_ih, ms_bootloader, ms_ring, ms_fw, ms_smu, ms_gfx, ms_sdma, ms_clocks;
} bg_am_boot_report;

/* Whether the device carries our magic and a clean state (reads only). */
bool bg_am_boot_check_warm(bg_am_dev *d);
/* If the SMU answers and the sOS does or SCRATCH_REG6 != 0 (a previous owner did not finish): bus mastering off, mode1
 * reset, bus mastering on (*did set accordingly); then SCRATCH_REG6 = 1 (booting, until bg_am_boot_fini). */
int bg_am_boot_reset_if_alive(bg_am_dev *d, bool *did);
/* Toggle PCI_COMMAND bus mastering (write, then read back). */
int bg_am_boot_bus_master(bg_am_dev *d, bool on);
/* The blocks a boot set up (kept by bg_am_boot_ex for the caller; bg_am_boot frees them at the end, without fini). */
typedef struct bg_am_blocks {
  bg_am_gmc *gmc;
  bg_am_ih *ih;
  bg_am_gfx *gfx;
  bg_am_sdma *sdma;
} bg_am_blocks;
/* The sequence above; rep and opts may be NULL. */
int bg_am_boot(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep);
/* Same, handing the GMC/IH state to *blk (free with bg_am_blocks_free, before bg_am_dev_close; also on error). */
int bg_am_boot_ex(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep, bg_am_blocks *blk);
/* Recovery's last resort (bg_am_hcq_recover when a queue will not reset): mode1 reset of a booted device and the cold
 * boot's hardware steps again on the blocks it has (page tables, rings, boot memory: VRAM the reset keeps), so the
 * open device takes work again. BG_EIO when the SMU does not answer (no reset was possible). */
int bg_am_boot_reset_in_place(bg_am_dev *d, bg_am_blocks *blk, bg_am_boot_report *rep);
void bg_am_blocks_free(bg_am_blocks *blk);
/* fini (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__, AMDev.fini): SDMA ring off, HQDs dequeued, SCRATCH_REG6 = 0 (clean exit: the next open may start warm). */
int bg_am_boot_fini(bg_am_dev *d, bg_am_blocks *blk);

#ifdef __cplusplus
}
#endif
#endif
