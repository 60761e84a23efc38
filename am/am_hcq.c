/* am/am_hcq.c: AMD as an HCQ device (am/am_hcq.h): attach, memory, copies, fault check, close. */
#include "am/am_hcq.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/am_sdma_pkt.h"
#include "am/am_soc.h"
#include "am/mm_pt.h"
#include "hcq/dev_internal.h"

#define SZ_4K ((uint64_t)0x1000)
#define SZ_2M ((uint64_t)2 << 20)
#define SZ_8M ((uint64_t)8 << 20)

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* tinygrad tinygrad/runtime/support/system.py PCIIfaceBase.alloc: host memory for BG_BUF_HOST, and for CPU-visible uncached buffers (large BAR) or any CPU-visible
 * buffer (small BAR: VRAM beyond the BAR has no CPU view). */
static bool wants_sysmem(const am_hcq *h, unsigned flags) {
  if (h->usb) return false; /* the GPU cannot reach host RAM over USB: VRAM only (tinygrad tinygrad/runtime/support/system.py USBPCIDevice) */
  bool large_bar = h->d->bar0_size >= h->d->vram_size;
  bool cpu = flags & BG_BUF_CPU_ACCESS;
  return (flags & BG_BUF_HOST) || (large_bar ? cpu && (flags & BG_BUF_UNCACHED) : cpu);
}

static int alloc_host(am_hcq *h, uint64_t size, unsigned flags, am_alloc *a, bg_mem *out) {
  bg_am_dev *d = h->d;
  uint64_t rsize = round_up(size, SZ_4K), va;
  int e = bg_pci_alloc_sysmem(d->pci, rsize, (flags & BG_BUF_CONTIGUOUS) ? BG_SYSMEM_CONTIGUOUS : 0, NULL, &a->sm);
  if (e < 0) return bg_error_context(e, "am: %s: system memory of %" PRIu64 " bytes: ", d->bdf, rsize);
  if ((e = bg_am_va_alloc(h->va, rsize, SZ_4K, &va)) < 0) {
    bg_pci_free_sysmem(d->pci, &a->sm);
    return e;
  }
  e = bg_am_pt_map_pages(h->blk.gmc->pt, va, a->sm.bus, a->sm.npages, BG_AM_ASPACE_SYS,
                         BG_AM_PT_RWX | BG_AM_PT_SNOOPED | BG_AM_PT_UNCACHED);
  if (e < 0) {
    bg_am_va_free(h->va, va);
    bg_pci_free_sysmem(d->pci, &a->sm);
    return bg_error_context(e, "am: %s: mapping %" PRIu64 " bytes of system memory: ", d->bdf, rsize);
  }
  a->host = true;
  a->map_size = rsize;
  out->va = va;
  out->cpu = a->sm.view.ops ? NULL : (void *)(uintptr_t)a->sm.view.ptr;
  if ((flags & BG_BUF_ZERO) && out->cpu) memset(out->cpu, 0, rsize);
  return 0;
}

static int alloc_vram(am_hcq *h, uint64_t size, unsigned flags, am_alloc *a, bg_mem *out) {
  bg_am_dev *d = h->d;
  /* tinygrad: 2 MiB granules from 8 MiB on, so big buffers get 2 MiB leaves. */
  uint64_t rsize = size >= SZ_8M ? round_up(size, SZ_2M) : round_up(size, SZ_4K);
  uint64_t align = rsize >= SZ_2M ? SZ_2M : SZ_4K, pa, va;
  int e = bg_am_vram_alloc(d->mm, BG_AM_VRAM_MAIN, rsize, align, (flags & BG_BUF_ZERO) != 0, &pa);
  if (e < 0) return bg_error_context(e, "am: %s: VRAM: ", d->bdf);
  if ((e = bg_am_va_alloc(h->va, rsize, SZ_4K, &va)) < 0) {
    bg_am_vram_free(d->mm, pa);
    return e;
  }
  e = bg_am_pt_map_contig(h->blk.gmc->pt, va, pa, rsize, BG_AM_ASPACE_VRAM,
                          BG_AM_PT_RWX | ((flags & BG_BUF_UNCACHED) ? BG_AM_PT_UNCACHED : 0));
  if (e < 0) {
    bg_am_va_free(h->va, va);
    bg_am_vram_free(d->mm, pa);
    return bg_error_context(e, "am: %s: mapping %" PRIu64 " bytes of VRAM at 0x%" PRIx64 ": ", d->bdf, rsize, pa);
  }
  a->pa = pa;
  a->map_size = rsize;
  out->va = va;
  out->cpu = d->vram.ptr && !d->vram.ops && pa + rsize <= d->vram.size ? (void *)(uintptr_t)(d->vram.ptr + pa) : NULL;
  return 0;
}

int bg_am_hcq_alloc(bg_dev *dev, uint64_t size, unsigned flags, bg_mem *out) {
  am_hcq *h = dev->priv;
  am_alloc *a = calloc(1, sizeof(*a));
  if (!a) return bg_error(BG_ENOMEM, "am: out of host memory");
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&h->lock);
  int e = wants_sysmem(h, flags) ? alloc_host(h, size, flags, a, out) : alloc_vram(h, size, flags, a, out);
  pthread_mutex_unlock(&h->lock);
  if (e < 0) {
    free(a);
    return e;
  }
  out->size = size;
  out->meta = a;
  BG_LOG(4, "am: %s: alloc %" PRIu64 " bytes (flags 0x%x) at va 0x%" PRIx64 " in %s", h->d->bdf, size, flags, out->va,
         a->host ? "system memory" : "VRAM");
  return 0;
}

void bg_am_hcq_free(bg_dev *dev, bg_mem *m) {
  am_hcq *h = dev->priv;
  am_alloc *a = m->meta;
  if (!a) return;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_pt_unmap(h->blk.gmc->pt, m->va, a->map_size);
  if (e < 0) BG_LOG(1, "am: %s: unmapping 0x%" PRIx64 ": %s", h->d->bdf, m->va, bg_last_error());
  bg_am_va_free(h->va, m->va);
  if (a->host) bg_pci_free_sysmem(h->d->pci, &a->sm);
  else bg_am_vram_free(h->d->mm, a->pa);
  pthread_mutex_unlock(&h->lock);
  free(a);
  memset(m, 0, sizeof(*m));
}

/* Called by waits after 200 ms without progress (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__; tinygrad tinygrad/runtime/ops_amd.py PCIIface.sleep): drain the IH ring; a VM fault or any
 * other error interrupt is a hang, reported with the faulting address and where each queue stands; then the
 * progress check (a read pointer standing still, bg_am_hcq_hang_check). */
static int am_sleep_check(am_hcq *h);

static int am_sleep(bg_dev *dev, int ms) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock); /* the IH ring and the queues' state are the GPU's, shared by its bg_devs */
  int e = am_sleep_check(h);
  pthread_mutex_unlock(&h->lock);
  if (e < 0) return e;
  if (ms > 0) { /* kept: the backoff between a wait's hang checks (hcq/signal.c), not a hardware state */
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
  }
  return 0;
}

static int am_sleep_check(am_hcq *h) {
  bg_am_ih_entry ent[8];
  size_t n = 0;
  int nerr = h->blk.ih ? bg_am_ih_drain(h->blk.ih, ent, 8, &n) : 0;
  if (nerr < 0) return bg_error_context(nerr, "am: %s: interrupt ring: ", h->d->bdf);
  uint32_t status = bg_am_rr(h->d, BG_AM_R_FAULT_STATUS);
  if (nerr > 0 || status) {
    h->nfaults++;
    char qs[2][256] = {"", ""};
    for (int k = 0; k < 2; k++)
      if (h->q[k]) bg_am_hcq_queue_state(h->q[k], qs[k], sizeof(qs[k]));
    const bg_am_ih_entry *f = NULL;
    for (size_t i = 0; i < n && i < 8; i++)
      if (ent[i].fault_addr || ent[i].fault_status) f = &ent[i];
    if (f)
      return bg_error(BG_EHANG, "am: %s: GPU page fault at address 0x%" PRIx64 " (status 0x%x, client 0x%x, vmid %u); "
                      "%s%s%s", h->d->bdf, f->fault_addr, f->fault_status, f->client, f->vmid, qs[0],
                      qs[0][0] && qs[1][0] ? "; " : "", qs[1]);
    return bg_error(BG_EHANG, "am: %s: %s (GCVM_L2_PROTECTION_FAULT_STATUS 0x%x); %s%s%s", h->d->bdf,
                    nerr > 0 && h->blk.ih->last[0] ? h->blk.ih->last : "error interrupt", status, qs[0],
                    qs[0][0] && qs[1][0] ? "; " : "", qs[1]);
  }
  return bg_am_hcq_hang_check(h);
}

/* Open AM devices of this process by key (sysfs root + BDF). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static am_hcq *registry;

static void hcq_free(am_hcq *h) {
  bg_am_va_destroy(h->va);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

/* Drop dev from the GPU's users; 0 when it was the last one. The staging objects belong to one bg_dev: when that
 * one leaves they go (the next staging copy recreates them on its caller, own_staging). Under h->lock. */
static unsigned drop_user(am_hcq *h, const bg_dev *dev) {
  if (h->dev == dev) bg_am_hcq_copy_fini(h);
  unsigned k = 0;
  for (unsigned i = 0; i < h->ndevs; i++)
    if (h->devs[i] != dev) h->devs[k++] = h->devs[i];
  h->ndevs = k;
  if (h->dev == dev) h->dev = k ? h->devs[0] : NULL;
  return k;
}

/* fini (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__, AMDev.fini) when the last user closes: queues off, SCRATCH_REG6 = 0 so the next open starts warm (1 after an
 * error); then the device goes. */
static void am_close_locked(bg_dev *dev) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&registry_lock);
  pthread_mutex_lock(&h->lock);
  bool last = drop_user(h, dev) == 0;
  if (dev->error) h->nfaults++;
  pthread_mutex_unlock(&h->lock);
  if (last)
    for (am_hcq **pp = &registry; *pp; pp = &(*pp)->next)
      if (*pp == h) {
        *pp = h->next;
        break;
      }
  pthread_mutex_unlock(&registry_lock);
  if (!last) {
    dev->priv = NULL;
    return;
  }
  h->dev = dev; /* the frees below go through dev->priv */
  bg_am_hcq_scratch_free(h);
  if (bg_am_boot_fini(h->d, &h->blk) < 0) BG_LOG(1, "am: %s: fini: %s", h->d->bdf, bg_last_error());
  /* After a fault or a failed synchronize the next open must not trust this state (tinygrad tinygrad/runtime/support/am/amdev.py AMDev.__init__, AMDev.fini: SCRATCH_REG6 =
   * is_err_state): it boots cold, with a mode1 reset. */
  if (h->nfaults) bg_am_wr(h->d, BG_AM_R_SCRATCH6, 1);
  bg_am_blocks_free(&h->blk);
  bg_am_dev_close(h->d);
  hcq_free(h);
  dev->priv = NULL;
}

/* The device's key is held across the close (hcq/dev_internal.h): an open of the same GPU by another thread waits
 * until the last close has let go of the lock file and the bridge, then opens it afresh. */
static void am_close(bg_dev *dev) {
  am_hcq *h = dev->priv;
  if (!h) return;
  char key[sizeof(h->key)];
  snprintf(key, sizeof(key), "%s", h->key);
  bg_phys_key *k;
  if (bg_phys_lock(key, &k) < 0) BG_LOG(1, "am: %s: close without the device registry: %s", h->d->bdf, bg_last_error());
  am_close_locked(dev);
  bg_phys_unlock(k);
}

/* ---------------- one physical GPU, several bg_devs ----------------
 * The bg_devs of one GPU may be used from different threads at once (include/baregpu/hcq.h, thread safety), and they
 * share its hardware rings, scratch, loaded-program list, IH ring and staging objects: every backend operation that
 * touches them runs under h->lock (recursive: a staging copy allocates, submits and waits inside it). A bg_dev's own
 * state (its timeline, kernel-argument arena) is its user's alone and needs no lock. */

static int locked_queue_create(bg_dev *dev, enum bg_queue_kind kind, bg_queue_hw **out) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_queue_create(dev, kind, out);
  pthread_mutex_unlock(&h->lock);
  return e;
}

static void locked_queue_destroy(bg_dev *dev, bg_queue_hw *hq) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  bg_am_hcq_queue_destroy(dev, hq);
  pthread_mutex_unlock(&h->lock);
}

static int locked_lower(bg_dev *dev, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_lower(dev, hq, cmds, ncmds, t);
  pthread_mutex_unlock(&h->lock);
  return e;
}

/* Two threads writing one ring at once interleave their packets: one submission at a time per GPU. */
static int locked_submit(bg_dev *dev, bg_queue_hw *hq, const void *cmd, size_t len) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_submit(dev, hq, cmd, len);
  pthread_mutex_unlock(&h->lock);
  return e;
}

static int locked_program_load(bg_dev *dev, const void *bin, size_t size, const bg_program_info *info, void **handle) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_program_load(dev, bin, size, info, handle);
  pthread_mutex_unlock(&h->lock);
  return e;
}

static void locked_program_free(bg_dev *dev, void *handle) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  bg_am_hcq_program_free(dev, handle);
  pthread_mutex_unlock(&h->lock);
}

/* The staging objects (am_hcq_copy.c) live on h->dev: they submit on its queues and wait on its timeline, which only
 * its own user may touch. A copy by another bg_dev first takes them over: they are idle (every staging copy is waited
 * for under h->lock), so they are freed without touching the old owner, and the next staging copy recreates them on
 * the caller. Under h->lock. */
static void own_staging(am_hcq *h, bg_dev *dev) {
  if (h->dev == dev) return;
  bg_queue_free(h->stage_q);
  h->stage_q = NULL;
  if (h->stage) {
    bg_am_hcq_free(h->dev, &h->stage->mem);
    free(h->stage);
    h->stage = NULL;
  }
  h->dev = dev;
}

/* The caller's own work is waited for before the lock: a long kernel of this bg_dev must not hold up the other
 * bg_devs' submissions. */
static int locked_copyin(bg_dev *dev, bg_mem *dst, uint64_t off, const void *src, uint64_t n) {
  am_hcq *h = dev->priv;
  int e = bg_dev_synchronize(dev, 0);
  if (e < 0) return e;
  pthread_mutex_lock(&h->lock);
  own_staging(h, dev);
  e = bg_am_hcq_copyin(dev, dst, off, src, n);
  pthread_mutex_unlock(&h->lock);
  return e;
}

static int locked_copyout(bg_dev *dev, const bg_mem *src, uint64_t off, void *dst, uint64_t n) {
  am_hcq *h = dev->priv;
  int e = bg_dev_synchronize(dev, 0);
  if (e < 0) return e;
  pthread_mutex_lock(&h->lock);
  own_staging(h, dev);
  e = bg_am_hcq_copyout(dev, src, off, dst, n);
  pthread_mutex_unlock(&h->lock);
  return e;
}

/* The fault check reads the shared rings and drains the shared IH ring; recovery resets the shared queues. */
static int locked_fault_check(bg_dev *dev) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_fault_check(dev);
  pthread_mutex_unlock(&h->lock);
  return e;
}

static int locked_recover(bg_dev *dev) {
  am_hcq *h = dev->priv;
  pthread_mutex_lock(&h->lock);
  int e = bg_am_hcq_recover(dev);
  pthread_mutex_unlock(&h->lock);
  return e;
}

#define AM_OPS_COMMON                                                                                              \
  .kind = "AMD", .ticks_per_us = BG_AM_TICKS_PER_US, .has_copy_queue = true, .alloc = bg_am_hcq_alloc,               \
  .free = bg_am_hcq_free, .copyin = locked_copyin, .copyout = locked_copyout, .queue_create = locked_queue_create,    \
  .queue_destroy = locked_queue_destroy, .lower = locked_lower, .submit = locked_submit,                             \
  .program_load = locked_program_load, .program_free = locked_program_free, .sleep = am_sleep, .close = am_close,      \
  .fault_check = locked_fault_check, .recover = locked_recover, .program_max_workgroup = bg_am_hcq_program_max_workgroup, \
  .peer_export = bg_am_hcq_peer_export, .peer_reach = bg_am_hcq_peer_reach, .peer_map = bg_am_hcq_peer_map,        \
  .peer_unmap = bg_am_hcq_peer_unmap

static const bg_backend_ops am_ops = {AM_OPS_COMMON};
/* Over USB no buffer has a CPU pointer: signals and kernel arguments go through the bridge. */
static const bg_backend_ops am_usb_ops = {AM_OPS_COMMON, .mem_read = bg_am_hcq_usb_mem_read,
                                          .mem_write = bg_am_hcq_usb_mem_write};

int bg_am_hcq_attach(bg_dev *dev, bg_am_dev *am, bg_am_blocks *blk, bool mock, const char *key) {
  if (!blk->gmc || !blk->gfx || !blk->sdma)
    return bg_error(BG_EINVAL, "am: %s: the device was not booted (no GMC/GFX/SDMA state)", am->bdf);
  am_hcq *h = calloc(1, sizeof(*h));
  if (!h) return bg_error(BG_ENOMEM, "am: out of host memory");
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&h->lock, &ma);
  pthread_mutexattr_destroy(&ma);
  h->dev = dev;
  h->d = am;
  h->mock = mock;
  h->usb = (bg_pci_features(am->pci) & BG_PCI_FEAT_NO_HOST_DMA) != 0; /* behind a USB bridge */
  h->gfx = am->ip.gfx->pm4_gen; /* encoder generations and copy limit of the descriptors (am/am_ip.h) */
  h->sdma_major = am->ip.sdma->pkt_gen;
  h->max_copy = am->ip.sdma->max_copy;
  int e = bg_am_va_create(blk->gmc->vm_base ? blk->gmc->vm_base : BG_AM_VA_BASE, BG_AM_VA_SIZE, &h->va);
  if (e >= 0) e = bg_am_nreg_addr(am, NBIO_HWIP, 0, regBIF_BX_PF0_GPU_HDP_FLUSH_REQ, &h->hdp_req);
  if (e >= 0) e = bg_am_nreg_addr(am, NBIO_HWIP, 0, regBIF_BX_PF0_GPU_HDP_FLUSH_DONE, &h->hdp_done);
  if (e < 0) {
    hcq_free(h);
    return bg_error_context(e, "am: %s: HCQ device: ", am->bdf);
  }
  if ((e = bg_am_flush_hdp_pin(am)) < 0) { /* the flush of every submit (am_hcq_queue.c) */
    hcq_free(h);
    return bg_error_context(e, "am: %s: HCQ device: ", am->bdf);
  }
  /* Everything the boot region holds is laid out: later allocations come from the main pool. */
  bg_am_vram_end_boot(am->mm);
  h->blk = *blk;
  memset(blk, 0, sizeof(*blk));
  snprintf(h->key, sizeof(h->key), "%s", key);
  h->devs[h->ndevs++] = dev;
  pthread_mutex_lock(&registry_lock);
  h->next = registry;
  registry = h;
  pthread_mutex_unlock(&registry_lock);
  dev->ops = h->usb ? &am_usb_ops : &am_ops;
  dev->priv = h;
  snprintf(dev->arch, sizeof(dev->arch), "%s", am->disc.arch);
  return 0;
}

int bg_am_hcq_share(bg_dev *dev, const char *key) {
  pthread_mutex_lock(&registry_lock);
  am_hcq *h = registry;
  while (h && strcmp(h->key, key) != 0) h = h->next;
  int r = 0;
  if (h && h->ndevs >= BG_AM_MAX_OPENS) {
    r = bg_error(BG_EBUSY, "am: %s: open %u times in this process already", h->d->bdf, h->ndevs);
  } else if (h) {
    h->devs[h->ndevs++] = dev;
    dev->ops = h->usb ? &am_usb_ops : &am_ops;
    dev->priv = h;
    snprintf(dev->arch, sizeof(dev->arch), "%s", h->d->disc.arch);
    r = 1;
  }
  pthread_mutex_unlock(&registry_lock);
  if (r == 1) BG_LOG(1, "am: %s: shared with an open device of this process", h->d->bdf);
  return r;
}
