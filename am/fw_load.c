/* am/fw_load.c: a chip's firmware set (file names, reading, parsing, LOAD_IP_FW order; fw_load.h). */
#include "am/fw_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "util/fd_io.h"

static bool ge(bg_am_ipver v, unsigned maj, unsigned min, unsigned rev) {
  if (v.maj != maj) return v.maj > maj;
  if (v.min != min) return v.min > min;
  return v.rev >= rev;
}

static bool eq(bg_am_ipver v, unsigned maj, unsigned min, unsigned rev) {
  return v.maj == maj && v.min == min && v.rev == rev;
}

int bg_am_fw_name(const bg_am_fw_ips *ip, bg_am_fw_file_id which, char *buf, size_t n) {
  bg_am_ipver gc = ip->gc;
  switch (which) {
  case BG_AM_FW_SOS: snprintf(buf, n, "psp_%u_%u_%u_sos.bin", ip->mp0.maj, ip->mp0.min, ip->mp0.rev); return 1;
  case BG_AM_FW_SMU:
    if (eq(ip->mp1, 13, 0, 12)) return 0; /* MI350: no SMU firmware */
    snprintf(buf, n, "smu_%u_%u_%u.bin", ip->mp1.maj, ip->mp1.min, ip->mp1.rev);
    return 1;
  case BG_AM_FW_SDMA: snprintf(buf, n, "sdma_%u_%u_%u.bin", ip->sdma0.maj, ip->sdma0.min, ip->sdma0.rev); return 1;
  case BG_AM_FW_PFP:
  case BG_AM_FW_ME:
  case BG_AM_FW_MEC:
  case BG_AM_FW_IMU:
  case BG_AM_FW_RLC: {
    if ((which == BG_AM_FW_PFP || which == BG_AM_FW_ME) && !ge(gc, 12, 0, 0)) return 0;
    if (which == BG_AM_FW_IMU && !ge(gc, 11, 0, 0)) return 0;
    static const char *const part[] = {[BG_AM_FW_PFP] = "pfp", [BG_AM_FW_ME] = "me", [BG_AM_FW_MEC] = "mec",
                                       [BG_AM_FW_IMU] = "imu", [BG_AM_FW_RLC] = "rlc"};
    snprintf(buf, n, "gc_%u_%u_%u_%s.bin", gc.maj, gc.min, gc.rev, part[which]);
    return 1;
  }
  default: return 0;
  }
}

const char *bg_am_fw_dir(const char *dir) {
  if (dir && *dir) return dir;
  const char *e = getenv("BG_FIRMWARE_DIR");
  return e && *e ? e : BG_AM_FW_DEFAULT_DIR;
}

int bg_am_fw_read_file(const char *path, uint8_t **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  /* Non-blocking and type-checked: a FIFO or device in the firmware folder is refused at once (util/fd_io.h).
   * No O_NOFOLLOW: linux-firmware installs some names as symbolic links (its WHENCE "Link:" lines). */
  int fd, rc = bg_open_regular(path, O_RDONLY, &fd);
  if (rc < 0) {
    int e = errno;
    if (e == 0) return bg_error_context(rc, "firmware ");   /* "firmware PATH is not a regular file: it is a FIFO" */
    if (e == ENOENT) {
      static const char *const ext[] = {".zst", ".xz"};
      for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        char alt[BG_FW_PATH_MAX + 8];
        struct stat st;
        snprintf(alt, sizeof(alt), "%s%s", path, ext[i]);
        if (stat(alt, &st) == 0)
          return bg_error(BG_ENOTSUP,
                          "firmware %s not found; %s exists but compressed firmware is not supported yet "
                          "(decompress it, or set BG_FIRMWARE_DIR to a folder of uncompressed files)",
                          path, alt);
      }
      return bg_error(BG_ENODEV,
                      "firmware %s not found (the folder is BG_FIRMWARE_DIR if set, else %s; get the files from "
                      "linux-firmware's amdgpu/)",
                      path, BG_AM_FW_DEFAULT_DIR);
    }
    return bg_error(e == EACCES || e == EPERM ? BG_EPERM : BG_EIO, "firmware %s: cannot open: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return bg_error(BG_EIO, "firmware %s: cannot stat: %s", path, strerror(e));
  }
  if ((uint64_t)st.st_size > BG_AM_FW_MAX_FILE) {
    close(fd);
    return bg_error(BG_EFORMAT, "firmware %s: file size %lld exceeds the %u MiB limit", path, (long long)st.st_size,
                    BG_AM_FW_MAX_FILE >> 20);
  }
  size_t n = (size_t)st.st_size;
  uint8_t *b = malloc(n ? n : 1);
  if (!b) {
    close(fd);
    return bg_error(BG_ENOMEM, "firmware %s: out of memory for %zu bytes", path, n);
  }
  size_t got;
  int rr = bg_fd_read_all(fd, b, n, &got);
  if (rr != 0) {
    close(fd);
    free(b);
    return bg_error(BG_EIO, "firmware %s: read failed at 0x%zx of 0x%zx: %s",
                    path, got, n, rr < 0 ? strerror(-rr) : "file shrank");
  }
  close(fd);
  *buf = b;
  *len = n;
  return 0;
}

void bg_am_fw_free(bg_am_fw *fw) {
  if (!fw) return;
  for (int i = 0; i < BG_AM_FW_NFILES; i++) free(fw->files[i].buf);
  free(fw);
}

static int push(bg_am_fw *fw, const bg_fw_desc *d, uint32_t type, const char *name) {
  if (fw->ndescs >= BG_AM_FW_MAX_DESCS)
    return bg_error(BG_EFORMAT, "am: firmware set has more than %d descriptors", BG_AM_FW_MAX_DESCS);
  bg_fw_desc *o = &fw->descs[fw->ndescs++];
  *o = *d;
  o->fw_type = type;
  o->name = name;
  return 0;
}

static int push_all(bg_am_fw *fw, const bg_fw_image *img, const uint32_t *types, size_t ntypes) {
  for (size_t t = 0; t < ntypes; t++)
    for (int i = 0; i < img->ndescs; i++) {
      const bg_fw_desc *d = &img->descs[i];
      if (d->space == BG_FW_SPACE_GFX && d->fw_type == types[t]) {
        int r = push(fw, d, d->fw_type, d->name);
        if (r < 0) return r;
      }
    }
  return 0;
}

#define TRY(x) do { int r_ = (x); if (r_ < 0) goto fail; } while (0)
#define N(a) (sizeof(a) / sizeof((a)[0]))

int bg_am_fw_load(const bg_am_fw_ips *ip, const char *dir, bg_am_fw **out) {
  *out = NULL;
  bg_am_fw *fw = calloc(1, sizeof(*fw));
  if (!fw) return bg_error(BG_ENOMEM, "am: out of memory for the firmware set");
  fw->ip = *ip;
  snprintf(fw->dir, sizeof(fw->dir), "%s", bg_am_fw_dir(dir));
  static const bg_fw_family fam[BG_AM_FW_NFILES] = {
    [BG_AM_FW_SOS] = BG_FW_PSP_SOS, [BG_AM_FW_SMU] = BG_FW_SMC,     [BG_AM_FW_SDMA] = BG_FW_SDMA,
    [BG_AM_FW_PFP] = BG_FW_GFX_PFP, [BG_AM_FW_ME] = BG_FW_GFX_ME,   [BG_AM_FW_MEC] = BG_FW_GFX_MEC,
    [BG_AM_FW_IMU] = BG_FW_IMU,     [BG_AM_FW_RLC] = BG_FW_RLC,
  };
  int r = 0;
  /* 1. Read, parse and identity-check every file. */
  for (int i = 0; i < BG_AM_FW_NFILES; i++) {
    bg_am_fw_file *f = &fw->files[i];
    if (!bg_am_fw_name(ip, (bg_am_fw_file_id)i, f->name, sizeof(f->name))) continue;
    char path[BG_FW_PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", fw->dir, f->name);
    if (n < 0 || (size_t)n >= sizeof(path)) {
      r = bg_error(BG_EINVAL, "am: firmware folder %s: path too long", fw->dir);
      goto fail;
    }
    TRY(r = bg_am_fw_read_file(path, &f->buf, &f->len));
    TRY(r = bg_fw_parse(fam[i], path, f->buf, f->len, &f->img));
    const char *ipn = i == BG_AM_FW_SOS ? "MP0" : i == BG_AM_FW_SMU ? "MP1" : i == BG_AM_FW_SDMA ? "SDMA0" : "GC";
    bg_am_ipver v = i == BG_AM_FW_SOS ? ip->mp0 : i == BG_AM_FW_SMU ? ip->mp1 : i == BG_AM_FW_SDMA ? ip->sdma0 : ip->gc;
    TRY(r = bg_fw_check_ip(&f->img, ipn, v.maj, v.min, v.rev));
    f->present = true;
  }
  const bg_fw_image *sos = &fw->files[BG_AM_FW_SOS].img;
  if (!bg_fw_find(sos, BG_FW_SPACE_PSP, BG_PSP_FW_SOS)) {
    r = bg_error(BG_EFORMAT, "psp: sos firmware %s: no PSP_SOS component", sos->path);
    goto fail;
  }
  fw->toc = bg_fw_find(sos, BG_FW_SPACE_PSP, BG_PSP_FW_TOC);

  /* 2. The LOAD_IP_FW list (tinygrad tinygrad/runtime/support/am/amdev.py AMFirmware). */
  bool gfx11 = ge(ip->gc, 11, 0, 0);
  if (fw->files[BG_AM_FW_SMU].present) {
    const bg_fw_image *smu = &fw->files[BG_AM_FW_SMU].img;
    if (gfx11)
      fw->smu = bg_fw_find(smu, BG_FW_SPACE_GFX, BG_GFX_FW_SMU);
    else
      TRY(r = push_all(fw, smu, (const uint32_t[]){BG_GFX_FW_P2S_TABLE}, 1));
  }
  const bg_fw_image *sdma = &fw->files[BG_AM_FW_SDMA].img;
  if (sdma->header_version_major == 1) {
    const bg_fw_desc *d = bg_fw_find(sdma, BG_FW_SPACE_GFX, BG_GFX_FW_SDMA0);
    TRY(r = push(fw, d, BG_GFX_FW_SDMA0, "SDMA0"));
    TRY(r = push(fw, d, BG_GFX_FW_SDMA1, "SDMA1"));
    TRY(r = push(fw, d, BG_GFX_FW_SDMA2, "SDMA2"));
    TRY(r = push(fw, d, BG_GFX_FW_SDMA3, "SDMA3"));
  } else {
    TRY(r = push_all(fw, sdma, (const uint32_t[]){BG_GFX_FW_SDMA_UCODE_TH1, BG_GFX_FW_SDMA_UCODE_TH0}, 2));
  }
  static const uint32_t cp_types[] = {BG_GFX_FW_CP_PFP, BG_GFX_FW_CP_ME, BG_GFX_FW_RS64_PFP, BG_GFX_FW_RS64_PFP_P0_STACK,
                                      BG_GFX_FW_RS64_ME, BG_GFX_FW_RS64_ME_P0_STACK, BG_GFX_FW_CP_MEC,
                                      BG_GFX_FW_CP_MEC_ME1, BG_GFX_FW_RS64_MEC, BG_GFX_FW_RS64_MEC_P0_STACK};
  for (int i = BG_AM_FW_PFP; i <= BG_AM_FW_MEC; i++) {
    if (!fw->files[i].present) continue;
    const bg_fw_image *cp = &fw->files[i].img;
    TRY(r = push_all(fw, cp, cp_types, N(cp_types)));
    if (cp->header_version_major == 2) fw->rs64_start[i - BG_AM_FW_PFP] = cp->ucode_start;
  }
  if (fw->files[BG_AM_FW_IMU].present)
    TRY(r = push_all(fw, &fw->files[BG_AM_FW_IMU].img, (const uint32_t[]){BG_GFX_FW_IMU_I, BG_GFX_FW_IMU_D}, 2));
  const bg_fw_image *rlc = &fw->files[BG_AM_FW_RLC].img;
  unsigned minor = rlc->header_version_minor;
  if (minor == 1)
    TRY(r = push_all(fw, rlc,
                     (const uint32_t[]){BG_GFX_FW_RLC_RESTORE_LIST_SRM_CNTL, BG_GFX_FW_RLC_RESTORE_LIST_GPM_MEM,
                                        BG_GFX_FW_RLC_RESTORE_LIST_SRM_MEM},
                     3));
  if (minor >= 2) TRY(r = push_all(fw, rlc, (const uint32_t[]){BG_GFX_FW_RLC_IRAM, BG_GFX_FW_RLC_DRAM_BOOT}, 2));
  if (minor == 3) TRY(r = push_all(fw, rlc, (const uint32_t[]){BG_GFX_FW_RLC_P, BG_GFX_FW_RLC_V}, 2));
  TRY(r = push_all(fw, rlc, (const uint32_t[]){BG_GFX_FW_RLC_G}, 1));
  *out = fw;
  return 0;
fail:
  bg_am_fw_free(fw);
  return r;
}

const bg_fw_desc *bg_am_fw_sos(const bg_am_fw *fw, uint32_t psp_fw_type) {
  return bg_fw_find(&fw->files[BG_AM_FW_SOS].img, BG_FW_SPACE_PSP, psp_fw_type);
}

void bg_am_fw_dump(const bg_am_fw *fw, bool verbose, FILE *f) {
  fprintf(f, "am firmware from %s: GC %u.%u.%u MP0 %u.%u.%u MP1 %u.%u.%u SDMA0 %u.%u.%u\n", fw->dir, fw->ip.gc.maj,
          fw->ip.gc.min, fw->ip.gc.rev, fw->ip.mp0.maj, fw->ip.mp0.min, fw->ip.mp0.rev, fw->ip.mp1.maj, fw->ip.mp1.min,
          fw->ip.mp1.rev, fw->ip.sdma0.maj, fw->ip.sdma0.min, fw->ip.sdma0.rev);
  if (verbose) {
    for (int i = 0; i < BG_AM_FW_NFILES; i++)
      if (fw->files[i].present) bg_fw_dump_image(&fw->files[i].img, true, f);
    fprintf(f, "load order:\n");
  } else {
    const bg_fw_image *sos = &fw->files[BG_AM_FW_SOS].img;
    for (int i = 0; i < sos->ndescs; i++) bg_fw_dump_desc(&sos->descs[i], fw->files[BG_AM_FW_SOS].name, f);
    if (fw->smu) bg_fw_dump_desc(fw->smu, fw->files[BG_AM_FW_SMU].name, f);
  }
  for (int i = 0; i < fw->ndescs; i++) {
    const bg_fw_desc *d = &fw->descs[i];
    const char *file = "";
    for (int k = 0; k < BG_AM_FW_NFILES; k++) {
      const bg_am_fw_file *ff = &fw->files[k];
      uintptr_t a = (uintptr_t)d->data, b = (uintptr_t)ff->buf;
      if (ff->present && a >= b && a <= b + ff->len) file = ff->name;
    }
    bg_fw_dump_desc(d, file, f);
  }
  for (int i = 0; i < 3; i++)
    if (fw->rs64_start[i])
      fprintf(f, "  %s ucode_start 0x%llx\n", i == 0 ? "pfp" : i == 1 ? "me" : "mec",
              (unsigned long long)fw->rs64_start[i]);
}
