/* tests/conformance/run_child.c: run_child (run_child.h). */
#include "run_child.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* An anonymous capture file in TMPDIR (else /tmp). */
static int capture_file(void) {
  const char *t = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/bg-run-child-XXXXXX", t && *t ? t : "/tmp");
  int fd = mkstemp(path);
  if (fd >= 0) unlink(path);
  else perror("run_child: mkstemp");
  return fd;
}

static char *slurp(int fd) {
  char *s = calloc(1, RUN_CHILD_MAX_OUT + 1);
  ssize_t n = s ? pread(fd, s, RUN_CHILD_MAX_OUT, 0) : -1;
  if (s && n < 0) s[0] = '\0';
  return s;
}

int run_child(char *const argv[], char **out, char **err) {
  *out = *err = NULL;
  int fo = capture_file(), fe = capture_file();
  if (fo < 0 || fe < 0) {
    if (fo >= 0) close(fo);
    if (fe >= 0) close(fe);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("run_child: fork");
    close(fo);
    close(fe);
    return -1;
  }
  if (pid == 0) {
    dup2(fo, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    fprintf(stderr, "exec %s failed\n", argv[0]);
    _exit(127);
  }
  int st = 0;
  pid_t w = waitpid(pid, &st, 0);
  *out = slurp(fo);
  *err = slurp(fe);
  close(fo);
  close(fe);
  if (w < 0 || !*out || !*err) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
