/* tests/mockgpu/nv/nvx_qmd.c: the engine's compute launch (nvx_engine.h): a QMD read with the model's own field
 * tables, checked, and its kernel (PTX text in the program image, as the emulated GPU's assembler mock_nv_asm.c lays it
 * out) run by the PTX interpreter (tests/mockgpu/ptx) over the host's GPU-VA access.
 *
 * Field positions (bit hi:lo of the QMD): V03 from NVIDIA/open-gpu-doc classes/compute/clc6c0qmd.h / clcbc0qmd.h
 * QMDV03_00, V04 from clcbc0qmd.h QMDV04_00 (HOPPER_COMPUTE_A), V05 from clcec0qmd.h QMDV05_00 (BLACKWELL_COMPUTE_B;
 * read from tinygrad extra/nv_gpu_driver/clcec0qmd.h). The configured QMD major decides the version; a QMD whose
 * QMD_MAJOR_VERSION differs is rejected, and a major the engine has no table for refuses every launch. Checks: the
 * host allows the launch (a GR context exists), grid >= 1 and <= (2^31-1, 65535, 65535), block 1..1024 threads with
 * dims <= (1024, 1024, 64), constant buffer 0 valid with an address and SIZE_SHIFTED4 * 16 covering the parameter
 * base (0x210; V05, sm_100 on: 0x380) plus the kernel's parameters, the program address mapped and holding PTX,
 * SHARED_MEMORY_SIZE >= the kernel's static .shared bytes, release semaphore addresses aligned to their structure,
 * dependent QMD action SCHEDULE only. V05 also: QMD_MINOR_VERSION 0 (05_01 is a sub-task layout), QMD_TYPE GRID_CTA,
 * REGISTER_COUNT 1..255 within the 64K register file, no release reduction or trap, no dependent QMD1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvx_engine.h"
#include "ptx.h"

typedef struct {
  uint16_t hi, lo;
} bits;

typedef struct {
  unsigned size, version;
  bits major, grid[3], block[3], cb_valid, cb_addr_lo, cb_addr_hi, cb_size, prog_lo, prog_hi, shared;
  unsigned cb_addr_shift, prog_shift, shared_shift, param_base, nrel;
  bits rel_en[3], rel_struct[3], rel_addr_lo[3], rel_addr_hi[3], rel_pay_lo[3], rel_pay_hi[3];
  bits dep_en, dep_action, dep_ptr;
} qmd_layout;

static const qmd_layout V03 = {
    .size = 256, .version = 3, .major = {583, 580},
    .grid = {{415, 384}, {431, 416}, {463, 448}}, .block = {{607, 592}, {623, 608}, {639, 624}},
    .cb_valid = {640, 640}, .cb_addr_lo = {1055, 1024}, .cb_addr_hi = {1072, 1056}, .cb_size = {1087, 1075},
    .cb_addr_shift = 0, .prog_lo = {1567, 1536}, .prog_hi = {1584, 1568}, .shared = {561, 544},
    .param_base = 0x210, .nrel = 2,
    .rel_en = {{823, 823}, {951, 951}}, .rel_struct = {{831, 830}, {959, 958}},
    .rel_addr_lo = {{799, 768}, {927, 896}}, .rel_addr_hi = {{807, 800}, {935, 928}},
    .rel_pay_lo = {{863, 832}, {991, 960}}, .rel_pay_hi = {{895, 864}, {1023, 992}},
    .dep_en = {512, 512}, .dep_action = {515, 513}, .dep_ptr = {511, 480},
};
static const qmd_layout V04 = {
    .size = 384, .version = 4, .major = {583, 580},
    .grid = {{1055, 1024}, {1071, 1056}, {1103, 1088}}, .block = {{1167, 1152}, {1183, 1168}, {1199, 1184}},
    .cb_valid = {416, 416}, .cb_addr_lo = {1567, 1536}, .cb_addr_hi = {1586, 1568}, .cb_size = {1599, 1587},
    .cb_addr_shift = 6, .prog_lo = {1247, 1216}, .prog_hi = {1272, 1248}, .shared = {601, 584},
    .param_base = 0x210, .nrel = 2,
    .rel_en = {{320, 320}, {336, 336}}, .rel_struct = {{322, 321}, {338, 337}},
    .rel_addr_lo = {{671, 640}, {799, 768}}, .rel_addr_hi = {{696, 672}, {824, 800}},
    .rel_pay_lo = {{735, 704}, {863, 832}}, .rel_pay_hi = {{767, 736}, {895, 864}},
    .dep_en = {368, 368}, .dep_action = {371, 369}, .dep_ptr = {479, 448},
};
/* clcec0qmd.h NVCEC0_QMDV05_00_*: 3072 bits; PROGRAM_ADDRESS_*_SHIFTED4, SHARED_MEMORY_SIZE_SHIFTED7,
 * CONSTANT_BUFFER_ADDR_*_SHIFTED6(0), RELEASE_ENABLE(i) / RELEASE_STRUCTURE_SIZE(i) at 288 + 16 i with
 * RELEASE_SEMAPHORE0..2, DEPENDENT_QMD0_*. */
static const qmd_layout V05 = {
    .size = 384, .version = 5, .major = {471, 468},
    .grid = {{1279, 1248}, {1295, 1280}, {1327, 1312}}, .block = {{1103, 1088}, {1119, 1104}, {1127, 1120}},
    .cb_valid = {1856, 1856}, .cb_addr_lo = {1375, 1344}, .cb_addr_hi = {1394, 1376}, .cb_size = {1407, 1395},
    .cb_addr_shift = 6, .prog_lo = {1055, 1024}, .prog_hi = {1076, 1056}, .prog_shift = 4,
    .shared = {1162, 1152}, .shared_shift = 7, .param_base = 0x380, .nrel = 3,
    .rel_en = {{288, 288}, {304, 304}, {320, 320}}, .rel_struct = {{290, 289}, {306, 305}, {322, 321}},
    .rel_addr_lo = {{511, 480}, {799, 768}, {927, 896}}, .rel_addr_hi = {{536, 512}, {824, 800}, {952, 928}},
    .rel_pay_lo = {{575, 544}, {863, 832}, {991, 960}}, .rel_pay_hi = {{607, 576}, {895, 864}, {1023, 992}},
    .dep_en = {336, 336}, .dep_action = {339, 337}, .dep_ptr = {415, 384},
};
/* V05 fields checked beyond the shared table (clcec0qmd.h NVCEC0_QMDV05_00_*). */
static const bits V05_MINOR = {467, 464}, V05_TYPE = {153, 151}, V05_REGS = {1136, 1128}, V05_DEP1_EN = {344, 344};
static const bits V05_REL_RED[3] = {{292, 292}, {308, 308}, {324, 324}};
static const bits V05_REL_TRAP[3] = {{299, 298}, {315, 314}, {331, 330}};
enum { V05_TYPE_GRID_CTA = 2 };

static uint32_t get(const uint8_t *q, bits b) {
  uint32_t v = 0;
  for (int i = b.hi; i >= b.lo; i--) v = v << 1 | (q[i / 8] >> (i % 8) & 1);
  return v;
}

/* ---- parsed-module cache (per engine), by program address and content hash ---- */
void nvx_engine_fini(nvx_engine *e) {
  for (int i = 0; i < NVX_CACHE_N; i++) {
    ptx_free(e->cache[i].m);
    free(e->cache[i].text);
    memset(&e->cache[i], 0, sizeof e->cache[i]);
  }
  e->cache_next = 0;
}

/* Static shared bytes of the module: the .shared declarations ("... .shared .align A .b8 name[N];"). */
static uint32_t static_shared(const char *t) {
  uint64_t total = 0;
  for (const char *p = strstr(t, ".shared"); p; p = strstr(p + 7, ".shared")) {
    const char *eol = strpbrk(p, ";\n");
    if (!eol || *eol != ';') continue;
    const char *lb = memchr(p, '[', (size_t)(eol - p));
    if (!lb || (p > t && p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n')) continue;
    const char *ty = strstr(p, ".b");
    unsigned esz = 1;
    if (ty && ty < lb) esz = (unsigned)strtoul(ty + 2, NULL, 10) / 8;
    const char *al = strstr(p, ".align");
    unsigned align = al && al < lb ? (unsigned)strtoul(al + 6, NULL, 10) : 1;
    if (!align) align = 1;
    total = (total + align - 1) / align * align + (uint64_t)strtoull(lb + 1, NULL, 10) * (esz ? esz : 1);
  }
  return (uint32_t)total;
}

static uint64_t fnv(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

typedef struct {
  nvx_engine *e;
  bool faulted, write;
  uint64_t addr;
} mem_ctx;
/* The kernel runs without the host's lock (the driver keeps calling in): each access takes it. */
static int mread(void *ctx, uint64_t addr, void *dst, size_t n) {
  mem_ctx *m = ctx;
  uint64_t fva = addr;
  m->e->host.lock(m->e->host.ctx);
  int r = m->e->host.read(m->e->host.ctx, addr, dst, n, &fva);
  m->e->host.unlock(m->e->host.ctx);
  if (r && !m->faulted) m->faulted = true, m->addr = fva, m->write = false;
  return r ? -1 : 0;
}
static int mwrite(void *ctx, uint64_t addr, const void *src, size_t n) {
  mem_ctx *m = ctx;
  uint64_t fva = addr;
  m->e->host.lock(m->e->host.ctx);
  int r = m->e->host.write(m->e->host.ctx, addr, src, n, &fva);
  m->e->host.unlock(m->e->host.ctx);
  if (r && !m->faulted) m->faulted = true, m->addr = fva, m->write = true;
  return r ? -1 : 0;
}

static int qfail_code(nvx_engine *e, nvx_chan *c, uint64_t qva, const char *what, uint32_t rc, bool is_fault,
                      uint64_t va, bool write) {
  char m[700];
  snprintf(m, sizeof m, "%s channel 0x%x GPFIFO entry %u: QMD at 0x%llx: %.560s", e->name, c->handle, c->entry_index,
           (unsigned long long)qva, what);
  c->stopped = true;
  e->host.stopped(e->host.ctx, c, m, rc, is_fault, va, write);
  return -1;
}
static int qfail(nvx_engine *e, nvx_chan *c, uint64_t qva, const char *what) {
  return qfail_code(e, c, qva, what, NVX_RC_GR_EXCEPTION, false, 0, false);
}
static int qfault(nvx_engine *e, nvx_chan *c, uint64_t qva, uint64_t va, bool write, const char *who) {
  char m[400];
  snprintf(m, sizeof m, "MMU fault: %.300s %s of unmapped GPU VA 0x%llx", who, write ? "write" : "read", (unsigned long long)va);
  return qfail_code(e, c, qva, m, NVX_RC_MMU_FAULT, true, va, write);
}
static int rd(nvx_engine *e, uint64_t va, void *dst, size_t n, uint64_t *fva) {
  return e->host.read(e->host.ctx, va, dst, n, fva);
}

/* The module at program address prog (cached), its entry (NULL: first) and static shared bytes. */
static int program(nvx_engine *e, nvx_chan *c, uint64_t qva, uint64_t prog, const ptx_module **mod, const char **entry,
                   uint32_t *shared) {
  /* The text runs to its NUL: read it page by page (a fault on the first byte is an MMU fault, later the text has no
   * NUL before the end of its mapping). */
  size_t n = 0, cap = 0;
  char *text = NULL;
  for (;;) {
    uint64_t page_end = ((prog + n) | 4095) + 1, fva = prog + n;
    size_t avail = (size_t)(page_end - (prog + n));
    if (n + avail + 1 > cap) {
      cap = (n + avail + 1) * 2;
      char *t = realloc(text, cap);
      if (!t) {
        free(text);
        return qfail(e, c, qva, "out of host memory reading the program text");
      }
      text = t;
    }
    if (rd(e, prog + n, text + n, avail, &fva)) {
      free(text);
      if (n == 0) return qfault(e, c, qva, fva, false, "program fetch");
      return qfail(e, c, qva, "program text has no NUL before the end of its mapping (not PTX from the assembler)");
    }
    char *z = memchr(text + n, 0, avail);
    if (z) {
      n = (size_t)(z - text);
      break;
    }
    n += avail;
    if (n > (64u << 20)) {
      free(text);
      return qfail(e, c, qva, "program text longer than 64 MiB");
    }
  }
  if (n == 0 || (!strstr(text, ".entry") && !strstr(text, ".version"))) {
    free(text);
    return qfail(e, c, qva, "program address does not point at PTX text (the assembler's .text section)");
  }
  uint64_t h = fnv(text, n);
  nvx_module *cache = e->cache;
  for (int i = 0; i < NVX_CACHE_N; i++)
    if (cache[i].m && cache[i].addr == prog && cache[i].hash == h) {
      free(text);
      *mod = cache[i].m;
      *entry = cache[i].entry[0] ? cache[i].entry : NULL;
      *shared = cache[i].shared;
      return 0;
    }
  ptx_module *m = NULL;
  char err[512];
  if (ptx_parse(text, &m, err, sizeof err)) {
    char w[600];
    snprintf(w, sizeof w, "PTX does not parse: %s", err);
    free(text);
    return qfail(e, c, qva, w);
  }
  unsigned k = e->cache_next++ % NVX_CACHE_N;
  ptx_free(cache[k].m);
  free(cache[k].text);
  cache[k].text = text;
  cache[k].m = m;
  cache[k].addr = prog;
  cache[k].hash = h;
  cache[k].shared = static_shared(text);
  cache[k].entry[0] = 0;
  /* The assembler marks which entry a .text.<entry> section is for: a first line "// entry <name>". */
  if (strncmp(text, "// entry ", 9) == 0) {
    size_t l = strcspn(text + 9, "\n");
    if (l < sizeof cache[k].entry) {
      memcpy(cache[k].entry, text + 9, l);
      cache[k].entry[l] = 0;
    }
  }
  *mod = m;
  *entry = cache[k].entry[0] ? cache[k].entry : NULL;
  *shared = cache[k].shared;
  return 0;
}

static int release(nvx_engine *e, nvx_chan *c, uint64_t qva, const qmd_layout *L, const uint8_t *q, int i) {
  if (!get(q, L->rel_en[i])) return 0;
  uint64_t va = get(q, L->rel_addr_lo[i]) | (uint64_t)get(q, L->rel_addr_hi[i]) << 32;
  uint64_t pay = get(q, L->rel_pay_lo[i]) | (uint64_t)get(q, L->rel_pay_hi[i]) << 32;
  /* STRUCTURE_SIZE 0 four words (payload + timestamp), 1 one word, 2 two words. The payload of two and four words is
   * written as 64 bits whatever PAYLOAD64B says (lenient: tinygrad leaves it 0 and signals are 64-bit). */
  unsigned st = get(q, L->rel_struct[i]);
  static const char *const who[3] = {"QMD release0", "QMD release1", "QMD release2"};
  char w[160];
  if (st == 3) return qfail(e, c, qva, "release STRUCTURE_SIZE 3 is reserved");
  unsigned align = st == 0 ? 16 : st == 1 ? 4 : 8;
  if (va % align) {
    snprintf(w, sizeof w, "%s address 0x%llx is not %u-byte aligned (STRUCTURE_SIZE %u)", who[i],
             (unsigned long long)va, align, st);
    return qfail(e, c, qva, w);
  }
  if (L->version == 5 && (get(q, V05_REL_RED[i]) || get(q, V05_REL_TRAP[i]))) {
    snprintf(w, sizeof w, "%s with REDUCTION_ENABLE or TRAP_TYPE set (not modelled)", who[i]);
    return qfail(e, c, qva, w);
  }
  uint64_t fva = va, now = nvx_now_ns();
  uint32_t p32 = (uint32_t)pay;
  if ((st == 0 && e->host.write(e->host.ctx, va + 8, &now, 8, &fva)) ||
      (st == 1 ? e->host.write(e->host.ctx, va, &p32, 4, &fva) : e->host.write(e->host.ctx, va, &pay, 8, &fva)))
    return qfault(e, c, qva, fva, true, who[i]);
  return 0;
}

/* V05's fields outside the shared table: NULL, or why the launch is refused. */
static const char *v05_check(const uint8_t *q, uint64_t threads, char *w, size_t n) {
  unsigned minor = get(q, V05_MINOR), type = get(q, V05_TYPE), regs = get(q, V05_REGS);
  if (minor != 0) snprintf(w, n, "QMD_MINOR_VERSION %u: only QMDV05_00 is modelled", minor);
  else if (type != V05_TYPE_GRID_CTA) snprintf(w, n, "QMD_TYPE %u: only GRID_CTA (2) is modelled", type);
  else if (get(q, V05_DEP1_EN)) snprintf(w, n, "DEPENDENT_QMD1_ENABLE set (not modelled)");
  /* 65536 registers per SM, allocated per warp in units of 256 (tinygrad ops_nv.py NVProgram max_threads) */
  else if (regs < 1 || regs > 255 || (threads + 31) / 32 * ((regs * 32 + 255) / 256 * 256) > 65536)
    snprintf(w, n, "REGISTER_COUNT %u for %llu threads: not 1..255 or over the 64K register file", regs,
             (unsigned long long)threads);
  else return NULL;
  return w;
}

int nvx_qmd_launch(nvx_engine *e, nvx_chan *c, uint64_t qva) {
  char why[256];
  if (e->host.may_launch && !e->host.may_launch(e->host.ctx, c, why, sizeof why)) return qfail(e, c, qva, why);
  unsigned v = e->cfg.qmd_major;
  const qmd_layout *L = v == 3 ? &V03 : v == 4 ? &V04 : v == 5 ? &V05 : NULL;
  if (!L) {
    snprintf(why, sizeof why, "compute class 0x%x takes QMD version %u, which the emulated GPU does not model (V03, "
             "V04, V05 only)", e->cfg.compute, e->cfg.qmd_major);
    return qfail(e, c, qva, why);
  }
  for (unsigned chain = 0; chain < 1000000; chain++) {
    uint8_t q[384];
    uint64_t fva = qva;
    if (rd(e, qva, q, L->size, &fva)) return qfault(e, c, qva, fva, false, "QMD fetch");
    char w[256];
    unsigned major = get(q, L->major);
    if (major != e->cfg.qmd_major) {
      snprintf(w, sizeof w, "QMD_MAJOR_VERSION %u: class 0x%x takes QMD version %u", major, e->cfg.compute,
               e->cfg.qmd_major);
      return qfail(e, c, qva, w);
    }
    ptx_launch l = {0};
    static const uint32_t gmax[3] = {0x7fffffffu, 65535, 65535}, bmax[3] = {1024, 1024, 64};
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++) {
      l.grid[i] = get(q, L->grid[i]);
      l.block[i] = get(q, L->block[i]);
      threads *= l.block[i];
      if (l.grid[i] < 1 || l.grid[i] > gmax[i] || l.block[i] < 1 || l.block[i] > bmax[i]) {
        snprintf(w, sizeof w, "grid (%u, %u, %u) / block (%u, %u, %u) out of range (grid <= (2^31-1, 65535, 65535), "
                 "block <= (1024, 1024, 64), each >= 1)", get(q, L->grid[0]), get(q, L->grid[1]), get(q, L->grid[2]),
                 get(q, L->block[0]), get(q, L->block[1]), get(q, L->block[2]));
        return qfail(e, c, qva, w);
      }
    }
    if (threads > 1024) return qfail(e, c, qva, "block has more than 1024 threads");
    if (L->version == 5 && v05_check(q, threads, w, sizeof w)) return qfail(e, c, qva, w);
    if (!get(q, L->cb_valid)) return qfail(e, c, qva, "constant buffer 0 is not valid");
    uint64_t cb = ((uint64_t)get(q, L->cb_addr_lo) | (uint64_t)get(q, L->cb_addr_hi) << 32) << L->cb_addr_shift;
    uint64_t cb_size = (uint64_t)get(q, L->cb_size) * 16;
    uint64_t prog = ((uint64_t)get(q, L->prog_lo) | (uint64_t)get(q, L->prog_hi) << 32) << L->prog_shift;
    if (!cb) return qfail(e, c, qva, "constant buffer 0 has address 0");
    const ptx_module *mod = NULL;
    const char *entry = NULL;
    uint32_t shared = 0;
    if (program(e, c, qva, prog, &mod, &entry, &shared)) return -1;
    size_t psize = 0, off, sz;
    for (unsigned i = 0; ptx_param_layout(mod, entry, i, &off, &sz) == 0; i++)
      if (off + sz > psize) psize = off + sz;
    if (cb_size < L->param_base + psize) {
      snprintf(w, sizeof w, "constant buffer 0 size %llu (SIZE_SHIFTED4 %llu) does not cover the parameters at "
               "0x%x..0x%zx", (unsigned long long)cb_size, (unsigned long long)cb_size / 16, L->param_base,
               L->param_base + psize);
      return qfail(e, c, qva, w);
    }
    uint32_t shm = get(q, L->shared) << L->shared_shift;
    if (shm < shared) {
      snprintf(w, sizeof w, "SHARED_MEMORY_SIZE %u is below the kernel's static shared memory %u", shm, shared);
      return qfail(e, c, qva, w);
    }
    uint8_t pbuf[4096];
    if (psize > sizeof pbuf) return qfail(e, c, qva, "kernel parameters exceed 4 KiB");
    for (uint64_t at = 0; at < cb_size; at += 4096) { /* the whole bank must be mapped */
      uint8_t probe[4096];
      size_t k = cb_size - at < 4096 ? (size_t)(cb_size - at) : 4096;
      if (rd(e, cb + at, probe, k, &fva)) return qfault(e, c, qva, fva, false, "constant buffer 0 read");
    }
    if (psize && rd(e, cb + L->param_base, pbuf, psize, &fva))
      return qfault(e, c, qva, fva, false, "constant buffer 0 read");
    mem_ctx mc = {.e = e};
    l.entry = entry;
    l.params = pbuf;
    l.params_size = psize;
    l.mem = (ptx_mem){.ctx = &mc, .read = mread, .write = mwrite};
    ptx_report rep;
    uint64_t serial = c->serial;
    e->host.unlock(e->host.ctx);
    int rr = ptx_run(mod, &l, &rep);
    e->host.lock(e->host.ctx);
    /* The driver may have freed the channel meanwhile (another thread: cppcheck cannot know). */
    // cppcheck-suppress knownConditionTrueFalse
    if (c->serial != serial) return -1;
    if (rr) {
      if (mc.faulted) {
        snprintf(w, sizeof w, "kernel: %.180s", rep.msg);
        return qfault(e, c, qva, mc.addr, mc.write, w);
      }
      snprintf(w, sizeof w, "kernel failed: %.220s", rep.msg);
      return qfail(e, c, qva, w);
    }
    for (unsigned i = 0; i < L->nrel; i++)
      if (release(e, c, qva, L, q, (int)i)) return -1;
    if (!get(q, L->dep_en)) return 0;
    if (get(q, L->dep_action) != 1) return qfail(e, c, qva, "dependent QMD0 action other than QMD_SCHEDULE (1)");
    qva = (uint64_t)get(q, L->dep_ptr) << 8;
  }
  return qfail(e, c, qva, "more than a million chained QMDs");
}
