/* tools/json.h: a small streaming JSON writer for the tools' --json output.
 *
 * Commas, nesting and indentation are tracked here, so callers just emit keys and values in
 * order. Strings are escaped per RFC 8259; bytes that are not valid UTF-8 become U+FFFD, so the
 * output stays valid JSON whatever sysfs or a USB descriptor returned. */
#ifndef BG_TOOLS_JSON_H
#define BG_TOOLS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

typedef struct jw {
  FILE *f;
  int depth;
  bool has_items[JW_MAX_DEPTH]; /* per level: a value was already written (comma needed) */
  bool is_obj[JW_MAX_DEPTH];
  bool after_key;
  bool bad;                     /* misuse (value without key in an object, depth overflow) */
  bool one_line;                /* the whole document on one line (JSON Lines: hcq_smi watch --json) */
} jw;

void jw_init(jw *w, FILE *f);
/* The same, writing the document on one line; jw_finish ends the line. */
void jw_init_line(jw *w, FILE *f);
void jw_obj_begin(jw *w);
void jw_obj_end(jw *w);
void jw_arr_begin(jw *w);
void jw_arr_end(jw *w);
void jw_key(jw *w, const char *k);
void jw_str(jw *w, const char *s); /* NULL writes null */
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v);
void jw_bool(jw *w, bool v);
void jw_null(jw *w);
/* Shorthands for key + value. */
void jw_kstr(jw *w, const char *k, const char *s);
void jw_kint(jw *w, const char *k, int64_t v);
void jw_kuint(jw *w, const char *k, uint64_t v);
void jw_kbool(jw *w, const char *k, bool v);
void jw_khex(jw *w, const char *k, uint64_t v, int digits); /* "0x%0*llx" as a string */
/* Finish the document: 0 when balanced and well-formed, -1 otherwise. */
int jw_finish(jw *w);

/* Write s as a quoted, escaped JSON string. */
void jw_write_string(FILE *f, const char *s);

#endif
