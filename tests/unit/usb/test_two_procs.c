/* tests/unit/usb/test_two_procs.c: one owner per device across processes, through bg_dev_open. The parent starts the
 * emulated devices (one fake sysfs tree and lock directory, tests/mockgpu/mock_plugin.c), then forks a child that
 * opens DEV and holds it: the parent's open of the same device fails with "is in use by pid <child>", and
 * succeeds once the child has exited. MOCKPCI+AMD takes the lock in platform/pci_sysfs.c; MOCKUSB+AMD in the
 * transport (usb/usb_lock.c, as the libusb transport does in usb/usb_libusb.c). Each case runs in check's own
 * fork, so the child is forked before any emulated engine thread exists. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "platform/pci_lock.h"

typedef struct two_case {
  const char *dev, *lock_name; /* what bg_dev_open takes; the lock file's device name */
} two_case;

static const two_case cases[] = {
  {"MOCKPCI+AMD:0", "0000:03:00.0"},
  {"MOCKUSB+AMD:0", "mockusb:0"},
};

START_TEST(second_process_is_refused) {
  const two_case *c = &cases[_i];
  setenv("BG_WAIT_TIMEOUT_MS", "20000", 1);
  char names[16][48];
  ck_assert_int_gt(bg_dev_list(true, names, 16), 0); /* starts the emulated devices: the child shares their tree */
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    bg_dev *d = NULL;
    int r = bg_dev_open(c->dev, &d);
    if (r < 0) fprintf(stderr, "child: bg_dev_open(%s): %s\n", c->dev, bg_last_error());
    char k = r == 0 ? 'k' : 'e';
    if (write(p[1], &k, 1) != 1) _exit(2);
    for (;;) pause();
  }
  char k = 0;
  ck_assert_int_eq(read(p[0], &k, 1), 1);
  ck_assert_msg(k == 'k', "the child could not open %s (its message is on stderr)", c->dev);
  bg_dev *d = NULL;
  int r = bg_dev_open(c->dev, &d);
  char want[128];
  snprintf(want, sizeof(want), "device %s is in use by pid %d", c->lock_name, (int)child);
  ck_assert_msg(r == -BG_EBUSY, "%s opened by a second process: %d (%s), expected -BG_EBUSY", c->dev, r,
                r ? bg_last_error() : "opened");
  ck_assert_msg(strstr(bg_last_error(), want) != NULL, "message '%s' lacks '%s'", bg_last_error(), want);
  ck_assert_ptr_null(d);
  pid_t owner = 0;
  ck_assert_int_eq(bg_pci_lock_owner(c->lock_name, &owner), 0); /* the same lock directory */
  ck_assert_int_eq(owner, child);
  /* The kernel drops the lock when the owner dies; then the parent opens the device. */
  kill(child, SIGKILL);
  ck_assert_int_eq(waitpid(child, NULL, 0), child);
  r = bg_dev_open(c->dev, &d);
  ck_assert_msg(r == 0, "%s after the child exited: %s", c->dev, bg_last_error());
  ck_assert_int_eq(bg_pci_lock_owner(c->lock_name, &owner), 0);
  ck_assert_int_eq(owner, getpid());
  bg_dev_close(d);
  close(p[0]);
  close(p[1]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("usb-two-processes");
  TCase *tc = tcase_create("lock");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, second_process_is_refused, 0, (int)(sizeof(cases) / sizeof(cases[0])));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
