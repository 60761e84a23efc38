/* tests/unit/rdna3/test_main.c: the `rdna3` suite (the emulated gfx11 shader core and its gfx12 variant). Exits 77
 * (skipped) when the LLVM tools that build its inputs were not found at build time. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tests.h"

int main(void) {
  if (!have_llvm()) {
    printf("rdna3: llvm-mc/llc not found at build time: skipped\n");
    return 77;
  }
  Suite *s = suite_create("rdna3");
  suite_add_tcase(s, asm_tests());
  suite_add_tcase(s, kernel_tests());
  suite_add_tcase(s, fault_tests());
  suite_add_tcase(s, bits_tests());
  suite_add_tcase(s, limit_tests());
  suite_add_tcase(s, wmma_tests());
  suite_add_tcase(s, stats_tests());
  suite_add_tcase(s, f64_tests());
  suite_add_tcase(s, gfx12_kernel_tests());
  suite_add_tcase(s, gfx12_tests());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
