/* tests/conformance/tiny_bad_dev.c: bg-tiny with a bad device exits 2 with one message and runs no test.
 *
 * Usage: tiny-bad-dev BG_TINY. Runs bg-tiny with a --dev or DEV that does not parse (BOGUS) or names a kind or
 * interface this build lacks (MOCKNVK+AMD, NVK+AMD: interfaces of another kind): each must exit with status 2, print nothing on stdout (no FAIL line
 * per test) and one line on stderr that names the device string. As a control, `--dev CPU const` must exit 0 with
 * "1 passed, 0 failed, 0 skipped", so the harness can tell the cases apart. Exit 0 when all hold, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_child.h"

/* Run argv with DEV set to dev (unset when NULL); the exit status (run_child), stdout and stderr in out/err. */
static int run(char *const argv[], const char *dev, char **out, char **err) {
  if (dev) setenv("DEV", dev, 1);
  else unsetenv("DEV");
  return run_child(argv, out, err);
}

static unsigned lines(const char *s) {
  unsigned n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* One bad case: --dev value (or DEV=value when via_env). 0 when it behaved, 1 otherwise (with what was seen). */
static int bad_case(const char *tiny, const char *value, int via_env) {
  char *argv_dev[] = {(char *)tiny, "--dev", (char *)value, NULL}, *argv_env[] = {(char *)tiny, NULL};
  char *out = NULL, *err = NULL;
  int st = run(via_env ? argv_env : argv_dev, via_env ? value : NULL, &out, &err);
  const char *how = via_env ? "DEV=" : "--dev ";
  if (st < 0) {
    printf("FAIL: bg-tiny %s%s could not be run\n", how, value);
    free(out);
    free(err);
    return 1;
  }
  int bad = !(st == 2 && out[0] == '\0' && lines(err) == 1 && strstr(err, value));
  if (!bad) {
    printf("ok: bg-tiny %s%s: exit 2: %s", how, value, err);
    free(out);
    free(err);
    return 0;
  }
  printf("FAIL: bg-tiny %s%s: exit %d (expected 2), %u stderr line(s) (expected 1 naming '%s'), stdout %s\n", how,
         value, st, lines(err), value, out[0] ? "not empty (expected nothing):" : "empty");
  printf("--- stdout\n%.2000s--- stderr\n%.2000s---\n", out, err);
  free(out);
  free(err);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tiny-bad-dev BG_TINY\n");
    return 2;
  }
  const char *tiny = argv[1];
  int bad = 0;
  bad += bad_case(tiny, "MOCKNVK+AMD", 0);
  bad += bad_case(tiny, "NVK+AMD", 0);
  bad += bad_case(tiny, "BOGUS", 1);
  bad += bad_case(tiny, "MOCKNVK+AMD", 1);
  char *ctl[] = {(char *)tiny, "--dev", "CPU", "const", NULL};
  char *out = NULL, *err = NULL;
  int st = run(ctl, NULL, &out, &err);
  if (st < 0) {
    printf("FAIL: control bg-tiny --dev CPU const could not be run\n");
    bad++;
  } else if (st == 0 && strstr(out, "1 passed, 0 failed, 0 skipped")) {
    printf("ok: bg-tiny --dev CPU const: exit 0\n");
  } else {
    printf("FAIL: control bg-tiny --dev CPU const: exit %d, expected 0 and one test passed\n--- stdout\n%.2000s--- "
           "stderr\n%.2000s---\n", st, out, err);
    bad++;
  }
  free(out);
  free(err);
  return bad ? 1 : 0;
}
