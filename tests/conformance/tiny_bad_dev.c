/* tests/conformance/tiny_bad_dev.c: bg-tiny with a bad device exits 2 with one message and runs no test.
 *
 * Usage: tiny-bad-dev BG_TINY. Runs bg-tiny with a --dev or DEV that does not parse (BOGUS) or names a kind or
 * interface this build lacks (MOCKPCI+NV, NV): each must exit with status 2, print nothing on stdout (no FAIL line
 * per test) and one line on stderr that names the device string. As a control, `--dev CPU const` must exit 0 with
 * "1 passed, 0 failed, 0 skipped", so the harness can tell the cases apart. Exit 0 when all hold, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OUT 65536

/* Run argv with DEV set to dev (unset when NULL); stdout and stderr into out/err (NUL-terminated). The exit status,
 * 128 + signal, or -1. */
static int run(char *const argv[], const char *dev, char *out, char *err) {
  char po[] = "/tmp/bg_tinydev_out_XXXXXX", pe[] = "/tmp/bg_tinydev_err_XXXXXX";
  int fo = mkstemp(po), fe = mkstemp(pe);
  if (fo < 0 || fe < 0) {
    perror("tiny-bad-dev: mkstemp");
    return -1;
  }
  unlink(po);
  unlink(pe);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("tiny-bad-dev: fork");
    return -1;
  }
  if (pid == 0) {
    dup2(fo, 1);
    dup2(fe, 2);
    if (dev) setenv("DEV", dev, 1);
    else unsetenv("DEV");
    execv(argv[0], argv);
    fprintf(stderr, "exec %s failed\n", argv[0]);
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return -1;
  ssize_t no = pread(fo, out, MAX_OUT, 0), ne = pread(fe, err, MAX_OUT, 0);
  close(fo);
  close(fe);
  out[no > 0 ? no : 0] = '\0';
  err[ne > 0 ? ne : 0] = '\0';
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static unsigned lines(const char *s) {
  unsigned n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static char out[MAX_OUT + 1], err[MAX_OUT + 1];

/* One bad case: --dev value (or DEV=value when via_env). 0 when it behaved, 1 otherwise (with what was seen). */
static int bad_case(const char *tiny, const char *value, int via_env) {
  char *argv_dev[] = {(char *)tiny, "--dev", (char *)value, NULL}, *argv_env[] = {(char *)tiny, NULL};
  int st = run(via_env ? argv_env : argv_dev, via_env ? value : NULL, out, err);
  const char *how = via_env ? "DEV=" : "--dev ";
  if (st == 2 && out[0] == '\0' && lines(err) == 1 && strstr(err, value)) {
    printf("ok: bg-tiny %s%s: exit 2: %s", how, value, err);
    return 0;
  }
  printf("FAIL: bg-tiny %s%s: exit %d (expected 2), %u stderr line(s) (expected 1 naming '%s'), stdout %s\n", how,
         value, st, lines(err), value, out[0] ? "not empty (expected nothing):" : "empty");
  printf("--- stdout\n%.2000s--- stderr\n%.2000s---\n", out, err);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tiny-bad-dev BG_TINY\n");
    return 2;
  }
  const char *tiny = argv[1];
  int bad = 0;
  bad += bad_case(tiny, "MOCKPCI+NV", 0);
  bad += bad_case(tiny, "NV", 0);
  bad += bad_case(tiny, "BOGUS", 1);
  bad += bad_case(tiny, "MOCKPCI+NV", 1);
  char *ctl[] = {(char *)tiny, "--dev", "CPU", "const", NULL};
  int st = run(ctl, NULL, out, err);
  if (st == 0 && strstr(out, "1 passed, 0 failed, 0 skipped")) {
    printf("ok: bg-tiny --dev CPU const: exit 0\n");
  } else {
    printf("FAIL: control bg-tiny --dev CPU const: exit %d, expected 0 and one test passed\n--- stdout\n%.2000s--- "
           "stderr\n%.2000s---\n", st, out, err);
    bad++;
  }
  return bad ? 1 : 0;
}
