/* am/am_smu.c: SMU mailbox, init, clocks, metrics, mode1 reset (am/am_smu.h, tinygrad tinygrad/runtime/support/am/ip.py AM_SMU). */
#include "am/am_smu.h"

#include <inttypes.h>
#include <string.h>

#include "baregpu/error.h"

#define SMU_TABLE_SIZE 0x4000u

static const char *const MSG_NAMES[BG_SMU_NMSGS] = {
    "GetSmuVersion", "EnableAllSmuFeatures", "SetDriverDramAddrHigh", "SetDriverDramAddrLow",
    "TransferTableSmu2Dram", "GetMetricsTable", "SetSoftMinByFreq", "SetSoftMaxByFreq",
    "GetDpmFreqByIndex", "SetPptLimit", "Mode1Reset", "GfxDriverReset"};

/* Message ids per SMU module (tinygrad tinygrad/runtime/support/am/ip.py AM_SMU table); -1 = none. */
static const int IDS_13_0_0[BG_SMU_NMSGS] = {0x2, 0x6, 0xE, 0xF, 0x12, -1, 0x19, 0x1A, 0x1F, 0x32, 0x2F, -1};
static const int IDS_14_0_2[BG_SMU_NMSGS] = {0x2, 0x6, 0xE, 0xF, 0x12, -1, 0x19, 0x1A, 0x1F, 0x32, -1, -1};
static const int IDS_13_0_6[BG_SMU_NMSGS] = {0x2, 0x5, 0xD, 0xE, -1, 0x9, 0x13, 0x14, 0x17, 0x18, -1, 0x3};

const char *bg_am_smu_msg_name(bg_am_smu_msg msg) { return (unsigned)msg < BG_SMU_NMSGS ? MSG_NAMES[msg] : "?"; }

int bg_am_smu_msg_id(const bg_am_dev *d, bg_am_smu_msg msg) {
  return (unsigned)msg < BG_SMU_NMSGS ? d->ip.smu->msg_ids[msg] : -1;
}

int bg_am_smu_send(bg_am_dev *d, bg_am_smu_msg msg, uint32_t param, uint32_t *result, int timeout_ms) {
  int id = bg_am_smu_msg_id(d, msg);
  if (id < 0)
    return bg_error(BG_ENOTSUP, "am: %s: smu: SMU %u.%u.%u has no message %s", d->bdf, d->mp1.maj, d->mp1.min,
                    d->mp1.rev, bg_am_smu_msg_name(msg));
  char what[96];
  snprintf(what, sizeof(what), "smu: %s(0x%" PRIx32 ")", bg_am_smu_msg_name(msg), param);
  bg_am_wr(d, BG_AM_R_SMU90, 0);
  bg_am_wr(d, BG_AM_R_SMU82, param);
  int e = bg_am_wr(d, BG_AM_R_SMU66, (uint32_t)id);
  uint32_t resp = 0; /* the poll's last read is the response: the mailbox is read once per poll, not again after */
  if (e >= 0) e = bg_am_wait_reg_set_val(d, BG_AM_R_SMU90, 0xffffffffu, timeout_ms, what, &resp);
  if (e < 0) return e;
  if (resp != 1)
    return bg_error(BG_EIO, "am: %s: %s (id 0x%x) failed: response 0x%" PRIx32 " in %s", d->bdf, what, id, resp,
                    d->r[BG_AM_R_SMU90].name);
  if (result) *result = bg_am_rr(d, BG_AM_R_SMU82);
  return 0;
}

int bg_am_smu_send_debug(bg_am_dev *d, uint32_t msg, uint32_t param, int timeout_ms) {
  char what[96];
  snprintf(what, sizeof(what), "smu: debug message 0x%" PRIx32 "(0x%" PRIx32 ")", msg, param);
  bg_am_wr(d, BG_AM_R_SMU54, 0);
  bg_am_wr(d, BG_AM_R_SMU53, param);
  int e = bg_am_wr(d, BG_AM_R_SMU75, msg);
  uint32_t resp = 0; /* the poll's last read is the response (as bg_am_smu_send) */
  if (e >= 0) e = bg_am_wait_reg_set_val(d, BG_AM_R_SMU54, 0xffffffffu, timeout_ms, what, &resp);
  if (e < 0) return e;
  if (resp != 1)
    return bg_error(BG_EIO, "am: %s: %s failed: response 0x%" PRIx32 " in %s", d->bdf, what, resp,
                    d->r[BG_AM_R_SMU54].name);
  return 0;
}

bool bg_am_smu_alive(bg_am_dev *d) {
  /* Like tinygrad: the outcome of the message does not matter, only whether the SMU answered at all. The
   * response register is read here (also after a timeout) so the mailbox protocol stays balanced. */
  int e = bg_am_smu_send(d, BG_SMU_GetSmuVersion, 0, NULL, 100);
  if (e < 0) bg_clear_error();
  return e >= 0 || bg_am_rr(d, BG_AM_R_SMU90) != 0;
}

int bg_am_smu_init(bg_am_dev *d) {
  uint64_t mc = bg_am_mc(d, d->bm.smu_table);
  int e = bg_am_smu_send(d, BG_SMU_SetDriverDramAddrHigh, (uint32_t)(mc >> 32), NULL, 0);
  if (e >= 0) e = bg_am_smu_send(d, BG_SMU_SetDriverDramAddrLow, (uint32_t)mc, NULL, 0);
  if (e >= 0) e = bg_am_smu_send(d, BG_SMU_EnableAllSmuFeatures, 0, NULL, 0);
  d->smu_features = e >= 0;
  d->dpm_read = false;
  memset(d->dpm_n, 0, sizeof(d->dpm_n));
  return e;
}

int bg_am_smu_read_clocks(bg_am_dev *d, unsigned clk, uint32_t *nlevels, const uint32_t **freqs) {
  if (clk >= 5) return bg_error(BG_EINVAL, "am: %s: smu: PPCLK %u out of range (0..4)", d->bdf, clk);
  if (!d->dpm_n[clk]) {
    uint32_t n = 0, f = 0;
    int e = bg_am_smu_send(d, BG_SMU_GetDpmFreqByIndex, clk << 16 | 0xff, &n, 0);
    if (e < 0) return e;
    n &= 0x7fffffffu;
    if (n == 0 || n > 16)
      return bg_error(BG_EIO, "am: %s: smu: PPCLK %u reports %" PRIu32 " DPM levels (expected 1..16)", d->bdf, clk, n);
    for (uint32_t i = 0; i < n; i++) {
      if ((e = bg_am_smu_send(d, BG_SMU_GetDpmFreqByIndex, clk << 16 | i, &f, 0)) < 0) return e;
      d->dpm_freq[clk][i] = f & 0x7fffffffu;
    }
    d->dpm_n[clk] = n;
  }
  if (nlevels) *nlevels = d->dpm_n[clk];
  if (freqs) *freqs = d->dpm_freq[clk];
  return 0;
}

int bg_am_smu_set_clocks(bg_am_dev *d, int level) {
  /* UCLK, FCLK, SOCCLK, then GFXCLK unless CDNA (whose PPCLK ids differ: SOCCLK 2, UCLK 3, FCLK 4). */
  unsigned clks[4];
  int nclk = 0;
  if (d->ip.smu->cdna) {
    clks[nclk++] = 3, clks[nclk++] = 4, clks[nclk++] = 2;
  } else {
    clks[nclk++] = BG_SMU_PPCLK_UCLK, clks[nclk++] = BG_SMU_PPCLK_FCLK, clks[nclk++] = BG_SMU_PPCLK_SOCCLK;
    clks[nclk++] = BG_SMU_PPCLK_GFXCLK;
  }
  for (int i = 0; i < nclk; i++) {
    unsigned c = clks[i];
    uint32_t mn, mx;
    int e;
    if (level == BG_SMU_CLOCKS_UNLIMITED) {
      mn = 0, mx = 0xffff;
    } else {
      uint32_t n;
      const uint32_t *f;
      if ((e = bg_am_smu_read_clocks(d, c, &n, &f)) < 0) return e;
      uint32_t l = level < 0 ? n - 1 : ((uint32_t)level >= n ? n - 1 : (uint32_t)level);
      mn = mx = f[l];
    }
    if ((e = bg_am_smu_send(d, BG_SMU_SetSoftMinByFreq, c << 16 | mn, NULL, 0)) < 0) return e;
    /* CDNA (tinygrad: GC < 10): only the soft minimum */
    if (!d->ip.smu->cdna && (e = bg_am_smu_send(d, BG_SMU_SetSoftMaxByFreq, c << 16 | mx, NULL, 0)) < 0) return e;
  }
  return 0;
}

int bg_am_smu_set_power_limit(bg_am_dev *d, unsigned watts) {
  return bg_am_smu_send(d, BG_SMU_SetPptLimit, watts ? watts : 1, NULL, 0);
}

int bg_am_smu_read_table(bg_am_dev *d, uint32_t table, void *buf, uint32_t size) {
  if (size > SMU_TABLE_SIZE)
    return bg_error(BG_EINVAL, "am: %s: smu: table read of %" PRIu32 " bytes exceeds the 16 KiB driver table", d->bdf,
                    size);
  int e = bg_am_smu_send(d, d->ip.smu->cdna ? BG_SMU_GetMetricsTable : BG_SMU_TransferTableSmu2Dram, table, NULL, 0);
  if (e < 0) return e;
  return bg_mmio_read(&d->vram, d->bm.smu_table, buf, size);
}

/* SmuMetricsExternal_t offsets (Linux smu13_driver_if_v13_0_0.h and smu14_driver_if_v14_0.h). */
typedef struct metrics_layout {
  uint32_t size, gfxclk, memclk, wmax, counter, gfx_act, uclk_act, power, temps, temp_mem_idx, fan_pwm, fan_rpm;
} metrics_layout;
static const metrics_layout M_13_0_0 = {392, 54, 62, 76, 80, 104, 106, 116, 120, 4, 150, 152};
static const metrics_layout M_14_0_2 = {412, 46, 54, 68, 104, 124, 126, 136, 140, 4, 168, 170};

static uint16_t get16(const uint8_t *p, uint32_t off) {
  uint16_t v;
  memcpy(&v, p + off, 2);
  return v;
}
static uint32_t get32(const uint8_t *p, uint32_t off) {
  uint32_t v;
  memcpy(&v, p + off, 4);
  return v;
}

/* MetricsTableX_t of SMU 13.0.6 (Linux smu_v13_0_6_pmfw.h, 2008 bytes; tinygrad extra/amdpci/am_smi.py): u32 fields, Q10 fixed point
 * except the accumulation counter. */
enum {
  M6_SIZE = 2008, M6_COUNTER = 0, M6_MAX_SOCKET_TEMP = 4, M6_MAX_VR_TEMP = 8, M6_MAX_HBM_TEMP = 12,
  M6_MAX_SOCKET_POWER_LIMIT = 44, M6_SOCKET_POWER = 48, M6_FCLK = 108, M6_UCLK = 112, M6_SOCCLK = 116,
  M6_SOCKET_GFX_BUSY = 1272, M6_DRAM_BW_UTIL = 1276, M6_PROCHOT_ACC = 1348, M6_PPT_ACC = 1352,
  M6_SOCKET_THM_ACC = 1356, M6_VR_THM_ACC = 1360, M6_HBM_THM_ACC = 1364, M6_GFXCLK = 1372,
};

static uint16_t q10(const uint8_t *t, uint32_t off) {
  uint32_t v;
  memcpy(&v, t + off, 4);
  return (uint16_t)((v + 512u) >> 10);
}

static void decode_13_0_6(const uint8_t *t, bg_am_smu_metrics *m) {
  memset(m, 0, sizeof(*m));
  memcpy(&m->counter, t + M6_COUNTER, 4);
  m->gfxclk = q10(t, M6_GFXCLK);
  m->memclk = q10(t, M6_UCLK);
  m->curr_clock[BG_SMU_PPCLK_GFXCLK] = m->gfxclk;
  m->curr_clock[BG_SMU_PPCLK_SOCCLK] = q10(t, M6_SOCCLK);
  m->curr_clock[BG_SMU_PPCLK_UCLK] = m->memclk;
  m->curr_clock[BG_SMU_PPCLK_FCLK] = q10(t, M6_FCLK);
  m->gfx_activity = q10(t, M6_SOCKET_GFX_BUSY);
  m->uclk_activity = q10(t, M6_DRAM_BW_UTIL);
  m->socket_power = q10(t, M6_SOCKET_POWER);
  m->power_limit = q10(t, M6_MAX_SOCKET_POWER_LIMIT);
  m->temp_hotspot = q10(t, M6_MAX_SOCKET_TEMP);
  m->temp_mem = q10(t, M6_MAX_HBM_TEMP);
  m->temp_vr = q10(t, M6_MAX_VR_TEMP);
  static const uint32_t acc[5] = {M6_PROCHOT_ACC, M6_PPT_ACC, M6_SOCKET_THM_ACC, M6_VR_THM_ACC, M6_HBM_THM_ACC};
  for (int i = 0; i < 5; i++) memcpy(&m->throttle_acc[i], t + acc[i], 4);
  m->cdna = true;
}

static int read_metrics_13_0_6(bg_am_dev *d, bg_am_smu_metrics *m) {
  uint8_t t[M6_SIZE];
  int e = bg_am_smu_read_table(d, BG_SMU_TABLE_METRICS, t, M6_SIZE);
  if (e < 0) return e;
  decode_13_0_6(t, m);
  return 0;
}

int bg_am_smu_read_metrics(bg_am_dev *d, bg_am_smu_metrics *m) {
  if (!d->ip.smu->read_metrics)
    return bg_error(BG_ENOTSUP, "am: %s: smu: the metrics layout of SMU %u.%u.%u (%s) is not known", d->bdf,
                    d->mp1.maj, d->mp1.min, d->mp1.rev, d->ip.smu->name);
  return d->ip.smu->read_metrics(d, m);
}

/* SmuMetricsExternal_t of an RDNA SMU. */
static void decode_ext(const metrics_layout *L, const uint8_t *t, bg_am_smu_metrics *m) {
  memset(m, 0, sizeof(*m));
  m->counter = get32(t, L->counter);
  for (unsigned i = 0; i < 4; i++) m->curr_clock[i] = get32(t, 4 * i);
  m->gfxclk = get16(t, L->gfxclk);
  m->memclk = get16(t, L->memclk);
  m->power_limit = get16(t, L->wmax);
  m->gfx_activity = get16(t, L->gfx_act);
  m->uclk_activity = get16(t, L->uclk_act);
  m->socket_power = get16(t, L->power);
  m->temp_edge = get16(t, L->temps);
  m->temp_hotspot = get16(t, L->temps + 2);
  m->temp_mem = get16(t, L->temps + 2 * L->temp_mem_idx);
  m->fan_pwm = t[L->fan_pwm];
  m->fan_rpm = get16(t, L->fan_rpm);
}

static int read_metrics_ext(bg_am_dev *d, const metrics_layout *L, bg_am_smu_metrics *m) {
  uint8_t t[512];
  int e = bg_am_smu_read_table(d, BG_SMU_TABLE_METRICS, t, L->size);
  if (e < 0) return e;
  decode_ext(L, t, m);
  return 0;
}

int bg_am_smu_metrics_decode(bg_am_smu_layout layout, const void *table, size_t len, bg_am_smu_metrics *m) {
  static const char *const names[] = {"13.0.0", "14.0.2", "13.0.6"};
  if ((unsigned)layout > BG_SMU_LAYOUT_13_0_6) return bg_error(BG_EINVAL, "smu: metrics layout %u is not known", (unsigned)layout);
  size_t need = layout == BG_SMU_LAYOUT_13_0_6 ? M6_SIZE : layout == BG_SMU_LAYOUT_14_0_2 ? M_14_0_2.size : M_13_0_0.size;
  if (len < need)
    return bg_error(BG_EINVAL, "smu: metrics table of SMU %s: %zu bytes, the layout needs %zu", names[layout], len, need);
  if (layout == BG_SMU_LAYOUT_13_0_6) decode_13_0_6(table, m);
  else decode_ext(layout == BG_SMU_LAYOUT_14_0_2 ? &M_14_0_2 : &M_13_0_0, table, m);
  return 0;
}

int bg_am_smu_mode1_reset(bg_am_dev *d) {
  int e;
  const char *how;
  switch (d->ip.psp->mode1) {
  case BG_AM_MODE1_DEBUG:
    how = "debug Mode1Reset";
    e = bg_am_smu_send_debug(d, BG_SMU_DEBUG_MODE1_RESET, 0, 0);
    break;
  case BG_AM_MODE1_GFX_DRIVER_RESET:
    how = "GfxDriverReset(1)";
    e = bg_am_smu_send(d, BG_SMU_GfxDriverReset, 1, NULL, 0);
    break;
  default:
    how = "Mode1Reset";
    e = bg_am_smu_send(d, BG_SMU_Mode1Reset, 0, NULL, 0);
    break;
  }
  if (e < 0) return bg_error_context(e, "am: %s: mode1 reset: ", d->bdf);
  BG_LOG(1, "am: %s: smu: mode1 reset (%s)", d->bdf, how);
  /* Kept: Linux smu_v13_0_0_mode1_reset msleep(SMU13_MODE1_RESET_WAIT_TIME_IN_MS) (500 ms; tinygrad sleeps 0.5 s):
   * during the reset the registers read garbage, so nothing can be polled before it; the boot then polls. */
  bg_am_sleep_ms(d->opts.reset_delay_ms);
  d->smu_features = false;
  d->psp_fence_seq = 0;
  memset(d->dpm_n, 0, sizeof(d->dpm_n));
  return 0;
}

static int read_metrics_13_0_0(bg_am_dev *d, bg_am_smu_metrics *m) { return read_metrics_ext(d, &M_13_0_0, m); }
static int read_metrics_14_0_2(bg_am_dev *d, bg_am_smu_metrics *m) { return read_metrics_ext(d, &M_14_0_2, m); }

/* Descriptors per MP1 generation (am/am_ip.h): message ids, CDNA clocks and metrics, the metrics decoder. */
const struct bg_am_smu_ip bg_am_smu_v13_0_0 = {"smu_v13_0_0", IDS_13_0_0, false, read_metrics_13_0_0};
const struct bg_am_smu_ip bg_am_smu_v13_0_6 = {"smu_v13_0_6", IDS_13_0_6, true, read_metrics_13_0_6};
/* MI350 (13.0.12, 13.0.14): the 13.0.6 messages; its metrics table is not decoded yet. */
const struct bg_am_smu_ip bg_am_smu_v13_0_12 = {"smu_v13_0_12", IDS_13_0_6, true, NULL};
const struct bg_am_smu_ip bg_am_smu_v14_0_2 = {"smu_v14_0_2", IDS_14_0_2, false, read_metrics_14_0_2};
