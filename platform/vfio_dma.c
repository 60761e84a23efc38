/* platform/vfio_dma.c: the process's shared VFIO containers and their DMA mappings (platform/vfio.h): groups
 * attached with VFIO_GROUP_SET_CONTAINER (VFIO_SET_IOMMU once, with the first), the IOMMU's IOVA ranges, page sizes
 * and mapping limit from VFIO_IOMMU_GET_INFO, a first-fit IOVA allocator over those ranges and the container's
 * mappings, VFIO_IOMMU_MAP_DMA / VFIO_IOMMU_UNMAP_DMA (include/uapi/linux/vfio.h). */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/sysmem.h"
#include "platform/vfio.h"

/* Where IOVAs go. The kernel reports the ranges its IOMMU accepts (VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE: the
 * domain's aperture, e.g. 39 bits on many VT-d units, less the reserved regions such as the x86 MSI window
 * 0xfee00000-0xfeefffff and host bridge windows; Linux drivers/vfio/vfio_iommu_type1.c refuses MAP_DMA outside them
 * with EINVAL). IOVAs stay below 2^47, inside the 48 bits every GPU's page tables address. First fit goes to the
 * parts of the ranges from 4 GiB up first, and below 4 GiB only for what fits nowhere above: the low space, cut up by
 * the reserved regions, is kept free while there is room above (and the first IOVA is 4 GiB as on every kernel), yet
 * an IOMMU with only 32-bit ranges, or full ranges above, still works. Page 0 is never handed out: a zero bus address
 * reads as "none" in rings and descriptors. Kernels that report no ranges (before Linux 5.4) get the fixed window
 * [4 GiB, 2^47), as the MSI window lies below it. */
#define IOVA_LOW (1ull << 32)
#define IOVA_END (1ull << 47)
#define MAX_RANGES_SHOWN 8

#define MAX_CONTAINERS 4

static bg_vfio_container *containers[MAX_CONTAINERS];
/* The containers, their users and groups, and their mapping lists: devices open and map from several threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static void iova_reset(bg_vfio_container *c) {
  free(c->iova);
  c->iova = NULL;
  c->niova = 0;
  c->iova_reported = c->dma_limit_known = false;
  c->pgsize = BG_SYSMEM_PAGE;
  c->dma_limit = 0;
}

/* The capabilities of a VFIO_IOMMU_GET_INFO answer of len bytes (vfio_iommu_type1_get_info): the IOVA ranges and the
 * mappings still available. Each read is bounds-checked and copied out (the offsets are the kernel's). */
static int iova_parse_caps(bg_vfio_container *c, const uint8_t *buf, size_t len, uint32_t off) {
  for (unsigned n = 0; off && n < 64; n++) {
    struct vfio_info_cap_header h;
    if (off < sizeof(struct vfio_iommu_type1_info) || off > len || len - off < sizeof(h)) break;
    memcpy(&h, buf + off, sizeof(h));
    if (h.id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE && len - off >= sizeof(struct vfio_iommu_type1_info_cap_iova_range)) {
      struct vfio_iommu_type1_info_cap_iova_range cap;
      memcpy(&cap, buf + off, sizeof(cap));
      size_t at = off + sizeof(cap);
      if (cap.nr_iovas && (len - at) / sizeof(struct vfio_iova_range) >= cap.nr_iovas) {
        bg_vfio_iova_range *r = calloc(cap.nr_iovas, sizeof(*r));
        if (!r) return bg_error(BG_ENOMEM, "VFIO: out of memory for %u IOVA ranges", cap.nr_iovas);
        for (uint32_t i = 0; i < cap.nr_iovas; i++) {
          struct vfio_iova_range x;
          memcpy(&x, buf + at + i * sizeof(x), sizeof(x));
          r[i] = (bg_vfio_iova_range){x.start, x.end};
        }
        free(c->iova);
        c->iova = r;
        c->niova = cap.nr_iovas;
        c->iova_reported = true;
      }
    } else if (h.id == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL && len - off >= sizeof(struct vfio_iommu_type1_info_dma_avail)) {
      struct vfio_iommu_type1_info_dma_avail cap;
      memcpy(&cap, buf + off, sizeof(cap));
      c->dma_limit = cap.avail + (uint64_t)c->ndma;  /* avail counts down as mappings are made */
      c->dma_limit_known = true;
    }
    if (h.next <= off) break;  /* the chain only goes forward */
    off = h.next;
  }
  return 0;
}

/* The container's IOVA ranges, smallest IOMMU page and mapping limit (VFIO_IOMMU_GET_INFO, with the usual second
 * call when the capabilities do not fit: the kernel then sets argsz to what they need and cap_offset stays 0).
 * Asked after each group attaches, since the kernel narrows the ranges by each group's reserved regions
 * (vfio_iommu_type1_attach_group). Failing to ask is no error: the fixed window, as before the ranges were reported. */
static int iova_query(bg_vfio *v, bg_vfio_container *c) {
  iova_reset(c);
  struct vfio_iommu_type1_info info = {.argsz = sizeof(info)};
  int r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_IOMMU_GET_INFO, (unsigned long)&info);
  uint8_t *buf = NULL;
  if (r == 0 && (info.flags & VFIO_IOMMU_INFO_CAPS) && info.argsz > sizeof(info)) {
    size_t len = info.argsz;
    buf = calloc(1, len);
    if (!buf) return bg_error(BG_ENOMEM, "VFIO: out of memory for the IOMMU info (%zu bytes)", len);
    info.argsz = (uint32_t)len;
    info.cap_offset = 0;
    memcpy(buf, &info, sizeof(info));
    r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_IOMMU_GET_INFO, (unsigned long)buf);
    memcpy(&info, buf, sizeof(info));
    /* A chain that grew in between is left unread (cap_offset 0): the fixed window. */
    int pr = r == 0 && info.argsz <= len && (info.flags & VFIO_IOMMU_INFO_CAPS)
             ? iova_parse_caps(c, buf, len, info.cap_offset) : 0;
    free(buf);
    if (pr < 0) return pr;
  }
  if (r == 0 && (info.flags & VFIO_IOMMU_INFO_PGSIZES) && info.iova_pgsizes)
    c->pgsize = max64(BG_SYSMEM_PAGE, info.iova_pgsizes & -info.iova_pgsizes);
  if (!c->iova_reported) {
    free(c->iova);
    c->niova = 0;
    c->iova = malloc(sizeof(*c->iova));
    if (!c->iova) return bg_error(BG_ENOMEM, "VFIO: out of memory for the IOVA window");
    c->iova[0] = (bg_vfio_iova_range){IOVA_LOW, IOVA_END - 1};
    c->niova = 1;
  }
  return 0;
}

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
    else if (!v->noiommu)
      r = iova_query(v, c);
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
    free(c->iova);
    free(c);
  }
  pthread_mutex_unlock(&lock);
  v->c = NULL;
  v->container = -1;
  v->attached = false;
}

/* The lowest free IOVA of size bytes aligned to align in [lo, hi), and where it goes in the sorted list. */
static bool gap_in(const bg_vfio_container *c, uint64_t lo, uint64_t hi, uint64_t size, uint64_t align,
                   uint64_t *iova, size_t *at) {
  size_t i = 0;
  while (i < c->ndma && c->dma[i].iova + c->dma[i].size <= lo) i++;
  for (uint64_t cur = lo;; i++) {
    uint64_t start = align_up(cur, align), end = i < c->ndma && c->dma[i].iova < hi ? c->dma[i].iova : hi;
    if (start <= end && end - start >= size) {
      *iova = start;
      *at = i;
      return true;
    }
    if (end == hi) return false;
    cur = max64(cur, c->dma[i].iova + c->dma[i].size);
  }
}

/* First fit within one range at a time (a mapping never straddles a hole between ranges): above 4 GiB first, then
 * below (see IOVA_LOW). */
static int find_gap(const bg_vfio_container *c, uint64_t size, uint64_t align, uint64_t *iova, size_t *at) {
  for (int low = 0; low < 2; low++)
    for (size_t k = 0; k < c->niova; k++) {
      uint64_t lo = c->iova[k].start, hi = c->iova[k].end >= IOVA_END ? IOVA_END : c->iova[k].end + 1;
      if (!low) lo = max64(lo, IOVA_LOW);
      else lo = max64(lo, c->pgsize), hi = min64(hi, IOVA_LOW);
      if (lo < hi && gap_in(c, lo, hi, size, align, iova, at)) return 0;
    }
  return -1;
}

/* "0x0-0xfedfffff, 0xfef00000-0xffffffffffff" for messages. */
static void ranges_str(const bg_vfio_container *c, char *s, size_t n) {
  size_t len = 0;
  s[0] = 0;
  for (size_t k = 0; k < c->niova && k < MAX_RANGES_SHOWN && len < n; k++)
    len += (size_t)snprintf(s + len, n - len, "%s0x%" PRIx64 "-0x%" PRIx64, k ? ", " : "", c->iova[k].start,
                            c->iova[k].end);
  if (c->niova > MAX_RANGES_SHOWN && len < n) snprintf(s + len, n - len, " and %zu more", c->niova - MAX_RANGES_SHOWN);
}

static int dma_limit_error(const bg_vfio_container *c, const char *bdf, uint64_t size) {
  char lim[48] = "";
  if (c->dma_limit_known) snprintf(lim, sizeof(lim), ", %" PRIu64 " here", c->dma_limit);
  return bg_error(BG_ENOMEM, "%s: VFIO DMA map of 0x%" PRIx64 " bytes: the container holds %zu mappings, the most the "
                  "type1 IOMMU allows (the vfio_iommu_type1.dma_entry_limit module parameter%s): raise it (echo N > "
                  "/sys/module/vfio_iommu_type1/parameters/dma_entry_limit; it counts for containers set up "
                  "afterwards) or use fewer, larger buffers", bdf, size, c->ndma, lim);
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
  if ((uintptr_t)va % c->pgsize || size % c->pgsize)
    return bg_error(BG_EINVAL, "%s: VFIO DMA map of %p + 0x%" PRIx64 ": the IOMMU's smallest page is 0x%" PRIx64
                    " bytes (VFIO_IOMMU_GET_INFO iova_pgsizes): expected whole pages of it", bdf, va, size, c->pgsize);
  if (c->dma_limit_known && c->ndma >= c->dma_limit) return dma_limit_error(c, bdf, size);
  uint64_t at_iova = 0;
  size_t at = 0;
  if (find_gap(c, size, max64(c->pgsize, align_huge ? BG_SYSMEM_HUGE_PAGE : BG_SYSMEM_PAGE), &at_iova, &at) < 0) {
    char ranges[512];
    ranges_str(c, ranges, sizeof(ranges));
    return bg_error(BG_ENOMEM, "%s: no free IOVA range of 0x%" PRIx64 " bytes (%zu mappings in the container): %s %s"
                    " (IOVAs stay below 0x%llx)", bdf, size, c->ndma, c->iova_reported ? "the IOMMU's ranges are"
                    : "the kernel reports no IOVA ranges; the fixed window is", ranges, IOVA_END);
  }
  struct vfio_iommu_type1_dma_map m = {.argsz = sizeof(m), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
                                       .vaddr = (uintptr_t)va, .iova = at_iova, .size = size};
  int r = v->sys->ioctl(v->sys_ctx, c->fd, VFIO_IOMMU_MAP_DMA, (unsigned long)&m);
  if (r == -ENOSPC) return dma_limit_error(c, bdf, size);  /* vfio_dma_do_map: dma_avail is 0 */
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
