/* hcq/dev.c: device lifecycle, the timeline, synchronization, kernel-argument arena. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/dev_internal.h"
#include "hcq/memmap.h"
#include "hcq/usage.h"

#define KARGS_ARENA_SIZE (16u << 20) /* reused without fences: relies on its size (as tinygrad) */
#define TIMELINE_WRAP (1ull << 31)   /* AMD waits compare 32 bits: wrap well before */

/* A buffer with its place on the device's deferred-free list. bg_buf_free does not wait for the device: the buffer
 * leaves the live-allocation map at once (no new submit can name it) but its memory goes back to the allocator only
 * when the timeline reaches `retire`, the last value claimed when it was freed, so memory the queues may still
 * touch is never handed out again (as TTM's delayed delete in Linux: drivers/gpu/drm/ttm/ttm_bo.c, ttm_bo_release
 * queues a buffer object whose fences have not signalled instead of waiting for them). */
typedef struct bg_buf_node {
  bg_buf b;                    /* first: a bg_buf * is a bg_buf_node * */
  uint64_t retire;
  struct bg_buf_node *next;
} bg_buf_node;

static void release(bg_dev *d, bg_buf_node *n) {
  bg_usage_note(d, -(int64_t)n->b.mem.size);
  d->ops->free(d, &n->b.mem);
  free(n);
}

/* Release the deferred buffers whose work retired: every one when `all` (the device is idle or its queues are gone),
 * else those whose retire value the timeline signal has reached. A failed signal read releases nothing. */
static void reap(bg_dev *d, bool all) {
  if (!d->deferred) return;
  uint64_t done = 0;
  if (!all && bg_signal_value(d->timeline, &done) < 0) return;
  for (bg_buf_node **p = &d->deferred; *p;) {
    bg_buf_node *n = *p;
    if (all || n->retire <= done) {
      *p = n->next;
      release(d, n);
    } else {
      p = &n->next;
    }
  }
}

void bg_dev_reap(bg_dev *d) { reap(d, false); }

int bg_dev_create(const bg_iface *ifc, const bg_target *t, int phys_index, bg_dev **out) {
  bg_dev *d = calloc(1, sizeof(*d));
  if (!d) return bg_error(BG_ENOMEM, "out of host memory opening %s", t->kind);
  d->target = *t;
  bg_target_format(t, d->name, sizeof(d->name));
  int r = ifc->open(d, phys_index);
  if (r < 0) {
    free(d);
    return r;
  }
  bg_peer_dev_opened(d);
  r = bg_signal_new(d, 0, &d->timeline);
  if (r == 0) r = bg_signal_new(d, 0, &d->timeline_shadow);
  if (r == 0) r = bg_buf_alloc(d, KARGS_ARENA_SIZE, BG_BUF_CPU_ACCESS, &d->kargs_buf);
  if (r < 0) {
    bg_dev_close(d);
    return r;
  }
  d->kargs = (bg_bump){.base = d->kargs_buf->mem.va, .size = KARGS_ARENA_SIZE, .off = 0, .wrap = true};
  d->timeline_value = 1;
  BG_LOG(1, "opened %s (%s)", d->name, d->arch);
  *out = d;
  return 0;
}

void bg_dev_close(bg_dev *d) {
  if (!d) return;
  if (d->timeline && !d->error && bg_dev_synchronize(d, 0) < 0)
    BG_LOG(1, "%s: close: synchronize failed: %s", d->name, bg_last_error());
  bg_peer_dev_closing(d);
  d->closing = true;
  for (int k = 0; k < 2; k++)
    if (d->hwq[k]) d->ops->queue_destroy(d, d->hwq[k]);
  reap(d, true); /* the queues are gone: nothing can touch deferred buffers any more */
  if (d->kargs_buf) bg_buf_free(d->kargs_buf);
  bg_signal_free(d->timeline);
  bg_signal_free(d->timeline_shadow);
  bg_sigpool_free(d);
  bg_usage_close(d);
  if (d->ops && d->ops->close) d->ops->close(d);
  BG_LOG(1, "closed %s", d->name);
  bg_memmap_drop_dev(d);
  free(d);
}

const char *bg_dev_name(const bg_dev *d) { return d->name; }
const char *bg_dev_arch(const bg_dev *d) { return d->arch; }
bool bg_dev_has_copy_queue(const bg_dev *d) { return d->ops->has_copy_queue; }
double bg_dev_ticks_per_us(const bg_dev *d) { return d->ops->ticks_per_us; }
bg_signal *bg_dev_timeline(bg_dev *d) { return d->timeline; }
uint64_t bg_dev_timeline_value(const bg_dev *d) { return d->timeline_value; }
uint64_t bg_dev_next_timeline(bg_dev *d) { return d->timeline_value++; }

void bg_dev_set_timeline(bg_dev *d, uint64_t next_value) {
  reap(d, false); /* retire values count on the old timeline */
  d->timeline_value = next_value;
  if (bg_signal_set(d->timeline, next_value - 1) < 0) BG_LOG(1, "%s", bg_last_error());
}

int bg_dev_check(bg_dev *d) {
  if (d->error) return bg_error(-d->error, "%s: device is in an error state: %s", d->name, d->error_msg);
  return 0;
}

int bg_dev_synchronize(bg_dev *d, int timeout_ms) {
  int r = bg_dev_check(d);
  if (r < 0) return r;
  r = bg_signal_wait(d->timeline, d->timeline_value - 1, timeout_ms);
  /* The timeline only covers queues that signal it: a fault on any other queue of the device (an SDMA page fault
   * of a copy that signals its own signal) is latched by the backend and reported here. A backend's fault_check
   * runs until it has seen every queue idle without a fault after the last submit, so a synchronize with nothing
   * new costs no register read (over USB: a bridge round trip); without one, sleep(d, 0) runs every time. */
  if (r == 0 && d->ops->fault_check) {
    if (d->submits != d->fault_checked) {
      uint64_t at = d->submits;
      r = d->ops->fault_check(d);
      if (r == 0) d->fault_checked = at;
      if (r > 0) r = 0; /* no fault yet, work still queued: check again next time */
    }
  } else if (r == 0 && d->ops->sleep) {
    r = d->ops->sleep(d, 0);
  }
  if (r < 0) {
    d->error = r;
    snprintf(d->error_msg, sizeof(d->error_msg), "%s", bg_last_error());
    return r;
  }
  reap(d, true); /* every submit that claimed the timeline has finished */
  if (d->timeline_value > TIMELINE_WRAP) {
    /* Everything is idle: swap to the shadow signal and restart the count. */
    if ((r = bg_signal_set(d->timeline_shadow, 0)) < 0) return r; /* still idle and unwrapped: a later sync retries */
    bg_signal *t = d->timeline;
    d->timeline = d->timeline_shadow;
    d->timeline_shadow = t;
    d->timeline_value = 1;
    bg_peer_timeline_wrapped(d); /* the shadow is reset at the next wrap: dependencies on it must not wait */
    BG_LOG(2, "%s: timeline wrapped", d->name);
  }
  return 0;
}

int bg_kargs_alloc(bg_dev *d, uint64_t size, uint64_t *va, void **cpu) {
  int r = bg_bump_alloc(&d->kargs, size, 16, va);
  if (r < 0) return bg_error_context(r, "%s: kernel arguments: ", d->name);
  *cpu = d->kargs_buf->mem.cpu ? (uint8_t *)d->kargs_buf->mem.cpu + (*va - d->kargs.base) : NULL;
  return 0;
}

int bg_kargs_write(bg_dev *d, uint64_t va, const void *src, uint64_t n) {
  const bg_mem *m = &d->kargs_buf->mem;
  if (m->cpu) {
    memcpy((uint8_t *)m->cpu + (va - d->kargs.base), src, n);
    return 0;
  }
  if (!d->ops->mem_write) return bg_error(BG_ENOTSUP, "%s: the kernel-argument arena has no CPU view", d->name);
  return d->ops->mem_write(d, m, va - d->kargs.base, src, n);
}

/* ---------------- buffers ---------------- */

int bg_buf_alloc(bg_dev *d, uint64_t size, unsigned flags, bg_buf **out) {
  *out = NULL;
  if (size == 0) return bg_error(BG_EINVAL, "%s: buffer of size 0", d->name);
  if (bg_buf_flags_check(d, flags) < 0) return -BG_EINVAL;
  bg_buf_node *n = calloc(1, sizeof(*n));
  if (!n) return bg_error(BG_ENOMEM, "out of host memory");
  bg_buf *b = &n->b;
  reap(d, false);
  int r = d->ops->alloc(d, size, flags, &b->mem);
  if (r == -BG_ENOMEM && d->deferred && !d->error && bg_dev_synchronize(d, 0) == 0) /* memory waiting to retire */
    r = d->ops->alloc(d, size, flags, &b->mem);
  if (r < 0) {
    free(n);
    return bg_error_context(r, "%s: allocating %llu bytes: ", d->name, (unsigned long long)size);
  }
  b->dev = d;
  b->flags = flags;
  if ((r = bg_memmap_add(d, b->mem.va, b->mem.size)) < 0) {
    d->ops->free(d, &b->mem);
    free(n);
    return r;
  }
  bg_usage_note(d, (int64_t)b->mem.size); /* hcq/usage.h: published for hcq_smi */
  *out = b;
  return 0;
}

void bg_buf_free(bg_buf *b) {
  if (!b) return;
  bg_dev *d = b->dev;
  bg_buf_node *n = (bg_buf_node *)b;
  bg_peer_buf_freeing(b); /* another device's write into b finishes first; b's peer mappings go */
  bg_memmap_remove(d, b->mem.va); /* new submits can no longer name it */
  if (d->closing) {
    release(d, n);
    return;
  }
  /* Work submitted so far retires when the timeline reaches the last claimed value (what bg_dev_synchronize waits
   * for). On a device in an error state it may never: the buffer waits for bg_dev_recover or bg_dev_close. */
  n->retire = d->timeline_value - 1;
  n->next = d->deferred;
  d->deferred = n;
  if (!d->error) reap(d, false);
}

uint64_t bg_buf_va(const bg_buf *b) { return b->mem.va; }
uint64_t bg_buf_size(const bg_buf *b) { return b->mem.size; }
void *bg_buf_cpu(const bg_buf *b) { return b->mem.cpu; }
bg_dev *bg_buf_dev(const bg_buf *b) { return b->dev; }
bg_val bg_addr(const bg_buf *b, uint64_t off) { return bg_const(b->mem.va + off); }

static int range_check(const bg_buf *b, uint64_t off, uint64_t n, const char *what) {
  if (off > b->mem.size || n > b->mem.size - off)
    return bg_error(BG_EINVAL, "%s: %s of %llu bytes at offset %llu exceeds the buffer's %llu bytes", b->dev->name,
                    what, (unsigned long long)n, (unsigned long long)off, (unsigned long long)b->mem.size);
  return 0;
}

int bg_buf_write(bg_buf *b, uint64_t off, const void *src, uint64_t n) {
  int r = range_check(b, off, n, "write");
  if (r == 0) r = bg_peer_wait_writer(b); /* another device's write into b lands first */
  if (r < 0) return r;
  if (b->dev->ops->copyin) return b->dev->ops->copyin(b->dev, &b->mem, off, src, n);
  if (!b->mem.cpu) return bg_error(BG_ENOTSUP, "%s: buffer has no CPU view and no copy path", b->dev->name);
  if ((r = bg_dev_synchronize(b->dev, 0)) < 0) return r;
  memcpy((uint8_t *)b->mem.cpu + off, src, n);
  return 0;
}

int bg_buf_read(const bg_buf *b, uint64_t off, void *dst, uint64_t n) {
  int r = range_check(b, off, n, "read");
  if (r == 0) r = bg_peer_wait_writer(b); /* another device's write into b is part of what is read */
  if (r < 0) return r;
  if (b->dev->ops->copyout) return b->dev->ops->copyout(b->dev, &b->mem, off, dst, n);
  if (!b->mem.cpu) return bg_error(BG_ENOTSUP, "%s: buffer has no CPU view and no copy path", b->dev->name);
  if ((r = bg_dev_synchronize(b->dev, 0)) < 0) return r;
  memcpy(dst, (const uint8_t *)b->mem.cpu + off, n);
  return 0;
}

/* ---------------- recovery ---------------- */

/* After a fault or timeout: the backend resets every hardware queue of the device (what was pending on them is
 * dropped), the latched error is cleared and the timeline is declared reached, so recorded queues, buffers and
 * programs of the open device run again. */
int bg_dev_recover(bg_dev *d) {
  if (!d) return bg_error(BG_EINVAL, "bg_dev_recover: no device");
  if (!d->ops->recover) return bg_error(BG_ENOTSUP, "%s: this device cannot reset its queues: close and reopen it", d->name);
  int r = d->ops->recover(d);
  if (r < 0) return bg_error_context(r, "%s: recover: ", d->name);
  if (d->error) BG_LOG(1, "%s: recovered from: %s", d->name, d->error_msg);
  d->error = 0;
  d->error_msg[0] = '\0';
  reap(d, true); /* the queues were reset: the dropped work touches nothing any more */
  d->fault_checked = d->submits;
  return bg_signal_set(d->timeline, d->timeline_value - 1);
}
