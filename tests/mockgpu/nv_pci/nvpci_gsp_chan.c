/* tests/mockgpu/nv_pci/nvpci_gsp_chan.c: the GSP-RM model's channel object graph: NV01_MEMORY_VIRTUAL,
 * KEPLER_CHANNEL_GROUP_A (TSG), FERMI_CONTEXT_SHARE_A, the GPFIFO classes, the compute / DMA copy engine objects,
 * GT200_DEBUGGER, and the controls a bare-metal driver sends for them (COPY_SERVER_RESERVED_PDES,
 * KGR_GET_CONTEXT_BUFFERS_INFO, PROMOTE_CTX, PERF_BOOST, GET_WORK_SUBMIT_TOKEN, GPFIFO_SCHEDULE).
 *
 * Layouts (open-gpu-kernel-modules 570: nvos.h / alloc/alloc_channel.h NV_CHANNEL_ALLOC_PARAMS 368 B with
 * NV_MEMORY_DESC_PARAMS {base u64, size u64, addressSpace u32, cacheAttrib u32}; cla06c.h
 * NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS 20 B; cl9067.h NV_CTXSHARE_ALLOCATION_PARAMETERS 12 B; cl0070.h
 * NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS 24 B; cl83de.h NV83DE_ALLOC_PARAMETERS 12 B; ctrl90f1.h
 * NV90F1_CTRL_VASPACE_COPY_SERVER_RESERVED_PDES_PARAMS 184 B; ctrl2080internal.h
 * NV2080_CTRL_INTERNAL_STATIC_KGR_GET_CONTEXT_BUFFERS_INFO_PARAMS 8 engines x 26 {size, alignment}; ctrl2080gpu.h
 * NV2080_CTRL_GPU_PROMOTE_CTX_PARAMS 560 B, 16 entries of 32 B; ctrl2080perf.h NV2080_CTRL_PERF_BOOST_PARAMS 8 B;
 * ctrlc36f.h NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS 4 B; ctrla06c.h NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS
 * 2 B), as tinygrad's generated tinygrad/runtime/autogen/nv_570.py lays them out; the object graph and values as
 * tinygrad's bare-metal path sends them (tinygrad/runtime/support/nv/ip.py NV_GSP.init_golden_image, rpc_rm_alloc).
 *
 * On this path there are no RM memory objects: a GPFIFO names its memory by NV_MEMORY_DESC_PARAMS (VRAM, address space
 * 2 = ADDR_FBMEM), so any memory handle (hObjectError, hObjectBuffer, hUserdMemory[], hObjectEccError) names nothing
 * -> NV_ERR_INVALID_OBJECT_HANDLE. Statuses otherwise as RM's resserv gives them (wrong parent class
 * NV_ERR_INVALID_OBJECT_PARENT, params size NV_ERR_INVALID_ARGUMENT, a handle that is not the object it must be
 * NV_ERR_INVALID_OBJECT_HANDLE, a bad value NV_ERR_INVALID_ARGUMENT, no channel id left NV_ERR_NO_FREE_FIFOS; a control
 * of another class NV_ERR_NOT_SUPPORTED, its size NV_ERR_INVALID_PARAM_STRUCT). The model's own stricter rules: one
 * compute and one copy object per channel (a second -> NV_ERR_INVALID_STATE), PROMOTE_CTX naming no channel of
 * hChanClient -> NV_ERR_INVALID_CHANNEL. */
#include <stdio.h>
#include <stdlib.h>

#include "nvpci_gsp_internal.h"

enum {
  CLS_DEVICE = 0x80, CLS_SUBDEVICE = 0x2080, CLS_VASPACE = 0x90f1, CLS_MEMORY_VIRTUAL = 0x70, CLS_TSG = 0xa06c,
  CLS_CTXSHARE = 0x9067, CLS_DEBUGGER = 0x83de,
};
enum {
  CTRL_COPY_SERVER_RESERVED_PDES = 0x90f10106, CTRL_KGR_CTX_BUFFERS_INFO = 0x20800a32, CTRL_PROMOTE_CTX = 0x2080012b,
  CTRL_PERF_BOOST = 0x2080200a, CTRL_WORK_SUBMIT_TOKEN = 0xc36f0108, CTRL_TSG_SCHEDULE = 0xa06c0101,
};
enum { NV_ERR_NO_FREE_FIFOS = 0x4f, ADDR_FBMEM = 2, GMMU_APERTURE_VIDEO = 1, PROMOTE_MAX_ENTRIES = 16 };
/* NV2080_CTRL_GPU_PROMOTE_CTX_BUFFER_ID_MAIN 0 .. GLOBAL_PRIV_ACCESS_MAP 12 */
enum { PROMOTE_BUFFER_IDS = 13, PROMOTE_NEEDED = 0x7 /* MAIN, PM, PATCH: what a compute launch needs */ };

typedef enum { K_NONE, K_GPFIFO, K_COMPUTE, K_COPY } chip_kind;

/* The chip's class list names the GPFIFO (..6f), compute (..c0) and DMA copy (..b5) classes (g_gpu_class_list.c). */
static chip_kind kind_of(const nvpci_gsp *s, uint32_t cls) {
  for (size_t i = 0; s->chip && i < 8 && s->chip->classes[i]; i++)
    if (s->chip->classes[i] == cls) {
      uint32_t lo = cls & 0xff;
      return lo == 0x6f ? K_GPFIFO : lo == 0xc0 ? K_COMPUTE : lo == 0xb5 ? K_COPY : K_NONE;
    }
  return K_NONE;
}

bool gspm_chan_class(const nvpci_gsp *s, uint32_t cls) {
  return cls == CLS_MEMORY_VIRTUAL || cls == CLS_TSG || cls == CLS_CTXSHARE || cls == CLS_DEBUGGER ||
         kind_of(s, cls) != K_NONE;
}

static gspm_obj *obj_of(nvpci_gsp *s, uint32_t hc, uint32_t h, uint32_t cls) {
  gspm_obj *o = gspm_rm_find(s, hc, h);
  return o && o->cls == cls ? o : NULL;
}

/* A VRAM range [base, base + size) of a memory descriptor. */
static bool in_vram(nvpci_gsp *s, uint64_t base, uint64_t size) {
  uint64_t vram = 0;
  nvpci_vram(s->g, &vram);
  return size && base < vram && size <= vram - base;
}
/* NV_MEMORY_DESC_PARAMS at d: FBMEM, the size wanted (0: any nonzero), in VRAM, aligned. */
static bool desc_ok(nvpci_gsp *s, const uint8_t *d, uint64_t size, uint64_t align) {
  uint64_t base = gspm_g64(d, 0), sz = gspm_g64(d, 8);
  return gspm_g32(d, 16) == ADDR_FBMEM && (!size || sz == size) && in_vram(s, base, sz) && !(base & (align - 1));
}

static gspm_chan *chan_of(nvpci_gsp *s, const gspm_obj *o) {
  return o && o->chan && s->chan[o->chan - 1].used ? &s->chan[o->chan - 1] : NULL;
}

/* NV_CHANNEL_ALLOC_PARAMS (offsets in the file comment's header): under a TSG (its FERMI_CONTEXT_SHARE_A names the VA
 * space) or under the device (hVASpace names it). */
static uint32_t alloc_gpfifo(nvpci_gsp *s, uint32_t hc, uint32_t ho, uint32_t cls, gspm_obj *parent, const uint8_t *p,
                             uint32_t psize) {
  if (psize != 368) return GSPM_ERR_INVALID_ARGUMENT;
  if (parent->cls != CLS_TSG && parent->cls != CLS_DEVICE) return GSPM_ERR_INVALID_OBJECT_PARENT;
  /* memory handles: hObjectError @0, hObjectBuffer @4, hUserdMemory[8] @32, hObjectEccError @140 */
  bool handles = gspm_g32(p, 0) || gspm_g32(p, 4) || gspm_g32(p, 140);
  for (int i = 0; i < 8; i++) handles |= gspm_g32(p, 32 + 4 * (size_t)i) != 0;
  if (handles) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  uint64_t ring_va = gspm_g64(p, 8);
  uint32_t entries = gspm_g32(p, 16), hshare = gspm_g32(p, 24), hva = gspm_g32(p, 28), eng = gspm_g32(p, 128);
  if (entries < 2 || (entries & (entries - 1)) || !ring_va || (ring_va & 7)) return GSPM_ERR_INVALID_ARGUMENT;
  /* instanceMem @144 (4 KiB, 4 KiB aligned), userdMem @168, ramfcMem @192 (0x200), mthdbufMem @216, errorNotifierMem
   * @248 (address space 0: none) */
  const uint8_t *err = p + 248;
  if (!desc_ok(s, p + 144, 0x1000, 0x1000) || !desc_ok(s, p + 168, 0, 8) || gspm_g64(p + 168, 8) > 0x1000 ||
      !desc_ok(s, p + 192, 0x200, 8) || !desc_ok(s, p + 216, 0, 8) ||
      (gspm_g32(err, 16) != 0 && !desc_ok(s, err, 0, 8)))
    return GSPM_ERR_INVALID_ARGUMENT;
  uint32_t tsg = 0;
  if (parent->cls == CLS_TSG) {
    gspm_obj *share = obj_of(s, hc, hshare, CLS_CTXSHARE);
    if (!share || share->parent != parent->handle) return GSPM_ERR_INVALID_OBJECT_HANDLE;
    if (eng && eng != parent->engine_type) return GSPM_ERR_INVALID_ARGUMENT;
    eng = parent->engine_type;
    tsg = parent->handle;
  } else {
    gspm_obj *va = obj_of(s, hc, hva, CLS_VASPACE);
    if (!va || va->parent != parent->handle) return GSPM_ERR_INVALID_OBJECT_HANDLE;
    if (hshare) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  }
  int runlist = gspm_engine_runlist(eng);
  if (runlist < 0) return GSPM_ERR_INVALID_ARGUMENT;
  /* the lowest channel id free on the runlist */
  uint64_t ids = 0;
  int slot = -1;
  for (int i = 0; i < GSPM_MAX_CHANNELS; i++) {
    if (s->chan[i].used && s->chan[i].runlist == (uint32_t)runlist) ids |= 1ull << s->chan[i].chid;
    if (!s->chan[i].used && slot < 0) slot = i;
  }
  if (slot < 0 || ids == ~0ull) return NV_ERR_NO_FREE_FIFOS;
  uint32_t chid = 0;
  while (ids >> chid & 1) chid++;
  gspm_obj *o = gspm_rm_add(s, hc, ho, parent->handle, cls);
  if (!o) return GSPM_ERR_NO_MEMORY;
  gspm_chan *c = &s->chan[slot];
  uint64_t userd = gspm_g64(p + 168, 0), userd_size = gspm_g64(p + 168, 8);
  *c = (gspm_chan){.used = true, .client = hc, .handle = ho, .cls = cls, .tsg = tsg, .engine_type = eng,
                   .runlist = (uint32_t)runlist, .chid = chid, .ring_va = ring_va, .userd_pa = userd,
                   .entries = entries};
  o->chan = (unsigned)slot + 1;
  uint8_t *vram = nvpci_vram(s->g, NULL);
  if (userd_size >= 0x90) memset(vram + userd + 0x88, 0, 8); /* GPGet, GPPut */
  gspm_exec_chan_start(s, c);
  return GSPM_OK;
}

/* A compute or DMA copy object under a GPFIFO channel: NV_GR_ALLOCATION_PARAMETERS (16 B) / NVB0B5_ALLOCATION_PARAMETERS
 * (8 B) optional. */
static uint32_t alloc_engine(nvpci_gsp *s, uint32_t hc, uint32_t ho, uint32_t cls, chip_kind k, gspm_obj *parent,
                             uint32_t psize) {
  if (psize && psize != (k == K_COMPUTE ? 16u : 8u)) return GSPM_ERR_INVALID_ARGUMENT;
  gspm_chan *c = kind_of(s, parent->cls) == K_GPFIFO ? chan_of(s, parent) : NULL;
  if (!c) return GSPM_ERR_INVALID_OBJECT_PARENT;
  uint32_t *slot = k == K_COMPUTE ? &c->compute_obj : &c->copy_obj;
  if (*slot) return GSPM_ERR_INVALID_STATE;
  if (!gspm_rm_add(s, hc, ho, parent->handle, cls)) return GSPM_ERR_NO_MEMORY;
  *slot = ho;
  if (!c->x.cls_engine) c->x.cls_engine = cls;
  return GSPM_OK;
}

uint32_t gspm_chan_alloc(nvpci_gsp *s, uint32_t hc, uint32_t hp, uint32_t ho, uint32_t cls, gspm_obj *parent,
                         uint8_t *p, uint32_t psize) {
  (void)hp;
  chip_kind k = kind_of(s, cls);
  if (k == K_GPFIFO) return alloc_gpfifo(s, hc, ho, cls, parent, p, psize);
  if (k != K_NONE) return alloc_engine(s, hc, ho, cls, k, parent, psize);
  uint32_t want = cls == CLS_MEMORY_VIRTUAL ? 24 : cls == CLS_TSG ? 20 : 12;
  uint32_t want_parent = cls == CLS_CTXSHARE ? CLS_TSG : CLS_DEVICE;
  if (psize != want) return GSPM_ERR_INVALID_ARGUMENT;
  if (parent->cls != want_parent) return GSPM_ERR_INVALID_OBJECT_PARENT;
  gspm_obj *dev = cls == CLS_CTXSHARE ? gspm_rm_find(s, hc, parent->parent) : parent;
  uint32_t engine_type = 0;
  if (cls == CLS_MEMORY_VIRTUAL || cls == CLS_TSG || cls == CLS_CTXSHARE) {
    /* hVASpace: NV_MEMORY_VIRTUAL @16 (0: the device's default), TSG @8 (0: none), ctxshare @0 (required) */
    uint32_t hva = gspm_g32(p, cls == CLS_MEMORY_VIRTUAL ? 16 : cls == CLS_TSG ? 8 : 0);
    gspm_obj *va = hva ? obj_of(s, hc, hva, CLS_VASPACE) : NULL;
    if ((hva || cls == CLS_CTXSHARE) && (!va || !dev || va->parent != dev->handle))
      return GSPM_ERR_INVALID_OBJECT_HANDLE;
  }
  if (cls == CLS_TSG) {
    /* hObjectError @0, hObjectEccError @4: no memory objects; engineType @12: an engine of the device-info table */
    if (gspm_g32(p, 0) || gspm_g32(p, 4)) return GSPM_ERR_INVALID_OBJECT_HANDLE;
    engine_type = gspm_g32(p, 12);
    if (gspm_engine_runlist(engine_type) < 0) return GSPM_ERR_INVALID_ARGUMENT;
  }
  if (cls == CLS_CTXSHARE) {
    /* flags SUBCONTEXT 1:0 (SYNC 0, ASYNC 1, SPECIFIED 2, ASYNC_PREFER_LOWER 3); subctxId @8 comes back */
    uint32_t n = 0;
    for (gspm_obj *o = s->objs; o; o = o->next) n += o->client == hc && o->parent == parent->handle && o->cls == cls;
    if ((gspm_g32(p, 4) & 3) == 2 && gspm_g32(p, 8) >= 64) return GSPM_ERR_INVALID_ARGUMENT;
    if ((gspm_g32(p, 4) & 3) != 2) gspm_p32(p, 8, n);
  }
  if (cls == CLS_DEBUGGER) {
    /* hAppClient @4 a client, hClass3dObject @8 its compute object */
    uint32_t app = gspm_g32(p, 4);
    if (!gspm_rm_client(s, app)) return GSPM_ERR_INVALID_CLIENT;
    gspm_obj *obj = gspm_rm_find(s, app, gspm_g32(p, 8));
    if (!obj || kind_of(s, obj->cls) != K_COMPUTE) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  }
  gspm_obj *o = gspm_rm_add(s, hc, ho, parent->handle, cls);
  if (!o) return GSPM_ERR_NO_MEMORY;
  o->engine_type = engine_type;
  return GSPM_OK;
}

void gspm_chan_freed(nvpci_gsp *s, const gspm_obj *o) {
  gspm_chan *c = chan_of(s, o);
  if (c) {
    memset(c, 0, sizeof *c); /* serial 0: a kernel running on it finds it gone */
    return;
  }
  for (int i = 0; i < GSPM_MAX_CHANNELS; i++) {
    c = &s->chan[i];
    if (!c->used || c->client != o->client || o->parent != c->handle) continue;
    if (c->compute_obj == o->handle) c->compute_obj = 0;
    if (c->copy_obj == o->handle) c->copy_obj = 0;
    if (c->x.cls_engine == o->cls) {
      gspm_obj *other = gspm_rm_find(s, c->client, c->compute_obj ? c->compute_obj : c->copy_obj);
      c->x.cls_engine = other ? other->cls : 0;
    }
  }
}

/* ---- controls ---- */

/* NV90F1_CTRL_VASPACE_COPY_SERVER_RESERVED_PDES_PARAMS: hSubDevice @0, subDeviceId @4, pageSize @8, virtAddrLo @16,
 * virtAddrHi @24, numLevelsToCopy @32, levels[6] @40 of 24 B {physAddress @0, size @8, aperture @16, pageShift u8 @20}.
 * Level i is the i-th table from the root; its pageShift is what one of its entries covers in the chip's format
 * (v2: 47, 38, 29; v3: 56, 47, 38, 29; open-gpu-kernel-modules hopper dev_mmu.h / mmu_fmt v2 and v3), down to the level
 * whose entries cover pageSize; the root's table is its entry count x 8 B, the others 4 KiB. */
static uint32_t copy_server_pdes(nvpci_gsp *s, uint32_t hc, uint8_t *p) {
  static const uint8_t SHIFT_V2[] = {47, 38, 29, 21}, SHIFT_V3[] = {56, 47, 38, 29, 21};
  bool v3 = s->chip->mmu_ver == 3;
  const uint8_t *shift = v3 ? SHIFT_V3 : SHIFT_V2;
  unsigned nshift = v3 ? 5 : 4, root_entries = v3 ? 2 : 4;
  uint32_t hsub = gspm_g32(p, 0), n = gspm_g32(p, 32);
  uint64_t page = gspm_g64(p, 8), lo = gspm_g64(p, 16), hi = gspm_g64(p, 24);
  if (hsub && !obj_of(s, hc, hsub, CLS_SUBDEVICE)) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  if (gspm_g32(p, 4) > 1 || !page || (page & (page - 1)) || (lo & (page - 1)) || hi != lo + page - 1)
    return GSPM_ERR_INVALID_ARGUMENT;
  unsigned reach = 0; /* levels whose entries cover at least pageSize */
  while (reach < nshift && (1ull << shift[reach]) >= page) reach++;
  if (n < 1 || n > 6 || n > reach) return GSPM_ERR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *l = p + 40 + 24 * (size_t)i;
    uint64_t pa = gspm_g64(l, 0), size = gspm_g64(l, 8);
    if (size != (i == 0 ? 8ull * root_entries : 0x1000) || !in_vram(s, pa, size) || (pa & 0xff) ||
        gspm_g32(l, 16) != GMMU_APERTURE_VIDEO || l[20] != shift[i])
      return GSPM_ERR_INVALID_ARGUMENT;
  }
  return GSPM_OK;
}

/* engineContextBuffersInfo[8].engine[26] {size, alignment}: the GR engine's context buffers by
 * NV0080_CTRL_FIFO_GET_ENGINE_CONTEXT_PROPERTIES_ENGINE_ID_* (GRAPHICS 0, GRAPHICS_PATCH 0x10, BUNDLE_CB 0x11,
 * PAGEPOOL_GLOBAL 0x12, ATTRIBUTE_CB 0x13, RTV_CB_GLOBAL 0x14, GFXP_POOL 0x15, GFXP_CTRL_BLK 0x16, FECS_EVENT 0x17,
 * PRIV_ACCESS_MAP 0x18), sizes of the order
 * an Ampere-class GR reports. */
typedef struct {
  uint32_t id, size, align;
} ctx_buffer;
static const ctx_buffer CTX_BUFFERS[] = {
    {0x00, 0x1a0000, 0x1000}, {0x10, 0x20000, 0x1000}, {0x11, 0x30000, 0x100}, {0x12, 0x80000, 0x1000},
    {0x13, 0x100000, 0x1000}, {0x14, 0x48000, 0x1000}, {0x15, 0x1000, 0x1000}, {0x16, 0x1000, 0x1000},
    {0x17, 0x8000, 0x1000}, {0x18, 0x2000, 0x1000},
};
static uint32_t ctx_size(uint32_t id) {
  for (size_t i = 0; i < sizeof CTX_BUFFERS / sizeof CTX_BUFFERS[0]; i++)
    if (CTX_BUFFERS[i].id == id) return CTX_BUFFERS[i].size;
  return 0;
}
static uint32_t ctx_buffers_info(uint8_t *p) {
  memset(p, 0, 1664);
  for (size_t i = 0; i < sizeof CTX_BUFFERS / sizeof CTX_BUFFERS[0]; i++) {
    gspm_p32(p, 8 * (size_t)CTX_BUFFERS[i].id, CTX_BUFFERS[i].size);
    gspm_p32(p, 8 * (size_t)CTX_BUFFERS[i].id + 4, CTX_BUFFERS[i].align);
  }
  return GSPM_OK;
}

/* NV2080_CTRL_GPU_PROMOTE_CTX_PARAMS: engineType @0, hClient @4, ChID @8, hChanClient @12, hObject @16, hVirtMemory
 * @20, virtAddress @24, size @32, entryCount @40, promoteEntry[16] @48 of 32 B {gpuPhysAddr @0, gpuVirtAddr @8, size
 * @16, physAttr @24, bufferId u16 @28, bInitialize u8 @30, bNonmapped u8 @31}. A physical entry names VRAM at least
 * the buffer's size (MAIN: the GRAPHICS context); a virtual one a nonzero, 4 KiB aligned VA. */
static uint32_t promote_ctx(nvpci_gsp *s, uint8_t *p) {
  uint32_t eng = gspm_g32(p, 0), hcc = gspm_g32(p, 12), n = gspm_g32(p, 40);
  if (!gspm_rm_client(s, hcc)) return GSPM_ERR_INVALID_CLIENT;
  gspm_obj *o = gspm_rm_find(s, hcc, gspm_g32(p, 16));
  gspm_chan *c = o && kind_of(s, o->cls) == K_GPFIFO ? chan_of(s, o) : NULL;
  if (!c) return GSPM_ERR_INVALID_CHANNEL;
  if (eng != 1 /* NV2080_ENGINE_TYPE_GR0 */ || c->runlist != (uint32_t)gspm_engine_runlist(eng) || n < 1 ||
      n > PROMOTE_MAX_ENTRIES)
    return GSPM_ERR_INVALID_ARGUMENT;
  uint32_t phys = 0, virt = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *e = p + 48 + 32 * (size_t)i;
    uint64_t pa = gspm_g64(e, 0), va = gspm_g64(e, 8), size = gspm_g64(e, 16);
    uint32_t id = (uint32_t)e[28] | (uint32_t)e[29] << 8;
    if (id >= PROMOTE_BUFFER_IDS || (!pa && !va)) return GSPM_ERR_INVALID_ARGUMENT;
    if (pa && (!in_vram(s, pa, size) || (pa & 0xfff) || (id == 0 && size < ctx_size(0)))) return GSPM_ERR_INVALID_ARGUMENT;
    if (va && (va & 0xfff)) return GSPM_ERR_INVALID_ARGUMENT;
    if (pa) phys |= 1u << id;
    if (va) virt |= 1u << id;
  }
  c->prom_phys |= phys;
  c->prom_virt |= virt;
  return GSPM_OK;
}

typedef struct {
  uint32_t cmd, size;
} ctrl_size;
static const ctrl_size SIZES[] = {
    {CTRL_COPY_SERVER_RESERVED_PDES, 184}, {CTRL_KGR_CTX_BUFFERS_INFO, 1664}, {CTRL_PROMOTE_CTX, 560},
    {CTRL_PERF_BOOST, 8}, {CTRL_WORK_SUBMIT_TOKEN, 4}, {CTRL_TSG_SCHEDULE, 2},
};

bool gspm_chan_control(nvpci_gsp *s, uint32_t hc, gspm_obj *o, uint32_t cmd, uint8_t *p, uint32_t size, uint32_t *st) {
  const ctrl_size *r = NULL;
  for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++)
    if (SIZES[i].cmd == cmd) r = &SIZES[i];
  if (!r) return false;
  /* the class exporting each control */
  bool cls_ok = cmd == CTRL_COPY_SERVER_RESERVED_PDES ? o->cls == CLS_VASPACE
                : cmd == CTRL_WORK_SUBMIT_TOKEN      ? kind_of(s, o->cls) == K_GPFIFO
                : cmd == CTRL_TSG_SCHEDULE           ? o->cls == CLS_TSG
                                                     : o->cls == CLS_SUBDEVICE;
  *st = !cls_ok ? GSPM_ERR_NOT_SUPPORTED : size != r->size ? GSPM_ERR_INVALID_PARAM_STRUCT : GSPM_OK;
  if (*st) return true;
  gspm_chan *c = chan_of(s, o);
  switch (cmd) {
  case CTRL_COPY_SERVER_RESERVED_PDES: *st = copy_server_pdes(s, hc, p); break;
  case CTRL_KGR_CTX_BUFFERS_INFO: *st = ctx_buffers_info(p); break;
  case CTRL_PROMOTE_CTX: *st = promote_ctx(s, p); break;
  case CTRL_PERF_BOOST: *st = GSPM_OK; break; /* flags, duration: the clocks are the model's own */
  case CTRL_WORK_SUBMIT_TOKEN:                /* GSP-RM returns the channel id only (ip.py rpc_rm_control) */
    if (!c) *st = GSPM_ERR_INVALID_CHANNEL;
    else gspm_p32(p, 0, c->chid);
    break;
  case CTRL_TSG_SCHEDULE: o->scheduled = p[0] != 0; break; /* bEnable @0, bSkipSubmit @1 */
  default: *st = GSPM_ERR_NOT_SUPPORTED; break;
  }
  return true;
}
