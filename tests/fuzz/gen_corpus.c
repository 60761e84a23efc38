/* tests/fuzz/gen_corpus.c: writes the generated seeds of corpus/fuzz_fw and corpus/fuzz_discovery (run once by hand,
 * the output is committed: `ninja -C build tests/fuzz/fuzz_gen_corpus && build/tests/fuzz/fuzz_gen_corpus tests/fuzz/corpus`).
 * Firmware: every file of every chip tests/unit/am/fw_gen.c models, plus the PSP sOS v1.x layouts, a TA and a TOC,
 * each prefixed with its family byte (fuzz_fw.c). Discovery: the three configurations of
 * tests/unit/am/discovery_gen.c, as the 10 KiB table read from VRAM. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../unit/am/discovery_gen.h"
#include "../unit/am/fw_gen.h"

static int put(const char *dir, const char *name, uint8_t prefix, bool prefixed, const uint8_t *b, size_t n) {
  char p[4096];
  mkdir(dir, 0755);
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) {
    perror(p);
    return -1;
  }
  if (prefixed) fputc(prefix, f);
  fwrite(b, 1, n, f);
  return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  char fw[4096], disc[4096];
  snprintf(fw, sizeof fw, "%s/fuzz_fw", argv[1]);
  snprintf(disc, sizeof disc, "%s/fuzz_discovery", argv[1]);
  static const char *const chip_names[] = {"gfx11", "gfx12", "gfx942"};
  int r = 0;
  for (int c = 0; c < FW_GEN_NCHIPS; c++) {
    for (int f = 0; f < BG_AM_FW_NFILES; f++) {
      fw_gen_spec s;
      if (!fw_gen_chip_spec((fw_gen_chip_id)c, (bg_am_fw_file_id)f, &s)) continue;
      size_t n;
      uint8_t *b = fw_gen_build(&s, &n);
      if (!b) continue;
      char name[96];
      snprintf(name, sizeof name, "%s-%s-v%u.%u", chip_names[c], bg_fw_family_name(s.family), s.major, s.minor);
      for (char *q = name; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '.' && *q != '-') *q = '_';
      r |= put(fw, name, (uint8_t)s.family, true, b, n);
      free(b);
    }
  }
  static const uint32_t ta_types[] = {BG_TA_FW_XGMI, BG_TA_FW_RAS, BG_TA_FW_HDCP};
  const fw_gen_spec extra[] = {
      {BG_FW_PSP_SOS, 1, 0, 11, 0, 7, NULL, 0, 0}, {BG_FW_PSP_SOS, 1, 1, 11, 0, 8, NULL, 0, 0},
      {BG_FW_PSP_SOS, 1, 2, 11, 0, 9, NULL, 0, 0}, {BG_FW_PSP_SOS, 1, 3, 11, 0, 10, NULL, 0, 0},
      {BG_FW_PSP_TA, 2, 0, 13, 0, 11, ta_types, 3, 0}, {BG_FW_PSP_TOC, 1, 0, 13, 0, 12, NULL, 0, 0},
  };
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
    size_t n;
    uint8_t *b = fw_gen_build(&extra[i], &n);
    if (!b) continue;
    char name[96];
    snprintf(name, sizeof name, "extra-%s-v%u.%u", bg_fw_family_name(extra[i].family), extra[i].major, extra[i].minor);
    for (char *q = name; *q; q++)
      if (!isalnum((unsigned char)*q) && *q != '.' && *q != '-') *q = '_';
    r |= put(fw, name, (uint8_t)extra[i].family, true, b, n);
    free(b);
  }
  void (*const cfgs[])(struct discgen_config *) = {discgen_config_mock, discgen_config_gfx11, discgen_config_gfx942};
  static const char *const cfg_names[] = {"mock", "gfx11", "gfx942"};
  for (int i = 0; i < 3; i++) {
    static struct discgen_config cfg;
    static uint8_t buf[BG_AM_DISC_TABLE_SIZE];
    memset(&cfg, 0, sizeof cfg);
    cfgs[i](&cfg);
    size_t n = discgen_build(&cfg, buf, sizeof buf, NULL);
    if (!n) {
      fprintf(stderr, "gen_corpus: discovery configuration %s does not build\n", cfg_names[i]);
      return 1;
    }
    r |= put(disc, cfg_names[i], 0, false, buf, sizeof buf);
  }
  return r ? 1 : 0;
}
