/* tests/unit/tools/smi_run.h: run the hcq_smi executable from a Check test and capture what it
 * printed. The environment (BG_SYSFS_ROOT, BG_LOCK_DIR, ...) is the test process's. */
#ifndef BG_TESTS_SMI_RUN_H
#define BG_TESTS_SMI_RUN_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct run_result {
  int status;  /* exit status, or -1 when it did not exit normally */
  int signal;  /* the signal that ended it, else 0 */
  char *out, *err;
} run_result;

typedef struct run_opts {
  bool as_nobody;                           /* drop root to uid/gid 65534 before exec */
  void (*before_exec)(pid_t pid, void *user); /* called in the test with the child's pid before it execs */
  void *user;
} run_opts;

/* The path of the binary under test (argv[1] of the suite). */
extern const char *smi_path;

/* Run hcq_smi with args (NULL-terminated, at most 14); stdout and stderr go to temp files, so no
 * pipe can fill. */
run_result run_smi(const char *const *args);
run_result run_smi_ex(const char *const *args, const run_opts *o);
void run_free(run_result *r);
/* r->out is exactly one JSON document (json_check.h). */
void assert_valid_json(const run_result *r);

#endif
