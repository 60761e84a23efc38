/* tests/mockgpu/amd_testbed.c: see amd_testbed.h. */
#include "amd_testbed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"

fw_gen_chip_id amd_testbed_fw_chip(mock_amd_chip chip) {
  return chip == MOCK_AMD_GFX11 ? FW_GEN_GFX11 : chip == MOCK_AMD_GFX942 ? FW_GEN_GFX942 : FW_GEN_GFX12;
}

void amd_testbed_rm_dir(const char *dir) { mock_rm_tree(dir); }

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
  int e = amd_testbed_fw_new(tb->gpu, tag, tb->fw_dir, sizeof(tb->fw_dir));
  if (e < 0) amd_testbed_free(tb);
  return e;
}

int amd_testbed_fw_new(mock_amd *gpu, const char *tag, char *dir, size_t n) {
  /* In TMPDIR as bg-mock-<pid>-<tag>-XXXXXX: swept after a killed run, removed at exit (mock_sysfs.h). */
  int te = mock_tmpdir_new(tag, dir, n);
  if (te < 0) return bg_error(BG_EIO, "testbed: cannot create a temp dir for tag '%s': %s", tag, strerror(-te));
  int e = 0;
  if (fw_gen_chip(dir, amd_testbed_fw_chip(mock_amd_chip_id(gpu))) != 0)
    e = bg_error(BG_EIO, "testbed: writing firmware into %s: %s", dir, strerror(errno));
  else if (mock_amd_install_fw_dir(gpu, dir) != 0)
    e = bg_error(BG_EIO, "testbed: the GPU refused the firmware of %s: %s", dir, mock_amd_failures(gpu));
  if (e < 0) {
    amd_testbed_rm_dir(dir);
    dir[0] = 0;
  }
  return e;
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
