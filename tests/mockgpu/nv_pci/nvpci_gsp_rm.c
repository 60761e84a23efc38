/* tests/mockgpu/nv_pci/nvpci_gsp_rm.c: RM of the GSP-RM model, reached over RPC (GSP_RM_ALLOC, GSP_RM_CONTROL, FREE).
 *
 * Its own small object table rather than the MOCKNVK one (tests/mockgpu/nv/mock_nv_rm.c): that table is the kernel
 * module's process-wide state (nvm_S, its lock, memfd-backed memory, fds, the configured Hopper/Ada config) with the
 * 580 escape layouts whose parameters are user pointers; the RPC carries 570 parameters inline, per GPU.
 *
 * Statuses as RM gives them (open-gpu-kernel-modules 570.133.20): a class RM does not know -> NV_ERR_INVALID_CLASS
 * (resource_desc.c rmapiGetClassAllocParamSize), alloc params of the wrong size -> NV_ERR_INVALID_ARGUMENT
 * (param_copy.c), an unknown client -> NV_ERR_INVALID_CLIENT, a parent missing or of the wrong class ->
 * NV_ERR_INVALID_OBJECT_PARENT, a handle in use -> NV_ERR_INSERT_DUPLICATE_NAME (resserv); controls: unknown object ->
 * NV_ERR_INVALID_OBJECT_HANDLE, a control the class does not export -> NV_ERR_NOT_SUPPORTED, a paramsSize other than
 * the control's -> NV_ERR_INVALID_PARAM_STRUCT (rs_resource.c resControlLookup). */
#include <stdio.h>
#include <stdlib.h>

#include "nvpci_gsp_internal.h"

enum {
  CLS_ROOT = 0x0, CLS_ROOT_CLIENT = 0x41, CLS_DEVICE = 0x80, CLS_SUBDEVICE = 0x2080, CLS_VASPACE = 0x90f1,
  CLS_MEMORY_VIRTUAL = 0x70, CLS_TSG = 0xa06c, CLS_CTXSHARE = 0x9067, CLS_TURING_USERMODE_A = 0xc461,
};
enum {
  CTRL_CLASSLIST = 0x800201, CTRL_CLASSLIST_V2 = 0x800292, CTRL_DEVICE_INFO_TABLE = 0x20801112,
  CTRL_KGR_GET_INFO = 0x20800a2a, CTRL_GID_INFO = 0x2080014a,
};
#define NV_ERR_INVALID_POINTER 0x3du
#define RS_UNIQUE_HANDLE_BASE 0xcaf00000u

/* g_gpu_class_list.c (engine classes the bare-metal path uses) and SM versions (sm_86 0x806, sm_89 0x809, sm_90 0x900, GB20x 0xa04). */
static const gspm_chip CHIPS[] = {
    {"ga102", 0x88000, 0x806, 48, 2, {0xc56f, 0xc7c0, 0xc7b5}, 0xc7c0, 0xc7b5, 3},
    {"ad102", 0x88000, 0x809, 48, 2, {0xc56f, 0xc9c0, 0xc7b5}, 0xc9c0, 0xc7b5, 3},
    {"gh100", 0x92000, 0x900, 64, 3, {0xc56f, 0xc86f, 0xcbc0, 0xc8b5, 0xc661}, 0xcbc0, 0xc8b5, 4},
    {"gb202", 0x92000, 0xa04, 48, 3, {0xc56f, 0xc86f, 0xc96f, 0xcec0, 0xcab5, 0xc661}, 0xcec0, 0xcab5, 5},
};

const gspm_chip *gspm_chip_find(const char *name) {
  for (size_t i = 0; name && i < sizeof CHIPS / sizeof CHIPS[0]; i++)
    if (strcmp(CHIPS[i].name, name) == 0) return &CHIPS[i];
  return NULL;
}

static gspm_obj *find(nvpci_gsp *s, uint32_t client, uint32_t handle) {
  for (gspm_obj *o = s->objs; o; o = o->next)
    if (o->client == client && o->handle == handle) return o;
  return NULL;
}
static bool is_root(uint32_t cls) { return cls == CLS_ROOT || cls == CLS_ROOT_CLIENT; }
static gspm_obj *client_of(nvpci_gsp *s, uint32_t h) {
  gspm_obj *c = find(s, h, h);
  return c && is_root(c->cls) ? c : NULL;
}
gspm_obj *gspm_rm_find(nvpci_gsp *s, uint32_t client, uint32_t handle) { return find(s, client, handle); }
gspm_obj *gspm_rm_client(nvpci_gsp *s, uint32_t handle) { return client_of(s, handle); }

/* Class rules: parent class, params size (570 cl0000.h, cl0080.h, cl2080.h, nvos.h) and whether they may be absent. */
typedef struct {
  uint32_t cls, parent, size;
  bool optional;
} class_rule;
static const class_rule RULES[] = {
    {CLS_ROOT, 0, 120, true},           /* NV0000_ALLOC_PARAMETERS */
    {CLS_ROOT_CLIENT, 0, 120, true},
    {CLS_DEVICE, CLS_ROOT, 56, false},   /* NV0080_ALLOC_PARAMETERS */
    {CLS_SUBDEVICE, CLS_DEVICE, 4, true}, /* NV2080_ALLOC_PARAMETERS */
    {CLS_VASPACE, CLS_DEVICE, 48, true},  /* NV_VASPACE_ALLOCATION_PARAMETERS */
};

static const class_rule *rule_of(uint32_t cls) {
  for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
    if (RULES[i].cls == cls) return &RULES[i];
  return NULL;
}

gspm_obj *gspm_rm_add(nvpci_gsp *s, uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls) {
  gspm_obj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  *o = (gspm_obj){.next = s->objs, .client = client, .handle = handle, .parent = parent, .cls = cls};
  s->objs = o;
  return o;
}

/* rpc_gsp_rm_alloc_v03_00: hClient @0, hParent @4, hObject @8, hClass @12, status @16, paramsSize @20, flags @24,
 * params @32. */
static uint32_t alloc(nvpci_gsp *s, uint8_t *p, size_t n) {
  uint32_t hc = gspm_g32(p, 0), hp = gspm_g32(p, 4), ho = gspm_g32(p, 8), cls = gspm_g32(p, 12);
  uint32_t psize = gspm_g32(p, 20);
  const uint8_t *prm = p + 32;
  (void)n;
  const class_rule *r = rule_of(cls);
  bool chan_graph = !r && gspm_chan_class(s, cls);
  if (!r && !chan_graph) return GSPM_ERR_INVALID_CLASS;
  if (r && (psize ? psize != r->size : !r->optional)) return GSPM_ERR_INVALID_ARGUMENT;
  if (is_root(cls)) {
    if (ho == 0 || hc != ho) return GSPM_ERR_INVALID_OBJECT_HANDLE; /* the host names its client */
    for (gspm_obj *o = s->objs; o; o = o->next)
      if (is_root(o->cls) && o->handle == ho) return GSPM_ERR_INSERT_DUPLICATE_NAME;
    return gspm_rm_add(s, ho, ho, 0, cls) ? GSPM_OK : GSPM_ERR_NO_MEMORY;
  }
  if (!client_of(s, hc)) return GSPM_ERR_INVALID_CLIENT;
  gspm_obj *parent = find(s, hc, hp);
  if (chan_graph && !parent) return GSPM_ERR_INVALID_OBJECT_PARENT;
  if (!chan_graph && (!parent || (r->parent == CLS_ROOT ? !is_root(parent->cls) : parent->cls != r->parent)))
    return GSPM_ERR_INVALID_OBJECT_PARENT;
  if (ho == 0) { /* RM picks the handle (serverAllocResource) */
    ho = RS_UNIQUE_HANDLE_BASE;
    while (find(s, hc, ho)) ho++;
    gspm_p32(p, 8, ho);
  } else if (find(s, hc, ho)) {
    return GSPM_ERR_INSERT_DUPLICATE_NAME;
  }
  if (chan_graph) return gspm_chan_alloc(s, hc, hp, ho, cls, parent, p + 32, psize);
  if (cls == CLS_DEVICE && gspm_g32(prm, 0) != 0) return GSPM_ERR_INVALID_ARGUMENT; /* deviceId: one GPU */
  if (cls == CLS_SUBDEVICE && psize && gspm_g32(prm, 0) != 0) return GSPM_ERR_INVALID_ARGUMENT; /* subDeviceId */
  if (cls == CLS_DEVICE) /* one device per client and GPU */
    for (gspm_obj *o = s->objs; o; o = o->next)
      if (o->client == hc && o->cls == CLS_DEVICE) return GSPM_ERR_INVALID_STATE;
  if (cls == CLS_SUBDEVICE)
    for (gspm_obj *o = s->objs; o; o = o->next)
      if (o->client == hc && o->parent == hp && o->cls == CLS_SUBDEVICE) return GSPM_ERR_INVALID_STATE;
  return gspm_rm_add(s, hc, ho, hp, cls) ? GSPM_OK : GSPM_ERR_NO_MEMORY;
}

uint32_t gspm_rm_alloc(nvpci_gsp *s, uint8_t *p, size_t n) {
  uint32_t st = n >= 32 ? alloc(s, p, n) : GSPM_ERR_INVALID_ARGUMENT;
  if (n >= 32) gspm_p32(p, 16, st);
  return st;
}

static void unlink_obj(nvpci_gsp *s, gspm_obj *o) {
  gspm_chan_freed(s, o);
  for (gspm_obj **pp = &s->objs; *pp; pp = &(*pp)->next)
    if (*pp == o) {
      *pp = o->next;
      break;
    }
  free(o);
}

/* o and everything under it, children first. */
static void free_tree(nvpci_gsp *s, gspm_obj *o) {
  for (gspm_obj *c = s->objs; c;) {
    if (c != o && c->client == o->client && c->parent == o->handle) {
      free_tree(s, c);
      c = s->objs; /* the list changed */
    } else {
      c = c->next;
    }
  }
  unlink_obj(s, o);
}

/* rpc_free_v03_00 = NVOS00_PARAMETERS_v03_00: hRoot @0, hObjectParent @4, hObjectOld @8, status @12. */
uint32_t gspm_rm_free(nvpci_gsp *s, uint8_t *p, size_t n) {
  if (n != 16) return GSPM_ERR_INVALID_ARGUMENT;
  uint32_t hc = gspm_g32(p, 0), hp = gspm_g32(p, 4), ho = gspm_g32(p, 8), st = GSPM_OK;
  gspm_obj *c = client_of(s, hc), *o = c ? find(s, hc, ho) : NULL;
  if (!c) st = GSPM_ERR_INVALID_CLIENT;
  else if (!o) st = GSPM_ERR_OBJECT_NOT_FOUND;
  else if (o == c) {
    for (gspm_obj *x = s->objs; x;) {
      if (x != c && x->client == hc) {
        unlink_obj(s, x);
        x = s->objs;
      } else {
        x = x->next;
      }
    }
    unlink_obj(s, c);
  } else if (o->parent != hp) st = GSPM_ERR_INVALID_OBJECT_PARENT;
  else free_tree(s, o);
  gspm_p32(p, 12, st);
  return st;
}

void gspm_rm_clear(nvpci_gsp *s) {
  while (s->objs) unlink_obj(s, s->objs);
}

/* ---- controls ---- */

typedef struct {
  uint32_t cmd, cls, size;
} ctrl_rule;
static const ctrl_rule CTRLS[] = {
    {CTRL_CLASSLIST, CLS_DEVICE, 16},              /* NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS */
    {CTRL_CLASSLIST_V2, CLS_DEVICE, 404},          /* NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS (100 classes) */
    {CTRL_DEVICE_INFO_TABLE, CLS_SUBDEVICE, 3212}, /* NV2080_CTRL_FIFO_GET_DEVICE_INFO_TABLE_PARAMS (32 x 100 B) */
    {CTRL_KGR_GET_INFO, CLS_SUBDEVICE, 3712},      /* NV2080_CTRL_INTERNAL_STATIC_KGR_GET_INFO_PARAMS (8 x 0x3a x 8) */
    {CTRL_GID_INFO, CLS_SUBDEVICE, 268},           /* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS */
};

/* The classes the device reports: the object-graph classes and the chip's engine classes. */
static uint32_t class_list(const nvpci_gsp *s, uint32_t *out) {
  static const uint32_t common[] = {CLS_DEVICE,  CLS_SUBDEVICE, CLS_MEMORY_VIRTUAL, CLS_VASPACE,
                                    CLS_TSG,     CLS_CTXSHARE,  CLS_TURING_USERMODE_A};
  uint32_t n = 0;
  for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) out[n++] = common[i];
  for (size_t i = 0; i < 8 && s->chip->classes[i]; i++) out[n++] = s->chip->classes[i];
  return n;
}

/* NV2080_CTRL_FIFO_DEVICE_ENTRY (100 B): engineData[16] (ENGINE_INFO_TYPE_*: RM_ENGINE_TYPE 2, RUNLIST 3,
 * INSTANCE_ID 10, RUNLIST_PRI_BASE 11; g_kernel_fifo_nvoc.h), pbdmaIds[2] @64, pbdmaFaultIds[2] @72, numPbdmas @80,
 * engineName[16] @84. One GR and two copy engines (RM_ENGINE_TYPE_GR0 1, COPY0 9, COPY1 10), a runlist each. */
typedef struct {
  uint32_t type, inst;
  const char *name;
} engine_info;
static const engine_info ENGINES[] = {{1, 0, "GR0"}, {9, 0, "CE0"}, {10, 1, "CE1"}};

int gspm_engine_runlist(uint32_t engine_type) {
  for (size_t i = 0; i < sizeof ENGINES / sizeof ENGINES[0]; i++)
    if (ENGINES[i].type == engine_type) return (int)i;
  return -1;
}

static uint32_t device_info(uint8_t *p) {
  const engine_info *eng = ENGINES;
  uint32_t n = sizeof ENGINES / sizeof ENGINES[0];
  if (gspm_g32(p, 0) > n) return GSPM_ERR_INVALID_ARGUMENT; /* baseIndex */
  memset(p + 4, 0, 3212 - 4);
  uint32_t k = 0;
  for (uint32_t i = gspm_g32(p, 0); i < n; i++, k++) {
    uint8_t *e = p + 12 + 100 * (size_t)k;
    gspm_p32(e, 4 * 2, eng[i].type);
    gspm_p32(e, 4 * 3, i);                    /* runlist */
    gspm_p32(e, 4 * 10, eng[i].inst);
    gspm_p32(e, 4 * 11, 0x2000 + 0x400 * i);  /* runlist registers */
    gspm_p32(e, 64, i);
    gspm_p32(e, 72, 32 + i);
    gspm_p32(e, 80, 1);
    memcpy(e + 84, eng[i].name, strlen(eng[i].name) + 1);
  }
  gspm_p32(p, 4, k);
  p[8] = 0; /* bMore */
  return GSPM_OK;
}

/* engineInfo[8].infoList[0x3a] {index, data}: engine 0 is the one GR engine (NV0080_CTRL_GR_INFO_INDEX_*: SM_VERSION
 * 0x0c, MAX_WARPS_PER_SM 0x0d, MAX_THREADS_PER_WARP 0x0e, LITTER_NUM_GPCS 0x14, LITTER_NUM_TPC_PER_GPC 0x17,
 * LITTER_NUM_SM_PER_TPC 0x20). */
static uint32_t kgr_info(const nvpci_gsp *s, uint8_t *p) {
  memset(p, 0, 3712);
  for (uint32_t e = 0; e < 8; e++)
    for (uint32_t i = 0; i < 0x3a; i++) {
      uint32_t v = 0;
      if (e == 0) switch (i) {
        case 0x0c: v = s->chip->sm_version; break;
        case 0x0d: v = s->chip->warps_per_sm; break;
        case 0x0e: v = 32; break;
        case 0x14: case 0x17: case 0x20: v = 1; break;
        default: break;
        }
      gspm_p32(p, (size_t)(e * 0x3a + i) * 8, i);
      gspm_p32(p, (size_t)(e * 0x3a + i) * 8 + 4, v);
    }
  return GSPM_OK;
}

/* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS: index @0, flags @4 (FORMAT 1:0: 2 BINARY, 0 ASCII), length @8, data @12. The
 * UUID is a function of the chip name and the PCI address. */
static uint32_t gid_info(nvpci_gsp *s, uint8_t *p) {
  if (gspm_g32(p, 0) != 0) return GSPM_ERR_INVALID_ARGUMENT;
  uint32_t fmt = gspm_g32(p, 4) & 3;
  if (fmt != 0 && fmt != 2) return GSPM_ERR_INVALID_ARGUMENT;
  uint8_t uuid[16];
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *c = s->chip->name; *c; c++) h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
  for (int i = 0; i < 16; i++) {
    h = (h ^ (uint64_t)i) * 0x100000001b3ull;
    uuid[i] = (uint8_t)(h >> 32);
  }
  memset(p + 8, 0, 260);
  if (fmt == 2) {
    gspm_p32(p, 8, 16);
    memcpy(p + 12, uuid, 16);
  } else {
    char *str = (char *)p + 12;
    int n = snprintf(str, 256, "GPU-");
    for (int i = 0; i < 16; i++)
      n += snprintf(str + n, (size_t)(256 - n), "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", uuid[i]);
    gspm_p32(p, 8, (uint32_t)n + 1);
  }
  return GSPM_OK;
}

/* rpc_gsp_rm_control_v03_00: hClient @0, hObject @4, cmd @8, status @12, paramsSize @16, flags @20, params @24. */
static uint32_t control(nvpci_gsp *s, uint8_t *p) {
  uint32_t hc = gspm_g32(p, 0), ho = gspm_g32(p, 4), cmd = gspm_g32(p, 8), size = gspm_g32(p, 16);
  uint8_t *prm = p + 24;
  if (!client_of(s, hc)) return GSPM_ERR_INVALID_CLIENT;
  gspm_obj *o = find(s, hc, ho);
  if (!o) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  const ctrl_rule *r = NULL;
  for (size_t i = 0; i < sizeof CTRLS / sizeof CTRLS[0]; i++)
    if (CTRLS[i].cmd == cmd) r = &CTRLS[i];
  uint32_t st;
  if (gspm_chan_control(s, hc, o, cmd, prm, size, &st)) return st;
  if (!r || r->cls != o->cls) return GSPM_ERR_NOT_SUPPORTED;
  if (size != r->size) return GSPM_ERR_INVALID_PARAM_STRUCT;
  uint32_t list[32], n;
  switch (cmd) {
  case CTRL_CLASSLIST:
    /* numClasses @0, classList @8: a pointer into the caller's address space, which GSP-RM cannot follow; a NULL
     * one asks for the count (the list comes from the inline _V2). */
    if (gspm_g64(prm, 8)) return NV_ERR_INVALID_POINTER;
    gspm_p32(prm, 0, class_list(s, list));
    return GSPM_OK;
  case CTRL_CLASSLIST_V2:
    n = class_list(s, list);
    memset(prm, 0, 404);
    gspm_p32(prm, 0, n);
    memcpy(prm + 4, list, 4 * (size_t)n);
    return GSPM_OK;
  case CTRL_DEVICE_INFO_TABLE: return device_info(prm);
  case CTRL_KGR_GET_INFO: return kgr_info(s, prm);
  case CTRL_GID_INFO: return gid_info(s, prm);
  default: return GSPM_ERR_NOT_SUPPORTED;
  }
}

uint32_t gspm_rm_control(nvpci_gsp *s, uint8_t *p, size_t n) {
  if (n < 24) return GSPM_ERR_INVALID_ARGUMENT;
  uint32_t st = control(s, p);
  gspm_p32(p, 12, st);
  return st;
}
