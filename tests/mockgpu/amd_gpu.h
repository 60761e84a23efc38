/* tests/mockgpu/amd_gpu.h: an emulated AMD GPU (part 1: device, register file, PSP, SMU, GC/MMHUB
 * bring-up hooks) attached to a mock_pci device of a fake sysfs tree (mock_sysfs.h).
 *
 * The device: vendor 0x1002, BAR0 = VRAM (memory of the mock_pci BAR, MC address = VRAM offset:
 * FB_LOCATION_BASE 0), BAR2 = doorbells (amd_engine.h; plain memory on gfx942), BAR5 = 2 MiB of registers, all of
 * it one register hook (32-bit accesses only). Registers are a sparse file (dword address -> value,
 * default 0); addresses come from the discovery table the model writes at VRAM - 64 KiB
 * (tests/unit/am/discovery_gen.c) and parses back with am/discovery.h, plus register offsets from
 * Linux's asic_reg headers (each documented in amd_gpu.c). Registers beyond BAR5 are reached
 * through RSMU_INDEX/DATA, VRAM through MM_INDEX/MM_INDEX_HI/MM_DATA, exactly as on hardware.
 *
 * Models are strict (see README.md "Emulated AMD GPU"): a protocol violation is recorded as a
 * failure (mock_amd_nfail/mock_amd_failures) and the offending command is refused the way the
 * hardware would refuse it (no acknowledgement, or an error status). Firmware is checked against
 * the set "fused" into the device with mock_amd_install_fw*: the PSP accepts only bytes equal to a
 * component of a correctly-headed image (parsed with am/fw_parse.h).
 *
 * Lifetime: mock_amd_new adds the PCI device to the tree; free the GPU (mock_amd_free) before the
 * tree. Register accesses and failures take the device lock: the queue engines (amd_engine.h) run on their own
 * threads; the tree itself is not thread-safe. */
#ifndef BG_MOCKGPU_AMD_GPU_H
#define BG_MOCKGPU_AMD_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "am/discovery.h"
#include "am/fw_load.h"
#include "mock_sysfs.h"

typedef enum mock_amd_chip {
  MOCK_AMD_MOCK,   /* tinygrad's reference mock (tinygrad test/mockgpu/am/amgpu.py): GC 12.0.0, MP0/MP1 14.0.2, SDMA 7.0.0, MMHUB 4.1.0,
                      NBIF 6.3.1, HDP/OSSSYS 7.0.0; PCI id 0x7590 (Navi44) */
  MOCK_AMD_GFX11,  /* Navi31-like: GC 11.0.0, MP0/MP1 13.0.0, SDMA 6.0.0, MMHUB 3.0.0, NBIO 4.3.0; 0x744c */
  MOCK_AMD_GFX942, /* MI300X-like: GC 9.4.3 x8, MP0/MP1 13.0.6, SDMA 4.4.2, MMHUB 1.8.0, NBIO 7.9.0; 0x74a1 */
  MOCK_AMD_NCHIPS,
} mock_amd_chip;

typedef struct mock_amd_cfg {
  mock_amd_chip chip;
  const char *bdf;          /* NULL: "0000:03:00.0" */
  uint64_t vram_size;       /* power of two >= 64 MiB; 0: 512 MiB */
  uint16_t device_id;       /* 0: the chip's */
  const char *driver;       /* bound kernel driver, NULL: none */
  bool fb_top_exclusive;    /* FB_LOCATION_TOP = vram >> 24 as tinygrad's Python mock (hardware: (vram-1) >> 24) */
  bool hdp_coherent;        /* host BAR0 writes reach the engines at once, without an HDP flush (amd_hdp.h) */
} mock_amd_cfg;

typedef struct mock_amd mock_amd;

/* Shader statistics summed over every DISPATCH_DIRECT the device's command processor ran (amd_pm4.c) since
 * mock_amd_new (resets do not clear them): the fields of the shader core's rdna3_stats (rdna3/rdna3.h) and the
 * dispatches handed to it. Deterministic for the same work. */
typedef struct mock_amd_shader_stats {
  uint64_t dispatches, waves, wave_insts;
  uint64_t valu_insts, salu_insts, smem_insts, vmem_insts, lds_insts, wmma_insts;
  uint64_t global_load_bytes, global_store_bytes, lds_load_bytes, lds_store_bytes;
  uint64_t lds_bank_conflict_cycles;
} mock_amd_shader_stats;
void mock_amd_shader_stats_get(mock_amd *g, mock_amd_shader_stats *out);

/* NULL on failure (message in mock_sysfs_failures of the tree, or on stderr). */
mock_amd *mock_amd_new(mock_sysfs *t, const mock_amd_cfg *cfg);
/* Detach from the PCI device (its BARs then read all ones) and free. Call before mock_sysfs_free. */
void mock_amd_free(mock_amd *g);

mock_pci *mock_amd_pci(mock_amd *g);
const char *mock_amd_bdf(const mock_amd *g);
mock_amd_chip mock_amd_chip_id(const mock_amd *g);
/* The IP versions of a chip (for bg_am_fw_load / fw_gen). */
void mock_amd_chip_ips(mock_amd_chip chip, bg_am_fw_ips *ip);
uint8_t *mock_amd_vram(mock_amd *g); /* the engines' view of VRAM (amd_hdp.h) */
/* The host CPU's view (what the driver maps as BAR0): writes there reach mock_amd_vram at an HDP flush. */
uint8_t *mock_amd_vram_host(mock_amd *g);
/* Host-written pages not yet flushed, and HDP flushes so far (host requests and GPU_HDP_FLUSH_REQ). */
unsigned mock_amd_hdp_dirty(const mock_amd *g);
uint64_t mock_amd_hdp_flushes(const mock_amd *g);
uint64_t mock_amd_vram_size(const mock_amd *g);
/* The discovery table the device carries (parsed back) and absolute register addresses from it. */
const struct bg_am_discovery *mock_amd_discovery(const mock_amd *g);
uint32_t mock_amd_reg(const mock_amd *g, int hwip, unsigned inst, unsigned seg, uint32_t off);

/* Registers the model hooks, as absolute dword addresses (instance 0 / AID 0). */
typedef struct mock_amd_regmap {
  uint32_t memsize, mm_index, mm_data, mm_index_hi, rsmu_index, rsmu_data, hdp_flush_req, hdp_flush_done;
  uint32_t hdp_remap_mem, hdp_remap_reg; /* BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL / _REG_FLUSH_CNTL */
  uint32_t hdp_hole;                     /* byte offset in BAR5 Linux remaps HDP_MEM_FLUSH_CNTL to (MMIO_REG_HOLE_OFFSET) */
  uint32_t psp_35, psp_36, psp_64, psp_67, psp_69, psp_70, psp_71, psp_81;
  uint32_t smu_53, smu_54, smu_66, smu_75, smu_82, smu_90;
  uint32_t cp_stat, rlc_bootload_status, rlc_safe_mode, scratch6, scratch7, grbm_gfx_cntl;
  uint32_t gc_inv_req17, gc_inv_ack17, gc_inv_sem17, gc_fb_base, gc_fb_top, gc_fault_status;
  uint32_t mm_inv_req17, mm_inv_ack17, mm_inv_sem17, mm_fb_base, mm_fb_top;
} mock_amd_regmap;
const mock_amd_regmap *mock_amd_regs(const mock_amd *g);

/* Register access with the model's side effects (what a BAR5 access does), and raw storage without. */
uint32_t mock_amd_rreg(mock_amd *g, uint32_t addr);
void mock_amd_wreg(mock_amd *g, uint32_t addr, uint32_t v);
uint32_t mock_amd_peek(const mock_amd *g, uint32_t addr);
void mock_amd_poke(mock_amd *g, uint32_t addr, uint32_t v);

/* Recorded strictness failures of the GPU model (separate from the tree's). */
unsigned mock_amd_nfail(const mock_amd *g);
const char *mock_amd_failures(const mock_amd *g);
void mock_amd_clear_failures(mock_amd *g);

/* Firmware "fused" into the device: parsed with bg_fw_parse (family of `which`), ip version
 * checked against the chip. 0, or -1 with the reason recorded as a failure. */
int mock_amd_install_fw(mock_amd *g, bg_am_fw_file_id which, const uint8_t *buf, size_t len);
/* Every file of the chip's set from dir (bg_am_fw_load with the chip's IP versions). */
int mock_amd_install_fw_dir(mock_amd *g, const char *dir);

/* ---- PSP ---- */
enum {
  MOCK_PSP_STATUS_OK = 0,
  MOCK_PSP_STATUS_ORDER = 0xFFFF0001u,   /* command not allowed in this state / order */
  MOCK_PSP_STATUS_PARAM = 0xFFFF0002u,   /* bad address, size or parameter */
  MOCK_PSP_STATUS_FW = 0xFFFF0003u,      /* firmware bytes do not match a known image */
  MOCK_PSP_STATUS_UNKNOWN = 0xFFFF0004u, /* unknown command id */
};
#define MOCK_PSP_TOC_TMR_SIZE 0x1000000u /* resp.tmr_size answered to LOAD_TOC */

typedef struct mock_amd_psp_cmd {
  bool ring;           /* false: bootloader command (C2PMSG_35) */
  uint32_t cmd;        /* bootloader command, or psp_gfx_cmd_resp.cmd_id */
  uint32_t fw_type;    /* LOAD_IP_FW type / bootloader component (psp fw type) */
  uint64_t addr;       /* staged / fw / toc / tmr address (MC) */
  uint32_t size;
  uint32_t status;     /* ring: resp.status written; bootloader: 0 accepted, else refused */
  uint32_t fence;      /* ring: fence value written (0: not acknowledged) */
} mock_amd_psp_cmd;

bool mock_amd_sos_alive(const mock_amd *g);
bool mock_amd_psp_ring(const mock_amd *g);
size_t mock_amd_psp_ncmds(const mock_amd *g);
const mock_amd_psp_cmd *mock_amd_psp_cmd_at(const mock_amd *g, size_t i);
bool mock_amd_fw_loaded(const mock_amd *g, uint32_t gfx_fw_type);
bool mock_amd_rlc_autoloaded(const mock_amd *g);
bool mock_amd_tmr_set(const mock_amd *g);

/* ---- SMU ---- */
#define MOCK_SMU_RESULT_OK 0x1u
#define MOCK_SMU_RESULT_FAILED 0xFFu
#define MOCK_SMU_RESULT_UNKNOWN 0xFEu
#define MOCK_SMU_RESULT_PREREQ 0xFDu
#define MOCK_SMU_RESULT_BUSY 0xFCu
#define MOCK_SMU_TABLE_METRICS 8u
#define MOCK_SMU_DPM_LEVELS 2u

typedef struct mock_amd_smu_msg {
  bool debug;          /* debug mailbox (C2PMSG_75) */
  uint32_t msg, param, result, resp;
} mock_amd_smu_msg;

size_t mock_amd_smu_nmsgs(const mock_amd *g);
const mock_amd_smu_msg *mock_amd_smu_msg_at(const mock_amd *g, size_t i);
uint32_t mock_amd_smu_version(const mock_amd *g);
bool mock_amd_smu_features(const mock_amd *g);
uint64_t mock_amd_smu_driver_table(const mock_amd *g);
uint32_t mock_amd_smu_ppt_limit(const mock_amd *g);
/* Soft min/max (MHz) last set for a PPCLK id; 0 / 0xffff when never set. */
void mock_amd_smu_soft_limits(const mock_amd *g, unsigned clk, uint32_t *min, uint32_t *max);
/* DPM frequency (MHz) of clk at level (level < MOCK_SMU_DPM_LEVELS), 0 for an unknown clock. */
uint32_t mock_amd_smu_dpm_freq(const mock_amd *g, unsigned clk, unsigned level);
unsigned mock_amd_mode1_resets(const mock_amd *g);

/* Metrics table layout written by TransferTableSmu2Dram(SMU_TABLE_SMU_METRICS) (Linux SmuMetrics_t). */
typedef struct mock_amd_metrics_layout {
  uint32_t size;                     /* sizeof(SmuMetricsExternal_t) */
  uint32_t curr_clock, nclocks;      /* u32 CurrClock[PPCLK_COUNT] */
  uint32_t gfxclk_pre_ds, gfxclk_post_ds, fclk_pre_ds, fclk_post_ds, memclk_pre_ds, memclk_post_ds; /* u16 */
  uint32_t dgpu_w_max, metrics_counter /* u32 */, avg_voltage, nvoltage;
  uint32_t gfx_activity, uclk_activity, socket_power, avg_temperature, ntemps; /* u16 */
  uint32_t fan_pwm /* u8 */, fan_rpm /* u16 */, throttling /* u8[] */, nthrottlers;
} mock_amd_metrics_layout;
/* false when the chip's SMU metrics are not modelled (13.0.6). */
bool mock_amd_metrics_layout_of(mock_amd_chip chip, mock_amd_metrics_layout *out);

#endif
