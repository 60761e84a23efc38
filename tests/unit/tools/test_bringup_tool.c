/* tests/unit/tools/test_bringup_tool.c: bg-bringup (tools/bg_bringup.c) and hcq_smi list's SMU metrics
 * (tools/smi_am.c) against the emulated GPU of tests/mockgpu on a fake sysfs tree, with generated firmware (the
 * shared test bed, tests/mockgpu/amd_testbed.h).
 *
 * The emulated GPU's register hooks live in this process, so the tool runs in-process: bg_bringup_main() (the
 * tool's main, compiled with -DBG_BRINGUP_NO_MAIN) with stdout/stderr redirected to temp files, and
 * smi_am_metrics_read() / smi_cmd_list() directly. GC 12.0.0 (tinygrad's mock) and GC 11.0.0 (Navi31-like):
 * every step printed and exit 0; --json is one valid JSON document; a corrupt firmware file exits 1 naming the
 * file; a device held by another lock exits 1 naming the pid; a second run mode1-resets; the metrics are
 * plausible once booted, and list shows them (or why not); hcq_smi reset (smi_cmd_reset) of the booted GPU is an SMU
 * mode1 reset (sOS stops, the next bg-bringup boots cold), --function a PCI function reset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amd_testbed.h"
#include "baregpu/error.h"
#include "platform/pci_lock.h"
#include "json_check.h"
#include "tools/json.h"
#include "tools/smi.h"

int bg_bringup_main(int argc, char **argv);

#define BDF "0000:03:00.0"

static amd_testbed TB;
static mock_amd *G;       /* TB.gpu */
static const char *fwdir; /* TB.fw_dir, BG_FIRMWARE_DIR */

static void setup_chip(mock_amd_chip chip) {
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  ck_assert_msg(amd_testbed_new(&TB, &cfg, "bg_brtool") == 0, "%s", bg_last_error());
  G = TB.gpu;
  fwdir = TB.fw_dir;
  amd_testbed_export_fw_dir(&TB);
  unsetenv("AM_RESET");
}

static void setup12(void) { setup_chip(MOCK_AMD_MOCK); }
static void setup11(void) { setup_chip(MOCK_AMD_GFX11); }
static void setup942(void) { setup_chip(MOCK_AMD_GFX942); }

static void teardown(void) {
  char msg[4096];
  unsigned nfail = amd_testbed_failures(&TB, msg, sizeof(msg));
  amd_testbed_free(&TB);
  ck_assert_msg(nfail == 0, "unexpected model failures:\n%s", msg);
}

/* ---------------- running the tool in-process ---------------- */

typedef struct res {
  int status;
  char *out, *err;
} res;

static char *slurp(FILE *f) {
  fflush(f);
  long n = ftell(f);
  ck_assert_int_ge(n, 0);
  char *b = calloc(1, (size_t)n + 1);
  ck_assert_ptr_nonnull(b);
  rewind(f);
  ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return b;
}

/* Call fn(ctx) with fds 1 and 2 going to temp files. */
static res capture(int (*fn)(void *), void *ctx) {
  FILE *o = tmpfile(), *e = tmpfile();
  ck_assert(o && e);
  fflush(stdout);
  fflush(stderr);
  int s1 = dup(1), s2 = dup(2);
  ck_assert(s1 >= 0 && s2 >= 0);
  ck_assert_int_ge(dup2(fileno(o), 1), 0);
  ck_assert_int_ge(dup2(fileno(e), 2), 0);
  res r = {0};
  r.status = fn(ctx);
  fflush(stdout);
  fflush(stderr);
  dup2(s1, 1);
  dup2(s2, 2);
  close(s1);
  close(s2);
  fseek(o, 0, SEEK_END);
  fseek(e, 0, SEEK_END);
  r.out = slurp(o);
  r.err = slurp(e);
  return r;
}

static int call_main(void *ctx) {
  char **argv = ctx;
  int argc = 0;
  while (argv[argc]) argc++;
  return bg_bringup_main(argc, argv);
}

static res bringup(const char *a1, const char *a2, const char *a3, const char *a4) {
  char *argv[] = {(char *)"bg-bringup", (char *)a1, (char *)a2, (char *)a3, (char *)a4, NULL};
  res r = capture(call_main, argv);
  printf("---- bg-bringup %s %s %s -> %d\n%s%s", a1 ? a1 : "", a2 ? a2 : "", a3 ? a3 : "", r.status, r.out, r.err);
  return r;
}

static void res_free(res *r) {
  free(r->out);
  free(r->err);
}

#define HAS(s, needle) ck_assert_msg(strstr((s), (needle)) != NULL, "'%s' not in:\n%s", (needle), (s))

static void fw_name(bg_am_fw_file_id which, char *name, size_t n) {
  bg_am_fw_ips ip;
  mock_amd_chip_ips(mock_amd_chip_id(G), &ip);
  ck_assert(bg_am_fw_name(&ip, which, name, n));
}

/* ---------------- bg-bringup ---------------- */

static void boot_text(const char *gc) {
  res r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  const char *steps[] = {"open ", "mode1 reset: skipped", "psp bootloader ", " components ", "psp ring create ",
                         "psp firmware ", " ring commands ", "smu init ", "smu metrics ", " ms\n", "booted in "};
  for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) HAS(r.out, steps[i]);
  HAS(r.out, gc);
  HAS(r.out, fwdir);
  char name[64];
  fw_name(BG_AM_FW_SOS, name, sizeof(name));
  HAS(r.out, name);
  fw_name(BG_AM_FW_SMU, name, sizeof(name));
  HAS(r.out, name);
  ck_assert(mock_amd_sos_alive(G) && mock_amd_smu_features(G));
  /* gfx9 loads the RLC register list (REG_LIST) instead of the RLC autoload */
  ck_assert(mock_amd_chip_id(G) == MOCK_AMD_GFX942 ? mock_amd_fw_loaded(G, BG_GFX_FW_REG_LIST)
                                                   : mock_amd_rlc_autoloaded(G));
  /* ... and the GFX step says which; CDNA's SMU has no edge sensor and no fan: n/a, never "0" */
  if (mock_amd_chip_id(G) == MOCK_AMD_GFX942) {
    HAS(r.out, "    gfx (rlc reg list, mec per xcc, pm4 + aql queues) ");
    ck_assert_msg(!strstr(r.out, "autoload"), "gfx942 does not autoload the RLC:\n%s", r.out);
    HAS(r.out, "smu metrics     edge n/a, hotspot ");
    HAS(r.out, "; fan n/a\n");
  } else {
    HAS(r.out, "    gfx (rlc autoload, mec, compute hqd) ");
    ck_assert_msg(!strstr(r.out, "reg list") && !strstr(r.out, "n/a"), "RDNA label or metrics wrong:\n%s", r.out);
    HAS(r.out, " rpm\n");
  }
  res_free(&r);
  /* PSP and SMU are running now and the partial boot writes no magic: the next run mode1-resets first */
  r = bringup("--reset", NULL, NULL, NULL); /* no --dev: the first AMD GPU of the tree */
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "mode1 reset PSP and SMU were running");
  HAS(r.out, "booted after mode1 reset");
  ck_assert_uint_eq(mock_amd_mode1_resets(G), 1);
  res_free(&r);
}

START_TEST(gfx12_text) { boot_text("GC 12.0.0  MP0 14.0.2"); }
END_TEST

START_TEST(gfx11_text) { boot_text("GC 11.0.0  MP0 13.0.0"); }
END_TEST

START_TEST(gfx942_text) { boot_text("GC 9.4.3  MP0 13.0.6"); }
END_TEST

START_TEST(json_valid) {
  res r = bringup("--json", "--dev", "03:00.0", NULL);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  char err[256];
  ck_assert_msg(json_check(r.out, strlen(r.out), err, sizeof(err)) == 0, "%s:\n%s", err, r.out);
  HAS(r.out, "\"ok\": true");
  HAS(r.out, "\"psp bootloader\"");
  HAS(r.out, "\"smu init\"");
  HAS(r.out, "\"temp_edge_c\"");
  /* MI300: no edge temperature, no fan (null); RDNA: numbers */
  bool cdna = mock_amd_chip_id(G) == MOCK_AMD_GFX942;
  ck_assert_msg((strstr(r.out, "\"temp_edge_c\": null") != NULL) == cdna, "temp_edge_c:\n%s", r.out);
  ck_assert_msg((strstr(r.out, "\"fan_rpm\": null") != NULL) == cdna, "fan_rpm:\n%s", r.out);
  res_free(&r);
}
END_TEST

START_TEST(fw_corrupt) {
  char name[64], path[192];
  fw_name(BG_AM_FW_RLC, name, sizeof(name));
  snprintf(path, sizeof(path), "%s/%s", fwdir, name);
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  uint8_t junk[16];
  memset(junk, 0xa5, sizeof(junk));
  fseek(f, 4, SEEK_SET);
  ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
  fclose(f);
  res r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_int_eq(r.status, 1);
  HAS(r.err, name);
  HAS(r.out, "FAILED");
  ck_assert(!mock_amd_sos_alive(G));
  res_free(&r);
  /* --json: still one document, ok false, the error names the file */
  r = bringup("--dev", BDF, "--json", NULL);
  ck_assert_int_eq(r.status, 1);
  char err[256];
  ck_assert_msg(json_check(r.out, strlen(r.out), err, sizeof(err)) == 0, "%s:\n%s", err, r.out);
  HAS(r.out, "\"ok\": false");
  HAS(r.out, name);
  res_free(&r);
}
END_TEST

START_TEST(in_use) {
  int fd = -1;
  ck_assert_int_eq(bg_pci_lock_acquire(BDF, &fd), 0);
  res r = bringup("--dev", BDF, NULL, NULL);
  char pid[32];
  snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
  ck_assert_int_eq(r.status, 1);
  HAS(r.err, pid);
  HAS(r.err, "hcq_smi kill_pids");
  res_free(&r);
  /* smi_am: an owner in the lock is reported, the device not opened */
  smi_owner ow = {.pid = getpid(), .known = true};
  smi_am_metrics m;
  ck_assert_int_eq(smi_am_metrics_read(BDF, &ow, NULL, &m), -1);
  ck_assert_int_eq(m.state, SMI_AM_IN_USE);
  ck_assert_int_eq(m.pid, getpid());
  bg_pci_lock_release(fd);
}
END_TEST

START_TEST(usage_errors) {
  res r = bringup("--bogus", NULL, NULL, NULL);
  ck_assert_int_eq(r.status, 2);
  HAS(r.err, "--bogus");
  res_free(&r);
  r = bringup("--dev", NULL, NULL, NULL);
  ck_assert_int_eq(r.status, 2);
  res_free(&r);
  r = bringup("--dev", "NV", NULL, NULL);
  ck_assert_int_eq(r.status, 2);
  res_free(&r);
  r = bringup("--help", NULL, NULL, NULL);
  ck_assert_int_eq(r.status, 0);
  HAS(r.out, "usage: bg-bringup");
  res_free(&r);
}
END_TEST

/* ---------------- hcq_smi list's metrics ---------------- */

static int call_list(void *ctx) { return smi_cmd_list(ctx); }

START_TEST(smi_metrics) {
  smi_am_metrics m;
  /* not booted: the SMU does not answer; said so, nothing booted */
  ck_assert_int_eq(smi_am_metrics_read(BDF, NULL, NULL, &m), -1);
  ck_assert_msg(m.state == SMI_AM_DOWN, "state %d: %s", m.state, m.msg);
  HAS(m.msg, "SMU not running");
  ck_assert(!mock_amd_sos_alive(G));
  /* bound to a kernel driver: not opened */
  ck_assert_int_eq(smi_am_metrics_read(BDF, NULL, "amdgpu", &m), -1);
  ck_assert_int_eq(m.state, SMI_AM_BOUND);
  HAS(m.msg, "amdgpu");

  res r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_int_eq(r.status, 0);
  res_free(&r);
  unsigned resets = mock_amd_mode1_resets(G);
  ck_assert_int_eq(smi_am_metrics_read(BDF, NULL, NULL, &m), 0);
  ck_assert_int_eq(m.state, SMI_AM_OK);
  ck_assert(!m.cdna); /* RDNA: edge sensor and fan exist */
  printf("%s: metrics: edge %u C hotspot %u C mem %u C, %u W (limit %u W), gfx %u soc %u mem %u fclk %u MHz, "
         "activity %u%%/%u%%, fan %u rpm\n",
         m.arch, m.temp_edge, m.temp_hotspot, m.temp_mem, m.power_w, m.power_limit_w, m.gfxclk, m.socclk, m.uclk,
         m.fclk, m.gfx_activity, m.mem_activity, m.fan_rpm);
  ck_assert(m.temp_edge >= 20 && m.temp_edge < 110);
  ck_assert(m.temp_hotspot >= m.temp_edge && m.temp_hotspot < 110);
  ck_assert(m.temp_mem >= 20 && m.temp_mem < 110);
  ck_assert(m.power_w > 0 && m.power_w < 450);
  ck_assert(m.power_limit_w >= m.power_w);
  ck_assert_uint_eq(m.gfxclk, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(m.uclk, mock_amd_smu_dpm_freq(G, 2, 1));
  ck_assert(m.socclk > 0 && m.fclk > 0);
  ck_assert(m.gfx_activity <= 100 && m.mem_activity <= 100);
  ck_assert(m.fan_rpm >= 800);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), resets); /* reading metrics never resets */
  ck_assert(mock_amd_smu_features(G));

  /* list, text and JSON */
  smi_opts o = {0};
  r = capture(call_list, &o);
  printf("---- hcq_smi list -> %d\n%s%s", r.status, r.out, r.err);
  ck_assert_int_eq(r.status, 0);
  HAS(r.out, "      temp       edge ");
  HAS(r.out, "      power      ");
  HAS(r.out, "      clocks     gfx ");
  HAS(r.out, "      activity   gfx ");
  res_free(&r);
  o.json = true;
  r = capture(call_list, &o);
  ck_assert_int_eq(r.status, 0);
  char err[256];
  ck_assert_msg(json_check(r.out, strlen(r.out), err, sizeof(err)) == 0, "%s:\n%s", err, r.out);
  HAS(r.out, "\"state\": \"ok\"");
  HAS(r.out, "\"power_w\"");
  res_free(&r);
  /* held by another lock: list says so */
  int fd = -1;
  ck_assert_int_eq(bg_pci_lock_acquire(BDF, &fd), 0);
  o.json = false;
  r = capture(call_list, &o);
  HAS(r.out, "metrics    not read: in use by pid");
  res_free(&r);
  bg_pci_lock_release(fd);
}
END_TEST

/* ---------------- hcq_smi reset: mode1 ---------------- */

static int call_reset(void *ctx) { return smi_cmd_reset(ctx); }

static res smi_reset(bool json, bool function) {
  smi_opts o = {.json = json, .function = function};
  char err[256];
  ck_assert_int_eq(smi_sel_parse(BDF, &o, err, sizeof(err)), 0);
  res r = capture(call_reset, &o);
  printf("---- hcq_smi reset%s%s %s -> %d\n%s%s", json ? " --json" : "", function ? " --function" : "", BDF, r.status,
         r.out, r.err);
  return r;
}

static void reset_mode1(const char *smu) {
  /* not booted: the SMU's state decides; never a function reset */
  res r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_int_eq(r.status, 0);
  res_free(&r);
  ck_assert(mock_amd_sos_alive(G));
  unsigned resets = mock_amd_mode1_resets(G);

  r = smi_reset(false, false);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  char want[96];
  snprintf(want, sizeof(want), "%s: mode1 reset done (SMU %s)\n", BDF, smu);
  HAS(r.out, want);
  res_free(&r);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), resets + 1);
  ck_assert(!mock_amd_sos_alive(G));

  /* a later bg-bringup boots cold: nothing left to reset */
  r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "mode1 reset: skipped");
  res_free(&r);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), resets + 1);
  ck_assert(mock_amd_sos_alive(G));

  /* --json: "method": "mode1" */
  r = smi_reset(true, false);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  char err[256];
  ck_assert_msg(json_check(r.out, strlen(r.out), err, sizeof(err)) == 0, "%s:\n%s", err, r.out);
  HAS(r.out, "\"method\": \"mode1\"");
  snprintf(want, sizeof(want), "\"smu_version\": \"%s\"", smu);
  HAS(r.out, want);
  HAS(r.out, "\"ok\": true");
  res_free(&r);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), resets + 2);
  ck_assert(!mock_amd_sos_alive(G));

  /* sOS gone, nothing booted: the emulated SMU still answers, so a mode1 reset again (a real SMU that does not
   * answer is refused with a hint to --function; the emulation has no way to silence its SMU) */
  r = smi_reset(false, false);
  if (r.status != 0) {
    HAS(r.err, "not answering");
    HAS(r.err, "--function");
  } else {
    HAS(r.out, "mode1 reset done");
  }
  res_free(&r);

  /* --function: the PCI function reset through sysfs, no mode1 reset */
  unsigned before = mock_amd_mode1_resets(G);
  r = smi_reset(true, true);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "\"method\": \"function\"");
  res_free(&r);
  r = smi_reset(false, true);
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "function reset done");
  res_free(&r);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), before);

  /* held by another process: refused with the pid, not opened */
  int fd = -1;
  ck_assert_int_eq(bg_pci_lock_acquire(BDF, &fd), 0);
  r = smi_reset(false, false);
  ck_assert_int_eq(r.status, 1);
  snprintf(want, sizeof(want), "in use by pid %d", (int)getpid());
  HAS(r.err, want);
  res_free(&r);
  bg_pci_lock_release(fd);
  ck_assert_uint_eq(mock_amd_mode1_resets(G), before);
}

START_TEST(smi_reset12) { reset_mode1("14.0.2"); }
END_TEST

START_TEST(smi_reset11) { reset_mode1("13.0.0"); }
END_TEST

START_TEST(smi_reset942) { reset_mode1("13.0.6"); }
END_TEST

/* gfx942: hcq_smi reads SMU 13.0.6's MetricsTableX_t (GetMetricsTable, Q10 values) */
START_TEST(smi_metrics942) {
  res r = bringup("--dev", BDF, NULL, NULL);
  ck_assert_int_eq(r.status, 0);
  res_free(&r);
  smi_am_metrics m;
  ck_assert_int_eq(smi_am_metrics_read(BDF, NULL, NULL, &m), 0);
  ck_assert_int_eq(m.state, SMI_AM_OK);
  ck_assert_str_eq(m.arch, "gfx942");
  printf("%s: metrics: socket %u C hbm %u C, %u W (limit %u W), gfx %u soc %u mem %u fclk %u MHz, busy %u%%/%u%%\n",
         m.arch, m.temp_hotspot, m.temp_mem, m.power_w, m.power_limit_w, m.gfxclk, m.socclk, m.uclk, m.fclk,
         m.gfx_activity, m.mem_activity);
  ck_assert(m.temp_hotspot >= 45 && m.temp_hotspot < 65 && m.temp_mem >= 42 && m.temp_mem < 60);
  ck_assert(m.power_w >= 150 && m.power_w < 550 && m.power_limit_w >= m.power_w);
  /* 13.0.6 PPCLK ids: SOCCLK 2, UCLK 3, FCLK 4 at their highest level after set_clocks(-1); GFXCLK not limited */
  ck_assert_uint_eq(m.gfxclk, mock_amd_smu_dpm_freq(G, 0, 1));
  ck_assert_uint_eq(m.socclk, mock_amd_smu_dpm_freq(G, 2, 1));
  ck_assert_uint_eq(m.uclk, mock_amd_smu_dpm_freq(G, 3, 1));
  ck_assert_uint_eq(m.fclk, mock_amd_smu_dpm_freq(G, 4, 1));
  ck_assert(m.gfx_activity <= 100 && m.mem_activity <= 100);
  /* hcq_smi list shows the missing sensors as n/a (JSON null), not as 0 C / 0 rpm */
  ck_assert(m.cdna);
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  smi_am_text(&m, f);
  jw w;
  jw_init(&w, f);
  jw_obj_begin(&w);
  smi_am_json(&w, &m);
  jw_obj_end(&w);
  ck_assert_int_eq(jw_finish(&w), 0);
  fseek(f, 0, SEEK_END);
  char *out = slurp(f);
  printf("%s\n", out);
  HAS(out, "      temp       edge n/a, hotspot ");
  HAS(out, "; fan n/a\n");
  HAS(out, "\"temp_edge_c\": null");
  HAS(out, "\"fan_rpm\": null");
  ck_assert_msg(!strstr(out, "edge 0 C") && !strstr(out, "fan 0 rpm"), "zeros shown:\n%s", out);
  free(out);
}
END_TEST

static TCase *tc(const char *name, void (*su)(void)) {
  TCase *t = tcase_create(name);
  tcase_add_checked_fixture(t, su, teardown);
  tcase_set_timeout(t, 60);
  return t;
}

int main(void) {
  unsetenv("DEV"); /* bg-bringup reads it when --dev is not given: the cases here name their device */
  Suite *s = suite_create("bringup-tool");
  TCase *t = tc("gfx12", setup12);
  tcase_add_test(t, gfx12_text);
  tcase_add_test(t, json_valid);
  tcase_add_test(t, fw_corrupt);
  tcase_add_test(t, in_use);
  tcase_add_test(t, usage_errors);
  tcase_add_test(t, smi_metrics);
  tcase_add_test(t, smi_reset12);
  suite_add_tcase(s, t);
  TCase *t11 = tc("gfx11", setup11);
  tcase_add_test(t11, gfx11_text);
  tcase_add_test(t11, json_valid);
  tcase_add_test(t11, fw_corrupt);
  tcase_add_test(t11, smi_metrics);
  tcase_add_test(t11, smi_reset11);
  suite_add_tcase(s, t11);
  TCase *t942 = tc("gfx942", setup942);
  tcase_add_test(t942, gfx942_text);
  tcase_add_test(t942, json_valid);
  tcase_add_test(t942, fw_corrupt);
  tcase_add_test(t942, smi_metrics942);
  tcase_add_test(t942, smi_reset942);
  suite_add_tcase(s, t942);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
