/* util/grow.c: bg_grow, doubling growth of heap arrays with overflow checks. */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool bg_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  if (elem == 0 || need > SIZE_MAX / elem) return false; /* need * elem overflows */
  size_t nc = *cap > 16 ? *cap : 16;
  while (nc < need) nc = nc > SIZE_MAX / 2 ? need : nc * 2;
  if (nc > SIZE_MAX / elem) nc = need;                   /* doubling overshot: take exactly need */
  void *np = realloc(*p, nc * elem);
  if (!np) return false;
  memset((char *)np + *cap * elem, 0, (nc - *cap) * elem);
  *p = np;
  *cap = nc;
  return true;
}
