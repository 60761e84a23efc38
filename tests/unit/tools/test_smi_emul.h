/* tests/unit/tools/test_smi_emul.h: hcq_smi's device commands (list owners, pids, kill_pids,
 * unbind, bind, reset) run as the real executable against the emulated tree of tests/mockgpu. */
#ifndef BG_TESTS_TEST_SMI_EMUL_H
#define BG_TESTS_TEST_SMI_EMUL_H

#include <check.h>

TCase *tcase_smi_emul(void);

#endif
