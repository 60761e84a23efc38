/* am/gfx_v9.c: GFX of GC 9.4.3 (MI300, Linux gfx_v9_4_3.c) and GC 9.5.0 (MI350) (am/am_ip.h; tinygrad
 * tinygrad/runtime/support/am/ip.py AM_GFX). Every step on every live XCC. */
#include "am/am_ip.h"

#include "am/am_dev.h"
#include "am/am_soc.h"

/* v9_mqd (Linux v9_structs.h) dwords outside the register image */
#define MQD9_STATIC_SE0 23u
#define MQD9_STATIC_SE1 24u
#define MQD9_STATIC_SE2 26u
#define MQD9_STATIC_SE3 27u
#define MQD9_XCC_ID 39u   /* compute_current_logic_xcc_id */
#define MQD9_TG_CHUNK 41u /* compute_tg_chunk_size */
#define MQD9_STRIDE 226u  /* cp_mqd_stride_size */

/* MEC v1 (firmware loaded by the PSP): invalidate the icache, both MEs in reset and halted. */
static int config_mec(bg_am_dev *d) {
  uint32_t m = bg_am_xcc_mask(d);
  for (unsigned i = 0; i < 32; i++) {
    if (!(m >> i & 1)) continue;
    int e = bg_am_nwreg_fields(d, GC_HWIP, i, regCP_MEC_CNTL, 1, NULL, BG_AM_F(CP_MEC_CNTL__MEC_INVALIDATE_ICACHE, 1),
                               BG_AM_F(CP_MEC_CNTL__MEC_ME1_PIPE0_RESET, 1), BG_AM_F(CP_MEC_CNTL__MEC_ME2_PIPE0_RESET, 1),
                               BG_AM_F(CP_MEC_CNTL__MEC_ME1_HALT, 1), BG_AM_F(CP_MEC_CNTL__MEC_ME2_HALT, 1));
    if (e < 0) return e;
  }
  return 0;
}

static int enable_mec(bg_am_dev *d) {
  uint32_t m = bg_am_xcc_mask(d);
  int e = 0;
  for (unsigned i = 0; i < 32 && e >= 0; i++)
    if (m >> i & 1) e = bg_am_nwreg(d, GC_HWIP, i, regCP_MEC_CNTL, 0);
  return e;
}

/* MI300 golden settings (Linux gfx_v9_4_3.c golden_settings_gc_9_4_3, tinygrad AM_GFX). */
static int golden(bg_am_dev *d, unsigned i) {
  int e = bg_am_nwreg(d, GC_HWIP, i, regGB_ADDR_CONFIG, 0x2a114042u);
  return e < 0 ? e : bg_am_nwreg_fields(d, GC_HWIP, i, regTCP_UTCL1_CNTL2, 1, NULL, BG_AM_F(TCP_UTCL1_CNTL2__SPARE, 1));
}

static int sh_mem_config(bg_am_dev *d, unsigned i) {
  return bg_am_nwreg_fields(d, GC_HWIP, i, regSH_MEM_CONFIG, 0, NULL, BG_AM_F(SH_MEM_CONFIG__RETRY_DISABLE, 1),
                            BG_AM_F(SH_MEM_CONFIG__F8_MODE, 1), BG_AM_F(SH_MEM_CONFIG__ADDRESS_MODE, 0),
                            BG_AM_F(SH_MEM_CONFIG__ALIGNMENT_MODE, 3));
}

/* v9_mqd: CU masks of SE0..3; multi-XCC AQL: XCC id, chunking, MQD stride. */
static void mqd_extra(uint32_t *mqd, bool aql, unsigned k, unsigned n) {
  mqd[MQD9_STATIC_SE0] = mqd[MQD9_STATIC_SE1] = mqd[MQD9_STATIC_SE2] = mqd[MQD9_STATIC_SE3] = 0xffffffffu;
  if (aql && n > 1) mqd[MQD9_TG_CHUNK] = 1, mqd[MQD9_XCC_ID] = k, mqd[MQD9_STRIDE] = 0x1000;
}

static int cg_override(bg_am_dev *d, unsigned i) {
  return bg_am_nwreg_fields(d, GC_HWIP, i, regRLC_CGTT_MGCG_OVERRIDE, 1, NULL,
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_MGLS_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_REP_FGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_FGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GRBM_CGTT_SCLK_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__RLC_CGTT_SCLK_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_MGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGLS_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGCG_OVERRIDE, 0));
}

/* MEC v1 loaded by the PSP (REG_LIST, no RLC autoload), v9 MQDs, an AQL queue on every XCC. queues = false: the HCQ
 * compute queue is that AQL queue (am_hcq_aql.c, tinygrad tinygrad/runtime/ops_amd.py AMDComputeAQLQueue), not the PM4 HQD. */
const struct bg_am_gfx_ip bg_am_gfx_v9_4_3 = {
    .name = "gfx_v9_4_3", .bringup = true, .queues = false, .rlc_autoload = false, .aql = true, .pm4_gen = 9,
    .scratch_align = 1024, .scratch_waves_per_se = false, .rsrc1_priv = false,
    .cp_soft_reset = true, .sdma_rlc_cgcg = false, .config_mec = config_mec, .enable_mec = enable_mec,
    .golden = golden, .sh_mem_config = sh_mem_config, .mqd_extra = mqd_extra, .cg_override = cg_override};
/* GC 9.5.0 opens (discovery, firmware, PSP, SMU) but has no GFX bring-up yet. */
const struct bg_am_gfx_ip bg_am_gfx_v9_5_0 = {
    .name = "gfx_v9_5_0", .bringup = false, .queues = false, .rlc_autoload = false, .aql = true, .pm4_gen = 9,
    .scratch_align = 1024, .scratch_waves_per_se = false, .rsrc1_priv = false,
    .cp_soft_reset = true, .sdma_rlc_cgcg = false, .config_mec = config_mec, .enable_mec = enable_mec,
    .golden = golden, .sh_mem_config = sh_mem_config, .mqd_extra = mqd_extra, .cg_override = cg_override};
