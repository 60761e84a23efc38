/* cpu/cpu_peer.c: peer access between CPU devices (hcq/backend.h peer_*): every CPU device's memory is host memory at
 * its own address (device address = host address), so another CPU device reaches it directly; a mapping only lets
 * the mapper's workers accept those addresses (bg_cpu_in_range checks every operand against the device's own
 * reservation, bg_cpu_peer_in_range against the windows mapped into it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"

typedef struct window {
  const cpu_dev *cd;      /* the mapping device */
  uint64_t va, size;
} window;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static window *wins;
static size_t nwins, capwins;

bool bg_cpu_peer_in_range(const cpu_dev *cd, uint64_t addr, uint64_t n) {
  bool in = false;
  pthread_rwlock_rdlock(&lock);
  for (size_t i = 0; i < nwins && !in; i++)
    in = wins[i].cd == cd && addr >= wins[i].va && n <= wins[i].size && addr - wins[i].va <= wins[i].size - n;
  pthread_rwlock_unlock(&lock);
  return in;
}

int bg_cpu_peer_export(bg_dev *owner, const bg_mem *m, bg_peer_pages *out) {
  (void)owner;
  memset(out, 0, sizeof(*out));
  out->host = m->va;
  out->size = m->size;
  return 0;
}

int bg_cpu_peer_reach(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n) {
  (void)d, (void)owner, (void)vram, (void)why, (void)n;
  return 0; /* one address space: every CPU device reaches every other one's memory */
}

int bg_cpu_peer_map(bg_dev *d, const bg_peer_pages *p, uint64_t *va) {
  if (!p->host || !p->size) return bg_error(BG_EINVAL, "cpu: peer mapping without a CPU address or size");
  pthread_rwlock_wrlock(&lock);
  if (nwins == capwins) {
    size_t cap = capwins ? capwins * 2 : 16;
    window *w = realloc(wins, cap * sizeof(*w));
    if (!w) {
      pthread_rwlock_unlock(&lock);
      return bg_error(BG_ENOMEM, "cpu: out of host memory for a peer mapping");
    }
    wins = w;
    capwins = cap;
  }
  wins[nwins++] = (window){d->priv, p->host, p->size};
  pthread_rwlock_unlock(&lock);
  *va = p->host;
  return 0;
}

void bg_cpu_peer_unmap(bg_dev *d, uint64_t va, uint64_t size) {
  pthread_rwlock_wrlock(&lock);
  for (size_t i = 0; i < nwins; i++)
    if (wins[i].cd == d->priv && wins[i].va == va && wins[i].size == size) {
      wins[i] = wins[--nwins];
      break;
    }
  if (!nwins) {
    free(wins);
    wins = NULL;
    capwins = 0;
  }
  pthread_rwlock_unlock(&lock);
}
