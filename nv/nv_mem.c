/* nv/nv_mem.c: memory of an NVIDIA GPU on the kernel-module path (tinygrad ops_nv.py NVKIface.alloc, _gpu_map_to_cpu,
 * _gpu_uvm_map, free).
 *
 * GPU VA == CPU VA. Buffers with a CPU view take their VA from the low window, the others from the main window; both
 * are process-wide (every GPU of the process shares the CPU's address space) and reserved with a PROT_NONE mapping
 * first, so a MAP_FIXED mapping of a buffer never lands on something else of the process. The low window is asked
 * for at 0x10_0000_0000 (tinygrad's place: below 2^40, where QMD and pushbuffer addresses must lie); when that range
 * is taken (a sanitizer's shadow memory) the kernel picks another. VAs are handed out by bump allocation and never
 * reused (a freed buffer's range stays reserved).
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

#define SZ_4K 0x1000ull
#define SZ_2M (2ull << 20)
#define SZ_8M (8ull << 20)
#define LOW_HINT 0x1000000000ull  /* [0x10_0000_0000, 0x20_0000_0000): tinygrad's low window */
#define LOW_SIZE 0x1000000000ull
#define HIGH_HINT 0x2000000000ull
#define HIGH_SIZE 0x10000000000ull /* 1 TiB of GPU-only buffers */

typedef struct {
  uint64_t base, size, off;
} va_window;

static pthread_mutex_t va_lock = PTHREAD_MUTEX_INITIALIZER;
static va_window win[2]; /* 0 low (CPU-visible), 1 main */

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* Reserve a window: PROT_NONE, no swap, placed at hint when that range is free. */
static int reserve(va_window *w, uint64_t hint, uint64_t size, const char *what) {
  if (w->base) return 0;
  void *p = mmap((void *)(uintptr_t)hint, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return bg_error(BG_ENOMEM, "nv: cannot reserve the %s VA window (%" PRIu64 " GiB): %s", what, size >> 30,
                    strerror(errno));
  w->base = round_up((uint64_t)(uintptr_t)p, SZ_2M);
  w->size = size - (w->base - (uint64_t)(uintptr_t)p);
  if (w->base != hint) BG_LOG(1, "nv: %s VA window at 0x%" PRIx64 " (0x%" PRIx64 " was taken)", what, w->base, hint);
  return 0;
}

static int va_alloc(int which, uint64_t size, uint64_t align, uint64_t *va) {
  pthread_mutex_lock(&va_lock);
  va_window *w = &win[which];
  int e = reserve(w, which ? HIGH_HINT : LOW_HINT, which ? HIGH_SIZE : LOW_SIZE, which ? "main" : "low");
  if (e == 0) {
    uint64_t off = round_up(w->base + w->off, align) - w->base;
    if (off + size > w->size || off + size < off)
      e = bg_error(BG_ENOMEM, "nv: the %s VA window (%" PRIu64 " GiB) is used up (%" PRIu64 " bytes wanted)",
                   which ? "main" : "low", w->size >> 30, size);
    else {
      *va = w->base + off;
      w->off = off + size;
    }
  }
  pthread_mutex_unlock(&va_lock);
  return e;
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
  if (a->cpu_mapped && !a->host) g->sys->munmap(g->sys->ctx, (void *)(uintptr_t)va, a->map_size);
  if (a->hmem && bg_nv_rm_free(&g->rm, g->hdevice, a->hmem)) BG_LOG(1, "%s: free: %s", g->name, bg_last_error());
  if (a->cpu_mapped && a->host) g->sys->munmap(g->sys->ctx, (void *)(uintptr_t)va, a->map_size);
  if (a->map_fd >= 0) g->sys->close(g->sys->ctx, a->map_fd);
  a->hmem = 0;
  a->cpu_mapped = false;
  a->map_fd = -1;
}

int bg_nv_mem_alloc(nv_gpu *g, uint64_t size, unsigned flags, bg_mem *out) {
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
  nv_alloc *a = m->meta;
  if (!a) return;
  release(g, a, m->va, true);
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
  pthread_mutex_lock(&g->lock);
  bg_nv_mem_free(g, m);
  pthread_mutex_unlock(&g->lock);
}
