/* hcq/peer.c: several devices in one process (baregpu/hcq.h "several devices"): the registry of open bg_devs, peer
 * mappings (a buffer of one device in another's GPU address space, through the backends' peer operations), buffer
 * write dependencies across devices (GPU-side waits on the writer's timeline signal mapped into the reader), and
 * transfers: peer-to-peer on the source's copy queue, else staged through host memory.
 *
 * The P2P transfer is tinygrad's (tinygrad/runtime/support/hcq.py HCQAllocator._transfer): on the source's copy
 * queue wait(src timeline, src_tv - 1), wait(dst timeline, dst_tv - 1), copy, signal(src timeline, next value); here
 * the destination does not wait at once: the copy is recorded as the destination buffer's last write and the
 * destination's readers wait for exactly that value (bg_dev_wait_bufs). */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hcq/dev_internal.h"
#include "hcq/memmap.h"

/* One mapping of a buffer into another device (bg_buf.peers), also on the process-wide list so that a closing
 * mapper drops the mappings it holds. */
struct bg_peer_map {
  struct bg_peer_map *next;   /* the buffer's mappings */
  struct bg_peer_map *gnext;  /* every mapping */
  bg_buf *buf;
  bg_dev *dev;                /* the mapping device */
  uint64_t base, size;        /* what peer_map returned, for peer_unmap */
};

/* What peer.c keeps per open bg_dev: its wrap epoch and the recordings it reuses (the device's own thread's). */
typedef struct peer_dev {
  bg_dev *d;
  uint64_t serial;
  uint64_t epoch;             /* timeline wraps so far */
  bg_queue *waitq;            /* compute queue: wait(var sig, var value) + memory barrier (bg_dev_wait_bufs) */
  bg_queue *xferq;            /* transfer program for xfer_n bytes (xfer_program) */
  uint64_t xfer_n;
} peer_dev;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static peer_dev **open_devs;
static size_t nopen, capopen;
static struct bg_peer_map *all_maps;
static atomic_uint_fast64_t next_serial = 1;

/* Under reg_lock. */
static peer_dev *find_dev(const bg_dev *d) {
  for (size_t i = 0; i < nopen; i++)
    if (open_devs[i]->d == d && open_devs[i]->serial == d->serial) return open_devs[i];
  return NULL;
}

void bg_peer_dev_opened(bg_dev *d) {
  d->serial = atomic_fetch_add(&next_serial, 1);
  peer_dev *p = calloc(1, sizeof(*p));
  if (!p) { /* the device still works: it is only never seen as a live writer (its work counts as complete) */
    BG_LOG(1, "%s: out of host memory registering the device for cross-device dependencies", d->name);
    return;
  }
  p->d = d;
  p->serial = d->serial;
  pthread_mutex_lock(&reg_lock);
  if (nopen == capopen) {
    size_t cap = capopen ? capopen * 2 : 8;
    peer_dev **n = realloc(open_devs, cap * sizeof(*n));
    if (n) open_devs = n, capopen = cap;
  }
  if (nopen < capopen) open_devs[nopen++] = p;
  else free(p), p = NULL;
  pthread_mutex_unlock(&reg_lock);
  if (!p) BG_LOG(1, "%s: out of host memory registering the device for cross-device dependencies", d->name);
}

/* Undo one mapping in its device (the caller has unlinked it). */
static void unmap_one(struct bg_peer_map *m) {
  bg_memmap_remove(m->dev, m->base);
  m->dev->ops->peer_unmap(m->dev, m->base, m->size);
  BG_LOG(2, "%s: unmapped a buffer of %s at 0x%llx", m->dev->name, m->buf->dev->name, (unsigned long long)m->base);
  free(m);
}

static void glist_remove(struct bg_peer_map *m) {
  for (struct bg_peer_map **pp = &all_maps; *pp; pp = &(*pp)->gnext)
    if (*pp == m) {
      *pp = m->gnext;
      return;
    }
}

void bg_peer_dev_closing(const bg_dev *d) {
  struct bg_peer_map *mine = NULL;
  pthread_mutex_lock(&reg_lock);
  peer_dev *p = NULL;
  for (size_t i = 0; i < nopen; i++)
    if (open_devs[i]->d == d) {
      p = open_devs[i];
      open_devs[i] = open_devs[--nopen];
      break;
    }
  if (nopen == 0) {
    free(open_devs);
    open_devs = NULL;
    capopen = 0;
  }
  /* The mappings other devices' buffers hold in d go with d's address space. */
  for (struct bg_peer_map **pp = &all_maps; *pp;) {
    struct bg_peer_map *m = *pp;
    if (m->dev != d) {
      pp = &m->gnext;
      continue;
    }
    *pp = m->gnext;
    for (struct bg_peer_map **bp = &m->buf->peers; *bp; bp = &(*bp)->next)
      if (*bp == m) {
        *bp = m->next;
        break;
      }
    m->gnext = mine;
    mine = m;
  }
  pthread_mutex_unlock(&reg_lock);
  while (mine) {
    struct bg_peer_map *m = mine;
    mine = m->gnext;
    unmap_one(m);
  }
  if (p) {
    bg_queue_free(p->waitq);
    bg_queue_free(p->xferq);
    free(p);
  }
}

void bg_peer_timeline_wrapped(bg_dev *d) {
  pthread_mutex_lock(&reg_lock);
  peer_dev *p = find_dev(d);
  if (p) p->epoch++;
  pthread_mutex_unlock(&reg_lock);
}

/* Whether the write dep describes is complete without waiting: none recorded, its writer closed (close
 * synchronizes), its timeline wrapped since (a wrap happens only when all the writer's work is done; the signal it
 * names is reset at the next wrap) or its signal reached the value (one read). *w: the live writer otherwise. */
static bool dep_done(const bg_buf_write_dep *dep, bg_dev **w) {
  *w = NULL;
  if (!dep->serial) return true;
  pthread_mutex_lock(&reg_lock);
  peer_dev *p = NULL;
  for (size_t i = 0; i < nopen && !p; i++)
    if (open_devs[i]->d == dep->dev && open_devs[i]->serial == dep->serial) p = open_devs[i];
  bool wrapped = p && p->epoch != dep->epoch;
  pthread_mutex_unlock(&reg_lock);
  if (!p || wrapped) return true;
  uint64_t v = 0;
  if (bg_signal_value(dep->sig, &v) == 0 && v >= dep->value) return true;
  *w = dep->dev;
  return false;
}

static uint64_t epoch_of(const bg_dev *d) {
  pthread_mutex_lock(&reg_lock);
  peer_dev *p = find_dev(d);
  uint64_t e = p ? p->epoch : 0;
  pthread_mutex_unlock(&reg_lock);
  return e;
}

/* The caller's own thread's per-device state (NULL when the device is not registered). */
static peer_dev *state_of(const bg_dev *d) {
  pthread_mutex_lock(&reg_lock);
  peer_dev *p = find_dev(d);
  pthread_mutex_unlock(&reg_lock);
  return p;
}

int bg_peer_wait_writer(const bg_buf *b) {
  bg_dev *w;
  if (dep_done(&b->writer, &w) || w == b->dev) return 0;
  return bg_signal_wait(b->writer.sig, b->writer.value, 0);
}

void bg_peer_buf_freeing(bg_buf *b) {
  if (bg_peer_wait_writer(b) < 0) BG_LOG(1, "%s: freeing a buffer: %s", b->dev->name, bg_last_error());
  pthread_mutex_lock(&reg_lock);
  struct bg_peer_map *list = b->peers;
  b->peers = NULL;
  for (struct bg_peer_map *m = list; m; m = m->next) glist_remove(m);
  pthread_mutex_unlock(&reg_lock);
  while (list) {
    struct bg_peer_map *m = list;
    list = m->next;
    /* the mapper's work submitted so far may still use the mapping (as bg_buf_free defers its own device's release) */
    bg_dev *md = m->dev;
    if (!md->error && bg_signal_wait(md->timeline, md->timeline_value - 1, 0) < 0)
      BG_LOG(1, "%s: unmapping a freed buffer of %s: %s", md->name, b->dev->name, bg_last_error());
    unmap_one(m);
  }
}

/* ---------------- peer access ---------------- */

static bool same_space(const bg_dev *a, const bg_dev *b) { return a == b || (a->priv == b->priv && a->ops == b->ops); }

/* Whether d reaches memory of owner (device memory when vram): 0, or -BG_ENOTSUP with the reason in why. */
static int reach(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n) {
  if (strcmp(d->ops->kind, owner->ops->kind) != 0) {
    snprintf(why, n, "backends of different kinds (%s is %s, %s is %s)", d->name, d->ops->kind, owner->name,
             owner->ops->kind);
    return -BG_ENOTSUP;
  }
  if (!d->ops->peer_reach || !d->ops->peer_map || !owner->ops->peer_export) {
    snprintf(why, n, "%s devices have no peer mappings", d->ops->kind);
    return -BG_ENOTSUP;
  }
  return d->ops->peer_reach(d, owner, vram, why, n);
}

bool bg_dev_can_p2p(const bg_dev *d, const bg_dev *peer, char *why, size_t n) {
  char tmp[160];
  if (!why || !n) why = tmp, n = sizeof(tmp);
  why[0] = '\0';
  if (same_space(d, peer)) return true;
  return reach(d, peer, true, why, n) == 0;
}

int bg_buf_map_peer(bg_buf *b, bg_dev *d, uint64_t *va) {
  if (!b || !d || !va) return bg_error(BG_EINVAL, "bg_buf_map_peer: %s is NULL", !b ? "buffer" : !d ? "device" : "va");
  if (same_space(b->dev, d)) {
    *va = b->mem.va;
    return 0;
  }
  pthread_mutex_lock(&reg_lock);
  for (struct bg_peer_map *m = b->peers; m; m = m->next)
    if (m->dev == d) {
      *va = m->base;
      pthread_mutex_unlock(&reg_lock);
      return 0;
    }
  pthread_mutex_unlock(&reg_lock);
  char why[160];
  bg_peer_pages pg;
  memset(&pg, 0, sizeof(pg));
  int r = reach(d, b->dev, false, why, sizeof(why)); /* the kinds match and the backend maps peers */
  if (r == 0) {
    r = b->dev->ops->peer_export(b->dev, &b->mem, &pg); /* refused by the owner: behind USB, a small BAR */
    if (r < 0) return bg_error_context(r, "%s: cannot map a buffer of %s: ", d->name, b->dev->name);
    r = reach(d, b->dev, pg.vram, why, sizeof(why));
  }
  if (r < 0) return bg_error(BG_ENOTSUP, "%s: cannot map a buffer of %s: %s", d->name, b->dev->name, why);
  struct bg_peer_map *m = calloc(1, sizeof(*m));
  if (!m) return bg_error(BG_ENOMEM, "%s: out of host memory for a peer mapping", d->name);
  if ((r = d->ops->peer_map(d, &pg, &m->base)) < 0) {
    free(m);
    return bg_error_context(r, "%s: mapping a buffer of %s: ", d->name, b->dev->name);
  }
  m->size = pg.size;
  m->buf = b;
  m->dev = d;
  if ((r = bg_memmap_add(d, m->base, b->mem.size)) < 0) { /* queue operands of d may name it */
    d->ops->peer_unmap(d, m->base, m->size);
    free(m);
    return r;
  }
  pthread_mutex_lock(&reg_lock);
  m->next = b->peers;
  b->peers = m;
  m->gnext = all_maps;
  all_maps = m;
  pthread_mutex_unlock(&reg_lock);
  BG_LOG(2, "%s: mapped %llu bytes of %s's %s at 0x%llx", d->name, (unsigned long long)b->mem.size, b->dev->name,
         pg.vram ? "device memory" : "host memory", (unsigned long long)m->base);
  *va = m->base;
  return 0;
}

int bg_signal_va_on(const bg_signal *s, bg_dev *d, uint64_t *va) {
  if (!s || !d || !va) return bg_error(BG_EINVAL, "bg_signal_va_on: %s is NULL", !s ? "signal" : !d ? "device" : "va");
  if (same_space(s->dev, d)) {
    *va = s->va;
    return 0;
  }
  bg_buf *pg = bg_signal_page_buf(s); /* one mapping per signal page and device, kept in the page's peers */
  uint64_t base;
  int r = bg_buf_map_peer(pg, d, &base);
  if (r < 0) return bg_error_context(r, "signal 0x%llx of %s: ", (unsigned long long)s->va, s->dev->name);
  *va = base + (s->va - pg->mem.va);
  return 0;
}

/* ---------------- dependencies ---------------- */

void bg_buf_mark_written(bg_buf *b, bg_dev *d) {
  if (!b || !d) return;
  b->writer = (bg_buf_write_dep){d->serial, d, d->timeline, d->timeline_value - 1, epoch_of(d)};
}

/* Submit on d's compute queue a wait for signal address va (in d's address space) >= value, then a memory barrier
 * (what another device's engines wrote is visible to d's kernels). */
static int gpu_wait(bg_dev *d, uint64_t va, uint64_t value) {
  peer_dev *p = state_of(d);
  if (!p) return bg_error(BG_EINVAL, "%s: not an open device", d->name);
  if (!p->waitq) {
    bg_queue *q;
    int r = bg_queue_new(d, BG_QUEUE_COMPUTE, &q);
    if (r < 0) return r;
    bg_queue_wait(q, bg_var(q, 0, "peer_sig", 0, UINT64_MAX), bg_var(q, 1, "peer_value", 0, UINT32_MAX));
    bg_queue_memory_barrier(q);
    p->waitq = q;
  }
  uint64_t vars[2] = {va, value};
  return bg_queue_submit(p->waitq, vars, 2);
}

/* Make d's next compute work wait for dep (not complete yet: dep_done said so; w its writer): on the GPU when d maps
 * the writer's signal, else on the host (BG_DEBUG=1 says why). */
static int wait_dep_on(bg_dev *d, const bg_buf_write_dep *dep, bg_dev *w) {
  uint64_t va;
  int r = bg_signal_va_on(dep->sig, d, &va);
  if (r == 0) {
    BG_LOG(2, "%s: compute queue waits for %s's value %llu", d->name, w->name, (unsigned long long)dep->value);
    r = gpu_wait(d, va, dep->value);
    return r < 0 ? bg_error_context(r, "%s: waiting for %s's write of a buffer: ", d->name, w->name) : 0;
  }
  BG_LOG(1, "%s: waiting on the host for %s's write of a buffer: %s", d->name, w->name, bg_last_error());
  r = bg_signal_wait(dep->sig, dep->value, 0);
  return r < 0 ? bg_error_context(r, "%s: waiting for %s's write of a buffer: ", d->name, w->name) : 0;
}

int bg_dev_wait_bufs(bg_dev *d, bg_buf *const *bufs, size_t n) {
  if (!d || (n && !bufs)) return bg_error(BG_EINVAL, "bg_dev_wait_bufs: %s is NULL", !d ? "device" : "bufs");
  /* one wait per writer: its newest value among the buffers' records (an older epoch is complete anyway) */
  enum { MAXW = 16 };
  bg_buf_write_dep deps[MAXW];
  bg_dev *ws[MAXW];
  size_t nw = 0;
  for (size_t i = 0; i < n; i++) {
    if (!bufs[i]) continue;
    const bg_buf_write_dep *dep = &bufs[i]->writer;
    bg_dev *w;
    if (dep->dev == d || dep_done(dep, &w)) continue;
    size_t k = 0;
    while (k < nw && !(ws[k] == w && deps[k].sig == dep->sig)) k++;
    if (k < nw) {
      if (dep->value > deps[k].value) deps[k] = *dep;
      continue;
    }
    if (nw == MAXW) { /* more writers than slots: the oldest slot waits now */
      int r = wait_dep_on(d, &deps[0], ws[0]);
      if (r < 0) return r;
      memmove(deps, deps + 1, (MAXW - 1) * sizeof(*deps));
      memmove(ws, ws + 1, (MAXW - 1) * sizeof(*ws));
      nw--;
    }
    deps[nw] = *dep;
    ws[nw++] = w;
  }
  for (size_t k = 0; k < nw; k++) {
    int r = wait_dep_on(d, &deps[k], ws[k]);
    if (r < 0) return r;
  }
  return 0;
}

/* ---------------- transfers ---------------- */

static _Thread_local bg_transfer_info last_info;
static atomic_bool staged_only;

void bg_peer_set_staged_only(bool on) { atomic_store(&staged_only, on); }

void bg_transfer_last(bg_transfer_info *out) { *out = last_info; }

/* The P2P program of d for n bytes (vars: 0..5 three extra waits (address, value), 6 destination, 7 source):
 * wait(timeline, tv - 1), the waits, copy, signal(timeline, tv). Re-recorded when n changes. */
static bg_queue *xfer_program(bg_dev *d, peer_dev *p, uint64_t n, int *err) {
  if (p->xferq && p->xfer_n == n) return p->xferq;
  bg_queue_free(p->xferq);
  p->xferq = NULL;
  bg_queue *q;
  *err = bg_queue_new(d, bg_dev_has_copy_queue(d) ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE, &q);
  if (*err < 0) return NULL;
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  static const char *const names[6] = {"wait0_sig", "wait0_value", "wait1_sig", "wait1_value", "wait2_sig",
                                       "wait2_value"};
  for (unsigned k = 0; k < 3; k++)
    bg_queue_wait(q, bg_var(q, 2 * k, names[2 * k], 0, UINT64_MAX), bg_var(q, 2 * k + 1, names[2 * k + 1], 0,
                                                                            UINT32_MAX));
  bg_queue_copy(q, bg_var(q, 6, "dst", 0, UINT64_MAX), bg_var(q, 7, "src", 0, UINT64_MAX), n);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  p->xferq = q;
  p->xfer_n = n;
  return q;
}

/* One extra wait of the P2P program for dep (skipped when complete or covered by the timeline waits); on the host
 * when src cannot map the writer's signal. */
static int xfer_dep(bg_dev *src, const bg_dev *dstdev, const bg_buf_write_dep *dep, uint64_t *slot) {
  bg_dev *w;
  if (dep->dev == src || dep->dev == dstdev || dep_done(dep, &w)) return 0;
  uint64_t va;
  if (bg_signal_va_on(dep->sig, src, &va) == 0) {
    slot[0] = va;
    slot[1] = dep->value;
    return 0;
  }
  BG_LOG(1, "%s: transfer waits on the host for %s: %s", src->name, w->name, bg_last_error());
  return bg_signal_wait(dep->sig, dep->value, 0);
}

static int transfer_p2p(bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t n) {
  bg_dev *s = src->dev, *dd = dst->dev;
  peer_dev *p = state_of(s);
  if (!p) return bg_error(BG_EINVAL, "%s: not an open device", s->name);
  uint64_t dva;
  int r = bg_buf_map_peer(dst, s, &dva); /* -BG_ENOTSUP: nothing submitted, the caller stages instead */
  if (r < 0) return r;
  /* unused waits: the source's own timeline >= 0 */
  uint64_t vars[8] = {s->timeline->va, 0, s->timeline->va, 0, s->timeline->va, 0, dva + doff, src->mem.va + soff};
  if (s != dd) { /* the destination device's work so far (it may still read or write the range) */
    if ((r = bg_signal_va_on(dd->timeline, s, &vars[0])) < 0) return r;
    vars[1] = dd->timeline_value - 1;
  }
  if ((r = xfer_dep(s, dd, &src->writer, &vars[2])) < 0) return r; /* a third device's write of either range */
  if ((r = xfer_dep(s, dd, &dst->writer, &vars[4])) < 0) return r;
  bg_queue *q = xfer_program(s, p, n, &r);
  if (!q) return r;
  if ((r = bg_queue_submit(q, vars, 8)) < 0) return bg_error_context(r, "%s: transfer to %s: ", s->name, dd->name);
  dst->writer = (bg_buf_write_dep){s->serial, s, s->timeline, s->timeline_value - 1, epoch_of(s)};
  return 0;
}

/* Staged through host memory: a thread reads chunk i + 1 from the source while the caller writes chunk i into the
 * destination (two host buffers; each bg_dev stays with one thread). */
#define STAGE_CHUNK ((uint64_t)2 << 20)

typedef struct stager {
  const bg_buf *src;
  uint64_t soff, n;
  uint8_t *buf[2];
  sem_t empty, full;
  atomic_bool stop;
  int err;
  char msg[512];
} stager;

static void *stage_reader(void *arg) {
  stager *st = arg;
  for (uint64_t i = 0, off = 0; off < st->n; i++, off += STAGE_CHUNK) {
    while (sem_wait(&st->empty) < 0) {}
    if (atomic_load(&st->stop)) break;
    uint64_t k = st->n - off < STAGE_CHUNK ? st->n - off : STAGE_CHUNK;
    int r = bg_buf_read(st->src, st->soff + off, st->buf[i % 2], k);
    if (r < 0) {
      st->err = r;
      snprintf(st->msg, sizeof(st->msg), "%s", bg_last_error());
    }
    sem_post(&st->full);
    if (r < 0) break;
  }
  return NULL;
}

static int transfer_staged(bg_buf *dst, uint64_t doff, const bg_buf *src, uint64_t soff, uint64_t n) {
  if (n <= STAGE_CHUNK) { /* one chunk: nothing to overlap */
    uint8_t *tmp = malloc(n ? n : 1);
    if (!tmp) return bg_error(BG_ENOMEM, "transfer: out of host memory for %llu bytes of staging",
                              (unsigned long long)n);
    int r = n ? bg_buf_read(src, soff, tmp, n) : 0;
    if (r == 0 && n) r = bg_buf_write(dst, doff, tmp, n);
    free(tmp);
    return r;
  }
  stager st;
  memset(&st, 0, sizeof(st));
  st.src = src;
  st.soff = soff;
  st.n = n;
  for (int i = 0; i < 2; i++) {
    st.buf[i] = aligned_alloc(4096, STAGE_CHUNK);
    if (st.buf[i]) (void)mlock(st.buf[i], STAGE_CHUNK); /* pinned when the limit allows (RLIMIT_MEMLOCK) */
  }
  if (!st.buf[0] || !st.buf[1]) {
    free(st.buf[0]);
    free(st.buf[1]);
    return bg_error(BG_ENOMEM, "transfer: out of host memory for staging");
  }
  sem_init(&st.empty, 0, 2);
  sem_init(&st.full, 0, 0);
  pthread_t th;
  int r = 0;
  if (pthread_create(&th, NULL, stage_reader, &st) != 0) {
    r = bg_error(BG_ENOMEM, "transfer: cannot start the staging thread");
  } else {
    for (uint64_t i = 0, off = 0; off < n && r == 0; i++, off += STAGE_CHUNK) {
      while (sem_wait(&st.full) < 0) {}
      if (st.err) break;
      uint64_t k = n - off < STAGE_CHUNK ? n - off : STAGE_CHUNK;
      r = bg_buf_write(dst, doff + off, st.buf[i % 2], k);
      sem_post(&st.empty);
    }
    atomic_store(&st.stop, true);
    sem_post(&st.empty);
    pthread_join(th, NULL);
    if (st.err && r == 0) r = bg_error(-st.err, "%s", st.msg);
  }
  sem_destroy(&st.empty);
  sem_destroy(&st.full);
  for (int i = 0; i < 2; i++) {
    munlock(st.buf[i], STAGE_CHUNK);
    free(st.buf[i]);
  }
  return r;
}

int bg_buf_transfer(bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t n) {
  if (!dst || !src) return bg_error(BG_EINVAL, "bg_buf_transfer: %s buffer is NULL", dst ? "source" : "destination");
  if (soff > src->mem.size || n > src->mem.size - soff)
    return bg_error(BG_EINVAL, "%s: transfer source: %llu bytes at offset %llu exceed the buffer's %llu bytes "
                    "(buffer at 0x%llx)", src->dev->name, (unsigned long long)n, (unsigned long long)soff,
                    (unsigned long long)src->mem.size, (unsigned long long)src->mem.va);
  if (doff > dst->mem.size || n > dst->mem.size - doff)
    return bg_error(BG_EINVAL, "%s: transfer destination: %llu bytes at offset %llu exceed the buffer's %llu bytes "
                    "(buffer at 0x%llx)", dst->dev->name, (unsigned long long)n, (unsigned long long)doff,
                    (unsigned long long)dst->mem.size, (unsigned long long)dst->mem.va);
  memset(&last_info, 0, sizeof(last_info));
  last_info.bytes = n;
  if (n == 0) {
    last_info.p2p = true;
    return 0;
  }
  last_info.p2p = bg_dev_can_p2p(src->dev, dst->dev, last_info.why, sizeof(last_info.why));
  if (last_info.p2p && atomic_load(&staged_only)) {
    last_info.p2p = false;
    snprintf(last_info.why, sizeof(last_info.why), "staged on request (bg_peer_set_staged_only)");
  }
  if (last_info.p2p) {
    BG_LOG(1, "transfer %s -> %s, %llu bytes: peer-to-peer on %s's %s queue", src->dev->name, dst->dev->name,
           (unsigned long long)n, src->dev->name, bg_dev_has_copy_queue(src->dev) ? "copy" : "compute");
    int r = transfer_p2p(dst, doff, src, soff, n);
    if (r != -BG_ENOTSUP) return r;
    last_info.p2p = false; /* a range or signal the source cannot map after all: staged */
    snprintf(last_info.why, sizeof(last_info.why), "%s", bg_last_error());
  }
  BG_LOG(1, "transfer %s -> %s, %llu bytes: staged through host memory (%s)", src->dev->name, dst->dev->name,
         (unsigned long long)n, last_info.why);
  return transfer_staged(dst, doff, src, soff, n);
}
