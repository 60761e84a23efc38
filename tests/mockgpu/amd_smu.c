/* tests/mockgpu/amd_smu.c: the emulated SMU mailbox (tinygrad tinygrad/runtime/support/am/ip.py AM_SMU). Normal mailbox: C2PMSG_90 response,
 * C2PMSG_82 parameter/result, C2PMSG_66 message; debug mailbox: C2PMSG_54 / 53 / 75. Message ids are
 * Linux's smu_v13_0_0_ppsmc.h, smu_v14_0_2_ppsmc.h and smu_v13_0_6_ppsmc.h; results are the PPSMC_Result
 * codes (OK 0x1, Failed 0xFF, UnknownCmd 0xFE, CmdRejectedPrereq 0xFD, CmdRejectedBusy 0xFC).
 *
 * Metrics (TransferTableSmu2Dram(SMU_TABLE_SMU_METRICS = 8)) are written into the driver table as
 * Linux's SmuMetricsExternal_t: smu13_driver_if_v13_0_0.h (392 bytes) for MP1 13.0.0 and
 * smu14_driver_if_v14_0.h (412 bytes) for MP1 14.0.2 (Linux 6.12; offsets also in tinygrad extra/amdpci/am_smi.py). MP1 13.0.6 answers
 * GetMetricsTable with MetricsTableX_t (smu_v13_0_6_pmfw.h, Q10 values). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mock_shm.h"
#include "amd_internal.h"

enum smu_op {
  OP_NONE, OP_VERSION, OP_ENABLE, OP_DRAM_HI, OP_DRAM_LO, OP_TRANSFER, OP_GET_METRICS, OP_SOFT_MIN, OP_SOFT_MAX,
  OP_DPM_FREQ, OP_PPT, OP_MODE1, OP_GFX_RESET, OP_COUNT
};

static const char *const OP_NAMES[OP_COUNT] = {
  "?", "GetSmuVersion", "EnableAllSmuFeatures", "SetDriverDramAddrHigh", "SetDriverDramAddrLow",
  "TransferTableSmu2Dram", "GetMetricsTable", "SetSoftMinByFreq", "SetSoftMaxByFreq", "GetDpmFreqByIndex",
  "SetPptLimit", "Mode1Reset", "GfxDriverReset",
};

/* message id of each op per message set (0: not in the set) */
static const uint8_t IDS_13_0_0[OP_COUNT] = {0, 0x2, 0x6, 0xE, 0xF, 0x12, 0, 0x19, 0x1A, 0x1F, 0x32, 0x2F, 0};
static const uint8_t IDS_14_0_2[OP_COUNT] = {0, 0x2, 0x6, 0xE, 0xF, 0x12, 0, 0x19, 0x1A, 0x1F, 0x32, 0, 0};
static const uint8_t IDS_13_0_6[OP_COUNT] = {0, 0x2, 0x5, 0xD, 0xE, 0, 0x9, 0x13, 0x14, 0x17, 0x18, 0, 0x3};
#define DEBUGSMC_MSG_MODE1RESET 2u
#define DRIVER_TABLE_MIN 0x1000u  /* the metrics table must fit; the driver allocates 16 KiB */
#define PPT_MAX_W 450u

static const uint8_t *ids(const mock_amd *g) {
  if (g->ip.mp1.maj == 14) return IDS_14_0_2;
  if (g->ip.mp1.maj == 13 && g->ip.mp1.rev == 6) return IDS_13_0_6;
  return IDS_13_0_0;
}

static enum smu_op op_of(const mock_amd *g, uint32_t msg) {
  const uint8_t *t = ids(g);
  for (int i = 1; i < OP_COUNT; i++)
    if (t[i] && t[i] == msg) return (enum smu_op)i;
  return OP_NONE;
}

uint32_t amd_smu_version_of(const mock_amd *g) {
  if (g->ip.mp1.maj == 14) return 0x00681e00u; /* 104.30.0 */
  if (g->ip.mp1.rev == 6) return 0x00555a00u;  /* 85.90.0 */
  return 0x004e4600u;                          /* 78.70.0 */
}

/* DPM levels (MHz) per PPCLK id. 13.0.0/14.0.2: GFXCLK 0, SOCCLK 1, UCLK 2, FCLK 3; 13.0.6: SOCCLK 2,
 * UCLK 3, FCLK 4 (no GFXCLK DPM by the driver; id 0 kept as GFXCLK). */
static const uint16_t DPM_RDNA[AMD_NCLK][MOCK_SMU_DPM_LEVELS] = {{500, 2500}, {300, 1200}, {96, 1250}, {400, 1900}, {0, 0}};
static const uint16_t DPM_CDNA[AMD_NCLK][MOCK_SMU_DPM_LEVELS] = {{500, 2100}, {0, 0}, {300, 1143}, {900, 1300}, {1200, 2000}};

uint32_t mock_amd_smu_dpm_freq(const mock_amd *g, unsigned clk, unsigned level) {
  if (clk >= AMD_NCLK || level >= MOCK_SMU_DPM_LEVELS) return 0;
  return (g->ip.mp1.maj == 13 && g->ip.mp1.rev == 6 ? DPM_CDNA : DPM_RDNA)[clk][level];
}

bool mock_amd_metrics_layout_of(mock_amd_chip chip, mock_amd_metrics_layout *o) {
  memset(o, 0, sizeof(*o));
  if (chip == MOCK_AMD_GFX11) { /* smu13_driver_if_v13_0_0.h: PPCLK_COUNT 13, SVI_PLANE_COUNT 5, TEMP_COUNT 13 */
    *o = (mock_amd_metrics_layout){.size = 392, .curr_clock = 0, .nclocks = 13, .gfxclk_pre_ds = 54,
      .gfxclk_post_ds = 56, .fclk_pre_ds = 58, .fclk_post_ds = 60, .memclk_pre_ds = 62, .memclk_post_ds = 64,
      .dgpu_w_max = 76, .metrics_counter = 80, .avg_voltage = 84, .nvoltage = 5, .gfx_activity = 104,
      .uclk_activity = 106, .socket_power = 116, .avg_temperature = 120, .ntemps = 13, .fan_pwm = 150,
      .fan_rpm = 152, .throttling = 154, .nthrottlers = 22};
    return true;
  }
  if (chip == MOCK_AMD_MOCK) { /* smu14_driver_if_v14_0.h: PPCLK_COUNT 11, SVI_PLANE_COUNT 4, TEMP_COUNT 12 */
    *o = (mock_amd_metrics_layout){.size = 412, .curr_clock = 0, .nclocks = 11, .gfxclk_pre_ds = 46,
      .gfxclk_post_ds = 48, .fclk_pre_ds = 50, .fclk_post_ds = 52, .memclk_pre_ds = 54, .memclk_post_ds = 56,
      .dgpu_w_max = 68, .metrics_counter = 104, .avg_voltage = 108, .nvoltage = 4, .gfx_activity = 124,
      .uclk_activity = 126, .socket_power = 136, .avg_temperature = 140, .ntemps = 12, .fan_pwm = 168,
      .fan_rpm = 170, .throttling = 172, .nthrottlers = 21};
    return true;
  }
  return false;
}

static void put16(uint8_t *p, uint32_t off, uint32_t v) {
  uint16_t x = (uint16_t)v;
  memcpy(p + off, &x, 2);
}
static void put32(uint8_t *p, uint32_t off, uint32_t v) { memcpy(p + off, &v, 4); }

/* Current clock of a PPCLK: the highest level within the soft limits. */
static uint32_t cur_clock(const mock_amd *g, unsigned clk) {
  uint32_t f = 0;
  for (unsigned l = 0; l < MOCK_SMU_DPM_LEVELS; l++) {
    uint32_t v = mock_amd_smu_dpm_freq(g, clk, l);
    if (v >= g->soft_min[clk] && v <= g->soft_max[clk]) f = v;
  }
  return f ? f : mock_amd_smu_dpm_freq(g, clk, 0);
}

static bool write_metrics(mock_amd *g, uint64_t pa) {
  mock_amd_metrics_layout L;
  if (!mock_amd_metrics_layout_of(g->cfg.chip, &L)) return false;
  uint8_t *p = amd_vram_at(g, pa, L.size);
  if (!p) return false;
  uint32_t n = ++g->metrics_counter;
  memset(p, 0, L.size);
  for (unsigned c = 0; c < 4; c++) put32(p, L.curr_clock + 4 * c, cur_clock(g, c));
  uint32_t gfx = cur_clock(g, 0), fclk = cur_clock(g, 3), mclk = cur_clock(g, 2);
  put16(p, L.gfxclk_pre_ds, gfx), put16(p, L.gfxclk_post_ds, gfx - gfx / 10);
  put16(p, L.fclk_pre_ds, fclk), put16(p, L.fclk_post_ds, fclk);
  put16(p, L.memclk_pre_ds, mclk), put16(p, L.memclk_post_ds, mclk);
  put16(p, L.dgpu_w_max, g->ppt_limit ? g->ppt_limit : 300);
  put32(p, L.metrics_counter, n);
  for (unsigned i = 0; i < L.nvoltage; i++) put16(p, L.avg_voltage + 2 * i, 700 + 50 * i + n % 10);
  put16(p, L.gfx_activity, (n * 7) % 101);
  put16(p, L.uclk_activity, (n * 3) % 101);
  put16(p, L.socket_power, 30 + (n * 11) % 200);
  for (unsigned i = 0; i < L.ntemps && i < 5; i++) put16(p, L.avg_temperature + 2 * i, 35 + 3 * i + n % 20);
  p[L.fan_pwm] = (uint8_t)(20 + n % 60);
  put16(p, L.fan_rpm, 800 + (n * 37) % 1500);
  return true;
}

/* MetricsTableX_t of SMU 13.0.6 (Linux smu_v13_0_6_pmfw.h, 2008 bytes), answered to GetMetricsTable: u32 fields,
 * Q10 fixed point (value << 10) except AccumulationCounter. */
enum {
  M6_SIZE = 2008, M6_COUNTER = 0, M6_MAX_SOCKET_TEMP = 4, M6_MAX_VR_TEMP = 8, M6_MAX_HBM_TEMP = 12,
  M6_MAX_SOCKET_POWER_LIMIT = 44, M6_SOCKET_POWER = 48, M6_FCLK = 108, M6_UCLK = 112, M6_SOCCLK = 116,
  M6_SOCKET_GFX_BUSY = 1272, M6_DRAM_BW_UTIL = 1276, M6_PROCHOT_ACC = 1348, M6_PPT_ACC = 1352,
  M6_SOCKET_THM_ACC = 1356, M6_VR_THM_ACC = 1360, M6_HBM_THM_ACC = 1364, M6_GFXCLK = 1372, M6_NGFXCLK = 8,
};

static bool write_metrics_13_0_6(mock_amd *g, uint64_t pa) {
  uint8_t *p = amd_vram_at(g, pa, M6_SIZE);
  if (!p) return false;
  uint32_t n = ++g->metrics_counter;
  memset(p, 0, M6_SIZE);
  put32(p, M6_COUNTER, n);
  put32(p, M6_MAX_SOCKET_TEMP, (45 + n % 20) << 10);
  put32(p, M6_MAX_VR_TEMP, (40 + n % 15) << 10);
  put32(p, M6_MAX_HBM_TEMP, (42 + n % 18) << 10);
  put32(p, M6_MAX_SOCKET_POWER_LIMIT, (g->ppt_limit ? g->ppt_limit : 750) << 10);
  put32(p, M6_SOCKET_POWER, (150 + (n * 13) % 400) << 10);
  put32(p, M6_FCLK, cur_clock(g, 4) << 10);
  put32(p, M6_UCLK, cur_clock(g, 3) << 10);
  put32(p, M6_SOCCLK, cur_clock(g, 2) << 10);
  for (unsigned i = 0; i < M6_NGFXCLK; i++) put32(p, M6_GFXCLK + 4 * i, cur_clock(g, 0) << 10);
  put32(p, M6_SOCKET_GFX_BUSY, ((n * 7) % 101) << 10);
  put32(p, M6_DRAM_BW_UTIL, ((n * 3) % 101) << 10);
  static const uint32_t acc[5] = {M6_PROCHOT_ACC, M6_PPT_ACC, M6_SOCKET_THM_ACC, M6_VR_THM_ACC, M6_HBM_THM_ACC};
  for (unsigned i = 0; i < 5; i++) put32(p, acc[i], n * (i + 1));
  return true;
}

static void record(mock_amd *g, const mock_amd_smu_msg *m) {
  if (g->nmsgs == g->capmsgs) {
    size_t cap = g->capmsgs ? g->capmsgs * 2 : 64;
    mock_amd_smu_msg *n = mock_shm_realloc(g->msgs, cap * sizeof(*n));
    if (!n) return;
    g->msgs = n;
    g->capmsgs = cap;
  }
  g->msgs[g->nmsgs++] = *m;
}

/* A real mode1 reset: every IP block back to its power-on state (PSP without sOS, SMU idle, GC scratch
 * registers and the whole register file cleared). VRAM keeps its contents. */
static void mode1_reset(mock_amd *g) {
  amd_asic_reset(g);
  g->mode1_resets++;
}

static bool need_features(mock_amd *g, enum smu_op op, uint32_t *resp) {
  if (g->features) return true;
  amd_fail(g, "SMU %s before EnableAllSmuFeatures", OP_NAMES[op]);
  *resp = MOCK_SMU_RESULT_PREREQ;
  return false;
}

static bool clk_ok(mock_amd *g, enum smu_op op, unsigned clk, uint32_t *resp) {
  if (clk < AMD_NCLK && mock_amd_smu_dpm_freq(g, clk, 0)) return true;
  amd_fail(g, "SMU %s: unknown clock id %u", OP_NAMES[op], clk);
  *resp = MOCK_SMU_RESULT_FAILED;
  return false;
}

/* Execute one normal-mailbox message; returns the response, *result the C2PMSG_82 value (when *has). */
static uint32_t execute(mock_amd *g, uint32_t msg, uint32_t param, uint32_t *result, bool *has) {
  enum smu_op op = op_of(g, msg);
  uint32_t resp = MOCK_SMU_RESULT_OK;
  *has = false;
  switch (op) {
  case OP_VERSION:
    *result = amd_smu_version_of(g), *has = true;
    break;
  case OP_ENABLE:
    if (g->ip.gc.maj >= 11 && !mock_amd_fw_loaded(g, BG_GFX_FW_SMU)) {
      amd_fail(g, "SMU EnableAllSmuFeatures before the PSP loaded the SMU firmware");
      resp = MOCK_SMU_RESULT_PREREQ;
    } else {
      g->features = true;
    }
    break;
  case OP_DRAM_HI:
    g->drv_hi = param, g->drv_hi_set = true, g->drv_set = false;
    break;
  case OP_DRAM_LO: {
    uint64_t a = (uint64_t)g->drv_hi << 32 | param;
    if (!g->drv_hi_set) {
      amd_fail(g, "SMU SetDriverDramAddrLow before SetDriverDramAddrHigh");
      resp = MOCK_SMU_RESULT_PREREQ;
    } else if ((a & 0xfff) || !amd_vram_at(g, a, DRIVER_TABLE_MIN)) {
      amd_fail(g, "SMU driver table 0x%" PRIx64 " must be a 4 KiB-aligned VRAM buffer", a);
      resp = MOCK_SMU_RESULT_FAILED;
    } else {
      g->drv_lo = param, g->drv_set = true;
    }
    break;
  }
  case OP_TRANSFER: {
    uint32_t table = param & 0xffff;
    if (!need_features(g, op, &resp)) break;
    if (!g->drv_set) {
      amd_fail(g, "SMU TransferTableSmu2Dram before the driver table address was set");
      resp = MOCK_SMU_RESULT_PREREQ;
    } else if (table != MOCK_SMU_TABLE_METRICS) {
      amd_fail(g, "SMU TransferTableSmu2Dram: table %u is not modelled (only SMU_TABLE_SMU_METRICS = 8)", table);
      resp = MOCK_SMU_RESULT_FAILED;
    } else if (!write_metrics(g, (uint64_t)g->drv_hi << 32 | g->drv_lo)) {
      amd_fail(g, "SMU TransferTableSmu2Dram: metrics of this SMU are not modelled");
      resp = MOCK_SMU_RESULT_FAILED;
    }
    break;
  }
  case OP_GET_METRICS:
    if (!need_features(g, op, &resp)) break;
    if (!g->drv_set) {
      amd_fail(g, "SMU GetMetricsTable before the driver table address was set");
      resp = MOCK_SMU_RESULT_PREREQ;
    } else if (!write_metrics_13_0_6(g, (uint64_t)g->drv_hi << 32 | g->drv_lo)) {
      amd_fail(g, "SMU GetMetricsTable: the 0x%x-byte MetricsTable does not fit the driver table", (unsigned)M6_SIZE);
      resp = MOCK_SMU_RESULT_FAILED;
    }
    break;
  case OP_SOFT_MIN:
  case OP_SOFT_MAX: {
    unsigned clk = param >> 16;
    if (!need_features(g, op, &resp) || !clk_ok(g, op, clk, &resp)) break;
    if (op == OP_SOFT_MIN) g->soft_min[clk] = param & 0xffff;
    else g->soft_max[clk] = param & 0xffff;
    break;
  }
  case OP_DPM_FREQ: {
    unsigned clk = param >> 16, idx = param & 0xffff;
    if (!need_features(g, op, &resp) || !clk_ok(g, op, clk, &resp)) break;
    if (idx == 0xff) {
      *result = MOCK_SMU_DPM_LEVELS, *has = true;
    } else if (idx < MOCK_SMU_DPM_LEVELS) {
      *result = mock_amd_smu_dpm_freq(g, clk, idx), *has = true;
    } else {
      amd_fail(g, "SMU GetDpmFreqByIndex: level %u of clock %u does not exist (%u levels)", idx, clk, MOCK_SMU_DPM_LEVELS);
      resp = MOCK_SMU_RESULT_FAILED;
    }
    break;
  }
  case OP_PPT:
    if (!need_features(g, op, &resp)) break;
    if (param == 0) {
      amd_fail(g, "SMU SetPptLimit(0)");
      resp = MOCK_SMU_RESULT_FAILED;
    } else {
      g->ppt_limit = param > PPT_MAX_W ? PPT_MAX_W : param;
    }
    break;
  case OP_MODE1: mode1_reset(g); break;
  case OP_GFX_RESET:
    if (param != 1) {
      amd_fail(g, "SMU GfxDriverReset(%u): only mode 1 is modelled", param);
      resp = MOCK_SMU_RESULT_FAILED;
    } else {
      mode1_reset(g);
    }
    break;
  default:
    amd_fail(g, "SMU: unknown message 0x%x (param 0x%x)", msg, param);
    resp = MOCK_SMU_RESULT_UNKNOWN;
    break;
  }
  return resp;
}

static void send(mock_amd *g, bool debug, uint32_t msg) {
  uint32_t resp_reg = debug ? g->r.smu_54 : g->r.smu_90, param_reg = debug ? g->r.smu_53 : g->r.smu_82;
  bool *pending = debug ? &g->smu_debug_pending : &g->smu_pending;
  uint32_t param = amd_get(g, param_reg);
  mock_amd_smu_msg rec = {.debug = debug, .msg = msg, .param = param};
  if (*pending) {
    amd_fail(g, "SMU %s message 0x%x sent while the previous one is pending (its response was never read)",
             debug ? "debug" : "normal", msg);
    rec.resp = MOCK_SMU_RESULT_BUSY;
    amd_set(g, resp_reg, rec.resp);
    record(g, &rec);
    return;
  }
  if (amd_get(g, resp_reg) != 0)
    amd_fail(g, "SMU %s message 0x%x sent without clearing the response register first", debug ? "debug" : "normal", msg);
  uint32_t result = 0;
  bool has = false;
  if (debug) {
    bool mode1 = msg == DEBUGSMC_MSG_MODE1RESET && (g->ip.mp0.maj >= 14 || (g->ip.mp0.maj == 13 && g->ip.mp0.rev != 6));
    if (mode1) {
      mode1_reset(g);
      rec.resp = MOCK_SMU_RESULT_OK;
    } else {
      amd_fail(g, "SMU: unknown debug message 0x%x (param 0x%x)", msg, param);
      rec.resp = MOCK_SMU_RESULT_UNKNOWN;
    }
  } else {
    rec.resp = execute(g, msg, param, &result, &has);
  }
  if (has) amd_set(g, param_reg, result);
  rec.result = amd_get(g, param_reg);
  amd_set(g, resp_reg, rec.resp);
  *pending = true;
  record(g, &rec);
}

uint32_t amd_smu_read(mock_amd *g, int kind, uint32_t addr) {
  uint32_t v = amd_get(g, addr);
  if (kind == AMD_H_SMU_90 && v) g->smu_pending = false;
  if (kind == AMD_H_SMU_54 && v) g->smu_debug_pending = false;
  return v;
}

void amd_smu_write(mock_amd *g, int kind, uint32_t addr, uint32_t v) {
  switch (kind) {
  case AMD_H_SMU_66: send(g, false, v); return;
  case AMD_H_SMU_75: send(g, true, v); return;
  default: amd_set(g, addr, v); return; /* 90/54: the driver clears the response */
  }
}

void amd_smu_reset(mock_amd *g) {
  g->smu_pending = g->smu_debug_pending = g->features = false;
  g->drv_hi = g->drv_lo = 0;
  g->drv_hi_set = g->drv_set = false;
  g->ppt_limit = 0;
  for (unsigned c = 0; c < AMD_NCLK; c++) g->soft_min[c] = 0, g->soft_max[c] = 0xffff;
  /* the SMU firmware is up and idle after reset: response registers read OK */
  amd_set(g, g->r.smu_90, MOCK_SMU_RESULT_OK);
  amd_set(g, g->r.smu_54, MOCK_SMU_RESULT_OK);
}

void amd_smu_free(mock_amd *g) {
  mock_shm_free(g->msgs);
  g->msgs = NULL;
  g->nmsgs = g->capmsgs = 0;
}

size_t mock_amd_smu_nmsgs(const mock_amd *g) { return g->nmsgs; }
const mock_amd_smu_msg *mock_amd_smu_msg_at(const mock_amd *g, size_t i) { return i < g->nmsgs ? &g->msgs[i] : NULL; }
uint32_t mock_amd_smu_version(const mock_amd *g) { return amd_smu_version_of(g); }
bool mock_amd_smu_features(const mock_amd *g) { return g->features; }
uint64_t mock_amd_smu_driver_table(const mock_amd *g) {
  return g->drv_set ? (uint64_t)g->drv_hi << 32 | g->drv_lo : 0;
}
uint32_t mock_amd_smu_ppt_limit(const mock_amd *g) { return g->ppt_limit; }
void mock_amd_smu_soft_limits(const mock_amd *g, unsigned clk, uint32_t *min, uint32_t *max) {
  *min = clk < AMD_NCLK ? g->soft_min[clk] : 0;
  *max = clk < AMD_NCLK ? g->soft_max[clk] : 0xffff;
}
unsigned mock_amd_mode1_resets(const mock_amd *g) { return g->mode1_resets; }
