/* ir/ir_print.c: ir_print (one line per node, ids renumbered densely so the text does not depend on
 * what else lives in the context) and ir_render_expr (compact infix for integer expressions). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_internal.h"

static void print_blob(FILE *f, const ir_blob *b) {
  bool text = true;
  for (uint32_t i = 0; i < b->size && text; i++) text = b->data[i] >= 0x20 && b->data[i] < 0x7f && b->data[i] != '"';
  if (text) {
    fprintf(f, " \"%s\"", (const char *)b->data);
    return;
  }
  fputs(" 0x", f);
  for (uint32_t i = 0; i < b->size; i++) fprintf(f, "%02x", b->data[i]);
}

static void print_arg(FILE *f, const ir_node *u) {
  enum ir_op op = (enum ir_op)u->op;
  enum ir_scalar s = IR_DT_SCALAR(u->dt);
  switch (ir_op_arg_kind(op)) {
  case IR_ARG_NONE: break;
  case IR_ARG_INT:
    if (op == IR_REDUCE) fprintf(f, " %s", ir_op_name((enum ir_op)u->arg.i));
    else fprintf(f, " %" PRId64, u->arg.i);
    break;
  case IR_ARG_SCALAR:
    if (ir_scalar_is_float(s)) fprintf(f, " %.17g", u->arg.f);
    else if (s == IR_DT_UINT64) fprintf(f, " %" PRIu64, (uint64_t)u->arg.i);
    else fprintf(f, " %" PRId64, u->arg.i);
    break;
  case IR_ARG_BLOB: {
    const ir_var_info *vi = ir_var_get(u);
    if (vi) fprintf(f, " %s[%" PRId64 "..%" PRId64 "]", vi->name, vi->min, vi->max);
    else if (u->arg.b) print_blob(f, u->arg.b);
    break;
  }
  }
}

int ir_print(ir_ctx *ctx, const ir_node *root, FILE *f) {
  const ir_node **buf = NULL;
  size_t cap = 0, n = ir_walk(ctx, root, &buf, &cap);
  ir_map num = {0};
  int rc = -1;
  char dts[32];
  if (n == (size_t)-1) goto done;
  for (size_t k = 0; k < n; k++) {
    ir_map_ent *m = ir_map_put(&num, buf[k]->id);
    if (!m) {
      ir_set_error(ctx, "ir_print: out of memory");
      goto done;
    }
    m->aux = (uint32_t)k;
    const ir_node *u = buf[k];
    ir_dtype_str(u->dt, dts, sizeof dts);
    fprintf(f, "%%%zu = %s %s (", k, ir_op_name((enum ir_op)u->op), dts);
    for (unsigned i = 0; i < u->nsrc; i++)
      fprintf(f, "%s%%%u", i ? ", " : "", ir_map_get(&num, u->src[i]->id)->aux);
    fputc(')', f);
    print_arg(f, u);
    fputc('\n', f);
  }
  rc = ferror(f) ? -1 : 0;
  if (rc) ir_set_error(ctx, "ir_print: write error");
done:
  ir_map_free(&num);
  free(buf);
  return rc;
}

/* ---- infix rendering ---- */

typedef struct out {
  char *buf;
  size_t n, len;   /* capacity, length of the full rendering (may exceed n) */
} out;

static void put(out *o, const char *s) {
  for (; *s; s++, o->len++)
    if (o->len + 1 < o->n) o->buf[o->len] = *s;
}

static const char *infix(enum ir_op op) {
  switch (op) {
  case IR_ADD: return "+";
  case IR_SUB: return "-";
  case IR_MUL: return "*";
  case IR_FDIV: return "/";
  case IR_IDIV: return "//";
  case IR_MOD: return "%";
  case IR_CMPLT: return "<";
  case IR_CMPNE: return "!=";
  case IR_CMPEQ: return "==";
  case IR_AND: return "&";
  case IR_OR: return "|";
  case IR_XOR: return "^";
  case IR_SHL: return "<<";
  case IR_SHR: return ">>";
  default: return NULL;
  }
}

static void put_leaf(out *o, const ir_node *u) {
  char tmp[48];
  const ir_var_info *vi = ir_var_get(u);
  enum ir_scalar s = IR_DT_SCALAR(u->dt);
  if (vi) {
    put(o, vi->name);
  } else if (u->op == IR_CONST) {
    if (ir_scalar_is_float(s)) snprintf(tmp, sizeof tmp, "%g", u->arg.f);
    else if (s == IR_DT_UINT64) snprintf(tmp, sizeof tmp, "%" PRIu64, (uint64_t)u->arg.i);
    else snprintf(tmp, sizeof tmp, "%" PRId64, u->arg.i);
    put(o, tmp);
  } else if (u->op == IR_SPECIAL && u->arg.b) {
    put(o, (const char *)u->arg.b->data);
  } else if (u->op == IR_RANGE) {
    snprintf(tmp, sizeof tmp, "r%" PRId64, u->arg.i >> 8);
    put(o, tmp);
  } else {
    put(o, ir_op_name((enum ir_op)u->op));
  }
}

/* Opening text of u, the text before source i (i >= 1), and the closing text. */
static void put_open(out *o, const ir_node *u, bool root) {
  enum ir_op op = (enum ir_op)u->op;
  char tmp[32];
  if (infix(op)) {
    if (!root) put(o, "(");
  } else if (op == IR_MAX) {
    put(o, "max(");
  } else if (op == IR_WHERE) {
    put(o, "(");
  } else if (op == IR_NEG) {
    put(o, "(-");
  } else if (op == IR_CAST) {
    ir_dtype_str(u->dt, tmp, sizeof tmp);
    put(o, tmp);
    put(o, "(");
  } else {
    put(o, ir_op_name(op));
    put(o, "(");
  }
}

static void put_sep(out *o, const ir_node *u, unsigned i) {
  const char *s = infix((enum ir_op)u->op);
  if (s) put(o, s);
  else if (u->op == IR_WHERE) put(o, i == 1 ? "?" : ":");
  else put(o, ",");
}

static void put_close(out *o, const ir_node *u, bool root) {
  if (!infix((enum ir_op)u->op) || !root) put(o, ")");
}

size_t ir_render_expr(const ir_node *u, char *buf, size_t n) {
  out o = {buf, n, 0};
  ir_walk_frame *st = NULL;
  size_t cap = 0, sp = 0;
  if (!u) {
    put(&o, "NULL");
  } else if (u->nsrc == 0 || u->op == IR_RANGE || u->op == IR_SPECIAL) {
    put_leaf(&o, u);
  } else if (ir_grow((void **)&st, &cap, 1, sizeof *st)) {
    st[sp++] = (ir_walk_frame){u, 0};
    while (sp) {
      ir_walk_frame *f = &st[sp - 1];
      const ir_node *x = f->n;
      bool root = sp == 1;
      if (f->i == 0) put_open(&o, x, root);
      if (f->i == x->nsrc) {
        put_close(&o, x, root);
        sp--;
        continue;
      }
      if (f->i > 0) put_sep(&o, x, f->i);
      const ir_node *s = x->src[f->i++];
      if (s->nsrc == 0 || s->op == IR_RANGE || s->op == IR_SPECIAL) {
        put_leaf(&o, s);
      } else if (ir_grow((void **)&st, &cap, sp + 1, sizeof *st)) {
        st[sp++] = (ir_walk_frame){s, 0};
      } else {
        put(&o, "...");
      }
    }
  } else {
    put(&o, "...");
  }
  free(st);
  if (n) buf[o.len < n ? o.len : n - 1] = '\0';
  return o.len;
}
