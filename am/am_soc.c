/* am/am_soc.c: SOC init and register access by name (am/am_soc.h). */
#include "am/am_soc.h"

#include <stdarg.h>

#include "baregpu/error.h"

const struct bg_am_regtab *bg_am_tab_of(const bg_am_dev *d, int hwip) {
  switch (hwip) {
  case GC_HWIP: return d->regs.gc;
  case MMHUB_HWIP: return d->regs.mmhub;
  case NBIO_HWIP:
  case NBIF_HWIP: return d->regs.nbio;
  case OSSSYS_HWIP: return d->regs.osssys;
  case HDP_HWIP: return d->regs.hdp;
  case MP0_HWIP: return d->regs.mp;
  default: return NULL;
  }
}

static int lookup(bg_am_dev *d, int hwip, unsigned inst, const char *name, const struct bg_am_reg **r,
                  uint32_t *addr) {
  const struct bg_am_regtab *t = bg_am_tab_of(d, hwip);
  if (!t) return bg_error(BG_EINVAL, "am: %s: no register table for hwip %d (%s)", d->bdf, hwip, name);
  int e = bg_am_reg_get(t, name, r);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  e = bg_am_reg_abs(&d->disc, hwip == NBIF_HWIP ? NBIO_HWIP : hwip, inst, *r, addr);
  return e < 0 ? bg_error_context(e, "am: %s: ", d->bdf) : 0;
}

int bg_am_nreg_addr(bg_am_dev *d, int hwip, unsigned inst, const char *name, uint32_t *addr) {
  const struct bg_am_reg *r;
  return lookup(d, hwip, inst, name, &r, addr);
}

int bg_am_nwreg(bg_am_dev *d, int hwip, unsigned inst, const char *name, uint32_t v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, hwip, inst, name, &a);
  return e < 0 ? e : bg_am_wreg(d, a, v);
}

int bg_am_nrreg(bg_am_dev *d, int hwip, unsigned inst, const char *name, uint32_t *v) {
  uint32_t a;
  int e = bg_am_nreg_addr(d, hwip, inst, name, &a);
  if (e >= 0) *v = bg_am_rreg(d, a);
  return e;
}

int bg_am_nwreg_fields(bg_am_dev *d, int hwip, unsigned inst, const char *name, int rmw, uint32_t *out, ...) {
  const struct bg_am_reg *r;
  uint32_t a, v;
  int e = lookup(d, hwip, inst, name, &r, &a);
  if (e < 0) return e;
  v = rmw ? bg_am_rreg(d, a) : 0;
  va_list ap;
  va_start(ap, out);
  const char *f;
  while ((f = va_arg(ap, const char *)) != NULL) {
    unsigned fv = va_arg(ap, unsigned);
    if ((e = bg_am_reg_field_set(r, &v, f, fv)) < 0) break;
  }
  va_end(ap);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  if (out) *out = v;
  return bg_am_wreg(d, a, v);
}

int bg_am_soc_init(bg_am_dev *d) {
  int e;
  const char *nb = d->regs.nbio ? d->regs.nbio->name : "";
  if (nb[0] == 'n' && bg_am_reg_find(d->regs.nbio, "regBIFC_DOORBELL_ACCESS_EN_PF")) { /* NBIO 7.9.x */
    unsigned live = d->disc.ip[GC_HWIP].inst_mask & 0xffu;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, "regXCC_DOORBELL_FENCE", 0xffu & ~live)) < 0) return e;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, "regBIFC_GFX_INT_MONITOR_MASK", 0x7ff)) < 0) return e;
    if ((e = bg_am_nwreg(d, NBIO_HWIP, 0, "regBIFC_DOORBELL_ACCESS_EN_PF", 0xfffff)) < 0) return e;
  } else if ((e = bg_am_nwreg_fields(d, NBIO_HWIP, 0, "regRCC_DEV0_EPF2_STRAP2", 1, NULL,
                                     "STRAP_NO_SOFT_RESET_DEV0_F2", 0u, (const char *)NULL)) < 0) {
    return e;
  }
  return bg_am_nwreg_fields(d, NBIO_HWIP, 0, "regRCC_DEV0_EPF0_RCC_DOORBELL_APER_EN", 0, NULL,
                            "BIF_DOORBELL_APER_EN", 1u, (const char *)NULL);
}
