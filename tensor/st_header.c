/* tensor/st_header.c: the header of huggingface's safetensors files (github.com/huggingface/safetensors,
 * safetensors/src/tensor.rs: an 8-byte little-endian header length N, N bytes of JSON {"NAME": {"dtype": "F32",
 * "shape": [..], "data_offsets": [BEGIN, END]}, "__metadata__": {"k": "v"}} padded with spaces, then the data).
 *
 * The header comes from outside, so its reader is a strict JSON reader for exactly that shape (no recursion, every
 * length checked, no number but non-negative integers) and the checks are those of tensor.rs's validate(): a known
 * dtype, offsets that tile the data section without holes or overlaps in file order, and shape * dtype size ==
 * END - BEGIN. It works from memory only: tests/fuzz/fuzz_safetensors.c fuzzes t_st_parse_header. The file side is
 * safetensors.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tload.h"

static const struct {
  const char *name;
  enum bg_dtype dt;
} DTYPES[] = {{"F64", BG_FLOAT64}, {"F32", BG_FLOAT32}, {"F16", BG_FLOAT16}, {"BF16", BG_BFLOAT16},
              {"I64", BG_INT64},   {"I32", BG_INT32},   {"I16", BG_INT16},   {"I8", BG_INT8},
              {"U8", BG_UINT8},    {"BOOL", BG_BOOL},   {"U16", BG_UINT16},  {"U32", BG_UINT32},
              {"U64", BG_UINT64}};

/* Bytes of an element, from the format (the build may not run every dtype: bg_dtype_size says 0 then). */
static unsigned st_size(enum bg_dtype t) {
  switch (t) {
  case BG_FLOAT64: case BG_INT64: case BG_UINT64: return 8;
  case BG_FLOAT32: case BG_INT32: case BG_UINT32: return 4;
  case BG_FLOAT16: case BG_BFLOAT16: case BG_INT16: case BG_UINT16: return 2;
  default: return 1;
  }
}

const char *t_st_dtype_name(enum bg_dtype t) {
  for (size_t i = 0; i < sizeof DTYPES / sizeof *DTYPES; i++)
    if (DTYPES[i].dt == t) return DTYPES[i].name;
  return "?";
}

typedef struct jp {
  const char *s, *p, *end;
  const char *what;
} jp;

static int jerr(const jp *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jerr(const jp *j, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return bg_error(BG_EINVAL, "%s: safetensors header, byte %zu of the JSON: %s", j->what, (size_t)(j->p - j->s),
                  msg);
}

static void ws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int expect(jp *j, char ch) {
  ws(j);
  if (j->p >= j->end) return jerr(j, "expected '%c', found the end of the header", ch);
  if (*j->p != ch) return jerr(j, "expected '%c', found '%c'", ch, *j->p);
  j->p++;
  return 0;
}

static int hex4(jp *j, unsigned *v) {
  *v = 0;
  for (int i = 0; i < 4; i++, j->p++) {
    if (j->p >= j->end) return jerr(j, "truncated \\u escape");
    char ch = *j->p;
    unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0')
               : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
               : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10) : 16u;
    if (d == 16) return jerr(j, "bad hex digit '%c' in a \\u escape", ch);
    *v = *v * 16 + d;
  }
  return 0;
}

/* A JSON string, decoded to UTF-8 (a NUL, even escaped, is refused: names are C strings). *out: malloc'd. */
static int jstring(jp *j, char **out) {
  *out = NULL;
  int e = expect(j, '"');
  if (e < 0) return e;
  size_t cap = 16, n = 0;
  char *b = malloc(cap);
  if (!b) return bg_error(BG_ENOMEM, "%s: out of host memory reading the safetensors header", j->what);
  for (;;) {
    if (j->p >= j->end) {
      free(b);
      return jerr(j, "unterminated string");
    }
    unsigned char ch = (unsigned char)*j->p++;
    char enc[4];
    size_t k = 0;
    if (ch == '"') break;
    if (ch < 0x20) {
      free(b);
      j->p--;
      return jerr(j, "control character 0x%02x in a string", ch);
    }
    if (ch != '\\') {
      enc[k++] = (char)ch;
    } else {
      if (j->p >= j->end) {
        free(b);
        return jerr(j, "unterminated string");
      }
      char esc = *j->p++;
      unsigned cp = 0;
      switch (esc) {
      case '"': case '\\': case '/': enc[k++] = esc; break;
      case 'b': enc[k++] = '\b'; break;
      case 'f': enc[k++] = '\f'; break;
      case 'n': enc[k++] = '\n'; break;
      case 'r': enc[k++] = '\r'; break;
      case 't': enc[k++] = '\t'; break;
      case 'u':
        if ((e = hex4(j, &cp)) < 0) break;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a UTF-16 surrogate pair */
          unsigned lo = 0;
          if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
            e = jerr(j, "high surrogate \\u%04x without its low half", cp);
            break;
          }
          j->p += 2;
          if ((e = hex4(j, &lo)) < 0) break;
          if (lo < 0xDC00 || lo > 0xDFFF) {
            e = jerr(j, "\\u%04x after high surrogate \\u%04x is not a low surrogate", lo, cp);
            break;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          e = jerr(j, "lone low surrogate \\u%04x", cp);
          break;
        } else if (cp == 0) {
          e = jerr(j, "\\u0000 in a string");
          break;
        }
        if (cp < 0x80) enc[k++] = (char)cp;
        else if (cp < 0x800) {
          enc[k++] = (char)(0xC0 | (cp >> 6));
          enc[k++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          enc[k++] = (char)(0xE0 | (cp >> 12));
          enc[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          enc[k++] = (char)(0x80 | (cp & 0x3F));
        } else {
          enc[k++] = (char)(0xF0 | (cp >> 18));
          enc[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
          enc[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          enc[k++] = (char)(0x80 | (cp & 0x3F));
        }
        break;
      default: j->p--; e = jerr(j, "bad escape '\\%c'", esc); break;
      }
      if (e < 0) {
        free(b);
        return e;
      }
    }
    if (n + k + 1 > cap) {
      cap = cap * 2 + k;
      char *nb = realloc(b, cap);
      if (!nb) {
        free(b);
        return bg_error(BG_ENOMEM, "%s: out of host memory reading the safetensors header", j->what);
      }
      b = nb;
    }
    memcpy(b + n, enc, k);
    n += k;
  }
  b[n] = 0;
  *out = b;
  return 0;
}

/* A non-negative integer (JSON digits, no sign, fraction or exponent) that fits in 63 bits. */
static int juint(jp *j, const char *field, uint64_t *v) {
  ws(j);
  if (j->p >= j->end || *j->p < '0' || *j->p > '9')
    return jerr(j, "%s: expected a non-negative integer", field);
  const char *start = j->p;
  uint64_t x = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    unsigned d = (unsigned)(*j->p - '0');
    if (x > ((uint64_t)INT64_MAX - d) / 10) return jerr(j, "%s: integer larger than 2^63-1", field);
    x = x * 10 + d;
    j->p++;
  }
  if (j->p - start > 1 && *start == '0') return jerr(j, "%s: integer with a leading zero", field);
  if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
    return jerr(j, "%s: expected a non-negative integer, found a fraction or exponent", field);
  *v = x;
  return 0;
}

/* ',' (more) or `close` (done): 1 for more, 0 at the end. */
static int next_or(jp *j, char close, const char *where) {
  ws(j);
  if (j->p >= j->end) return jerr(j, "%s: expected ',' or '%c', found the end of the header", where, close);
  char ch = *j->p++;
  if (ch == ',') return 1;
  if (ch == close) return 0;
  j->p--;
  return jerr(j, "%s: expected ',' or '%c', found '%c'", where, close, ch);
}

/* "__metadata__": an object of string values (tensor.rs: HashMap<String, String>). */
static int jmetadata(jp *j) {
  int e = expect(j, '{');
  if (e < 0) return e;
  ws(j);
  if (j->p < j->end && *j->p == '}') {
    j->p++;
    return 0;
  }
  for (;;) {
    char *k = NULL, *v = NULL;
    if ((e = jstring(j, &k)) < 0) return e;
    free(k);
    if ((e = expect(j, ':')) < 0) return e;
    ws(j);
    if (j->p < j->end && *j->p != '"') return jerr(j, "__metadata__: values must be strings");
    if ((e = jstring(j, &v)) < 0) return e;
    free(v);
    if ((e = next_or(j, '}', "__metadata__")) <= 0) return e;
  }
}

/* {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, each key once, no other key. */
static int jentry(jp *j, tst_entry *t) {
  int e = expect(j, '{');
  if (e < 0) return e;
  bool have_dt = false, have_shape = false, have_off = false;
  ws(j);
  if (j->p < j->end && *j->p == '}') return jerr(j, "tensor '%s': empty entry (expected dtype, shape, data_offsets)", t->name);
  for (;;) {
    char *k = NULL;
    if ((e = jstring(j, &k)) < 0) return e;
    if ((e = expect(j, ':')) < 0) {
      free(k);
      return e;
    }
    if (!strcmp(k, "dtype") && !have_dt) {
      char *d = NULL;
      free(k);
      ws(j);
      if (j->p < j->end && *j->p != '"') return jerr(j, "tensor '%s': dtype must be a string", t->name);
      if ((e = jstring(j, &d)) < 0) return e;
      size_t i = 0;
      while (i < sizeof DTYPES / sizeof *DTYPES && strcmp(d, DTYPES[i].name)) i++;
      if (i == sizeof DTYPES / sizeof *DTYPES) {
        e = jerr(j, "tensor '%s': unknown dtype \"%.32s\" (expected F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL U16 U32 U64)",
                 t->name, d);
        free(d);
        return e;
      }
      free(d);
      t->dt = DTYPES[i].dt;
      have_dt = true;
    } else if (!strcmp(k, "shape") && !have_shape) {
      free(k);
      if ((e = expect(j, '[')) < 0) return e;
      ws(j);
      if (j->p < j->end && *j->p == ']') j->p++;
      else
        for (;;) {
          uint64_t d;
          if (t->ndim == BG_MAX_DIMS) return jerr(j, "tensor '%s': more than %d dimensions", t->name, BG_MAX_DIMS);
          if ((e = juint(j, "shape", &d)) < 0) return e;
          t->shape[t->ndim++] = (int64_t)d;
          if ((e = next_or(j, ']', "shape")) < 0) return e;
          if (!e) break;
        }
      have_shape = true;
    } else if (!strcmp(k, "data_offsets") && !have_off) {
      free(k);
      if ((e = expect(j, '[')) < 0 || (e = juint(j, "data_offsets", &t->begin)) < 0 || (e = expect(j, ',')) < 0 ||
          (e = juint(j, "data_offsets", &t->end)) < 0)
        return e;
      ws(j);
      if (j->p >= j->end || *j->p != ']') return jerr(j, "tensor '%s': data_offsets must hold exactly 2 integers", t->name);
      j->p++;
      have_off = true;
    } else {
      bool dup = !strcmp(k, "dtype") || !strcmp(k, "shape") || !strcmp(k, "data_offsets");
      e = jerr(j, "tensor '%s': %s key \"%.32s\" (expected dtype, shape, data_offsets)", t->name,
               dup ? "duplicate" : "unknown", k);
      free(k);
      return e;
    }
    if ((e = next_or(j, '}', "tensor entry")) < 0) return e;
    if (!e) break;
  }
  if (!have_dt || !have_shape || !have_off)
    return jerr(j, "tensor '%s': no %s", t->name, !have_dt ? "dtype" : !have_shape ? "shape" : "data_offsets");
  return 0;
}

static int by_begin(const void *a, const void *b) {
  const tst_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const tst_entry *const *)a)->name, (*(const tst_entry *const *)b)->name);
}

void t_st_header_free(tst_header *h) {
  for (size_t i = 0; i < h->n; i++) free(h->e[i].name);
  free(h->e);
  h->e = NULL;
  h->n = 0;
}

/* tensor.rs validate(): each tensor's bytes match its shape, the tensors tile the data section in offset order. */
static int validate(tst_header *h, uint64_t data_size, const char *what) {
  for (size_t i = 0; i < h->n; i++) {
    tst_entry *t = &h->e[i];
    if (t->begin > t->end)
      return bg_error(BG_EINVAL, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin",
                      what, t->name, t->begin, t->end);
    if (t->end > data_size)
      return bg_error(BG_EINVAL,
                      "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] out of the data section (%" PRIu64
                      " bytes)", what, t->name, t->begin, t->end, data_size);
    uint64_t n = st_size(t->dt);
    for (unsigned d = 0; d < t->ndim; d++) {
      uint64_t s = (uint64_t)t->shape[d];
      if (s && n > (uint64_t)INT64_MAX / s)
        return bg_error(BG_EINVAL, "%s: tensor '%s': shape too large", what, t->name);
      n *= s;
    }
    if (n != t->end - t->begin)
      return bg_error(BG_EINVAL,
                      "%s: tensor '%s': shape and dtype %s give %" PRIu64 " bytes, data_offsets [%" PRIu64 ", %" PRIu64
                      "] hold %" PRIu64, what, t->name, t_st_dtype_name(t->dt), n, t->begin, t->end, t->end - t->begin);
  }
  if (h->n > 1) qsort(h->e, h->n, sizeof *h->e, by_begin);   /* qsort(NULL, 0) is undefined */
  uint64_t at = 0;
  for (size_t i = 0; i < h->n; i++) {
    const tst_entry *t = &h->e[i];
    if (t->begin < at)
      return bg_error(BG_EINVAL, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] overlap tensor '%s' [%" PRIu64
                      ", %" PRIu64 "]", what, t->name, t->begin, t->end, h->e[i - 1].name, h->e[i - 1].begin,
                      h->e[i - 1].end);
    if (t->begin > at)
      return bg_error(BG_EINVAL, "%s: bytes [%" PRIu64 ", %" PRIu64 ") of the data section belong to no tensor "
                      "(tensor '%s' begins at %" PRIu64 ")", what, at, t->begin, t->name, t->begin);
    at = t->end;
  }
  if (at != data_size)
    return bg_error(BG_EINVAL, "%s: the data section has %" PRIu64 " bytes but the tensors end at byte %" PRIu64, what,
                    data_size, at);
  if (h->n > 1) {
    const tst_entry **ix = malloc(h->n * sizeof *ix);
    if (!ix) return bg_error(BG_ENOMEM, "%s: out of host memory", what);
    for (size_t i = 0; i < h->n; i++) ix[i] = &h->e[i];
    qsort(ix, h->n, sizeof *ix, by_name);
    for (size_t i = 1; i < h->n; i++)
      if (!strcmp(ix[i]->name, ix[i - 1]->name)) {
        int e = bg_error(BG_EINVAL, "%s: tensor '%s' appears twice in the header", what, ix[i]->name);
        free(ix);
        return e;
      }
    free(ix);
  }
  return 0;
}

int t_st_parse_header(const char *json, size_t len, uint64_t data_size, const char *what, tst_header *out) {
  memset(out, 0, sizeof *out);
  jp j = {json, json, json + len, what};
  int e = expect(&j, '{');
  if (e < 0) return e;
  ws(&j);
  if (j.p < j.end && *j.p == '}') {
    j.p++;
  } else {
    size_t cap = 0;
    bool meta = false;
    for (;;) {
      char *name = NULL;
      if ((e = jstring(&j, &name)) < 0) return e;
      if ((e = expect(&j, ':')) < 0) {
        free(name);
        return e;
      }
      if (!strcmp(name, "__metadata__")) {
        free(name);
        if (meta) return jerr(&j, "a second __metadata__");
        meta = true;
        if ((e = jmetadata(&j)) < 0) return e;
      } else {
        if (out->n == cap) {
          size_t ncap = cap ? cap * 2 : 8;
          tst_entry *ne = realloc(out->e, ncap * sizeof *ne);
          if (!ne) {
            free(name);
            return bg_error(BG_ENOMEM, "%s: out of host memory reading the safetensors header", what);
          }
          out->e = ne;
          cap = ncap;
        }
        tst_entry *t = &out->e[out->n++];
        memset(t, 0, sizeof *t);
        t->name = name;
        if ((e = jentry(&j, t)) < 0) return e;
      }
      if ((e = next_or(&j, '}', "header")) < 0) return e;
      if (!e) break;
    }
  }
  ws(&j);
  if (j.p != j.end) return jerr(&j, "'%c' after the header's object (only spaces may pad it)", *j.p);
  return validate(out, data_size, what);
}

