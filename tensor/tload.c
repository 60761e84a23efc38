/* tensor/tload.c: loading file bytes into device buffers (bg_tn_from_file; bg_tn_load_safetensors in safetensors.c).
 *
 * The file is opened with O_DIRECT where the file system takes it (open(2) gives EINVAL where it does not, and a read
 * that the file system refuses with EINVAL makes the load start again without it): O_DIRECT reads need the file
 * offset, the length and the memory address aligned to the logical block size (4096 covers every block size Linux
 * allows), so reads cover whole blocks and the unaligned head and tail of each destination come out of a staging
 * buffer. The read plan is a list of segments of at most one chunk:
 *   - staged: read into one of a few staging buffers (pinned host memory of the device, bg_buf_alloc(BG_BUF_HOST |
 *     BG_BUF_CPU_ACCESS), registered with io_uring for fixed-buffer reads), then copied to every destination it
 *     overlaps: on the device's copy queue (SDMA), each staging buffer reused only once its copy signalled; by
 *     bg_buf_write where the device has no copy queue or its host memory no CPU view (a GPU behind USB); by memcpy
 *     on the CPU device;
 *   - direct (CPU device, host memory destinations): read straight into the destination where it is aligned.
 * Up to DEPTH reads are in flight with io_uring; pread reads one at a time through the same loop (tload_io.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensor/tensor_internal.h"
#include "tensor/tload.h"
#include "util/fd_io.h"
#include "util/progress.h"

uint64_t t_load_chunk;
bool t_load_force_pread;
bool t_load_no_direct;

enum { BLK = 4096, NSLOT = 4, DEPTH = 8, COPIES_PER_SUBMIT = 32 };
#define DEFAULT_CHUNK ((uint64_t)4 << 20)
#define PROGRESS_FROM ((uint64_t)64 << 20)

typedef struct seg {
  uint64_t off, len;       /* file range read (aligned when O_DIRECT) */
  uint64_t need;           /* bytes that must come back (the rest lies past the end of the file) */
  uint64_t done;           /* bytes read so far */
  uint8_t *direct;         /* destination memory, or NULL: staged */
  int slot;
} seg;

enum { S_FREE, S_READ, S_COPY };
typedef struct slot {
  bg_buf *buf;             /* NULL when the memory is malloc'd (no CPU view of the device's host memory) */
  uint8_t *cpu;
  bg_queue *q;
  bg_signal *sig;
  uint64_t sig_val;        /* the value its last copy signals */
  int state;
} slot;

enum { M_MEMCPY, M_QUEUE, M_WRITE };

typedef struct loader {
  bg_dev *dev;
  const char *path;
  uint64_t size, blk, chunk;
  const tload_target *tg;
  size_t ntg;
  uint8_t **tcpu;          /* M_MEMCPY: each target's CPU view */
  uint64_t *da, *db;       /* each target's bytes read directly: [da, db) */
  seg *segs;
  size_t nseg, segcap;
  uint64_t pend_lo, pend_hi; /* a staged range being gathered */
  bool has_pend;
  slot sl[NSLOT];
  unsigned nslot;
  int mode;
  tload_io *io;
  bg_load_stats *st;
  bool direct_einval;      /* a read failed with EINVAL under O_DIRECT */
} loader;

static uint64_t down(uint64_t v, uint64_t a) { return v / a * a; }
static uint64_t up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static int add_seg(loader *L, uint64_t off, uint64_t len, uint8_t *direct) {
  if (L->nseg == L->segcap) {
    size_t ncap = L->segcap ? L->segcap * 2 : 16;
    seg *ns = realloc(L->segs, ncap * sizeof *ns);
    if (!ns) return bg_error(BG_ENOMEM, "%s: out of host memory planning the reads", L->path);
    L->segs = ns;
    L->segcap = ncap;
  }
  uint64_t need = off >= L->size ? 0 : (L->size - off < len ? L->size - off : len);
  L->segs[L->nseg++] = (seg){off, len, need, 0, direct, -1};
  return 0;
}

/* [lo, hi) in chunk-sized segments (chunk boundaries at multiples of the chunk from lo). */
static int add_range(loader *L, uint64_t lo, uint64_t hi, uint8_t *direct) {
  for (uint64_t o = lo; o < hi; o += L->chunk) {
    uint64_t n = hi - o < L->chunk ? hi - o : L->chunk;
    int e = add_seg(L, o, n, direct ? direct + (o - lo) : NULL);
    if (e < 0) return e;
  }
  return 0;
}

static int flush_staged(loader *L) {
  if (!L->has_pend) return 0;
  L->has_pend = false;
  return add_range(L, L->pend_lo, L->pend_hi, NULL);
}

/* A staged block range: merged with the one gathered before when they touch (a block shared by two tensors is read once). */
static int add_staged(loader *L, uint64_t lo, uint64_t hi) {
  if (L->has_pend && lo <= L->pend_hi) {
    if (hi > L->pend_hi) L->pend_hi = hi;
    return 0;
  }
  int e = flush_staged(L);
  L->pend_lo = lo;
  L->pend_hi = hi;
  L->has_pend = true;
  return e;
}

static int plan(loader *L) {
  int e = 0;
  for (size_t i = 0; i < L->ntg && e >= 0; i++) {
    uint64_t lo = L->tg[i].lo, hi = L->tg[i].hi, b = L->blk;
    L->da[i] = L->db[i] = lo;
    if (lo == hi) continue;
    uint64_t a = up(lo, b), z = down(hi, b);
    bool direct = L->mode == M_MEMCPY && ((uintptr_t)L->tcpu[i] - lo) % b == 0 && a < z;
    if (!direct) {
      e = add_staged(L, down(lo, b), up(hi, b));
      continue;
    }
    if (lo < a) e = add_staged(L, down(lo, b), a);
    if (e >= 0) e = flush_staged(L);
    if (e >= 0) e = add_range(L, a, z, L->tcpu[i] + (a - lo));
    L->da[i] = a;
    L->db[i] = z;
    if (e >= 0 && z < hi) e = add_staged(L, z, up(hi, b));
  }
  return e < 0 ? e : flush_staged(L);
}

/* ---- staging ---- */

static void free_slots(loader *L) {
  for (unsigned i = 0; i < L->nslot; i++) {
    slot *s = &L->sl[i];
    if (s->state == S_COPY && bg_signal_wait(s->sig, s->sig_val, 0) < 0)
      BG_LOG(1, "load: %s: a staging copy did not finish: %s", L->path, bg_last_error());
    if (s->buf) bg_buf_free(s->buf);
    else free(s->cpu);
    bg_queue_free(s->q);
    bg_signal_free(s->sig);
  }
  L->nslot = 0;
}

static int make_slots(loader *L, unsigned n) {
  bool queue = L->mode == M_QUEUE;
  for (unsigned i = 0; i < n; i++) {
    slot *s = &L->sl[L->nslot++];
    memset(s, 0, sizeof *s);
    /* O_DIRECT reads need the memory block-aligned: the CPU device aligns small buffers to less */
    if (bg_buf_alloc(L->dev, L->chunk, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &s->buf) == 0 && bg_buf_cpu(s->buf) &&
        (uintptr_t)bg_buf_cpu(s->buf) % BLK == 0) {
      s->cpu = bg_buf_cpu(s->buf);
    } else {
      bg_buf_free(s->buf);   /* no CPU view (behind USB) or unaligned: host memory and bg_buf_write */
      s->buf = NULL;
      queue = false;
      void *p = NULL;
      if (posix_memalign(&p, BLK, L->chunk)) return bg_error(BG_ENOMEM, "%s: out of host memory for staging", L->path);
      s->cpu = p;
    }
    if (L->mode == M_QUEUE && queue &&
        (bg_queue_new(L->dev, BG_QUEUE_COPY, &s->q) < 0 || bg_signal_new(L->dev, 0, &s->sig) < 0))
      return bg_error_context(-BG_EIO, "%s: staging copies: ", L->path);
  }
  if (L->mode == M_QUEUE && !queue) L->mode = M_WRITE;
  return 0;
}

/* A staging buffer to read into: a free one, or one whose copy has signalled; with `block`, waits for the oldest
 * copy. -1: none yet (reads are in flight); < -1: an error. */
static int get_slot(loader *L, bool block) {
  for (unsigned i = 0; i < L->nslot; i++)
    if (L->sl[i].state == S_FREE) return (int)i;
  int oldest = -1;
  for (unsigned i = 0; i < L->nslot; i++) {
    slot *s = &L->sl[i];
    if (s->state != S_COPY) continue;
    uint64_t v = 0;
    if (bg_signal_value(s->sig, &v) < 0) return -2;
    if (v >= s->sig_val) {
      s->state = S_FREE;
      return (int)i;
    }
    if (oldest < 0 || s->sig_val < L->sl[oldest].sig_val) oldest = (int)i;
  }
  if (!block || oldest < 0) return -1;
  if (bg_signal_wait(L->sl[oldest].sig, L->sl[oldest].sig_val, 0) < 0) return -2;
  L->sl[oldest].state = S_FREE;
  return oldest;
}

static int submit_copies(loader *L, slot *s) {
  bg_queue_signal(s->q, bg_sig(s->sig), bg_const(++s->sig_val));
  int e = bg_queue_submit(s->q, NULL, 0);
  bg_queue_reset(s->q);
  return e < 0 ? bg_error_context(e, "%s: copy to the device: ", L->path) : 0;
}

/* Copies what staged segment g brought to every destination it overlaps (outside their direct ranges). */
static int deliver(loader *L, const seg *g) {
  slot *s = &L->sl[g->slot];
  uint64_t lo = g->off, hi = g->off + g->need;
  size_t i = 0, nq = 0, hi_i = L->ntg;
  while (i < hi_i) {   /* the first target ending after lo (targets are sorted and disjoint) */
    size_t mid = i + (hi_i - i) / 2;
    if (L->tg[mid].hi <= lo) i = mid + 1;
    else hi_i = mid;
  }
  for (; i < L->ntg && L->tg[i].lo < hi; i++) {
    const tload_target *t = &L->tg[i];
    uint64_t plo[2] = {t->lo, L->db[i]}, phi[2] = {L->da[i], t->hi};   /* the parts not read directly */
    for (int k = 0; k < 2; k++) {
      uint64_t a = plo[k] > lo ? plo[k] : lo, b = phi[k] < hi ? phi[k] : hi;
      if (a >= b) continue;
      const uint8_t *src = s->cpu + (a - lo);
      uint64_t doff = a - t->lo, n = b - a;
      int e = 0;
      if (L->mode == M_MEMCPY) memcpy(L->tcpu[i] + doff, src, n);
      else if (L->mode == M_WRITE) e = bg_buf_write(t->buf, doff, src, n);
      else {
        bg_queue_copy(s->q, bg_addr(t->buf, doff), bg_addr(s->buf, a - lo), n);
        if (++nq % COPIES_PER_SUBMIT == 0) e = submit_copies(L, s);
      }
      if (e < 0) return bg_error_context(e, "%s: writing file bytes [%" PRIu64 ", %" PRIu64 ") to the device: ",
                                         L->path, a, b);
    }
  }
  L->st->chunks_copied++;
  if (L->mode == M_QUEUE && nq % COPIES_PER_SUBMIT) {
    int e = submit_copies(L, s);
    if (e < 0) return e;
  }
  s->state = L->mode == M_QUEUE && nq ? S_COPY : S_FREE;
  return 0;
}

static int submit(loader *L, size_t k) {
  seg *g = &L->segs[k];
  uint8_t *dst = g->direct ? g->direct : L->sl[g->slot].cpu;
  int idx = g->direct ? -1 : g->slot;   /* every staging buffer is registered, in slot order */
  L->st->reads++;
  return t_io_submit(L->io, g->off + g->done, dst + g->done, (uint32_t)(g->len - g->done), idx, k);
}

/* The read loop: keeps reads in flight, hands each finished staged chunk to deliver(). */
static int pump(loader *L, bg_progress *pg) {
  size_t next = 0, ndone = 0;
  unsigned inflight = 0, depth = t_io_depth(L->io);
  int e = 0;
  while (ndone < L->nseg) {
    while (next < L->nseg && inflight < depth) {
      seg *g = &L->segs[next];
      if (!g->direct) {
        int si = get_slot(L, inflight == 0);
        if (si < -1) {
          e = bg_error_context(-BG_EIO, "%s: staging copy: ", L->path);
          goto out;
        }
        if (si < 0) break;
        g->slot = si;
        L->sl[si].state = S_READ;
      }
      if ((e = submit(L, next)) < 0) goto out;
      next++;
      if (++inflight > L->st->max_inflight) L->st->max_inflight = inflight;
    }
    if (!inflight) {   /* cannot happen: with nothing in flight get_slot waits for a copy */
      e = bg_error(BG_EIO, "%s: no staging buffer for the next read", L->path);
      goto out;
    }
    uint64_t tag;
    int64_t res;
    if ((e = t_io_wait(L->io, &tag, &res)) < 0) goto out;
    seg *g = &L->segs[tag];
    if (res < 0) {
      L->direct_einval = res == -EINVAL && L->st->used_direct;
      inflight--;
      e = bg_error(BG_EIO, "%s: read of %" PRIu64 " bytes at byte %" PRIu64 ": %s", L->path, g->len - g->done,
                   g->off + g->done, strerror((int)-res));
      goto out;
    }
    g->done += (uint64_t)res;
    L->st->bytes += (uint64_t)res;
    if (g->done < g->need) {
      if (res == 0) {
        inflight--;
        e = bg_error(BG_EIO, "%s: the file ended at byte %" PRIu64 ", expected %" PRIu64 " bytes (did it shrink while "
                     "loading?)", L->path, g->off + g->done, L->size);
        goto out;
      }
      if ((e = submit(L, tag)) < 0) {   /* a short read: the rest of the segment */
        inflight--;
        goto out;
      }
      continue;
    }
    inflight--;
    if (!g->direct && (e = deliver(L, g)) < 0) goto out;
    bg_progress_add(pg, g->need, NULL);
    ndone++;
  }
out:
  /* reads still in flight write into the staging buffers: wait for them before those are freed */
  while (inflight > 0) {
    uint64_t tag;
    int64_t res;
    if (t_io_wait(L->io, &tag, &res) < 0) break;
    if (res > 0 && L->segs[tag].done + (uint64_t)res < L->segs[tag].need) {
      L->segs[tag].done += (uint64_t)res;
      if (submit(L, tag) == 0) continue;
    }
    inflight--;
  }
  return e;
}

static int load_once(loader *L, bool try_direct) {
  int fd = -1, e = -BG_EINVAL;
  L->st->used_direct = false;
  L->st->used_uring = false;
  if (try_direct) {
    e = bg_open_regular(L->path, O_RDONLY | O_DIRECT, &fd);
    L->st->used_direct = e == 0;
  }
  if (e < 0 && (e = bg_open_regular(L->path, O_RDONLY, &fd)) < 0) return e;
  L->blk = L->st->used_direct ? BLK : 1;
  L->nseg = 0;
  L->has_pend = false;
  if ((e = plan(L)) < 0) goto out;
  unsigned nstaged = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < L->nseg; i++) {
    nstaged += !L->segs[i].direct;
    total += L->segs[i].need;
  }
  if ((e = make_slots(L, nstaged < NSLOT ? nstaged : NSLOT)) < 0) goto out;
  void *bufs[NSLOT];
  size_t sizes[NSLOT];
  for (unsigned i = 0; i < L->nslot; i++) {
    bufs[i] = L->sl[i].cpu;
    sizes[i] = L->chunk;
  }
  if ((e = t_io_open(fd, DEPTH, bufs, sizes, L->nslot, t_load_force_pread, &L->io)) < 0) goto out;
  L->st->used_uring = t_io_uring(L->io);
  bg_progress pg = {.on = false};
  const char *base = strrchr(L->path, '/');
  if (total >= PROGRESS_FROM) bg_progress_start(&pg, base ? base + 1 : L->path, total, true);
  e = pump(L, &pg);
  bg_progress_end(&pg);
out:
  t_io_close(L->io);
  L->io = NULL;
  free_slots(L);
  close(fd);
  return e;
}

int t_load_targets(bg_dev *dev, const char *path, uint64_t size, const tload_target *tg, size_t n,
                   bg_load_stats *st) {
  loader L = {.dev = dev, .path = path, .size = size, .tg = tg, .ntg = n, .st = st};
  uint64_t ch = t_load_chunk && t_load_chunk % BLK == 0 ? t_load_chunk : DEFAULT_CHUNK;
  uint64_t span = n ? up(tg[n - 1].hi - tg[0].lo, BLK) + 2 * BLK : BLK;
  L.chunk = ch < span ? ch : span;   /* a small load gets small staging buffers */
  bool cpu = !strcmp(bg_dev_arch(dev), "host");
  L.tcpu = calloc(n ? n : 1, sizeof *L.tcpu);
  L.da = calloc(n ? n : 1, sizeof *L.da);
  L.db = calloc(n ? n : 1, sizeof *L.db);
  int e = 0;
  if (!L.tcpu || !L.da || !L.db) e = bg_error(BG_ENOMEM, "%s: out of host memory", path);
  for (size_t i = 0; i < n && e >= 0; i++) {
    L.tcpu[i] = bg_buf_cpu(tg[i].buf);
    cpu = cpu && L.tcpu[i];
  }
  L.mode = cpu ? M_MEMCPY : bg_dev_has_copy_queue(dev) ? M_QUEUE : M_WRITE;
  int mode = L.mode;
  if (e >= 0) {
    e = load_once(&L, !t_load_no_direct);
    if (e < 0 && L.direct_einval) {   /* the file system took O_DIRECT at open but not for reads */
      L.direct_einval = false;
      L.mode = mode;
      e = load_once(&L, false);
    }
  }
  free(L.segs);
  free(L.tcpu);
  free(L.da);
  free(L.db);
  return e;
}

/* ---- public ---- */

void bg_tctx_load_stats(const bg_tctx *c, bg_load_stats *st) { *st = c->load_st; }

bg_tensor *bg_tn_from_file(bg_tctx *c, const char *path, uint64_t offset, enum bg_dtype t, unsigned ndim,
                           const int64_t *shape) {
  if (!c) {
    bg_error(BG_EINVAL, "from_file: context is NULL");
    return NULL;
  }
  if (!path) return t_fail(c, "from_file: path is NULL");
  if (!t_dtype_ok(t)) return t_fail(c, "from_file: %s: unknown dtype %d", path, (int)t);
  if (ndim > BG_MAX_DIMS) return t_fail(c, "from_file: %s: %u dimensions, at most %d", path, ndim, BG_MAX_DIMS);
  if (ndim && !shape) return t_fail(c, "from_file: %s: shape is NULL for %u dimensions", path, ndim);
  uint64_t numel = 1, esz = bg_dtype_size(t);
  for (unsigned i = 0; i < ndim; i++) {
    if (shape[i] < 0) return t_fail(c, "from_file: %s: dimension %u is %" PRId64 ", expected a size >= 0", path, i,
                                    shape[i]);
    if (shape[i] && numel > (uint64_t)INT64_MAX / esz / (uint64_t)shape[i])
      return t_fail(c, "from_file: %s: shape too large", path);
    numel *= (uint64_t)shape[i];
  }
  uint64_t bytes = numel * esz;
  int fd, e = bg_open_regular(path, O_RDONLY, &fd);
  if (e < 0) return t_fail(c, "from_file: %s", bg_last_error());
  struct stat sb;
  e = fstat(fd, &sb);
  int err = errno;
  close(fd);
  if (e < 0) return t_fail(c, "from_file: %s: fstat: %s", path, strerror(err));
  uint64_t size = (uint64_t)sb.st_size;
  tshape sh = t_mkshape(ndim, shape);
  if (offset > size || bytes > size - offset) {
    SHSTR(ss, &sh);
    return t_fail(c, "from_file: %s has %" PRIu64 " bytes, expected at least %" PRIu64 " (offset %" PRIu64 " + %" PRIu64
                  " bytes of %s %s)", path, size, offset + bytes < offset ? UINT64_MAX : offset + bytes, offset, bytes,
                  bg_dtype_name(t), ss);
  }
  int64_t uid;
  if (t_new_buffer(c, t_scalar(t), (int64_t)numel, &uid) < 0) return t_fail(c, "from_file: %s: %s", path, bg_last_error());
  tload_target tg = {offset, offset + bytes, c->bufs[uid].b};
  if (bytes && t_load_targets(c->dev, path, size, &tg, 1, &c->load_st) < 0) {
    bg_buf_free(c->bufs[uid].b);
    c->bufs[uid].b = NULL;
    return t_fail(c, "from_file: %s", bg_last_error());
  }
  node u = n_buffer(c, uid, (int64_t)numel, t_scalar(t));
  if (u) u = n_reshape(c, u, &sh);
  return u ? t_wrap(c, u) : t_fail(c, "from_file: %s: out of host memory", path);
}
