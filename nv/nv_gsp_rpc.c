/* nv/nv_gsp_rpc.c: RPCs to GSP-RM over the message queues: send + notify, waiting for a reply while handling the
 * events GSP sends unasked, and RM alloc / control / free with every status checked.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; Linux nouveau nvkm/subdev/gsp/r535.c (r535_gsp_msg_recv: events handled while a
 * reply is awaited; r535_gsp_rpc_rm_alloc_push / r535_gsp_rpc_rm_ctrl_push check rpc->status; r535_gsp_rpc_rm_free
 * sends NVOS00_PARAMETERS through FREE) and include/nvrm/535.113.01/nvidia/generated/g_rpc-structures.h
 * (rpc_gsp_rm_alloc_v03_00: 32 B; rpc_gsp_rm_control_v03_00: 24 B; rpc_free_v03_00: 16 B; rpc_os_error_log_v17_00:
 * errString at 12). tinygrad checks neither the alloc nor the control status (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.read_resp). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_gsp.h"
#include "nv/nv_gsp_priv.h"
#include "nv/nv_status.h"
#include "util/clock.h"
#include "util/env.h"

/* rpc_gsp_rm_alloc_v03_00 */
enum { AL_CLIENT = 0, AL_PARENT = 4, AL_OBJECT = 8, AL_CLASS = 12, AL_STATUS = 16, AL_PARAMS_SIZE = 20, AL_FLAGS = 24,
       AL_HDR = 32 };
/* rpc_gsp_rm_control_v03_00 */
enum { CT_CLIENT = 0, CT_OBJECT = 4, CT_CMD = 8, CT_STATUS = 12, CT_PARAMS_SIZE = 16, CT_FLAGS = 20, CT_HDR = 24 };
/* rpc_free_v03_00 = NVOS00_PARAMETERS_v03_00 */
enum { FR_ROOT = 0, FR_PARENT = 4, FR_OBJECT = 8, FR_STATUS = 12, FR_SIZE = 16 };
/* rpc_os_error_log_v17_00 */
enum { OSLOG_TEXT = 12, OSLOG_TEXT_MAX = 0x100 };
#define HOST_HANDLE_BASE 0xcf000000u
#define NV01_ROOT 0x0u

int bg_nv_gsp_init(bg_nv_gsp *g, const bg_nv_gsp_ops *ops) {
  if (!g || !ops || !ops->notify) return bg_error(BG_EINVAL, "GSP RPC: no ops or no notify callback");
  bg_nv_gsp_ops o = *ops;
  if (o.timeout_ms <= 0) {
    int r = bg_env_wait_timeout_ms(&o.timeout_ms);
    if (r < 0) return r;
  }
  uint8_t *buf = malloc(BG_NV_GSP_MAX_RECORD);
  if (!buf) return bg_error(BG_ENOMEM, "GSP RPC: reply buffer of %u bytes", BG_NV_GSP_MAX_RECORD);
  /* g->q is the caller's (bg_nv_msgq_init, before or after this call). */
  g->ops = o;
  g->error = false;
  g->error_text[0] = 0;
  g->next_handle = HOST_HANDLE_BASE;
  g->nrpc = 0;
  g->buf = buf;
  return 0;
}

void bg_nv_gsp_fini(bg_nv_gsp *g) {
  if (!g) return;
  free(g->buf);
  g->buf = NULL;
}

static int in_error(const bg_nv_gsp *g) {
  return bg_error(BG_EHANG, "GSP is in error state: %s", g->error_text);
}

int bg_nv_gsp_send(bg_nv_gsp *g, uint32_t function, const void *payload, size_t n) {
  if (!g || !g->buf) return bg_error(BG_EINVAL, "GSP RPC: not initialized");
  if (g->error) return in_error(g);
  int r = bg_nv_msgq_send(&g->q, function, payload, n);
  if (r < 0) return r;
  g->nrpc++;
  g->ops.notify(g->ops.ctx);
  return 0;
}

/* One event GSP sent unasked (payload in g->buf). */
static int handle_event(bg_nv_gsp *g, const bg_nv_rpc_msg *m) {
  switch (m->function) {
  case BG_NV_RPC_EVENT_RUN_CPU_SEQUENCER: {
    if (!g->ops.seq) return bg_error(BG_EINVAL, "GSP sent GSP_RUN_CPU_SEQUENCER but no sequencer ops were given");
    int r = bg_nv_gsp_sequencer_run(g->buf, m->length, g->ops.seq);
    return r < 0 ? bg_error_context(r, "GSP_RUN_CPU_SEQUENCER: ") : 0;
  }
  case BG_NV_RPC_EVENT_OS_ERROR_LOG: {
    /* errString[0x100] after exceptType, runlistId, chid; bounded by what GSP sent, NUL or not */
    size_t avail = m->length > OSLOG_TEXT ? (size_t)m->length - OSLOG_TEXT : 0;
    if (avail > OSLOG_TEXT_MAX) avail = OSLOG_TEXT_MAX;
    size_t k = strnlen((const char *)g->buf + OSLOG_TEXT, avail);
    snprintf(g->error_text, sizeof g->error_text, "OS_ERROR_LOG: %.*s", (int)k, (const char *)g->buf + OSLOG_TEXT);
    g->error = true;
    return in_error(g);
  }
  case BG_NV_RPC_EVENT_MMU_FAULT_QUEUED:
    snprintf(g->error_text, sizeof g->error_text, "MMU_FAULT_QUEUED: the GPU took an MMU fault");
    g->error = true;
    return in_error(g);
  default:
    BG_LOG(2, "GSP: ignoring message %s (0x%x, %u bytes)", bg_nv_rpc_name(m->function), m->function, m->length);
    return 0;
  }
}

int bg_nv_gsp_wait(bg_nv_gsp *g, uint32_t function, void *reply, size_t cap, size_t *len) {
  if (!g || !g->buf) return bg_error(BG_EINVAL, "GSP RPC: not initialized");
  if (g->error) return in_error(g);
  uint64_t deadline = bg_now_ns() + (uint64_t)g->ops.timeout_ms * 1000000u;
  for (;;) {
    bg_nv_rpc_msg m;
    int r = bg_nv_msgq_recv(&g->q, &m, g->buf, BG_NV_GSP_MAX_RECORD);
    if (r < 0) return bg_error_context(r, "waiting for %s: ", bg_nv_rpc_name(function));
    if (r == 0) {
      if (bg_now_ns() > deadline)
        return bg_error(BG_EHANG, "GSP did not answer %s (function %u) within %d ms (BG_WAIT_TIMEOUT_MS)",
                        bg_nv_rpc_name(function), function, g->ops.timeout_ms);
      if (g->ops.relax) g->ops.relax(g->ops.ctx);
      continue;
    }
    if (m.function != function) {
      r = handle_event(g, &m);
      if (r < 0) return r;
      continue;
    }
    if (m.result != 0)
      return bg_error(BG_EIO, "GSP RPC %s failed: rpc_result 0x%x (%s), rpc_result_private 0x%x",
                      bg_nv_rpc_name(function), m.result, bg_nv_status_str(m.result), m.result_private);
    if (m.length > cap || (m.length && !reply))
      return bg_error(BG_EINVAL, "GSP RPC %s: reply of %u bytes does not fit the %zu-byte buffer",
                      bg_nv_rpc_name(function), m.length, cap);
    if (m.length) memcpy(reply, g->buf, m.length);
    if (len) *len = m.length;
    return 0;
  }
}

int bg_nv_gsp_poll(bg_nv_gsp *g) {
  if (!g || !g->buf) return bg_error(BG_EINVAL, "GSP RPC: not initialized");
  if (g->error) return in_error(g);
  for (;;) {
    bg_nv_rpc_msg m;
    int r = bg_nv_msgq_recv(&g->q, &m, g->buf, BG_NV_GSP_MAX_RECORD);
    if (r <= 0) return r;
    r = handle_event(g, &m);
    if (r < 0) return r;
  }
}

/* Send, wait for the same function's reply into a fresh buffer of hdr + size bytes. */
static int call(bg_nv_gsp *g, uint32_t function, uint8_t *msg, size_t n, size_t *len) {
  int r = bg_nv_gsp_send(g, function, msg, n);
  if (r < 0) return r;
  return bg_nv_gsp_wait(g, function, msg, n, len);
}

int bg_nv_gsp_rm_alloc(bg_nv_gsp *g, uint32_t client, uint32_t parent, uint32_t object, uint32_t cls, void *params,
                       uint32_t size, uint32_t *out) {
  if (!g || !out || (size && !params)) return bg_error(BG_EINVAL, "GSP_RM_ALLOC: NULL gsp, out or params");
  if (size > BG_NV_GSP_MAX_RECORD - BG_NV_GSP_ELEM_HDR - BG_NV_GSP_RPC_HDR - AL_HDR)
    return bg_error(BG_EINVAL, "GSP_RM_ALLOC of class 0x%x: params of %u bytes do not fit one record", cls, size);
  uint32_t h = object ? object : g->next_handle;
  if (cls == NV01_ROOT) client = h; /* a root object is its own client (nouveau r535_gsp_client_ctor) */
  size_t n = AL_HDR + size, len = 0;
  uint8_t *msg = calloc(1, n);
  if (!msg) return bg_error(BG_ENOMEM, "GSP_RM_ALLOC: %zu bytes", n);
  bg_gsp_wr32(msg + AL_CLIENT, client);
  bg_gsp_wr32(msg + AL_PARENT, parent);
  bg_gsp_wr32(msg + AL_OBJECT, h);
  bg_gsp_wr32(msg + AL_CLASS, cls);
  bg_gsp_wr32(msg + AL_PARAMS_SIZE, size);
  bg_gsp_wr32(msg + AL_FLAGS, 0);
  if (size) memcpy(msg + AL_HDR, params, size);
  int r = call(g, BG_NV_RPC_GSP_RM_ALLOC, msg, n, &len);
  if (r < 0) {
    r = bg_error_context(r, "GSP_RM_ALLOC of class 0x%x (object 0x%x under 0x%x): ", cls, h, parent);
  } else if (len < AL_HDR) {
    r = bg_error(BG_EIO, "GSP_RM_ALLOC of class 0x%x (object 0x%x): reply of %zu bytes, expected at least %d", cls, h,
                 len, AL_HDR);
  } else if (bg_gsp_rd32(msg + AL_STATUS) != NV_OK) {
    uint32_t st = bg_gsp_rd32(msg + AL_STATUS);
    r = bg_error(BG_EIO, "GSP_RM_ALLOC of class 0x%x (object 0x%x under 0x%x) failed: %s (0x%x)", cls, h, parent,
                 bg_nv_status_str(st), st);
  } else {
    if (size) memcpy(params, msg + AL_HDR, len - AL_HDR < size ? len - AL_HDR : size);
    if (!object) g->next_handle++;
    *out = h;
  }
  free(msg);
  return r;
}

int bg_nv_gsp_rm_control(bg_nv_gsp *g, uint32_t client, uint32_t object, uint32_t cmd, void *params, uint32_t size) {
  if (!g || (size && !params)) return bg_error(BG_EINVAL, "GSP_RM_CONTROL: NULL gsp or params");
  if (size > BG_NV_GSP_MAX_RECORD - BG_NV_GSP_ELEM_HDR - BG_NV_GSP_RPC_HDR - CT_HDR)
    return bg_error(BG_EINVAL, "GSP_RM_CONTROL 0x%08x: params of %u bytes do not fit one record", cmd, size);
  size_t n = CT_HDR + size, len = 0;
  uint8_t *msg = calloc(1, n);
  if (!msg) return bg_error(BG_ENOMEM, "GSP_RM_CONTROL: %zu bytes", n);
  bg_gsp_wr32(msg + CT_CLIENT, client);
  bg_gsp_wr32(msg + CT_OBJECT, object);
  bg_gsp_wr32(msg + CT_CMD, cmd);
  bg_gsp_wr32(msg + CT_PARAMS_SIZE, size);
  bg_gsp_wr32(msg + CT_FLAGS, 0);
  if (size) memcpy(msg + CT_HDR, params, size);
  int r = call(g, BG_NV_RPC_GSP_RM_CONTROL, msg, n, &len);
  if (r < 0) {
    r = bg_error_context(r, "GSP_RM_CONTROL 0x%08x on object 0x%x: ", cmd, object);
  } else if (len < CT_HDR) {
    r = bg_error(BG_EIO, "GSP_RM_CONTROL 0x%08x on object 0x%x: reply of %zu bytes, expected at least %d", cmd, object,
                 len, CT_HDR);
  } else if (bg_gsp_rd32(msg + CT_STATUS) != NV_OK) {
    uint32_t st = bg_gsp_rd32(msg + CT_STATUS);
    r = bg_error(BG_EIO, "GSP_RM_CONTROL 0x%08x on object 0x%x failed: %s (0x%x)", cmd, object, bg_nv_status_str(st),
                 st);
  } else if (size) {
    memcpy(params, msg + CT_HDR, len - CT_HDR < size ? len - CT_HDR : size);
  }
  free(msg);
  return r;
}

int bg_nv_gsp_rm_free(bg_nv_gsp *g, uint32_t client, uint32_t parent, uint32_t object) {
  if (!g) return bg_error(BG_EINVAL, "FREE: NULL gsp");
  uint8_t msg[FR_SIZE] = {0};
  size_t len = 0;
  bg_gsp_wr32(msg + FR_ROOT, client);
  bg_gsp_wr32(msg + FR_PARENT, parent);
  bg_gsp_wr32(msg + FR_OBJECT, object);
  int r = call(g, BG_NV_RPC_FREE, msg, sizeof msg, &len);
  if (r < 0) return bg_error_context(r, "FREE of object 0x%x under 0x%x: ", object, parent);
  if (len < FR_SIZE)
    return bg_error(BG_EIO, "FREE of object 0x%x: reply of %zu bytes, expected %d", object, len, FR_SIZE);
  uint32_t st = bg_gsp_rd32(msg + FR_STATUS);
  if (st != NV_OK)
    return bg_error(BG_EIO, "FREE of object 0x%x under 0x%x failed: %s (0x%x)", object, parent, bg_nv_status_str(st),
                    st);
  return 0;
}
