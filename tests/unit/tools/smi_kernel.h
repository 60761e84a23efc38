/* tests/unit/tools/smi_kernel.h: the kernel's side of the sysfs writes another process (the
 * hcq_smi executable) makes in an emulated tree (tests/mockgpu/mock_sysfs.h).
 *
 * The tree's hooks (platform/pci_hook.h) live in the test process, so a write by another process to
 * one of the tree's files reaches no model. smi_kernel watches chosen attributes (regular files,
 * as in sysfs) with inotify from a thread of the test process: when a writer closes one, the
 * thread reads the value, checks it against the one the test announced (smi_kernel_expect),
 * applies it to the model through the hooks (the model moves the driver links, counts a reset)
 * and empties the file. The library waits (bounded) for the driver link after writing bind or
 * unbind, as it must for drivers that probe asynchronously, so it sees the new state. Writes
 * nobody announced, or other values, are failures. Queries settle first: every write closed
 * before the call has been served. */
#ifndef BG_TESTS_SMI_KERNEL_H
#define BG_TESTS_SMI_KERNEL_H

#include <stddef.h>

typedef struct smi_kernel smi_kernel;

/* Serve rels (relative to BG_SYSFS_ROOT, as platform/pci writes them: "bus/pci/drivers/amdgpu/unbind",
 * "bus/pci/devices/0000:03:00.0/reset"), (re)creating them as empty regular files. NULL on failure. */
smi_kernel *smi_kernel_start(const char *const *rels, size_t n);
/* The next write to rel will be value (the trailing newline is not compared). */
void smi_kernel_expect(smi_kernel *k, const char *rel, const char *value);
/* Writes served on rel so far. */
unsigned smi_kernel_writes(smi_kernel *k, const char *rel);
/* Failures so far ("" when none): unexpected writes, other values, the model refusing. */
const char *smi_kernel_failures(smi_kernel *k);
void smi_kernel_clear_failures(smi_kernel *k);
/* Stop the thread; the files stay in the tree (mock_sysfs_free removes them). */
void smi_kernel_stop(smi_kernel *k);

#endif
