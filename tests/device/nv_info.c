/* tests/device/nv_info.c: the facts baregpu reads from an NVIDIA GPU through the nvidia kernel module (nv/nv_query.h),
 * as one JSON object on stdout, for tests/device/nv-check. Usage: nv-info [DEV] (default: the DEV variable, else
 * NVK+NV). Exit 0, or 1 with the error on stderr when the device does not open or is not an NVIDIA one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "hcq/backend.h"
#include "nv/nv_query.h"
#include "tools/json.h"

/* A value the query marks unknown with -1: JSON null then. */
static void kint_or_null(jw *w, const char *k, int64_t v) {
  jw_key(w, k);
  if (v >= 0) jw_int(w, v);
  else jw_null(w);
}

int main(int argc, char **argv) {
  const char *env = getenv("DEV");
  const char *devname = argc > 1 ? argv[1] : env && *env ? env : "NVK+NV";
  if (argc > 2) {
    fprintf(stderr, "usage: nv-info [DEV]\n");
    return 2;
  }
  bg_dev *d;
  if (bg_dev_open(devname, &d) < 0) {
    fprintf(stderr, "nv-info: opening %s: %s\n", devname, bg_last_error());
    return 1;
  }
  if (strcmp(d->ops->kind, "NV") != 0) {
    fprintf(stderr, "nv-info: %s is a %s device, not NV\n", devname, d->ops->kind);
    bg_dev_close(d);
    return 1;
  }
  bg_nv_query q;
  memset(&q, 0, sizeof q);
  if (bg_nv_query_info(d, &q) < 0) {
    fprintf(stderr, "nv-info: bg_nv_query_info on %s: %s\n", devname, bg_last_error());
    bg_dev_close(d);
    return 1;
  }
  jw w;
  jw_init(&w, stdout);
  jw_obj_begin(&w);
  jw_kstr(&w, "dev", devname);
  jw_kstr(&w, "iface", q.iface);
  jw_kstr(&w, "arch", q.arch);
  jw_kstr(&w, "name", q.name);
  jw_kstr(&w, "generation", q.generation);
  jw_kstr(&w, "driver_version", q.driver_version);
  jw_kstr(&w, "driver_version_source", q.version_source);
  jw_kuint(&w, "abi_family", q.family);
  jw_khex(&w, "pci_vendor", q.pci_vendor, 4);
  jw_khex(&w, "pci_device", q.pci_device, 4);
  jw_kstr(&w, "bdf", q.bdf);
  jw_kstr(&w, "uuid", q.uuid);
  jw_khex(&w, "sm_version", q.sm_version, 3);
  jw_khex(&w, "compute_class", q.compute_class, 4);
  jw_khex(&w, "copy_class", q.copy_class, 4);
  jw_khex(&w, "gpfifo_class", q.gpfifo_class, 4);
  jw_khex(&w, "usermode_class", q.usermode_class, 4);
  jw_kint(&w, "qmd_version", q.qmd_version);
  jw_key(&w, "classes");
  jw_arr_begin(&w);
  const unsigned cap = (unsigned)(sizeof q.classes / sizeof *q.classes);
  for (unsigned i = 0; i < q.nclasses && i < cap; i++) {
    char hex[16];
    snprintf(hex, sizeof hex, "0x%04x", (unsigned)q.classes[i]);
    jw_str(&w, hex);
  }
  jw_arr_end(&w);
  jw_kuint(&w, "gpcs", q.gpcs);
  jw_kuint(&w, "tpc_per_gpc", q.tpc_per_gpc);
  jw_kuint(&w, "sm_per_tpc", q.sm_per_tpc);
  jw_kuint(&w, "max_warps_per_sm", q.max_warps_per_sm);
  jw_kuint(&w, "sms", (uint64_t)q.gpcs * q.tpc_per_gpc * q.sm_per_tpc);
  kint_or_null(&w, "mem_total", q.vram_total ? (int64_t)q.vram_total : -1);
  kint_or_null(&w, "mem_free", q.vram_total ? (int64_t)q.vram_free : -1);
  if (q.mem_note[0]) jw_kstr(&w, "mem_note", q.mem_note);
  kint_or_null(&w, "bar_size", q.bar_size);
  kint_or_null(&w, "pstate", q.pstate);
  kint_or_null(&w, "gpc_clock_mhz", q.gpc_mhz ? (int64_t)q.gpc_mhz : -1);
  kint_or_null(&w, "mem_clock_mhz", q.mem_mhz ? (int64_t)q.mem_mhz : -1);
  kint_or_null(&w, "temperature_c", q.temp_c);
  jw_kbool(&w, "perf_boost", q.perf_boost);
  jw_kbool(&w, "virtmem", q.virtmem);
  jw_kbool(&w, "map_dma", q.map_dma);
  jw_obj_end(&w);
  int rc = jw_finish(&w);
  bg_dev_close(d);
  return rc ? 1 : 0;
}
