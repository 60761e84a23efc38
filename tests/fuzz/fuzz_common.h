/* tests/fuzz/fuzz_common.h: what the targets that read files share: one scratch directory per process (removed at
 * exit) and writing an input into it. */
#ifndef BG_TESTS_FUZZ_COMMON_H
#define BG_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The process's scratch directory (mkdtemp under TMPDIR, else /dev/shm, else /tmp); aborts when none can be made, since a target that
 * cannot write its input would test nothing. */
const char *fuzz_tmpdir(void);
/* dir/name in buf (aborts when it does not fit). */
void fuzz_path(char *buf, size_t n, const char *name);
/* Replace the file at path with data (aborts on a write error). */
void fuzz_write(const char *path, const uint8_t *data, size_t size);

#endif
