/* am/am_ip.c: the IP version table and the selection (am/am_ip.h). The one place in am/ that turns discovered IP
 * versions into behaviour, as Linux's amdgpu_discovery_set_*_ip_blocks (drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c)
 * turns them into amdgpu_ip_block_version entries. */
#include "am/am_ip.h"

#include <stdio.h>
#include <string.h>

#include "am/am_dev.h"
#include "am/am_sdma_pkt.h"
#include "am/mm_vram.h"
#include "baregpu/error.h"

/* ---- data-only descriptors (the blocks with functions define theirs: am_psp.c, am_smu.c, gfx_v*.c) ---- */

/* gmc_v9_0_vm/gfxhub_v1_2/mmhub_v1_8 (GC 9.4.3): 48-bit PAs, L2 fragment processing, 384 MiB reserved
 * (tinygrad tinygrad/runtime/support/am/amdev.py AMMemoryManager, AM_GMC). */
static const struct bg_am_gmc_ip GMC_V9 = {"gmc_v9_0", BG_AM_PT_GFX9, 48, BG_AM_VRAM_RESERVED_TOP_GC94, true, 12, 9,
                                           false, false};
static const struct bg_am_gmc_ip GMC_V11 = {"gmc_v11_0", BG_AM_PT_GFX11, 44, BG_AM_VRAM_RESERVED_TOP, false, 9, 6,
                                            true, true};
static const struct bg_am_gmc_ip GMC_V12 = {"gmc_v12_0", BG_AM_PT_GFX12, 44, BG_AM_VRAM_RESERVED_TOP, false, 9, 6,
                                            true, true};

static const struct bg_am_sdma_ip SDMA_V4_4_2 = {"sdma_v4_4_2", true, false, 4, BG_SDMA_MAX_COPY_V4};
static const struct bg_am_sdma_ip SDMA_V6_0 = {"sdma_v6_0", false, false, 6, BG_SDMA_MAX_COPY_V5};
static const struct bg_am_sdma_ip SDMA_V7_0 = {"sdma_v7_0", false, true, 7, BG_SDMA_MAX_COPY_V5};

/* HDP hole: MMIO_REG_HOLE_OFFSET of Linux nbio_v4_3.c / nbif_v6_3_1.c (0x80000 - PAGE_SIZE) and nbio_v7_9.c (0x1A000). */
static const struct bg_am_nbio_ip NBIO_V4_3 = {"nbio_v4_3", false, false, 0x7f000};
static const struct bg_am_nbio_ip NBIF_V6_3_1 = {"nbif_v6_3_1", false, true, 0x7f000};
static const struct bg_am_nbio_ip NBIO_V7_9 = {"nbio_v7_9", true, false, 0x1a000};

/* Source ids: SDMA0_4_0__SRCID__SDMA_TRAP 224 with client SOC15_IH_CLIENTID_UTCL2 (27) faults on gfx9;
 * GFX_11_0_0__SRCID__SDMA_TRAP 49 (Linux ivsrcid/sdma0/irqsrcs_sdma0_4_0.h, ivsrcid/gfx/irqsrcs_gfx_11_0_0.h). */
static const struct bg_am_ih_ip IH_V4_4_2 = {"vega20_ih", 224, 27};
static const struct bg_am_ih_ip IH_V6_0 = {"ih_v6_0", 49, -1};
static const struct bg_am_ih_ip IH_V7_0 = {"ih_v7_0", 49, -1};

static const struct bg_am_hdp_ip HDP_V4_4_2 = {"hdp_v4_0", false};
static const struct bg_am_hdp_ip HDP_V6_0 = {"hdp_v6_0", true};
static const struct bg_am_hdp_ip HDP_V7_0 = {"hdp_v7_0", true};

/* ---- the table ---- */

#define V BG_AM_IPV
#define ANY(maj) V(maj, 0, 0), V(maj, 255, 255)
#define MINOR(maj, min) V(maj, min, 0), V(maj, min, 255)
#define ONE(maj, min, rev) V(maj, min, rev), V(maj, min, rev)

/* Versions of the chips in am/chips.c (tinygrad tinygrad/runtime/ops_amd.py PCIIface ids) and of the emulated GPUs
 * (tests/unit/am/discovery_gen.c): Navi31/33 GC 11.0.0/11.0.2 with MP 13.0.0/13.0.7/13.0.10, Navi44/48 GC 12.0.x
 * with MP 14.0.2/14.0.3, MI300X GC 9.4.3 with MP 13.0.6, MI350 GC 9.5.0 with MP0 13.0.14 / MP1 13.0.12. */
static const struct bg_am_ip_row rows[] = {
  {BG_AM_IP_GFX, GC_HWIP, ONE(9, 4, 3), {.gfx = &bg_am_gfx_v9_4_3}},
  {BG_AM_IP_GFX, GC_HWIP, ONE(9, 5, 0), {.gfx = &bg_am_gfx_v9_5_0}},
  {BG_AM_IP_GFX, GC_HWIP, ANY(11), {.gfx = &bg_am_gfx_v11_0}},
  {BG_AM_IP_GFX, GC_HWIP, ANY(12), {.gfx = &bg_am_gfx_v12_0}},

  {BG_AM_IP_GMC, GC_HWIP, V(9, 4, 3), V(9, 5, 0), {.gmc = &GMC_V9}},
  {BG_AM_IP_GMC, GC_HWIP, ANY(11), {.gmc = &GMC_V11}},
  {BG_AM_IP_GMC, GC_HWIP, ANY(12), {.gmc = &GMC_V12}},

  {BG_AM_IP_SDMA, SDMA0_HWIP, ONE(4, 4, 2), {.sdma = &SDMA_V4_4_2}},
  {BG_AM_IP_SDMA, SDMA0_HWIP, V(4, 4, 4), V(4, 4, 5), {.sdma = &SDMA_V4_4_2}},
  {BG_AM_IP_SDMA, SDMA0_HWIP, ANY(6), {.sdma = &SDMA_V6_0}},
  {BG_AM_IP_SDMA, SDMA0_HWIP, ANY(7), {.sdma = &SDMA_V7_0}},

  {BG_AM_IP_NBIO, NBIO_HWIP, MINOR(4, 3), {.nbio = &NBIO_V4_3}},
  {BG_AM_IP_NBIO, NBIO_HWIP, MINOR(6, 3), {.nbio = &NBIF_V6_3_1}},
  {BG_AM_IP_NBIO, NBIO_HWIP, V(7, 9, 0), V(7, 9, 1), {.nbio = &NBIO_V7_9}},

  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 0), {.psp = &bg_am_psp_v13_0}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 6), {.psp = &bg_am_psp_v13_0_6}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 7), {.psp = &bg_am_psp_v13_0}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 10), {.psp = &bg_am_psp_v13_0}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 12), {.psp = &bg_am_psp_v13_0_12}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 14), {.psp = &bg_am_psp_v13_0_14}},
  {BG_AM_IP_PSP, MP0_HWIP, ONE(13, 0, 15), {.psp = &bg_am_psp_v13_0_12}},
  {BG_AM_IP_PSP, MP0_HWIP, V(14, 0, 2), V(14, 0, 3), {.psp = &bg_am_psp_v14_0_2}},

  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 0), {.smu = &bg_am_smu_v13_0_0}},
  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 6), {.smu = &bg_am_smu_v13_0_6}},
  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 7), {.smu = &bg_am_smu_v13_0_0}},
  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 10), {.smu = &bg_am_smu_v13_0_0}},
  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 12), {.smu = &bg_am_smu_v13_0_12}},
  {BG_AM_IP_SMU, MP1_HWIP, ONE(13, 0, 14), {.smu = &bg_am_smu_v13_0_12}},
  {BG_AM_IP_SMU, MP1_HWIP, V(14, 0, 2), V(14, 0, 3), {.smu = &bg_am_smu_v14_0_2}},

  {BG_AM_IP_IH, OSSSYS_HWIP, MINOR(4, 4), {.ih = &IH_V4_4_2}},
  {BG_AM_IP_IH, OSSSYS_HWIP, ANY(6), {.ih = &IH_V6_0}},
  {BG_AM_IP_IH, OSSSYS_HWIP, ANY(7), {.ih = &IH_V7_0}},

  {BG_AM_IP_HDP, HDP_HWIP, MINOR(4, 4), {.hdp = &HDP_V4_4_2}},
  {BG_AM_IP_HDP, HDP_HWIP, ANY(6), {.hdp = &HDP_V6_0}},
  {BG_AM_IP_HDP, HDP_HWIP, ANY(7), {.hdp = &HDP_V7_0}},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const struct {
  const char *name;
  int hwip;
} blocks[BG_AM_IP_NBLOCKS] = {
  [BG_AM_IP_GFX] = {"GFX", GC_HWIP},       [BG_AM_IP_GMC] = {"GMC", GC_HWIP},
  [BG_AM_IP_SDMA] = {"SDMA", SDMA0_HWIP},  [BG_AM_IP_NBIO] = {"NBIO", NBIO_HWIP},
  [BG_AM_IP_PSP] = {"PSP", MP0_HWIP},      [BG_AM_IP_SMU] = {"SMU", MP1_HWIP},
  [BG_AM_IP_IH] = {"IH", OSSSYS_HWIP},     [BG_AM_IP_HDP] = {"HDP", HDP_HWIP},
};

size_t bg_am_ip_row_count(void) { return NROWS; }
const struct bg_am_ip_row *bg_am_ip_row_at(size_t i) { return i < NROWS ? &rows[i] : NULL; }

const char *bg_am_ip_block_name(enum bg_am_ip_block b) {
  return (unsigned)b < BG_AM_IP_NBLOCKS ? blocks[b].name : "?";
}
int bg_am_ip_block_hwip(enum bg_am_ip_block b) { return (unsigned)b < BG_AM_IP_NBLOCKS ? blocks[b].hwip : 0; }

const struct bg_am_ip_row *bg_am_ip_find(enum bg_am_ip_block b, unsigned maj, unsigned min, unsigned rev) {
  if (maj > 255 || min > 255 || rev > 255) return NULL;
  uint32_t v = V(maj, min, rev);
  for (size_t i = 0; i < NROWS; i++)
    if (rows[i].block == b && v >= rows[i].lo && v <= rows[i].hi) return &rows[i];
  return NULL;
}

static int vpart(uint32_t v, int shift) { return (int)(v >> shift & 0xffu); }

void bg_am_ip_supported(enum bg_am_ip_block b, char *buf, size_t cap) {
  size_t n = 0;
  if (!cap) return;
  buf[0] = '\0';
  for (size_t i = 0; i < NROWS && n < cap; i++) {
    const struct bg_am_ip_row *r = &rows[i];
    if (r->block != b) continue;
    int M = vpart(r->lo, 16), m = vpart(r->lo, 8), v = vpart(r->lo, 0), w;
    const char *sep = n ? ", " : "";
    if (r->lo == r->hi)
      w = snprintf(buf + n, cap - n, "%s%d.%d.%d", sep, M, m, v);
    else if (r->lo == V(M, 0, 0) && r->hi == V(M, 255, 255))
      w = snprintf(buf + n, cap - n, "%s%d.x.x", sep, M);
    else if (r->lo == V(M, m, 0) && r->hi == V(M, m, 255))
      w = snprintf(buf + n, cap - n, "%s%d.%d.x", sep, M, m);
    else
      w = snprintf(buf + n, cap - n, "%s%d.%d.%d-%d.%d.%d", sep, M, m, v, vpart(r->hi, 16), vpart(r->hi, 8),
                   vpart(r->hi, 0));
    if (w < 0) break;
    n += (size_t)w;
  }
}

int bg_am_ip_check(enum bg_am_ip_block b, unsigned maj, unsigned min, unsigned rev, const struct bg_am_ip_row **out) {
  const struct bg_am_ip_row *r = bg_am_ip_find(b, maj, min, rev);
  if (out) *out = r;
  if (r) return 0;
  char list[256];
  bg_am_ip_supported(b, list, sizeof(list));
  return bg_error(BG_ENOTSUP, "ip: %s (%s) %u.%u.%u is not supported; AM knows %s", bg_am_ip_block_name(b),
                  bg_am_hwip_name(bg_am_ip_block_hwip(b)), maj, min, rev, list);
}

int bg_am_ip_select_disc(const struct bg_am_discovery *disc, bg_am_ipset *out) {
  if (!disc || !out) return bg_error(BG_EINVAL, "ip: NULL argument");
  bg_am_ipset s;
  memset(&s, 0, sizeof(s));
  memset(out, 0, sizeof(*out));
  for (int b = 0; b < BG_AM_IP_NBLOCKS; b++) {
    int hw = blocks[b].hwip;
    const struct bg_am_ip *ip = &disc->ip[hw];
    if (!ip->present)
      return bg_error(BG_ENOTSUP, "ip: %s needs %s, which is not in the discovery table", blocks[b].name,
                      bg_am_hwip_name(hw));
    const struct bg_am_ip_row *r;
    int e = bg_am_ip_check((enum bg_am_ip_block)b, ip->maj, ip->min, ip->rev, &r);
    if (e < 0) return e;
    switch ((enum bg_am_ip_block)b) {
    case BG_AM_IP_GFX: s.gfx = r->u.gfx; break;
    case BG_AM_IP_GMC: s.gmc = r->u.gmc; break;
    case BG_AM_IP_SDMA: s.sdma = r->u.sdma; break;
    case BG_AM_IP_NBIO: s.nbio = r->u.nbio; break;
    case BG_AM_IP_PSP: s.psp = r->u.psp; break;
    case BG_AM_IP_SMU: s.smu = r->u.smu; break;
    case BG_AM_IP_IH: s.ih = r->u.ih; break;
    case BG_AM_IP_HDP: s.hdp = r->u.hdp; break;
    case BG_AM_IP_NBLOCKS: break;
    }
  }
  *out = s;
  return 0;
}

int bg_am_ip_select(struct bg_am_dev *d) {
  int e = bg_am_ip_select_disc(&d->disc, &d->ip);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  BG_LOG(2, "am: %s: ip blocks %s %s %s %s %s %s %s %s", d->bdf, d->ip.gfx->name, d->ip.gmc->name, d->ip.sdma->name,
         d->ip.nbio->name, d->ip.psp->name, d->ip.smu->name, d->ip.ih->name, d->ip.hdp->name);
  return 0;
}
