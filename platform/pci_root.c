/* platform/pci_root.c: bg_pci_sysfs_root (platform/pci_scan.h). Its own object, apart from pci_scan.c: the sysfs readers
 * (pci_hook.c, and through it the emulator module tests/mockgpu/libbaregpu-mock.so) need only the root, while
 * pci_scan.c names chips through the backends' interfaces (bg_chip_lookup) and so links every backend. */
#include <stdlib.h>

#include "platform/pci_scan.h"

const char *bg_pci_sysfs_root(void) {
  const char *r = getenv("BG_SYSFS_ROOT");
  return r && *r ? r : "/sys";
}
