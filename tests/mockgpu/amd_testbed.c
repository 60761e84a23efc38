/* tests/mockgpu/amd_testbed.c: see amd_testbed.h. */
#include "amd_testbed.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"

fw_gen_chip_id amd_testbed_fw_chip(mock_amd_chip chip) {
  return chip == MOCK_AMD_GFX11 ? FW_GEN_GFX11 : chip == MOCK_AMD_GFX942 ? FW_GEN_GFX942 : FW_GEN_GFX12;
}

void amd_testbed_rm_dir(const char *dir) {
  DIR *dd = opendir(dir);
  if (!dd) return;
  struct dirent *e;
  char path[320];
  while ((e = readdir(dd)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(dd);
  rmdir(dir);
}

int amd_testbed_new(amd_testbed *tb, const mock_amd_cfg *cfg, const char *tag) {
  memset(tb, 0, sizeof(*tb));
  tb->tree = mock_sysfs_new();
  if (!tb->tree) return bg_error(BG_EIO, "testbed: cannot create the fake sysfs tree");
  tb->gpu = mock_amd_new(tb->tree, cfg);
  if (!tb->gpu) {
    int e = bg_error(BG_EIO, "testbed: cannot create the emulated GPU: %s", mock_sysfs_failures(tb->tree));
    amd_testbed_free(tb);
    return e;
  }
  snprintf(tb->fw_dir, sizeof(tb->fw_dir), "/tmp/%s_XXXXXX", tag);
  if (!mkdtemp(tb->fw_dir)) {
    int e = bg_error(BG_EIO, "testbed: mkdtemp %s: %s", tb->fw_dir, strerror(errno));
    tb->fw_dir[0] = 0;
    amd_testbed_free(tb);
    return e;
  }
  if (fw_gen_chip(tb->fw_dir, amd_testbed_fw_chip(cfg->chip)) != 0) {
    int e = bg_error(BG_EIO, "testbed: writing firmware into %s: %s", tb->fw_dir, strerror(errno));
    amd_testbed_free(tb);
    return e;
  }
  if (mock_amd_install_fw_dir(tb->gpu, tb->fw_dir) != 0) {
    int e = bg_error(BG_EIO, "testbed: the GPU refused the firmware of %s: %s", tb->fw_dir, mock_amd_failures(tb->gpu));
    amd_testbed_free(tb);
    return e;
  }
  return 0;
}

void amd_testbed_export_fw_dir(amd_testbed *tb) {
  setenv("BG_FIRMWARE_DIR", tb->fw_dir, 1);
  tb->fw_dir_exported = true;
}

unsigned amd_testbed_failures(const amd_testbed *tb, char *msg, size_t n) {
  unsigned nf = tb->gpu ? mock_amd_nfail(tb->gpu) : 0, nt = tb->tree ? mock_sysfs_nfail(tb->tree) : 0;
  snprintf(msg, n, "%s%s", tb->gpu ? mock_amd_failures(tb->gpu) : "", tb->tree ? mock_sysfs_failures(tb->tree) : "");
  return nf + nt;
}

void amd_testbed_free(amd_testbed *tb) {
  if (tb->fw_dir[0]) amd_testbed_rm_dir(tb->fw_dir);
  mock_amd_free(tb->gpu);
  mock_sysfs_free(tb->tree);
  if (tb->fw_dir_exported) unsetenv("BG_FIRMWARE_DIR");
  memset(tb, 0, sizeof(*tb));
}
