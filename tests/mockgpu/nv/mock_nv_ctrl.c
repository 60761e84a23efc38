/* tests/mockgpu/nv/mock_nv_ctrl.c: NV_ESC_RM_CONTROL of the emulated RM.
 *
 * Each control names the class of object it acts on and its parameter size on 580 (ctrl/ headers of
 * NVIDIA/open-gpu-kernel-modules 580.65.06). As control.c rmapiControl does: params NULL with a size, or a size other
 * than the control's -> NV_ERR_INVALID_ARGUMENT; a control the object's class does not export, or one the model does
 * not know -> NV_ERR_NOT_SUPPORTED; an unknown object -> NV_ERR_INVALID_OBJECT_HANDLE. */
#include <stdio.h>

#include "mock_nv_internal.h"

#define S nvm_S

enum {
  C_BUILD_VERSION_V2 = 0x13e, C_GPU_ID_INFO_V2 = 0x205, C_CLASSLIST = 0x800201, C_GID_INFO = 0x2080014a,
  C_NAME_STRING = 0x20800110, C_GR_GET_INFO = 0x20801201, C_FB_GET_INFO_V2 = 0x20801303,
  C_FB_FLUSH = 0x2080130e, C_PERF_BOOST = 0x2080200a, C_PERF_PSTATE = 0x20802068,
  C_TSG_SCHEDULE = 0xa06c0101, C_WORK_SUBMIT_TOKEN = 0xc36f0108, C_DBG_SM_ERRORS = 0x83de030c,
  C_DBG_MMU_FAULT = 0x83de0328,
};

typedef struct {
  uint32_t cmd, cls, size; /* cls 1: the GPFIFO class of the config */
} ctrl_rule;

static const ctrl_rule RULES[] = {
    {C_BUILD_VERSION_V2, NVC_ROOT_CLIENT, 1032}, /* NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS */
    {C_GPU_ID_INFO_V2, NVC_ROOT_CLIENT, 32},     /* NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS */
    {C_CLASSLIST, NVC_DEVICE, 16},               /* NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS */
    {C_GID_INFO, NVC_SUBDEVICE, 268},            /* NV2080_CTRL_GPU_GET_GID_INFO_PARAMS */
    {C_NAME_STRING, NVC_SUBDEVICE, 132},         /* NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS */
    {C_GR_GET_INFO, NVC_SUBDEVICE, 32},          /* NV2080_CTRL_GR_GET_INFO_PARAMS */
    {C_FB_GET_INFO_V2, NVC_SUBDEVICE, 1028},     /* NV2080_CTRL_FB_GET_INFO_V2_PARAMS (580: 0x80 entries) */
    {C_FB_FLUSH, NVC_SUBDEVICE, 4024},           /* NV2080_CTRL_FB_FLUSH_GPU_CACHE_PARAMS */
    {C_PERF_BOOST, NVC_SUBDEVICE, 8},            /* NV2080_CTRL_PERF_BOOST_PARAMS */
    {C_PERF_PSTATE, NVC_SUBDEVICE, 4},           /* NV2080_CTRL_PERF_GET_CURRENT_PSTATE_PARAMS */
    {C_TSG_SCHEDULE, NVC_TSG, 3},                /* NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS (580: + bSkipEnable) */
    {C_WORK_SUBMIT_TOKEN, 1, 4},                 /* NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS */
    {C_DBG_SM_ERRORS, NVC_DEBUGGER, 4824},       /* NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS */
    {C_DBG_MMU_FAULT, NVC_DEBUGGER, 72},         /* NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS */
};

static uint32_t classlist(const nvm_obj *o, uint8_t *p) {
  (void)o;
  const nvm_config *c = S.cfg;
  const uint32_t list[] = {NVC_DEVICE, NVC_SUBDEVICE, NVC_MEMORY_SYSTEM, NVC_MEMORY_USER, NVC_MEMORY_VIRTUAL,
                           NVC_OS_DESCRIPTOR, NVC_CTXSHARE, NVC_VASPACE, NVC_TSG, NVC_DEBUGGER,
                           c->usermode, c->gpfifo, c->copy, c->compute};
  uint32_t n = sizeof list / sizeof list[0];
  uint32_t *dst = (uint32_t *)(uintptr_t)nvm_g64(p, 8);
  if (!dst) {
    nvm_p32(p, 0, n);
    return NVS_OK;
  }
  if (nvm_g32(p, 0) < n) return NVS_ERR_INVALID_PARAM_STRUCT; /* the list would not fit */
  for (uint32_t i = 0; i < n; i++) dst[i] = list[i];
  nvm_p32(p, 0, n);
  return NVS_OK;
}

/* NV2080_CTRL_GR_INFO list {index, data}: SM_VERSION 0x0c, MAX_WARPS_PER_SM 0x0d, LITTER_NUM_GPCS 0x14,
 * LITTER_NUM_TPC_PER_GPC 0x17, LITTER_NUM_SM_PER_TPC 0x20 (ctrl0080gr.h); one SM, 48 warps. */
static uint32_t gr_info(uint8_t *p) {
  uint32_t n = nvm_g32(p, 0);
  uint8_t *list = (uint8_t *)(uintptr_t)nvm_g64(p, 8);
  if (n == 0 || n > 0x3a || !list) return NVS_ERR_INVALID_ARGUMENT; /* NV2080_CTRL_GR_INFO_MAX_SIZE */
  for (uint32_t i = 0; i < n; i++) {
    uint32_t idx = nvm_g32(list, 8 * i), v = 0;
    if (idx >= 0x3a) return NVS_ERR_INVALID_ARGUMENT;
    switch (idx) {
    case 0x0c: v = S.cfg->sm_version; break;
    case 0x0d: v = 48; break;
    case 0x14: case 0x17: case 0x20: v = 1; break;
    default: v = 0;
    }
    nvm_p32(list, 8 * i + 4, v);
  }
  return NVS_OK;
}

/* NV2080_CTRL_FB_INFO indices (ctrl2080fb.h): RAM_SIZE 7, TOTAL_RAM_SIZE 8, HEAP_FREE 0x16, USABLE_RAM_SIZE 0x20,
 * HEAP_SIZE 0x13; values in KiB. */
static uint32_t fb_info(int gpu, uint8_t *p) {
  uint32_t n = nvm_g32(p, 0);
  if (n > 0x80) return NVS_ERR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t idx = nvm_g32(p, 4 + 8 * i), v = 0;
    switch (idx) {
    case 0x07: case 0x08: case 0x13: case 0x20: v = (uint32_t)(NVM_VRAM_BUDGET >> 10); break;
    case 0x16: v = (uint32_t)((NVM_VRAM_BUDGET - S.gpu[gpu].vram_used) >> 10); break;
    default: v = 0;
    }
    nvm_p32(p, 8 + 8 * i, v);
  }
  return NVS_OK;
}

int nvm_rm_control(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hc = nvm_g32(a, 0), ho = nvm_g32(a, 4), cmd = nvm_g32(a, 8), size = nvm_g32(a, 24);
  uint8_t *p = (uint8_t *)(uintptr_t)nvm_g64(a, 16);
  uint32_t st = NVS_OK;
  nvm_obj *o = nvm_obj_find(hc, ho);
  const ctrl_rule *r = NULL;
  for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
    if (RULES[i].cmd == cmd) r = &RULES[i];
  if (!o || !nvm_obj_find(hc, hc)) st = NVS_ERR_INVALID_OBJECT_HANDLE;
  else if (!r || (r->cls == 1 ? o->cls != S.cfg->gpfifo : o->cls != r->cls)) st = NVS_ERR_NOT_SUPPORTED;
  else if ((size != 0) != (p != NULL) || size != r->size) st = NVS_ERR_INVALID_ARGUMENT;
  if (st) {
    nvm_p32(a, 28, st);
    return 0;
  }
  nvm_gpu *g = o->gpu >= 0 ? &S.gpu[o->gpu] : NULL;
  switch (cmd) {
  case C_BUILD_VERSION_V2:
    memset(p, 0, size);
    snprintf((char *)p, 256, "%s", NVM_DRIVER_VERSION);           /* driverVersionBuffer */
    snprintf((char *)p + 256, 256, "%s", NVM_DRIVER_VERSION);     /* versionBuffer */
    snprintf((char *)p + 512, 256, "%s", "r580_00");              /* driverBranch */
    snprintf((char *)p + 768, 256, "%s", "baregpu mockgpu");      /* titleBuffer */
    break;
  case C_GPU_ID_INFO_V2: {
    uint32_t id = nvm_g32(p, 0);
    st = NVS_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < S.count; i++)
      if (id == 0x4100u + 0x100u * (unsigned)i) { /* the gpu_id NV_ESC_CARD_INFO reports */
        nvm_p32(p, 4, 0);                          /* gpuFlags */
        nvm_p32(p, 8, (uint32_t)i);                /* deviceInstance */
        nvm_p32(p, 12, 0);                         /* subDeviceInstance */
        nvm_p32(p, 28, (uint32_t)-1);              /* numaId */
        st = NVS_OK;
      }
    break;
  }
  case C_CLASSLIST: st = classlist(o, p); break;
  case C_GID_INFO: {
    /* flags FORMAT 1:1: 1 = BINARY (the 16 raw bytes), 0 = ASCII "GPU-xxxxxxxx-xxxx-..." */
    uint32_t flags = nvm_g32(p, 4);
    memset(p + 8, 0, 260);
    if (flags & 2) {
      nvm_p32(p, 8, 16);
      memcpy(p + 12, g->uuid, 16);
    } else {
      char *s = (char *)p + 12;
      int n = snprintf(s, 256, "GPU-");
      for (int i = 0; i < 16; i++)
        n += snprintf(s + n, (size_t)(256 - n), "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", g->uuid[i]);
      nvm_p32(p, 8, (uint32_t)n + 1);
    }
    break;
  }
  case C_NAME_STRING:
    if (nvm_g32(p, 0) != 0) st = NVS_ERR_NOT_SUPPORTED; /* only NV2080_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII */
    else {
      memset(p + 4, 0, 128);
      snprintf((char *)p + 4, 64, "%s", S.cfg->gpu_name);
    }
    break;
  case C_GR_GET_INFO: st = gr_info(p); break;
  case C_FB_GET_INFO_V2: st = fb_info(o->gpu, p); break;
  case C_FB_FLUSH: break;
  case C_PERF_BOOST: break;
  case C_PERF_PSTATE: nvm_p32(p, 0, 1); break; /* NV2080_CTRL_PERF_PSTATES_P0 */
  case C_TSG_SCHEDULE:
    o->scheduled = p[0] != 0; /* bEnable */
    if (o->scheduled) nvm_gpu_kick(g);
    break;
  case C_WORK_SUBMIT_TOKEN:
    if (o->chan < 0) st = NVS_ERR_INVALID_STATE;
    else nvm_p32(p, 0, g->chan[o->chan].token);
    break;
  case C_DBG_SM_ERRORS: {
    nvm_obj *ch = nvm_obj_find(hc, nvm_g32(p, 0));
    if (!ch || ch->cls != S.cfg->gpfifo || nvm_g32(p, 4) > 100) {
      st = NVS_ERR_INVALID_ARGUMENT;
      break;
    }
    memset(p + 8, 0, size - 8);
    p[4812] = g->fault_valid;                      /* mmuFault.valid */
    nvm_p32(p, 4816, g->fault_valid ? 1 : 0);      /* mmuFault.faultInfo */
    nvm_p32(p, 4808, g->fault_valid ? 1 : 0);      /* mmuFaultInfo (deprecated) */
    break;
  }
  case C_DBG_MMU_FAULT:
    memset(p, 0, size);
    if (g->fault_valid) {
      nvm_p64(p, 0, g->fault_addr);               /* mmuFaultInfoList[0].faultAddress */
      nvm_p32(p, 8, 0);                           /* faultType: PDE (unmapped) */
      nvm_p32(p, 12, g->fault_access);            /* accessType */
      nvm_p32(p, 64, 1);                          /* count */
    }
    break;
  }
  nvm_p32(a, 28, st);
  return 0;
}
