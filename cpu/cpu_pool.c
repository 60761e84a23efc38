/* cpu/cpu_pool.c: the device's worker pool: one kernel launch's grid on every core (contract C2 of issue 16).
 *
 * The queue's worker that executes an EXEC (the leader) publishes the launch as the pool's job, runs work-groups
 * itself and, before it returns (so before the queue's next SIGNAL or TIMESTAMP), waits until every pool thread has
 * left the job: ordering, signals and timestamps keep their meaning. Work-groups are claimed in chunks with one atomic
 * add (CHUNKS_PER_THREAD chunks per thread keep the threads balanced when work-groups differ in cost).
 *
 * Job lifetime: `epoch` is odd while a job is open. A pool thread that sees a new odd epoch counts itself `inside`,
 * re-reads the epoch and only then touches the job; the leader closes the job (epoch even) and waits until `inside`
 * is 0. Both sides use sequentially consistent operations, so a thread either is counted before the close or sees it.
 *
 * Faults: a pool thread runs kernels armed like the queue's worker (cpu_fault.c): the first fault of a job is kept
 * (what, work-group) and stops the claims; the leader reports it as the queue's fault naming the kernel.
 * Cancellation: a kernel that never returns is cancelled at close (cpu_queue.c) by cancelling the leader; the
 * leader's cleanup then cancels the pool threads still inside a kernel of its job (state IN_KERNEL -> CANCEL, a
 * thread that returned meanwhile sees CANCEL and exits at pthread_testcancel), and dead threads are started again at
 * the next launch. Several queues: the pool serves one launch at a time; a launch that finds it busy runs on its
 * queue's own thread. */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "util/clock.h"
#include "util/env.h"

enum { CHUNKS_PER_THREAD = 8, POOL_ALTSTACK_SIZE = 64 << 10 };
enum { T_IDLE, T_IN_KERNEL, T_CANCEL, T_DEAD };
/* A pool thread polls this long for the next job before sleeping: back-to-back launches need no wake-up. */
#define POOL_SPIN_NS 20000u

typedef struct pool_thread {
  cpu_pool *pool;
  pthread_t th;
  bool started;
  atomic_int state;
  bool inside;           /* counted in pool->inside (read by its cleanup) */
  unsigned seen0;        /* the (even) epoch when it was started: any job opened later is new to it */
  cpu_fault_ctx fault;
} pool_thread;

struct cpu_pool {
  cpu_dev *cd;
  unsigned nhelpers;      /* threads besides the leader */
  pool_thread *t;
  atomic_bool busy;       /* a leader holds the pool */
  atomic_bool broken;     /* a cancelled job's threads did not leave: launches run on their queue's thread */
  atomic_bool stop;
  alignas(64) atomic_uint epoch;   /* odd: a job is open (the futex word the threads sleep on) */
  atomic_uint sleepers;
  alignas(64) atomic_uint inside;
  /* The job (written by the leader while the epoch is even and nobody is inside). */
  alignas(64) cpu_entry_fn fn;
  const void *kargs;
  uint32_t gsz[3], lsz[3];
  uint64_t total, chunk;
  alignas(64) _Atomic uint64_t next;
  alignas(64) atomic_bool fault_claimed;
  atomic_bool faulted;
  uint32_t fault_gid[3];
  char fault_what[320];
};

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static void id_to_gid(const cpu_pool *p, uint64_t id, uint32_t gid[3]) {
  gid[0] = (uint32_t)(id % p->gsz[0]);
  id /= p->gsz[0];
  gid[1] = (uint32_t)(id % p->gsz[1]);
  gid[2] = (uint32_t)(id / p->gsz[1]);
}

/* Keep the first fault of the job and stop further claims. */
static void job_fault(cpu_pool *p, const cpu_fault_ctx *f) {
  atomic_store(&p->next, p->total);
  bool expect = false;
  if (!atomic_compare_exchange_strong(&p->fault_claimed, &expect, true)) {
    char scratch[8];
    bg_cpu_fault_describe(f, scratch, sizeof scratch);   /* unblocks the signal again */
    return;
  }
  bg_cpu_fault_describe(f, p->fault_what, sizeof p->fault_what);
  memcpy(p->fault_gid, f->gid, sizeof p->fault_gid);
  atomic_store(&p->faulted, true);
}

/* Leaving a kernel: a thread whose state was set to CANCEL by a cancelled leader exits here. */
static void left_kernel(pool_thread *t) {
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
  int in = T_IN_KERNEL;
  if (!atomic_compare_exchange_strong(&t->state, &in, T_IDLE)) {
    /* The leader marked this thread and is about to cancel it (or has): wait for the cancel here, where it is
     * harmless, and exit through pool_thread_exit. */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    for (;;) {
      pthread_testcancel();
      sched_yield();
    }
  }
}

/* A pool thread's share of the open job: chunks until none is left, each armed for faults and cancellable. */
static void helper_run(pool_thread *t) {
  cpu_pool *p = t->pool;
  cpu_fault_ctx *f = &t->fault;
  if (sigsetjmp(f->jmp, 0) == 0) {
    for (;;) {
      uint64_t start = atomic_fetch_add(&p->next, p->chunk);
      if (start >= p->total) break;
      uint64_t end = start + p->chunk < p->total ? start + p->chunk : p->total;
      atomic_store(&t->state, T_IN_KERNEL);
      pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
      pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
      f->armed = 1;
      for (uint64_t id = start; id < end; id++) {
        id_to_gid(p, id, f->gid);
        p->fn(p->kargs, f->gid, p->gsz, p->lsz);
      }
      f->armed = 0;
      left_kernel(t);
    }
    return;
  }
  left_kernel(t);
  job_fault(p, f);
}

static void futex_wait(atomic_uint *w, unsigned expected) {
  syscall(SYS_futex, (unsigned *)w, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void pool_thread_exit(void *arg) {
  pool_thread *t = arg;
  if (t->inside) atomic_fetch_sub(&t->pool->inside, 1);
  t->inside = false;
  bg_cpu_fault_thread_fini(&t->fault);
  bg_cpu_unpoison_stack();
  atomic_store(&t->state, T_DEAD);
}

static void *pool_main(void *arg) {
  pool_thread *t = arg;
  cpu_pool *p = t->pool;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);   /* cancellable only inside kernels */
  if (bg_cpu_fault_thread_init(&t->fault) < 0) BG_LOG(1, "cpu: pool thread: %s", bg_last_error());
  pthread_cleanup_push(pool_thread_exit, t);
  unsigned seen = t->seen0;
  while (!atomic_load(&p->stop)) {
    unsigned e = atomic_load(&p->epoch);
    if (!(e & 1) || e == seen) {
      uint64_t until = bg_now_ns() + POOL_SPIN_NS;
      for (unsigned i = 1;; i++) {
        if (atomic_load(&p->epoch) != e || atomic_load(&p->stop)) break;
        if (i % 64 == 0 && bg_now_ns() >= until) {
          atomic_fetch_add(&p->sleepers, 1);
          if (atomic_load(&p->epoch) == e && !atomic_load(&p->stop)) futex_wait(&p->epoch, e);
          atomic_fetch_sub(&p->sleepers, 1);
          break;
        }
        relax();
      }
      continue;
    }
    seen = e;
    t->inside = true;
    atomic_fetch_add(&p->inside, 1);
    if (atomic_load(&p->epoch) == e) helper_run(t);
    t->inside = false;
    atomic_fetch_sub(&p->inside, 1);
  }
  pthread_cleanup_pop(1);
  return NULL;
}

static int start_thread(pool_thread *t) {
  memset(&t->fault, 0, sizeof t->fault);
  void *alt = mmap(NULL, POOL_ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (alt == MAP_FAILED) return bg_error(BG_ENOMEM, "cpu: pool thread signal stack: %s", strerror(errno));
  t->fault.altstack = alt;
  t->fault.altstack_size = POOL_ALTSTACK_SIZE;
  atomic_store(&t->state, T_IDLE);
  t->inside = false;
  t->seen0 = atomic_load(&t->pool->epoch);   /* even: started outside any job (pool_get, or respawn under busy) */
  /* Like the queues' workers, pool threads take no signals but their kernels' faults (cpu_fault.c). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&t->th, NULL, pool_main, t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e != 0) {
    munmap(alt, POOL_ALTSTACK_SIZE);
    t->fault.altstack = NULL;
    return bg_error(BG_ENOMEM, "cpu: cannot start a pool thread: %s", strerror(e));
  }
  t->started = true;
  pthread_setname_np(t->th, "bg-cpu-pool");
  return 0;
}

static void join_thread(pool_thread *t) {
  if (!t->started) return;
  pthread_join(t->th, NULL);
  t->started = false;
  if (t->fault.altstack) munmap(t->fault.altstack, t->fault.altstack_size);
  t->fault.altstack = NULL;
}

int bg_cpu_threads(unsigned *out) {
  long v;
  int r = bg_env_int("BG_CPU_THREADS", &v);
  if (r < 0) return r;
  if (v == 0) {   /* unset: every CPU this process may run on (its affinity mask), else every online CPU */
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    v = n < 1 ? 1 : n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
  }
  *out = (unsigned)v;
  return 0;
}

/* Made at the first launch that can use it (a device that only copies starts no threads). */
static cpu_pool *pool_get(cpu_dev *cd) {
  cpu_pool *p = atomic_load_explicit(&cd->pool, memory_order_acquire);
  if (p || cd->nthreads < 2) return p;
  pthread_mutex_lock(&cd->lock);
  p = atomic_load(&cd->pool);
  if (!p && !cd->pool_failed) {
    p = calloc(1, sizeof *p);
    pool_thread *t = p ? calloc(cd->nthreads - 1, sizeof *t) : NULL;
    if (!t) {
      free(p);
      p = NULL;
      BG_LOG(1, "cpu: no memory for a worker pool: kernels run on their queue's thread");
    } else {
      p->cd = cd;
      p->t = t;
      for (unsigned i = 0; i < cd->nthreads - 1; i++) {
        t[i].pool = p;
        if (start_thread(&t[i]) == 0) p->nhelpers++;
        else BG_LOG(1, "cpu: %s", bg_last_error());
      }
      atomic_store(&cd->pool, p);
    }
    if (!p) cd->pool_failed = true;
  }
  pthread_mutex_unlock(&cd->lock);
  return p;
}

/* Restart the threads a cancelled job killed (under the busy flag: nobody else touches them). */
static void respawn(cpu_pool *p) {
  for (unsigned i = 0; i < p->cd->nthreads - 1; i++) {
    pool_thread *t = &p->t[i];
    if (t->started && atomic_load(&t->state) == T_DEAD) {
      join_thread(t);
      if (start_thread(t) < 0) BG_LOG(1, "cpu: %s", bg_last_error());
    }
  }
}

cpu_pool *bg_cpu_pool_acquire(cpu_dev *cd) {
  cpu_pool *p = pool_get(cd);
  if (!p || atomic_load(&p->broken)) return NULL;
  bool expect = false;
  if (!atomic_compare_exchange_strong(&p->busy, &expect, true)) return NULL;
  respawn(p);
  return p;
}

/* The leader was cancelled (a kernel that never returns, at close): cancel the threads inside a kernel of its job,
 * wait a little for everyone to leave, and give the pool back (or mark it broken when someone stays). */
static void leader_cancelled(void *arg) {
  cpu_pool *p = arg;
  atomic_store(&p->next, p->total);
  for (unsigned i = 0; i < p->cd->nthreads - 1; i++) {
    pool_thread *t = &p->t[i];
    int in = T_IN_KERNEL;
    if (t->started && atomic_compare_exchange_strong(&t->state, &in, T_CANCEL)) pthread_cancel(t->th);
  }
  atomic_fetch_add(&p->epoch, 1);   /* closed */
  uint64_t until = bg_now_ns() + 500000000u;   /* within cpu_queue.c's 1 s join of the cancelled worker */
  while (atomic_load(&p->inside) && bg_now_ns() < until) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  if (atomic_load(&p->inside)) {
    atomic_store(&p->broken, true);
    bg_log(0, "cpu: a pool thread did not leave a cancelled kernel: kernels now run on their queue's thread");
  }
  atomic_store(&p->busy, false);
}

bool bg_cpu_pool_run(cpu_pool *p, bg_queue_hw *hq, cpu_entry_fn fn, const void *kargs, const uint32_t gsz[3],
                     const uint32_t lsz[3], uint64_t total, uint64_t *leader_gids, char *what, size_t whatlen,
                     uint32_t fault_gid[3]) {
  cpu_fault_ctx *f = &hq->fault;
  p->fn = fn;
  p->kargs = kargs;
  memcpy(p->gsz, gsz, sizeof p->gsz);
  memcpy(p->lsz, lsz, sizeof p->lsz);
  p->total = total;
  uint64_t chunks = (uint64_t)(p->nhelpers + 1) * CHUNKS_PER_THREAD;
  p->chunk = total >= chunks ? total / chunks : 1;
  atomic_store(&p->next, 0);
  atomic_store(&p->fault_claimed, false);
  atomic_store(&p->faulted, false);
  atomic_fetch_add(&p->epoch, 1);   /* open: the job's fields are published by this store */
  if (atomic_load(&p->sleepers))
    syscall(SYS_futex, (unsigned *)&p->epoch, FUTEX_WAKE_PRIVATE, (int)p->nhelpers, NULL, NULL, 0);
  volatile uint64_t mine = 0;   /* read after the jump */
  pthread_cleanup_push(leader_cancelled, p);
  if (sigsetjmp(f->jmp, 0) == 0) {
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    f->armed = 1;
    for (;;) {
      uint64_t start = atomic_fetch_add(&p->next, p->chunk);
      if (start >= total) break;
      uint64_t end = start + p->chunk < total ? start + p->chunk : total;
      for (uint64_t id = start; id < end; id++) {
        id_to_gid(p, id, f->gid);
        fn(kargs, f->gid, gsz, lsz);
      }
      mine += end - start;
    }
    f->armed = 0;
  } else {
    job_fault(p, f);
  }
  /* Close, then wait for the threads still running work-groups; cancellable here too (a pool thread's kernel that
   * never returns is cancelled through this thread, see leader_cancelled). */
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  atomic_fetch_add(&p->epoch, 1);
  for (unsigned i = 0; atomic_load(&p->inside); i++) {
    if (i < 1000) {
      relax();
    } else if (i < 1100) {
      sched_yield();
    } else {
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);   /* a cancellation point */
    }
  }
  pthread_cleanup_pop(0);
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  bool ok = !atomic_load(&p->faulted);
  if (!ok) {
    snprintf(what, whatlen, "%s", p->fault_what);
    memcpy(fault_gid, p->fault_gid, sizeof p->fault_gid);
  }
  *leader_gids = mine;
  atomic_store(&p->busy, false);
  return ok;
}

void bg_cpu_pool_destroy(cpu_dev *cd) {
  cpu_pool *p = atomic_load(&cd->pool);
  if (!p) return;
  atomic_store(&p->stop, true);
  atomic_fetch_add(&p->epoch, 2);   /* stays even: no job, but every sleeper's word changed */
  syscall(SYS_futex, (unsigned *)&p->epoch, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
  if (atomic_load(&p->broken)) {
    /* A thread is still inside a kernel: it keeps the pool (and the device memory, see cpu_dev_free). */
    for (unsigned i = 0; i < cd->nthreads - 1; i++)
      if (p->t[i].started) pthread_detach(p->t[i].th);
    cd->abandoned++;
    return;
  }
  for (unsigned i = 0; i < cd->nthreads - 1; i++) join_thread(&p->t[i]);
  free(p->t);
  free(p);
  atomic_store(&cd->pool, NULL);
}
