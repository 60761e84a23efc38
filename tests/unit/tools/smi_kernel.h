/* tests/unit/tools/smi_kernel.h: the kernel's side of the sysfs writes another process (the
 * hcq_smi executable) makes in an emulated tree (tests/mockgpu/mock_sysfs.h).
 *
 * The tree's hooks (hcq/pci_hook.h) live in the test process, so a write by another process to
 * one of the tree's regular files reaches no model. smi_kernel turns chosen attributes into
 * FIFOs served by a thread of the test process, which applies each write to the model through
 * the tree's hooks before the writer's write(2) returns, as the kernel does:
 *   - each FIFO's pipe is kept full, so a writer blocks in write(2);
 *   - inotify reports the writer's open; the thread applies the value the test announced
 *     (smi_kernel_expect) through the hooks (the model moves the driver links, counts a reset),
 *     then drains the pipe, reads what the writer wrote and checks it against the announcement.
 * A check right after the write (bg_pci_unbind reads the driver link again) therefore sees the
 * new state, without sleeps or races. Writes nobody announced, or other values, are failures. */
#ifndef BG_TESTS_SMI_KERNEL_H
#define BG_TESTS_SMI_KERNEL_H

#include <stddef.h>

typedef struct smi_kernel smi_kernel;

/* Serve rels (relative to BG_SYSFS_ROOT, as hcq/pci writes them: "bus/pci/drivers/amdgpu/unbind",
 * "bus/pci/devices/0000:03:00.0/reset"), replacing the files with FIFOs. NULL on failure. */
smi_kernel *smi_kernel_start(const char *const *rels, size_t n);
/* The next write to rel will be value (the trailing newline is not compared). */
void smi_kernel_expect(smi_kernel *k, const char *rel, const char *value);
/* Writes served on rel so far. */
unsigned smi_kernel_writes(smi_kernel *k, const char *rel);
/* Failures so far ("" when none): unexpected writes, other values, the model refusing. */
const char *smi_kernel_failures(smi_kernel *k);
void smi_kernel_clear_failures(smi_kernel *k);
/* Stop the thread; the FIFOs stay in the tree (mock_sysfs_free removes them). */
void smi_kernel_stop(smi_kernel *k);

#endif
