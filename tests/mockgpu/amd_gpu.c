/* tests/mockgpu/amd_gpu.c: the emulated AMD GPU's device, register file and GC/MMHUB/NBIO hooks
 * (amd_gpu.h). PSP: amd_psp.c, SMU: amd_smu.c.
 *
 * Register offsets hard-coded below are Linux's (drivers/gpu/drm/amd/include/asic_reg/<ip>/<ip>_<ver>_offset.h,
 * the same values the generated am/regs/<ip>_<ver>.c tables carry), as (segment, offset) pairs; the
 * absolute dword address is ip_base[hwip][instance][segment] + offset with the bases of the discovery
 * table the device carries (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access; bases of the mock configuration in tinygrad test/mockgpu/am/amgpu.py). */
#include "mock_shm.h"
#include "amd_cp.h"
#include "amd_engine.h"
#include "amd_hdp.h"
#include "amd_internal.h"
#include "amd_reg_allow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/am/discovery_gen.h"
#include "baregpu/error.h"

#define BAR5_SIZE (2u << 20)
#define DISC_AREA (64u << 10)

/* ---------------- failures ---------------- */

void amd_fail(mock_amd *g, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  mock_shm_lock(&g->lock); /* engine threads fail too (amd_engine.h) */
  __atomic_add_fetch(&g->nfail, 1, __ATOMIC_RELAXED); /* mock_amd_nfail reads it without the lock */
  size_t used = strlen(g->failures);
  if (used + 2 < sizeof(g->failures)) snprintf(g->failures + used, sizeof(g->failures) - used, "%s\n", msg);
  pthread_mutex_unlock(&g->lock);
  fprintf(stderr, "mock_amd %s: %s\n", g->bdf, msg);
}

unsigned mock_amd_nfail(const mock_amd *g) { return __atomic_load_n(&g->nfail, __ATOMIC_RELAXED); }
const char *mock_amd_failures(const mock_amd *g) { return g->failures; }
void mock_amd_clear_failures(mock_amd *g) {
  mock_shm_lock(&g->lock);
  __atomic_store_n(&g->nfail, 0, __ATOMIC_RELAXED);
  g->failures[0] = 0;
  pthread_mutex_unlock(&g->lock);
}

/* ---------------- sparse map ---------------- */

static size_t map_slot(const amd_map *m, uint32_t key) {
  uint32_t h = (key + 1u) * 0x9E3779B1u;
  return (size_t)h & (m->cap - 1);
}

static uint64_t *map_find(const amd_map *m, uint32_t key) {
  if (!m->cap) return NULL;
  for (size_t i = map_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
    uint64_t s = m->slots[i];
    if (!s) return NULL;
    if ((uint32_t)(s >> 32) == key + 1u) return &m->slots[i];
  }
}

static int map_put(amd_map *m, uint32_t key, uint32_t v);

static int map_grow(amd_map *m) {
  amd_map n = {mock_shm_calloc(m->cap ? m->cap * 2 : 1024, sizeof(uint64_t)), m->cap ? m->cap * 2 : 1024, 0};
  if (!n.slots) return -1;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i]) map_put(&n, (uint32_t)(m->slots[i] >> 32) - 1u, (uint32_t)m->slots[i]);
  mock_shm_free(m->slots);
  *m = n;
  return 0;
}

static int map_put(amd_map *m, uint32_t key, uint32_t v) {
  uint64_t *s = map_find(m, key);
  if (s) {
    *s = (uint64_t)(key + 1u) << 32 | v;
    return 0;
  }
  if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0) return -1;
  size_t i = map_slot(m, key);
  while (m->slots[i]) i = (i + 1) & (m->cap - 1);
  m->slots[i] = (uint64_t)(key + 1u) << 32 | v;
  m->n++;
  return 0;
}

static void map_clear(amd_map *m) {
  if (m->slots) memset(m->slots, 0, m->cap * sizeof(uint64_t));
  m->n = 0;
}

uint32_t amd_get(const mock_amd *g, uint32_t addr) {
  const uint64_t *s = map_find(&g->regs, addr);
  return s ? (uint32_t)*s : 0;
}

void amd_set(mock_amd *g, uint32_t addr, uint32_t v) {
  if (v == 0 && !map_find(&g->regs, addr)) return; /* default is 0: keep the file sparse */
  if (map_put(&g->regs, addr, v) < 0) amd_fail(g, "out of memory for register 0x%x", addr);
}

uint32_t mock_amd_peek(const mock_amd *g, uint32_t addr) {
  pthread_mutex_t *lk = (pthread_mutex_t *)(uintptr_t)&g->lock; /* engines may grow the file meanwhile */
  mock_shm_lock(lk);
  uint32_t v = amd_get(g, addr);
  pthread_mutex_unlock(lk);
  return v;
}
void mock_amd_poke(mock_amd *g, uint32_t addr, uint32_t v) {
  mock_shm_lock(&g->lock);
  amd_set(g, addr, v);
  pthread_mutex_unlock(&g->lock);
}

/* ---------------- chips ---------------- */

/* Register offsets per IP version: {segment, offset} from Linux asic_reg headers. */
typedef struct reg_off {
  uint8_t seg;
  uint32_t off;
} reg_off;

typedef struct chip_regs {
  /* GC (gc_12_0_0_offset.h / gc_11_0_0_offset.h / gc_9_4_3_offset.h) */
  reg_off cp_stat, rlc_bootload, rlc_safe_mode, scratch6, scratch7, grbm_gfx_cntl;
  reg_off gc_sem, gc_req, gc_ack, gc_fb_base, gc_fb_top, gc_fault_status;
  /* MMHUB (mmhub_4_1_0 / mmhub_3_0_0 / mmhub_1_8_0) */
  reg_off mm_sem, mm_req, mm_ack, mm_fb_base, mm_fb_top;
  /* NBIO/NBIF (nbif_6_3_1 / nbio_4_3_0 / nbio_7_9_0): identical offsets */
  reg_off rsmu_index, rsmu_data, hdp_req, hdp_done, hdp_remap_mem, hdp_remap_reg;
  uint32_t hdp_hole; /* MMIO_REG_HOLE_OFFSET of nbif_v6_3_1.c / nbio_v4_3.c (0x80000 - 4 KiB pages) / nbio_v7_9.c */
} chip_regs;

static const chip_regs CHIP_REGS[MOCK_AMD_NCHIPS] = {
  [MOCK_AMD_MOCK] = {
    .cp_stat = {0, 0xf40}, .rlc_bootload = {1, 0x4e7c}, .rlc_safe_mode = {1, 0x980}, .scratch6 = {1, 0x2046},
    .scratch7 = {1, 0x2047}, .grbm_gfx_cntl = {1, 0x900}, .gc_sem = {0, 0x1646}, .gc_req = {0, 0x1658},
    .gc_ack = {0, 0x166a}, .gc_fb_base = {0, 0x1614}, .gc_fb_top = {0, 0x1615},
    .gc_fault_status = {0, 0x15d0} /* GCVM_L2_PROTECTION_FAULT_STATUS_LO32 */,
    .mm_sem = {0, 0x586}, .mm_req = {0, 0x598}, .mm_ack = {0, 0x5aa}, .mm_fb_base = {0, 0x554},
    .mm_fb_top = {0, 0x555},
    .rsmu_index = {1, 0x0}, .rsmu_data = {1, 0x1}, .hdp_req = {2, 0x106}, .hdp_done = {2, 0x107},
    .hdp_remap_mem = {2, 0x12d}, .hdp_remap_reg = {2, 0x12e}, .hdp_hole = 0x7f000},
  [MOCK_AMD_GFX11] = {
    .cp_stat = {0, 0xf40}, .rlc_bootload = {1, 0x4e82}, .rlc_safe_mode = {1, 0x980}, .scratch6 = {1, 0x2046},
    .scratch7 = {1, 0x2047}, .grbm_gfx_cntl = {1, 0x900}, .gc_sem = {0, 0x16aa}, .gc_req = {0, 0x16bc},
    .gc_ack = {0, 0x16ce}, .gc_fb_base = {0, 0x1678}, .gc_fb_top = {0, 0x1679},
    .gc_fault_status = {0, 0x15c8},
    .mm_sem = {0, 0x762}, .mm_req = {0, 0x774}, .mm_ack = {0, 0x786}, .mm_fb_base = {0, 0x8ec},
    .mm_fb_top = {0, 0x8ed},
    .rsmu_index = {1, 0x0}, .rsmu_data = {1, 0x1}, .hdp_req = {2, 0x106}, .hdp_done = {2, 0x107},
    .hdp_remap_mem = {2, 0x12d}, .hdp_remap_reg = {2, 0x12e}, .hdp_hole = 0x7f000},
  [MOCK_AMD_GFX942] = {
    .cp_stat = {0, 0x1a0}, .rlc_bootload = {0, 0} /* gfx9: no RLC autoload */, .rlc_safe_mode = {1, 0x4c05},
    .scratch6 = {1, 0x2046}, .scratch7 = {1, 0x2047}, .grbm_gfx_cntl = {0, 0x22}, .gc_sem = {0, 0x882},
    .gc_req = {0, 0x894}, .gc_ack = {0, 0x8a6}, .gc_fb_base = {0, 0x95c}, .gc_fb_top = {0, 0x95d},
    .gc_fault_status = {0, 0x82b},
    .mm_sem = {0, 0xbc2}, .mm_req = {0, 0xbd4}, .mm_ack = {0, 0xbe6}, .mm_fb_base = {0, 0xc9c},
    .mm_fb_top = {0, 0xc9d},
    .rsmu_index = {1, 0x0}, .rsmu_data = {1, 0x1}, .hdp_req = {2, 0x106}, .hdp_done = {2, 0x107},
    .hdp_remap_mem = {2, 0x12d}, .hdp_remap_reg = {2, 0x12e}, .hdp_hole = 0x1a000},
};

/* PSP mailbox: regMP0_SMN_C2PMSG_n / regMPASP_SMN_C2PMSG_n, segment 0 of MP0, identical in mp_13_0_0
 * and mp_14_0_2 (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP): n -> 0x40 + n. SMU mailbox: mmMP1_SMN_C2PMSG_n of mp_11_0_0 on the MP1
 * bases (tinygrad tinygrad/runtime/support/am/ip.py AM_SMU): n -> 0x240 + n, segment 0. */
#define PSP_MSG(n) (0x40u + (n))
#define SMU_MSG(n) (0x240u + (n))

static const uint16_t DEVICE_IDS[MOCK_AMD_NCHIPS] = {0x7590, 0x744c, 0x74a1};

void mock_amd_chip_ips(mock_amd_chip chip, bg_am_fw_ips *ip) {
  switch (chip) {
  case MOCK_AMD_GFX11: *ip = (bg_am_fw_ips){{11, 0, 0}, {13, 0, 0}, {13, 0, 0}, {6, 0, 0}}; break;
  case MOCK_AMD_GFX942: *ip = (bg_am_fw_ips){{9, 4, 3}, {13, 0, 6}, {13, 0, 6}, {4, 4, 2}}; break;
  default: *ip = (bg_am_fw_ips){{12, 0, 0}, {14, 0, 2}, {14, 0, 2}, {7, 0, 0}}; break;
  }
}

static void disc_config(mock_amd_chip chip, struct discgen_config *c) {
  switch (chip) {
  case MOCK_AMD_GFX11: discgen_config_gfx11(c); break;
  case MOCK_AMD_GFX942: discgen_config_gfx942(c); break;
  default: discgen_config_mock(c); break;
  }
}

/* ---------------- VRAM ---------------- */

uint8_t *amd_vram_at(mock_amd *g, uint64_t pa, uint64_t n) {
  if (pa > g->vram_size || n > g->vram_size - pa) return NULL;
  uint8_t *v = mock_pci_bar_mem(g->pci, 0);
  return v ? v + pa : NULL;
}

uint8_t *mock_amd_vram(mock_amd *g) { return mock_pci_bar_mem(g->pci, 0); }
uint8_t *mock_amd_vram_host(mock_amd *g) { return amd_hdp_host_view(g->hdp); }
unsigned mock_amd_hdp_dirty(const mock_amd *g) { return amd_hdp_dirty_pages(g->hdp); }
uint64_t mock_amd_hdp_flushes(const mock_amd *g) { return amd_hdp_flushes(g->hdp); }
uint64_t mock_amd_vram_size(const mock_amd *g) { return g->vram_size; }

static int write_discovery(mock_amd *g) {
  struct discgen_config c;
  disc_config(g->cfg.chip, &c);
  uint8_t *img = calloc(1, DISC_AREA);
  if (!img) return -1;
  size_t n = discgen_build(&c, img, DISC_AREA, NULL);
  uint8_t *dst = amd_vram_at(g, g->vram_size - DISC_AREA, DISC_AREA);
  int r = -1;
  if (n && dst) {
    memcpy(dst, img, DISC_AREA);
    r = bg_am_discovery_parse(dst, BG_AM_DISC_TABLE_SIZE, 0, &g->disc) < 0 ? -1 : 0;
  }
  free(img);
  return r;
}

const struct bg_am_discovery *mock_amd_discovery(const mock_amd *g) { return &g->disc; }

uint32_t mock_amd_reg(const mock_amd *g, int hwip, unsigned inst, unsigned seg, uint32_t off) {
  uint32_t a = 0;
  if (bg_am_reg_addr(&g->disc, hwip, inst, seg, off, &a) < 0) return 0;
  return a;
}

/* ---------------- hooks ---------------- */

static uint32_t reg_at(const mock_amd *g, int hwip, unsigned inst, reg_off o) {
  return mock_amd_reg(g, hwip, inst, o.seg, o.off);
}

static int hook(mock_amd *g, uint32_t addr, int kind, unsigned hub) {
  if (map_find(&g->hooks, addr)) {
    amd_fail(g, "register 0x%x hooked twice (configuration error)", addr);
    return -1;
  }
  return map_put(&g->hooks, addr, (uint32_t)kind | hub << 16);
}

static int build_hooks(mock_amd *g) {
  const chip_regs *cr = &CHIP_REGS[g->cfg.chip];
  mock_amd_regmap *r = &g->r;
  int e = 0;
  /* fixed dword indices (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access, AMDev._run_discovery): usable before the IP bases are known */
  r->memsize = BG_AM_DISC_MEMSIZE_REG, r->mm_index = 0x0, r->mm_data = 0x1, r->mm_index_hi = 0x6;
  e |= hook(g, r->memsize, AMD_H_MEMSIZE, 0);
  e |= hook(g, r->mm_index, AMD_H_MM_INDEX, 0);
  e |= hook(g, r->mm_data, AMD_H_MM_DATA, 0);
  e |= hook(g, r->mm_index_hi, AMD_H_MM_INDEX_HI, 0);
  r->rsmu_index = reg_at(g, NBIO_HWIP, 0, cr->rsmu_index);
  r->rsmu_data = reg_at(g, NBIO_HWIP, 0, cr->rsmu_data);
  r->hdp_flush_req = reg_at(g, NBIO_HWIP, 0, cr->hdp_req);
  r->hdp_flush_done = reg_at(g, NBIO_HWIP, 0, cr->hdp_done);
  r->hdp_remap_mem = reg_at(g, NBIO_HWIP, 0, cr->hdp_remap_mem);
  r->hdp_remap_reg = reg_at(g, NBIO_HWIP, 0, cr->hdp_remap_reg);
  r->hdp_hole = cr->hdp_hole;
  e |= hook(g, r->rsmu_index, AMD_H_RSMU_INDEX, 0);
  e |= hook(g, r->rsmu_data, AMD_H_RSMU_DATA, 0);
  e |= hook(g, r->hdp_flush_done, AMD_H_HDP_FLUSH_DONE, 0);
  /* PSP (MP0 instance 0) and SMU (MP1 instance 0) */
  r->psp_35 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(35));
  r->psp_36 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(36));
  r->psp_64 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(64));
  r->psp_67 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(67));
  r->psp_69 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(69));
  r->psp_70 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(70));
  r->psp_71 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(71));
  r->psp_81 = mock_amd_reg(g, MP0_HWIP, 0, 0, PSP_MSG(81));
  e |= hook(g, r->psp_35, AMD_H_PSP_35, 0);
  e |= hook(g, r->psp_36, AMD_H_PSP_36, 0);
  e |= hook(g, r->psp_64, AMD_H_PSP_64, 0);
  e |= hook(g, r->psp_67, AMD_H_PSP_67, 0);
  e |= hook(g, r->psp_81, AMD_H_PSP_81, 0);
  r->smu_53 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(53));
  r->smu_54 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(54));
  r->smu_66 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(66));
  r->smu_75 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(75));
  r->smu_82 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(82));
  r->smu_90 = mock_amd_reg(g, MP1_HWIP, 0, 0, SMU_MSG(90));
  e |= hook(g, r->smu_54, AMD_H_SMU_54, 0);
  e |= hook(g, r->smu_66, AMD_H_SMU_66, 0);
  e |= hook(g, r->smu_75, AMD_H_SMU_75, 0);
  e |= hook(g, r->smu_90, AMD_H_SMU_90, 0);
  /* GC: every XCC instance; MMHUB: every instance. Hub index: GC instances first. */
  g->nhubs = 0;
  const struct bg_am_ip *gc = &g->disc.ip[GC_HWIP], *mm = &g->disc.ip[MMHUB_HWIP];
  for (unsigned i = 0; i < BG_AM_MAX_INSTANCES && g->nhubs < AMD_MAX_HUBS; i++) {
    if (!(gc->inst_mask >> i & 1)) continue;
    unsigned h = g->nhubs++;
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->cp_stat), AMD_H_CP_STAT, h);
    if (cr->rlc_bootload.off) e |= hook(g, reg_at(g, GC_HWIP, i, cr->rlc_bootload), AMD_H_RLC_BOOTLOAD, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->rlc_safe_mode), AMD_H_RLC_SAFE_MODE, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->gc_sem), AMD_H_INV_SEM, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->gc_req), AMD_H_INV_REQ, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->gc_ack), AMD_H_INV_ACK, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->gc_fb_base), AMD_H_FB_BASE, h);
    e |= hook(g, reg_at(g, GC_HWIP, i, cr->gc_fb_top), AMD_H_FB_TOP, h);
  }
  for (unsigned i = 0; i < BG_AM_MAX_INSTANCES && g->nhubs < AMD_MAX_HUBS; i++) {
    if (!(mm->inst_mask >> i & 1)) continue;
    unsigned h = g->nhubs++;
    g->hub[h].mm = true;
    e |= hook(g, reg_at(g, MMHUB_HWIP, i, cr->mm_sem), AMD_H_INV_SEM, h);
    e |= hook(g, reg_at(g, MMHUB_HWIP, i, cr->mm_req), AMD_H_INV_REQ, h);
    e |= hook(g, reg_at(g, MMHUB_HWIP, i, cr->mm_ack), AMD_H_INV_ACK, h);
    e |= hook(g, reg_at(g, MMHUB_HWIP, i, cr->mm_fb_base), AMD_H_FB_BASE, h);
    e |= hook(g, reg_at(g, MMHUB_HWIP, i, cr->mm_fb_top), AMD_H_FB_TOP, h);
  }
  r->cp_stat = reg_at(g, GC_HWIP, 0, cr->cp_stat);
  r->rlc_bootload_status = cr->rlc_bootload.off ? reg_at(g, GC_HWIP, 0, cr->rlc_bootload) : 0;
  r->rlc_safe_mode = reg_at(g, GC_HWIP, 0, cr->rlc_safe_mode);
  r->scratch6 = reg_at(g, GC_HWIP, 0, cr->scratch6);
  r->scratch7 = reg_at(g, GC_HWIP, 0, cr->scratch7);
  r->grbm_gfx_cntl = reg_at(g, GC_HWIP, 0, cr->grbm_gfx_cntl);
  r->gc_inv_req17 = reg_at(g, GC_HWIP, 0, cr->gc_req);
  r->gc_inv_ack17 = reg_at(g, GC_HWIP, 0, cr->gc_ack);
  r->gc_inv_sem17 = reg_at(g, GC_HWIP, 0, cr->gc_sem);
  r->gc_fb_base = reg_at(g, GC_HWIP, 0, cr->gc_fb_base);
  r->gc_fb_top = reg_at(g, GC_HWIP, 0, cr->gc_fb_top);
  r->gc_fault_status = reg_at(g, GC_HWIP, 0, cr->gc_fault_status);
  r->mm_inv_req17 = reg_at(g, MMHUB_HWIP, 0, cr->mm_req);
  r->mm_inv_ack17 = reg_at(g, MMHUB_HWIP, 0, cr->mm_ack);
  r->mm_inv_sem17 = reg_at(g, MMHUB_HWIP, 0, cr->mm_sem);
  r->mm_fb_base = reg_at(g, MMHUB_HWIP, 0, cr->mm_fb_base);
  r->mm_fb_top = reg_at(g, MMHUB_HWIP, 0, cr->mm_fb_top);
  e |= amd_cp_hooks(g, hook); /* compute HQD / SDMA ring (amd_cp.c) */
  return e ? -1 : 0;
}

static void allow_put(void *ctx, uint32_t addr, size_t idx) {
  mock_amd *g = ctx;
  if (!map_find(&g->allowed, addr) && map_put(&g->allowed, addr, (uint32_t)idx + 1u) < 0)
    amd_fail(g, "out of memory for the register allow-list");
}

/* Addresses of the allow-list's registers on this device (amd_reg_allow.h). */
static int build_allowed(mock_amd *g) {
  const char *bad = NULL;
  if (amd_reg_allow_each(&g->disc, allow_put, g, &bad) < 0) {
    amd_fail(g, "tests/mockgpu/amd_reg_allow.c: entry '%s' is not a register name (am/regs/am_reg_ids.h)", bad);
    return -1;
  }
  return 0;
}

const mock_amd_regmap *mock_amd_regs(const mock_amd *g) { return &g->r; }

/* ---------------- register access ---------------- */

static uint32_t reg_read(mock_amd *g, uint32_t addr);
static void reg_write(mock_amd *g, uint32_t addr, uint32_t v);

/* MM_INDEX/MM_INDEX_HI/MM_DATA (tinygrad tinygrad/runtime/support/am/amdev.py AMDev register access): MM_INDEX bit31 selects VRAM at (HI << 31 | INDEX[30:0]),
 * otherwise INDEX is the byte address of a register. */
static bool mm_target(mock_amd *g, bool *vram, uint64_t *a) {
  uint32_t idx = amd_get(g, g->r.mm_index), hi = amd_get(g, g->r.mm_index_hi);
  *vram = idx >> 31;
  *a = *vram ? (uint64_t)hi << 31 | (idx & 0x7fffffffu) : idx;
  if (*a & 3) {
    amd_fail(g, "MM_DATA access with unaligned MM_INDEX 0x%" PRIx64, *a);
    return false;
  }
  if (*vram && !amd_vram_at(g, *a, 4)) {
    amd_fail(g, "MM_DATA access at VRAM 0x%" PRIx64 " beyond VRAM (0x%" PRIx64 " bytes)", *a, g->vram_size);
    return false;
  }
  return true;
}

static uint32_t indirect(mock_amd *g, uint32_t byte_addr, bool wr, uint32_t v, const char *via) {
  if (byte_addr & 3) {
    amd_fail(g, "%s access to unaligned register byte address 0x%x", via, byte_addr);
    return 0xffffffffu;
  }
  if (g->in_rsmu) {
    amd_fail(g, "%s access to register 0x%x nested in another indirect access", via, byte_addr / 4);
    return 0xffffffffu;
  }
  g->in_rsmu++;
  uint32_t r = 0;
  if (wr) reg_write(g, byte_addr / 4, v);
  else r = reg_read(g, byte_addr / 4);
  g->in_rsmu--;
  return r;
}

static uint32_t fb_top(const mock_amd *g) {
  return (uint32_t)((g->cfg.fb_top_exclusive ? g->vram_size : g->vram_size - 1) >> 24);
}

static uint32_t reg_read(mock_amd *g, uint32_t addr) {
  if ((g->hdp_mem_dw && addr == g->hdp_mem_dw) || (g->hdp_reg_dw && addr == g->hdp_reg_dw)) return 0;
  const uint64_t *h = map_find(&g->hooks, addr);
  if (!h) return amd_get(g, addr);
  int kind = (int)(*h & 0xffff);
  unsigned hub = (unsigned)(*h >> 16) & 0xffff;
  if (kind >= AMD_H_CP_FIRST) return amd_cp_read(g, kind, addr);
  switch (kind) {
  case AMD_H_MEMSIZE: return (uint32_t)(g->vram_size >> 20);
  case AMD_H_MM_DATA: {
    bool vram;
    uint64_t a;
    if (!mm_target(g, &vram, &a)) return 0xffffffffu;
    if (!vram) return indirect(g, (uint32_t)a, false, 0, "MM_INDEX/MM_DATA");
    uint32_t v;
    memcpy(&v, amd_vram_at(g, a, 4), 4);
    return v;
  }
  case AMD_H_RSMU_DATA: return indirect(g, amd_get(g, g->r.rsmu_index), false, 0, "RSMU_INDEX/RSMU_DATA");
  case AMD_H_HDP_FLUSH_DONE: return amd_get(g, g->r.hdp_flush_req); /* flushes complete at once */
  case AMD_H_PSP_35:
  case AMD_H_PSP_36:
  case AMD_H_PSP_64:
  case AMD_H_PSP_67:
  case AMD_H_PSP_81: return amd_psp_read(g, kind, addr);
  case AMD_H_SMU_54:
  case AMD_H_SMU_66:
  case AMD_H_SMU_75:
  case AMD_H_SMU_90: return amd_smu_read(g, kind, addr);
  case AMD_H_CP_STAT: return 0; /* CP idle */
  case AMD_H_RLC_BOOTLOAD: return g->autoloaded ? 0x80000000u : 0; /* BOOTLOAD_COMPLETE (bit 31) */
  case AMD_H_INV_ACK: return hub < AMD_MAX_HUBS ? (g->hub[hub].req & 0xffffu) : 0; /* PER_VMID_INVALIDATE_ACK */
  case AMD_H_INV_SEM:
    if (hub >= AMD_MAX_HUBS || g->hub[hub].sem_held) return 0; /* not acquired */
    g->hub[hub].sem_held = true;
    return 1;
  case AMD_H_FB_BASE: return 0; /* VRAM at MC address 0 */
  case AMD_H_FB_TOP: return fb_top(g);
  default: return amd_get(g, addr);
  }
}

/* HDP flush requests and their remap (amd_hdp.h). true when the write was one of them. */
static bool hdp_write(mock_amd *g, uint32_t addr, uint32_t v) {
  const mock_amd_regmap *r = &g->r;
  if (addr == r->hdp_flush_req) { /* an engine's (or the host's) request: flush, DONE answers at once */
    amd_set(g, addr, v);
    amd_hdp_flush(g->hdp);
    return true;
  }
  if (addr == r->hdp_remap_mem || addr == r->hdp_remap_reg) {
    const char *name = addr == r->hdp_remap_mem ? "BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL" : "BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL";
    if ((v & 3) || v >= BAR5_SIZE || (v && map_find(&g->hooks, v / 4))) {
      amd_fail(g, "write 0x%x to %s: not the byte offset of a free dword of the 0x%x-byte MMIO BAR (Linux points it at "
               "MMIO_REG_HOLE_OFFSET 0x%x + 0/4, nbio remap_hdp_registers)", v, name, BAR5_SIZE, r->hdp_hole);
      return true;
    }
    amd_set(g, addr, v);
    if (addr == r->hdp_remap_mem) g->hdp_mem_dw = v / 4;
    else g->hdp_reg_dw = v / 4;
    return true;
  }
  if (g->hdp_mem_dw && addr == g->hdp_mem_dw) { /* HDP_MEM_FLUSH_CNTL through the remap (hdp_v6_0_flush_hdp) */
    amd_hdp_flush(g->hdp);
    return true;
  }
  if (g->hdp_reg_dw && addr == g->hdp_reg_dw) return true; /* HDP_REG_FLUSH_CNTL: register writes are not posted here */
  if (addr == r->hdp_hole / 4 || addr == r->hdp_hole / 4 + 1) {
    amd_fail(g, "write 0x%x to MMIO 0x%x (the HDP flush page): BIF_BX0_REMAP_HDP_%s_FLUSH_CNTL does not point there "
             "(0x%x), so no HDP flush happens: program the remap first (Linux nbio_v4_3/nbif_v6_3_1/nbio_v7_9 "
             "remap_hdp_registers)", v, addr * 4, addr == r->hdp_hole / 4 ? "MEM" : "REG",
             amd_get(g, addr == r->hdp_hole / 4 ? r->hdp_remap_mem : r->hdp_remap_reg));
    return true;
  }
  return false;
}

static void reg_write(mock_amd *g, uint32_t addr, uint32_t v) {
  if (hdp_write(g, addr, v)) return;
  const uint64_t *h = map_find(&g->hooks, addr);
  if (!h) {
    if (!map_find(&g->allowed, addr))
      amd_fail(g, "write 0x%x to %s (0x%x): not modelled by the emulator and not on the allow-list "
               "(tests/mockgpu/amd_reg_allow.c)", v, amd_reg_name_at(&g->disc, addr), addr);
    amd_set(g, addr, v); /* stored all the same: reads are unchanged */
    return;
  }
  int kind = (int)(*h & 0xffff);
  unsigned hub = (unsigned)(*h >> 16) & 0xffff;
  switch (kind) {
  case AMD_H_MEMSIZE: amd_fail(g, "write 0x%x to read-only RCC_CONFIG_MEMSIZE", v); return;
  case AMD_H_MM_DATA: {
    bool vram;
    uint64_t a;
    if (!mm_target(g, &vram, &a)) return;
    if (!vram) indirect(g, (uint32_t)a, true, v, "MM_INDEX/MM_DATA");
    else memcpy(amd_vram_at(g, a, 4), &v, 4);
    return;
  }
  case AMD_H_RSMU_DATA: indirect(g, amd_get(g, g->r.rsmu_index), true, v, "RSMU_INDEX/RSMU_DATA"); return;
  case AMD_H_HDP_FLUSH_DONE: amd_fail(g, "write 0x%x to read-only GPU_HDP_FLUSH_DONE", v); return;
  case AMD_H_PSP_35:
  case AMD_H_PSP_36:
  case AMD_H_PSP_64:
  case AMD_H_PSP_67:
  case AMD_H_PSP_81: amd_psp_write(g, kind, addr, v); return;
  case AMD_H_SMU_54:
  case AMD_H_SMU_66:
  case AMD_H_SMU_75:
  case AMD_H_SMU_90: amd_smu_write(g, kind, addr, v); return;
  case AMD_H_CP_STAT: amd_fail(g, "write 0x%x to read-only CP_STAT", v); return;
  case AMD_H_RLC_BOOTLOAD: amd_fail(g, "write 0x%x to read-only RLC_RLCS_BOOTLOAD_STATUS", v); return;
  case AMD_H_RLC_SAFE_MODE: amd_set(g, addr, v & ~1u); return; /* CMD (bit 0) self-clears: the RLC acked */
  case AMD_H_INV_REQ:
    if (hub < AMD_MAX_HUBS && g->hub[hub].mm && !g->hub[hub].sem_held) {
      amd_fail(g, "VM_INVALIDATE_ENG17_REQ 0x%x = 0x%x on an MMHUB without ENG17_SEM held (no ACK)", addr, v);
      g->hub[hub].req = 0;
      return;
    }
    if (hub < AMD_MAX_HUBS) g->hub[hub].req = v, g->hub[hub].ninv++, amd_gmc_on_invalidate(g, hub);
    amd_set(g, addr, v);
    return;
  case AMD_H_INV_ACK: amd_fail(g, "write 0x%x to read-only VM_INVALIDATE_ENG17_ACK 0x%x", v, addr); return;
  case AMD_H_INV_SEM:
    if (v != 0) {
      amd_fail(g, "write 0x%x to VM_INVALIDATE_ENG17_SEM 0x%x (only 0 releases it)", v, addr);
    } else if (hub < AMD_MAX_HUBS && !g->hub[hub].sem_held) {
      amd_fail(g, "release of VM_INVALIDATE_ENG17_SEM 0x%x that was not acquired", addr);
    } else if (hub < AMD_MAX_HUBS) {
      g->hub[hub].sem_held = false;
    }
    return;
  case AMD_H_FB_BASE:
  case AMD_H_FB_TOP:
    amd_fail(g, "write 0x%x to FB_LOCATION register 0x%x (programmed by the VBIOS, read-only here)", v, addr);
    return;
  default:
    if (kind >= AMD_H_CP_FIRST) amd_cp_write(g, kind, addr, v);
    else amd_set(g, addr, v);
    return;
  }
}

uint32_t mock_amd_rreg(mock_amd *g, uint32_t addr) {
  mock_shm_lock(&g->lock);
  uint32_t v = reg_read(g, addr);
  pthread_mutex_unlock(&g->lock);
  return v;
}
void mock_amd_wreg(mock_amd *g, uint32_t addr, uint32_t v) {
  mock_shm_lock(&g->lock);
  mock_shm_kill_point(); /* fault kind "kill-reg-write": the process dies holding the device lock (mock_shm.h) */
  reg_write(g, addr, v);
  pthread_mutex_unlock(&g->lock);
}

static uint64_t bar5_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  (void)m;
  (void)bar;
  mock_amd *g = user;
  if (size != 4) {
    amd_fail(g, "BAR5 read of %u bytes at 0x%" PRIx64 ": registers are 32-bit", size, off);
    return ~0ull;
  }
  return mock_amd_rreg(g, (uint32_t)(off / 4));
}

static void bar5_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  (void)m;
  (void)bar;
  mock_amd *g = user;
  if (size != 4) {
    amd_fail(g, "BAR5 write of %u bytes at 0x%" PRIx64 ": registers are 32-bit", size, off);
    return;
  }
  mock_amd_wreg(g, (uint32_t)(off / 4), (uint32_t)v);
}

/* ---------------- reset ---------------- */

void amd_asic_reset(mock_amd *g) {
  map_clear(&g->regs);
  /* A real HDP drains its posted writes long before a reset could take effect (it holds a few, not megabytes); the
   * model holds them until a flush, so they drain here. A function reset has already discarded them (on_pci_reset).
   * The remap registers read 0 again. */
  if (g->hdp) amd_hdp_flush(g->hdp);
  g->hdp_mem_dw = g->hdp_reg_dw = 0;
  for (unsigned i = 0; i < AMD_MAX_HUBS; i++) g->hub[i].req = 0, g->hub[i].sem_held = g->hub[i].flushed = g->hub[i].wiped = false, g->hub[i].ninv = 0;
  amd_psp_reset(g);
  amd_smu_reset(g);
  amd_cp_reset(g);
  amd_engines_reset(g); /* queues forget their pointers (amd_engine.h) */
}

static void on_pci_reset(void *user, mock_pci *m) {
  (void)m;
  mock_amd *g = user;
  mock_shm_lock(&g->lock);
  amd_hdp_discard(g->hdp); /* VRAM contents are lost (mock_pci_reset_written), posted writes with them */
  amd_asic_reset(g);
  /* the firmware rebuilds the discovery table at the top of VRAM */
  if (write_discovery(g) < 0) amd_fail(g, "rewriting the discovery table after a function reset failed");
  pthread_mutex_unlock(&g->lock);
}

/* ---------------- firmware ---------------- */

static const bg_fw_family FILE_FAMILY[BG_AM_FW_NFILES] = {
  [BG_AM_FW_SOS] = BG_FW_PSP_SOS, [BG_AM_FW_SMU] = BG_FW_SMC,     [BG_AM_FW_SDMA] = BG_FW_SDMA,
  [BG_AM_FW_PFP] = BG_FW_GFX_PFP, [BG_AM_FW_ME] = BG_FW_GFX_ME,   [BG_AM_FW_MEC] = BG_FW_GFX_MEC,
  [BG_AM_FW_IMU] = BG_FW_IMU,     [BG_AM_FW_RLC] = BG_FW_RLC,
};

int mock_amd_install_fw(mock_amd *g, bg_am_fw_file_id which, const uint8_t *buf, size_t len) {
  if ((int)which < 0 || which >= BG_AM_FW_NFILES) {
    amd_fail(g, "install_fw: bad file id %d", (int)which);
    return -1;
  }
  char name[64];
  if (!bg_am_fw_name(&g->ip, which, name, sizeof(name))) {
    amd_fail(g, "install_fw: this chip uses no file of id %d", (int)which);
    return -1;
  }
  amd_fw_file *f = &g->fw[which];
  uint8_t *copy = mock_shm_malloc(len ? len : 1);
  if (!copy) return -1;
  memcpy(copy, buf, len);
  bg_fw_image img;
  if (bg_fw_parse(FILE_FAMILY[which], name, copy, len, &img) < 0) {
    amd_fail(g, "install_fw %s: %s", name, bg_last_error());
    mock_shm_free(copy);
    return -1;
  }
  bg_am_ipver v = which == BG_AM_FW_SOS ? g->ip.mp0 : which == BG_AM_FW_SMU ? g->ip.mp1
                  : which == BG_AM_FW_SDMA ? g->ip.sdma0 : g->ip.gc;
  const char *ipn = which == BG_AM_FW_SOS ? "MP0" : which == BG_AM_FW_SMU ? "MP1" : which == BG_AM_FW_SDMA ? "SDMA0" : "GC";
  if (bg_fw_check_ip(&img, ipn, v.maj, v.min, v.rev) < 0) {
    amd_fail(g, "install_fw %s: %s", name, bg_last_error());
    mock_shm_free(copy);
    return -1;
  }
  mock_shm_free(f->buf);
  f->present = true;
  f->buf = copy;
  f->len = len;
  f->img = img;
  return 0;
}

int mock_amd_install_fw_dir(mock_amd *g, const char *dir) {
  bg_am_fw *fw = NULL;
  if (bg_am_fw_load(&g->ip, dir, &fw) < 0) {
    amd_fail(g, "install_fw_dir %s: %s", dir, bg_last_error());
    return -1;
  }
  int r = 0;
  for (int f = 0; f < BG_AM_FW_NFILES && r == 0; f++)
    if (fw->files[f].present) r = mock_amd_install_fw(g, (bg_am_fw_file_id)f, fw->files[f].buf, fw->files[f].len);
  bg_am_fw_free(fw);
  return r;
}

/* ---------------- life cycle ---------------- */

mock_amd *mock_amd_new(mock_sysfs *t, const mock_amd_cfg *cfg) {
  if (!cfg || cfg->chip < 0 || cfg->chip >= MOCK_AMD_NCHIPS) return NULL;
  uint64_t vram = cfg->vram_size ? cfg->vram_size : 512ull << 20;
  if (vram < (64ull << 20) || (vram & (vram - 1))) {
    fprintf(stderr, "mock_amd: VRAM size 0x%" PRIx64 " is not a power of two >= 64 MiB\n", vram);
    return NULL;
  }
  mock_amd *g = mock_shm_calloc(1, sizeof(*g));
  if (!g) return NULL;
  amd_lock_init(g);
  g->tree = t;
  g->cfg = *cfg;
  snprintf(g->bdf, sizeof(g->bdf), "%s", cfg->bdf ? cfg->bdf : "0000:03:00.0");
  g->cfg.bdf = g->bdf;
  g->cfg.driver = NULL;
  g->vram_size = vram;
  mock_amd_chip_ips(cfg->chip, &g->ip);
  mock_pci_cfg pc = {
    .bdf = g->bdf, .vendor = 0x1002, .device = cfg->device_id ? cfg->device_id : DEVICE_IDS[cfg->chip],
    .subvendor = 0x1002, .subdevice = 0x0e3b, .class_code = cfg->chip == MOCK_AMD_GFX942 ? 0x038000 : 0x030000,
    .revision = 0xc0,
    .bars = {[0] = {.size = vram, .is_64 = true, .prefetch = true},
             [2] = {.size = 2u << 20, .is_64 = true, .prefetch = true},
             [5] = {.size = BAR5_SIZE}},
    .driver = cfg->driver, .link_speed = "16.0 GT/s PCIe", .link_width = 16, .iommu_group = -1,
  };
  g->pci = mock_sysfs_add(t, &pc);
  char herr[160] = "";
  if (g->pci && !(g->hdp = amd_hdp_new(mock_pci_bar_mem(g->pci, 0), vram, cfg->hdp_coherent, herr, sizeof(herr))))
    amd_fail(g, "%s", herr);
  if (!g->pci || !g->hdp || write_discovery(g) < 0 || build_hooks(g) < 0 || build_allowed(g) < 0 ||
      mock_pci_hook(g->pci, 5, 0, BAR5_SIZE, bar5_rd, bar5_wr, g) < 0) {
    fprintf(stderr, "mock_amd %s: setup failed: %s", g->bdf, g->failures);
    if (g->pci) mock_pci_set_dead(g->pci, true);
    amd_hdp_free(g->hdp);
    mock_shm_free(g->hooks.slots);
    mock_shm_free(g->allowed.slots);
    mock_shm_free(g->regs.slots);
    amd_lock_destroy(g);
    mock_shm_free(g);
    return NULL;
  }
  mock_pci_bar_direct(g->pci, 0, true); /* VRAM: plain memory */
  mock_pci_bar_cpu_view(g->pci, 0, amd_hdp_host_view(g->hdp)); /* the driver's BAR0 is the HDP host view */
  mock_pci_on_reset(g->pci, on_pci_reset, g);
  amd_asic_reset(g);
  amd_engines_start(g); /* doorbells + CP/SDMA threads (amd_engine.h); a refusal is a recorded failure */
  return g;
}

void mock_amd_free(mock_amd *g) {
  if (!g) return;
  amd_engines_stop(g);
  mock_pci_set_dead(g->pci, true);
  mock_pci_on_reset(g->pci, NULL, NULL);
  mock_pci_bar_cpu_view(g->pci, 0, NULL);
  amd_hdp_free(g->hdp);
  for (int f = 0; f < BG_AM_FW_NFILES; f++) mock_shm_free(g->fw[f].buf);
  amd_psp_free(g);
  amd_smu_free(g);
  amd_cp_free(g);
  mock_shm_free(g->hooks.slots);
  mock_shm_free(g->allowed.slots);
  mock_shm_free(g->regs.slots);
  amd_lock_destroy(g);
  mock_shm_free(g);
}

mock_pci *mock_amd_pci(mock_amd *g) { return g->pci; }
const char *mock_amd_bdf(const mock_amd *g) { return g->bdf; }
mock_amd_chip mock_amd_chip_id(const mock_amd *g) { return g->cfg.chip; }
