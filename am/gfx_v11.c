/* am/gfx_v11.c: GFX of GC 11.x (Linux gfx_v11_0.c) and GC 12.x (gfx_v12_0.c) (am/am_ip.h; tinygrad
 * tinygrad/runtime/support/am/ip.py AM_GFX): RS64 micro engines started at the firmware's start addresses, RLC
 * autoloaded by the PSP, one XCC. */
#include "am/am_ip.h"

#include "am/am_dev.h"
#include "am/am_gfx.h"
#include "am/am_soc.h"

/* cfg(eng, cntl, pcreg, me) of config_mec: program counter of micro engine `me`, then pulse its pipe reset. */
static int cfg_engine(bg_am_dev *d, uint64_t ucode_start, enum bg_am_reg_id pcreg, enum bg_am_reg_id pcreg_hi,
                      unsigned me, enum bg_am_reg_id cntl, enum bg_am_field_id field) {
  int e;
  uint64_t pc = ucode_start >> 2;
  if ((e = bg_am_gfx_grbm_select(d, me, 0, 0, 0)) < 0 || (e = bg_am_nwreg(d, GC_HWIP, 0, pcreg, (uint32_t)pc)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, pcreg_hi, (uint32_t)(pc >> 32))) < 0 ||
      (e = bg_am_gfx_grbm_select(d, 0, 0, 0, 0)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, BG_AM_F(field, 1))) < 0)
    return e;
  return bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, BG_AM_F(field, 0));
}

static int config_mec_v11(bg_am_dev *d) {
  return cfg_engine(d, d->fw->rs64_start[2], regCP_MEC_RS64_PRGRM_CNTR_START, regCP_MEC_RS64_PRGRM_CNTR_START_HI, 1,
                    regCP_MEC_RS64_CNTL, CP_MEC_RS64_CNTL__MEC_PIPE0_RESET);
}

/* GC 12 starts the RS64 PFP and ME too. */
static int config_mec_v12(bg_am_dev *d) {
  int e;
  if ((e = cfg_engine(d, d->fw->rs64_start[0], regCP_PFP_PRGRM_CNTR_START, regCP_PFP_PRGRM_CNTR_START_HI, 0,
                      regCP_ME_CNTL, CP_ME_CNTL__PFP_PIPE0_RESET)) < 0 ||
      (e = cfg_engine(d, d->fw->rs64_start[1], regCP_ME_PRGRM_CNTR_START, regCP_ME_PRGRM_CNTR_START_HI, 0,
                      regCP_ME_CNTL, CP_ME_CNTL__ME_PIPE0_RESET)) < 0)
    return e;
  return config_mec_v11(d);
}

static int enable_mec(bg_am_dev *d) {
  return bg_am_nwreg_fields(d, GC_HWIP, 0, regCP_MEC_RS64_CNTL, 1, NULL, BG_AM_F(CP_MEC_RS64_CNTL__MEC_PIPE0_RESET, 0),
                            BG_AM_F(CP_MEC_RS64_CNTL__MEC_PIPE0_ACTIVE, 1), BG_AM_F(CP_MEC_RS64_CNTL__MEC_HALT, 0));
}

static int sh_mem_config(bg_am_dev *d, unsigned i) {
  return bg_am_nwreg_fields(d, GC_HWIP, i, regSH_MEM_CONFIG, 0, NULL, BG_AM_F(SH_MEM_CONFIG__ADDRESS_MODE, 0),
                            BG_AM_F(SH_MEM_CONFIG__ALIGNMENT_MODE, 3), BG_AM_F(SH_MEM_CONFIG__INITIAL_INST_PREFETCH, 3));
}

static int cg_override(bg_am_dev *d, unsigned i) {
  return bg_am_nwreg_fields(d, GC_HWIP, i, regRLC_CGTT_MGCG_OVERRIDE, 1, NULL,
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_FGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GRBM_CGTT_SCLK_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__RLC_CGTT_SCLK_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_MGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGLS_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGCG_OVERRIDE, 0),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__PERFMON_CLOCK_STATE, 1),
                            BG_AM_F(RLC_CGTT_MGCG_OVERRIDE__GFXIP_REPEATER_FGCG_OVERRIDE, 0));
}

const struct bg_am_gfx_ip bg_am_gfx_v11_0 = {
    .name = "gfx_v11_0", .bringup = true, .queues = true, .rlc_autoload = true, .aql = false, .pm4_gen = 11,
    .scratch_align = 256, .scratch_waves_per_se = true, .rsrc1_priv = true,
    .cp_soft_reset = true, .sdma_rlc_cgcg = true, .config_mec = config_mec_v11, .enable_mec = enable_mec,
    .golden = NULL, .sh_mem_config = sh_mem_config, .mqd_extra = NULL, .cg_override = cg_override};
/* GC 12: PFP and ME started too, no GRBM soft reset of the CP on a warm start. */
const struct bg_am_gfx_ip bg_am_gfx_v12_0 = {
    .name = "gfx_v12_0", .bringup = true, .queues = true, .rlc_autoload = true, .aql = false, .pm4_gen = 12,
    .scratch_align = 256, .scratch_waves_per_se = true, .rsrc1_priv = false,
    .cp_soft_reset = false, .sdma_rlc_cgcg = true, .config_mec = config_mec_v12, .enable_mec = enable_mec,
    .golden = NULL, .sh_mem_config = sh_mem_config, .mqd_extra = NULL, .cg_override = cg_override};
