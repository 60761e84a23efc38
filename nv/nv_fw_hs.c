/* nv/nv_fw_hs.c: Booter (heavy-secure falcon ucode) and the GSP bootloader, both behind an nvfw_bin_hdr (nv_fw.h).
 *
 * Layouts: Linux nouveau include/nvfw/fw.h (nvfw_bin_hdr), include/nvfw/hs.h (nvfw_hs_header_v2,
 * nvfw_hs_load_header_v2), nvkm/falcon/fw.c nvkm_falcon_fw_ctor_hs_v2 (patch_loc, patch_sig and num_sig are file
 * offsets of u32 values; the signature is sig_prod_size / num_sig bytes at sig_prod_offset + patch_sig, copied into
 * the image at patch_loc); include/nvrm/535.113.01/.../rmRiscvUcode.h (RM_RISCV_UCODE_DESC) and nvkm/subdev/gsp/r535.c
 * r535_gsp_rm_boot_ctor; tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN and NV_GSP.init_sw. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/elf64.h"
#include "nv/nv_fw.h"


enum {
  BIN_HDR_SIZE = 24,         /* bin_magic, bin_ver, bin_size, header_offset, data_offset, data_size */
  BIN_MAGIC = 0x10de,
  HS_HDR_V2_SIZE = 36,       /* nine u32 */
  HS_LOAD_V2_SIZE = 20,      /* os_code_offset, os_code_size, os_data_offset, os_data_size, num_apps; then app[] */
  HS_APP_SIZE = 8,           /* {offset, size} */
  HS_MAX_APPS = 256,
  RISCV_DESC_SIZE = 84,      /* RM_RISCV_UCODE_DESC: 21 u32 */
};

/* A BG_EFORMAT error naming the file: "WHAT: <message>". */
__attribute__((format(printf, 2, 3))) static int ferr(const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = bg_verror(BG_EFORMAT, fmt, ap);
  va_end(ap);
  return bg_error_context(r, "%s: ", what);
}

typedef struct bin_hdr {
  uint32_t header_offset, data_offset, data_size;
} bin_hdr;

static int bin_header(const uint8_t *f, size_t n, const char *what, bin_hdr *h) {
  if (n < BIN_HDR_SIZE) return ferr(what, "file size %zu, smaller than the 24-byte nvfw_bin_hdr", n);
  uint32_t magic = bg_le32(f);
  if (magic != BIN_MAGIC) return ferr(what, "nvfw_bin_hdr.bin_magic 0x%x, expected 0x10de", magic);
  *h = (bin_hdr){bg_le32(f + 12), bg_le32(f + 16), bg_le32(f + 20)};
  if (h->data_size == 0) return ferr(what, "nvfw_bin_hdr.data_size 0, expected a non-empty image");
  if (!bg_in_bounds(h->data_offset, h->data_size, n))
    return ferr(what, "nvfw_bin_hdr.data_offset 0x%x + data_size 0x%x exceed the file size 0x%zx", h->data_offset,
                h->data_size, n);
  return 0;
}

/* The u32 at file offset `at` (a field of the HS header that points at its value). */
static int indirect(const uint8_t *f, size_t n, const char *what, const char *field, uint32_t at, uint32_t *v) {
  if (!bg_in_bounds(at, 4, n))
    return ferr(what, "nvfw_hs_header_v2.%s 0x%x: its u32 lies outside the file (0x%zx bytes)", field, at, n);
  *v = bg_le32(f + at);
  return 0;
}

int bg_nv_booter_parse(const uint8_t *file, size_t n, const char *what, bg_nv_booter *out) {
  bin_hdr b;
  int r = bin_header(file, n, what, &b);
  if (r < 0) return r;
  if (!bg_in_bounds(b.header_offset, HS_HDR_V2_SIZE, n))
    return ferr(what, "nvfw_bin_hdr.header_offset 0x%x: the 36-byte nvfw_hs_header_v2 exceeds the file size 0x%zx",
                b.header_offset, n);
  const uint8_t *hs = file + b.header_offset;
  uint32_t sig_prod_offset = bg_le32(hs), sig_prod_size = bg_le32(hs + 4), loc, sig, num;
  if ((r = indirect(file, n, what, "patch_loc", bg_le32(hs + 8), &loc)) < 0 ||
      (r = indirect(file, n, what, "patch_sig", bg_le32(hs + 12), &sig)) < 0 ||
      (r = indirect(file, n, what, "num_sig", bg_le32(hs + 24), &num)) < 0)
    return r;
  if (num == 0) return ferr(what, "nvfw_hs_header_v2 num_sig 0, expected at least one signature");
  uint32_t sig_len = sig_prod_size / num;
  if (sig_len == 0 || sig_prod_size % num)
    return ferr(what, "nvfw_hs_header_v2.sig_prod_size 0x%x is not num_sig %u signatures", sig_prod_size, num);
  if (!bg_in_bounds((uint64_t)sig_prod_offset + sig, sig_len, n))
    return ferr(what, "nvfw_hs_header_v2 signature at sig_prod_offset 0x%x + patch_sig 0x%x (0x%x bytes) exceeds the "
                "file size 0x%zx", sig_prod_offset, sig, sig_len, n);
  if (!bg_in_bounds(loc, sig_len, b.data_size))
    return ferr(what, "nvfw_hs_header_v2 patch_loc 0x%x + signature 0x%x bytes exceed data_size 0x%x", loc,
                sig_len, b.data_size);
  uint32_t lh = bg_le32(hs + 28);
  if (!bg_in_bounds(lh, HS_LOAD_V2_SIZE, n))
    return ferr(what, "nvfw_hs_header_v2.header_offset 0x%x: the nvfw_hs_load_header_v2 exceeds the file size 0x%zx",
                lh, n);
  const uint8_t *l = file + lh;
  uint32_t num_apps = bg_le32(l + 16);
  if (num_apps == 0 || num_apps > HS_MAX_APPS)
    return ferr(what, "nvfw_hs_load_header_v2.num_apps %u, expected 1..%u", num_apps, HS_MAX_APPS);
  if (!bg_in_bounds(lh, HS_LOAD_V2_SIZE + (uint64_t)num_apps * HS_APP_SIZE, n))
    return ferr(what, "nvfw_hs_load_header_v2 with %u apps at 0x%x exceeds the file size 0x%zx", num_apps, lh, n);
  bg_nv_booter o = {.os_code_offset = bg_le32(l), .os_code_size = bg_le32(l + 4), .os_data_offset = bg_le32(l + 8),
                    .os_data_size = bg_le32(l + 12), .app0_offset = bg_le32(l + 20), .app0_size = bg_le32(l + 24)};
  if (!bg_in_bounds(o.os_data_offset, o.os_data_size, b.data_size))
    return ferr(what, "nvfw_hs_load_header_v2.os_data_offset 0x%x + os_data_size 0x%x exceed data_size 0x%x",
                o.os_data_offset, o.os_data_size, b.data_size);
  if (o.app0_size == 0 || !bg_in_bounds(o.app0_offset, o.app0_size, b.data_size))
    return ferr(what, "nvfw_hs_load_header_v2.app[0] offset 0x%x size 0x%x: expected a non-empty range inside "
                "data_size 0x%x", o.app0_offset, o.app0_size, b.data_size);
  if (!(o.image = malloc(b.data_size)))
    return bg_error(BG_ENOMEM, "%s: out of memory for the 0x%x-byte image", what, b.data_size);
  memcpy(o.image, file + b.data_offset, b.data_size);
  memcpy(o.image + loc, file + sig_prod_offset + sig, sig_len);
  o.image_size = b.data_size;
  *out = o;
  return 0;
}

void bg_nv_booter_free(bg_nv_booter *b) {
  if (!b) return;
  free(b->image);
  *b = (bg_nv_booter){0};
}

int bg_nv_bootloader_parse(const uint8_t *file, size_t n, const char *what, bg_nv_bootloader *out) {
  bin_hdr b;
  int r = bin_header(file, n, what, &b);
  if (r < 0) return r;
  if (!bg_in_bounds(b.header_offset, RISCV_DESC_SIZE, n))
    return ferr(what, "nvfw_bin_hdr.header_offset 0x%x: the 84-byte RM_RISCV_UCODE_DESC exceeds the file size 0x%zx",
                b.header_offset, n);
  const uint8_t *d = file + b.header_offset;
  bg_nv_bootloader o = {.data = file + b.data_offset, .data_size = b.data_size, .manifest_offset = bg_le32(d + 32),
                        .monitor_data_offset = bg_le32(d + 40), .monitor_code_offset = bg_le32(d + 48)};
  static const struct { const char *name; unsigned at; } fields[] = {
      {"manifestOffset", 32}, {"monitorDataOffset", 40}, {"monitorCodeOffset", 48}};
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
    if (bg_le32(d + fields[i].at) >= b.data_size)
      return ferr(what, "RM_RISCV_UCODE_DESC.%s 0x%x, expected inside the image (data_size 0x%x)", fields[i].name,
                  bg_le32(d + fields[i].at), b.data_size);
  *out = o;
  return 0;
}
