/* tests/unit/pci/test_special.c: what baregpu opens from outside never blocks on a FIFO or special file, and the
 * emulated hardware's temporary trees never outlive their process.
 *
 * FIFOs in place of a firmware file (BG_FIRMWARE_DIR), of sysfs attributes in the emulated tree (BG_SYSFS_ROOT:
 * reads, opens for config access, the PCI scan's attributes and resource file), of /dev/vfio/vfio (BG_DEV_ROOT), of
 * the pagemap (BG_PAGEMAP) and of /proc/meminfo (BG_PROC_ROOT): every call returns promptly with an error naming the
 * path and what was expected. Opening a FIFO for reading blocks until a writer comes, so without the fix these calls
 * hang: alarm() turns a hang into a failed test.
 *
 * Temporary trees (tests/mockgpu: the sysfs tree with its lock dir, the plugin's generated firmware) live in TMPDIR:
 * a process that creates them and is SIGKILLed leaves them behind, the next run removes them, and a normal exit -
 * even without freeing the tree - leaves TMPDIR empty. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "am/fw_load.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "platform/pci.h"
#include "platform/pci_attr.h"
#include "hcq/gpu_scan.h"
#include "platform/sysmem.h"
#include "platform/vfio.h"
#include "mock_sysfs.h"

#define OK(call) ck_assert_msg((call) == 0, "%s: %s", #call, bg_last_error())
/* call fails with -code and a message containing every needle. */
#define FAILS2(call, code, n1, n2)                                                                    \
  do {                                                                                                \
    int r_ = (call);                                                                                  \
    ck_assert_msg(r_ == -(code), "%s returned %d (%s), expected -%s: %s", #call, r_, bg_strerror(r_), \
                  #code, bg_last_error());                                                            \
    ck_assert_msg(strstr(bg_last_error(), n1) && strstr(bg_last_error(), n2),                         \
                  "%s: message '%s' lacks '%s' or '%s'", #call, bg_last_error(), n1, n2);             \
  } while (0)

enum { GUARD_S = 60 }; /* a blocking open fails the test instead of stalling the suite */
#define BDF "0000:03:00.0"

static mock_sysfs *tree;
static char path[PATH_MAX];

static const mock_pci_cfg gpu = {
  .bdf = BDF, .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
  .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true}, [5] = {.size = 1u << 20}},
  .iommu_group = 7,
};

static void setup(void) {
  tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(tree);
  ck_assert_ptr_nonnull(mock_sysfs_add(tree, &gpu));
  alarm(GUARD_S);
}

static void teardown(void) {
  alarm(0);
  mock_sysfs_free(tree);
  tree = NULL;
}

/* Replace <root>/<rel> with a FIFO; its path into `path`. */
static const char *fifo_at(const char *rel) {
  snprintf(path, sizeof path, "%s/%s", mock_sysfs_root(tree), rel);
  unlink(path);
  ck_assert_msg(mkfifo(path, 0644) == 0, "mkfifo %s: %s", path, strerror(errno));
  return path;
}

START_TEST(firmware_fifo) {
  char dir[PATH_MAX - 64];
  snprintf(dir, sizeof dir, "%s/firmware", mock_sysfs_root(tree));
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  snprintf(path, sizeof path, "%s/psp_13_0_0_sos.bin", dir); /* the first file of the set */
  ck_assert_int_eq(mkfifo(path, 0644), 0);
  setenv("BG_FIRMWARE_DIR", dir, 1);
  bg_am_fw_ips ip = {.gc = {11, 0, 0}, .mp0 = {13, 0, 0}, .mp1 = {13, 0, 0}, .sdma0 = {6, 0, 0}};
  bg_am_fw *fw = NULL;
  FAILS2(bg_am_fw_load(&ip, NULL, &fw), BG_EIO, path, "is not a regular file: it is a FIFO");
  ck_assert_ptr_null(fw);
  uint8_t *b;
  size_t n;
  FAILS2(bg_am_fw_read_file(path, &b, &n), BG_EIO, path, "it is a FIFO");
  unsetenv("BG_FIRMWARE_DIR");
}
END_TEST

START_TEST(sysfs_attribute_fifo) {
  char buf[64];
  fifo_at("devices/" BDF "/enable");
  FAILS2(bg_sysfs_read("bus/pci/devices/" BDF "/enable", buf, sizeof buf), BG_EIO, "/devices/" BDF "/enable",
         "is not a regular file: it is a FIFO");
  /* A write (no reader: ENXIO) and an open for config access (read-write) are refused by type too. */
  FAILS2(bg_sysfs_write("bus/pci/devices/" BDF "/enable", "1"), BG_EIO, "/devices/" BDF "/enable", "it is a FIFO");
  fifo_at("devices/" BDF "/config");
  int fd;
  FAILS2(bg_sysfs_open("bus/pci/devices/" BDF "/config", O_RDWR, &fd), BG_EIO, "/devices/" BDF "/config",
         "it is a FIFO");
  ck_assert_int_eq(fd, -1);
  bg_pci_dev *d = NULL;
  ck_assert_int_lt(bg_pci_open_sysfs(BDF, 0, &d), 0);
  ck_assert_ptr_null(d);
}
END_TEST

START_TEST(scan_fifo) {
  bg_pci_info *v;
  size_t n, seen;
  /* The resource file: the device is listed, its BARs unknown, the note names the FIFO. */
  fifo_at("devices/" BDF "/resource");
  OK(bg_pci_scan(0, &v, &n, &seen));
  ck_assert_uint_eq(n, 1);
  ck_assert(!v[0].bars_known);
  ck_assert_msg(strstr(v[0].note, "it is a FIFO") != NULL, "note: %s", v[0].note);
  bg_pci_free(v);
  /* The vendor attribute: the device cannot be identified and is skipped. */
  fifo_at("devices/" BDF "/vendor");
  OK(bg_pci_scan(BG_PCI_SCAN_ALL, &v, &n, &seen));
  ck_assert_uint_eq(n, 0);
  bg_pci_free(v);
}
END_TEST

START_TEST(proc_and_pagemap_fifo) {
  const char *pm = fifo_at("pagemap");
  setenv("BG_PAGEMAP", pm, 1);
  static char page[4096] __attribute__((aligned(4096)));
  uint64_t bus;
  FAILS2(bg_sysmem_translate(page, 1, &bus), BG_EIO, pm, "it is a FIFO");
  unsetenv("BG_PAGEMAP");
  fifo_at("proc/meminfo");
  ck_assert_uint_eq(bg_sysmem_free_hugepages(), 0);
}
END_TEST

START_TEST(vfio_node_fifo) {
  ck_assert_int_eq(mock_sysfs_add_vfio(tree, MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES), 0);
  const char *node = fifo_at("dev/vfio/vfio");
  bg_vfio v;
  FAILS2(bg_vfio_open(BDF, &v), BG_ENOTSUP, node, "is not a regular file: it is a FIFO");
}
END_TEST

/* ---------------- temporary trees ---------------- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

/* Names in dir, one per line, into out; how many. */
static int list_dir(const char *dir, char *out, size_t n) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int count = 0;
  size_t len = 0;
  out[0] = '\0';
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    count++;
    len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s\n", de->d_name);
    if (len >= n) len = n - 1;
  }
  closedir(d);
  return count;
}

/* In a child with TMPDIR=tmp: the emulated GPU opened through the plugin (sysfs tree, lock dir, firmware) and a
 * sysfs tree of the static model that is never freed. Then either report on `ready` and wait to be killed, or exit
 * normally. */
static void child(const char *tmp, int ready, bool wait_for_kill) {
  setenv("TMPDIR", tmp, 1);
  bg_dev *d = NULL;
  if (bg_dev_open("MOCKPCI+AMD", &d) != 0) {
    fprintf(stderr, "child: %s\n", bg_last_error());
    _exit(3);
  }
  static mock_sysfs *never_freed; /* a global, so LeakSanitizer does not count it: the exit removes its dir */
  if (!(never_freed = mock_sysfs_new())) _exit(4);
  bg_dev_close(d);
  if (wait_for_kill) {
    if (write(ready, "r", 1) != 1) _exit(5);
    for (;;) pause();
  }
  exit(0);
}

static pid_t spawn(const char *tmp, bool wait_for_kill, int *ready_rd) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(p[0]);
    child(tmp, p[1], wait_for_kill);
  }
  close(p[1]);
  *ready_rd = p[0];
  return pid;
}

START_TEST(temp_trees_of_killed_run_removed) {
  char tmp[PATH_MAX], names[4096];
  const char *t = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/bg-tmptree-test-XXXXXX", t && *t ? t : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  /* 1. A run that is killed while its trees exist leaves them behind. */
  int rd;
  pid_t pid = spawn(tmp, true, &rd);
  char c;
  ck_assert_int_eq(read(rd, &c, 1), 1);
  close(rd);
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status));
  int left = list_dir(tmp, names, sizeof names);
  ck_assert_msg(left >= 2, "the killed run left %d entries:\n%s", left, names);
  /* 2. The next run removes them, and its normal exit removes its own. */
  pid = spawn(tmp, false, &rd);
  close(rd);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
  left = list_dir(tmp, names, sizeof names);
  ck_assert_msg(left == 0, "TMPDIR still holds %d entries:\n%s", left, names);
  nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

START_TEST(normal_exit_leaves_tmpdir_empty) {
  char tmp[PATH_MAX], names[4096];
  const char *t = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/bg-tmptree-test-XXXXXX", t && *t ? t : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  int rd, status;
  pid_t pid = spawn(tmp, false, &rd);
  close(rd);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
  int left = list_dir(tmp, names, sizeof names);
  ck_assert_msg(left == 0, "a normal exit left %d entries in TMPDIR:\n%s", left, names);
  nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pci-special");
  TCase *f = tcase_create("fifo");
  tcase_add_checked_fixture(f, setup, teardown);
  tcase_set_timeout(f, 2 * GUARD_S);
  tcase_add_test(f, firmware_fifo);
  tcase_add_test(f, sysfs_attribute_fifo);
  tcase_add_test(f, scan_fifo);
  tcase_add_test(f, proc_and_pagemap_fifo);
  tcase_add_test(f, vfio_node_fifo);
  suite_add_tcase(s, f);
  TCase *t = tcase_create("tmptree");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, temp_trees_of_killed_run_removed);
  tcase_add_test(t, normal_exit_leaves_tmpdir_empty);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK); /* alarm() and the children's exits stay in the test's process */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
