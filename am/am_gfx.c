/* am/am_gfx.c: GFX / CP / MEC / RLC bring-up (am/am_gfx.h, tinygrad tinygrad/runtime/support/am/ip.py AM_GFX). */
#include "am/am_gfx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_psp.h"
#include "am/am_sdma.h"
#include "am/am_soc.h"
#include "baregpu/error.h"

#define MQD_DWORDS 512u
#define MQD_REG0 0x80u /* MQD dword of CP_MQD_BASE_ADDR */
#define MQD_NREGS 56u  /* CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI */
/* The live XCCs as GC instance numbers, in order; returns their count (1 on RDNA). */
static unsigned xcc_list(const bg_am_dev *d, unsigned inst[32]) {
  uint32_t m = bg_am_xcc_mask(d);
  unsigned n = 0;
  for (unsigned i = 0; i < 32; i++)
    if (m >> i & 1) inst[n++] = i;
  return n;
}

static int grbm_sel(bg_am_dev *d, unsigned me, unsigned pipe, unsigned queue, unsigned vmid, unsigned inst) {
  return bg_am_nwreg(d, GC_HWIP, inst, regGRBM_GFX_CNTL,
                     (pipe & 3u) | (me & 3u) << 2 | (vmid & 0xfu) << 4 | (queue & 7u) << 8);
}

int bg_am_gfx_grbm_select(bg_am_dev *d, unsigned me, unsigned pipe, unsigned queue, unsigned vmid) {
  return grbm_sel(d, me, pipe, queue, vmid, 0);
}

int bg_am_gfx_create(bg_am_dev *d, bg_am_gmc *gmc, bg_am_gfx **out) {
  *out = NULL;
  if (!d->ip.gfx->bringup)
    return bg_error(BG_ENOTSUP, "am: %s: gfx: GC %u.%u.%u (%s) has no GFX bring-up yet (GC 9.4.3, 11.x, 12.x)", d->bdf,
                    d->gc.maj, d->gc.min, d->gc.rev, d->ip.gfx->name);
  bg_am_gfx *x = calloc(1, sizeof(*x));
  if (!x) return bg_error(BG_ENOMEM, "am: gfx: out of memory");
  x->d = d;
  x->gmc = gmc;
  x->xccs = bg_am_xcc_count(d);
  uint64_t mqd_size = 0x1000ull * x->xccs; /* one MQD per XCC (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw, the MQD allocations) */
  int e;
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, mqd_size, 0x1000, false, &x->mqd[0])) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, mqd_size, 0x1000, false, &x->mqd[1])) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_RING_SIZE, 0x1000, true, &x->ring)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_EOP_SIZE, 0x1000, true, &x->eop)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, 0x1000, 0x1000, true, &x->ptrs)) < 0 ||
      (d->ip.gfx->aql && ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_RING_SIZE, 0x1000, true, &x->aql_ring)) < 0 ||
                   (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_EOP_SIZE, 0x1000, true, &x->aql_eop)) < 0 ||
                   (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, 0x1000, 0x1000, true, &x->aql_ptrs)) < 0))) {
    bg_am_gfx_destroy(x);
    return bg_error_context(e, "am: %s: gfx init_sw: ", d->bdf);
  }
  *out = x;
  return 0;
}

void bg_am_gfx_destroy(bg_am_gfx *x) {
  if (!x) return;
  uint64_t *p[] = {&x->mqd[0], &x->mqd[1], &x->ring, &x->eop, &x->ptrs, &x->aql_ring, &x->aql_eop, &x->aql_ptrs};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
    if (*p[i]) bg_am_vram_free(x->d->mm, *p[i]); /* offset 0 is the root page table, never ours */
  free(x);
}

/* An HQD dequeue is given 1 s: Linux gfx_v11_0_reset_kcq polls CP_HQD_ACTIVE for adev->usec_timeout (100 ms); the
 * margin is for an emulated CP on a loaded machine. A queue that does not stop by then is reset by mode1. */
#define DEQUEUE_TIMEOUT_MS 1000

/* Poll a GC register until (v & mask) == want for tmo ms (0: the device's timeout); the timeout names the register. */
static int wait_gc_inst_tmo(bg_am_dev *d, unsigned inst, enum bg_am_reg_id id, uint32_t mask, uint32_t want,
                            const char *what, int tmo) {
  uint32_t a, v = 0;
  int e = bg_am_nreg_addr(d, GC_HWIP, inst, id, &a);
  if (e < 0) return e;
  if (tmo <= 0) tmo = d->opts.timeout_ms > 0 ? d->opts.timeout_ms : 10000;
  double t0 = bg_am_now_ms();
  for (;;) {
    v = bg_am_rreg(d, a);
    if ((v & mask) == want) return 0;
    if (bg_am_now_ms() - t0 > tmo) break;
    bg_am_sleep_ms(1); /* kept: backoff inside the poll (the timeout below names the register) */
  }
  return bg_error(BG_ETIMEDOUT, "am: %s: gfx: %s: %s (XCC %u, 0x%x) & 0x%x = 0x%x after %d ms, expected 0x%x", d->bdf,
                  what, bg_am_reg_id_name(id), inst, a, mask, v & mask, tmo, want);
}

static int wait_gc_inst(bg_am_dev *d, unsigned inst, enum bg_am_reg_id id, uint32_t mask, uint32_t want,
                        const char *what) {
  return wait_gc_inst_tmo(d, inst, id, mask, want, what, 0);
}

static int wait_gc(bg_am_dev *d, enum bg_am_reg_id id, uint32_t mask, uint32_t want, const char *what) {
  return wait_gc_inst(d, 0, id, mask, want, what);
}

/* MEC start per generation (gfx_v9.c, gfx_v11.c), then the settle time before its queues are touched. */
static int config_mec(bg_am_gfx *x) { return x->d->ip.gfx->config_mec(x->d); }

static int enable_mec(bg_am_gfx *x) {
  int e = x->d->ip.gfx->enable_mec(x->d);
  /* Kept: no register reports that the un-halted MEC has started; Linux gfx_v11_0_cp_compute_enable (and
   * gfx_v9_0_cp_compute_enable) waits a fixed udelay(50) here too. Ours is 50 ms, a margin for the first queue map. */
  if (e >= 0) bg_am_sleep_ms(x->d->opts.settle_ms < 0 ? 0 : 50);
  return e;
}

int bg_am_gfx_dequeue(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  unsigned xi[32], n = xcc_list(d, xi);
  int e = 0;
  for (unsigned q = 0; q < 2 && e >= 0; q++) {
    for (unsigned k = 0; k < n && e >= 0; k++) {
      uint32_t act = 0;
      if ((e = grbm_sel(d, 1, 0, q, 0, xi[k])) < 0 || (e = bg_am_nrreg(d, GC_HWIP, xi[k], regCP_HQD_ACTIVE, &act)) < 0)
        break;
      if (!(act & 1)) continue;
      if ((e = bg_am_nwreg(d, GC_HWIP, xi[k], regCP_HQD_DEQUEUE_REQUEST, 2)) < 0 ||
          (e = bg_am_nwreg(d, GC_HWIP, xi[k], regSPI_COMPUTE_QUEUE_RESET, 1)) < 0 ||
          (e = wait_gc_inst_tmo(d, xi[k], regCP_HQD_ACTIVE, 1, 0, "dequeue", DEQUEUE_TIMEOUT_MS)) < 0)
        break;
    }
  }
  int e2 = bg_am_gfx_grbm_select(d, 0, 0, 0, 0);
  x->hqd_active = false;
  x->aql_active = false;
  return e < 0 ? e : e2;
}

static int reset_mec(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  int e;
  if ((e = bg_am_gfx_dequeue(x)) < 0) return e;
  if (d->ip.gfx->cp_soft_reset) {
    unsigned xi[32], n = xcc_list(d, xi);
    for (unsigned k = 0; k < n; k++)
      if ((e = bg_am_nwreg_fields(d, GC_HWIP, xi[k], regGRBM_SOFT_RESET, 0, NULL,
                                  BG_AM_F(GRBM_SOFT_RESET__SOFT_RESET_CP, 1),
                                  BG_AM_F(GRBM_SOFT_RESET__SOFT_RESET_CPC, 1))) < 0)
        return e;
    /* Kept: a reset pulse's hold time, not a state to poll (Linux gfx_v11_0_soft_reset: udelay(50) between setting
     * and clearing GRBM_SOFT_RESET). */
    bg_am_sleep_ms(d->opts.settle_ms < 0 ? 0 : 50);
    for (unsigned k = 0; k < n; k++)
      if ((e = bg_am_nwreg(d, GC_HWIP, xi[k], regGRBM_SOFT_RESET, 0)) < 0) return e;
  }
  if ((e = config_mec(x)) < 0) return e;
  return enable_mec(x);
}

int bg_am_gfx_init(bg_am_gfx *x, bool warm) {
  bg_am_dev *d = x->d;
  int e;
  if (warm) {
    if ((e = bg_am_gmc_enable_hub(x->gmc, BG_AM_HUB_GC)) < 0) return e;
    return reset_mec(x);
  }
  if ((e = wait_gc(d, regCP_STAT, 0xffffffffu, 0, "RLC autoload (CP idle)")) < 0) return e;
  /* gfx9 has no RLC autoload (the PSP loads the RLC with REG_LIST): no bootload status to wait for */
  if (bg_am_reg_find(d->regs.gc, regRLC_RLCS_BOOTLOAD_STATUS) &&
      (e = wait_gc(d, regRLC_RLCS_BOOTLOAD_STATUS, 0x80000000u, 0x80000000u, "RLC autoload (BOOTLOAD_COMPLETE)")) < 0)
    return e;
  /* GC hub after the autoload, which resets it (Linux gfx_v11_0_hw_init -> gfx_v11_0_gfxhub_enable); gfx9: in GMC */
  if (d->ip.gfx->rlc_autoload && (e = bg_am_gmc_enable_hub(x->gmc, BG_AM_HUB_GC)) < 0) return e;
  if ((e = config_mec(x)) < 0) return e;
  unsigned xi[32], n = xcc_list(d, xi);
  uint32_t v;
  for (unsigned k = 0; k < n; k++) /* golden value from Linux: TCP_CNTL |= 0x20000000 */
    if ((e = bg_am_nrreg(d, GC_HWIP, xi[k], regTCP_CNTL, &v)) < 0 ||
        (e = bg_am_nwreg(d, GC_HWIP, xi[k], regTCP_CNTL, v | 0x20000000u)) < 0)
      return e;
  for (unsigned k = 0; k < n; k++)
    if ((e = bg_am_nwreg(d, GC_HWIP, xi[k], regRLC_CNTL, 1)) < 0) return e;
  for (unsigned k = 0; k < n; k++)
    if ((e = bg_am_nwreg_fields(d, GC_HWIP, xi[k], regRLC_SRM_CNTL, 1, NULL, BG_AM_F(RLC_SRM_CNTL__SRM_ENABLE, 1),
                                BG_AM_F(RLC_SRM_CNTL__AUTO_INCR_ADDR, 1))) < 0)
      return e;
  for (unsigned k = 0; k < n; k++)
    if ((e = bg_am_nwreg(d, GC_HWIP, xi[k], regRLC_SPM_MC_CNTL, 0xf)) < 0) return e;
  /* NBIO 7.9 routes the MEC doorbells itself (SOC init fences them per XCC) */
  if (!d->ip.nbio->multi_aid &&
      ((e = bg_am_doorbell_enable(d, 0, 0x3, 0x3, 0, 0)) < 0 || (e = bg_am_doorbell_enable(d, 3, 0x6, 0x3, 0, 0)) < 0))
    return e;
  for (unsigned k = 0; k < n; k++) {
    unsigned i = xi[k];
    if (d->ip.gfx->golden && (e = d->ip.gfx->golden(d, i)) < 0) return e;
    if ((e = bg_am_nwreg_fields(d, GC_HWIP, i, regGRBM_CNTL, 1, NULL,
                                BG_AM_F(GRBM_CNTL__READ_TIMEOUT, 0xff))) < 0) return e;
    for (unsigned vmid = 0; vmid < 16; vmid++) {
      if ((e = grbm_sel(d, 0, 0, 0, vmid, i)) < 0) return e;
      e = d->ip.gfx->sh_mem_config(d, i);
      if (e < 0 || (e = bg_am_nwreg_fields(d, GC_HWIP, i, regSH_MEM_BASES, 0, NULL,
                                           BG_AM_F(SH_MEM_BASES__SHARED_BASE, 1),
                                           BG_AM_F(SH_MEM_BASES__PRIVATE_BASE, 2))) < 0)
        return e;
    }
    if ((e = grbm_sel(d, 0, 0, 0, 0, i)) < 0 ||
        (e = bg_am_nwreg(d, GC_HWIP, i, regCP_MEC_DOORBELL_RANGE_LOWER, 0x100u * k)) < 0 ||
        (e = bg_am_nwreg(d, GC_HWIP, i, regCP_MEC_DOORBELL_RANGE_UPPER, 0x100u * k + 0xf8)) < 0)
      return e;
  }
  if ((e = enable_mec(x)) < 0) return e;
  /* one spatial partition (SPX) on bare metal when there are several XCCs */
  return n > 1 ? bg_am_psp_spatial_partition(d, 1) : 0;
}

/* MQD dword of register `name` (inside CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI). */
static int mqd_put(bg_am_dev *d, unsigned inst, uint32_t *mqd, uint32_t base, enum bg_am_reg_id id, uint32_t v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, GC_HWIP, inst, id, &a);
  if (e < 0) return e;
  if (a < base || a - base >= MQD_NREGS)
    return bg_error(BG_EINVAL, "am: gfx: %s (0x%x) outside the MQD register window 0x%x+%u", bg_am_reg_id_name(id), a, base, MQD_NREGS);
  mqd[MQD_REG0 + (a - base)] = v;
  return 0;
}

static unsigned log2u64(uint64_t v) {
  unsigned n = 0;
  while (v > 1) v >>= 1, n++;
  return n;
}

/* setup_ring (tinygrad tinygrad/runtime/support/am/ip.py AM_GFX): MEC1 pipe 0 queue `queue`, on the first XCC (PM4) or on every XCC (AQL), each with its MQD at
 * mqd[queue] + 0x1000 * xcc copied to the registers CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI, then CP_HQD_ACTIVE = 1. */
static int setup_ring(bg_am_gfx *x, unsigned queue, bool aql, uint64_t ring_off, uint64_t eop_off, uint64_t ptrs_off,
                      unsigned doorbell, uint32_t *pq_control_out) {
  bg_am_dev *d = x->d;
  unsigned xi[32], n = xcc_list(d, xi);
  const struct bg_am_reg *pqc_reg = bg_am_reg_find(d->regs.gc, regCP_HQD_PQ_CONTROL);
  if (!pqc_reg) return bg_error(BG_ENOTSUP, "am: %s: gfx: %s has no regCP_HQD_PQ_CONTROL", d->bdf, d->regs.gc->name);
  uint64_t ring = bg_am_mc(d, ring_off), eop = bg_am_mc(d, eop_off);
  uint64_t rptr = bg_am_mc(d, ptrs_off) + 0x80, wptr = bg_am_mc(d, ptrs_off) + 0x38;
  for (unsigned k = 0; k < (aql ? n : 1); k++) {
    unsigned i = xi[k];
    uint32_t mqd[MQD_DWORDS], base;
    memset(mqd, 0, sizeof(mqd));
    int e;
    if ((e = bg_am_nreg_addr(d, GC_HWIP, i, regCP_MQD_BASE_ADDR, &base)) < 0) return e;
    uint64_t mqd_off = x->mqd[queue] + 0x1000ull * k, mqd_mc = bg_am_mc(d, mqd_off);
    uint32_t pqc = (log2u64(BG_AM_GFX_RING_SIZE / 4) - 1) | 5u << 8; /* queue_size, rptr_block_size */
    if (aql && ((e = bg_am_reg_field_set(pqc_reg, &pqc, CP_HQD_PQ_CONTROL__QUEUE_FULL_EN, 1)) < 0 ||
                (e = bg_am_reg_field_set(pqc_reg, &pqc, CP_HQD_PQ_CONTROL__SLOT_BASED_WPTR, 2)) < 0 ||
                (e = bg_am_reg_field_set(pqc_reg, &pqc, CP_HQD_PQ_CONTROL__NO_UPDATE_RPTR, k != 0 || n == 1)) < 0))
      return bg_error_context(e, "am: %s: gfx: ", d->bdf);
    if (k == 0) *pq_control_out = pqc;
    mqd[0] = BG_AM_MQD_HEADER;
    struct {
      enum bg_am_reg_id n;
      uint32_t v;
    } f[] = {
        {regCP_MQD_BASE_ADDR, (uint32_t)mqd_mc}, {regCP_MQD_BASE_ADDR_HI, (uint32_t)(mqd_mc >> 32)},
        {regCP_HQD_PIPE_PRIORITY, 2}, {regCP_HQD_QUEUE_PRIORITY, 0xf}, {regCP_HQD_QUANTUM, 0x111},
        {regCP_HQD_PERSISTENT_STATE, 0x5501},
        {regCP_HQD_PQ_BASE, (uint32_t)(ring >> 8)}, {regCP_HQD_PQ_BASE_HI, (uint32_t)(ring >> 40)},
        {regCP_HQD_PQ_RPTR_REPORT_ADDR, (uint32_t)rptr}, {regCP_HQD_PQ_RPTR_REPORT_ADDR_HI, (uint32_t)(rptr >> 32)},
        {regCP_HQD_PQ_WPTR_POLL_ADDR, (uint32_t)wptr}, {regCP_HQD_PQ_WPTR_POLL_ADDR_HI, (uint32_t)(wptr >> 32)},
        {regCP_HQD_PQ_DOORBELL_CONTROL, (doorbell * 2u) << 2 | 1u << 30},
        {regCP_HQD_PQ_CONTROL, pqc}, {regCP_HQD_IB_CONTROL, 3u << 20},
        {regCP_HQD_HQ_SCHEDULER0, 0x20004000}, /* cp_hqd_hq_status0 */
        {regCP_MQD_CONTROL, 1u << 8}, {regCP_HQD_VMID, 0}, {regCP_HQD_AQL_CONTROL, aql ? 1u : 0u},
        {regCP_HQD_EOP_BASE_ADDR, (uint32_t)(eop >> 8)}, {regCP_HQD_EOP_BASE_ADDR_HI, (uint32_t)(eop >> 40)},
        {regCP_HQD_EOP_CONTROL, log2u64(BG_AM_GFX_EOP_SIZE / 4) - 1},
    };
    for (size_t j = 0; j < sizeof(f) / sizeof(f[0]); j++)
      if ((e = mqd_put(d, i, mqd, base, f[j].n, f[j].v)) < 0) return e;
    if (d->ip.gfx->mqd_extra) d->ip.gfx->mqd_extra(mqd, aql, k, n); /* v9_mqd dwords (gfx_v9.c) */
    if ((e = bg_mmio_write(&d->vram, mqd_off, mqd, sizeof(mqd))) < 0)
      return bg_error_context(e, "am: %s: gfx: MQD at 0x%" PRIx64 ": ", d->bdf, mqd_off);
    if ((e = bg_am_flush_hdp(d)) < 0) return e;
    if ((e = grbm_sel(d, 1, 0, queue, 0, i)) < 0) return e;
    for (uint32_t r = 0; r < MQD_NREGS; r++)
      if ((e = bg_am_wreg(d, base + r, mqd[MQD_REG0 + r])) < 0) return e;
    if ((e = bg_am_nwreg(d, GC_HWIP, i, regCP_HQD_ACTIVE, 1)) < 0) return e;
    if ((e = bg_am_flush_hdp(d)) < 0) return e;
    if ((e = grbm_sel(d, 0, 0, 0, 0, i)) < 0) return e;
  }
  return 0;
}

int bg_am_gfx_setup_queue(bg_am_gfx *x) {
  int e = setup_ring(x, 0, false, x->ring, x->eop, x->ptrs, BG_AM_GFX_DOORBELL, &x->pq_control);
  if (e >= 0) x->hqd_active = true;
  return e;
}

int bg_am_gfx_setup_aql(bg_am_gfx *x) {
  if (!x->aql_ring)
    return bg_error(BG_EINVAL, "am: %s: gfx: no AQL queue buffers (allocated on GC 9.4.3 only)", x->d->bdf);
  int e = setup_ring(x, 1, true, x->aql_ring, x->aql_eop, x->aql_ptrs, BG_AM_GFX_DOORBELL_AQL, &x->aql_pq_control);
  if (e >= 0) x->aql_active = true;
  return e;
}
