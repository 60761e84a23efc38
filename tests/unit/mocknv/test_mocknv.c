/* tests/unit/mocknv/test_mocknv.c: the emulated nvidia kernel module and NVIDIA GPUs (tests/mockgpu/nv), driven
 * through their system-call table with parameter blocks and pushbuffers written by the tests. */
#include <stdlib.h>

#include "mocknv_tests.h"

int main(void) {
  Suite *s = suite_create("mocknv");
  mocknv_add_rm(s);
  mocknv_add_gpu(s);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
