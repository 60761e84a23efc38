/* am/am_psp.c: PSP bootloader, KM ring and firmware loading (am/am_psp.h, tinygrad tinygrad/runtime/support/am/ip.py AM_PSP). */
#include "am/am_psp.h"

#include <inttypes.h>
#include <string.h>

#include "baregpu/error.h"

#define STAGE_SIZE 0x100000u /* msg1: PSP_1_MEG */

bool bg_am_psp_sos_alive(bg_am_dev *d) { return bg_am_rr(d, BG_AM_R_PSP81) != 0; }

bool bg_am_psp_needs_setup_tmr(const bg_am_dev *d) { return !d->ip.psp->boot_time_tmr || !d->ip.psp->autoload_tmr; }

/* Descriptors per MP0 generation (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP: boot_time_tmr on 13.0.6, 13.0.14,
 * 14.0.2, 14.0.3; autoload_tmr except on 13.0.6 and 13.0.14; AM_SMU.mode1_reset by MP0 version). */
const struct bg_am_psp_ip bg_am_psp_v13_0 = {
    .name = "psp_v13_0", .mpasp = false, .spl_table = false, .boot_time_tmr = false, .autoload_tmr = true,
    .mode1 = BG_AM_MODE1_DEBUG};
const struct bg_am_psp_ip bg_am_psp_v13_0_6 = {
    .name = "psp_v13_0_6", .mpasp = false, .spl_table = false, .boot_time_tmr = true, .autoload_tmr = false,
    .mode1 = BG_AM_MODE1_GFX_DRIVER_RESET};
const struct bg_am_psp_ip bg_am_psp_v13_0_12 = {
    .name = "psp_v13_0_12", .mpasp = false, .spl_table = false, .boot_time_tmr = false, .autoload_tmr = true,
    .mode1 = BG_AM_MODE1_GFX_DRIVER_RESET};
const struct bg_am_psp_ip bg_am_psp_v13_0_14 = {
    .name = "psp_v13_0_14", .mpasp = false, .spl_table = false, .boot_time_tmr = true, .autoload_tmr = false,
    .mode1 = BG_AM_MODE1_SMU_MSG};
const struct bg_am_psp_ip bg_am_psp_v14_0_2 = {
    .name = "psp_v14_0_2", .mpasp = true, .spl_table = true, .boot_time_tmr = true, .autoload_tmr = true,
    .mode1 = BG_AM_MODE1_DEBUG};

const char *bg_am_psp_cmd_name(uint32_t id) {
  switch (id) {
  case BG_PSP_CMD_SETUP_TMR: return "SETUP_TMR";
  case BG_PSP_CMD_LOAD_IP_FW: return "LOAD_IP_FW";
  case BG_PSP_CMD_LOAD_TOC: return "LOAD_TOC";
  case BG_PSP_CMD_AUTOLOAD_RLC: return "AUTOLOAD_RLC";
  case BG_PSP_CMD_SRIOV_SPATIAL_PART: return "SRIOV_SPATIAL_PART";
  default: return "?";
  }
}

/* Copy a component into msg1, followed by zeros up to a 16-byte multiple (at least 4 zero bytes). */
static int stage(bg_am_dev *d, const bg_fw_desc *c, const char *what) {
  static const uint8_t zero[20];
  size_t padded = (c->size + 4 + 15) & ~(size_t)15;
  if (padded > STAGE_SIZE)
    return bg_error(BG_EINVAL, "am: %s: psp: %s %s is %zu bytes, more than the 1 MiB staging buffer", d->bdf, what,
                    c->name, c->size);
  int e = bg_mmio_write(&d->vram, d->bm.psp_msg1, c->data, c->size);
  if (e >= 0) e = bg_mmio_write(&d->vram, d->bm.psp_msg1 + c->size, zero, padded - c->size);
  return e;
}

/* ---------------- bootloader (step 1) ---------------- */

int bg_am_psp_bootloader(bg_am_dev *d, int *ncomp) {
  bool spl = d->ip.psp->spl_table;
  const struct { uint32_t type, cmd; const char *name; } order[] = {
      {BG_PSP_FW_KDB, BG_PSP_BL_KEY_DATABASE, "LOAD_KEY_DATABASE"},
      {spl ? BG_PSP_FW_SPL : BG_PSP_FW_KDB, BG_PSP_BL_TOS_SPL_TABLE, "LOAD_TOS_SPL_TABLE"},
      {BG_PSP_FW_SYS_DRV, BG_PSP_BL_SYSDRV, "LOAD_SYSDRV"},
      {BG_PSP_FW_SOC_DRV, BG_PSP_BL_SOCDRV, "LOAD_SOCDRV"},
      {BG_PSP_FW_INTF_DRV, BG_PSP_BL_INTFDRV, "LOAD_INTFDRV"},
      {BG_PSP_FW_DBG_DRV, BG_PSP_BL_DBGDRV, "LOAD_DBGDRV"},
      {BG_PSP_FW_RAS_DRV, BG_PSP_BL_RASDRV, "LOAD_RASDRV"},
      {BG_PSP_FW_SOS, BG_PSP_BL_SOSDRV, "LOAD_SOSDRV"},
  };
  int n = 0, e;
  if (ncomp) *ncomp = 0;
  if (bg_am_psp_sos_alive(d)) return 0;
  if (!bg_am_fw_sos(d->fw, BG_PSP_FW_SOS))
    return bg_error(BG_EINVAL, "am: %s: psp: %s has no PSP_SOS component", d->bdf, d->fw->files[BG_AM_FW_SOS].name);
  char what[96];
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
    const bg_fw_desc *c = bg_am_fw_sos(d->fw, order[i].type);
    if (!c) continue;
    snprintf(what, sizeof(what), "psp bootloader before %s", order[i].name);
    if (n == 0 && (e = bg_am_wait_reg_set(d, BG_AM_R_PSP35, 0x80000000u, 0, what)) < 0) return e;
    if ((e = stage(d, c, order[i].name)) < 0 || (e = bg_am_flush_hdp(d)) < 0) return e;
    bg_am_wr(d, BG_AM_R_PSP36, (uint32_t)(bg_am_mc(d, d->bm.psp_msg1) >> 20));
    if ((e = bg_am_wr(d, BG_AM_R_PSP35, order[i].cmd)) < 0) return e;
    n++;
    if (order[i].cmd == BG_PSP_BL_SOSDRV) break;
    snprintf(what, sizeof(what), "psp bootloader %s (%s)", order[i].name, c->name);
    if ((e = bg_am_wait_reg_set(d, BG_AM_R_PSP35, 0x80000000u, 0, what)) < 0) return e;
  }
  if ((e = bg_am_wait_reg_set(d, BG_AM_R_PSP81, 0xffffffffu, 0, "psp: sOS start after LOAD_SOSDRV")) < 0) return e;
  if (ncomp) *ncomp = n;
  return 0;
}

/* ---------------- ring (step 2) ---------------- */

int bg_am_psp_ring_destroy(bg_am_dev *d) {
  int e = bg_am_wr(d, BG_AM_R_PSP64, BG_PSP_CTRL_DESTROY_RINGS);
  /* Kept (the poll of C2PMSG_64 follows): Linux psp_v13_0_ring_destroy mdelay(20), "there might be handshake issue
   * with hardware which needs delay" (tinygrad AM_PSP sleeps 20 ms too); the bit polled may still show the last
   * command's response right after the write. */
  bg_am_sleep_ms(d->opts.settle_ms);
  if (e >= 0) e = bg_am_wait_reg_set(d, BG_AM_R_PSP64, 0x80000000u, 0, "psp: ring destroy");
  return e;
}

int bg_am_psp_ring_create(bg_am_dev *d) {
  int e;
  if (bg_am_rr(d, BG_AM_R_PSP71) != 0) {
    if ((e = bg_am_wr(d, BG_AM_R_PSP64, BG_PSP_CTRL_DESTROY_RINGS)) < 0) return e;
    bg_am_sleep_ms(d->opts.settle_ms); /* kept: the handshake delay of Linux psp_v13_0_ring_destroy (above) */
  }
  if ((e = bg_am_wait_reg_set(d, BG_AM_R_PSP64, 0x80000000u, 0, "psp: ring create (sOS ready)")) < 0) return e;
  /* A stale fence from a previous boot (VRAM survives mode1 reset) must not satisfy a new ring's first wait. */
  if ((e = bg_mmio_wr32(&d->vram, d->bm.psp_fence, 0)) < 0) return e;
  uint64_t mc = bg_am_mc(d, d->bm.psp_ring);
  bg_am_wr(d, BG_AM_R_PSP69, (uint32_t)mc);
  bg_am_wr(d, BG_AM_R_PSP70, (uint32_t)(mc >> 32));
  bg_am_wr(d, BG_AM_R_PSP71, BG_PSP_RING_SIZE);
  if ((e = bg_am_wr(d, BG_AM_R_PSP64, BG_PSP_RING_TYPE_KM << 16)) < 0) return e;
  bg_am_sleep_ms(d->opts.settle_ms); /* kept: Linux psp_v13_0_ring_create mdelay(20) before polling (same reason) */
  return bg_am_wait_reg(d, BG_AM_R_PSP64, 0x8000FFFFu, 0x80000000u, 0, "psp: ring create (KM ring)");
}

int bg_am_psp_submit(bg_am_dev *d, uint32_t cmd_id, const uint32_t *u, int n, uint32_t resp_off, uint32_t *resp) {
  uint8_t cmd[1024], frame[64];
  const char *cn = bg_am_psp_cmd_name(cmd_id);
  if (n < 0 || n > 16) return bg_error(BG_EINVAL, "am: %s: psp: %s with %d union dwords", d->bdf, cn, n);
  memset(cmd, 0, sizeof(cmd));
  memcpy(cmd + 8, &cmd_id, 4);
  if (n) memcpy(cmd + 28, u, (size_t)n * 4);
  int e = bg_mmio_write(&d->vram, d->bm.psp_cmd, cmd, sizeof(cmd));
  if (e < 0) return e;
  uint32_t w = bg_am_rr(d, BG_AM_R_PSP67), fence = w + 1;
  uint64_t cmc = bg_am_mc(d, d->bm.psp_cmd), fmc = bg_am_mc(d, d->bm.psp_fence);
  uint32_t f[6] = {(uint32_t)cmc, (uint32_t)(cmc >> 32), 0, (uint32_t)fmc, (uint32_t)(fmc >> 32), fence};
  memset(frame, 0, sizeof(frame));
  memcpy(frame, f, sizeof(f));
  if ((e = bg_mmio_write(&d->vram, d->bm.psp_ring + ((uint64_t)w * 4) % BG_PSP_RING_SIZE, frame, sizeof(frame))) < 0)
    return e;
  if ((e = bg_am_flush_hdp(d)) < 0) return e;
  if ((e = bg_am_wr(d, BG_AM_R_PSP67, w + 16)) < 0) return e;
  double end = bg_am_now_ms() + d->opts.timeout_ms;
  uint32_t got;
  while ((got = bg_mmio_rd32(&d->vram, d->bm.psp_fence)) != fence) {
    if (bg_am_now_ms() > end)
      return bg_error(BG_ETIMEDOUT,
                      "am: %s: psp: %s (0x%x): timeout after %d ms waiting for the fence at MC 0x%" PRIx64
                      " to become 0x%" PRIx32 " (reads 0x%" PRIx32 ")",
                      d->bdf, cn, cmd_id, d->opts.timeout_ms, fmc, fence, got);
  }
  d->psp_fence_seq = fence;
  uint32_t status = bg_mmio_rd32(&d->vram, d->bm.psp_cmd + BG_PSP_RESP_STATUS);
  if (status)
    return bg_error(BG_EIO, "am: %s: psp: %s (0x%x) failed: resp.status 0x%" PRIx32, d->bdf, cn, cmd_id, status);
  if (resp) *resp = bg_mmio_rd32(&d->vram, d->bm.psp_cmd + resp_off);
  BG_LOG(2, "am: %s: psp: %s done (fence 0x%" PRIx32 ")", d->bdf, cn, fence);
  return 0;
}

/* ---------------- firmware (steps 3-7) ---------------- */

static int load_ip_fw(bg_am_dev *d, const bg_fw_desc *c, bool restage) {
  int e;
  if (restage && (e = stage(d, c, "LOAD_IP_FW")) < 0) return e;
  uint64_t mc = bg_am_mc(d, d->bm.psp_msg1);
  uint32_t u[4] = {(uint32_t)mc, (uint32_t)(mc >> 32), (uint32_t)c->size, c->fw_type};
  e = bg_am_psp_submit(d, BG_PSP_CMD_LOAD_IP_FW, u, 4, 0, NULL);
  if (e < 0) return bg_error_context(e, "%s (type %u, %zu bytes): ", c->name, c->fw_type, c->size);
  return 0;
}

int bg_am_psp_load_fw(bg_am_dev *d, int *ncmds) {
  int e, n = 0;
  if (ncmds) *ncmds = 0;
  uint64_t mc = bg_am_mc(d, d->bm.psp_msg1);
  d->psp_tmr_size = 0;
  if (d->fw->toc) { /* step 3 */
    if ((e = stage(d, d->fw->toc, "LOAD_TOC")) < 0) return e;
    uint32_t u[3] = {(uint32_t)mc, (uint32_t)(mc >> 32), (uint32_t)d->fw->toc->size}, tmr = 0;
    if ((e = bg_am_psp_submit(d, BG_PSP_CMD_LOAD_TOC, u, 3, BG_PSP_RESP_TMR_SIZE, &tmr)) < 0) return e;
    n++;
    if (tmr > BG_PSP_TMR_MAX)
      return bg_error(BG_EIO, "am: %s: psp: LOAD_TOC answered tmr_size 0x%" PRIx32 ", more than the 0x%x reserved",
                      d->bdf, tmr, BG_PSP_TMR_MAX);
    d->psp_tmr_size = tmr;
  }
  if (d->fw->smu) { /* step 4: SMU firmware before the TMR */
    if ((e = load_ip_fw(d, d->fw->smu, true)) < 0) return e;
    n++;
  }
  if (bg_am_psp_needs_setup_tmr(d)) { /* step 5 */
    uint64_t t = d->bm.psp_tmr ? bg_am_mc(d, d->bm.psp_tmr) : 0;
    uint32_t sz = d->bm.psp_tmr ? d->psp_tmr_size : 0;
    uint32_t u[6] = {(uint32_t)t, (uint32_t)(t >> 32), sz, 2u /* virt_phy_addr */, (uint32_t)t, (uint32_t)(t >> 32)};
    if ((e = bg_am_psp_submit(d, BG_PSP_CMD_SETUP_TMR, u, 6, 0, NULL)) < 0) return e;
    n++;
  }
  const uint8_t *staged = NULL;
  for (int i = 0; i < d->fw->ndescs; i++) { /* step 6: stage each blob once */
    const bg_fw_desc *c = &d->fw->descs[i];
    bool restage = !(staged == c->data && i > 0 && d->fw->descs[i - 1].size == c->size);
    if ((e = load_ip_fw(d, c, restage)) < 0) return e;
    staged = c->data;
    n++;
  }
  if (d->ip.gfx->rlc_autoload) { /* step 7 */
    if ((e = bg_am_psp_submit(d, BG_PSP_CMD_AUTOLOAD_RLC, NULL, 0, 0, NULL)) < 0) return e;
  } else {
    const bg_fw_desc *rl = bg_am_fw_sos(d->fw, BG_PSP_FW_RL);
    if (!rl) return bg_error(BG_EINVAL, "am: %s: psp: gfx9 sOS image has no PSP_RL component", d->bdf);
    bg_fw_desc c = *rl;
    c.fw_type = BG_GFX_FW_REG_LIST;
    if ((e = load_ip_fw(d, &c, true)) < 0) return e;
  }
  n++;
  if (ncmds) *ncmds = n;
  return 0;
}

int bg_am_psp_spatial_partition(bg_am_dev *d, uint32_t mode) {
  int e = bg_am_psp_submit(d, BG_PSP_CMD_SRIOV_SPATIAL_PART, &mode, 1, 0, NULL);
  return e < 0 ? bg_error_context(e, "am: %s: psp: spatial partition mode %u: ", d->bdf, mode) : 0;
}

int bg_am_psp_init(bg_am_dev *d) {
  int e = bg_am_psp_bootloader(d, NULL);
  if (e >= 0) e = bg_am_psp_ring_create(d);
  if (e >= 0) e = bg_am_psp_load_fw(d, NULL);
  return e;
}
