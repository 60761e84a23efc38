/* am/am_ip.h: per-IP-block operation tables, chosen once after discovery (the shape of Linux amdgpu's
 * amdgpu_ip_block_version / amdgpu_ip_funcs, drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c
 * amdgpu_discovery_set_*_ip_blocks, and of Mesa's radeon_info, src/amd/common/ac_gpu_info.c).
 *
 * Each block (GFX, GMC, SDMA, NBIO, PSP, SMU, IH, HDP) has a const descriptor per hardware generation: its
 * per-version constants and, where the generations behave differently, function pointers. One table in am_ip.c
 * maps {block, the discovery HWIP whose version decides, version range} to a descriptor; bg_am_ip_select() runs
 * once in bg_am_dev_open and fills d->ip. The rest of am/ reads d->ip and never compares IP versions itself
 * (test am-ip-versions checks the sources). Adding an IP version is adding a row; a generation that behaves
 * differently adds a descriptor (and its functions, in files named for block and version: gfx_v9.c, ...). */
#ifndef BG_AM_IP_H
#define BG_AM_IP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/discovery.h"
#include "am/mm_pt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_am_dev;
struct bg_am_smu_metrics;

/* A version as one comparable number. */
#define BG_AM_IPV(maj, min, rev) ((uint32_t)(maj) << 16 | (uint32_t)(min) << 8 | (uint32_t)(rev))

enum bg_am_ip_block {
  BG_AM_IP_GFX, BG_AM_IP_GMC, BG_AM_IP_SDMA, BG_AM_IP_NBIO, BG_AM_IP_PSP, BG_AM_IP_SMU, BG_AM_IP_IH, BG_AM_IP_HDP,
  BG_AM_IP_NBLOCKS
};

/* ---- GFX (GC_HWIP): CP/MEC/RLC bring-up and what the queues need ---- */
struct bg_am_gfx_ip {
  const char *name;    /* Linux gfx_v9_4_3, gfx_v11_0, gfx_v12_0 */
  bool bringup;        /* GFX bring-up implemented (false: the device opens, bg_am_gfx_create refuses) */
  bool queues;         /* the HCQ compute queue is the PM4 HQD (false on GC 9.4.3: the AQL queue, am_hcq_aql.c) */
  bool rlc_autoload;   /* PSP AUTOLOAD_RLC (GC >= 11); else the sOS RL component as LOAD_IP_FW REG_LIST (gfx9) */
  bool aql;            /* AQL queue buffers and setup (v9 MQDs on every XCC) */
  unsigned pm4_gen;    /* generation the PM4 encoders take (am_pm4.h): 9, 11, 12 */
  /* Scratch (tinygrad ops_amd.py AMDDevice._ensure_has_local_memory): TMPRING_SIZE.WAVESIZE unit in bytes (256 on
   * GC >= 10, 1024 before) and whether WAVES counts per shader engine (GC >= 10). */
  unsigned scratch_align;
  bool scratch_waves_per_se;
  bool rsrc1_priv;     /* COMPUTE_PGM_RSRC1.PRIV set on launches (tinygrad ops_amd.py: gfx11 only) */
  bool cp_soft_reset;  /* warm start: GRBM_SOFT_RESET of CP/CPC before the MEC restarts (GC < 12) */
  bool sdma_rlc_cgcg;  /* clock gating: SDMA0/1_RLC_CGCG_CTRL.CGCG_INT_ENABLE in the GC table (GC >= 10) */
  /* Stop the MEC and point it at its firmware (MEC v1: halt per XCC; RS64: program counters, PFP/ME on GC 12). */
  int (*config_mec)(struct bg_am_dev *d);
  /* Let it run. */
  int (*enable_mec)(struct bg_am_dev *d);
  /* Golden settings of XCC `inst` (GC instance); NULL: none. */
  int (*golden)(struct bg_am_dev *d, unsigned inst);
  /* SH_MEM_CONFIG of XCC `inst` (under the GRBM select of each VMID). */
  int (*sh_mem_config)(struct bg_am_dev *d, unsigned inst);
  /* MQD dwords outside the register image, for the k-th of n XCCs; NULL: none (v11/v12 MQDs). */
  void (*mqd_extra)(uint32_t *mqd, bool aql, unsigned k, unsigned n);
  /* Clock gating: clear the MGCG overrides of XCC `inst` (RLC_CGTT_MGCG_OVERRIDE, fields per generation). */
  int (*cg_override)(struct bg_am_dev *d, unsigned inst);
};

/* ---- GMC (GC_HWIP, as Linux's gmc_v9/v11/v12): VM hubs, page tables, reserved VRAM ---- */
struct bg_am_gmc_ip {
  const char *name;
  enum bg_am_pt_gen pt_gen;  /* page-table entry format (mm_pt.h) */
  unsigned pa_bits;          /* physical address bits of the page tables (addr_mask) */
  uint64_t reserved_vram;    /* bytes kept off the top of VRAM (mm_vram.h) */
  bool l2_fragment;          /* VM_L2_CNTL.ENABLE_L2_FRAGMENT_PROCESSING (gmc_v9) */
  unsigned l2_bank_select;   /* VM_L2_CNTL3.BANK_SELECT */
  unsigned l2_bigk_fragment; /* VM_L2_CNTL3.L2_CACHE_BIGK_FRAGMENT_SIZE */
  bool l2_cntl5;             /* VM_L2_CNTL5.WALKER_PRIORITY_CLIENT_ID exists */
  bool mm_flush_cid2;        /* MMHUB TLB flush ends with MMVM_L2_BANK_SELECT_RESERVED_CID2 (GC >= 11) */
};

/* ---- SDMA (SDMA0_HWIP) ---- */
struct bg_am_sdma_ip {
  const char *name;     /* sdma_v4_4_2, sdma_v6_0, sdma_v7_0 */
  bool own_regs;        /* queue registers regSDMA_GFX_* of the SDMA table per instance (4.4.x); else
                         * regSDMA0_QUEUE0_* of the GC table */
  bool mcu;             /* MCU engine (SDMA 7): MCU_CNTL / MCU_WPTR_POLL_ENABLE; else F32 */
  unsigned pkt_gen;     /* generation the SDMA encoders take (am_sdma_pkt.h): 4, 6, 7 */
  uint64_t max_copy;    /* COPY_LINEAR bytes per packet */
};

/* ---- NBIO (NBIO_HWIP): doorbell routing, AIDs ---- */
struct bg_am_nbio_ip {
  const char *name;       /* nbio_v4_3, nbif_v6_3_1, nbio_v7_9 */
  bool multi_aid;         /* several AIDs (MMHUB instances): XCC doorbell fences, S2A routing by indirect PCIe
                           * writes, MEC doorbells routed by the NBIO itself, SDMA doorbell ranges per AID */
  bool gdc_s2a;           /* S2A doorbell entries are regGDC_S2A0_S2A_DOORBELL_ENTRY_* (else regS2A_*) */
  uint32_t hdp_hole;      /* MMIO_REG_HOLE_OFFSET: the BAR5 byte offset SOC init remaps HDP_MEM_FLUSH_CNTL to (+4:
                           * HDP_REG_FLUSH_CNTL), Linux <nbio>_set_reg_remap with 4 KiB pages; the HDP flush writes
                           * 0 there (hdp_v4_0/v6_0/v7_0 flush_hdp) */
};

/* ---- PSP (MP0_HWIP) ---- */
enum bg_am_mode1_how {
  BG_AM_MODE1_SMU_MSG,   /* SMU message Mode1Reset */
  BG_AM_MODE1_DEBUG,     /* SMU debug mailbox Mode1Reset */
  BG_AM_MODE1_GFX_DRIVER_RESET, /* SMU message GfxDriverReset(1) */
};
struct bg_am_psp_ip {
  const char *name;      /* psp_v13_0, psp_v13_0_4 ..., psp_v14_0 */
  bool mpasp;            /* C2PMSG registers are regMPASP_SMN_C2PMSG_* (else regMP0_SMN_C2PMSG_*) */
  bool spl_table;        /* bootloader TOS_SPL_TABLE from the SPL component (else the key database) */
  bool boot_time_tmr;    /* the bootloader sets the TMR up: no TMR allocation */
  bool autoload_tmr;     /* with boot_time_tmr: no SETUP_TMR either */
  enum bg_am_mode1_how mode1; /* how the SMU resets this MP0 (tinygrad AM_SMU.mode1_reset keys it on MP0) */
};

/* ---- SMU (MP1_HWIP) ---- */
struct bg_am_smu_ip {
  const char *name;      /* smu_v13_0_0, smu_v13_0_6, smu_v14_0_2 */
  const int *msg_ids;    /* [BG_SMU_NMSGS] (am_smu.h) message ids, -1: none */
  bool cdna;             /* PPCLK ids SOCCLK 2 / UCLK 3 / FCLK 4, no GFXCLK, GetMetricsTable, soft minima only */
  /* Decode the metrics table; NULL: layout not known (-BG_ENOTSUP). */
  int (*read_metrics)(struct bg_am_dev *d, struct bg_am_smu_metrics *m);
};

/* ---- IH (OSSSYS_HWIP): interrupt sources ---- */
struct bg_am_ih_ip {
  const char *name;       /* vega20_ih (4.4.2), ih_v6_0, ih_v7_0 */
  uint8_t sdma_trap_src;  /* source id of an SDMA trap (normal, not a fault) */
  int utcl2_client;       /* client id whose entries are UTCL2 faults besides src 0; -1: none */
};

/* ---- HDP (HDP_HWIP) ---- */
struct bg_am_hdp_ip {
  const char *name;
  bool mem_power_ctrl;    /* HDP_MEM_POWER_CTRL light/deep sleep in clock gating (HDP >= 5.2.1) */
};

/* The descriptors of one device. */
typedef struct bg_am_ipset {
  const struct bg_am_gfx_ip *gfx;
  const struct bg_am_gmc_ip *gmc;
  const struct bg_am_sdma_ip *sdma;
  const struct bg_am_nbio_ip *nbio;
  const struct bg_am_psp_ip *psp;
  const struct bg_am_smu_ip *smu;
  const struct bg_am_ih_ip *ih;
  const struct bg_am_hdp_ip *hdp;
} bg_am_ipset;

/* One row of the table: block, the HWIP whose discovered version selects, inclusive range, descriptor. */
struct bg_am_ip_row {
  enum bg_am_ip_block block;
  int hwip;
  uint32_t lo, hi; /* BG_AM_IPV */
  union {
    const struct bg_am_gfx_ip *gfx;
    const struct bg_am_gmc_ip *gmc;
    const struct bg_am_sdma_ip *sdma;
    const struct bg_am_nbio_ip *nbio;
    const struct bg_am_psp_ip *psp;
    const struct bg_am_smu_ip *smu;
    const struct bg_am_ih_ip *ih;
    const struct bg_am_hdp_ip *hdp;
  } u;
};

/* Descriptors the blocks define (am_psp.c, am_smu.c, gfx_v9.c, gfx_v11.c, am_ip.c for the data-only ones). */
extern const struct bg_am_psp_ip bg_am_psp_v13_0, bg_am_psp_v13_0_6, bg_am_psp_v13_0_12, bg_am_psp_v13_0_14,
    bg_am_psp_v14_0_2;
extern const struct bg_am_smu_ip bg_am_smu_v13_0_0, bg_am_smu_v13_0_6, bg_am_smu_v13_0_12, bg_am_smu_v14_0_2;
extern const struct bg_am_gfx_ip bg_am_gfx_v9_4_3, bg_am_gfx_v9_5_0, bg_am_gfx_v11_0, bg_am_gfx_v12_0;

/* Fill *out from a parsed discovery table. Every block must find a row: otherwise -BG_ENOTSUP naming the block,
 * the HWIP, its version and the versions supported ("am: ip: SMU (MP1_HWIP) 13.0.99 is not supported; AM knows
 * 13.0.0, ..."), or -BG_ENOTSUP when the HWIP is missing from the table. *out is zeroed on failure. */
int bg_am_ip_select_disc(const struct bg_am_discovery *disc, bg_am_ipset *out);
/* The same into d->ip, the message prefixed with the device. Called once by bg_am_dev_open after discovery. */
int bg_am_ip_select(struct bg_am_dev *d);
/* The row of `block` covering version (maj, min, rev), NULL if none (nothing recorded). */
const struct bg_am_ip_row *bg_am_ip_find(enum bg_am_ip_block block, unsigned maj, unsigned min, unsigned rev);
/* Like bg_am_ip_find, recording the error above when there is no row. */
int bg_am_ip_check(enum bg_am_ip_block block, unsigned maj, unsigned min, unsigned rev,
                   const struct bg_am_ip_row **out);
/* "9.4.3, 9.5.0, 11.x.x, 12.x.x": the versions a block supports. */
void bg_am_ip_supported(enum bg_am_ip_block block, char *buf, size_t cap);
/* "GFX", "GMC", ...; the HWIP that selects the block. */
const char *bg_am_ip_block_name(enum bg_am_ip_block block);
int bg_am_ip_block_hwip(enum bg_am_ip_block block);
/* The table, for listings and tests. */
size_t bg_am_ip_row_count(void);
const struct bg_am_ip_row *bg_am_ip_row_at(size_t i);

#ifdef __cplusplus
}
#endif
#endif
