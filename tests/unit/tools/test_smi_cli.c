/* tests/unit/tools/test_smi_cli.c: runs the hcq_smi binary (path in argv[1]) and checks exit
 * statuses, help and that `list --json` prints one valid JSON document (validated in C). The
 * commands that act on devices run against the emulated tree of tests/mockgpu
 * (test_smi_emul.c), when the mock is built. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_sysfs.h"
#include "smi_run.h"
#include "test_smi_emul.h"

START_TEST(list_json_parses) {
  unsetenv("BG_SYSFS_ROOT");
  run_result r = run_smi((const char *const[]){"list", "--json", NULL});
  ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
  assert_valid_json(&r);
  ck_assert_ptr_nonnull(strstr(r.out, "\"summary\""));
  ck_assert_ptr_nonnull(strstr(r.out, "\"names\""));
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--json", "--all", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev=AMD", "--json", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  ck_assert_ptr_nonnull(strstr(r.out, "\"dev\": \"AMD\""));
  run_free(&r);
}
END_TEST

START_TEST(list_text) {
  unsetenv("BG_SYSFS_ROOT");
  run_result r = run_smi((const char *const[]){"list", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "PCI"));
  ck_assert_ptr_nonnull(strstr(r.out, "USB"));
  ck_assert_ptr_nonnull(strstr(r.out, "CPU")); /* the CPU device is always openable */
  run_free(&r);
}
END_TEST

START_TEST(list_fake_tree) {
  char root[512];
  ck_assert_int_eq(fake_sysfs_create(root, sizeof(root)), 0);
  setenv("BG_SYSFS_ROOT", root, 1);
  run_result r = run_smi((const char *const[]){"list", "--json", NULL});
  ck_assert_int_eq(r.status, 0);
  assert_valid_json(&r);
  ck_assert_ptr_nonnull(strstr(r.out, "\"gpu_count\": 2"));
  ck_assert_ptr_nonnull(strstr(r.out, "\"name\": \"Navi31\""));
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", "NV", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "GH100 (sm_90, Hopper)"));
  ck_assert_ptr_null(strstr(r.out, "744c"));
  run_free(&r);
  unsetenv("BG_SYSFS_ROOT");
  fake_sysfs_remove(root);
}
END_TEST

START_TEST(list_scan_failure_exit_1) {
  setenv("BG_SYSFS_ROOT", "/nonexistent/bg_sysfs", 1);
  run_result r = run_smi((const char *const[]){"list", "--json", NULL});
  ck_assert_int_eq(r.status, 1);
  assert_valid_json(&r); /* still one document, with the error in it */
  ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/bg_sysfs"));
  run_free(&r);
  unsetenv("BG_SYSFS_ROOT");
}
END_TEST

START_TEST(help_and_usage_errors) {
  run_result r = run_smi((const char *const[]){"--help", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "usage: hcq_smi"));
  ck_assert_ptr_nonnull(strstr(r.out, "list [--json] [--all] [--dev DEV]"));
  static const char *const documented[] = {
    "pids [--json] [--all | --dev DEV | DEVICE]", "kill_pids [--json] [--grace SECONDS]",
    "unbind [--json] (--dev DEV | DEVICE | --all)", "bind [--json] [--driver NAME]", "reset [--json]",
    "amdgpu for AMD (0x1002), nvidia for NVIDIA (0x10de)", "SIGTERM, then SIGKILL", "BG_LOCK_DIR", "BG_SYSFS_ROOT",
    "a PCI address (0000:03:00.0 or 03:00.0)", "not root (run as root)", "device in\nuse by pid N",
    "an unknown device"};
  for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
    ck_assert_msg(strstr(r.out, documented[i]) != NULL, "--help lacks '%s':\n%s", documented[i], r.out);
  run_free(&r);
  r = run_smi((const char *const[]){"help", "list", NULL});
  ck_assert_int_eq(r.status, 0);
  run_free(&r);
  r = run_smi((const char *const[]){"kill_pids", "--help", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "kill_pids [--json]"));
  ck_assert_ptr_null(strstr(r.out, "  unbind "));
  run_free(&r);

  const char *const *bad[] = {
    (const char *const[]){NULL},
    (const char *const[]){"frobnicate", NULL},
    (const char *const[]){"list", "--bogus", NULL},
    (const char *const[]){"list", "extra", NULL},
    (const char *const[]){"list", "--dev", NULL},
    (const char *const[]){"list", "--dev", "FOO", NULL},
    (const char *const[]){"list", "--dev", "PCI+CPU", NULL},
    (const char *const[]){"list", "--dev", "AMD", "--dev", "NV", NULL},
    (const char *const[]){"help", "--json", NULL},
    (const char *const[]){"help", "nope", NULL},
    (const char *const[]){"pids", "a", "b", NULL},
    (const char *const[]){"unbind", "--driver", "amdgpu", "03:00.0", NULL},
    (const char *const[]){"bind", "--driver", "x", "--driver", "y", "03:00.0", NULL},
    (const char *const[]){"reset", "--grace", "1", "03:00.0", NULL},
    (const char *const[]){"kill_pids", "--grace", "1e9", NULL},
    (const char *const[]){"kill_pids", "--grace", "nan", NULL},
    (const char *const[]){"unbind", "0000:03:00.", NULL},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    r = run_smi(bad[i]);
    ck_assert_msg(r.status == 2, "case %zu: status %d", i, r.status);
    ck_assert_msg(r.err[0] != '\0', "case %zu: no message", i);
    ck_assert_msg(strncmp(r.err, "hcq_smi: ", 9) == 0, "case %zu: %s", i, r.err);
    run_free(&r);
  }
  r = run_smi((const char *const[]){"list", "--dev", "FOO", NULL});
  ck_assert_ptr_nonnull(strstr(r.err, "unknown device kind"));
  run_free(&r);
  r = run_smi((const char *const[]){"frobnicate", NULL});
  ck_assert_ptr_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
  run_free(&r);
}
END_TEST

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH_TO_HCQ_SMI\n", argv[0]);
    return 2;
  }
  smi_path = argv[1];
  Suite *s = suite_create("hcq_smi");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, list_json_parses);
  tcase_add_test(tc, list_text);
  tcase_add_test(tc, list_fake_tree);
  tcase_add_test(tc, list_scan_failure_exit_1);
  tcase_add_test(tc, help_and_usage_errors);
  suite_add_tcase(s, tc);
#if SMI_CLI_MOCK
  suite_add_tcase(s, tcase_smi_emul());
#endif
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
