/* compile/hostcc.c: compile C kernels for the CPU device with the system C compiler, cached on
 * disk by SHA-256 of (compiler, its identity, flags, source). The compiler runs through
 * posix_spawnp on a temporary file (no shell), its diagnostics are captured through a pipe. */
#include "baregpu/compile.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "compile/hostcc.h"
#include "compile/kcache.h"
#include "compile/sha256.h"

#define KEY_VERSION "bg-hostcc-1"   /* bump when the entry format or the build recipe changes */
/* Diagnostics kept in the error message: the first errors matter, and bg_last_error holds 2 KB. */
enum { MAX_ARGS = 256, DIAG_MAX = 1600 };

static atomic_ulong g_hits, g_misses;

void bg_compile_get_stats(bg_compile_stats *st) {
  st->hits = atomic_load(&g_hits);
  st->misses = atomic_load(&g_misses);
}

static const char *compiler(void) {
  const char *cc = getenv("BG_CC");
  return cc && *cc ? cc : BG_HOST_CC;
}

/* Split a copy of s on blanks into argv[*argc...]; no quoting (flags with spaces are not supported). */
static int split_words(char *s, char **argv, int *argc, const char *what) {
  char *save = NULL;
  for (char *tok = strtok_r(s, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
    if (*argc >= MAX_ARGS - 4) return bg_error(BG_EINVAL, "hostcc: too many words in %s", what);
    argv[(*argc)++] = tok;
  }
  return 0;
}

/* Size and mtime of the compiler binary (found like execvp), so an upgraded compiler misses the
 * cache. Zero when it cannot be found; spawning reports that. */
static void compiler_identity(const char *cc, char *out, size_t n) {
  char name[1024];
  struct stat st;
  size_t len = strcspn(cc, " \t\n");
  snprintf(name, sizeof name, "%.*s", (int)len, cc);
  bool found = false;
  if (strchr(name, '/')) {
    found = stat(name, &st) == 0;
  } else {
    const char *dirs = getenv("PATH");
    while (dirs && *dirs && !found) {
      size_t dl = strcspn(dirs, ":");
      char path[4096];
      snprintf(path, sizeof path, "%.*s/%s", (int)dl, dirs, name);
      found = stat(path, &st) == 0 && S_ISREG(st.st_mode);
      dirs += dl + (dirs[dl] == ':');
    }
  }
  if (found)
    snprintf(out, n, "%lld:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  else
    snprintf(out, n, "?");
}

static void cache_key(const char *src, const char *extra_flags, char key[65]) {
  const char *cc = compiler();
  char ident[96];
  compiler_identity(cc, ident, sizeof ident);
  const char *parts[] = {KEY_VERSION, cc, ident, BG_HOSTCC_FLAGS, extra_flags ? extra_flags : "", src};
  bg_sha256_ctx s;
  bg_sha256_init(&s);
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    bg_sha256_update(&s, parts[i], strlen(parts[i]) + 1);   /* the NUL separates the fields */
  uint8_t d[32];
  bg_sha256_final(&s, d);
  bg_sha256_hex(d, key);
}

int bg_hostcc_entry_path(const char *src, const char *extra_flags, char *out, size_t n) {
  char dir[4096], key[65];
  int err = bg_kcache_dir(dir, sizeof dir);
  if (err < 0) return err;
  cache_key(src, extra_flags, key);
  return bg_kcache_path(dir, key, "so", out, n);
}

/* Remove every occurrence of `prefix` from s in place: diagnostics then name "kernel.c:3:5". */
static void strip_prefix(char *s, const char *prefix) {
  size_t pl = strlen(prefix);
  char *w = s;
  for (const char *r = s; *r;) {
    if (pl && strncmp(r, prefix, pl) == 0) r += pl;
    else *w++ = *r++;
  }
  *w = '\0';
}

/* Run argv, collecting stdout+stderr (the first DIAG_MAX-1 bytes) into diag. Returns the wait
 * status in *status, or a negative error if the compiler could not be started. */
static int spawn_collect(char **argv, char *diag, int *status) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return bg_error(BG_EIO, "hostcc: pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (e != 0) {
    close(fds[0]);
    return bg_error(BG_ECOMPILE, "hostcc: cannot run compiler '%s' (set BG_CC to override): %s", argv[0], strerror(e));
  }
  size_t n = 0, dropped = 0;
  char chunk[1024];
  for (;;) {   /* drain everything so the compiler never blocks on a full pipe */
    ssize_t r = read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    size_t take = (size_t)r < DIAG_MAX - 1 - n ? (size_t)r : DIAG_MAX - 1 - n;
    memcpy(diag + n, chunk, take);
    n += take;
    dropped += (size_t)r - take;
  }
  while (n > 0 && (diag[n - 1] == '\n' || diag[n - 1] == ' ')) n--;
  diag[n] = '\0';
  if (dropped) snprintf(diag + n, DIAG_MAX + 64 - n, "\n[%zu more bytes of diagnostics]", dropped);
  close(fds[0]);
  while (waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) return bg_error(BG_EIO, "hostcc: waitpid for '%s': %s", argv[0], strerror(errno));
  }
  return 0;
}

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "we");
  if (!f) return bg_error(BG_EIO, "hostcc: cannot create %s: %s", path, strerror(errno));
  size_t len = strlen(text);
  bool ok = fwrite(text, 1, len, f) == len;
  if (fclose(f) != 0) ok = false;
  return ok ? 0 : bg_error(BG_EIO, "hostcc: cannot write %s: %s", path, strerror(errno));
}

/* Compile src in a private temporary directory; on success *so holds the output's bytes. */
static int compile_in(const char *tmpdir, const char *src, const char *extra_flags, const char *key,
                      void **so, size_t *so_size) {
  char src_path[4200], out_path[4200], prefix[4200];
  int l1 = snprintf(src_path, sizeof src_path, "%s/kernel.c", tmpdir);
  int l2 = snprintf(out_path, sizeof out_path, "%s/kernel.so", tmpdir);
  int l3 = snprintf(prefix, sizeof prefix, "%s/", tmpdir);
  if (l1 < 0 || l2 < 0 || l3 < 0 || (size_t)l2 >= sizeof out_path)
    return bg_error(BG_EINVAL, "hostcc: temporary directory path %s is too long", tmpdir);
  int err = write_text(src_path, src);
  if (err < 0) return err;

  const char *cc = compiler();
  char *cc_copy = strdup(cc), *base_copy = strdup(BG_HOSTCC_FLAGS), *extra_copy = strdup(extra_flags ? extra_flags : "");
  char *argv[MAX_ARGS];
  int argc = 0;
  if (!cc_copy || !base_copy || !extra_copy) err = bg_error(BG_ENOMEM, "hostcc: out of memory");
  if (err == 0) err = split_words(cc_copy, argv, &argc, "BG_CC");
  if (err == 0 && argc == 0) err = bg_error(BG_EINVAL, "hostcc: compiler command '%s' is empty", cc);
  if (err == 0) err = split_words(base_copy, argv, &argc, "base flags");
  if (err == 0) err = split_words(extra_copy, argv, &argc, "extra flags");
  char *diag = malloc(DIAG_MAX + 64);
  if (err == 0 && !diag) err = bg_error(BG_ENOMEM, "hostcc: out of memory");
  if (err == 0) {
    argv[argc++] = "-o";
    argv[argc++] = out_path;
    argv[argc++] = src_path;
    argv[argc++] = "-lm";   /* after the source: kernels may call libm (expf, sinf, ...) */
    argv[argc] = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    err = spawn_collect(argv, diag, &status);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (err == 0) {
      strip_prefix(diag, prefix);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        err = bg_read_file(out_path, so, so_size);
        BG_LOG(2, "hostcc: compiled %.12s in %.1f ms (%zu bytes)", key,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6, err ? 0 : *so_size);
      } else if (WIFEXITED(status)) {
        err = bg_error(BG_ECOMPILE, "hostcc: %s failed with exit status %d compiling kernel %.12s:\n%s", argv[0],
                       WEXITSTATUS(status), key, diag);
      } else {
        err = bg_error(BG_ECOMPILE, "hostcc: %s was killed by signal %d compiling kernel %.12s:\n%s", argv[0],
                       WIFSIGNALED(status) ? WTERMSIG(status) : 0, key, diag);
      }
    }
  }
  free(diag);
  free(cc_copy);
  free(base_copy);
  free(extra_copy);
  unlink(src_path);
  unlink(out_path);
  return err;
}

int bg_compile_c(const char *src, const char *extra_flags, void **so, size_t *so_size) {
  if (!src || !so || !so_size) return bg_error(BG_EINVAL, "bg_compile_c: src, so and so_size must not be NULL");
  char dir[4096], key[65], path[4200];
  cache_key(src, extra_flags, key);
  /* The cache is an optimisation: without a usable directory (bg_kcache_dir warned) compile in TMPDIR. */
  bool cached = bg_kcache_dir(dir, sizeof dir) == 0 && bg_kcache_path(dir, key, "so", path, sizeof path) == 0;
  if (cached && bg_kcache_load(path, so, so_size) == 1) {
    atomic_fetch_add(&g_hits, 1);
    BG_LOG(4, "hostcc: cache hit %s", path);
    return 0;
  }
  atomic_fetch_add(&g_misses, 1);

  /* Scratch files go to the cache directory, else (none, or read-only) to TMPDIR. */
  char tmpdir[4096];
  int len = cached ? snprintf(tmpdir, sizeof tmpdir, "%s/tmp.%.12s.XXXXXX", dir, key) : -1;
  if (len < 0 || (size_t)len >= sizeof tmpdir || !mkdtemp(tmpdir)) {
    const char *t = getenv("TMPDIR");
    t = t && *t ? t : "/tmp";
    len = snprintf(tmpdir, sizeof tmpdir, "%s/bg-cc.%.12s.XXXXXX", t, key);
    if (len < 0 || (size_t)len >= sizeof tmpdir) return bg_error(BG_EINVAL, "hostcc: TMPDIR path %s is too long", t);
    if (!mkdtemp(tmpdir)) return bg_error(BG_EIO, "hostcc: cannot create temporary directory %s: %s", tmpdir, strerror(errno));
  }
  int err = compile_in(tmpdir, src, extra_flags, key, so, so_size);
  rmdir(tmpdir);
  if (err < 0) return err;
  if (cached) bg_kcache_store(path, *so, *so_size);   /* not stored: the cache's warning; the kernel is good */
  return 0;
}
