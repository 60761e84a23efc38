/* tools/bg_bringup.c: bg-bringup, the AM bring-up tool (tinygrad's AMDev init with AM_DEBUG,
 * tinygrad/runtime/support/am/amdev.py AMDev.__init__ and init_hw).
 *
 *   bg-bringup [--dev BDF|DEV] [--json] [--reset] [--fw-dir DIR]
 *
 * Opens an AMD GPU through am/am_query.h (PCI, BARs, discovery, register tables, firmware set), runs the
 * boot sequence of am/am_boot.h (cold, or warm when our magic is present; --reset = AM_RESET=1: ignore it and
 * mode1-reset a running device), then reads the SMU metrics once. Prints the chip, its IP versions, the firmware
 * files used and every step with its time, as text or (--json) one JSON document. BG_DEBUG=1 adds the library's
 * own step log, BG_DEBUG=3 every register write (am/am_dev.h).
 *
 * Exit status: 0 booted; 1 the device could not be opened or booted (the message names the firmware file, the
 * pid holding the device, the driver bound to it, or the register that timed out); 2 usage error or no such AMD
 * GPU. The logic is bg_bringup_main() so the unit tests run it in-process against the emulated GPU (whose
 * register hooks live in the test process); main() is left out when BG_BRINGUP_NO_MAIN is defined. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_query.h"
#include "baregpu/error.h"
#include "bg_config.h"
#include "platform/pci_scan.h"
#include "tools/bringup_nv.h"
#include "tools/json.h"
#include "tools/smi.h"
#include "tools/smi_fmt.h"
#include "tools/tool_err.h"

int bg_bringup_main(int argc, char **argv);

enum { BR_OK = 0, BR_FAIL = 1, BR_USAGE = 2 };
#define BR_MAX_STEPS 12

typedef struct br_step {
  const char *name;
  char detail[96];
  double ms;
  bool skipped;
} br_step;

typedef struct br_state {
  bool json, reset;
  const char *dev, *fw_dir;
  bool dev_from_env;   /* dev is the DEV variable's */
  bool nv;             /* an NVIDIA GPU: the bare-metal boot of nv/nv_pci.h (tools/bringup_nv.c) */
  char bdf[64];
  br_step steps[BR_MAX_STEPS];
  int nsteps;
  bg_am_query_boot rep;
  bool booted, have_metrics;
  bg_am_query_metrics m;
  char metrics_err[256];
  double total_ms;
  char err[1024];
} br_state;

static void usage(FILE *f) {
  fprintf(f,
          "usage: bg-bringup [--dev BDF|DEV] [--json] [--reset] [--fw-dir DIR]\n"
          "\n"
          "Open an AMD GPU through the AM driver and run its bring-up (PSP bootloader, PSP ring, firmware,\n"
          "SMU), printing each step with its time, the chip, its IP versions and the firmware files used.\n"
          "\n"
          "  --dev BDF|DEV  a PCI address (0000:03:00.0 or 03:00.0) or a DEV string (AMD, AMD:1, PCI+AMD:0);\n"
          "                 MOCKPCI+AMD boots the emulated GPU of tests/mockgpu's plugin in this process;\n"
          "                 default: $DEV as --dev, else the first AMD GPU\n"
          "  --json         print one JSON document on stdout, also on failure (a usage error or a bad\n"
          "                 --dev/DEV: {\"error\": \"...\"}); messages also go to stderr\n"
          "  --reset        AM_RESET=1: ignore the warm-start magic and boot again (mode1 reset first when the\n"
          "                 PSP and SMU are running)\n"
          "  --fw-dir DIR   firmware folder (default $BG_FIRMWARE_DIR, else /lib/firmware/amdgpu)\n"
          "  -h, --help     this help\n"
          "\n"
          "environment: DEV (the device when --dev is not given), BG_SYSFS_ROOT (emulated sysfs tree), BG_LOCK_DIR, BG_FIRMWARE_DIR, AM_RESET=1 (as\n"
          "--reset), BG_DEBUG=1 (library step log), BG_DEBUG=3 (every register write), BG_MOCK_PLUGIN and\n"
          "MOCKGPU_CHIP (MOCKPCI+AMD's module and chip)\n"
          "exit status: 0 booted; 1 open or boot failed (firmware file, device in use by pid N, driver\n"
          "bound, timeout); 2 usage error, a bad --dev/DEV, or no such AMD GPU\n");
}

static br_step *add_step(br_state *s, const char *name, double ms) {
  if (s->nsteps >= BR_MAX_STEPS) return &s->steps[BR_MAX_STEPS - 1];
  br_step *st = &s->steps[s->nsteps++];
  memset(st, 0, sizeof(*st));
  st->name = name;
  st->ms = ms;
  return st;
}

/* The device: a BDF as given, else the AMD GPU a DEV string (--dev, else $DEV, default "AMD:0") selects. */
static int resolve_dev(br_state *s) {
  smi_opts o = {0};
  char err[512], src[160];
  const char *sel = s->dev ? s->dev : "AMD:0";
  o.dev_from_env = s->dev_from_env;
  if (s->dev_from_env) snprintf(src, sizeof(src), "DEV=%s", sel);
  else snprintf(src, sizeof(src), "--dev %s", sel);
  if (smi_sel_parse(sel, &o, err, sizeof(err)) < 0) {
    if (s->dev_from_env && strncmp(err, "DEV=", 4) == 0) tool_err("%s", err); /* the parser names DEV=... itself */
    else tool_err("%s: %s", src, err);
    return BR_USAGE;
  }
  if (o.sel == SMI_SEL_BDF) {
    /* Accepted as is: it may be an emulated device of BG_SYSFS_ROOT that no DEV string reaches yet. */
    snprintf(s->bdf, sizeof(s->bdf), "%s", o.name);
    return BR_OK;
  }
  const char *iface = o.target.iface, *kind = o.target.kind;
  bool pci_iface = !iface[0] || strcmp(iface, "PCI") == 0 || strcmp(iface, "MOCKPCI") == 0;
  if (o.sel != SMI_SEL_TARGET || !pci_iface || (kind[0] && strcmp(kind, "AMD") != 0 && strcmp(kind, "NV") != 0)) {
    tool_err("%s: not an AMD or NVIDIA GPU on PCI; bg-bringup boots GPUs through PCI (a PCI address, AMD[:N], "
             "PCI+AMD[:N], MOCKPCI+AMD, NV[:N], PCI+NV[:N], MOCKPCI+NV)", src);
    return BR_USAGE;
  }
  if (!kind[0]) snprintf(o.target.kind, sizeof(o.target.kind), "AMD"); /* DEV's default kind: the first AMD GPU */
  if (smi_sel_is_mockpci(&o)) {
    /* The emulated GPU of tests/mockgpu's plugin, created (powered on, not booted) in this process: its sysfs
     * tree, lock and firmware directories become the process's, so the boot below is the real one on it. */
    smi_mock_env env;
    char merr[768];
    if (smi_mock_enter(o.target.kind, false, &env, merr, sizeof(merr)) < 0) {
      tool_err("%s: %s", src, merr);
      return BR_FAIL;
    }
  }
  bg_pci_info *v = NULL;
  size_t n = 0;
  int r = smi_select_gpus(&o, NULL, true, &v, &n);
  if (r != SMI_EXIT_OK) return r == SMI_EXIT_USAGE ? BR_USAGE : BR_FAIL;
  int ret = BR_OK;
  if (n != 1 || (v[0].vendor != BG_PCI_VENDOR_AMD && v[0].vendor != BG_PCI_VENDOR_NV)) {
    tool_err("%s: %s", src, n == 0 ? "no such GPU" : "neither an AMD (0x1002) nor an NVIDIA (0x10de) GPU");
    ret = BR_USAGE;
  } else {
    snprintf(s->bdf, sizeof(s->bdf), "%s", v[0].bdf);
    s->nv = v[0].vendor == BG_PCI_VENDOR_NV;
  }
  free(v);
  return ret;
}

/* A hint after the library's message for the failures a user can act on. */
static void add_hint(br_state *s, int code) {
  const char *hint = NULL;
  if (code == -BG_EBUSY && strstr(s->err, "in use by pid")) hint = "stop it: hcq_smi kill_pids ";
  else if (code == -BG_EBUSY && strstr(s->err, "driver")) hint = "hand it over: hcq_smi unbind ";
  else if (code == -BG_EPERM) hint = "run as root; device ";
  if (!hint) return;
  size_t len = strlen(s->err);
  snprintf(s->err + len, sizeof(s->err) - len, " (%s%s)", hint, s->bdf);
}

/* GFX bring-up as the chip does it: gfx9 (CDNA, GC 9.x) has PSP load the RLC register list (REG_LIST) and
 * starts MEC and queues per XCC; gfx10+ has the RLC autoload the CP firmware and one compute HQD. */
static const char *gfx_step_name(const bg_am_dev *d) {
  bg_am_query_info info;
  bg_am_query_info_get(d, &info);
  if (info.gc.maj < 10) return "gfx (rlc reg list, mec per xcc, pm4 + aql queues)";
  return "gfx (rlc autoload, mec, compute hqd)";
}

static int run_boot(br_state *s, bg_am_dev **out) {
  bg_am_query_open oo = {.fw_dir = s->fw_dir};
  double t0 = bg_am_query_now_ms();
  bg_am_dev *d = NULL;
  int e = bg_am_query_dev_open(s->bdf, &oo, &d);
  double t1 = bg_am_query_now_ms();
  if (e < 0) {
    snprintf(s->err, sizeof(s->err), "%s", bg_last_error());
    add_hint(s, e);
    s->total_ms = t1 - t0;
    return e;
  }
  *out = d;
  bg_am_query_info info;
  bg_am_query_info_get(d, &info);
  snprintf(add_step(s, "open", t1 - t0)->detail, sizeof(s->steps[0].detail),
           "pci, BARs, discovery, registers, %d firmware descriptors", info.fw_descs);
  e = bg_am_query_boot_run(d, s->reset, &s->rep);
  double t2 = bg_am_query_now_ms();
  const bg_am_query_boot *r = &s->rep;
  if (r->warm) {
    snprintf(add_step(s, "warm start", t2 - t1)->detail, sizeof(s->steps[0].detail),
             "SCRATCH_REG7 = 0x%x: PSP and SMU left as they are", r->magic);
  } else {
    br_step *st = add_step(s, "mode1 reset", r->ms_reset);
    if (r->mode1_reset) snprintf(st->detail, sizeof(st->detail), "PSP and SMU were running");
    else {
      st->skipped = true;
      snprintf(st->detail, sizeof(st->detail), "not needed (PSP/SMU not running)");
    }
    if (r->ms_soc > 0) add_step(s, "soc", r->ms_soc);
    if (r->ms_gmc > 0) add_step(s, "gmc (hubs, page tables, tlb)", r->ms_gmc);
    if (r->ms_ih > 0) add_step(s, "ih rings", r->ms_ih);
    if (r->bl_components || r->ms_bootloader > 0)
      snprintf(add_step(s, "psp bootloader", r->ms_bootloader)->detail, sizeof(st->detail), "%d components",
               r->bl_components);
    if (r->ms_ring > 0 || r->ring_cmds) add_step(s, "psp ring create", r->ms_ring);
    if (r->ring_cmds || r->ms_fw > 0)
      snprintf(add_step(s, "psp firmware", r->ms_fw)->detail, sizeof(st->detail), "%d ring commands",
               r->ring_cmds);
    if (e == 0 || r->ms_smu > 0) add_step(s, "smu init", r->ms_smu);
    if (r->ms_gfx > 0) add_step(s, gfx_step_name(d), r->ms_gfx);
    if (r->ms_sdma > 0) add_step(s, "sdma (engine, ring)", r->ms_sdma);
  }
  s->total_ms = t2 - t0;
  if (e < 0) {
    snprintf(s->err, sizeof(s->err), "%s", bg_last_error());
    add_hint(s, e);
    return e;
  }
  s->booted = true;
  double t3 = bg_am_query_now_ms();
  if (bg_am_query_metrics_read(d, false, &s->m) == 0) {
    s->have_metrics = true;
    add_step(s, "smu metrics", bg_am_query_now_ms() - t3);
  } else {
    snprintf(s->metrics_err, sizeof(s->metrics_err), "%s", bg_last_error());
  }
  return 0;
}

static void ipstr(bg_am_query_ip v, char *buf, size_t n) { snprintf(buf, n, "%u.%u.%u", v.maj, v.min, v.rev); }

/* ---------------- text ---------------- */

static void print_text(const br_state *s, const bg_am_dev *d, FILE *f) {
  bg_am_query_info info;
  if (d) bg_am_query_info_get(d, &info);
  if (d) {
    char sz[32], sz2[32], gc[16], mp0[16], mp1[16], sdma[16];
    ipstr(info.gc, gc, sizeof(gc));
    ipstr(info.mp0, mp0, sizeof(mp0));
    ipstr(info.mp1, mp1, sizeof(mp1));
    ipstr(info.sdma0, sdma, sizeof(sdma));
    fprintf(f, "bg-bringup: %s  AMD 1002:%04x  %s (%s), arch %s\n", s->bdf, info.device_id,
            info.chip ? info.chip : "?", info.chip ? info.product : "?", info.arch);
    fprintf(f, "  IP versions     GC %s  MP0 %s  MP1 %s  SDMA %s\n", gc, mp0, mp1, sdma);
    fprintf(f, "  VRAM            %s (BAR0 %s)\n", smi_fmt_size(info.vram_size, sz, sizeof(sz)),
            smi_fmt_size(info.bar0_size, sz2, sizeof(sz2)));
    fprintf(f, "  firmware        %s\n", info.fw_dir);
    for (int i = 0; i < info.nfw; i++) fprintf(f, "    %-28s %zu bytes\n", info.fw[i].name, info.fw[i].len);
    fprintf(f, "  steps:\n");
  } else {
    fprintf(f, "bg-bringup: %s\n", s->bdf);
  }
  for (int i = 0; i < s->nsteps; i++) {
    const br_step *st = &s->steps[i];
    if (st->skipped) fprintf(f, "    %s: skipped, %s\n", st->name, st->detail);
    else if (st->detail[0]) fprintf(f, "    %s %s %.1f ms\n", st->name, st->detail, st->ms);
    else fprintf(f, "    %s %.1f ms\n", st->name, st->ms);
  }
  if (s->have_metrics) {
    const bg_am_query_metrics *m = &s->m;
    /* CDNA (MI300, SMU 13.0.6) has no edge sensor and no fan: n/a, not 0 */
    char edge[16] = "n/a", fan[24] = "n/a";
    if (!m->cdna) {
      snprintf(edge, sizeof(edge), "%u C", m->temp_edge);
      snprintf(fan, sizeof(fan), "%u rpm", m->fan_rpm);
    }
    fprintf(f, "  smu metrics     edge %s, hotspot %u C, mem %u C; %u W (limit %u W); gfx %u MHz, uclk %" PRIu32
               " MHz; activity gfx %u%% mem %u%%; fan %s\n",
            edge, m->temp_hotspot, m->temp_mem, m->power_w, m->power_limit_w, m->gfxclk, m->uclk, m->gfx_activity,
            m->mem_activity, fan);
  } else if (s->metrics_err[0]) {
    fprintf(f, "  smu metrics     unavailable: %s\n", s->metrics_err);
  }
  if (s->booted)
    fprintf(f, "%s in %.1f ms (register reads %" PRIu64 ", writes %" PRIu64 ")\n",
            s->rep.warm ? "warm start" : s->rep.mode1_reset ? "booted after mode1 reset" : "booted", s->total_ms,
            info.nrreg, info.nwreg);
  else
    fprintf(f, "FAILED after %.1f ms\n", s->total_ms);
}

/* ---------------- JSON ---------------- */

static int print_json(const br_state *s, const bg_am_dev *d, FILE *f) {
  bg_am_query_info info;
  if (d) bg_am_query_info_get(d, &info);
  jw w;
  jw_init(&w, f);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "bg-bringup");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "bdf", s->bdf);
  jw_kbool(&w, "ok", s->booted);
  jw_kstr(&w, "error", s->booted ? NULL : s->err);
  jw_kbool(&w, "force_reset", s->reset);
  jw_key(&w, "chip");
  if (d) {
    char buf[32];
    jw_obj_begin(&w);
    jw_khex(&w, "device", info.device_id, 4);
    jw_kstr(&w, "name", info.chip);
    jw_kstr(&w, "product", info.product);
    jw_kstr(&w, "arch", info.arch);
    jw_kuint(&w, "vram_size", info.vram_size);
    jw_kuint(&w, "bar0_size", info.bar0_size);
    jw_key(&w, "ip");
    jw_obj_begin(&w);
    ipstr(info.gc, buf, sizeof(buf));
    jw_kstr(&w, "gc", buf);
    ipstr(info.mp0, buf, sizeof(buf));
    jw_kstr(&w, "mp0", buf);
    ipstr(info.mp1, buf, sizeof(buf));
    jw_kstr(&w, "mp1", buf);
    ipstr(info.sdma0, buf, sizeof(buf));
    jw_kstr(&w, "sdma0", buf);
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_key(&w, "firmware");
    jw_obj_begin(&w);
    jw_kstr(&w, "dir", info.fw_dir);
    jw_kint(&w, "descriptors", info.fw_descs);
    jw_key(&w, "files");
    jw_arr_begin(&w);
    for (int i = 0; i < info.nfw; i++) {
      jw_obj_begin(&w);
      jw_kstr(&w, "name", info.fw[i].name);
      jw_kuint(&w, "size", info.fw[i].len);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
  } else {
    jw_null(&w);
    jw_key(&w, "firmware");
    jw_null(&w);
  }
  jw_key(&w, "steps");
  jw_arr_begin(&w);
  for (int i = 0; i < s->nsteps; i++) {
    const br_step *st = &s->steps[i];
    jw_obj_begin(&w);
    jw_kstr(&w, "name", st->name);
    jw_kstr(&w, "detail", st->detail[0] ? st->detail : NULL);
    jw_kbool(&w, "skipped", st->skipped);
    jw_kuint(&w, "us", (uint64_t)(st->ms * 1000.0 + 0.5));
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_kbool(&w, "warm", s->rep.warm);
  jw_kbool(&w, "mode1_reset", s->rep.mode1_reset);
  jw_kint(&w, "bootloader_components", s->rep.bl_components);
  jw_kint(&w, "ring_commands", s->rep.ring_cmds);
  jw_kuint(&w, "total_us", (uint64_t)(s->total_ms * 1000.0 + 0.5));
  jw_key(&w, "register_reads");
  if (d) jw_uint(&w, info.nrreg);
  else jw_null(&w);
  jw_key(&w, "register_writes");
  if (d) jw_uint(&w, info.nwreg);
  else jw_null(&w);
  jw_key(&w, "metrics");
  if (s->have_metrics) {
    const bg_am_query_metrics *m = &s->m;
    jw_obj_begin(&w);
    jw_key(&w, "temp_edge_c");
    if (m->cdna) jw_null(&w);
    else jw_uint(&w, m->temp_edge);
    jw_kuint(&w, "temp_hotspot_c", m->temp_hotspot);
    jw_kuint(&w, "temp_mem_c", m->temp_mem);
    jw_kuint(&w, "power_w", m->power_w);
    jw_kuint(&w, "power_limit_w", m->power_limit_w);
    jw_kuint(&w, "gfxclk_mhz", m->gfxclk);
    jw_kuint(&w, "uclk_mhz", m->uclk);
    jw_kuint(&w, "gfx_activity_pct", m->gfx_activity);
    jw_kuint(&w, "mem_activity_pct", m->mem_activity);
    jw_key(&w, "fan_rpm");
    if (m->cdna) jw_null(&w);
    else jw_uint(&w, m->fan_rpm);
    jw_obj_end(&w);
  } else {
    jw_null(&w);
  }
  jw_kstr(&w, "metrics_error", s->metrics_err[0] ? s->metrics_err : NULL);
  jw_obj_end(&w);
  return jw_finish(&w);
}

static int bringup(int argc, char **argv) {
  br_state *s = calloc(1, sizeof(*s));
  if (!s) {
    tool_err("out of memory");
    return BR_FAIL;
  }
  const char *am_reset = getenv("AM_RESET");
  s->reset = am_reset && strcmp(am_reset, "1") == 0;
  int ret = BR_OK;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--json") == 0) tool_err_json(true); /* also for a usage error before it */
  for (int i = 1; i < argc && ret == BR_OK; i++) {
    const char *a = argv[i];
    const char **slot = strcmp(a, "--dev") == 0 ? &s->dev : strcmp(a, "--fw-dir") == 0 ? &s->fw_dir : NULL;
    if (slot) {
      if (i + 1 >= argc) {
        tool_err("%s needs a value; see bg-bringup --help", a);
        ret = BR_USAGE;
      } else {
        *slot = argv[++i];
      }
    } else if (strncmp(a, "--dev=", 6) == 0) {
      s->dev = a + 6;
    } else if (strncmp(a, "--fw-dir=", 9) == 0) {
      s->fw_dir = a + 9;
    } else if (strcmp(a, "--json") == 0) {
      s->json = true;
    } else if (strcmp(a, "--reset") == 0) {
      s->reset = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      free(s);
      return BR_OK;
    } else {
      tool_err("unexpected argument '%s'; see bg-bringup --help", a);
      ret = BR_USAGE;
    }
  }
  /* DEV as every baregpu program reads it, when --dev is not given; DEV="" is the default device */
  const char *env = getenv("DEV");
  if (ret == BR_OK && !s->dev && env && *env) {
    s->dev = env;
    s->dev_from_env = true;
  }
  if (ret == BR_OK) ret = resolve_dev(s);
  if (ret != BR_OK) {
    free(s);
    return ret;
  }
  if (s->nv) {
    int e = bringup_nv_run(s->bdf, s->fw_dir, s->json, stdout, s->err, sizeof(s->err));
    fflush(stdout);
    if (e < 0) tool_err("%s: %s", s->bdf, s->err);
    free(s);
    return e < 0 ? BR_FAIL : BR_OK;
  }
  bg_am_dev *d = NULL;
  int e = run_boot(s, &d);
  if (s->json) {
    if (print_json(s, d, stdout) < 0) tool_err("internal error: unbalanced JSON output");
  } else {
    print_text(s, d, stdout);
  }
  fflush(stdout);
  if (e < 0) {
    tool_err("%s: %s", s->bdf, s->err);
    ret = BR_FAIL;
  }
  bg_am_query_dev_close(d);
  free(s);
  return ret;
}

int bg_bringup_main(int argc, char **argv) {
  tool_err_setup("bg-bringup", false);
  return tool_exit(bringup(argc, argv));
}

#ifndef BG_BRINGUP_NO_MAIN
int main(int argc, char **argv) { return bg_bringup_main(argc, argv); }
#endif
