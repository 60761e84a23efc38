/* ir/ir_intern.c: the context: arena, error buffer, hash-consing of nodes and blobs, dense ids. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_internal.h"

struct ir_chunk {
  struct ir_chunk *next;
  size_t size;
  _Alignas(16) unsigned char data[];
};

enum { CHUNK_SIZE = 256 * 1024 };

void ir_set_error(ir_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
  va_end(ap);
}

const char *ir_error(const ir_ctx *ctx) { return ctx ? ctx->err : "no context"; }

bool ir_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem) return false;
    ncap *= 2;
  }
  unsigned char *np = realloc(*p, ncap * elem);
  if (!np) return false;
  memset(np + *cap * elem, 0, (ncap - *cap) * elem);
  *p = np;
  *cap = ncap;
  return true;
}

void *ir_arena_alloc(ir_ctx *ctx, size_t size) {
  size = (size + 15u) & ~(size_t)15u;
  if (size > ctx->left) {
    /* big requests get their own chunk so the current one keeps its free tail */
    size_t csize = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
    struct ir_chunk *c = malloc(sizeof *c + csize);
    if (!c) {
      ir_set_error(ctx, "ir: out of memory (arena chunk of %zu bytes)", csize);
      return NULL;
    }
    c->size = csize;
    if (csize == size && ctx->chunks) {
      c->next = ctx->chunks->next;
      ctx->chunks->next = c;
      return c->data;
    }
    c->next = ctx->chunks;
    ctx->chunks = c;
    ctx->cur = c->data;
    ctx->left = csize;
  }
  void *p = ctx->cur;
  ctx->cur += size;
  ctx->left -= size;
  return p;
}

ir_ctx *ir_new(void) {
  ir_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return NULL;
  ctx->ntab_cap = 1024;
  ctx->ntab = calloc(ctx->ntab_cap, sizeof *ctx->ntab);
  ctx->btab_cap = 64;
  ctx->btab = calloc(ctx->btab_cap, sizeof *ctx->btab);
  if (!ctx->ntab || !ctx->btab) {
    ir_free(ctx);
    return NULL;
  }
  return ctx;
}

void ir_free(ir_ctx *ctx) {
  if (!ctx) return;
  for (struct ir_chunk *c = ctx->chunks, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(ctx->nodes);
  free(ctx->ntab);
  free(ctx->btab);
  free(ctx->mark);
  free(ctx->wstack);
  free(ctx->topo);
  free(ctx->bnd);
  free(ctx);
}

size_t ir_node_count(const ir_ctx *ctx) { return ctx->nnodes; }

/* ---- hashing ---- */

static uint64_t mix64(uint64_t h, uint64_t v) {
  h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
  h *= UINT64_C(0xff51afd7ed558ccd);
  return h ^ (h >> 29);
}

static uint64_t arg_bits(ir_arg a) {
  uint64_t u;
  memcpy(&u, &a, sizeof u);
  return u;
}

/* ---- blobs ---- */

const ir_blob *ir_blob_intern(ir_ctx *ctx, const void *data, size_t size) {
  if (size > UINT32_MAX || (size && !data)) {
    ir_set_error(ctx, "ir_blob_intern: bad blob (size %zu)", size);
    return NULL;
  }
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < size; i++) h = (h ^ ((const uint8_t *)data)[i]) * 16777619u;
  h ^= (uint32_t)size;
  size_t mask = ctx->btab_cap - 1, i = h & mask;
  for (; ctx->btab[i]; i = (i + 1) & mask) {
    const ir_blob *b = ctx->btab[i];
    if (b->hash == h && b->size == size && (size == 0 || memcmp(b->data, data, size) == 0)) return b;
  }
  /* data gets a trailing NUL (not counted) so names can be used as C strings */
  ir_blob *b = ir_arena_alloc(ctx, sizeof *b);
  uint8_t *d = ir_arena_alloc(ctx, size + 1);
  if (!b || !d) return NULL;
  if (size) memcpy(d, data, size);
  d[size] = 0;
  b->size = (uint32_t)size;
  b->hash = h;
  b->data = d;
  if ((ctx->nblobs + 1) * 2 > ctx->btab_cap) {
    size_t ncap = ctx->btab_cap * 2;
    const ir_blob **nt = calloc(ncap, sizeof *nt);
    if (!nt) {
      ir_set_error(ctx, "ir_blob_intern: out of memory");
      return NULL;
    }
    for (size_t j = 0; j < ctx->btab_cap; j++) {
      const ir_blob *o = ctx->btab[j];
      if (!o) continue;
      size_t k = o->hash & (ncap - 1);
      while (nt[k]) k = (k + 1) & (ncap - 1);
      nt[k] = o;
    }
    free(ctx->btab);
    ctx->btab = nt;
    ctx->btab_cap = ncap;
    mask = ncap - 1;
    for (i = h & mask; ctx->btab[i]; i = (i + 1) & mask) {}
  }
  ctx->btab[i] = b;
  ctx->nblobs++;
  return b;
}

/* ---- nodes ---- */

static bool node_eq(const ir_node *n, enum ir_op op, ir_dtype dt, uint64_t abits, unsigned nsrc,
                    const ir_node *const *src) {
  if (n->op != op || n->dt != dt || n->nsrc != nsrc || arg_bits(n->arg) != abits) return false;
  for (unsigned i = 0; i < nsrc; i++)
    if (n->src[i] != src[i]) return false;
  return true;
}

static bool ntab_grow(ir_ctx *ctx) {
  size_t ncap = ctx->ntab_cap * 2;
  const ir_node **nt = calloc(ncap, sizeof *nt);
  if (!nt) return false;
  for (size_t j = 0; j < ctx->ntab_cap; j++) {
    const ir_node *o = ctx->ntab[j];
    if (!o) continue;
    size_t k = o->hash & (ncap - 1);
    while (nt[k]) k = (k + 1) & (ncap - 1);
    nt[k] = o;
  }
  free(ctx->ntab);
  ctx->ntab = nt;
  ctx->ntab_cap = ncap;
  return true;
}

const ir_node *ir_intern(ir_ctx *ctx, enum ir_op op, ir_dtype dt, ir_arg arg, unsigned nsrc,
                         const ir_node *const *src) {
  if ((unsigned)op >= IR_OP_COUNT || nsrc > UINT16_MAX || (nsrc && !src)) {
    ir_set_error(ctx, "ir_intern: bad op %d or source count %u", (int)op, nsrc);
    return NULL;
  }
  for (unsigned i = 0; i < nsrc; i++)
    if (!src[i]) {
      /* a failed constructor upstream: keep its message, just propagate the NULL */
      if (!ctx->err[0]) ir_set_error(ctx, "ir_intern: %s source %u is NULL", ir_op_name(op), i);
      return NULL;
    }
  /* canonical arg bits: NONE args are zero, blob pointers fill the union from zero */
  ir_arg a;
  memset(&a, 0, sizeof a);
  switch (ir_op_arg_kind(op)) {
  case IR_ARG_NONE: break;
  case IR_ARG_BLOB: a.b = arg.b; break;
  default: a = arg; break;
  }
  uint64_t abits = arg_bits(a);
  uint64_t h64 = mix64(mix64(mix64((uint64_t)op, dt), abits), nsrc);
  for (unsigned i = 0; i < nsrc; i++) h64 = mix64(h64, src[i]->id);
  uint32_t h = (uint32_t)(h64 ^ (h64 >> 32));

  size_t mask = ctx->ntab_cap - 1, i = h & mask;
  for (; ctx->ntab[i]; i = (i + 1) & mask) {
    const ir_node *n = ctx->ntab[i];
    if (n->hash == h && node_eq(n, op, dt, abits, nsrc, src)) return n;
  }
  if (ctx->nnodes >= UINT32_MAX - 1) {
    ir_set_error(ctx, "ir_intern: too many nodes");
    return NULL;
  }
  if (!ir_grow((void **)&ctx->nodes, &ctx->nodes_cap, ctx->nnodes + 1, sizeof *ctx->nodes)) {
    ir_set_error(ctx, "ir_intern: out of memory");
    return NULL;
  }
  if ((ctx->nnodes + 1) * 2 > ctx->ntab_cap) {
    if (!ntab_grow(ctx)) {
      ir_set_error(ctx, "ir_intern: out of memory");
      return NULL;
    }
    mask = ctx->ntab_cap - 1;
    for (i = h & mask; ctx->ntab[i]; i = (i + 1) & mask) {}
  }
  ir_node *n = ir_arena_alloc(ctx, sizeof *n + nsrc * sizeof n->src[0]);
  if (!n) return NULL;
  n->id = (uint32_t)ctx->nnodes;
  n->hash = h;
  n->op = (uint16_t)op;
  n->nsrc = (uint16_t)nsrc;
  n->dt = dt;
  n->arg = a;
  for (unsigned k = 0; k < nsrc; k++) n->src[k] = src[k];
  ctx->ntab[i] = n;
  ctx->nodes[ctx->nnodes++] = n;
  return n;
}

/* ---- id map (used by rewrite, substitute, print) ---- */

ir_map_ent *ir_map_get(const ir_map *m, uint32_t id) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1, i = (id * UINT32_C(2654435761)) & mask;
  for (; m->e[i].key; i = (i + 1) & mask)
    if (m->e[i].key == id + 1u) return &m->e[i];
  return NULL;
}

ir_map_ent *ir_map_put(ir_map *m, uint32_t id) {
  ir_map_ent *e = ir_map_get(m, id);
  if (e) return e;
  if ((m->n + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    ir_map_ent *ne = calloc(ncap, sizeof *ne);
    if (!ne) return NULL;
    for (size_t j = 0; j < m->cap; j++) {
      if (!m->e[j].key) continue;
      size_t k = ((m->e[j].key - 1u) * UINT32_C(2654435761)) & (ncap - 1);
      while (ne[k].key) k = (k + 1) & (ncap - 1);
      ne[k] = m->e[j];
    }
    free(m->e);
    m->e = ne;
    m->cap = ncap;
  }
  size_t mask = m->cap - 1, i = (id * UINT32_C(2654435761)) & mask;
  while (m->e[i].key) i = (i + 1) & mask;
  m->e[i].key = id + 1u;
  m->n++;
  return &m->e[i];
}

void ir_map_free(ir_map *m) {
  free(m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}
