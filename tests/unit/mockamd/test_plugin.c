/* tests/unit/mockamd/test_plugin.c: the module libbaregpu-mock.so (tests/mockgpu/mock_plugin.c, contract
 * platform/mock_plugin.h) loaded with dlopen as the library's MOCKPCI interface would: it exports only its entry point;
 * start() builds the fake tree through the host's pci_set_hooks with the emulated GPU(s) and firmware, leaves the
 * environment alone and answers the same devices twice; the library's AM driver then boots the device through that
 * tree and a RELEASE_MEM on its compute queue executes; bad configurations are refused; stop() removes the temp
 * dirs. The module path comes as argv[1]. */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "baregpu/error.h"
#include "platform/mock_plugin.h"
#include "platform/pci_hook.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
#define PACKET3(op, n) ((3u << 30) | (((op) & 0xffu) << 8) | (((n) & 0x3fffu) << 16))

static const char *module_path;
static const bg_mock_host HOST = {BG_MOCK_PLUGIN_ABI, bg_pci_set_hooks};

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static const bg_mock_plugin *load(void **h) {
  *h = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(*h != NULL, "dlopen %s: %s", module_path, dlerror());
  bg_mock_plugin_entry_fn entry = (bg_mock_plugin_entry_fn)(uintptr_t)dlsym(*h, BG_MOCK_PLUGIN_ENTRY);
  ck_assert_ptr_nonnull(entry);
  const bg_mock_plugin *p = entry();
  ck_assert_uint_eq(p->abi, BG_MOCK_PLUGIN_ABI);
  return p;
}

START_TEST(only_entry_exported) {
  void *h;
  load(&h);
  /* the module's copies of library and model code stay private */
  ck_assert_ptr_null(dlsym(h, "bg_pci_set_hooks"));
  ck_assert_ptr_null(dlsym(h, "mock_amd_new"));
  ck_assert_ptr_null(dlsym(h, "fw_gen_chip"));
  dlclose(h);
}
END_TEST

START_TEST(start_boot_stop) {
  void *h;
  const bg_mock_plugin *p = load(&h);
  unsetenv("MOCKGPU_CHIP");
  setenv("MOCKGPU_COUNT", "2", 1);
  const char *env_before = getenv("BG_SYSFS_ROOT");
  bg_mock_devices d, d2;
  char err[256] = "";
  ck_assert_msg(p->start(&HOST, "MOCKPCI", "AMD", &d, err, sizeof(err)) == 0, "%s", err);
  ck_assert_int_eq(d.count, 2);
  ck_assert_str_eq(d.bdf[0], "0000:03:00.0");
  ck_assert_str_eq(d.bdf[1], "0000:04:00.0");
  ck_assert_ptr_eq(getenv("BG_SYSFS_ROOT"), env_before);
  char path[600];
  snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/vendor", d.sysfs_root, d.bdf[1]);
  ck_assert_msg(exists(path), "%s", path);
  ck_assert(exists(d.lock_dir));
  snprintf(path, sizeof(path), "%s/psp_13_0_0_sos.bin", d.fw_dir);
  ck_assert_msg(exists(path), "%s", path);
  ck_assert_int_eq(p->start(&HOST, "MOCKPCI", "AMD", &d2, err, sizeof(err)), 0); /* the same devices */
  ck_assert_str_eq(d2.sysfs_root, d.sysfs_root);
  /* the library's platform/pci reaches the tree through the hooks the module registered with the host */
  setenv("BG_SYSFS_ROOT", d.sysfs_root, 1);
  setenv("BG_LOCK_DIR", d.lock_dir, 1);
  void *ctx = NULL;
  ck_assert_ptr_nonnull(bg_pci_hooks_current(&ctx));
  bg_am_dev *dev = NULL;
  bg_am_open_opts o = {.fw_dir = d.fw_dir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1};
  OK(bg_am_dev_open(d.bdf[0], &o, &dev));
  bg_am_blocks blk = {0};
  OK(bg_am_boot_ex(dev, NULL, NULL, &blk));
  /* the compute queue runs: RELEASE_MEM into the EOP buffer (an MC address) */
  uint32_t pk[8] = {PACKET3(0x49, 6), 0x14 | 5u << 8, 1u << 29, (uint32_t)(blk.gfx->eop + 0x80),
                    (uint32_t)((blk.gfx->eop + 0x80) >> 32), 0x600DF00D, 0, 0};
  for (unsigned i = 0; i < 8; i++) OK(bg_mmio_wr32(&dev->vram, blk.gfx->ring + 4 * i, pk[i]));
  OK(bg_am_flush_hdp(dev)); /* the ring writes reach the CP (tests/mockgpu/amd_hdp.h) */
  OK(bg_mmio_wr64(&dev->doorbell, BG_AM_GFX_DOORBELL * 8, 8));
  /* polled while the engine thread writes them: atomic loads through the direct BAR0 view */
  const uint32_t *val = (const uint32_t *)(uintptr_t)(dev->vram.ptr + blk.gfx->eop + 0x80);
  const uint64_t *rptr = (const uint64_t *)(uintptr_t)(dev->vram.ptr + blk.gfx->ptrs + 0x80);
  uint32_t v = 0;
  for (int i = 0; i < 2000 && (v = __atomic_load_n(val, __ATOMIC_ACQUIRE)) != 0x600DF00D; i++) usleep(1000);
  ck_assert_uint_eq(v, 0x600DF00D);
  for (int i = 0; i < 2000 && __atomic_load_n(rptr, __ATOMIC_ACQUIRE) != 8; i++) usleep(1000);
  ck_assert_uint_eq(__atomic_load_n(rptr, __ATOMIC_ACQUIRE), 8);
  OK(bg_am_boot_fini(dev, &blk));
  bg_am_blocks_free(&blk);
  bg_am_dev_close(dev);
  unsetenv("BG_SYSFS_ROOT");
  unsetenv("BG_LOCK_DIR");
  p->stop();
  ck_assert(!exists(d.sysfs_root));
  ck_assert(!exists(d.fw_dir));
  unsetenv("MOCKGPU_COUNT");
  dlclose(h);
}
END_TEST

START_TEST(refusals) {
  void *h;
  const bg_mock_plugin *p = load(&h);
  bg_mock_devices d;
  char err[256] = "";
  ck_assert_int_eq(p->start(&HOST, "MOCKNVK", "AMD", &d, err, sizeof(err)), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(err, "MOCKNVK emulates NVIDIA GPUs (NV), not AMD"));
  ck_assert_int_eq(p->start(&HOST, "MOCKFOO", "AMD", &d, err, sizeof(err)), -BG_ENOTSUP);
  ck_assert_ptr_nonnull(strstr(err, "only MOCKPCI, MOCKUSB and MOCKNVK"));
  ck_assert_int_eq(p->start(&HOST, "MOCKPCI", "INTEL", &d, err, sizeof(err)), -BG_ENOTSUP);
  bg_mock_host bad = {BG_MOCK_PLUGIN_ABI + 1, bg_pci_set_hooks};
  ck_assert_int_eq(p->start(&bad, "MOCKPCI", "AMD", &d, err, sizeof(err)), -BG_EINVAL);
  setenv("MOCKGPU_CHIP", "gfx8", 1);
  ck_assert_int_eq(p->start(&HOST, "MOCKPCI", "AMD", &d, err, sizeof(err)), -BG_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "gfx8"));
  setenv("MOCKGPU_CHIP", "gfx12", 1);
  setenv("MOCKGPU_VRAM_MB", "100", 1);
  ck_assert_int_eq(p->start(&HOST, "MOCKPCI", "AMD", &d, err, sizeof(err)), -BG_EINVAL);
  setenv("MOCKGPU_VRAM_MB", "256", 1);
  ck_assert_msg(p->start(&HOST, "MOCKPCI", "AMD", &d, err, sizeof(err)) == 0, "%s", err);
  char path[600];
  snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/device", d.sysfs_root, d.bdf[0]);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char id[32] = "";
  ck_assert_ptr_nonnull(fgets(id, sizeof(id), f));
  fclose(f);
  ck_assert_str_eq(id, "0x7590\n"); /* gfx12: the reference mock's PCI id */
  p->stop();
  unsetenv("MOCKGPU_CHIP");
  unsetenv("MOCKGPU_VRAM_MB");
  dlclose(h);
}
END_TEST

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s path/to/libbaregpu-mock.so\n", argv[0]);
    return 2;
  }
  module_path = argv[1];
  Suite *s = suite_create("mockamd-plugin");
  TCase *t = tcase_create("plugin");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, only_entry_exported);
  tcase_add_test(t, start_boot_stop);
  tcase_add_test(t, refusals);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
