/* am/am_smu.h: the SMU (MP1) mailbox of an AM device (tinygrad tinygrad/runtime/support/am/ip.py AM_SMU): messages per SMU version, alive check, init
 * (driver table in VRAM, all features), DPM clock levels and limits, the metrics table, mode1 reset.
 * Mailbox registers mmMP1_SMN_C2PMSG_* of mp_11_0_0 on the MP1 bases: normal 66 (msg) / 82 (param, result) /
 * 90 (response), debug 75 / 53 / 54. A response other than 1 fails naming the message and the response. */
#ifndef BG_AM_SMU_H
#define BG_AM_SMU_H

#include <stdbool.h>
#include <stdint.h>

#include "am/am_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Logical messages; ids come from the SMU version (bg_am_smu_msg_id). */
typedef enum bg_am_smu_msg {
  BG_SMU_GetSmuVersion, BG_SMU_EnableAllSmuFeatures, BG_SMU_SetDriverDramAddrHigh, BG_SMU_SetDriverDramAddrLow,
  BG_SMU_TransferTableSmu2Dram, BG_SMU_GetMetricsTable, BG_SMU_SetSoftMinByFreq, BG_SMU_SetSoftMaxByFreq,
  BG_SMU_GetDpmFreqByIndex, BG_SMU_SetPptLimit, BG_SMU_Mode1Reset, BG_SMU_GfxDriverReset, BG_SMU_NMSGS
} bg_am_smu_msg;

#define BG_SMU_TABLE_METRICS 8u
#define BG_SMU_DEBUG_MODE1_RESET 2u
/* PPCLK ids of SMU 13.0.0 / 14.0.2 */
enum { BG_SMU_PPCLK_GFXCLK = 0, BG_SMU_PPCLK_SOCCLK = 1, BG_SMU_PPCLK_UCLK = 2, BG_SMU_PPCLK_FCLK = 3 };

/* Message id of msg on this device's SMU, -1 when that SMU has none. */
int bg_am_smu_msg_id(const bg_am_dev *d, bg_am_smu_msg msg);
const char *bg_am_smu_msg_name(bg_am_smu_msg msg);
/* Send a message on the normal mailbox; *result (may be NULL) gets C2PMSG_82. timeout_ms <= 0: the device's. */
int bg_am_smu_send(bg_am_dev *d, bg_am_smu_msg msg, uint32_t param, uint32_t *result, int timeout_ms);
/* Raw debug-mailbox message (C2PMSG_75/53/54). */
int bg_am_smu_send_debug(bg_am_dev *d, uint32_t msg, uint32_t param, int timeout_ms);
/* GetSmuVersion with a 100 ms timeout; alive iff C2PMSG_90 != 0 afterwards. */
bool bg_am_smu_alive(bg_am_dev *d);
/* init_hw: SetDriverDramAddrHigh/Low(mc(bm.smu_table)), EnableAllSmuFeatures(0). */
int bg_am_smu_init(bg_am_dev *d);
/* DPM levels of PPCLK clk 0..4 (GetDpmFreqByIndex(clk<<16|0xff), then each level); cached. */
int bg_am_smu_read_clocks(bg_am_dev *d, unsigned clk, uint32_t *nlevels, const uint32_t **freqs);
/* level -1: highest, 0: lowest, n: that level (clamped); BG_SMU_CLOCKS_UNLIMITED: soft min 0 / max 0xffff.
 * RDNA: UCLK, FCLK, SOCCLK, GFXCLK; SMU 13.0.6: its UCLK 3, FCLK 4, SOCCLK 2, and (GC < 10) soft minima only. */
#define BG_SMU_CLOCKS_UNLIMITED (-1000)
int bg_am_smu_set_clocks(bg_am_dev *d, int level);
int bg_am_smu_set_power_limit(bg_am_dev *d, unsigned watts);

typedef struct bg_am_smu_metrics {
  uint32_t counter;            /* MetricsCounter */
  uint32_t curr_clock[4];      /* MHz: CurrClock[GFXCLK, SOCCLK, UCLK, FCLK] */
  uint16_t gfxclk, memclk;     /* MHz: AverageGfxclkFrequencyPreDs, AverageMemclkFrequencyPreDs */
  uint16_t gfx_activity, uclk_activity; /* % */
  uint16_t socket_power;       /* W: AverageSocketPower */
  uint16_t temp_edge, temp_hotspot, temp_mem; /* C: AvgTemperature[TEMP_EDGE, TEMP_HOTSPOT, TEMP_MEM] */
  uint16_t power_limit;        /* W: dGPU_W_MAX */
  uint8_t fan_pwm;
  uint16_t fan_rpm;
  /* SMU 13.0.6 (MI300, MetricsTableX_t, Q10 values rounded): temp_hotspot = MaxSocketTemperature, temp_mem =
   * MaxHbmTemperature, gfx/uclk_activity = SocketGfxBusy / DramBandwidthUtilization, power_limit =
   * MaxSocketPowerLimit, gfxclk = GfxclkFrequency[0]; no edge temperature, no fan. */
  bool cdna;
  uint16_t temp_vr;            /* C: MaxVrTemperature */
  uint32_t throttle_acc[5];    /* {Prochot, Ppt, SocketThm, VrThm, HbmThm}ResidencyAcc (throttling = deltas / counter) */
} bg_am_smu_metrics;

/* TransferTableSmu2Dram(table) into the driver table and copy `size` bytes out (size <= 16 KiB). */
int bg_am_smu_read_table(bg_am_dev *d, uint32_t table, void *buf, uint32_t size);
/* Read and decode SmuMetricsExternal_t (Linux smu13_driver_if_v13_0_0.h / smu14_driver_if_v14_0.h) or, on SMU 13.0.6,
 * MetricsTableX_t through GetMetricsTable (smu_v13_0_6_pmfw.h); -BG_ENOTSUP on other SMU versions. */
int bg_am_smu_read_metrics(bg_am_dev *d, bg_am_smu_metrics *m);
/* The decoder behind bg_am_smu_read_metrics, for a table already read (len bytes; tests/fuzz/fuzz_smu_metrics.c):
 * -BG_EINVAL when the layout is unknown or len is short of it. */
typedef enum bg_am_smu_layout { BG_SMU_LAYOUT_13_0_0, BG_SMU_LAYOUT_14_0_2, BG_SMU_LAYOUT_13_0_6 } bg_am_smu_layout;
int bg_am_smu_metrics_decode(bg_am_smu_layout layout, const void *table, size_t len, bg_am_smu_metrics *m);
/* Mode1 reset by the SMU (the message per MP0 version), then the device's reset delay. Loses sOS, the PSP ring,
 * the SMU features and the registers. */
int bg_am_smu_mode1_reset(bg_am_dev *d);

#ifdef __cplusplus
}
#endif
#endif
