/* tests/unit/cdna3/tests.h: the test cases of the cdna3 suite. */
#ifndef BG_TESTS_CDNA3_TESTS_H
#define BG_TESTS_CDNA3_TESTS_H

#include <check.h>

TCase *asm_tests(void);     /* test_asm.c: wave64 instruction semantics from assembly, results computed in C */
TCase *kernel_tests(void);  /* test_kernels.c: LLVM IR kernels compiled by llc -mcpu=gfx942 */
TCase *mfma_tests(void);    /* test_mfma.c: MFMA against a C reference, operand layout, AccVGPRs */
TCase *fault_tests(void);   /* test_faults.c: reports, grants, waitcnt, XCC share */

#endif
