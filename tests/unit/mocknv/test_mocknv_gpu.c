/* tests/unit/mocknv/test_mocknv_gpu.c: placeholder */
#include "mocknv_tests.h"
void mocknv_add_gpu(Suite *s) { (void)s; }
