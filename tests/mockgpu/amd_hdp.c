/* tests/mockgpu/amd_hdp.c: host view of VRAM with per-page write tracking, flushed into the engine view
 * (amd_hdp.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include "amd_hdp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096u
#define MAX_HDP 64 /* live host views the fault handler knows (one per emulated AMD GPU) */

struct amd_hdp {
  uint8_t *vram;    /* engine view (the BAR's backing memory, not ours) */
  uint8_t *vram_ro; /* read-only alias of it: what a clean page of the host view maps */
  uint8_t *host;    /* host view */
  uint8_t *shadow;  /* the host's copies of dirty pages */
  uint8_t *pre;     /* each dirty page as the engines saw it when the host first wrote it */
  uint64_t size, npages;
  uint8_t *dirty;   /* per page */
  uint32_t *list;   /* dirty pages, nlist of them */
  uint64_t nlist;
  /* The process whose host writes the dirty list holds. The host view's mappings are per process (a forked child
   * inherits a copy of its parent's layout), so each process records in private memory (mine, a calloc'd array
   * whose copy a child inherits with the mappings it describes) which of its pages map the shadow. */
  pid_t owner;
  uint8_t *mine;    /* private: this process's host view maps the shadow at this page */
  uint32_t *mlist;  /* private: those pages, nmine of them (the count lives beside them) */
  uint64_t *nmine;
  int lock;         /* spin lock holding the holder's pid: taken in the fault handler, so no mutex; a holder that
                     * died (MOCKGPU_SHARED: a process SIGKILLed) is taken over */
  uint64_t nflush, nfault;
  size_t self_size;
};

static amd_hdp *registry[MAX_HDP];
static struct sigaction old_segv;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_err;

static void *shared_map(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* A new mapping of the pages at src (a MAP_SHARED mapping), with src's protection, at dst (or anywhere). */
static void *alias(void *src, size_t n, void *dst) {
  void *p = dst ? mremap(src, 0, n, MREMAP_MAYMOVE | MREMAP_FIXED, dst) : mremap(src, 0, n, MREMAP_MAYMOVE);
  return p == MAP_FAILED ? NULL : p;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void lock(amd_hdp *h) {
  int me = (int)getpid(), held = 0;
  for (unsigned spin = 1; !__atomic_compare_exchange_n(&h->lock, &held, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
       spin++) {
    /* kill(pid, 0) is async-signal-safe; a holder that is gone released nothing: take its lock over */
    if (held != me && spin % 1024 == 0 && kill(held, 0) < 0 && errno == ESRCH &&
        __atomic_compare_exchange_n(&h->lock, &held, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      break;
    held = 0;
    sched_yield();
  }
}
static void unlock(amd_hdp *h) { __atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE); }

/* Point this process's shadowed host-view pages back at the engine view (read-only again), a run per call. */
static int unshadow_mine(amd_hdp *h) {
  qsort(h->mlist, *h->nmine, sizeof(uint32_t), cmp_u32);
  int r = 0;
  for (uint64_t i = 0; i < *h->nmine;) {
    uint64_t j = i + 1;
    while (j < *h->nmine && h->mlist[j] == h->mlist[j - 1] + 1) j++;
    uint64_t off = (uint64_t)h->mlist[i] * PG;
    if (!alias(h->vram_ro + off, (j - i) * PG, h->host + off)) r = -1;
    i = j;
  }
  for (uint64_t i = 0; i < *h->nmine; i++) h->mine[h->mlist[i]] = 0;
  *h->nmine = 0;
  return r;
}

/* Under the lock: the dirty list is this process's. Another process's pending writes (it died, or it used the
 * device before) drain into the engine view as a real HDP drains posted writes; its mappings are not ours to
 * touch, and ours are put back to read-only so every later write of ours faults again. */
static void merge(amd_hdp *h, uint64_t pg);
static void adopt(amd_hdp *h) {
  pid_t me = getpid();
  if (h->owner == me) return;
  for (uint64_t i = 0; i < h->nlist; i++) merge(h, h->list[i]), h->dirty[h->list[i]] = 0;
  h->nlist = 0;
  if (unshadow_mine(h) < 0) fprintf(stderr, "mock_amd HDP: remapping the host view failed: %s\n", strerror(errno));
  h->owner = me;
}

/* First host write to a clean page: switch the page of the host view to a shadow copy. */
static bool on_write(amd_hdp *h, uint64_t pg) {
  bool ok = true;
  lock(h);
  adopt(h);
  uint8_t *s = h->shadow + pg * PG;
  if (!h->dirty[pg]) {
    memcpy(s, h->vram + pg * PG, PG);
    memcpy(h->pre + pg * PG, s, PG);
    h->dirty[pg] = 1, h->list[h->nlist++] = (uint32_t)pg, h->nfault++;
  }
  if (!h->mine[pg]) { /* else another thread of ours switched it meanwhile: the write is retried */
    ok = alias(s, PG, h->host + pg * PG) != NULL;
    if (ok) h->mine[pg] = 1, h->mlist[(*h->nmine)++] = (uint32_t)pg;
  }
  unlock(h);
  return ok;
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
  int saved = errno;
  uint8_t *a = si->si_addr;
  for (int i = 0; i < MAX_HDP; i++) {
    amd_hdp *h = __atomic_load_n(&registry[i], __ATOMIC_ACQUIRE);
    if (h && si->si_code == SEGV_ACCERR && a >= h->host && a < h->host + h->size &&
        on_write(h, (uint64_t)(a - h->host) / PG)) {
      errno = saved;
      return;
    }
  }
  errno = saved;
  /* not ours: the handler installed before (ASan's, a test's), or the default action on return */
  if (old_segv.sa_flags & SA_SIGINFO) {
    old_segv.sa_sigaction(sig, si, uc);
  } else if (old_segv.sa_handler == SIG_DFL || old_segv.sa_handler == SIG_IGN) {
    signal(SIGSEGV, SIG_DFL); /* the access faults again and the process dies of it */
  } else {
    old_segv.sa_handler(sig);
  }
}

static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  install_err = sigaction(SIGSEGV, &sa, &old_segv) < 0 ? errno : 0;
}

amd_hdp *amd_hdp_new(uint8_t *vram, uint64_t size, bool coherent, char *err, size_t errn) {
  if (!coherent) pthread_once(&once, install);
  if (!coherent && install_err) {
    snprintf(err, errn, "HDP: installing the SIGSEGV handler failed: %s", strerror(install_err));
    return NULL;
  }
  if (!vram || !size || size % PG || size / PG > UINT32_MAX) {
    snprintf(err, errn, "HDP: VRAM of 0x%llx bytes is not a page multiple", (unsigned long long)size);
    return NULL;
  }
  uint64_t np = size / PG;
  size_t self = (sizeof(amd_hdp) + np + np * sizeof(uint32_t) + PG - 1) / PG * PG;
  amd_hdp *h = shared_map(self);
  if (!h) {
    snprintf(err, errn, "HDP: no memory for the page state (%zu bytes)", self);
    return NULL;
  }
  h->self_size = self;
  h->vram = vram, h->size = size, h->npages = np;
  h->list = (uint32_t *)(void *)(h + 1);
  h->dirty = (uint8_t *)(h->list + np);
  h->owner = getpid();
  h->mine = calloc(np, 1);
  h->mlist = calloc(np, sizeof(uint32_t));
  h->nmine = calloc(1, sizeof(uint64_t));
  if (coherent) { /* the host view is the engine view: no write ever faults, flushes only count */
    h->host = vram;
    if (h->mine && h->mlist && h->nmine) return h;
    snprintf(err, errn, "HDP: no memory for the page state");
    amd_hdp_free(h);
    return NULL;
  }
  h->shadow = shared_map(size);
  h->pre = shared_map(size);
  h->vram_ro = alias(vram, size, NULL);
  if (h->vram_ro && mprotect(h->vram_ro, size, PROT_READ) < 0) munmap(h->vram_ro, size), h->vram_ro = NULL;
  h->host = h->vram_ro ? alias(h->vram_ro, size, NULL) : NULL;
  int slot = -1;
  for (int i = 0; i < MAX_HDP && slot < 0 && h->host && h->mine && h->mlist && h->nmine; i++) {
    amd_hdp *none = NULL;
    if (__atomic_compare_exchange_n(&registry[i], &none, h, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) slot = i;
  }
  if (slot < 0) {
    snprintf(err, errn, "HDP: cannot map the host view of 0x%llx bytes (%s)", (unsigned long long)size,
             h->host ? "more than 64 live GPUs" : strerror(errno));
    amd_hdp_free(h);
    return NULL;
  }
  return h;
}

void amd_hdp_free(amd_hdp *h) {
  if (!h) return;
  for (int i = 0; i < MAX_HDP; i++) {
    amd_hdp *me = h;
    __atomic_compare_exchange_n(&registry[i], &me, NULL, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
  }
  free(h->mine);
  free(h->mlist);
  free(h->nmine);
  uint8_t *maps[] = {h->host != h->vram ? h->host : NULL, h->vram_ro, h->shadow, h->pre};
  for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
    if (maps[i]) munmap(maps[i], h->size);
  munmap(h, h->self_size);
}

uint8_t *amd_hdp_host_view(const amd_hdp *h) { return h->host; }


/* 0xff in each byte of x that is not zero. */
static uint64_t byte_mask(uint64_t x) {
  x |= (x >> 4) & 0x0f0f0f0f0f0f0f0full;
  x |= (x >> 2) & 0x0303030303030303ull;
  x |= (x >> 1) & 0x0101010101010101ull;
  return (x & 0x0101010101010101ull) * 0xff;
}

/* Bytes of the shadow that differ from the pre-image go to the engine view, a word at a time, atomically against
 * engine stores to the word's other bytes. */
static void merge(amd_hdp *h, uint64_t pg) {
  const uint64_t *s = (const uint64_t *)(const void *)(h->shadow + pg * PG);
  const uint64_t *p = (const uint64_t *)(const void *)(h->pre + pg * PG);
  uint64_t *e = (uint64_t *)(void *)(h->vram + pg * PG);
  for (unsigned i = 0; i < PG / 8; i++) {
    uint64_t m = byte_mask(s[i] ^ p[i]);
    if (!m) continue;
    uint64_t old = __atomic_load_n(&e[i], __ATOMIC_RELAXED), nw;
    do nw = (old & ~m) | (s[i] & m);
    while (!__atomic_compare_exchange_n(&e[i], &old, nw, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  }
}

void amd_hdp_flush(amd_hdp *h) {
  lock(h);
  adopt(h);
  if (h->nlist) {
    if (unshadow_mine(h) < 0) fprintf(stderr, "mock_amd HDP: remapping the host view failed: %s\n", strerror(errno));
    for (uint64_t i = 0; i < h->nlist; i++) merge(h, h->list[i]), h->dirty[h->list[i]] = 0;
    h->nlist = 0;
  }
  h->nflush++;
  unlock(h);
}

void amd_hdp_discard(amd_hdp *h) {
  lock(h);
  for (uint64_t i = 0; i < h->nlist; i++) h->dirty[h->list[i]] = 0; /* another owner's too: lost in the reset */
  h->nlist = 0;
  h->owner = getpid();
  if (unshadow_mine(h) < 0) fprintf(stderr, "mock_amd HDP: remapping the host view failed: %s\n", strerror(errno));
  unlock(h);
}

unsigned amd_hdp_dirty_pages(const amd_hdp *h) { return (unsigned)__atomic_load_n(&h->nlist, __ATOMIC_RELAXED); }
uint64_t amd_hdp_flushes(const amd_hdp *h) { return __atomic_load_n(&h->nflush, __ATOMIC_RELAXED); }
uint64_t amd_hdp_faults(const amd_hdp *h) { return __atomic_load_n(&h->nfault, __ATOMIC_RELAXED); }
