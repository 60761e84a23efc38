/* tests/conformance/run_child.h: run a program with its stdout and stderr captured, for the small drivers that check
 * what a tool or the suite prints (debug_log.c, tiny_bad_dev.c). */
#ifndef BG_TESTS_RUN_CHILD_H
#define BG_TESTS_RUN_CHILD_H

#define RUN_CHILD_MAX_OUT (1u << 20)

/* Run argv (argv[0] a path) with the caller's environment; its stdout and stderr, NUL-terminated and at most
 * RUN_CHILD_MAX_OUT bytes each, in *out and *err (malloc'd; free them). The exit status, 128 + the signal that ended
 * it, or -1 when it could not be run (perror says why). The capture files live in TMPDIR and are unlinked at once. */
int run_child(char *const argv[], char **out, char **err);

#endif
