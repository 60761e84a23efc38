/* tests/unit/tools/json_check.h: a strict JSON (RFC 8259) validator for the tools' tests, so the
 * tests need no Python. Checks structure, string escapes, numbers and UTF-8. */
#ifndef BG_TESTS_JSON_CHECK_H
#define BG_TESTS_JSON_CHECK_H

#include <stddef.h>

/* 0 when s[0..n) is exactly one JSON value (surrounding whitespace allowed); otherwise -1 and
 * err gets "offset N: what". */
int json_check(const char *s, size_t n, char *err, size_t errn);

#endif
