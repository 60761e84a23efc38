/* compile/ktc.c: the tensor-core forms of AMD processors (ktc.h). */
#include "compile/ktc.h"

#include <string.h>

static const ktc_shape shapes[] = {
  [KTC_RDNA3_WMMA] = {"RDNA3 WMMA", 32, 16, 0, 8, 2, 1, false},
  [KTC_RDNA4_WMMA] = {"RDNA4 WMMA", 32, 8, 8, 8, 1, 8, true},
  [KTC_CDNA3_MFMA] = {"CDNA3 MFMA", 64, 4, 4, 4, 1, 4, true},
};

ktc_form ktc_form_of(const char *mcpu) {
  if (!mcpu) return KTC_NONE;
  if (!strncmp(mcpu, "gfx11", 5)) return KTC_RDNA3_WMMA;
  if (!strcmp(mcpu, "gfx1200") || !strcmp(mcpu, "gfx1201")) return KTC_RDNA4_WMMA;   /* not gfx1250's other WMMA */
  if (!strcmp(mcpu, "gfx942") || !strcmp(mcpu, "gfx950")) return KTC_CDNA3_MFMA;
  return KTC_NONE;
}

const ktc_shape *ktc_shape_of(ktc_form f) { return f == KTC_NONE ? NULL : &shapes[f]; }
