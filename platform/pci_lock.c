/* platform/pci_lock.c: per-device lock files (platform/pci_lock.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_lock.h"

#define LOCK_PREFIX "baregpu-"
#define LOCK_SUFFIX ".lock"

const char *bg_pci_lock_dir(void) {
  const char *d = getenv("BG_LOCK_DIR");
  if (d && *d) return d;
  return access("/run/lock", W_OK) == 0 ? "/run/lock" : "/tmp";
}

static int lock_path(const char *name, char *buf, size_t n) {
  if (!name || !*name || strchr(name, '/') || strlen(name) >= sizeof(((bg_pci_lock_entry *)0)->name))
    return bg_error(BG_EINVAL, "lock: bad device name '%s'", name ? name : "(null)");
  snprintf(buf, n, "%s/" LOCK_PREFIX "%s" LOCK_SUFFIX, bg_pci_lock_dir(), name);
  return 0;
}

/* The pid written in a lock file; 0 when empty or unreadable (the owner may be writing it). */
static pid_t read_pid(int fd) {
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  long pid = strtol(buf, NULL, 10);
  return pid > 0 && pid < INT32_MAX ? (pid_t)pid : 0;
}

static void nap_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* Lock files are opened without following a link and without blocking (a FIFO opened for reading waits for a
 * writer for ever), then must be regular files: anything else at the path is an error naming it. */
#define LOCK_OPEN_FLAGS (O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)

static int open_error(const char *path, int e) {
  if (e == ELOOP)
    return bg_error(BG_EIO, "lock: %s is a symbolic link, expected a regular file (remove it, or set BG_LOCK_DIR to "
                    "another directory)", path);
  return bg_error(e == EACCES || e == EPERM ? BG_EPERM : BG_EIO, "lock: cannot open %s: %s (set BG_LOCK_DIR to a "
                  "writable directory)", path, strerror(e));
}

/* 0 when f is a regular file; else closes f and returns an error naming path and what it is. */
static int check_regular(int f, const char *path) {
  struct stat st;
  if (fstat(f, &st) != 0) {
    int e = errno;
    close(f);
    return bg_error(BG_EIO, "lock: fstat %s: %s", path, strerror(e));
  }
  if (S_ISREG(st.st_mode)) return 0;
  close(f);
  const char *what = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory" : S_ISSOCK(st.st_mode) ?
                     "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node" : "a special file";
  return bg_error(BG_EIO, "lock: %s is %s, not a regular file (remove it, or set BG_LOCK_DIR to another directory)",
                  path, what);
}

int bg_pci_lock_acquire(const char *name, int *fd) {
  char path[PATH_MAX];
  *fd = -1;
  int r = lock_path(name, path, sizeof(path));
  if (r < 0) return r;
  /* Open without O_CREAT when the file exists: in sticky /tmp, O_CREAT on another user's file
   * fails under fs.protected_regular. A new file gets 0666 so other users can lock it later. */
  int f = open(path, O_RDWR | LOCK_OPEN_FLAGS);
  if (f < 0 && errno == ENOENT) {
    f = open(path, O_RDWR | O_CREAT | LOCK_OPEN_FLAGS, 0666);
    if (f >= 0) (void)fchmod(f, 0666);
  }
  /* A directory fails O_RDWR with EISDIR: report it as what it is. */
  if (f < 0 && errno == EISDIR) f = open(path, O_RDONLY | LOCK_OPEN_FLAGS);
  if (f < 0) return open_error(path, errno);
  if ((r = check_regular(f, path)) < 0) return r;
  /* A few tries: bg_pci_lock_owner holds a shared lock for a moment while it looks. */
  int tries = 0;
  while (flock(f, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    if ((e == EWOULDBLOCK || e == EINTR) && ++tries < 5) {
      nap_ms(2);
      continue;
    }
    pid_t pid = 0;
    for (int i = 0; i < 10 && (pid = read_pid(f)) == 0; i++) nap_ms(1);
    close(f);
    if (e != EWOULDBLOCK) return bg_error(BG_EIO, "lock: flock %s: %s", path, strerror(e));
    if (pid) return bg_error(BG_EBUSY, "device %s is in use by pid %d (lock %s)", name, (int)pid, path);
    return bg_error(BG_EBUSY, "device %s is in use by another process (lock %s names no pid)", name, path);
  }
  char buf[24];
  int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
  if (ftruncate(f, 0) != 0 || pwrite(f, buf, (size_t)len, 0) != len) {
    int e = errno;
    close(f);
    return bg_error(BG_EIO, "lock: cannot write pid to %s: %s", path, strerror(e));
  }
  *fd = f;
  return 0;
}

void bg_pci_lock_release(int fd) {
  if (fd < 0) return;
  /* Clear the pid while still holding the lock, so readers never see a stale owner. */
  if (ftruncate(fd, 0) != 0) BG_LOG(1, "lock: cannot clear the pid of a lock file: %s", strerror(errno));
  close(fd);
}

/* Owner of the lock file at path: probing with a shared lock never blocks an owner that holds
 * an exclusive one, and acquire retries past the moment the probe holds it. */
static int owner_of(const char *path, pid_t *pid) {
  *pid = 0;
  int f = open(path, O_RDONLY | LOCK_OPEN_FLAGS);
  if (f < 0) return errno == ENOENT ? 0 : open_error(path, errno);
  int r = check_regular(f, path);
  if (r < 0) return r;
  if (flock(f, LOCK_SH | LOCK_NB) == 0) {
    flock(f, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    *pid = read_pid(f);
    if (*pid == 0) *pid = -1;  /* held, pid not written yet */
  }
  close(f);
  return 0;
}

int bg_pci_lock_owner(const char *name, pid_t *pid) {
  char path[PATH_MAX];
  *pid = 0;
  int r = lock_path(name, path, sizeof(path));
  return r < 0 ? r : owner_of(path, pid);
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const bg_pci_lock_entry *)a)->name, ((const bg_pci_lock_entry *)b)->name);
}

int bg_pci_lock_list(bg_pci_lock_entry **out, size_t *n) {
  *out = NULL;
  *n = 0;
  const char *dir = bg_pci_lock_dir();
  DIR *d = opendir(dir);
  if (!d) return bg_error(BG_EIO, "lock: cannot list %s: %s", dir, strerror(errno));
  bg_pci_lock_entry *v = NULL;
  size_t cnt = 0, cap = 0;
  int r = 0;
  struct dirent *de;
  const size_t pl = strlen(LOCK_PREFIX), sl = strlen(LOCK_SUFFIX);
  while (r == 0 && (de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len <= pl + sl || strncmp(de->d_name, LOCK_PREFIX, pl) != 0 || strcmp(de->d_name + len - sl, LOCK_SUFFIX) != 0)
      continue;
    if (len - pl - sl >= sizeof(v->name)) continue;
    if (cnt == cap) {
      cap = cap ? cap * 2 : 8;
      bg_pci_lock_entry *nv = realloc(v, cap * sizeof(*nv));
      if (!nv) {
        r = bg_error(BG_ENOMEM, "lock: out of memory listing %s", dir);
        break;
      }
      v = nv;
    }
    bg_pci_lock_entry *e = &v[cnt];
    memset(e, 0, sizeof(*e));
    memcpy(e->name, de->d_name + pl, len - pl - sl);
    snprintf(e->path, sizeof(e->path), "%s/%s", dir, de->d_name);
    if (owner_of(e->path, &e->pid) == 0) cnt++;
  }
  closedir(d);
  if (r < 0) {
    free(v);
    return r;
  }
  if (cnt > 1) qsort(v, cnt, sizeof(*v), cmp_entry);
  *out = v;
  *n = cnt;
  return 0;
}
