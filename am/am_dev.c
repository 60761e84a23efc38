/* am/am_dev.c: open an AM device: PCI id, BARs, register access, discovery, register tables, firmware,
 * boot-region allocations (am/am_dev.h). */
#define _POSIX_C_SOURCE 200809L
#include "am/am_dev.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "util/clock.h"

double bg_am_now_ms(void) { return (double)bg_now_ns() / 1e6; }

void bg_am_sleep_ms(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

/* ---------------- register access ---------------- */

const char *bg_am_reg_name(const bg_am_dev *d, uint32_t addr) {
  for (int i = 0; i < BG_AM_R_COUNT; i++)
    if (d->r[i].name && d->r[i].addr == addr) return d->r[i].name;
  if (addr == BG_AM_DISC_MEMSIZE_REG) return "mmRCC_CONFIG_MEMSIZE";
  return NULL;
}

static void log_access(const bg_am_dev *d, bool write, uint32_t addr, uint32_t v) {
  const char *n = bg_am_reg_name(d, addr);
  if (n) bg_log(write ? 3 : 4, "am: %s %s (0x%" PRIx32 ") %s 0x%" PRIx32, write ? "wreg" : "rreg", n, addr,
                write ? "=" : "->", v);
  else bg_log(write ? 3 : 4, "am: %s 0x%" PRIx32 " %s 0x%" PRIx32, write ? "wreg" : "rreg", addr, write ? "=" : "->", v);
}

static bool direct(const bg_am_dev *d, uint32_t addr) { return (uint64_t)addr * 4 + 4 <= d->mmio.size; }

void bg_am_count_read(bg_am_dev *d, uint32_t addr, uint32_t v) {
  d->nrreg++;
  if (d->opts.trace) d->opts.trace(d->opts.trace_ctx, false, addr, v);
  if (bg_debug_level() >= 4) log_access(d, false, addr, v);
}

uint32_t bg_am_rreg(bg_am_dev *d, uint32_t addr) {
  uint32_t v;
  if (direct(d, addr)) {
    v = bg_mmio_rd32(&d->mmio, (uint64_t)addr * 4);
  } else {
    bg_am_wreg(d, d->r[BG_AM_R_RSMU_INDEX].addr, addr * 4);
    v = bg_am_rreg(d, d->r[BG_AM_R_RSMU_DATA].addr);
    return v; /* the RSMU accesses were counted and logged */
  }
  bg_am_count_read(d, addr, v);
  return v;
}

int bg_am_wreg(bg_am_dev *d, uint32_t addr, uint32_t val) {
  if (!direct(d, addr)) {
    int e = bg_am_wreg(d, d->r[BG_AM_R_RSMU_INDEX].addr, addr * 4);
    return e < 0 ? e : bg_am_wreg(d, d->r[BG_AM_R_RSMU_DATA].addr, val);
  }
  d->nwreg++;
  if (d->opts.trace) d->opts.trace(d->opts.trace_ctx, true, addr, val);
  if (bg_debug_level() >= 3) log_access(d, true, addr, val);
  return bg_mmio_wr32(&d->mmio, (uint64_t)addr * 4, val);
}

static int wait_common(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, uint32_t want, bool any, int timeout_ms,
                       const char *what, uint32_t *last) {
  if (timeout_ms <= 0) timeout_ms = d->opts.timeout_ms;
  double end = bg_am_now_ms() + timeout_ms;
  uint32_t v;
  for (;;) {
    v = bg_am_rr(d, id);
    if (last) *last = v;
    if (any ? (v & mask) != 0 : (v & mask) == want) return 0;
    if (bg_am_now_ms() > end) break;
  }
  if (any)
    return bg_error(BG_ETIMEDOUT,
                    "am: %s: %s: timeout after %d ms waiting for %s (0x%" PRIx32 ") & 0x%" PRIx32
                    " to be nonzero (last value 0x%" PRIx32 ")",
                    d->bdf, what, timeout_ms, d->r[id].name, d->r[id].addr, mask, v);
  return bg_error(BG_ETIMEDOUT,
                  "am: %s: %s: timeout after %d ms waiting for %s (0x%" PRIx32 ") & 0x%" PRIx32 " == 0x%" PRIx32
                  " (last value 0x%" PRIx32 ")",
                  d->bdf, what, timeout_ms, d->r[id].name, d->r[id].addr, mask, want, v);
}

int bg_am_wait_reg(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, uint32_t want, int timeout_ms, const char *what) {
  return wait_common(d, id, mask, want, false, timeout_ms, what, NULL);
}

int bg_am_wait_reg_set(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, int timeout_ms, const char *what) {
  return wait_common(d, id, mask, 0, true, timeout_ms, what, NULL);
}

int bg_am_wait_reg_set_val(bg_am_dev *d, enum bg_am_regid id, uint32_t mask, int timeout_ms, const char *what,
                           uint32_t *last) {
  return wait_common(d, id, mask, 0, true, timeout_ms, what, last);
}

int bg_am_flush_hdp(bg_am_dev *d) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the VRAM writes before the flush request */
  int e = d->hdp_flush_dw ? 0 : bg_am_flush_hdp_pin(d);
  return e < 0 ? e : bg_am_wreg(d, d->hdp_flush_dw, 0);
}

int bg_am_flush_hdp_pin(bg_am_dev *d) {
  uint32_t v = bg_am_rr(d, BG_AM_R_HDP_REMAP), hole = d->ip.nbio->hdp_hole;
  if (v != hole) {
    d->hdp_flush_dw = 0;
    return bg_error(BG_EIO, "am: %s: HDP flush: %s (0x%" PRIx32 ") reads 0x%" PRIx32 ", not the MMIO hole 0x%" PRIx32
                    " SOC init points it at (%s remap_hdp_registers): host writes to VRAM would never reach the GPU",
                    d->bdf, d->r[BG_AM_R_HDP_REMAP].name, d->r[BG_AM_R_HDP_REMAP].addr, v, hole, d->ip.nbio->name);
  }
  d->hdp_flush_dw = v / 4;
  return 0;
}

/* ---------------- open ---------------- */

static int resolve(bg_am_dev *d, enum bg_am_regid id, int hwip, const struct bg_am_regtab *t, enum bg_am_reg_id reg) {
  const struct bg_am_reg *r = bg_am_reg_find(t, reg);
  if (!r) return bg_error(BG_ENOTSUP, "am: %s: register table %s has no %s", d->bdf, t->name, bg_am_reg_id_name(reg));
  d->r[id].name = r->name;
  return bg_am_reg_abs(&d->disc, hwip, 0, r, &d->r[id].addr);
}

static int resolve_regs(bg_am_dev *d) {
  /* PSP mailbox: MP0, or MPASP where the PSP descriptor says so (MP0 14.0.x); SMU mailbox: MP1 (am/am_regs.h) */
  static const struct { enum bg_am_regid id; enum bg_am_reg_id mp0, mpasp; } psp[] = {
      {BG_AM_R_PSP35, regMP0_SMN_C2PMSG_35, regMPASP_SMN_C2PMSG_35},
      {BG_AM_R_PSP36, regMP0_SMN_C2PMSG_36, regMPASP_SMN_C2PMSG_36},
      {BG_AM_R_PSP64, regMP0_SMN_C2PMSG_64, regMPASP_SMN_C2PMSG_64},
      {BG_AM_R_PSP67, regMP0_SMN_C2PMSG_67, regMPASP_SMN_C2PMSG_67},
      {BG_AM_R_PSP69, regMP0_SMN_C2PMSG_69, regMPASP_SMN_C2PMSG_69},
      {BG_AM_R_PSP70, regMP0_SMN_C2PMSG_70, regMPASP_SMN_C2PMSG_70},
      {BG_AM_R_PSP71, regMP0_SMN_C2PMSG_71, regMPASP_SMN_C2PMSG_71},
      {BG_AM_R_PSP81, regMP0_SMN_C2PMSG_81, regMPASP_SMN_C2PMSG_81}};
  static const struct { enum bg_am_regid id; enum bg_am_reg_id reg; } smu[] = {
      {BG_AM_R_SMU53, mmMP1_SMN_C2PMSG_53}, {BG_AM_R_SMU54, mmMP1_SMN_C2PMSG_54}, {BG_AM_R_SMU66, mmMP1_SMN_C2PMSG_66},
      {BG_AM_R_SMU75, mmMP1_SMN_C2PMSG_75}, {BG_AM_R_SMU82, mmMP1_SMN_C2PMSG_82}, {BG_AM_R_SMU90, mmMP1_SMN_C2PMSG_90}};
  int e = 0;
  for (size_t i = 0; i < sizeof(psp) / sizeof(psp[0]) && e >= 0; i++)
    e = resolve(d, psp[i].id, MP0_HWIP, d->regs.mp, d->ip.psp->mpasp ? psp[i].mpasp : psp[i].mp0);
  for (size_t i = 0; i < sizeof(smu) / sizeof(smu[0]) && e >= 0; i++)
    e = resolve(d, smu[i].id, MP1_HWIP, d->regs.smu, smu[i].reg);
  if (e >= 0) e = resolve(d, BG_AM_R_RSMU_INDEX, NBIO_HWIP, d->regs.nbio, regBIF_BX_PF0_RSMU_INDEX);
  if (e >= 0) e = resolve(d, BG_AM_R_RSMU_DATA, NBIO_HWIP, d->regs.nbio, regBIF_BX_PF0_RSMU_DATA);
  if (e >= 0) e = resolve(d, BG_AM_R_HDP_REMAP, NBIO_HWIP, d->regs.nbio, regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL);
  if (e >= 0) e = resolve(d, BG_AM_R_SCRATCH6, GC_HWIP, d->regs.gc, regSCRATCH_REG6);
  if (e >= 0) e = resolve(d, BG_AM_R_SCRATCH7, GC_HWIP, d->regs.gc, regSCRATCH_REG7);
  enum bg_am_reg_id fs = bg_am_reg_find(d->regs.gc, regGCVM_L2_PROTECTION_FAULT_STATUS_LO32)
                             ? regGCVM_L2_PROTECTION_FAULT_STATUS_LO32
                             : regGCVM_L2_PROTECTION_FAULT_STATUS;
  if (e >= 0) e = resolve(d, BG_AM_R_FAULT_STATUS, GC_HWIP, d->regs.gc, fs);
  return e;
}

static int map_bars(bg_am_dev *d) {
  bg_pci_bar b0;
  int e = bg_pci_bar_info(d->pci, 0, &b0);
  if (e < 0) return e;
  d->bar0_size = b0.size;
  if ((e = bg_pci_map_bar(d->pci, 0, 0, 0, BG_PCI_MAP_WC, &d->vram)) < 0) return e;
  if ((e = bg_pci_map_bar(d->pci, 2, 0, 0, 0, &d->doorbell)) < 0) return e;
  if ((e = bg_pci_map_bar(d->pci, 5, 0, 0, 0, &d->mmio)) < 0) return e;
  return bg_pci_check_bar(d->pci, 5, &d->mmio, (uint64_t)BG_AM_DISC_MEMSIZE_REG * 4);
}

/* Discovery table: through BAR0 when it covers it, else MM_INDEX_HI/MM_INDEX/MM_DATA (dwords 6/0/1). */
static int read_discovery(bg_am_dev *d) {
  uint32_t memsize = bg_am_rreg(d, BG_AM_DISC_MEMSIZE_REG);
  uint64_t off;
  int e = bg_am_discovery_location(memsize, &d->vram_size, &off);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  uint32_t *tab = malloc(BG_AM_DISC_TABLE_SIZE);
  if (!tab) return bg_error(BG_ENOMEM, "am: %s: discovery buffer", d->bdf);
  if (off + BG_AM_DISC_TABLE_SIZE <= d->vram.size) {
    e = bg_mmio_read(&d->vram, off, tab, BG_AM_DISC_TABLE_SIZE);
  } else {
    for (uint32_t i = 0; i < BG_AM_DISC_TABLE_SIZE / 4 && e >= 0; i++) {
      uint64_t a = off + 4u * i;
      bg_am_wreg(d, 0x6, (uint32_t)(a >> 31));
      e = bg_am_wreg(d, 0x0, (uint32_t)(a & 0x7fffffffu) | 0x80000000u);
      tab[i] = bg_am_rreg(d, 0x1);
    }
  }
  if (e >= 0) e = bg_am_discovery_parse(tab, BG_AM_DISC_TABLE_SIZE, 0, &d->disc);
  free(tab);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  return 0;
}

static uint64_t vio_rd(void *ctx, uint64_t pa) { return bg_mmio_rd64(&((bg_am_dev *)ctx)->vram, pa); }
static void vio_wr(void *ctx, uint64_t pa, uint64_t v) { bg_mmio_wr64(&((bg_am_dev *)ctx)->vram, pa, v); }
static void vio_zero(void *ctx, uint64_t pa, uint64_t size) {
  static const uint8_t z[4096];
  bg_am_dev *d = ctx;
  while (size) {
    size_t n = size < sizeof(z) ? (size_t)size : sizeof(z);
    bg_mmio_write(&d->vram, pa, z, n);
    pa += n;
    size -= n;
  }
}

/* init_sw of the implemented blocks (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.init_sw: PSP, SMU), in that order; deterministic. The
 * GMC and IH allocations come first once those blocks exist, which will move these addresses. */
static int init_sw(bg_am_dev *d) {
  struct bg_am_vram_config cfg = {
      .vram_size = d->vram_size,
      .reserved_top = d->ip.gmc->reserved_vram,
      .visible_size = d->bar0_size,
  };
  bg_am_vram_io io = {vio_rd, vio_wr, vio_zero, d};
  cfg.io = &io;
  int e = bg_am_vram_create(&cfg, &d->mm);
  if (e < 0) return bg_error_context(e, "am: %s: ", d->bdf);
  bg_am_boot_mem *m = &d->bm;
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x100000, 0x100000, false, &m->psp_msg1)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, false, &m->psp_cmd)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1000, 0x1000, true, &m->psp_fence)) < 0 ||
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x10000, 0x1000, false, &m->psp_ring)) < 0)
    return bg_error_context(e, "am: %s: psp init_sw: ", d->bdf);
  if (!d->ip.psp->boot_time_tmr && /* the bootloader sets the TMR up (am/am_ip.h) */
      (e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x1300000, 0x100000, false, &m->psp_tmr)) < 0)
    return bg_error_context(e, "am: %s: psp init_sw: TMR: ", d->bdf);
  if ((e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_BOOT, 0x4000, 0x1000, false, &m->smu_table)) < 0)
    return bg_error_context(e, "am: %s: smu init_sw: ", d->bdf);
  return 0;
}

static bg_am_ipver ipver(const struct bg_am_discovery *di, int hwip) {
  return (bg_am_ipver){di->ip[hwip].maj, di->ip[hwip].min, di->ip[hwip].rev};
}

/* The opened function bg_am_dev_open_pci hands to bg_am_dev_open on this thread. */
static _Thread_local bg_pci_dev *given_pci;

int bg_am_dev_open_pci(bg_pci_dev *pci, const bg_am_open_opts *opts, bg_am_dev **out) {
  given_pci = pci;
  int e = bg_am_dev_open(bg_pci_name(pci), opts, out);
  if (given_pci) {  /* not taken: failed before the open */
    bg_pci_close(given_pci);
    given_pci = NULL;
  }
  return e;
}

int bg_am_dev_open(const char *bdf, const bg_am_open_opts *opts, bg_am_dev **out) {
  *out = NULL;
  bg_am_dev *d = calloc(1, sizeof(*d));
  if (!d) return bg_error(BG_ENOMEM, "am: %s: device state", bdf);
  if (opts) d->opts = *opts;
  if (d->opts.timeout_ms <= 0) d->opts.timeout_ms = 10000;
  if (d->opts.settle_ms == 0) d->opts.settle_ms = 20;
  if (d->opts.reset_delay_ms == 0) d->opts.reset_delay_ms = 500;
  snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
  uint32_t vendor = 0, dev = 0;
  int e = 0;
  if (given_pci) {  /* bg_am_dev_open_pci: the function is already open (USB bridge) */
    d->pci = given_pci;
    given_pci = NULL;
  } else {
    e = bg_pci_open_sysfs(bdf, d->opts.pci_flags, &d->pci);
  }
  if (e < 0) goto fail;
  if ((e = bg_pci_cfg_read(d->pci, 0, 2, &vendor)) < 0 || (e = bg_pci_cfg_read(d->pci, 2, 2, &dev)) < 0) goto fail;
  d->device_id = (uint16_t)dev;
  if ((e = bg_am_chip_check((uint16_t)vendor, (uint16_t)dev, &d->chip)) < 0) goto fail;
  if ((e = map_bars(d)) < 0) goto fail;
  if ((e = read_discovery(d)) < 0) goto fail;
  d->gc = ipver(&d->disc, GC_HWIP);
  d->mp0 = ipver(&d->disc, MP0_HWIP);
  d->mp1 = ipver(&d->disc, MP1_HWIP);
  if ((e = bg_am_ip_select(d)) < 0) goto fail;
  if ((e = bg_am_regs_select(&d->disc, &d->regs)) < 0) goto fail;
  if ((e = resolve_regs(d)) < 0) goto fail;
  bg_am_fw_ips ips = {d->gc, d->mp0, d->mp1, ipver(&d->disc, SDMA0_HWIP)};
  if ((e = bg_am_fw_load(&ips, d->opts.fw_dir, &d->fw)) < 0) {
    bg_error_context(e, "am: %s: firmware (nothing was written to the device): ", bdf);
    goto fail;
  }
  if ((e = init_sw(d)) < 0) goto fail;
  BG_LOG(1, "am: %s: opened %s (0x%04x, %s), VRAM %" PRIu64 " MiB, BAR0 %" PRIu64 " MiB, GC %u.%u.%u, MP0 %u.%u.%u, "
            "%d firmware descriptors",
         bdf, d->chip->chip, d->device_id, d->disc.arch, d->vram_size >> 20, d->bar0_size >> 20, d->gc.maj, d->gc.min,
         d->gc.rev, d->mp0.maj, d->mp0.min, d->mp0.rev, d->fw->ndescs);
  *out = d;
  return 0;
fail:
  bg_am_dev_close(d);
  return e;
}

void bg_am_dev_close(bg_am_dev *d) {
  if (!d) return;
  bg_am_vram_destroy(d->mm);
  bg_am_fw_free(d->fw);
  if (d->pci) {
    if (d->vram.size) bg_pci_unmap_bar(d->pci, &d->vram);
    if (d->doorbell.size) bg_pci_unmap_bar(d->pci, &d->doorbell);
    if (d->mmio.size) bg_pci_unmap_bar(d->pci, &d->mmio);
    bg_pci_close(d->pci);
  }
  free(d);
}
