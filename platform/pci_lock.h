/* platform/pci_lock.h: one owner per device, through lock files.
 *
 * <dir>/baregpu-<name>.lock (dir: $BG_LOCK_DIR, else /run/lock when writable, else /tmp) holds
 * the owner's pid; the owner keeps an flock(LOCK_EX) on it, which the kernel drops when the
 * owner dies, so a crashed process never leaves a device locked: a file left by a dead owner is
 * taken over by the next acquire. name is a BDF, or another interface's device name ("usb:3-2").
 * hcq_smi lists owners and kills them (pids, kill_pids). Lock files are opened with O_NOFOLLOW |
 * O_NONBLOCK and must be regular files: a FIFO, directory or link at the path is an error naming
 * it, never a block. One process takes a device's lock once: its bg_devs share the open device
 * (hcq/dev_internal.h, bg_phys_lock). */
#ifndef BG_HCQ_PCI_LOCK_H
#define BG_HCQ_PCI_LOCK_H

#include <stddef.h>
#include <sys/types.h>

typedef struct bg_pci_lock_entry {
  char name[64];     /* "0000:03:00.0" */
  char path[512];    /* the lock file */
  pid_t pid;         /* owner; 0 when nobody holds the lock, -1 when held but no pid written yet */
} bg_pci_lock_entry;

const char *bg_pci_lock_dir(void);
/* Take the lock of name: *fd keeps it. -BG_EBUSY "device 0000:03:00.0 is in use by pid N". */
int bg_pci_lock_acquire(const char *name, int *fd);
/* Drop it (the file stays: removing it could split a lock between two openers). */
void bg_pci_lock_release(int fd);
/* The pid holding name's lock: 0 when free (also when no lock file exists), -1 when held by a
 * process that has not written its pid yet. */
int bg_pci_lock_owner(const char *name, pid_t *pid);
/* Every lock file in the lock dir with its owner, sorted by name; free with free(). */
int bg_pci_lock_list(bg_pci_lock_entry **out, size_t *n);

#endif
