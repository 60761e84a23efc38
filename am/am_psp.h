/* am/am_psp.h: the PSP (MP0) of an AM device (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP): sOS bootloader, KM ring, ring commands, firmware
 * loading. Registers: regMP0_SMN_C2PMSG_* (MP0 13) / regMPASP_SMN_C2PMSG_* (MP0 14), cached in bg_am_dev.
 * Every wait has the device's timeout and names the register and the bits it waited for; a ring command with a
 * nonzero resp.status fails naming the command and the status. */
#ifndef BG_AM_PSP_H
#define BG_AM_PSP_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bootloader commands (C2PMSG_35) and ring command ids (psp_gfx_if.h). */
enum {
  BG_PSP_BL_SYSDRV = 0x10000, BG_PSP_BL_SOSDRV = 0x20000, BG_PSP_BL_KEY_DATABASE = 0x80000,
  BG_PSP_BL_SOCDRV = 0xB0000, BG_PSP_BL_DBGDRV = 0xC0000, BG_PSP_BL_INTFDRV = 0xD0000,
  BG_PSP_BL_RASDRV = 0xE0000, BG_PSP_BL_TOS_SPL_TABLE = 0x10000000,
};
enum {
  BG_PSP_CMD_SETUP_TMR = 0x5, BG_PSP_CMD_LOAD_IP_FW = 0x6, BG_PSP_CMD_LOAD_TOC = 0x20,
  BG_PSP_CMD_AUTOLOAD_RLC = 0x21, BG_PSP_CMD_SRIOV_SPATIAL_PART = 0x27,
};
#define BG_PSP_CTRL_DESTROY_RINGS 0x30000u
#define BG_PSP_RING_TYPE_KM 2u
#define BG_PSP_RING_SIZE 0x10000u
#define BG_PSP_TMR_MAX 0x1300000u
#define BG_PSP_RESP_STATUS 864u
#define BG_PSP_RESP_TMR_SIZE 880u

/* sOS alive: C2PMSG_81 != 0. */
bool bg_am_psp_sos_alive(bg_am_dev *d);
/* Step 1: the sOS components present in the image, in bootloader order; *ncomp gets the count (may be NULL).
 * Nothing is done when sOS is already alive. */
int bg_am_psp_bootloader(bg_am_dev *d, int *ncomp);
/* Step 2: destroy an existing ring, create the KM ring at bm.psp_ring. */
int bg_am_psp_ring_create(bg_am_dev *d);
int bg_am_psp_ring_destroy(bg_am_dev *d);
/* One ring command: cmd_id with `n` dwords of the command union at +28. *resp (may be NULL) gets the
 * psp_gfx_cmd_resp dword at byte offset resp_off after completion (e.g. BG_PSP_RESP_TMR_SIZE). */
int bg_am_psp_submit(bg_am_dev *d, uint32_t cmd_id, const uint32_t *u, int n, uint32_t resp_off, uint32_t *resp);
/* Steps 3-7: LOAD_TOC, SMU firmware, SETUP_TMR (per MP0 version), LOAD_IP_FW of every descriptor,
 * AUTOLOAD_RLC (GC >= 11) or REG_LIST (gfx9). *ncmds gets the ring commands issued (may be NULL). */
int bg_am_psp_load_fw(bg_am_dev *d, int *ncmds);
/* SRIOV_SPATIAL_PART (0x27) {mode} (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP step 8): from GFX init when there are several XCCs (mode 1: SPX). */
int bg_am_psp_spatial_partition(bg_am_dev *d, uint32_t mode);
/* Whole init_hw: bootloader, ring, firmware. */
int bg_am_psp_init(bg_am_dev *d);
/* SETUP_TMR is issued on this MP0 (!boot_time_tmr || !autoload_tmr). */
bool bg_am_psp_needs_setup_tmr(const bg_am_dev *d);
const char *bg_am_psp_cmd_name(uint32_t cmd_id);

#ifdef __cplusplus
}
#endif
#endif
