/* tensor/mjit.c: the multi-device JIT (baregpu/tensor.h bg_mjit): tinygrad's TinyJit over a mesh (its multi-device
 * graphs: tinygrad/engine/jit.py, tinygrad/runtime/graph/hcq.py). Call 1 runs the function. Call 2 runs it with every
 * context of the mesh capturing its launches (jit.c's capture, driven through the hooks of tensor/shard.h) and with
 * bg_tn_to reporting each transfer between the mesh's devices together with how many launches each device had
 * captured by then. Where the devices reach each other (peer mappings of the transfers' destinations, each other's
 * signals, copy queues), the capture is recorded as one compute and one copy queue program per device, ordered across
 * devices by "launches done" and "copies done" signals whose values are epoch * span + step, the epoch a queue variable
 * bound at each replay with the inputs' addresses; a replay binds and submits them. Elsewhere a replay walks the
 * transfers in capture order: before a transfer every device runs its captured launches up to that point
 * (bg_program_run after bg_dev_wait_bufs), then bg_buf_transfer repeats the transfer. Outputs are views of the captured
 * output buffers (the next replay overwrites them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"
#include "util/grow.h"

typedef struct mxfer {
  unsigned src, dst;                /* device indices in the mesh */
  unsigned qidx;                    /* its place in the source's copy program */
  int64_t suid, duid;
  uint64_t bytes;
  size_t at[BG_MESH_MAX];           /* launches each device had captured before the transfer */
} mxfer;

typedef struct msig {               /* an input or output as captured */
  int axis;
  unsigned ndim;
  enum bg_dtype dt;
  int64_t shape[BG_MAX_DIMS];       /* the whole tensor's */
  int64_t pshape[BG_MESH_MAX][BG_MAX_DIMS];  /* each part's (outputs) */
  int64_t uid[BG_MESH_MAX];         /* each part's buffer */
} msig;

typedef struct mdev {                /* a device's replay programs (queue path) */
  bg_queue *qc, *qx;                /* compute; copy (NULL without outgoing transfers) */
  bg_signal *done, *xdone;          /* launches done, copies done: epoch * span + count */
  uint64_t done_va[BG_MESH_MAX], xdone_va[BG_MESH_MAX]; /* their addresses for each device's queues */
  unsigned ncopies;
} mdev;

struct bg_mjit {
  bg_mesh *m;
  bg_mjit_fn fn;
  void *user;
  unsigned nin, nout;
  unsigned long calls, fn_calls, replays;
  bool captured;
  bg_jit *dj[BG_MESH_MAX];          /* each context's capture */
  mxfer *x;
  size_t nx, xcap;
  msig in[16], *out;
  bool queued;                      /* replays submit the recorded programs (else launch by launch) */
  bool per_launch;                  /* tests: never record the programs */
  mdev d[BG_MESH_MAX];
  uint64_t span, epoch;
};

static _Thread_local bg_mjit *capturing; /* the capture bg_tn_to reports to */

static int no_fn(void *user, bg_tensor *const *in, unsigned nin, bg_tensor **out, unsigned nout) {
  (void)user, (void)in, (void)nin, (void)out, (void)nout;
  return bg_error(BG_EINVAL, "mjit: a device JIT is driven by its mesh's JIT");
}

static int64_t uid_of(bg_tensor *t) {
  node u = t_node(t);
  return t_is_view(u) ? ((const tbuf_arg *)(const void *)t_view_buffer(u)->arg.b->data)->uid : -1;
}

static int dev_index(const bg_mesh *m, const bg_tctx *c) {
  for (unsigned i = 0; i < m->n; i++)
    if (m->c[i] == c) return (int)i;
  return -1;
}

int t_mjit_note_transfer(bg_tctx *src, int64_t suid, bg_tctx *dst, int64_t duid, uint64_t bytes) {
  bg_mjit *j = capturing;
  if (!j) return 0;
  int s = dev_index(j->m, src), d = dev_index(j->m, dst);
  if (s < 0 || d < 0)
    return bg_error(BG_ENOTSUP, "mjit: a transfer from %s to %s leaves the mesh; a replay could not repeat it",
                    bg_tctx_device(src), bg_tctx_device(dst));
  if (!bg_grow((void **)&j->x, &j->xcap, j->nx + 1, sizeof *j->x)) return bg_error(BG_ENOMEM, "mjit: out of host memory");
  mxfer *x = &j->x[j->nx++];
  memset(x, 0, sizeof *x);
  x->src = (unsigned)s;
  x->dst = (unsigned)d;
  x->suid = suid;
  x->duid = duid;
  x->bytes = bytes;
  for (unsigned i = 0; i < j->m->n; i++) x->at[i] = t_jit_nlaunches(j->dj[i]);
  return 0;
}

int bg_mjit_new(bg_mesh *m, bg_mjit_fn fn, void *user, unsigned nout, bg_mjit **out) {
  if (!out) return bg_error(BG_EINVAL, "mjit: NULL output");
  *out = NULL;
  if (!m || !fn) return bg_error(BG_EINVAL, "mjit: NULL mesh or function");
  if (!nout || nout > 32) return bg_error(BG_EINVAL, "mjit: %u outputs, expected 1..32", nout);
  bg_mjit *j = calloc(1, sizeof *j);
  if (!j || !(j->out = calloc(nout, sizeof *j->out))) {
    free(j);
    return bg_error(BG_ENOMEM, "mjit: out of host memory");
  }
  j->m = m;
  j->fn = fn;
  j->user = user;
  j->nout = nout;
  *out = j;
  return 0;
}

static void drop_programs(bg_mjit *j) {
  for (unsigned i = 0; i < BG_MESH_MAX; i++) {
    mdev *md = &j->d[i];
    if (md->qc) bg_queue_free(md->qc);
    if (md->qx) bg_queue_free(md->qx);
    if (md->done || md->xdone) bg_tctx_sync(j->m->c[i]); /* programs in flight may still signal them */
    if (md->done) bg_signal_free(md->done);
    if (md->xdone) bg_signal_free(md->xdone);
    memset(md, 0, sizeof *md);
  }
  j->queued = false;
}

static void drop_capture(bg_mjit *j) {
  drop_programs(j);
  for (unsigned i = 0; i < BG_MESH_MAX; i++) {
    bg_jit_free(j->dj[i]);
    j->dj[i] = NULL;
  }
  j->nx = 0;
}

void bg_mjit_free(bg_mjit *j) {
  if (!j) return;
  drop_capture(j);
  free(j->x);
  free(j->out);
  free(j);
}

void t_mjit_set_per_launch(bg_mjit *j, bool on) { j->per_launch = on; }

void bg_mjit_get_stats(const bg_mjit *j, bg_mjit_stats *st) {
  memset(st, 0, sizeof *st);
  st->calls = j->calls;
  st->fn_calls = j->fn_calls;
  st->replays = j->replays;
  st->ndevices = j->m->n;
  st->ntransfers = (unsigned)j->nx;
  for (unsigned i = 0; i < j->m->n && j->captured; i++) {
    st->nkernels[i] = (unsigned)t_jit_nlaunches(j->dj[i]);
    st->nprograms[i] = j->queued ? 1u + (j->d[i].qx != NULL) : st->nkernels[i]; /* else one bg_program_run per launch */
  }
}

static void sig_of(msig *s, bg_sharded *t, bool parts) {
  s->axis = t->axis;
  s->ndim = t->ndim;
  s->dt = t->parts[0]->dt;
  memcpy(s->shape, t->shape, sizeof s->shape);
  for (unsigned i = 0; i < t->m->n; i++) {
    s->uid[i] = uid_of(t->parts[i]);
    if (parts) memcpy(s->pshape[i], t->parts[i]->shape, sizeof s->pshape[i]);
  }
}

static int capture_start(bg_mjit *j, bg_sharded *const *in, unsigned nin) {
  bg_mesh *m = j->m;
  for (unsigned i = 0; i < m->n; i++) {
    int64_t uids[16];
    for (unsigned k = 0; k < nin; k++) uids[k] = uid_of(in[k]->parts[i]);
    int rc = j->dj[i] ? 0 : bg_jit_new(m->c[i], no_fn, NULL, 1, &j->dj[i]);
    if (rc >= 0) rc = t_jit_capture_start(j->dj[i], uids, nin);
    if (rc < 0) {
      for (unsigned k = 0; k < i; k++) t_jit_capture_stop(j->dj[k]);
      return bg_error_context(rc, "mjit: device %u: ", i);
    }
  }
  capturing = j;
  return 0;
}

static int finish_capture(bg_mjit *j, bg_sharded *const *in, bg_sharded **out) {
  for (unsigned k = 0; k < j->nin; k++) sig_of(&j->in[k], in[k], false);
  for (unsigned o = 0; o < j->nout; o++) {
    sig_of(&j->out[o], out[o], true);
    for (unsigned i = 0; i < j->m->n; i++) {
      if (j->out[o].uid[i] < 0) return bg_error(BG_EINVAL, "mjit: output %u part %u is not a buffer after realize", o, i);
      for (unsigned k = 0; k < j->nin; k++)
        if (j->in[k].uid[i] == j->out[o].uid[i])
          return bg_error(BG_ENOTSUP, "mjit: output %u is input %u itself on device %u; return a computed tensor", o, k, i);
    }
  }
  return 0;
}

static int run_until(bg_mjit *j, size_t *cur, const size_t *at, const int64_t (*from)[16], const int64_t (*to)[16]) {
  for (unsigned i = 0; i < j->m->n; i++)
    for (; cur[i] < at[i]; cur[i]++) {
      int rc = t_jit_run_launch(j->dj[i], cur[i], from[i], to[i], j->nin);
      if (rc < 0) return bg_error_context(rc, "mjit: device %u: ", i);
    }
  return 0;
}

/* epoch * span + k, the value a replay's progress signals take at step k (bound at each submit through slot nin). */
static bg_val at_step(bg_queue *q, bg_val epoch, uint64_t span, uint64_t k) {
  return bg_add(q, bg_mul(q, epoch, bg_const(span)), bg_const(k));
}

/* Whether the queue path is possible: every transfer's source device has a copy queue, maps the destination buffer,
 * and each side sees the other's progress signals. 0 (possible, signals made), 1 (not: why logged), or a negative
 * BG_E*. */
static int plan_programs(bg_mjit *j) {
  bg_mesh *m = j->m;
  for (unsigned i = 0; i < m->n; i++) {
    bg_dev *dev = m->c[i]->dev;
    int rc = bg_signal_new(dev, 0, &j->d[i].done);
    if (rc >= 0) rc = bg_signal_new(dev, 0, &j->d[i].xdone);
    if (rc < 0) return bg_error_context(rc, "mjit: device %u: ", i);
  }
  for (unsigned i = 0; i < m->n; i++)
    for (unsigned k = 0; k < m->n; k++) {
      bg_dev *dk = m->c[k]->dev;
      if (bg_signal_va_on(j->d[i].done, dk, &j->d[i].done_va[k]) < 0 ||
          bg_signal_va_on(j->d[i].xdone, dk, &j->d[i].xdone_va[k]) < 0) {
        BG_LOG(1, "mjit: replaying launch by launch: %s", bg_last_error());
        return 1;
      }
    }
  for (size_t t = 0; t < j->nx; t++) {
    mxfer *x = &j->x[t];
    bg_dev *sd = m->c[x->src]->dev;
    uint64_t va;
    if (!bg_dev_has_copy_queue(sd)) {
      BG_LOG(1, "mjit: replaying launch by launch: %s has no copy queue", bg_dev_name(sd));
      return 1;
    }
    if (bg_buf_map_peer(m->c[x->dst]->bufs[x->duid].b, sd, &va) < 0) {
      BG_LOG(1, "mjit: replaying launch by launch: %s", bg_last_error());
      return 1;
    }
    x->qidx = j->d[x->src].ncopies++;
  }
  size_t most = 0;
  for (unsigned i = 0; i < m->n; i++) {
    size_t nl = t_jit_nlaunches(j->dj[i]);
    most = nl > most ? nl : most;
    most = j->d[i].ncopies > most ? j->d[i].ncopies : most;
  }
  j->span = most + 2;
  return 0;
}

/* The slots of a program of device i: inputs' buffer addresses (0..nin-1), then the epoch (nin). */
static void slot_vals(bg_mjit *j, bg_queue *q, unsigned i, bg_val *in, bg_val *epoch, int64_t *from) {
  char name[16];
  for (unsigned k = 0; k < j->nin; k++) {
    snprintf(name, sizeof name, "in%u", k);
    in[k] = bg_var(q, k, name, 0, UINT64_MAX);
    from[k] = j->in[k].uid[i];
  }
  *epoch = bg_var(q, j->nin, "epoch", 0, UINT64_MAX / (j->span + 1));
}

/* Device i's compute program: wait for the device's earlier work, then its launches in capture order; before a launch,
 * a wait for each transfer into the device captured before it (the source's copies-done signal); after each launch
 * the launches-done signal; at the end a wait for the device's own copies, and the timeline. */
static int record_compute(bg_mjit *j, unsigned i) {
  mdev *md = &j->d[i];
  int rc = bg_queue_new(j->m->c[i]->dev, BG_QUEUE_COMPUTE, &md->qc);
  if (rc < 0) return bg_error_context(rc, "mjit: device %u: ", i);
  bg_queue *q = md->qc;
  bg_val in[16], epoch;
  int64_t from[16];
  slot_vals(j, q, i, in, &epoch, from);
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_memory_barrier(q);
  bg_queue_signal(q, bg_const(md->done_va[i]), at_step(q, epoch, j->span, 0));
  size_t nl = t_jit_nlaunches(j->dj[i]), waited = 0;
  for (size_t l = 0; l <= nl; l++) {
    for (size_t t = waited; t < j->nx; t++) {
      const mxfer *x = &j->x[t];
      if (x->at[i] > l) break; /* later transfers were captured after later launches of i */
      if (x->dst == i)
        bg_queue_wait(q, bg_const(j->d[x->src].xdone_va[i]), at_step(q, epoch, j->span, x->qidx + 1u));
      waited = t + 1;
    }
    if (l == nl) break;
    bg_queue_memory_barrier(q);
    t_jit_record_launch(j->dj[i], l, q, from, in, j->nin);
    bg_queue_memory_barrier(q);
    bg_queue_signal(q, bg_const(md->done_va[i]), at_step(q, epoch, j->span, l + 1));
  }
  if (md->ncopies) bg_queue_wait(q, bg_const(md->xdone_va[i]), at_step(q, epoch, j->span, md->ncopies));
  bg_queue_memory_barrier(q);
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  return 0;
}

/* Device i's copy program: each transfer from i in capture order, after both devices' launches captured before it and
 * after the transfer that wrote its source buffer, if one did (no launch of i orders those). */
static int record_copies(bg_mjit *j, unsigned i) {
  mdev *md = &j->d[i];
  if (!md->ncopies) return 0;
  bg_tctx *c = j->m->c[i];
  int rc = bg_queue_new(c->dev, BG_QUEUE_COPY, &md->qx);
  if (rc < 0) return bg_error_context(rc, "mjit: device %u: ", i);
  bg_queue *q = md->qx;
  bg_val in[16], epoch;
  int64_t from[16];
  slot_vals(j, q, i, in, &epoch, from);
  for (size_t t = 0; t < j->nx; t++) {
    const mxfer *x = &j->x[t];
    if (x->src != i) continue;
    uint64_t dva;
    if ((rc = bg_buf_map_peer(j->m->c[x->dst]->bufs[x->duid].b, c->dev, &dva)) < 0) return rc;
    bg_val src = bg_addr(c->bufs[x->suid].b, 0);
    for (unsigned k = 0; k < j->nin; k++)
      if (from[k] == x->suid) src = in[k];
    for (size_t e = 0; e < t; e++) { /* the source buffer came from another transfer (an all-gather forwards chunks) */
      const mxfer *w = &j->x[e];
      if (w->dst == i && w->duid == x->suid)
        bg_queue_wait(q, bg_const(j->d[w->src].xdone_va[i]), at_step(q, epoch, j->span, w->qidx + 1u));
    }
    bg_queue_wait(q, bg_const(md->done_va[i]), at_step(q, epoch, j->span, x->at[i]));
    bg_queue_wait(q, bg_const(j->d[x->dst].done_va[i]), at_step(q, epoch, j->span, x->at[x->dst]));
    bg_queue_copy(q, bg_const(dva), src, x->bytes);
    bg_queue_signal(q, bg_const(md->xdone_va[i]), at_step(q, epoch, j->span, x->qidx + 1u));
  }
  return 0;
}

/* After the capture: the queue programs where the devices allow them (else replays go launch by launch). */
static int build_programs(bg_mjit *j) {
  if (j->per_launch) return 0;
  int rc = plan_programs(j);
  if (rc != 0) {
    drop_programs(j);
    return rc < 0 ? rc : 0;
  }
  for (unsigned i = 0; i < j->m->n && rc >= 0; i++) {
    rc = record_compute(j, i);
    if (rc >= 0) rc = record_copies(j, i);
  }
  if (rc < 0) {
    drop_programs(j);
    return rc;
  }
  j->queued = true;
  return 0;
}

static int replay_programs(bg_mjit *j, const int64_t (*to)[16]) {
  bg_mesh *m = j->m;
  uint64_t slots[BG_MESH_MAX][17];
  j->epoch++;
  for (unsigned i = 0; i < m->n; i++) {
    for (unsigned k = 0; k < j->nin; k++) slots[i][k] = bg_buf_va(m->c[i]->bufs[to[i][k]].b);
    slots[i][j->nin] = j->epoch;
  }
  for (unsigned i = 0; i < m->n; i++) { /* inputs written by another device: wait for it (bg_tn_shard's transfers) */
    bg_buf *bufs[16];
    for (unsigned k = 0; k < j->nin; k++) bufs[k] = m->c[i]->bufs[to[i][k]].b;
    int rc = bg_dev_wait_bufs(m->c[i]->dev, bufs, j->nin);
    if (rc < 0) return bg_error_context(rc, "mjit: device %u: ", i);
  }
  for (int kind = 0; kind < 2; kind++)
    for (unsigned i = 0; i < m->n; i++) {
      bg_queue *q = kind ? j->d[i].qx : j->d[i].qc;
      int rc = q ? bg_queue_submit(q, slots[i], j->nin + 1u) : 0;
      if (rc < 0) return bg_error_context(rc, "mjit: replay on device %u: ", i);
    }
  for (size_t t = 0; t < j->nx; t++) /* host reads of a transferred buffer wait for its source's timeline */
    bg_buf_mark_written(m->c[j->x[t].dst]->bufs[j->x[t].duid].b, m->c[j->x[t].src]->dev);
  for (unsigned i = 0; i < m->n; i++) m->c[i]->st.kernels_run += t_jit_nlaunches(j->dj[i]);
  return 0;
}

static int replay(bg_mjit *j, bg_sharded *const *in, bg_sharded **out) {
  bg_mesh *m = j->m;
  int64_t from[BG_MESH_MAX][16], to[BG_MESH_MAX][16];
  for (unsigned k = 0; k < j->nin; k++) {
    const msig *s = &j->in[k];
    if (in[k]->axis != s->axis || in[k]->ndim != s->ndim || in[k]->parts[0]->dt != s->dt ||
        memcmp(in[k]->shape, s->shape, s->ndim * sizeof s->shape[0])) {
      char got[200];
      sh_str(in[k], got, sizeof got);
      return bg_error(BG_EINVAL, "mjit: input %u is %s %s, the capture had another shape, dtype or axis", k, got,
                      bg_dtype_name(in[k]->parts[0]->dt));
    }
    for (unsigned i = 0; i < m->n; i++) {
      from[i][k] = s->uid[i];
      to[i][k] = uid_of(in[k]->parts[i]);
    }
  }
  size_t cur[BG_MESH_MAX] = {0}, end[BG_MESH_MAX];
  int rc = 0;
  if (j->queued) {
    if ((rc = replay_programs(j, (const int64_t(*)[16])to)) < 0) return rc;
    for (unsigned i = 0; i < m->n; i++) cur[i] = t_jit_nlaunches(j->dj[i]);
  }
  for (size_t t = 0; t < j->nx && rc >= 0 && !j->queued; t++) {
    const mxfer *x = &j->x[t];
    if ((rc = run_until(j, cur, x->at, (const int64_t(*)[16])from, (const int64_t(*)[16])to)) < 0) break;
    int64_t suid = x->suid;
    for (unsigned k = 0; k < j->nin; k++)
      if (from[x->src][k] == suid) suid = to[x->src][k];
    bg_tctx *sc = m->c[x->src], *dc = m->c[x->dst];
    if ((rc = bg_buf_transfer(dc->bufs[x->duid].b, 0, sc->bufs[suid].b, 0, x->bytes)) < 0)
      bg_error_context(rc, "mjit: replaying transfer %zu (%s to %s): ", t, bg_tctx_device(sc), bg_tctx_device(dc));
  }
  for (unsigned i = 0; i < m->n; i++) end[i] = t_jit_nlaunches(j->dj[i]);
  if (rc >= 0) rc = run_until(j, cur, end, (const int64_t(*)[16])from, (const int64_t(*)[16])to);
  if (rc < 0) return rc;
  j->replays++;
  for (unsigned o = 0; o < j->nout; o++) {
    const msig *s = &j->out[o];
    bg_tensor *parts[BG_MESH_MAX];
    for (unsigned i = 0; i < m->n; i++) {
      bg_tctx *c = m->c[i];
      const tbuf *b = &c->bufs[s->uid[i]];
      tshape sh = t_mkshape(s->ndim, s->pshape[i]);
      parts[i] = t_wrap(c, n_reshape(c, n_buffer(c, s->uid[i], b->numel, b->s), &sh));
    }
    out[o] = sh_make(m, "mjit", parts, s->axis);
    if (out[o]->dead) return bg_error(BG_EINVAL, "mjit: output %u: %s", o, m->err);
  }
  return 0;
}

int bg_mjit_call(bg_mjit *j, bg_sharded *const *in, unsigned nin, bg_sharded **out) {
  if (!j || !out || (nin && !in)) return bg_error(BG_EINVAL, "mjit: NULL jit, inputs or outputs");
  if (j->calls && nin != j->nin) return bg_error(BG_EINVAL, "mjit: called with %u inputs, the first call had %u", nin, j->nin);
  if (nin > 16) return bg_error(BG_EINVAL, "mjit: %u inputs, at most 16", nin);
  for (unsigned k = 0; k < nin; k++) {
    if (!in[k] || in[k]->dead || in[k]->m != j->m)
      return bg_error(BG_EINVAL, "mjit: input %u is NULL, the error tensor or of another mesh", k);
  }
  int rc = bg_sh_realize(in, nin); /* inputs are buffers before anything is captured */
  if (rc < 0) return bg_error_context(rc, "mjit: realizing the inputs: ");
  j->nin = nin;
  j->calls++;
  if (j->captured) return replay(j, in, out);
  bool capture = j->calls == 2;
  if (capture && capturing) return bg_error(BG_EINVAL, "mjit: another multi-device capture is in progress");
  if (capture && (rc = capture_start(j, in, nin)) < 0) {
    j->calls = 1;
    return rc;
  }
  for (unsigned o = 0; o < j->nout; o++) out[o] = NULL;
  rc = j->fn(j->user, in, nin, out, j->nout);
  j->fn_calls++;
  for (unsigned o = 0; o < j->nout && rc >= 0; o++) {
    if (!out[o] || out[o]->dead || out[o]->m != j->m)
      rc = bg_error(BG_EINVAL, "mjit: the function left output %u NULL, the error tensor or of another mesh%s%s", o,
                    j->m->has_err ? ": " : "", j->m->has_err ? j->m->err : "");
  }
  if (rc >= 0) rc = bg_sh_realize(out, j->nout);
  if (capture) {
    capturing = NULL;
    for (unsigned i = 0; i < j->m->n; i++) t_jit_capture_stop(j->dj[i]);
    if (rc >= 0) rc = finish_capture(j, in, out);
    if (rc >= 0) rc = build_programs(j);
    if (rc >= 0) j->captured = true;
    else { /* try again on the next call */
      drop_capture(j);
      j->calls = 1;
    }
  }
  return rc < 0 ? rc : 0;
}
