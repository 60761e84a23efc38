/* tests/mockgpu/sysfs_tree.c: files, directories and temp trees of the fake sysfs trees (sysfs_tree.h): the
 * emulated devices' tree (mock_sysfs.c) and the static tree of the tools tests (tests/unit/tools/fake_sysfs.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs_tree.h"

/* ---------------- files ---------------- */

int sysfs_tree_path(const char *root, const char *rel, char *buf) {
  int n = snprintf(buf, PATH_MAX, "%s/%s", root, rel);
  return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int sysfs_tree_put(const char *root, const char *rel, const void *data, size_t n, long off) {
  char path[PATH_MAX];
  if (sysfs_tree_path(root, rel, path) < 0) return -ENAMETOOLONG;
  int fd = off < 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t w = n ? pwrite(fd, data, n, off < 0 ? 0 : off) : 0;
  int e = errno;
  close(fd);
  return w == (ssize_t)n ? 0 : -(w < 0 ? e : EIO);
}

int sysfs_tree_mkdir(const char *root, const char *rel) {
  char path[PATH_MAX];
  if (sysfs_tree_path(root, rel, path) < 0) return -ENAMETOOLONG;
  return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

int sysfs_tree_symlink(const char *root, const char *target, const char *rel) {
  char path[PATH_MAX];
  if (sysfs_tree_path(root, rel, path) < 0) return -ENAMETOOLONG;
  unlink(path);
  return symlink(target, path) == 0 ? 0 : -errno;
}

int sysfs_tree_link(const char *root, const char *target, const char *rel) {
  /* one "../" per directory rel sits in: sysfs links are relative (drivers/base/core.c sysfs_create_link) */
  char rt[PATH_MAX];
  size_t len = 0;
  for (const char *c = rel; *c; c++)
    if (*c == '/') {
      if (len + 3 >= sizeof(rt)) return -ENAMETOOLONG;
      memcpy(rt + len, "../", 3);
      len += 3;
    }
  int n = snprintf(rt + len, sizeof(rt) - len, "%s", target);
  if (n < 0 || (size_t)n >= sizeof(rt) - len) return -ENAMETOOLONG;
  return sysfs_tree_symlink(root, rt, rel);
}

void sysfs_tree_unlink(const char *root, const char *rel) {
  char path[PATH_MAX];
  if (sysfs_tree_path(root, rel, path) == 0) unlink(path);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* ---------------- temp trees ----------------
 * Every temp dir the models create is <TMPDIR>/bg-mock-<pid>-<tag>-XXXXXX. A process that is killed (SIGKILL,
 * a crash, a test timeout) cannot remove its trees, so each new one first sweeps the trees whose <pid> no longer
 * exists (kill(pid, 0) fails with ESRCH); the trees of this process that are still there at a normal exit are
 * removed by an atexit handler - only in the process that created them, never in a fork()ed child. A pid reused
 * by another process keeps its stale tree until that process is gone too. */

#define TMP_PREFIX "bg-mock-"
enum { TMP_SLOTS = 64 };
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  pid_t pid;
  char path[PATH_MAX];
} tmp_live[TMP_SLOTS];

static void rm_tree_raw(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static void tmp_atexit(void) {
  pthread_mutex_lock(&tmp_lock);
  for (int i = 0; i < TMP_SLOTS; i++)
    if (tmp_live[i].path[0] && tmp_live[i].pid == getpid()) {
      rm_tree_raw(tmp_live[i].path);
      tmp_live[i].path[0] = '\0';
    }
  pthread_mutex_unlock(&tmp_lock);
}

void sysfs_tree_rm(const char *path) {
  pthread_mutex_lock(&tmp_lock);
  for (int i = 0; i < TMP_SLOTS; i++)
    if (tmp_live[i].path[0] && strcmp(tmp_live[i].path, path) == 0) tmp_live[i].path[0] = '\0';
  pthread_mutex_unlock(&tmp_lock);
  rm_tree_raw(path);
}

const char *sysfs_tree_tmp_base(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

int sysfs_tree_tmpdir_sweep(void) {
  const char *base = sysfs_tree_tmp_base();
  DIR *d = opendir(base);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *name = de->d_name;
    if (strncmp(name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1) != 0) continue;
    char *end;
    long pid = strtol(name + sizeof(TMP_PREFIX) - 1, &end, 10);
    if (end == name + sizeof(TMP_PREFIX) - 1 || *end != '-' || pid <= 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to signal: EPERM) */
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof(path), "%s/%s", base, name) >= (int)sizeof(path)) continue;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    rm_tree_raw(path);
    n++;
  }
  closedir(d);
  return n;
}

int sysfs_tree_tmpdir_new(const char *tag, char *buf, size_t n) {
  sysfs_tree_tmpdir_sweep();
  int len = snprintf(buf, n, "%s/" TMP_PREFIX "%ld-%s-XXXXXX", sysfs_tree_tmp_base(), (long)getpid(), tag);
  if (len < 0 || (size_t)len >= n) {
    if (n) buf[0] = '\0';
    return -ENAMETOOLONG;
  }
  if (!mkdtemp(buf)) {
    int e = errno;
    buf[0] = '\0';
    return -e;
  }
  pthread_mutex_lock(&tmp_lock);
  static bool registered;
  if (!registered) registered = atexit(tmp_atexit) == 0;
  for (int i = 0; i < TMP_SLOTS; i++)
    if (!tmp_live[i].path[0] || tmp_live[i].pid != getpid()) { /* a free slot, or a fork parent's entry */
      tmp_live[i].pid = getpid();
      snprintf(tmp_live[i].path, sizeof(tmp_live[i].path), "%s", buf);
      break;
    }
  pthread_mutex_unlock(&tmp_lock);
  return 0;
}
