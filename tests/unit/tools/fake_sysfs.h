/* tests/unit/tools/fake_sysfs.h: build a small /sys/bus/pci tree in a temp dir, for scans through
 * BG_SYSFS_ROOT: an AMD Navi31 (amdgpu bound, x16 link), an NVIDIA H200 (no driver, no link files)
 * and a virtio function. */
#ifndef BG_TESTS_FAKE_SYSFS_H
#define BG_TESTS_FAKE_SYSFS_H

#include <stddef.h>

/* Create the tree under a new temp dir, written to root[n]. 0 or -1. */
int fake_sysfs_create(char *root, size_t n);
/* Remove it again. */
void fake_sysfs_remove(const char *root);

#endif
