/* hcq/signal.c: 16-byte signals (u64 value at +0, u64 raw timestamp at +8) from per-device pages,
 * and host waits whose timeout restarts on progress; waits on signals without a CPU view are paced (bg_sigpace). */
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

/* Pacing of waits on signals without a CPU view (a GPU behind a USB bridge: every read of a signal is a bridge round
 * trip). Instead of polling back-to-back while the engine runs, a wait polls first when the work is expected to be
 * done and then backs off exponentially. The expectation is per submitted command stream (the backend reports each
 * submit with bg_signal_note_submit and a key naming the recorded work): the time from its submit to the signal,
 * measured by the last wait that saw it run alone. Unknown work is polled at once, then after 1, 2, 4, ... round
 * trips, so a wait of duration T costs at most log2(T/rtt) + 2 polls; known work costs one poll, two when it ran up to
 * 1/8 longer than last time (the estimate shrinks by 1/32 per first-poll hit so it follows work that got faster).
 * Host writes still queued behind the bridge (a signal set the work may wait for) go at once with the first poll (one
 * round trip carries the writes and the read), and the work's time then counts from that poll. */
#define PACE_KEYS 64u
struct bg_sigpace {
  uint64_t rtt_ns;            /* smoothed duration of one signal read (a round trip) */
  uint64_t due_ns;            /* expected completion of everything submitted (0: nothing expected) */
  uint64_t submit_ns;         /* time of the last submit */
  uint64_t key;               /* its key */
  uint64_t pending;           /* submits since the last wait that saw the timeline complete */
  bool unflushed;             /* a signal was written through the backend since the last read (writes may be queued
                               * until a read carries them, as over USB) */
  uint64_t tag[PACE_KEYS], est_ns[PACE_KEYS]; /* submit-to-signal time per key (direct-mapped) */
};

struct bg_sigpage {
  struct bg_sigpage *next;
  bg_buf *buf;
  uint64_t used[SIGS_PER_PAGE / 64];
  struct bg_sigpace pace; /* used on the device's first page (the list's tail), which lives as long as the device */
};

/* Remember whether a signal write through the backend may still be queued (struct bg_sigpace.unflushed). */
static void note_written(bg_dev *d, bool written);

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
    if (r >= 0) note_written(d, true);
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
  if (r >= 0) note_written(d, false); /* a read carries the writes queued before it */
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
bg_buf *bg_signal_page_buf(const bg_signal *s) { return s->page->buf; }
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
    if (r >= 0) note_written(d, false);
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
  if (r >= 0) note_written(s->dev, true);
  return r < 0 ? bg_error_context(r, "%s: setting signal 0x%llx: ", s->dev->name, (unsigned long long)s->va) : 0;
}

int bg_signal_timestamp_raw(const bg_signal *s, uint64_t *out) { return sig_word(s, 1, out); }

int bg_signal_timestamp_us(const bg_signal *s, double *out) {
  uint64_t raw;
  int r = sig_word(s, 1, &raw);
  if (r == 0) *out = (double)raw / s->dev->ops->ticks_per_us;
  return r;
}


/* The pacing state of d: on its first signal page, which lives until the device closes. NULL before any signal. */
static struct bg_sigpace *pace_of(bg_dev *d) {
  struct bg_sigpage *pg = d->sigpages;
  if (!pg) return NULL;
  while (pg->next) pg = pg->next;
  return &pg->pace;
}

static void note_written(bg_dev *d, bool written) {
  struct bg_sigpace *p = pace_of(d);
  if (p) p->unflushed = written;
}

static unsigned pace_slot(uint64_t key) { return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 58) % PACE_KEYS; }

void bg_signal_note_submit(bg_dev *d, uint64_t key) {
  struct bg_sigpace *p = pace_of(d);
  if (!p) return;
  uint64_t now = bg_now_ns();
  unsigned k = pace_slot(key);
  uint64_t est = p->tag[k] == key ? p->est_ns[k] : 0;
  p->due_ns = (p->due_ns > now ? p->due_ns : now) + est; /* a queue runs its work in submission order */
  p->submit_ns = now;
  p->key = key;
  p->pending++;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

static int wait_timeout(const bg_signal *s, int timeout_ms, uint64_t v, uint64_t seen) {
  bg_dev *d = s->dev;
  const char *what = s == d->timeline ? " (timeline)" : "";
  return bg_error(BG_ETIMEDOUT, "%s: wait timeout: %d ms without progress on signal 0x%llx%s: expected >= %llu, saw %llu",
                  d->name, timeout_ms, (unsigned long long)s->va, what, (unsigned long long)v, (unsigned long long)seen);
}

/* A wait on a signal without a CPU view (each read is a round trip to the device): paced polls (struct bg_sigpace).
 * The semantics are the spinning wait's: the timeout restarts on progress, and after sleep_after ms without progress
 * every poll is preceded by the backend's hang check (sleep(d, 0)); the backoff is capped at sleep_after (at least
 * 1 ms) so that check still runs that often. */
static int wait_paced(const bg_signal *s, uint64_t v, int timeout_ms, uint64_t sleep_after_ms) {
  bg_dev *d = s->dev;
  struct bg_sigpace *p = pace_of(d);
  /* Only a wait for everything submitted (bg_dev_synchronize's) knows when it is due, and learns from it. */
  bool latest = p && p->pending && s == d->timeline && v + 1 == d->timeline_value;
  /* Host writes still queued (a signal set the work may wait for) ride in the first poll, which then goes at once: the
   * work may not start before it, so the expected time counts from that poll. */
  bool flush = p && p->unflushed, missed = false;
  uint64_t start = bg_now_ns(), last_progress = start, next = start, step = 0, seen = 0, cur = 0;
  uint64_t rtt = p ? p->rtt_ns : 0, est = 0, due = 0, ref = latest ? p->submit_ns : start;
  uint64_t cap = (sleep_after_ms ? sleep_after_ms : 1) * 1000000u, tmo_ns = (uint64_t)timeout_ms * 1000000u;
  unsigned k = latest ? pace_slot(p->key) : 0;
  if (latest) {
    est = p->tag[k] == p->key ? p->est_ns[k] : 0;
    due = p->due_ns;
  }
  if (!flush && due > start + rtt / 2) next = due - rtt / 2; /* the read reaches the device half a trip later */
  for (unsigned polls = 0;;) {
    uint64_t t = bg_now_ns();
    /* Backoff: sleep until the next poll, or the first hang check, or the timeout (which polls once more before it
     * is reported). */
    if (t < next && t - last_progress < tmo_ns) {
      uint64_t wake = next, check = last_progress + sleep_after_ms * 1000000u;
      if (check > t && check < wake) wake = check;
      if (last_progress + tmo_ns < wake) wake = last_progress + tmo_ns;
      sleep_ns(wake - t);
      continue;
    }
    if ((t - last_progress) / 1000000u >= sleep_after_ms && d->ops->sleep) {
      int r = d->ops->sleep(d, 0);
      if (r < 0) return r;
    }
    uint64_t t0 = bg_now_ns();
    int r = sig_read(s, 0, &cur);
    if (r < 0) return r;
    uint64_t t1 = bg_now_ns(), mid = t0 + (t1 - t0) / 2; /* when the device answered */
    if (p) rtt = p->rtt_ns = p->rtt_ns ? (p->rtt_ns * 7 + (t1 - t0)) / 8 : t1 - t0;
    if (cur >= v) {
      if (latest && p->pending == 1) { /* the work ran alone: its time is known */
        uint64_t took = mid > ref ? mid - ref : 0;
        if (missed) est = took;                  /* longer than expected: at most this long */
        else if (mid >= due) est -= est / 32;    /* on time: maybe faster than last time */
        else est = took < est ? took : est;      /* before it was due: at most this long */
        p->tag[k] = p->key;
        p->est_ns[k] = est;
      }
      if (latest) p->pending = 0, p->due_ns = 0;
      return 0;
    }
    if (polls++ && cur != seen) last_progress = t1;
    seen = cur;
    if (t1 - last_progress >= tmo_ns) return wait_timeout(s, timeout_ms, v, seen);
    if (flush && polls == 1 && latest) { /* the queued writes are out now: the work is due est from here */
      ref = mid;
      if (due < mid + est) due = mid + est;
      if (due > t1 + rtt / 2) {
        next = due - rtt / 2;
        continue;
      }
    }
    if (mid >= due) missed = true;
    /* Backoff: 1, 2, 4, ... round trips, or from 1/8 of the expected time when that is longer (work that runs up to
     * 1/8 longer than last time is found by the second poll), at most cap. */
    step = step ? step * 2 : (est / 8 > rtt ? est / 8 : rtt);
    if (step > cap) step = cap;
    next = t1 + step;
  }
}

int bg_signal_wait(const bg_signal *s, uint64_t v, int timeout_ms) {
  if (timeout_ms <= 0) {
    int r = bg_env_wait_timeout_ms(&timeout_ms);
    if (r < 0) return r;
  }
  bg_dev *d = s->dev;
  long hang_ms = SLEEP_AFTER_MS;
  int r = bg_env_int("BG_HANG_CHECK_MS", &hang_ms);
  if (r < 0) return r;
  uint64_t sleep_after = hang_ms < SLEEP_AFTER_MS ? (uint64_t)(hang_ms > 0 ? hang_ms : 0) : SLEEP_AFTER_MS;
  if (!s->cpu) return wait_paced(s, v, timeout_ms, sleep_after);
  uint64_t seen, cur;
  if ((r = sig_word(s, 0, &seen)) < 0) return r;
  if (seen >= v) return 0;
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
    if (idle_ms >= (uint64_t)timeout_ms) return wait_timeout(s, timeout_ms, v, seen);
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
      sleep_ns(50000); /* backoff of the spinning wait (a CPU-visible signal costs nothing to read) */
    }
  }
}
