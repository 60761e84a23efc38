/* tests/conformance/debug_log.c: BG_DEBUG=2 names every dispatch on an AMD device.
 *
 * Usage: conformance-debug-log HCQ_CONFORMANCE (DEV, BG_MOCK_PLUGIN, ... from the environment).
 * Runs `hcq-conformance exec_update` with BG_DEBUG=2, its stderr captured in a file. exec_update submits one
 * recorded add1 dispatch three times with grid/local (1,1), (2,1), (1,2) set through queue variables, so the
 * log must show, in that order, three lines
 *   bg[2] am: <bdf>: <queue>: dispatch cf_add1 (code 0x...) grid [G, 1, 1] local [L, 1, 1] kernargs 0x...
 * with the patched sizes, the code address of cf_add1 each time and a non-zero kernarg address. Exit 0 when
 * they are there and the test passed, 1 otherwise (with what was seen), 77 when the suite skipped the test. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_child.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: conformance-debug-log HCQ_CONFORMANCE\n");
    return 2;
  }
  if (setenv("BG_DEBUG", "2", 1) < 0) return 1;
  char *cargv[] = {argv[1], "exec_update", NULL};
  char *out = NULL, *err = NULL, *scan = NULL;
  int rc = run_child(cargv, &out, &err);
  int ret = 1;
  if (rc < 0) goto done;
  if (strstr(out, "SKIP ")) {
    printf("SKIP: the suite skipped exec_update:\n%s", out);
    ret = 77;
    goto done;
  }
  /* under the sanitizer build a report fails the check whatever the exit status */
  if (rc != 0 || !strstr(out, "PASS ") || !strstr(out, " exec_update\n") || strstr(err, "runtime error:") ||
      strstr(err, "Sanitizer")) {
    printf("FAIL: hcq-conformance exec_update exited %d:\n%s\nstderr:\n%s", rc, out, err);
    goto done;
  }
  static const unsigned want[3][2] = {{1, 1}, {2, 1}, {1, 2}};
  unsigned seen = 0;
  uint64_t code0 = 0;
  if (!(scan = strdup(err))) goto done;
  for (char *line = strtok(scan, "\n"); line; line = strtok(NULL, "\n")) {
    const char *d = strstr(line, ": dispatch cf_add1 (code 0x");
    if (!d || strncmp(line, "bg[2] am: ", 10) != 0) continue;
    uint64_t code = 0, kargs = 0;
    unsigned g[3], l[3];
    if (sscanf(d, ": dispatch cf_add1 (code 0x%" SCNx64 ") grid [%u, %u, %u] local [%u, %u, %u] kernargs 0x%" SCNx64,
               &code, &g[0], &g[1], &g[2], &l[0], &l[1], &l[2], &kargs) != 8) {
      printf("FAIL: dispatch line not in the documented form: '%s'\n", line);
      goto done;
    }
    if (seen >= 3) {
      printf("FAIL: more than 3 dispatches of cf_add1 logged; the 4th: '%s'\n", line);
      goto done;
    }
    if (g[0] != want[seen][0] || l[0] != want[seen][1] || g[1] != 1 || g[2] != 1 || l[1] != 1 || l[2] != 1) {
      printf("FAIL: dispatch %u logged grid [%u, %u, %u] local [%u, %u, %u], expected grid [%u, 1, 1] local "
             "[%u, 1, 1]: '%s'\n", seen + 1, g[0], g[1], g[2], l[0], l[1], l[2], want[seen][0], want[seen][1], line);
      goto done;
    }
    if (seen == 0) code0 = code;
    if (code == 0 || code != code0 || kargs == 0) {
      printf("FAIL: dispatch %u: code 0x%" PRIx64 " (first 0x%" PRIx64 "), kernargs 0x%" PRIx64
             ": expected the same non-zero code address and a non-zero kernarg address: '%s'\n",
             seen + 1, code, code0, kargs, line);
      goto done;
    }
    printf("ok: %s\n", line);
    seen++;
  }
  if (seen != 3) {
    printf("FAIL: %u of 3 dispatch lines of cf_add1 in the BG_DEBUG=2 log; stderr was:\n%s", seen, err);
    goto done;
  }
  printf("PASS: BG_DEBUG=2 logged the 3 dispatches of exec_update with their grid, local size and kernargs\n");
  ret = 0;
done:
  free(scan);
  free(out);
  free(err);
  return ret;
}
