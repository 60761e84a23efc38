/* am/am_sdma.c: SDMA bring-up (am/am_sdma.h, tinygrad tinygrad/runtime/support/am/ip.py AM_SDMA). */
#include "am/am_sdma.h"

#include <stdio.h>
#include <stdlib.h>

#include "am/am_soc.h"
#include "baregpu/error.h"

/* S2A doorbell routing entries by port: NBIO 4.3/7.9 (regS2A_...) and NBIF 6.3.1 (regGDC_S2A0_...); the NBIO
 * descriptor's gdc_s2a picks the column. */
#define S2A(n) {regS2A_DOORBELL_ENTRY_##n##_CTRL, regGDC_S2A0_S2A_DOORBELL_ENTRY_##n##_CTRL}
static const enum bg_am_reg_id S2A_ENTRY[16][2] = {S2A(0), S2A(1), S2A(2),  S2A(3),  S2A(4),  S2A(5),  S2A(6),  S2A(7),
                                                   S2A(8), S2A(9), S2A(10), S2A(11), S2A(12), S2A(13), S2A(14), S2A(15)};
#undef S2A

/* NBIO 7.9 doorbell range entries 1..16 (four per AID): register, RANGE_SIZE and RANGE_OFFSET fields. */
#define DBE(n)                                                                                                  \
  {regDOORBELL0_CTRL_ENTRY_##n, DOORBELL0_CTRL_ENTRY_##n##__BIF_DOORBELL##n##_RANGE_SIZE_ENTRY,                \
   DOORBELL0_CTRL_ENTRY_##n##__BIF_DOORBELL##n##_RANGE_OFFSET_ENTRY}
static const struct {
  enum bg_am_reg_id reg;
  enum bg_am_field_id size, offset;
} DB_ENTRY[17] = {DBE(0), DBE(1),  DBE(2),  DBE(3),  DBE(4),  DBE(5),  DBE(6),  DBE(7), DBE(8),
                  DBE(9), DBE(10), DBE(11), DBE(12), DBE(13), DBE(14), DBE(15), DBE(16)};
#undef DBE

/* Queue 0 register / field X: regSDMA0_QUEUE0_X in the GC table, or regSDMA_GFX_X of SDMA instance 0 (4.4.x);
 * both identifiers must exist, so a typo fails the build. */
#define QREG(s, X) ((s)->v44 ? regSDMA_GFX_##X : regSDMA0_QUEUE0_##X)
#define QF(s, X, F) ((s)->v44 ? SDMA_GFX_##X##__##F : SDMA0_QUEUE0_##X##__##F)

int bg_am_doorbell_enable(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset, unsigned size) {
  return bg_am_doorbell_enable_aid(d, port, awid, awaddr, offset, size, 0);
}

int bg_am_doorbell_enable_aid(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset,
                              unsigned size, unsigned aid) {
  if (port >= 16) return bg_error(BG_EINVAL, "am: %s: doorbell: S2A port %u (expected 0..15)", d->bdf, port);
  enum bg_am_reg_id name = S2A_ENTRY[port][d->ip.nbio->gdc_s2a];
  uint32_t v = 1u | (awid & 0x1fu) << 1 | (offset & 0x3ffu) << 7 | (size & 0xffu) << 17 | (awaddr & 0xfu) << 28;
  if (!d->ip.nbio->multi_aid) return bg_am_nwreg(d, NBIO_HWIP, 0, name, v);
  uint32_t a;
  int e = bg_am_nreg_addr(d, NBIO_HWIP, 0, name, &a);
  return e < 0 ? e : bg_am_indirect_wreg_pcie(d, a, v, aid);
}

int bg_am_sdma_create(bg_am_dev *d, bg_am_sdma **out) {
  *out = NULL;
  const struct bg_am_sdma_ip *ip = d->ip.sdma;
  if (ip->own_regs && !d->regs.sdma)
    return bg_error(BG_ENOTSUP, "am: %s: sdma: %s (SDMA %u.%u.%u) has its queue registers in an SDMA register table, "
                    "and there is none for this version", d->bdf, ip->name, d->disc.ip[SDMA0_HWIP].maj,
                    d->disc.ip[SDMA0_HWIP].min, d->disc.ip[SDMA0_HWIP].rev);
  bg_am_sdma *s = calloc(1, sizeof(*s));
  if (!s) return bg_error(BG_ENOMEM, "am: sdma: out of memory");
  s->d = d;
  s->mcu = ip->mcu;
  s->v44 = ip->own_regs;
  int e;
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, BG_AM_SDMA_RING_SIZE, 0x1000, true, &s->ring)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, 0x1000, 0x1000, true, &s->ptrs)) < 0) {
    bg_am_sdma_destroy(s);
    return bg_error_context(e, "am: %s: sdma init_sw: ", d->bdf);
  }
  *out = s;
  return 0;
}

void bg_am_sdma_destroy(bg_am_sdma *s) {
  if (!s) return;
  if (s->ring) bg_am_vram_free(s->d->mm, s->ring);
  if (s->ptrs) bg_am_vram_free(s->d->mm, s->ptrs);
  free(s);
}

/* SDMA 4.4.x (MI300, tinygrad tinygrad/runtime/support/am/ip.py AM_SDMA): SDMA_CNTL.{trap_enable, utc_l1_enable} on every instance, then per AID the
 * NBIO 7.9 doorbell ranges DOORBELL0_CTRL_ENTRY_<1+dev+4*aid> and the S2A routing of ports 1, 2, 5, 6. */
static int init_v44(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
  uint32_t insts = d->disc.ip[SDMA0_HWIP].inst_mask;
  for (unsigned i = 0; i < 32; i++)
    if ((insts >> i & 1) && (e = bg_am_nwreg_fields(d, SDMA0_HWIP, i, regSDMA_CNTL, 1, NULL,
                                                    BG_AM_F(SDMA_CNTL__TRAP_ENABLE, 1),
                                                    BG_AM_F(SDMA_CNTL__UTC_L1_ENABLE, 1))) < 0)
      return e;
  if (!d->ip.nbio->multi_aid) return bg_am_doorbell_enable(d, 2, 0xe, 0x3, BG_AM_SDMA_DOORBELL * 2, 4);
  static const struct { unsigned port, awid, offset, awaddr; } route[4] = {
      {1, 0xe, 0xe, 0x1}, {2, 0x8, 0x8, 0x2}, {5, 0x9, 0x9, 0x8}, {6, 0xa, 0xa, 0x9}};
  uint32_t aids = bg_am_aid_mask(d);
  for (unsigned aid = 0; aid < 32; aid++) {
    if (!(aids >> aid & 1)) continue;
    for (unsigned k = 0; k < 4; k++) {
      unsigned entry = k + 1 + 4 * aid;
      if (entry >= sizeof(DB_ENTRY) / sizeof(DB_ENTRY[0]))
        return bg_error(BG_EINVAL, "am: %s: sdma: doorbell entry %u of AID %u (expected at most 16)", d->bdf, entry, aid);
      if ((e = bg_am_nwreg_fields(d, NBIO_HWIP, 0, DB_ENTRY[entry].reg, 0, NULL, BG_AM_F(DB_ENTRY[entry].size, 20),
                                  BG_AM_F(DB_ENTRY[entry].offset,
                                          (BG_AM_SDMA_DOORBELL + (entry - 1) * 0xa) * 2))) < 0 ||
          (e = bg_am_doorbell_enable_aid(d, route[k].port, route[k].awid, route[k].awaddr, route[k].offset, 4, aid)) < 0)
        return e;
    }
  }
  return 0;
}

int bg_am_sdma_init(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
  if (s->v44) return init_v44(s);
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_WATCHDOG_CNTL, 1, NULL,
                              BG_AM_F(SDMA0_WATCHDOG_CNTL__QUEUE_HANG_COUNT, 100))) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_UTCL1_CNTL, 1, NULL, BG_AM_F(SDMA0_UTCL1_CNTL__RESP_MODE, 3),
                              BG_AM_F(SDMA0_UTCL1_CNTL__REDO_DELAY, 9))) < 0)
    return e;
  if (s->mcu) {
    if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_UTCL1_PAGE, 1, NULL, BG_AM_F(SDMA0_UTCL1_PAGE__RD_L2_POLICY, 2),
                                BG_AM_F(SDMA0_UTCL1_PAGE__WR_L2_POLICY, 3))) < 0 ||
        (e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_MCU_CNTL, 1, NULL, BG_AM_F(SDMA0_MCU_CNTL__HALT, 0),
                                BG_AM_F(SDMA0_MCU_CNTL__RESET, 0))) < 0)
      return e;
  } else if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_UTCL1_PAGE, 1, NULL,
                                     BG_AM_F(SDMA0_UTCL1_PAGE__RD_L2_POLICY, 2),
                                     BG_AM_F(SDMA0_UTCL1_PAGE__WR_L2_POLICY, 3),
                                     BG_AM_F(SDMA0_UTCL1_PAGE__LLC_NOALLOC, 1))) < 0 ||
             (e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_F32_CNTL, 1, NULL, BG_AM_F(SDMA0_F32_CNTL__HALT, 0),
                                     BG_AM_F(SDMA0_F32_CNTL__TH1_RESET, 0))) < 0) {
    return e;
  }
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, regSDMA0_CNTL, 1, NULL,
                              BG_AM_F(SDMA0_CNTL__TRAP_ENABLE, 1))) < 0) return e;
  return bg_am_doorbell_enable(d, 2, 0xe, 0x3, BG_AM_SDMA_DOORBELL * 2, 4);
}

static unsigned log2u64(uint64_t v) {
  unsigned n = 0;
  while (v > 1) v >>= 1, n++;
  return n;
}

static int qw(bg_am_sdma *s, enum bg_am_reg_id id, uint32_t v) {
  return bg_am_nwreg(s->d, s->v44 ? SDMA0_HWIP : GC_HWIP, 0, id, v);
}

int bg_am_sdma_setup_queue(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int hw = s->v44 ? SDMA0_HWIP : GC_HWIP;
  uint64_t ring = bg_am_mc(d, s->ring), rptr = bg_am_mc(d, s->ptrs) + 0x80, wptr = bg_am_mc(d, s->ptrs) + 0x38;
  struct {
    enum bg_am_reg_id n;
    uint32_t v;
  } w[] = {
      {QREG(s, MINOR_PTR_UPDATE), 1}, {QREG(s, RB_RPTR), 0}, {QREG(s, RB_RPTR_HI), 0}, {QREG(s, RB_WPTR), 0},
      {QREG(s, RB_WPTR_HI), 0}, {QREG(s, RB_BASE), (uint32_t)(ring >> 8)}, {QREG(s, RB_BASE_HI), (uint32_t)(ring >> 40)},
      {QREG(s, RB_RPTR_ADDR_LO), (uint32_t)rptr}, {QREG(s, RB_RPTR_ADDR_HI), (uint32_t)(rptr >> 32)},
      {QREG(s, RB_WPTR_POLL_ADDR_LO), (uint32_t)wptr}, {QREG(s, RB_WPTR_POLL_ADDR_HI), (uint32_t)(wptr >> 32)},
  };
  int e;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
    if ((e = qw(s, w[i].n, w[i].v)) < 0) return e;
  if ((e = bg_am_nwreg_fields(d, hw, 0, QREG(s, DOORBELL_OFFSET), 1, NULL,
                              BG_AM_F(QF(s, DOORBELL_OFFSET, OFFSET), BG_AM_SDMA_DOORBELL * 2))) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, QREG(s, DOORBELL), 1, NULL, BG_AM_F(QF(s, DOORBELL, ENABLE), 1))) < 0 ||
      (e = qw(s, QREG(s, MINOR_PTR_UPDATE), 0)) < 0)
    return e;
  /* SDMA 4.4 sets no wptr-poll enable in RB_CNTL (tinygrad; the doorbell carries the wptr): the last field
   * value is left out there */
  struct bg_am_fv rb[] = {
      BG_AM_F(QF(s, RB_CNTL, RB_ENABLE), 1), BG_AM_F(QF(s, RB_CNTL, RB_SIZE), log2u64(BG_AM_SDMA_RING_SIZE / 4)),
      BG_AM_F(QF(s, RB_CNTL, RPTR_WRITEBACK_ENABLE), 1), BG_AM_F(QF(s, RB_CNTL, RPTR_WRITEBACK_TIMER), 4),
      BG_AM_F(QF(s, RB_CNTL, RB_PRIV), 1), BG_AM_F(QF(s, RB_CNTL, RB_VMID), 0),
      BG_AM_F(s->mcu ? SDMA0_QUEUE0_RB_CNTL__MCU_WPTR_POLL_ENABLE : SDMA0_QUEUE0_RB_CNTL__F32_WPTR_POLL_ENABLE, 1)};
  size_t nrb = sizeof(rb) / sizeof(rb[0]) - (s->v44 ? 1 : 0);
  if ((e = bg_am_nwreg_fv(d, hw, 0, QREG(s, RB_CNTL), 0, &s->rb_cntl, rb, nrb)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, QREG(s, IB_CNTL), 1, NULL, BG_AM_F(QF(s, IB_CNTL, IB_ENABLE), 1))) < 0)
    return e;
  s->ring_on = true;
  return 0;
}

int bg_am_sdma_fini(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
  int hw = s->v44 ? SDMA0_HWIP : GC_HWIP;
  if (!s->ring_on) return 0;
  if ((e = bg_am_nwreg_fields(d, hw, 0, QREG(s, RB_CNTL), 1, NULL, BG_AM_F(QF(s, RB_CNTL, RB_ENABLE), 0))) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, QREG(s, IB_CNTL), 1, NULL, BG_AM_F(QF(s, IB_CNTL, IB_ENABLE), 0))) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, QREG(s, DOORBELL), 1, NULL, BG_AM_F(QF(s, DOORBELL, ENABLE), 0))) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, QREG(s, DOORBELL_OFFSET), 1, NULL,
                              BG_AM_F(QF(s, DOORBELL_OFFSET, OFFSET), 0))) < 0)
    return e;
  s->ring_on = false;
  return 0;
}

/* Queue reset after a hang or fault, Linux 6.12 sdma_v6_0_soft_reset / sdma_v7_0_soft_reset (SDMA 6.x/7.x have no
 * per-queue reset request there): ring and IB off (gfx_stop), engine halted with its thread reset ({F32|MCU}_CNTL
 * HALT + TH1_RESET / RESET), a GRBM_SOFT_RESET.SOFT_RESET_SDMA0 pulse, the engine un-halted, then the ring set up
 * again (sdma_v6_0_start). QUEUE0_PREEMPT, which Linux zeroes, is never set by baregpu (no mid-IB preemption);
 * SDMA0_FREEZE, which sdma_v6_0 sets around the pulse, is left out as sdma_v7_0 leaves it (commented out there). */
int bg_am_sdma_reset(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  if (s->v44)
    /* No per-queue reset of SDMA 4.4 here: the caller falls back to its mode1 reset in place (bg_am_hcq_recover). */
    return bg_error(BG_ENOTSUP, "am: %s: sdma: SDMA 4.4.x has no per-queue reset here; recovery resets the device by "
                    "mode1", d->bdf);
  int e = bg_am_sdma_fini(s);
  if (e < 0) return e;
  enum bg_am_reg_id cntl = s->mcu ? regSDMA0_MCU_CNTL : regSDMA0_F32_CNTL;
  enum bg_am_field_id halt = s->mcu ? SDMA0_MCU_CNTL__HALT : SDMA0_F32_CNTL__HALT;
  enum bg_am_field_id rst = s->mcu ? SDMA0_MCU_CNTL__RESET : SDMA0_F32_CNTL__TH1_RESET;
  uint32_t v;
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, BG_AM_F(halt, 1), BG_AM_F(rst, 1))) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, regGRBM_SOFT_RESET, 0, NULL, BG_AM_F(GRBM_SOFT_RESET__SOFT_RESET_SDMA0, 1))) < 0 ||
      (e = bg_am_nrreg(d, GC_HWIP, 0, regGRBM_SOFT_RESET, &v)) < 0)
    return bg_error_context(e, "am: %s: sdma soft reset: ", d->bdf);
  bg_am_sleep_ms(d->opts.settle_ms < 0 ? 0 : 1); /* kept: a reset pulse's hold time (Linux: udelay(100) around it) */
  if ((e = bg_am_nwreg(d, GC_HWIP, 0, regGRBM_SOFT_RESET, 0)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, cntl, 1, NULL, BG_AM_F(halt, 0), BG_AM_F(rst, 0))) < 0)
    return bg_error_context(e, "am: %s: sdma soft reset: ", d->bdf);
  return 0;
}
