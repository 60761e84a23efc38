/* compile/kcache.c: on-disk kernel cache entries with an integrity trailer (see kcache.h). */
#include "compile/kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "compile/sha256.h"
#include "util/fd_io.h"

#define TRAILER_MAGIC "BGKC\x01\0\0\0"
enum { TRAILER_SIZE = 8 + 8 + 32 };

static int mkdir_p(const char *dir) {
  char tmp[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof tmp) return bg_error(BG_EINVAL, "kcache: cache directory path '%s' is empty or too long", dir);
  memcpy(tmp, dir, len + 1);
  /* Create each component in turn; an existing one is fine as long as it is a directory. */
  for (size_t i = 1; i <= len; i++) {
    if (tmp[i] != '/' && tmp[i] != '\0') continue;
    char c = tmp[i];
    tmp[i] = '\0';
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
      return bg_error(BG_EIO, "kcache: cannot create cache directory %s: %s", tmp, strerror(errno));
    tmp[i] = c;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return bg_error(BG_EIO, "kcache: cache directory %s is not a directory", dir);
  /* A read-only directory still serves hits; storing into it fails with the warning (bg_kcache_store). */
  return 0;
}

void bg_kcache_warn(const char *fmt, ...) {
  static atomic_bool warned;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *m = strncmp(msg, "kcache: ", 8) == 0 ? msg + 8 : msg;
  if (!atomic_exchange(&warned, true))
    fprintf(stderr, "baregpu: warning: kernel cache: %s; compiling without the cache (set BG_CACHE_DIR to a "
                    "writable directory; further cache problems are logged with BG_DEBUG=1)\n", m);
  else
    BG_LOG(1, "kcache: %s; compiling without the cache", m);
}

static int resolve_dir(char *out, size_t n) {
  const char *env = getenv("BG_CACHE_DIR");
  int len;
  if (env && *env) {
    len = snprintf(out, n, "%s", env);
  } else if ((env = getenv("XDG_CACHE_HOME")) && *env) {
    len = snprintf(out, n, "%s/baregpu", env);
  } else if ((env = getenv("HOME")) && *env) {
    len = snprintf(out, n, "%s/.cache/baregpu", env);
  } else {
    return bg_error(BG_EINVAL, "kcache: no cache directory: set BG_CACHE_DIR, XDG_CACHE_HOME or HOME");
  }
  if (len < 0 || (size_t)len >= n) return bg_error(BG_EINVAL, "kcache: cache directory path is too long");
  return mkdir_p(out);
}

int bg_kcache_dir(char *out, size_t n) {
  int r = resolve_dir(out, n);
  if (r < 0) bg_kcache_warn("%s", bg_last_error());
  return r;
}

int bg_kcache_path(const char *dir, const char *key, const char *ext, char *out, size_t n) {
  int len = snprintf(out, n, "%s/%s.%s", dir, key, ext);
  if (len < 0 || (size_t)len >= n) return bg_error(BG_EINVAL, "kcache: entry path in %s is too long", dir);
  return 0;
}

/* Read the whole regular file open at fd (its size from fstat) into a malloc'd buffer. */
static int read_fd(int fd, const char *path, void **data, size_t *size) {
  struct stat st;
  if (fstat(fd, &st) != 0) return bg_error(BG_EIO, "cannot stat %s: %s", path, strerror(errno));
  size_t n = (size_t)st.st_size;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return bg_error(BG_ENOMEM, "out of memory reading %s (%zu bytes)", path, n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      free(buf);
      return bg_error(BG_EIO, "cannot read %s: %s", path, e ? strerror(e) : "file shrank while reading");
    }
    got += (size_t)r;
  }
  *data = buf;
  *size = n;
  return 0;
}

int bg_read_file(const char *path, void **data, size_t *size) {
  int fd, r = bg_open_regular(path, O_RDONLY, &fd);
  if (r < 0) return r;
  r = read_fd(fd, path, data, size);
  close(fd);
  return r;
}

static void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

int bg_kcache_load(const char *path, void **data, size_t *size) {
  /* Entries are only ever created by rename: a symbolic link is not one of ours (O_NOFOLLOW). */
  int fd, err = bg_open_file(path, O_RDONLY | O_NOFOLLOW, BG_FT_REG, &fd);
  if (err < 0 && errno == ENOENT) return 0;   /* the usual miss */
  void *buf = NULL;
  size_t n = 0;
  if (err == 0) {
    err = read_fd(fd, path, &buf, &n);
    close(fd);
  }
  if (err < 0) {   /* a directory, FIFO, unreadable or vanished entry: compile, and try to replace it */
    bg_kcache_warn("%s", bg_last_error());
    return 0;
  }
  const char *why = NULL;
  uint8_t *p = buf;
  if (n < TRAILER_SIZE) {
    why = "shorter than its trailer";
  } else {
    size_t body = n - TRAILER_SIZE;
    const uint8_t *tr = p + body;
    uint8_t digest[32];
    if (memcmp(tr, TRAILER_MAGIC, 8) != 0) why = "bad trailer magic";
    else if (get_le64(tr + 8) != body) why = "size mismatch";
    else {
      bg_sha256(p, body, digest);
      if (memcmp(digest, tr + 16, 32) != 0) why = "checksum mismatch";
    }
  }
  if (why) {
    BG_LOG(1, "kcache: entry %s is corrupt (%s); recompiling", path, why);
    free(buf);
    return 0;
  }
  *data = buf;
  *size = n - TRAILER_SIZE;
  return 1;
}

int bg_kcache_store(const char *path, const void *data, size_t size) {
  char tmp[4200];
  int len = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  if (len < 0 || (size_t)len >= sizeof tmp) {
    bg_error(BG_EINVAL, "kcache: entry path %s is too long", path);
    bg_kcache_warn("entry path %s is too long", path);
    return 1;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    bg_error(BG_EIO, "kcache: cannot create temporary file %s: %s", tmp, strerror(e));
    bg_kcache_warn("cannot create temporary file %s: %s", tmp, strerror(e));
    return 1;
  }
  uint8_t tr[TRAILER_SIZE];
  memcpy(tr, TRAILER_MAGIC, 8);
  put_le64(tr + 8, size);
  bg_sha256(data, size, tr + 16);
  int e = bg_fd_write_all(fd, data, size);
  if (e == 0) e = bg_fd_write_all(fd, tr, sizeof tr);
  if (e == 0 && fchmod(fd, 0644) != 0) e = -errno;
  if (close(fd) != 0 && e == 0) e = -errno;
  if (e == 0 && rename(tmp, path) != 0) e = -errno;
  if (e != 0) {
    unlink(tmp);
    bg_error(BG_EIO, "kcache: cannot write cache entry %s: %s", path, strerror(-e));
    bg_kcache_warn("cannot write entry %s: %s", path, strerror(-e));
    return 1;
  }
  return 0;
}
