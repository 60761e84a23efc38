/* am/am_sdma.c: SDMA bring-up (am/am_sdma.h, tinygrad tinygrad/runtime/support/am/ip.py AM_SDMA). */
#include "am/am_sdma.h"

#include <stdio.h>
#include <stdlib.h>

#include "am/am_soc.h"
#include "baregpu/error.h"

#define F(n, v) n, (unsigned)(v)
#define END (const char *)NULL

int bg_am_doorbell_enable(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset, unsigned size) {
  return bg_am_doorbell_enable_aid(d, port, awid, awaddr, offset, size, 0);
}

int bg_am_doorbell_enable_aid(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset,
                              unsigned size, unsigned aid) {
  char name[64];
  snprintf(name, sizeof(name), "reg%sS2A_DOORBELL_ENTRY_%u_CTRL", d->gc.maj >= 12 ? "GDC_S2A0_" : "", port);
  uint32_t v = 1u | (awid & 0x1fu) << 1 | (offset & 0x3ffu) << 7 | (size & 0xffu) << 17 | (awaddr & 0xfu) << 28;
  if (!bg_am_nbio79(d)) return bg_am_nwreg(d, NBIO_HWIP, 0, name, v);
  uint32_t a;
  int e = bg_am_nreg_addr(d, NBIO_HWIP, 0, name, &a);
  return e < 0 ? e : bg_am_indirect_wreg_pcie(d, a, v, aid);
}

int bg_am_sdma_create(bg_am_dev *d, bg_am_sdma **out) {
  *out = NULL;
  bool v44 = d->disc.ip[SDMA0_HWIP].maj == 4 && d->disc.ip[SDMA0_HWIP].min == 4;
  if ((d->gc.maj < 11 || d->gc.maj > 12) && !(v44 && d->regs.sdma))
    return bg_error(BG_ENOTSUP, "am: %s: sdma: GC %u.%u.%u with SDMA %u.%u.%u not supported (SDMA 4.4.x, 6.x, 7.x)",
                    d->bdf, d->gc.maj, d->gc.min, d->gc.rev, d->disc.ip[SDMA0_HWIP].maj, d->disc.ip[SDMA0_HWIP].min,
                    d->disc.ip[SDMA0_HWIP].rev);
  bg_am_sdma *s = calloc(1, sizeof(*s));
  if (!s) return bg_error(BG_ENOMEM, "am: sdma: out of memory");
  s->d = d;
  s->mcu = d->disc.ip[SDMA0_HWIP].maj >= 7;
  s->v44 = v44;
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
    if ((insts >> i & 1) && (e = bg_am_nwreg_fields(d, SDMA0_HWIP, i, "regSDMA_CNTL", 1, NULL, F("TRAP_ENABLE", 1),
                                                    F("UTC_L1_ENABLE", 1), END)) < 0)
      return e;
  if (!bg_am_nbio79(d)) return bg_am_doorbell_enable(d, 2, 0xe, 0x3, BG_AM_SDMA_DOORBELL * 2, 4);
  static const struct { unsigned port, awid, offset, awaddr; } route[4] = {
      {1, 0xe, 0xe, 0x1}, {2, 0x8, 0x8, 0x2}, {5, 0x9, 0x9, 0x8}, {6, 0xa, 0xa, 0x9}};
  uint32_t aids = bg_am_aid_mask(d);
  for (unsigned aid = 0; aid < 32; aid++) {
    if (!(aids >> aid & 1)) continue;
    for (unsigned k = 0; k < 4; k++) {
      unsigned entry = k + 1 + 4 * aid;
      char reg[48], fsize[48], foff[48];
      snprintf(reg, sizeof(reg), "regDOORBELL0_CTRL_ENTRY_%u", entry);
      snprintf(fsize, sizeof(fsize), "BIF_DOORBELL%u_RANGE_SIZE_ENTRY", entry);
      snprintf(foff, sizeof(foff), "BIF_DOORBELL%u_RANGE_OFFSET_ENTRY", entry);
      if ((e = bg_am_nwreg_fields(d, NBIO_HWIP, 0, reg, 0, NULL, F(fsize, 20),
                                  F(foff, (BG_AM_SDMA_DOORBELL + (entry - 1) * 0xa) * 2), END)) < 0 ||
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
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_WATCHDOG_CNTL", 1, NULL, F("QUEUE_HANG_COUNT", 100), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_UTCL1_CNTL", 1, NULL, F("RESP_MODE", 3), F("REDO_DELAY", 9),
                              END)) < 0)
    return e;
  if (s->mcu) {
    if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_UTCL1_PAGE", 1, NULL, F("RD_L2_POLICY", 2),
                                F("WR_L2_POLICY", 3), END)) < 0 ||
        (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_MCU_CNTL", 1, NULL, F("HALT", 0), F("RESET", 0), END)) < 0)
      return e;
  } else if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_UTCL1_PAGE", 1, NULL, F("RD_L2_POLICY", 2),
                                     F("WR_L2_POLICY", 3), F("LLC_NOALLOC", 1), END)) < 0 ||
             (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_F32_CNTL", 1, NULL, F("HALT", 0), F("TH1_RESET", 0),
                                     END)) < 0) {
    return e;
  }
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_CNTL", 1, NULL, F("TRAP_ENABLE", 1), END)) < 0) return e;
  return bg_am_doorbell_enable(d, 2, 0xe, 0x3, BG_AM_SDMA_DOORBELL * 2, 4);
}

static unsigned log2u64(uint64_t v) {
  unsigned n = 0;
  while (v > 1) v >>= 1, n++;
  return n;
}

/* Queue 0 registers: regSDMA0_QUEUE0_<sfx> in the GC table, or regSDMA_GFX_<sfx> of SDMA instance 0 (4.4.x). */
static const char *qn(const bg_am_sdma *s, char *buf, size_t n, const char *sfx) {
  snprintf(buf, n, "%s%s", s->v44 ? "regSDMA_GFX" : "regSDMA0_QUEUE0", sfx);
  return buf;
}
static int qw(bg_am_sdma *s, const char *sfx, uint32_t v) {
  char n[64];
  return bg_am_nwreg(s->d, s->v44 ? SDMA0_HWIP : GC_HWIP, 0, qn(s, n, sizeof(n), sfx), v);
}

int bg_am_sdma_setup_queue(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int hw = s->v44 ? SDMA0_HWIP : GC_HWIP;
  char n[64];
  uint64_t ring = bg_am_mc(d, s->ring), rptr = bg_am_mc(d, s->ptrs) + 0x80, wptr = bg_am_mc(d, s->ptrs) + 0x38;
  struct {
    const char *n;
    uint32_t v;
  } w[] = {
      {"_MINOR_PTR_UPDATE", 1}, {"_RB_RPTR", 0}, {"_RB_RPTR_HI", 0}, {"_RB_WPTR", 0}, {"_RB_WPTR_HI", 0},
      {"_RB_BASE", (uint32_t)(ring >> 8)}, {"_RB_BASE_HI", (uint32_t)(ring >> 40)},
      {"_RB_RPTR_ADDR_LO", (uint32_t)rptr}, {"_RB_RPTR_ADDR_HI", (uint32_t)(rptr >> 32)},
      {"_RB_WPTR_POLL_ADDR_LO", (uint32_t)wptr}, {"_RB_WPTR_POLL_ADDR_HI", (uint32_t)(wptr >> 32)},
  };
  int e;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
    if ((e = qw(s, w[i].n, w[i].v)) < 0) return e;
  if ((e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_DOORBELL_OFFSET"), 1, NULL,
                              F("OFFSET", BG_AM_SDMA_DOORBELL * 2), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_DOORBELL"), 1, NULL, F("ENABLE", 1), END)) < 0 ||
      (e = qw(s, "_MINOR_PTR_UPDATE", 0)) < 0)
    return e;
  /* SDMA 4.4 sets no wptr-poll enable in RB_CNTL (tinygrad; the doorbell carries the wptr): a NULL field name
   * ends the list there */
  const char *poll = s->v44 ? NULL : s->mcu ? "MCU_WPTR_POLL_ENABLE" : "F32_WPTR_POLL_ENABLE";
  if ((e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_RB_CNTL"), 0, &s->rb_cntl, F("RB_ENABLE", 1),
                              F("RB_SIZE", log2u64(BG_AM_SDMA_RING_SIZE / 4)), F("RPTR_WRITEBACK_ENABLE", 1),
                              F("RPTR_WRITEBACK_TIMER", 4), F("RB_PRIV", 1), F("RB_VMID", 0), F(poll, 1), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_IB_CNTL"), 1, NULL, F("IB_ENABLE", 1), END)) < 0)
    return e;
  s->ring_on = true;
  return 0;
}

int bg_am_sdma_fini(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
  int hw = s->v44 ? SDMA0_HWIP : GC_HWIP;
  char n[64];
  if (!s->ring_on) return 0;
  if ((e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_RB_CNTL"), 1, NULL, F("RB_ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_IB_CNTL"), 1, NULL, F("IB_ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_DOORBELL"), 1, NULL, F("ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, hw, 0, qn(s, n, sizeof(n), "_DOORBELL_OFFSET"), 1, NULL, F("OFFSET", 0), END)) < 0)
    return e;
  s->ring_on = false;
  return 0;
}
