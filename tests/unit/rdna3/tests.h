/* tests/unit/rdna3/tests.h: the test cases of the rdna3 suite. */
#ifndef BG_TESTS_RDNA3_TESTS_H
#define BG_TESTS_RDNA3_TESTS_H

#include <check.h>

TCase *asm_tests(void);     /* test_asm.c: instructions from assembly, results computed in C */
TCase *kernel_tests(void);  /* test_kernels.c: LLVM IR kernels compiled by llc */
TCase *fault_tests(void);   /* test_faults.c: reports for unknown encodings, faults, budget */
TCase *bits_tests(void);    /* test_bits.c: sign-bit and leading-zero counts */
TCase *limit_tests(void);   /* test_limits.c: s_waitcnt, VGPR and LDS grants, the K$ */
TCase *wmma_tests(void);    /* test_wmma.c: V_WMMA_* against a C reference, lane layout, strictness */
TCase *stats_tests(void);   /* test_stats.c: shader statistics and the LDS bank model */
TCase *f64_tests(void);     /* test_f64.c: the float64 instructions of LLVM's float64 lowering */
TCase *gfx12_kernel_tests(void);  /* test_gfx12.c: the kernels of test_kernels.c compiled for gfx1200 */
TCase *gfx12_tests(void);   /* test_gfx12.c: gfx12 encodings, split wait counters, gfx12 WMMA */

#endif
