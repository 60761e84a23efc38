/* platform/vfio.h: interrupts through VFIO (tinygrad tinygrad/runtime/support/system.py System.vfio).
 *
 * VFIO serves only interrupts here: BARs and config still go through sysfs, and DMA uses
 * physical addresses from pagemap with no IOMMU mapping. So the group must be a no-IOMMU group
 * (/dev/vfio/noiommu-N, vfio's enable_unsafe_noiommu_mode=1): a group behind a translating
 * IOMMU is refused with a message saying why. Paths: sysfs under bg_pci_sysfs_root(), device
 * nodes under $BG_DEV_ROOT (default /dev) so tests can point both at fake trees. */
#ifndef BG_HCQ_VFIO_H
#define BG_HCQ_VFIO_H

#include <stdbool.h>

typedef struct bg_vfio {
  int container, group, device, irq_fd;  /* -1 when not open */
  int group_id;
  bool intx;     /* INTx (needs an unmask after each interrupt) rather than MSI */
} bg_vfio;

const char *bg_vfio_dev_root(void);
/* 0 when the vfio module is loaded, -BG_ENOTSUP with the commands to load it otherwise. */
int bg_vfio_available(void);
/* Bind bdf (no driver bound) to vfio-pci: driver_override + drivers_probe. */
int bg_vfio_bind(const char *bdf);
/* Container, no-IOMMU group, device fd, and an eventfd fed by MSI (or INTx). */
int bg_vfio_open(const char *bdf, bg_vfio *v);
/* 0 when an interrupt fired within timeout_ms (< 0: wait forever), -BG_ETIMEDOUT otherwise. */
int bg_vfio_wait_irq(bg_vfio *v, const char *bdf, int timeout_ms);
void bg_vfio_close(bg_vfio *v);

#endif
