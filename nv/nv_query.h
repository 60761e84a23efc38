/* nv/nv_query.h: facts about an opened NVIDIA GPU for tools (hcq_smi list) and the device check: driver, ABI family,
 * PCI identity, UUID, SM, the classes chosen and listed, GR info, memory, clocks and temperature. Values RM refuses to
 * give (a sandboxed driver, the emulated one) are 0 (temperature: -1), memory with the reason in mem_note. */
#ifndef BG_NV_QUERY_H
#define BG_NV_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "baregpu/hcq.h"

typedef struct bg_nv_query {
  char iface[16];               /* "NVK", "MOCKNVK" */
  char driver_version[32];      /* "580.65.06" */
  char version_source[48];      /* the step it came from */
  unsigned family;              /* ABI family: 570, 580, 610 */
  uint16_t pci_vendor, pci_device;
  char bdf[16];
  char uuid[48];                /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char name[72];                /* NV2080_CTRL_CMD_GPU_GET_NAME_STRING, "" when refused */
  char arch[16];                /* "sm_90" */
  unsigned sm;                  /* 90 */
  uint32_t sm_version;          /* NV2080_CTRL_GR_INFO_SM_VERSION_* */
  const char *generation;       /* "Hopper" */
  uint32_t usermode_class, gpfifo_class, compute_class, copy_class;
  int qmd_version;
  unsigned nclasses;
  uint32_t classes[512];
  uint32_t gpcs, tpc_per_gpc, sm_per_tpc, max_warps_per_sm;
  uint64_t vram_total, vram_free; /* bytes; 0 when RM refused NV2080_CTRL_CMD_FB_GET_INFO_V2 (mem_note says why) */
  int64_t bar_size;             /* card info's framebuffer BAR size */
  int64_t pstate;               /* NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE (0 = P0), -1 refused */
  uint32_t gpc_mhz, mem_mhz;    /* 0: not read (no clock control in the open driver's headers) */
  int temp_c;                   /* GPU sensor 0 (THERMAL_SYSTEM_EXECUTE_V2), degrees C; -1 when RM refuses it */
  bool perf_boost, virtmem, map_dma;
  char mem_note[160];           /* why vram_total is 0 */
} bg_nv_query;

/* Fill *out for an open NV device (DEV=NVK+NV / MOCKNVK+NV). -BG_EINVAL when d is not one. */
int bg_nv_query_info(bg_dev *d, bg_nv_query *out);

#endif
