/* am/am_hcq_prog.c: AMD code objects as HCQ programs (tinygrad tinygrad/runtime/ops_amd.py AMDProgram) and the scratch they need (tinygrad tinygrad/runtime/ops_amd.py AMDDevice._ensure_has_local_memory).
 * The ELF is parsed and relocated by formats/amdgpu_elf.h; this file places it in VRAM, derives the dispatch
 * registers from the kernel descriptor and checks it against the bg_program_info the caller gave. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/am_hcq.h"
#include "formats/amdgpu_elf.h"
#include "hcq/memmap.h"

#define RSRC1_PRIV (1u << 20) /* gfx11: CWSR workaround, as tinygrad */

/* A scratch buffer replaced by a bigger one: templates lowered against it may still run, so it lives until close. */
struct am_retired {
  struct am_retired *next;
  bg_mem mem;
};

/* Scratch (tinygrad tinygrad/runtime/ops_amd.py AMDDevice._ensure_has_local_memory): 64 lanes, per-thread size rounded to align/64, enough for every scratch slot of every CU. */
static int ensure_scratch(am_hcq *h, uint32_t private_size) {
  const struct bg_am_gc_props *pr = &h->d->disc.props;
  uint32_t align = h->d->ip.gfx->scratch_align, gran = align / 64;
  uint32_t per_thread = (private_size + gran - 1) / gran * gran;
  if (per_thread <= h->scratch_per_thread) return 0;
  uint32_t xccs = pr->num_xcc ? pr->num_xcc : 1, cus = pr->cu_count ? pr->cu_count / xccs : 1;
  uint32_t slots = pr->max_slots_scratch_cu ? pr->max_slots_scratch_cu : 32, ses = pr->num_se ? pr->num_se : 1;
  uint64_t per_xcc = (uint64_t)per_thread * 64 * slots * cus;
  bg_mem m;
  int e = bg_am_hcq_alloc(h->dev, per_xcc * xccs, 0, &m);
  if (e < 0) return bg_error_context(e, "scratch of %u bytes per thread: ", per_thread);
  if (h->scratch.va) {
    struct am_retired *r = malloc(sizeof(*r));
    if (!r) {
      bg_am_hcq_free(h->dev, &m);
      return bg_error(BG_ENOMEM, "am: out of host memory");
    }
    r->mem = h->scratch;
    r->next = h->retired;
    h->retired = r;
  }
  h->scratch = m;
  uint32_t wave_scratch = (64 * per_thread + align - 1) / align;
  uint64_t num_waves = per_xcc / ((uint64_t)wave_scratch * align) / (h->d->ip.gfx->scratch_waves_per_se ? ses : 1);
  uint64_t max_waves = (uint64_t)cus * slots * xccs;
  h->tmpring = (uint32_t)(num_waves < max_waves ? num_waves : max_waves) | wave_scratch << 12;
  h->scratch_per_thread = per_thread;
  if (h->q[0] && h->q[0]->aql && (e = bg_am_hcq_aql_scratch(h)) < 0) return e;
  BG_LOG(2, "am: %s: scratch %" PRIu64 " bytes at 0x%" PRIx64 " (%u bytes per thread), TMPRING_SIZE 0x%x", h->d->bdf,
         per_xcc * xccs, h->scratch.va, per_thread, h->tmpring);
  return 0;
}

void bg_am_hcq_scratch_free(am_hcq *h) {
  while (h->retired) {
    struct am_retired *r = h->retired;
    h->retired = r->next;
    bg_am_hcq_free(h->dev, &r->mem);
    free(r);
  }
  if (h->scratch.meta) bg_am_hcq_free(h->dev, &h->scratch);
  h->scratch_per_thread = 0;
}

/* End of the explicit arguments in the C-like layout of bg_program (each aligned to its size). */
static uint32_t explicit_args_end(const bg_program_info *info) {
  uint32_t off = 0;
  for (unsigned i = 0; i < info->nargs; i++) {
    uint32_t sz = info->arg_sizes[i];
    off = (off + sz - 1) & ~(sz - 1);
    off += sz;
  }
  return off;
}

static int check_image(const am_hcq *h, const bg_amdgpu_image *img, const bg_program_info *info) {
  const bg_am_dev *d = h->d;
  if (strcmp(img->mcpu, d->disc.arch) != 0)
    return bg_error(BG_EINVAL, "code object for %s, the device is %s", img->mcpu, d->disc.arch);
  uint32_t end = explicit_args_end(info);
  if (img->kd.kernarg_size < end)
    return bg_error(BG_EINVAL, "%u arguments take %u bytes but the kernel descriptor's kernarg_size is %u", info->nargs,
                    end, img->kd.kernarg_size);
  if (img->code_offset % 256)
    return bg_error(BG_EINVAL, "first instruction at image offset 0x%" PRIx64 " is not 256-byte aligned (COMPUTE_PGM_LO "
                    "holds address >> 8)", img->code_offset);
  uint32_t lds_max = d->disc.props.lds_size_kb ? d->disc.props.lds_size_kb * 1024 : 65536;
  if (img->kd.group_segment_fixed_size > lds_max)
    return bg_error(BG_EINVAL, "group segment of %u bytes exceeds the %u bytes of LDS", img->kd.group_segment_fixed_size,
                    lds_max);
  return 0;
}

int bg_am_hcq_program_load(bg_dev *dev, const void *bin, size_t size, const bg_program_info *info, void **handle) {
  am_hcq *h = dev->priv;
  bg_amdgpu_image img;
  memset(&img, 0, sizeof(img));
  int e = bg_amdgpu_elf_load(bin, size, info->name, &img);
  if (e < 0) return e;
  am_prog *p = calloc(1, sizeof(*p));
  if (!p) {
    bg_amdgpu_image_free(&img);
    return bg_error(BG_ENOMEM, "am: out of host memory");
  }
  bool mapped = false;
  if ((e = check_image(h, &img, info)) >= 0 && (e = bg_am_hcq_alloc(dev, img.size, 0, &p->mem)) >= 0) {
    /* The code is device memory a queue copy may target (copyin through SDMA when VRAM is beyond the BAR). */
    mapped = (e = bg_memmap_add(dev, p->mem.va, p->mem.size)) >= 0;
    if (e >= 0 && (e = bg_amdgpu_image_relocate(&img, p->mem.va)) >= 0)
      e = dev->ops->copyin(dev, &p->mem, 0, img.data, img.size);
    if (e >= 0 && img.kd.private_segment_fixed_size) e = ensure_scratch(h, img.kd.private_segment_fixed_size);
  }
  if (e < 0) {
    if (mapped) bg_memmap_remove(dev, p->mem.va);
    if (p->mem.meta) bg_am_hcq_free(dev, &p->mem);
    free(p);
    bg_amdgpu_image_free(&img);
    return e;
  }
  const bg_amdgpu_kd *kd = &img.kd;
  snprintf(p->name, sizeof(p->name), "%s", img.name);
  p->code_va = p->mem.va + img.code_offset;
  p->kd_va = p->mem.va + img.kd_offset;
  uint32_t lds = ((kd->group_segment_fixed_size + 511) / 512) & 0x1ff;
  p->rsrc1 = kd->compute_pgm_rsrc1 | (h->d->ip.gfx->rsrc1_priv ? RSRC1_PRIV : 0);
  p->rsrc2 = kd->compute_pgm_rsrc2 | lds << 15;
  p->rsrc3 = kd->compute_pgm_rsrc3;
  p->code_props = kd->kernel_code_properties;
  p->wave32 = kd->kernel_code_properties & KCP_WAVEFRONT_SIZE32;
  p->kernarg_size = kd->kernarg_size;
  p->private_size = kd->private_segment_fixed_size;
  p->group_size = kd->group_segment_fixed_size;
  p->max_workgroup = img.max_flat_workgroup_size;
  BG_LOG(2, "am: %s: program %s: %" PRIu64 " bytes at 0x%" PRIx64 ", code 0x%" PRIx64 ", rsrc1 0x%x rsrc2 0x%x rsrc3 "
         "0x%x, kernarg %u, lds %u, scratch %u, wave%u", h->d->bdf, p->name, img.size, p->mem.va, p->code_va, p->rsrc1,
         p->rsrc2, p->rsrc3, p->kernarg_size, p->group_size, p->private_size, p->wave32 ? 32 : 64);
  bg_amdgpu_image_free(&img);
  pthread_mutex_lock(&h->lock);
  p->next = h->progs;
  h->progs = p;
  pthread_mutex_unlock(&h->lock);
  *handle = p;
  return 0;
}

const am_prog *bg_am_hcq_prog_at(const am_hcq *h, uint64_t code_va) {
  for (const am_prog *p = h->progs; p; p = p->next)
    if (p->code_va == code_va) return p;
  return NULL;
}

void bg_am_hcq_program_free(bg_dev *dev, void *handle) {
  am_hcq *h = dev->priv;
  am_prog *p = handle;
  if (!p) return;
  pthread_mutex_lock(&h->lock);
  for (am_prog **pp = &h->progs; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  pthread_mutex_unlock(&h->lock);
  bg_memmap_remove(dev, p->mem.va);
  bg_am_hcq_free(dev, &p->mem);
  free(p);
}

uint32_t bg_am_hcq_program_max_workgroup(bg_dev *dev, void *handle) {
  (void)dev;
  return handle ? ((const am_prog *)handle)->max_workgroup : 0;
}
