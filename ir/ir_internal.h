/* ir/ir_internal.h: private to the sources in ir/: the context layout and the helpers they share.
 * Nothing outside ir/ includes this; the public contract is ir.h. */
#ifndef BG_IR_INTERNAL_H
#define BG_IR_INTERNAL_H

#include "ir/ir.h"

struct ir_chunk;

typedef struct ir_bnd {
  int64_t lo, hi;
  bool known;
} ir_bnd;

/* One DFS frame of an iterative walk: the node and the index of its next source. */
typedef struct ir_walk_frame {
  const ir_node *n;
  uint32_t i;
} ir_walk_frame;

struct ir_ctx {
  struct ir_chunk *chunks;       /* arena: nodes and blobs live until ir_free */
  unsigned char *cur;
  size_t left;
  const ir_node **nodes;         /* by id */
  size_t nnodes, nodes_cap;
  const ir_node **ntab;          /* node hash set (open addressing, power-of-two size) */
  size_t ntab_cap;
  const ir_blob **btab;          /* blob hash set */
  size_t btab_cap, nblobs;
  char err[512];
  uint32_t *mark;                /* walk marks by id: mark[id] == gen means visited */
  size_t mark_cap;
  uint32_t gen;
  ir_walk_frame *wstack;
  size_t wstack_cap;
  const ir_node **topo;          /* ir_toposort's result buffer */
  size_t topo_cap;
  struct ir_bnd *bnd;            /* vmin/vmax memo by id */
  size_t bnd_cap;
};

/* Records a printf-style message for ir_error. */
void ir_set_error(ir_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 16-byte aligned arena memory, freed by ir_free; NULL (with message) on out of memory. */
void *ir_arena_alloc(ir_ctx *ctx, size_t size);
/* Grows *p (elements of elem bytes) to hold at least need; new space is zeroed. false on OOM. */
bool ir_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Toposort of root into a caller-owned growable buffer (*buf, *cap); returns the count or
 * (size_t)-1 on out of memory. Uses ctx's marks and stack, calls nothing outside ir/. */
size_t ir_walk(ir_ctx *ctx, const ir_node *root, const ir_node ***buf, size_t *cap);

/* Dtype helpers. */
unsigned ir_dtype_bits(ir_dtype dt);                 /* scalar width in bits (bool: 8) */
int64_t ir_norm(ir_dtype dt, int64_t v);              /* truncate to dt's width, extend back */
void ir_dtype_range(ir_dtype dt, int64_t *lo, int64_t *hi);
bool ir_dt_is_intlike(ir_dtype dt);                   /* scalar int, index or bool, not pointer */
size_t ir_dtype_str(ir_dtype dt, char *buf, size_t n);

/* One integer/bool ALU op on already-normalized operand values, with ir_eval's semantics.
 * dt is the result dtype, sdt the dtype of src[0] (signedness of compares, CAST source). */
enum { IR_EV_OK = 0, IR_EV_DIV0 = 1, IR_EV_UNSUP = 2 };
int ir_eval_alu(enum ir_op op, ir_dtype dt, ir_dtype sdt, const int64_t *v, int64_t *out);

/* Map from node id to a small record, open addressing; zero-initialise to start empty. */
typedef struct ir_map_ent {
  uint32_t key;        /* id + 1; 0 marks an empty slot */
  uint32_t aux;
  const void *ptr;
} ir_map_ent;
typedef struct ir_map {
  ir_map_ent *e;
  size_t cap, n;
} ir_map;
ir_map_ent *ir_map_get(const ir_map *m, uint32_t id);
ir_map_ent *ir_map_put(ir_map *m, uint32_t id);      /* find or insert zeroed; NULL on OOM */
void ir_map_free(ir_map *m);

#endif
