/* nv/nv_fw_load.c: reading and parsing one chip's firmware set before the device is touched (nv_fw.h).
 *
 * Folders as linux-firmware lays them out (nvidia/<chip>/gsp/NAME-570.144.bin; its WHENCE file); the GSP-RM ELF is one
 * file for every chip, kept in ga102/ (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw, "Firmware files"). Files are opened non-blocking and
 * type-checked (util/fd_io.h) so a FIFO or device planted in the folder is refused at once instead of blocking. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "nv/nv_fw.h"
#include "util/fd_io.h"

#define FW_ROOT "/lib/firmware/nvidia"
/* The GSP-RM ELF of 570.144 holds the images of every chip (tens of MiB); anything far larger is not firmware. */
#define FW_MAX_FILE (256u << 20)
#define SFX "-" BG_NV_GSP_VERSION ".bin"

typedef struct where {
  char dir[512];
  const char *source; /* how the folder was chosen, for messages */
} where;

static int path_of(char *buf, size_t n, const char *dir, const char *name) {
  int k = snprintf(buf, n, "%s/%s", dir, name);
  if (k < 0 || (size_t)k >= n) return bg_error(BG_EINVAL, "NV firmware folder %s: path of %s too long", dir, name);
  return 0;
}

/* Reads path whole. A missing file is -BG_ENOENT with *missing set (the caller words the message). */
static int read_file(const char *path, uint8_t **buf, size_t *len, bool *missing) {
  *buf = NULL;
  *len = 0;
  *missing = false;
  int fd, rc = bg_open_regular(path, O_RDONLY, &fd);
  if (rc < 0) {
    int e = errno;
    if (e == 0) { /* opened, but a FIFO, device, directory, ... */
      struct stat st;
      return bg_error(BG_EINVAL, "NV firmware %s is not a regular file: it is %s", path,
                      stat(path, &st) == 0 ? bg_file_type_name(st.st_mode) : "of another type");
    }
    if (e == ENOENT) {
      *missing = true;
      return -BG_ENOENT;
    }
    return bg_error(e == EACCES || e == EPERM ? BG_EPERM : BG_EIO, "NV firmware %s: cannot open: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return bg_error(BG_EIO, "NV firmware %s: cannot stat: %s", path, strerror(e));
  }
  if ((uint64_t)st.st_size > FW_MAX_FILE) {
    close(fd);
    return bg_error(BG_EFORMAT, "NV firmware %s: file size %lld exceeds the %u MiB limit", path,
                    (long long)st.st_size, FW_MAX_FILE >> 20);
  }
  size_t n = (size_t)st.st_size;
  uint8_t *b = malloc(n ? n : 1);
  if (!b) {
    close(fd);
    return bg_error(BG_ENOMEM, "NV firmware %s: out of memory for %zu bytes", path, n);
  }
  size_t got;
  int rr = bg_fd_read_all(fd, b, n, &got);
  if (rr != 0) {
    close(fd);
    free(b);
    return bg_error(BG_EIO, "NV firmware %s: read failed at 0x%zx of 0x%zx: %s",
                    path, got, n, rr < 0 ? strerror(-rr) : "file shrank");
  }
  close(fd);
  *buf = b;
  *len = n;
  return 0;
}

static int not_found(const char *path, const where *w, const bg_nv_chip *chip) {
  return bg_error(BG_ENOENT,
                  "NV firmware %s not found (folder %s: %s; set BG_NV_FIRMWARE_DIR to the folder holding %s's files, "
                  "by default " FW_ROOT "/%s/gsp as linux-firmware installs them)",
                  path, w->dir, w->source, chip->name, chip->fw_dir);
}

static int read_in(const where *w, const bg_nv_chip *chip, const char *name, uint8_t **buf, size_t *len,
                   char *path, size_t pn) {
  bool missing = false;
  int r = path_of(path, pn, w->dir, name);
  if (r == 0) r = read_file(path, buf, len, &missing);
  if (r < 0 && missing) r = not_found(path, w, chip);
  return r;
}

/* The GSP-RM ELF: $BG_NV_GSP_ELF, else gsp-570.144.bin in the folder, else in the ga102 folder beside it when the
 * folder is a linux-firmware chip folder (.../<chip>/gsp). */
static int read_gsp(const where *w, const bg_nv_chip *chip, uint8_t **buf, size_t *len, char *path, size_t pn) {
  const char *env = getenv("BG_NV_GSP_ELF");
  bool missing = false;
  int r;
  if (env && *env) {
    snprintf(path, pn, "%s", env);
    r = read_file(env, buf, len, &missing);
    if (r < 0 && missing)
      r = bg_error(BG_ENOENT, "NV GSP-RM firmware %s not found (named by BG_NV_GSP_ELF)", env);
    return r;
  }
  static const char name[] = "gsp" SFX;
  if ((r = path_of(path, pn, w->dir, name)) < 0 || (r = read_file(path, buf, len, &missing)) == 0 || !missing) return r;
  char first[640], tail[64], alt[640];
  snprintf(first, sizeof(first), "%s", path);
  snprintf(tail, sizeof(tail), "/%s/gsp", chip->fw_dir);
  size_t dl = strlen(w->dir), tl = strlen(tail);
  bool sibling = dl >= tl && strcmp(w->dir + dl - tl, tail) == 0 && strcmp(chip->fw_dir, "ga102") != 0;
  if (sibling) {
    snprintf(alt, sizeof(alt), "%.*s/ga102/gsp/%s", (int)(dl - tl), w->dir, name);
    snprintf(path, pn, "%s", alt);
    if ((r = read_file(alt, buf, len, &missing)) == 0 || !missing) return r;
  }
  return bg_error(BG_ENOENT,
                  "NV GSP-RM firmware %s not found%s%s (folder %s: %s; set BG_NV_FIRMWARE_DIR to the folder holding it, "
                  "or BG_NV_GSP_ELF to the file)",
                  first, sibling ? " nor " : "", sibling ? alt : "", w->dir, w->source);
}

int bg_nv_firmware_load(const bg_nv_chip *chip, const char *dir, bg_nv_firmware *out) {
  where w;
  const char *env = getenv("BG_NV_FIRMWARE_DIR");
  if (dir && *dir)
    snprintf(w.dir, sizeof(w.dir), "%s", dir), w.source = "given by the caller, BG_NV_FIRMWARE_DIR not consulted";
  else if (env && *env)
    snprintf(w.dir, sizeof(w.dir), "%s", env), w.source = "from BG_NV_FIRMWARE_DIR";
  else
    snprintf(w.dir, sizeof(w.dir), FW_ROOT "/%s/gsp", chip->fw_dir), w.source = "the default, BG_NV_FIRMWARE_DIR unset";
  bg_nv_firmware fw = {.chip = chip};
  snprintf(fw.dir, sizeof(fw.dir), "%s", w.dir);
  char path[640];
  int r = read_gsp(&w, chip, &fw.gsp_file, &fw.gsp_size, path, sizeof(path));
  if (r == 0) r = bg_nv_gsp_elf_parse(fw.gsp_file, fw.gsp_size, path, chip, &fw.gsp);
  if (r == 0) r = read_in(&w, chip, "bootloader" SFX, &fw.bootloader_file, &fw.bootloader_size, path, sizeof(path));
  if (r == 0) r = bg_nv_bootloader_parse(fw.bootloader_file, fw.bootloader_size, path, &fw.bootloader);
  if (r == 0 && !chip->fsp_boot) {
    r = read_in(&w, chip, "booter_load" SFX, &fw.booter_file, &fw.booter_size, path, sizeof(path));
    if (r == 0) r = bg_nv_booter_parse(fw.booter_file, fw.booter_size, path, &fw.booter);
  }
  if (r == 0 && chip->fsp_boot) {
    r = read_in(&w, chip, "fmc" SFX, &fw.fmc_file, &fw.fmc_size, path, sizeof(path));
    if (r == 0) r = bg_nv_fmc_parse(fw.fmc_file, fw.fmc_size, path, &fw.fmc);
  }
  if (r < 0) {
    bg_nv_firmware_free(&fw);
    return r;
  }
  *out = fw;
  return 0;
}

void bg_nv_firmware_free(bg_nv_firmware *fw) {
  if (!fw) return;
  free(fw->gsp_file);
  free(fw->bootloader_file);
  free(fw->booter_file);
  free(fw->fmc_file);
  bg_nv_booter_free(&fw->booter);
  *fw = (bg_nv_firmware){0};
}
