/* am/am_query.h: what programs above the library (tools/, tests/bench) ask of an AMD GPU that AM drives, without
 * the driver's internals: open and boot by BDF with the steps' times, the chip and its firmware, SMU sensors
 * (temperatures, power, clocks, activity), SMU mode1 reset, and for the emulator-timing bench the BAR views.
 *
 * The device is opaque here (bg_am_dev is am/am_dev.h's); every result is copied into the plain structures below.
 * Functions return 0 or a negative BG_E* code with bg_error's message, like the rest of am/. Internal to the static
 * library (tools and tests link baregpu_static_dep), not the public ABI. */
#ifndef BG_AM_AM_QUERY_H
#define BG_AM_AM_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "platform/mmio.h"
#include "platform/pci.h"

typedef struct bg_am_dev bg_am_dev;

/* How to open (bg_am_open_opts, am/am_dev.h): fw_dir NULL = $BG_FIRMWARE_DIR, else /lib/firmware/amdgpu;
 * timeout_ms 0 = 10000; settle_ms and reset_delay_ms <0 none, 0 the library's (20, 500). */
typedef struct bg_am_query_open {
  const char *fw_dir;
  int timeout_ms, settle_ms, reset_delay_ms;
} bg_am_query_open;

/* Open the AMD GPU at bdf through sysfs (lock, BARs, discovery, register tables, firmware set); no boot. */
int bg_am_query_dev_open(const char *bdf, const bg_am_query_open *o, bg_am_dev **out);
/* The same for a PCI device already open (a GPU behind a USB bridge); takes pci (closed on failure too). */
int bg_am_query_dev_open_pci(bg_pci_dev *pci, const bg_am_query_open *o, bg_am_dev **out);
void bg_am_query_dev_close(bg_am_dev *d);  /* NULL: nothing */
/* Monotonic milliseconds, the clock the boot times its steps with. */
double bg_am_query_now_ms(void);

typedef struct bg_am_query_ip {
  unsigned maj, min, rev;
} bg_am_query_ip;

typedef struct bg_am_query_fw {
  const char *name;  /* "psp_13_0_0_sos.bin" */
  size_t len;
} bg_am_query_fw;

#define BG_AM_QUERY_MAX_FW 32

/* The chip as opened: ids, sizes, IP versions, the firmware files it loaded, the register access counts so far. */
typedef struct bg_am_query_info {
  uint16_t device_id;
  const char *chip, *product;  /* NULL: not in am/chips.c's table */
  const char *arch;            /* "gfx1100" from discovery */
  uint64_t vram_size, bar0_size;
  bg_am_query_ip gc, mp0, mp1, sdma0;
  const char *fw_dir;
  int fw_descs;                /* firmware descriptors of the set */
  int nfw;
  bg_am_query_fw fw[BG_AM_QUERY_MAX_FW];  /* the files present, in load order */
  uint64_t nrreg, nwreg;
} bg_am_query_info;

void bg_am_query_info_get(const bg_am_dev *d, bg_am_query_info *out);

/* The boot (bg_am_boot, am/am_boot.h): whether it was a warm start (magic in SCRATCH_REG7, the value in magic) or a
 * boot after a mode1 reset, counts, and each step's time in ms (0: the step did not run). */
typedef struct bg_am_query_boot {
  bool warm, mode1_reset;
  int bl_components, ring_cmds;
  uint32_t magic;
  double ms_reset, ms_soc, ms_gmc, ms_ih, ms_bootloader, ms_ring, ms_fw, ms_smu, ms_gfx, ms_sdma;
} bg_am_query_boot;

/* Boot d (force_reset: AM_RESET=1, ignore the warm-start magic); rep is filled also on failure. */
int bg_am_query_boot_run(bg_am_dev *d, bool force_reset, bg_am_query_boot *rep);

/* SMU sensors (am/am_smu.h bg_am_smu_metrics). cdna: SMU 13.0.6 (MI300), no edge temperature and no fan. */
typedef struct bg_am_query_metrics {
  unsigned temp_edge, temp_hotspot, temp_mem;  /* C */
  unsigned power_w, power_limit_w;
  unsigned gfxclk;                             /* MHz, average pre-DS */
  uint32_t socclk, uclk, fclk;                 /* MHz, current */
  unsigned gfx_activity, mem_activity;         /* % */
  unsigned fan_rpm;
  bool cdna;
} bg_am_query_metrics;

/* sOS answers (PSP booted by AM or amdgpu) / the SMU answers a test message. */
bool bg_am_query_sos_alive(bg_am_dev *d);
bool bg_am_query_smu_alive(bg_am_dev *d);
/* Read the metrics table; point_table first points the SMU's driver table at the boot region (SetDriverDramAddrHigh/
 * Low, as every AM open computes it), for a device booted by an earlier process. */
int bg_am_query_metrics_read(bg_am_dev *d, bool point_table, bg_am_query_metrics *out);
/* The SMU firmware version "14.0.2" (MP1 IP version). */
void bg_am_query_smu_version(const bg_am_dev *d, char *buf, size_t n);
/* PCI_COMMAND bus mastering on or off; SMU mode1 reset (then the reset delay). */
int bg_am_query_bus_master(bg_am_dev *d, bool on);
int bg_am_query_mode1_reset(bg_am_dev *d);

/* The AM device of an HCQ device (NULL when dev is not an AMD one), whether it sits behind a USB bridge, and its PCI
 * device and BAR views (VRAM, doorbells, registers) for instrumentation (tests/bench/launch.c times the emulator). */
bg_am_dev *bg_am_query_of(bg_dev *dev);
bool bg_am_query_is_usb(bg_dev *dev);
bg_pci_dev *bg_am_query_pci(bg_am_dev *d);
void bg_am_query_views(bg_am_dev *d, bg_mmio **vram, bg_mmio **doorbell, bg_mmio **mmio);

#endif
