/* nv/nv_fault.c: telling a hang from slow work, and saying why (tinygrad ops_nv.py NVDevice.on_device_hang).
 *
 * RM writes a channel's error notifier (entry 0 of the NvNotification array given as hObjectError) when it tears the
 * channel down: a GR exception, an MMU fault, a timeout. Waits call sleep after 200 ms without progress; sleep and
 * fault_check look at both channels' notifiers, and a set one turns into -BG_EHANG with the debugger object's SM
 * error states (NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES) and, when it says an MMU fault is valid, the fault
 * addresses (NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO). No recovery: RM has torn the channel down, and rebuilding
 * the channels under a live TSG is not implemented (bg_backend_ops.recover stays NULL; reopen the device). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baregpu/error.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_hcq.h"

static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

void bg_nv_fault_report(nv_gpu *g, char *buf, size_t cap) {
  if (!cap) return;
  buf[0] = '\0';
  if (!g->hdebugger || !g->q[BG_QUEUE_COMPUTE]) return;
  bg_nv83de_read_all_sm_error_states *st = calloc(1, sizeof *st);
  if (!st) return;
  st->hTargetChannel = g->q[BG_QUEUE_COMPUTE]->hchannel;
  st->numSMsToRead = NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL;
  if (bg_nv_rm_control(&g->rm, g->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES, st, sizeof *st)) {
    append(buf, cap, "SM error states unavailable (%s)", bg_last_error());
    free(st);
    return;
  }
  if (st->mmuFaultValid) {
    bg_nv83de_read_mmu_fault_info mf = {0};
    if (bg_nv_rm_control(&g->rm, g->hdebugger, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, &mf, sizeof mf)) {
      append(buf, cap, "MMU fault (info 0x%x; details unavailable: %s)", st->mmuFaultFaultInfo, bg_last_error());
    } else {
      for (uint32_t i = 0; i < mf.count && i < NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_MAX_ENTRIES; i++)
        append(buf, cap, "%sMMU fault at address 0x%" PRIx64 " (fault type %u, access type %u)", i ? "; " : "",
               mf.mmuFaultInfoList[i].faultAddress, mf.mmuFaultInfoList[i].faultType, mf.mmuFaultInfoList[i].accessType);
      if (mf.count == 0) append(buf, cap, "MMU fault (info 0x%x, no entries recorded)", st->mmuFaultFaultInfo);
    }
  }
  unsigned shown = 0;
  for (uint32_t i = 0; i < NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL && shown < 4; i++) {
    const bg_nv83de_sm_error_state *s = &st->smErrorStateArray[i];
    if (!s->hwwGlobalEsr && !s->hwwWarpEsr) continue;
    append(buf, cap, "%sSM %u: global ESR 0x%x, warp ESR 0x%x at PC 0x%" PRIx64, buf[0] ? "; " : "", st->startingSM + i,
           s->hwwGlobalEsr, s->hwwWarpEsr, s->hwwWarpEsrPc64);
    shown++;
  }
  free(st);
}

/* The first channel whose error notifier RM has written, or NULL. */
static bg_queue_hw *faulted(nv_gpu *g) {
  for (int k = 0; k < 2; k++) {
    bg_queue_hw *q = g->q[k];
    if (!q || !q->notifier.cpu) continue;
    const volatile bg_nv_notification *n = q->notifier.cpu;
    if (n->status || n->info32) return q;
  }
  return NULL;
}

static int hang(nv_gpu *g, bg_queue_hw *q) {
  const volatile bg_nv_notification *n = q->notifier.cpu;
  char rep[768];
  bg_nv_fault_report(g, rep, sizeof rep);
  return bg_error(BG_EHANG, "%s: %s was stopped by the driver (error notifier: error %u, status 0x%x; GPGet %u, "
                  "GPPut %u)%s%s", g->name, q->name, n->info32, n->status, bg_nv_gpget(q), q->put, rep[0] ? ": " : "",
                  rep);
}

int bg_nv_fault_check(bg_dev *d) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  bg_queue_hw *q = faulted(g);
  int e = q ? hang(g, q) : g->pci ? bg_nv_pci_events(g) : 0; /* bare metal: faults come as GSP-RM events */
  for (int k = 0; k < 2 && e == 0; k++)
    if (g->q[k] && bg_nv_gpget(g->q[k]) != g->q[k]->put) e = 1;
  pthread_mutex_unlock(&g->lock);
  return e;
}

int bg_nv_sleep(bg_dev *d, int ms) {
  int e = bg_nv_fault_check(d);
  if (e < 0) return e;
  if (ms > 0) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
  }
  return 0;
}
