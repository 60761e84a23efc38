/* tests/mockgpu/mock_vfio.h: an emulated Linux VFIO (container, group, vfio-pci device) for the fake sysfs tree.
 *
 * The tree's hooks carry this module's system-call table (platform/vfio_sys.h), so platform/vfio.c opens
 * <BG_DEV_ROOT>/vfio/vfio and the group nodes, issues its ioctls, mmaps BARs and reads config space here. Behaviour
 * follows Linux (drivers/vfio/vfio_main.c, group.c, container.c, vfio_iommu_type1.c, pci/vfio_pci_core.c,
 * pci/vfio_pci_intrs.c) with the uapi structs of <linux/vfio.h>:
 *   container: API version VFIO_API_VERSION; CHECK_EXTENSION answers TYPE1/TYPE1v2 (the type1 module) and
 *     NOIOMMU only while no-IOMMU mode is on; SET_IOMMU only with a group attached and only once (EINVAL), a
 *     backend the groups do not allow is ENODEV; GET_INFO (type1 only, else ENOTTY) reports the page sizes and the
 *     capability chain with argsz as vfio_iommu_type1_get_info handles it; MAP_DMA/UNMAP_DMA (type1 only, else
 *     ENOTTY) check argsz, flags, alignment to the smallest IOMMU page, wrap-around, overlap (EEXIST), the mapping
 *     limit (ENOSPC), the IOVA ranges (EINVAL), unmapped vaddr (EFAULT) and a bisected mapping on unmap (EINVAL);
 *     the IOVAs become the bus addresses the emulated device's DMA reaches. The ranges, page sizes and limit come
 *     from MOCKGPU_VFIO_IOVA, MOCKGPU_VFIO_PGSIZES and the tree's dma_entry_limit (tests/mockgpu/README.md).
 *   group: one open at a time, across threads and processes (flock on the node: EBUSY); GET_STATUS viable only when
 *     no device of the group is bound to a host driver; SET_CONTAINER once (EINVAL), a non-viable group EBUSY;
 *     GET_DEVICE_FD needs a container with an IOMMU backend and a viable group (EINVAL), a device of the group bound
 *     to vfio-pci (ENODEV); opening the device enables it and resets it as vfio_pci_core_enable does.
 *   device: GET_INFO (VFIO_DEVICE_FLAGS_PCI, RESET unless the function has no reset), GET_REGION_INFO (BARs at
 *     VFIO_PCI_INDEX_TO_OFFSET, mmappable when memory; config 4 KiB), GET_IRQ_INFO (INTx from the pin, MSI from its
 *     capability), SET_IRQS (the validation of vfio_set_irqs_validate_and_prepare; MSI trigger, INTx trigger, mask,
 *     unmask; an unsupported action ENOTTY), RESET (EINVAL without a reset method); mmap of a BAR serves the same BAR
 *     hooks as the sysfs path; pread/pwrite of config and BAR regions.
 * Every fd handed out is a real one (the node file, dup'd for devices), so leaks show in /proc/self/fd. */
#ifndef BG_MOCKGPU_MOCK_VFIO_H
#define BG_MOCKGPU_MOCK_VFIO_H

#include <stdbool.h>

#include "mock_sysfs.h"

struct bg_vfio_sys;
/* The system-call table the tree's hooks carry. */
extern const struct bg_vfio_sys mock_vfio_syscalls;
/* The emulated VFIO's state, made before any thread opens a node (mock_sysfs_add_vfio). 0 or -ENOMEM. */
int mock_vfio_init(mock_sysfs *t);
/* Close what the driver left open (tree teardown). */
void mock_vfio_free(mock_sysfs *t);

/* The device raises its interrupt: MSI signals its eventfd; INTx signals it and masks itself (automasked), a further
 * one while masked stays pending until the unmask. 1 delivered, 0 pending or lost (no trigger set), -ENODEV. */
int mock_vfio_irq(mock_sysfs *t, const char *bdf);
/* Emulated VFIO files open now (containers, groups, devices). */
unsigned mock_vfio_open_files(const mock_sysfs *t);
/* IOVA mappings of all containers. */
unsigned mock_vfio_dma_maps(const mock_sysfs *t);

#endif
