/* nv/nv_query.c: facts about an open NVIDIA GPU (nv_query.h), read from the nv_gpu and, for memory, name and
 * performance state, from RM controls on the subdevice (ctrl2080fb.h, ctrl2080gpu.h, ctrl2080perf.h). */
#include "nv/nv_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_hcq.h"

static void memory(nv_gpu *g, bg_nv_query *o) {
  bg_nv2080_fb_get_info_v2 fb;
  memset(&fb, 0, sizeof fb);
  fb.fbInfoListSize = 2;
  fb.fbInfoList[0].index = NV2080_FB_INFO_INDEX_TOTAL_RAM_SIZE;
  fb.fbInfoList[1].index = NV2080_FB_INFO_INDEX_HEAP_FREE;
  if (bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, g->abi.fb_info_v2_size)) {
    snprintf(o->mem_note, sizeof o->mem_note, "%s", bg_last_error());
    return;
  }
  o->vram_total = (uint64_t)fb.fbInfoList[0].data << 10; /* KiB */
  o->vram_free = (uint64_t)fb.fbInfoList[1].data << 10;
}

/* Sensor 0 through the thermal instruction list (nvidia-smi's legacy path); -1 when refused or not executed. */
static int temperature(nv_gpu *g) {
  bg_nv2080_thermal_execute_v2 *t = calloc(1, sizeof *t);
  if (!t) return -1;
  t->clientAPIVersion = NV2080_THERMAL_SYSTEM_API_VER;
  t->clientAPIRevision = NV2080_THERMAL_SYSTEM_API_REV;
  t->clientInstructionSizeOf = sizeof(bg_nv2080_thermal_instruction);
  t->instructionListSize = 1;
  t->instructionList[0].opcode = NV2080_THERMAL_SYSTEM_GET_STATUS_SENSOR_READING_OPCODE;
  int v = -1;
  if (bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2, t, sizeof *t) == 0 &&
      t->successfulInstructions == 1 && t->instructionList[0].executed && t->instructionList[0].result == 0)
    v = (int)(int32_t)t->instructionList[0].operands[1];
  free(t);
  return v;
}

int bg_nv_query_info(bg_dev *d, bg_nv_query *o) {
  memset(o, 0, sizeof *o);
  if (!d || !d->ops || strcmp(d->ops->kind, "NV") != 0 || !d->priv)
    return bg_error(BG_EINVAL, "nv query: %s is not an NVIDIA device", d ? d->name : "(null)");
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  snprintf(o->iface, sizeof o->iface, "%s", g->mock ? "MOCKNVK" : "NVK");
  snprintf(o->driver_version, sizeof o->driver_version, "%s", g->ver.text);
  snprintf(o->version_source, sizeof o->version_source, "%s", g->version_source);
  o->family = (unsigned)g->ver.family;
  o->pci_vendor = g->pci_vendor;
  o->pci_device = g->pci_device;
  snprintf(o->bdf, sizeof o->bdf, "%s", g->bdf);
  const uint8_t *u = g->uuid;
  snprintf(o->uuid, sizeof o->uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
           u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  snprintf(o->arch, sizeof o->arch, "sm_%u", g->sm);
  o->sm = g->sm;
  o->sm_version = g->sm_version;
  o->generation = g->cls.generation;
  o->usermode_class = g->cls.usermode, o->gpfifo_class = g->cls.gpfifo, o->compute_class = g->cls.compute;
  o->copy_class = g->cls.copy, o->qmd_version = g->cls.qmd_version;
  o->nclasses = g->nclasses;
  memcpy(o->classes, g->classes, g->nclasses * sizeof g->classes[0]);
  o->gpcs = g->gpcs, o->tpc_per_gpc = g->tpc_per_gpc, o->sm_per_tpc = g->sm_per_tpc;
  o->max_warps_per_sm = g->max_warps_per_sm;
  o->bar_size = (int64_t)g->fb_size;
  o->perf_boost = g->perf_boost, o->virtmem = g->have_virtmem, o->map_dma = g->have_virtmem && !g->dma_refused;
  o->temp_c = temperature(g);
  memory(g, o);
  uint8_t name[sizeof(bg_nv2080_gpu_name_string)] = {0}; /* flags = ASCII (0) */
  if (bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, name, g->abi.gpu_name_string_size) == 0)
    snprintf(o->name, sizeof o->name, "%.*s", NV2080_GPU_MAX_NAME_STRING_LENGTH, (const char *)name + 4);
  bg_nv2080_perf_current_pstate ps = {0};
  o->pstate = bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, &ps, sizeof ps) == 0
                  ? (int64_t)ps.currPstate
                  : -1;
  pthread_mutex_unlock(&g->lock);
  bg_clear_error();
  return 0;
}
