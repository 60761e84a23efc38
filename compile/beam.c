/* compile/beam.c: BEAM search over bg_kopts, timed on the device, cached on disk (beam.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/beam.h"
#include "compile/kcache.h"
#include "compile/kernel_internal.h"
#include "compile/ktc.h"
#include "compile/sha256.h"
#include "util/env.h"

enum { BEAM_RUNS = 3, BEAM_ROUNDS = 4, BEAM_MAX_CANDIDATES = 48, BEAM_MAX_ACTIONS = 64 };

static bg_beam_stats stats;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(unsigned long *field, unsigned long n) {
  pthread_mutex_lock(&stats_lock);
  *field += n;
  pthread_mutex_unlock(&stats_lock);
}

void bg_beam_get_stats(bg_beam_stats *st) {
  pthread_mutex_lock(&stats_lock);
  *st = stats;
  pthread_mutex_unlock(&stats_lock);
}

int bg_beam_width(void) {
  long v;
  int r = bg_env_int("BEAM", &v);
  return r < 0 ? r : (int)v;
}

static unsigned factor(uint8_t f) { return f > 1 ? f : 1; }

/* 0 and 1 both mean "none"; results always say 0, so equal choices compare equal. */
static void canonical(bg_kopts *o) {
  for (int i = 0; i < 8; i++)
    if (o->upcast[i] <= 1) o->upcast[i] = 0;
  if (o->unroll <= 1) o->unroll = 0;
  if (o->group <= 1) o->group = 0;
  if (o->tile <= 1) o->tile = 0;
  o->no_opt = false;
}

/* ---------------- candidates ---------------- */

/* GPU actions (AMD): a work-group reduce of 8..256 threads over the outermost reduce range, local tiles
 * of 4, 8, 16 and, on a processor with a tensor-core form (compile/ktc.h: WMMA on gfx11/gfx1200/gfx1201, MFMA on
 * gfx942/gfx950), tc for a kernel without other options (the compile rejects a kernel they do not fit: the search
 * drops it). */
static size_t gpu_actions(const kinfo *info, const bg_kopts *base, bg_kopts *out, size_t max, size_t n, const char *arch) {
  if (!info->nred || base->tile > 1 || base->tc) return n;
  bool plain = base->unroll <= 1 && base->group <= 1;
  for (int i = 0; i < 8; i++) plain &= base->upcast[i] <= 1;
  static const uint8_t tiles[] = {4, 8, 16, 0};   /* 0: tc */
  for (size_t t = 0; plain && info->nout == 2 && info->nred == 1 && t < sizeof tiles; t++) {
    if (!tiles[t] && ktc_form_of(arch) == KTC_NONE) continue;
    if (n < max) {
      memset(&out[n], 0, sizeof out[n]);
      out[n].tile = tiles[t];
      out[n].tc = !tiles[t];
    }
    n++;
  }
  int64_t e;
  if (base->group > 1 || !ir_is_const(info->red[0]->src[0], &e)) return n;
  if (info->nred == 1 && base->unroll > 1) e /= base->unroll;
  for (unsigned g = 8; g <= 256; g *= 2) {
    if (e % g) continue;
    if (n < max) {
      out[n] = *base;
      out[n].group = (uint16_t)g;
    }
    n++;
  }
  return n;
}

static int actions(ir_ctx *ctx, const ir_node *sink, const bg_kopts *from, bg_kopts *out, size_t max, const char *gpu);

int bg_beam_actions(ir_ctx *ctx, const ir_node *sink, const bg_kopts *from, bg_kopts *out, size_t max) {
  return actions(ctx, sink, from, out, max, NULL);
}

int bg_beam_actions_amdgpu(ir_ctx *ctx, const ir_node *sink, const char *mcpu, const bg_kopts *from, bg_kopts *out,
                           size_t max) {
  return actions(ctx, sink, from, out, max, mcpu ? mcpu : "gfx");
}

/* gpu: the AMD processor name, NULL for the CPU. */
static int actions(ir_ctx *ctx, const ir_node *sink, const bg_kopts *from, bg_kopts *out, size_t max, const char *gpu) {
  kinfo info;
  int rc = kverify(ctx, sink, &info);
  if (rc) return rc;
  bg_kopts base;
  memset(&base, 0, sizeof base);
  if (from) base = *from;
  base.no_opt = false;
  if (base.tile > 1 || base.tc) return 0;   /* tiles and WMMA take no other option */
  static const unsigned amounts[] = {2, 3, 4, 8};
  size_t n = 0;
  unsigned copies = 1;
  for (unsigned p = 0; p < info.nout && p < 8; p++) copies *= factor(base.upcast[p]);
  for (unsigned p = 0; p < info.nout && p < 8; p++) {
    int64_t e;
    if (!ir_is_const(info.out[p]->src[0], &e)) continue; /* symbolic extents are not split */
    for (size_t a = 0; a < sizeof amounts / sizeof amounts[0]; a++) {
      unsigned f = factor(base.upcast[p]) * amounts[a];
      if (f > KMAX_UPCAST || e % f || copies * amounts[a] > 256) continue;
      if (n < max) {
        out[n] = base;
        out[n].upcast[p] = (uint8_t)f;
      }
      n++;
    }
  }
  int64_t e;
  if (info.nred && ir_is_const(info.red[info.nred - 1]->src[0], &e)) {
    for (size_t a = 0; a < sizeof amounts / sizeof amounts[0]; a++) {
      unsigned f = factor(base.unroll) * amounts[a];
      if (f > KMAX_UNROLL || e % f) continue;
      if (base.group > 1 && info.nred == 1 && (e / f) % base.group) continue;   /* the group must still divide */
      if (n < max) {
        out[n] = base;
        out[n].unroll = (uint8_t)f;
      }
      n++;
    }
  }
  if (gpu) n = gpu_actions(&info, &base, out, max, n, gpu);
  return (int)(n < max ? n : max);
}

static bool same_opts(const bg_kopts *a, const bg_kopts *b) {
  for (int i = 0; i < 8; i++)
    if (factor(a->upcast[i]) != factor(b->upcast[i])) return false;
  return factor(a->unroll) == factor(b->unroll) && (a->group > 1 ? a->group : 1) == (b->group > 1 ? b->group : 1) &&
         factor(a->tile) == factor(b->tile) && a->tc == b->tc;
}

/* "u U0..U7 r R" (CPU; what older caches hold), then " g G t T" when a GPU option is set. */
static void opts_str(const bg_kopts *o, char *buf, size_t n) {
  int w = snprintf(buf, n, "u %u %u %u %u %u %u %u %u r %u", factor(o->upcast[0]), factor(o->upcast[1]), factor(o->upcast[2]),
                   factor(o->upcast[3]), factor(o->upcast[4]), factor(o->upcast[5]), factor(o->upcast[6]),
                   factor(o->upcast[7]), factor(o->unroll));
  if (w < 0 || (size_t)w >= n) return;
  if (o->group > 1 || o->tile > 1 || o->tc)
    snprintf(buf + w, n - (size_t)w, " g %u t %u%s\n", o->group > 1 ? (unsigned)o->group : 1u, factor(o->tile), o->tc ? " tc" : "");
  else snprintf(buf + w, n - (size_t)w, "\n");
}

static bool opts_parse(const char *s, bg_kopts *o) {
  unsigned u[8], r, g = 1, t = 1;
  memset(o, 0, sizeof *o);
  int got = sscanf(s, "u %u %u %u %u %u %u %u %u r %u g %u t %u", &u[0], &u[1], &u[2], &u[3], &u[4], &u[5], &u[6], &u[7], &r,
                   &g, &t);
  if (got != 9 && got != 11) return false;
  if (!g || g > 256 || !t || t > 16) return false;
  o->group = (uint16_t)g;
  o->tile = (uint8_t)t;
  const char *e = got == 11 ? strstr(s, " t ") : NULL;   /* " tc" after the tile */
  if (e) e = strchr(e + 3, ' ');
  o->tc = e && !strncmp(e, " tc", 3);
  for (int i = 0; i < 8; i++) {
    if (!u[i] || u[i] > KMAX_UPCAST) return false;
    o->upcast[i] = (uint8_t)u[i];
  }
  if (!r || r > KMAX_UNROLL) return false;
  o->unroll = (uint8_t)r;
  return true;
}

bool bg_beam_cache_decode(const void *data, size_t size, bg_kopts *out) {
  char txt[96];
  snprintf(txt, sizeof txt, "%.*s", (int)(size < sizeof txt - 1 ? size : sizeof txt - 1), (const char *)data);
  if (!opts_parse(txt, out)) return false;
  canonical(out);
  return true;
}

/* ---------------- scratch buffers and timing ---------------- */

typedef struct bench {
  bg_dev *d;
  kinfo info;
  bg_buf *bufs[KMAX_BUFS];
  uint64_t bytes[KMAX_BUFS];
  uint64_t vals[KMAX_VARS];
  void *want;            /* slot 0 as the unoptimized kernel wrote it */
} bench;

/* Small values every dtype holds exactly, so no candidate meets inf/nan or overflow. */
static void fill(uint8_t *p, uint64_t bytes, ir_dtype dt, unsigned slot) {
  enum ir_scalar s = IR_DT_SCALAR(dt);
  size_t sz = ir_scalar_size(s);
  for (uint64_t i = 0; i * sz + sz <= bytes; i++) {
    int v = (int)((i * 7 + slot * 3) % 9) - 4;
    uint8_t *q = p + i * sz;
    if (s == IR_DT_FLOAT32) {
      float f = (float)v * 0.5f;
      memcpy(q, &f, 4);
    } else if (s == IR_DT_FLOAT16) {
      static const uint16_t h[9] = {0xc000, 0xbe00, 0xbc00, 0xb800, 0, 0x3800, 0x3c00, 0x3e00, 0x4000}; /* -2..2 by .5 */
      memcpy(q, &h[v + 4], 2);
    } else if (s == IR_DT_BOOL) {
      *q = (uint8_t)(v > 0);
    } else {
      int64_t x = v < 0 ? -v : v; /* unsigned-safe */
      memcpy(q, &x, sz);         /* little-endian: the low bytes */
    }
  }
}

static int bench_open(bench *b, bg_dev *d, ir_ctx *ctx, const ir_node *sink) {
  memset(b, 0, sizeof *b);
  b->d = d;
  int rc = kverify(ctx, sink, &b->info);
  if (rc) return rc;
  const ir_node *const *topo;
  size_t n = ir_toposort(ctx, sink, &topo);
  for (size_t i = 0; i < n; i++) { /* each buffer holds its largest index */
    const ir_node *u = topo[i];
    if (u->op != IR_INDEX || u->src[0]->op != IR_DEFINE_GLOBAL) continue;
    int64_t slot = u->src[0]->arg.i, hi = ir_vmax(ctx, u->src[1]);
    uint64_t need = (uint64_t)(hi + 1) * ir_scalar_size(IR_DT_SCALAR(u->src[0]->dt));
    if (slot >= 0 && slot < KMAX_BUFS && need > b->bytes[slot]) b->bytes[slot] = need;
  }
  for (unsigned v = 0; v < b->info.nvars; v++) b->vals[v] = (uint64_t)ir_var_get(b->info.vars[v])->max;
  for (unsigned s = 0; s < b->info.nbufs; s++) {
    uint64_t bytes = b->bytes[s] ? b->bytes[s] : 8;
    if ((rc = bg_buf_alloc(d, bytes, 0, &b->bufs[s])) < 0) return rc;
    uint8_t *tmp = calloc(1, bytes);
    if (!tmp) return bg_error(BG_ENOMEM, "beam: out of host memory for scratch data");
    if (!b->info.buf_written[s]) fill(tmp, bytes, b->info.buf_dt[s], s);
    rc = bg_buf_write(b->bufs[s], 0, tmp, bytes);
    free(tmp);
    if (rc < 0) return rc;
  }
  return 0;
}

static void bench_close(bench *b) {
  for (unsigned s = 0; s < KMAX_BUFS; s++)
    if (b->bufs[s]) bg_buf_free(b->bufs[s]);
  free(b->want);
}

/* Compile, run (output zeroed first), compare with the unoptimized output, time: min of runs. */
static int time_candidate(bench *b, ir_ctx *ctx, const ir_node *sink, const bg_kopts *o, double *us) {
  bg_kernel k;
  bg_program *prg = NULL;
  count(&stats.compiles, 1);
  int rc = bg_kernel_build(b->d, ctx, sink, o, &k, &prg);
  if (rc < 0) return rc;
  uint32_t g[3], l[3];
  for (int i = 0; i < 3; i++) {
    g[i] = k.gsz[i] ? k.gsz[i] : 1;
    l[i] = k.lsz[i] ? k.lsz[i] : 1;
  }
  uint64_t out_bytes = b->bytes[0] ? b->bytes[0] : 8;
  void *got = calloc(1, out_bytes);
  if (!got) rc = bg_error(BG_ENOMEM, "beam: out of host memory");
  if (!rc) rc = bg_buf_write(b->bufs[0], 0, got, out_bytes);
  *us = 1e300;
  for (int r = 0; r < BEAM_RUNS && rc >= 0; r++) {
    double t = 0;
    rc = bg_program_run(prg, b->bufs, b->info.nbufs, b->vals, b->info.nvars, g, l, true, &t);
    if (rc >= 0 && t < *us) *us = t;
  }
  count(&stats.timed_runs, BEAM_RUNS);
  if (rc >= 0) rc = bg_buf_read(b->bufs[0], 0, got, out_bytes);
  if (rc >= 0 && !b->want) {
    b->want = got; /* the first candidate timed is the unoptimized kernel */
    got = NULL;
  } else if (rc >= 0 && memcmp(b->want, got, out_bytes)) {
    char os[64];
    opts_str(o, os, sizeof os);
    rc = bg_error(BG_EINVAL, "beam: %s with opts %.*s writes other bytes than the unoptimized kernel", k.name,
                  (int)strlen(os) - 1, os);
  }
  free(got);
  bg_program_free(prg);
  bg_kernel_free(&k);
  return rc;
}

typedef struct cand {
  bg_kopts o;
  double us;
} cand;

static int by_time(const void *a, const void *b) {
  double x = ((const cand *)a)->us, y = ((const cand *)b)->us;
  return x < y ? -1 : x > y;
}

static int search(bg_dev *d, ir_ctx *ctx, const ir_node *sink, unsigned width, bg_kopts *best) {
  bench b;
  int rc = bench_open(&b, d, ctx, sink);
  cand *seen = calloc(BEAM_MAX_CANDIDATES, sizeof *seen), *beam = calloc(width + BEAM_MAX_CANDIDATES, sizeof *beam);
  size_t nseen = 0, nbeam = 0;
  if (!rc && (!seen || !beam)) rc = bg_error(BG_ENOMEM, "beam: out of host memory");
  if (!rc) {
    memset(&seen[0].o, 0, sizeof seen[0].o);
    rc = time_candidate(&b, ctx, sink, &seen[0].o, &seen[0].us);
    if (!rc) beam[nbeam++] = seen[nseen++];
  }
  count(&stats.searches, 1);
  for (int round = 0; round < BEAM_ROUNDS && !rc; round++) {
    double before = beam[0].us;
    size_t nb = nbeam;
    for (size_t i = 0; i < nb && !rc; i++) {
      bg_kopts acts[BEAM_MAX_ACTIONS];
      const char *arch = bg_dev_arch(d);
      int na = actions(ctx, sink, &beam[i].o, acts, BEAM_MAX_ACTIONS, !strncmp(arch, "gfx", 3) ? arch : NULL);
      if (na < 0) rc = na;
      for (int a = 0; a < na && !rc && nseen < BEAM_MAX_CANDIDATES; a++) {
        bool dup = false;
        for (size_t s = 0; s < nseen && !dup; s++) dup = same_opts(&seen[s].o, &acts[a]);
        if (dup) continue;
        cand c = {acts[a], 0};
        int r = time_candidate(&b, ctx, sink, &c.o, &c.us);
        if (r == -BG_EINVAL) { /* rejected: invalid for this kernel, or a different result */
          BG_LOG(2, "beam: candidate dropped: %s", bg_last_error());
          count(&stats.rejected, 1);
          c.us = 1e300;
        } else if (r < 0) {
          rc = r;
          break;
        }
        seen[nseen++] = c;
        if (c.us < 1e300) beam[nbeam++] = c;
      }
    }
    qsort(beam, nbeam, sizeof *beam, by_time);
    if (nbeam > width) nbeam = width;
    if (beam[0].us >= before) break; /* no round improved: done */
  }
  if (!rc) {
    *best = beam[0].o;
    pthread_mutex_lock(&stats_lock);
    stats.best_us = beam[0].us;
    stats.base_us = seen[0].us;
    pthread_mutex_unlock(&stats_lock);
    char os[64];
    opts_str(best, os, sizeof os);
    BG_LOG(2, "beam: %zu candidates, best %.2f us (unoptimized %.2f us): %.*s", nseen, beam[0].us, seen[0].us,
           (int)strlen(os) - 1, os);
  }
  free(seen);
  free(beam);
  bench_close(&b);
  return rc;
}

/* ---------------- the cache ---------------- */

static int cache_path(bg_dev *d, ir_ctx *ctx, const ir_node *sink, unsigned width, char *path, size_t n) {
  char *ast = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&ast, &len);
  if (!f) return bg_error(BG_ENOMEM, "beam: out of host memory printing a kernel");
  fprintf(f, "baregpu beam v1\narch %s\nwidth %u\n", bg_dev_arch(d), width);
  int pr = ir_print(ctx, sink, f);
  fclose(f);
  if (pr < 0) {
    free(ast);
    return bg_error(BG_ENOMEM, "beam: printing a kernel: %s", ir_error(ctx));
  }
  uint8_t h[32];
  char hex[65], dir[4096];
  bg_sha256(ast, len, h);
  free(ast);
  bg_sha256_hex(h, hex);
  /* No usable cache directory (bg_kcache_dir warned): "" and the search runs uncached. */
  path[0] = '\0';
  if (bg_kcache_dir(dir, sizeof dir) < 0 || bg_kcache_path(dir, hex, "beam", path, n) < 0) path[0] = '\0';
  return 0;
}

int bg_beam_opts(bg_dev *d, ir_ctx *ctx, const ir_node *sink, unsigned width, bg_kopts *out) {
  if (!d || !ctx || !sink || !out) return bg_error(BG_EINVAL, "beam: NULL device, context, kernel or output");
  if (!width) return bg_error(BG_EINVAL, "beam: width 0, expected at least 1");
  char path[4200];
  int rc = cache_path(d, ctx, sink, width, path, sizeof path);
  if (rc < 0) return rc;
  long ign;
  if ((rc = bg_env_int("IGNORE_BEAM_CACHE", &ign)) < 0) return rc;
  if (!ign && path[0]) {
    void *data = NULL;
    size_t size = 0;
    int hit = bg_kcache_load(path, &data, &size);
    if (hit > 0) {
      bool ok = bg_beam_cache_decode(data, size, out);
      free(data);
      if (ok) {
        count(&stats.cache_hits, 1);
        return 0;
      }
      BG_LOG(1, "beam: %s holds no options, searching again", path);
    }
  }
  if ((rc = search(d, ctx, sink, width, out)) < 0) return rc;
  canonical(out);
  char txt[96];
  opts_str(out, txt, sizeof txt);
  if (path[0]) bg_kcache_store(path, txt, strlen(txt)); /* not stored: the cache's warning; the choice still stands */
  return 0;
}
