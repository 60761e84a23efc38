/* tests/fuzz/replay.c: the main() of the replay build of a fuzz target (the gcc and sanitizer builds, where there
 * is no libFuzzer): every file named, and every file in every directory named, goes once through
 * LLVMFuzzerTestOneInput, placed against an inaccessible guard so that reading past it faults. Exits 1 when
 * nothing was read (an empty or missing corpus proves nothing). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
  /* The input ends where a 16 MiB inaccessible reservation begins, so a read past its end faults in the builds
   * without ASan too (as far as 16 MiB on: the sh_offset overreads the fuzzers found went 62 KiB and 1 TiB past). */
  const size_t page = 4096, guard = 16u << 20, span = (n + page - 1) / page * page;
  uint8_t *map = mmap(NULL, span + guard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED || (span && mprotect(map, span, PROT_READ | PROT_WRITE) != 0)) {
    perror("replay: mmap");
    free(buf);
    return -1;
  }
  uint8_t *in = map + span - n;
  memcpy(in, buf, n);
  free(buf);
  if (span) mprotect(map, span, PROT_READ); /* the fuzzer's input is const too */
  LLVMFuzzerTestOneInput(in, n);
  munmap(map, span + guard);
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
