/* tests/unit/tools/test_tools_mock.c: the built hcq_smi and bg-bringup on the emulated GPU of tests/mockgpu's
 * plugin (--dev MOCKPCI+AMD, list --all). Usage: test_tools_mock HCQ_SMI BG_BRINGUP (BG_MOCK_PLUGIN from the
 * environment). Each tool starts the emulated GPU in its own process, so every run sees a powered-on GPU that
 * was never booted:
 * - hcq_smi list --dev MOCKPCI+AMD (text, JSON) and list --all show it with SMU metrics in plausible ranges;
 * - hcq_smi reset --dev MOCKPCI+AMD is a mode1 reset of the booted GPU;
 * - bg-bringup --dev MOCKPCI+AMD cold-boots it and prints every step with a time (text, JSON);
 * - MOCKGPU_CHIP=gfx942: the GFX step says "rlc reg list", edge temperature and fan are n/a (JSON null);
 * - a plugin path that does not exist fails with exit 1, naming the path. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi_run.h"

static const char *hcq_smi_path, *bringup_path;

#define HAS(s, needle) ck_assert_msg(strstr((s), (needle)) != NULL, "'%s' not in:\n%s", (needle), (s))

static run_result run_tool(const char *path, const char *const *args) {
  smi_path = path;
  run_result r = run_smi(args);
  printf("---- %s %s %s %s -> %d\n%s%s", path, args[0], args[1] ? args[1] : "", args[1] && args[2] ? args[2] : "",
         r.status, r.out, r.err);
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

static void setup(void) { unsetenv("MOCKGPU_CHIP"); }

START_TEST(list_mock_text) {
  run_result r = run_tool(hcq_smi_path, (const char *const[]){"list", "--dev", "MOCKPCI+AMD", NULL});
  ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
  HAS(r.out, "Emulated PCI (MOCKPCI+AMD's sysfs tree ");
  HAS(r.out, "  0000:03:00.0  AMD 1002:744c  Navi31 (gfx1100, RDNA3)\n");
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
  HAS(emu, "  0000:03:00.0  AMD 1002:744c  Navi31");
  ck_assert(num_after(emu, "      temp       edge ") >= 20);
  HAS(emu, "      power      ");
  HAS(emu, "      clocks     gfx ");
  HAS(emu, "      activity   gfx ");
  HAS(r.out, "MOCKPCI+AMD:0");
  HAS(r.out, "1 emulated GPU (MOCKPCI+AMD); 1 emulated GPU behind emulated ASM24 bridges (MOCKUSB+AMD)\n");
  /* the GPU behind the emulated ASM24 bridge is a GPU of the list too, with its metrics, not only an openable name */
  const char *usb = strstr(r.out, "Emulated USB (MOCKUSB+AMD: emulated ASM24 bridges, booted in this process): 1 GPU:\n");
  ck_assert_msg(usb != NULL, "no emulated USB section:\n%s", r.out);
  HAS(usb, "  mockusb:0  AMD 1002:744c  Navi31 (gfx1100, RDNA3)\n");
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
  HAS(r.out, "bg_mock_fw_");
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
  HAS(r.out, "MI300X (gfx942, CDNA3)");
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
  tcase_add_test(t, no_plugin);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
