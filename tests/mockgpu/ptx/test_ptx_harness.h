/* tests/mockgpu/ptx/test_ptx_harness.h: the `ptx-interp` suite's helpers: LLVM IR -> PTX through the
 * LLVM-C NVPTX target (what the renderer of issue 14 uses), a host arena as global memory, launches. */
#ifndef BG_TEST_PTX_HARNESS_H
#define BG_TEST_PTX_HARNESS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "ptx.h"

#define ARENA_BASE 0x100000000ull
#define ARENA_SIZE (1u << 20)
extern uint8_t arena[ARENA_SIZE];
/* Instruction budget of run_ptx/run_ir launches (5e7 unless a test lowers it). */
extern uint64_t test_max_insts;

/* PTX for the IR text, cpu "sm_80"/"sm_90", "+O3" appended: the IR optimized by LLVM's default<O3> pipeline
 * first. NULL with the LLVM message printed. free() it. */
char *ir_to_ptx(const char *ir, const char *cpu);
/* Parse and run: params are 8-byte slots packed per ptx_param_layout. Returns ptx_run's value. */
int run_ptx(const char *ptx, uint32_t grid, uint32_t block, const uint64_t *args, unsigned nargs, ptx_report *rep);
int run_ir(const char *ir, uint32_t grid, uint32_t block, const uint64_t *args, unsigned nargs, ptx_report *rep,
           const char *cpu);

TCase *kernel_tests(void);
TCase *strict_tests(void);
TCase *more_tests(void);
TCase *ops_tests(void);

#endif
