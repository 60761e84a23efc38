/* hcq/usage.h: the device memory a process holds, published next to the device's lock file.
 *
 * nvidia-smi shows each process's device memory; the kernel driver knows it. Here the process holding a device is
 * the driver, so it publishes its own use: <lock file>.mem (platform/pci_lock.h: <dir>/baregpu-<name>.lock.mem) holds
 * its pid, the DEV name it opened, the bytes of device memory allocated through bg_buf_alloc and not freed, and the
 * number of buffers. It is rewritten atomically (a temp file renamed over it) on every bg_buf_alloc / bg_buf_free
 * and removed by bg_dev_close; a file whose pid no longer holds the lock (a crashed process) is stale and ignored.
 * hcq_smi (list, watch, pids) reads it.
 *
 * Which lock a bg_dev holds is not recorded by the interfaces: on its first allocation (the kernel-argument arena
 * that bg_dev_create allocates right after the open) the device claims a lock this process holds that no other
 * open device of the process claimed; a second open of the same device (the backend shares its state, same priv)
 * shares the first's lock, and the file holds the sum of both. Two different devices opened at the same moment by
 * two threads may swap their files; devices without a lock file (CPU, the emulated USB bridge) publish nothing. */
#ifndef BG_HCQ_USAGE_H
#define BG_HCQ_USAGE_H

#include <stdint.h>
#include <sys/types.h>

typedef struct bg_dev bg_dev;

typedef struct bg_usage {
  pid_t pid;          /* the holder */
  char dev[48];       /* the DEV name it opened ("PCI+AMD:0") */
  uint64_t bytes;     /* device memory allocated and not freed */
  uint64_t buffers;
} bg_usage;

/* bg_buf_alloc (+size) and bg_buf_free (-size): update d's published use. Never fails the caller. */
void bg_usage_note(bg_dev *d, int64_t delta);
/* bg_dev_close: remove d's file. */
void bg_usage_close(const bg_dev *d);
/* The use published for the device whose lock is name ("0000:03:00.0", "usb:3-2"): 0 with *u filled; -BG_ENODEV
 * when nothing is published or the publisher no longer holds the lock; -BG_EFORMAT for a malformed file. */
int bg_usage_read(const char *name, bg_usage *u);

#endif
