/* hcq/usage.c: publish the device memory this process holds next to the device's lock file (hcq/usage.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hcq/backend.h"
#include "platform/pci_lock.h"
#include "hcq/usage.h"

#define MAX_TRACKED 64
#define MEM_SUFFIX ".lock.mem"

typedef struct tracked {
  const bg_dev *dev;   /* compared only, never dereferenced after it was added: the device may be gone */
  const void *priv;    /* its backend state: the opens of one GPU share it */
  char name[48];       /* its DEV name */
  char lock[64];       /* the lock name, "" when the device holds none */
  char path[PATH_MAX]; /* its .mem file, written with the lock dir of the moment it was claimed */
  uint64_t bytes, buffers;
} tracked;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tracked tab[MAX_TRACKED];
static int ntab;

static bool claimed(const char *name) {
  for (int i = 0; i < ntab; i++)
    if (strcmp(tab[i].lock, name) == 0) return true;
  return false;
}

/* d's entry, created on first use: a device opened again in this process (the backend shares its state: same
 * priv, e.g. am/am_hcq.c's bg_am_hcq_share) shares the other open's lock; else the first lock this process holds
 * that no other device claimed. */
static tracked *entry(const bg_dev *d) {
  for (int i = 0; i < ntab; i++)
    if (tab[i].dev == d) return &tab[i];
  /* A closing device's last frees (after bg_usage_close) must not add an entry that outlives it. */
  if (ntab == MAX_TRACKED || d->closing) return NULL;
  tracked *t = &tab[ntab];
  memset(t, 0, sizeof(*t));
  t->dev = d;
  t->priv = d->priv;
  snprintf(t->name, sizeof(t->name), "%s", d->name);
  for (int i = 0; i < ntab; i++) {
    if (!d->priv || tab[i].priv != d->priv) continue;
    memcpy(t->lock, tab[i].lock, sizeof(t->lock));
    memcpy(t->path, tab[i].path, sizeof(t->path));
    ntab++;
    return t;
  }
  bg_pci_lock_entry *v = NULL;
  size_t n = 0;
  /* The CPU device takes no lock: nothing to look for. */
  if (!(d->ops && d->ops->kind && strcmp(d->ops->kind, "CPU") == 0) && bg_pci_lock_list(&v, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      if (v[i].pid != getpid() || claimed(v[i].name)) continue;
      snprintf(t->lock, sizeof(t->lock), "%s", v[i].name);
      snprintf(t->path, sizeof(t->path), "%s.mem", v[i].path); /* "<dir>/baregpu-<name>.lock" + ".mem" */
      break;
    }
  }
  free(v);
  ntab++;
  return t;
}

/* Write the file of t's lock with the use of every open of it: a temp file in the same directory renamed over it,
 * so a reader sees the old or the new. */
static void publish(const tracked *t) {
  if (!t->lock[0]) return;
  uint64_t bytes = 0, buffers = 0;
  for (int i = 0; i < ntab; i++)
    if (strcmp(tab[i].lock, t->lock) == 0) bytes += tab[i].bytes, buffers += tab[i].buffers;
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof(tmp), "%s.%d.tmp", t->path, (int)getpid());
  int f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (f < 0) {
    BG_LOG(2, "usage: cannot write %s: %s", tmp, strerror(errno));
    return;
  }
  char buf[256];
  int len = snprintf(buf, sizeof(buf), "pid %d\ndev %s\nbytes %" PRIu64 "\nbuffers %" PRIu64 "\n", (int)getpid(),
                     t->name, bytes, buffers);
  bool ok = len > 0 && write(f, buf, (size_t)len) == len;
  if (close(f) != 0) ok = false;
  if (!ok || rename(tmp, t->path) != 0) {
    BG_LOG(2, "usage: cannot publish %s: %s", t->path, strerror(errno));
    unlink(tmp);
  }
}

void bg_usage_note(bg_dev *d, int64_t delta) {
  pthread_mutex_lock(&mu);
  tracked *t = entry(d);
  if (t) {
    if (delta >= 0) {
      t->bytes += (uint64_t)delta;
      t->buffers++;
    } else {
      uint64_t m = (uint64_t)(-delta);
      t->bytes = m > t->bytes ? 0 : t->bytes - m;
      if (t->buffers) t->buffers--;
    }
    publish(t);
  }
  pthread_mutex_unlock(&mu);
}

void bg_usage_close(const bg_dev *d) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < ntab; i++) {
    if (tab[i].dev != d) continue;
    tracked gone = tab[i];
    tab[i] = tab[--ntab];
    if (!gone.lock[0]) break;
    /* the last open of the device removes the file, another one's use stays published */
    int other = -1;
    for (int k = 0; k < ntab && other < 0; k++)
      if (strcmp(tab[k].lock, gone.lock) == 0) other = k;
    if (other < 0) unlink(gone.path);
    else publish(&tab[other]);
    break;
  }
  pthread_mutex_unlock(&mu);
}

int bg_usage_read(const char *name, bg_usage *u) {
  memset(u, 0, sizeof(*u));
  pid_t owner = 0;
  int r = bg_pci_lock_owner(name, &owner);
  if (r < 0) return r;
  if (owner <= 0) return -BG_ENODEV; /* nobody holds it: a file left there is stale */
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/baregpu-%s" MEM_SUFFIX, bg_pci_lock_dir(), name);
  /* Never block on something that is not a regular file (a FIFO planted there). */
  int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (f < 0) return -BG_ENODEV;
  char buf[512];
  ssize_t n = read(f, buf, sizeof(buf) - 1);
  close(f);
  if (n <= 0) return -BG_ENODEV;
  buf[n] = '\0';
  int pid = 0;
  char dev[48] = "";
  uint64_t bytes = 0, buffers = 0;
  if (sscanf(buf, "pid %d\ndev %47s\nbytes %" SCNu64 "\nbuffers %" SCNu64, &pid, dev, &bytes, &buffers) != 4)
    return bg_error(BG_EFORMAT, "usage: %s is not 'pid N, dev NAME, bytes N, buffers N'", path);
  if (pid != owner) return -BG_ENODEV; /* written by an earlier holder that died */
  u->pid = pid;
  snprintf(u->dev, sizeof(u->dev), "%s", dev);
  u->bytes = bytes;
  u->buffers = buffers;
  return 0;
}
