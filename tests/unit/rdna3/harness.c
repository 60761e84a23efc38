/* tests/unit/rdna3/harness.c: see harness.h. */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *xlate(void *ctx, uint64_t va, bool write, size_t *avail) {
  gpu *g = ctx;
  (void)write;
  g->xlates++;
  *avail = 0;
  if (va < GPU_BASE || va >= GPU_BASE + GPU_SIZE || (va >= g->hole_va && va < g->hole_va + g->hole_size)) {
    g->faults++;
    return NULL;
  }
  *avail = GPU_PAGE - (va & (GPU_PAGE - 1));
  return g->mem + (va - GPU_BASE);
}

void gpu_init(gpu *g) {
  memset(g, 0, sizeof *g);
  g->mem = calloc(1, GPU_SIZE);
  ck_assert_ptr_nonnull(g->mem);
  g->brk = GPU_PAGE;  /* va GPU_BASE itself stays unused */
}

void gpu_free(gpu *g) { free(g->mem); }

uint64_t gpu_alloc(gpu *g, uint64_t size, uint64_t align) {
  g->brk = (g->brk + align - 1) & ~(align - 1);
  uint64_t off = g->brk;
  g->brk += size;
  ck_assert_uint_le(g->brk, GPU_SIZE);
  memset(g->mem + off, 0, size);
  return GPU_BASE + off;
}

void *gpu_ptr(gpu *g, uint64_t va) { return g->mem + (va - GPU_BASE); }

rdna3_mem gpu_mem(gpu *g) { return (rdna3_mem){.ctx = g, .xlate = xlate}; }

bool have_llvm(void) { return getenv("RDNA3_BUILT") && *getenv("RDNA3_BUILT"); }

uint8_t *read_built(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", getenv("RDNA3_BUILT"), name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)len + 1);
  ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return b;
}

rdna3_gen harness_gen = RDNA3_GEN_GFX11;

uint64_t snippet_va(gpu *g, const char *name) {
  bool g12 = harness_gen == RDNA3_GEN_GFX12;
  if (!g->snippets_va) {
    size_t n;
    uint8_t *text = read_built(g12 ? "asm_snippets_gfx12.bin" : "asm_snippets.bin", &n);
    g->snippets_va = gpu_alloc(g, n + 64, 256);
    memcpy(gpu_ptr(g, g->snippets_va), text, n);
    free(text);
  }
  uint64_t text_va = g->snippets_va;
  size_t n;
  char *sym = (char *)read_built(g12 ? "asm_snippets_gfx12.sym" : "asm_snippets.sym", &n);
  sym[n] = 0;
  uint64_t off = ~0ull;
  for (char *line = strtok(sym, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned long long v;
    char type, nm[128];
    if (sscanf(line, "%llx %c %127s", &v, &type, nm) == 3 && !strcmp(nm, name)) off = v;
  }
  free(sym);
  ck_assert_msg(off != ~0ull, "no snippet %s", name);
  return text_va + off;
}

void wave_setup(wave_run *r, gpu *g, const char *snippet) {
  memset(r, 0, sizeof *r);
  static rdna3_mem mem;
  mem = gpu_mem(g);
  r->c = (rdna3_ctx){.isa = rdna3_isa_of(harness_gen), .mem = &mem, .rep = &r->rep, .lds = r->lds, .lds_size = sizeof r->lds, .budget = 100000,
                    .nvgpr = RDNA3_NVGPR};
  r->w.pc = snippet_va(g, snippet);
  r->w.s[RDNA3_EXEC_LO] = 0xffffffffu;
}

int wave_go(wave_run *r) {
  int rc;
  while ((rc = rdna3_run_wave(&r->c, &r->w)) == 1) r->w.at_barrier = false;  /* alone: barriers pass */
  return rc == 0 && r->w.done ? 0 : -1;
}

void kernel_load(gpu *g, const char *name, kernel *k) {
  char file[128];
  snprintf(file, sizeof file, "%s%s.bin", name, harness_gen == RDNA3_GEN_GFX12 ? ".gfx12" : "");
  size_t n;
  uint8_t *b = read_built(file, &n);
  ck_assert_uint_gt(n, 64);
  memset(k, 0, sizeof *k);
  /* Kernel descriptor layout: AMDGPUUsage "Kernel Descriptor" (offsets in bytes). */
  memcpy(&k->group_segment, b + 0, 4);
  memcpy(&k->private_segment, b + 4, 4);
  memcpy(&k->kernarg_size, b + 8, 4);
  memcpy(&k->rsrc3, b + 44, 4);
  memcpy(&k->rsrc1, b + 48, 4);
  memcpy(&k->rsrc2, b + 52, 4);
  memcpy(&k->properties, b + 56, 2);
  k->code_va = gpu_alloc(g, n - 64 + 64, 256);
  memcpy(gpu_ptr(g, k->code_va), b + 64, n - 64);
  free(b);
}

int kernel_run(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
               size_t kernarg_n, rdna3_report *rep) {
  /* The hidden arguments LLVM may read after the explicit ones stay zero. */
  uint64_t ka = gpu_alloc(g, kernarg_n + 256, 64);
  memcpy(gpu_ptr(g, ka), kernarg, kernarg_n);
  uint64_t aql = gpu_alloc(g, 64, 64), queue = gpu_alloc(g, 256, 64);
  rdna3_dispatch d = {.gen = harness_gen, .pgm_addr = k->code_va, .pgm_rsrc1 = k->rsrc1, .pgm_rsrc3 = k->rsrc3,
                      .initiator = 1u << 15, .max_insts = 2000000000ull};
  /* User SGPRs in the order of kernel_code_properties' ENABLE_SGPR_* bits. */
  unsigned s = 0;
  uint16_t p = k->properties;
  if (p & 1) s += 4;  /* private segment buffer (unused on gfx11: zero) */
  if (p & 2) d.user_data[s++] = (uint32_t)aql, d.user_data[s++] = (uint32_t)(aql >> 32);
  if (p & 4) d.user_data[s++] = (uint32_t)queue, d.user_data[s++] = (uint32_t)(queue >> 32);
  if (p & 8) d.user_data[s++] = (uint32_t)ka, d.user_data[s++] = (uint32_t)(ka >> 32);
  if (p & 16) s += 2;  /* dispatch id */
  if (p & 32) s += 2;  /* flat scratch init */
  if (p & 64) s += 1;  /* private segment size */
  uint32_t lds_units = (k->group_segment + 511) / 512;
  d.pgm_rsrc2 = k->rsrc2 | lds_units << 15;
  ck_assert_uint_le(s, (k->rsrc2 >> 1) & 0x1f);  /* LLVM may reserve more user SGPRs than it fills */
  for (int i = 0; i < 3; i++) d.grid[i] = grid[i], d.num_thread[i] = local[i];
  if (k->private_segment) {
    /* TMPRING_SIZE: WAVES [11:0], WAVESIZE [26:12] in 256-byte units; one workgroup's waves. */
    uint32_t waves = (local[0] * local[1] * local[2] + 31) / 32, wavesize = (k->private_segment * 32 + 255) / 256;
    d.scratch_base = gpu_alloc(g, (uint64_t)waves * wavesize * 256, 256);
    d.tmpring_size = waves | wavesize << 12;
  }
  return rdna3_dispatch(&d, &(rdna3_mem){.ctx = g, .xlate = xlate}, rep);
}
