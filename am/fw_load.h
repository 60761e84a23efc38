/* am/fw_load.h: a chip's firmware set (tinygrad tinygrad/runtime/support/am/amdev.py AMFirmware): file names from the discovered IP
 * versions, reading and parsing every file before anything touches a device, and the ordered list
 * of descriptors the PSP loads with LOAD_IP_FW.
 *
 * Files (V(ip) = "maj_min_rev"): psp_V(MP0)_sos.bin; smu_V(MP1).bin unless MP1 is 13.0.12;
 * sdma_V(SDMA0).bin; GC >= 12: gc_V(GC)_pfp.bin, gc_V(GC)_me.bin; gc_V(GC)_mec.bin; GC >= 11:
 * gc_V(GC)_imu.bin; gc_V(GC)_rlc.bin. Folder: the `dir` argument, else $BG_FIRMWARE_DIR, else
 * /lib/firmware/amdgpu. Compressed <name>.zst / <name>.xz files are not read yet (the error names
 * the one that exists). The sha256 check against a pinned hash table is not done here.
 *
 * Load list order (descs): SMU P2S tables (GC < 11), SDMA (v1: the same bytes as SDMA0, SDMA1,
 * SDMA2, SDMA3 - consecutive entries share `data`, stage once; v2: TH1, TH0; v3: TH0), then
 * [RS64_PFP, RS64_PFP_P0_STACK, RS64_ME, RS64_ME_P0_STACK,] MEC (RS64_MEC + RS64_MEC_P0_STACK, or
 * CP_MEC + CP_MEC_ME1 jump table), IMU_I, IMU_D, RLC (header minor == 1: SRM_CNTL, GPM_MEM, SRM_MEM;
 * minor >= 2: IRAM, DRAM_BOOT; minor == 3: RLC_P, RLC_V), RLC_G. Like tinygrad, components are
 * listed even when their size is 0. Not in the list: the sOS components (PSP bootloader), the TOC
 * (sOS component PSP_TOC) and the SMU image (GC >= 11), which PSP steps 1, 3 and 4 use. */
#ifndef BAREGPU_AM_FW_LOAD_H
#define BAREGPU_AM_FW_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "am/fw_parse.h"

#define BG_AM_FW_DEFAULT_DIR "/lib/firmware/amdgpu"
#define BG_AM_FW_MAX_FILE (64u << 20) /* larger files are refused */
#define BG_AM_FW_MAX_DESCS 32

typedef struct bg_am_ipver {
  uint8_t maj, min, rev;
} bg_am_ipver;

typedef struct bg_am_fw_ips {
  bg_am_ipver gc, mp0, mp1, sdma0;
} bg_am_fw_ips;

typedef enum bg_am_fw_file_id {
  BG_AM_FW_SOS,
  BG_AM_FW_SMU,
  BG_AM_FW_SDMA,
  BG_AM_FW_PFP,
  BG_AM_FW_ME,
  BG_AM_FW_MEC,
  BG_AM_FW_IMU,
  BG_AM_FW_RLC,
  BG_AM_FW_NFILES,
} bg_am_fw_file_id;

typedef struct bg_am_fw_file {
  bool present;  /* this chip needs the file (and it was loaded) */
  char name[64]; /* "psp_13_0_0_sos.bin" */
  uint8_t *buf;
  size_t len;
  bg_fw_image img;
} bg_am_fw_file;

typedef struct bg_am_fw {
  bg_am_fw_ips ip;
  char dir[BG_FW_PATH_MAX];
  bg_am_fw_file files[BG_AM_FW_NFILES];
  const bg_fw_desc *smu;     /* GC >= 11: the SMU image (PSP step 4); else NULL */
  const bg_fw_desc *toc;     /* sOS component PSP_TOC, or NULL */
  uint64_t rs64_start[3];    /* ucode_start of RS64 PFP, ME, MEC (0 where not RS64) */
  int ndescs;
  bg_fw_desc descs[BG_AM_FW_MAX_DESCS]; /* the LOAD_IP_FW list, in order */
} bg_am_fw;

/* File name of `which` for these IP versions into buf; returns 1 if written, 0 if the chip does not
 * use that file. */
int bg_am_fw_name(const bg_am_fw_ips *ip, bg_am_fw_file_id which, char *buf, size_t n);
/* Folder the files are read from: dir if non-NULL, else $BG_FIRMWARE_DIR, else the default. */
const char *bg_am_fw_dir(const char *dir);
/* Read and parse the whole set. On failure *out is NULL and the message names the file. */
int bg_am_fw_load(const bg_am_fw_ips *ip, const char *dir, bg_am_fw **out);
void bg_am_fw_free(bg_am_fw *fw);
/* Primary (non-aux) sOS component of a PSP_FW_TYPE, or NULL. */
const bg_fw_desc *bg_am_fw_sos(const bg_am_fw *fw, uint32_t psp_fw_type);
/* One line per descriptor: sOS components, TOC, SMU, then the load list (verbose: each file's
 * header line and all its components first). */
void bg_am_fw_dump(const bg_am_fw *fw, bool verbose, FILE *f);

/* Read a whole file (at most BG_AM_FW_MAX_FILE) into *buf (malloc). Missing: BG_ENODEV naming
 * the path and BG_FIRMWARE_DIR; a .zst/.xz next to it: BG_ENOTSUP. */
int bg_am_fw_read_file(const char *path, uint8_t **buf, size_t *len);

#endif
