/* tests/fuzz/replay.c: the main() of the replay build of a fuzz target (the gcc and sanitizer builds, where there
 * is no libFuzzer): every file named, and every file in every directory named, goes once through
 * LLVMFuzzerTestOneInput. Exits 1 when nothing was read (an empty or missing corpus proves nothing). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t k;
  while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (!buf) return -1;
  /* An exact-size copy, so ASan sees a read past the input as the fuzzer would. */
  uint8_t *in = malloc(n ? n : 1);
  if (!in) {
    free(buf);
    return -1;
  }
  memcpy(in, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(in, n);
  free(in);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }
static int not_dot(const struct dirent *d) { return d->d_name[0] != '.'; }

int main(int argc, char **argv) {
  long count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (run_file(argv[i]) < 0) return 1;
      count++;
      continue;
    }
    struct dirent **list;
    int n = scandir(argv[i], &list, not_dot, by_name);
    if (n < 0) {
      perror(argv[i]);
      return 1;
    }
    int bad = 0;
    for (int j = 0; j < n; j++) {
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], list[j]->d_name);
      if (!bad && run_file(p) < 0) bad = 1;
      else count++;
      free(list[j]);
    }
    free(list);
    if (bad) return 1;
  }
  printf("replay: %ld inputs, no crash\n", count);
  if (count == 0) fprintf(stderr, "replay: no input read: the corpus is empty or missing\n");
  return count ? 0 : 1;
}
