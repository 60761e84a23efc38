/* tensor/context.c: a tensor context's life (device, lazy graph, program cache, buffers; open, close,
 * sync), its error latch, stats and random seed. Handles and by-node side tables: handles.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

int bg_tctx_open(const char *dev, bg_tctx **out) {
  *out = NULL;
  bg_tctx *c = calloc(1, sizeof *c);
  if (!c) return bg_error(BG_ENOMEM, "tensor: out of host memory opening a context");
  int r = bg_dev_open(dev, &c->dev);
  if (r < 0) {
    free(c);
    return bg_error_context(r, "tensor: ");
  }
  c->g = ir_new();
  if (!c->g) {
    bg_dev_close(c->dev);
    free(c);
    return bg_error(BG_ENOMEM, "tensor: out of host memory opening a context");
  }
  c->err_t.c = c;
  c->err_t.dt = BG_FLOAT32;
  *out = c;
  return 0;
}

void bg_tctx_close(bg_tctx *c) {
  if (!c) return;
  if (bg_dev_synchronize(c->dev, 0) < 0) BG_LOG(1, "tensor: closing after a failed sync: %s", bg_last_error());
  for (size_t i = 0; i < c->nprogs; i++) {
    bg_program_free(c->progs[i].prg);
    bg_kernel_free(&c->progs[i].k);
    free(c->progs[i].key);
  }
  free(c->progs);
  for (size_t i = 0; i < c->nbufs; i++)
    if (c->bufs[i].b) bg_buf_free(c->bufs[i].b);
  free(c->bufs);
  for (tchunk *k = c->chunks, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  free(c->shapes);
  free(c->has_shape);
  free(c->real);
  free(c->handles);
  free(c->vars);
  t_load_free(c);
  ir_free(c->g);
  bg_dev_close(c->dev);
  free(c);
}

const char *bg_tctx_error(const bg_tctx *c) { return c && c->has_err ? c->err : NULL; }
void bg_tctx_clear_error(bg_tctx *c) {
  c->has_err = false;
  c->err[0] = 0;
}
const char *bg_tctx_device(const bg_tctx *c) { return bg_dev_name(c->dev); }
void bg_tctx_stats(const bg_tctx *c, bg_tstats *st) { *st = c->st; }

void bg_tctx_seed(bg_tctx *c, uint64_t seed) {
  c->seed = seed;
  c->rng_counter = 0;
}

bg_tensor *t_fail(bg_tctx *c, const char *fmt, ...) {
  char msg[sizeof c->err]; /* formatted apart: an argument may be bg_last_error() itself */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bg_error(BG_EINVAL, "%s", msg); /* baregpu/error.h rule 4: the failing call's message is in bg_last_error() */
  if (!c->has_err) {
    memcpy(c->err, msg, sizeof c->err);
    c->has_err = true;
    BG_LOG(1, "tensor: %s", c->err);
  }
  return &c->err_t;
}

bg_tensor *t_null_arg(const char *op, const char *arg, bg_tensor *other) {
  if (strncmp(op, "bg_tn_", 6) == 0) op += 6;   /* callers pass __func__ */
  bg_error(BG_EINVAL, "%s: tensor argument '%s' is NULL", op, arg);
  return other ? t_fail(other->c, "%s: tensor argument '%s' is NULL", op, arg) : NULL;
}

int bg_tctx_sync(bg_tctx *c) { return bg_dev_synchronize(c->dev, 0); }
