/* nv/nv_query.h: facts about an opened NVIDIA GPU for tools (hcq_smi list) and the device check: driver, ABI family,
 * PCI identity, UUID, SM, the classes chosen and listed, GR info, memory, clocks and temperature. Values RM refuses to
 * give (a sandboxed driver, the emulated one) are -1 (signed) or 0 with the reason in the *_note fields. */
#ifndef BG_NV_QUERY_H
#define BG_NV_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "baregpu/hcq.h"

typedef struct bg_nv_query {
  char iface[16];               /* "NVK", "MOCKNVK" */
  char driver_version[32];      /* "580.65.06" */
  char version_source[48];      /* the step it came from */
  unsigned abi_family;          /* 570, 580, 610 */
  uint16_t pci_vendor, pci_device;
  char bdf[16];
  char uuid[48];                /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
  char name[72];                /* NV2080_CTRL_CMD_GPU_GET_NAME_STRING, "" when refused */
  char arch[16];                /* "sm_90" */
  uint32_t sm_version;          /* NV2080_CTRL_GR_INFO_SM_VERSION_* */
  const char *generation;       /* "Hopper" */
  uint32_t usermode_class, gpfifo_class, compute_class, copy_class;
  int qmd_version;
  unsigned nclasses;
  uint32_t classes[512];
  uint32_t gpcs, tpc_per_gpc, sm_per_tpc, max_warps_per_sm;
  int64_t mem_total, mem_free;  /* bytes; -1 when RM refused NV2080_CTRL_CMD_FB_GET_INFO_V2 */
  int64_t bar_size;             /* card info's framebuffer BAR size */
  int64_t pstate;               /* NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE (0 = P0), -1 refused */
  int64_t gpc_clock_mhz, mem_clock_mhz; /* -1: not read (no clock control in the open driver's headers) */
  int64_t temperature_c;        /* -1: not read (no thermal control in the open driver's headers) */
  bool perf_boost, virtmem, map_dma;
  char mem_note[160];           /* why mem_total is -1 */
} bg_nv_query;

/* Fill *out for an open NV device (DEV=NVK+NV / MOCKNVK+NV). -BG_EINVAL when d is not one. */
int bg_nv_query_info(bg_dev *d, bg_nv_query *out);

#endif
