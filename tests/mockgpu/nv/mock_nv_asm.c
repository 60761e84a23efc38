/* tests/mockgpu/nv/mock_nv_asm.c: the emulated GPU's assembler: PTX -> an ELF cubin shaped like ptxas output whose
 * .text.<entry> holds the PTX text itself (the emulated shader core runs PTX, as tinygrad's mock runs PTX through
 * gpuocelot).
 *
 * Per entry: .text.<entry> ("// entry <name>\n" + the module's PTX, NUL-terminated), .nv.info.<entry> with
 * EIATTR_KPARAM_INFO per parameter (ptxas writes them last parameter first), EIATTR_PARAM_CBANK {symbol, base |
 * size << 16} (base 0x210, from sm_100 on 0x380), EIATTR_CBANK_PARAM_SIZE, EIATTR_MAX_THREADS / EIATTR_REQNTID from
 * .maxntid / .reqntid, .nv.constant0.<entry> (base driver bytes + the parameters), .nv.shared.<entry> (NOBITS, the
 * static .shared bytes)
 * and a global function symbol; the file-wide .nv.info holds EIATTR_REGCOUNT (32) per entry. Parameter offsets and
 * sizes come from the PTX interpreter's ptx_param_layout, so the launch reads them where the driver wrote them.
 * Attribute ids and record formats: cuobjdump -elf spellings, as formats/cubin.c reads them. */
#include <stdio.h>
#include <stdlib.h>

#include "baregpu/error.h"
#include "mock_nv.h"
#include "ptx.h"

enum { SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_NOBITS = 8, SHT_CUDA_INFO = 0x70000000 };
enum { SHF_WRITE = 1, SHF_ALLOC = 2, SHF_EXECINSTR = 4 };
enum { REGS = 32, MAX_ENTRIES = 32 };

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
  int oom;
} buf;

static void put(buf *b, const void *d, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t c = b->cap ? b->cap : 256;
    while (c < b->n + n) c *= 2;
    uint8_t *q = realloc(b->p, c);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = c;
  }
  if (d) memcpy(b->p + b->n, d, n);
  else memset(b->p + b->n, 0, n);
  b->n += n;
}
static void le(buf *b, uint64_t v, unsigned n) {
  uint8_t t[8];
  for (unsigned i = 0; i < n; i++) t[i] = (uint8_t)(v >> (8 * i));
  put(b, t, n);
}
static void sval(buf *b, unsigned id, const uint32_t *w, unsigned nw) {
  le(b, 4, 1); /* EIFMT_SVAL */
  le(b, id, 1);
  le(b, 4u * nw, 2);
  for (unsigned i = 0; i < nw; i++) le(b, w[i], 4);
}

typedef struct sec {
  char name[160];
  uint32_t type, link, info;
  uint64_t flags, align, entsize, nobits_size;
  buf data;
} sec;

typedef struct entry {
  char name[128];
  uint32_t maxntid[3], reqntid[3];
  int text, info, c0, shared, sym;
} entry;

/* The entries of the text: ".entry <name>(" and the .maxntid / .reqntid hints between ")" and "{". */
static int find_entries(const char *t, entry *e, int max) {
  int n = 0;
  for (const char *p = strstr(t, ".entry"); p && n < max; p = strstr(p + 6, ".entry")) {
    const char *s = p + 6;
    if (*s != ' ' && *s != '\t') continue;
    while (*s == ' ' || *s == '\t') s++;
    size_t l = strcspn(s, " \t\n(");
    if (l == 0 || l >= sizeof e[n].name) continue;
    memset(&e[n], 0, sizeof e[n]);
    memcpy(e[n].name, s, l);
    const char *close = strchr(s, ')'), *open = close ? strchr(close, '{') : NULL;
    for (int k = 0; k < 2 && open; k++) {
      const char *kw = k ? ".reqntid" : ".maxntid";
      const char *h = strstr(close, kw);
      if (!h || h > open) continue;
      uint32_t *d = k ? e[n].reqntid : e[n].maxntid;
      const char *q = h + 8;
      for (int i = 0; i < 3; i++) {
        while (*q == ' ' || *q == '\t' || *q == ',') q++;
        if (*q < '0' || *q > '9') break;
        d[i] = (uint32_t)strtoul(q, (char **)&q, 10);
      }
      for (int i = 0; i < 3; i++)
        if (!d[i]) d[i] = 1;
    }
    n++;
  }
  return n;
}

/* Static shared bytes of the module (.shared declarations), as the launch checks them. */
static uint64_t shared_bytes(const char *t) {
  uint64_t total = 0;
  for (const char *p = strstr(t, ".shared"); p; p = strstr(p + 7, ".shared")) {
    const char *eol = strpbrk(p, ";\n");
    if (!eol || *eol != ';') continue;
    const char *lb = memchr(p, '[', (size_t)(eol - p));
    if (!lb || (p > t && p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n')) continue;
    const char *ty = strstr(p, ".b");
    unsigned esz = ty && ty < lb ? (unsigned)strtoul(ty + 2, NULL, 10) / 8 : 1;
    const char *al = strstr(p, ".align");
    unsigned align = al && al < lb ? (unsigned)strtoul(al + 6, NULL, 10) : 1;
    if (!align) align = 1;
    total = (total + align - 1) / align * align + strtoull(lb + 1, NULL, 10) * (esz ? esz : 1);
  }
  return total;
}

static int fail(char *err, size_t errlen, int code, const char *msg, const char *arg) {
  snprintf(err, errlen, "%s%s", msg, arg ? arg : "");
  return -code;
}

int mock_nv_plugin_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n, char *err, size_t errlen) {
  *cubin = NULL;
  *n = 0;
  if (!ptx) return fail(err, errlen, BG_EINVAL, "no PTX text", NULL);
  if (sm < 30 || sm > 255) return fail(err, errlen, BG_EINVAL, "SM version out of range (30..255)", NULL);
  /* .target sm_XY must not be newer than the GPU (ptxas: "SM version specified by .target is higher than default"). */
  const char *tg = strstr(ptx, ".target");
  if (tg) {
    const char *s = strstr(tg, "sm_");
    if (s && (unsigned)strtoul(s + 3, NULL, 10) > sm) {
      char m[64];
      snprintf(m, sizeof m, "%.*s, assembling for sm_%u", (int)strcspn(tg, "\n;"), tg, sm);
      return fail(err, errlen, BG_EINVAL, "PTX ", m);
    }
  }
  /* Parameter base in constant bank 0: 0x210 before Blackwell, 0x380 from sm_100 on (224 driver words: tinygrad
   * tinygrad/runtime/ops_nv.py NVProgram "Blackwell needs index 223 (224 entries)"). */
  const uint32_t pbase = sm >= 100 ? 0x380 : 0x210;
  ptx_module *m = NULL;
  if (ptx_parse(ptx, &m, err, errlen)) return -BG_EINVAL;
  static entry ents[MAX_ENTRIES];
  int ne = find_entries(ptx, ents, MAX_ENTRIES);
  size_t off, size;
  if (ne == 0) {
    ptx_free(m);
    return fail(err, errlen, BG_EINVAL, "PTX has no .entry", NULL);
  }
  /* Sections: 0 null, 1 .shstrtab, 2 .strtab, 3 .symtab, 4 .nv.info, then per entry text/info/constant0/shared. */
  int ns = 5 + 4 * ne;
  sec *S = calloc((size_t)ns, sizeof *S);
  if (!S) {
    ptx_free(m);
    return fail(err, errlen, BG_ENOMEM, "out of memory", NULL);
  }
  snprintf(S[1].name, sizeof S[1].name, ".shstrtab");
  S[1].type = SHT_STRTAB;
  snprintf(S[2].name, sizeof S[2].name, ".strtab");
  S[2].type = SHT_STRTAB;
  snprintf(S[3].name, sizeof S[3].name, ".symtab");
  S[3] = (sec){.type = SHT_SYMTAB, .link = 2, .info = 1, .align = 8, .entsize = 24};
  snprintf(S[3].name, sizeof S[3].name, ".symtab");
  snprintf(S[4].name, sizeof S[4].name, ".nv.info");
  S[4].type = SHT_CUDA_INFO;
  S[4].link = 3;
  S[4].align = 4;
  put(&S[2].data, "", 1);
  put(&S[3].data, NULL, 24); /* null symbol */
  uint64_t shm = shared_bytes(ptx);
  int rc = 0;
  for (int k = 0; k < ne && !rc; k++) {
    entry *e = &ents[k];
    e->text = 5 + 4 * k;
    e->info = e->text + 1;
    e->c0 = e->text + 2;
    e->shared = e->text + 3;
    e->sym = k + 1;
    sec *t = &S[e->text], *in = &S[e->info], *c0 = &S[e->c0], *sh = &S[e->shared];
    snprintf(t->name, sizeof t->name, ".text.%s", e->name);
    t->type = SHT_PROGBITS;
    t->flags = SHF_ALLOC | SHF_EXECINSTR;
    t->align = 128;
    t->link = 3;
    t->info = (uint32_t)e->sym;
    char hdr[160];
    snprintf(hdr, sizeof hdr, "// entry %s\n", e->name);
    put(&t->data, hdr, strlen(hdr));
    put(&t->data, ptx, strlen(ptx) + 1);
    /* Parameters: offsets and sizes as the interpreter lays them out. */
    size_t psize = 0;
    unsigned np = 0;
    while (ptx_param_layout(m, e->name, np, &off, &size) == 0) {
      if (off + size > psize) psize = off + size;
      np++;
    }
    if (psize > 0xff00) rc = fail(err, errlen, BG_EINVAL, "parameters exceed 0xff00 bytes in entry ", e->name);
    snprintf(in->name, sizeof in->name, ".nv.info.%s", e->name);
    in->type = SHT_CUDA_INFO;
    in->link = 3;
    in->info = (uint32_t)e->text;
    in->align = 4;
    for (unsigned i = np; i-- > 0;) {
      ptx_param_layout(m, e->name, i, &off, &size);
      /* {index 0, ordinal | offset << 16, flags: size << 18 | cbank 0x1f << 12} (EIATTR_KPARAM_INFO) */
      sval(&in->data, 0x17, (uint32_t[]){0, i | (uint32_t)off << 16, (uint32_t)size << 18 | 0x1f000u}, 3);
    }
    sval(&in->data, 0x0a, (uint32_t[]){(uint32_t)e->sym, pbase | (uint32_t)psize << 16}, 2); /* EIATTR_PARAM_CBANK */
    le(&in->data, 3, 1);                                                                          /* EIFMT_HVAL */
    le(&in->data, 0x19, 1);                                                                       /* EIATTR_CBANK_PARAM_SIZE */
    le(&in->data, psize, 2);
    if (e->maxntid[0]) sval(&in->data, 0x05, e->maxntid, 3); /* EIATTR_MAX_THREADS */
    if (e->reqntid[0]) sval(&in->data, 0x10, e->reqntid, 3); /* EIATTR_REQNTID */
    snprintf(c0->name, sizeof c0->name, ".nv.constant0.%s", e->name);
    c0->type = SHT_PROGBITS;
    c0->flags = SHF_ALLOC;
    c0->align = 4;
    c0->info = (uint32_t)e->text;
    put(&c0->data, NULL, pbase + psize);
    snprintf(sh->name, sizeof sh->name, ".nv.shared.%s", e->name);
    sh->type = SHT_NOBITS;
    sh->flags = SHF_ALLOC | SHF_WRITE;
    sh->align = 16;
    sh->info = (uint32_t)e->text;
    sh->nobits_size = shm;
    sval(&S[4].data, 0x2f, (uint32_t[]){(uint32_t)e->sym, REGS}, 2); /* EIATTR_REGCOUNT */
    /* symbol: name, STB_GLOBAL | STT_FUNC, other 0, shndx = .text.<entry>, value 0, size */
    le(&S[3].data, S[2].data.n, 4);
    le(&S[3].data, 0x12, 1);
    le(&S[3].data, 0x10, 1); /* STO_CUDA_ENTRY-like visibility bits ptxas sets (ignored by loaders) */
    le(&S[3].data, (uint64_t)e->text, 2);
    le(&S[3].data, 0, 8);
    le(&S[3].data, t->data.n, 8);
    put(&S[2].data, e->name, strlen(e->name) + 1);
  }
  ptx_free(m);
  uint32_t *name_off = calloc((size_t)ns, sizeof *name_off);
  if (!name_off) rc = rc ? rc : fail(err, errlen, BG_ENOMEM, "out of memory", NULL);
  for (int i = 0; i < ns && !rc; i++) {
    name_off[i] = (uint32_t)S[1].data.n;
    put(&S[1].data, S[i].name, strlen(S[i].name) + 1);
  }
  buf f = {0};
  if (!rc) {
    uint8_t eh[64] = {0};
    memcpy(eh, "\177ELF\2\1\1\101\10", 9); /* ELF64, LSB, OSABI 0x41 (CUDA), ABI version 8: SM in e_flags 15:8 */
    eh[16] = 2;                              /* ET_EXEC */
    eh[18] = 190;                            /* EM_CUDA */
    eh[20] = 1;                              /* EV_CURRENT */
    uint32_t flags = 6u << 24 | sm << 8 | 4u;
    memcpy(eh + 48, &flags, 4);
    eh[52] = 64;
    eh[58] = 64;
    uint16_t nsec = (uint16_t)ns, shstr = 1;
    memcpy(eh + 60, &nsec, 2);
    memcpy(eh + 62, &shstr, 2);
    put(&f, eh, 64);
    uint64_t *at = calloc((size_t)ns, sizeof *at);
    if (!at) rc = fail(err, errlen, BG_ENOMEM, "out of memory", NULL);
    for (int i = 1; i < ns && !rc; i++) {
      uint64_t al = S[i].align ? S[i].align : 1;
      while (f.n % al) put(&f, NULL, 1);
      at[i] = f.n;
      if (S[i].type != SHT_NOBITS) put(&f, S[i].data.p, S[i].data.n);
    }
    while (!rc && f.n % 8) put(&f, NULL, 1);
    uint64_t shoff = f.n;
    for (int i = 0; i < ns && !rc; i++) {
      if (i == 0) {
        put(&f, NULL, 64);
        continue;
      }
      le(&f, name_off[i], 4);
      le(&f, S[i].type, 4);
      le(&f, S[i].flags, 8);
      le(&f, 0, 8); /* sh_addr */
      le(&f, at[i], 8);
      le(&f, S[i].type == SHT_NOBITS ? S[i].nobits_size : S[i].data.n, 8);
      le(&f, S[i].link, 4);
      le(&f, S[i].info, 4);
      le(&f, S[i].align, 8);
      le(&f, S[i].entsize, 8);
    }
    free(at);
    if (!rc && !f.oom) memcpy(f.p + 40, &shoff, 8);
  }
  bool oom = f.oom;
  for (int i = 0; i < ns; i++) {
    oom |= S[i].data.oom != 0;
    free(S[i].data.p);
  }
  free(S);
  free(name_off);
  if (!rc && oom) rc = fail(err, errlen, BG_ENOMEM, "out of memory", NULL);
  if (rc) {
    free(f.p);
    return rc;
  }
  *cubin = f.p;
  *n = f.n;
  return 0;
}
