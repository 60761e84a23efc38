/* tests/unit/tools/smi_run.c: the hcq_smi runner of smi_run.h. */
#include <check.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_check.h"
#include "smi_run.h"

const char *smi_path;

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

run_result run_smi_ex(const char *const *args, const run_opts *o) {
  const char *argv[16] = {smi_path};
  int k = 1;
  for (; args[k - 1] && k < 15; k++) argv[k] = args[k - 1];
  argv[k] = NULL;
  int out = temp_fd(), err = temp_fd(), go[2] = {-1, -1};
  ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(126);
    if (o && o->as_nobody && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) _exit(125);
    execv(smi_path, (char *const *)argv);
    _exit(127);
  }
  close(go[0]);
  if (o && o->before_exec) o->before_exec(pid, o->user);
  ck_assert_int_eq(write(go[1], "g", 1), 1);
  close(go[1]);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  run_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0, slurp_fd(out),
                  slurp_fd(err)};
  ck_assert_msg(r.status != 125 && r.status != 126 && r.status != 127, "could not run %s (status %d)", smi_path,
                r.status);
  /* Under build-asan a sanitizer report must fail the test whatever the exit status. */
  ck_assert_msg(!strstr(r.err, "Sanitizer") && !strstr(r.err, "runtime error:"), "hcq_smi %s: sanitizer report:\n%s",
                args[0] ? args[0] : "", r.err);
  return r;
}

run_result run_smi(const char *const *args) { return run_smi_ex(args, NULL); }

void run_free(run_result *r) {
  free(r->out);
  free(r->err);
}

void assert_valid_json(const run_result *r) {
  char why[128];
  ck_assert_msg(json_check(r->out, strlen(r->out), why, sizeof(why)) == 0, "invalid JSON (%s):\n%s", why, r->out);
}
