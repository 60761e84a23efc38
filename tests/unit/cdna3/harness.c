/* tests/unit/cdna3/harness.c: see harness.h. */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *xlate(void *ctx, uint64_t va, bool write, size_t *avail) {
  gpu *g = ctx;
  (void)write;
  *avail = 0;
  if (va < GPU_BASE || va >= GPU_BASE + GPU_SIZE || (va >= g->hole_va && va < g->hole_va + g->hole_size)) return NULL;
  *avail = GPU_PAGE - (va & (GPU_PAGE - 1));
  return g->mem + (va - GPU_BASE);
}

void gpu_init(gpu *g) {
  memset(g, 0, sizeof *g);
  g->mem = calloc(1, GPU_SIZE);
  ck_assert_ptr_nonnull(g->mem);
  g->brk = GPU_PAGE;
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

bool have_llvm(void) { return getenv("CDNA3_BUILT") && *getenv("CDNA3_BUILT"); }

uint8_t *read_built(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", getenv("CDNA3_BUILT"), name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)len + 1);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return b;
}

uint64_t snippet_va(gpu *g, const char *name) {
  size_t n;
  if (!g->snippets_va) {
    uint8_t *text = read_built("asm_snippets.bin", &n);
    g->snippets_va = gpu_alloc(g, n + 64, 256);
    memcpy(gpu_ptr(g, g->snippets_va), text, n);
    free(text);
  }
  char *sym = (char *)read_built("asm_snippets.sym", &n);
  sym[n] = 0;
  uint64_t off = ~0ull;
  char *save = NULL;
  for (char *line = strtok_r(sym, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned long long v;
    char type, nm[128];
    if (sscanf(line, "%llx %c %127s", &v, &type, nm) == 3 && !strcmp(nm, name)) off = v;
  }
  free(sym);
  ck_assert_msg(off != ~0ull, "no snippet %s", name);
  return g->snippets_va + off;
}

wave_run *wave_new(gpu *g, const char *snippet) {
  wave_run *r = calloc(1, sizeof *r);
  ck_assert_ptr_nonnull(r);
  r->mem = gpu_mem(g);
  r->c = (cdna3_ctx){.mem = &r->mem, .rep = &r->rep, .lds = r->lds, .lds_size = sizeof r->lds, .budget = 100000,
                     .nvgpr = CDNA3_NVGPR, .accum_offset = CDNA3_NVGPR, .nreg = CDNA3_NREG};
  r->w.pc = snippet_va(g, snippet);
  cdna3_set_exec(&r->w, ~0ull);
  return r;
}

int wave_go(wave_run *r) {
  int rc;
  while ((rc = cdna3_run_wave(&r->c, &r->w)) == 1) r->w.at_barrier = false;
  return rc == 0 && r->w.done ? 0 : -1;
}

uint32_t *agpr(wave_run *r, unsigned i) { return r->w.v[r->c.accum_offset + i]; }

void kernel_load(gpu *g, const char *name, kernel *k) {
  char file[128];
  snprintf(file, sizeof file, "%s.bin", name);
  size_t n;
  uint8_t *b = read_built(file, &n);
  ck_assert_uint_gt(n, 64);
  memset(k, 0, sizeof *k);
  /* Kernel descriptor: AMDGPUUsage "Kernel Descriptor" (byte offsets). */
  memcpy(&k->group_segment, b + 0, 4);
  memcpy(&k->private_segment, b + 4, 4);
  memcpy(&k->kernarg_size, b + 8, 4);
  memcpy(&k->rsrc3, b + 44, 4);
  memcpy(&k->rsrc1, b + 48, 4);
  memcpy(&k->rsrc2, b + 52, 4);
  memcpy(&k->properties, b + 56, 2);
  k->code_va = gpu_alloc(g, n, 256);
  memcpy(gpu_ptr(g, k->code_va), b + 64, n - 64);
  free(b);
}

int kernel_run_xcc(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
                   size_t kernarg_n, unsigned xcc, unsigned nxcc, rdna3_report *rep) {
  uint64_t ka = gpu_alloc(g, kernarg_n + 256, 64);  /* hidden arguments after the explicit ones stay zero */
  memcpy(gpu_ptr(g, ka), kernarg, kernarg_n);
  uint64_t aql = gpu_alloc(g, 64, 64), queue = gpu_alloc(g, 256, 64);
  cdna3_dispatch d = {.regs = {.pgm_addr = k->code_va, .pgm_rsrc1 = k->rsrc1, .pgm_rsrc3 = k->rsrc3,
                               .max_insts = 2000000000ull},
                      .xcc = xcc, .nxcc = nxcc};
  /* User SGPRs in the order of kernel_code_properties' ENABLE_SGPR_* bits; gfx942 has architected flat scratch, so
   * the private segment buffer and flat scratch init must be off (AMDGPUUsage). */
  uint16_t p = k->properties;
  ck_assert_msg(!(p & 1) && !(p & 32), "private segment buffer / flat scratch init on gfx942");
  unsigned s = 0;
  uint32_t *u = d.regs.user_data;
  if (p & 2) u[s++] = (uint32_t)aql, u[s++] = (uint32_t)(aql >> 32);
  if (p & 4) u[s++] = (uint32_t)queue, u[s++] = (uint32_t)(queue >> 32);
  if (p & 8) u[s++] = (uint32_t)ka, u[s++] = (uint32_t)(ka >> 32);
  if (p & 16) s += 2;
  if (p & 64) s += 1;
  d.regs.pgm_rsrc2 = k->rsrc2 | ((k->group_segment + 511) / 512) << 15;
  ck_assert_uint_le(s, (k->rsrc2 >> 1) & 0x1f);
  for (int i = 0; i < 3; i++) d.regs.grid[i] = grid[i], d.regs.num_thread[i] = local[i];
  if (k->private_segment) {
    /* COMPUTE_TMPRING_SIZE (gfx9): WAVES [11:0], WAVESIZE [24:12] in 1 KiB units; one workgroup's waves. */
    uint32_t waves = (local[0] * local[1] * local[2] + 63) / 64, wavesize = (k->private_segment * 64 + 1023) / 1024;
    d.regs.scratch_base = gpu_alloc(g, (uint64_t)waves * wavesize * 1024, 256);
    d.regs.tmpring_size = waves | wavesize << 12;
  }
  rdna3_mem mem = gpu_mem(g);
  return cdna3_dispatch_run(&d, &mem, rep);
}

int kernel_run(gpu *g, const kernel *k, const uint32_t grid[3], const uint32_t local[3], const void *kernarg,
               size_t kernarg_n, rdna3_report *rep) {
  return kernel_run_xcc(g, k, grid, local, kernarg, kernarg_n, 0, 1, rep);
}
