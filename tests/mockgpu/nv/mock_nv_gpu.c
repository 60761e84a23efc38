/* tests/mockgpu/nv/mock_nv_gpu.c: one engine thread per emulated GPU over the shared engine (nvx_engine.h: channels,
 * methods, semaphores, copy engine, compute launches), with the module's VA map as its memory.
 *
 * The engine wakes on a doorbell and, while a channel waits on a semaphore acquire, re-checks every 50 us (as
 * hardware re-polls). It runs the channels of scheduled TSGs; a failure (nvx_engine.h: strict methods, MMU faults)
 * is recorded, latched for the debugger when it is an MMU fault, and written into the channel's error notifier. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mock_nv_internal.h"

#define S nvm_S

uint64_t nvm_now_ns(void) { return nvx_now_ns(); }

int nvm_chan_new(int gpu, nvm_obj *o, uint8_t *ring, uint64_t ring_va, uint32_t entries, uint8_t *userd) {
  nvm_gpu *g = &S.gpu[gpu];
  for (int i = 0; i < NVM_MAX_CHANNELS; i++)
    if (!g->chan[i].used) {
      nvm_chan *c = &g->chan[i];
      memset(c, 0, sizeof *c);
      static uint64_t serial;
      c->used = true;
      c->handle = o->handle;
      c->client = o->client;
      c->obj = o;
      c->x.serial = ++serial;
      c->x.handle = o->handle;
      c->x.user = c;
      c->x.ring = ring;
      c->x.ring_va = ring_va;
      c->x.entries = entries;
      c->x.userd = userd;
      c->token = 0x100u * (unsigned)(gpu + 1) + (unsigned)i; /* the work-submit token: a channel id */
      nvm_p32(userd, 0x88, 0);
      return i;
    }
  return -1;
}

void nvm_chan_error(nvm_chan *c, uint32_t rc_code) {
  c->x.stopped = true;
  if (!c->notifier) return;
  /* NvNotification: timeStamp u64 @0, info32 @8, info16 @12, status u16 @14. */
  uint8_t *n = c->notifier;
  uint64_t t = nvm_now_ns();
  memcpy(n, &t, 8);
  nvm_p32(n, 8, rc_code);
  uint32_t st = 0xffffu << 16; /* info16 0, status 0xffff */
  __atomic_store_n((uint32_t *)(n + 12), st, __ATOMIC_SEQ_CST);
}

void nvm_chan_drop(int gpu, int chan) { memset(&S.gpu[gpu].chan[chan], 0, sizeof(nvm_chan)); }

void nvm_gpu_kick(nvm_gpu *g) {
  g->kick = true;
  pthread_cond_signal(&g->cond);
}

/* ---- the engine's host: GPU VAs through the VA map, failures into the module's list ---- */

static int va_read(void *ctx, uint64_t va, void *dst, size_t n, uint64_t *fault_va) {
  const nvm_gpu *g = ctx;
  uint8_t *p = nvm_va(g->index, va, n);
  if (!p) {
    *fault_va = va;
    return -1;
  }
  if (n == 4 && !((uintptr_t)p & 3)) {
    uint32_t v = __atomic_load_n((uint32_t *)p, __ATOMIC_SEQ_CST);
    memcpy(dst, &v, 4);
  } else if (n == 8 && !((uintptr_t)p & 7)) {
    uint64_t v = __atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST);
    memcpy(dst, &v, 8);
  } else memcpy(dst, p, n);
  return 0;
}
static int va_write(void *ctx, uint64_t va, const void *src, size_t n, uint64_t *fault_va) {
  const nvm_gpu *g = ctx;
  uint8_t *p = nvm_va(g->index, va, n);
  if (!p) {
    *fault_va = va;
    return -1;
  }
  if (n == 4 && !((uintptr_t)p & 3)) {
    uint32_t v;
    memcpy(&v, src, 4);
    __atomic_store_n((uint32_t *)p, v, __ATOMIC_SEQ_CST);
  } else if (n == 8 && !((uintptr_t)p & 7)) {
    uint64_t v;
    memcpy(&v, src, 8);
    __atomic_store_n((uint64_t *)p, v, __ATOMIC_SEQ_CST);
  } else memcpy(p, src, n);
  return 0;
}
/* A stopped channel: the failure recorded, an MMU fault latched for NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, the
 * error notifier written. */
static void stopped(void *ctx, nvx_chan *x, const char *msg, uint32_t rc, bool is_fault, uint64_t va, bool write) {
  nvm_gpu *g = ctx;
  nvm_fail("%s", msg);
  if (is_fault && !g->fault_valid) {
    g->fault_valid = true;
    g->fault_addr = va;
    g->fault_access = write;
  }
  nvm_chan_error(x->user, rc);
}
static void lock(void *ctx) {
  (void)ctx;
  pthread_mutex_lock(&S.lock);
}
static void unlock(void *ctx) {
  (void)ctx;
  pthread_mutex_unlock(&S.lock);
}

void nvm_qmd_cache_free(void) {
  for (int i = 0; i < 8; i++) nvx_engine_fini(&S.gpu[i].eng);
}

static bool chan_scheduled(const nvm_chan *c) {
  nvm_obj *tsg = nvm_obj_find(c->client, c->obj->parent);
  return tsg && tsg->scheduled;
}

static void *engine(void *arg) {
  nvm_gpu *g = arg;
  pthread_mutex_lock(&S.lock);
  while (!g->quit) {
    g->kick = false;
    bool progress = false, blocked = false;
    for (int i = 0; i < NVM_MAX_CHANNELS; i++) {
      nvm_chan *c = &g->chan[i];
      if (!c->used || c->x.stopped || !chan_scheduled(c)) continue;
      uint64_t t0 = nvm_now_ns();
      int r = nvx_run_channel(&g->eng, &c->x);
      S.exec_ns += nvm_now_ns() - t0;
      if (r == NVX_RUN_PROGRESS) progress = true;
      if (r == NVX_RUN_BLOCKED) blocked = true;
    }
    if (progress || g->kick || g->quit) continue;
    if (blocked) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 50000;
      if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&g->cond, &S.lock, &ts);
    } else pthread_cond_wait(&g->cond, &S.lock);
  }
  pthread_mutex_unlock(&S.lock);
  return NULL;
}

int nvm_gpu_start(nvm_gpu *g) {
  char name[16];
  snprintf(name, sizeof name, "GPU %d", g->index);
  nvx_cfg cfg = {.compute = S.cfg->compute, .copy = S.cfg->copy, .qmd_major = S.cfg->qmd_major};
  nvx_host host = {.ctx = g, .read = va_read, .write = va_write, .stopped = stopped, .lock = lock, .unlock = unlock};
  nvx_engine_init(&g->eng, name, &cfg, &host);
  if (pthread_cond_init(&g->cond, NULL)) return -1;
  if (pthread_create(&g->thread, NULL, engine, g)) {
    pthread_cond_destroy(&g->cond);
    return -1;
  }
  g->thread_up = true;
  return 0;
}

void nvm_gpu_stop(nvm_gpu *g) {
  if (!g->thread_up) return;
  pthread_mutex_lock(&S.lock);
  g->quit = true;
  pthread_cond_signal(&g->cond);
  pthread_mutex_unlock(&S.lock);
  pthread_join(g->thread, NULL);
  pthread_cond_destroy(&g->cond);
  g->thread_up = false;
}
