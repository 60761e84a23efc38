/* tests/unit/cdna3/test_main.c: the `cdna3` suite (the emulated gfx942 wave64 shader core). Exits 77 (skipped)
 * when the LLVM tools that build its inputs were not found at build time. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tests.h"

int main(void) {
  if (!have_llvm()) {
    printf("cdna3: llvm-mc/llc not found at build time: skipped\n");
    return 77;
  }
  Suite *s = suite_create("cdna3");
  suite_add_tcase(s, asm_tests());
  suite_add_tcase(s, kernel_tests());
  suite_add_tcase(s, mfma_tests());
  suite_add_tcase(s, fault_tests());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
