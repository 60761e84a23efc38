/* tests/fuzz/fuzz_common.c: the scratch directory of the file-reading targets (fuzz_common.h). */
#include "fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void remove_dir(void) {
  DIR *d = opendir(dir);
  if (d) {
    const struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char p[PATH_MAX + 256];
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

const char *fuzz_tmpdir(void) {
  if (dir[0]) return dir;
  /* Memory-backed when the machine has it: the file targets write an input per execution. */
  const char *t = getenv("TMPDIR");
  if (!t || !*t) t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(dir, sizeof dir, "%s/bg-fuzz-XXXXXX", t);
  if (!mkdtemp(dir)) {
    perror("fuzz: mkdtemp");
    abort();
  }
  atexit(remove_dir);
  return dir;
}

void fuzz_path(char *buf, size_t n, const char *name) {
  int k = snprintf(buf, n, "%s/%s", fuzz_tmpdir(), name);
  if (k < 0 || (size_t)k >= n) abort();
}

void fuzz_write(const char *path, const uint8_t *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    perror(path);
    abort();
  }
  size_t done = 0;
  while (done < size) {
    ssize_t k = write(fd, data + done, size - done);
    if (k <= 0) {
      perror(path);
      abort();
    }
    done += (size_t)k;
  }
  close(fd);
}
