/* tests/mockgpu/amd_engine.c: engine threads, the BAR2 doorbell hook and the device lock (amd_engine.h). */
#include "amd_engine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd_internal.h"
#include "mock_pci.h"
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

uint64_t amd_gpu_clock(void) { return bg_now_ns() / 10; }

void amd_lock_init(mock_amd *g) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g->lock, &a);
  pthread_mutexattr_destroy(&a);
}

void amd_lock_destroy(mock_amd *g) { pthread_mutex_destroy(&g->lock); }

static void *engine_main(void *arg) {
  amd_engine *e = arg;
  mock_amd *g = e->g;
  pthread_mutex_lock(&g->lock);
  for (;;) {
    while (!e->stop && !e->kicked) pthread_cond_wait(&e->cv, &g->lock);
    if (e->stop) break;
    e->kicked = false;
    e->running = true;
    e->slept_ns = 0;
    uint64_t t0 = bg_now_ns();
    e->ops->run(e);
    uint64_t dt = bg_now_ns() - t0;
    __atomic_add_fetch(&e->exec_ns, dt > e->slept_ns ? dt - e->slept_ns : 0, __ATOMIC_RELAXED);
    e->running = false;
    pthread_cond_broadcast(&g->eng->idle);
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
  if (!e->stop) pthread_cond_timedwait(&e->cv, &e->g->lock, &ts);
  e->slept_ns += bg_now_ns() - t0;
  return !e->stop;
}

/* ---------------- doorbells (BAR2) ---------------- */

static uint64_t bar2_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  mock_amd *g = user;
  uint64_t v = 0;
  pthread_mutex_lock(&g->lock);
  memcpy(&v, (uint8_t *)mock_pci_bar_mem(m, bar) + off, size);
  pthread_mutex_unlock(&g->lock);
  return v;
}

static void bar2_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  mock_amd *g = user;
  pthread_mutex_lock(&g->lock);
  uint8_t *slot = (uint8_t *)mock_pci_bar_mem(m, bar) + off;
  memcpy(slot, &v, size);
  bool hit = false;
  for (unsigned i = 0; g->eng && i < g->eng->n; i++) {
    amd_engine *e = g->eng->e[i];
    int64_t at = e->ops->doorbell(e);
    if (at < 0 || (uint64_t)at != (off & ~7ull)) continue;
    if (size < 4) continue; /* a partial store does not ring */
    hit = true;
    if (g->eng->drop_doorbells) { /* injected: the write is lost on its way, the engine never hears of it */
      g->eng->drop_doorbells--;
      g->eng->dropped++;
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

static int add(mock_amd *g, amd_engine *e) {
  if (!e) return 0;
  e->g = g;
  pthread_cond_init(&e->cv, NULL);
  g->eng->e[g->eng->n++] = e;
  if (pthread_create(&e->thr, NULL, engine_main, e) != 0) {
    amd_fail(g, "%s engine: cannot start its thread", e->ops->name);
    return -1;
  }
  e->started = true;
  return 0;
}

int amd_engines_start(mock_amd *g) {
  amd_engine *cp = amd_pm4_engine(g), *sdma = amd_sdma_engine(g);
  if (!cp && !sdma) return 0; /* no queue model for this chip (gfx942): BAR2 stays plain memory */
  struct amd_engines *en = calloc(1, sizeof(*en));
  if (!en || mock_pci_hook(g->pci, DOORBELL_BAR, 0, mock_pci_bar_size(g->pci, DOORBELL_BAR), bar2_rd, bar2_wr, g) < 0) {
    amd_fail(g, "cannot set up the queue engines (doorbell BAR hook)");
    free(en);
    if (cp) cp->ops->destroy(cp);
    if (sdma) sdma->ops->destroy(sdma);
    return -1;
  }
  pthread_cond_init(&en->idle, NULL);
  pthread_mutex_lock(&g->lock);
  g->eng = en;
  int r = add(g, cp);
  r |= add(g, sdma); /* listed even when its thread failed: amd_engines_stop frees both */
  pthread_mutex_unlock(&g->lock);
  return r;
}

void amd_engines_stop(mock_amd *g) {
  struct amd_engines *en = g->eng;
  if (!en) return;
  pthread_mutex_lock(&g->lock);
  for (unsigned i = 0; i < en->n; i++) {
    en->e[i]->stop = true;
    pthread_cond_signal(&en->e[i]->cv);
  }
  pthread_mutex_unlock(&g->lock);
  for (unsigned i = 0; i < en->n; i++)
    if (en->e[i]->started) pthread_join(en->e[i]->thr, NULL);
  pthread_mutex_lock(&g->lock);
  g->eng = NULL;
  pthread_mutex_unlock(&g->lock);
  for (unsigned i = 0; i < en->n; i++) {
    pthread_cond_destroy(&en->e[i]->cv);
    en->e[i]->ops->destroy(en->e[i]);
  }
  pthread_cond_destroy(&en->idle);
  free(en);
}

void amd_engines_reset(mock_amd *g) {
  pthread_mutex_lock(&g->lock);
  for (unsigned i = 0; g->eng && i < g->eng->n; i++) g->eng->e[i]->fresh = true, g->eng->e[i]->latched = false;
  pthread_mutex_unlock(&g->lock);
}

uint64_t mock_amd_exec_ns(const mock_amd *g) {
  mock_amd *mg = (mock_amd *)(uintptr_t)g;
  uint64_t s = 0;
  pthread_mutex_lock(&mg->lock);
  for (unsigned i = 0; mg->eng && i < mg->eng->n; i++) s += __atomic_load_n(&mg->eng->e[i]->exec_ns, __ATOMIC_RELAXED);
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
  pthread_mutex_lock(&g->lock);
  for (;;) {
    bool busy = false;
    for (unsigned i = 0; g->eng && i < g->eng->n; i++) busy |= g->eng->e[i]->kicked || g->eng->e[i]->running;
    if (!busy) break;
    if (pthread_cond_timedwait(&g->eng->idle, &g->lock, &ts) == ETIMEDOUT) {
      r = -1;
      break;
    }
  }
  pthread_mutex_unlock(&g->lock);
  return r;
}

int mock_amd_inject_doorbell_drop(mock_amd *g, unsigned count) {
  pthread_mutex_lock(&g->lock);
  int r = g->eng ? 0 : -1;
  if (g->eng) g->eng->drop_doorbells += count;
  pthread_mutex_unlock(&g->lock);
  return r;
}

uint64_t mock_amd_doorbells_dropped(mock_amd *g) {
  pthread_mutex_lock(&g->lock);
  uint64_t n = g->eng ? g->eng->dropped : 0;
  pthread_mutex_unlock(&g->lock);
  return n;
}

bool amd_engine_busy(mock_amd *g, const char *name) {
  for (unsigned i = 0; g->eng && i < g->eng->n; i++)
    if (strcmp(g->eng->e[i]->ops->name, name) == 0) return g->eng->e[i]->running;
  return false;
}

amd_engine *amd_engine_find(mock_amd *g, const amd_engine_ops *ops) {
  for (unsigned i = 0; g->eng && i < g->eng->n; i++)
    if (g->eng->e[i]->ops == ops) return g->eng->e[i];
  return NULL;
}
