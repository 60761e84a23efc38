/* tests/mockgpu/ptx/ptx_parse.c: PTX module structure: statements split at ';', '{' and '}' with their
 * line, comments, labels, the module directives (.version/.target/.address_size), .entry headers with
 * their .param list, and the .reg/.shared/.local declarations. Instructions go to ptx_ins_parse.c.
 * Grammar: NVIDIA's PTX ISA, chapters "Syntax", "State Spaces, Types, and Variables", "Directives". */
#include "ptx_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {"", "pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8",
                                         "s16", "s32", "s64", "f16", "f16x2", "f32", "f64", "f32x2"};

int ptx_parse_type(const char *s) {
  for (int i = 1; i < (int)(sizeof type_names / sizeof type_names[0]); i++)
    if (!strcmp(s, type_names[i])) return i;
  return T_NONE;
}
int ptx_type_size(int t) {
  switch (t) {
  case T_B8: case T_U8: case T_S8: return 1;
  case T_B16: case T_U16: case T_S16: case T_F16: return 2;
  case T_B64: case T_U64: case T_S64: case T_F64: case T_F32X2: return 8;
  case T_PRED: return 1;
  default: return 4;
  }
}
bool ptx_type_float(int t) { return t == T_F16 || t == T_F16X2 || t == T_F32 || t == T_F64 || t == T_F32X2; }
bool ptx_type_signed(int t) { return t == T_S8 || t == T_S16 || t == T_S32 || t == T_S64; }

static int fail(char *err, size_t n, int line, const char *stmt, const char *what) {
  snprintf(err, n, "ptx line %d: %s: %s", line, what, stmt);
  return -1;
}

static void *grow(void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *q = realloc(p, (size_t)nc * elem);
  if (!q) abort(); /* test-bed allocation of a few KiB */
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *cap = nc;
  return q;
}

int ptx_find_reg(const ptx_entry *e, const char *name, int *type) {
  size_t n = strlen(name), k = n;
  while (k > 0 && isdigit((unsigned char)name[k - 1])) k--;
  for (int i = 0; i < e->nregdecl; i++) {
    const ptx_reg_decl *d = &e->regs[i];
    if (d->count == 0) {
      if (!strcmp(d->name, name)) { if (type) *type = d->type; return d->base; }
    } else if (k < n && strlen(d->name) == k && !strncmp(d->name, name, k)) {
      long idx = strtol(name + k, NULL, 10);
      if (idx < d->count) { if (type) *type = d->type; return d->base + (int)idx; }
    }
  }
  return -1;
}

int ptx_find_sym(const ptx_module *m, const ptx_entry *e, const char *name) {
  int ei = e ? (int)(e - m->entries) : -1;
  for (int i = m->nsyms - 1; i >= 0; i--)
    if ((m->syms[i].entry < 0 || m->syms[i].entry == ei) && !strcmp(m->syms[i].name, name)) return i;
  return -1;
}

static int add_sym(ptx_module *m, const ptx_entry *e, const char *name, int space, uint64_t size, uint64_t align, uint64_t *cursor) {
  m->syms = grow(m->syms, &m->cap_syms, m->nsyms + 1, sizeof *m->syms);
  ptx_sym *s = &m->syms[m->nsyms++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->space = (uint8_t)space;
  s->entry = e ? (int)(e - m->entries) : -1;
  s->align = align ? align : 1;
  s->off = (*cursor + s->align - 1) / s->align * s->align;
  s->size = size;
  *cursor = s->off + size;
  return 0;
}

/* Words of a declaration: ".reg .b32 %r<9>, %x" or ".shared .align 4 .b8 name[1024]". */
static int parse_decl(ptx_module *m, ptx_entry *e, char *s, int line, const char *orig, char *err, size_t n) {
  char *save = NULL, *tok = strtok_r(s, " \t\n,", &save);
  int space = !strcmp(tok, ".reg") ? -1 : !strcmp(tok, ".shared") ? SP_SHARED : !strcmp(tok, ".local") ? SP_LOCAL
            : !strcmp(tok, ".param") ? SP_PARAM : -2;
  if (space == -2) return fail(err, n, line, orig, "unknown state space");
  uint64_t align = 0;
  int type = T_NONE;
  while ((tok = strtok_r(NULL, " \t\n,", &save))) {
    if (!strcmp(tok, ".align")) {
      char *a = strtok_r(NULL, " \t\n,", &save);
      if (!a) return fail(err, n, line, orig, ".align without a value");
      align = strtoull(a, NULL, 10);
    } else if (!strcmp(tok, ".ptr") || !strcmp(tok, ".global") || !strcmp(tok, ".shared") ||
               !strcmp(tok, ".local") || !strcmp(tok, ".const")) {
      if (space != SP_PARAM) return fail(err, n, line, orig, "unknown declaration attribute");
    } else if (tok[0] == '.') {
      type = ptx_parse_type(tok + 1);
      if (!type) return fail(err, n, line, orig, "unknown type");
    } else {
      if (!type) return fail(err, n, line, orig, "declaration without a type");
      char name[64];
      long cnt = 0, arr = -1;
      const char *lt = strchr(tok, '<'), *br = strchr(tok, '[');
      size_t ln = lt ? (size_t)(lt - tok) : br ? (size_t)(br - tok) : strlen(tok);
      if (ln >= sizeof name) return fail(err, n, line, orig, "name too long");
      memcpy(name, tok, ln); name[ln] = 0;
      if (lt) cnt = strtol(lt + 1, NULL, 10);
      if (br) arr = strtol(br + 1, NULL, 10);
      if (space == -1) {
        if (br || (lt && cnt <= 0)) return fail(err, n, line, orig, "bad register declaration");
        e->regs = grow(e->regs, &e->cap_regs, e->nregdecl + 1, sizeof *e->regs);
        ptx_reg_decl *d = &e->regs[e->nregdecl++];
        snprintf(d->name, sizeof d->name, "%s", name);
        d->type = (uint8_t)type; d->count = (int)cnt; d->base = e->nregs;
        e->nregs += cnt ? (int)cnt : 1;
        continue;
      }
      if (lt || (br && arr <= 0)) return fail(err, n, line, orig, "bad variable declaration");
      uint64_t size = (uint64_t)ptx_type_size(type) * (br ? (uint64_t)arr : 1);
      uint64_t al = align ? align : (uint64_t)ptx_type_size(type);
      if (space == SP_PARAM) { add_sym(m, e, name, space, size, al, &e->param_size); e->nparams++; }
      else if (space == SP_LOCAL) add_sym(m, e, name, space, size, al, &e->local_size);
      else add_sym(m, e, name, space, size, al, e ? &e->shared_size : &m->shared_module);
      align = 0;
    }
  }
  return 0;
}

/* ".visible .entry name(\n .param ... ,\n .param ...\n)" up to the '{'. */
static int parse_entry(ptx_module *m, char *s, int line, const char *orig, char *err, size_t n) {
  char *p = strstr(s, ".entry");
  if (!p) return fail(err, n, line, orig, "unknown directive (only .entry kernels are supported)");
  for (char *q = s; q < p; q++)
    if (!isspace((unsigned char)*q) && strncmp(q, ".visible", 8) != 0) return fail(err, n, line, orig, "unknown directive");
    else if (!isspace((unsigned char)*q)) q += 7;
  p += 6;
  while (isspace((unsigned char)*p)) p++;
  char *lp = strchr(p, '('), *rp = strrchr(p, ')');
  if (!lp || !rp || rp < lp) return fail(err, n, line, orig, "entry without a parameter list");
  m->entries = realloc(m->entries, (size_t)(m->nentries + 1) * sizeof *m->entries);
  if (!m->entries) abort();
  ptx_entry *e = &m->entries[m->nentries++];
  memset(e, 0, sizeof *e);
  size_t ln = (size_t)(lp - p);
  while (ln && isspace((unsigned char)p[ln - 1])) ln--;
  if (ln == 0 || ln >= sizeof e->name) return fail(err, n, line, orig, "bad entry name");
  memcpy(e->name, p, ln);
  e->first_sym = m->nsyms;
  /* Performance directives after the list (.maxntid 256, 1, 1 / .reqntid / .minnctapersm) are hints. */
  for (char *q = rp + 1; *q; q++)
    if (*q == '.' && strncmp(q, ".maxntid", 8) && strncmp(q, ".reqntid", 8) && strncmp(q, ".minnctapersm", 13) &&
        strncmp(q, ".maxnreg", 8))
      return fail(err, n, line, orig, "unknown entry directive");
  *rp = 0;
  char *save = NULL;
  for (char *prm = strtok_r(lp + 1, ",", &save); prm; prm = strtok_r(NULL, ",", &save)) {
    while (isspace((unsigned char)*prm)) prm++;
    if (!*prm) continue;
    if (strncmp(prm, ".param", 6)) return fail(err, n, line, orig, "entry parameter that is not .param");
    if (parse_decl(m, e, prm, line, orig, err, n)) return -1;
  }
  return 0;
}

int ptx_label_ref(ptx_entry *e, const char *name) {
  for (int j = 0; j < e->nlabels; j++)
    if (!strcmp(e->labels[j].name, name)) return j;
  e->labels = grow(e->labels, &e->cap_labels, e->nlabels + 1, sizeof *e->labels);
  snprintf(e->labels[e->nlabels].name, sizeof e->labels[0].name, "%s", name);
  e->labels[e->nlabels].ins = -1;
  return e->nlabels++;
}

/* Branch operands hold a label index until the entry's '}': then the instruction index. */
static int resolve_labels(ptx_entry *e, char *err, size_t n) {
  for (int i = 0; i < e->nins; i++) {
    ptx_ins *in = &e->ins[i];
    for (int k = 0; k < in->nops; k++) {
      if (in->ops[k].kind != O_LABEL) continue;
      const ptx_label *lb = &e->labels[in->ops[k].reg];
      if (lb->ins < 0) return fail(err, n, in->line, in->text, "undefined label");
      in->ops[k].reg = lb->ins;
    }
  }
  return 0;
}

/* .version/.target/.address_size end at the end of their line (no ';'). */
static bool line_directive(char *buf, size_t len) {
  buf[len] = 0; /* buf has room: it holds at most the whole text */
  const char *s = buf;
  while (isspace((unsigned char)*s)) s++;
  return !strncmp(s, ".version", 8) || !strncmp(s, ".target", 7) || !strncmp(s, ".address_size", 13);
}

/* Read one statement into buf: up to ';', '{' or '}' (returned in *term), or a label "name:". */
int ptx_parse(const char *text, ptx_module **out, char *err, size_t errlen) {
  ptx_module *m = calloc(1, sizeof *m);
  if (!m) abort();
  size_t cap = strlen(text) + 1;
  char *buf = malloc(cap), *orig = malloc(cap);
  if (!buf || !orig) abort();
  int line = 1, depth = 0, rc = 0;
  ptx_entry *e = NULL;
  const char *p = text;
  while (*p && rc == 0) {
    size_t len = 0;
    int sline = 0, inner = 0;
    char term = 0;
    while (*p) {
      if (p[0] == '/' && p[1] == '/') { while (*p && *p != '\n') p++; continue; }
      if (p[0] == '/' && p[1] == '*') {
        p += 2;
        while (*p && !(p[0] == '*' && p[1] == '/')) { if (*p == '\n') line++; p++; }
        if (*p) p += 2;
        continue;
      }
      char ch = *p++;
      if (ch == '\n') line++;
      /* '{' after the start of an instruction is a vector operand ({%r1, %r2}), not a block. */
      if (ch == '{' && depth > 0 && sline) inner++;
      else if (ch == '}' && inner > 0) inner--;
      else if (ch == ';' || ch == '{' || ch == '}') { term = ch; break; }
      if (ch == '\n' && depth == 0 && len > 0 && line_directive(buf, len)) { term = ';'; break; }
      if (ch == ':' && len > 0 && depth > 0) { term = ':'; break; }
      if (!sline && !isspace((unsigned char)ch)) sline = line;
      buf[len++] = ch;
    }
    while (len && isspace((unsigned char)buf[len - 1])) len--;
    buf[len] = 0;
    if (!sline) sline = line;
    memcpy(orig, buf, len + 1);
    if (term == 0 && len == 0) break;
    if (term == 0) { rc = fail(err, errlen, sline, orig, "statement without ';'"); break; }
    if (term == ':') {
      char *l = buf;
      while (isspace((unsigned char)*l)) l++;
      int j = ptx_label_ref(e, l);
      if (e->labels[j].ins >= 0) { rc = fail(err, errlen, sline, orig, "label defined twice"); break; }
      e->labels[j].ins = e->nins;
      continue;
    }
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    if (term == '{') {
      if (depth == 0) {
        if (parse_entry(m, s, sline, orig, err, errlen)) { rc = -1; break; }
        e = &m->entries[m->nentries - 1];
      } else if (*s) { rc = fail(err, errlen, sline, orig, "'{' after a statement"); break; }
      depth++;
      continue;
    }
    if (term == '}') {
      if (*s) { rc = fail(err, errlen, sline, orig, "statement without ';'"); break; }
      if (depth == 0) { rc = fail(err, errlen, sline, "}", "unbalanced '}'"); break; }
      if (--depth == 0) { rc = resolve_labels(e, err, errlen); e = NULL; }
      continue;
    }
    if (!*s) continue;
    if (depth == 0) {
      if (!strncmp(s, ".version", 8) || !strncmp(s, ".target", 7) || !strncmp(s, ".address_size", 13)) {
        if (!strncmp(s, ".address_size", 13) && atoi(s + 13) != 64) rc = fail(err, errlen, sline, orig, "only .address_size 64");
      } else if (!strncmp(s, ".shared", 7)) rc = parse_decl(m, NULL, s, sline, orig, err, errlen);
      else rc = fail(err, errlen, sline, orig, "unknown directive or state space");
      continue;
    }
    if (!strncmp(s, ".reg", 4) || !strncmp(s, ".shared", 7) || !strncmp(s, ".local", 6))
      rc = parse_decl(m, e, s, sline, orig, err, errlen);
    else if (!strncmp(s, ".pragma", 7)) continue; /* "nounroll": a hint */
    else if (s[0] == '.') rc = fail(err, errlen, sline, orig, "unknown directive or state space");
    else rc = ptx_ins_parse(m, e, s, sline, err, errlen);
  }
  if (rc == 0 && depth) rc = fail(err, errlen, line, "", "missing '}' at the end");
  if (rc == 0 && m->nentries == 0) rc = fail(err, errlen, line, "", "no .entry");
  free(buf); free(orig);
  if (rc) { ptx_free(m); return -1; }
  *out = m;
  return 0;
}

void ptx_free(ptx_module *m) {
  if (!m) return;
  for (int i = 0; i < m->nentries; i++) {
    for (int k = 0; k < m->entries[i].nins; k++) free(m->entries[i].ins[k].text);
    free(m->entries[i].ins); free(m->entries[i].regs); free(m->entries[i].labels);
  }
  free(m->entries); free(m->syms); free(m);
}

static const ptx_entry *find_entry(const ptx_module *m, const char *name) {
  for (int i = 0; i < m->nentries; i++)
    if (!name || !strcmp(m->entries[i].name, name)) return &m->entries[i];
  return NULL;
}

int ptx_param_layout(const ptx_module *m, const char *entry, unsigned idx, size_t *off, size_t *size) {
  const ptx_entry *e = find_entry(m, entry);
  if (!e || idx >= (unsigned)e->nparams) return -1;
  unsigned k = 0;
  for (int i = e->first_sym; i < m->nsyms; i++)
    if (m->syms[i].space == SP_PARAM && k++ == idx) { *off = m->syms[i].off; *size = m->syms[i].size; return 0; }
  return -1;
}
