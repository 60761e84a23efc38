/* nv/nv_mem.c: memory of an NVIDIA GPU on the kernel-module path (tinygrad ops_nv.py NVKIface.alloc, _gpu_map_to_cpu,
 * _gpu_uvm_map, free).
 *
 * GPU VA == CPU VA. Buffers with a CPU view take their VA from the low window, the others from the main window; both
 * are process-wide (every GPU of the process shares the CPU's address space) and reserved with a PROT_NONE mapping
 * first, so a MAP_FIXED mapping of a buffer never lands on something else of the process. The low window lies below
 * 2^40, where QMD and pushbuffer addresses must (low_cand); the main window anywhere. VAs are handed out first-fit
 * from each window's free list, and a freed buffer's range is reserved again before it returns to the list.
 *
 *   video memory   RM_ALLOC NV1_MEMORY_USER (uncached: NV01_MEMORY_SYSTEM) with NV_MEMORY_ALLOCATION_PARAMS; 2 MiB
 *                  pages from 8 MiB on; CPU view through NV_ESC_RM_MAP_MEMORY on a fresh /dev/nvidiaN (/dev/nvidiactl
 *                  for system memory) and mmap(MAP_FIXED) of that fd at the VA
 *   host memory    anonymous mmap at the VA, described to RM by NV01_MEMORY_SYSTEM_OS_DESCRIPTOR (RM_ALLOC_MEMORY on
 *                  the per-GPU fd, with a handle from the client's allocator)
 *   GPU mapping    UVM_CREATE_EXTERNAL_RANGE, RM_MAP_MEMORY_DMA into the virtual-memory object when the driver gave
 *                  one (optional), UVM_MAP_EXTERNAL_ALLOCATION */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "baregpu/error.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_hcq.h"
#include "util/grow.h"

#define SZ_4K 0x1000ull
#define SZ_2M (2ull << 20)
#define SZ_8M (8ull << 20)
#define LOW_HINT 0x1000000000ull  /* [0x10_0000_0000, 0x20_0000_0000): tinygrad's low window */
#define LOW_SIZE 0x1000000000ull
#define HIGH_HINT 0x2000000000ull
#define HIGH_SIZE 0x10000000000ull /* 1 TiB of GPU-only buffers */

typedef struct {
  uint64_t start, size; /* offsets from the window's base */
} va_range;

typedef struct {
  uint64_t base, size;
  va_range *free;       /* free ranges, sorted, coalesced; the whole window at first */
  size_t nfree, cap;
} va_window;

static pthread_mutex_t va_lock = PTHREAD_MUTEX_INITIALIZER;
static va_window win[2]; /* 0 low (CPU-visible), 1 main */

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* Reserve a window: PROT_NONE, no swap, at one of the candidate places (MAP_FIXED_NOREPLACE: never over a mapping);
 * else where the kernel puts it (the main window has no address limit). */
static int reserve(va_window *w, const uint64_t (*cand)[2], size_t ncand, uint64_t any_size, const char *what) {
  if (w->base) return 0;
  for (size_t i = 0; i < ncand; i++) {
    void *p = mmap((void *)(uintptr_t)cand[i][0], cand[i][1], PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) continue;
    if ((uint64_t)(uintptr_t)p == cand[i][0]) {
      w->base = cand[i][0], w->size = cand[i][1];
      if (i) BG_LOG(1, "nv: %s VA window at 0x%" PRIx64 " (0x%" PRIx64 " was taken)", what, w->base, cand[0][0]);
      return 0;
    }
    munmap(p, cand[i][1]); /* a kernel without MAP_FIXED_NOREPLACE took it as a hint and placed it elsewhere */
  }
  if (!any_size)
    return bg_error(BG_ENOMEM, "nv: cannot reserve the %s VA window below 2^40 (tried 0x%" PRIx64 " and 0x%" PRIx64 ")",
                    what, cand[0][0], cand[ncand - 1][0]);
  void *p = mmap(NULL, any_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return bg_error(BG_ENOMEM, "nv: cannot reserve the %s VA window (%" PRIu64 " GiB): %s", what, any_size >> 30,
                    strerror(errno));
  w->base = round_up((uint64_t)(uintptr_t)p, SZ_2M);
  w->size = any_size - (w->base - (uint64_t)(uintptr_t)p);
  return 0;
}

/* Low window: pushbuffers, GPFIFO rings and QMDs live here, and GPFIFO entries and QMD pointers hold 40 address bits.
 * tinygrad's [0x10_0000_0000, 0x20_0000_0000) first; under AddressSanitizer that range is its shadow gap, so then
 * 1.5 GiB below 2 GiB (application memory there, with a real shadow). */
static const uint64_t low_cand[][2] = {{LOW_HINT, LOW_SIZE}, {0x10000000ull, 0x60000000ull}};
static const uint64_t high_cand[][2] = {{HIGH_HINT, HIGH_SIZE}};

static int va_alloc(int which, uint64_t size, uint64_t align, uint64_t *va) {
  pthread_mutex_lock(&va_lock);
  va_window *w = &win[which];
  int e = which ? reserve(w, high_cand, 1, HIGH_SIZE, "main") : reserve(w, low_cand, 2, 0, "low");
  if (e == 0 && !w->free) {
    if (!bg_grow((void **)&w->free, &w->cap, 1, sizeof *w->free)) e = bg_error(BG_ENOMEM, "nv: out of host memory");
    else w->free[0] = (va_range){0, w->size}, w->nfree = 1;
  }
  size_t i = 0;
  uint64_t off = 0;
  for (; e == 0 && i < w->nfree; i++) { /* first fit */
    off = round_up(w->base + w->free[i].start, align) - w->base;
    if (off >= w->free[i].start && off - w->free[i].start + size <= w->free[i].size && off + size > off) break;
  }
  if (e == 0 && i == w->nfree)
    e = bg_error(BG_ENOMEM, "nv: the %s VA window (%" PRIu64 " MiB) has no free range of %" PRIu64 " bytes",
                 which ? "main" : "low", w->size >> 20, size);
  if (e == 0 && !bg_grow((void **)&w->free, &w->cap, w->nfree + 1, sizeof *w->free))
    e = bg_error(BG_ENOMEM, "nv: out of host memory");
  if (e == 0) {
    va_range r = w->free[i];
    va_range before = {r.start, off - r.start}, after = {off + size, r.start + r.size - (off + size)};
    memmove(&w->free[i + 1], &w->free[i], (w->nfree - i) * sizeof *w->free);
    w->nfree++;
    size_t k = i;
    if (before.size) w->free[k++] = before;
    if (after.size) w->free[k++] = after;
    memmove(&w->free[k], &w->free[i + 2], (w->nfree - i - 2) * sizeof *w->free);
    w->nfree -= (i + 2) - k;
    *va = w->base + off;
  }
  pthread_mutex_unlock(&va_lock);
  return e;
}

/* Give [va, va+size) back to the window it came from (still reserved: the caller re-reserved a CPU mapping's range). */
static void va_free(uint64_t va, uint64_t size) {
  pthread_mutex_lock(&va_lock);
  for (int which = 0; which < 2; which++) {
    va_window *w = &win[which];
    if (!w->base || va < w->base || va + size > w->base + w->size) continue;
    uint64_t off = va - w->base;
    size_t i = 0;
    while (i < w->nfree && w->free[i].start < off) i++;
    if (!bg_grow((void **)&w->free, &w->cap, w->nfree + 1, sizeof *w->free)) break; /* the range stays used */
    memmove(&w->free[i + 1], &w->free[i], (w->nfree - i) * sizeof *w->free);
    w->free[i] = (va_range){off, size};
    w->nfree++;
    if (i + 1 < w->nfree && w->free[i].start + w->free[i].size == w->free[i + 1].start) { /* merge with the next */
      w->free[i].size += w->free[i + 1].size;
      memmove(&w->free[i + 1], &w->free[i + 2], (w->nfree - i - 2) * sizeof *w->free);
      w->nfree--;
    }
    if (i > 0 && w->free[i - 1].start + w->free[i - 1].size == w->free[i].start) { /* with the previous */
      w->free[i - 1].size += w->free[i].size;
      memmove(&w->free[i], &w->free[i + 1], (w->nfree - i - 1) * sizeof *w->free);
      w->nfree--;
    }
    break;
  }
  pthread_mutex_unlock(&va_lock);
}

void bg_nv_va_free(uint64_t va, uint64_t size) { va_free(va, size); }

/* munmap of a buffer's CPU view, then the range reserved again, so nothing else of the process lands there before the
 * VA is handed out anew. */
static void unmap_cpu(nv_gpu *g, uint64_t va, uint64_t size) {
  g->sys->munmap(g->sys->ctx, (void *)(uintptr_t)va, size);
  void *p = mmap((void *)(uintptr_t)va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                 -1, 0);
  if (p != MAP_FAILED && (uint64_t)(uintptr_t)p != va) munmap(p, size);
}

int bg_nv_va_low(uint64_t size, uint64_t align, uint64_t *va) { return va_alloc(0, size, align, va); }

/* An fd the CPU mapping of one buffer goes through (RM ties one mapping context to an fd). */
static int map_fd_open(nv_gpu *g, bool system, int *out) {
  char path[32];
  if (system) snprintf(path, sizeof path, "/dev/nvidiactl");
  else snprintf(path, sizeof path, "/dev/nvidia%u", g->minor);
  int fd = g->sys->open(g->sys->ctx, path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return bg_error(BG_EIO, "nv: open %s for a CPU mapping: %s", path, strerror(errno));
  if (!system) {
    bg_nv_register_fd r = {.ctl_fd = g->ctl_fd};
    if (g->sys->ioctl(g->sys->ctx, fd, NV_IOWR(NV_ESC_REGISTER_FD, sizeof r), &r) < 0) {
      int e = errno;
      g->sys->close(g->sys->ctx, fd);
      return bg_error(BG_EIO, "nv: NV_ESC_REGISTER_FD on %s failed: %s", path, strerror(e));
    }
  }
  *out = fd;
  return 0;
}

static int uvm_map(nv_gpu *g, uint64_t va, uint64_t size, uint32_t hmem, bool *range) {
  bg_nv_uvm_create_external_range cr = {.base = va, .length = size};
  int e = bg_nv_uvm_ioctl(&g->rm.ops, g->uvm_fd, NV_UVM_CREATE_EXTERNAL_RANGE, "UVM_CREATE_EXTERNAL_RANGE", &cr,
                          sizeof cr, offsetof(bg_nv_uvm_create_external_range, rmStatus));
  if (e) return e;
  *range = true;
  if (g->have_virtmem && !g->dma_refused) {
    uint64_t off = va;
    if (bg_nv_rm_map_memory_dma(&g->rm, &g->abi, g->hdevice, g->hvirtmem, hmem, 0, size, NVOS46_FLAGS_FIXED_SNOOPED_4K,
                                &off) != 0) {
      BG_LOG(1, "%s: %s; mapping through UVM only from now on", g->name, bg_last_error());
      g->dma_refused = true;
    } else if (off != va) {
      return bg_error(BG_EIO, "nv: RM_MAP_MEMORY_DMA of 0x%x placed it at 0x%" PRIx64 ", not at the fixed 0x%" PRIx64,
                      hmem, off, va);
    }
  }
  bg_nv_uvm_map_external_allocation *m = calloc(1, sizeof *m);
  if (!m) return bg_error(BG_ENOMEM, "nv: out of host memory");
  m->base = va;
  m->length = size;
  memcpy(m->perGpuAttributes[0].gpuUuid.uuid, g->uuid, 16);
  m->perGpuAttributes[0].gpuMappingType = NV_UVM_MAPPING_TYPE_READ_WRITE_ATOMIC;
  m->gpuAttributesCount = 1;
  m->rmCtrlFd = g->ctl_fd;
  m->hClient = g->rm.root;
  m->hMemory = hmem;
  e = bg_nv_uvm_ioctl(&g->rm.ops, g->uvm_fd, NV_UVM_MAP_EXTERNAL_ALLOCATION, "UVM_MAP_EXTERNAL_ALLOCATION", m, sizeof *m,
                      offsetof(bg_nv_uvm_map_external_allocation, rmStatus));
  free(m);
  return e;
}

static int uvm_free(nv_gpu *g, uint64_t va, uint64_t size) {
  uint8_t p[32] = {0}; /* UVM_FREE_PARAMS: base, [length,] rmStatus (nv_abi_family.h) */
  memcpy(p, &va, 8);
  if (g->abi.uvm_free_size > 16) memcpy(p + 8, &size, 8);
  return bg_nv_uvm_ioctl(&g->rm.ops, g->uvm_fd, NV_UVM_FREE, "UVM_FREE", p, g->abi.uvm_free_size,
                         g->abi.uvm_free_status_off);
}

static int alloc_video(nv_gpu *g, uint64_t size, uint64_t page, unsigned flags, bool cpu, nv_alloc *a, uint64_t va) {
  bool uncached = flags & BG_BUF_UNCACHED, huge = page > SZ_4K;
  bg_nv_memory_alloc p = {
      .owner = g->rm.root,
      .type = uncached ? NVOS32_TYPE_NOTIFIER : NVOS32_TYPE_IMAGE,
      .flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
               NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT |
               (uncached ? 0 : NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM),
      .attr = ((flags & BG_BUF_CONTIGUOUS) ? NVOS32_ATTR_PHYSICALITY_CONTIGUOUS : NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS)
                  << 27 |
              (huge ? NVOS32_ATTR_PAGE_SIZE_HUGE : 0) << 23 | (uncached ? NVOS32_ATTR_LOCATION_PCI : 0) << 25,
      .attr2 = (uncached ? NVOS32_ATTR2_GPU_CACHEABLE_NO : NVOS32_ATTR2_GPU_CACHEABLE_YES) << 2 |
               (huge ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0) << 20 | NVOS32_ATTR2_ZBC_PREFER_NO_ZBC,
      .format = NV_MEMORY_FORMAT_BLOCK_LINEAR_DEFAULT,
      .size = size,
      .alignment = page,
      .offset = 0,
      .limit = size - 1,
  };
  int e = bg_nv_rm_alloc(&g->rm, g->hdevice, uncached ? NV01_MEMORY_SYSTEM : NV1_MEMORY_USER, &p, sizeof p, &a->hmem);
  if (e || !cpu) return e;
  if ((e = map_fd_open(g, uncached, &a->map_fd))) return e;
  if ((e = bg_nv_rm_map_memory(&g->rm, a->map_fd, g->hdevice, a->hmem, 0, size, 0, NULL))) return e;
  void *p2 = g->sys->mmap(g->sys->ctx, (void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                          a->map_fd, 0);
  if (p2 == MAP_FAILED) return bg_error(BG_EIO, "nv: mmap of memory 0x%x at 0x%" PRIx64 ": %s", a->hmem, va, strerror(errno));
  if ((uint64_t)(uintptr_t)p2 != va)
    return bg_error(BG_EIO, "nv: mmap of memory 0x%x landed at %p, not at the fixed 0x%" PRIx64, a->hmem, p2, va);
  a->cpu_mapped = true;
  return 0;
}

static int alloc_host(nv_gpu *g, uint64_t size, nv_alloc *a, uint64_t va) {
  void *p = g->sys->mmap(g->sys->ctx, (void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED || (uint64_t)(uintptr_t)p != va)
    return bg_error(BG_ENOMEM, "nv: host memory of %" PRIu64 " bytes at 0x%" PRIx64 ": %s", size, va,
                    p == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
  a->cpu_mapped = true;
  a->host = true;
  return bg_nv_rm_alloc_memory(&g->rm, g->gpu_fd, g->hdevice, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
                               NVOS02_FLAGS_HOST_OS_DESCRIPTOR, va, size, &a->hmem);
}

/* Undo what a (possibly partial) allocation did: GPU mapping, CPU mapping, RM object, fd. */
static void release(nv_gpu *g, nv_alloc *a, uint64_t va, bool range) {
  if (range && uvm_free(g, va, a->map_size)) BG_LOG(1, "%s: free: %s", g->name, bg_last_error());
  if (a->cpu_mapped && !a->host) unmap_cpu(g, va, a->map_size);
  if (a->hmem && bg_nv_rm_free(&g->rm, g->hdevice, a->hmem)) BG_LOG(1, "%s: free: %s", g->name, bg_last_error());
  if (a->cpu_mapped && a->host) unmap_cpu(g, va, a->map_size);
  if (a->map_fd >= 0) g->sys->close(g->sys->ctx, a->map_fd);
  a->hmem = 0;
  a->cpu_mapped = false;
  a->map_fd = -1;
}

int bg_nv_mem_alloc(nv_gpu *g, uint64_t size, unsigned flags, bg_mem *out) {
  if (g->pci) return bg_nv_pci_mem_alloc(g, size, flags, out); /* bare metal: the driver's own page tables */
  memset(out, 0, sizeof *out);
  if (size == 0) return bg_error(BG_EINVAL, "%s: allocation of 0 bytes", g->name);
  bool host = flags & BG_BUF_HOST;
  /* BG_BUF_ZERO is done by the CPU: such a buffer gets a CPU view */
  bool cpu = host || (flags & (BG_BUF_CPU_ACCESS | BG_BUF_ZERO));
  uint64_t page = host || (flags & BG_BUF_UNCACHED) ? SZ_4K : size >= SZ_8M ? SZ_2M : SZ_4K;
  uint64_t rsize = round_up(size, page), va;
  if (rsize < size) return bg_error(BG_ENOMEM, "%s: allocation of %" PRIu64 " bytes is too large", g->name, size);
  int e = va_alloc(cpu ? 0 : 1, rsize, page, &va);
  if (e) return e;
  nv_alloc *a = calloc(1, sizeof *a);
  if (!a) return bg_error(BG_ENOMEM, "nv: out of host memory");
  a->map_fd = -1;
  a->map_size = rsize;
  a->huge = page > SZ_4K;
  bool range = false;
  e = host ? alloc_host(g, rsize, a, va) : alloc_video(g, rsize, page, flags, cpu, a, va);
  if (e == 0) e = uvm_map(g, va, rsize, a->hmem, &range);
  if (e) {
    e = bg_error_context(e, "%s: %s memory of %" PRIu64 " bytes: ", g->name,
                         host ? "host" : (flags & BG_BUF_UNCACHED) ? "system" : "video", size);
    release(g, a, va, range);
    va_free(va, rsize);
    free(a);
    return e;
  }
  out->va = va;
  out->size = size;
  out->cpu = cpu ? (void *)(uintptr_t)va : NULL;
  out->meta = a;
  if ((flags & BG_BUF_ZERO) && out->cpu) memset(out->cpu, 0, rsize);
  g->alloc_bytes += rsize;
  BG_LOG(4, "%s: alloc %" PRIu64 " bytes (flags 0x%x) at 0x%" PRIx64 ", memory 0x%x%s", g->name, size, flags, va, a->hmem,
         a->huge ? ", 2 MiB pages" : "");
  return 0;
}

void bg_nv_mem_free(nv_gpu *g, bg_mem *m) {
  if (g->pci) {
    bg_nv_pci_mem_free(g, m);
    return;
  }
  nv_alloc *a = m->meta;
  if (!a) return;
  release(g, a, m->va, true);
  va_free(m->va, a->map_size);
  g->alloc_bytes -= a->map_size;
  free(a);
  memset(m, 0, sizeof *m);
}

int bg_nv_alloc(bg_dev *d, uint64_t size, unsigned flags, bg_mem *out) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  int e = bg_nv_mem_alloc(g, size, flags, out);
  pthread_mutex_unlock(&g->lock);
  return e;
}

void bg_nv_free(bg_dev *d, bg_mem *m) {
  nv_gpu *g = bg_nv_gpu(d);
  BG_LOG(4, "%s: free %" PRIu64 " bytes at 0x%" PRIx64, g->name, m->size, m->va);
  pthread_mutex_lock(&g->lock);
  bg_nv_mem_free(g, m);
  pthread_mutex_unlock(&g->lock);
}
