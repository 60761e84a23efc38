/* nv/nv_fw.h: NVIDIA firmware the bare-metal boot consumes, parsed and validated before the device is touched.
 *
 * Sources of the formats: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN; Linux drivers/gpu/drm/nouveau/include/nvfw/{fw,hs}.h
 * (nvfw_bin_hdr, nvfw_hs_header_v2, nvfw_hs_load_header_v2), nvkm/subdev/gsp/fwsec.c and nvkm/subdev/bios (VBIOS,
 * BIT, falcon ucode table, FALCON_UCODE_DESC_V3, signature choice by fuse version), open-gpu-kernel-modules
 * src/nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h (RM_RISCV_UCODE_DESC).
 *
 * Every parser works on a caller's byte buffer, checks every offset/size against it (no read outside, no overflow)
 * and on bad input returns a negative BG_E* code after bg_error() with a message naming the file (the `what`
 * argument, e.g. "nvidia/ga102/gsp/booter_load-570.144.bin"), the field and what was expected. Nothing here writes to
 * a device. Fuzzed by tests/fuzz/fuzz_nv_fw.c and fuzz_nv_vbios.c. */
#ifndef BG_NV_FW_H
#define BG_NV_FW_H

#include <stddef.h>
#include <stdint.h>

#include "nv/nv_chips.h"

/* The GSP-RM firmware version whose structures (RPC, WPR meta, boot args) this driver speaks. */
#define BG_NV_GSP_VERSION "570.144"

/* ---- VBIOS (read from BAR0 0x300000, the PROM window) ---- */

/* FALCON_UCODE_DESC_V3 of the FWSEC_PROD application (ucode table entry application id 0x85). */
typedef struct bg_nv_fwsec_desc {
  uint32_t stored_size, pkc_data_offset, interface_offset;
  uint32_t imem_phys_base, imem_load_size, imem_virt_base;
  uint32_t dmem_phys_base, dmem_load_size;
  uint16_t engine_id_mask;
  uint8_t ucode_id, signature_count;
  uint16_t signature_versions;
} bg_nv_fwsec_desc;

typedef struct bg_nv_vbios {
  uint32_t expansion_rom_off;      /* offset of the extended (code type 0xE0) image minus the base image length */
  uint32_t bit_off;                /* BIT header */
  uint32_t ucode_table_off;        /* falcon ucode table (absolute offset in the ROM buffer) */
  bg_nv_fwsec_desc fwsec;
  const uint8_t *signatures;       /* signature_count signatures of BG_NV_FWSEC_SIG_SIZE bytes (into the ROM buffer) */
  const uint8_t *image;            /* round_up(stored_size, 256) bytes of IMEM + DMEM (into the ROM buffer) */
  size_t image_size;
} bg_nv_vbios;

#define BG_NV_FWSEC_SIG_SIZE 0x180 /* RSA3K signature */

/* Walk the PCI expansion ROM images, the BIT header, the falcon ucode table and the FWSEC_PROD descriptor of a ROM
 * dump (rom, n bytes; pointers in *out point into rom). */
int bg_nv_vbios_parse(const uint8_t *rom, size_t n, bg_nv_vbios *out);

/* The FWSEC signature index for a fuse version read from the GPU (nouveau fwsec.c: the set bit of
 * signature_versions that matches the fuse version, counted from bit 0): error naming both values when the VBIOS has
 * no signature for that fuse version. fuse_version is the highest set bit's index + 1 of the ucode's fuse register
 * (0 when none is set), as open-gpu-kernel-modules kgspReadUcodeFuseVersion_GA100 returns it; bit fuse_version of
 * signature_versions must be set (kernel_gsp_frts_tu102.c s_prepareForFwsec_TU102). */
int bg_nv_fwsec_sig_index(const bg_nv_fwsec_desc *d, uint32_t fuse_version, unsigned *index);

/* A patched FWSEC image for the FRTS command (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN): a malloc'd copy of the image with the DMEM
 * mapper's init_cmd = 0x15, the FWSECLIC_FRTS_CMD at cmd_in_buffer_offset (frts_offset in VRAM, 1 MiB region), and
 * signature sig_index copied to IMEMLoadSize + PKCDataOffset. */
int bg_nv_fwsec_frts_image(const bg_nv_vbios *v, unsigned sig_index, uint64_t frts_offset, uint8_t **image,
                           size_t *size);

/* ---- Booter (nvfw_bin_hdr + nvfw_hs_header_v2 + nvfw_hs_load_header_v2) ---- */

typedef struct bg_nv_booter {
  uint8_t *image;                  /* malloc'd copy of [data_offset, +data_size) with the production signature patched */
  size_t image_size;
  uint32_t os_code_offset, os_code_size, os_data_offset, os_data_size;
  uint32_t app0_offset, app0_size; /* code_off / code_sz of the boot */
} bg_nv_booter;

int bg_nv_booter_parse(const uint8_t *file, size_t n, const char *what, bg_nv_booter *out);
void bg_nv_booter_free(bg_nv_booter *b);

/* ---- GSP bootloader (nvfw_bin_hdr + RM_RISCV_UCODE_DESC) ---- */

typedef struct bg_nv_bootloader {
  const uint8_t *data;             /* [data_offset, +data_size) of the file (points into it) */
  size_t data_size;
  uint32_t manifest_offset, monitor_data_offset, monitor_code_offset;
} bg_nv_bootloader;

int bg_nv_bootloader_parse(const uint8_t *file, size_t n, const char *what, bg_nv_bootloader *out);

/* ---- ELF containers: the GSP-RM image and the FMC of FSP chips ---- */

/* GSP-RM: section .fwimage and the chip's signature section (bg_nv_chip.sig_section); pointers into the file. */
typedef struct bg_nv_gsp_elf {
  const uint8_t *image;
  size_t image_size;
  const uint8_t *signature;
  size_t signature_size;
} bg_nv_gsp_elf;

int bg_nv_gsp_elf_parse(const uint8_t *file, size_t n, const char *what, const bg_nv_chip *chip, bg_nv_gsp_elf *out);

/* FMC (fmc-570.144.bin): sections image, hash (SHA-384, 48 B), signature (384 B), publickey (381..384 B, padded to
 * 384 with zeros as tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT says). */
typedef struct bg_nv_fmc {
  const uint8_t *image;
  size_t image_size;
  uint8_t hash[48];
  uint8_t signature[384];
  uint8_t public_key[384];
} bg_nv_fmc;

int bg_nv_fmc_parse(const uint8_t *file, size_t n, const char *what, bg_nv_fmc *out);

/* ---- Files ---- */

/* Everything one chip's boot needs, read and parsed (all of it or nothing). */
typedef struct bg_nv_firmware {
  const bg_nv_chip *chip;
  char dir[512];                   /* the folder the files came from */
  uint8_t *gsp_file, *bootloader_file, *booter_file, *fmc_file; /* file contents (booter: non-FSP only; fmc: FSP only) */
  size_t gsp_size, bootloader_size, booter_size, fmc_size;
  bg_nv_gsp_elf gsp;
  bg_nv_bootloader bootloader;
  bg_nv_booter booter;             /* non-FSP chips */
  bg_nv_fmc fmc;                   /* FSP chips */
} bg_nv_firmware;

/* Load the firmware of a chip: the folder is dir when not NULL (the emulated GPU's generated folder), else
 * $BG_NV_FIRMWARE_DIR if set, else /lib/firmware/nvidia/<chip fw_dir>/gsp
 * (linux-firmware's layout); the GSP-RM ELF is gsp-570.144.bin there (linux-firmware keeps it in ga102/ for every chip;
 * that folder is tried second) unless $BG_NV_GSP_ELF names a file. Files: bootloader-570.144.bin, booter_load-570.144.bin
 * (GA/AD), fmc-570.144.bin (GH/GB). A missing file: BG_ENOENT naming the path and the variable that overrides it; a
 * file that is not a regular file (a FIFO, a device): BG_EINVAL; a mismatched file (another chip's signature
 * section only, wrong magic, sizes that do not fit): the parser's error. */
int bg_nv_firmware_load(const bg_nv_chip *chip, const char *dir, bg_nv_firmware *out);
void bg_nv_firmware_free(bg_nv_firmware *fw);

#endif
