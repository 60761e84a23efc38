/* tests/unit/tools/test_smi_cli.c: runs the hcq_smi binary (path in argv[1]) and checks exit
 * statuses, help and that `list --json` prints one valid JSON document (validated in C). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_sysfs.h"
#include "json_check.h"

static const char *smi_path;

typedef struct run_result {
  int status; /* exit status, or -1 when it did not exit normally */
  char *out, *err;
} run_result;

static char *slurp_fd(int fd) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  lseek(fd, 0, SEEK_SET);
  ssize_t r;
  while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
    len += (size_t)r;
    if (cap - len < 2) {
      cap *= 2;
      char *nb = realloc(buf, cap);
      ck_assert_ptr_nonnull(nb);
      buf = nb;
    }
  }
  buf[len] = '\0';
  close(fd);
  return buf;
}

static int temp_fd(void) {
  const char *tmp = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof(path), "%s/bg_smi_cli_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  unlink(path);
  return fd;
}

/* Run hcq_smi with args (NULL-terminated); stdout and stderr go to temp files, so no pipe can fill. */
static run_result run_smi(const char *const *args) {
  const char *argv[16] = {smi_path};
  int k = 1;
  for (; args[k - 1] && k < 15; k++) argv[k] = args[k - 1];
  argv[k] = NULL;
  int out = temp_fd(), err = temp_fd();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    execv(smi_path, (char *const *)argv);
    _exit(127);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  run_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp_fd(out), slurp_fd(err)};
  return r;
}

static void run_free(run_result *r) {
  free(r->out);
  free(r->err);
}

static void assert_valid_json(const run_result *r) {
  char why[128];
  ck_assert_msg(json_check(r->out, strlen(r->out), why, sizeof(why)) == 0, "invalid JSON (%s):\n%s", why, r->out);
}

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
  run_free(&r);
  r = run_smi((const char *const[]){"help", "list", NULL});
  ck_assert_int_eq(r.status, 0);
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
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
