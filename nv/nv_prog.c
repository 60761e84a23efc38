/* nv/nv_prog.c: NVIDIA programs (tinygrad tinygrad/runtime/ops_nv.py NVProgram) and the local memory they need
 * (NVDevice._ensure_has_local_memory).
 *
 * bin is a cubin (ELF) or PTX text (NUL-terminated). PTX becomes a cubin through the emulated GPU's assembler on
 * MOCKNVK (platform/mock_plugin.h) or compile/ptx_compile.h (nvJitLink / ptxas) on NVK. formats/cubin.h parses and
 * relocates it; parameter offsets always come from its .nv.info and are checked against bg_program_info. The image
 * lives in GPU memory (one page more than it needs: the instruction prefetcher reads past the end, as tinygrad
 * allocates). The QMD template (nv_qmd.h) gets everything but the grid, block and constant-bank-0 address, which
 * nv_lower.c fills per launch. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/ptx_compile.h"
#include "formats/cubin.h"
#include "hcq/memmap.h"
#include "nv/nv_hcq.h"
#include "nv/nv_qmd.h"
#include "platform/mock_plugin.h"

struct nv_local_retired {
  struct nv_local_retired *next;
  bg_mem mem;
};

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Local (stack) memory for slm bytes per thread (tinygrad NVDevice._ensure_has_local_memory): per TPC
 * round_up(round_up(slm * 32, 0x200) * warps per SM * SMs per TPC, 0x8000) bytes, the buffer
 * round_up(per TPC * TPCs per GPC * GPCs, 0x20000). The buffer it replaces stays allocated until close: templates
 * lowered earlier still set it (nv_lower.c) and it is large enough for their programs. g->lock guards the swap; the
 * allocation runs without it (bg_nv_alloc takes it). */
static int ensure_local(bg_dev *d, nv_gpu *g, uint32_t slm) {
  pthread_mutex_lock(&g->lock);
  bool enough = slm <= g->slm_per_thread;
  pthread_mutex_unlock(&g->lock);
  if (enough) return 0;
  if (!g->gpcs || !g->tpc_per_gpc || !g->sm_per_tpc || !g->max_warps_per_sm)
    return bg_error(BG_EINVAL, "local memory of %u bytes per thread: GR info gave %u GPCs, %u TPCs per GPC, %u SMs per "
                    "TPC, %u warps per SM (none may be 0)", slm, g->gpcs, g->tpc_per_gpc, g->sm_per_tpc,
                    g->max_warps_per_sm);
  uint64_t per_tpc = round_up(round_up((uint64_t)slm * 32, 0x200) * g->max_warps_per_sm * g->sm_per_tpc, 0x8000);
  uint64_t size = round_up(per_tpc * g->tpc_per_gpc * g->gpcs, 0x20000);
  struct nv_local_retired *r = malloc(sizeof(*r));
  if (!r) return bg_error(BG_ENOMEM, "nv: out of host memory");
  bg_mem m;
  memset(&m, 0, sizeof(m));
  int e = bg_nv_alloc(d, size, 0, &m);
  if (e < 0) {
    free(r);
    return bg_error_context(e, "local memory of %u bytes per thread (%" PRIu64 " bytes): ", slm, size);
  }
  pthread_mutex_lock(&g->lock);
  if (slm <= g->slm_per_thread) {
    r->mem = m; /* another thread grew it meanwhile: keep the bigger one */
  } else {
    r->mem = g->local_mem;
    g->local_mem = m;
    g->slm_per_thread = slm;
    g->local_bytes_per_tpc = per_tpc;
  }
  if (r->mem.va) {
    r->next = g->local_retired;
    g->local_retired = r;
    r = NULL;
  }
  pthread_mutex_unlock(&g->lock);
  free(r);
  BG_LOG(2, "nv: local memory %" PRIu64 " bytes at 0x%" PRIx64 " (%u bytes per thread, %" PRIu64 " per TPC)", size, m.va,
         slm, per_tpc);
  return 0;
}

void bg_nv_local_fini(nv_gpu *g) {
  while (g->local_retired) {
    struct nv_local_retired *r = g->local_retired;
    g->local_retired = r->next;
    bg_nv_mem_free(g, &r->mem);
    free(r);
  }
  if (g->local_mem.va) bg_nv_mem_free(g, &g->local_mem);
  memset(&g->local_mem, 0, sizeof(g->local_mem));
  g->slm_per_thread = 0;
  g->local_bytes_per_tpc = 0;
}

/* PTX (NUL-terminated text) -> cubin; a cubin is passed through. *owned: the malloc'd cubin, if one was made. */
static int to_cubin(const nv_gpu *g, const void *bin, size_t size, const uint8_t **cubin, size_t *n, uint8_t **owned) {
  *owned = NULL;
  if (size >= 4 && memcmp(bin, "\x7f" "ELF", 4) == 0) {
    *cubin = bin;
    *n = size;
    return 0;
  }
  if (size == 0 || !memchr(bin, 0, size))
    return bg_error(BG_EINVAL, "program of %zu bytes is neither a cubin (ELF magic) nor NUL-terminated PTX text", size);
  int e = g->mock ? bg_mock_plugin_nv_assemble(bin, g->sm, owned, n) : bg_ptx_compile(bin, g->sm, BG_PTX_AUTO, owned, n);
  if (e < 0) return bg_error_context(e, "PTX -> cubin for sm_%u (%s): ", g->sm, g->mock ? "emulated GPU's assembler" :
                                     "nvJitLink / ptxas");
  *cubin = *owned;
  return 0;
}

static int check_kernel(const nv_gpu *g, const bg_cubin *c, const bg_cubin_kernel *k, const bg_program_info *info) {
  if (c->sm != g->sm) return bg_error(BG_EINVAL, "the cubin is for sm_%u, the device is sm_%u", c->sm, g->sm);
  if (k->nparams != info->nargs)
    return bg_error(BG_EINVAL, "'%s' has %u parameters in its cubin (.nv.info), the program info gives %u", k->name,
                    k->nparams, info->nargs);
  for (unsigned i = 0; i < k->nparams; i++) {
    uint32_t s = k->params[i].size;
    if (s != info->arg_sizes[i])
      return bg_error(BG_EINVAL, "'%s' parameter %u is %u bytes in the cubin (EIATTR_KPARAM_INFO), the program info "
                      "gives %u", k->name, i, s, (unsigned)info->arg_sizes[i]);
    if (!(s == 1 || s == 2 || s == 4 || s == 8))
      return bg_error(BG_EINVAL, "'%s' parameter %u is %u bytes: only 1, 2, 4 or 8 are supported", k->name, i, s);
  }
  if (k->param_base < 0x30 || k->param_base % 4)
    return bg_error(BG_EINVAL, "'%s': parameter base 0x%x (EIATTR_PARAM_CBANK) leaves no room for the driver words "
                    "(at least 0x30, 4-aligned)", k->name, k->param_base);
  if (g->sm >= 100 && k->param_base < 224 * 4)
    return bg_error(BG_EINVAL, "'%s': parameter base 0x%x is below the Blackwell driver area (0x380)", k->name,
                    k->param_base);
  if (k->code_size == 0) return bg_error(BG_EINVAL, "'%s': .text is empty", k->name);
  return 0;
}

/* Shared memory configuration of the SM in 4 KiB units + 1 (tinygrad NVProgram: the smallest of 32, 64, 100 KiB
 * that holds the kernel's usage; Hopper also has 132..228 KiB). */
static int smem_config(unsigned sm, uint32_t bytes, uint32_t *cfg, uint32_t *max_cfg) {
  static const uint32_t kib[] = {32, 64, 100, 132, 164, 196, 228};
  unsigned n = sm >= 90 ? 7 : 3;
  for (unsigned i = 0; i < n; i++)
    if (kib[i] * 1024 >= bytes) {
      *cfg = kib[i] * 1024 / 4096 + 1;
      *max_cfg = kib[i] <= 100 ? 100 * 1024 / 4096 + 1 : *cfg;
      return 0;
    }
  return bg_error(BG_EINVAL, "%u bytes of shared memory exceed the %u KiB of sm_%u", bytes, kib[n - 1], sm);
}

#define SET(f, v) if ((e = bg_nv_qmd_set(q, ver, f, 0, v)) < 0) return e
#define SET_IF(f, v) if (bg_nv_qmd_has(ver, f) && (e = bg_nv_qmd_set(q, ver, f, 0, v)) < 0) return e

/* The QMD template (tinygrad NVProgram): field values of nv_qmd.h for this kernel at image VA va. */
static int build_qmd(const nv_gpu *g, nv_prog *p, const bg_cubin_kernel *k, uint64_t va) {
  int ver = p->qmd_version, e;
  uint32_t *q = p->qmd;
  memset(p->qmd, 0, sizeof(p->qmd));
  uint32_t shmem = (uint32_t)round_up(0x400 + (uint64_t)k->shared, 128), cfg = 0, max_cfg = 0;
  if ((e = smem_config(g->sm, shmem, &cfg, &max_cfg)) < 0) return bg_error_context(e, "'%s': ", k->name);
  SET(BG_QMD_QMD_MAJOR_VERSION, (uint64_t)ver);
  SET(BG_QMD_QMD_MINOR_VERSION, 0);
  SET_IF(BG_QMD_QMD_TYPE, 2); /* GRID_CTA */
  SET(BG_QMD_QMD_GROUP_ID, 0x3f);
  SET_IF(BG_QMD_SM_GLOBAL_CACHING_ENABLE, 1);
  SET(BG_QMD_INVALIDATE_TEXTURE_HEADER_CACHE, 1);
  SET(BG_QMD_INVALIDATE_TEXTURE_SAMPLER_CACHE, 1);
  SET(BG_QMD_INVALIDATE_TEXTURE_DATA_CACHE, 1);
  SET(BG_QMD_INVALIDATE_SHADER_DATA_CACHE, 1);
  SET(BG_QMD_API_VISIBLE_CALL_LIMIT, 1); /* NO_CHECK */
  SET(BG_QMD_SAMPLER_INDEX, 1);          /* VIA_HEADER_INDEX */
  SET(BG_QMD_CWD_MEMBAR_TYPE, 1);        /* L1_SYSMEMBAR */
  SET(BG_QMD_BARRIER_COUNT, 1);
  if ((e = bg_nv_qmd_set(q, ver, BG_QMD_REGISTER_COUNT, 0, k->regs)) < 0)
    return bg_error_context(e, "'%s' uses %u registers: ", k->name, k->regs);
  if ((e = bg_nv_qmd_set_scaled(q, ver, BG_QMD_SHARED_MEMORY_SIZE, 0, shmem)) < 0) return e;
  SET(BG_QMD_MIN_SM_CONFIG_SHARED_MEM_SIZE, cfg);
  SET(BG_QMD_TARGET_SM_CONFIG_SHARED_MEM_SIZE, cfg);
  SET(BG_QMD_MAX_SM_CONFIG_SHARED_MEM_SIZE, max_cfg);
  if ((e = bg_nv_qmd_set_scaled(q, ver, BG_QMD_SHADER_LOCAL_MEMORY_HIGH_SIZE, 0, p->local_need)) < 0) return e;
  SET(BG_QMD_SASS_VERSION, (g->sm / 10) << 4 | g->sm % 10);
  uint64_t code = va + k->code_offset;
  if ((e = bg_nv_qmd_set_addr(q, ver, BG_QMD_PROGRAM_ADDRESS_LOWER, BG_QMD_PROGRAM_ADDRESS_UPPER, 0, code)) < 0)
    return bg_error_context(e, "'%s' code at 0x%" PRIx64 ": ", k->name, code);
  if ((e = bg_nv_qmd_set_addr(q, ver, BG_QMD_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED,
                              BG_QMD_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 0, code & ~(uint64_t)0xff)) < 0)
    return e;
  SET(BG_QMD_PROGRAM_PREFETCH_SIZE, k->code_size >> 8 < 0x1ff ? k->code_size >> 8 : 0x1ff);
  /* constant bank 0: valid, invalidated per launch, ceil(size / 16) (its address is the launch's kargs block) */
  if ((e = bg_nv_qmd_set(q, ver, BG_QMD_CONSTANT_BUFFER_VALID, 0, 1)) < 0 ||
      (e = bg_nv_qmd_set(q, ver, BG_QMD_CONSTANT_BUFFER_INVALIDATE, 0, 1)) < 0 ||
      (e = bg_nv_qmd_set(q, ver, BG_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, 0, (p->cb0_size + 15) / 16)) < 0)
    return e;
  /* the kernel's other constant banks (.nv.constantN) live in the image */
  for (unsigned b = 1; b < 8; b++) {
    if (!k->bank_size[b]) continue;
    uint64_t a = va + k->bank_offset[b];
    if ((e = bg_nv_qmd_set(q, ver, BG_QMD_CONSTANT_BUFFER_VALID, b, 1)) < 0 ||
        (e = bg_nv_qmd_set_addr(q, ver, BG_QMD_CONSTANT_BUFFER_ADDR_LOWER, BG_QMD_CONSTANT_BUFFER_ADDR_UPPER, b, a)) < 0 ||
        (e = bg_nv_qmd_set(q, ver, BG_QMD_CONSTANT_BUFFER_SIZE_SHIFTED4, b, (k->bank_size[b] + 15) / 16)) < 0)
      return bg_error_context(e, "'%s' constant bank %u: ", k->name, b);
  }
  return 0;
}

/* Threads per block the register file allows (tinygrad NVProgram: 64K registers per SM, allocated per warp in units
 * of 256), capped by .maxntid. */
static uint32_t max_threads_of(const bg_cubin_kernel *k) {
  uint32_t regs = k->regs ? k->regs : 1;
  uint32_t t = (uint32_t)(65536 / round_up((uint64_t)regs * 32, 256) / 4 * 4 * 32);
  if (t > 1024) t = 1024;
  if (k->max_threads[0]) {
    uint64_t m = (uint64_t)k->max_threads[0] * (k->max_threads[1] ? k->max_threads[1] : 1) *
                 (k->max_threads[2] ? k->max_threads[2] : 1);
    if (m < t) t = (uint32_t)m;
  }
  return t;
}

static void prog_free(bg_dev *d, nv_prog *p, bool mapped) {
  if (mapped) bg_memmap_remove(d, p->image.va);
  if (p->image.va) bg_nv_free(d, &p->image);
  free(p->param_offsets);
  free(p->param_sizes);
  free(p);
}

static int load_kernel(bg_dev *d, nv_gpu *g, const bg_cubin *c, const bg_cubin_kernel *k, nv_prog *p, bool *mapped) {
  int e;
  snprintf(p->name, sizeof(p->name), "%s", k->name);
  p->nparams = k->nparams;
  p->param_offsets = calloc(k->nparams + 1u, sizeof(uint32_t));
  p->param_sizes = calloc(k->nparams + 1u, sizeof(uint32_t));
  if (!p->param_offsets || !p->param_sizes) return bg_error(BG_ENOMEM, "nv: out of host memory");
  for (unsigned i = 0; i < k->nparams; i++) {
    p->param_offsets[i] = k->params[i].offset;
    p->param_sizes[i] = k->params[i].size;
  }
  p->regs = k->regs;
  p->shared = k->shared;
  p->local = k->local;
  p->param_base = k->param_base;
  p->param_size = k->param_size;
  uint64_t cb0 = (uint64_t)k->param_base + k->param_size;
  if (k->cbank0_size > cb0) cb0 = k->cbank0_size;
  for (unsigned i = 0; i < k->nparams; i++)
    if ((uint64_t)k->param_base + k->params[i].offset + k->params[i].size > cb0)
      return bg_error(BG_EINVAL, "'%s' parameter %u at 0x%x + %u bytes lies outside constant bank 0 (%" PRIu64 " bytes)",
                      k->name, i, k->param_base + k->params[i].offset, k->params[i].size, cb0);
  if (cb0 > 0x10000) return bg_error(BG_EINVAL, "'%s': constant bank 0 of %" PRIu64 " bytes (at most 64 KiB)", k->name, cb0);
  p->cb0_size = (uint32_t)round_up(cb0, 16);
  p->code_size = (uint32_t)k->code_size;
  p->qmd_version = g->cls.qmd_version;
  p->max_threads = max_threads_of(k);
  p->local_need = (uint32_t)round_up((uint64_t)k->local + 0x240, 32); /* tinygrad: stack + 0x240 */
  if (!bg_nv_qmd_bytes(p->qmd_version))
    return bg_error(BG_EINVAL, "compute class 0x%x: QMD version %d is not one of 3, 4, 5", g->cls.compute,
                    p->qmd_version);
  /* image: round_up(size, 4 KiB) + 4 KiB of GPU memory */
  if ((e = bg_nv_alloc(d, round_up(c->image_size, 4096) + 4096, 0, &p->image)) < 0) return e;
  if ((e = bg_memmap_add(d, p->image.va, p->image.size)) < 0) return e;
  *mapped = true;
  p->code_va = p->image.va + k->code_offset;
  uint8_t *img = malloc(c->image_size ? c->image_size : 1);
  if (!img) return bg_error(BG_ENOMEM, "nv: out of host memory for a %" PRIu64 "-byte image", c->image_size);
  if ((e = bg_cubin_relocate(c, p->image.va, img)) >= 0) e = bg_nv_copyin(d, &p->image, 0, img, c->image_size);
  free(img);
  if (e < 0) return e;
  if ((e = ensure_local(d, g, p->local_need)) < 0) return e;
  return build_qmd(g, p, k, p->image.va);
}

int bg_nv_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle) {
  nv_gpu *g = bg_nv_gpu(d);
  const uint8_t *cubin = NULL;
  size_t n = 0;
  uint8_t *owned;
  int e = to_cubin(g, bin, size, &cubin, &n, &owned);
  if (e < 0) return e;
  bg_cubin c;
  memset(&c, 0, sizeof(c));
  e = bg_cubin_load(cubin, n, &c);
  const bg_cubin_kernel *k = e >= 0 ? bg_cubin_kernel_find(&c, info->name) : NULL;
  if (e >= 0 && !k) e = -BG_EINVAL;
  if (e >= 0) e = check_kernel(g, &c, k, info);
  nv_prog *p = NULL;
  bool mapped = false;
  if (e >= 0 && !(p = calloc(1, sizeof(*p)))) e = bg_error(BG_ENOMEM, "nv: out of host memory");
  if (e >= 0) e = load_kernel(d, g, &c, k, p, &mapped);
  bg_cubin_free(&c);
  free(owned);
  if (e < 0) {
    if (p) prog_free(d, p, mapped);
    return bg_error_context(e, "nv: program '%s': ", info->name ? info->name : "?");
  }
  BG_LOG(2, "nv: program %s: image %" PRIu64 " bytes at 0x%" PRIx64 ", code 0x%" PRIx64 ", %u regs, %u shared, local %u "
         "per thread, cb0 %u bytes (params at 0x%x), QMD V%02d, max %u threads", p->name, p->image.size, p->image.va,
         p->code_va, p->regs, p->shared, p->local_need, p->cb0_size, p->param_base, p->qmd_version, p->max_threads);
  *handle = p;
  return 0;
}

void bg_nv_program_free(bg_dev *d, void *handle) {
  if (handle) prog_free(d, handle, true);
}

uint32_t bg_nv_program_max_workgroup(bg_dev *d, void *handle) {
  (void)d;
  return handle ? ((const nv_prog *)handle)->max_threads : 0;
}
