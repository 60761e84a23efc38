/* platform/pci_hook.h: where an emulated PCI device (tests/mockgpu) attaches to the sysfs path.
 *
 * The sysfs code runs unchanged over a fake tree (BG_SYSFS_ROOT): it opens, reads and writes
 * the same files. A model registered for that root is told about each open and each write, so
 * it can refuse them (fault injection: EACCES for "not root") and react to them (a write of
 * "1" to reset, a new size in resourceN_resize, a config-space write); the model rewrites the
 * files to what the kernel would show next. Only the lowest access layer differs: BAR mappings
 * and DMA translation come from the model instead of mmap(resourceN) and /proc/self/pagemap.
 *
 * Paths handed to the hooks are relative to the root: "bus/pci/devices/0000:03:00.0/reset". */
#ifndef BG_HCQ_PCI_HOOK_H
#define BG_HCQ_PCI_HOOK_H

#include <stddef.h>
#include <stdint.h>

#include "platform/mmio.h"

typedef struct bg_pci_hooks {
  /* Before opening rel with open(2) flags: 0 or -errno to fail the open with. */
  int (*open)(void *ctx, const char *rel, int oflags);
  /* After n bytes were written at off of rel: 0 or -errno the write fails with. */
  int (*written)(void *ctx, const char *rel, uint64_t off, const void *data, size_t n);
  /* A view of [off, off+size) of BAR bar: 0, 1 when the model does not emulate that BAR (the
   * file is mmapped as plain memory then), or -errno. */
  int (*bar_map)(void *ctx, const char *bdf, int bar, uint64_t off, uint64_t size, bg_mmio *out);
  void (*bar_unmap)(void *ctx, bg_mmio *m);
  /* Bus addresses of npages locked 4 KiB pages at va (flags: bg_sysmem_flags); 0 or -errno. */
  int (*dma_map)(void *ctx, const char *bdf, void *va, size_t npages, unsigned flags, uint64_t *bus);
  void (*dma_unmap)(void *ctx, const char *bdf, void *va, size_t npages);
  /* The root's VFIO system calls (platform/vfio_sys.h), NULL: the kernel's. */
  const struct bg_vfio_sys *vfio;
} bg_pci_hooks;

/* Attach hooks to sysfs root (a path BG_SYSFS_ROOT will hold); NULL hooks detach. One set per
 * root; 0 or -BG_ENOMEM/-BG_EINVAL. */
int bg_pci_set_hooks(const char *root, const bg_pci_hooks *hooks, void *ctx);
/* The hooks of the current root (bg_pci_sysfs_root()), or NULL. */
const bg_pci_hooks *bg_pci_hooks_current(void **ctx);

#endif
