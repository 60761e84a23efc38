/* platform/vfio_dma.c: the process's shared VFIO containers and their DMA mappings (platform/vfio.h): groups
 * attached with VFIO_GROUP_SET_CONTAINER (VFIO_SET_IOMMU once, with the first), a first-fit IOVA allocator over the
 * container's mappings, VFIO_IOMMU_MAP_DMA / VFIO_IOMMU_UNMAP_DMA (include/uapi/linux/vfio.h). */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/sysmem.h"
#include "platform/vfio.h"

/* IOVAs from 4 GiB: below it x86 IOMMUs reserve the MSI window 0xfee00000 (Linux drivers/iommu: IOMMU_RESV_MSI),
 * and 48 bits is what every GPU's page tables address. */
#define IOVA_BASE (1ull << 32)
#define IOVA_END (1ull << 47)

#define MAX_CONTAINERS 4

static bg_vfio_container *containers[MAX_CONTAINERS];
/* The containers, their users and groups, and their mapping lists: devices open and map from several threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

int bg_vfio_container_get(bg_vfio *v, bool *fresh) {
  *fresh = false;
  pthread_mutex_lock(&lock);
  int free_slot = -1;
  for (int i = 0; i < MAX_CONTAINERS; i++) {
    bg_vfio_container *c = containers[i];
    if (!c) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (c->sys == v->sys && c->sys_ctx == v->sys_ctx && c->noiommu == v->noiommu) {
      c->users++;
      v->c = c;
      v->container = c->fd;
      pthread_mutex_unlock(&lock);
      return 0;
    }
  }
  int r = free_slot < 0 ? bg_error(BG_ENOMEM, "VFIO: more than %d containers in one process", MAX_CONTAINERS) : 0;
  bg_vfio_container *c = r == 0 ? calloc(1, sizeof(*c)) : NULL;
  if (r == 0 && !c) r = bg_error(BG_ENOMEM, "VFIO: out of memory for a container");
  int fd = -1;
  if (r == 0 && (r = bg_vfio_open_node(v, "vfio", &fd)) < 0) free(c);
  if (r == 0) {
    *c = (bg_vfio_container){.sys = v->sys, .sys_ctx = v->sys_ctx, .noiommu = v->noiommu, .fd = fd, .users = 1};
    containers[free_slot] = c;
    v->c = c;
    v->container = fd;
    *fresh = true;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

int bg_vfio_container_attach(bg_vfio *v) {
  bg_vfio_container *c = v->c;
  int cfd = c->fd, r;
  pthread_mutex_lock(&lock);
  if ((r = v->sys->ioctl(v->sys_ctx, v->group, VFIO_GROUP_SET_CONTAINER, (unsigned long)&cfd)) < 0) {
    r = bg_error(BG_EIO, "VFIO: group %d: set container: %s", v->group_id, strerror(-r));
  } else {
    v->attached = true;
    c->groups++;
    /* The backend is chosen once, with the container's first group (Linux container.c vfio_ioctl_set_iommu). */
    unsigned long type = v->noiommu ? VFIO_NOIOMMU_IOMMU : VFIO_TYPE1v2_IOMMU;
    if (c->groups == 1 && (r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_SET_IOMMU, type)) < 0)
      r = bg_error(BG_EIO, "VFIO: set the %s backend: %s", v->noiommu ? "no-IOMMU" : "type1v2 IOMMU", strerror(-r));
  }
  pthread_mutex_unlock(&lock);
  return r;
}

static void unmap_one(bg_vfio_container *c, const bg_vfio_dma *d) {
  struct vfio_iommu_type1_dma_unmap um = {.argsz = sizeof(um), .iova = d->iova, .size = d->size};
  c->sys->ioctl(c->sys_ctx, c->fd, VFIO_IOMMU_UNMAP_DMA, (unsigned long)&um);
}

void bg_vfio_container_put(bg_vfio *v) {
  bg_vfio_container *c = v->c;
  if (!c) return;
  pthread_mutex_lock(&lock);
  /* What this device mapped and did not unmap goes with it; the group fd is closed, so it has left. */
  for (size_t i = 0; i < c->ndma;) {
    if (c->dma[i].owner != v) {
      i++;
      continue;
    }
    if (c->groups > (v->attached ? 1 : 0)) unmap_one(c, &c->dma[i]);
    memmove(&c->dma[i], &c->dma[i + 1], (c->ndma - i - 1) * sizeof(*c->dma));
    c->ndma--;
  }
  if (v->attached) c->groups--;
  if (--c->users == 0) {
    for (int i = 0; i < MAX_CONTAINERS; i++)
      if (containers[i] == c) containers[i] = NULL;
    c->sys->close(c->sys_ctx, c->fd);
    free(c->dma);
    free(c);
  }
  pthread_mutex_unlock(&lock);
  v->c = NULL;
  v->container = -1;
  v->attached = false;
}

/* The lowest free IOVA of size bytes aligned to align, and where it goes in the sorted list. */
static int find_gap(const bg_vfio_container *v, uint64_t size, uint64_t align, uint64_t *iova, size_t *at) {
  uint64_t cur = IOVA_BASE;
  for (size_t i = 0; i <= v->ndma; i++) {
    uint64_t start = align_up(cur, align), end = i < v->ndma ? v->dma[i].iova : IOVA_END;
    if (start <= end && end - start >= size) {
      *iova = start;
      *at = i;
      return 0;
    }
    if (i < v->ndma) cur = v->dma[i].iova + v->dma[i].size;
  }
  return -1;
}

static int dma_map_locked(bg_vfio *v, bg_vfio_container *c, const char *bdf, void *va, uint64_t size,
                          bool align_huge, uint64_t *iova) {
  if (c->ndma == c->capdma) {
    size_t cap = c->capdma ? c->capdma * 2 : 16;
    bg_vfio_dma *nd = realloc(c->dma, cap * sizeof(*nd));
    if (!nd) return bg_error(BG_ENOMEM, "%s: out of memory tracking VFIO DMA mappings", bdf);
    c->dma = nd;
    c->capdma = cap;
  }
  uint64_t at_iova = 0;
  size_t at = 0;
  if (find_gap(c, size, align_huge ? BG_SYSMEM_HUGE_PAGE : BG_SYSMEM_PAGE, &at_iova, &at) < 0)
    return bg_error(BG_ENOMEM, "%s: no free IOVA range of 0x%" PRIx64 " bytes below 0x%llx", bdf, size, IOVA_END);
  struct vfio_iommu_type1_dma_map m = {.argsz = sizeof(m), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
                                       .vaddr = (uintptr_t)va, .iova = at_iova, .size = size};
  int r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_IOMMU_MAP_DMA, (unsigned long)&m);
  if (r < 0)
    return bg_error(r == -ENOMEM ? BG_ENOMEM : BG_EIO, "%s: VFIO_IOMMU_MAP_DMA of %p + 0x%" PRIx64 " at IOVA 0x%"
                    PRIx64 ": %s%s", bdf, va, size, at_iova, strerror(-r),
                    r == -ENOMEM ? " (the locked-memory limit: raise ulimit -l)" : "");
  memmove(&c->dma[at + 1], &c->dma[at], (c->ndma - at) * sizeof(*c->dma));
  c->dma[at] = (bg_vfio_dma){at_iova, size, va, v};
  c->ndma++;
  *iova = at_iova;
  return 0;
}

int bg_vfio_dma_map(bg_vfio *v, const char *bdf, void *va, uint64_t size, bool align_huge, uint64_t *iova) {
  if (v->noiommu)
    return bg_error(BG_EINVAL, "%s: VFIO DMA map in a no-IOMMU group: the device uses physical addresses", bdf);
  if ((uintptr_t)va % BG_SYSMEM_PAGE || size % BG_SYSMEM_PAGE || size == 0)
    return bg_error(BG_EINVAL, "%s: VFIO DMA map of %p + 0x%" PRIx64 ": expected whole 4 KiB pages", bdf, va, size);
  pthread_mutex_lock(&lock);
  int r = dma_map_locked(v, v->c, bdf, va, size, align_huge, iova);
  pthread_mutex_unlock(&lock);
  return r;
}

int bg_vfio_dma_unmap(bg_vfio *v, const char *bdf, void *va, uint64_t size) {
  bg_vfio_container *c = v->c;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < c->ndma; i++) {
    if (c->dma[i].va != va || c->dma[i].size != size || c->dma[i].owner != v) continue;
    struct vfio_iommu_type1_dma_unmap um = {.argsz = sizeof(um), .iova = c->dma[i].iova, .size = size};
    int r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_IOMMU_UNMAP_DMA, (unsigned long)&um);
    memmove(&c->dma[i], &c->dma[i + 1], (c->ndma - i - 1) * sizeof(*c->dma));
    c->ndma--;
    pthread_mutex_unlock(&lock);
    if (r < 0 || um.size != size)
      return bg_error(BG_EIO, "%s: VFIO_IOMMU_UNMAP_DMA of %p + 0x%" PRIx64 ": %s", bdf, va, size,
                      r < 0 ? strerror(-r) : "unmapped a different size");
    return 0;
  }
  pthread_mutex_unlock(&lock);
  return bg_error(BG_EINVAL, "%s: VFIO DMA unmap of %p + 0x%" PRIx64 ": not mapped", bdf, va, size);
}
