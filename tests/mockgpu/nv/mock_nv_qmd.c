/* tests/mockgpu/nv/mock_nv_qmd.c: the compute launch: a QMD read with the model's own field tables, checked, and
 * its kernel (PTX text in the program image, as the emulated GPU's assembler mock_nv_asm.c lays it out) run by the
 * PTX interpreter (tests/mockgpu/ptx) over the GPU VA map.
 *
 * Field positions (bit hi:lo of the QMD): V03 from NVIDIA/open-gpu-doc classes/compute/clc6c0qmd.h / clcbc0qmd.h
 * QMDV03_00, V04 from clcbc0qmd.h QMDV04_00 (HOPPER_COMPUTE_A). The configured compute class decides the version;
 * a QMD whose QMD_MAJOR_VERSION differs is rejected. Checks: grid >= 1 and <= (2^31-1, 65535, 65535), block
 * 1..1024 threads with dims <= (1024, 1024, 64), constant buffer 0 valid with an address and SIZE_SHIFTED4 * 16
 * covering the parameter base 0x210 plus the kernel's parameters, the program address mapped and holding PTX,
 * SHARED_MEMORY_SIZE >= the kernel's static .shared bytes, dependent QMD action SCHEDULE only. */
#include <stdio.h>
#include <stdlib.h>

#include "mock_nv_internal.h"
#include "ptx.h"

#define S nvm_S

typedef struct {
  uint16_t hi, lo;
} bits;

typedef struct {
  unsigned size;
  bits major, grid[3], block[3], cb_valid, cb_addr_lo, cb_addr_hi, cb_size, prog_lo, prog_hi, shared;
  unsigned cb_addr_shift;
  bits rel_en[2], rel_struct[2], rel_addr_lo[2], rel_addr_hi[2], rel_pay_lo[2], rel_pay_hi[2];
  bits dep_en, dep_action, dep_ptr;
} qmd_layout;

static const qmd_layout V03 = {
    .size = 256, .major = {583, 580},
    .grid = {{415, 384}, {431, 416}, {463, 448}}, .block = {{607, 592}, {623, 608}, {639, 624}},
    .cb_valid = {640, 640}, .cb_addr_lo = {1055, 1024}, .cb_addr_hi = {1072, 1056}, .cb_size = {1087, 1075},
    .cb_addr_shift = 0, .prog_lo = {1567, 1536}, .prog_hi = {1584, 1568}, .shared = {561, 544},
    .rel_en = {{823, 823}, {951, 951}}, .rel_struct = {{831, 830}, {959, 958}},
    .rel_addr_lo = {{799, 768}, {927, 896}}, .rel_addr_hi = {{807, 800}, {935, 928}},
    .rel_pay_lo = {{863, 832}, {991, 960}}, .rel_pay_hi = {{895, 864}, {1023, 992}},
    .dep_en = {512, 512}, .dep_action = {515, 513}, .dep_ptr = {511, 480},
};
static const qmd_layout V04 = {
    .size = 384, .major = {583, 580},
    .grid = {{1055, 1024}, {1071, 1056}, {1103, 1088}}, .block = {{1167, 1152}, {1183, 1168}, {1199, 1184}},
    .cb_valid = {416, 416}, .cb_addr_lo = {1567, 1536}, .cb_addr_hi = {1586, 1568}, .cb_size = {1599, 1587},
    .cb_addr_shift = 6, .prog_lo = {1247, 1216}, .prog_hi = {1272, 1248}, .shared = {601, 584},
    .rel_en = {{320, 320}, {336, 336}}, .rel_struct = {{322, 321}, {338, 337}},
    .rel_addr_lo = {{671, 640}, {799, 768}}, .rel_addr_hi = {{696, 672}, {824, 800}},
    .rel_pay_lo = {{735, 704}, {863, 832}}, .rel_pay_hi = {{767, 736}, {895, 864}},
    .dep_en = {368, 368}, .dep_action = {371, 369}, .dep_ptr = {479, 448},
};

static uint32_t get(const uint8_t *q, bits b) {
  uint32_t v = 0;
  for (int i = b.hi; i >= b.lo; i--) v = v << 1 | (q[i / 8] >> (i % 8) & 1);
  return v;
}

/* ---- parsed-module cache, by program address and content hash ---- */
/* Per GPU: a kernel runs without the module lock, and only its own engine thread touches its GPU's cache. */
#define CACHE_N 64
typedef struct {
  uint64_t addr, hash;
  ptx_module *m;
  uint32_t shared;
  char entry[128];
} cache_ent;
static cache_ent caches[8][CACHE_N];
static unsigned cache_next[8];

void nvm_qmd_cache_free(void) {
  for (int g = 0; g < 8; g++) {
    for (int i = 0; i < CACHE_N; i++) {
      ptx_free(caches[g][i].m);
      memset(&caches[g][i], 0, sizeof caches[g][i]);
    }
    cache_next[g] = 0;
  }
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
  int gpu;
  bool faulted, write;
  uint64_t addr;
} mem_ctx;
/* The kernel runs without the module lock (the driver keeps calling in): each access takes it. */
static int mread(void *ctx, uint64_t addr, void *dst, size_t n) {
  mem_ctx *m = ctx;
  pthread_mutex_lock(&S.lock);
  uint8_t *p = nvm_va(m->gpu, addr, n);
  if (p) memcpy(dst, p, n);
  else if (!m->faulted) m->faulted = true, m->addr = addr, m->write = false;
  pthread_mutex_unlock(&S.lock);
  return p ? 0 : -1;
}
static int mwrite(void *ctx, uint64_t addr, const void *src, size_t n) {
  mem_ctx *m = ctx;
  pthread_mutex_lock(&S.lock);
  uint8_t *p = nvm_va(m->gpu, addr, n);
  if (p) memcpy(p, src, n);
  else if (!m->faulted) m->faulted = true, m->addr = addr, m->write = true;
  pthread_mutex_unlock(&S.lock);
  return p ? 0 : -1;
}

static int qfail_code(nvm_gpu *g, nvm_chan *c, uint64_t qva, const char *what, uint32_t rc_code) {
  nvm_fail("GPU %d channel 0x%x GPFIFO entry %u: QMD at 0x%llx: %s", g->index, c->handle, c->entry_index,
           (unsigned long long)qva, what);
  nvm_chan_error(c, rc_code);
  return -1;
}
static int qfail(nvm_gpu *g, nvm_chan *c, uint64_t qva, const char *what) {
  return qfail_code(g, c, qva, what, NVM_RC_GR_EXCEPTION);
}
static int qfault(nvm_gpu *g, nvm_chan *c, uint64_t qva, uint64_t va, bool write, const char *who) {
  if (!g->fault_valid) {
    g->fault_valid = true;
    g->fault_addr = va;
    g->fault_access = write;
  }
  char m[400];
  snprintf(m, sizeof m, "MMU fault: %.300s %s of unmapped GPU VA 0x%llx", who, write ? "write" : "read", (unsigned long long)va);
  return qfail_code(g, c, qva, m, NVM_RC_MMU_FAULT);
}

/* The module at program address prog (cached), its entry (NULL: first) and static shared bytes. */
static int program(nvm_gpu *g, nvm_chan *c, uint64_t qva, uint64_t prog, const ptx_module **mod, const char **entry,
                   uint32_t *shared) {
  /* The text runs to its NUL within one mapping: find the mapping's end by probing page by page. */
  uint8_t *p = nvm_va(g->index, prog, 1);
  if (!p) return qfault(g, c, qva, prog, false, "program fetch");
  size_t n = 0;
  for (;;) {
    uint64_t page_end = ((prog + n) | 4095) + 1;
    size_t avail = (size_t)(page_end - (prog + n));
    uint8_t *q = nvm_va(g->index, prog + n, avail);
    if (!q) return qfail(g, c, qva, "program text has no NUL before the end of its mapping (not PTX from the assembler)");
    uint8_t *z = memchr(q, 0, avail);
    if (z) {
      n += (size_t)(z - q);
      break;
    }
    n += avail;
    if (n > (64u << 20)) return qfail(g, c, qva, "program text longer than 64 MiB");
  }
  const char *text = (const char *)p;
  if (n == 0 || (!strstr(text, ".entry") && !strstr(text, ".version")))
    return qfail(g, c, qva, "program address does not point at PTX text (the assembler's .text section)");
  uint64_t h = fnv(text, n);
  cache_ent *cache = caches[g->index];
  for (int i = 0; i < CACHE_N; i++)
    if (cache[i].m && cache[i].addr == prog && cache[i].hash == h) {
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
    return qfail(g, c, qva, w);
  }
  unsigned k = cache_next[g->index]++ % CACHE_N;
  ptx_free(cache[k].m);
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

static int release(nvm_gpu *g, nvm_chan *c, uint64_t qva, const qmd_layout *L, const uint8_t *q, int i) {
  if (!get(q, L->rel_en[i])) return 0;
  uint64_t va = get(q, L->rel_addr_lo[i]) | (uint64_t)get(q, L->rel_addr_hi[i]) << 32;
  uint64_t pay = get(q, L->rel_pay_lo[i]) | (uint64_t)get(q, L->rel_pay_hi[i]) << 32;
  /* STRUCTURE_SIZE 0 four words (payload + timestamp), 1 one word, 2 two words. The payload of two and four words is
   * written as 64 bits whatever PAYLOAD64B says (lenient: tinygrad leaves it 0 and signals are 64-bit). */
  unsigned st = get(q, L->rel_struct[i]);
  if (st == 3) return qfail(g, c, qva, "release STRUCTURE_SIZE 3 is reserved");
  uint8_t *p = nvm_va(g->index, va, st == 0 ? 16 : st == 1 ? 4 : 8);
  if (!p) return qfault(g, c, qva, va, true, i ? "QMD release1" : "QMD release0");
  if (st == 1) __atomic_store_n((uint32_t *)p, (uint32_t)pay, __ATOMIC_SEQ_CST);
  else __atomic_store_n((uint64_t *)p, pay, __ATOMIC_SEQ_CST);
  if (st == 0) __atomic_store_n((uint64_t *)(p + 8), nvm_now_ns(), __ATOMIC_SEQ_CST);
  return 0;
}

int nvm_qmd_launch(nvm_gpu *g, nvm_chan *c, uint64_t qva) {
  const qmd_layout *L = S.cfg->qmd_major == 4 ? &V04 : &V03;
  for (unsigned chain = 0; chain < 1000000; chain++) {
    uint8_t q[384];
    const uint8_t *qp = nvm_va(g->index, qva, L->size);
    if (!qp) return qfault(g, c, qva, qva, false, "QMD fetch");
    memcpy(q, qp, L->size);
    char w[256];
    unsigned major = get(q, L->major);
    if (major != S.cfg->qmd_major) {
      snprintf(w, sizeof w, "QMD_MAJOR_VERSION %u: class 0x%x takes QMD version %u", major, S.cfg->compute,
               S.cfg->qmd_major);
      return qfail(g, c, qva, w);
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
        return qfail(g, c, qva, w);
      }
    }
    if (threads > 1024) return qfail(g, c, qva, "block has more than 1024 threads");
    if (!get(q, L->cb_valid)) return qfail(g, c, qva, "constant buffer 0 is not valid");
    uint64_t cb = ((uint64_t)get(q, L->cb_addr_lo) | (uint64_t)get(q, L->cb_addr_hi) << 32) << L->cb_addr_shift;
    uint64_t cb_size = (uint64_t)get(q, L->cb_size) * 16;
    uint64_t prog = get(q, L->prog_lo) | (uint64_t)get(q, L->prog_hi) << 32;
    if (!cb) return qfail(g, c, qva, "constant buffer 0 has address 0");
    const ptx_module *mod = NULL;
    const char *entry = NULL;
    uint32_t shared = 0;
    if (program(g, c, qva, prog, &mod, &entry, &shared)) return -1;
    size_t psize = 0, off, sz;
    for (unsigned i = 0; ptx_param_layout(mod, entry, i, &off, &sz) == 0; i++)
      if (off + sz > psize) psize = off + sz;
    if (cb_size < 0x210 + psize) {
      snprintf(w, sizeof w, "constant buffer 0 size %llu (SIZE_SHIFTED4 %llu) does not cover the parameters at "
               "0x210..0x%zx", (unsigned long long)cb_size, (unsigned long long)cb_size / 16, 0x210 + psize);
      return qfail(g, c, qva, w);
    }
    uint32_t shm = get(q, L->shared);
    if (shm < shared) {
      snprintf(w, sizeof w, "SHARED_MEMORY_SIZE %u is below the kernel's static shared memory %u", shm, shared);
      return qfail(g, c, qva, w);
    }
    uint8_t *params = psize ? nvm_va(g->index, cb + 0x210, psize) : NULL;
    if (psize && !params) return qfault(g, c, qva, cb + 0x210, false, "constant buffer 0 read");
    if (!nvm_va(g->index, cb, cb_size)) return qfault(g, c, qva, cb, false, "constant buffer 0 read");
    uint8_t pbuf[4096];
    if (psize > sizeof pbuf) return qfail(g, c, qva, "kernel parameters exceed 4 KiB");
    if (psize) memcpy(pbuf, params, psize);
    mem_ctx mc = {.gpu = g->index};
    l.entry = entry;
    l.params = pbuf;
    l.params_size = psize;
    l.mem = (ptx_mem){.ctx = &mc, .read = mread, .write = mwrite};
    ptx_report rep;
    uint32_t handle = c->handle;
    pthread_mutex_unlock(&S.lock);
    int rr = ptx_run(mod, &l, &rep);
    pthread_mutex_lock(&S.lock);
    /* The driver may have freed the channel meanwhile (another thread: cppcheck cannot know). */
    // cppcheck-suppress knownConditionTrueFalse
    if (!c->used || c->handle != handle) return -1;
    if (rr) {
      if (mc.faulted) {
        snprintf(w, sizeof w, "kernel: %.180s", rep.msg);
        return qfault(g, c, qva, mc.addr, mc.write, w);
      }
      snprintf(w, sizeof w, "kernel failed: %.220s", rep.msg);
      return qfail(g, c, qva, w);
    }
    if (release(g, c, qva, L, q, 0) || release(g, c, qva, L, q, 1)) return -1;
    if (!get(q, L->dep_en)) return 0;
    if (get(q, L->dep_action) != 1) return qfail(g, c, qva, "dependent QMD0 action other than QMD_SCHEDULE (1)");
    qva = (uint64_t)get(q, L->dep_ptr) << 8;
  }
  return qfail(g, c, qva, "more than a million chained QMDs");
}
