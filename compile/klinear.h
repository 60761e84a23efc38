/* compile/klinear.h: the linearized kernel: a tree of loop scopes holding ordered items.
 *
 * klinearize places every node of an expanded kernel at the outermost loop where all the ranges
 * it depends on are bound (loop-invariant code is hoisted), opens the output loops outermost in
 * axis order, and lowers each REDUCE to an accumulator: ACC (identity) before its reduce loops,
 * UPDATE (acc = acc op lane, for each lane in order) in the innermost one, the accumulator read
 * after them. REDUCEs with the same reduce ranges and result ranges that do not depend on each
 * other, nor on an accumulator still being computed, share one loop nest (the copies made by
 * UPCAST become a register tile). */
#ifndef BG_COMPILE_KLINEAR_H
#define BG_COMPILE_KLINEAR_H

#include "compile/kernel_internal.h"

typedef struct kscope kscope;
typedef struct kitem kitem;

enum kitem_kind {
  KI_LEAF,    /* CONST or DEFINE_VAR: rendered in place, not in any scope's list */
  KI_EXPR,    /* ALU/CAST/BITCAST/THREEFRY: ops = one per source */
  KI_LOAD,    /* LOAD: ops = idx, valid (NULL when ungated) */
  KI_STORE,   /* STORE: ops = idx, valid, value */
  KI_ACC,     /* accumulator of the REDUCE u, initialised to the identity; its value after the loops */
  KI_UPDATE,  /* ops = acc, lanes...: acc = acc op lane, in order */
  KI_LOOP,    /* RANGE u: ops = extent; body is the loop's scope */
};

struct kitem {
  enum kitem_kind kind;
  const ir_node *u;
  kscope *scope;              /* where it lies (NULL for leaves) */
  kitem *prev, *next;         /* siblings in scope order */
  kitem *inst_next;           /* other instances of the same node (in other loop nests) */
  kscope *body;               /* KI_LOOP */
  unsigned nops;
  kitem **ops;
  /* renderer state */
  unsigned uses;
  kscope *use_scope;          /* scope of the last use */
  bool no_inline;             /* the consumer repeats the operand's text */
  bool named;                 /* declared as a variable */
  unsigned num;               /* variable number */
  char *text;                 /* name or inline expression */
};

struct kscope {
  kscope *parent;
  kitem *loop;                /* the KI_LOOP owning this scope (NULL for the root) */
  unsigned depth;
  uint64_t bound;             /* range bits bound here and above */
  uint64_t iters;             /* iterations of this scope per kernel run (upper bound) */
  kitem *first, *last;
  kitem *cursor;              /* new items go before it (NULL: at the end) */
  kitem **saved;              /* cursor stack of nested opens */
  size_t nsaved, saved_cap;
};

typedef struct klin {
  kscope *root;
  const ir_node *ranges[KMAX_RANGES];  /* bit -> RANGE */
  unsigned nranges;
  /* ownership */
  kitem **items;
  size_t nitems, items_cap;
  kscope **scopes;
  size_t nscopes, scopes_cap;
  /* CPU grid (klin_plan_cpu_grid): the outermost output loop runs iterations
   * [gid.x * grid_chunk, min(gid.x * grid_chunk + grid_chunk, extent)); NULL: no grid */
  kitem *grid_loop;
  int64_t grid_chunk, grid_extent;
} klin;

/* Builds the loop tree of an expanded, decomposed sink. -BG_EINVAL (message set) when the graph
 * is outside what the linearizer handles; free with klin_free in every case. */
int klinearize(ir_ctx *ctx, const ir_node *sink, klin *out);
void klin_free(klin *l);

/* The CPU grid of contract C2 (both CPU renderers): when the root scope holds exactly one loop, an
 * output loop of constant extent E, and no store or accumulator, that loop is split into gsz[0] work-groups of
 * grid_chunk iterations (the last may be shorter). gsz[0] = min(E, KLIN_MAX_GROUPS, work / KLIN_MIN_WORK)
 * where work counts item executions (every value, load and store times its loop trip count): each group
 * gets at least ~KLIN_MIN_WORK of them (a few µs) and a big kernel gets enough groups for every core and
 * for balancing. gsz = 1,1,1 and no grid_loop otherwise (one call runs the whole kernel). */
enum { KLIN_MAX_GROUPS = 256, KLIN_MIN_WORK = 16384 };
void klin_plan_cpu_grid(klin *l, uint32_t gsz[3]);

#endif
