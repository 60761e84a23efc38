/* tests/unit/tools/json_check.c: recursive-descent JSON validator (json_check.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_check.h"

#define MAX_DEPTH 64

typedef struct jp {
  const unsigned char *s;
  size_t n, i;
  int depth;
  const char *why;
} jp;

static bool fail(jp *p, const char *why) {
  if (!p->why) p->why = why;
  return false;
}

static void ws(jp *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool lit(jp *p, const char *w) {
  size_t l = strlen(w);
  if (p->n - p->i < l || memcmp(p->s + p->i, w, l) != 0) return fail(p, "bad literal");
  p->i += l;
  return true;
}

static bool hex4(jp *p) {
  for (int k = 0; k < 4; k++, p->i++) {
    if (p->i >= p->n) return fail(p, "short \\u escape");
    unsigned c = p->s[p->i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return fail(p, "bad \\u escape");
  }
  return true;
}

/* One UTF-8 sequence starting at p->i (first byte >= 0x80). */
static bool utf8(jp *p) {
  unsigned c = p->s[p->i];
  int len;
  uint32_t cp, min;
  if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
  else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
  else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
  else return fail(p, "invalid UTF-8 lead byte");
  if (p->n - p->i < (size_t)len) return fail(p, "truncated UTF-8");
  for (int k = 1; k < len; k++) {
    unsigned d = p->s[p->i + (size_t)k];
    if ((d & 0xc0) != 0x80) return fail(p, "invalid UTF-8 continuation");
    cp = (cp << 6) | (d & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return fail(p, "invalid UTF-8 code point");
  p->i += (size_t)len;
  return true;
}

static bool string(jp *p) {
  p->i++; /* opening quote */
  while (p->i < p->n) {
    unsigned c = p->s[p->i];
    if (c == '"') {
      p->i++;
      return true;
    }
    if (c < 0x20) return fail(p, "unescaped control character in string");
    if (c == '\\') {
      if (++p->i >= p->n) return fail(p, "unterminated escape");
      c = p->s[p->i++];
      if (c == 'u') {
        if (!hex4(p)) return false;
      } else if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
        return fail(p, "bad escape");
      }
    } else if (c >= 0x80) {
      if (!utf8(p)) return false;
    } else {
      p->i++;
    }
  }
  return fail(p, "unterminated string");
}

static bool digits(jp *p) {
  size_t st = p->i;
  while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++;
  return p->i > st ? true : fail(p, "digit expected");
}

static bool number(jp *p) {
  if (p->s[p->i] == '-') p->i++;
  if (p->i < p->n && p->s[p->i] == '0') p->i++;
  else if (!digits(p)) return false;
  if (p->i < p->n && p->s[p->i] == '.') {
    p->i++;
    if (!digits(p)) return false;
  }
  if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
    p->i++;
    if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
    if (!digits(p)) return false;
  }
  return true;
}

static bool value(jp *p);

static bool container(jp *p, char close, bool obj) {
  if (++p->depth > MAX_DEPTH) return fail(p, "nesting too deep");
  p->i++;
  ws(p);
  if (p->i < p->n && p->s[p->i] == close) {
    p->i++;
    p->depth--;
    return true;
  }
  for (;;) {
    ws(p);
    if (obj) {
      if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "object key expected");
      if (!string(p)) return false;
      ws(p);
      if (p->i >= p->n || p->s[p->i] != ':') return fail(p, "':' expected");
      p->i++;
    }
    if (!value(p)) return false;
    ws(p);
    if (p->i >= p->n) return fail(p, "unterminated container");
    if (p->s[p->i] == ',') {
      p->i++;
      continue;
    }
    if (p->s[p->i] != close) return fail(p, "',' or close bracket expected");
    p->i++;
    p->depth--;
    return true;
  }
}

static bool value(jp *p) {
  ws(p);
  if (p->i >= p->n) return fail(p, "value expected");
  switch (p->s[p->i]) {
  case '{': return container(p, '}', true);
  case '[': return container(p, ']', false);
  case '"': return string(p);
  case 't': return lit(p, "true");
  case 'f': return lit(p, "false");
  case 'n': return lit(p, "null");
  default:
    if (p->s[p->i] == '-' || (p->s[p->i] >= '0' && p->s[p->i] <= '9')) return number(p);
    return fail(p, "unexpected character");
  }
}

int json_check(const char *s, size_t n, char *err, size_t errn) {
  jp p = {(const unsigned char *)s, n, 0, 0, NULL};
  bool ok = value(&p);
  if (ok) {
    ws(&p);
    if (p.i != p.n) ok = fail(&p, "trailing data after the value");
  }
  if (!ok && err) snprintf(err, errn, "offset %zu: %s", p.i, p.why);
  return ok ? 0 : -1;
}
