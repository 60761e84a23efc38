/* tests/unit/tools/smi_kernel.c: the kernel's side of sysfs writes another process makes (smi_kernel.h). */
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
#include <time.h>
#include <unistd.h>

#include "platform/pci_hook.h"
#include "platform/pci_scan.h"
#include "smi_kernel.h"

#define MAX_ATTRS 16
#define IO_TIMEOUT_MS 5000

typedef struct attr {
  char rel[256], path[PATH_MAX];
  int wd;            /* the inotify watch */
  char expect[64];
  bool expecting;
  unsigned writes;
} attr;

struct smi_kernel {
  attr f[MAX_ATTRS];
  size_t n;
  int in, stop[2];
  bool busy;         /* the thread has taken events off the inotify fd and not finished serving them */
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

/* A writer closed f: read what it wrote, empty the file again, apply the value to the model through the tree's hooks
 * and check it against the announcement. Under k->mu. */
static void serve(smi_kernel *k, attr *f) {
  char data[256] = "";
  /* Read-only, and truncate(2) by path: neither raises IN_CLOSE_WRITE, so serving makes no event of its own. */
  int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, data, sizeof(data) - 1) : -1;
  if (fd >= 0) close(fd);
  if (n > 0 && truncate(f->path, 0) != 0) fail(k, "%s: cannot empty it: %s", f->rel, strerror(errno));
  if (n <= 0) return; /* an open for writing that wrote nothing */
  data[n] = '\0';
  data[strcspn(data, "\n")] = '\0';
  if (!f->expecting) {
    fail(k, "%s: a write nobody expected: '%s'", f->rel, data);
  } else if (strcmp(data, f->expect) != 0) {
    fail(k, "%s: written '%s', expected '%s'", f->rel, data, f->expect);
  } else {
    int r = k->hooks->written(k->ctx, f->rel, 0, data, strlen(data));
    if (r < 0) fail(k, "%s: the model refused '%s' (%d)", f->rel, data, r);
  }
  f->writes++;
  f->expecting = false;
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
    pthread_mutex_lock(&k->mu);
    k->busy = true;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t len = read(k->in, buf, sizeof(buf));
    for (ssize_t off = 0; off < len;) {
      const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
      off += (ssize_t)(sizeof(*ev) + ev->len);
      if (!(ev->mask & IN_CLOSE_WRITE)) continue;
      for (size_t i = 0; i < k->n; i++)
        if (k->f[i].wd == ev->wd) serve(k, &k->f[i]);
    }
    k->busy = false;
    pthread_mutex_unlock(&k->mu);
  }
  return NULL;
}

static attr *find(smi_kernel *k, const char *rel) {
  for (size_t i = 0; i < k->n; i++)
    if (strcmp(k->f[i].rel, rel) == 0) return &k->f[i];
  return NULL;
}

smi_kernel *smi_kernel_start(const char *const *rels, size_t n) {
  if (n > MAX_ATTRS) return NULL;
  smi_kernel *k = calloc(1, sizeof(*k));
  if (!k) return NULL;
  pthread_mutex_init(&k->mu, NULL);
  k->stop[0] = k->stop[1] = -1;
  k->hooks = bg_pci_hooks_current(&k->ctx);
  k->in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  bool ok = k->hooks && k->hooks->written && k->in >= 0 && pipe2(k->stop, O_CLOEXEC) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    attr *f = &k->f[k->n++];
    f->wd = -1;
    snprintf(f->rel, sizeof(f->rel), "%s", rels[i]);
    snprintf(f->path, sizeof(f->path), "%s/%s", bg_pci_sysfs_root(), rels[i]);
    int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0200); /* write-only, as the kernel's */
    ok = fd >= 0 && close(fd) == 0 && (f->wd = inotify_add_watch(k->in, f->path, IN_CLOSE_WRITE)) >= 0;
    if (!ok) fprintf(stderr, "smi_kernel: cannot serve %s: %s\n", f->path, strerror(errno));
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
  attr *f = find(k, rel);
  if (!f) {
    fail(k, "%s: not served (smi_kernel_start)", rel);
  } else {
    snprintf(f->expect, sizeof(f->expect), "%s", value);
    f->expecting = true;
  }
  pthread_mutex_unlock(&k->mu);
}

/* Every write closed before this call has been served: nothing left on the inotify fd, nothing being served. */
static void settle(smi_kernel *k) {
  for (int i = 0; i < IO_TIMEOUT_MS; i++) {
    pthread_mutex_lock(&k->mu);
    struct pollfd p = {k->in, POLLIN, 0};
    bool idle = !k->busy && poll(&p, 1, 0) == 0;
    pthread_mutex_unlock(&k->mu);
    if (idle) return;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

unsigned smi_kernel_writes(smi_kernel *k, const char *rel) {
  settle(k);
  pthread_mutex_lock(&k->mu);
  attr *f = find(k, rel);
  unsigned w = f ? f->writes : 0;
  pthread_mutex_unlock(&k->mu);
  return w;
}

const char *smi_kernel_failures(smi_kernel *k) {
  settle(k);
  pthread_mutex_lock(&k->mu);
  memcpy(k->copy, k->failures, sizeof(k->copy));
  pthread_mutex_unlock(&k->mu);
  return k->copy;
}

void smi_kernel_clear_failures(smi_kernel *k) {
  settle(k);
  pthread_mutex_lock(&k->mu);
  k->failures[0] = '\0';
  pthread_mutex_unlock(&k->mu);
}

void smi_kernel_stop(smi_kernel *k) {
  if (!k) return;
  if (k->running) {
    settle(k);
    if (write(k->stop[1], "x", 1) == 1) pthread_join(k->thread, NULL);
  }
  if (k->in >= 0) close(k->in);
  if (k->stop[0] >= 0) close(k->stop[0]);
  if (k->stop[1] >= 0) close(k->stop[1]);
  pthread_mutex_destroy(&k->mu);
  free(k);
}
