/* cpu/cpu_worker.c: the consumer side of a CPU queue: one thread executing ring slots in order.
 * Kernels run with faults contained (cpu_fault.c) and the thread cancellable (cpu_queue.c destroy). */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "util/clock.h"

#if defined(__SANITIZE_ADDRESS__)
#define BG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BG_ASAN 1
#endif
#endif
#ifndef BG_ASAN
#define BG_ASAN 0
#endif
#if BG_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Poll this long before sleeping: back-to-back submits then need no wake-up syscall, and an idle
 * worker stops burning its core quickly (time-bounded: PAUSE costs 10 to 150 cycles by CPU). */
#define IDLE_SPIN_NS 20000u

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static void futex_wait(atomic_uint *word, unsigned expected) {
  syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void bg_cpu_wake(bg_queue_hw *hq) {
  atomic_fetch_add(&hq->wake_seq, 1);
  syscall(SYS_futex, (unsigned *)&hq->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Signal memory is plain device memory written by other queues and the host: access it with
 * atomics through a cast (_Atomic uint64_t has the size and alignment of uint64_t here). */
static inline _Atomic uint64_t *sig_word(uint64_t addr) { return (_Atomic uint64_t *)(uintptr_t)addr; }

/* Spin with backoff until *addr >= value: pause, then yield, then sleeps growing to 200 µs.
 * Returns false when the queue is being destroyed first. */
static bool wait_ge(bg_queue_hw *hq, uint64_t addr, uint64_t value) {
  _Atomic uint64_t *p = sig_word(addr);
  if (atomic_load_explicit(p, memory_order_acquire) >= value) return true;
  atomic_store_explicit(&hq->wait_value, value, memory_order_relaxed);
  atomic_store_explicit(&hq->wait_addr, addr, memory_order_relaxed);
  long sleep_ns = 1000;
  bool ok = true;
  for (unsigned i = 0; atomic_load_explicit(p, memory_order_acquire) < value; i++) {
    if (atomic_load_explicit(&hq->stop, memory_order_relaxed)) {
      ok = false;
      break;
    }
    if (i < 2000) {
      cpu_relax();
    } else if (i < 2100) {
      sched_yield();
    } else {
      struct timespec ts = {0, sleep_ns};
      nanosleep(&ts, NULL);
      if (sleep_ns < 200000) sleep_ns *= 2;
    }
  }
  atomic_store_explicit(&hq->wait_addr, 0, memory_order_relaxed);
  return ok;
}

/* The grid loop; gid lives in the fault context so a fault report can name the work-group. */
static void run_grid(cpu_entry_fn fn, const void *kargs, const uint32_t gsz[3], const uint32_t lsz[3], uint32_t gid[3]) {
  for (gid[2] = 0; gid[2] < gsz[2]; gid[2]++)
    for (gid[1] = 0; gid[1] < gsz[1]; gid[1]++)
      for (gid[0] = 0; gid[0] < gsz[0]; gid[0]++) fn(kargs, gid, gsz, lsz);
}

static void leave_kernel(bg_queue_hw *hq) {
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
  atomic_store_explicit(&hq->exec_since_ns, 0, memory_order_release);
}

/* A grid whose work-groups are known to take less than this in all runs on the queue's thread: waking the pool
 * would cost more than it saves. */
#define POOL_MIN_NS 30000u

static void report_fault(bg_queue_hw *hq, uint64_t idx, const cpu_prog *prg, const uint32_t gid[3],
                         const uint32_t gsz[3], const char *what) {
  bg_cpu_fault(hq->cd, "%s: command %llu: kernel '%s' faulted in work-group [%u,%u,%u] of [%u,%u,%u]: %s", hq->name,
               (unsigned long long)idx, prg ? prg->name : "?", gid[0], gid[1], gid[2], gsz[0], gsz[1], gsz[2], what);
}

/* The grid on the device's worker pool (cpu_pool.c), this thread taking part. */
static bool exec_pool(bg_queue_hw *hq, cpu_pool *pool, cpu_entry_fn fn, const void *kargs, const cpu_slot *s,
                      uint64_t total, cpu_prog *prg, uint64_t idx, uint64_t t0) {
  char what[320];
  uint32_t fgid[3] = {0, 0, 0};
  uint64_t mine = 0;
  bool ok = bg_cpu_pool_run(pool, hq, fn, kargs, s->c.grid.gsz, s->c.grid.lsz, total, &mine, what, sizeof(what), fgid);
  leave_kernel(hq);
  if (prg) atomic_store_explicit(&prg->ns_per_gid, (bg_now_ns() - t0) / (mine ? mine : total) + 1, memory_order_relaxed);
  if (!ok) report_fault(hq, idx, prg, fgid, s->c.grid.gsz, what);
  return ok;
}

/* Run one kernel launch. Inside the kernel the thread is armed for faults (cpu_fault.c jumps back
 * here) and cancellable at any instruction: a kernel that never returns is cancelled by
 * bg_cpu_queue_destroy. Generated kernels hold no locks and allocate nothing, so stopping one
 * anywhere is safe; everywhere else the worker is not cancellable. A grid of several work-groups runs on the
 * device's pool unless its last launch showed it is too small to gain from it. */
static bool exec(bg_queue_hw *hq, const cpu_slot *s, uint64_t idx) {
  cpu_entry_fn fn;
  memcpy(&fn, &s->a, sizeof(fn));
  const void *kargs = (const void *)(uintptr_t)s->b;
  const uint32_t *gsz = s->c.grid.gsz, *lsz = s->c.grid.lsz;
  cpu_prog *prg = (cpu_prog *)(uintptr_t)s->prg;
  BG_LOG(2, "cpu: %s: exec %s grid [%u,%u,%u] local [%u,%u,%u]", hq->name, prg ? prg->name : "?", gsz[0], gsz[1],
         gsz[2], lsz[0], lsz[1], lsz[2]);
  cpu_fault_ctx *f = &hq->fault;
  uint64_t total = (uint64_t)gsz[0] * gsz[1] * gsz[2];
  uint64_t t0 = bg_now_ns();
  atomic_store_explicit(&hq->exec_prg, prg, memory_order_relaxed);
  atomic_store_explicit(&hq->exec_since_ns, t0, memory_order_release);
  uint64_t est = prg ? atomic_load_explicit(&prg->ns_per_gid, memory_order_relaxed) : 0;
  if (total >= 2 && hq->cd->nthreads >= 2 && (est == 0 || est * total >= POOL_MIN_NS)) {
    cpu_pool *pool = bg_cpu_pool_acquire(hq->cd);
    if (pool) return exec_pool(hq, pool, fn, kargs, s, total, prg, idx, t0);
  }
  if (sigsetjmp(f->jmp, 0) == 0) {   /* no mask saved: no syscall per launch */
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    f->armed = 1;
    run_grid(fn, kargs, gsz, lsz, f->gid);
    f->armed = 0;
    leave_kernel(hq);
    if (prg && total)
      atomic_store_explicit(&prg->ns_per_gid, (bg_now_ns() - t0) / total + 1, memory_order_relaxed);
    return true;
  }
  leave_kernel(hq);
  char what[320];
  bg_cpu_fault_describe(f, what, sizeof(what));
  report_fault(hq, idx, prg, f->gid, gsz, what);
  return false;
}

/* Address checks turn a bad operand into a reported fault instead of a crash of the process. */
static bool check(bg_queue_hw *hq, uint64_t idx, const char *what, uint64_t addr, uint64_t n, uint64_t align) {
  if (bg_cpu_in_range(hq->cd, addr, n) && addr % align == 0) return true;
  bg_cpu_fault(hq->cd, "%s: command %llu: %s 0x%llx (+%llu bytes) is %s device memory [%p, +0x%llx)", hq->name,
               (unsigned long long)idx, what, (unsigned long long)addr, (unsigned long long)n,
               addr % align ? "misaligned in" : "outside", (void *)hq->cd->base, (unsigned long long)hq->cd->size);
  return false;
}

enum run_result { RUN_OK, RUN_FAULT, RUN_STOPPED };

static enum run_result run(bg_queue_hw *hq, const cpu_slot *s, uint64_t idx) {
  switch (s->op) {
  case CPU_OP_WAIT:
    if (!check(hq, idx, "wait on signal", s->a, 8, 8)) return RUN_FAULT;
    return wait_ge(hq, s->a, s->b) ? RUN_OK : RUN_STOPPED;
  case CPU_OP_SIGNAL:
    if (!check(hq, idx, "signal", s->a, 8, 8)) return RUN_FAULT;
    atomic_store_explicit(sig_word(s->a), s->b, memory_order_release);
    return RUN_OK;
  case CPU_OP_TIMESTAMP:
    if (!check(hq, idx, "timestamp of signal", s->a, 16, 8)) return RUN_FAULT;
    atomic_store_explicit(sig_word(s->a + 8), bg_now_ns(), memory_order_release);
    return RUN_OK;
  case CPU_OP_BARRIER:
    atomic_thread_fence(memory_order_seq_cst);
    return RUN_OK;
  case CPU_OP_COPY:
    if (!check(hq, idx, "copy destination", s->a, s->c.size, 1) || !check(hq, idx, "copy source", s->b, s->c.size, 1))
      return RUN_FAULT;
    memmove((void *)(uintptr_t)s->a, (const void *)(uintptr_t)s->b, s->c.size);
    return RUN_OK;
  case CPU_OP_EXEC:
    return exec(hq, s, idx) ? RUN_OK : RUN_FAULT;
  default:
    bg_cpu_fault(hq->cd, "%s: command %llu: unknown opcode 0x%08x (ring slot %llu)", hq->name, (unsigned long long)idx,
                 s->op, (unsigned long long)(idx % hq->nslots));
    return RUN_FAULT;
  }
}

/* Poll, then sleep on the futex until put moves or the queue stops. Returns true to exit. */
static bool idle(bg_queue_hw *hq, uint64_t done) {
  uint64_t until = bg_now_ns() + IDLE_SPIN_NS;
  for (unsigned i = 1;; i++) {
    if (atomic_load_explicit(&hq->put, memory_order_acquire) != done) return false;
    if (atomic_load_explicit(&hq->stop, memory_order_acquire)) return true;
    if (i % 64 == 0 && bg_now_ns() >= until) break;
    cpu_relax();
  }
  unsigned seq = atomic_load(&hq->wake_seq);
  atomic_store(&hq->sleeping, 1);
  if (atomic_load(&hq->put) == done && !atomic_load(&hq->stop)) futex_wait(&hq->wake_seq, seq);
  atomic_store(&hq->sleeping, 0);
  return false;   /* re-check put and stop at the top of the loop */
}

static void *work(bg_queue_hw *hq) {
  uint64_t done = 0;
  bool dead = false;   /* after a fault the queue discards what it is given (the device reports the hang) */
  for (;;) {
    uint64_t put = atomic_load_explicit(&hq->put, memory_order_acquire);
    if (put == done) {
      if (atomic_load(&hq->stop) || idle(hq, done)) break;
      continue;
    }
    for (; done != put; done++) {
      if (!dead) {
        enum run_result r = run(hq, &hq->ring[done % hq->nslots], done);
        if (r == RUN_STOPPED) {
          done = put;   /* abandoned: what follows the wait must not run before it */
          atomic_store_explicit(&hq->done, done, memory_order_release);
          return NULL;
        }
        dead = r == RUN_FAULT;
      }
      atomic_store_explicit(&hq->done, done + 1, memory_order_release);
    }
  }
  return NULL;
}

/* Runs when the worker ends, returning or cancelled inside a kernel: its signal stack is given back. Under
 * AddressSanitizer a cancelled worker's stack still carries the redzones of the frames the unwinder skipped (the
 * kernel's and exec's), and the sanitizer's own thread teardown then writes into them: unpoison the stack. */
void bg_cpu_unpoison_stack(void) {
#if BG_ASAN
  pthread_attr_t a;
  void *addr;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    if (pthread_attr_getstack(&a, &addr, &size) == 0) __asan_unpoison_memory_region(addr, size);
    pthread_attr_destroy(&a);
  }
#endif
}

static void worker_exit(void *arg) {
  bg_queue_hw *hq = arg;
  bg_cpu_fault_thread_fini(&hq->fault);
  bg_cpu_unpoison_stack();
}

void *bg_cpu_worker(void *arg) {
  bg_queue_hw *hq = arg;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);   /* cancellable only inside kernels (exec) */
  if (bg_cpu_fault_thread_init(&hq->fault) < 0) BG_LOG(1, "cpu: %s: %s", hq->name, bg_last_error());
  pthread_cleanup_push(worker_exit, hq);
  work(hq);
  pthread_cleanup_pop(1);
  return NULL;
}
