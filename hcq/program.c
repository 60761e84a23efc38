/* hcq/program.c: loaded programs, their kernel-argument layout, and the one-call run helper. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/dev_internal.h"

int bg_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, bg_program **out) {
  *out = NULL;
  if (!info || !info->name || (info->nargs && !info->arg_sizes))
    return bg_error(BG_EINVAL, "%s: program info needs a name and the size of each argument", d->name);
  bg_program *p = calloc(1, sizeof(*p));
  if (!p) return bg_error(BG_ENOMEM, "out of host memory loading %s", info->name);
  p->dev = d;
  p->nargs = info->nargs;
  p->name = strdup(info->name);
  p->arg_sizes = malloc(info->nargs + 1u);
  p->arg_offsets = malloc((info->nargs + 1u) * sizeof(uint32_t));
  if (!p->name || !p->arg_sizes || !p->arg_offsets) {
    bg_program_free(p);
    return bg_error(BG_ENOMEM, "out of host memory loading %s", info->name);
  }
  uint32_t off = 0;
  for (unsigned i = 0; i < info->nargs; i++) {
    unsigned sz = info->arg_sizes[i];
    if (sz != 1 && sz != 2 && sz != 4 && sz != 8) {
      bg_program_free(p);
      return bg_error(BG_EINVAL, "%s: program %s: argument %u has size %u (expected 1, 2, 4 or 8)", d->name,
                      info->name, i, sz);
    }
    off = (off + sz - 1) & ~(sz - 1); /* C-like layout: each argument aligned to its size */
    p->arg_sizes[i] = (uint8_t)sz;
    p->arg_offsets[i] = off;
    off += sz;
  }
  p->kargs_size = (off + 15u) & ~15u;
  int r = d->ops->program_load(d, bin, size, info, &p->handle);
  if (r < 0) {
    p->handle = NULL;
    bg_program_free(p);
    return bg_error_context(r, "%s: loading program %s: ", d->name, info->name);
  }
  /* Launches are checked against the smaller of the device's and the code object's work-group limit. */
  uint32_t dev_max = d->ops->max_workgroup ? d->ops->max_workgroup : BG_DEFAULT_MAX_WORKGROUP;
  uint32_t own = d->ops->program_max_workgroup ? d->ops->program_max_workgroup(d, p->handle) : 0;
  p->max_workgroup = own && own < dev_max ? own : dev_max;
  BG_LOG(2, "%s: loaded program %s (%u args, %u kernarg bytes)", d->name, p->name, p->nargs, p->kargs_size);
  *out = p;
  return 0;
}

void bg_program_free(bg_program *p) {
  if (!p) return;
  if (p->run_q) bg_queue_free(p->run_q);
  if (p->run_ts[0]) bg_signal_free(p->run_ts[0]);
  if (p->run_ts[1]) bg_signal_free(p->run_ts[1]);
  if (p->handle) {
    if (!p->dev->error && !p->dev->closing && bg_dev_synchronize(p->dev, 0) < 0)
      BG_LOG(1, "%s: freeing program %s after a failed sync: %s", p->dev->name, p->name, bg_last_error());
    p->dev->ops->program_free(p->dev, p->handle);
  }
  free(p->name);
  free(p->arg_sizes);
  free(p->arg_offsets);
  free(p);
}

const char *bg_program_name(const bg_program *p) { return p->name; }
unsigned bg_program_nargs(const bg_program *p) { return p->nargs; }
unsigned bg_program_kernargs_size(const bg_program *p) { return p->kargs_size; }

/* The run queue is recorded once: wait(tl, tv-1) [ts] exec [ts] signal(tl, tv), with every
 * argument and dimension a variable (args in slots 0.., then gsz, lsz). */
static int record_run_queue(bg_program *p) {
  bg_dev *d = p->dev;
  int r = bg_queue_new(d, BG_QUEUE_COMPUTE, &p->run_q);
  if (r < 0) return r;
  if ((r = bg_signal_new(d, 0, &p->run_ts[0])) < 0 || (r = bg_signal_new(d, 0, &p->run_ts[1])) < 0) return r;
  bg_queue *q = p->run_q;
  bg_val args[BG_MAX_VARS], g[3], l[3];
  char name[32];
  for (unsigned i = 0; i < p->nargs; i++) {
    snprintf(name, sizeof(name), "arg%u", i);
    args[i] = bg_var(q, i, name, 0, UINT64_MAX);
  }
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof(name), "gsz%d", k);
    g[k] = bg_var(q, p->nargs + (unsigned)k, name, 1, UINT32_MAX);
    snprintf(name, sizeof(name), "lsz%d", k);
    l[k] = bg_var(q, p->nargs + 3u + (unsigned)k, name, 1, UINT32_MAX);
  }
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_memory_barrier(q);
  bg_queue_timestamp(q, bg_sig(p->run_ts[0]));
  bg_queue_exec(q, p, args, p->nargs, g, l);
  bg_queue_timestamp(q, bg_sig(p->run_ts[1]));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  return 0;
}

int bg_program_run(bg_program *p, bg_buf *const *bufs, size_t nbufs, const uint64_t *vals, size_t nvals,
                   const uint32_t gsz[3], const uint32_t lsz[3], bool wait, double *us) {
  bg_dev *d = p->dev;
  if (nbufs + nvals != p->nargs)
    return bg_error(BG_EINVAL, "%s: run %s with %zu buffers and %zu values, the program takes %u arguments", d->name,
                    p->name, nbufs, nvals, p->nargs);
  if (p->nargs + 6 > BG_MAX_VARS) return bg_error(BG_EINVAL, "%s: program %s has too many arguments to run", d->name, p->name);
  int r;
  if (!p->run_q && (r = record_run_queue(p)) < 0) return r;
  uint64_t vars[BG_MAX_VARS];
  for (size_t i = 0; i < nbufs; i++) vars[i] = bufs[i]->mem.va;
  for (size_t i = 0; i < nvals; i++) vars[nbufs + i] = vals[i];
  for (int k = 0; k < 3; k++) {
    vars[p->nargs + (unsigned)k] = gsz[k];
    vars[p->nargs + 3u + (unsigned)k] = lsz[k];
  }
  if ((r = bg_queue_submit(p->run_q, vars, p->nargs + 6u)) < 0) return r;
  if (!wait) return 0;
  if ((r = bg_dev_synchronize(d, 0)) < 0) return r;
  if (!us) return 0;
  uint64_t t0, t1;
  if ((r = bg_signal_timestamp_raw(p->run_ts[0], &t0)) < 0 || (r = bg_signal_timestamp_raw(p->run_ts[1], &t1)) < 0)
    return r;
  *us = (double)(t1 - t0) / d->ops->ticks_per_us;
  return 0;
}
