/* am/am_sdma.c: SDMA bring-up (am/am_sdma.h, am.md §4.10). */
#include "am/am_sdma.h"

#include <stdio.h>
#include <stdlib.h>

#include "am/am_soc.h"
#include "baregpu/error.h"

#define F(n, v) n, (unsigned)(v)
#define END (const char *)NULL

int bg_am_doorbell_enable(bg_am_dev *d, unsigned port, unsigned awid, unsigned awaddr, unsigned offset, unsigned size) {
  char name[64];
  snprintf(name, sizeof(name), "reg%sS2A_DOORBELL_ENTRY_%u_CTRL", d->gc.maj >= 12 ? "GDC_S2A0_" : "", port);
  uint32_t v = 1u | (awid & 0x1fu) << 1 | (offset & 0x3ffu) << 7 | (size & 0xffu) << 17 | (awaddr & 0xfu) << 28;
  return bg_am_nwreg(d, NBIO_HWIP, 0, name, v);
}

int bg_am_sdma_create(bg_am_dev *d, bg_am_sdma **out) {
  *out = NULL;
  if (d->gc.maj < 11 || d->gc.maj > 12)
    return bg_error(BG_ENOTSUP, "am: %s: sdma: GC %u.%u.%u not supported (SDMA 6.x/7.x only)", d->bdf, d->gc.maj,
                    d->gc.min, d->gc.rev);
  bg_am_sdma *s = calloc(1, sizeof(*s));
  if (!s) return bg_error(BG_ENOMEM, "am: sdma: out of memory");
  s->d = d;
  s->mcu = d->disc.ip[SDMA0_HWIP].maj >= 7;
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

int bg_am_sdma_init(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
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

int bg_am_sdma_setup_queue(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  uint64_t ring = bg_am_mc(d, s->ring), rptr = bg_am_mc(d, s->ptrs) + 0x80, wptr = bg_am_mc(d, s->ptrs) + 0x38;
  struct {
    const char *n;
    uint32_t v;
  } w[] = {
      {"regSDMA0_QUEUE0_MINOR_PTR_UPDATE", 1}, {"regSDMA0_QUEUE0_RB_RPTR", 0}, {"regSDMA0_QUEUE0_RB_RPTR_HI", 0},
      {"regSDMA0_QUEUE0_RB_WPTR", 0}, {"regSDMA0_QUEUE0_RB_WPTR_HI", 0},
      {"regSDMA0_QUEUE0_RB_BASE", (uint32_t)(ring >> 8)}, {"regSDMA0_QUEUE0_RB_BASE_HI", (uint32_t)(ring >> 40)},
      {"regSDMA0_QUEUE0_RB_RPTR_ADDR_LO", (uint32_t)rptr}, {"regSDMA0_QUEUE0_RB_RPTR_ADDR_HI", (uint32_t)(rptr >> 32)},
      {"regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO", (uint32_t)wptr},
      {"regSDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI", (uint32_t)(wptr >> 32)},
  };
  int e;
  for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
    if ((e = bg_am_nwreg(d, GC_HWIP, 0, w[i].n, w[i].v)) < 0) return e;
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_DOORBELL_OFFSET", 1, NULL,
                              F("OFFSET", BG_AM_SDMA_DOORBELL * 2), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_DOORBELL", 1, NULL, F("ENABLE", 1), END)) < 0 ||
      (e = bg_am_nwreg(d, GC_HWIP, 0, "regSDMA0_QUEUE0_MINOR_PTR_UPDATE", 0)) < 0)
    return e;
  const char *poll = s->mcu ? "MCU_WPTR_POLL_ENABLE" : "F32_WPTR_POLL_ENABLE";
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_RB_CNTL", 0, &s->rb_cntl, F("RB_ENABLE", 1),
                              F("RB_SIZE", log2u64(BG_AM_SDMA_RING_SIZE / 4)), F(poll, 1),
                              F("RPTR_WRITEBACK_ENABLE", 1), F("RPTR_WRITEBACK_TIMER", 4), F("RB_PRIV", 1),
                              F("RB_VMID", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_IB_CNTL", 1, NULL, F("IB_ENABLE", 1), END)) < 0)
    return e;
  s->ring_on = true;
  return 0;
}

int bg_am_sdma_fini(bg_am_sdma *s) {
  bg_am_dev *d = s->d;
  int e;
  if (!s->ring_on) return 0;
  if ((e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_RB_CNTL", 1, NULL, F("RB_ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_IB_CNTL", 1, NULL, F("IB_ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_DOORBELL", 1, NULL, F("ENABLE", 0), END)) < 0 ||
      (e = bg_am_nwreg_fields(d, GC_HWIP, 0, "regSDMA0_QUEUE0_DOORBELL_OFFSET", 1, NULL, F("OFFSET", 0), END)) < 0)
    return e;
  s->ring_on = false;
  return 0;
}
