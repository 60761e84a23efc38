/* tests/unit/tools/test_tools_mock.c: the built hcq_smi and bg-bringup on the emulated GPU of tests/mockgpu's
 * plugin (--dev MOCKPCI+AMD, list --all). Usage: test_tools_mock HCQ_SMI BG_BRINGUP (BG_MOCK_PLUGIN from the
 * environment). Each tool starts the emulated GPU in its own process, so every run sees a powered-on GPU that
 * was never booted:
 * - hcq_smi list --dev MOCKPCI+AMD (text, JSON) and list --all show it with SMU metrics in plausible ranges;
 * - hcq_smi reset --dev MOCKPCI+AMD is a mode1 reset of the booted GPU;
 * - bg-bringup --dev MOCKPCI+AMD cold-boots it and prints every step with a time (text, JSON);
 * - MOCKGPU_CHIP=gfx942: the GFX step says "rlc reg list", edge temperature and fan are n/a (JSON null);
 * - a plugin path that does not exist fails with exit 1, naming the path;
 * - DEV works as --dev for both tools (--dev wins), a bad DEV exits 2 naming it, also as {"error"} under --json;
 * - list --dev MOCKUSB+AMD (and list --all) shows the GPU behind the emulated ASM24 bridge with its metrics;
 * - a test thread that holds MOCKPCI+AMD with N MiB allocated shows up in list and watch --json with its pid and
 *   >= N MiB (hcq/usage.h), and the use goes when it frees and closes;
 * - watch refreshes --count times, and SIGINT ends it with exit status 0;
 * - MOCKGPU_VFIO=1 (bound to vfio-pci): list does not open it (a VFIO open resets it) and says so; reset is a mode1
 *   reset through VFIO. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baregpu/hcq.h"
#include "json_check.h"
#include "smi_run.h"

static const char *hcq_smi_path, *bringup_path;

#define HAS(s, needle) ck_assert_msg(strstr((s), (needle)) != NULL, "'%s' not in:\n%s", (needle), (s))

static run_result run_tool(const char *path, const char *const *args) {
  smi_path = path;
  run_result r = run_smi(args);
  printf("---- %s", path);
  for (int i = 0; args[i]; i++) printf(" %s", args[i]);
  printf(" -> %d\n%s%s", r.status, r.out, r.err);
  return r;
}

/* The number after the first occurrence of key in s. */
static long num_after(const char *s, const char *key) {
  const char *p = strstr(s, key);
  ck_assert_msg(p != NULL, "'%s' not in:\n%s", key, s);
  char *end;
  long v = strtol(p + strlen(key), &end, 10);
  ck_assert_msg(end != p + strlen(key), "no number after '%s' in:\n%s", key, s);
  return v;
}

static void setup(void) {
  unsetenv("MOCKGPU_CHIP");
  unsetenv("MOCKGPU_VFIO");
  unsetenv("DEV");
}

/* r->out is exactly {"error": "<text>"} (one document) and text is in it and on stderr. */
static void assert_json_error(const run_result *r, const char *text) {
  assert_valid_json(r);
  HAS(r->out, "\"error\": \"");
  HAS(r->out, text);
  HAS(r->err, text);
  ck_assert_msg(!strstr(r->out, "\"tool\""), "not only an error document:\n%s", r->out);
}

START_TEST(list_mock_text) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "Emulated PCI (MOCKPCI+AMD's sysfs tree ");
  HAS(r.out, "  0000:03:00.0  AMD 1002:744c  navi31 (gfx1100, RDNA3)\n");
  long edge = num_after(r.out, "      temp       edge "), hot = num_after(r.out, ", hotspot "),
       mem = num_after(r.out, "C, mem ");
  ck_assert(edge >= 20 && edge < 110 && hot >= edge && hot < 110 && mem >= 20 && mem < 110);
  long w = num_after(r.out, "      power      "), lim = num_after(r.out, " W (limit ");
  ck_assert(w > 0 && w <= lim);
  ck_assert(num_after(r.out, "      clocks     gfx ") > 0 && num_after(r.out, " MHz, soc ") > 0);
  long act = num_after(r.out, "      activity   gfx ");
  ck_assert(act >= 0 && act <= 100);
  ck_assert(num_after(r.out, "; fan ") > 0);
  HAS(r.out, "Devices (openable with --dev/DEV): MOCKPCI+AMD");
  HAS(r.out, "1 emulated GPU (MOCKPCI");
  run_free(&r);
}
END_TEST

START_TEST(list_mock_json) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  assert_valid_json(&r);
  HAS(r.out, "\"bdf\": \"0000:03:00.0\"");
  HAS(r.out, "\"state\": \"ok\"");
  HAS(r.out, "\"arch\": \"gfx1100\"");
  ck_assert(num_after(r.out, "\"temp_edge_c\": ") >= 20 && num_after(r.out, "\"power_w\": ") > 0);
  ck_assert(num_after(r.out, "\"fan_rpm\": ") > 0);
  run_free(&r);
}
END_TEST

/* --all: the emulated device is its own section, with metrics, after the real bus */
START_TEST(list_all) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--all", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  const char *emu = strstr(r.out, "Emulated PCI (MOCKPCI+AMD's sysfs tree ");
  ck_assert_msg(emu != NULL, "no emulated section:\n%s", r.out);
  HAS(emu, "  0000:03:00.0  AMD 1002:744c  navi31");
  ck_assert(num_after(emu, "      temp       edge ") >= 20);
  HAS(emu, "      power      ");
  HAS(emu, "      clocks     gfx ");
  HAS(emu, "      activity   gfx ");
  HAS(r.out, "MOCKPCI+AMD:0");
  HAS(r.out, "1 emulated GPU (MOCKPCI+AMD); 1 emulated GPU behind emulated ASM24 bridges (MOCKUSB+AMD)\n");
  /* the GPU behind the emulated ASM24 bridge is a GPU of the list too, with its metrics, not only an openable name */
  const char *usb = strstr(r.out, "Emulated USB (MOCKUSB+AMD: emulated ASM24 bridges, booted in this process): 1 GPU:\n");
  ck_assert_msg(usb != NULL, "no emulated USB section:\n%s", r.out);
  HAS(usb, "  mockusb:0  AMD 1002:744c  navi31 (gfx1100, RDNA3)\n");
  ck_assert(num_after(usb, "      temp       edge ") >= 20);
  HAS(usb, "      vram       0 B used of 512 MiB\n");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--all", "--json", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  emu = strstr(r.out, "\"emulated\": {");
  ck_assert_msg(emu != NULL, "no emulated object:\n%s", r.out);
  HAS(emu, "\"interface\": \"MOCKPCI+AMD\"");
  HAS(emu, "\"state\": \"ok\"");
  ck_assert(num_after(emu, "\"temp_edge_c\": ") >= 20);
  run_free(&r);
}
END_TEST

START_TEST(reset_mock) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"reset", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "0000:03:00.0: mode1 reset done (SMU 13.0.0)");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"reset", "--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"method\": \"mode1\"");
  HAS(r.out, "\"ok\": true");
  run_free(&r);
}
END_TEST

/* Every step line is "    <name> [detail] <ms> ms" (or a skipped one); a cold boot has them all. */
START_TEST(bringup_mock) {
  run_result r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "bg-bringup: 0000:03:00.0  AMD 1002:744c  navi31");
  HAS(r.out, "arch gfx1100\n");
  HAS(r.out, "GC 11.0.0  MP0 13.0.0");
  HAS(r.out, "bg-mock-"); /* the firmware directory: $TMPDIR/bg-mock-<pid>-fw-XXXXXX (tests/mockgpu/mock_sysfs.h) */
  static const char *const steps[] = {"open ", "soc ", "gmc ", "ih rings ", "psp bootloader ", "psp ring create ",
                                      "psp firmware ", "smu init ", "gfx (rlc autoload, mec, compute hqd) ",
                                      "sdma ", "smu metrics "};
  for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
    char key[96];
    snprintf(key, sizeof(key), "\n    %s", steps[i]);
    const char *p = strstr(r.out, key);
    ck_assert_msg(p != NULL, "step '%s' not printed:\n%s", steps[i], r.out);
    const char *eol = strchr(p + 1, '\n');
    ck_assert_msg(eol && eol - p > 4 && strncmp(eol - 3, " ms", 3) == 0, "step '%s' has no time:\n%s", steps[i], r.out);
  }
  HAS(r.out, "mode1 reset: skipped, not needed");
  HAS(r.out, "  smu metrics     edge ");
  HAS(r.out, "\nbooted in ");
  run_free(&r);
  r = run_tool(bringup_path, (const char *const[]){"--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"ok\": true");
  HAS(r.out, "\"name\": \"psp ring create\"");
  run_free(&r);
}
END_TEST

/* bg-bringup on the emulated NVIDIA GPUs (MOCKPCI+NV, tests/mockgpu/nv_pci): a cold bare-metal boot of each family,
 * Ampere and Ada through FWSEC-FRTS and the Booter, Hopper and Blackwell through the FSP, every step with its time and
 * its register and RPC counts; the whole boot's counts on the last line. */
START_TEST(bringup_nv_mock) {
  static const struct {
    const char *chip, *name, *boot_step;
  } chips[] = {{"ga102", "GA102 (Ampere", "FWSEC-FRTS"}, {"ad102", "AD102 (Ada", "Booter"},
               {"gh100", "GH100 (Hopper", "FSP"}, {"gb202", "GB202 (Blackwell", "FSP"}};
  for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++) {
    setenv("MOCKGPU_CHIP", chips[i].chip, 1);
    run_result r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+NV", NULL});
    ck_assert_msg(r.status == 0, "%s: exit %d: %s", chips[i].chip, r.status, r.err);
    HAS(r.out, "NVIDIA ");
    HAS(r.out, chips[i].name);
    HAS(r.out, chips[i].boot_step);
    HAS(r.out, "    GSP init done ");
    HAS(r.out, "    RM objects ");
    HAS(r.out, "\nbooted in ");
    ck_assert_msg(num_after(r.out, "register reads ") > 0 && num_after(r.out, "RPCs ") > 0, "%s", r.out);
    run_free(&r);
    r = run_tool(bringup_path, (const char *const[]){"--json", "--dev", "MOCKPCI+NV", NULL});
    ck_assert_int_eq(r.status, 0);
    assert_valid_json(&r);
    HAS(r.out, "\"ok\": true");
    HAS(r.out, "\"name\": \"GSP init done\"");
    run_free(&r);
  }
  unsetenv("MOCKGPU_CHIP");
}
END_TEST

/* hcq_smi on the bare-metal NVIDIA GPU: list shows the PCI function (vendor 10de), reset is a function reset. */
START_TEST(smi_nv_mock) {
  setenv("MOCKGPU_CHIP", "gh100", 1);
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+NV", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "10de:2335");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"reset", "--json", "--dev", "MOCKPCI+NV", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  assert_valid_json(&r);
  HAS(r.out, "\"ok\": true");
  run_free(&r);
  unsetenv("MOCKGPU_CHIP");
}
END_TEST

/* MI300X (gfx942) on the emulated bus: the chip's own GFX label, and no edge sensor or fan */
START_TEST(gfx942_mock) {
  setenv("MOCKGPU_CHIP", "gfx942", 1);
  run_result r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "arch gfx942\n");
  HAS(r.out, "\n    gfx (rlc reg list, mec per xcc, pm4 + aql queues) ");
  ck_assert_msg(!strstr(r.out, "autoload"), "gfx942 has no RLC autoload:\n%s", r.out);
  HAS(r.out, "smu metrics     edge n/a, hotspot ");
  HAS(r.out, "; fan n/a\n");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "mi300x (gfx942, CDNA3)");
  HAS(r.out, "      temp       edge n/a, hotspot ");
  HAS(r.out, "; fan n/a\n");
  ck_assert(num_after(r.out, ", hotspot ") >= 20);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"temp_edge_c\": null");
  HAS(r.out, "\"fan_rpm\": null");
  ck_assert(num_after(r.out, "\"temp_hotspot_c\": ") >= 20);
  run_free(&r);
  unsetenv("MOCKGPU_CHIP");
}
END_TEST

START_TEST(no_plugin) {
  const char *keep = getenv("BG_MOCK_PLUGIN");
  char *saved = keep ? strdup(keep) : NULL;
  setenv("BG_MOCK_PLUGIN", "/nonexistent/libbaregpu-mock.so", 1);
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_int_eq(r.status, 1);
  HAS(r.err, "/nonexistent/libbaregpu-mock.so");
  run_free(&r);
  r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+AMD", NULL});
  ck_assert_int_eq(r.status, 1);
  HAS(r.err, "/nonexistent/libbaregpu-mock.so");
  run_free(&r);
  if (saved) setenv("BG_MOCK_PLUGIN", saved, 1);
  else unsetenv("BG_MOCK_PLUGIN");
  free(saved);
}
END_TEST


/* DEV works as --dev for both tools; --dev wins; a bad DEV exits 2 naming it, prefixed with the tool's own name */
START_TEST(dev_variable) {
  setenv("DEV", "MOCKPCI+AMD", 1);
  run_result r = run_tool(bringup_path, (const char *const[]){NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "bg-bringup: 0000:03:00.0  AMD 1002:744c  navi31");
  HAS(r.out, "\nbooted in ");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "Emulated PCI (MOCKPCI+AMD's sysfs tree ");
  HAS(r.out, "1 emulated GPU (MOCKPCI");
  run_free(&r);
  /* an index that names no emulated GPU: bg-bringup's own message, not hcq_smi's */
  setenv("DEV", "MOCKPCI+AMD:3", 1);
  r = run_tool(bringup_path, (const char *const[]){NULL});
  ck_assert_int_eq(r.status, 2);
  HAS(r.err, "bg-bringup: unknown device DEV=MOCKPCI+AMD:3: no PCI GPU matches it");
  ck_assert_msg(!strstr(r.err, "hcq_smi"), "%s", r.err);
  run_free(&r);
  setenv("DEV", "PCI+NOPE", 1);
  r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "--dev must win over DEV: exit %d: %s", r.status, r.err);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "--dev must win over DEV: exit %d: %s", r.status, r.err);
  run_free(&r);
  r = run_tool(bringup_path, (const char *const[]){NULL});
  ck_assert_int_eq(r.status, 2);
  HAS(r.err, "bg-bringup: DEV=PCI+NOPE: unknown device kind 'NOPE'");
  run_free(&r);
  r = run_tool(bringup_path, (const char *const[]){"--json", NULL});
  ck_assert_int_eq(r.status, 2);
  assert_json_error(&r, "DEV=PCI+NOPE: unknown device kind 'NOPE'");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", NULL});
  ck_assert_int_eq(r.status, 2);
  HAS(r.err, "hcq_smi: DEV=PCI+NOPE: unknown device kind 'NOPE'");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  ck_assert_int_eq(r.status, 2);
  assert_json_error(&r, "DEV=PCI+NOPE: unknown device kind 'NOPE'");
  run_free(&r);
  /* a DEV that parses but names no AMD GPU on PCI */
  setenv("DEV", "CPU", 1);
  r = run_tool(bringup_path, (const char *const[]){NULL});
  ck_assert_int_eq(r.status, 2);
  HAS(r.err, "bg-bringup: DEV=CPU: not an AMD or NVIDIA GPU on PCI");
  run_free(&r);
}
END_TEST

/* The GPU behind MOCKUSB+AMD's emulated ASM24 bridge is listed as a GPU, with its metrics */
START_TEST(list_mockusb) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKUSB+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "Emulated USB (MOCKUSB+AMD: emulated ASM24 bridges, booted in this process): 1 GPU:\n");
  HAS(r.out, "  mockusb:0  AMD 1002:744c  navi31 (gfx1100, RDNA3)\n");
  HAS(r.out, "      BAR5       2 MiB     mem 32-bit @ 0x10000000\n");
  long edge = num_after(r.out, "      temp       edge ");
  ck_assert(edge >= 20 && edge < 110);
  ck_assert(num_after(r.out, "      power      ") > 0);
  HAS(r.out, "\n1 emulated GPU behind emulated ASM24 bridges (MOCKUSB+AMD)\n");
  ck_assert_msg(!strstr(r.out, "Emulated PCI"), "only the USB GPU was asked for:\n%s", r.out);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", "--dev", "MOCKUSB+AMD", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  const char *usb = strstr(r.out, "\"emulated_usb\": {");
  ck_assert_msg(usb != NULL, "no emulated_usb object:\n%s", r.out);
  HAS(usb, "\"bdf\": \"mockusb:0\"");
  HAS(usb, "\"gpu\": true");
  HAS(usb, "\"state\": \"ok\"");
  ck_assert(num_after(usb, "\"temp_edge_c\": ") >= 20);
  run_free(&r);
}
END_TEST

/* Each line of out is one valid JSON document; returns how many. */
static int json_lines(const char *out) {
  int n = 0;
  for (const char *p = out; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char err[128];
    ck_assert_msg(json_check(p, len, err, sizeof(err)) == 0, "line %d is not one JSON document (%s):\n%.*s", n + 1, err,
                  (int)len, p);
    n++;
    p += len + (eol != NULL);
  }
  return n;
}

/* The pid and bytes this process published, as list --json shows them (pretty-printed). */
static long published_bytes(const char *out, const char *pidkey) {
  const char *p = strstr(out, pidkey);
  ck_assert_msg(p != NULL, "'%s' not in:\n%s", pidkey, out);
  return num_after(p, "\"bytes\": ");
}

/* A process holding MOCKPCI+AMD with 64 MiB allocated: list and watch show its pid and >= 64 MiB */
START_TEST(vram_published) {
  const uint64_t mib64 = 64ull << 20;
  bg_dev *d = NULL;
  ck_assert_msg(bg_dev_open("MOCKPCI+AMD", &d) == 0, "%s", bg_last_error());
  bg_buf *b = NULL;
  ck_assert_msg(bg_buf_alloc(d, mib64, 0, &b) == 0, "%s", bg_last_error());
  /* bg_dev_open pointed BG_SYSFS_ROOT and BG_LOCK_DIR at the plugin's tree: hcq_smi inherits them */
  char pidkey[48];
  snprintf(pidkey, sizeof(pidkey), "\"pid\": %d,", (int)getpid());
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"pids", "--json", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  assert_valid_json(&r);
  ck_assert(num_after(r.out, "\"device_memory\": {\n        \"bytes\": ") >= (long)mib64);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"pids", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  char holder[64];
  snprintf(holder, sizeof(holder), "%-14s %-8d ", "0000:03:00.0", (int)getpid());
  const char *row = strstr(r.out, holder);
  ck_assert_msg(row && strstr(row, ", device memory ") && strchr(row, '\n') > strstr(row, ", device memory "),
                "%s", r.out);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  assert_valid_json(&r);
  ck_assert(published_bytes(r.out, pidkey) >= (long)mib64);
  ck_assert(num_after(r.out, "\"used\": ") >= (long)mib64);
  HAS(r.out, "\"dev\": \"MOCKPCI+AMD\",");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  char line[64];
  snprintf(line, sizeof(line), " used, total unknown (in use); pid %d (", (int)getpid());
  HAS(r.out, line);
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"watch", "--json", "--count", "2", "-n", "0.1", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  ck_assert_int_eq(json_lines(r.out), 2);
  snprintf(pidkey, sizeof(pidkey), "\"pid\": %d, ", (int)getpid());
  const char *second = strstr(r.out, "\"refresh\": 2");
  ck_assert_msg(second != NULL, "%s", r.out);
  ck_assert(published_bytes(r.out, pidkey) >= (long)mib64 && published_bytes(second, pidkey) >= (long)mib64);
  run_free(&r);
  /* a second open of the same device shares it: one file with the sum; closing it keeps the first's use */
  bg_dev *d2 = NULL;
  bg_buf *b2 = NULL;
  ck_assert_msg(bg_dev_open("MOCKPCI+AMD", &d2) == 0, "%s", bg_last_error());
  ck_assert_msg(bg_buf_alloc(d2, 32ull << 20, 0, &b2) == 0, "%s", bg_last_error());
  snprintf(pidkey, sizeof(pidkey), "\"pid\": %d,", (int)getpid());
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  ck_assert(published_bytes(r.out, pidkey) >= (long)(mib64 + (32ull << 20)));
  run_free(&r);
  bg_buf_free(b2);
  bg_dev_close(d2);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  long after = published_bytes(r.out, pidkey);
  ck_assert_msg(after >= (long)mib64 && after < (long)(mib64 + (32ull << 20)), "%ld", after);
  run_free(&r);
  /* freed: the use drops (the 16 MiB kernel-argument arena stays); closed: nothing published */
  bg_buf_free(b);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  snprintf(pidkey, sizeof(pidkey), "\"pid\": %d,", (int)getpid());
  ck_assert(published_bytes(r.out, pidkey) < (long)mib64);
  run_free(&r);
  bg_dev_close(d);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", NULL});
  ck_assert_msg(!strstr(r.out, pidkey), "still published after close:\n%s", r.out);
  ck_assert_int_eq(num_after(r.out, "\"used\": "), 0);
  run_free(&r);
}
END_TEST

/* watch redraws --count times; SIGINT ends it cleanly (exit 0, not killed by the signal) */
START_TEST(watch_text_and_sigint) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"watch", "--count", "2", "-n", "0.1", "--dev",
                                                              "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "refresh 1 (MOCKPCI+AMD)\nDEVICE ");
  const char *second = strstr(r.out, "refresh 2 (MOCKPCI+AMD)\n");
  ck_assert_msg(second && !strstr(r.out, "refresh 3"), "%s", r.out);
  HAS(second, "\n0000:03:00.0   navi31   ");
  HAS(second, "/ 512 MiB\n");
  run_free(&r);
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    execl(hcq_smi_path, hcq_smi_path, "watch", "-n", "0.2", "--dev", "MOCKPCI+AMD", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char buf[8192];
  size_t n = 0;
  ssize_t k;
  while (n < sizeof(buf) - 1 && (k = read(fd[0], buf + n, sizeof(buf) - 1 - n)) > 0) {
    n += (size_t)k;
    buf[n] = '\0';
    if (strstr(buf, "refresh 1 ")) break; /* running: its handler is in place */
  }
  ck_assert_msg(strstr(buf, "refresh 1 "), "%s", buf);
  kill(pid, SIGINT);
  while (read(fd[0], buf, sizeof(buf)) > 0) {}
  close(fd[0]);
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "watch did not end cleanly on SIGINT: status 0x%x", st);
}
END_TEST

/* MOCKGPU_CHIP=gfx12 is Navi44, GC 12.0.0: gfx1200 in both tools, as README.md and tools/README.md say */
START_TEST(gfx12_names) {
  setenv("MOCKGPU_CHIP", "gfx12", 1);
  run_result r = run_tool(bringup_path, (const char *const[]){"--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "AMD 1002:7590  navi44 (Radeon RX 9060 XT), arch gfx1200\n");
  HAS(r.out, "GC 12.0.0  MP0 14.0.2  MP1 14.0.2  SDMA 7.0.0");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "  0000:03:00.0  AMD 1002:7590  navi44 (gfx1200, RDNA4)\n");
  run_free(&r);
  unsetenv("MOCKGPU_CHIP");
}
END_TEST

/* MOCKGPU_VFIO=1: the GPU is bound to vfio-pci (an IOMMU group), baregpu's own way in (platform/pci_vfio.c). list
 * does not open it, because Linux resets a function on its first VFIO open (vfio_pci_core_enable), and says so;
 * reset opens it through VFIO for its mode1 reset. */
START_TEST(vfio_bound) {
  setenv("MOCKGPU_VFIO", "1", 1);
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  assert_valid_json(&r);
  HAS(r.out, "\"driver\": \"vfio-pci\"");
  HAS(r.out, "\"state\": \"bound\"");
  HAS(r.out, "bound to vfio-pci: not opened, since a VFIO open resets the device");
  run_free(&r);
  r = run_tool(hcq_smi_path, (const char *const[]){"reset", "--json", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "\"method\": \"mode1\"");
  HAS(r.out, "\"ok\": true");
  run_free(&r);
  unsetenv("MOCKGPU_VFIO");
}
END_TEST

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_tools_mock HCQ_SMI BG_BRINGUP\n");
    return 2;
  }
  hcq_smi_path = argv[1];
  bringup_path = argv[2];
  Suite *s = suite_create("tools-mock");
  TCase *t = tcase_create("mockpci-amd");
  tcase_add_checked_fixture(t, setup, NULL);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, list_mock_text);
  tcase_add_test(t, list_mock_json);
  tcase_add_test(t, list_all);
  tcase_add_test(t, reset_mock);
  tcase_add_test(t, bringup_mock);
  tcase_add_test(t, gfx942_mock);
  tcase_add_test(t, bringup_nv_mock);
  tcase_add_test(t, smi_nv_mock);
  tcase_add_test(t, no_plugin);
  tcase_add_test(t, dev_variable);
  tcase_add_test(t, list_mockusb);
  tcase_add_test(t, vram_published);
  tcase_add_test(t, watch_text_and_sigint);
  tcase_add_test(t, gfx12_names);
  tcase_add_test(t, vfio_bound);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
