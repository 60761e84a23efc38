/* baregpu/error.h: the error model and logging shared by every layer above ir/.
 *
 * Functions return 0 (or a count) on success and a negative BG_E* code on failure, after recording a
 * message with context in a thread-local buffer that bg_last_error() returns, e.g.
 * "DEV=AMD:x: index 'x' is not a number; valid forms: ...". Nothing aborts on bad input. */
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
};

/* Message of the last failure on this thread ("" if none). */
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
