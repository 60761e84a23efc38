/* tensor/jit.c: capture and replay of a tensor function (tinygrad's TinyJit) on one HCQ queue
 * program (baregpu/tensor.h).
 *
 * Call 1 runs the function. Call 2 runs it with c->cap set: t_run_kernels reports every launch
 * (program, buffer uids, variable values) and hands over the intermediate buffers it would free.
 * The capture then records one compute queue program: wait for the timeline, each launch as an
 * EXEC separated by memory barriers, signal the timeline. Its operands for input and output
 * buffers and for kernel variables are queue variables (slots: inputs, then outputs, then
 * variables); every other buffer is a constant address. A replay binds the slots and submits: the
 * queue's template is patched where a slot changed, nothing is scheduled, compiled or recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/shard.h"
#include "tensor/tensor_internal.h"
#include "util/grow.h"

typedef struct jlaunch {
  size_t prog;                 /* index into c->progs (the array may move, indices stay) */
  unsigned nbufs, nvals;
  int64_t uids[48];
  uint64_t vals[16];
} jlaunch;

struct tjit_cap {
  jlaunch *l;
  size_t n, cap;
  int64_t *kept;               /* intermediate buffers the replays reuse (freed with the jit) */
  size_t nkept, kcap;
  int64_t in_uids[16];         /* the inputs' buffers during the capture */
  unsigned nin;
  tmap dep;                    /* node id -> 1 depends on an input buffer, 2 does not */
  tmap made;                   /* node id -> realized by this capture (its value is this call's) */
  int64_t *assigned;           /* buffers the captured launches assign in place (tassign.c) */
  size_t nassigned, acap;
};

typedef struct jsig {          /* an input or output as captured */
  enum bg_dtype dt;
  unsigned ndim;
  int64_t shape[BG_MAX_DIMS];
  int64_t uid;
} jsig;

struct bg_jit {
  bg_tctx *c;
  bg_jit_fn fn;
  void *user;
  unsigned nin, nout;
  unsigned long calls, fn_calls, replays;
  bool captured, per_launch;
  struct tjit_cap cap;
  jsig *in, *out;
  unsigned nvar;               /* variable slots after inputs and outputs */
  int vid[BG_MAX_VARS];
  bg_queue *q;
  int64_t cur_in[16];          /* this replay's input buffers (per-launch mode) */
};

int t_jit_record(bg_tctx *c, size_t prog, const int64_t *uids, unsigned nbufs, const uint64_t *vals) {
  struct tjit_cap *k = c->cap;
  if (!bg_grow((void **)&k->l, &k->cap, k->n + 1, sizeof *k->l)) return bg_error(BG_ENOMEM, "jit: out of host memory capturing");
  jlaunch *l = &k->l[k->n++];
  memset(l, 0, sizeof *l);
  l->prog = prog;
  l->nbufs = nbufs;
  l->nvals = c->progs[prog].k.nvars;
  memcpy(l->uids, uids, nbufs * sizeof *uids);
  if (l->nvals) memcpy(l->vals, vals, l->nvals * sizeof *vals);
  return 0;
}

int t_jit_keep(bg_tctx *c, int64_t uid) {
  struct tjit_cap *k = c->cap;
  if (!bg_grow((void **)&k->kept, &k->kcap, k->nkept + 1, sizeof *k->kept)) return bg_error(BG_ENOMEM, "jit: out of host memory capturing");
  k->kept[k->nkept++] = uid;
  return 0;
}

int t_jit_assigned(bg_tctx *c, int64_t uid) {
  struct tjit_cap *k = c->cap;
  for (size_t i = 0; i < k->nassigned; i++)
    if (k->assigned[i] == uid) return 0;
  if (!bg_grow((void **)&k->assigned, &k->acap, k->nassigned + 1, sizeof *k->assigned))
    return bg_error(BG_ENOMEM, "jit: out of host memory capturing");
  k->assigned[k->nassigned++] = uid;
  return 0;
}

/* After a replay wrote assigned buffers in place, handles viewing them get a fresh version of their view (as a
 * realized assign gives, tassign.c): a graph built from them afterwards must not reuse nodes realized before. */
static void reversion_assigned(bg_jit *j) {
  bg_tctx *c = j->c;
  node fresh[64] = {0}; /* one new BUFFER node per buffer, so its views stay one parameter for autograd */
  if (!j->cap.nassigned) return;
  for (tchunk *k = c->chunks; k; k = k->next)
    for (unsigned i = 0; i < k->n; i++) {
      bg_tensor *t = &k->t[i];
      if (!t->u) continue;
      int64_t uid = t_assign_target(t->u); /* a realized assign (captured) views its target too */
      if (uid < 0 && t_is_view(t->u)) uid = ((const tbuf_arg *)(const void *)t_view_buffer(t->u)->arg.b->data)->uid;
      if (uid < 0 || (!t_is_view(t->u) && !(t->u->id < c->real_cap && c->real[t->u->id]))) continue;
      for (size_t a = 0; a < j->cap.nassigned; a++) {
        if (j->cap.assigned[a] != uid) continue;
        tshape sh = *t_shape(c, t->u), flat = t_mkshape(1, &c->bufs[uid].numel);
        node b = a < 64 ? fresh[a] : NULL;
        if (!b && (b = t_buffer_fresh(c, uid, &flat)) && a < 64) fresh[a] = b;
        node v = b ? n_reshape(c, b, &sh) : NULL;
        if (v) t_handle_repoint(t, v); /* out of memory: the old view still reads the buffer */
        break;
      }
    }
}

typedef struct dframe {
  node u;
  unsigned i;
  bool dep;
} dframe;

int t_jit_made(bg_tctx *c, node u) {
  tmap_ent *e = tmap_put(&c->cap->made, u->id, 0);
  if (!e) return bg_error(BG_ENOMEM, "jit: out of host memory capturing");
  e->v = 1;
  return 0;
}

bool t_jit_masks_real(const bg_tctx *c, node u) {
  struct tjit_cap *k = c->cap;
  if (tmap_get(&k->made, u->id, 0)) return false; /* computed by this capture: the loss realized before a step */
  node view = c->real[u->id]; /* an input itself stays its buffer, even if computed from another input */
  int64_t vuid = ((const tbuf_arg *)(const void *)t_view_buffer(view)->arg.b->data)->uid;
  for (unsigned x = 0; x < k->nin; x++)
    if (k->in_uids[x] == vuid) return false;
  tmap_ent *e = tmap_get(&k->dep, u->id, 0);
  if (e) return e->v == 1;
  dframe *st = NULL;
  size_t n = 0, cap = 0;
  bool oom = false, result = true; /* on out of memory: recompute, which is always correct */
  if (bg_grow((void **)&st, &cap, n + 1, sizeof *st)) st[n++] = (dframe){u, 0, false};
  else oom = true;
  while (n && !oom) {
    dframe *f = &st[n - 1];
    if (f->i == 0 && f->u->op == IR_BUFFER) {
      int64_t uid = ((const tbuf_arg *)(const void *)f->u->arg.b->data)->uid;
      for (unsigned x = 0; x < k->nin; x++) f->dep |= k->in_uids[x] == uid;
    }
    if (f->i < f->u->nsrc) {
      node s = f->u->src[f->i++];
      tmap_ent *se = tmap_get(&k->dep, s->id, 0);
      if (se) {
        f->dep |= se->v == 1;
      } else if (bg_grow((void **)&st, &cap, n + 1, sizeof *st)) {
        st[n++] = (dframe){s, 0, false};
      } else {
        oom = true;
      }
      continue;
    }
    tmap_ent *me = tmap_put(&k->dep, f->u->id, 0);
    if (!me) {
      oom = true;
      break;
    }
    me->v = f->dep ? 1 : 2;
    bool d = f->dep;
    n--;
    if (n) st[n - 1].dep |= d;
    else result = d;
  }
  free(st);
  return oom ? true : result;
}

int bg_jit_new(bg_tctx *c, bg_jit_fn fn, void *user, unsigned nout, bg_jit **out) {
  if (!out) return bg_error(BG_EINVAL, "jit: NULL output");
  *out = NULL;
  if (!c || !fn) return bg_error(BG_EINVAL, "jit: NULL context or function");
  if (!nout || nout > 32) return bg_error(BG_EINVAL, "jit: %u outputs, expected 1..32", nout);
  bg_jit *j = calloc(1, sizeof *j);
  if (!j || !(j->out = calloc(nout, sizeof *j->out))) {
    free(j);
    return bg_error(BG_ENOMEM, "jit: out of host memory");
  }
  j->c = c;
  j->fn = fn;
  j->user = user;
  j->nout = nout;
  *out = j;
  return 0;
}

void bg_jit_free(bg_jit *j) {
  if (!j) return;
  bg_tctx *c = j->c;
  if (j->q) bg_queue_free(j->q);
  for (size_t i = 0; i < j->cap.nkept; i++) {
    int64_t uid = j->cap.kept[i];
    if (c->bufs[uid].b) bg_buf_free(c->bufs[uid].b); /* its memory returns once the work using it retires */
    c->bufs[uid].b = NULL;
  }
  free(j->cap.l);
  free(j->cap.kept);
  free(j->cap.assigned);
  free(j->in);
  free(j->out);
  free(j);
}

void bg_jit_set_per_launch(bg_jit *j, bool per_launch) { j->per_launch = per_launch; }

void bg_jit_get_stats(const bg_jit *j, bg_jit_stats *st) {
  memset(st, 0, sizeof *st);
  st->calls = j->calls;
  st->fn_calls = j->fn_calls;
  st->replays = j->replays;
  st->nkernels = (unsigned)j->cap.n;
  st->nslots = j->nin + j->nout + j->nvar;
  if (j->q) {
    bg_queue_stats qs;
    bg_queue_get_stats(j->q, &qs);
    st->ncmds = qs.ncmds;
    st->npatches = qs.npatches;
    st->patches_applied_last = qs.patches_applied_last;
    st->submits = qs.submits;
  }
}

static int64_t uid_of(const bg_tensor *t) {
  return ((const tbuf_arg *)(const void *)t_view_buffer(t_node(t))->arg.b->data)->uid;
}

/* "(3,i=4) float32": symbolic sizes by their variable's name. */
static void sig_str(const bg_tctx *c, enum bg_dtype dt, unsigned ndim, const int64_t *shape, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (unsigned i = 0; i < ndim && len < n; i++) {
    const char *name = BG_DIM_IS_VAR(shape[i]) ? bg_tvar_name(c, (int)BG_DIM_VAR(shape[i])) : NULL;
    if (name) len += (size_t)snprintf(buf + len, n - len, "%s%s=%lld", i ? "," : "", name, (long long)BG_DIM_VALUE(shape[i]));
    else len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "", (long long)shape[i]);
  }
  if (len < n) snprintf(buf + len, n - len, ") %s", bg_dtype_name(dt));
}

/* The captured shapes match when every dimension is equal, or both are symbolic sizes of one variable. */
static bool same_sig(const jsig *s, const bg_tensor *t) {
  if (s->dt != t->dt || s->ndim != t->ndim) return false;
  for (unsigned i = 0; i < s->ndim; i++) {
    int64_t a = s->shape[i], b = t->shape[i];
    if (BG_DIM_IS_VAR(a) ? !BG_DIM_IS_VAR(b) || BG_DIM_VAR(a) != BG_DIM_VAR(b) : a != b) return false;
  }
  return true;
}

static int var_slot(bg_jit *j, int vid) {
  for (unsigned i = 0; i < j->nvar; i++)
    if (j->vid[i] == vid) return (int)(j->nin + j->nout + i);
  return -1;
}

/* The binding of each variable slot from the inputs' shapes. */
static int bind_vars(const bg_jit *j, bg_tensor *const *in, uint64_t *slots) {
  for (unsigned v = 0; v < j->nvar; v++) {
    bool found = false;
    for (unsigned k = 0; k < j->nin && !found; k++)
      for (unsigned d = 0; d < in[k]->ndim && !found; d++)
        if (BG_DIM_IS_VAR(in[k]->shape[d]) && (int)BG_DIM_VAR(in[k]->shape[d]) == j->vid[v]) {
          slots[j->nin + j->nout + v] = (uint64_t)BG_DIM_VALUE(in[k]->shape[d]);
          found = true;
        }
    if (!found)
      return bg_error(BG_EINVAL, "jit: kernel variable %s appears in no input shape; bind it through an input",
                      j->c->vars[j->vid[v]].name);
  }
  return 0;
}

/* Record the replay queue from the captured launches. */
static int build_queue(bg_jit *j, bg_tensor *const *in) {
  bg_tctx *c = j->c;
  for (size_t i = 0; i < j->cap.n; i++) /* every kernel variable gets a slot */
    for (unsigned v = 0; v < j->cap.l[i].nvals; v++) {
      int vid = c->progs[j->cap.l[i].prog].vid[v];
      if (var_slot(j, vid) >= 0) continue;
      if (j->nin + j->nout + j->nvar >= BG_MAX_VARS - 8)
        return bg_error(BG_ENOTSUP, "jit: more than %d inputs, outputs and variables", BG_MAX_VARS - 8);
      j->vid[j->nvar++] = vid;
    }
  uint64_t slots[BG_MAX_VARS] = {0};
  int rc = bind_vars(j, in, slots);
  for (size_t i = 0; i < j->cap.n && !rc; i++) /* the function must bind variables as its inputs do */
    for (unsigned v = 0; v < j->cap.l[i].nvals && !rc; v++) {
      int vid = c->progs[j->cap.l[i].prog].vid[v];
      uint64_t want = slots[var_slot(j, vid)];
      if (j->cap.l[i].vals[v] != want)
        rc = bg_error(BG_EINVAL, "jit: %s binds %s to %llu, the inputs to %llu; a replay could not follow", c->progs[j->cap.l[i].prog].k.name,
                      c->vars[vid].name, (unsigned long long)j->cap.l[i].vals[v], (unsigned long long)want);
    }
  if (rc) return rc;
  if ((rc = bg_queue_new(c->dev, BG_QUEUE_COMPUTE, &j->q)) < 0) return bg_error_context(rc, "jit: ");
  bg_queue *q = j->q;
  bg_val slot[BG_MAX_VARS];
  char name[32];
  for (unsigned k = 0; k < j->nin; k++) {
    snprintf(name, sizeof name, "in%u", k);
    slot[k] = bg_var(q, k, name, 0, UINT64_MAX);
  }
  for (unsigned m = 0; m < j->nout; m++) {
    snprintf(name, sizeof name, "out%u", m);
    slot[j->nin + m] = bg_var(q, j->nin + m, name, 0, UINT64_MAX);
  }
  for (unsigned v = 0; v < j->nvar; v++) {
    const tvar *x = &c->vars[j->vid[v]];
    slot[j->nin + j->nout + v] = bg_var(q, j->nin + j->nout + v, x->name, (uint64_t)x->min, (uint64_t)x->max);
  }
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_memory_barrier(q);
  for (size_t i = 0; i < j->cap.n; i++) {
    const jlaunch *l = &j->cap.l[i];
    const tprog *p = &c->progs[l->prog];
    bg_val args[64], g[3], lz[3];
    for (unsigned s = 0; s < l->nbufs; s++) {
      int64_t uid = l->uids[s];
      args[s] = bg_addr(c->bufs[uid].b, 0);
      for (unsigned k = 0; k < j->nin; k++)
        if (j->in[k].uid == uid) args[s] = slot[k];
      for (unsigned m = 0; m < j->nout; m++)
        if (j->out[m].uid == uid) args[s] = slot[j->nin + m];
    }
    for (unsigned v = 0; v < l->nvals; v++) args[l->nbufs + v] = slot[var_slot(j, p->vid[v])];
    for (int d = 0; d < 3; d++) {
      g[d] = bg_const(p->k.gsz[d]);
      lz[d] = bg_const(p->k.lsz[d]);
    }
    if (i) bg_queue_memory_barrier(q); /* the next kernel may read what this one wrote */
    bg_queue_exec(q, p->prg, args, l->nbufs + l->nvals, g, lz);
  }
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  return 0;
}

static int finish_capture(bg_jit *j, bg_tensor *const *in, bg_tensor **out) {
  free(j->in); /* from a capture that failed later on */
  if (!(j->in = calloc(j->nin ? j->nin : 1, sizeof *j->in))) return bg_error(BG_ENOMEM, "jit: out of host memory");
  for (unsigned k = 0; k < j->nin; k++) {
    jsig *s = &j->in[k];
    s->dt = in[k]->dt;
    s->ndim = in[k]->ndim;
    memcpy(s->shape, in[k]->shape, sizeof s->shape);
    s->uid = uid_of(in[k]);
    for (unsigned o = 0; o < k; o++)
      if (j->in[o].uid == s->uid) return bg_error(BG_EINVAL, "jit: inputs %u and %u are one buffer, expected distinct inputs", o, k);
  }
  for (unsigned m = 0; m < j->nout; m++) {
    jsig *s = &j->out[m];
    s->dt = out[m]->dt;
    s->ndim = out[m]->ndim;
    memcpy(s->shape, out[m]->shape, sizeof s->shape);
    s->uid = uid_of(out[m]);
    for (unsigned k = 0; k < j->nin; k++)
      if (j->in[k].uid == s->uid) return bg_error(BG_ENOTSUP, "jit: output %u is input %u itself; return a computed tensor", m, k);
  }
  return build_queue(j, in);
}

/* Output m of a replay: a view of its captured buffer, symbolic sizes rebound as the inputs bind them. */
static bg_tensor *replay_output(bg_jit *j, unsigned m, const uint64_t *slots) {
  bg_tctx *c = j->c;
  const jsig *s = &j->out[m];
  tshape sh = t_mkshape(s->ndim, s->shape);
  for (unsigned d = 0; d < sh.n; d++) {
    if (!BG_DIM_IS_VAR(sh.d[d])) continue;
    int slot = var_slot(j, (int)BG_DIM_VAR(sh.d[d]));
    if (slot >= 0 && bg_tvar_bind(c, (int)BG_DIM_VAR(sh.d[d]), (int64_t)slots[slot], &sh.d[d]) < 0)
      return NULL; /* the message is in bg_last_error() (and latched) */
  }
  const tbuf *b = &c->bufs[s->uid];
  return t_wrap(c, n_reshape(c, n_buffer(c, s->uid, b->numel, b->s), &sh));
}

/* The per-launch baseline: each captured launch through bg_program_run, buffers and variables mapped
 * as the queue program maps them. */
static int replay_per_launch(bg_jit *j, const uint64_t *slots) {
  bg_tctx *c = j->c;
  for (size_t i = 0; i < j->cap.n; i++) {
    const jlaunch *l = &j->cap.l[i];
    const tprog *p = &c->progs[l->prog];
    bg_buf *bufs[48];
    uint64_t vals[16];
    for (unsigned s = 0; s < l->nbufs; s++) {
      int64_t uid = l->uids[s];
      for (unsigned k = 0; k < j->nin; k++)
        if (j->in[k].uid == uid) uid = j->cur_in[k];
      bufs[s] = c->bufs[uid].b;
    }
    for (unsigned v = 0; v < l->nvals; v++) vals[v] = slots[var_slot(j, p->vid[v])];
    int rc = bg_program_run(p->prg, bufs, l->nbufs, vals, l->nvals, p->k.gsz, p->k.lsz, false, NULL);
    if (rc < 0) return bg_error_context(rc, "jit: replay of %s: ", p->k.name);
  }
  return 0;
}

static int replay(bg_jit *j, bg_tensor *const *in, bg_tensor **out) {
  bg_tctx *c = j->c;
  uint64_t slots[BG_MAX_VARS];
  char want[200], got[200];
  for (unsigned k = 0; k < j->nin; k++) {
    if (same_sig(&j->in[k], in[k])) continue;
    sig_str(c, j->in[k].dt, j->in[k].ndim, j->in[k].shape, want, sizeof want);
    sig_str(c, in[k]->dt, in[k]->ndim, in[k]->shape, got, sizeof got);
    return bg_error(BG_EINVAL, "jit: input %u is %s, the capture had %s", k, got, want);
  }
  for (unsigned k = 0; k < j->nin; k++) {
    int64_t uid = uid_of(in[k]);
    for (unsigned o = 0; o < k; o++)
      if (slots[o] == bg_buf_va(c->bufs[uid].b)) return bg_error(BG_EINVAL, "jit: inputs %u and %u are one buffer, expected distinct inputs", o, k);
    slots[k] = bg_buf_va(c->bufs[uid].b);
    j->cur_in[k] = uid;
  }
  for (unsigned m = 0; m < j->nout; m++) slots[j->nin + m] = bg_buf_va(c->bufs[j->out[m].uid].b);
  int rc = bind_vars(j, in, slots);
  if (rc < 0) return rc;
  if (j->per_launch) rc = replay_per_launch(j, slots);
  else if ((rc = bg_queue_submit(j->q, slots, j->nin + j->nout + j->nvar)) < 0) bg_error_context(rc, "jit: replay: ");
  if (rc < 0) return rc;
  j->replays++;
  c->st.kernels_run += j->cap.n;
  reversion_assigned(j);
  for (unsigned m = 0; m < j->nout; m++)
    if (!(out[m] = replay_output(j, m, slots)) || !out[m]->u)
      return bg_error_context(-BG_EINVAL, "jit: output %u: ", m); /* the message: bind's or t_wrap's t_fail */
  return 0;
}

int bg_jit_call(bg_jit *j, bg_tensor *const *in, unsigned nin, bg_tensor **out) {
  if (!j || !out || (nin && !in)) return bg_error(BG_EINVAL, "jit: NULL jit, inputs or outputs");
  bg_tctx *c = j->c;
  if (j->calls && nin != j->nin) return bg_error(BG_EINVAL, "jit: called with %u inputs, the first call had %u", nin, j->nin);
  if (nin > 16) return bg_error(BG_EINVAL, "jit: %u inputs, at most 16", nin);
  for (unsigned k = 0; k < nin; k++)
    if (!in[k] || in[k]->c != c || !in[k]->u) return bg_error(BG_EINVAL, "jit: input %u is NULL, the error tensor or from another context", k);
  int rc = bg_tn_realize(in, nin);  /* inputs are buffers before anything is captured */
  if (rc < 0) return bg_error_context(rc, "jit: realizing the inputs: ");
  j->nin = nin;
  j->calls++;
  if (j->captured) return replay(j, in, out);
  bool capture = j->calls == 2;
  if (capture && c->cap) return bg_error(BG_EINVAL, "jit: another capture is in progress on this context");
  if (capture) {
    j->cap.nin = nin;
    for (unsigned k = 0; k < nin; k++) j->cap.in_uids[k] = uid_of(in[k]);
    c->cap = &j->cap;
  }
  for (unsigned m = 0; m < j->nout; m++) out[m] = NULL;
  rc = j->fn(j->user, in, nin, out, j->nout);
  j->fn_calls++;
  for (unsigned m = 0; m < j->nout && rc >= 0; m++)
    if (!out[m]) rc = bg_error(BG_EINVAL, "jit: the function left output %u NULL", m);
  if (rc >= 0) rc = bg_tn_realize(out, j->nout);
  if (capture) {
    c->cap = NULL;
    tmap_free(&j->cap.dep);
    tmap_free(&j->cap.made);
    if (rc >= 0) rc = finish_capture(j, in, out);
    if (rc >= 0) j->captured = true;
    else { /* try again on the next call */
      j->cap.n = 0;
      j->cap.nassigned = 0;
      j->calls = 1;
      if (j->q) bg_queue_free(j->q);
      j->q = NULL;
      j->nvar = 0;
    }
  }
  return rc < 0 ? rc : 0;
}

/* ---- the capture driven from outside: the multi-device JIT (tensor/mjit.c) captures each context of its mesh with
 * a JIT of that context, and replays the launches one by one in the order of its transfers ---- */
int t_jit_capture_start(bg_jit *j, const int64_t *in_uids, unsigned nin) {
  bg_tctx *c = j->c;
  if (c->cap) return bg_error(BG_EINVAL, "jit: another capture is in progress on %s", bg_tctx_device(c));
  if (nin > 16) return bg_error(BG_EINVAL, "jit: %u inputs, at most 16", nin);
  j->cap.n = 0;
  j->cap.nin = nin;
  if (nin) memcpy(j->cap.in_uids, in_uids, nin * sizeof *in_uids);
  c->cap = &j->cap;
  return 0;
}

void t_jit_capture_stop(bg_jit *j) {
  j->c->cap = NULL;
  tmap_free(&j->cap.dep);
  tmap_free(&j->cap.made);
}

size_t t_jit_nlaunches(const bg_jit *j) { return j->cap.n; }

int t_jit_run_launch(bg_jit *j, size_t i, const int64_t *from, const int64_t *to, unsigned nmap) {
  bg_tctx *c = j->c;
  const jlaunch *l = &j->cap.l[i];
  const tprog *p = &c->progs[l->prog];
  bg_buf *bufs[48];
  for (unsigned s = 0; s < l->nbufs; s++) {
    int64_t uid = l->uids[s];
    for (unsigned k = 0; k < nmap; k++)
      if (from[k] == uid) {
        uid = to[k];
        break;
      }
    bufs[s] = c->bufs[uid].b;
  }
  int rc = bg_dev_wait_bufs(c->dev, bufs + 1, l->nbufs - 1);
  if (rc >= 0) rc = bg_program_run(p->prg, bufs, l->nbufs, l->vals, l->nvals, p->k.gsz, p->k.lsz, false, NULL);
  if (rc < 0) return bg_error_context(rc, "jit: replay of %s: ", p->k.name);
  c->st.kernels_run++;
  return 0;
}

int t_jit_record_launch(bg_jit *j, size_t i, bg_queue *q, const int64_t *from, const bg_val *to, unsigned nmap) {
  bg_tctx *c = j->c;
  const jlaunch *l = &j->cap.l[i];
  const tprog *p = &c->progs[l->prog];
  bg_val args[64], g[3], lz[3];
  for (unsigned s = 0; s < l->nbufs; s++) {
    args[s] = bg_addr(c->bufs[l->uids[s]].b, 0);
    for (unsigned k = 0; k < nmap; k++)
      if (from[k] == l->uids[s]) args[s] = to[k];
  }
  for (unsigned v = 0; v < l->nvals; v++) args[l->nbufs + v] = bg_const(l->vals[v]);
  for (int d = 0; d < 3; d++) {
    g[d] = bg_const(p->k.gsz[d]);
    lz[d] = bg_const(p->k.lsz[d]);
  }
  bg_queue_exec(q, p->prg, args, l->nbufs + l->nvals, g, lz);
  return 0;
}
