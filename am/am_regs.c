/* am/am_regs.c: register table selection and look-ups (see am_regs.h). */
#include "am/am_regs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "baregpu/error.h"

/* ---- version -> table map ---- */

struct regmap {
  int hwip;
  uint8_t maj, min;
  uint8_t rev_lo, rev_hi;
  const struct bg_am_regtab *tab;
};

/* Versions of the supported chips (tinygrad tinygrad/runtime/ops_amd.py PCIIface device ids: Navi31/33 GC 11.0.0/11.0.2, Navi44/48 GC 12.0.0/12.0.1, MI300X GC 9.4.3,
 * MI350 GC 9.5.0) and the module list of tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs. GC 11.0.3+ is not mapped: Linux has a separate gc_11_0_3 header. */
static const struct regmap regmap[] = {
  {GC_HWIP, 9, 4, 3, 3, &bg_am_regtab_gc_9_4_3},
  {GC_HWIP, 9, 5, 0, 0, &bg_am_regtab_gc_9_4_3},
  {GC_HWIP, 11, 0, 0, 2, &bg_am_regtab_gc_11_0_0},
  {GC_HWIP, 12, 0, 0, 1, &bg_am_regtab_gc_12_0_0},
  {MMHUB_HWIP, 1, 8, 0, 1, &bg_am_regtab_mmhub_1_8_0},
  {MMHUB_HWIP, 3, 0, 0, 0, &bg_am_regtab_mmhub_3_0_0},
  {MMHUB_HWIP, 3, 0, 1, 1, &bg_am_regtab_mmhub_3_0_1},
  {MMHUB_HWIP, 3, 0, 2, 2, &bg_am_regtab_mmhub_3_0_2},
  {MMHUB_HWIP, 4, 1, 0, 0, &bg_am_regtab_mmhub_4_1_0},
  {NBIO_HWIP, 4, 3, 0, 1, &bg_am_regtab_nbio_4_3_0},
  {NBIO_HWIP, 6, 3, 1, 1, &bg_am_regtab_nbif_6_3_1},
  {NBIO_HWIP, 7, 9, 0, 1, &bg_am_regtab_nbio_7_9_0},
  {MP0_HWIP, 13, 0, 0, 255, &bg_am_regtab_mp_13_0_0},
  {MP0_HWIP, 14, 0, 0, 255, &bg_am_regtab_mp_14_0_2},
  {HDP_HWIP, 4, 4, 0, 255, &bg_am_regtab_hdp_4_4_2},
  {HDP_HWIP, 6, 0, 0, 255, &bg_am_regtab_hdp_6_0_0},
  {HDP_HWIP, 7, 0, 0, 255, &bg_am_regtab_hdp_7_0_0},
  {OSSSYS_HWIP, 4, 4, 0, 255, &bg_am_regtab_osssys_4_4_2},
  {OSSSYS_HWIP, 6, 0, 0, 255, &bg_am_regtab_osssys_6_0_0},
  {OSSSYS_HWIP, 7, 0, 0, 255, &bg_am_regtab_osssys_7_0_0},
  {SDMA0_HWIP, 4, 4, 2, 2, &bg_am_regtab_sdma_4_4_2},
  {SDMA0_HWIP, 4, 4, 4, 5, &bg_am_regtab_sdma_4_4_2},
};
#define NMAP (sizeof(regmap) / sizeof(regmap[0]))

static int map_hwip(int hwip) {
  if (hwip == NBIF_HWIP) return NBIO_HWIP;
  if (hwip >= SDMA0_HWIP && hwip <= SDMA7_HWIP) return SDMA0_HWIP;
  return hwip;
}

/* "4.3.0-4.3.1, 6.3.1, 7.9.x" for the error message. */
static void supported_list(int hwip, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (size_t i = 0; i < NMAP && n < cap; i++) {
    const struct regmap *m = &regmap[i];
    if (m->hwip != hwip) continue;
    int w;
    if (m->rev_lo == 0 && m->rev_hi == 255)
      w = snprintf(buf + n, cap - n, "%s%u.%u.x (%s)", n ? ", " : "", m->maj, m->min, m->tab->name);
    else if (m->rev_lo == m->rev_hi)
      w = snprintf(buf + n, cap - n, "%s%u.%u.%u (%s)", n ? ", " : "", m->maj, m->min, m->rev_lo, m->tab->name);
    else
      w = snprintf(buf + n, cap - n, "%s%u.%u.%u-%u.%u.%u (%s)", n ? ", " : "", m->maj, m->min, m->rev_lo, m->maj,
                   m->min, m->rev_hi, m->tab->name);
    if (w < 0) break;
    n += (size_t)w;
  }
}

int bg_am_regtab_select(int hwip, unsigned maj, unsigned min, unsigned rev, const struct bg_am_regtab **out) {
  if (!out) return bg_error(BG_EINVAL, "regs: NULL argument");
  *out = NULL;
  int h = map_hwip(hwip);
  if (h == MP1_HWIP) { /* the SMU mailbox registers are the same on every MP1 version (tinygrad tinygrad/runtime/support/am/amdev.py AMDev._build_regs) */
    *out = &bg_am_regtab_mp_11_0_0;
    return 0;
  }
  bool known = false;
  for (size_t i = 0; i < NMAP; i++) {
    const struct regmap *m = &regmap[i];
    if (m->hwip != h) continue;
    known = true;
    if (maj == m->maj && min == m->min && rev >= m->rev_lo && rev <= m->rev_hi) {
      *out = m->tab;
      return 0;
    }
  }
  if (!known)
    return bg_error(BG_ENOTSUP, "regs: %s (version %u.%u.%u) has no register table in AM", bg_am_hwip_name(hwip), maj,
                    min, rev);
  char list[512];
  supported_list(h, list, sizeof(list));
  return bg_error(BG_ENOTSUP, "regs: no register table for %s %u.%u.%u; AM has tables for %s", bg_am_hwip_name(hwip),
                  maj, min, rev, list);
}

const struct bg_am_regtab *bg_am_regtab_by_name(const char *name) {
  static const struct bg_am_regtab *const all[] = {BG_AM_REGTABS};
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

static int select_ip(const struct bg_am_discovery *d, int hwip, const struct bg_am_regtab **out) {
  const struct bg_am_ip *ip = &d->ip[hwip];
  if (!ip->present)
    return bg_error(BG_EINVAL, "regs: %s is not in the discovery table; its registers are needed", bg_am_hwip_name(hwip));
  return bg_am_regtab_select(hwip, ip->maj, ip->min, ip->rev, out);
}

int bg_am_regs_select(const struct bg_am_discovery *d, struct bg_am_regset *out) {
  if (!d || !out) return bg_error(BG_EINVAL, "regs: NULL argument");
  memset(out, 0, sizeof(*out));
  int r;
  if ((r = select_ip(d, GC_HWIP, &out->gc)) < 0 || (r = select_ip(d, MMHUB_HWIP, &out->mmhub)) < 0 ||
      (r = select_ip(d, NBIO_HWIP, &out->nbio)) < 0 || (r = select_ip(d, MP0_HWIP, &out->mp)) < 0 ||
      (r = select_ip(d, MP1_HWIP, &out->smu)) < 0 || (r = select_ip(d, HDP_HWIP, &out->hdp)) < 0 ||
      (r = select_ip(d, OSSSYS_HWIP, &out->osssys)) < 0) {
    memset(out, 0, sizeof(*out));
    return r;
  }
  const struct bg_am_ip *sdma = &d->ip[SDMA0_HWIP];
  if (sdma->present && sdma->maj < 5 && (r = select_ip(d, SDMA0_HWIP, &out->sdma)) < 0) {
    memset(out, 0, sizeof(*out));
    return r;
  }
  return 0;
}

/* ---- look-ups ---- */

const struct bg_am_reg *bg_am_reg_find(const struct bg_am_regtab *t, enum bg_am_reg_id id) {
  if (!t) return NULL;
  size_t lo = 0, hi = t->nregs;
  while (lo < hi) { /* tables are sorted by id (am/regs/gen_regs.py) */
    size_t mid = lo + (hi - lo) / 2;
    if (t->regs[mid].id == (unsigned)id) return &t->regs[mid];
    if ((unsigned)id < t->regs[mid].id)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

const char *bg_am_reg_id_name(enum bg_am_reg_id id) {
  if ((unsigned)id >= BG_AM_REG_ID_COUNT) return "(bad register id)";
  return bg_am_reg_id_names[id];
}

const char *bg_am_field_id_name(enum bg_am_field_id f) {
  unsigned r = BG_AM_FIELD_REG(f), i = BG_AM_FIELD_IDX(f);
  if (f < 0 || r >= BG_AM_REG_ID_COUNT || bg_am_field_id_first[r] + i >= bg_am_field_id_first[r + 1])
    return "(bad field id)";
  return bg_am_field_id_names[bg_am_field_id_first[r] + i];
}

/* Tools and tests only (names typed by a user or read from a trace): a binary search of the generated names. */
int bg_am_reg_id_by_name(const char *name, enum bg_am_reg_id *out) {
  if (!name || !out) return bg_error(BG_EINVAL, "regs: NULL argument");
  size_t lo = 0, hi = BG_AM_REG_ID_COUNT;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, bg_am_reg_id_names[mid]);
    if (c == 0) {
      *out = (enum bg_am_reg_id)mid;
      return 0;
    }
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return bg_error(BG_EINVAL,
                  "regs: no register named '%s' in any table (expected a Linux name such as regGCVM_L2_CNTL)", name);
}

int bg_am_reg_get(const struct bg_am_regtab *t, enum bg_am_reg_id id, const struct bg_am_reg **out) {
  if (!t || !out) return bg_error(BG_EINVAL, "regs: NULL argument");
  *out = bg_am_reg_find(t, id);
  if (!*out) return bg_error(BG_EINVAL, "regs: %s has no register %s", t->name, bg_am_reg_id_name(id));
  return 0;
}

const struct bg_am_regfield *bg_am_reg_field_find(const struct bg_am_reg *r, enum bg_am_field_id f) {
  if (!r || f < 0 || BG_AM_FIELD_REG(f) != r->id) return NULL;
  for (unsigned i = 0; i < r->nfields; i++)
    if (r->fields[i].idx == BG_AM_FIELD_IDX(f)) return &r->fields[i];
  return NULL;
}

static int field_get(const struct bg_am_reg *r, enum bg_am_field_id field, const struct bg_am_regfield **f) {
  if (!r) return bg_error(BG_EINVAL, "regs: NULL argument");
  if (field < 0 || BG_AM_FIELD_REG(field) != r->id)
    return bg_error(BG_EINVAL, "regs: field %s of register %s used with register %s", bg_am_field_id_name(field),
                    bg_am_reg_id_name(BG_AM_FIELD_REG(field)), r->name);
  *f = bg_am_reg_field_find(r, field);
  if (!*f) return bg_error(BG_EINVAL, "regs: register %s has no field %s in this version", r->name, bg_am_field_id_name(field));
  return 0;
}

int bg_am_reg_field(const struct bg_am_reg *r, enum bg_am_field_id field, unsigned *shift, uint32_t *mask) {
  const struct bg_am_regfield *f;
  int e = field_get(r, field, &f);
  if (e < 0) return e;
  if (shift) *shift = f->shift;
  if (mask) *mask = f->mask;
  return 0;
}

int bg_am_reg_field_set(const struct bg_am_reg *r, uint32_t *val, enum bg_am_field_id field, uint32_t fv) {
  const struct bg_am_regfield *f;
  if (!val) return bg_error(BG_EINVAL, "regs: NULL argument");
  int e = field_get(r, field, &f);
  if (e < 0) return e;
  uint32_t max = f->mask >> f->shift;
  if (fv > max)
    return bg_error(BG_EINVAL, "regs: value 0x%" PRIx32 " does not fit %s.%s (max 0x%" PRIx32 ")", fv, r->name, f->name,
                    max);
  *val = (*val & ~f->mask) | ((fv << f->shift) & f->mask);
  return 0;
}

int bg_am_reg_fields_set(const struct bg_am_reg *r, uint32_t *val, const struct bg_am_fv *fv, size_t n) {
  if (!fv && n) return bg_error(BG_EINVAL, "regs: NULL argument");
  for (size_t i = 0; i < n; i++) {
    int e = bg_am_reg_field_set(r, val, fv[i].f, fv[i].v);
    if (e < 0) return e;
  }
  return 0;
}

int bg_am_reg_field_get(const struct bg_am_reg *r, uint32_t val, enum bg_am_field_id field, uint32_t *fv) {
  const struct bg_am_regfield *f;
  if (!fv) return bg_error(BG_EINVAL, "regs: NULL argument");
  int e = field_get(r, field, &f);
  if (e < 0) return e;
  *fv = (val & f->mask) >> f->shift;
  return 0;
}

int bg_am_reg_abs(const struct bg_am_discovery *d, int hwip, unsigned inst, const struct bg_am_reg *r, uint32_t *addr) {
  if (!r) return bg_error(BG_EINVAL, "regs: NULL argument");
  int e = bg_am_reg_addr(d, hwip, inst, r->base_idx, r->offset, addr);
  if (e < 0) return bg_error_context(e, "regs: %s (segment %u, offset 0x%" PRIx32 "): ", r->name, r->base_idx, r->offset);
  return 0;
}

int bg_am_reg_abs_id(const struct bg_am_discovery *d, int hwip, unsigned inst, const struct bg_am_regtab *t,
                     enum bg_am_reg_id id, uint32_t *addr) {
  const struct bg_am_reg *r;
  int e = bg_am_reg_get(t, id, &r);
  if (e < 0) return e;
  return bg_am_reg_abs(d, hwip, inst, r, addr);
}
