/* nv/nv_fw_elf.c: the ELF containers of NVIDIA firmware: the GSP-RM image and the FMC of FSP chips (nv_fw.h).
 *
 * Both are ELF64 little-endian files whose payloads are named sections (Linux nouveau nvkm/subdev/gsp/r535.c
 * r535_gsp_elf_section looks .fwimage and the chip's signature section up by name and checks nothing else; reference
 * tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT). e_type and e_machine are not checked: the firmware files are containers, not programs. The
 * section headers are read by formats/elf64.c (every section inside the file, names inside the string table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/elf64.h"
#include "nv/nv_fw.h"

enum { FMC_HASH = 48, FMC_SIG = 384, FMC_KEY = 384, FMC_KEY_MIN = 381 };

static int open_elf(const uint8_t *file, size_t n, const char *what, bg_elf64 *e) {
  *e = (bg_elf64){.p = file, .n = n, .who = what};
  if (n < BG_ELF_EHDR_SIZE)
    return bg_error(BG_EFORMAT, "%s: file size %zu is smaller than the 64-byte ELF64 header", what, n);
  if (memcmp(file, "\177ELF", 4))
    return bg_error(BG_EFORMAT, "%s: e_ident magic %02x %02x %02x %02x, expected 7f 45 4c 46 (an ELF file)", what,
                    file[0], file[1], file[2], file[3]);
  if (file[4] != 2 || file[5] != 1)
    return bg_error(BG_EFORMAT, "%s: EI_CLASS %u / EI_DATA %u, expected ELFCLASS64 (2) / ELFDATA2LSB (1)", what,
                    file[4], file[5]);
  /* formats/elf64.c reports a malformed file as BG_EINVAL; here it is a bad firmware file (same message). */
  return bg_elf64_sections(e) < 0 ? -BG_EFORMAT : 0;
}

/* Section `name` with file data (not SHT_NULL / SHT_NOBITS), or NULL. */
static const bg_elf64_sec *section(const bg_elf64 *e, const char *name) {
  for (unsigned i = 1; i < e->ns; i++) {
    const bg_elf64_sec *s = &e->s[i];
    if (s->sname && strcmp(s->sname, name) == 0 && s->type != BG_SHT_NULL && s->type != BG_SHT_NOBITS &&
        bg_in_bounds(s->offset, s->size, e->n))
      return s;
  }
  return NULL;
}

static int need(const bg_elf64 *e, const char *name, const bg_elf64_sec **out) {
  if (!(*out = section(e, name)))
    return bg_error(BG_EFORMAT, "%s: no section %s with data (%u sections)", e->who, name, e->ns);
  if ((*out)->size == 0) return bg_error(BG_EFORMAT, "%s: section %s is empty", e->who, name);
  return 0;
}

/* "another chip's file": list the signature sections it has. */
static int mismatched(const bg_elf64 *e, const bg_nv_chip *chip) {
  char have[256] = "";
  size_t len = 0;
  for (unsigned i = 1; i < e->ns && len < sizeof(have); i++) {
    const char *nm = e->s[i].sname;
    if (nm && strncmp(nm, ".fwsignature_", 13) == 0)
      len += (size_t)snprintf(have + len, sizeof(have) - len, "%s%s", len ? ", " : "", nm);
  }
  return bg_error(BG_EFORMAT, "%s: mismatched GSP-RM firmware for %s: no section %s; its signature sections: %s",
                  e->who, chip->name, chip->sig_section, have[0] ? have : "none");
}

int bg_nv_gsp_elf_parse(const uint8_t *file, size_t n, const char *what, const bg_nv_chip *chip, bg_nv_gsp_elf *out) {
  bg_elf64 e;
  int r = open_elf(file, n, what, &e);
  const bg_elf64_sec *img = NULL, *sig = NULL;
  if (r == 0) r = need(&e, ".fwimage", &img);
  if (r == 0 && !(sig = section(&e, chip->sig_section))) r = mismatched(&e, chip);
  if (r == 0 && sig->size == 0) r = bg_error(BG_EFORMAT, "%s: section %s is empty", what, chip->sig_section);
  if (r == 0)
    *out = (bg_nv_gsp_elf){.image = file + img->offset, .image_size = (size_t)img->size,
                           .signature = file + sig->offset, .signature_size = (size_t)sig->size};
  free(e.s);
  return r;
}

int bg_nv_fmc_parse(const uint8_t *file, size_t n, const char *what, bg_nv_fmc *out) {
  bg_elf64 e;
  int r = open_elf(file, n, what, &e);
  const bg_elf64_sec *img = NULL, *hash = NULL, *sig = NULL, *key = NULL;
  if (r == 0) r = need(&e, "image", &img);
  if (r == 0) r = need(&e, "hash", &hash);
  if (r == 0) r = need(&e, "signature", &sig);
  if (r == 0) r = need(&e, "publickey", &key);
  if (r == 0 && hash->size != FMC_HASH)
    r = bg_error(BG_EFORMAT, "%s: section hash has %llu bytes, expected %u (SHA-384)", what,
                 (unsigned long long)hash->size, FMC_HASH);
  if (r == 0 && sig->size != FMC_SIG)
    r = bg_error(BG_EFORMAT, "%s: section signature has %llu bytes, expected %u (RSA-3072)", what,
                 (unsigned long long)sig->size, FMC_SIG);
  if (r == 0 && (key->size < FMC_KEY_MIN || key->size > FMC_KEY))
    r = bg_error(BG_EFORMAT, "%s: section publickey has %llu bytes, expected %u..%u", what,
                 (unsigned long long)key->size, FMC_KEY_MIN, FMC_KEY);
  if (r == 0) {
    bg_nv_fmc o = {.image = file + img->offset, .image_size = (size_t)img->size};
    memcpy(o.hash, file + hash->offset, FMC_HASH);
    memcpy(o.signature, file + sig->offset, FMC_SIG);
    memcpy(o.public_key, file + key->offset, (size_t)key->size); /* the rest stays 0: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT's padding */
    *out = o;
  }
  free(e.s);
  return r;
}
