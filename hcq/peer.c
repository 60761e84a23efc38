/* hcq/peer.c: several devices in one process (baregpu/hcq.h "several devices"): the registry of open bg_devs, buffer
 * write dependencies across devices, and transfers. This first form stages every transfer through host memory and
 * waits for foreign writers on the host; peer mappings come with the backends' peer operations. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/dev_internal.h"

/* ---------------- open devices by serial ---------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static bg_dev **open_devs;
static size_t nopen, capopen;
static atomic_uint_fast64_t next_serial = 1;

void bg_peer_dev_opened(bg_dev *d) {
  d->serial = atomic_fetch_add(&next_serial, 1);
  pthread_mutex_lock(&reg_lock);
  if (nopen == capopen) {
    size_t cap = capopen ? capopen * 2 : 8;
    bg_dev **n = realloc(open_devs, cap * sizeof(*n));
    if (n) open_devs = n, capopen = cap;
  }
  if (nopen < capopen) open_devs[nopen++] = d;
  pthread_mutex_unlock(&reg_lock);
}

void bg_peer_dev_closing(bg_dev *d) {
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < nopen; i++)
    if (open_devs[i] == d) {
      open_devs[i] = open_devs[--nopen];
      break;
    }
  if (nopen == 0) {
    free(open_devs);
    open_devs = NULL;
    capopen = 0;
  }
  pthread_mutex_unlock(&reg_lock);
}

/* The writer of dep when it is still open (its work may be pending), else NULL (close synchronized it). */
static bg_dev *writer_alive(const bg_buf_write_dep *dep) {
  bg_dev *w = NULL;
  if (!dep->serial) return NULL;
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < nopen && !w; i++)
    if (open_devs[i] == dep->dev && open_devs[i]->serial == dep->serial) w = dep->dev;
  pthread_mutex_unlock(&reg_lock);
  return w;
}

void bg_peer_buf_freeing(bg_buf *b) {
  if (bg_peer_wait_writer(b) < 0) BG_LOG(1, "%s: freeing a buffer: %s", b->dev->name, bg_last_error());
}

int bg_peer_wait_writer(const bg_buf *b) {
  bg_dev *w = writer_alive(&b->writer);
  if (!w || w == b->dev) return 0;
  return bg_signal_wait(b->writer.sig, b->writer.value, 0);
}

/* ---------------- dependencies ---------------- */

void bg_buf_mark_written(bg_buf *b, bg_dev *d) {
  if (!b || !d) return;
  b->writer = (bg_buf_write_dep){d->serial, d, d->timeline, d->timeline_value - 1};
}

int bg_dev_wait_bufs(bg_dev *d, bg_buf *const *bufs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!bufs[i]) continue;
    bg_dev *w = writer_alive(&bufs[i]->writer);
    if (!w || w == d) continue;
    int r = bg_signal_wait(bufs[i]->writer.sig, bufs[i]->writer.value, 0);
    if (r < 0) return bg_error_context(r, "%s: waiting for %s's write of a buffer: ", d->name, w->name);
  }
  return 0;
}

/* ---------------- peer access ---------------- */

bool bg_dev_can_p2p(const bg_dev *d, const bg_dev *peer, char *why, size_t n) {
  if (d == peer || (d->priv == peer->priv && d->ops == peer->ops)) return true;
  if (why && n) snprintf(why, n, "%s has no peer mappings", d->name);
  return false;
}

int bg_buf_map_peer(bg_buf *b, bg_dev *d, uint64_t *va) {
  if (b->dev == d || (b->dev->priv == d->priv && b->dev->ops == d->ops)) {
    *va = b->mem.va;
    return 0;
  }
  char why[160];
  bg_dev_can_p2p(d, b->dev, why, sizeof(why));
  return bg_error(BG_ENOTSUP, "%s: cannot map a buffer of %s: %s", d->name, b->dev->name, why);
}

int bg_signal_va_on(const bg_signal *s, bg_dev *d, uint64_t *va) {
  if (s->dev == d || (s->dev->priv == d->priv && s->dev->ops == d->ops)) {
    *va = s->va;
    return 0;
  }
  return bg_error(BG_ENOTSUP, "%s: cannot map a signal of %s", d->name, s->dev->name);
}

/* ---------------- transfers ---------------- */

static _Thread_local bg_transfer_info last_info;

void bg_transfer_last(bg_transfer_info *out) { *out = last_info; }

#define STAGE_CHUNK ((uint64_t)4 << 20)

int bg_buf_transfer(bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t n) {
  if (!dst || !src) return bg_error(BG_EINVAL, "bg_buf_transfer: %s buffer is NULL", dst ? "source" : "destination");
  if (soff > src->mem.size || n > src->mem.size - soff)
    return bg_error(BG_EINVAL, "%s: transfer source: %llu bytes at offset %llu exceed the buffer's %llu bytes",
                    src->dev->name, (unsigned long long)n, (unsigned long long)soff,
                    (unsigned long long)src->mem.size);
  if (doff > dst->mem.size || n > dst->mem.size - doff)
    return bg_error(BG_EINVAL, "%s: transfer destination: %llu bytes at offset %llu exceed the buffer's %llu bytes",
                    dst->dev->name, (unsigned long long)n, (unsigned long long)doff,
                    (unsigned long long)dst->mem.size);
  memset(&last_info, 0, sizeof(last_info));
  last_info.bytes = n;
  bg_dev_can_p2p(src->dev, dst->dev, last_info.why, sizeof(last_info.why));
  BG_LOG(1, "transfer %s -> %s, %llu bytes: staged through host memory (%s)", src->dev->name, dst->dev->name,
         (unsigned long long)n, last_info.why);
  int r = bg_peer_wait_writer(src);
  if (r < 0) return r;
  uint8_t *stage = malloc(n < STAGE_CHUNK ? (n ? n : 1) : STAGE_CHUNK);
  if (!stage) return bg_error(BG_ENOMEM, "transfer: out of host memory for staging");
  for (uint64_t done = 0; r == 0 && done < n;) {
    uint64_t k = n - done < STAGE_CHUNK ? n - done : STAGE_CHUNK;
    r = bg_buf_read(src, soff + done, stage, k);
    if (r == 0) r = bg_buf_write(dst, doff + done, stage, k);
    done += k;
  }
  free(stage);
  return r;
}
