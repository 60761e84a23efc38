/* tests/mockgpu/ptx/ptx_ins_parse.c: one PTX instruction statement: "@!%p1 op.mod.type d, a, [b+4], {c, d};"
 * into a ptx_ins. Every opcode, modifier and operand form it does not know is an error naming the line.
 * Forms: NVIDIA PTX ISA "Instruction Statements", "Operand Types", and the instruction chapters. */
#include "ptx_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; uint8_t op; } ops[] = {
  {"ld", OP_LD}, {"st", OP_ST}, {"mov", OP_MOV}, {"cvta", OP_CVTA}, {"add", OP_ADD}, {"sub", OP_SUB},
  {"mul", OP_MUL}, {"mad", OP_MAD}, {"fma", OP_FMA}, {"div", OP_DIV}, {"rem", OP_REM}, {"min", OP_MIN},
  {"max", OP_MAX}, {"neg", OP_NEG}, {"abs", OP_ABS}, {"rcp", OP_RCP}, {"sqrt", OP_SQRT}, {"rsqrt", OP_RSQRT},
  {"ex2", OP_EX2}, {"lg2", OP_LG2}, {"sin", OP_SIN}, {"cos", OP_COS}, {"and", OP_AND}, {"or", OP_OR},
  {"xor", OP_XOR}, {"not", OP_NOT}, {"shl", OP_SHL}, {"shr", OP_SHR}, {"setp", OP_SETP}, {"selp", OP_SELP},
  {"cvt", OP_CVT}, {"bra", OP_BRA}, {"ret", OP_RET}, {"exit", OP_EXIT}, {"bar", OP_BAR}, {"barrier", OP_BAR},
  {"atom", OP_ATOM}, {"red", OP_RED}, {"shf", OP_SHF},
};
static const char *const cmps[] = {"", "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu",
                                   "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const rnds[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};
static const char *const spaces[] = {"", "param", "global", "shared", "local"};
static const char *const atom_ops[] = {"", "add", "min", "max", "exch", "cas", "and", "or", "xor"};

static int fail(char *err, size_t n, int line, const char *stmt, const char *what, const char *tok) {
  snprintf(err, n, "ptx line %d: %s%s%s: %s", line, what, tok ? " " : "", tok ? tok : "", stmt);
  return -1;
}

static int lookup(const char *const *tab, int n, const char *s) {
  for (int i = 1; i < n; i++)
    if (!strcmp(tab[i], s)) return i;
  return 0;
}
#define LOOKUP(tab, s) lookup(tab, (int)(sizeof tab / sizeof tab[0]), s)

static int sreg_id(const char *s) {
  static const char *const names[] = {"%tid", "%ntid", "%ctaid", "%nctaid"};
  if (!strcmp(s, "%laneid")) return S_LANEID;
  if (!strcmp(s, "%warpid")) return S_WARPID;
  for (int i = 0; i < 4; i++) {
    size_t k = strlen(names[i]);
    if (!strncmp(s, names[i], k) && s[k] == '.' && s[k + 1] >= 'x' && s[k + 1] <= 'z' && !s[k + 2])
      return i * 3 + (s[k + 1] - 'x');
  }
  return -1;
}

/* Immediate: decimal/hex integer, 0fXXXXXXXX (f32 bits), 0dXXXXXXXXXXXXXXXX (f64 bits). */
static bool parse_imm(const char *s, uint64_t *v) {
  char *end;
  if ((s[0] == '0') && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    *v = strtoull(s + 2, &end, 16);
    return *end == 0 && end - s == ((s[1] | 0x20) == 'f' ? 10 : 18);
  }
  if (s[0] == '-') { *v = (uint64_t)strtoll(s, &end, 0); return end != s + 1 && *end == 0; }
  if (!isdigit((unsigned char)s[0])) return false;
  *v = strtoull(s, &end, 0);
  if (*end == 'U' || *end == 'u') end++;
  return *end == 0;
}

static int parse_operand(ptx_module *m, ptx_entry *e, ptx_ins *in, char *s, ptx_opnd *o, char *err, size_t n) {
  while (isspace((unsigned char)*s)) s++;
  size_t l = strlen(s);
  while (l && isspace((unsigned char)s[l - 1])) s[--l] = 0;
  memset(o, 0, sizeof *o);
  o->reg = o->sym = -1;
  if (!strcmp(s, "_")) { o->kind = O_SINK; return 0; }
  if (s[0] == '[') {
    if (s[l - 1] != ']') return fail(err, n, in->line, in->text, "bad address operand", s);
    s[l - 1] = 0; s++;
    o->kind = O_ADDR;
    char *plus = strchr(s, '+');
    if (plus) {
      *plus = 0;
      uint64_t v;
      char *t = plus + 1;
      while (isspace((unsigned char)*t)) t++;
      if (!parse_imm(t, &v)) return fail(err, n, in->line, in->text, "bad address offset", t);
      o->off = (int64_t)v;
    }
    while (isspace((unsigned char)*s)) s++;
    l = strlen(s);
    while (l && isspace((unsigned char)s[l - 1])) s[--l] = 0;
    uint64_t v;
    if (s[0] == '%') {
      if ((o->reg = ptx_find_reg(e, s, NULL)) < 0) return fail(err, n, in->line, in->text, "undeclared register", s);
    } else if (parse_imm(s, &v)) o->off += (int64_t)v;
    else if ((o->sym = ptx_find_sym(m, e, s)) < 0) return fail(err, n, in->line, in->text, "unknown symbol", s);
    return 0;
  }
  if (s[0] == '{') {
    if (s[l - 1] != '}') return fail(err, n, in->line, in->text, "bad vector operand", s);
    s[l - 1] = 0;
    o->kind = O_VEC;
    char *save = NULL;
    for (char *t = strtok_r(s + 1, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
      if (o->nv == 4) return fail(err, n, in->line, in->text, "vector of more than 4", NULL);
      uint64_t v;
      if (!strcmp(t, "_")) o->vr[o->nv++] = -1;
      else if (t[0] != '%' && parse_imm(t, &v)) { /* LLVM stores constants as {0f3F800000, ...} */
        o->vimm[o->nv] = v;
        o->vr[o->nv++] = -2;
      } else if ((o->vr[o->nv++] = ptx_find_reg(e, t, NULL)) < 0)
        return fail(err, n, in->line, in->text, "undeclared register", t);
    }
    return o->nv ? 0 : fail(err, n, in->line, in->text, "empty vector operand", NULL);
  }
  if (s[0] == '%') {
    int id = sreg_id(s);
    if (id >= 0) { o->kind = O_SREG; o->reg = id; return 0; }
    o->kind = O_REG;
    if ((o->reg = ptx_find_reg(e, s, NULL)) < 0) return fail(err, n, in->line, in->text, "undeclared register", s);
    return 0;
  }
  if (parse_imm(s, &o->imm)) { o->kind = O_IMM; return 0; }
  if (in->op == OP_BRA) { o->kind = O_LABEL; o->reg = ptx_label_ref(e, s); return 0; }
  if ((o->sym = ptx_find_sym(m, e, s)) >= 0) { o->kind = O_SYM; return 0; }
  return fail(err, n, in->line, in->text, "unknown operand", s);
}

int ptx_ins_parse(ptx_module *m, ptx_entry *e, const char *stmt, int line, char *err, size_t n) {
  if (e->nins == e->cap_ins) {
    e->cap_ins = e->cap_ins ? e->cap_ins * 2 : 64;
    e->ins = realloc(e->ins, (size_t)e->cap_ins * sizeof *e->ins);
    if (!e->ins) abort();
  }
  ptx_ins *in = &e->ins[e->nins];
  memset(in, 0, sizeof *in);
  in->line = line;
  in->text = strdup(stmt);
  char *s = strdup(stmt);
  if (!in->text || !s) abort();
  int rc = -1;
  char *p = s;
  in->pred = -1;
  if (*p == '@') {
    p++;
    if (*p == '!') { in->pred_neg = true; p++; }
    char *q = p;
    while (*q && !isspace((unsigned char)*q)) q++;
    if (*q) *q++ = 0;
    if ((in->pred = ptx_find_reg(e, p, NULL)) < 0) { fail(err, n, line, stmt, "undeclared predicate", p); goto out; }
    p = q;
    while (isspace((unsigned char)*p)) p++;
  }
  char *args = p;
  while (*args && !isspace((unsigned char)*args)) args++;
  if (*args) *args++ = 0;
  /* Mnemonic: opcode, then modifiers in any order. */
  char *save = NULL, *tok = strtok_r(p, ".", &save);
  int opi = -1;
  for (size_t i = 0; tok && i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(ops[i].name, tok)) opi = (int)i;
  if (opi < 0) { fail(err, n, line, stmt, "unknown instruction", tok); goto out; }
  in->op = ops[opi].op;
  bool cvta_to = false;
  while ((tok = strtok_r(NULL, ".", &save))) {
    int k;
    if ((k = ptx_parse_type(tok)) && in->ntypes < 2) in->type[in->ntypes++] = (uint8_t)k;
    else if ((k = LOOKUP(spaces, tok)) && !in->space) in->space = (uint8_t)k;
    else if ((in->op == OP_SETP) && (k = LOOKUP(cmps, tok)) && !in->cmp) in->cmp = (uint8_t)k;
    else if ((in->op == OP_ATOM || in->op == OP_RED) && (k = LOOKUP(atom_ops, tok)) && !in->atom_op) in->atom_op = (uint8_t)k;
    else if ((k = LOOKUP(rnds, tok)) && !in->rnd) in->rnd = (uint8_t)k;
    else if (!strcmp(tok, "v2") || !strcmp(tok, "v4")) in->vec = (uint8_t)(tok[1] - '0');
    else if (!strcmp(tok, "lo")) in->flags |= F_LO;
    else if (!strcmp(tok, "hi")) in->flags |= F_HI;
    else if (!strcmp(tok, "wide")) in->flags |= F_WIDE;
    else if (!strcmp(tok, "ftz")) in->flags |= F_FTZ;
    else if (!strcmp(tok, "sat")) in->flags |= F_SAT;
    else if (!strcmp(tok, "approx")) in->flags |= F_APPROX;
    else if (!strcmp(tok, "to") && in->op == OP_CVTA) cvta_to = true;
    else if (in->op == OP_SHF && !strcmp(tok, "l")) in->flags |= F_SHF_L;
    else if (in->op == OP_SHF && !strcmp(tok, "r")) in->flags |= F_SHF_R;
    else if (in->op == OP_SHF && !strcmp(tok, "wrap")) in->flags |= F_WRAP;
    else if (in->op == OP_SHF && !strcmp(tok, "clamp")) in->flags |= F_CLAMP;
    /* No effect in a single-threaded interpreter: uniform branch, caching and ordering hints. */
    else if (!strcmp(tok, "uni") || !strcmp(tok, "nc") || !strcmp(tok, "volatile") || !strcmp(tok, "full") ||
             !strcmp(tok, "sync") || !strcmp(tok, "aligned") || !strcmp(tok, "relaxed") || !strcmp(tok, "gpu") ||
             !strcmp(tok, "cta") || !strcmp(tok, "sys") || !strcmp(tok, "noftz")) {
    } else { fail(err, n, line, stmt, "unknown modifier or state space", tok); goto out; }
  }
  if (cvta_to) in->flags |= F_TO;
  if (in->op == OP_SHF && (!(in->flags & F_SHF_L) == !(in->flags & F_SHF_R) || !(in->flags & F_WRAP) == !(in->flags & F_CLAMP))) {
    fail(err, n, line, stmt, "shf needs one of .l/.r and one of .wrap/.clamp", NULL); goto out;
  }
  if (in->op == OP_SETP && !in->cmp) { fail(err, n, line, stmt, "setp without a comparison", NULL); goto out; }
  if ((in->op == OP_ATOM || in->op == OP_RED) && !in->atom_op) { fail(err, n, line, stmt, "unknown atomic operation", NULL); goto out; }
  if (in->op != OP_BRA && in->op != OP_RET && in->op != OP_EXIT && in->op != OP_BAR && !in->ntypes) {
    fail(err, n, line, stmt, "instruction without a type", NULL); goto out;
  }
  /* Operands: split at top-level commas. */
  int depth = 0;
  char *start = args;
  for (char *q = args;; q++) {
    if (*q == '[' || *q == '{') depth++;
    else if (*q == ']' || *q == '}') depth--;
    if ((*q == ',' && depth == 0) || !*q) {
      bool end = !*q;
      *q = 0;
      char *t = start;
      while (isspace((unsigned char)*t)) t++;
      if (*t || !end || in->nops) {
        if (in->nops == 5) { fail(err, n, line, stmt, "too many operands", NULL); goto out; }
        if (parse_operand(m, e, in, start, &in->ops[in->nops++], err, n)) goto out;
      }
      if (end) break;
      start = q + 1;
    }
  }
  /* Immediates in a vector are sources only (st, mov pack). */
  if ((in->op == OP_LD || in->op == OP_MOV) && in->nops && in->ops[0].kind == O_VEC)
    for (int i = 0; i < in->ops[0].nv; i++)
      if (in->ops[0].vr[i] == -2) { fail(err, n, line, stmt, "immediate in a destination vector", NULL); goto out; }
  if (in->op == OP_SHF && (in->nops != 4 || in->ntypes != 1 || in->type[0] != T_B32)) {
    fail(err, n, line, stmt, "shf takes .b32 d, a, b, c", NULL); goto out;
  }
  e->nins++;
  rc = 0;
out:
  free(s);
  if (rc) free(in->text);
  return rc;
}
