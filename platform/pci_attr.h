/* platform/pci_attr.h: sysfs files under bg_pci_sysfs_root(), with errors that name the path.
 *
 * rel is a path relative to the root ("bus/pci/devices/0000:03:00.0/enable"). Every open and
 * write goes past the emulated device's hooks (platform/pci_hook.h) when one is attached to the
 * root. Errors: EACCES/EPERM become -BG_EPERM with "run as root", ENOENT/ENODEV -BG_ENODEV,
 * EBUSY -BG_EBUSY, anything else -BG_EIO. Internal to platform/pci_*. */
#ifndef BG_HCQ_PCI_ATTR_H
#define BG_HCQ_PCI_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BG_SYSFS_REL_MAX 256

/* BG_E* code for an errno of a sysfs access. */
int bg_sysfs_errcode(int e);
/* Record "<what> <root>/<rel>: <strerror>[: run as root]" and return the code. */
int bg_sysfs_fail(int e, const char *what, const char *rel);

/* "<root>/<rel>" into buf[n]. */
void bg_sysfs_path(char *buf, size_t n, const char *rel);
bool bg_sysfs_exists(const char *rel);
int bg_sysfs_open(const char *rel, int oflags, int *fd);
/* A small attribute, trailing newline and spaces stripped. */
int bg_sysfs_read(const char *rel, char *buf, size_t n);
/* One write(2) of value, as sysfs attributes need. */
int bg_sysfs_write(const char *rel, const char *value);
/* pwrite on an open attribute (config), followed by the written hook. */
int bg_sysfs_pwrite(int fd, const char *rel, uint64_t off, const void *data, size_t n);
/* Name of the kernel driver bound to bdf into name[n] ("" when none). */
int bg_sysfs_driver(const char *bdf, char *name, size_t n);
/* "DDDD:BB:DD.F" with hex digits. */
bool bg_pci_bdf_valid(const char *bdf);

#endif
