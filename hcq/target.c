/* hcq/target.c: DEV=[IFACE[:INDICES]+]KIND[:INDEX] parsing (tinygrad's device strings, e.g. PCI+AMD:1) and the
 * visibility filter. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "hcq/backend.h"
#include "hcq/target.h"

/* A DEV string names what this build can open: bg_ifaces(), the one table the backends' meson.build fill (the NV
 * bare-metal interfaces PCI and MOCKPCI were the last named here before they were built). */
static char forms[1024];
static pthread_once_t forms_once = PTHREAD_ONCE_INIT;

static void append(size_t *at, const char *fmt, const char *s) {
  if (*at < sizeof(forms)) *at += (size_t)snprintf(forms + *at, sizeof(forms) - *at, fmt, s);
}

/* Is ifs[i] the first interface of its kind in the table? */
static bool first_of_kind(const bg_iface *const *ifs, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (strcmp(ifs[j]->kind, ifs[i]->kind) == 0) return false;
  return true;
}

/* Every kind the table has, once each, in table order: "CPU, AMD". */
static void append_kinds(size_t *at, const bg_iface *const *ifs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (first_of_kind(ifs, i)) append(at, i ? ", %s" : "%s", ifs[i]->kind);
}

static void make_forms(void) {
  const bg_iface *const *ifs;
  size_t n = bg_ifaces(&ifs), at = 0;
  append(&at, "%s", "DEV=[IFACE[:INDICES]+]KIND[:INDEX] with KIND one of ");
  append_kinds(&at, ifs, n);
  for (size_t i = 0; i < n; i++) {
    if (!first_of_kind(ifs, i)) continue;
    bool any = false;
    for (size_t j = i; j < n; j++) {
      if (strcmp(ifs[j]->kind, ifs[i]->kind) != 0 || !ifs[j]->name[0]) continue;
      if (!any) append(&at, "; IFACE for %s: ", ifs[i]->kind);
      append(&at, any ? ", %s" : "%s", ifs[j]->name);
      any = true;
    }
  }
  append(&at, "%s", "; INDICES a visibility filter like 0,2 or 1-3; INDEX a decimal number; empty for the default "
                    "device (e.g. ");
  /* Examples from the table too: every kind, then the first real and the first emulated named interface. */
  append_kinds(&at, ifs, n);
  bool real = false, mock = false;
  for (size_t i = 0; i < n; i++) {
    const bg_iface *f = ifs[i];
    char ex[128] = "";
    if (f->name[0] && f->mock && !mock) {
      snprintf(ex, sizeof(ex), ", %s+%s", f->name, f->kind);
      mock = true;
    } else if (f->name[0] && !f->mock && !real) {
      snprintf(ex, sizeof(ex), ", %s:1, %s+%s, %s:0-3+%s:2", f->kind, f->name, f->kind, f->name, f->kind);
      real = true;
    }
    append(&at, "%s", ex);
  }
  append(&at, "%s", ")");
}

const char *bg_target_forms(void) {
  pthread_once(&forms_once, make_forms);
  return forms;
}

bool bg_target_built(const char *kind, const char *iface) {
  const bg_iface *const *ifs;
  size_t n = bg_ifaces(&ifs);
  for (size_t i = 0; i < n; i++)
    if (strcmp(ifs[i]->kind, kind) == 0 && (!iface[0] || strcmp(ifs[i]->name, iface) == 0)) return true;
  return false;
}

static int bad(const char *s, const char *why) {
  return bg_error(BG_EINVAL, "DEV=%s: %s; valid forms: %s", s, why, bg_target_forms());
}

/* Copy [b, e) upper-cased into dst; false if empty, too long or not [A-Z0-9]. */
static bool take_name(const char *b, const char *e, char *dst, size_t n) {
  size_t len = (size_t)(e - b);
  if (len == 0 || len >= n) return false;
  for (size_t i = 0; i < len; i++) {
    if (!isalnum((unsigned char)b[i])) return false;
    dst[i] = (char)toupper((unsigned char)b[i]);
  }
  dst[len] = '\0';
  return true;
}

static bool parse_uint(const char *b, const char *e, int *out) {
  if (b == e || e - b > 6) return false;
  int v = 0;
  for (const char *p = b; p < e; p++) {
    if (!isdigit((unsigned char)*p)) return false;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return true;
}

/* One index of a visibility filter: 1 to 3 digits, at most BG_TARGET_MAX_INDEX. */
static const char *take_index(const char *p, int *out) {
  const char *q = p;
  while (isdigit((unsigned char)*q)) q++;
  if (q == p || !parse_uint(p, q, out) || *out > BG_TARGET_MAX_INDEX) return NULL;
  return q;
}

/* "0,2" or "1-3" or a mix "0,2-4"; every index 0..BG_TARGET_MAX_INDEX, ranges ascending. Calls each(lo, hi). */
static bool walk_indices(const char *s, void (*each)(int lo, int hi, void *arg), void *arg) {
  const char *p = s;
  if (!*p) return false;
  while (*p) {
    int lo, hi;
    if (!(p = take_index(p, &lo))) return false;
    hi = lo;
    if (*p == '-' && (!(p = take_index(p + 1, &hi)) || hi < lo)) return false;
    if (each) each(lo, hi, arg);
    if (*p == ',' && p[1]) p++;
    else if (*p) return false;
  }
  return true;
}

static bool valid_indices(const char *s) { return walk_indices(s, NULL, NULL); }

int bg_target_parse(const char *s, bg_target *out) {
  memset(out, 0, sizeof(*out));
  if (!s || !*s) return 0; /* the default target (kind ""): bg_dev_open picks the first GPU, else CPU */
  const char *plus = strchr(s, '+');
  const char *dev = s;
  if (plus) {
    if (strchr(plus + 1, '+')) return bad(s, "more than one '+'");
    const char *colon = memchr(s, ':', (size_t)(plus - s));
    const char *iend = colon ? colon : plus;
    if (!take_name(s, iend, out->iface, sizeof(out->iface))) return bad(s, "the interface before '+' is empty or not a name");
    if (colon) {
      size_t n = (size_t)(plus - colon - 1);
      if (n == 0 || n >= sizeof(out->indices)) return bad(s, "the interface's visibility filter is empty or too long");
      memcpy(out->indices, colon + 1, n);
      out->indices[n] = '\0';
      if (!valid_indices(out->indices)) {
        char why[128];
        snprintf(why, sizeof(why), "the visibility filter must look like 0,2 or 1-3 with indices 0..%d, ranges ascending",
                 BG_TARGET_MAX_INDEX);
        return bad(s, why);
      }
    }
    dev = plus + 1;
  }
  const char *colon = strchr(dev, ':');
  const char *kend = colon ? colon : dev + strlen(dev);
  if (!*dev) return bad(s, "no device kind after '+'");
  if (!take_name(dev, kend, out->kind, sizeof(out->kind))) return bad(s, "the device kind is not a name");
  if (colon && (!parse_uint(colon + 1, colon + strlen(colon), &out->index) || out->index > BG_TARGET_MAX_INDEX)) {
    char why[96];
    snprintf(why, sizeof(why), "the device index after ':' must be a decimal number from 0 to %d", BG_TARGET_MAX_INDEX);
    return bad(s, why);
  }
  if (!bg_target_built(out->kind, "")) {
    char why[96];
    snprintf(why, sizeof(why), "unknown device kind '%s'", out->kind);
    return bad(s, why);
  }
  if (out->iface[0] && !bg_target_built(out->kind, out->iface)) {
    char why[96];
    snprintf(why, sizeof(why), "interface '%s' does not exist for %s", out->iface, out->kind);
    return bad(s, why);
  }
  return 0;
}

void bg_target_format(const bg_target *t, char *buf, size_t n) {
  char idx[16] = "";
  if (!t->kind[0]) {
    snprintf(buf, n, "%s", "");
    return;
  }
  if (t->index) snprintf(idx, sizeof(idx), ":%d", t->index);
  if (t->iface[0])
    snprintf(buf, n, "%s%s%s+%s%s", t->iface, t->indices[0] ? ":" : "", t->indices, t->kind, idx);
  else
    snprintf(buf, n, "%s%s", t->kind, idx);
}

struct filter_acc { int ndevs; int *map; int max; int n; };

static void add_range(int lo, int hi, void *arg) {
  struct filter_acc *a = arg;
  for (int i = lo; i <= hi && i < a->ndevs && a->n < a->max; i++) a->map[a->n++] = i;
}

int bg_visible_filter(const char *indices, int ndevs, int *map, int max) {
  if (!indices || !indices[0]) {
    int n = ndevs < max ? ndevs : max;
    for (int i = 0; i < n; i++) map[i] = i;
    return n;
  }
  struct filter_acc acc = {ndevs, map, max, 0};
  if (!walk_indices(indices, add_range, &acc))
    return bg_error(BG_EINVAL, "visibility filter '%s': expected indices 0..%d like 0,2 or 1-3", indices,
                    BG_TARGET_MAX_INDEX);
  return acc.n;
}
