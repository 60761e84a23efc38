/* examples/fmnist_io.c: what the two Fashion-MNIST examples share (fmnist_io.h): the gzip'd IDX reader with its
 * progress bar, and the parameter initialization. */
#include "fmnist_io.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

const char *fm_prog = "fashion_mnist";

/* ---- IDX files (big-endian magic 0x0000 08 0d: unsigned bytes, d dimensions, then d big-endian sizes) ---- */

typedef struct progress {
  const char *what;
  uint64_t total, done;
  int shown;            /* last percentage drawn, -1 none */
  bool tty;
} progress;

static void progress_draw(progress *p, bool end) {
  if (!p->tty) return;
  int pct = p->total ? (int)(p->done * 100 / p->total) : 100;
  if (pct == p->shown && !end) return;
  p->shown = pct;
  int bar = pct * 30 / 100;
  fprintf(stderr, "\r%-28s [%.*s%*s] %3d%%", p->what, bar, "##############################", 30 - bar, "", pct);
  if (end) fputc('\n', stderr);
}

static uint32_t be32(const unsigned char *b) { return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; }

int fm_read_idx(const char *path, unsigned dims, uint32_t *dim, unsigned char **data) {
  *data = NULL;
  struct stat st;
  if (stat(path, &st) < 0) {
    fprintf(stderr, "%s: %s: %s (give the folder of the *-ubyte.gz files with --data DIR)\n", fm_prog, path, strerror(errno));
    return -1;
  }
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: %s: cannot open: %s\n", fm_prog, path, strerror(errno));
    return -1;
  }
  unsigned char hdr[4 + 4 * 3];
  size_t hlen = 4 + 4 * (size_t)dims;
  int n = gzread(f, hdr, (unsigned)hlen);
  if (n != (int)hlen) {
    fprintf(stderr, "%s: %s: truncated header: %d of %zu bytes (expected an IDX file, gzip'd)\n", fm_prog, path, n < 0 ? 0 : n, hlen);
    gzclose(f);
    return -1;
  }
  uint32_t magic = be32(hdr), want = 0x800u | dims;
  if (magic != want) {
    fprintf(stderr, "%s: %s: bad magic 0x%08x, expected 0x%08x (IDX, unsigned bytes, %u dimensions)\n", fm_prog, path, magic, want, dims);
    gzclose(f);
    return -1;
  }
  uint64_t total = 1;
  for (unsigned i = 0; i < dims; i++) {
    dim[i] = be32(hdr + 4 + 4 * i);
    total *= dim[i];
  }
  if (!total || total > (1ull << 32)) {
    fprintf(stderr, "%s: %s: %llu data bytes in the header, expected 1 to 2^32\n", fm_prog, path, (unsigned long long)total);
    gzclose(f);
    return -1;
  }
  unsigned char *buf = malloc(total);
  if (!buf) {
    fprintf(stderr, "%s: %s: out of memory for %llu bytes\n", fm_prog, path, (unsigned long long)total);
    gzclose(f);
    return -1;
  }
  const char *base = strrchr(path, '/');
  progress p = {.what = base ? base + 1 : path, .total = total, .shown = -1, .tty = isatty(STDERR_FILENO)};
  while (p.done < total) {
    uint64_t chunk = total - p.done < (1u << 20) ? total - p.done : (1u << 20);
    int got = gzread(f, buf + p.done, (unsigned)chunk);
    if (got <= 0) break;
    p.done += (uint64_t)got;
    progress_draw(&p, false);
  }
  progress_draw(&p, true);
  int zerr = 0;
  char zmsg[128];
  snprintf(zmsg, sizeof zmsg, "%s", gzerror(f, &zerr)); /* the string is zlib's until gzclose */
  gzclose(f);
  if (p.done < total) {
    fprintf(stderr, "%s: %s: truncated: %llu of %llu data bytes%s%s\n", fm_prog, path, (unsigned long long)p.done,
            (unsigned long long)total, zerr ? ": " : "", zerr ? zmsg : "");
    free(buf);
    return -1;
  }
  *data = buf;
  return 0;
}


static uint64_t rng = 0x9e3779b97f4a7c15ull;
uint32_t fm_rnd(void) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}
static float uniform(float bound) { return ((float)(fm_rnd() >> 8) / (float)(1u << 24) * 2.0f - 1.0f) * bound; }

bg_tensor *fm_param(bg_tctx *c, unsigned ndim, const int64_t *shape, int64_t fan_in) {
  int64_t n = 1;
  for (unsigned i = 0; i < ndim; i++) n *= shape[i];
  float *v = malloc((size_t)n * sizeof *v);
  if (!v) return NULL;
  float bound = 1.0f / sqrtf((float)fan_in);
  for (int64_t i = 0; i < n; i++) v[i] = uniform(bound);
  bg_tensor *t = bg_tn_requires_grad(bg_tn_from(c, BG_FLOAT32, ndim, shape, v), true);
  free(v);
  return t;
}

bool fm_parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = s ? strtoul(s, &end, 10) : 0;
  if (!s || errno || *end || end == s || v < lo || v > hi) {
    fprintf(stderr, "%s: %s '%s': expected an integer in %u..%u\n", fm_prog, opt, s ? s : "", lo, hi);
    return false;
  }
  *out = (unsigned)v;
  return true;
}
