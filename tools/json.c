/* tools/json.c: streaming JSON writer (tools/json.h). */
#include <inttypes.h>

#include "tools/json.h"
#include "tools/tool_err.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid (overlong, surrogate, > U+10FFFF). */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int n;
  uint32_t cp, min;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) { n = 2; cp = c & 0x1f; min = 0x80; }
  else if ((c & 0xf0) == 0xe0) { n = 3; cp = c & 0x0f; min = 0x800; }
  else if ((c & 0xf8) == 0xf0) { n = 4; cp = c & 0x07; min = 0x10000; }
  else return 0;
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

void jw_write_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  while (*p) {
    unsigned c = *p;
    switch (c) {
    case '"': fputs("\\\"", f); p++; continue;
    case '\\': fputs("\\\\", f); p++; continue;
    case '\b': fputs("\\b", f); p++; continue;
    case '\f': fputs("\\f", f); p++; continue;
    case '\n': fputs("\\n", f); p++; continue;
    case '\r': fputs("\\r", f); p++; continue;
    case '\t': fputs("\\t", f); p++; continue;
    default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
      p++;
      continue;
    }
    int n = utf8_len(p);
    if (n == 0) {
      fputs("\\ufffd", f);
      p++;
      continue;
    }
    fwrite(p, 1, (size_t)n, f);
    p += n;
  }
  fputc('"', f);
}

void jw_init(jw *w, FILE *f) {
  *w = (jw){0};
  w->f = f;
  tool_err_doc_started(f); /* a --json run that failed has written its document: no {"error"} after it */
}

void jw_init_line(jw *w, FILE *f) {
  jw_init(w, f);
  w->one_line = true;
}

static void indent(jw *w) {
  if (w->one_line) return;
  fputc('\n', w->f);
  for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

/* Separator and indentation before any value or key. */
static void before_value(jw *w) {
  if (w->after_key) {
    w->after_key = false;
    return;
  }
  if (w->depth > 0) {
    if (w->is_obj[w->depth - 1]) w->bad = true; /* a value in an object needs a key */
    if (w->has_items[w->depth - 1]) fputs(w->one_line ? ", " : ",", w->f);
    w->has_items[w->depth - 1] = true;
    indent(w);
  }
}

static void begin(jw *w, bool obj) {
  before_value(w);
  if (w->depth >= JW_MAX_DEPTH) {
    w->bad = true;
    return;
  }
  fputc(obj ? '{' : '[', w->f);
  w->is_obj[w->depth] = obj;
  w->has_items[w->depth] = false;
  w->depth++;
}

static void end(jw *w, bool obj) {
  if (w->depth == 0 || w->is_obj[w->depth - 1] != obj || w->after_key) {
    w->bad = true;
    return;
  }
  w->depth--;
  if (w->has_items[w->depth]) indent(w);
  fputc(obj ? '}' : ']', w->f);
}

void jw_obj_begin(jw *w) { begin(w, true); }
void jw_obj_end(jw *w) { end(w, true); }
void jw_arr_begin(jw *w) { begin(w, false); }
void jw_arr_end(jw *w) { end(w, false); }

void jw_key(jw *w, const char *k) {
  if (w->depth == 0 || !w->is_obj[w->depth - 1] || w->after_key) {
    w->bad = true;
    return;
  }
  if (w->has_items[w->depth - 1]) fputs(w->one_line ? ", " : ",", w->f);
  w->has_items[w->depth - 1] = true;
  indent(w);
  jw_write_string(w->f, k);
  fputs(": ", w->f);
  w->after_key = true;
}

void jw_str(jw *w, const char *s) {
  before_value(w);
  if (s) jw_write_string(w->f, s);
  else fputs("null", w->f);
}

void jw_int(jw *w, int64_t v) {
  before_value(w);
  fprintf(w->f, "%" PRId64, v);
}

void jw_uint(jw *w, uint64_t v) {
  before_value(w);
  fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(jw *w, bool v) {
  before_value(w);
  fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w) {
  before_value(w);
  fputs("null", w->f);
}

void jw_kstr(jw *w, const char *k, const char *s) { jw_key(w, k); jw_str(w, s); }
void jw_kint(jw *w, const char *k, int64_t v) { jw_key(w, k); jw_int(w, v); }
void jw_kuint(jw *w, const char *k, uint64_t v) { jw_key(w, k); jw_uint(w, v); }
void jw_kbool(jw *w, const char *k, bool v) { jw_key(w, k); jw_bool(w, v); }

void jw_khex(jw *w, const char *k, uint64_t v, int digits) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%0*" PRIx64, digits, v);
  jw_kstr(w, k, buf);
}

int jw_finish(jw *w) {
  fputc('\n', w->f);
  return (w->bad || w->depth != 0 || w->after_key) ? -1 : 0;
}
