/* tests/unit/tools/smi_kernel.c: the FIFO-backed sysfs attributes of smi_kernel.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hcq/pci_hook.h"
#include "hcq/pci_scan.h"
#include "smi_kernel.h"

#define MAX_FIFOS 16
#define IO_TIMEOUT_MS 5000

typedef struct fifo {
  char rel[256];
  int fd, wd;        /* our O_RDWR end (keeps the pipe and its filler alive), the inotify watch */
  size_t filled;     /* filler bytes in the pipe */
  char expect[64];
  bool expecting;
  unsigned writes;
} fifo;

struct smi_kernel {
  fifo f[MAX_FIFOS];
  size_t n;
  int in, stop[2];
  pthread_t thread;
  bool running;
  const bg_pci_hooks *hooks;
  void *ctx;
  pthread_mutex_t mu;
  char failures[4096], copy[4096];
};

static void fail(smi_kernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(smi_kernel *k, const char *fmt, ...) {
  size_t len = strlen(k->failures);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->failures + len, sizeof(k->failures) - len, fmt, ap);
  va_end(ap);
  len = strlen(k->failures);
  if (len + 1 < sizeof(k->failures)) strcpy(k->failures + len, "\n");
}

/* Fill the pipe until a write would block: the next writer then waits in write(2). */
static void fill(fifo *f) {
  static const char junk[4096] = {0};
  ssize_t w;
  while ((w = write(f->fd, junk, sizeof(junk))) > 0) f->filled += (size_t)w;
  while ((w = write(f->fd, junk, 1)) > 0) f->filled += (size_t)w;
}

/* Wait until fd has data; false after IO_TIMEOUT_MS. */
static bool wait_readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  while ((r = poll(&p, 1, IO_TIMEOUT_MS)) < 0 && errno == EINTR) {}
  return r > 0;
}

/* Read and drop exactly n bytes from the non-blocking fd. */
static bool drain(int fd, size_t n) {
  char buf[4096];
  while (n > 0) {
    ssize_t r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
    if (r > 0) n -= (size_t)r;
    else if ((r == 0 || errno == EAGAIN || errno == EINTR) && wait_readable(fd)) continue;
    else return false;
  }
  return true;
}

/* What one write(2) put into the pipe (at most n - 1 bytes, NUL-terminated); -1 on timeout. */
static ssize_t read_write(int fd, char *buf, size_t n) {
  for (;;) {
    ssize_t r = read(fd, buf, n - 1);
    if (r > 0) {
      buf[r] = '\0';
      return r;
    }
    if (!((r == 0 || errno == EAGAIN || errno == EINTR) && wait_readable(fd))) return -1;
  }
}

/* Drop queued inotify events (the model's own opens of the attribute it just rewrote). */
static void discard_events(smi_kernel *k) {
  char buf[4096];
  while (read(k->in, buf, sizeof(buf)) > 0) {}
}

/* A writer opened f and waits in write(2): apply the announced value, then let it through. */
static void serve(smi_kernel *k, fifo *f) {
  pthread_mutex_lock(&k->mu);
  if (f->expecting) {
    int r = k->hooks->written(k->ctx, f->rel, 0, f->expect, strlen(f->expect));
    if (r < 0) fail(k, "%s: the model refused '%s' (%d)", f->rel, f->expect, r);
  } else {
    fail(k, "%s: a write nobody expected", f->rel);
  }
  discard_events(k);
  if (!drain(f->fd, f->filled)) fail(k, "%s: cannot drain the pipe", f->rel);
  f->filled = 0;
  char data[256];
  if (read_write(f->fd, data, sizeof(data)) < 0) {
    fail(k, "%s: opened for writing, but nothing written within %d ms", f->rel, IO_TIMEOUT_MS);
  } else {
    data[strcspn(data, "\n")] = '\0';
    if (f->expecting && strcmp(data, f->expect) != 0)
      fail(k, "%s: written '%s', expected '%s'", f->rel, data, f->expect);
    else if (!f->expecting)
      fail(k, "%s: the unexpected write was '%s'", f->rel, data);
  }
  f->writes++;
  f->expecting = false;
  fill(f);
  pthread_mutex_unlock(&k->mu);
}

static void *loop(void *arg) {
  smi_kernel *k = arg;
  for (;;) {
    struct pollfd p[2] = {{k->in, POLLIN, 0}, {k->stop[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents) break;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t len = read(k->in, buf, sizeof(buf));
    for (ssize_t off = 0; off < len;) {
      const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
      off += (ssize_t)(sizeof(*ev) + ev->len);
      if (!(ev->mask & IN_OPEN)) continue;
      for (size_t i = 0; i < k->n; i++)
        if (k->f[i].wd == ev->wd) serve(k, &k->f[i]);
    }
  }
  return NULL;
}

static fifo *find(smi_kernel *k, const char *rel) {
  for (size_t i = 0; i < k->n; i++)
    if (strcmp(k->f[i].rel, rel) == 0) return &k->f[i];
  return NULL;
}

smi_kernel *smi_kernel_start(const char *const *rels, size_t n) {
  if (n > MAX_FIFOS) return NULL;
  smi_kernel *k = calloc(1, sizeof(*k));
  if (!k) return NULL;
  pthread_mutex_init(&k->mu, NULL);
  k->stop[0] = k->stop[1] = -1;
  k->hooks = bg_pci_hooks_current(&k->ctx);
  k->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  bool ok = k->hooks && k->hooks->written && k->in >= 0 && pipe2(k->stop, O_CLOEXEC) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    fifo *f = &k->f[k->n++];
    f->fd = f->wd = -1;
    snprintf(f->rel, sizeof(f->rel), "%s", rels[i]);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", bg_pci_sysfs_root(), rels[i]);
    unlink(path);
    ok = mkfifo(path, 0644) == 0 && (f->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) >= 0;
    if (ok) fill(f);
    ok = ok && (f->wd = inotify_add_watch(k->in, path, IN_OPEN)) >= 0;
    if (!ok) fprintf(stderr, "smi_kernel: cannot serve %s: %s\n", path, strerror(errno));
  }
  ok = ok && pthread_create(&k->thread, NULL, loop, k) == 0;
  k->running = ok;
  if (!ok) {
    smi_kernel_stop(k);
    return NULL;
  }
  return k;
}

void smi_kernel_expect(smi_kernel *k, const char *rel, const char *value) {
  pthread_mutex_lock(&k->mu);
  fifo *f = find(k, rel);
  if (!f) {
    fail(k, "%s: not served (smi_kernel_start)", rel);
  } else {
    snprintf(f->expect, sizeof(f->expect), "%s", value);
    f->expecting = true;
  }
  pthread_mutex_unlock(&k->mu);
}

unsigned smi_kernel_writes(smi_kernel *k, const char *rel) {
  pthread_mutex_lock(&k->mu);
  fifo *f = find(k, rel);
  unsigned w = f ? f->writes : 0;
  pthread_mutex_unlock(&k->mu);
  return w;
}

const char *smi_kernel_failures(smi_kernel *k) {
  pthread_mutex_lock(&k->mu);
  memcpy(k->copy, k->failures, sizeof(k->copy));
  pthread_mutex_unlock(&k->mu);
  return k->copy;
}

void smi_kernel_clear_failures(smi_kernel *k) {
  pthread_mutex_lock(&k->mu);
  k->failures[0] = '\0';
  pthread_mutex_unlock(&k->mu);
}

void smi_kernel_stop(smi_kernel *k) {
  if (!k) return;
  if (k->running) {
    if (write(k->stop[1], "x", 1) == 1) pthread_join(k->thread, NULL);
  }
  for (size_t i = 0; i < k->n; i++)
    if (k->f[i].fd >= 0) close(k->f[i].fd);
  if (k->in >= 0) close(k->in);
  if (k->stop[0] >= 0) close(k->stop[0]);
  if (k->stop[1] >= 0) close(k->stop[1]);
  pthread_mutex_destroy(&k->mu);
  free(k);
}
