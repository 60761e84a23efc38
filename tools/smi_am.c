/* tools/smi_am.c: `hcq_smi list`'s SMU metrics of AMD GPUs (tinygrad's am_smi: temperature, power, clocks,
 * activity from the SMU metrics table, through am/am_query.h).
 *
 * Only devices baregpu can open are read: one held by another process (its lock, platform/pci_lock.h) or bound to a
 * kernel driver is reported as such and not touched. Nor is one bound to vfio-pci: Linux resets it on a VFIO open
 * (`hcq_smi reset` does open it through VFIO, since it resets anyway). Otherwise the device is opened through am/ (which takes its
 * lock for the duration), and when sOS and the SMU answer (a previous bg-bringup or AM run booted it) the driver table
 * is pointed at the boot region (SetDriverDramAddrHigh/Low, the address every AM open computes) and the metrics
 * table read. The device is never booted or reset here: a device whose SMU is down says so.
 *
 * `hcq_smi reset` of such a device (smi_am_mode1_reset): opened the same way, then, when the SMU answers, bus
 * mastering off, SMU mode1 reset (am/am_smu.h, as am/am_boot.c does before a boot), bus mastering on, closed. sOS,
 * the PSP ring and the SMU features are gone afterwards: the next AM open / bg-bringup boots cold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_query.h"
#include "baregpu/error.h"
#include "tools/json.h"
#include "tools/smi.h"

#define AMD_VENDOR 0x1002

bool smi_driver_is_ours(const char *driver) {
  return !driver || !driver[0] || strcmp(driver, "vfio-pci") == 0;
}

static int fail(smi_am_metrics *m, smi_am_state st, const char *msg) {
  m->state = st;
  snprintf(m->msg, sizeof(m->msg), "%s", msg);
  return -1;
}

int smi_am_metrics_read(const char *bdf, const smi_owner *owner, const char *driver, smi_am_metrics *m) {
  memset(m, 0, sizeof(*m));
  if (owner && owner->known && owner->pid != 0) {
    m->state = SMI_AM_IN_USE;
    m->pid = owner->pid;
    if (owner->pid > 0) snprintf(m->msg, sizeof(m->msg), "in use by pid %d", (int)owner->pid);
    else snprintf(m->msg, sizeof(m->msg), "in use by a process that has not written its pid yet");
    return -1;
  }
  if (driver && strcmp(driver, "vfio-pci") == 0) {
    /* Linux resets a vfio-pci function when its device fd is first opened and when it is last closed
     * (vfio_pci_core_enable/disable: pci_try_reset_function): reading metrics would reset the GPU. */
    m->state = SMI_AM_BOUND;
    snprintf(m->driver, sizeof(m->driver), "%s", driver);
    snprintf(m->msg, sizeof(m->msg),
             "bound to vfio-pci: not opened, since a VFIO open resets the device; DEV=PCI+AMD uses it through VFIO");
    return -1;
  }
  if (driver && driver[0]) {
    m->state = SMI_AM_BOUND;
    snprintf(m->driver, sizeof(m->driver), "%s", driver);
    snprintf(m->msg, sizeof(m->msg), "bound to the kernel driver %s (hcq_smi unbind %s)", driver, bdf);
    return -1;
  }
  bg_am_query_open oo = {.timeout_ms = 1000, .settle_ms = -1, .reset_delay_ms = -1};
  bg_am_dev *d = NULL;
  int e = bg_am_query_dev_open(bdf, &oo, &d);
  if (e < 0) {
    /* Locked between the scan and the open, or bound: the library's message names the pid / driver. */
    smi_am_state st = SMI_AM_ERROR;
    if (e == -BG_EBUSY && strstr(bg_last_error(), "in use by pid")) st = SMI_AM_IN_USE;
    return fail(m, st, bg_last_error());
  }
  int ret = smi_am_metrics_dev(d, m);
  bg_am_query_dev_close(d);
  return ret;
}

int smi_am_metrics_dev(bg_am_dev *d, smi_am_metrics *m) {
  bg_am_query_info info;
  bg_am_query_info_get(d, &info);
  snprintf(m->arch, sizeof(m->arch), "%s", info.arch);
  m->vram_size = info.vram_size;
  /* The SMU answers from power-on, but its tables only once booted: sOS running (PSP booted by AM or amdgpu)
   * is the sign the SMU firmware was loaded and its features enabled. */
  if (!bg_am_query_sos_alive(d) || !bg_am_query_smu_alive(d))
    return fail(m, SMI_AM_DOWN, "SMU not running (device not booted; bg-bringup --dev BDF boots it)");
  bg_am_query_metrics sm;
  if (bg_am_query_metrics_read(d, true, &sm) < 0) return fail(m, SMI_AM_ERROR, bg_last_error());
  m->state = SMI_AM_OK;
  m->temp_edge = sm.temp_edge;
  m->temp_hotspot = sm.temp_hotspot;
  m->temp_mem = sm.temp_mem;
  m->power_w = sm.power_w;
  m->power_limit_w = sm.power_limit_w;
  m->gfxclk = sm.gfxclk;
  m->socclk = sm.socclk;
  m->uclk = sm.uclk;
  m->fclk = sm.fclk;
  m->gfx_activity = sm.gfx_activity;
  m->mem_activity = sm.mem_activity;
  m->fan_rpm = sm.fan_rpm;
  m->cdna = sm.cdna;
  return 0;
}

int smi_am_mode1_reset(const char *bdf, char *smu_ver, size_t nver, char *err, size_t nerr) {
  if (nver) smu_ver[0] = '\0';
  if (nerr) err[0] = '\0';
  /* reset_delay_ms 0: the library's delay after the reset (500 ms, as tinygrad) */
  bg_am_query_open oo = {.timeout_ms = 1000, .settle_ms = -1, .reset_delay_ms = 0};
  bg_am_dev *d = NULL;
  int e = bg_am_query_dev_open(bdf, &oo, &d);
  if (e < 0) {
    snprintf(err, nerr, "%s", bg_last_error());
    /* Locked or bound since the scan: a failure. Anything else (not a chip am/ knows, no register BAR, no
     * firmware): baregpu cannot open it, the caller falls back to a function reset. */
    if (e == -BG_EBUSY || e == -BG_EPERM) return e;
    return SMI_AM_RESET_NOT_OPENED;
  }
  bg_am_query_smu_version(d, smu_ver, nver);
  if (!bg_am_query_smu_alive(d)) {
    snprintf(err, nerr,
             "%s: the SMU (%s) is not answering, no mode1 reset possible; use a PCI function reset: hcq_smi reset "
             "--function %s",
             bdf, smu_ver, bdf);
    bg_am_query_dev_close(d);
    return -BG_ETIMEDOUT;
  }
  e = bg_am_query_bus_master(d, false);
  if (e >= 0) e = bg_am_query_mode1_reset(d);
  if (e < 0)
    snprintf(err, nerr, "%s (or use a PCI function reset: hcq_smi reset --function %s)", bg_last_error(), bdf);
  int e2 = bg_am_query_bus_master(d, true);
  if (e >= 0 && e2 < 0) {
    e = e2;
    snprintf(err, nerr, "%s", bg_last_error());
  }
  bg_am_query_dev_close(d);
  return e < 0 ? e : 0;
}

void smi_am_collect(smi_inventory *inv) {
  inv->am = NULL;
  if (!inv->npci) return;
  inv->am = calloc(inv->npci, sizeof(*inv->am));
  if (!inv->am) return;
  for (size_t i = 0; i < inv->npci; i++) {
    const bg_pci_info *p = &inv->pci[i];
    if (p->vendor != AMD_VENDOR || !p->is_gpu) continue; /* state stays SMI_AM_NONE */
    smi_am_metrics_read(p->bdf, inv->pci_owner ? &inv->pci_owner[i] : NULL, p->driver, &inv->am[i]);
  }
}

void smi_am_text(const smi_am_metrics *m, FILE *f) {
  switch (m->state) {
  case SMI_AM_NONE: return;
  case SMI_AM_OK:
    /* CDNA (MI300) has no edge sensor and no fan: n/a rather than a 0 that reads as a reading */
    if (m->cdna) fprintf(f, "      temp       edge n/a, hotspot %u C, mem %u C\n", m->temp_hotspot, m->temp_mem);
    else fprintf(f, "      temp       edge %u C, hotspot %u C, mem %u C\n", m->temp_edge, m->temp_hotspot, m->temp_mem);
    fprintf(f, "      power      %u W (limit %u W)\n", m->power_w, m->power_limit_w);
    fprintf(f, "      clocks     gfx %u MHz, soc %u MHz, mem %u MHz, fabric %u MHz\n", m->gfxclk, m->socclk, m->uclk,
            m->fclk);
    if (m->cdna) fprintf(f, "      activity   gfx %u%%, mem %u%%; fan n/a\n", m->gfx_activity, m->mem_activity);
    else fprintf(f, "      activity   gfx %u%%, mem %u%%; fan %u rpm\n", m->gfx_activity, m->mem_activity, m->fan_rpm);
    return;
  case SMI_AM_IN_USE:
  case SMI_AM_BOUND: fprintf(f, "      metrics    not read: %s\n", m->msg); return;
  case SMI_AM_DOWN:
  case SMI_AM_ERROR: fprintf(f, "      metrics    unavailable: %s\n", m->msg); return;
  }
}

static const char *state_name(smi_am_state s) {
  switch (s) {
  case SMI_AM_OK: return "ok";
  case SMI_AM_IN_USE: return "in_use";
  case SMI_AM_BOUND: return "bound";
  case SMI_AM_DOWN: return "smu_down";
  case SMI_AM_ERROR: return "error";
  case SMI_AM_NONE: break;
  }
  return "none";
}

void smi_am_json(struct jw *w, const smi_am_metrics *m) {
  jw_key(w, "metrics");
  if (m->state == SMI_AM_NONE) {
    jw_null(w);
    return;
  }
  jw_obj_begin(w);
  jw_kstr(w, "state", state_name(m->state));
  jw_kstr(w, "message", m->msg[0] ? m->msg : NULL);
  jw_kstr(w, "arch", m->arch[0] ? m->arch : NULL);
  if (m->state == SMI_AM_OK) {
    jw_key(w, "temp_edge_c");
    if (m->cdna) jw_null(w);
    else jw_uint(w, m->temp_edge);
    jw_kuint(w, "temp_hotspot_c", m->temp_hotspot);
    jw_kuint(w, "temp_mem_c", m->temp_mem);
    jw_kuint(w, "power_w", m->power_w);
    jw_kuint(w, "power_limit_w", m->power_limit_w);
    jw_kuint(w, "gfxclk_mhz", m->gfxclk);
    jw_kuint(w, "socclk_mhz", m->socclk);
    jw_kuint(w, "uclk_mhz", m->uclk);
    jw_kuint(w, "fclk_mhz", m->fclk);
    jw_kuint(w, "gfx_activity_pct", m->gfx_activity);
    jw_kuint(w, "mem_activity_pct", m->mem_activity);
    jw_key(w, "fan_rpm");
    if (m->cdna) jw_null(w);
    else jw_uint(w, m->fan_rpm);
  }
  jw_obj_end(w);
}
