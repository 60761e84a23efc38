/* am/am_gfx.c: GFX / CP / MEC / RLC bring-up (am/am_gfx.h, am.md §4.9). */
#include "am/am_gfx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_sdma.h"
#include "am/am_soc.h"
#include "baregpu/error.h"

#define F(n, v) n, (unsigned)(v)
#define END (const char *)NULL
#define MQD_DWORDS 512u
#define MQD_REG0 0x80u /* MQD dword of CP_MQD_BASE_ADDR */
#define MQD_NREGS 56u  /* CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI */

int bg_am_gfx_grbm_select(bg_am_dev *d, unsigned me, unsigned pipe, unsigned queue, unsigned vmid) {
  return bg_am_nwreg(d, GC_HWIP, 0, "regGRBM_GFX_CNTL",
                     (pipe & 3u) | (me & 3u) << 2 | (vmid & 0xfu) << 4 | (queue & 7u) << 8);
}

int bg_am_gfx_create(bg_am_dev *d, bg_am_gmc *gmc, bg_am_gfx **out) {
  *out = NULL;
  if (d->gc.maj < 11 || d->gc.maj > 12)
    return bg_error(BG_ENOTSUP, "am: %s: gfx: GC %u.%u.%u not supported (GC 11.x/12.x only)", d->bdf, d->gc.maj,
                    d->gc.min, d->gc.rev);
  bg_am_gfx *x = calloc(1, sizeof(*x));
  if (!x) return bg_error(BG_ENOMEM, "am: gfx: out of memory");
  x->d = d;
  x->gmc = gmc;
  int e;
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &x->mqd[0])) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &x->mqd[1])) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_RING_SIZE, 0x1000, true, &x->ring)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_GFX_EOP_SIZE, 0x1000, true, &x->eop)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, 0x1000, 0x1000, true, &x->ptrs)) < 0) {
    bg_am_gfx_destroy(x);
    return bg_error_context(e, "am: %s: gfx init_sw: ", d->bdf);
  }
  *out = x;
  return 0;
}

void bg_am_gfx_destroy(bg_am_gfx *x) {
  if (!x) return;
  uint64_t *p[] = {&x->mqd[0], &x->mqd[1], &x->ring, &x->eop, &x->ptrs};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
    if (*p[i]) bg_am_vram_free(x->d->mm, *p[i]); /* offset 0 is the root page table, never ours */
  free(x);
}

/* Poll a GC register until (v & mask) == want; the timeout names the register. */
static int wait_gc(bg_am_dev *d, const char *name, uint32_t mask, uint32_t want, const char *what) {
  uint32_t a, v = 0;
  int e = bg_am_nreg_addr(d, GC_HWIP, 0, name, &a);
  if (e < 0) return e;
  int tmo = d->opts.timeout_ms > 0 ? d->opts.timeout_ms : 10000;
  double t0 = bg_am_now_ms();
  for (;;) {
    v = bg_am_rreg(d, a);
    if ((v & mask) == want) return 0;
    if (bg_am_now_ms() - t0 > tmo) break;
    bg_am_sleep_ms(1);
  }
  return bg_error(BG_ETIMEDOUT, "am: %s: gfx: %s: %s (0x%x) & 0x%x = 0x%x after %d ms, expected 0x%x", d->bdf, what,
                  name, a, mask, v & mask, tmo, want);
}

/* cfg(eng, cntl, pcreg, me) of config_mec. */
static int cfg_engine(bg_am_dev *d, uint64_t ucode_start, const char *pcreg, const char *pcreg_hi, unsigned me,
                      const char *cntl, const char *field) {
  int e;
  uint64_t pc = ucode_start >> 2;
  if ((e = bg_am_gfx_grbm_select(d, me, 0, 0, 0)) < 0 || (e = bg_am_nwreg(d, GC_HWIP, 0, pcreg, (uint32_t)pc)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, pcreg_hi, (uint32_t)(pc >> 32))) < 0 ||
      (e = bg_am_gfx_grbm_select(d, 0, 0, 0, 0)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, F(field, 1), END)) < 0)
    return e;
  return bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, F(field, 0), END);
}

static int config_mec(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  if (d->gc.maj >= 12) {
    int e;
    if ((e = cfg_engine(d, d->fw->rs64_start[0], "regCP_PFP_PRGRM_CNTR_START", "regCP_PFP_PRGRM_CNTR_START_HI", 0,
                        "regCP_ME_CNTL", "PFP_PIPE0_RESET")) < 0 ||
        (e = cfg_engine(d, d->fw->rs64_start[1], "regCP_ME_PRGRM_CNTR_START", "regCP_ME_PRGRM_CNTR_START_HI", 0,
                        "regCP_ME_CNTL", "ME_PIPE0_RESET")) < 0)
      return e;
  }
  return cfg_engine(d, d->fw->rs64_start[2], "regCP_MEC_RS64_PRGRM_CNTR_START", "regCP_MEC_RS64_PRGRM_CNTR_START_HI",
                    1, "regCP_MEC_RS64_CNTL", "MEC_PIPE0_RESET");
}

static int enable_mec(bg_am_gfx *x) {
  int e = bg_am_nwreg_fields(x->d, GC_HWIP, 0, "regCP_MEC_RS64_CNTL", 1, NULL, F("MEC_PIPE0_RESET", 0),
                             F("MEC_PIPE0_ACTIVE", 1), F("MEC_HALT", 0), END);
  if (e >= 0) bg_am_sleep_ms(x->d->opts.settle_ms < 0 ? 0 : 50);
  return e;
}

int bg_am_gfx_dequeue(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  int e = 0;
  for (unsigned q = 0; q < 2 && e >= 0; q++) {
    uint32_t act = 0;
    if ((e = bg_am_gfx_grbm_select(d, 1, 0, q, 0)) < 0 || (e = bg_am_nrreg(d, GC_HWIP, 0, "regCP_HQD_ACTIVE", &act)) < 0)
      break;
    if (!(act & 1)) continue;
    if ((e = bg_am_nwreg(d, GC_HWIP, 0, "regCP_HQD_DEQUEUE_REQUEST", 2)) < 0 ||
        (e = bg_am_nwreg(d, GC_HWIP, 0, "regSPI_COMPUTE_QUEUE_RESET", 1)) < 0 ||
        (e = wait_gc(d, "regCP_HQD_ACTIVE", 1, 0, "dequeue")) < 0)
      break;
  }
  int e2 = bg_am_gfx_grbm_select(d, 0, 0, 0, 0);
  x->hqd_active = false;
  return e < 0 ? e : e2;
}

static int reset_mec(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  int e;
  if ((e = bg_am_gfx_dequeue(x)) < 0) return e;
  if (d->gc.maj < 12) {
    if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regGRBM_SOFT_RESET", 0, NULL, F("SOFT_RESET_CP", 1),
                                F("SOFT_RESET_CPC", 1), END)) < 0)
      return e;
    bg_am_sleep_ms(d->opts.settle_ms < 0 ? 0 : 50);
    if ((e = bg_am_nwreg(d, GC_HWIP, 0, "regGRBM_SOFT_RESET", 0)) < 0) return e;
  }
  if ((e = config_mec(x)) < 0) return e;
  return enable_mec(x);
}

int bg_am_gfx_init(bg_am_gfx *x, bool warm) {
  bg_am_dev *d = x->d;
  int e;
  if (warm) {
    if ((e = bg_am_gmc_init_hub(x->gmc, BG_AM_HUB_GC)) < 0) return e;
    return reset_mec(x);
  }
  if ((e = wait_gc(d, "regCP_STAT", 0xffffffffu, 0, "RLC autoload (CP idle)")) < 0 ||
      (e = wait_gc(d, "regRLC_RLCS_BOOTLOAD_STATUS", 0x80000000u, 0x80000000u, "RLC autoload (BOOTLOAD_COMPLETE)")) < 0)
    return e;
  /* GC hub: done by bg_am_gmc_init (am/am_gmc.h) */
  if ((e = config_mec(x)) < 0) return e;
  uint32_t v;
  if ((e = bg_am_nrreg(d, GC_HWIP, 0, "regTCP_CNTL", &v)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regTCP_CNTL", v | 0x20000000u)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regRLC_CNTL", 1)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regRLC_SRM_CNTL", 1, NULL, F("SRM_ENABLE", 1), F("AUTO_INCR_ADDR", 1),
                              END)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regRLC_SPM_MC_CNTL", 0xf)) < 0 ||
      (e = bg_am_doorbell_enable(d, 0, 0x3, 0x3, 0, 0)) < 0 || (e = bg_am_doorbell_enable(d, 3, 0x6, 0x3, 0, 0)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regGRBM_CNTL", 1, NULL, F("READ_TIMEOUT", 0xff), END)) < 0)
    return e;
  for (unsigned vmid = 0; vmid < 16; vmid++) {
    if ((e = bg_am_gfx_grbm_select(d, 0, 0, 0, vmid)) < 0 ||
        (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSH_MEM_CONFIG", 0, NULL, F("ADDRESS_MODE", 0),
                                F("ALIGNMENT_MODE", 3), F("INITIAL_INST_PREFETCH", 3), END)) < 0 ||
        (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSH_MEM_BASES", 0, NULL, F("SHARED_BASE", 1),
                                F("PRIVATE_BASE", 2), END)) < 0)
      return e;
  }
  if ((e = bg_am_gfx_grbm_select(d, 0, 0, 0, 0)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regCP_MEC_DOORBELL_RANGE_LOWER", 0)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regCP_MEC_DOORBELL_RANGE_UPPER", 0xf8)) < 0)
    return e;
  return enable_mec(x);
}

/* MQD dword of register `name` (inside CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI). */
static int mqd_put(bg_am_dev *d, uint32_t *mqd, uint32_t base, const char *name, uint32_t v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, GC_HWIP, 0, name, &a);
  if (e < 0) return e;
  if (a < base || a - base >= MQD_NREGS)
    return bg_error(BG_EINVAL, "am: gfx: %s (0x%x) outside the MQD register window 0x%x+%u", name, a, base, MQD_NREGS);
  mqd[MQD_REG0 + (a - base)] = v;
  return 0;
}

static unsigned log2u64(uint64_t v) {
  unsigned n = 0;
  while (v > 1) v >>= 1, n++;
  return n;
}

int bg_am_gfx_setup_queue(bg_am_gfx *x) {
  bg_am_dev *d = x->d;
  uint32_t mqd[MQD_DWORDS], base;
  memset(mqd, 0, sizeof(mqd));
  int e = bg_am_nreg_addr(d, GC_HWIP, 0, "regCP_MQD_BASE_ADDR", &base);
  if (e < 0) return e;
  uint64_t mqd_mc = bg_am_mc(d, x->mqd[0]), ring = bg_am_mc(d, x->ring), eop = bg_am_mc(d, x->eop);
  uint64_t rptr = bg_am_mc(d, x->ptrs) + 0x80, wptr = bg_am_mc(d, x->ptrs) + 0x38;
  x->pq_control = (log2u64(BG_AM_GFX_RING_SIZE / 4) - 1) | 5u << 8; /* queue_size, rptr_block_size */
  mqd[0] = BG_AM_MQD_HEADER;
  struct {
    const char *n;
    uint32_t v;
  } f[] = {
      {"regCP_MQD_BASE_ADDR", (uint32_t)mqd_mc}, {"regCP_MQD_BASE_ADDR_HI", (uint32_t)(mqd_mc >> 32)},
      {"regCP_HQD_PIPE_PRIORITY", 2}, {"regCP_HQD_QUEUE_PRIORITY", 0xf}, {"regCP_HQD_QUANTUM", 0x111},
      {"regCP_HQD_PERSISTENT_STATE", 0x5501},
      {"regCP_HQD_PQ_BASE", (uint32_t)(ring >> 8)}, {"regCP_HQD_PQ_BASE_HI", (uint32_t)(ring >> 40)},
      {"regCP_HQD_PQ_RPTR_REPORT_ADDR", (uint32_t)rptr}, {"regCP_HQD_PQ_RPTR_REPORT_ADDR_HI", (uint32_t)(rptr >> 32)},
      {"regCP_HQD_PQ_WPTR_POLL_ADDR", (uint32_t)wptr}, {"regCP_HQD_PQ_WPTR_POLL_ADDR_HI", (uint32_t)(wptr >> 32)},
      {"regCP_HQD_PQ_DOORBELL_CONTROL", (BG_AM_GFX_DOORBELL * 2u) << 2 | 1u << 30},
      {"regCP_HQD_PQ_CONTROL", x->pq_control}, {"regCP_HQD_IB_CONTROL", 3u << 20},
      {"regCP_HQD_HQ_SCHEDULER0", 0x20004000}, /* cp_hqd_hq_status0 */
      {"regCP_MQD_CONTROL", 1u << 8}, {"regCP_HQD_VMID", 0}, {"regCP_HQD_AQL_CONTROL", 0},
      {"regCP_HQD_EOP_BASE_ADDR", (uint32_t)(eop >> 8)}, {"regCP_HQD_EOP_BASE_ADDR_HI", (uint32_t)(eop >> 40)},
      {"regCP_HQD_EOP_CONTROL", log2u64(BG_AM_GFX_EOP_SIZE / 4) - 1},
  };
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
    if ((e = mqd_put(d, mqd, base, f[i].n, f[i].v)) < 0) return e;
  if ((e = bg_mmio_write(&d->vram, x->mqd[0], mqd, sizeof(mqd))) < 0)
    return bg_error_context(e, "am: %s: gfx: MQD at 0x%" PRIx64 ": ", d->bdf, x->mqd[0]);
  bg_am_flush_hdp(d);
  if ((e = bg_am_gfx_grbm_select(d, 1, 0, 0, 0)) < 0) return e;
  for (uint32_t i = 0; i < MQD_NREGS; i++)
    if ((e = bg_am_wreg(d, base + i, mqd[MQD_REG0 + i])) < 0) return e;
  if ((e = bg_am_nwreg(d, GC_HWIP, 0, "regCP_HQD_ACTIVE", 1)) < 0) return e;
  bg_am_flush_hdp(d);
  if ((e = bg_am_gfx_grbm_select(d, 0, 0, 0, 0)) < 0) return e;
  x->hqd_active = true;
  return 0;
}
