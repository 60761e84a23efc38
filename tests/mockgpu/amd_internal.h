/* tests/mockgpu/amd_internal.h: state shared by amd_gpu.c (device, register file), amd_psp.c and
 * amd_smu.c. Not for tests. */
#ifndef BG_MOCKGPU_AMD_INTERNAL_H
#define BG_MOCKGPU_AMD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amd_gpu.h"

/* Hook kinds of absolute register addresses. */
enum amd_hook_kind {
  AMD_H_NONE = 0,
  AMD_H_MEMSIZE, AMD_H_MM_INDEX, AMD_H_MM_DATA, AMD_H_MM_INDEX_HI, AMD_H_RSMU_INDEX, AMD_H_RSMU_DATA,
  AMD_H_HDP_FLUSH_DONE,
  AMD_H_PSP_35, AMD_H_PSP_36, AMD_H_PSP_64, AMD_H_PSP_67, AMD_H_PSP_81,
  AMD_H_SMU_54, AMD_H_SMU_66, AMD_H_SMU_75, AMD_H_SMU_90,
  AMD_H_CP_STAT, AMD_H_RLC_BOOTLOAD, AMD_H_RLC_SAFE_MODE,
  AMD_H_INV_REQ, AMD_H_INV_ACK, AMD_H_INV_SEM, AMD_H_FB_BASE, AMD_H_FB_TOP,
};

/* Open-addressing map u32 -> u32 (keys stored +1 so 0 means empty). */
typedef struct amd_map {
  uint64_t *slots; /* (key+1) << 32 | value */
  size_t cap, n;
} amd_map;

#define AMD_MAX_HUBS 24 /* hub instances tracked (GC XCCs + MMHUBs) */
#define AMD_NCLK 5

typedef struct amd_fw_file {
  bool present;
  uint8_t *buf;
  size_t len;
  bg_fw_image img;
} amd_fw_file;

struct mock_amd {
  mock_sysfs *tree;
  mock_pci *pci;
  mock_amd_cfg cfg;
  char bdf[16];
  bg_am_fw_ips ip;
  uint64_t vram_size;
  struct bg_am_discovery disc;
  mock_amd_regmap r;
  amd_map regs;  /* register file */
  amd_map hooks; /* addr -> kind | hub index << 16 */
  amd_map allowed; /* addr -> 1 + index into amd_reg_allow_list (amd_reg_allow.h): writes accepted without a hook */
  int in_rsmu;   /* RSMU_DATA recursion guard */
  /* failures */
  unsigned nfail;
  char failures[8192];
  /* hubs: invalidation engine 17 state per hub instance */
  struct {
    uint32_t req;
    bool sem_held;
    bool mm;        /* an MMHUB instance: REQ only with ENG17_SEM held (amd_gmc.c) */
    unsigned ninv;  /* accepted ENG17_REQ writes */
    bool flushed;   /* an ENG17_REQ accepted while VM_CONTEXT0_CNTL.ENABLE_CONTEXT was set (amd_gmc.c) */
    bool wiped;     /* GC hub: enabled when the RLC autoload reset it (amd_gmc.c) */
  } hub[AMD_MAX_HUBS];
  unsigned nhubs;
  /* firmware */
  amd_fw_file fw[BG_AM_FW_NFILES];
  /* PSP */
  bool sos_alive, bl_hung, staged, ring, toc_loaded, tmr_set, autoloaded, spatial;
  unsigned bl_next;         /* index into the expected bootloader sequence */
  uint32_t ring_resp;       /* C2PMSG_64 response when sOS alive */
  uint64_t ring_addr;
  uint32_t ring_size, wptr;
  uint8_t loaded[256 / 8];  /* gfx fw types loaded with LOAD_IP_FW */
  mock_amd_psp_cmd *cmds;
  size_t ncmds, capcmds;
  /* SMU */
  bool smu_pending, smu_debug_pending, features;
  uint32_t drv_hi, drv_lo;
  bool drv_hi_set, drv_set;
  uint32_t ppt_limit;
  uint32_t soft_min[AMD_NCLK], soft_max[AMD_NCLK];
  uint32_t metrics_counter;
  unsigned mode1_resets;
  mock_amd_smu_msg *msgs;
  size_t nmsgs, capmsgs;
  /* queue executors (amd_engine.c): engine threads vs the host's BAR hooks */
  /* recursive; held by BAR2/BAR5 hooks, amd_fail and the engines' packet steps. Robust and process-shared with
   * MOCKGPU_SHARED (mock_shm.h); the engines are per process (amd_engine.c) */
  pthread_mutex_t lock;
  /* HDP (amd_hdp.h): host view of VRAM; dword addresses BIF_BX0_REMAP_HDP_MEM/REG_FLUSH_CNTL point at (0: none) */
  struct amd_hdp *hdp;
  uint32_t hdp_mem_dw, hdp_reg_dw;
  /* shader statistics (amd_pm4.c adds each dispatch's under the lock) */
  mock_amd_shader_stats shader;
};

/* amd_gpu.c */
void amd_fail(mock_amd *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t amd_get(const mock_amd *g, uint32_t addr);
void amd_set(mock_amd *g, uint32_t addr, uint32_t v);
/* VRAM window [pa, pa+n) inside VRAM (MC address = VRAM offset), or NULL. */
uint8_t *amd_vram_at(mock_amd *g, uint64_t pa, uint64_t n);
/* Reset every block's state like an ASIC reset (register file to defaults, PSP/SMU idle). */
void amd_asic_reset(mock_amd *g);

/* amd_gmc.c: hub index h (GC instances first, then MMHUBs, as amd_gpu.c hooks them) took an ENG17_REQ; the RLC
 * autoload resets every GC hub's GCVM/GCMC registers. */
void amd_gmc_on_invalidate(mock_amd *g, unsigned h);
void amd_gmc_autoload_reset(mock_amd *g);

/* amd_psp.c */
uint32_t amd_psp_read(mock_amd *g, int kind, uint32_t addr);
void amd_psp_write(mock_amd *g, int kind, uint32_t addr, uint32_t v);
void amd_psp_reset(mock_amd *g);
void amd_psp_free(mock_amd *g);

/* amd_smu.c */
uint32_t amd_smu_read(mock_amd *g, int kind, uint32_t addr);
void amd_smu_write(mock_amd *g, int kind, uint32_t addr, uint32_t v);
void amd_smu_reset(mock_amd *g);
void amd_smu_free(mock_amd *g);
uint32_t amd_smu_version_of(const mock_amd *g);

#endif
