/* hcq/target.c: DEV=[IFACE[:INDICES]+]KIND[:INDEX] parsing (tinygrad's device strings, see
 * reference hcq_usb_sys.md 2.7) and the visibility filter. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/hcq.h"
#include "hcq/target.h"

/* Interfaces each kind may name. CPU has none. Order is the fallback order. */
static const char *const amd_ifaces[] = {"PCI", "USB", "MOCKPCI", "MOCKUSB", NULL};
static const char *const nv_ifaces[] = {"NVK", "PCI", "MOCKPCI", "MOCKNVK", NULL};
static const struct { const char *kind; const char *const *ifaces; } kinds[] = {
  {"CPU", NULL}, {"AMD", amd_ifaces}, {"NV", nv_ifaces},
};

const char *bg_target_forms(void) {
  return "DEV=[IFACE[:INDICES]+]KIND[:INDEX] with KIND one of CPU, AMD, NV; IFACE for AMD: PCI, USB, "
         "MOCKPCI, MOCKUSB; for NV: NVK, PCI, MOCKPCI, MOCKNVK; INDICES a visibility filter like 0,2 or "
         "1-3; INDEX a decimal number (e.g. CPU, AMD, AMD:1, USB+AMD, PCI:0-3+AMD:2, MOCKPCI+AMD)";
}

bool bg_target_known_iface(const char *kind, const char *iface) {
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    if (strcmp(kinds[k].kind, kind) != 0) continue;
    if (!iface[0]) return true;
    for (const char *const *i = kinds[k].ifaces; i && *i; i++)
      if (strcmp(*i, iface) == 0) return true;
  }
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

static bool valid_indices(const char *s) {
  /* "0,2" or "1-3" or a mix "0,2-4" */
  const char *p = s;
  while (*p) {
    const char *q = p;
    while (isdigit((unsigned char)*q)) q++;
    if (q == p) return false;
    if (*q == '-') {
      const char *r = q + 1;
      while (isdigit((unsigned char)*r)) r++;
      if (r == q + 1 || atoi(q + 1) < atoi(p)) return false;
      q = r;
    }
    if (*q == ',') q++;
    else if (*q) return false;
    p = q;
  }
  return true;
}

int bg_target_parse(const char *s, bg_target *out) {
  memset(out, 0, sizeof(*out));
  if (!s || !*s) return bg_error(BG_EINVAL, "DEV is empty; valid forms: %s", bg_target_forms());
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
      if (!valid_indices(out->indices)) return bad(s, "the visibility filter must look like 0,2 or 1-3");
    }
    dev = plus + 1;
  }
  const char *colon = strchr(dev, ':');
  const char *kend = colon ? colon : dev + strlen(dev);
  if (!*dev) return bad(s, "no device kind after '+'");
  if (!take_name(dev, kend, out->kind, sizeof(out->kind))) return bad(s, "the device kind is not a name");
  if (colon && !parse_uint(colon + 1, colon + strlen(colon), &out->index))
    return bad(s, "the device index after ':' must be a decimal number");
  size_t k;
  for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
    if (strcmp(kinds[k].kind, out->kind) == 0) break;
  if (k == sizeof(kinds) / sizeof(kinds[0])) {
    char why[96];
    snprintf(why, sizeof(why), "unknown device kind '%s'", out->kind);
    return bad(s, why);
  }
  if (out->iface[0] && !bg_target_known_iface(out->kind, out->iface)) {
    char why[96];
    snprintf(why, sizeof(why), "interface '%s' does not exist for %s", out->iface, out->kind);
    return bad(s, why);
  }
  return 0;
}

void bg_target_format(const bg_target *t, char *buf, size_t n) {
  char idx[16] = "";
  if (t->index) snprintf(idx, sizeof(idx), ":%d", t->index);
  if (t->iface[0])
    snprintf(buf, n, "%s%s%s+%s%s", t->iface, t->indices[0] ? ":" : "", t->indices, t->kind, idx);
  else
    snprintf(buf, n, "%s%s", t->kind, idx);
}

int bg_visible_filter(const char *indices, int ndevs, int *map, int max) {
  if (!indices || !indices[0]) {
    int n = ndevs < max ? ndevs : max;
    for (int i = 0; i < n; i++) map[i] = i;
    return n;
  }
  int n = 0;
  const char *p = indices;
  while (*p) {
    int lo = atoi(p), hi = lo;
    while (isdigit((unsigned char)*p)) p++;
    if (*p == '-') { hi = atoi(++p); while (isdigit((unsigned char)*p)) p++; }
    for (int i = lo; i <= hi; i++)
      if (i < ndevs && n < max) map[n++] = i;
    if (*p == ',') p++;
  }
  return n;
}
