/* tests/mockgpu/mock_shm.c: process-shared memory and lock of the emulated hardware (mock_shm.h). */
#include "mock_shm.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALIGN 16u
#define BIG 65536u /* freed blocks at least this large give their pages back */

/* The arena's first bytes (shared too): the bump offset and the take-over count. */
typedef struct arena_head {
  size_t used;
  unsigned takeovers;
} arena_head;

/* Each block starts with its size, so realloc can copy and free can give pages back. */
typedef struct blk {
  size_t size;
  size_t pad;
} blk;

static uint8_t *base;  /* set before any fork: the same in every child */
static size_t cap;

int mock_shm_init(size_t size) {
  if (base) return 0;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return -1;
  base = p;
  cap = size;
  ((arena_head *)base)->used = (sizeof(arena_head) + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  return 0;
}

bool mock_shm_on(void) { return base != NULL; }

int mock_shm_env(void) {
  const char *v = getenv("MOCKGPU_SHARED");
  if (!v || !*v || strcmp(v, "0") == 0) return 0;
  return strcmp(v, "1") == 0 ? 1 : -1;
}

static bool in_arena(const void *p) { return base && (const uint8_t *)p >= base && (const uint8_t *)p < base + cap; }

static void *arena_alloc(size_t size) {
  size_t need = (sizeof(blk) + size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  if (size > cap) return NULL;
  size_t at = __atomic_fetch_add(&((arena_head *)base)->used, need, __ATOMIC_RELAXED);
  if (at > cap - need) return NULL; /* the offset stays past the end: every later call fails too */
  blk *b = (blk *)(base + at);
  b->size = size;
  return b + 1; /* fresh pages of a MAP_ANONYMOUS arena are zero */
}

void *mock_shm_malloc(size_t size) { return base ? arena_alloc(size) : malloc(size); }

void *mock_shm_calloc(size_t n, size_t size) {
  if (!base) return calloc(n, size);
  if (size && n > SIZE_MAX / size) return NULL;
  return arena_alloc(n * size);
}

void mock_shm_free(void *p) {
  if (!p) return;
  if (!in_arena(p)) {
    free(p);
    return;
  }
  blk *b = (blk *)p - 1;
  if (b->size < BIG) return;
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t lo = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1), hi = ((uintptr_t)p + b->size) & ~((uintptr_t)pg - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_REMOVE);
}

void *mock_shm_realloc(void *p, size_t size) {
  if (!p) return mock_shm_malloc(size);
  if (!in_arena(p)) return realloc(p, size); /* allocated before shared mode, or by libc */
  blk *b = (blk *)p - 1;
  void *n = arena_alloc(size);
  if (!n) return NULL;
  memcpy(n, p, b->size < size ? b->size : size);
  mock_shm_free(p);
  return n;
}

void *mock_shm_map(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, (base ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void mock_shm_discard(void *p, size_t size) { (void)madvise(p, size, base ? MADV_REMOVE : MADV_DONTNEED); }

int mock_shm_mutex_init(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  if (base) {
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  }
  int r = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return r;
}

/* EOWNERDEAD: we hold the lock of a process that died holding it; the device state is what it left. */
static int took_over(pthread_mutex_t *m, int r) {
  if (r != EOWNERDEAD) return r;
  pthread_mutex_consistent(m);
  if (base) __atomic_add_fetch(&((arena_head *)base)->takeovers, 1, __ATOMIC_RELAXED);
  return 0;
}

void mock_shm_lock(pthread_mutex_t *m) { (void)took_over(m, pthread_mutex_lock(m)); }

void mock_shm_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) { (void)took_over(m, pthread_cond_wait(c, m)); }

int mock_shm_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  return took_over(m, pthread_cond_timedwait(c, m, abstime));
}

unsigned mock_shm_takeovers(void) {
  return base ? __atomic_load_n(&((arena_head *)base)->takeovers, __ATOMIC_RELAXED) : 0;
}

static unsigned kill_after; /* this process's own (a child inherits 0: only the worker sets it) */

void mock_shm_kill_after(unsigned n) { __atomic_store_n(&kill_after, n, __ATOMIC_SEQ_CST); }

void mock_shm_kill_point(void) {
  if (__atomic_load_n(&kill_after, __ATOMIC_RELAXED) && __atomic_sub_fetch(&kill_after, 1, __ATOMIC_SEQ_CST) == 0)
    raise(SIGKILL); /* the write never happens: the process died between two register writes */
}
