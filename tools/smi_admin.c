/* tools/smi_admin.c: `hcq_smi unbind`, `bind` and `reset`: hand a GPU from its kernel driver to
 * baregpu and back, and reset it. reset of an AMD GPU baregpu can open (no kernel driver or vfio-pci, no other
 * holder) is an SMU mode1 reset through am/ (smi_am.c, as tinygrad's am_smi reset); of any other
 * GPU, or with --function, a PCI function reset through sysfs (platform/pci_admin.h). tinygrad's rmmod
 * unloads the whole module (modprobe -r amdgpu); unbind detaches one device, and prints the
 * driver it had so that bind can hand it back. Each refuses while another process holds the
 * device's lock. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "platform/pci_admin.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/tool_err.h"

typedef struct result {
  const bg_pci_info *dev;
  char after[64];        /* driver bound afterwards (from a new scan) */
  bool after_known;
  const char *driver;    /* bind: the driver asked for */
  bool changed;
  const char *method;    /* reset: "mode1" or "function" (the one done or tried) */
  char smu[16];          /* reset mode1: the SMU version, "14.0.2" */
  const char *kind;      /* error_kind instead of the code's, NULL: the code's */
  int code;              /* 0 or negative BG_E* */
  char err[512];
} result;

typedef void (*action_fn)(const smi_opts *o, result *res);

/* Refuse before touching sysfs when another process owns the device, naming it. */
static bool in_use(result *res) {
  smi_owner ow;
  smi_owner_get(res->dev->bdf, &ow);
  if (!ow.known || ow.pid == 0 || ow.pid == getpid()) return false;
  res->code = -BG_EBUSY;
  if (ow.pid > 0)
    snprintf(res->err, sizeof(res->err), "device %s is in use by pid %d (%s); stop it first: hcq_smi kill_pids %s",
             res->dev->bdf, (int)ow.pid, ow.comm[0] ? ow.comm : "?", res->dev->bdf);
  else
    snprintf(res->err, sizeof(res->err), "device %s is in use by another process (its lock names no pid yet)",
             res->dev->bdf);
  return true;
}

static void failed(result *res, int code) {
  res->code = code;
  snprintf(res->err, sizeof(res->err), "%s", bg_last_error());
}

static void do_unbind(const smi_opts *o, result *res) {
  (void)o;
  char was[64];
  if (in_use(res)) return;
  int r = bg_pci_unbind(res->dev->bdf, was, sizeof(was));
  if (r < 0) failed(res, r);
  else res->changed = was[0] != '\0';
}

static const char *default_driver(uint16_t vendor) {
  if (vendor == BG_PCI_VENDOR_AMD) return "amdgpu";
  if (vendor == BG_PCI_VENDOR_NV) return "nvidia";
  return NULL;
}

static void do_bind(const smi_opts *o, result *res) {
  res->driver = o->driver ? o->driver : default_driver(res->dev->vendor);
  if (!res->driver) {
    res->code = -BG_EINVAL;
    snprintf(res->err, sizeof(res->err), "%s: no default driver for vendor 0x%04x: give --driver NAME", res->dev->bdf,
             res->dev->vendor);
    return;
  }
  if (in_use(res)) return;
  int r = bg_pci_bind(res->dev->bdf, res->driver);
  if (r < 0) failed(res, r);
  else res->changed = strcmp(res->dev->driver, res->driver) != 0;
}

static void do_reset(const smi_opts *o, result *res) {
  if (in_use(res)) return;
  const bg_pci_info *p = res->dev;
  if (!o->function && p->vendor == BG_PCI_VENDOR_AMD && smi_driver_is_ours(p->driver)) {
    res->method = "mode1";
    char why[512];
    int r = smi_am_mode1_reset(p->bdf, res->smu, sizeof(res->smu), why, sizeof(why));
    if (r == 0) {
      res->changed = true;
      return;
    }
    if (r < 0) {
      res->code = r;
      if (r == -BG_ETIMEDOUT) res->kind = "smu_down";
      if (r == -BG_EBUSY && !strstr(why, "in use by pid"))
        snprintf(res->err, sizeof(res->err),
                 "%.300s; unbind it first: hcq_smi unbind %s (or use hcq_smi reset --function %s)", why, p->bdf,
                 p->bdf);
      else snprintf(res->err, sizeof(res->err), "%s", why);
      return;
    }
    /* not a device baregpu can open: the function reset, as for other GPUs */
    BG_LOG(1, "hcq_smi: reset: %s: no mode1 reset (%s); function reset", p->bdf, why);
  }
  res->method = "function";
  int r = bg_pci_reset_bdf(p->bdf);
  if (r < 0) failed(res, r);
  else res->changed = true;
}

/* The drivers bound now, for the report. */
static void rescan(result *res, size_t n) {
  bg_pci_info *v = NULL;
  size_t nv = 0;
  if (bg_pci_scan(0, &v, &nv, NULL) < 0) return;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < nv; j++)
      if (strcmp(v[j].bdf, res[i].dev->bdf) == 0) {
        snprintf(res[i].after, sizeof(res[i].after), "%s", v[j].driver);
        res[i].after_known = true;
      }
  bg_pci_free(v);
}

static const char *error_kind(int code) {
  switch (-code) {
  case 0: return NULL;
  case BG_EBUSY: return "in_use";
  case BG_EPERM: return "permission";
  case BG_ENOTSUP: return "not_supported";
  case BG_ENODEV: return "no_device";
  case BG_EINVAL: return "invalid";
  default: return "failed";
  }
}

/* What was done, on stdout; failures go to stderr only (smi_report_error). */
static void print_text(const char *cmd, const result *res, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const result *x = &res[i];
    const char *bdf = x->dev->bdf, *before = x->dev->driver;
    if (x->code < 0) {
      continue;
    } else if (strcmp(cmd, "unbind") == 0) {
      if (!x->changed) printf("%s: no kernel driver bound; nothing to do\n", bdf);
      else printf("%s: unbound from %s; hand it back with: hcq_smi bind %s --driver %s\n", bdf, before, bdf, before);
    } else if (strcmp(cmd, "bind") == 0) {
      if (!x->changed) printf("%s: already bound to %s; nothing to do\n", bdf, x->driver);
      else printf("%s: bound to %s\n", bdf, x->driver);
    } else if (x->method && strcmp(x->method, "mode1") == 0) {
      printf("%s: mode1 reset done (SMU %s)\n", bdf, x->smu);
    } else {
      printf("%s: function reset done (driver %s)\n", bdf, x->after_known ? (x->after[0] ? x->after : "none") : "?");
    }
  }
}

static void print_json(const smi_opts *o, const char *cmd, const result *res, size_t n, size_t nfail) {
  jw w;
  jw_init(&w, stdout);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "hcq_smi");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "command", cmd);
  jw_kstr(&w, "dev", o->dev);
  jw_kbool(&w, "all", o->all);
  jw_key(&w, "devices");
  jw_arr_begin(&w);
  for (size_t i = 0; i < n; i++) {
    const result *x = &res[i];
    jw_obj_begin(&w);
    jw_kstr(&w, "bdf", x->dev->bdf);
    jw_khex(&w, "vendor", x->dev->vendor, 4);
    jw_khex(&w, "device", x->dev->device, 4);
    jw_kstr(&w, "chip", x->dev->chip ? x->dev->chip->chip : NULL);
    jw_kstr(&w, "driver_before", x->dev->driver[0] ? x->dev->driver : NULL);
    jw_kstr(&w, "driver_after", x->after_known && x->after[0] ? x->after : NULL);
    if (strcmp(cmd, "bind") == 0) jw_kstr(&w, "driver_requested", x->driver);
    if (strcmp(cmd, "reset") == 0) {
      jw_kstr(&w, "method", x->method);
      jw_kstr(&w, "smu_version", x->smu[0] ? x->smu : NULL);
    }
    jw_kbool(&w, "ok", x->code == 0);
    jw_kbool(&w, "changed", x->changed);
    jw_kstr(&w, "error_kind", x->kind ? x->kind : error_kind(x->code));
    jw_kstr(&w, "error", x->code < 0 ? x->err : NULL);
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_kuint(&w, "failed", nfail);
  jw_obj_end(&w);
  if (jw_finish(&w) < 0) tool_err("%s: internal error: unbalanced JSON output", cmd);
}

static int run(const smi_opts *o, const char *cmd, action_fn act) {
  bg_pci_info *v = NULL;
  size_t n = 0;
  int rc = smi_select_gpus(o, cmd, true, &v, &n);
  if (rc != SMI_EXIT_OK) return rc;
  result *res = calloc(n ? n : 1, sizeof(*res));
  if (!res) {
    free(v);
    tool_err("%s: out of memory", cmd);
    return SMI_EXIT_FAIL;
  }
  for (size_t i = 0; i < n; i++) {
    res[i].dev = &v[i];
    act(o, &res[i]);
  }
  rescan(res, n);
  size_t nfail = 0;
  for (size_t i = 0; i < n; i++) nfail += res[i].code < 0;
  if (o->json) print_json(o, cmd, res, n, nfail);
  else if (n == 0) printf("no GPU found on PCI: nothing to %s\n", cmd);
  else print_text(cmd, res, n);
  for (size_t i = 0; i < n; i++)
    if (res[i].code < 0) smi_report_error(cmd, res[i].code, res[i].err);
  free(res);
  free(v);
  return nfail ? SMI_EXIT_FAIL : SMI_EXIT_OK;
}

int smi_cmd_unbind(const smi_opts *o) { return run(o, "unbind", do_unbind); }
int smi_cmd_bind(const smi_opts *o) { return run(o, "bind", do_bind); }
int smi_cmd_reset(const smi_opts *o) { return run(o, "reset", do_reset); }
