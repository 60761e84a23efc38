/* platform/vfio_dma.c: DMA mappings of a type1 VFIO container (platform/vfio.h): a first-fit IOVA allocator over
 * the mappings this open made, VFIO_IOMMU_MAP_DMA / VFIO_IOMMU_UNMAP_DMA (include/uapi/linux/vfio.h). */
#include <errno.h>
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

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

/* The lowest free IOVA of size bytes aligned to align, and where it goes in the sorted list. */
static int find_gap(const bg_vfio *v, uint64_t size, uint64_t align, uint64_t *iova, size_t *at) {
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

int bg_vfio_dma_map(bg_vfio *v, const char *bdf, void *va, uint64_t size, bool align_huge, uint64_t *iova) {
  if (v->noiommu)
    return bg_error(BG_EINVAL, "%s: VFIO DMA map in a no-IOMMU group: the device uses physical addresses", bdf);
  if ((uintptr_t)va % BG_SYSMEM_PAGE || size % BG_SYSMEM_PAGE || size == 0)
    return bg_error(BG_EINVAL, "%s: VFIO DMA map of %p + 0x%" PRIx64 ": expected whole 4 KiB pages", bdf, va, size);
  if (v->ndma == v->capdma) {
    size_t cap = v->capdma ? v->capdma * 2 : 16;
    bg_vfio_dma *nd = realloc(v->dma, cap * sizeof(*nd));
    if (!nd) return bg_error(BG_ENOMEM, "%s: out of memory tracking VFIO DMA mappings", bdf);
    v->dma = nd;
    v->capdma = cap;
  }
  uint64_t at_iova = 0;
  size_t at = 0;
  if (find_gap(v, size, align_huge ? BG_SYSMEM_HUGE_PAGE : BG_SYSMEM_PAGE, &at_iova, &at) < 0)
    return bg_error(BG_ENOMEM, "%s: no free IOVA range of 0x%" PRIx64 " bytes below 0x%llx", bdf, size, IOVA_END);
  struct vfio_iommu_type1_dma_map m = {.argsz = sizeof(m), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
                                       .vaddr = (uintptr_t)va, .iova = at_iova, .size = size};
  int r = v->sys->ioctl(v->sys_ctx, v->container, VFIO_IOMMU_MAP_DMA, (unsigned long)&m);
  if (r < 0)
    return bg_error(r == -ENOMEM ? BG_ENOMEM : BG_EIO, "%s: VFIO_IOMMU_MAP_DMA of %p + 0x%" PRIx64 " at IOVA 0x%"
                    PRIx64 ": %s%s", bdf, va, size, at_iova, strerror(-r),
                    r == -ENOMEM ? " (the locked-memory limit: raise ulimit -l)" : "");
  memmove(&v->dma[at + 1], &v->dma[at], (v->ndma - at) * sizeof(*v->dma));
  v->dma[at] = (bg_vfio_dma){at_iova, size, va};
  v->ndma++;
  *iova = at_iova;
  return 0;
}

int bg_vfio_dma_unmap(bg_vfio *v, const char *bdf, void *va, uint64_t size) {
  for (size_t i = 0; i < v->ndma; i++) {
    if (v->dma[i].va != va || v->dma[i].size != size) continue;
    struct vfio_iommu_type1_dma_unmap um = {.argsz = sizeof(um), .iova = v->dma[i].iova, .size = size};
    int r = v->sys->ioctl(v->sys_ctx, v->container, VFIO_IOMMU_UNMAP_DMA, (unsigned long)&um);
    memmove(&v->dma[i], &v->dma[i + 1], (v->ndma - i - 1) * sizeof(*v->dma));
    v->ndma--;
    if (r < 0 || um.size != size)
      return bg_error(BG_EIO, "%s: VFIO_IOMMU_UNMAP_DMA of %p + 0x%" PRIx64 ": %s", bdf, va, size,
                      r < 0 ? strerror(-r) : "unmapped a different size");
    return 0;
  }
  return bg_error(BG_EINVAL, "%s: VFIO DMA unmap of %p + 0x%" PRIx64 ": not mapped", bdf, va, size);
}
