/* hcq/signal.c: 16-byte signals (u64 value at +0, u64 raw timestamp at +8) from per-device pages,
 * and host waits whose timeout restarts on progress. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hcq/dev_internal.h"
#include "util/env.h"
#include "util/clock.h"

#define SIGPAGE_SIZE 4096u
#define SIGS_PER_PAGE (SIGPAGE_SIZE / 16u)
#define SLEEP_AFTER_MS 200 /* without progress, let the backend look for faults (sooner when BG_HANG_CHECK_MS is less) */

struct bg_sigpage {
  struct bg_sigpage *next;
  bg_buf *buf;
  uint64_t used[SIGS_PER_PAGE / 64];
};

int bg_signal_new(bg_dev *d, uint64_t init, bg_signal **out) {
  *out = NULL;
  struct bg_sigpage *pg;
  unsigned slot = SIGS_PER_PAGE;
  for (pg = d->sigpages; pg; pg = pg->next) {
    for (unsigned w = 0; w < SIGS_PER_PAGE / 64 && slot == SIGS_PER_PAGE; w++)
      if (~pg->used[w]) slot = w * 64 + (unsigned)__builtin_ctzll(~pg->used[w]);
    if (slot < SIGS_PER_PAGE) break;
  }
  if (!pg) {
    pg = calloc(1, sizeof(*pg));
    if (!pg) return bg_error(BG_ENOMEM, "out of host memory for signals");
    int r = bg_buf_alloc(d, SIGPAGE_SIZE, BG_BUF_HOST | BG_BUF_UNCACHED | BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &pg->buf);
    if (r < 0) {
      free(pg);
      return bg_error_context(r, "signal page: ");
    }
    if (!pg->buf->mem.cpu && (!d->ops->mem_read || !d->ops->mem_write)) {
      bg_buf_free(pg->buf);
      free(pg);
      return bg_error(BG_ENOTSUP, "%s: signal memory has no CPU view", d->name);
    }
    pg->next = d->sigpages;
    d->sigpages = pg;
    slot = 0;
  }
  bg_signal *s = calloc(1, sizeof(*s));
  if (!s) return bg_error(BG_ENOMEM, "out of host memory for signals");
  pg->used[slot / 64] |= 1ull << (slot % 64);
  s->dev = d;
  s->page = pg;
  s->slot = slot;
  s->cpu = pg->buf->mem.cpu ? (volatile uint64_t *)((uint8_t *)pg->buf->mem.cpu + slot * 16u) : NULL;
  s->va = pg->buf->mem.va + slot * 16u;
  if (s->cpu) {
    s->cpu[1] = 0;
    __atomic_store_n((uint64_t *)s->cpu, init, __ATOMIC_RELEASE);
  } else { /* no CPU view: value and timestamp in one device write */
    uint64_t v[2] = {init, 0};
    int r = d->ops->mem_write(d, &pg->buf->mem, slot * 16u, v, sizeof(v));
    if (r < 0) {
      bg_signal_free(s);
      return bg_error_context(r, "%s: initializing a signal: ", d->name);
    }
  }
  *out = s;
  return 0;
}

/* Word k (0 value, 1 timestamp) of a signal without a CPU view, read through the backend. */
static int sig_read(const bg_signal *s, unsigned k, uint64_t *v) {
  bg_dev *d = s->dev;
  int r = d->ops->mem_read(d, &s->page->buf->mem, s->slot * 16u + k * 8u, v, sizeof(*v));
  return r < 0 ? bg_error_context(r, "%s: reading signal 0x%llx: ", d->name, (unsigned long long)s->va) : 0;
}

void bg_signal_free(bg_signal *s) {
  if (!s) return;
  s->page->used[s->slot / 64] &= ~(1ull << (s->slot % 64));
  free(s);
}

void bg_sigpool_free(bg_dev *d) {
  while (d->sigpages) {
    struct bg_sigpage *pg = d->sigpages;
    d->sigpages = pg->next;
    bg_buf_free(pg->buf);
    free(pg);
  }
}

uint64_t bg_signal_va(const bg_signal *s) { return s->va; }
bg_val bg_sig(const bg_signal *s) { return bg_const(s->va); }

/* Word k (0 value, 1 timestamp) of a signal, from its CPU view or through the backend. */
static int sig_word(const bg_signal *s, unsigned k, uint64_t *v) {
  if (s->cpu) {
    *v = __atomic_load_n((const uint64_t *)s->cpu + k, __ATOMIC_ACQUIRE);
    return 0;
  }
  return sig_read(s, k, v);
}

int bg_signal_value(const bg_signal *s, uint64_t *out) { return sig_word(s, 0, out); }

int bg_signal_pool_read32(bg_dev *d, uint64_t va, uint32_t *out) {
  for (const struct bg_sigpage *pg = d->sigpages; pg; pg = pg->next) {
    const bg_mem *m = &pg->buf->mem;
    if (va < m->va || va + 4 > m->va + SIGPAGE_SIZE) continue;
    if (m->cpu) {
      *out = __atomic_load_n((const uint32_t *)((const uint8_t *)m->cpu + (va - m->va)), __ATOMIC_ACQUIRE);
      return 1;
    }
    int r = d->ops->mem_read(d, m, va - m->va, out, sizeof(*out));
    return r < 0 ? r : 1;
  }
  return 0;
}

int bg_signal_set(bg_signal *s, uint64_t v) {
  if (s->cpu) {
    __atomic_store_n((uint64_t *)s->cpu, v, __ATOMIC_RELEASE);
    return 0;
  }
  int r = s->dev->ops->mem_write(s->dev, &s->page->buf->mem, s->slot * 16u, &v, sizeof(v));
  return r < 0 ? bg_error_context(r, "%s: setting signal 0x%llx: ", s->dev->name, (unsigned long long)s->va) : 0;
}

int bg_signal_timestamp_raw(const bg_signal *s, uint64_t *out) { return sig_word(s, 1, out); }

int bg_signal_timestamp_us(const bg_signal *s, double *out) {
  uint64_t raw;
  int r = sig_word(s, 1, &raw);
  if (r == 0) *out = (double)raw / s->dev->ops->ticks_per_us;
  return r;
}


int bg_signal_wait(const bg_signal *s, uint64_t v, int timeout_ms) {
  if (timeout_ms <= 0) {
    int r = bg_env_wait_timeout_ms(&timeout_ms);
    if (r < 0) return r;
  }
  bg_dev *d = s->dev;
  uint64_t seen, cur;
  int r = sig_word(s, 0, &seen);
  if (r < 0) return r;
  if (seen >= v) return 0;
  long hang_ms = SLEEP_AFTER_MS;
  if ((r = bg_env_int("BG_HANG_CHECK_MS", &hang_ms)) < 0) return r;
  uint64_t sleep_after = hang_ms < SLEEP_AFTER_MS ? (uint64_t)hang_ms : SLEEP_AFTER_MS;
  uint64_t start = bg_now_ns(), last_progress = start;
  for (unsigned spin = 0;; spin++) {
    if ((r = sig_word(s, 0, &cur)) < 0) return r;
    if (cur >= v) return 0;
    uint64_t t = bg_now_ns();
    if (cur != seen) {
      seen = cur;
      last_progress = t;
    }
    uint64_t idle_ms = (t - last_progress) / 1000000u;
    if (idle_ms >= (uint64_t)timeout_ms) {
      const char *what = s == d->timeline ? " (timeline)" : "";
      return bg_error(BG_ETIMEDOUT,
                      "%s: wait timeout: %d ms without progress on signal 0x%llx%s: expected >= %llu, saw %llu",
                      d->name, timeout_ms, (unsigned long long)s->va, what, (unsigned long long)v,
                      (unsigned long long)seen);
    }
    if (idle_ms >= sleep_after && d->ops->sleep) {
      r = d->ops->sleep(d, 1);
      if (r < 0) return r;
    } else if (spin < 2000) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (spin < 4000) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000};
      while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
    }
  }
}
