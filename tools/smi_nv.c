/* tools/smi_nv.c: `hcq_smi list`'s NVIDIA rows: the GPUs the nvidia kernel module lists, each opened through NVK+NV
 * (or, when the selector names it, the emulated MOCKNVK+NV) and described by nv/nv_query.h: driver version and ABI
 * family, PCI id and address, UUID, SM, the classes chosen, GR layout, memory, performance state. The open driver's
 * headers carry no clock control baregpu could send, so clocks read "n/a" (JSON null); the temperature is sensor 0 of
 * THERMAL_SYSTEM_EXECUTE_V2 where RM answers it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bg_config.h"
#include "nv/nv_classes.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/smi_fmt.h"

/* Which interface the selector asks for: "NVK" (also with no selector), "MOCKNVK", or NULL (not an NV selector). */
static const char *wanted_iface(const smi_opts *o) {
  if (o->sel == SMI_SEL_NONE) return "NVK";
  if (o->sel != SMI_SEL_TARGET || strcmp(o->target.kind, "NV") != 0) return NULL;
  return o->target.iface[0] ? o->target.iface : "NVK";
}

int smi_nv_collect(const smi_opts *o, smi_nv_inventory *inv) {
  memset(inv, 0, sizeof *inv);
  const char *iface = wanted_iface(o);
  if (!iface) return 0;
  inv->searched = true;
  snprintf(inv->iface, sizeof inv->iface, "%s", iface);
  char names[64][48];
  int n = bg_dev_list(strcmp(iface, "NVK") != 0, names, 64);
  if (n < 0) {
    inv->err = n;
    snprintf(inv->msg, sizeof inv->msg, "%s", bg_last_error());
    return n;
  }
  char prefix[32];
  snprintf(prefix, sizeof prefix, "%s+NV:", iface);
  inv->gpus = calloc((size_t)(n ? n : 1), sizeof *inv->gpus);
  if (!inv->gpus) {
    inv->err = -BG_ENOMEM;
    snprintf(inv->msg, sizeof inv->msg, "out of host memory");
    return inv->err;
  }
  for (int i = 0; i < n && i < 64; i++) {
    if (strncmp(names[i], prefix, strlen(prefix)) != 0) continue;
    if (o->sel == SMI_SEL_TARGET && o->dev_has_index && atoi(names[i] + strlen(prefix)) != o->target.index) continue;
    smi_nv_gpu *g = &inv->gpus[inv->n++];
    snprintf(g->dev, sizeof g->dev, "%.47s", names[i]);
    bg_dev *d = NULL;
    int e = bg_dev_open(names[i], &d);
    if (e == 0) e = bg_nv_query_info(d, &g->q);
    if (e < 0) {
      g->err = e;
      snprintf(g->msg, sizeof g->msg, "%s", bg_last_error());
    }
    bg_dev_close(d);
  }
  return 0;
}

void smi_nv_free(smi_nv_inventory *inv) {
  free(inv->gpus);
  memset(inv, 0, sizeof *inv);
}

static const char *cls(uint32_t c) {
  const char *n = bg_nv_class_name(c);
  return n ? n : "?";
}

void smi_nv_text(const smi_nv_inventory *inv, FILE *f) {
  if (!inv->searched) return;
  if (inv->err < 0) {
    fprintf(f, "NVIDIA (%s+NV): unavailable: %s\n", inv->iface, inv->msg);
    return;
  }
  fprintf(f, "NVIDIA (%s+NV, through the nvidia kernel module%s): %zu GPU%s%s\n", inv->iface,
          strcmp(inv->iface, "NVK") ? ", emulated" : "", inv->n, inv->n == 1 ? "" : "s", inv->n ? ":" : "");
  for (size_t i = 0; i < inv->n; i++) {
    const smi_nv_gpu *g = &inv->gpus[i];
    if (g->err < 0) {
      fprintf(f, "  %s  cannot be opened: %s\n", g->dev, g->msg);
      continue;
    }
    const bg_nv_query *q = &g->q;
    fprintf(f, "  %s  %04x:%04x at %s%s%s, %s %s\n", g->dev, q->pci_vendor, q->pci_device, q->bdf, q->name[0] ? " " : "",
            q->name, q->generation ? q->generation : "?", q->arch);
    fprintf(f, "      driver     %s (ABI family %u, from %s)\n", q->driver_version, q->family, q->version_source);
    fprintf(f, "      uuid       %s\n", q->uuid);
    fprintf(f, "      classes    compute 0x%04x %s, copy 0x%04x %s, GPFIFO 0x%04x %s, usermode 0x%04x %s; QMD v%d; %u "
            "classes listed\n", q->compute_class, cls(q->compute_class), q->copy_class, cls(q->copy_class), q->gpfifo_class,
            cls(q->gpfifo_class), q->usermode_class, cls(q->usermode_class), q->qmd_version, q->nclasses);
    fprintf(f, "      gr         SM version 0x%x, %u GPCs x %u TPCs x %u SMs, %u warps per SM\n", q->sm_version, q->gpcs,
            q->tpc_per_gpc, q->sm_per_tpc, q->max_warps_per_sm);
    if (q->vram_total) {
      char a[32], b[32], c[32];
      fprintf(f, "      memory     %s total, %s free (BAR %s)\n", smi_fmt_size(q->vram_total, a, sizeof a),
              smi_fmt_size(q->vram_free, b, sizeof b), smi_fmt_size((uint64_t)q->bar_size, c, sizeof c));
    } else {
      fprintf(f, "      memory     n/a (%s)\n", q->mem_note);
    }
    if (q->pstate >= 0) fprintf(f, "      pstate     P%lld%s\n", (long long)q->pstate, q->perf_boost ? ", boosted" : "");
    else fprintf(f, "      pstate     n/a%s\n", q->perf_boost ? " (boosted)" : "");
    if (q->temp_c >= 0) fprintf(f, "      sensors    temperature %d C", q->temp_c);
    else fprintf(f, "      sensors    temperature n/a (RM refused THERMAL_SYSTEM_EXECUTE_V2)");
    fprintf(f, "; clocks n/a (no clock control in the open driver's headers)\n");
  }
}

void smi_nv_json(jw *w, const smi_nv_inventory *inv) {
  jw_key(w, "nvidia");
  if (!inv->searched) {
    jw_null(w);
    return;
  }
  jw_obj_begin(w);
  jw_kstr(w, "interface", inv->iface);
  jw_kstr(w, "error", inv->err < 0 ? inv->msg : NULL);
  jw_key(w, "gpus");
  jw_arr_begin(w);
  for (size_t i = 0; i < inv->n; i++) {
    const smi_nv_gpu *g = &inv->gpus[i];
    const bg_nv_query *q = &g->q;
    jw_obj_begin(w);
    jw_kstr(w, "dev", g->dev);
    jw_kstr(w, "error", g->err < 0 ? g->msg : NULL);
    if (g->err >= 0) {
      jw_khex(w, "vendor", q->pci_vendor, 4);
      jw_khex(w, "device", q->pci_device, 4);
      jw_kstr(w, "bdf", q->bdf);
      jw_kstr(w, "name", q->name[0] ? q->name : NULL);
      jw_kstr(w, "uuid", q->uuid);
      jw_kstr(w, "driver_version", q->driver_version);
      jw_kuint(w, "abi_family", q->family);
      jw_kstr(w, "version_source", q->version_source);
      jw_kstr(w, "generation", q->generation);
      jw_kstr(w, "arch", q->arch);
      jw_khex(w, "sm_version", q->sm_version, 3);
      jw_khex(w, "compute_class", q->compute_class, 4);
      jw_khex(w, "copy_class", q->copy_class, 4);
      jw_khex(w, "gpfifo_class", q->gpfifo_class, 4);
      jw_khex(w, "usermode_class", q->usermode_class, 4);
      jw_kint(w, "qmd_version", q->qmd_version);
      jw_key(w, "classes");
      jw_arr_begin(w);
      for (unsigned k = 0; k < q->nclasses; k++) jw_uint(w, q->classes[k]);
      jw_arr_end(w);
      jw_kuint(w, "gpcs", q->gpcs);
      jw_kuint(w, "tpc_per_gpc", q->tpc_per_gpc);
      jw_kuint(w, "sm_per_tpc", q->sm_per_tpc);
      jw_kuint(w, "max_warps_per_sm", q->max_warps_per_sm);
      jw_key(w, "memory_total");
      if (q->vram_total) jw_uint(w, q->vram_total);
      else jw_null(w);
      jw_key(w, "memory_free");
      if (q->vram_total) jw_uint(w, q->vram_free);
      else jw_null(w);
      jw_kstr(w, "memory_note", q->vram_total ? NULL : q->mem_note);
      jw_key(w, "pstate");
      if (q->pstate >= 0) jw_uint(w, (uint64_t)q->pstate);
      else jw_null(w);
      jw_kbool(w, "perf_boost", q->perf_boost);
      jw_key(w, "gpc_clock_mhz");
      jw_null(w);
      jw_key(w, "mem_clock_mhz");
      jw_null(w);
      jw_key(w, "temperature_c");
      if (q->temp_c >= 0) jw_int(w, q->temp_c);
      else jw_null(w);
    }
    jw_obj_end(w);
  }
  jw_arr_end(w);
  jw_obj_end(w);
}
