/* tests/unit/mocknv/mocknv_tests.h: the test cases of the mocknv suite, one adder per file. */
#ifndef BG_TESTS_MOCKNV_TESTS_H
#define BG_TESTS_MOCKNV_TESTS_H

#include <check.h>

void mocknv_add_rm(Suite *s);
void mocknv_add_gpu(Suite *s);

#endif
