/* tensor/sched.c: the scheduler ("rangeify-lite"). It walks the unrealized graph under the roots
 * (stopping at buffers and at nodes realized earlier), seeds the realize set with the roots and
 * every contiguous() (BUFFERIZE), and lowers one kernel per realized node in postorder, so kernels
 * come sources first. Lowering may realize more nodes (ending ranges, consumers that disagree on
 * ranges, see lower.c); the kernels are then rebuilt, which ends because the set only grows. With assigns
 * (tassign.c) in the schedule, the kernels are reordered so that readers of a target's old contents run first. */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

struct tsched {
  bg_tctx *c;
  tmap rz;             /* realize set, by node id */
  node *order;         /* postorder of the graph under the roots */
  size_t n, cap;
};

bool t_sched_is_realized(const tsched *s, node u) { return tmap_get(&s->rz, u->id, 0) != NULL; }
void t_sched_realize(tsched *s, node u) {
  if (!tmap_put(&s->rz, u->id, 0)) BG_LOG(1, "tensor: out of memory growing the realize set");
}
bg_tctx *t_sched_ctx(const tsched *s) { return s->c; }

/* Nodes the walk does not enter: their value needs no kernel of this schedule. */
static bool leaf(const bg_tctx *c, node u) {
  return u->op == IR_BUFFER || u->op == IR_CONST || u->op == IR_RANGE || t_real(c, u);
}

static bool add_order(tsched *s, node u) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 256;
    node *no = realloc(s->order, ncap * sizeof *no);
    if (!no) return false;
    s->order = no;
    s->cap = ncap;
  }
  s->order[s->n++] = u;
  return true;
}

typedef struct wframe {
  node u;
  unsigned i;
} wframe;

/* Iterative postorder DFS from the roots. */
static int walk(tsched *s, const node *roots, unsigned nroots) {
  tmap seen = {0};
  wframe *st = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (unsigned r = 0; r < nroots && !rc; r++) {
    if (tmap_get(&seen, roots[r]->id, 0)) continue;
    if (!tmap_put(&seen, roots[r]->id, 0)) rc = -1;
    n = 0;
    if (!rc && n == cap) {
      cap = 64;
      wframe *ns = realloc(st, cap * sizeof *ns);
      if (!ns) rc = -1;
      else st = ns;
    }
    if (!rc) st[n++] = (wframe){roots[r], 0};
    while (n && !rc) {
      wframe *f = &st[n - 1];
      if (leaf(s->c, f->u) && f->u != roots[r]) f->i = f->u->nsrc;
      if (f->u->op == IR_RANGE || f->u->op == IR_BUFFER || f->u->op == IR_CONST) f->i = f->u->nsrc;
      if (f->i < f->u->nsrc) {
        node k = f->u->src[f->i++];
        if (tmap_get(&seen, k->id, 0)) continue;
        if (!tmap_put(&seen, k->id, 0)) { rc = -1; break; }
        if (n == cap) {
          cap *= 2;
          wframe *ns = realloc(st, cap * sizeof *ns);
          if (!ns) { rc = -1; break; }
          st = ns;
        }
        st[n++] = (wframe){k, 0};
        continue;
      }
      if (!add_order(s, f->u)) rc = -1;
      n--;
    }
  }
  free(st);
  tmap_free(&seen);
  return rc ? bg_error(BG_ENOMEM, "tensor: out of host memory scheduling") : 0;
}

static int64_t buffer_uid(node u) {
  return u->op == IR_BUFFER ? ((const tbuf_arg *)(const void *)u->arg.b->data)->uid : -1;
}

/* Whether kernel i of ks may run once the kernels marked in done[] have: every kernel of this schedule whose
 * output it reads has run, and for an assign, every other kernel reading the target's old contents (a BUFFER
 * node of the target) has run too (write after read: tinygrad orders an ASSIGN after the target's readers). */
static bool ready(const tkernel *ks, unsigned nk, const tmap *prod, const bool *done, unsigned i) {
  for (unsigned j = 0; j < ks[i].nin; j++) {
    tmap_ent *e = tmap_get(prod, ks[i].in[j]->id, 0);
    if (e && e->v != i && !done[e->v]) return false;
  }
  int64_t tgt = t_assign_target(ks[i].out);
  if (tgt < 0) return true;
  for (unsigned k = 0; k < nk; k++) {
    if (k == i || done[k]) continue;
    for (unsigned j = 0; j < ks[k].nin; j++)
      if (buffer_uid(ks[k].in[j]) == tgt) return false;
  }
  return true;
}

/* Kernels in postorder already run sources first; with assigns in the schedule, reorder (stably) so that
 * readers of an assign's target run before it. A kernel that must run both before and after an assign (it reads
 * the old contents and, through another kernel, the new ones) is an error. */
static int order_assigns(tkernel *ks, unsigned nk) {
  bool any = false;
  for (unsigned i = 0; i < nk && !any; i++) any = t_assign_target(ks[i].out) >= 0;
  if (!any) return 0;
  tmap prod = {0};
  bool *done = calloc(nk, sizeof *done);
  tkernel *out = calloc(nk, sizeof *out);
  int rc = done && out ? 0 : -1;
  for (unsigned i = 0; i < nk && !rc; i++) {
    tmap_ent *e = tmap_put(&prod, ks[i].out->id, 0);
    if (e) e->v = i;
    else rc = -1;
  }
  if (rc) rc = bg_error(BG_ENOMEM, "tensor: out of host memory scheduling");
  for (unsigned n = 0; n < nk && !rc; n++) {
    unsigned i = 0;
    while (i < nk && (done[i] || !ready(ks, nk, &prod, done, i))) i++;
    if (i == nk) {
      rc = bg_error(BG_EINVAL, "assign: a kernel reads a buffer both before and after its assignment in one realize; "
                               "realize the assignment first");
      break;
    }
    done[i] = true;
    out[n] = ks[i];
  }
  if (!rc) memcpy(ks, out, nk * sizeof *ks);
  free(done);
  free(out);
  tmap_free(&prod);
  return rc;
}

static void free_kernels(tkernel *ks, unsigned nk) {
  for (unsigned i = 0; i < nk; i++) ir_free(ks[i].k);
}

int t_realize(bg_tctx *c, const node *roots, unsigned nroots) {
  tsched s;
  memset(&s, 0, sizeof s);
  s.c = c;
  tkernel *ks = NULL;
  unsigned nk = 0;
  int rc = walk(&s, roots, nroots);
  for (unsigned r = 0; r < nroots && !rc; r++) t_sched_realize(&s, roots[r]);
  for (size_t i = 0; i < s.n && !rc; i++)
    if (s.order[i]->op == IR_BUFFERIZE) t_sched_realize(&s, s.order[i]);
  if (!rc && !(ks = calloc(s.n ? s.n : 1, sizeof *ks))) rc = bg_error(BG_ENOMEM, "tensor: out of host memory scheduling");
  /* lower every realized node; rebuild all kernels whenever lowering realized more */
  for (bool again = !rc; again;) {
    again = false;
    free_kernels(ks, nk);
    nk = 0;
    for (size_t i = 0; i < s.n && !rc && !again; i++) {
      node u = s.order[i];
      if (!t_sched_is_realized(&s, u)) continue;
      if (t_numel(t_shape(c, u)) == 0) {   /* nothing to compute: an empty buffer, no kernel */
        memset(&ks[nk], 0, sizeof ks[nk]);
        ks[nk++].out = u;
        continue;
      }
      int r = t_lower(&s, u, &ks[nk]);
      if (r == 1) again = true;
      else if (r < 0) rc = r;
      else nk++;
    }
  }
  if (!rc) rc = order_assigns(ks, nk);
  if (!rc) {
    c->st.schedules++;
    rc = t_run_kernels(c, ks, nk, roots, nroots);
  }
  free_kernels(ks, nk);
  free(ks);
  free(s.order);
  tmap_free(&s.rz);
  return rc;
}
