/* am/am_dev.h: an AM device opened on a PCI function (tinygrad tinygrad/runtime/support/system.py PCIDevice; tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access, AMDev._run_discovery, AMDev.init_sw).
 *
 * bg_am_dev_open() does, in this order, with register READS only (no register write, no VRAM write) until the
 * firmware set is loaded and validated:
 *   open the function through sysfs (platform/pci.h) -> check the PCI id (am/chips.h) -> map BAR0 (VRAM, WC),
 *   BAR2 (doorbells), BAR5 (registers) -> MEMSIZE (0xde3) -> discovery table at VRAM - 64 KiB through BAR0
 *   -> GC support check -> register tables (am/am_regs.h) and the cached addresses below -> firmware set
 *   (am/fw_load.h, from opts->fw_dir, else $BG_FIRMWARE_DIR, else /lib/firmware/amdgpu) ->
 *   the boot-region VRAM allocator (am/mm_vram.h) and the PSP/SMU boot allocations (init_sw, deterministic).
 * A corrupt, truncated, missing or wrong-chip firmware file fails the open with the file named and nothing
 * written to the device. (Exception: when BAR0 is smaller than VRAM the discovery table is read through
 * MM_INDEX/MM_DATA, which writes the MM_INDEX registers; the mock and large-BAR boards never take that path.)
 *
 * Register access: bg_am_rreg/bg_am_wreg take absolute dword addresses; below the BAR5 size they go to BAR5,
 * beyond through BIF_BX_PF0_RSMU_INDEX/DATA of the NBIO table. BG_DEBUG=3 logs every write with the register's
 * name when it is one of the cached registers ("am: wreg regMPASP_SMN_C2PMSG_35 (0x16063) = 0x80000"),
 * BG_DEBUG=4 every read too. Every access counts in nrreg/nwreg and goes to opts->trace when set.
 *
 * MC addresses: VRAM offset + FB base; AM programs no FB offset, so mc == VRAM offset (also on the mock).
 * One thread at a time. */
#ifndef BG_AM_DEV_H
#define BG_AM_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_ip.h"
#include "am/am_regs.h"
#include "am/chips.h"
#include "am/discovery.h"
#include "am/fw_load.h"
#include "am/mm_vram.h"
#include "platform/mmio.h"
#include "platform/pci.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Our SCRATCH_REG7 "booted by this driver" magic: distinct from tinygrad's 0xA0000008 (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__) because
 * the C boot-region layout is not byte-identical to the Python one. */
#define BG_AM_BOOT_MAGIC 0xB6000001u

/* Register access observer (tests: count accesses, compare sequences). addr is the absolute dword address. */
typedef void (*bg_am_trace_fn)(void *ctx, bool write, uint32_t addr, uint32_t val);

typedef struct bg_am_open_opts {
  const char *fw_dir;      /* NULL: $BG_FIRMWARE_DIR, else /lib/firmware/amdgpu */
  unsigned pci_flags;      /* bg_pci_open_sysfs flags (BG_PCI_UNBIND_DRIVER, ...) */
  int timeout_ms;          /* PSP/SMU waits; 0: 10000 */
  int settle_ms;           /* sleeps around ring create/destroy (20 in tinygrad); <0: none; 0: 20 */
  int reset_delay_ms;      /* sleep after a mode1 reset (500 in tinygrad); <0: none; 0: 500 */
  bg_am_trace_fn trace;
  void *trace_ctx;
} bg_am_open_opts;

/* A register the driver uses, resolved once. */
typedef struct bg_am_regref {
  const char *name;
  uint32_t addr;
} bg_am_regref;

enum bg_am_regid {
  BG_AM_R_PSP35, BG_AM_R_PSP36, BG_AM_R_PSP64, BG_AM_R_PSP67, BG_AM_R_PSP69, BG_AM_R_PSP70, BG_AM_R_PSP71,
  BG_AM_R_PSP81,
  BG_AM_R_SMU53, BG_AM_R_SMU54, BG_AM_R_SMU66, BG_AM_R_SMU75, BG_AM_R_SMU82, BG_AM_R_SMU90,
  BG_AM_R_RSMU_INDEX, BG_AM_R_RSMU_DATA, BG_AM_R_HDP_REMAP,
  BG_AM_R_SCRATCH6, BG_AM_R_SCRATCH7, BG_AM_R_FAULT_STATUS,
  BG_AM_R_COUNT
};

/* Boot-region allocations of the implemented blocks (VRAM offsets), in init_sw order. */
typedef struct bg_am_boot_mem {
  uint64_t psp_msg1;  /* 1 MiB staging, 1 MiB aligned */
  uint64_t psp_cmd;   /* 4 KiB command buffer */
  uint64_t psp_fence; /* 4 KiB, zeroed */
  uint64_t psp_ring;  /* 64 KiB KM ring */
  uint64_t psp_tmr;   /* 0x1300000, 1 MiB aligned; 0 (none) when the bootloader sets up the TMR */
  uint64_t smu_table; /* 16 KiB driver table */
} bg_am_boot_mem;

typedef struct bg_am_dev {
  bg_pci_dev *pci;
  char bdf[32];
  const bg_chip_info *chip;
  uint16_t device_id;
  bg_mmio vram, doorbell, mmio; /* BAR0, BAR2, BAR5 */
  uint64_t bar0_size, vram_size;
  struct bg_am_discovery disc;
  struct bg_am_regset regs;
  bg_am_ipver gc, mp0, mp1;
  bg_am_ipset ip; /* per-block descriptors chosen from the IP versions (am/am_ip.h), set once at open */
  bg_am_regref r[BG_AM_R_COUNT];
  bg_am_fw *fw;
  bg_am_vram *mm;
  bg_am_boot_mem bm;
  bg_am_open_opts opts;
  uint64_t nrreg, nwreg;
  uint32_t hdp_flush_dw; /* pinned HDP flush dword (bg_am_flush_hdp_pin), 0: not pinned yet */
  /* PSP / SMU runtime state */
  uint32_t psp_fence_seq;
  uint32_t psp_tmr_size;
  bool smu_features;
  uint32_t dpm_n[5], dpm_freq[5][16]; /* cached GetDpmFreqByIndex levels of the PPCLKs 0..4 (4: FCLK on 13.0.6) */
  bool dpm_read;
} bg_am_dev;

/* Open and validate (see above). On failure *out is NULL and the message names the step. */
int bg_am_dev_open(const char *bdf, const bg_am_open_opts *opts, bg_am_dev **out);
/* The same on a function opened by another interface (the USB bridge, usb/usb_pci.h): the device takes pci
 * (closed by bg_am_dev_close, or here on failure); opts->pci_flags is not used. */
int bg_am_dev_open_pci(bg_pci_dev *pci, const bg_am_open_opts *opts, bg_am_dev **out);
void bg_am_dev_close(bg_am_dev *d);

uint32_t bg_am_rreg(bg_am_dev *d, uint32_t addr);
/* Count (and trace, log) a read of the direct register addr made by other means (a batched bridge read). */
void bg_am_count_read(bg_am_dev *d, uint32_t addr, uint32_t v);
int bg_am_wreg(bg_am_dev *d, uint32_t addr, uint32_t val);
static inline uint32_t bg_am_rr(bg_am_dev *d, enum bg_am_regid id) { return bg_am_rreg(d, d->r[id].addr); }
static inline int bg_am_wr(bg_am_dev *d, enum bg_am_regid id, uint32_t v) { return bg_am_wreg(d, d->r[id].addr, v); }
/* Name of a cached register at addr, or NULL. */
const char *bg_am_reg_name(const bg_am_dev *d, uint32_t addr);

/* Poll register `id` until (value & mask) == want, at most timeout_ms. -BG_ETIMEDOUT names the register, its
 * address, the mask, the expected and the last value, and `what`. */
int bg_am_wait_reg(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, uint32_t want, int timeout_ms, const char *what);
/* Same, until (value & mask) != 0. */
int bg_am_wait_reg_set(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, int timeout_ms, const char *what);
/* Same, and *last is the value of the poll's last read (the one that ended it): a mailbox's response is the read
 * that saw it non-zero, so it is not read again (one read per poll; tinygrad tinygrad/runtime/support/am/ip.py
 * AM_SMU._send_msg reads the response once). Set even on a timeout. */
int bg_am_wait_reg_set_val(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, int timeout_ms, const char *what,
                           uint32_t *last);

/* HDP flush after CPU writes to VRAM: write 0 to HDP_MEM_FLUSH_CNTL through the MMIO hole SOC init remaps it to
 * (Linux hdp_v4_0/v6_0/v7_0 flush_hdp: (rmmio_remap.reg_offset + KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL) >> 2); the one
 * HDP flush of am/ (the same on every generation). The dword is pinned by bg_am_flush_hdp_pin (SOC init, the HCQ
 * attach; a warm start pins at its first flush): it reads BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL and fails with
 * -BG_EIO naming the register and both values unless it holds the NBIO descriptor's hole (am_ip.h hdp_hole), so a
 * flush is never skipped silently. 0 or a negative BG_E* code (also a failed register write). */
int bg_am_flush_hdp(bg_am_dev *d);
int bg_am_flush_hdp_pin(bg_am_dev *d);

/* MC address of a VRAM offset. */
static inline uint64_t bg_am_mc(const bg_am_dev *d, uint64_t vram_off) { (void)d; return vram_off; }

/* Monotonic milliseconds, and a sleep (ms <= 0: none). */
double bg_am_now_ms(void);
void bg_am_sleep_ms(int ms);

#ifdef __cplusplus
}
#endif
#endif
