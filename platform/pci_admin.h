/* platform/pci_admin.h: administrative actions on a PCI function by address, through sysfs under
 * bg_pci_sysfs_root(): unbind/bind a kernel driver, function reset, removing sibling functions.
 * For hcq_smi (unbind, bind, reset) and for bg_pci_open_sysfs. Each refuses with
 * "device X is in use by pid N" while another process holds the device's lock. */
#ifndef BG_HCQ_PCI_ADMIN_H
#define BG_HCQ_PCI_ADMIN_H

#include <stddef.h>

/* Unbind the bound kernel driver (nothing to do when none); was[n] gets its name or "". */
int bg_pci_unbind(const char *bdf, char *was, size_t n);
/* Bind driver (e.g. "amdgpu") to bdf, which must have no driver bound. */
int bg_pci_bind(const char *bdf, const char *driver);
/* Function reset through the kernel (write 1 to reset); -BG_ENOTSUP when it has no method. */
int bg_pci_reset_bdf(const char *bdf);
/* Remove functions 1..7 of bdf's slot (e.g. HDMI audio sharing the GPU) from the kernel's view. */
int bg_pci_remove_siblings(const char *bdf);

#endif
