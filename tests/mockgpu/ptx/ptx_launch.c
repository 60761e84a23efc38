/* tests/mockgpu/ptx/ptx_launch.c: a launch: every CTA of the grid in turn; in a CTA each thread runs
 * alone until it reaches bar.sync/barrier.sync or ret/exit, and the barrier releases when every thread
 * that has not exited waits on it (so shared-memory reductions see all stores before the barrier).
 * Threads that diverge onto different barriers would deadlock on hardware; here it is an error. */
#include "ptx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_RUN, TS_BAR, TS_DONE };

static int report(ptx_report *rep, const ptx_cta *c, const ptx_thread *t, const ptx_ins *in, const char *msg) {
  rep->line = in ? in->line : 0;
  memcpy(rep->cta, c->ctaid, sizeof rep->cta);
  if (t) memcpy(rep->tid, t->tid, sizeof rep->tid);
  snprintf(rep->msg, sizeof rep->msg, "ptx line %d `%s`: %s (CTA %u,%u,%u thread %u,%u,%u)", rep->line,
           in ? in->text : "", msg, c->ctaid[0], c->ctaid[1], c->ctaid[2], t ? t->tid[0] : 0, t ? t->tid[1] : 0,
           t ? t->tid[2] : 0);
  return -1;
}

/* Run t until a barrier, ret/exit or an error. */
static int run_thread(ptx_cta *c, ptx_thread *t, int *state, ptx_report *rep, uint64_t budget) {
  const ptx_entry *e = c->e;
  for (;;) {
    if (t->pc < 0 || t->pc >= e->nins) return report(rep, c, t, NULL, "ran past the last instruction without ret");
    const ptx_ins *in = &e->ins[t->pc];
    if (++rep->insts > budget) return report(rep, c, t, in, "instruction budget exhausted");
    if (in->pred >= 0 && !((t->r[in->pred] & 1) ^ in->pred_neg)) { t->pc++; continue; }
    int rc = 0;
    switch (in->op) {
    case OP_BRA:
      if (in->nops != 1 || in->ops[0].kind != O_LABEL) return report(rep, c, t, in, "bra needs a label");
      t->pc = in->ops[0].reg;
      continue;
    case OP_RET: case OP_EXIT: *state = TS_DONE; return 0;
    case OP_BAR:
      if (in->nops < 1 || in->ops[0].kind != O_IMM || in->ops[0].imm != 0 || in->nops > 1)
        return report(rep, c, t, in, "only barrier 0 of the whole CTA is implemented");
      *state = TS_BAR;
      return 0;
    case OP_LD: case OP_ST: case OP_CVTA: case OP_ATOM: case OP_RED: rc = ptx_exec_mem(c, t, in); break;
    case OP_CVT: rc = ptx_exec_cvt(c, t, in); break;
    default: rc = ptx_exec_alu(c, t, in); break;
    }
    if (rc) { char msg[256]; snprintf(msg, sizeof msg, "%s", c->err); return report(rep, c, t, in, msg); }
    t->pc++;
  }
}

static int run_cta(ptx_cta *c, ptx_thread *th, int *state, uint32_t nthreads, ptx_report *rep, uint64_t budget) {
  for (uint32_t i = 0; i < nthreads; i++) {
    memset(th[i].r, 0, (size_t)c->e->nregs * sizeof(uint64_t));
    memset(th[i].local, 0, c->e->local_size);
    th[i].pc = 0;
    state[i] = TS_RUN;
  }
  memset(c->shared, 0, c->shared_size);
  for (;;) {
    uint32_t done = 0;
    for (uint32_t i = 0; i < nthreads; i++) {
      if (state[i] == TS_RUN && run_thread(c, &th[i], &state[i], rep, budget)) return -1;
      done += state[i] == TS_DONE;
    }
    if (done == nthreads) return 0;
    /* All live threads wait: release them past their bar.sync. */
    int pc = -1;
    for (uint32_t i = 0; i < nthreads; i++) {
      if (state[i] != TS_BAR) continue;
      if (pc >= 0 && th[i].pc != pc)
        return report(rep, c, &th[i], &c->e->ins[th[i].pc], "threads of the CTA wait on different barriers");
      pc = th[i].pc;
    }
    for (uint32_t i = 0; i < nthreads; i++)
      if (state[i] == TS_BAR) { state[i] = TS_RUN; th[i].pc++; }
  }
}

int ptx_run(const ptx_module *m, const ptx_launch *l, ptx_report *rep) {
  memset(rep, 0, sizeof *rep);
  const ptx_entry *e = NULL;
  for (int i = 0; i < m->nentries && !e; i++)
    if (!l->entry || !strcmp(m->entries[i].name, l->entry)) e = &m->entries[i];
  if (!e) { snprintf(rep->msg, sizeof rep->msg, "no .entry named %s in the module", l->entry ? l->entry : "(any)"); return -1; }
  if (l->params_size < e->param_size) {
    snprintf(rep->msg, sizeof rep->msg, "%s: params_size %zu, the .param list needs %llu bytes", e->name,
             l->params_size, (unsigned long long)e->param_size);
    return -1;
  }
  uint64_t nthreads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
  if (nthreads == 0 || nthreads > 1024 || !l->grid[0] || !l->grid[1] || !l->grid[2] || !l->mem.read || !l->mem.write) {
    snprintf(rep->msg, sizeof rep->msg, "%s: block %ux%ux%u (1..1024 threads), grid %ux%ux%u (nonzero) and both memory callbacks needed",
             e->name, l->block[0], l->block[1], l->block[2], l->grid[0], l->grid[1], l->grid[2]);
    return -1;
  }
  char err[256] = "";
  ptx_cta c = {.m = m, .e = e, .l = l, .shared_size = m->shared_module + e->shared_size, .err = err, .errlen = sizeof err};
  ptx_thread *th = calloc(nthreads, sizeof *th);
  int *state = calloc(nthreads, sizeof *state);
  uint64_t *regs = calloc(nthreads * (size_t)(e->nregs ? e->nregs : 1), sizeof *regs);
  uint8_t *local = calloc(nthreads, e->local_size ? e->local_size : 1);
  c.shared = calloc(1, c.shared_size ? c.shared_size : 1);
  if (!th || !state || !regs || !local || !c.shared) abort();
  for (uint32_t i = 0; i < nthreads; i++) {
    th[i].r = regs + (size_t)i * (size_t)e->nregs;
    th[i].local = local + (size_t)i * e->local_size;
    th[i].tid[0] = i % l->block[0];
    th[i].tid[1] = i / l->block[0] % l->block[1];
    th[i].tid[2] = i / l->block[0] / l->block[1];
    th[i].lane = i % 32; th[i].warp = i / 32;
  }
  uint64_t budget = l->max_insts ? l->max_insts : 1000000000ull;
  int rc = 0;
  for (uint32_t z = 0; z < l->grid[2] && !rc; z++)
    for (uint32_t y = 0; y < l->grid[1] && !rc; y++)
      for (uint32_t x = 0; x < l->grid[0] && !rc; x++) {
        c.ctaid[0] = x; c.ctaid[1] = y; c.ctaid[2] = z;
        rc = run_cta(&c, th, state, (uint32_t)nthreads, rep, budget);
      }
  free(th); free(state); free(regs); free(local); free(c.shared);
  return rc;
}
