/* cpu/cpu_recover.c: bg_backend_ops.recover of the CPU device: after a fault (the worker discards what it is given)
 * or a wait that never completes, stop every worker, drop what is pending on its ring, start a fresh worker and clear
 * the latched fault, so the open device runs work again (bg_dev_recover). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu.h"
#include "util/env.h"

/* Stop the worker; it leaves a WAIT at once, but a kernel only when it returns: give it the wait timeout. */
static int stop_worker(bg_queue_hw *hq, int timeout_ms) {
  atomic_store(&hq->stop, true);
  bg_cpu_wake(hq);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  int e = pthread_timedjoin_np(hq->thread, NULL, &ts);
  if (e == 0) return 0;
  return bg_error(BG_ETIMEDOUT, "cpu: %s: the worker did not stop within %d ms (a kernel that does not return): "
                  "close the device", hq->name, timeout_ms);
}

static int start_worker(bg_queue_hw *hq) {
  atomic_store(&hq->put, 0);
  atomic_store(&hq->done, 0);
  atomic_store(&hq->wait_addr, 0);
  atomic_store(&hq->sleeping, 0);
  atomic_store(&hq->stop, false);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* as bg_cpu_queue_create: the worker takes no signals */
  int e = pthread_create(&hq->thread, NULL, bg_cpu_worker, hq);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e != 0) return bg_error(BG_ENOMEM, "cpu: %s: cannot restart its worker thread: %s", hq->name, strerror(e));
  return 0;
}

int bg_cpu_recover(bg_dev *d) {
  cpu_dev *cd = d->priv;
  int timeout_ms, r = bg_env_wait_timeout_ms(&timeout_ms);
  if (r < 0) return r;
  /* The workers take cd->lock to latch a fault: list the queues under it, stop them without it. */
  pthread_mutex_lock(&cd->lock);
  size_t n = 0;
  for (bg_queue_hw *hq = cd->queues; hq; hq = hq->next) n++;
  bg_queue_hw **qs = calloc(n ? n : 1, sizeof(*qs));
  n = 0;
  for (bg_queue_hw *hq = cd->queues; qs && hq; hq = hq->next) qs[n++] = hq;
  pthread_mutex_unlock(&cd->lock);
  if (!qs) return bg_error(BG_ENOMEM, "cpu: out of host memory");
  for (size_t i = 0; i < n && r == 0; i++)
    if ((r = stop_worker(qs[i], timeout_ms)) == 0) r = start_worker(qs[i]);
  free(qs);
  if (r < 0) return r;
  pthread_mutex_lock(&cd->lock);
  cd->fault_msg[0] = '\0';
  atomic_store(&cd->faulted, false);
  pthread_mutex_unlock(&cd->lock);
  return 0;
}
