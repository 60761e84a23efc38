/* compile/kstr.c: a growable NUL-terminated string for the renderer (out of memory latches). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_internal.h"

static bool reserve(kstr *s, size_t extra) {
  if (s->oom) return false;
  if (s->len + extra + 1 <= s->cap) return true;
  size_t cap = s->cap ? s->cap : 256;
  while (cap < s->len + extra + 1) cap *= 2;
  char *p = realloc(s->p, cap);
  if (!p) {
    s->oom = true;
    return false;
  }
  s->p = p;
  s->cap = cap;
  return true;
}

void kstr_puts(kstr *s, const char *t) {
  size_t n = strlen(t);
  if (!reserve(s, n)) return;
  memcpy(s->p + s->len, t, n + 1);
  s->len += n;
}

void kstr_vprintf(kstr *s, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) {
    s->oom = true;
    return;
  }
  if (!reserve(s, (size_t)n)) return;
  vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
  s->len += (size_t)n;
}

void kstr_printf(kstr *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kstr_vprintf(s, fmt, ap);
  va_end(ap);
}

char *kstr_take(kstr *s) {
  if (s->oom || !reserve(s, 0)) {
    kstr_free(s);
    return NULL;
  }
  char *p = s->p;
  p[s->len] = '\0';
  *s = (kstr){0};
  return p;
}

void kstr_free(kstr *s) {
  free(s->p);
  *s = (kstr){0};
}
