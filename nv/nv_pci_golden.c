/* nv/nv_pci_golden.c: the golden context GSP-RM needs before a user channel can run compute work, and the parts of a
 * user channel that only the bare-metal path supplies (nv_pci_hcq.h). The sequence is tinygrad's
 * (tinygrad/runtime/support/nv/ip.py NV_GSP.init_golden_image, rpc_rm_alloc, promote_ctx); the parameter blocks are
 * open-gpu-kernel-modules' (nv_abi_gsp.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_pci_hcq.h"

#define RESERVED_PDE_SIZE (512ull << 20)  /* GSP-RM's own VA range: one PDE1 entry's span */
#define GOLDEN_GPFIFO_ENTRIES 32u
#define GOLDEN_USERD_OFFSET 0x100u        /* USERD after the 32 ring entries */
#define RAMFC_SIZE 0x200u                 /* RAMFC in the instance block's first bytes */
#define INSTANCE_SIZE 0x1000u
#define MTHDBUF_SIZE 0x5000u
#define USERD_SIZE 0x400u
#define GR_CTX_EXTRA 0x40000u             /* tinygrad adds 256 KiB to the main graphics context */

/* The context buffers of a compute channel: buffer id (PROMOTE_CTX's), the engine id its size comes from, whether
 * GSP-RM gets its physical side and/or its virtual side, "local" (per channel: not in the golden context), the
 * alignment override (ATTRIBUTE_CB: 2 MiB). tinygrad NV_GSP.init_golden_image grctx_bufs. */
static const struct ctx_buf {
  uint16_t id;
  uint8_t engine;
  bool phys, virt, local;
  uint32_t align;
  uint32_t extra;
} CTX_BUFS[] = {
    {0, NV_CTX_ID_GRAPHICS, true, true, false, 0, GR_CTX_EXTRA},
    {1, NV_CTX_ID_GRAPHICS_PATCH, true, true, true, 0, 0},
    {2, NV_CTX_ID_GRAPHICS_PATCH, true, true, false, 0, 0},
    {3, NV_CTX_ID_GRAPHICS_BUNDLE_CB, false, true, false, 0, 0},
    {4, NV_CTX_ID_GRAPHICS_PAGEPOOL_GLOBAL, false, true, false, 0, 0},
    {5, NV_CTX_ID_GRAPHICS_ATTRIBUTE_CB, false, true, false, 2u << 20, 0},
    {6, NV_CTX_ID_GRAPHICS_RTV_CB_GLOBAL, false, true, false, 0, 0},
    {9, NV_CTX_ID_GRAPHICS_FECS_EVENT, true, true, false, 0, 0},
    {10, NV_CTX_ID_GRAPHICS_PRIV_ACCESS_MAP, true, false, false, 0, 0},
    {11, NV_CTX_ID_GRAPHICS_PRIV_ACCESS_MAP, true, true, false, 0, 0},
};
#define NCTX_BUFS (sizeof CTX_BUFS / sizeof CTX_BUFS[0])

static nv_pci_gpu *pg(const nv_gpu *g) { return g->pci; }

static uint64_t round_up(uint64_t v, uint64_t a) { return a ? (v + a - 1) / a * a : v; }

static int ctx_size(const nv_pci_gpu *p, const struct ctx_buf *b, uint64_t *size) {
  uint32_t sz = p->ctx_info.engine[b->engine].size, al = b->align ? b->align : p->ctx_info.engine[b->engine].alignment;
  if (!sz) return bg_error(BG_EIO, "nv: KGR_GET_CONTEXT_BUFFERS_INFO gives size 0 for context engine id %u (buffer %u)",
                           b->engine, b->id);
  *size = round_up((uint64_t)sz + b->extra, al);
  return 0;
}

static int rm_alloc(nv_pci_gpu *p, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *h) {
  bg_nv_pci *d = p->d;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_alloc(&d->gsp, d->client, parent, 0, cls, params, size, h);
  pthread_mutex_unlock(&p->rpc_lock);
  return e;
}

static int rm_control(nv_pci_gpu *p, uint32_t client, uint32_t object, uint32_t cmd, void *params, uint32_t size) {
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_control(&p->d->gsp, client, object, cmd, params, size);
  pthread_mutex_unlock(&p->rpc_lock);
  return e;
}

/* PROMOTE_CTX of the buffers in which[] (their memory in mem[]) for channel hobject of client, sent on subdevice hsub;
 * phys/virt: which sides to hand over (each buffer also limited to the sides it has). */
static int promote(nv_pci_gpu *p, uint32_t client, uint32_t hsub, uint32_t hobject, const struct ctx_buf *const *which,
                   bg_nv_pci_mem *const *mem, unsigned n, bool phys, bool virt) {
  bg_nv2080_promote_ctx pc;
  memset(&pc, 0, sizeof pc);
  pc.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
  pc.hChanClient = client;
  pc.hObject = hobject;
  pc.entryCount = n;
  for (unsigned i = 0; i < n; i++) {
    bool ph = phys && which[i]->phys, vi = virt && which[i]->virt;
    bg_nv2080_promote_entry *e = &pc.promoteEntry[i];
    e->bufferId = which[i]->id;
    e->gpuVirtAddr = vi ? mem[i]->va : 0;
    e->gpuPhysAddr = ph ? mem[i]->vram_pa : 0;
    e->size = ph ? mem[i]->size : 0;
    e->physAttr = ph ? NV_PROMOTE_PHYS_ATTR_VIDMEM : 0;
    e->bInitialize = ph;
    e->bNonmapped = ph && !vi;
  }
  int e = rm_control(p, client, hsub, NV2080_CTRL_CMD_GPU_PROMOTE_CTX, &pc, sizeof pc);
  return e < 0 ? bg_error_context(e, "PROMOTE_CTX of %u buffers for channel 0x%x: ", n, hobject) : 0;
}

/* Every buffer of `bufs` in VRAM, sized from the KGR info. */
static int alloc_ctx(nv_pci_gpu *p, const struct ctx_buf *const *bufs, bg_nv_pci_mem **mem, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    uint64_t size = 0;
    int e = ctx_size(p, bufs[i], &size);
    if (e == 0) e = bg_nv_pci_keep(p, size, BG_NV_MEM_VRAM, &mem[i]);
    if (e < 0) return bg_error_context(e, "context buffer %u: ", bufs[i]->id);
  }
  return 0;
}

static int runlists(nv_pci_gpu *p) {
  bg_nv2080_fifo_device_info *di = calloc(1, sizeof *di);
  if (!di) return bg_error(BG_ENOMEM, "nv: out of host memory");
  int e = rm_control(p, p->d->client, p->d->hsubdevice, NV2080_CTRL_CMD_FIFO_GET_DEVICE_INFO_TABLE, di, sizeof *di);
  bool found = false;
  if (e == 0 && di->numEntries > 32)
    e = bg_error(BG_EIO, "nv: FIFO_GET_DEVICE_INFO_TABLE: numEntries %u (at most 32)", di->numEntries);
  for (uint32_t i = 0; e == 0 && i < di->numEntries && !found; i++)
    if (di->entries[i].engineData[NV2080_FIFO_ENGINE_DATA_RM_ENGINE_TYPE] == NV2080_ENGINE_TYPE_GRAPHICS) {
      p->runlist_gr = di->entries[i].engineData[NV2080_FIFO_ENGINE_DATA_RUNLIST];
      found = true;
    }
  free(di);
  if (e == 0 && !found) e = bg_error(BG_EIO, "nv: FIFO_GET_DEVICE_INFO_TABLE lists no GRAPHICS engine (RM engine type 1)");
  return e;
}

static int classes(nv_pci_gpu *p) {
  bg_nv0080_classlist_v2 cl;
  memset(&cl, 0, sizeof cl);
  int e = rm_control(p, p->d->client, p->d->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &cl, sizeof cl);
  if (e) return e;
  if (cl.numClasses == 0 || cl.numClasses > NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE)
    return bg_error(BG_EIO, "nv: GET_CLASSLIST_V2 reports %u classes (1..%u)", cl.numClasses,
                    NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE);
  return bg_nv_classes_select(cl.classList, cl.numClasses, &p->cls);
}

/* VASPACE_COPY_SERVER_RESERVED_PDES: a 512 MiB range of the driver's VA window whose tables (down to the level whose
 * entries span 512 MiB) GSP-RM gets. The tables are pinned in the driver's MMU; the VA is never handed out. */
static int reserved_pdes(nv_pci_gpu *p) {
  bg_nv_pci *d = p->d;
  uint64_t va;
  int e = bg_tlsf_alloc(d->va, RESERVED_PDE_SIZE, RESERVED_PDE_SIZE, &va);
  if (e < 0) return bg_error_context(e, "512 MiB of VA for GSP-RM's reserved PDEs: ");
  p->reserved_va = va;
  int levels = bg_nv_mmu_levels(d->mmu.ver) - 2; /* the tables above PDE0: their last level's entries span 512 MiB */
  uint64_t pa[6];
  unsigned shift[6];
  if ((e = bg_nv_mmu_table_path(&d->mmu, va, levels, pa, shift)) < 0) return e;
  if (shift[levels - 1] != 29)
    return bg_error(BG_EINVAL, "nv: reserved PDEs: the last level's entries span 2^%u bytes, not 512 MiB",
                    shift[levels - 1]);
  bg_nv90f1_copy_server_reserved_pdes r;
  memset(&r, 0, sizeof r);
  r.hSubDevice = d->hsubdevice;
  r.subDeviceId = 0;
  r.pageSize = RESERVED_PDE_SIZE;
  r.virtAddrLo = va;
  r.virtAddrHi = va + RESERVED_PDE_SIZE - 1;
  r.numLevelsToCopy = (uint32_t)levels;
  for (int l = 0; l < levels; l++) {
    r.levels[l].physAddress = pa[l];
    r.levels[l].size = l == 0 ? bg_nv_mmu_root_entries(d->mmu.ver) * 8ull : 0x1000u;
    r.levels[l].aperture = 1; /* video memory */
    r.levels[l].pageShift = (uint8_t)shift[l];
  }
  return rm_control(p, d->client, p->golden_vaspace, NV90F1_CTRL_CMD_VASPACE_COPY_SERVER_RESERVED_PDES, &r, sizeof r);
}

static bg_nv_memory_desc vidmem(uint64_t base, uint64_t size) {
  return (bg_nv_memory_desc){.base = base, .size = size, .addressSpace = NV_ADDRESS_SPACE_FBMEM};
}

/* RAMFC / instance block and method buffer of one channel, in VRAM. */
static int channel_memory(nv_pci_gpu *p, bg_nv_gsp_channel_alloc *c) {
  bg_nv_pci_mem *inst, *mthd;
  int e = bg_nv_pci_keep(p, INSTANCE_SIZE, BG_NV_MEM_VRAM, &inst);
  if (e == 0) e = bg_nv_pci_keep(p, MTHDBUF_SIZE, BG_NV_MEM_VRAM, &mthd);
  if (e < 0) return bg_error_context(e, "channel instance memory: ");
  c->ramfcMem = vidmem(inst->vram_pa, RAMFC_SIZE);
  c->instanceMem = vidmem(inst->vram_pa, INSTANCE_SIZE);
  c->mthdbufMem = vidmem(mthd->vram_pa, MTHDBUF_SIZE);
  return 0;
}

static int golden_channel(nv_pci_gpu *p) {
  bg_nv_pci_mem *ring;
  int e = bg_nv_pci_keep(p, 0x1000, BG_NV_MEM_VRAM, &ring);
  if (e < 0) return e;
  bg_nv_gsp_channel_alloc c;
  memset(&c, 0, sizeof c);
  c.gpFifoOffset = ring->va;
  c.gpFifoEntries = GOLDEN_GPFIFO_ENTRIES;
  c.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
  c.cid = NV_GOLDEN_CHANNEL_CID;
  c.hVASpace = p->golden_vaspace;
  c.userdOffset[0] = GOLDEN_USERD_OFFSET;
  c.userdMem = vidmem(ring->vram_pa + GOLDEN_USERD_OFFSET, 0x20);
  c.internalFlags = NV_GOLDEN_CHANNEL_INTERNAL_FLAGS;
  c.flags = NV_GOLDEN_CHANNEL_FLAGS;
  if ((e = channel_memory(p, &c)) < 0) return e;
  return rm_alloc(p, p->d->hdevice, p->cls.gpfifo, &c, sizeof c, &p->golden_channel);
}

int bg_nv_pci_golden(nv_gpu *g) {
  nv_pci_gpu *p = pg(g);
  bg_nv_pci *d = p->d;
  const char *part = "class list";
  int e = classes(p);
  if (e == 0) part = "runlists", e = runlists(p);
  if (e == 0) {
    part = "golden VA space";
    uint8_t va[48];
    memset(va, 0, sizeof va); /* RM's defaults, as tinygrad sends */
    e = rm_alloc(p, d->hdevice, FERMI_VASPACE_A, va, sizeof va, &p->golden_vaspace);
  }
  if (e == 0) part = "GSP-RM's reserved PDEs", e = reserved_pdes(p);
  if (e == 0) part = "golden channel", e = golden_channel(p);
  if (e == 0) {
    part = "KGR context buffer sizes";
    bg_nv2080_kgr_ctx_buffers_info *ci = calloc(1, sizeof *ci);
    if (!ci) e = bg_error(BG_ENOMEM, "nv: out of host memory");
    else if ((e = rm_control(p, d->client, d->hsubdevice, NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_CONTEXT_BUFFERS_INFO, ci,
                             sizeof *ci)) == 0)
      p->ctx_info = ci->engineContextBuffersInfo[0];
    free(ci);
  }
  if (e == 0) {
    part = "golden graphics context";
    const struct ctx_buf *which[NCTX_BUFS];
    bg_nv_pci_mem *mem[NCTX_BUFS];
    unsigned n = 0;
    for (size_t i = 0; i < NCTX_BUFS; i++)
      if (!CTX_BUFS[i].local) which[n++] = &CTX_BUFS[i];
    e = alloc_ctx(p, which, mem, n);
    if (e == 0) e = promote(p, d->client, d->hsubdevice, p->golden_channel, which, mem, n, true, true);
  }
  if (e == 0) part = "golden compute object", e = rm_alloc(p, p->golden_channel, p->cls.compute, NULL, 0, &p->golden_compute);
  if (e == 0) part = "golden copy object", e = rm_alloc(p, p->golden_channel, p->cls.copy, NULL, 0, &p->golden_copy);
  if (e < 0) return bg_error_context(e, "%s: golden context: %s: ", bg_pci_name(d->pci), part);
  BG_LOG(1, "%s: golden context: channel 0x%x (%s), GR runlist %u, reserved PDEs at VA 0x%" PRIx64, bg_pci_name(d->pci),
         p->golden_channel, bg_nv_class_name(p->cls.gpfifo) ? bg_nv_class_name(p->cls.gpfifo) : "GPFIFO", p->runlist_gr,
         p->reserved_va);
  return 0;
}

static void rm_free(nv_pci_gpu *p, uint32_t parent, uint32_t *h) {
  if (!*h) return;
  pthread_mutex_lock(&p->rpc_lock);
  int e = bg_nv_gsp_rm_free(&p->d->gsp, p->d->client, parent, *h);
  pthread_mutex_unlock(&p->rpc_lock);
  if (e < 0) BG_LOG(1, "%s: close: %s", bg_pci_name(p->d->pci), bg_last_error());
  *h = 0;
}

void bg_nv_pci_golden_fini(nv_gpu *g) {
  nv_pci_gpu *p = pg(g);
  if (!p || !p->d) return;
  rm_free(p, p->golden_channel, &p->golden_copy);
  rm_free(p, p->golden_channel, &p->golden_compute);
  rm_free(p, p->d->hdevice, &p->golden_channel);
  rm_free(p, p->d->hdevice, &p->golden_vaspace);
  for (unsigned i = 0; i < p->nbufs; i++) bg_nv_pci_free(p->d, &p->bufs[i]);
  p->nbufs = 0;
}

int bg_nv_pci_channel_params(nv_gpu *g, uint64_t ring_va, uint32_t entries, uint64_t userd_off, uint64_t userd_pa,
                             uint32_t hctxshare, bg_nv_gsp_channel_alloc *c) {
  memset(c, 0, sizeof *c);
  c->gpFifoOffset = ring_va;
  c->gpFifoEntries = entries;
  c->hContextShare = hctxshare;
  c->userdOffset[0] = userd_off; /* within the GPFIFO area, as on the ioctl path; GSP-RM takes USERD from userdMem */
  c->engineType = 0;
  c->userdMem = vidmem(userd_pa, USERD_SIZE);
  c->errorNotifierMem = (bg_nv_memory_desc){0}; /* no notifier: faults reach the host as GSP events */
  return channel_memory(pg(g), c);
}

int bg_nv_pci_promote_compute(nv_gpu *g, uint32_t hchannel) {
  nv_pci_gpu *p = pg(g);
  const struct ctx_buf *which[3] = {&CTX_BUFS[0], &CTX_BUFS[1], &CTX_BUFS[2]};
  bg_nv_pci_mem *mem[3];
  int e = alloc_ctx(p, which, mem, 3);
  if (e == 0) e = promote(p, g->rm.root, g->hsubdevice, hchannel, which, mem, 3, true, false);
  if (e == 0) e = promote(p, g->rm.root, g->hsubdevice, hchannel, which, mem, 3, false, true);
  return e;
}

uint32_t bg_nv_pci_token(const nv_gpu *g, uint32_t chid) {
  const nv_pci_gpu *p = pg(g);
  bool gb = p->cls.generation && strcmp(p->cls.generation, "Blackwell") == 0;
  return (chid & 0xffffu) | (p->runlist_gr << 16) | (gb ? 1u << 30 : 0);
}
