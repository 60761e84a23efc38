/* nv/nv_fw_vbios.c: the FWSEC_PROD ucode of the VBIOS and its FRTS patch (nv_fw.h).
 *
 * Layouts: Linux nouveau nvkm/subdev/bios/{image,pcir,npde,bit,pmu}.c (PCI expansion ROM images, NPDE extension, BIT
 * header and tokens, falcon ucode table), nvkm/subdev/gsp/fwsec.c (FALCON_UCODE_DESC_V3, application interface table,
 * DMEM mapper v3, the FRTS command) and open-gpu-kernel-modules src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c and
 * arch/turing/kernel_gsp_frts_tu102.c (signature choice by fuse version, bounds of the interface data); tinygrad's NV code
 * 2.3 step A. Every offset read from the ROM is checked against the buffer before it is used. */
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "formats/elf64.h"
#include "nv/nv_fw.h"

#define VERR(...) bg_error(BG_EFORMAT, "VBIOS: " __VA_ARGS__)

enum {
  PCIR_LEN_MIN = 0x18,        /* PCI data structure up to and including the indicator byte */
  BIT_HDR_MIN = 12,           /* u16 id, "BIT\0", u16 BCD, u8 HeaderSize, TokenSize, TokenEntries, Checksum */
  BIT_TOKEN_MIN = 6,          /* u8 id, u8 version, u16 size, u16 pointer */
  BIT_FALCON_DATA = 0x70,     /* 'p' */
  UCODE_ENTRY_MIN = 6,        /* u8 ApplicationID, u8 TargetID, u32 DescPtr */
  APPID_FWSEC_PROD = 0x85,
  DESC_V3_SIZE = 44,
  APPIF_DMEMMAPPER = 4,
  DMEMMAPPER_V3_SIZE = 64,    /* FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3 */
  DMEMMAPPER_CMD_IN_OFF = 8,  /* cmd_in_buffer_offset */
  DMEMMAPPER_INIT_CMD = 44,   /* init_cmd */
  CMD_FRTS = 0x15,
  FRTS_CMD_SIZE = 44,         /* FWSECLIC_READ_VBIOS_DESC (24) + FWSECLIC_FRTS_REGION_DESC (20) */
};

/* A ROM address as nouveau's nvbios_addr() maps it: pointers at or past the base image's length land in the
 * extended (0xE0) image. */
static uint64_t rom_addr(const bg_nv_vbios *v, uint32_t base_len, uint32_t ptr) {
  return ptr >= base_len ? (uint64_t)v->expansion_rom_off + ptr : ptr;
}

/* The images (nouveau image.c nvbios_imagen): signature 0xAA55 (0xBB77 and "NV" also accepted, as nouveau does), the
 * PCI data structure at u16@0x18, its length u16@+0x10 in 512-byte units, code type @+0x14, last-image bit 7 of
 * @+0x15; an NPDE extension after it (16-byte aligned) overrides length and last bit except for type 0x70. */
static int walk_images(const uint8_t *rom, size_t n, bg_nv_vbios *v, uint32_t *base_len) {
  uint64_t o = 0;
  for (unsigned idx = 0;; idx++) {
    if (!bg_in_bounds(o, 0x1a, n))
      return VERR("image %u at 0x%llx: past the end of the %zu-byte ROM without an extended image (PCIR code type "
                  "0xE0)", idx, (unsigned long long)o, n);
    uint16_t sig = bg_le16(rom + o);
    if (sig != 0xaa55 && sig != 0xbb77 && sig != 0x4e56)
      return VERR("image %u at 0x%llx: ROM signature 0x%04x, expected 0xaa55", idx, (unsigned long long)o, sig);
    uint64_t pcir = o + bg_le16(rom + o + 0x18);
    if (!bg_in_bounds(pcir, PCIR_LEN_MIN, n))
      return VERR("image %u at 0x%llx: PCIR pointer 0x%x outside the ROM", idx, (unsigned long long)o,
                  bg_le16(rom + o + 0x18));
    uint32_t psig = bg_le32(rom + pcir);
    if (psig != 0x52494350 && psig != 0x53494752 && psig != 0x5344504e)
      return VERR("image %u at 0x%llx: PCI data structure signature 0x%08x, expected \"PCIR\"", idx,
                  (unsigned long long)o, psig);
    uint32_t len = (uint32_t)bg_le16(rom + pcir + 0x10) * 512;
    uint8_t type = rom[pcir + 0x14];
    bool last = rom[pcir + 0x15] & 0x80;
    uint64_t npde = (pcir + bg_le16(rom + pcir + 0x0a) + 0x0f) & ~(uint64_t)0x0f;
    if (type != 0x70 && bg_in_bounds(npde, 11, n) && bg_le32(rom + npde) == 0x4544504e) {
      len = (uint32_t)bg_le16(rom + npde + 8) * 512;
      last = rom[npde + 10] & 0x80;
    }
    if (len == 0) return VERR("image %u at 0x%llx: image length 0", idx, (unsigned long long)o);
    if (idx == 0) *base_len = len;
    if (type == 0xe0 && idx > 0) {
      v->expansion_rom_off = (uint32_t)(o - *base_len);
      return 0;
    }
    if (last)
      return VERR("image %u at 0x%llx is the last image (PCIR indicator bit 7) and no image has code type 0xE0 "
                  "(the extended image holding the falcon ucodes)", idx, (unsigned long long)o);
    o += len;
  }
}

/* The BIT header: nouveau base.c finds the bytes ff b8 "BIT" anywhere in the ROM (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN: at 0x1b0). */
static int find_bit(const uint8_t *rom, size_t n, bg_nv_vbios *v) {
  static const uint8_t pat[6] = {0xff, 0xb8, 'B', 'I', 'T', 0};
  for (size_t i = 0; n >= sizeof(pat) && i <= n - sizeof(pat); i++)
    if (rom[i] == 0xff && memcmp(rom + i, pat, sizeof(pat)) == 0) {
      v->bit_off = (uint32_t)i;
      return 0;
    }
  return VERR("no BIT header (bytes ff b8 \"BIT\\0\") in the %zu-byte ROM", n);
}

/* BIT token FALCON_DATA (0x70) version 2: its data starts with the u32 pointer of the falcon ucode table
 * (nouveau pmu.c nvbios_pmuTe; both pointers go through the image mapping of rom_addr, as nvbios_rd32 does). */
static int ucode_table_ptr(const uint8_t *rom, size_t n, const bg_nv_vbios *v, uint32_t base_len, uint32_t *ptr) {
  uint64_t b = v->bit_off;
  if (!bg_in_bounds(b, BIT_HDR_MIN, n)) return VERR("BIT header at 0x%llx cut off by the ROM end", (unsigned long long)b);
  unsigned hsize = rom[b + 8], tsize = rom[b + 9], count = rom[b + 10];
  if (hsize < BIT_HDR_MIN) return VERR("BIT HeaderSize %u, expected at least %u", hsize, BIT_HDR_MIN);
  if (tsize < BIT_TOKEN_MIN) return VERR("BIT TokenSize %u, expected at least %u", tsize, BIT_TOKEN_MIN);
  for (unsigned i = 0; i < count; i++) {
    uint64_t t = b + hsize + (uint64_t)i * tsize;
    if (!bg_in_bounds(t, BIT_TOKEN_MIN, n)) return VERR("BIT token %u of %u outside the ROM", i, count);
    if (rom[t] != BIT_FALCON_DATA) continue;
    unsigned ver = rom[t + 1], size = bg_le16(rom + t + 2), data = bg_le16(rom + t + 4);
    if (ver != 2 || size < 4)
      return VERR("BIT token FALCON_DATA (0x70): version %u size %u, expected version 2 and size >= 4", ver, size);
    uint64_t at = rom_addr(v, base_len, data);
    if (!bg_in_bounds(at, 4, n)) return VERR("BIT token FALCON_DATA (0x70): data pointer 0x%x outside the ROM", data);
    *ptr = bg_le32(rom + at);
    return 0;
  }
  return VERR("BIT header at 0x%x has no FALCON_DATA token (id 0x70) among its %u tokens", v->bit_off, count);
}

static int fwsec_desc(const uint8_t *rom, size_t n, uint64_t d, bg_nv_vbios *v) {
  if (!bg_in_bounds(d, DESC_V3_SIZE, n))
    return VERR("FWSEC_PROD descriptor at 0x%llx: 44 bytes do not fit the %zu-byte ROM", (unsigned long long)d, n);
  uint32_t hdr = bg_le32(rom + d);
  unsigned ver = (hdr >> 8) & 0xff, size = hdr >> 16;
  if (!(hdr & 1)) return VERR("FWSEC_PROD descriptor header 0x%08x: flag VERSION_AVAILABLE (bit 0) clear", hdr);
  if (ver != 3) return VERR("FWSEC_PROD descriptor version %u, expected 3 (FALCON_UCODE_DESC_V3)", ver);
  const uint8_t *p = rom + d;
  bg_nv_fwsec_desc *f = &v->fwsec;
  *f = (bg_nv_fwsec_desc){.stored_size = bg_le32(p + 4), .pkc_data_offset = bg_le32(p + 8),
                          .interface_offset = bg_le32(p + 12), .imem_phys_base = bg_le32(p + 16),
                          .imem_load_size = bg_le32(p + 20), .imem_virt_base = bg_le32(p + 24),
                          .dmem_phys_base = bg_le32(p + 28), .dmem_load_size = bg_le32(p + 32),
                          .engine_id_mask = bg_le16(p + 36), .ucode_id = p[38], .signature_count = p[39],
                          .signature_versions = bg_le16(p + 40)};
  uint64_t sigs_end = DESC_V3_SIZE + (uint64_t)f->signature_count * BG_NV_FWSEC_SIG_SIZE;
  if (size < sigs_end)
    return VERR("FWSEC_PROD descriptor size %u (Hdr bits 31:16), expected at least %llu for 44 bytes and %u "
                "signatures of %u bytes", size, (unsigned long long)sigs_end, f->signature_count, BG_NV_FWSEC_SIG_SIZE);
  uint64_t img = d + size, img_size = ((uint64_t)f->stored_size + 255) & ~(uint64_t)255;
  if (!bg_in_bounds(img, img_size, n))
    return VERR("FWSEC_PROD image: StoredSize 0x%x (rounded to 0x%llx) at 0x%llx exceeds the %zu-byte ROM",
                f->stored_size, (unsigned long long)img_size, (unsigned long long)img, n);
  if ((uint64_t)f->imem_load_size + f->dmem_load_size > img_size)
    return VERR("FWSEC_PROD IMEMLoadSize 0x%x + DMEMLoadSize 0x%x exceed the image (StoredSize 0x%x)",
                f->imem_load_size, f->dmem_load_size, f->stored_size);
  if (!bg_in_bounds(f->pkc_data_offset, BG_NV_FWSEC_SIG_SIZE, f->dmem_load_size))
    return VERR("FWSEC_PROD PKCDataOffset 0x%x + a %u-byte signature exceed DMEMLoadSize 0x%x", f->pkc_data_offset,
                BG_NV_FWSEC_SIG_SIZE, f->dmem_load_size);
  if (!bg_in_bounds(f->interface_offset, 4, f->dmem_load_size))
    return VERR("FWSEC_PROD InterfaceOffset 0x%x: the 4-byte interface header exceeds DMEMLoadSize 0x%x",
                f->interface_offset, f->dmem_load_size);
  v->signatures = p + DESC_V3_SIZE;
  v->image = rom + img;
  v->image_size = (size_t)img_size;
  return 0;
}

int bg_nv_vbios_parse(const uint8_t *rom, size_t n, bg_nv_vbios *out) {
  bg_nv_vbios v = {0};
  uint32_t base_len = 0, table_ptr = 0;
  int r;
  if ((r = walk_images(rom, n, &v, &base_len)) < 0 || (r = find_bit(rom, n, &v)) < 0 ||
      (r = ucode_table_ptr(rom, n, &v, base_len, &table_ptr)) < 0)
    return r;
  uint64_t t = rom_addr(&v, base_len, table_ptr);
  if (!bg_in_bounds(t, 6, n))
    return VERR("falcon ucode table pointer 0x%x (at 0x%llx) outside the %zu-byte ROM", table_ptr,
                (unsigned long long)t, n);
  v.ucode_table_off = (uint32_t)t;
  unsigned hsize = rom[t + 1], esize = rom[t + 2], count = rom[t + 3];
  if (esize < UCODE_ENTRY_MIN) return VERR("falcon ucode table EntrySize %u, expected at least 6", esize);
  for (unsigned i = 0; i < count; i++) {
    uint64_t e = t + hsize + (uint64_t)i * esize;
    if (!bg_in_bounds(e, UCODE_ENTRY_MIN, n)) return VERR("falcon ucode table entry %u of %u outside the ROM", i, count);
    if (rom[e] != APPID_FWSEC_PROD) continue;
    if ((r = fwsec_desc(rom, n, rom_addr(&v, base_len, bg_le32(rom + e + 2)), &v)) < 0) return r;
    *out = v;
    return 0;
  }
  return VERR("falcon ucode table at 0x%llx has no FWSEC_PROD entry (application id 0x85) among its %u entries",
              (unsigned long long)t, count);
}

/* The fuse version is what open-gpu-kernel-modules kgspReadUcodeFuseVersion_GA100 returns (index of the highest set
 * bit of the ucode's fuse register plus one, 0 when none is set); kernel_gsp_frts_tu102.c s_prepareForFwsec_TU102 then
 * requires bit <fuse version> of SignatureVersions and takes the signature counted by the set bits below it. tinygrad
 * always takes the last signature (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN.prep_ucode), which fails on a board whose fuses do not match it. */
int bg_nv_fwsec_sig_index(const bg_nv_fwsec_desc *d, uint32_t fuse_version, unsigned *index) {
  if (d->signature_count == 0) return VERR("FWSEC_PROD has no signatures (SignatureCount 0)");
  if (fuse_version > 15 || !(d->signature_versions & (1u << fuse_version)))
    return VERR("FWSEC_PROD has no signature for fuse version %u: SignatureVersions 0x%04x", fuse_version,
                d->signature_versions);
  unsigned idx = (unsigned)__builtin_popcount(d->signature_versions & ((1u << fuse_version) - 1));
  if (idx >= d->signature_count)
    return VERR("FWSEC_PROD signature %u for fuse version %u (SignatureVersions 0x%04x), but SignatureCount is %u",
                idx, fuse_version, d->signature_versions, d->signature_count);
  *index = idx;
  return 0;
}

/* nouveau fwsec.c nvkm_gsp_fwsec_patch / OpenRM s_vbiosPatchInterfaceData: the application interface table at
 * DMEM + InterfaceOffset, its DMEMMAPPER entry, the mapper's init_cmd and command buffer. DMEM starts at
 * IMEMLoadSize in the image. */
int bg_nv_fwsec_frts_image(const bg_nv_vbios *v, unsigned sig_index, uint64_t frts_offset, uint8_t **image,
                           size_t *size) {
  const bg_nv_fwsec_desc *f = &v->fwsec;
  *image = NULL;
  *size = 0;
  if (sig_index >= f->signature_count)
    return VERR("FWSEC signature index %u, expected below SignatureCount %u", sig_index, f->signature_count);
  if ((frts_offset & 0xfff) || (frts_offset >> 12) > UINT32_MAX)
    return bg_error(BG_EINVAL, "FWSEC FRTS offset 0x%llx: expected 4 KiB aligned and below 2^44",
                    (unsigned long long)frts_offset);
  if (!v->image || (uint64_t)f->imem_load_size + f->dmem_load_size > v->image_size)
    return VERR("FWSEC image of 0x%zx bytes smaller than IMEMLoadSize 0x%x + DMEMLoadSize 0x%x", v->image_size,
                f->imem_load_size, f->dmem_load_size);
  const uint8_t *dm = v->image + f->imem_load_size;
  uint32_t dn = f->dmem_load_size, io = f->interface_offset;
  if (!bg_in_bounds(f->pkc_data_offset, BG_NV_FWSEC_SIG_SIZE, dn))
    return VERR("FWSEC PKCDataOffset 0x%x: the signature exceeds DMEM (0x%x bytes)", f->pkc_data_offset, dn);
  if (!bg_in_bounds(io, 4, dn))
    return VERR("FWSEC InterfaceOffset 0x%x: interface header outside DMEM (0x%x bytes)", io, dn);
  unsigned ver = dm[io], hsize = dm[io + 1], esize = dm[io + 2], count = dm[io + 3];
  if (ver != 1) return VERR("FWSEC application interface header version %u, expected 1", ver);
  if (hsize < 4 || esize < 8)
    return VERR("FWSEC application interface header size %u / entry size %u, expected at least 4 / 8", hsize, esize);
  uint64_t mapper = UINT64_MAX;
  for (unsigned i = 0; i < count; i++) {
    uint64_t e = (uint64_t)io + hsize + (uint64_t)i * esize;
    if (!bg_in_bounds(e, 8, dn)) return VERR("FWSEC application interface entry %u of %u outside DMEM", i, count);
    if (bg_le32(dm + e) == APPIF_DMEMMAPPER) {
      mapper = bg_le32(dm + e + 4);
      break;
    }
  }
  if (mapper == UINT64_MAX)
    return VERR("FWSEC application interface table has no DMEMMAPPER entry (id 4) among its %u entries", count);
  if (!bg_in_bounds(mapper, DMEMMAPPER_V3_SIZE, dn))
    return VERR("FWSEC DMEM mapper at DMEM 0x%llx: 64 bytes exceed DMEM (0x%x bytes)", (unsigned long long)mapper, dn);
  uint32_t cmd_off = bg_le32(dm + mapper + DMEMMAPPER_CMD_IN_OFF);
  if (!bg_in_bounds(cmd_off, FRTS_CMD_SIZE, dn))
    return VERR("FWSEC DMEM mapper cmd_in_buffer_offset 0x%x: the 44-byte FRTS command exceeds DMEM (0x%x bytes)",
                cmd_off, dn);
  uint8_t *img = malloc(v->image_size);
  if (!img) return bg_error(BG_ENOMEM, "VBIOS: out of memory for the 0x%zx-byte FWSEC image", v->image_size);
  memcpy(img, v->image, v->image_size);
  uint8_t *w = img + f->imem_load_size;
  bg_put_le32(w + mapper + DMEMMAPPER_INIT_CMD, CMD_FRTS);
  uint8_t *c = w + cmd_off;
  /* FWSECLIC_READ_VBIOS_DESC {version 1, size 24, gfwImageOffset 0 (u64), gfwImageSize 0, flags 2} */
  bg_put_le32(c + 0, 1), bg_put_le32(c + 4, 24), bg_put_le64(c + 8, 0), bg_put_le32(c + 16, 0), bg_put_le32(c + 20, 2);
  /* FWSECLIC_FRTS_REGION_DESC {version 1, size 20, offset in 4 KiB, size 0x100 (1 MiB in 4 KiB), media 2 (FB)} */
  bg_put_le32(c + 24, 1), bg_put_le32(c + 28, 20), bg_put_le32(c + 32, (uint32_t)(frts_offset >> 12));
  bg_put_le32(c + 36, 0x100), bg_put_le32(c + 40, 2);
  memcpy(w + f->pkc_data_offset, v->signatures + (size_t)sig_index * BG_NV_FWSEC_SIG_SIZE, BG_NV_FWSEC_SIG_SIZE);
  *image = img;
  *size = v->image_size;
  return 0;
}
