/* platform/vfio.h: a PCI function through Linux VFIO (include/uapi/linux/vfio.h, Documentation/driver-api/vfio.rst;
 * tinygrad tinygrad/runtime/support/system.py System.vfio).
 *
 * The container (/dev/vfio/vfio) speaks API version VFIO_API_VERSION; the function's IOMMU group (its sysfs
 * iommu_group link) is /dev/vfio/<N> behind a translating IOMMU (the type1v2 backend: DMA goes to IOVAs this
 * module allocates and maps with VFIO_IOMMU_MAP_DMA) or /dev/vfio/noiommu-<N> in no-IOMMU mode (vfio's
 * enable_unsafe_noiommu_mode=1: the device gets physical addresses from pagemap). The device fd gives config
 * space (pread/pwrite of the config region), the BARs (mmap at their region offsets), reset (VFIO_DEVICE_RESET
 * when the device info offers it) and interrupts (MSI, else INTx with an unmask after each, into an eventfd).
 *
 * Paths: sysfs under bg_pci_sysfs_root(), device nodes under $BG_DEV_ROOT (default /dev); the system calls go
 * through platform/vfio_sys.h, so tests point all of them at an emulated VFIO (tests/mockgpu/mock_vfio.c).
 * Every failure says what to do: load the module, turn on the IOMMU or no-IOMMU mode, bind the group's other
 * devices to vfio-pci, close what holds the group. */
#ifndef BG_HCQ_VFIO_H
#define BG_HCQ_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/mmio.h"
#include "platform/vfio_sys.h"

/* One IOVA range mapped with VFIO_IOMMU_MAP_DMA (type1 only), by the device owner. */
typedef struct bg_vfio_dma {
  uint64_t iova, size;
  void *va;
  const void *owner;
} bg_vfio_dma;

/* An IOVA range the IOMMU accepts, end inclusive (struct vfio_iova_range). */
typedef struct bg_vfio_iova_range {
  uint64_t start, end;
} bg_vfio_iova_range;

/* A container the process's VFIO devices share (one per system-call table and backend), as QEMU puts its groups in
 * one container: an IOVA mapped once is valid for every device in it, as a physical address is without an IOMMU, so
 * memory one GPU's driver allocated can be handed to another (signals, peer copies staged through the host). */
typedef struct bg_vfio_container {
  const bg_vfio_sys *sys;
  void *sys_ctx;
  bool noiommu;
  int fd, users, groups;
  bg_vfio_dma *dma;  /* sorted by iova */
  size_t ndma, capdma;
  /* Type1, from VFIO_IOMMU_GET_INFO after each group attaches: the IOVA ranges the allocator may use (the kernel's,
   * clipped to what GPUs address; the fixed window when it reports none), its smallest page, and how many mappings
   * the container allows in all (dma_entry_limit) when the kernel says. */
  bg_vfio_iova_range *iova;
  size_t niova;
  bool iova_reported;  /* the ranges are the kernel's (VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) */
  bool dma_limit_known;
  uint64_t pgsize;
  uint64_t dma_limit;
} bg_vfio_container;

/* A region of the device fd (VFIO_DEVICE_GET_REGION_INFO). */
typedef struct bg_vfio_region {
  uint64_t offset, size;
  uint32_t flags;  /* VFIO_REGION_INFO_FLAG_* */
} bg_vfio_region;

#define BG_VFIO_NREGIONS 8 /* BAR0..5, ROM, config: VFIO_PCI_CONFIG_REGION_INDEX + 1 */

typedef struct bg_vfio {
  const bg_vfio_sys *sys;
  void *sys_ctx;
  bg_vfio_container *c;                  /* shared; NULL when not open */
  int container, group, device, irq_fd;  /* -1 when not open (container: c's fd) */
  int group_id;
  bool noiommu;      /* no-IOMMU group: bus addresses are physical */
  bool attached;     /* the group is attached to c */
  bool intx;         /* INTx (needs an unmask after each interrupt) rather than MSI */
  bool can_reset;    /* VFIO_DEVICE_FLAGS_RESET */
  bg_vfio_region regions[BG_VFIO_NREGIONS];
} bg_vfio;

const char *bg_vfio_dev_root(void);
/* 0 when the vfio module is loaded, -BG_ENOTSUP with the commands to load it otherwise. */
int bg_vfio_available(void);
/* Whether bdf's DMA is translated by an IOMMU through VFIO: bound to vfio-pci with a type1 group node
 * (<BG_DEV_ROOT>/vfio/<N>); *group gets N. Such a device reaches only IOVAs its container maps, not a peer's BAR. */
bool bg_vfio_translated(const char *bdf, int *group);
/* Bind bdf (no driver bound) to vfio-pci: driver_override + drivers_probe. */
int bg_vfio_bind(const char *bdf);
/* Container, group, device fd, its regions and an eventfd fed by MSI (or INTx). Leaves nothing open on failure. */
int bg_vfio_open(const char *bdf, bg_vfio *v);
void bg_vfio_close(bg_vfio *v);

/* Steps of bg_vfio_open. vfio_dma.c: the shared container of v's backend (*fresh: just opened, to be checked);
 * attaching v's group to it (VFIO_GROUP_SET_CONTAINER, and VFIO_SET_IOMMU for its first group); letting go of it
 * (v's mappings unmapped, the container closed with its last user; after v's group fd is closed).
 * vfio_dev.c: the device info and regions; MSI (else INTx) into a new eventfd. */
int bg_vfio_container_get(bg_vfio *v, bool *fresh);
/* Open <BG_DEV_ROOT>/vfio/<name> through v's table, with a message saying what to do when it cannot be opened. */
int bg_vfio_open_node(bg_vfio *v, const char *name, int *fd);
int bg_vfio_container_attach(bg_vfio *v);
void bg_vfio_container_put(bg_vfio *v);
int bg_vfio_dev_open_regions(bg_vfio *v, const char *bdf);
int bg_vfio_irq_enable(bg_vfio *v, const char *bdf);

/* Config space through the config region: size 1, 2 or 4. */
int bg_vfio_cfg_read(bg_vfio *v, const char *bdf, uint32_t off, unsigned size, uint32_t *val);
int bg_vfio_cfg_write(bg_vfio *v, const char *bdf, uint32_t off, unsigned size, uint32_t val);
/* A view of [off, off+size) of BAR bar, mmapped from the device fd (off page-aligned, inside the region). */
int bg_vfio_map_bar(bg_vfio *v, const char *bdf, int bar, uint64_t off, uint64_t size, bg_mmio *out);
void bg_vfio_unmap_bar(bg_vfio *v, bg_mmio *m);
/* VFIO_DEVICE_RESET; -BG_ENOTSUP when the device info lacks VFIO_DEVICE_FLAGS_RESET. */
int bg_vfio_reset(bg_vfio *v, const char *bdf);

/* 0 when an interrupt fired within timeout_ms (< 0: wait forever), -BG_ETIMEDOUT otherwise. */
int bg_vfio_wait_irq(bg_vfio *v, const char *bdf, int timeout_ms);

/* Type1: map size bytes at va (page-aligned) at a free IOVA inside one of the IOMMU's ranges (aligned to its smallest
 * page, and to 2 MiB when align_huge) into the container: *iova is what the device uses, and every other device of
 * the container. Not for no-IOMMU groups (-BG_EINVAL); -BG_ENOMEM when no range has room or the container holds as
 * many mappings as vfio_iommu_type1.dma_entry_limit allows; -BG_EINVAL when va or size is not whole IOMMU pages. */
int bg_vfio_dma_map(bg_vfio *v, const char *bdf, void *va, uint64_t size, bool align_huge, uint64_t *iova);
/* Unmap the range mapped at va (exactly as mapped). */
int bg_vfio_dma_unmap(bg_vfio *v, const char *bdf, void *va, uint64_t size);

#endif
