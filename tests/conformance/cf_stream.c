/* tests/conformance/cf_stream.c: what a queue program was lowered to, as the backend's submit received it.
 *
 * Neither the CPU device nor the emulated AMD GPU has caches that a missing memory barrier would leave stale (the
 * CPU worker reads what the host wrote once submit has published it; tests/mockgpu/amd_pm4.c executes ACQUIRE_MEM
 * as "no caches to invalidate"), so running a program cannot show that a barrier was dropped. The command stream
 * can: memory_barrier must lower to tinygrad's barrier (ops_amd.py memory_barrier: an HDP flush, WAIT_REG_MEM
 * write-then-wait on GPU_HDP_FLUSH_REQ/DONE, then ACQUIRE_MEM invalidating and writing back L2) on AMD and to the
 * fence slot on CPU, before the dispatch it protects. The capture wraps the device's backend submit for the length
 * of one submit, so it sees the real path: recording, lowering, patching. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "hcq/backend.h"
#include "cpu/cpu.h"

static const bg_backend_ops *cap_orig;
static uint8_t *cap_buf;
static size_t cap_len;
static bool cap_oom;

static int cap_submit(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len) {
  uint8_t *nb = realloc(cap_buf, cap_len + len + 1);
  if (nb) {
    memcpy(nb + cap_len, cmd, len);
    cap_buf = nb;
    cap_len += len;
  } else {
    cap_oom = true;
  }
  return cap_orig->submit(d, hq, cmd, len);
}

int cf_capture_submit(cf_ctx *c, bg_queue *q, uint8_t **bytes, size_t *len) {
  *bytes = NULL;
  *len = 0;
  bg_backend_ops ops = *c->d->ops;
  ops.submit = cap_submit;
  cap_orig = c->d->ops;
  cap_buf = NULL;
  cap_len = 0;
  cap_oom = false;
  c->d->ops = &ops;
  int r = cf_submit_wait(c, q, NULL, 0);
  c->d->ops = cap_orig;
  if (r == 0 && cap_oom) r = bg_error(BG_ENOMEM, "conformance: out of host memory capturing a submit");
  if (r < 0) {
    free(cap_buf);
    return r;
  }
  *bytes = cap_buf;
  *len = cap_len;
  return 0;
}

/* CPU: 64-byte slots; the barrier is a CPU_OP_BARRIER slot (cpu_worker.c: a seq_cst fence) before CPU_OP_EXEC. */
static int cpu_barrier(const uint8_t *s, size_t len, char *why, size_t n) {
  bool barrier = false;
  for (size_t o = 0; o + sizeof(cpu_slot) <= len; o += sizeof(cpu_slot)) {
    cpu_slot sl;
    memcpy(&sl, s + o, sizeof sl);
    if (sl.op == CPU_OP_BARRIER) barrier = true;
    if (sl.op == CPU_OP_EXEC) {
      snprintf(why, n, "%s", barrier ? "a barrier slot precedes the exec slot" : "no barrier slot before the exec slot");
      return barrier;
    }
  }
  snprintf(why, n, "no exec slot in %zu bytes", len);
  return 0;
}

int cf_stream_has_barrier(const bg_dev *d, const uint8_t *cmd, size_t len, char *why, size_t n) {
  if (strcmp(d->ops->kind, "CPU") == 0) return cpu_barrier(cmd, len, why, n);
  if (strcmp(d->ops->kind, "AMD") == 0) return cf_stream_amd_barrier(d, cmd, len, why, n);
  snprintf(why, n, "no reader of %s command streams in this suite", d->ops->kind);
  return -1;
}
