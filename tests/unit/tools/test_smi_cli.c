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
  ck_assert_ptr_nonnull(strstr(r.out, "\"name\": \"navi31\""));
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", "NV", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "GH100 (sm_90, Hopper)"));
  ck_assert_ptr_null(strstr(r.out, "744c"));
  run_free(&r);
  /* DEV is read as --dev by list (and pids, kill_pids, watch) when no device and no --all is given */
  setenv("DEV", "NV", 1);
  r = run_smi((const char *const[]){"list", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "GH100 (sm_90, Hopper)"));
  ck_assert_ptr_null(strstr(r.out, "744c"));
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", "AMD", NULL}); /* --dev wins */
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "744c"));
  ck_assert_ptr_null(strstr(r.out, "GH100"));
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--all", NULL}); /* --all: every device, DEV not read */
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "744c"));
  run_free(&r);
  setenv("DEV", "", 1); /* DEV="" is no selector */
  r = run_smi((const char *const[]){"list", "--json", NULL});
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "\"gpu_count\": 2"));
  run_free(&r);
  unsetenv("DEV");
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
    "an unknown device", "watch [-n SECONDS] [--count N] [--json] [--dev DEV]", "VRAM used and total",
    "list, watch, pids and kill_pids read the DEV variable as --dev", "{\"error\": \"...\"}"};
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
    (const char *const[]){"watch", "--count", "0", NULL},
    (const char *const[]){"watch", "--count", "1.5", NULL},
    (const char *const[]){"watch", "-n", "abc", NULL},
    (const char *const[]){"watch", "-n", "0", NULL},
    (const char *const[]){"watch", "--all", NULL},
    (const char *const[]){"list", "--count", "1", NULL},
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


/* The first line of stderr after "hcq_smi: ", up to a character JSON would escape, is in the JSON error. */
static void assert_error_doc(const run_result *r, size_t i) {
  assert_valid_json(r);
  ck_assert_msg(strncmp(r->out, "{\n  \"error\": \"", 13) == 0, "case %zu: not an error document:\n%s", i, r->out);
  ck_assert_msg(strncmp(r->err, "hcq_smi: ", 9) == 0, "case %zu: %s", i, r->err);
  char text[160];
  size_t n = strcspn(r->err + 9, "\n\"\\");
  if (n >= sizeof(text)) n = sizeof(text) - 1;
  memcpy(text, r->err + 9, n);
  text[n] = '\0';
  ck_assert_msg(n > 0 && strstr(r->out, text), "case %zu: '%s' not in:\n%s", i, text, r->out);
}

/* --json means JSON on every path: a usage error or a bad --dev/DEV prints {"error": <the message>}, same status */
START_TEST(json_errors) {
  const char *const *bad[] = {
    (const char *const[]){"--json", NULL},
    (const char *const[]){"--json", "frobnicate", NULL},
    (const char *const[]){"list", "--json", "--bogus", NULL},
    (const char *const[]){"list", "--bogus", "--json", NULL},
    (const char *const[]){"list", "--json", "--dev", "FOO", NULL},
    (const char *const[]){"list", "--json", "--dev", "PCI:9999999999+AMD", NULL},
    (const char *const[]){"pids", "--json", "usb:", NULL},
    (const char *const[]){"watch", "--json", "--count", "0", NULL},
    (const char *const[]){"kill_pids", "--json", "--grace", "nan", NULL},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    run_result r = run_smi(bad[i]);
    ck_assert_msg(r.status == 2, "case %zu: status %d", i, r.status);
    assert_error_doc(&r, i);
    run_free(&r);
  }
  /* a bad DEV: the same exit status as a bad --dev, named, as text and as JSON */
  setenv("DEV", "FOO", 1);
  run_result r = run_smi((const char *const[]){"list", NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "hcq_smi: DEV=FOO") && strstr(r.err, "unknown device kind"), "%s", r.err);
  ck_assert_str_eq(r.out, "");
  run_free(&r);
  static const char *const cmds[] = {"list", "pids", "kill_pids", "watch"};
  for (size_t i = 0; i < 4; i++) {
    r = run_smi((const char *const[]){cmds[i], "--json", NULL});
    ck_assert_msg(r.status == 2, "%s: status %d", cmds[i], r.status);
    assert_error_doc(&r, 100 + i);
    ck_assert_msg(strstr(r.out, "DEV=FOO"), "%s", r.out);
    run_free(&r);
  }
  unsetenv("DEV");
}
END_TEST

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH_TO_HCQ_SMI\n", argv[0]);
    return 2;
  }
  smi_path = argv[1];
  unsetenv("DEV"); /* hcq_smi reads it: the suites set it where they test it */
  Suite *s = suite_create("hcq_smi");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, list_json_parses);
  tcase_add_test(tc, list_text);
  tcase_add_test(tc, list_fake_tree);
  tcase_add_test(tc, list_scan_failure_exit_1);
  tcase_add_test(tc, help_and_usage_errors);
  tcase_add_test(tc, json_errors);
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
