/* tests/mockgpu/nv_pci/nvpci_gpu.c: the emulated NVIDIA GPU on the emulated PCI device (nvpci.h): identity, BARs,
 * the BAR0 register file with its strictness, VRAM, DMA, function reset. Falcons: nvpci_falcon.c, FSP: nvpci_fsp.c.
 *
 * BAR0 (16 MiB) is one hook; an offset the model does not know is a recorded failure and the access fails, like the
 * AMD model's unmodelled registers. Identity: NV_PMC_BOOT_0 / BOOT_42 (architecture 29:24, implementation 23:20,
 * tinygrad tinygrad/runtime/support/nv/nvdev.py; open-gpu-kernel-modules dev_boot.h), VRAM MiB in NV_PGC6_AON_SECURE_SCRATCH_GROUP_42, GFW-done in
 * NV_PGC6_AON_SECURE_SCRATCH_GROUP_05 (GA/AD) or NV_THERM_I2CS_SCRATCH (GH/GB), the FWSEC fuse versions nouveau's
 * ga100_flcn_fw_signature reads, WPR2 (dev_fb.h NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI, VAL 31:4 in 4 KiB units). */
#include "nvpci_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mock_internal.h"
#include "mock_pci.h"
#include "mock_sysfs.h"

#define BAR0_SIZE (16u << 20)
#define BAR3_SIZE (32u << 20)
#define SMALL_BAR1 (256ull << 20)

const nvpci_chip NVPCI_CHIPS[NVPCI_NCHIPS] = {
    [NVPCI_GA102] = {"ga102", ".fwsignature_ga10x", 0x2204, 0x030000, 0x17, 2, false},
    [NVPCI_AD102] = {"ad102", ".fwsignature_ad10x", 0x2684, 0x030000, 0x19, 2, false},
    [NVPCI_GH100] = {"gh100", ".fwsignature_gh10x", 0x2335, 0x030200, 0x18, 0, true},
    [NVPCI_GB202] = {"gb202", ".fwsignature_gb20x", 0x2b85, 0x030000, 0x1b, 2, true},
};

int nvpci_chip_find(const char *name) {
  for (int i = 0; name && i < NVPCI_NCHIPS; i++)
    if (!strcmp(NVPCI_CHIPS[i].name, name)) return i;
  return -1;
}

/* ---------------- failures ---------------- */

void nvpci_fail(nvpci_gpu *g, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g->lock);
  g->nfail++;
  size_t used = strlen(g->failures);
  if (used + 2 < sizeof(g->failures)) snprintf(g->failures + used, sizeof(g->failures) - used, "%s\n", msg);
  pthread_mutex_unlock(&g->lock);
  fprintf(stderr, "nvpci %s: %s\n", g->bdf, msg);
}

const char *nvpci_failures(const nvpci_gpu *g) { return g->failures; }
unsigned nvpci_nfail(const nvpci_gpu *g) { return g->nfail; }
void nvpci_clear_failures(nvpci_gpu *g) {
  pthread_mutex_lock(&g->lock);
  g->nfail = 0;
  g->failures[0] = 0;
  pthread_mutex_unlock(&g->lock);
}
int nvpci_stage(const nvpci_gpu *g) { return g->stage; }
void nvpci_set_stage(nvpci_gpu *g, int stage) {
  pthread_mutex_lock(&g->lock);
  if (stage > g->stage && stage <= NVPCI_STAGE_INIT_DONE) g->stage = stage;
  pthread_mutex_unlock(&g->lock);
}
const char *nvpci_chip_name(const nvpci_gpu *g) { return g->c->name; }
pthread_mutex_t *nvpci_lock_of(nvpci_gpu *g) { return &g->lock; }
mock_pci *nvpci_pci(nvpci_gpu *g) { return g->pci; }
void nvpci_set_gsp(nvpci_gpu *g, nvpci_gsp *s) { g->gsp = s; }
const nvpci_fw *nvpci_firmware(const nvpci_gpu *g) { return &g->fw; }
uint64_t nvpci_mmu_invalidates(const nvpci_gpu *g) { return g->mmu_invalidates; }
nvpci_gsp *nvpci_gsp_of(nvpci_gpu *g) { return g ? g->gsp : NULL; }
uint64_t nvpci_tlb_invalidates(const nvpci_gpu *g) { return g->mmu_invalidates; }
/* dev_vm.h: _PDB ADDR 31:4 and _UPPER_PDB ADDR 19:0 hold pa >> 12 (_PDB_ADDR_ALIGNMENT 12), _PDB APERTURE 1:1. */
uint64_t nvpci_tlb_last(const nvpci_gpu *g, int *pdb_aperture, uint32_t *trigger) {
  if (pdb_aperture) *pdb_aperture = (int)(g->inv_last_pdb >> 1 & 1);
  if (trigger) *trigger = g->inv_last_cmd;
  return ((uint64_t)(g->inv_last_upper & 0xfffff) << 28 | g->inv_last_pdb >> 4) << 12;
}
uint64_t nvpci_doorbells(const nvpci_gpu *g, uint32_t *last) {
  if (last) *last = g->last_doorbell;
  return g->doorbells;
}
unsigned nvpci_fsp_padded(const nvpci_gpu *g) { return g->fsp_padded; }

/* ---------------- registers ---------------- */

/* FWSEC fuse version registers: the GSP engine's (EngineIdMask bit 10: 0x8241c0 + (ucode id - 1) * 4) report
 * cfg.fuse_version as fls() of the value; SEC2's (bit 0: 0x824140 + ...) the Booter's version; others read 0. */
uint32_t nvpci_fuse_reg(const nvpci_gpu *g, uint32_t off) {
  uint32_t v = 0;
  if (off == 0x8241c0u + (g->fw.fw_ucode_id - 1u) * 4u) v = g->cfg.fuse_version;
  else if (off == 0x824140u + (g->fw.bt_ucode_id - 1u) * 4u) v = g->fw.bt_fuse;
  return v ? 1u << (v - 1) : 0;
}

static uint32_t boot0(const nvpci_gpu *g) {
  return (uint32_t)(g->c->arch & 0x1f) << 24 | (uint32_t)g->c->impl << 20 | 0xa1u;
}

/* Read a modelled register; false when the offset is not modelled on this chip. */
static bool reg_rd(nvpci_gpu *g, uint32_t off, uint32_t *v, bool fx) {
  const bool fsp = g->c->fsp;
  if (off == NV_PMC_BOOT_0) *v = boot0(g);
  else if (off == NV_PMC_BOOT_42) *v = (uint32_t)g->c->arch << 24 | (uint32_t)g->c->impl << 20 | 0xa100u;
  else if (off >= NV_PBUS_SW_SCRATCH(0) && off < NV_PBUS_SW_SCRATCH(64)) *v = g->scratch[(off - 0x1400u) / 4];
  else if (off == NV_PBUS_BAR1_BLOCK && !fsp) *v = g->bar1_block;
  else if (off == NV_PGC6_BSI_SECURE_SCRATCH_14) *v = g->handoff ? 1u << 26 : 0;
  else if (off == NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK && !fsp) *v = 1;
  else if (off == NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0 && !fsp) *v = 0xff;
  else if (off == NV_PGC6_AON_SECURE_SCRATCH_GROUP_42) *v = (uint32_t)(g->vram_size >> 20);
  else if (off == NV_PFB_PRI_MMU_WPR2_ADDR_LO) *v = g->wpr2_lo;
  else if (off == NV_PFB_PRI_MMU_WPR2_ADDR_HI) *v = g->wpr2_hi;
  else if (off >= NV_PROM_DATA && off < NV_PROM_DATA + NV_PROM_SIZE) {
    uint32_t o = off - NV_PROM_DATA;
    uint8_t b[4] = {0};
    for (uint32_t i = 0; i < 4; i++) b[i] = o + i < g->fw.vbios.n ? g->fw.vbios.p[o + i] : 0;
    *v = nvpci_get32(b);
  } else if (off >= NV_FUSE_UCODE_VERSION_BASE && off < NV_FUSE_UCODE_VERSION_END) *v = nvpci_fuse_reg(g, off);
  /* FSP boot complete: NV_THERM_I2CS_SCRATCH, at 0x0200bc on GH100 (gh100 dev_therm.h), 0xad00bc on GB20x */
  else if (fsp && off == (g->chip == NVPCI_GH100 ? 0x0200bcu : NV_THERM_I2CS_SCRATCH)) *v = 0xff;
  else if (off == NV_VF_BAR1_BLOCK_LOW && fsp) *v = g->vf_bar1_lo;
  else if (off == NV_VF_BAR1_BLOCK_HIGH && fsp) *v = g->vf_bar1_hi;
  else if (off == NV_VF_MMU_INVALIDATE_PDB) *v = g->inv_pdb;
  else if (off == NV_VF_MMU_INVALIDATE_UPPER_PDB) *v = g->inv_upper_pdb;
  else if (off == NV_VF_MMU_INVALIDATE) *v = 0; /* the trigger has cleared: the invalidate is done */
  else if (off == NV_PGSP_QUEUE_HEAD0) *v = g->gsp_queue_head0;
  else if (nvpci_falcon_rd(g, off, v, fx)) return true;
  else if (nvpci_fsp_rd(g, off, v, fx)) return true;
  else return false;
  return true;
}

static bool reg_wr(nvpci_gpu *g, uint32_t off, uint32_t v, bool fx) {
  const bool fsp = g->c->fsp;
  if (off >= NV_PBUS_SW_SCRATCH(0) && off < NV_PBUS_SW_SCRATCH(64)) g->scratch[(off - 0x1400u) / 4] = v;
  else if (off == NV_PBUS_BAR1_BLOCK && !fsp) g->bar1_block = v;
  else if (off == NV_VF_BAR1_BLOCK_LOW && fsp) g->vf_bar1_lo = v;
  else if (off == NV_VF_BAR1_BLOCK_HIGH && fsp) g->vf_bar1_hi = v;
  else if (off == NV_VF_MMU_INVALIDATE_PDB) g->inv_pdb = v;
  else if (off == NV_VF_MMU_INVALIDATE_UPPER_PDB) g->inv_upper_pdb = v;
  else if (off == NV_VF_MMU_INVALIDATE) {
    if (fx && !(v & 0x80000000u)) nvpci_fail(g, "MMU invalidate 0x%x written without the trigger bit 31", v);
    else if (fx) {
      g->mmu_invalidates++;
      g->inv_last_pdb = g->inv_pdb, g->inv_last_upper = g->inv_upper_pdb, g->inv_last_cmd = v;
    }
  } else if (off == NV_VF_DOORBELL) {
    if (fx) g->doorbells++, g->last_doorbell = v;
    if (fx && g->gsp) nvpci_gsp_doorbell(g->gsp, v);
  } else if (off == NV_PGSP_QUEUE_HEAD0) {
    g->gsp_queue_head0 = v;
    if (fx && g->gsp) nvpci_gsp_notify(g->gsp);
  } else if (off == NV_PFB_PRI_MMU_WPR2_ADDR_LO || off == NV_PFB_PRI_MMU_WPR2_ADDR_HI) {
    if (fx) {
      nvpci_fail(g, "write 0x%x to WPR2 (0x%06x): only the secure falcons set WPR2", v, off);
      return true;
    }
    if (off == NV_PFB_PRI_MMU_WPR2_ADDR_LO) g->wpr2_lo = v;
    else g->wpr2_hi = v;
  } else if (nvpci_falcon_wr(g, off, v, fx)) return true;
  else if (nvpci_fsp_wr(g, off, v, fx)) return true;
  else {
    uint32_t dummy;
    if (fx && reg_rd(g, off, &dummy, false)) {
      nvpci_fail(g, "write 0x%x to read-only register 0x%06x", v, off);
      return true;
    }
    return false;
  }
  return true;
}

uint32_t nvpci_reg_read(nvpci_gpu *g, uint32_t reg) {
  pthread_mutex_lock(&g->lock);
  uint32_t v = 0;
  if (!reg_rd(g, reg, &v, false)) v = 0;
  pthread_mutex_unlock(&g->lock);
  return v;
}

void nvpci_reg_write(nvpci_gpu *g, uint32_t reg, uint32_t v) {
  pthread_mutex_lock(&g->lock);
  if (!reg_wr(g, reg, v, false)) nvpci_fail(g, "model write 0x%x to unmodelled register 0x%06x", v, reg);
  pthread_mutex_unlock(&g->lock);
}

static uint64_t bar0_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  (void)m, (void)bar;
  nvpci_gpu *g = user;
  pthread_mutex_lock(&g->lock);
  uint64_t r = ~0ull;
  uint32_t v = 0;
  bool prom = off >= NV_PROM_DATA && off < NV_PROM_DATA + NV_PROM_SIZE;
  if (size == 8 || (size != 4 && !prom))
    nvpci_fail(g, "BAR0 read of %u bytes at 0x%06" PRIx64 ": registers are 32-bit (the PROM window also 8/16-bit)", size, off);
  else if (!reg_rd(g, (uint32_t)(off & ~3ull), &v, true))
    nvpci_fail(g, "BAR0 read at 0x%06" PRIx64 ": register not modelled by the emulated %s", off, g->c->name);
  else r = (v >> (8 * (off & 3))) & (size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1u);
  pthread_mutex_unlock(&g->lock);
  return r;
}

static void bar0_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  (void)m, (void)bar;
  nvpci_gpu *g = user;
  pthread_mutex_lock(&g->lock);
  if (size != 4) nvpci_fail(g, "BAR0 write of %u bytes at 0x%06" PRIx64 ": registers are 32-bit", size, off);
  else if (!reg_wr(g, (uint32_t)off, (uint32_t)v, true))
    nvpci_fail(g, "BAR0 write 0x%" PRIx64 " at 0x%06" PRIx64 ": register not modelled by the emulated %s", v, off,
               g->c->name);
  else if (g->gsp) nvpci_gsp_reg_written(g->gsp, (uint32_t)off, (uint32_t)v); /* a CPU-sequencer step, perhaps */
  pthread_mutex_unlock(&g->lock);
}

/* ---------------- memory ---------------- */

uint8_t *nvpci_vram(nvpci_gpu *g, uint64_t *size) {
  if (size) *size = g->vram_size;
  return g->vram;
}

/* The GPU reaches its own VRAM through its BAR1 aperture as "coherent system memory" (tinygrad tinygrad/runtime/support/nv/nvdev.py step 6): bus
 * addresses inside BAR1 land in VRAM (BAR1 in physical mode), everything else is host memory the driver mapped. */
static int dma(nvpci_gpu *g, uint64_t bus, void *buf, size_t n, bool wr) {
  uint64_t base = nvpci_get64(g->pci->config + 0x14) & ~0xfull; /* as assigned (the emulated USB bridge re-places it) */
  if (base && bus >= base && bus - base < g->bar1_size) {
    uint64_t off = bus - base;
    if (n > g->bar1_size - off) {
      nvpci_fail(g, "DMA of %zu bytes at BAR1 offset 0x%" PRIx64 " runs past BAR1", n, off);
      return -1;
    }
    if (wr) memcpy(g->vram + off, buf, n);
    else memcpy(buf, g->vram + off, n);
    return 0;
  }
  return wr ? mock_pci_dma_write(g->pci, bus, buf, n) : mock_pci_dma_read(g->pci, bus, buf, n);
}

int nvpci_dma_read(nvpci_gpu *g, uint64_t bus, void *dst, size_t n) { return dma(g, bus, dst, n, false); }
int nvpci_dma_write(nvpci_gpu *g, uint64_t bus, const void *src, size_t n) { return dma(g, bus, (void *)src, n, true); }

/* ---------------- reset, life cycle ---------------- */

/* Cold: what a function reset or power-on leaves (VRAM contents aside). */
static void cold(nvpci_gpu *g) {
  memset(g->scratch, 0, sizeof(g->scratch));
  g->bar1_block = g->vf_bar1_lo = g->vf_bar1_hi = g->inv_pdb = g->inv_upper_pdb = 0;
  g->wpr2_lo = g->wpr2_hi = 0;
  g->gsp_queue_head0 = 0;
  g->stage = NVPCI_STAGE_COLD;
  g->handoff = false;
  nvpci_falcon_cold(g);
  nvpci_fsp_cold(g);
}

static void on_reset(void *user, mock_pci *m) {
  (void)m;
  nvpci_gpu *g = user;
  pthread_mutex_lock(&g->lock);
  cold(g);
  if (g->gsp) nvpci_gsp_reset(g->gsp);
  pthread_mutex_unlock(&g->lock);
}

nvpci_gpu *nvpci_new(mock_sysfs *tree, const nvpci_cfg *cfg) {
  int chip = nvpci_chip_find(cfg && cfg->chip ? cfg->chip : "ga102");
  if (!cfg || chip < 0) {
    fprintf(stderr, "nvpci: chip '%s' is not emulated (ga102, ad102, gh100, gb202)\n",
            cfg && cfg->chip ? cfg->chip : "(null)");
    return NULL;
  }
  uint64_t vram = cfg->vram_size ? cfg->vram_size : 512ull << 20;
  if (vram < (256ull << 20) || (vram & (vram - 1))) {
    fprintf(stderr, "nvpci: VRAM size 0x%" PRIx64 " is not a power of two >= 256 MiB\n", vram);
    return NULL;
  }
  nvpci_gpu *g = calloc(1, sizeof(*g));
  if (!g) return NULL;
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g->lock, &a);
  pthread_mutexattr_destroy(&a);
  g->chip = (nvpci_chip_id)chip;
  g->c = &NVPCI_CHIPS[chip];
  g->cfg = *cfg;
  snprintf(g->bdf, sizeof(g->bdf), "%s", cfg->bdf ? cfg->bdf : "0000:03:00.0");
  g->cfg.bdf = g->bdf;
  g->cfg.chip = g->c->name;
  g->vram_size = vram;
  g->bar1_size = cfg->small_bar && vram > SMALL_BAR1 ? SMALL_BAR1 : vram;
  if (nvpci_fw_build(&g->fw, g->chip) < 0) goto fail;
  mock_pci_cfg pc = {
      .bdf = g->bdf, .vendor = 0x10de, .device = g->c->device, .subvendor = 0x10de, .subdevice = 0x1612,
      .class_code = g->c->class_code, .revision = 0xa1,
      .bars = {[0] = {.size = BAR0_SIZE},
               [1] = {.size = g->bar1_size, .is_64 = true, .prefetch = true},
               [3] = {.size = BAR3_SIZE, .is_64 = true, .prefetch = true}},
      .link_speed = "16.0 GT/s PCIe", .link_width = 16, .iommu_group = -1,
  };
  g->pci = mock_sysfs_add(tree, &pc);
  if (!g->pci || mock_pci_hook(g->pci, 0, 0, BAR0_SIZE, bar0_rd, bar0_wr, g) < 0) goto fail;
  mock_pci_bar_strict(g->pci, 0, true);
  mock_pci_bar_direct(g->pci, 1, true);
  mock_pci_bar_direct(g->pci, 3, true);
  if (g->bar1_size == vram) g->vram = mock_pci_bar_mem(g->pci, 1);
  else {
    void *p = mmap(NULL, vram, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) goto fail;
    g->vram = p, g->vram_own = true;
    mock_pci_bar_cpu_view(g->pci, 1, g->vram); /* the host's BAR1 shows the first 256 MiB of VRAM */
  }
  mock_pci_on_reset(g->pci, on_reset, g);
  cold(g);
  return g;
fail:
  fprintf(stderr, "nvpci %s: setup failed\n", g->bdf);
  if (g->pci) mock_pci_set_dead(g->pci, true);
  nvpci_fw_free(&g->fw);
  pthread_mutex_destroy(&g->lock);
  free(g);
  return NULL;
}

void nvpci_free(nvpci_gpu *g) {
  if (!g) return;
  mock_pci_set_dead(g->pci, true);
  mock_pci_on_reset(g->pci, NULL, NULL);
  mock_pci_bar_cpu_view(g->pci, 1, NULL);
  if (g->vram_own) munmap(g->vram, g->vram_size);
  nvpci_fw_free(&g->fw);
  pthread_mutex_destroy(&g->lock);
  free(g);
}
