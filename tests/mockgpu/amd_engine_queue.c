/* tests/mockgpu/amd_engine_queue.c: what the queue executors (amd_pm4.c, amd_sdma_exec.c) share (amd_engine.h):
 * activation tracking, packet failure messages, ring fetches with wrap, register/memory polls, stats reads. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mock_shm.h"
#include "amd_engine.h"
#include "amd_internal.h"

bool amd_engine_new_activation(amd_engine *e) {
  if (*e->q_nactivate == e->seen && !e->fresh) return false;
  e->seen = *e->q_nactivate;
  e->fresh = false;
  return true;
}

bool amd_engine_alive(const amd_engine *e) {
  return !e->stop && *e->q_active && *e->q_nactivate == e->seen && !e->fresh;
}

bool amd_engine_preempted(const amd_engine *e) {
  return __atomic_load_n(&e->stop, __ATOMIC_RELAXED) || !__atomic_load_n(e->q_active, __ATOMIC_RELAXED) ||
         __atomic_load_n(e->q_nactivate, __ATOMIC_RELAXED) != e->seen || __atomic_load_n(&e->fresh, __ATOMIC_RELAXED);
}

void amd_engine_vbad(const amd_engine *e, const amd_pk_src *s, const char *unit, const uint32_t *pk, unsigned n,
                     const char *fmt, va_list ap) {
  char msg[256], dws[128] = "";
  vsnprintf(msg, sizeof(msg), fmt, ap);
  size_t used = 0;
  for (unsigned i = 0; i < n && i < 8; i++)
    used += (size_t)snprintf(dws + used, sizeof(dws) - used, " %08x", pk[i]);
  amd_fail(e->g, "%s: %s; packet at %s 0x%" PRIx64 " %s 0x%" PRIx64 ":%s%s (queue hung)", e->ops->name, msg,
           s->ib ? "IB" : "ring", s->va, unit, s->off, dws, n > 8 ? " ..." : "");
}

int amd_engine_ring_read(amd_engine *e, amd_vm *vm, uint64_t base, uint64_t size, uint64_t at, unsigned n,
                         uint32_t *dst, unsigned cid) {
  char what[32];
  snprintf(what, sizeof(what), "%s ring fetch", e->ops->name);
  while (n) {
    uint64_t pos = at % size, k = (size - pos) / 4 < n ? (size - pos) / 4 : n;
    if (amd_vm_read(vm, base + pos, dst, k * 4, what, cid) < 0) return -1;
    at += k * 4, dst += k, n -= (unsigned)k;
  }
  return 0;
}

int amd_engine_poll(amd_engine *e, amd_vm *vm, bool mem, uint64_t where, unsigned func, uint32_t ref, uint32_t mask,
                    const char *fault_what, unsigned cid) {
  for (unsigned us = 10;; us = us < 1000 ? us * 2 : 1000) {
    uint32_t v;
    if (mem) {
      if (amd_vm_load32(vm, where, &v, fault_what, cid) < 0) return AMD_X_HUNG;
    } else {
      v = mock_amd_rreg(e->g, (uint32_t)where);
    }
    if (amd_wait_compare(func, v & mask, ref)) return AMD_X_OK;
    if (!amd_engine_sleep(e, us) || !amd_engine_alive(e)) return AMD_X_STOPPED;
  }
}

bool amd_engine_read_priv(mock_amd *g, const amd_engine_ops *ops, size_t off, void *out, size_t n) {
  mock_shm_lock(&g->lock);
  amd_engine *e = amd_engine_find(g, ops);
  if (e) memcpy(out, (const char *)e->priv + off, n);
  pthread_mutex_unlock(&g->lock);
  return e != NULL;
}
