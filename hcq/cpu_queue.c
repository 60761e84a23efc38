/* hcq/cpu_queue.c: CPU queue lifetime and submission (the producer side of the ring). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "hcq/cpu.h"
#include "hcq/env.h"

static const char *kind_name(enum bg_queue_kind k) { return k == BG_QUEUE_COPY ? "copy" : "compute"; }

int bg_cpu_queue_create(bg_dev *d, enum bg_queue_kind kind, bg_queue_hw **out) {
  cpu_dev *cd = d->priv;
  bg_queue_hw *hq = aligned_alloc(64, sizeof(*hq));
  if (!hq) return bg_error(BG_ENOMEM, "cpu: out of host memory for a %s queue", kind_name(kind));
  memset(hq, 0, sizeof(*hq));
  hq->cd = cd;
  hq->kind = kind;
  hq->nslots = CPU_RING_SLOTS;
  pthread_mutex_lock(&cd->lock);
  unsigned idx = cd->nqueues[kind == BG_QUEUE_COPY]++;
  pthread_mutex_unlock(&cd->lock);
  snprintf(hq->name, sizeof(hq->name), "%s queue %u", kind_name(kind), idx);
  size_t ring_bytes = (size_t)hq->nslots * CPU_SLOT_SIZE;
  void *ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) {
    int r = bg_error(BG_ENOMEM, "cpu: %s: cannot map its %zu-byte ring: %s", hq->name, ring_bytes, strerror(errno));
    free(hq);
    return r;
  }
  hq->ring = ring;

  /* The worker takes no signals: the application's handlers run on its own threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&hq->thread, NULL, bg_cpu_worker, hq);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e != 0) {
    munmap(ring, ring_bytes);
    int r = bg_error(BG_ENOMEM, "cpu: %s: cannot start its worker thread: %s", hq->name, strerror(e));
    free(hq);
    return r;
  }
  char tname[16];
  snprintf(tname, sizeof(tname), "bg-cpu-%s%u", kind == BG_QUEUE_COPY ? "copy" : "comp", idx);
  pthread_setname_np(hq->thread, tname);   /* only a debugging aid: failure does not matter */

  pthread_mutex_lock(&cd->lock);
  hq->next = cd->queues;
  cd->queues = hq;
  pthread_mutex_unlock(&cd->lock);
  BG_LOG(2, "cpu: created %s (%u slots)", hq->name, hq->nslots);
  *out = hq;
  return 0;
}

/* Stops the worker after it ran what was submitted; a WAIT that is not satisfied is abandoned with
 * everything after it (the core synchronizes before destroying, so normally nothing is pending). */
void bg_cpu_queue_destroy(bg_dev *d, bg_queue_hw *hq) {
  (void)d;
  if (!hq) return;
  cpu_dev *cd = hq->cd;
  atomic_store(&hq->stop, true);
  bg_cpu_wake(hq);
  pthread_join(hq->thread, NULL);
  pthread_mutex_lock(&cd->lock);
  for (bg_queue_hw **pp = &cd->queues; *pp; pp = &(*pp)->next) {
    if (*pp == hq) {
      *pp = hq->next;
      break;
    }
  }
  pthread_mutex_unlock(&cd->lock);
  munmap(hq->ring, (size_t)hq->nslots * CPU_SLOT_SIZE);
  free(hq);
}


static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wait until the ring has room for n slots. The timeout restarts whenever the worker makes
 * progress, so a slow but moving queue never fails; a stuck one names what it waits for. */
static int wait_room(bg_queue_hw *hq, uint64_t put, uint64_t n) {
  uint64_t done = atomic_load_explicit(&hq->done, memory_order_acquire);
  if (put + n - done <= hq->nslots) return 0;
  int timeout_ms, r = bg_env_wait_timeout_ms(&timeout_ms);
  if (r < 0) return r;
  uint64_t last = now_ns();
  for (unsigned spin = 0;; spin++) {
    uint64_t cur = atomic_load_explicit(&hq->done, memory_order_acquire);
    if (put + n - cur <= hq->nslots) return 0;
    uint64_t t = now_ns();
    if (cur != done) {
      done = cur;
      last = t;
    } else if (t - last >= (uint64_t)timeout_ms * 1000000u) {
      uint64_t wa = atomic_load(&hq->wait_addr), wv = atomic_load(&hq->wait_value);
      if (wa && bg_cpu_in_range(hq->cd, wa, 8))
        return bg_error(BG_ETIMEDOUT, "cpu: %s: ring full and no progress for %d ms: the worker waits for signal "
                        "0x%llx >= %llu (it is %llu)", hq->name, timeout_ms, (unsigned long long)wa,
                        (unsigned long long)wv, (unsigned long long)*(volatile uint64_t *)(uintptr_t)wa);
      return bg_error(BG_ETIMEDOUT, "cpu: %s: ring full and no progress for %d ms (%llu commands pending)", hq->name,
                      timeout_ms, (unsigned long long)(put - cur));
    }
    if (spin < 64) {
      sched_yield();
    } else {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
  }
}

int bg_cpu_submit(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len) {
  (void)d;
  if (len % CPU_SLOT_SIZE != 0)
    return bg_error(BG_EINVAL, "cpu: %s: submit of %zu bytes is not a whole number of %d-byte commands", hq->name, len,
                    CPU_SLOT_SIZE);
  uint64_t n = len / CPU_SLOT_SIZE;
  if (n > hq->nslots)
    return bg_error(BG_EINVAL, "cpu: %s: a program of %llu commands does not fit the ring of %u commands: split it",
                    hq->name, (unsigned long long)n, hq->nslots);
  if (n == 0) return 0;
  uint64_t put = atomic_load_explicit(&hq->put, memory_order_relaxed);   /* only this side writes put */
  int r = wait_room(hq, put, n);
  if (r < 0) return r;
  uint32_t first = (uint32_t)(put % hq->nslots);
  uint64_t head = hq->nslots - first < n ? hq->nslots - first : n;
  memcpy(&hq->ring[first], cmd, head * CPU_SLOT_SIZE);
  if (head < n) memcpy(&hq->ring[0], (const uint8_t *)cmd + head * CPU_SLOT_SIZE, (n - head) * CPU_SLOT_SIZE);
  /* seq_cst store then load pairs with the worker's sleeping-store then put-load: either it sees
   * the new put before sleeping, or we see it sleeping and wake it. No syscall while it is busy. */
  atomic_store(&hq->put, put + n);
  if (atomic_load(&hq->sleeping)) bg_cpu_wake(hq);
  return 0;
}
