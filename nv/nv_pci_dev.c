/* nv/nv_pci_dev.c: open and close an NVIDIA GPU over a bg_pci_dev (nv/nv_pci.h), register access, polls.
 *
 * Open (tinygrad tinygrad/runtime/support/nv/nvdev.py, tinygrad tinygrad/runtime/support/nv/nvdev.py NVDev): BAR views, chip from
 * NV_PMC_BOOT_0/42, then every firmware file read and parsed (nothing has been written to the device yet, so bad
 * firmware leaves it untouched), a GSP left running (WPR2 set) => bus mastering off, function reset, wait, bus
 * mastering on; GFW/FSP boot done; VRAM size and the VRAM allocators; then nv_pci_boot.c. */
#define _POSIX_C_SOURCE 200809L
#include "nv/nv_pci.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "nv/nv_falcon.h"
#include "nv/nv_regs.h"
#include "platform/pci_regs.h"
#include "util/clock.h"
#include "util/env.h"

/* ---------------- register names (logs, errors) ---------------- */

static const struct { uint32_t reg; const char *name; } ABS_REGS[] = {
    {NV_PMC_BOOT_0, "NV_PMC_BOOT_0"},
    {NV_PMC_BOOT_42, "NV_PMC_BOOT_42"},
    {NV_PBUS_BAR1_BLOCK, "NV_PBUS_BAR1_BLOCK"},
    {NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK, "NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK"},
    {NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0), "NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0)"},
    {NV_PGC6_AON_SECURE_SCRATCH_GROUP_42, "NV_PGC6_AON_SECURE_SCRATCH_GROUP_42"},
    {NV_PGC6_BSI_SECURE_SCRATCH_14, "NV_PGC6_BSI_SECURE_SCRATCH_14"},
    {NV_THERM_I2CS_SCRATCH_GH100, "NV_THERM_I2CS_SCRATCH (GH100)"},
    {NV_THERM_I2CS_SCRATCH_GB202, "NV_THERM_I2CS_SCRATCH (GB20x)"},
    {NV_PFB_PRI_MMU_WPR2_ADDR_LO, "NV_PFB_PRI_MMU_WPR2_ADDR_LO"},
    {NV_PFB_PRI_MMU_WPR2_ADDR_HI, "NV_PFB_PRI_MMU_WPR2_ADDR_HI"},
    {NV_PGSP_QUEUE_HEAD(0), "NV_PGSP_QUEUE_HEAD(0)"},
    {NV_PFSP_EMEMC(0), "NV_PFSP_EMEMC(0)"},
    {NV_PFSP_EMEMD(0), "NV_PFSP_EMEMD(0)"},
    {NV_PFSP_QUEUE_HEAD(0), "NV_PFSP_QUEUE_HEAD(0)"},
    {NV_PFSP_QUEUE_TAIL(0), "NV_PFSP_QUEUE_TAIL(0)"},
    {NV_PFSP_MSGQ_HEAD(0), "NV_PFSP_MSGQ_HEAD(0)"},
    {NV_PFSP_MSGQ_TAIL(0), "NV_PFSP_MSGQ_TAIL(0)"},
    {NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW_ADDR, "NV_VIRTUAL_FUNCTION_PRIV_FUNC_BAR1_BLOCK_LOW_ADDR"},
    {NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE, "NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE"},
    {NV_VIRTUAL_FUNCTION_DOORBELL, "NV_VIRTUAL_FUNCTION_DOORBELL"},
};

static const struct { uint32_t off; const char *name; } FALCON_REGS[] = {
    {NV_PFALCON_FALCON_MAILBOX0, "NV_PFALCON_FALCON_MAILBOX0"},
    {NV_PFALCON_FALCON_MAILBOX1, "NV_PFALCON_FALCON_MAILBOX1"},
    {NV_PFALCON_FALCON_OS, "NV_PFALCON_FALCON_OS"},
    {NV_PFALCON_FALCON_RM, "NV_PFALCON_FALCON_RM"},
    {NV_PFALCON_FALCON_HWCFG2, "NV_PFALCON_FALCON_HWCFG2"},
    {NV_PFALCON_FALCON_CPUCTL, "NV_PFALCON_FALCON_CPUCTL"},
    {NV_PFALCON_FALCON_BOOTVEC, "NV_PFALCON_FALCON_BOOTVEC"},
    {NV_PFALCON_FALCON_DMACTL, "NV_PFALCON_FALCON_DMACTL"},
    {NV_PFALCON_FALCON_DMATRFBASE, "NV_PFALCON_FALCON_DMATRFBASE"},
    {NV_PFALCON_FALCON_DMATRFMOFFS, "NV_PFALCON_FALCON_DMATRFMOFFS"},
    {NV_PFALCON_FALCON_DMATRFCMD, "NV_PFALCON_FALCON_DMATRFCMD"},
    {NV_PFALCON_FALCON_DMATRFFBOFFS, "NV_PFALCON_FALCON_DMATRFFBOFFS"},
    {NV_PFALCON_FALCON_DMATRFBASE1, "NV_PFALCON_FALCON_DMATRFBASE1"},
    {NV_PFALCON_FALCON_CPUCTL_ALIAS, "NV_PFALCON_FALCON_CPUCTL_ALIAS"},
    {NV_PFALCON_FALCON_ENGINE, "NV_PFALCON_FALCON_ENGINE"},
    {NV_PFALCON_FBIF_TRANSCFG(0), "NV_PFALCON_FBIF_TRANSCFG(0)"},
    {NV_PFALCON_FBIF_CTL, "NV_PFALCON_FBIF_CTL"},
    {NV_PFALCON2_FALCON_MOD_SEL, "NV_PFALCON2_FALCON_MOD_SEL"},
    {NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID, "NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID"},
    {NV_PFALCON2_FALCON_BROM_ENGIDMASK, "NV_PFALCON2_FALCON_BROM_ENGIDMASK"},
    {NV_PFALCON2_FALCON_BROM_PARAADDR(0), "NV_PFALCON2_FALCON_BROM_PARAADDR(0)"},
    {NV_PRISCV_RISCV_CPUCTL, "NV_PRISCV_RISCV_CPUCTL"},
    {NV_PRISCV_RISCV_BCR_CTRL, "NV_PRISCV_RISCV_BCR_CTRL"},
};

const char *bg_nv_reg_name(uint32_t reg, char *buf, unsigned cap) {
  for (size_t i = 0; i < sizeof(ABS_REGS) / sizeof(ABS_REGS[0]); i++)
    if (ABS_REGS[i].reg == reg) return ABS_REGS[i].name;
  static const struct { uint32_t base; const char *name; } BASES[] = {
      {NV_FALCON_BASE_GSP, "GSP"}, {NV_FALCON_BASE_SEC2, "SEC2"}, {NV_FALCON_BASE_FSP, "FSP"}};
  for (size_t b = 0; b < sizeof(BASES) / sizeof(BASES[0]); b++) {
    if (reg < BASES[b].base || reg - BASES[b].base >= 0x2000) continue;
    for (size_t i = 0; i < sizeof(FALCON_REGS) / sizeof(FALCON_REGS[0]); i++)
      if (BASES[b].base + FALCON_REGS[i].off == reg) {
        snprintf(buf, cap, "%s %s", BASES[b].name, FALCON_REGS[i].name);
        return buf;
      }
  }
  if (reg >= NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION && reg < NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION + 0x40) {
    snprintf(buf, cap, "NV_FUSE_OPT_FPF_GSP_UCODE%u_VERSION", (reg - NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION) / 4 + 1);
    return buf;
  }
  return NULL;
}

/* ---------------- register access ---------------- */

static void log_access(bool write, uint32_t reg, uint32_t v) {
  char b[96];
  const char *n = bg_nv_reg_name(reg, b, sizeof(b));
  bg_log(4, "nv: %s %s%s0x%06" PRIx32 "%s %s 0x%08" PRIx32, write ? "wr32" : "rd32", n ? n : "", n ? " (" : "", reg,
         n ? ")" : "", write ? "=" : "->", v);
}

uint32_t bg_nv_rd32(bg_nv_pci *d, uint32_t reg) {
  uint32_t v = bg_mmio_rd32(&d->bar0, reg);
  d->reg_reads++;
  if (bg_debug_level() >= 4) log_access(false, reg, v);
  return v;
}

void bg_nv_wr32(bg_nv_pci *d, uint32_t reg, uint32_t v) {
  d->reg_writes++;
  if (bg_debug_level() >= 4) log_access(true, reg, v);
  bg_mmio_wr32(&d->bar0, reg, v);
}

void bg_nv_sleep_us(uint64_t us) {
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

int bg_nv_timeout_ms(int ms) {
  long v = 0;
  if (bg_env_int("BG_WAIT_TIMEOUT_MS", &v) == 0 && v > 0 && v < ms) return (int)v;
  return ms;
}

static int poll_common(bg_nv_pci *d, uint32_t reg, uint32_t mask, uint32_t want, bool any, int timeout_ms,
                       const char *what) {
  timeout_ms = bg_nv_timeout_ms(timeout_ms);
  uint64_t end = bg_now_ns() + (uint64_t)timeout_ms * 1000000u;
  uint32_t v;
  for (unsigned i = 0;; i++) {
    v = bg_nv_rd32(d, reg);
    if (any ? (v & mask) != 0 : (v & mask) == want) return 0;
    if (bg_now_ns() > end) break;
    if (i >= 16) bg_nv_sleep_us(i >= 256 ? 1000 : 10); /* fast first, then stop burning the CPU */
  }
  char b[96];
  const char *n = bg_nv_reg_name(reg, b, sizeof(b));
  if (any)
    return bg_error(BG_EHANG, "nv: %s: %s: timeout after %d ms waiting for %s (0x%06" PRIx32 ") & 0x%" PRIx32
                    " to be non-zero (last value 0x%08" PRIx32 ")", bg_pci_name(d->pci), what, timeout_ms,
                    n ? n : "register", reg, mask, v);
  return bg_error(BG_EHANG, "nv: %s: %s: timeout after %d ms waiting for %s (0x%06" PRIx32 ") & 0x%" PRIx32
                  " == 0x%" PRIx32 " (last value 0x%08" PRIx32 ")", bg_pci_name(d->pci), what, timeout_ms,
                  n ? n : "register", reg, mask, want, v);
}

int bg_nv_poll(bg_nv_pci *d, uint32_t reg, uint32_t mask, uint32_t want, int timeout_ms, const char *what) {
  return poll_common(d, reg, mask, want, false, timeout_ms, what);
}

int bg_nv_poll_set(bg_nv_pci *d, uint32_t reg, uint32_t mask, int timeout_ms, const char *what) {
  return poll_common(d, reg, mask, 0, true, timeout_ms, what);
}

int bg_nv_vram_write(bg_nv_pci *d, uint64_t pa, const void *src, size_t n) {
  if (pa > d->bar1.size || n > d->bar1.size - pa)
    return bg_error(BG_ENOMEM, "nv: %s: VRAM [0x%" PRIx64 ", +0x%zx) lies outside BAR1 (0x%" PRIx64 " bytes)",
                    bg_pci_name(d->pci), pa, n, d->bar1.size);
  return bg_mmio_write(&d->bar1, pa, src, n);
}

/* ---------------- open ---------------- */

static int map_bars(bg_nv_pci *d) {
  bg_pci_bar b0, b1, b3;
  int e = bg_pci_bar_info(d->pci, 0, &b0);
  if (e >= 0) e = bg_pci_bar_info(d->pci, 1, &b1);
  if (e >= 0) e = bg_pci_bar_info(d->pci, 3, &b3);
  if (e < 0) return e;
  if (b0.size < (16u << 20) || b1.size == 0)
    return bg_error(BG_ENODEV, "nv: %s: BAR0 of 0x%" PRIx64 " bytes (16 MiB expected) and BAR1 of 0x%" PRIx64
                    " bytes: not an NVIDIA GPU's register and VRAM apertures", bg_pci_name(d->pci), b0.size, b1.size);
  d->bar0_bus = b0.base;
  d->bar1_bus = b1.base;
  d->bar3_bus = b3.base;
  d->bar1_size = b1.size;
  if ((e = bg_pci_map_bar(d->pci, 0, 0, 16u << 20, 0, &d->bar0)) < 0) return e;
  if ((e = bg_pci_map_bar(d->pci, 1, 0, 0, BG_PCI_MAP_WC, &d->bar1)) < 0) return e;
  return bg_pci_check_bar(d->pci, 0, &d->bar0, NV_PMC_BOOT_0);
}

static int identify(bg_nv_pci *d) {
  d->boot0 = bg_nv_rd32(d, NV_PMC_BOOT_0);
  d->boot42 = bg_nv_rd32(d, NV_PMC_BOOT_42);
  d->chip = bg_nv_chip_by_boot42(d->boot42);
  if (!d->chip)
    return bg_error(BG_ENOTSUP, "nv: %s: unknown chip: NV_PMC_BOOT_0 = 0x%08" PRIx32 ", NV_PMC_BOOT_42 = 0x%08" PRIx32
                    " (architecture 0x%02x implementation 0x%x; supported: GA10x, AD10x, GH100, GB20x)",
                    bg_pci_name(d->pci), d->boot0, d->boot42, (unsigned)NV_PMC_BOOT_42_ARCH(d->boot42),
                    (unsigned)NV_PMC_BOOT_42_IMPL(d->boot42));
  return 0;
}

static int bus_master(bg_nv_pci *d, bool on) {
  uint32_t cmd;
  int e = bg_pci_cfg_read(d->pci, BG_PCI_COMMAND, 2, &cmd);
  if (e < 0) return e;
  cmd = on ? (cmd | BG_PCI_COMMAND_MASTER | BG_PCI_COMMAND_MEMORY) : (cmd & ~(uint32_t)BG_PCI_COMMAND_MASTER);
  return bg_pci_cfg_write(d->pci, BG_PCI_COMMAND, 2, cmd);
}

/* A GSP left running by an earlier user holds WPR2: reset the function before touching anything (tinygrad tinygrad/runtime/support/nv/nvdev.py step 1). */
static int warm_reset(bg_nv_pci *d) {
  uint32_t hi = bg_nv_rd32(d, NV_PFB_PRI_MMU_WPR2_ADDR_HI);
  if (hi == 0) return 0;
  BG_LOG(1, "nv: %s: NV_PFB_PRI_MMU_WPR2_ADDR_HI = 0x%08" PRIx32 ": a GSP was left running; resetting the function",
         bg_pci_name(d->pci), hi);
  d->warm = true;
  int e = bus_master(d, false);
  if (e >= 0) e = bg_pci_reset(d->pci);
  if (e < 0) return bg_error_context(e, "nv: %s: reset of a GSP left running: ", bg_pci_name(d->pci));
  bg_nv_sleep_us(100000);
  if ((e = bus_master(d, true)) < 0) return e;
  if ((hi = bg_nv_rd32(d, NV_PFB_PRI_MMU_WPR2_ADDR_HI)) != 0)
    return bg_error(BG_EIO, "nv: %s: NV_PFB_PRI_MMU_WPR2_ADDR_HI still 0x%08" PRIx32 " after the function reset",
                    bg_pci_name(d->pci), hi);
  return 0;
}

uint32_t bg_nv_therm_i2cs_scratch(const bg_nv_chip *chip) {
  return chip->family == BG_NV_HOPPER ? NV_THERM_I2CS_SCRATCH_GH100 : NV_THERM_I2CS_SCRATCH_GB202;
}

/* Boot ROM done: GFW (PGC6 scratch group 05) on FWSEC chips, FSP boot complete on FSP chips (tinygrad tinygrad/runtime/support/nv/nvdev.py step 3;
 * open-gpu-kernel-modules kern_fsp_gh100.c / nouveau nvkm/subdev/fsp/gh100.c gh100_fsp_wait_secure_boot). */
static int wait_boot_rom(bg_nv_pci *d) {
  if (d->chip->fsp_boot)
    return bg_nv_poll(d, bg_nv_therm_i2cs_scratch(d->chip), 0xffffffffu,
                      NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE_SUCCESS, BG_NV_TIMEOUT_BOOT_MS,
                      "FSP secure boot complete");
  int e = bg_nv_poll(d, NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK, 1, 1, BG_NV_TIMEOUT_BOOT_MS,
                     "GFW boot: scratch readable");
  if (e >= 0)
    e = bg_nv_poll(d, NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0), 0xff, 0xff, BG_NV_TIMEOUT_BOOT_MS, "GFW boot done");
  return e;
}

#define MIB (1ull << 20)

static int vram_setup(bg_nv_pci *d) {
  uint32_t mib = bg_nv_rd32(d, NV_PGC6_AON_SECURE_SCRATCH_GROUP_42);
  d->vram_size = (uint64_t)mib * MIB;
  if (d->vram_size < 256 * MIB)
    return bg_error(BG_EIO, "nv: %s: NV_PGC6_AON_SECURE_SCRATCH_GROUP_42 reports %" PRIu32 " MiB of VRAM (at least 256 "
                    "expected)", bg_pci_name(d->pci), mib);
  d->large_bar = d->bar1_size >= d->vram_size;
  /* [0, 2 MiB) boot (root page table); page tables right after (used when BAR1 is small, so they stay visible);
   * the rest up to the top 64 MiB, which the firmware owns (tinygrad tinygrad/runtime/support/nv/nvdev.py step 5). */
  uint64_t pt = (d->vram_size / 512 + MIB - 1) & ~(MIB - 1), main0 = 2 * MIB + pt, top = d->vram_size - 64 * MIB;
  int e = bg_tlsf_create(0, 2 * MIB, 4096, &d->vram_boot);
  if (e >= 0) e = bg_tlsf_create(2 * MIB, pt, 4096, &d->vram_pt);
  if (e >= 0) e = bg_tlsf_create(main0, top - main0, 4096, &d->vram_main);
  return e;
}

static void free_all(bg_nv_pci *d) {
  bg_nv_firmware_free(&d->fw);
  if (d->vram_main) bg_tlsf_destroy(d->vram_main);
  if (d->vram_pt) bg_tlsf_destroy(d->vram_pt);
  if (d->vram_boot) bg_tlsf_destroy(d->vram_boot);
  if (d->bar1.size) bg_pci_unmap_bar(d->pci, &d->bar1);
  if (d->bar0.size) bg_pci_unmap_bar(d->pci, &d->bar0);
  free(d);
}

int bg_nv_pci_open(bg_pci_dev *pci, const char *fw_dir, bg_nv_pci **out) {
  *out = NULL;
  bg_nv_pci_priv *p = calloc(1, sizeof(*p));
  if (!p) return bg_error(BG_ENOMEM, "nv: %s: device state", bg_pci_name(pci));
  bg_nv_pci *d = &p->pub;
  d->pci = pci;
  d->no_host_dma = (bg_pci_features(pci) & BG_PCI_FEAT_NO_HOST_DMA) != 0;
  bg_nv_step_begin(d, "early init");
  int e = map_bars(d);
  if (e >= 0) e = identify(d);
  bg_nv_step_end(d);
  if (e >= 0) {
    /* Every file, parsed, before the first write: bad firmware leaves the device as it was. */
    bg_nv_step_begin(d, "firmware");
    e = bg_nv_firmware_load(d->chip, fw_dir, &d->fw);
    bg_nv_step_end(d);
    if (e < 0) e = bg_error_context(e, "nv: %s: %s firmware: ", bg_pci_name(pci), d->chip->name);
  }
  if (e >= 0) {
    bg_nv_step_begin(d, d->chip->fsp_boot ? "FSP boot wait" : "GFW boot wait");
    e = warm_reset(d);
    if (e >= 0) e = wait_boot_rom(d);
    if (e >= 0) e = vram_setup(d);
    bg_nv_step_end(d);
  }
  if (e >= 0) e = bg_nv_pci_boot(d);
  if (e < 0) {
    /* the undo talks to GSP and may record errors of its own: the boot's error is the one to report */
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", bg_last_error());
    bg_nv_pci_boot_fini(d);
    free_all(d);
    return bg_error(-e, "%s", msg);
  }
  BG_LOG(1, "nv: %s: %s up: %" PRIu64 " MiB VRAM, BAR1 %" PRIu64 " MiB%s, %" PRIu64 " register reads, %" PRIu64
         " writes, %" PRIu64 " RPCs", bg_pci_name(pci), d->chip->name, d->vram_size >> 20, d->bar1_size >> 20,
         d->large_bar ? " (large)" : "", d->reg_reads, d->reg_writes, d->gsp.nrpc);
  *out = d;
  return 0;
}

void bg_nv_pci_close(bg_nv_pci *d) {
  if (!d) return;
  bg_nv_pci_boot_fini(d);
  free_all(d);
}
