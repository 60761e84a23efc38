/* am/am_boot.c: top-level AM bring-up (am/am_boot.h). */
#include "am/am_boot.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_psp.h"
#include "am/am_soc.h"
#include "am/am_smu.h"
#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "util/env.h"

bool bg_am_boot_check_warm(bg_am_dev *d) {
  if (bg_am_rr(d, BG_AM_R_SCRATCH7) != BG_AM_BOOT_MAGIC) return false;
  return bg_am_rr(d, BG_AM_R_SCRATCH6) == 0 && bg_am_rr(d, BG_AM_R_FAULT_STATUS) == 0;
}

int bg_am_boot_bus_master(bg_am_dev *d, bool on) {
  uint32_t cmd = 0;
  int e = bg_pci_cfg_read(d->pci, BG_PCI_COMMAND, 2, &cmd);
  if (e < 0) return e;
  cmd = on ? (cmd | BG_PCI_COMMAND_MASTER) : (cmd & ~(uint32_t)BG_PCI_COMMAND_MASTER);
  if ((e = bg_pci_cfg_write(d->pci, BG_PCI_COMMAND, 2, cmd)) < 0) return e;
  return bg_pci_cfg_read(d->pci, BG_PCI_COMMAND, 2, &cmd); /* flush */
}

int bg_am_boot_reset_if_alive(bg_am_dev *d, bool *did) {
  *did = false;
  /* SCRATCH_REG6 != 0: the previous owner did not finish (killed while in use or during a cold boot, e.g. half way
   * through the PSP bootloader, which then refuses the sequence from its start until a reset: tests/stress/kill.c).
   * tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__ resets such a device too (is_booting, "Malformed
   * state"). */
  bool unfinished = bg_am_rr(d, BG_AM_R_SCRATCH6) != 0;
  if ((unfinished || bg_am_psp_sos_alive(d)) && bg_am_smu_alive(d)) {
    int e = bg_am_boot_bus_master(d, false);
    if (e >= 0) e = bg_am_smu_mode1_reset(d);
    int e2 = bg_am_boot_bus_master(d, true);
    if (e < 0) return e;
    if (e2 < 0) return e2;
    *did = true;
  }
  /* Booting from here on (tinygrad's is_booting): a process killed before the magic leaves SCRATCH_REG6 = 1. */
  return bg_am_wr(d, BG_AM_R_SCRATCH6, 1);
}

#define STEP(field, call)                          \
  do {                                             \
    double t0_ = bg_am_now_ms();                   \
    e = (call);                                    \
    r->field = bg_am_now_ms() - t0_;               \
    if (e < 0) return e;                           \
  } while (0)

void bg_am_blocks_free(bg_am_blocks *blk) {
  bg_am_sdma_destroy(blk->sdma);
  bg_am_gfx_destroy(blk->gfx);
  blk->sdma = NULL;
  blk->gfx = NULL;
  bg_am_ih_destroy(blk->ih);
  bg_am_gmc_destroy(blk->gmc);
  blk->ih = NULL;
  blk->gmc = NULL;
}

/* init_sw in tinygrad's order (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw): GMC, IH, then PSP, SMU (re-allocated after GMC/IH). */
static int init_sw(bg_am_dev *d, bg_am_blocks *blk) {
  bg_am_boot_mem *m = &d->bm;
  bool tmr = m->psp_tmr != 0;
  bg_am_vram_free(d->mm, m->smu_table);
  if (tmr) bg_am_vram_free(d->mm, m->psp_tmr);
  bg_am_vram_free(d->mm, m->psp_ring);
  bg_am_vram_free(d->mm, m->psp_fence);
  bg_am_vram_free(d->mm, m->psp_cmd);
  bg_am_vram_free(d->mm, m->psp_msg1);
  int e;
  if ((e = bg_am_gmc_create(d, &blk->gmc)) < 0 || (e = bg_am_ih_create(d, &blk->ih)) < 0) return e;
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x100000, 0x100000, false, &m->psp_msg1)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &m->psp_cmd)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, true, &m->psp_fence)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x10000, 0x1000, false, &m->psp_ring)) < 0 ||
      (tmr && (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1300000, 0x100000, false, &m->psp_tmr)) < 0) ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x4000, 0x1000, false, &m->smu_table)) < 0)
    return bg_error_context(e, "am: %s: psp/smu init_sw: ", d->bdf);
  if ((e = bg_am_gfx_create(d, blk->gmc, &blk->gfx)) < 0 || (e = bg_am_sdma_create(d, &blk->sdma)) < 0) return e;
  return 0;
}

int bg_am_boot_fini(bg_am_dev *d, bg_am_blocks *blk) {
  int e = blk->sdma ? bg_am_sdma_fini(blk->sdma) : 0;
  int e2 = blk->gfx ? bg_am_gfx_dequeue(blk->gfx) : 0;
  int e3 = bg_am_wr(d, BG_AM_R_SCRATCH6, 0);
  return e < 0 ? e : e2 < 0 ? e2 : e3;
}

/* SOC then GMC set_clockgating_state, in IP-block order (tinygrad tinygrad/runtime/support/am/ip.py AM_SOC, AM_GMC;
 * Linux amdgpu_device_set_cg_state): HDP memory light/deep sleep where its descriptor has it (HDP >= 5.2.1), then
 * MMHUB ATC L2 CG if present (the gfx11 trace comparison, am-trace-gfx11, checks the order). */
static int soc_clockgating(bg_am_dev *d) {
  int e;
  if (d->ip.hdp->mem_power_ctrl && d->regs.hdp &&
      (e = bg_am_nwreg_fields(d, HDP_HWIP, 0, regHDP_MEM_POWER_CTRL, 1, NULL,
                              BG_AM_F(HDP_MEM_POWER_CTRL__ATOMIC_MEM_POWER_CTRL_EN, 1),
                              BG_AM_F(HDP_MEM_POWER_CTRL__ATOMIC_MEM_POWER_DS_EN, 1))) < 0)
    return e;
  if (d->regs.mmhub && bg_am_reg_find(d->regs.mmhub, regMM_ATC_L2_MISC_CG) &&
      (e = bg_am_nwreg_fields(d, MMHUB_HWIP, 0, regMM_ATC_L2_MISC_CG, 1, NULL, BG_AM_F(MM_ATC_L2_MISC_CG__ENABLE, 1),
                              BG_AM_F(MM_ATC_L2_MISC_CG__MEM_LS_ENABLE, 1))) < 0)
    return e;
  return 0;
}

/* GFX.set_clockgating_state (tinygrad tinygrad/runtime/support/am/ip.py AM_GFX), on one XCC (GC instance `i`): RLC safe mode around CGCG/CGLS, CP idle
 * polling/interrupts, SDMA CGCG interrupts (GC >= 10), MGCG overrides cleared (fields per GFX descriptor). */
static int gfx_clockgating_xcc(bg_am_dev *d, unsigned i) {
  int e;
  uint32_t a, v = 0;
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, i, regRLC_SAFE_MODE, 0, NULL, BG_AM_F(RLC_SAFE_MODE__MESSAGE, 1),
                              BG_AM_F(RLC_SAFE_MODE__CMD, 1))) < 0 ||
      (e = bg_am_nreg_addr(d, GC_HWIP, i, regRLC_SAFE_MODE, &a)) < 0)
    return e;
  int tmo = d->opts.timeout_ms > 0 ? d->opts.timeout_ms : 10000;
  double t0 = bg_am_now_ms();
  while ((v = bg_am_rreg(d, a)) & 1u) {
    if (bg_am_now_ms() - t0 > tmo)
      return bg_error(BG_ETIMEDOUT, "am: %s: gfx: clock gating: regRLC_SAFE_MODE (XCC %u, 0x%x) = 0x%x after %d ms, "
                      "cmd bit not cleared", d->bdf, i, a, v, tmo);
    bg_am_sleep_ms(1); /* kept: backoff inside the poll of regRLC_SAFE_MODE (its timeout names the register) */
  }
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, i, regRLC_CGCG_CGLS_CTRL, 1, NULL,
                              BG_AM_F(RLC_CGCG_CGLS_CTRL__CGCG_GFX_IDLE_THRESHOLD, 0x36),
                              BG_AM_F(RLC_CGCG_CGLS_CTRL__CGCG_EN, 1),
                              BG_AM_F(RLC_CGCG_CGLS_CTRL__CGLS_REP_COMPANSAT_DELAY, 0xf),
                              BG_AM_F(RLC_CGCG_CGLS_CTRL__CGLS_EN, 1))) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, i, regCP_RB_WPTR_POLL_CNTL, 1, NULL,
                              BG_AM_F(CP_RB_WPTR_POLL_CNTL__POLL_FREQUENCY, 0x100),
                              BG_AM_F(CP_RB_WPTR_POLL_CNTL__IDLE_POLL_COUNT, 0x90))) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, i, regCP_INT_CNTL, 1, NULL, BG_AM_F(CP_INT_CNTL__CNTX_BUSY_INT_ENABLE, 1),
                              BG_AM_F(CP_INT_CNTL__CNTX_EMPTY_INT_ENABLE, 1),
                              BG_AM_F(CP_INT_CNTL__CMP_BUSY_INT_ENABLE, 1))) < 0)
    return e;
  if (d->ip.gfx->sdma_rlc_cgcg &&
      ((e = bg_am_nwreg_fields(d, GC_HWIP, i, regSDMA0_RLC_CGCG_CTRL, 1, NULL,
                               BG_AM_F(SDMA0_RLC_CGCG_CTRL__CGCG_INT_ENABLE, 1))) < 0 ||
       (e = bg_am_nwreg_fields(d, GC_HWIP, i, regSDMA1_RLC_CGCG_CTRL, 1, NULL,
                               BG_AM_F(SDMA1_RLC_CGCG_CTRL__CGCG_INT_ENABLE, 1))) < 0))
    return e;
  e = d->ip.gfx->cg_override(d, i); /* fields per generation: gfx_v9.c, gfx_v11.c */
  if (e < 0) return e;
  return bg_am_nwreg_fields(d, GC_HWIP, i, regRLC_SAFE_MODE, 0, NULL, BG_AM_F(RLC_SAFE_MODE__MESSAGE, 0),
                            BG_AM_F(RLC_SAFE_MODE__CMD, 1));
}

static int gfx_clockgating(bg_am_dev *d) {
  uint32_t m = bg_am_xcc_mask(d);
  for (unsigned i = 0; i < 32; i++) {
    int e = (m >> i & 1) ? gfx_clockgating_xcc(d, i) : 0;
    if (e < 0) return e;
  }
  return 0;
}

/* Post-boot (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__ post-boot): AM_POWER_LIMIT=<W> > 0: SetPptLimit(W) and unlimited soft clocks; else highest DPM level.
 * Then SOC and GFX clock gating. */
static int post_boot(bg_am_dev *d) {
  int e;
  long w;
  if ((e = bg_env_int("AM_POWER_LIMIT", &w)) < 0) return e;
  if (w > 0) {
    if ((e = bg_am_smu_set_power_limit(d, (unsigned)w)) < 0 ||
        (e = bg_am_smu_set_clocks(d, BG_SMU_CLOCKS_UNLIMITED)) < 0)
      return e;
  } else if ((e = bg_am_smu_set_clocks(d, -1)) < 0) {
    return e;
  }
  if ((e = soc_clockgating(d)) < 0) return e;
  return gfx_clockgating(d);
}

/* GFX and SDMA engines, clocks and clock gating, both queues, then the magic (every complete boot, cold or warm). */
static int boot_engines(bg_am_dev *d, bg_am_blocks *blk, bg_am_boot_report *r, bool warm) {
  int e;
  STEP(ms_gfx, bg_am_gfx_init(blk->gfx, warm));
  STEP(ms_sdma, bg_am_sdma_init(blk->sdma));
  STEP(ms_clocks, post_boot(d));
  if ((e = bg_am_gfx_setup_queue(blk->gfx)) < 0 || (e = bg_am_sdma_setup_queue(blk->sdma)) < 0) return e;
  if (blk->gfx->aql_ring && (e = bg_am_gfx_setup_aql(blk->gfx)) < 0) return e; /* GC 9.4.3: AQL on every XCC */
  BG_LOG(1, "am: %s: gfx %.1f ms (HQD ring 0x%" PRIx64 " PQ_CONTROL 0x%x), sdma %.1f ms (ring 0x%" PRIx64
         " RB_CNTL 0x%x)", d->bdf, r->ms_gfx, blk->gfx->ring, blk->gfx->pq_control, r->ms_sdma, blk->sdma->ring,
         blk->sdma->rb_cntl);
  if ((e = bg_am_wr(d, BG_AM_R_SCRATCH7, BG_AM_BOOT_MAGIC)) < 0) return e;
  return bg_am_wr(d, BG_AM_R_SCRATCH6, 1);
}

static int boot_cold_hw(bg_am_dev *d, bg_am_blocks *blk, bg_am_boot_report *r);

int bg_am_boot(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep) {
  bg_am_blocks blk = {0};
  int e = bg_am_boot_ex(d, opts, rep, &blk);
  bg_am_blocks_free(&blk);
  return e;
}

int bg_am_boot_ex(bg_am_dev *d, const bg_am_boot_opts *opts, bg_am_boot_report *rep, bg_am_blocks *blk) {
  bg_am_boot_report local = {0};
  bg_am_boot_report *r = rep ? rep : &local;
  memset(r, 0, sizeof(*r));
  int e;
  bg_am_blocks_free(blk);
  if ((e = init_sw(d, blk)) < 0) return e;
  long env_reset;
  if ((e = bg_env_int("AM_RESET", &env_reset)) < 0) return e;
  bool force = (opts && opts->force_reset) || env_reset == 1;
  if (!force && bg_am_boot_check_warm(d)) {
    r->warm = true;
    BG_LOG(1, "am: %s: warm start (SCRATCH_REG7 = 0x%x): PSP and SMU left as they are", d->bdf, BG_AM_BOOT_MAGIC);
    return boot_engines(d, blk, r, true);
  }
  return boot_cold_hw(d, blk, r);
}

/* A cold boot's hardware steps on blocks that exist (init_sw ran): reset if the device is alive, SOC, hubs, IH,
 * PSP, SMU, engines. The blocks' page tables, rings and boot memory are VRAM the reset leaves as it is. */
static int boot_cold_hw(bg_am_dev *d, bg_am_blocks *blk, bg_am_boot_report *r) {
  int e;
  STEP(ms_reset, bg_am_boot_reset_if_alive(d, &r->mode1_reset));
  if (r->mode1_reset) BG_LOG(1, "am: %s: mode1 reset %.1f ms", d->bdf, r->ms_reset);
  if ((e = bg_am_boot_bus_master(d, true)) < 0) return e;
  STEP(ms_soc, bg_am_soc_init(d));
  STEP(ms_gmc, bg_am_gmc_init(blk->gmc));
  BG_LOG(1, "am: %s: gmc: fb 0x%" PRIx64 "-0x%" PRIx64 ", root 0x%" PRIx64 " %.1f ms", d->bdf, blk->gmc->fb_base,
         blk->gmc->fb_end, bg_am_pt_root(blk->gmc->pt), r->ms_gmc);
  STEP(ms_ih, bg_am_ih_init(blk->ih));
  STEP(ms_bootloader, bg_am_psp_bootloader(d, &r->bl_components));
  BG_LOG(1, "am: %s: psp: bootloader %d components %.1f ms", d->bdf, r->bl_components, r->ms_bootloader);
  STEP(ms_ring, bg_am_psp_ring_create(d));
  BG_LOG(1, "am: %s: psp: ring create %.1f ms", d->bdf, r->ms_ring);
  STEP(ms_fw, bg_am_psp_load_fw(d, &r->ring_cmds));
  BG_LOG(1, "am: %s: psp: firmware %d ring commands (%d descriptors) %.1f ms", d->bdf, r->ring_cmds, d->fw->ndescs,
         r->ms_fw);
  STEP(ms_smu, bg_am_smu_init(d));
  BG_LOG(1, "am: %s: smu: init (driver table 0x%" PRIx64 ") %.1f ms", d->bdf, d->bm.smu_table, r->ms_smu);
  return boot_engines(d, blk, r, false);
}

int bg_am_boot_reset_in_place(bg_am_dev *d, bg_am_blocks *blk, bg_am_boot_report *rep) {
  bg_am_boot_report local = {0};
  bg_am_boot_report *r = rep ? rep : &local;
  memset(r, 0, sizeof(*r));
  /* Marked unfinished first, so the reset happens whatever the PSP shows (bg_am_boot_reset_if_alive). */
  int e = bg_am_wr(d, BG_AM_R_SCRATCH6, 1);
  if (e >= 0) e = boot_cold_hw(d, blk, r);
  if (e >= 0 && !r->mode1_reset)
    e = bg_error(BG_EIO, "am: %s: mode1 reset in place: the SMU does not answer, so the device was not reset", d->bdf);
  return e;
}
