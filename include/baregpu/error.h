/* baregpu/error.h: the error model and logging shared by every layer above ir/.
 *
 * THE RULE every public function of baregpu follows (hcq.h, tensor.h, compile.h):
 *   1. A function that can fail returns int: 0 on success (or a non-negative count or id where its comment says so)
 *      and a negative BG_E* code on failure, after recording a message with context in a thread-local buffer
 *      that bg_last_error() returns on the failing thread, e.g.
 *      "DEV=AMD:x: index 'x' is not a number; valid forms: ...". Nothing aborts on bad input.
 *   2. Results come back through out-parameters, written only on success; a constructor (bg_*_open, _new,
 *      _alloc, _load) sets *out to NULL on failure. No value doubles as an error marker (0, NULL, -1).
 *   3. A function that returns something else (a value, a pointer, void) cannot fail: getters of host-side state
 *      and frees. The exception is bg_dev_close, which always succeeds at closing and leaves a failed final
 *      synchronize in bg_last_error() and the log.
 *   4. Two kinds of calls build something and report failure later, each through the same code and message:
 *      - queue recording (bg_queue_wait, ..., bg_queue_copy) returns the queue; the first error is kept on the
 *        queue and bg_queue_submit returns it (-code, the same message in bg_last_error());
 *      - tensor-building calls (bg_tensor *bg_tn_...) record the message in bg_last_error() (BG_EINVAL), latch
 *        the first one on the context (bg_tctx_error) and return the context's error tensor, which later ops
 *        pass through; realize/read then return -BG_EINVAL with the latched message. int-returning tensor calls
 *        follow 1 and latch their error on the context too.
 * Ownership: what a function allocates is freed with its own bg_*_free/_close (named next to each function);
 * strings returned as const char * belong to the library and live as long as the object they came from. */
#ifndef BAREGPU_ERROR_H
#define BAREGPU_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bg_errcode {
  BG_OK = 0,
  BG_EINVAL = 1,    /* bad argument or malformed input */
  BG_ENODEV = 2,    /* no such device, or it vanished */
  BG_EPERM = 3,     /* missing privilege */
  BG_EIO = 4,       /* transfer or hardware access failed */
  BG_ETIMEDOUT = 5, /* a wait made no progress within its timeout */
  BG_ENOMEM = 6,    /* host or device memory exhausted */
  BG_ENOTSUP = 7,   /* the device cannot do this (e.g. no copy engine) */
  BG_EHANG = 8,     /* the device hung or faulted */
  BG_EBUSY = 9,     /* in use by another process */
  BG_ECOMPILE = 10, /* a kernel failed to compile */
  BG_EFORMAT = 11,  /* a file (firmware, ELF, table) is malformed */
  BG_EEXIST = 12,   /* already there (e.g. a GPU VA already mapped) */
  BG_ENOENT = 13,   /* not there (e.g. a missing file, an unmapped GPU VA) */
};

/* Message of the last failure on this thread ("" if none); thread-local storage, valid until this thread's next
 * failing call. Thread safety: every function here may be called from any thread. */
const char *bg_last_error(void);
/* Name of a code: "BG_EINVAL", ... (accepts the negative form too). */
const char *bg_strerror(int code);
/* Record a message and return -code: `return bg_error(BG_EINVAL, "bad %s", x);` */
int bg_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int bg_verror(int code, const char *fmt, va_list ap);
/* Prefix the current message with context: "psp: " + "header size ...". Returns err unchanged. */
int bg_error_context(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bg_clear_error(void);

/* Logging: BG_DEBUG=0..4 (1 devices and bring-up steps, 2 kernels and submits, 3 register writes,
 * 4 everything). Messages go to stderr prefixed with the level. */
int bg_debug_level(void);
void bg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define BG_LOG(level, ...) do { if (bg_debug_level() >= (level)) bg_log((level), __VA_ARGS__); } while (0)

#ifdef __cplusplus
}
#endif
#endif
