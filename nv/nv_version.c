/* nv/nv_version.c: driver version detection. The kernel module reports its version in /proc/driver/nvidia/version
 * ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ...", written by
 * kernel-open/nvidia/nv-procfs.c) and through NV_ESC_CHECK_VERSION_STR with cmd QUERY (osapi.c copies
 * NV_VERSION_STRING). Only the families whose layouts nv_abi_family.h pins are accepted: 590.x and 595.x, for
 * example, already drop UVM_FREE_PARAMS.length (590.44.01) but keep 580's channel parameters, a mix no table here
 * describes. */
#include "nv_version.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "util/fd_io.h"

static const enum bg_nv_family known[] = {NV_FAMILY_570, NV_FAMILY_580, NV_FAMILY_610};

const char *bg_nv_known_families(void) { return "570.x, 580.x, 610.x"; }

int bg_nv_family_of_major(unsigned major, const char *what, enum bg_nv_family *out) {
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if ((unsigned)known[i] == major) {
      *out = known[i];
      return 0;
    }
  return bg_error(BG_ENOTSUP, "nv: driver version %s (family %u) is not supported; known families: %s", what, major,
                  bg_nv_known_families());
}

/* Reads a decimal number of at most 6 digits at *p; advances *p. */
static int read_num(const char **p, unsigned *v) {
  const char *s = *p;
  unsigned n = 0;
  int digits = 0;
  while (isdigit((unsigned char)*s) && digits < 7) n = n * 10u + (unsigned)(*s++ - '0'), digits++;
  if (digits == 0 || digits > 6) return -1;
  *p = s;
  *v = n;
  return 0;
}

/* Parses a version token of exactly len characters: MAJOR.MINOR[.PATCH]. */
static int parse_token(const char *s, size_t len, bg_nv_driver_version *v) {
  const char *p = s, *end = s + len;
  memset(v, 0, sizeof *v);
  if (read_num(&p, &v->major) || p >= end || *p++ != '.' || read_num(&p, &v->minor)) return -1;
  if (p < end && *p == '.') {
    p++;
    if (read_num(&p, &v->patch)) return -1;
  }
  if (p != end || len >= sizeof v->text) return -1;
  memcpy(v->text, s, len);
  v->text[len] = '\0';
  return 0;
}

int bg_nv_version_parse(const char *text, bg_nv_driver_version *out) {
  if (!text || !out) return bg_error(BG_EINVAL, "nv: version parse: NULL argument");
  size_t len = strlen(text);
  while (len && isspace((unsigned char)text[len - 1])) len--;
  bg_nv_driver_version v;
  if (parse_token(text, len, &v))
    return bg_error(BG_EFORMAT, "nv: driver version '%.*s' is not MAJOR.MINOR[.PATCH]", (int)(len > 64 ? 64 : len), text);
  int r = bg_nv_family_of_major(v.major, v.text, &v.family);
  if (r) return r;
  *out = v;
  return 0;
}

int bg_nv_version_parse_proc(const char *proc_text, bg_nv_driver_version *out) {
  if (!proc_text || !out) return bg_error(BG_EINVAL, "nv: version parse: NULL argument");
  const char *line = strstr(proc_text, "NVRM version:");
  if (!line) return bg_error(BG_EFORMAT, "nv: /proc/driver/nvidia/version has no 'NVRM version:' line");
  const char *eol = strchr(line, '\n');
  if (!eol) eol = line + strlen(line);
  /* the first whitespace-separated token of the form N.N[.N] ("x86_64" and the build host never are) */
  for (const char *p = line + strlen("NVRM version:"); p < eol;) {
    while (p < eol && isspace((unsigned char)*p)) p++;
    const char *t = p;
    while (p < eol && !isspace((unsigned char)*p)) p++;
    bg_nv_driver_version v;
    if (p > t && parse_token(t, (size_t)(p - t), &v) == 0) {
      int r = bg_nv_family_of_major(v.major, v.text, &v.family);
      if (r) return r;
      *out = v;
      return 0;
    }
  }
  return bg_error(BG_EFORMAT, "nv: 'NVRM version:' line of /proc/driver/nvidia/version has no MAJOR.MINOR[.PATCH]: %.*s",
                  (int)(eol - line > 160 ? 160 : eol - line), line);
}

int bg_nv_version_read_proc(const char *path, bg_nv_driver_version *out) {
  if (!path || !out) return bg_error(BG_EINVAL, "nv: version: NULL argument");
  int fd = -1;
  int r = bg_open_regular(path, O_RDONLY, &fd);
  if (r) return bg_error_context(r, "nv: driver version (is the nvidia kernel module loaded?)");
  char buf[1024];
  size_t n = 0;
  for (;;) { /* /proc files may return short reads */
    ssize_t k = read(fd, buf + n, sizeof buf - 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      int e = errno;
      close(fd);
      return bg_error(BG_EIO, "nv: cannot read %s: %s", path, strerror(e));
    }
    if (k == 0 || (n += (size_t)k) == sizeof buf - 1) break;
  }
  close(fd);
  buf[n] = '\0';
  r = bg_nv_version_parse_proc(buf, out);
  return r ? bg_error_context(r, "nv: %s", path) : 0;
}
