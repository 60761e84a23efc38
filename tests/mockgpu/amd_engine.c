/* tests/mockgpu/amd_engine.c: engine threads, the BAR2 doorbell hook and the device lock (amd_engine.h). */
#include "amd_engine.h"

#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amd_internal.h"
#include "mock_pci.h"
#include "mock_shm.h"
#include "util/clock.h"

#define DOORBELL_BAR 2
#define MAX_ENGINES 2

struct amd_engines {
  amd_engine *e[MAX_ENGINES];
  unsigned n;
  pthread_cond_t idle; /* broadcast when an engine finishes a run */
  unsigned drop_doorbells; /* fault injection: doorbell writes still to be lost (mock_amd_inject_doorbell_drop) */
  uint64_t dropped;
};

/* Engine threads belong to the process that started them: with MOCKGPU_SHARED (mock_shm.h) the device outlives the
 * process, and a fork()ed child has none of its parent's threads. This process's engines of each device (a child's
 * copy of the table names its parent's pid: those are not its own). */
#define MAX_OWN 16
static struct {
  const mock_amd *g;
  pid_t pid;
  struct amd_engines *en;
} OWN[MAX_OWN];
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

static struct amd_engines *eng_of(const mock_amd *g) {
  pid_t me = getpid();
  struct amd_engines *en = NULL;
  pthread_mutex_lock(&own_lock);
  for (int i = 0; i < MAX_OWN && !en; i++)
    if (OWN[i].g == g && OWN[i].pid == me) en = OWN[i].en;
  pthread_mutex_unlock(&own_lock);
  return en;
}

/* Set (en) or clear (NULL) this process's engines of g. -1 when the table is full. */
static int eng_set(const mock_amd *g, struct amd_engines *en) {
  pid_t me = getpid();
  int slot = -1;
  pthread_mutex_lock(&own_lock);
  for (int i = 0; i < MAX_OWN; i++) { /* g's entry (a parent's one is replaced), else a free one */
    if (OWN[i].g == g) {
      slot = i;
      break;
    }
    if (!OWN[i].g && slot < 0) slot = i;
  }
  if (slot >= 0) {
    OWN[slot].g = en ? g : NULL;
    OWN[slot].pid = me;
    OWN[slot].en = en;
  }
  pthread_mutex_unlock(&own_lock);
  return en && slot < 0 ? -1 : 0;
}

uint64_t amd_gpu_clock(void) { return bg_now_ns() / 10; }

void amd_lock_init(mock_amd *g) { mock_shm_mutex_init(&g->lock); /* robust and process-shared with MOCKGPU_SHARED */ }

void amd_lock_destroy(mock_amd *g) { pthread_mutex_destroy(&g->lock); }

static void *engine_main(void *arg) {
  amd_engine *e = arg;
  mock_amd *g = e->g;
  __atomic_store_n(&e->alive, 1, __ATOMIC_RELEASE);
  mock_shm_lock(&g->lock);
  for (;;) {
    while (!e->stop && !e->kicked) mock_shm_cond_wait(&e->cv, &g->lock);
    if (e->stop) break;
    e->kicked = false;
    e->running = true;
    e->slept_ns = 0;
    uint64_t t0 = bg_now_ns();
    e->ops->run(e);
    uint64_t dt = bg_now_ns() - t0;
    __atomic_add_fetch(&e->exec_ns, dt > e->slept_ns ? dt - e->slept_ns : 0, __ATOMIC_RELAXED);
    e->running = false;
    pthread_cond_broadcast(&e->en->idle);
  }
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

bool amd_engine_sleep(amd_engine *e, unsigned us) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)us * 1000u;
  ts.tv_sec += (time_t)(ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  uint64_t t0 = bg_now_ns();
  if (!e->stop) mock_shm_cond_timedwait(&e->cv, &e->g->lock, &ts);
  e->slept_ns += bg_now_ns() - t0;
  return !e->stop;
}

/* ---------------- doorbells (BAR2) ---------------- */

static int start_threads(mock_amd *g);

static uint64_t bar2_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  mock_amd *g = user;
  uint64_t v = 0;
  mock_shm_lock(&g->lock);
  memcpy(&v, (uint8_t *)mock_pci_bar_mem(m, bar) + off, size);
  pthread_mutex_unlock(&g->lock);
  return v;
}

static void bar2_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  mock_amd *g = user;
  mock_shm_lock(&g->lock);
  uint8_t *slot = (uint8_t *)mock_pci_bar_mem(m, bar) + off;
  memcpy(slot, &v, size);
  bool hit = false;
  struct amd_engines *en = eng_of(g);
  if (!en && start_threads(g) == 0) en = eng_of(g); /* first doorbell of this process (MOCKGPU_SHARED, a child) */
  for (unsigned i = 0; en && i < en->n; i++) {
    amd_engine *e = en->e[i];
    int64_t at = e->ops->doorbell(e);
    if (at < 0 || (uint64_t)at != (off & ~7ull)) continue;
    if (size < 4) continue; /* a partial store does not ring */
    hit = true;
    if (en->drop_doorbells) { /* injected: the write is lost on its way, the engine never hears of it */
      en->drop_doorbells--;
      en->dropped++;
      continue;
    }
    memcpy(&e->db, (uint8_t *)mock_pci_bar_mem(m, bar) + at, 8); /* the whole 64-bit slot is the write pointer */
    e->kicked = true;
    pthread_cond_signal(&e->cv);
  }
  if (!hit)
    amd_fail(g, "doorbell write of 0x%" PRIx64 " (%u bytes) at BAR2+0x%" PRIx64 ": no enabled queue uses this doorbell", v,
             size, off);
  pthread_mutex_unlock(&g->lock);
}

/* ---------------- life cycle ---------------- */

static int add(mock_amd *g, struct amd_engines *en, amd_engine *e) {
  if (!e) return 0;
  e->g = g;
  e->en = en;
  pthread_cond_init(&e->cv, NULL);
  en->e[en->n++] = e;
  if (pthread_create(&e->thr, NULL, engine_main, e) != 0) {
    amd_fail(g, "%s engine: cannot start its thread", e->ops->name);
    return -1;
  }
  e->started = true;
  return 0;
}

/* This process's engine threads for g (at creation, and in a process that rings a doorbell without any). */
static int start_threads(mock_amd *g) {
  amd_engine *cp = amd_pm4_engine(g), *sdma = amd_sdma_engine(g);
  if (!cp) cp = amd_aql_engine(g); /* gfx942: the XCCs' AQL queue (its PM4 HQD on XCC 0 is not executed) */
  struct amd_engines *en = calloc(1, sizeof(*en));
  if (!en || eng_set(g, en) < 0) {
    amd_fail(g, "cannot start the queue engines (out of memory or of process slots)");
    free(en);
    if (cp) cp->ops->destroy(cp);
    if (sdma) sdma->ops->destroy(sdma);
    return -1;
  }
  pthread_cond_init(&en->idle, NULL);
  mock_shm_lock(&g->lock);
  int r = add(g, en, cp);
  r |= add(g, en, sdma); /* listed even when its thread failed: amd_engines_stop frees both */
  pthread_mutex_unlock(&g->lock);
  /* Return only once every new thread runs its own code. A process that forks right after (tests/stress/kill.c
   * starts the model, then forks its workers) must not fork while a thread is still being set up: a sanitizer
   * runtime's thread registry can then be copied locked into the child, whose own engine threads never start
   * (seen under ASan on a loaded machine: the child's first SDMA doorbell kicked a thread that never ran). */
  for (unsigned i = 0; i < en->n; i++)
    for (unsigned spin = 0; en->e[i]->started && !__atomic_load_n(&en->e[i]->alive, __ATOMIC_ACQUIRE) && spin < 100000; spin++)
      sched_yield();
  return r;
}

int amd_engines_start(mock_amd *g) {
  if (g->ip.gc.maj != 11 && g->ip.gc.maj != 12 && g->ip.gc.maj != 9) return 0; /* no queue model: BAR2 stays plain memory */
  if (mock_pci_hook(g->pci, DOORBELL_BAR, 0, mock_pci_bar_size(g->pci, DOORBELL_BAR), bar2_rd, bar2_wr, g) < 0) {
    amd_fail(g, "cannot set up the queue engines (doorbell BAR hook)");
    return -1;
  }
  return start_threads(g);
}

void amd_engines_stop(mock_amd *g) {
  struct amd_engines *en = eng_of(g);
  if (!en) return;
  mock_shm_lock(&g->lock);
  for (unsigned i = 0; i < en->n; i++) {
    en->e[i]->stop = true;
    pthread_cond_signal(&en->e[i]->cv);
  }
  pthread_mutex_unlock(&g->lock);
  for (unsigned i = 0; i < en->n; i++)
    if (en->e[i]->started) pthread_join(en->e[i]->thr, NULL);
  eng_set(g, NULL);
  for (unsigned i = 0; i < en->n; i++) {
    pthread_cond_destroy(&en->e[i]->cv);
    en->e[i]->ops->destroy(en->e[i]);
  }
  pthread_cond_destroy(&en->idle);
  free(en);
}

void amd_engines_reset(mock_amd *g) {
  struct amd_engines *en = eng_of(g); /* a killed process's engines died with it */
  mock_shm_lock(&g->lock);
  for (unsigned i = 0; en && i < en->n; i++) en->e[i]->fresh = true, en->e[i]->latched = false;
  pthread_mutex_unlock(&g->lock);
}

uint64_t mock_amd_exec_ns(const mock_amd *g) {
  mock_amd *mg = (mock_amd *)(uintptr_t)g;
  uint64_t s = 0;
  struct amd_engines *en = eng_of(g);
  mock_shm_lock(&mg->lock);
  for (unsigned i = 0; en && i < en->n; i++) s += __atomic_load_n(&en->e[i]->exec_ns, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&mg->lock);
  return s;
}

int mock_amd_engines_wait_idle(mock_amd *g, int timeout_ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  int r = 0;
  struct amd_engines *en = eng_of(g);
  mock_shm_lock(&g->lock);
  for (;;) {
    bool busy = false;
    for (unsigned i = 0; en && i < en->n; i++) busy |= en->e[i]->kicked || en->e[i]->running;
    if (!busy) break;
    if (mock_shm_cond_timedwait(&en->idle, &g->lock, &ts) == ETIMEDOUT) {
      r = -1;
      break;
    }
  }
  pthread_mutex_unlock(&g->lock);
  return r;
}

int mock_amd_inject_doorbell_drop(mock_amd *g, unsigned count) {
  struct amd_engines *en = eng_of(g);
  mock_shm_lock(&g->lock);
  int r = en ? 0 : -1;
  if (en) en->drop_doorbells += count;
  pthread_mutex_unlock(&g->lock);
  return r;
}

uint64_t mock_amd_doorbells_dropped(mock_amd *g) {
  struct amd_engines *en = eng_of(g);
  mock_shm_lock(&g->lock);
  uint64_t n = en ? en->dropped : 0;
  pthread_mutex_unlock(&g->lock);
  return n;
}

bool amd_engine_busy(mock_amd *g, const char *name) {
  struct amd_engines *en = eng_of(g);
  for (unsigned i = 0; en && i < en->n; i++)
    if (strcmp(en->e[i]->ops->name, name) == 0) return en->e[i]->running;
  return false;
}

amd_engine *amd_engine_find(mock_amd *g, const amd_engine_ops *ops) {
  struct amd_engines *en = eng_of(g);
  for (unsigned i = 0; en && i < en->n; i++)
    if (en->e[i]->ops == ops) return en->e[i];
  return NULL;
}
