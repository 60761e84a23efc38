/* hcq/queue.c: recording queue programs with symbolic operands and submitting them.
 * The first submit lowers the program through the backend into a template; later submits bind the
 * variables, re-evaluate the patches whose slots changed and push the template to the ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/dev_internal.h"
#include "hcq/memmap.h"
#include "hcq/tmpl.h"

/* An operand check run at submit: a copy (dst, src), or an exec (work-group x, y, z) whose operands are symbolic.
 * Copies with constant operands are checked when recorded and again at a submit after any buffer was freed. */
typedef struct qcheck {
  size_t cmd;
  bg_texpr e[3];
  uint64_t deps[2];
} qcheck;

struct bg_queue {
  bg_dev *dev;
  enum bg_queue_kind kind;
  bg_queue_hw *hw;
  ir_ctx *ir;
  bg_cmd *cmds;
  size_t ncmds, cap;
  int err;                    /* sticky recording error */
  char errmsg[512];
  bool lowered;
  bg_tmpl tmpl;
  uint64_t slots[BG_NSLOTS];
  uint64_t user_needed;       /* user slots the template reads */
  size_t submits, last_applied;
  qcheck *checks;             /* operands to check at submit: every copy, symbolic work-group sizes */
  size_t nchecks;
  uint64_t frees_seen;        /* bg_memmap_frees() when the copies were last checked */
  bool recheck;               /* a submit failed after binding: the next one re-checks and re-patches everything */
};

static const char *kind_name(enum bg_queue_kind k) { return k == BG_QUEUE_COPY ? "copy" : "compute"; }

int bg_queue_new(bg_dev *d, enum bg_queue_kind kind, bg_queue **out) {
  *out = NULL;
  if (kind != BG_QUEUE_COMPUTE && kind != BG_QUEUE_COPY)
    return bg_error(BG_EINVAL, "%s: bg_queue_new: unknown queue kind %d (BG_QUEUE_COMPUTE 0 or BG_QUEUE_COPY 1)",
                    d->name, (int)kind);
  int r = bg_dev_check(d);
  if (r < 0) return r;
  if (kind == BG_QUEUE_COPY && !d->ops->has_copy_queue)
    return bg_error(BG_ENOTSUP, "%s has no copy queue", d->name);
  bg_queue *q = calloc(1, sizeof(*q));
  if (!q || !(q->ir = ir_new())) {
    free(q);
    return bg_error(BG_ENOMEM, "out of host memory for a queue");
  }
  q->dev = d;
  q->kind = kind;
  q->tmpl.ir = q->ir;
  if (!d->hwq[kind] && (r = d->ops->queue_create(d, kind, &d->hwq[kind])) < 0) {
    d->hwq[kind] = NULL;
    ir_free(q->ir);
    free(q);
    return bg_error_context(r, "%s: creating the %s queue: ", d->name, kind_name(kind));
  }
  q->hw = d->hwq[kind];
  *out = q;
  return 0;
}

static void drop_recording(bg_queue *q) {
  for (size_t i = 0; i < q->ncmds; i++) free(q->cmds[i].args);
  q->ncmds = 0;
  bg_tmpl_free(&q->tmpl);
  free(q->checks);
  q->checks = NULL;
  q->nchecks = 0;
  q->recheck = false;
  q->lowered = false;
  q->err = 0;
}

void bg_queue_reset(bg_queue *q) {
  drop_recording(q);
  /* Slot variables stay: they are interned in q->ir, which lives as long as the queue. */
}

void bg_queue_free(bg_queue *q) {
  if (!q) return;
  drop_recording(q);
  free(q->cmds);
  ir_free(q->ir);
  free(q);
}

static void fail(bg_queue *q, int code, const char *fmt, const char *arg) {
  if (q->err) return;
  q->err = -code;
  snprintf(q->errmsg, sizeof(q->errmsg), fmt, arg);
}

/* ---------------- operands ---------------- */

static const ir_node *operand(bg_queue *q, bg_val v) {
  if (v.sym) return v.sym;
  const ir_node *c = ir_const_int(q->ir, IR_DT_UINT64, (int64_t)v.c);
  if (!c) fail(q, BG_ENOMEM, "%s", "out of memory for an operand");
  return c;
}

static bg_val slot_var(bg_queue *q, unsigned slot, const char *name, uint64_t min, uint64_t max) {
  const ir_node *u = ir_var(q->ir, IR_DT_UINT64, name, (int64_t)(min > INT64_MAX ? INT64_MAX : min),
                            (int64_t)(max > INT64_MAX ? INT64_MAX : max));
  if (!u) {
    fail(q, BG_ENOMEM, "%s", "out of memory for a variable");
    return bg_const(0);
  }
  if (q->tmpl.slot_var[slot] && q->tmpl.slot_var[slot] != u) fail(q, BG_EINVAL, "variable slot reused for '%s' with another name or bounds", name);
  else q->tmpl.slot_var[slot] = u;
  return (bg_val){u, 0};
}

bg_val bg_var(bg_queue *q, unsigned slot, const char *name, uint64_t min, uint64_t max) {
  if (slot >= BG_MAX_VARS) {
    fail(q, BG_EINVAL, "variable '%s': slot out of range (0..63)", name);
    return bg_const(0);
  }
  return slot_var(q, slot, name, min, max);
}

bg_val bg_timeline_addr(bg_queue *q) { return slot_var(q, BG_SLOT_TIMELINE_ADDR, "timeline_addr", 0, INT64_MAX); }

bg_val bg_timeline_value(bg_queue *q, int64_t delta) {
  bg_val tv = slot_var(q, BG_SLOT_TIMELINE_VALUE, "timeline_value", 0, INT64_MAX);
  return delta ? bg_add(q, tv, bg_const((uint64_t)delta)) : tv;
}

static bg_val binop(bg_queue *q, enum ir_op op, bg_val a, bg_val b) {
  if (!a.sym && !b.sym) return bg_const(op == IR_ADD ? a.c + b.c : a.c * b.c);
  const ir_node *x = operand(q, a), *y = operand(q, b);
  const ir_node *u = x && y ? ir_alu2(q->ir, op, x, y) : NULL;
  if (!u) fail(q, BG_ENOMEM, "%s", "out of memory for an operand");
  return (bg_val){u, 0};
}

bg_val bg_add(bg_queue *q, bg_val a, bg_val b) { return binop(q, IR_ADD, a, b); }
bg_val bg_mul(bg_queue *q, bg_val a, bg_val b) { return binop(q, IR_MUL, a, b); }

/* ---------------- recording ---------------- */

static bg_cmd *append(bg_queue *q, enum bg_cmd_op op) {
  if (q->err) return NULL;
  if (q->lowered) {
    fail(q, BG_EINVAL, "%s", "queue was already submitted: bg_queue_reset before recording new commands");
    return NULL;
  }
  if (q->ncmds == q->cap) {
    size_t nc = q->cap ? q->cap * 2 : 16;
    bg_cmd *n = realloc(q->cmds, nc * sizeof(*n));
    if (!n) {
      fail(q, BG_ENOMEM, "%s", "out of host memory recording a queue");
      return NULL;
    }
    q->cmds = n;
    q->cap = nc;
  }
  bg_cmd *c = &q->cmds[q->ncmds++];
  memset(c, 0, sizeof(*c));
  c->op = op;
  return c;
}

static bool compute_only(bg_queue *q, const char *what) {
  if (q->kind == BG_QUEUE_COMPUTE) return true;
  fail(q, BG_EINVAL, "%s is only valid on a compute queue", what);
  return false;
}

bg_queue *bg_queue_wait(bg_queue *q, bg_val signal_addr, bg_val value) {
  bg_cmd *c = append(q, BG_CMD_WAIT);
  if (c) { c->addr = operand(q, signal_addr); c->value = operand(q, value); }
  return q;
}

bg_queue *bg_queue_signal(bg_queue *q, bg_val signal_addr, bg_val value) {
  bg_cmd *c = append(q, BG_CMD_SIGNAL);
  if (!c) return q;
  c->addr = operand(q, signal_addr);
  c->value = operand(q, value);
  /* Signalling the bare timeline value claims it: each submit advances the timeline. */
  if (c->value && c->value == q->tmpl.slot_var[BG_SLOT_TIMELINE_VALUE]) q->tmpl.claims_timeline = true;
  return q;
}

bg_queue *bg_queue_timestamp(bg_queue *q, bg_val signal_addr) {
  bg_cmd *c = append(q, BG_CMD_TIMESTAMP);
  if (c) c->addr = operand(q, signal_addr);
  return q;
}

bg_queue *bg_queue_memory_barrier(bg_queue *q) {
  if (compute_only(q, "memory_barrier")) append(q, BG_CMD_BARRIER);
  return q;
}

/* ---------------- operand checks ---------------- */

/* A copy's operands: both ranges inside one live allocation each (hcq/memmap.h). */
static int check_copy(const bg_queue *q, size_t i, uint64_t dst, uint64_t src, uint64_t n) {
  if (n == 0) return 0;
  char what[64];
  snprintf(what, sizeof(what), "command %zu (copy): destination", i);
  int r = bg_memmap_check(q->dev, dst, n, what);
  if (r < 0) return r;
  snprintf(what, sizeof(what), "command %zu (copy): source", i);
  return bg_memmap_check(q->dev, src, n, what);
}

/* A launch's work-group: every dimension at least 1 and at most the program's limit of threads in all. */
static int check_workgroup(const bg_queue *q, size_t i, const bg_program *p, const uint64_t l[3]) {
  const bg_dev *d = q->dev;
  uint64_t threads = 1;
  bool over = false;
  for (int k = 0; k < 3; k++) {
    if (l[k] == 0)
      return bg_error(BG_EINVAL, "command %zu (exec '%s'): work-group size %c is 0 (at least 1)", i, p->name, "xyz"[k]);
    if (l[k] > p->max_workgroup || threads * l[k] > p->max_workgroup) over = true;
    else threads *= l[k];
  }
  if (!over) return 0;
  uint32_t dev_max = d->ops->max_workgroup ? d->ops->max_workgroup : BG_DEFAULT_MAX_WORKGROUP;
  uint32_t own = d->ops->program_max_workgroup ? d->ops->program_max_workgroup(q->dev, p->handle) : 0;
  char kl[48] = "none of its own";
  if (own) snprintf(kl, sizeof(kl), "%u", own);
  return bg_error(BG_EINVAL, "command %zu (exec '%s'): work-group size %llux%llux%llu exceeds the %u threads a "
                  "work-group may have (device %s: %u, kernel: %s)", i, p->name, (unsigned long long)l[0],
                  (unsigned long long)l[1], (unsigned long long)l[2], p->max_workgroup, d->name, dev_max, kl);
}

/* Record-time check failed: keep bg_last_error() as the queue's sticky error. */
static void fail_last(bg_queue *q, int r) {
  if (r < 0) fail(q, -r, "%s", bg_last_error());
}

bg_queue *bg_queue_exec(bg_queue *q, bg_program *p, const bg_val *args, size_t nargs, const bg_val gsz[3],
                        const bg_val lsz[3]) {
  if (!compute_only(q, "exec")) return q;
  if (p->dev != q->dev) {
    fail(q, BG_EINVAL, "exec of program '%s' loaded on another device", p->name);
    return q;
  }
  if (nargs != p->nargs) {
    char m[160];
    snprintf(m, sizeof(m), "exec of '%s' with %zu arguments, the program takes %u", p->name, nargs, p->nargs);
    fail(q, BG_EINVAL, "%s", m);
    return q;
  }
  bg_cmd *c = append(q, BG_CMD_EXEC);
  if (!c) return q;
  c->prg = p;
  c->args = calloc(nargs ? nargs : 1, sizeof(*c->args));
  if (!c->args) {
    fail(q, BG_ENOMEM, "%s", "out of host memory recording exec");
    return q;
  }
  for (size_t i = 0; i < nargs; i++) c->args[i] = operand(q, args[i]);
  for (int k = 0; k < 3; k++) {
    c->gsz[k] = operand(q, gsz[k]);
    c->lsz[k] = operand(q, lsz[k]);
  }
  if (!lsz[0].sym && !lsz[1].sym && !lsz[2].sym) {
    const uint64_t l[3] = {lsz[0].c, lsz[1].c, lsz[2].c};
    fail_last(q, check_workgroup(q, q->ncmds - 1, p, l));
  }
  return q;
}

bg_queue *bg_queue_copy(bg_queue *q, bg_val dst, bg_val src, uint64_t n) {
  bg_cmd *c = append(q, BG_CMD_COPY);
  if (c) {
    c->addr = operand(q, dst);
    c->value = operand(q, src);
    c->size = n;
    if (!dst.sym && !src.sym) fail_last(q, check_copy(q, q->ncmds - 1, dst.c, src.c, n));
  }
  return q;
}

/* ---------------- submit ---------------- */

static bool is_const(const ir_node *u) { return u->op == IR_CONST; }

/* Copies and symbolic work-group operands get a check compiled against the template's slots (a copy's constant
 * operands too: a buffer freed after recording must fail the next submit, not be written after its free). */
static int build_checks(bg_queue *q) {
  size_t n = 0;
  for (size_t i = 0; i < q->ncmds; i++) {
    const bg_cmd *c = &q->cmds[i];
    if (c->op == BG_CMD_COPY ||
        (c->op == BG_CMD_EXEC && (!is_const(c->lsz[0]) || !is_const(c->lsz[1]) || !is_const(c->lsz[2]))))
      n++;
  }
  if (!n) return 0;
  if (!(q->checks = calloc(n, sizeof(*q->checks)))) return bg_error(BG_ENOMEM, "out of host memory");
  for (size_t i = 0; i < q->ncmds; i++) {
    const bg_cmd *c = &q->cmds[i];
    const ir_node *ops[3];
    int nops;
    if (c->op == BG_CMD_COPY) {
      ops[0] = c->addr, ops[1] = c->value, nops = 2;
    } else if (c->op == BG_CMD_EXEC && (!is_const(c->lsz[0]) || !is_const(c->lsz[1]) || !is_const(c->lsz[2]))) {
      ops[0] = c->lsz[0], ops[1] = c->lsz[1], ops[2] = c->lsz[2], nops = 3;
    } else {
      continue;
    }
    qcheck *k = &q->checks[q->nchecks++];
    k->cmd = i;
    for (int j = 0; j < nops; j++) {
      int r = bg_tmpl_expr(&q->tmpl, ops[j], &k->e[j]);
      if (r < 0) return r;
      k->deps[0] |= k->e[j].deps[0];
      k->deps[1] |= k->e[j].deps[1];
    }
  }
  return 0;
}

/* The checks whose operands changed (all of them when `all`, every copy when `copies`: a buffer was freed), with
 * the slots of this submit. */
static int run_checks(const bg_queue *q, const uint64_t changed[2], bool all, bool copies) {
  for (size_t i = 0; i < q->nchecks; i++) {
    const qcheck *k = &q->checks[i];
    const bg_cmd *c = &q->cmds[k->cmd];
    if (!all && !(copies && c->op == BG_CMD_COPY) && !(k->deps[0] & changed[0]) && !(k->deps[1] & changed[1]))
      continue;
    uint64_t v[3];
    for (int j = 0; j < (c->op == BG_CMD_COPY ? 2 : 3); j++) v[j] = bg_tmpl_eval(&q->tmpl, &k->e[j], q->slots);
    int r = c->op == BG_CMD_COPY ? check_copy(q, k->cmd, v[0], v[1], c->size) : check_workgroup(q, k->cmd, c->prg, v);
    if (r < 0) return r;
  }
  return 0;
}

static int lower(bg_queue *q) {
  bg_dev *d = q->dev;
  int r = d->ops->lower(d, q->hw, q->cmds, q->ncmds, &q->tmpl);
  if (r < 0) return bg_error_context(r, "%s: lowering a %s queue of %zu commands: ", d->name, kind_name(q->kind), q->ncmds);
  if ((r = build_checks(q)) < 0) return bg_error_context(r, "%s: operand checks: ", d->name);
  q->user_needed = 0;
  for (size_t i = 0; i < q->tmpl.npatches; i++) q->user_needed |= q->tmpl.patches[i].deps[0];
  for (size_t i = 0; i < q->nchecks; i++) q->user_needed |= q->checks[i].deps[0];
  q->lowered = true;
  q->submits = 0;
  BG_LOG(2, "%s: lowered %s queue: %zu commands, %zu template bytes, %zu kernarg bytes, %zu patches", d->name,
         kind_name(q->kind), q->ncmds, q->tmpl.cmd_len, q->tmpl.kargs_len, q->tmpl.npatches);
  return 0;
}

int bg_queue_submit(bg_queue *q, const uint64_t *vars, size_t nvars) {
  bg_dev *d = q->dev;
  if (q->err) return bg_error(q->err, "%s: %s queue: %s", d->name, kind_name(q->kind), q->errmsg);
  int r = bg_dev_check(d);
  if (r < 0) return r;
  if (!q->lowered && (r = lower(q)) < 0) return r;
  if (nvars > BG_MAX_VARS) return bg_error(BG_EINVAL, "%s: %zu variables given, at most %d", d->name, nvars, BG_MAX_VARS);
  uint64_t missing = nvars >= 64 ? 0 : q->user_needed & ~((1ull << nvars) - 1);
  if (missing) {
    int s = __builtin_ctzll(missing);
    const ir_var_info *vi = ir_var_get(q->tmpl.slot_var[s]);
    return bg_error(BG_EINVAL, "%s: submit binds %zu variables but the queue reads variable %d ('%s')", d->name, nvars,
                    s, vi ? vi->name : "?");
  }
  uint64_t changed[2] = {0, 0};
  for (size_t i = 0; i < nvars; i++)
    if (q->slots[i] != vars[i]) { q->slots[i] = vars[i]; changed[0] |= 1ull << i; }
  uint64_t tl_addr = d->timeline->va, tl_val = d->timeline_value;
  if (q->slots[BG_SLOT_TIMELINE_ADDR] != tl_addr) { q->slots[BG_SLOT_TIMELINE_ADDR] = tl_addr; changed[1] |= 1ull << (BG_SLOT_TIMELINE_ADDR - 64); }
  if (q->slots[BG_SLOT_TIMELINE_VALUE] != tl_val) { q->slots[BG_SLOT_TIMELINE_VALUE] = tl_val; changed[1] |= 1ull << (BG_SLOT_TIMELINE_VALUE - 64); }
  bool all = q->submits == 0 || q->recheck;
  uint64_t frees = bg_memmap_frees();
  if (q->nchecks && (r = run_checks(q, changed, all, frees != q->frees_seen)) < 0) {
    q->recheck = true; /* the slots hold this submit's values now: the next submit must not trust them */
    return bg_error_context(r, "%s: %s queue: nothing submitted: ", d->name, kind_name(q->kind));
  }
  q->frees_seen = frees;
  void *kcpu = NULL;
  uint64_t kva = 0;
  if (q->tmpl.kargs_len) {
    if ((r = bg_kargs_alloc(d, q->tmpl.kargs_len, &kva, &kcpu)) < 0) return r;
    q->slots[BG_SLOT_KARGS_BASE] = kva;
    changed[1] |= 1ull << (BG_SLOT_KARGS_BASE - 64);
  }
  q->last_applied = bg_tmpl_apply(&q->tmpl, q->slots, changed, all);
  if (kcpu) memcpy(kcpu, q->tmpl.kargs, q->tmpl.kargs_len);
  else if (q->tmpl.kargs_len && (r = bg_kargs_write(d, kva, q->tmpl.kargs, q->tmpl.kargs_len)) < 0)
    return bg_error_context(r, "%s: kernel arguments: ", d->name);
  r = d->ops->submit(d, q->hw, q->tmpl.cmd, q->tmpl.cmd_len);
  if (r < 0) return bg_error_context(r, "%s: submit: ", d->name);
  if (q->tmpl.claims_timeline) d->timeline_value++;
  q->submits++;
  q->recheck = false;
  d->submits++;
  if (d->deferred) bg_dev_reap(d); /* buffers freed earlier whose work has retired go back to the allocator */
  return 0;
}

void bg_queue_get_stats(const bg_queue *q, bg_queue_stats *st) {
  st->ncmds = q->ncmds;
  st->template_bytes = q->tmpl.cmd_len + q->tmpl.kargs_len;
  st->npatches = q->tmpl.npatches;
  st->patches_applied_last = q->last_applied;
  st->submits = q->submits;
}

static const char *const cmd_names[] = {"wait", "signal", "timestamp", "memory_barrier", "exec", "copy"};

void bg_queue_dump(const bg_queue *q, FILE *f) {
  if (!f) f = stderr;
  char a[256], b[256];
  fprintf(f, "%s %s queue: %zu commands\n", q->dev->name, kind_name(q->kind), q->ncmds);
  for (size_t i = 0; i < q->ncmds; i++) {
    const bg_cmd *c = &q->cmds[i];
    a[0] = b[0] = '\0';
    if (c->addr) ir_render_expr(c->addr, a, sizeof(a));
    if (c->value) ir_render_expr(c->value, b, sizeof(b));
    switch (c->op) {
    case BG_CMD_WAIT: case BG_CMD_SIGNAL: fprintf(f, "  %s [%s] %s\n", cmd_names[c->op], a, b); break;
    case BG_CMD_TIMESTAMP: fprintf(f, "  timestamp [%s]\n", a); break;
    case BG_CMD_BARRIER: fprintf(f, "  memory_barrier\n"); break;
    case BG_CMD_COPY: fprintf(f, "  copy [%s] <- [%s] %llu bytes\n", a, b, (unsigned long long)c->size); break;
    case BG_CMD_EXEC:
      fprintf(f, "  exec %s(", c->prg->name);
      for (unsigned k = 0; k < c->prg->nargs; k++) {
        ir_render_expr(c->args[k], a, sizeof(a));
        fprintf(f, "%s%s", k ? ", " : "", a);
      }
      fprintf(f, ")\n");
      break;
    }
  }
}
