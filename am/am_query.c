/* am/am_query.c: the query interface of am/am_query.h over the driver's state (am_dev.h, am_boot.h, am_smu.h,
 * am_hcq.h): values copied out, so programs above the library never dereference the device. */
#include "am/am_query.h"

#include <stdio.h>
#include <string.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_hcq.h"
#include "am/am_psp.h"
#include "am/am_smu.h"

int bg_am_query_dev_open(const char *bdf, const bg_am_query_open *o, bg_am_dev **out) {
  bg_am_open_opts oo = {.fw_dir = o->fw_dir, .timeout_ms = o->timeout_ms, .settle_ms = o->settle_ms,
                        .reset_delay_ms = o->reset_delay_ms};
  return bg_am_dev_open(bdf, &oo, out);
}

int bg_am_query_dev_open_pci(bg_pci_dev *pci, const bg_am_query_open *o, bg_am_dev **out) {
  bg_am_open_opts oo = {.fw_dir = o->fw_dir, .timeout_ms = o->timeout_ms, .settle_ms = o->settle_ms,
                        .reset_delay_ms = o->reset_delay_ms};
  return bg_am_dev_open_pci(pci, &oo, out);
}

void bg_am_query_dev_close(bg_am_dev *d) { bg_am_dev_close(d); }

double bg_am_query_now_ms(void) { return bg_am_now_ms(); }

static bg_am_query_ip ip(bg_am_ipver v) { return (bg_am_query_ip){v.maj, v.min, v.rev}; }

void bg_am_query_info_get(const bg_am_dev *d, bg_am_query_info *out) {
  memset(out, 0, sizeof(*out));
  out->device_id = d->device_id;
  out->chip = d->chip ? d->chip->chip : NULL;
  out->product = d->chip ? d->chip->product : NULL;
  out->arch = d->disc.arch;
  out->vram_size = d->vram_size;
  out->bar0_size = d->bar0_size;
  out->gc = ip(d->gc);
  out->mp0 = ip(d->mp0);
  out->mp1 = ip(d->mp1);
  out->sdma0 = ip(d->fw->ip.sdma0);
  out->fw_dir = d->fw->dir;
  out->fw_descs = d->fw->ndescs;
  for (int i = 0; i < BG_AM_FW_NFILES && out->nfw < BG_AM_QUERY_MAX_FW; i++) {
    const bg_am_fw_file *ff = &d->fw->files[i];
    if (ff->present) out->fw[out->nfw++] = (bg_am_query_fw){ff->name, ff->len};
  }
  out->nrreg = d->nrreg;
  out->nwreg = d->nwreg;
}

int bg_am_query_boot_run(bg_am_dev *d, bool force_reset, bg_am_query_boot *rep) {
  bg_am_boot_opts bo = {.force_reset = force_reset};
  bg_am_boot_report r;
  memset(&r, 0, sizeof(r));
  int e = bg_am_boot(d, &bo, &r);
  *rep = (bg_am_query_boot){.warm = r.warm, .mode1_reset = r.mode1_reset, .bl_components = r.bl_components,
                            .ring_cmds = r.ring_cmds, .magic = BG_AM_BOOT_MAGIC, .ms_reset = r.ms_reset,
                            .ms_soc = r.ms_soc, .ms_gmc = r.ms_gmc, .ms_ih = r.ms_ih, .ms_bootloader = r.ms_bootloader,
                            .ms_ring = r.ms_ring, .ms_fw = r.ms_fw, .ms_smu = r.ms_smu, .ms_gfx = r.ms_gfx,
                            .ms_sdma = r.ms_sdma};
  return e;
}

bool bg_am_query_sos_alive(bg_am_dev *d) { return bg_am_psp_sos_alive(d); }
bool bg_am_query_smu_alive(bg_am_dev *d) { return bg_am_smu_alive(d); }

int bg_am_query_metrics_read(bg_am_dev *d, bool point_table, bg_am_query_metrics *out) {
  memset(out, 0, sizeof(*out));
  if (point_table) {
    uint64_t mc = bg_am_mc(d, d->bm.smu_table);
    int e = bg_am_smu_send(d, BG_SMU_SetDriverDramAddrHigh, (uint32_t)(mc >> 32), NULL, 0);
    if (e >= 0) e = bg_am_smu_send(d, BG_SMU_SetDriverDramAddrLow, (uint32_t)mc, NULL, 0);
    if (e < 0) return e;
  }
  bg_am_smu_metrics sm;
  int e = bg_am_smu_read_metrics(d, &sm);
  if (e < 0) return e;
  *out = (bg_am_query_metrics){
    .temp_edge = sm.temp_edge, .temp_hotspot = sm.temp_hotspot, .temp_mem = sm.temp_mem,
    .power_w = sm.socket_power, .power_limit_w = sm.power_limit, .gfxclk = sm.gfxclk,
    .socclk = sm.curr_clock[BG_SMU_PPCLK_SOCCLK], .uclk = sm.curr_clock[BG_SMU_PPCLK_UCLK],
    .fclk = sm.curr_clock[BG_SMU_PPCLK_FCLK], .gfx_activity = sm.gfx_activity, .mem_activity = sm.uclk_activity,
    .fan_rpm = sm.fan_rpm, .cdna = sm.cdna};
  return 0;
}

void bg_am_query_smu_version(const bg_am_dev *d, char *buf, size_t n) {
  snprintf(buf, n, "%u.%u.%u", d->mp1.maj, d->mp1.min, d->mp1.rev);
}

int bg_am_query_bus_master(bg_am_dev *d, bool on) { return bg_am_boot_bus_master(d, on); }
int bg_am_query_mode1_reset(bg_am_dev *d) { return bg_am_smu_mode1_reset(d); }

/* An AMD HCQ device's priv is its am_hcq (am_hcq.c bg_am_hcq_attach); "AMD" is am/'s kind alone. */
static am_hcq *hcq_of(bg_dev *dev) {
  return dev && dev->ops && dev->ops->kind && strcmp(dev->ops->kind, "AMD") == 0 ? dev->priv : NULL;
}

bg_am_dev *bg_am_query_of(bg_dev *dev) {
  am_hcq *h = hcq_of(dev);
  return h ? h->d : NULL;
}

bool bg_am_query_is_usb(bg_dev *dev) {
  const am_hcq *h = hcq_of(dev);
  return h && h->usb;
}

bg_pci_dev *bg_am_query_pci(bg_am_dev *d) { return d->pci; }

void bg_am_query_views(bg_am_dev *d, bg_mmio **vram, bg_mmio **doorbell, bg_mmio **mmio) {
  *vram = &d->vram;
  *doorbell = &d->doorbell;
  *mmio = &d->mmio;
}
