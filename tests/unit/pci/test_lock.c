/* tests/unit/pci/test_lock.c: one owner per device: lock files, owner queries and listing for
 * hcq_smi, and two processes competing for one device. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_lock.h"
#include "pci_test.h"

static const bg_pci_lock_entry *find(const bg_pci_lock_entry *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].name, name) == 0) return &v[i];
  return NULL;
}

START_TEST(lock_in_one_process) {
  int fd, fd2;
  pid_t pid;
  char want[96];
  ck_assert(strstr(bg_pci_lock_dir(), mock_sysfs_root(fx)) == bg_pci_lock_dir());
  OK(bg_pci_lock_acquire(AMD_BDF, &fd));
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, getpid());
  snprintf(want, sizeof(want), "device %s is in use by pid %d", AMD_BDF, (int)getpid());
  FAILS(bg_pci_lock_acquire(AMD_BDF, &fd2), BG_EBUSY, want);
  ck_assert_int_eq(fd2, -1);
  OK(bg_pci_lock_acquire("usb:3-2", &fd2));
  bg_pci_lock_entry *v;
  size_t n;
  OK(bg_pci_lock_list(&v, &n));
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(v[0].name, AMD_BDF);  /* sorted */
  ck_assert_int_eq(v[0].pid, getpid());
  ck_assert_str_eq(v[1].name, "usb:3-2");
  free(v);
  bg_pci_lock_release(fd);
  bg_pci_lock_release(fd2);
  OK(bg_pci_lock_owner(AMD_BDF, &pid));
  ck_assert_int_eq(pid, 0);
  OK(bg_pci_lock_list(&v, &n));
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(find(v, n, "usb:3-2")->pid, 0);
  free(v);
  OK(bg_pci_lock_owner("0000:99:00.0", &pid));  /* never locked */
  ck_assert_int_eq(pid, 0);
  FAILS(bg_pci_lock_acquire("a/b", &fd), BG_EINVAL, "bad device name");
}
END_TEST

/* A pid left in a file nobody holds is not an owner. */
START_TEST(stale_lock_file) {
  char path[4300];
  snprintf(path, sizeof(path), "%s/baregpu-%s.lock", bg_pci_lock_dir(), NV_BDF);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("999999\n", f);
  fclose(f);
  pid_t pid;
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, 0);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, getpid());
  bg_pci_close(d);
}
END_TEST

/* A FIFO, a directory or a symbolic link at a lock path is an error naming the path, never a block: opening a FIFO
 * for reading waits for a writer for ever (bg_pci_lock_owner, hcq_smi pids), and a link could point anywhere. */
START_TEST(lock_path_not_a_regular_file) {
  char path[4300], target[4300];
  pid_t pid;
  int fd;
  snprintf(path, sizeof(path), "%s/baregpu-fifo.lock", bg_pci_lock_dir());
  ck_assert_int_eq(mkfifo(path, 0666), 0);
  FAILS(bg_pci_lock_owner("fifo", &pid), BG_EIO, "not a regular file");
  ck_assert_msg(strstr(bg_last_error(), path) != NULL, "%s", bg_last_error());
  FAILS(bg_pci_lock_acquire("fifo", &fd), BG_EIO, "not a regular file");
  ck_assert_msg(strstr(bg_last_error(), path) != NULL, "%s", bg_last_error());
  ck_assert_int_eq(fd, -1);
  bg_pci_lock_entry *v;
  size_t n;
  OK(bg_pci_lock_list(&v, &n)); /* listed without blocking; the FIFO is left out */
  ck_assert_ptr_null(find(v, n, "fifo"));
  free(v);
  snprintf(path, sizeof(path), "%s/baregpu-dir.lock", bg_pci_lock_dir());
  ck_assert_int_eq(mkdir(path, 0777), 0);
  FAILS(bg_pci_lock_acquire("dir", &fd), BG_EIO, "not a regular file");
  snprintf(target, sizeof(target), "%s/elsewhere", bg_pci_lock_dir());
  FILE *f = fopen(target, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  snprintf(path, sizeof(path), "%s/baregpu-link.lock", bg_pci_lock_dir());
  ck_assert_int_eq(symlink(target, path), 0);
  FAILS(bg_pci_lock_acquire("link", &fd), BG_EIO, "symbolic link");
  ck_assert_msg(strstr(bg_last_error(), path) != NULL, "%s", bg_last_error());
}
END_TEST

/* A child holds the device; the parent is told who, and gets it once the child dies. */
START_TEST(two_processes) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    bg_pci_dev *d;
    char c = bg_pci_open_sysfs(NV_BDF, 0, &d) == 0 ? 'k' : 'e';
    if (write(p[1], &c, 1) != 1) _exit(2);
    for (;;) pause();
  }
  char c = 0;
  ck_assert_int_eq(read(p[0], &c, 1), 1);
  ck_assert_int_eq(c, 'k');
  bg_pci_dev *d;
  char want[96];
  snprintf(want, sizeof(want), "device %s is in use by pid %d", NV_BDF, (int)child);
  FAILS(bg_pci_open_sysfs(NV_BDF, 0, &d), BG_EBUSY, want);
  pid_t pid;
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, child);
  bg_pci_lock_entry *v;
  size_t n;
  OK(bg_pci_lock_list(&v, &n));
  ck_assert_ptr_nonnull(find(v, n, NV_BDF));
  ck_assert_int_eq(find(v, n, NV_BDF)->pid, child);
  free(v);
  /* hcq_smi's actions refuse while someone else owns the device. */
  FAILS(bg_pci_reset_bdf(NV_BDF), BG_EBUSY, want);
  FAILS(bg_pci_unbind(NV_BDF, NULL, 0), BG_EBUSY, want);
  /* The kernel drops the lock when the owner dies. */
  kill(child, SIGKILL);
  ck_assert_int_eq(waitpid(child, NULL, 0), child);
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, 0);
  OK(bg_pci_open_sysfs(NV_BDF, 0, &d));
  OK(bg_pci_lock_owner(NV_BDF, &pid));
  ck_assert_int_eq(pid, getpid());
  bg_pci_close(d);
  close(p[0]);
  close(p[1]);
}
END_TEST

TCase *tcase_lock(void) {
  TCase *tc = fx_tcase("lock");
  tcase_add_test(tc, lock_in_one_process);
  tcase_add_test(tc, stale_lock_file);
  tcase_add_test(tc, lock_path_not_a_regular_file);
  tcase_add_test(tc, two_processes);
  return tc;
}
