/* cpu/cpu_queue.c: CPU queue lifetime and submission (the producer side of the ring). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cpu/cpu.h"
#include "util/env.h"
#include "util/clock.h"

/* The worker's signal stack: the fault handler runs there (with room for a chained application
 * handler), also when the kernel overflowed its stack. */
#define CPU_ALTSTACK_SIZE (64u << 10)

static const char *kind_name(enum bg_queue_kind k) { return k == BG_QUEUE_COPY ? "copy" : "compute"; }

static void free_queue_memory(bg_queue_hw *hq) {
  if (hq->fault.altstack) munmap(hq->fault.altstack, hq->fault.altstack_size);
  if (hq->ring) munmap(hq->ring, (size_t)hq->nslots * CPU_SLOT_SIZE);
  free(hq);
}

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
  void *alt = mmap(NULL, CPU_ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  hq->ring = ring == MAP_FAILED ? NULL : ring;
  hq->fault.altstack = alt == MAP_FAILED ? NULL : alt;
  hq->fault.altstack_size = CPU_ALTSTACK_SIZE;
  if (!hq->ring || !hq->fault.altstack) {
    int r = bg_error(BG_ENOMEM, "cpu: %s: cannot map its %zu-byte ring and %u-byte signal stack: %s", hq->name,
                     ring_bytes, CPU_ALTSTACK_SIZE, strerror(errno));
    free_queue_memory(hq);
    return r;
  }

  /* The worker takes no signals: the application's handlers run on its own threads. (The worker
   * unblocks only the faults its kernels raise, cpu_fault.c.) */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&hq->thread, NULL, bg_cpu_worker, hq);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e != 0) {
    int r = bg_error(BG_ENOMEM, "cpu: %s: cannot start its worker thread: %s", hq->name, strerror(e));
    free_queue_memory(hq);
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

/* Join the worker. A kernel that has run for the wait timeout (BG_WAIT_TIMEOUT_MS) without
 * returning is cancelled: the worker is asynchronously cancellable only inside kernels
 * (cpu_worker.c exec), so the thread unwinds out of the kernel and exits. Returns false when
 * even that did not stop it: the thread is detached and keeps what it may still touch. */
static bool stop_worker(bg_queue_hw *hq) {
  int timeout_ms;
  if (bg_env_wait_timeout_ms(&timeout_ms) < 0) timeout_ms = 30000;   /* checked at open; keep closing */
  for (;;) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 10 * 1000000L;   /* how often a stuck kernel is looked for; the join returns at once */
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    int e = pthread_timedjoin_np(hq->thread, NULL, &dl);
    if (e == 0) return true;
    if (e != ETIMEDOUT) break;
    uint64_t since = atomic_load_explicit(&hq->exec_since_ns, memory_order_acquire);
    if (since && bg_now_ns() - since >= (uint64_t)timeout_ms * 1000000u) break;
  }
  const cpu_prog *prg = atomic_load(&hq->exec_prg);
  char name[sizeof(prg->name)];
  snprintf(name, sizeof(name), "%s", prg ? prg->name : "?");
  if (pthread_cancel(hq->thread) == 0) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 1;   /* unwinding takes microseconds */
    if (pthread_timedjoin_np(hq->thread, NULL, &dl) == 0) {
      bg_error(BG_EHANG, "cpu: %s: kernel '%s' still running %d ms (BG_WAIT_TIMEOUT_MS) after the queue was stopped: "
               "its worker thread was cancelled", hq->name, name, timeout_ms);
      bg_log(0, "%s", bg_last_error());
      return true;
    }
  }
  pthread_detach(hq->thread);
  bg_error(BG_EHANG, "cpu: %s: kernel '%s' still running %d ms (BG_WAIT_TIMEOUT_MS) after the queue was stopped and "
           "its worker thread cannot be cancelled: it is left running with its queue and the device memory",
           hq->name, name, timeout_ms);
  bg_log(0, "%s", bg_last_error());
  return false;
}

/* Stops the worker after it ran what was submitted; a WAIT that is not satisfied is abandoned with
 * everything after it (the core synchronizes before destroying, so normally nothing is pending).
 * A kernel that never returns is cancelled after the wait timeout, with an error recorded
 * (bg_last_error) and printed. */
void bg_cpu_queue_destroy(bg_dev *d, bg_queue_hw *hq) {
  (void)d;
  if (!hq) return;
  cpu_dev *cd = hq->cd;
  atomic_store(&hq->stop, true);
  bg_cpu_wake(hq);
  bool stopped = stop_worker(hq);
  pthread_mutex_lock(&cd->lock);
  for (bg_queue_hw **pp = &cd->queues; *pp; pp = &(*pp)->next) {
    if (*pp == hq) {
      *pp = hq->next;
      break;
    }
  }
  if (!stopped) cd->abandoned++;
  pthread_mutex_unlock(&cd->lock);
  if (stopped) free_queue_memory(hq);   /* else the running thread still reads its ring and context */
}

/* Wait until the ring has room for n slots. The timeout restarts whenever the worker makes
 * progress, so a slow but moving queue never fails; a stuck one names what it waits for. */
static int wait_room(bg_queue_hw *hq, uint64_t put, uint64_t n) {
  uint64_t done = atomic_load_explicit(&hq->done, memory_order_acquire);
  if (put + n - done <= hq->nslots) return 0;
  int timeout_ms, r = bg_env_wait_timeout_ms(&timeout_ms);
  if (r < 0) return r;
  uint64_t last = bg_now_ns();
  for (unsigned spin = 0;; spin++) {
    uint64_t cur = atomic_load_explicit(&hq->done, memory_order_acquire);
    if (put + n - cur <= hq->nslots) return 0;
    uint64_t t = bg_now_ns();
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
