/* nv/nv_copy.c: host <-> device copies of the NV device (bg_backend_ops copyin/copyout; tinygrad
 * tinygrad/runtime/ops_nv.py NVDevice and HCQCompiled._copyin/_copyout).
 *
 * The core calls these for every bg_buf_write/read. After a synchronize, memory with a CPU view (host memory, the
 * CPU-visible low window) is read and written directly. Memory without one goes through a host staging buffer
 * (BG_BUF_HOST | BG_BUF_CPU_ACCESS, 16 MiB) and the copy channel: a queue program of the device (copy, then a timeline
 * signal) per chunk, waited for. Each bg_dev has its own staging buffer and queue (nv_gpu.stages, under nv_gpu.lock).
 * Behind the USB bridge the GPU reaches no host memory: copies stream through BAR1 (nv_pci_hcq.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nv/nv_hcq.h"

#define STAGE_SIZE ((uint64_t)16 << 20)

struct nv_stage {
  struct nv_stage *next;
  bg_dev *d;
  bg_buf *buf;
  bg_queue *q;
};

static struct nv_stage *stage_of(bg_dev *d) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  struct nv_stage *s = g->stages;
  while (s && s->d != d) s = s->next;
  if (!s && (s = calloc(1, sizeof(*s)))) {
    s->d = d;
    s->next = g->stages;
    g->stages = s;
  }
  pthread_mutex_unlock(&g->lock);
  return s;
}

static int stage_ready(bg_dev *d, struct nv_stage **out) {
  struct nv_stage *s = stage_of(d);
  if (!s) return bg_error(BG_ENOMEM, "nv: out of host memory");
  int e = 0;
  if (!s->buf) e = bg_buf_alloc(d, STAGE_SIZE, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &s->buf);
  if (e >= 0 && !bg_buf_cpu(s->buf)) e = bg_error(BG_ENOTSUP, "the staging buffer has no CPU view");
  if (e >= 0 && !s->q) e = bg_queue_new(d, BG_QUEUE_COPY, &s->q);
  if (e < 0) return bg_error_context(e, "nv: %s: copy staging: ", d->name);
  *out = s;
  return 0;
}

/* One copy-engine copy between GPU addresses, waited for. */
static int engine_copy(bg_dev *d, struct nv_stage *s, uint64_t dst, uint64_t src, uint64_t n) {
  bg_queue_reset(s->q);
  bg_queue_copy(s->q, bg_const(dst), bg_const(src), n);
  bg_queue_signal(s->q, bg_timeline_addr(s->q), bg_timeline_value(s->q, 0));
  int e = bg_queue_submit(s->q, NULL, 0);
  return e < 0 ? e : bg_dev_synchronize(d, 0);
}

int bg_nv_copyin(bg_dev *d, bg_mem *dst, uint64_t off, const void *src, uint64_t n) {
  int e = bg_dev_synchronize(d, 0);
  if (e < 0) return e;
  if (dst->cpu) {
    memcpy((uint8_t *)dst->cpu + off, src, n);
    return 0;
  }
  nv_gpu *g = bg_nv_gpu(d);
  if (bg_nv_pci_bridged(g)) return bg_nv_pci_copy(g, dst, off, src, NULL, n); /* no host DMA: through BAR1 */
  struct nv_stage *s;
  if ((e = stage_ready(d, &s)) < 0) return e;
  for (uint64_t done = 0; done < n && e >= 0; done += STAGE_SIZE) {
    uint64_t c = n - done < STAGE_SIZE ? n - done : STAGE_SIZE;
    memcpy(bg_buf_cpu(s->buf), (const uint8_t *)src + done, c);
    e = engine_copy(d, s, dst->va + off + done, bg_buf_va(s->buf), c);
  }
  return e;
}

int bg_nv_copyout(bg_dev *d, const bg_mem *src, uint64_t off, void *dst, uint64_t n) {
  int e = bg_dev_synchronize(d, 0);
  if (e < 0) return e;
  if (src->cpu) {
    memcpy(dst, (const uint8_t *)src->cpu + off, n);
    return 0;
  }
  nv_gpu *g = bg_nv_gpu(d);
  if (bg_nv_pci_bridged(g)) return bg_nv_pci_copy(g, src, off, NULL, dst, n);
  struct nv_stage *s;
  if ((e = stage_ready(d, &s)) < 0) return e;
  for (uint64_t done = 0; done < n && e >= 0; done += STAGE_SIZE) {
    uint64_t c = n - done < STAGE_SIZE ? n - done : STAGE_SIZE;
    if ((e = engine_copy(d, s, bg_buf_va(s->buf), src->va + off + done, c)) >= 0)
      memcpy((uint8_t *)dst + done, bg_buf_cpu(s->buf), c);
  }
  return e;
}

void bg_nv_copy_fini(bg_dev *d) {
  nv_gpu *g = bg_nv_gpu(d);
  pthread_mutex_lock(&g->lock);
  struct nv_stage **pp = &g->stages, *s = NULL;
  while (*pp && (*pp)->d != d) pp = &(*pp)->next;
  if (*pp) {
    s = *pp;
    *pp = s->next;
  }
  pthread_mutex_unlock(&g->lock);
  if (!s) return;
  bg_queue_free(s->q);
  bg_buf_free(s->buf);
  free(s);
}
