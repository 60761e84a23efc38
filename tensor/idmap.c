/* tensor/idmap.c: a small open-addressing hash map keyed by two u64 words (node ids and the like),
 * used by the scheduler for per-realize sets and memo tables, so a realize costs what it visits
 * and not what the whole lazy graph holds. */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor_internal.h"

static uint64_t mix(uint64_t k1, uint64_t k2) {
  uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull + (k1 << 6) + (k1 >> 2));
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

tmap_ent *tmap_get(const tmap *m, uint64_t k1, uint64_t k2) {
  if (!m->cap) return NULL;
  for (size_t i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    tmap_ent *e = &m->e[i];
    if (!e->used) return NULL;
    if (e->k1 == k1 && e->k2 == k2) return e;
  }
}

static bool grow(tmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  tmap_ent *ne = calloc(ncap, sizeof *ne);
  if (!ne) return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->e[i].used) continue;
    size_t j = mix(m->e[i].k1, m->e[i].k2) & (ncap - 1);
    while (ne[j].used) j = (j + 1) & (ncap - 1);
    ne[j] = m->e[i];
  }
  free(m->e);
  m->e = ne;
  m->cap = ncap;
  return true;
}

tmap_ent *tmap_put(tmap *m, uint64_t k1, uint64_t k2) {
  tmap_ent *e = tmap_get(m, k1, k2);
  if (e) return e;
  if ((m->n + 1) * 4 > m->cap * 3 && !grow(m)) return NULL; /* load factor <= 3/4 */
  size_t i = mix(k1, k2) & (m->cap - 1);
  while (m->e[i].used) i = (i + 1) & (m->cap - 1);
  e = &m->e[i];
  e->used = true;
  e->k1 = k1;
  e->k2 = k2;
  e->v = 0;
  m->n++;
  return e;
}

void tmap_clear(tmap *m) {
  if (m->e) memset(m->e, 0, m->cap * sizeof *m->e);
  m->n = 0;
}

void tmap_free(tmap *m) {
  free(m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}
