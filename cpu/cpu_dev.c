/* cpu/cpu_dev.c: the CPU device: interface entry, memory (one reservation + TLSF), fault
 * reporting, program release, close. Queues live in cpu_queue.c/cpu_worker.c, lowering in cpu_lower.c, programs
 * in cpu_program.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpu.h"

#define CPU_MIN_ALIGN 64u            /* a cache line: kernels may use aligned vector loads */
#define CPU_PAGE_ALIGN_FROM (64u << 10)   /* allocations this large get whole pages of their own */

bool bg_cpu_in_range(const cpu_dev *cd, uint64_t addr, uint64_t n) {
  uint64_t base = (uint64_t)(uintptr_t)cd->base;
  return (addr >= base && n <= cd->size && addr - base <= cd->size - n) || bg_cpu_peer_in_range(cd, addr, n);
}

void bg_cpu_fault(cpu_dev *cd, const char *fmt, ...) {
  pthread_mutex_lock(&cd->lock);
  if (!atomic_load(&cd->faulted)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cd->fault_msg, sizeof(cd->fault_msg), fmt, ap);
    va_end(ap);
    atomic_store(&cd->faulted, true);
    BG_LOG(1, "cpu: fault: %s", cd->fault_msg);
  }
  pthread_mutex_unlock(&cd->lock);
}

static uint64_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (uint64_t)p : 4096u;
}

/* The whole pages inside [addr, addr+n): returns false when there is none. */
static bool inner_pages(uint64_t addr, uint64_t n, uint64_t *start, uint64_t *len) {
  uint64_t ps = page_size();
  uint64_t s = (addr + ps - 1) & ~(ps - 1), e = (addr + n) & ~(ps - 1);
  if (e <= s) return false;
  *start = s;
  *len = e - s;
  return true;
}

static int cpu_alloc(bg_dev *d, uint64_t size, unsigned flags, bg_mem *out) {
  cpu_dev *cd = d->priv;
  bool big = size >= CPU_PAGE_ALIGN_FROM;
  uint64_t align = big ? page_size() : CPU_MIN_ALIGN;
  if (size > cd->size) return bg_error(BG_ENOMEM, "cpu: %llu bytes exceed the device's %llu-byte memory",
                                       (unsigned long long)size, (unsigned long long)cd->size);
  uint64_t rsize = (size + align - 1) & ~(align - 1), addr;
  pthread_mutex_lock(&cd->mem_lock);
  int r = bg_tlsf_alloc(cd->tlsf, rsize, align, &addr);
  pthread_mutex_unlock(&cd->mem_lock);
  if (r < 0) return bg_error_context(r, "cpu: ");
  if (flags & BG_BUF_ZERO) {
    /* Whole pages are dropped (they read back as zero without being touched); only the partial
     * pages at the ends, possibly dirty from earlier allocations, are cleared by hand. */
    uint64_t ps, pl;
    if (big && inner_pages(addr, rsize, &ps, &pl) && madvise((void *)(uintptr_t)ps, pl, MADV_DONTNEED) == 0) {
      memset((void *)(uintptr_t)addr, 0, ps - addr);
      memset((void *)(uintptr_t)(ps + pl), 0, addr + rsize - (ps + pl));
    } else {
      memset((void *)(uintptr_t)addr, 0, rsize);
    }
  }
  out->va = addr;
  out->size = size;
  out->cpu = (void *)(uintptr_t)addr;
  out->meta = (void *)(uintptr_t)rsize;
  return 0;
}

static void cpu_free(bg_dev *d, bg_mem *m) {
  cpu_dev *cd = d->priv;
  uint64_t rsize = (uint64_t)(uintptr_t)m->meta, ps, pl;
  /* Return large blocks' pages to the OS before the range can be handed out again. */
  if (rsize >= CPU_PAGE_ALIGN_FROM && inner_pages(m->va, rsize, &ps, &pl))
    madvise((void *)(uintptr_t)ps, pl, MADV_DONTNEED);
  pthread_mutex_lock(&cd->mem_lock);
  int r = bg_tlsf_free(cd->tlsf, m->va);
  pthread_mutex_unlock(&cd->mem_lock);
  if (r < 0) BG_LOG(1, "cpu: free of 0x%llx failed: %s", (unsigned long long)m->va, bg_last_error());
  memset(m, 0, sizeof(*m));
}

static int cpu_sleep(bg_dev *d, int ms) {
  cpu_dev *cd = d->priv;
  if (!atomic_load(&cd->faulted) && ms > 0) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
  }
  if (atomic_load(&cd->faulted)) {
    pthread_mutex_lock(&cd->lock);
    int r = bg_error(BG_EHANG, "cpu: device faulted: %s", cd->fault_msg);
    pthread_mutex_unlock(&cd->lock);
    return r;
  }
  return 0;
}

/* A program freed while a queue still has work (the device is in an error state, so the core
 * did not synchronize) may be running or about to run: unload it only at close, once the workers
 * are stopped. */
static void cpu_program_free(bg_dev *d, void *handle) {
  cpu_dev *cd = d->priv;
  cpu_prog *p = handle;
  if (!p) return;
  pthread_mutex_lock(&cd->lock);
  bool busy = false;
  for (bg_queue_hw *hq = cd->queues; hq && !busy; hq = hq->next)
    busy = atomic_load_explicit(&hq->done, memory_order_acquire) != atomic_load(&hq->put);
  if (busy) {
    p->next_deferred = cd->deferred;
    cd->deferred = p;
  }
  pthread_mutex_unlock(&cd->lock);
  if (busy) BG_LOG(1, "cpu: program '%s' freed while a queue is busy: unloaded at close", p->name);
  else bg_cpu_program_free(d, p);
}

static void cpu_dev_free(cpu_dev *cd) {
  /* Queues the caller did not free: stop their workers before the memory goes away. */
  while (cd->queues) bg_cpu_queue_destroy(NULL, cd->queues);
  bg_cpu_pool_destroy(cd);
  if (cd->abandoned) {
    /* A worker that could not be stopped may still run a kernel: its code, the device memory
     * and this structure (through its queue) stay. */
    bg_log(0, "cpu: %u worker thread(s) still running a kernel: leaving %llu MiB of device memory and their "
           "programs allocated", cd->abandoned, (unsigned long long)(cd->size >> 20));
    return;
  }
  while (cd->deferred) {
    cpu_prog *p = cd->deferred;
    cd->deferred = p->next_deferred;
    bg_cpu_program_free(NULL, p);
  }
  if (cd->tlsf) bg_tlsf_destroy(cd->tlsf);
  if (cd->base) munmap(cd->base, cd->size);
  pthread_mutex_destroy(&cd->mem_lock);
  pthread_mutex_destroy(&cd->lock);
  free(cd);
}

static void cpu_close(bg_dev *d) {
  if (d->priv) cpu_dev_free(d->priv);
  d->priv = NULL;
}

static const bg_backend_ops cpu_ops = {
  .kind = "CPU",
  .ticks_per_us = 1000.0,   /* timestamps are CLOCK_MONOTONIC nanoseconds */
  .has_copy_queue = true,
  .alloc = cpu_alloc,
  .free = cpu_free,
  .copyin = NULL,           /* the core synchronizes and uses the CPU view */
  .copyout = NULL,
  .queue_create = bg_cpu_queue_create,
  .queue_destroy = bg_cpu_queue_destroy,
  .lower = bg_cpu_lower,
  .submit = bg_cpu_submit,
  .program_load = bg_cpu_program_load,
  .program_free = cpu_program_free,
  .sleep = cpu_sleep,
  .recover = bg_cpu_recover,
  .peer_export = bg_cpu_peer_export,  /* cpu_peer.c: CPU devices reach each other's memory directly */
  .peer_reach = bg_cpu_peer_reach,
  .peer_map = bg_cpu_peer_map,
  .peer_unmap = bg_cpu_peer_unmap,
  .close = cpu_close,
};

/* Reserve address space only (MAP_NORESERVE): pages are committed when touched. Smaller sizes are
 * tried when the system refuses (strict overcommit, address-space limits). */
static int reserve(cpu_dev *cd) {
  static const uint64_t sizes[] = {64ull << 30, 16ull << 30, 4ull << 30, 1ull << 30, 256ull << 20};
  int err = 0;
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    void *p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      cd->base = p;
      cd->size = sizes[i];
      return 0;
    }
    err = errno;
  }
  return bg_error(BG_ENOMEM, "cpu: cannot reserve device memory (tried 64 GiB down to 256 MiB): mmap: %s",
                  strerror(err));
}

static int cpu_count(void) { return 1; }

static int cpu_open(bg_dev *d, int index) {
  if (index != 0) return bg_error(BG_ENODEV, "cpu: there is one CPU device, index %d does not exist", index);
  int r = bg_cpu_fault_install();
  if (r < 0) return r;
  cpu_dev *cd = calloc(1, sizeof(*cd));
  if (!cd) return bg_error(BG_ENOMEM, "cpu: out of host memory opening the device");
  pthread_mutex_init(&cd->mem_lock, NULL);
  pthread_mutex_init(&cd->lock, NULL);
  r = bg_cpu_threads(&cd->nthreads);
  if (r == 0) r = reserve(cd);
  if (r == 0) {
    r = bg_tlsf_create((uint64_t)(uintptr_t)cd->base, cd->size, CPU_MIN_ALIGN, &cd->tlsf);
    if (r < 0) r = bg_error_context(r, "cpu: device memory allocator: ");
  }
  if (r < 0) {
    cpu_dev_free(cd);
    return r;
  }
  d->ops = &cpu_ops;
  d->priv = cd;
  strncpy(d->arch, "host", sizeof(d->arch) - 1);
  BG_LOG(1, "cpu: %llu MiB of device memory at %p, %u thread(s) per launch", (unsigned long long)(cd->size >> 20),
         (void *)cd->base, cd->nthreads);
  return 0;
}

/* Registered in hcq/meson.build (backend_ifaces), first in the registry's generated table. */
const bg_iface bg_cpu_iface = {
  .kind = "CPU",
  .name = "",
  .mock = false,
  .count = cpu_count,
  .open = cpu_open,
  .chip_lookup = NULL, /* no PCI ids */
};
