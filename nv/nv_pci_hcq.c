/* nv/nv_pci_hcq.c: an NVIDIA GPU brought up from its BARs (nv_pci.h) as an HCQ device: the boot, the golden context
 * (nv_pci_golden.c), then nv_dev.c's object graph with RM going over GSP-RM's RPCs (nv_rm.c's transport below); the
 * driver's own memory (bg_nv_pci_alloc) behind bg_nv_mem_alloc; the doorbell through BAR0; GSP-RM's events as the
 * device's faults (nv_pci_hcq.h). tinygrad's PCIIface (tinygrad/runtime/ops_nv.py) is the model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_pci_hcq.h"
#include "nv/nv_regs.h"

/* The user client's handle (tinygrad PCIIface.root): outside RM's own client range (RS_CLIENT_HANDLE_BASE 0xc1d00000)
 * and the driver's private client (0xc1e00004). */
#define NV_PCI_USER_CLIENT 0xc1000000u

static int rpc_alloc(void *ctx, uint32_t client, uint32_t parent, uint32_t object, uint32_t cls, void *params,
                     uint32_t size) {
  nv_pci_gpu *p = ctx;
  uint32_t h = 0;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_alloc(&p->d->gsp, client, parent, object, cls, params, size, &h);
  pthread_mutex_unlock(&p->rpc_lock);
  if (e == 0 && h != object)
    e = bg_error(BG_EIO, "nv: GSP-RM answered handle 0x%x for the requested 0x%x (class 0x%x)", h, object, cls);
  return e;
}

static int rpc_control(void *ctx, uint32_t client, uint32_t object, uint32_t cmd, void *params, uint32_t size) {
  nv_pci_gpu *p = ctx;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_control(&p->d->gsp, client, object, cmd, params, size);
  pthread_mutex_unlock(&p->rpc_lock);
  return e;
}

static int rpc_free(void *ctx, uint32_t client, uint32_t parent, uint32_t object) {
  nv_pci_gpu *p = ctx;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_free(&p->d->gsp, client, parent, object);
  pthread_mutex_unlock(&p->rpc_lock);
  return e;
}

int bg_nv_pci_keep(nv_pci_gpu *p, uint64_t size, unsigned flags, bg_nv_pci_mem **out) {
  if (p->nbufs >= NV_PCI_MAX_CTX_BUFS)
    return bg_error(BG_ENOMEM, "nv: %s: more than %d driver-internal buffers", bg_pci_name(p->d->pci),
                    NV_PCI_MAX_CTX_BUFS);
  bg_nv_pci_mem *m = &p->bufs[p->nbufs];
  int e = bg_nv_pci_alloc(p->d, size, flags, m);
  if (e < 0) return e;
  p->nbufs++;
  *out = m;
  return 0;
}

/* ---------------- memory ---------------- */

/* BAR1 bus address of VRAM [pa, pa+n) (BAR1 is in physical mode after boot: offset == VRAM address). */
static int bar1_addr(const bg_nv_pci *d, uint64_t pa, uint64_t n, uint64_t *addr) {
  if (pa > d->bar1_size || n > d->bar1_size - pa)
    return bg_error(BG_ENOTSUP, "nv: %s: VRAM 0x%" PRIx64 "+0x%" PRIx64 " is beyond the %" PRIu64 " MiB BAR1: the "
                    "CPU reaches VRAM only through BAR1", bg_pci_name(d->pci), pa, n, d->bar1_size >> 20);
  *addr = d->bar1_bus + pa;
  return 0;
}

static int zero_vram(const bg_nv_pci *d, const bg_nv_pci_mem *m) {
  enum { CHUNK = 1 << 20 };
  uint64_t addr = 0;
  int e = bar1_addr(d, m->vram_pa, m->size, &addr);
  void *z = e < 0 ? NULL : calloc(1, CHUNK);
  if (e == 0 && !z) e = bg_error(BG_ENOMEM, "nv: out of host memory");
  for (uint64_t done = 0; e == 0 && done < m->size;) {
    uint64_t left = m->size - done, n = left < CHUNK ? left : CHUNK;
    e = bg_pci_copy_in(d->pci, addr + done, z, n, NULL, NULL);
    done += n;
  }
  free(z);
  return e;
}

/* The driver's allocation behind m and a check that [off, off+n) lies in it. */
static const bg_nv_pci_mem *pci_mem(const nv_gpu *g, const bg_mem *m, uint64_t off, uint64_t n) {
  const nv_alloc *a = m->meta;
  if (!a || !a->pm || off > m->size || n > m->size - off) {
    bg_error(BG_EINVAL, "%s: device access of %" PRIu64 " bytes at offset %" PRIu64 " of a %" PRIu64 "-byte buffer: "
             "expected a range inside a buffer of this GPU", g->name, n, off, m->size);
    return NULL;
  }
  return a->pm;
}

/* Where the CPU reaches [off, off+n) of pm: its own view, or BAR1 at its VRAM address (behind the bridge). */
static int cpu_at(const nv_gpu *g, const bg_nv_pci_mem *pm, uint64_t off, uint64_t n, const bg_mmio **v, uint64_t *at) {
  if (pm->view.size) return *v = &pm->view, *at = off, 0;
  const bg_nv_pci *d = g->pci->d;
  if ((pm->flags & BG_NV_MEM_SYSMEM) || pm->vram_pa + off + n > d->bar1.size)
    return bg_error(BG_ENOTSUP, "%s: buffer at GPU VA 0x%" PRIx64 " has no CPU view (VRAM beyond BAR1)", g->name, pm->va);
  *v = &d->bar1;
  *at = pm->vram_pa + off;
  return 0;
}

/* The core's access to m at off: read into dst, or write src. */
static int mem_access(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, const void *src, uint64_t n) {
  nv_gpu *g = bg_nv_gpu(dev);
  const bg_nv_pci_mem *pm = pci_mem(g, m, off, n);
  const bg_mmio *v = NULL;
  uint64_t at = 0;
  if (!pm) return -BG_EINVAL;
  int e = cpu_at(g, pm, off, n, &v, &at);
  if (e < 0) return e;
  return src ? bg_mmio_write(v, at, src, n) : bg_mmio_read(v, at, dst, n);
}

int bg_nv_pci_mem_read(bg_dev *dev, const bg_mem *m, uint64_t off, void *dst, uint64_t n) {
  return mem_access(dev, m, off, dst, NULL, n);
}

int bg_nv_pci_mem_write(bg_dev *dev, const bg_mem *m, uint64_t off, const void *src, uint64_t n) {
  return mem_access(dev, m, off, NULL, src, n);
}

int bg_nv_pci_cpu_view(const nv_gpu *g, const bg_mem *m, const bg_mmio **view, uint64_t *base) {
  const bg_nv_pci_mem *pm = pci_mem(g, m, 0, m->size);
  return pm ? cpu_at(g, pm, 0, m->size, view, base) : -BG_EINVAL;
}

int bg_nv_pci_copy(nv_gpu *g, const bg_mem *m, uint64_t off, const void *src, void *dst, uint64_t n) {
  const bg_nv_pci_mem *pm = pci_mem(g, m, off, n);
  if (!pm) return -BG_EINVAL;
  bg_nv_pci *d = g->pci->d;
  uint64_t addr = 0;
  int e = (pm->flags & BG_NV_MEM_SYSMEM) ? bg_error(BG_EINVAL, "%s: bridge copy of system memory", g->name)
                                         : bar1_addr(d, pm->vram_pa + off, n, &addr);
  if (e == 0) e = src ? bg_pci_copy_in(d->pci, addr, src, n, NULL, NULL) : bg_pci_copy_out(d->pci, addr, dst, n, NULL, NULL);
  return e < 0 ? bg_error_context(e, "%s: copy of %" PRIu64 " bytes %s VRAM through BAR1: ", g->name, n,
                                  src ? "to" : "from")
               : 0;
}

bool bg_nv_pci_bridged(const nv_gpu *g) { return g->pci && g->pci->d->no_host_dma; }

int bg_nv_pci_mem_alloc(nv_gpu *g, uint64_t size, unsigned flags, bg_mem *out) {
  memset(out, 0, sizeof *out);
  bg_nv_pci *d = g->pci->d;
  if (size == 0) return bg_error(BG_EINVAL, "%s: allocation of 0 bytes", g->name);
  bool host = flags & BG_BUF_HOST;
  bool cpu = host || (flags & (BG_BUF_CPU_ACCESS | BG_BUF_ZERO));
  /* where tinygrad's PCIIfaceBase.alloc puts it: host, uncached CPU-visible, and CPU-visible beyond a small BAR1 in
   * system memory (when the GPU can reach it); the rest in VRAM */
  bool sys = !d->no_host_dma && (host || (cpu && (flags & BG_BUF_UNCACHED)) || (cpu && !d->large_bar));
  unsigned pf = sys ? BG_NV_MEM_SYSMEM : BG_NV_MEM_VRAM;
  if (cpu) pf |= BG_NV_MEM_CPU;
  if (flags & BG_BUF_CONTIGUOUS) pf |= BG_NV_MEM_CONTIGUOUS;
  nv_alloc *a = calloc(1, sizeof *a);
  bg_nv_pci_mem *m = calloc(1, sizeof *m);
  if (!a || !m) {
    free(a), free(m);
    return bg_error(BG_ENOMEM, "nv: out of host memory");
  }
  int e = bg_nv_pci_alloc(d, size, pf, m);
  /* behind the USB bridge the CPU reaches VRAM only through the bridge: no pointer, the core goes through
   * mem_read/mem_write and copies through bg_pci_copy_in/out (tinygrad USBIface: "alloc always uses VRAM") */
  bool direct = cpu && m->view.ptr;
  if (e == 0 && cpu && !direct && !d->no_host_dma) {
    bg_nv_pci_free(d, m);
    e = bg_error(BG_ENOTSUP, "%s: %s memory of %" PRIu64 " bytes needs a CPU view and has no direct mapping", g->name,
                 sys ? "system" : "video", size);
  }
  if (e == 0 && (flags & BG_BUF_ZERO) && !direct) e = zero_vram(d, m);
  if (e) {
    free(a), free(m);
    return bg_error_context(e, "%s: %s memory of %" PRIu64 " bytes: ", g->name, sys ? "system" : "video", size);
  }
  a->pm = m;
  a->host = sys;
  a->cpu_mapped = direct;
  a->huge = m->page > 0x1000;
  a->map_fd = -1;
  a->map_size = m->size;
  out->va = m->va;
  out->size = size;
  out->cpu = direct ? (void *)(uintptr_t)m->view.ptr : NULL;
  out->meta = a;
  if ((flags & BG_BUF_ZERO) && out->cpu) memset(out->cpu, 0, m->size);
  g->alloc_bytes += m->size;
  BG_LOG(4, "%s: alloc %" PRIu64 " bytes (flags 0x%x) at 0x%" PRIx64 " in %s%s", g->name, size, flags, m->va,
         sys ? "system memory" : "VRAM", a->huge ? ", 2 MiB pages" : "");
  return 0;
}

void bg_nv_pci_mem_free(nv_gpu *g, bg_mem *m) {
  nv_alloc *a = m->meta;
  if (!a) return;
  g->alloc_bytes -= a->map_size;
  bg_nv_pci_free(g->pci->d, a->pm);
  free(a->pm);
  free(a);
  memset(m, 0, sizeof *m);
}

void bg_nv_pci_doorbell(nv_gpu *g, uint32_t token) { bg_nv_wr32(g->pci->d, NV_VIRTUAL_FUNCTION_DOORBELL, token); }

int bg_nv_pci_events(nv_gpu *g) {
  nv_pci_gpu *p = g->pci;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_poll(&p->d->gsp);
  bool err = p->d->gsp.error;
  char text[sizeof p->d->gsp.error_text];
  memcpy(text, p->d->gsp.error_text, sizeof text);
  pthread_mutex_unlock(&p->rpc_lock);
  if (err) return bg_error(BG_EHANG, "%s: GSP-RM reported %s", g->name, text[0] ? text : "an error");
  return e < 0 ? e : 0;
}

/* ---------------- open / close ---------------- */

static int pci_gpu_new(bg_pci_dev *pci, int index, const char *prefix, nv_gpu **out) {
  nv_gpu *g = bg_nv_gpu_new(&bg_nv_sys_real, index, prefix);
  nv_pci_gpu *p = g ? calloc(1, sizeof *p) : NULL;
  if (!p) {
    if (g) bg_nv_gpu_close(g);
    bg_pci_close(pci);
    return bg_error(BG_ENOMEM, "nv: out of host memory");
  }
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&p->rpc_lock, &ma);
  pthread_mutexattr_destroy(&ma);
  p->pci = pci;
  g->pci = p;
  *out = g;
  return 0;
}

int bg_nv_pci_gpu_open(bg_pci_dev *pci, const char *fw_dir, int index, const char *prefix, nv_gpu **out) {
  *out = NULL;
  nv_gpu *g = NULL;
  int e = pci_gpu_new(pci, index, prefix, &g);
  if (e < 0) return e;
  nv_pci_gpu *p = g->pci;
  const char *step = "boot";
  if ((e = bg_nv_pci_open(pci, fw_dir, &p->d)) == 0) {
    snprintf(g->bdf, sizeof g->bdf, "%s", bg_pci_name(pci));
    char nm[sizeof g->name];
    snprintf(nm, sizeof nm, "%s GPU %d (%s at %s)", prefix, index, p->d->chip->name, g->bdf);
    memcpy(g->name, nm, sizeof g->name);
    g->pci_vendor = 0x10de;
    g->fb_size = p->d->vram_size;
    g->abi = *bg_nv_abi_layout_of(NV_FAMILY_570); /* GSP-RM 570.144: the 570 parameter layouts */
    snprintf(g->version_source, sizeof g->version_source, "GSP-RM firmware");
    step = "golden context";
    e = bg_nv_pci_golden(g);
  }
  if (e == 0) {
    p->rpc = (bg_nv_rm_rpc){.ctx = p, .alloc = rpc_alloc, .control = rpc_control, .free = rpc_free,
                            .client = NV_PCI_USER_CLIENT};
    bg_nv_rm_init_rpc(&g->rm, &p->rpc);
    step = "root client";
    e = bg_nv_rm_alloc_root(&g->rm);
  }
  if (e == 0) {
    step = NULL;
    e = bg_nv_gpu_objects(g); /* names its own step */
  }
  if (e) {
    if (step) bg_error_context(e, "%s: open step '%s': ", g->name, step);
    bg_nv_gpu_close(g);
    return e;
  }
  BG_LOG(1, "%s: %s %s, sm_%u, QMD v%d, %" PRIu64 " MiB VRAM; open: %" PRIu64 " register reads, %" PRIu64
         " writes, %" PRIu64 " RPCs", g->name, g->cls.generation,
         bg_nv_class_name(g->cls.compute) ? bg_nv_class_name(g->cls.compute) : "compute", g->sm, g->cls.qmd_version,
         p->d->vram_size >> 20, p->d->reg_reads, p->d->reg_writes, p->d->gsp.nrpc);
  *out = g;
  return 0;
}

void bg_nv_pci_gpu_fini(nv_gpu *g) {
  nv_pci_gpu *p = g->pci;
  if (!p) return;
  bg_nv_pci_golden_fini(g);
  bg_nv_pci_close(p->d); /* UNLOADING_GUEST_DRIVER: the next open finds the GPU reusable */
  bg_pci_close(p->pci);
  pthread_mutex_destroy(&p->rpc_lock);
  free(p);
  g->pci = NULL;
}
