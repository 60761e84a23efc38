/* tests/conformance/conformance.h: the HCQ conformance suite's small test framework.
 *
 * A test is a function of the per-device context returning CF_PASS, CF_FAIL or CF_SKIP. Queues,
 * signals, buffers and host memory a test takes through the cf_* helpers are released by the
 * runner after the test, whether it passed or not, so a test may return early from anywhere. */
#ifndef BG_CONFORMANCE_H
#define BG_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/hcq.h"

enum { CF_PASS = 0, CF_FAIL = 1, CF_SKIP = 2 };

/* Host waits in tests: long enough for a slow emulated device, short enough to fail a stuck one. */
#define CF_TIMEOUT_MS 10000

#define CF_MAX_RES 64

typedef struct cf_ctx {
  bg_dev *d;                  /* NULL for device-independent tests */
  char dev[48];               /* the name printed on each line */
  bool has_copy;
  bool kernels;               /* kernels are available for this device's arch */
  bool kernels_failed;        /* they should be, but compiling or loading them failed */
  char no_kernels[1024];      /* why not */
  bg_program *add1;           /* add1(out f32*, in f32*, n i32): out[i] = in[i] + 1, i = gid.x*lsz.x + l */
  bg_program *count;          /* count(out i32*): out[0] += work-items; out[1..3] = gsz, out[4..6] = lsz */
  bg_buf *a, *b;              /* fixture: a = [0, 1], b = [0, 0] (float32) before every test */
  enum bg_queue_kind qk;      /* the queue kind of a per-queue-type test */
  char msg[1536];             /* failure or skip reason */
  /* resources of the running test */
  bg_queue *queues[CF_MAX_RES];
  size_t nqueues;
  bg_signal *sigs[CF_MAX_RES];
  size_t nsigs;
  bg_buf *bufs[CF_MAX_RES];
  size_t nbufs;
  void *mem[CF_MAX_RES];
  size_t nmem;
} cf_ctx;

typedef int (*cf_fn)(cf_ctx *c);

enum cf_flags {
  CF_PER_QUEUE = 1u << 0,     /* run once per queue type (compute, and copy when present) */
  CF_NEEDS_KERNELS = 1u << 1, /* skipped when the device has no kernels in this suite */
  CF_NEEDS_COPY = 1u << 2,    /* skipped without a copy queue */
  CF_REOPENS = 1u << 3,       /* leaves the device in its error state on purpose: reopened afterwards */
};

typedef struct cf_test {
  const char *name;
  cf_fn fn;
  unsigned flags;
} cf_test;

/* Test tables (hcq_sync.c, hcq_work.c, conformance.c). */
extern const cf_test cf_sync_tests[];
extern const size_t cf_nsync_tests;
extern const cf_test cf_work_tests[];
extern const size_t cf_nwork_tests;

/* ---- outcomes ---- */
int cf_fail(cf_ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cf_skip(cf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CF_EXPECT(cond, ...)                                                                    \
  do {                                                                                          \
    if (!(cond)) return cf_fail(c, __LINE__, __VA_ARGS__);                                      \
  } while (0)
/* Run an API call that must succeed (return >= 0). */
#define CF_OK(expr)                                                                             \
  do {                                                                                          \
    int r_ = (expr);                                                                            \
    if (r_ < 0) return cf_fail(c, __LINE__, "%s returned %s: %s", #expr, bg_strerror(r_), bg_last_error()); \
  } while (0)

/* ---- resources released after the test ---- */
int cf_queue(cf_ctx *c, enum bg_queue_kind kind, bg_queue **out);
int cf_signal(cf_ctx *c, uint64_t init, bg_signal **out);
int cf_buf(cf_ctx *c, uint64_t size, unsigned flags, bg_buf **out);
void *cf_malloc(cf_ctx *c, size_t n);

/* ---- helpers ---- */
const char *cf_kind_name(enum bg_queue_kind k);
uint64_t cf_now_us(void);
/* Append the usual timeline bracket with symbolic timeline address and value bound at submit. */
void cf_tl_wait(bg_queue *q);    /* wait(timeline, tv - 1) */
void cf_tl_signal(bg_queue *q);  /* signal(timeline, tv): claims a timeline value per submit */
/* Submit and wait until the timeline reaches the value the submit claimed (tv before submit). */
int cf_submit_wait(cf_ctx *c, bg_queue *q, const uint64_t *vars, size_t nvars);
/* True when msg mentions v in decimal or in hex (0x...). */
bool cf_mentions(const char *msg, uint64_t v);
/* The fixture's buffers as floats. */
int cf_read_f32(const bg_buf *b, float *out, size_t n);
int cf_write_f32(bg_buf *b, const float *v, size_t n);

/* ---- command streams (cf_stream.c) ---- */
/* cf_submit_wait(q) with the device's backend submit wrapped: *bytes (malloc'd, the caller frees) gets every command
 * byte that submit pushed to the ring, after lowering and patching. */
int cf_capture_submit(cf_ctx *c, bg_queue *q, uint8_t **bytes, size_t *len);
/* Whether a captured compute stream has the device's memory barrier before its first exec: 1 yes, 0 no, -1 no reader
 * for this device kind; why says what was found. */
int cf_stream_has_barrier(const bg_dev *d, const uint8_t *cmd, size_t len, char *why, size_t n);
/* Its AMD half (cf_stream_amd.c: am/ and the CPU backend both define struct bg_queue_hw). */
int cf_stream_amd_barrier(const bg_dev *d, const uint8_t *cmd, size_t len, char *why, size_t n);

/* ---- kernels (cf_kernels.c) ---- */
/* Load add1 and count for c->d's arch into c (c->kernels = true); an arch without a compiler in this
 * build leaves c->kernels false with the reason in c->no_kernels. 0, or -BG_E* when compiling or
 * loading failed. */
int cf_load_kernels(cf_ctx *c);
/* Free the binaries compiled for every arch (process exit). */
void cf_kernels_free(void);

#endif
