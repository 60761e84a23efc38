/* tests/mockgpu/nv_pci/nvpci_exec.c: the emulated GPU runs the GPFIFO channels GSP-RM set up (nvpci_gsp_chan.c)
 * with the shared engine (tests/mockgpu/nv/nvx_engine.h), one engine thread per GPU.
 *
 * Doorbell (NV_VIRTUAL_FUNCTION_DOORBELL, BAR0 0xbb0090; open-gpu-kernel-modules dev_vm.h): the value is the work-submit
 * token, channel id 15:0 and runlist id 29:16 (tinygrad/runtime/support/nv/ip.py ORs the runlist into what
 * NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN returns), and on Blackwell bit 30 set; a token that names no channel of a
 * TSG GPFIFO_SCHEDULE enabled is a recorded failure. Memory: GPU VAs through the page tables the last
 * SET_PAGE_DIRECTORY named (nvpci_translate), in 4 KiB pieces so a range over non-contiguous pages works; VRAM in place,
 * system memory by DMA. A compute launch needs the channel's GR context: PROMOTE_CTX of buffers MAIN, PM and PATCH with
 * a physical and a virtual address (ip.py rpc_rm_alloc for the compute class); without it the launch is a failure, as
 * GR would fault. A GPU fault stops the channel, is recorded, and GSP-RM posts NV_VGPU_MSG_EVENT_MMU_FAULT_QUEUED
 * (rpc_global_enums.h) on the status queue.
 *
 * Locking: the hardware model's lock (nvpci_lock_of) guards GSP-RM and the channels; the engine thread holds it while
 * it runs methods and drops it while a kernel runs (each of the kernel's accesses takes it), so the BAR path (the
 * driver's register writes, also through the emulated USB bridge) never waits for a kernel. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nvpci_gsp_internal.h"
#include "nvpci_mmu.h"

struct nvpci_exec {
  nvpci_gsp *s;
  pthread_t thread;
  pthread_cond_t cond;
  bool up, quit, kick, busy;
  nvx_engine eng;
};

enum { GB_DOORBELL_BIT = 30 };

/* ---- memory ---- */

static int access_va(nvpci_gsp *s, uint64_t va, void *buf, size_t n, bool wr, uint64_t *fault_va) {
  uint64_t vram_size = 0;
  uint8_t *vram = nvpci_vram(s->g, &vram_size);
  uint8_t *b = buf;
  bool single = (n == 4 || n == 8) && !(va & (n - 1));
  for (size_t done = 0; done < n;) {
    uint64_t at = va + done, pa = 0;
    size_t k = 4096 - (size_t)(at & 4095);
    if (k > n - done) k = n - done;
    int aper = -1;
    if (nvpci_translate(s->g, at, &pa, &aper, NULL, 0) < 0) {
      *fault_va = at;
      return -1;
    }
    if (aper == NVPCI_MMU_APER_VID) {
      if (pa >= vram_size || k > vram_size - pa) {
        *fault_va = at;
        return -1;
      }
      uint8_t *p = vram + pa;
      if (single && n == 4 && wr) __atomic_store_n((uint32_t *)p, gspm_g32(b, 0), __ATOMIC_SEQ_CST);
      else if (single && n == 8 && wr) __atomic_store_n((uint64_t *)p, gspm_g64(b, 0), __ATOMIC_SEQ_CST);
      else if (single && n == 4) gspm_p32(b, 0, __atomic_load_n((uint32_t *)p, __ATOMIC_SEQ_CST));
      else if (single && n == 8) gspm_p64(b, 0, __atomic_load_n((uint64_t *)p, __ATOMIC_SEQ_CST));
      else if (wr) memcpy(p, b + done, k);
      else memcpy(b + done, p, k);
    } else if (wr ? nvpci_dma_write(s->g, pa, b + done, k) : nvpci_dma_read(s->g, pa, b + done, k)) {
      *fault_va = at;
      return -1;
    }
    done += k;
  }
  return 0;
}
static int va_read(void *ctx, uint64_t va, void *dst, size_t n, uint64_t *fault_va) {
  const nvpci_exec *x = ctx;
  return access_va(x->s, va, dst, n, false, fault_va);
}
static int va_write(void *ctx, uint64_t va, const void *src, size_t n, uint64_t *fault_va) {
  const nvpci_exec *x = ctx;
  return access_va(x->s, va, (void *)src, n, true, fault_va);
}

/* ---- the engine's host ---- */

static void stopped(void *ctx, nvx_chan *xc, const char *msg, uint32_t rc, bool is_fault, uint64_t va, bool write) {
  const nvpci_exec *x = ctx;
  nvpci_gsp *s = x->s;
  (void)xc, (void)rc, (void)va, (void)write;
  nvpci_fail(s->g, "%s", msg);
  if (is_fault) {
    s->mmu_faults++;
    gspm_post_event(s, GSPM_EV_MMU_FAULT_QUEUED, NULL, 0);
  }
}

static bool may_launch(void *ctx, const nvx_chan *xc, char *why, size_t n) {
  (void)ctx;
  const gspm_chan *c = xc->user;
  if ((c->prom_phys & 7) == 7 && (c->prom_virt & 7) == 7) return true;
  snprintf(why, n, "no GR context: PROMOTE_CTX of buffers 0, 1, 2 with physical (0x%x) and virtual (0x%x) addresses "
           "is missing for channel 0x%x", c->prom_phys, c->prom_virt, c->handle);
  return false;
}

static void lock(void *ctx) {
  const nvpci_exec *x = ctx;
  pthread_mutex_lock(nvpci_lock_of(x->s->g));
}
static void unlock(void *ctx) {
  const nvpci_exec *x = ctx;
  pthread_mutex_unlock(nvpci_lock_of(x->s->g));
}

static bool scheduled(nvpci_gsp *s, const gspm_chan *c) {
  gspm_obj *tsg = c->tsg ? gspm_rm_find(s, c->client, c->tsg) : NULL;
  return tsg && tsg->scheduled;
}

static void *engine(void *arg) {
  nvpci_exec *x = arg;
  nvpci_gsp *s = x->s;
  pthread_mutex_t *m = nvpci_lock_of(s->g);
  pthread_mutex_lock(m);
  while (!x->quit) {
    x->kick = false;
    bool progress = false, blocked = false;
    x->busy = true;
    for (int i = 0; i < GSPM_MAX_CHANNELS; i++) {
      gspm_chan *c = &s->chan[i];
      if (!c->used || !c->pending || c->x.stopped || !scheduled(s, c)) continue;
      int r = nvx_run_channel(&x->eng, &c->x);
      if (r == NVX_RUN_PROGRESS) progress = true;
      else if (r == NVX_RUN_BLOCKED) blocked = true;
      else c->pending = false; /* idle or stopped until the next doorbell */
    }
    x->busy = false;
    if (progress || x->kick || x->quit) continue;
    if (blocked) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 50000;
      if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
      pthread_cond_timedwait(&x->cond, m, &ts);
    } else pthread_cond_wait(&x->cond, m);
  }
  pthread_mutex_unlock(m);
  return NULL;
}

/* The engine starts with the first channel (the chip is known then). */
void gspm_exec_chan_start(nvpci_gsp *s, gspm_chan *c) {
  c->x.serial = ++s->chan_serial;
  c->x.handle = c->handle;
  c->x.user = c;
  c->x.ring_va = c->ring_va;
  c->x.entries = c->entries;
  c->x.userd = nvpci_vram(s->g, NULL) + c->userd_pa;
  if (s->exec) return;
  nvpci_exec *x = calloc(1, sizeof *x);
  if (!x) return;
  x->s = s;
  nvx_cfg cfg = {.compute = s->chip->compute, .copy = s->chip->copy, .qmd_major = s->chip->qmd_major};
  nvx_host host = {.ctx = x, .read = va_read, .write = va_write, .stopped = stopped, .may_launch = may_launch,
                   .lock = lock, .unlock = unlock};
  nvx_engine_init(&x->eng, nvpci_chip_name(s->g), &cfg, &host);
  if (pthread_cond_init(&x->cond, NULL)) {
    free(x);
    return;
  }
  if (pthread_create(&x->thread, NULL, engine, x)) {
    pthread_cond_destroy(&x->cond);
    free(x);
    nvpci_fail(s->g, "GPU: cannot start the engine thread");
    return;
  }
  x->up = true;
  s->exec = x;
}

/* With the lock NOT held (the thread takes it to see quit). */
void gspm_exec_free(nvpci_gsp *s) {
  nvpci_exec *x = s->exec;
  if (!x) return;
  pthread_mutex_t *m = nvpci_lock_of(s->g);
  pthread_mutex_lock(m);
  x->quit = true;
  pthread_cond_signal(&x->cond);
  pthread_mutex_unlock(m);
  pthread_join(x->thread, NULL);
  pthread_cond_destroy(&x->cond);
  nvx_engine_fini(&x->eng);
  free(x);
  s->exec = NULL;
}

void nvpci_gsp_doorbell(nvpci_gsp *s, uint32_t token) {
  if (!s) return;
  pthread_mutex_t *m = nvpci_lock_of(s->g);
  pthread_mutex_lock(m);
  bool gb = s->chip && strcmp(s->chip->name, "gb202") == 0;
  uint32_t chid = token & 0xffff, runlist = token >> 16 & 0x3fff;
  gspm_chan *hit = NULL;
  for (int i = 0; s->running && i < GSPM_MAX_CHANNELS; i++) {
    gspm_chan *c = &s->chan[i];
    if (c->used && c->chid == chid && c->runlist == runlist && scheduled(s, c)) hit = c;
  }
  if (!hit || (gb != (bool)(token >> GB_DOORBELL_BIT & 1)) || (token >> 31) || (!gb && (token >> 30 & 1)))
    nvpci_fail(s->g, "doorbell token 0x%x names no scheduled channel (channel id 15:0, runlist 29:16%s)", token,
               gb ? ", bit 30 set on Blackwell" : "");
  else if (s->exec) {
    hit->pending = true;
    s->exec->kick = true;
    pthread_cond_signal(&s->exec->cond);
  }
  pthread_mutex_unlock(m);
}

/* ---- queries ---- */

unsigned nvpci_gsp_channels(nvpci_gsp *s) {
  unsigned n = 0;
  for (int i = 0; s && i < GSPM_MAX_CHANNELS; i++) n += s->chan[i].used;
  return n;
}

int nvpci_gsp_channel(nvpci_gsp *s, unsigned i, nvpci_chan_info *out) {
  unsigned k = 0;
  for (int j = 0; s && j < GSPM_MAX_CHANNELS; j++) {
    const gspm_chan *c = &s->chan[j];
    if (!c->used || k++ != i) continue;
    *out = (nvpci_chan_info){.client = c->client, .handle = c->handle, .cls = c->cls, .tsg = c->tsg,
                             .engine_cls = c->x.cls_engine, .runlist = c->runlist, .chid = c->chid,
                             .ring_va = c->ring_va, .entries = c->entries, .userd_pa = c->userd_pa,
                             .scheduled = scheduled(s, c), .gr_context = (c->prom_phys & 7) == 7 && (c->prom_virt & 7) == 7,
                             .stopped = c->x.stopped};
    return 0;
  }
  return -1;
}

uint64_t nvpci_gsp_mmu_faults(const nvpci_gsp *s) { return s ? s->mmu_faults : 0; }

int nvpci_gsp_wait_idle(nvpci_gsp *s, unsigned timeout_ms) {
  pthread_mutex_t *m = nvpci_lock_of(s->g);
  for (unsigned waited = 0;; waited++) {
    pthread_mutex_lock(m);
    bool idle = !s->exec || !s->exec->busy;
    for (int i = 0; idle && i < GSPM_MAX_CHANNELS; i++)
      idle = !(s->chan[i].used && s->chan[i].pending && !s->chan[i].x.stopped && scheduled(s, &s->chan[i]));
    pthread_mutex_unlock(m);
    if (idle) return 0;
    if (waited >= timeout_ms) return -1;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
}
