/* tests/unit/tools/test_smi_emul.c: the hcq_smi executable against an emulated sysfs tree
 * (tests/mockgpu/mock_sysfs.h; BG_SYSFS_ROOT, BG_LOCK_DIR and BG_PROC_ROOT point into it):
 *   0000:03:00.0  AMD Navi31, amdgpu bound, x16 link
 *   0000:0a:00.0  AMD Navi31, no driver, no reset method
 *   0000:41:00.0  NVIDIA GH100, no driver (the nvidia driver is loaded)
 *   0000:00:1f.6  an Intel NIC (e1000e)
 * Lock holders are forked children that take a device's lock with bg_pci_lock_acquire. The
 * driver bind/unbind files and the NVIDIA GPU's reset file are served by smi_kernel, which
 * applies hcq_smi's writes to the model as the kernel would. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/pci_lock.h"
#include "mock_sysfs.h"
#include "smi_kernel.h"
#include "smi_run.h"
#include "test_smi_emul.h"

#define AMD_BDF "0000:03:00.0"
#define AMD2_BDF "0000:0a:00.0"
#define NV_BDF "0000:41:00.0"
#define NIC_BDF "0000:00:1f.6"

#define AMD_UNBIND "bus/pci/drivers/amdgpu/unbind"
#define AMD_BIND "bus/pci/drivers/amdgpu/bind"
#define NV_UNBIND "bus/pci/drivers/nvidia/unbind"
#define NV_BIND "bus/pci/drivers/nvidia/bind"
#define NV_RESET "bus/pci/devices/" NV_BDF "/reset"

static const mock_pci_cfg devices[] = {
  {.bdf = AMD_BDF, .vendor = 0x1002, .device = 0x744c, .subvendor = 0x1da2, .subdevice = 0x471e,
   .class_code = 0x030000, .revision = 0xc8,
   .bars = {[0] = {.size = 256u << 20, .is_64 = true, .prefetch = true}, [2] = {.size = 2u << 20, .is_64 = true},
            [5] = {.size = 1u << 20}},
   .driver = "amdgpu", .link_speed = "16.0 GT/s PCIe", .link_width = 16, .iommu_group = -1},
  {.bdf = AMD2_BDF, .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
   .bars = {[0] = {.size = 16u << 20, .is_64 = true, .prefetch = true}}, .no_reset = true, .iommu_group = -1},
  {.bdf = NV_BDF, .vendor = 0x10de, .device = 0x2335, .class_code = 0x030200,
   .bars = {[0] = {.size = 16u << 20}, [1] = {.size = 64u << 20, .is_64 = true, .prefetch = true}},
   .iommu_group = -1},
  {.bdf = NIC_BDF, .vendor = 0x8086, .device = 0x15fa, .class_code = 0x020000, .bars = {[0] = {.size = 128u << 10}},
   .driver = "e1000e", .iommu_group = -1},
};

static mock_sysfs *tree;
static smi_kernel *kern;

/* ---------------- lock holders ---------------- */

#define MAX_HOLDERS 4

typedef struct holder {
  pid_t pid;
  int cmd, ack;  /* pipes to and from it */
} holder;

static holder holders[MAX_HOLDERS];
static size_t nholders;

/* Fork a process named comm that holds the locks of bdfs (bg_pci_lock_acquire) until it dies or
 * its command pipe closes. stubborn: it ignores SIGTERM. A pid written to its command pipe is
 * written into its first lock file (as if that process held it), acknowledged with a byte. */
static pid_t holder_start(const char *const *bdfs, const char *comm, bool stubborn) {
  ck_assert_uint_lt(nholders, MAX_HOLDERS);
  int cmd[2], ack[2];
  ck_assert_int_eq(pipe2(cmd, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(ack, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(cmd[1]);
    close(ack[0]);
    /* Check's handlers (a SIGTERM one kills the test's process group) must not run here. */
    signal(SIGTERM, stubborn ? SIG_IGN : SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    prctl(PR_SET_NAME, comm, 0, 0, 0);
    int fds[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4 && bdfs[i]; i++)
      if (bg_pci_lock_acquire(bdfs[i], &fds[i]) < 0) _exit(3);
    if (write(ack[1], "R", 1) != 1) _exit(4);
    pid_t p;
    while (read(cmd[0], &p, sizeof(p)) == (ssize_t)sizeof(p)) {
      char buf[24];
      int len = snprintf(buf, sizeof(buf), "%d\n", (int)p);
      if (ftruncate(fds[0], 0) != 0 || pwrite(fds[0], buf, (size_t)len, 0) != len) _exit(5);
      if (write(ack[1], "A", 1) != 1) _exit(6);
    }
    _exit(0);
  }
  close(cmd[0]);
  close(ack[1]);
  char c = 0;
  ck_assert_msg(read(ack[0], &c, 1) == 1 && c == 'R', "lock holder %s did not start", comm);
  holders[nholders++] = (holder){pid, cmd[1], ack[0]};
  return pid;
}

static holder *holder_of(pid_t pid) {
  for (size_t i = 0; i < nholders; i++)
    if (holders[i].pid == pid) return &holders[i];
  ck_abort_msg("pid %d is not a holder", (int)pid);
  return NULL;
}

/* Reap a holder that should be ending; the signal that ended it (0: exited). */
static int holder_reap(pid_t pid) {
  holder *h = holder_of(pid);
  int st = 0;
  pid_t r = 0;
  for (int i = 0; i < 500 && (r = waitpid(pid, &st, WNOHANG)) == 0; i++) {
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
  }
  ck_assert_msg(r == pid, "holder %d is still running", (int)pid);
  h->pid = 0;
  return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static bool holder_running(pid_t pid) {
  int st;
  return waitpid(pid, &st, WNOHANG) == 0;
}

static void holders_end(void) {
  for (size_t i = 0; i < nholders; i++) {
    if (holders[i].pid > 0) {
      kill(holders[i].pid, SIGKILL);
      waitpid(holders[i].pid, NULL, 0);
    }
    close(holders[i].cmd);
    close(holders[i].ack);
  }
  nholders = 0;
}

/* ---------------- fixture ---------------- */

static void setup(void) {
  tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(tree);
  for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
    ck_assert_msg(mock_sysfs_add(tree, &devices[i]) != NULL, "adding %s: %s", devices[i].bdf,
                  mock_sysfs_failures(tree));
  ck_assert_int_eq(mock_sysfs_add_driver(tree, "nvidia"), 0);
  static const char *const served[] = {AMD_UNBIND, AMD_BIND, NV_UNBIND, NV_BIND, NV_RESET};
  kern = smi_kernel_start(served, sizeof(served) / sizeof(served[0]));
  ck_assert_ptr_nonnull(kern);
}

static void teardown(void) {
  holders_end();
  char kf[4096], mf[4096];
  snprintf(kf, sizeof(kf), "%s", smi_kernel_failures(kern));
  smi_kernel_stop(kern);
  unsigned n = mock_sysfs_nfail(tree);
  snprintf(mf, sizeof(mf), "%s", mock_sysfs_failures(tree));
  mock_sysfs_free(tree);
  ck_assert_msg(kf[0] == '\0', "sysfs writes the test did not expect:\n%s", kf);
  ck_assert_msg(n == 0, "the emulated devices recorded %u failures:\n%s", n, mf);
}

/* ---------------- helpers ---------------- */

#define HAS(s, needle) ck_assert_msg(strstr((s), (needle)) != NULL, "'%s' not in:\n%s", (needle), (s))
#define HASNT(s, needle) ck_assert_msg(strstr((s), (needle)) == NULL, "'%s' unexpectedly in:\n%s", (needle), (s))
#define STATUS(r, want) \
  ck_assert_msg((r).status == (want), "status %d (want %d)\nstdout:\n%s\nstderr:\n%s", (r).status, (want), (r).out, (r).err)

static char *fmt(char *buf, size_t n, const char *f, int v) {
  snprintf(buf, n, f, v);
  return buf;
}

/* The driver link of bdf in the tree, "" when none. */
static const char *driver_link(const char *bdf) {
  static char target[512];
  char path[1024];
  snprintf(path, sizeof(path), "%s/devices/%s/driver", mock_sysfs_root(tree), bdf);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  target[n > 0 ? n : 0] = '\0';
  return target;
}

/* ---------------- list ---------------- */

START_TEST(list_shows_driver_bars_owner) {
  char want[128];
  pid_t h = holder_start((const char *const[]){AMD_BDF, NULL}, "gpu_holder", false);
  run_result r = run_smi((const char *const[]){"list", NULL});
  STATUS(r, 0);
  HAS(r.out, "0000:03:00.0  AMD 1002:744c  navi31 (gfx1100, RDNA3)");
  HAS(r.out, "driver     amdgpu");
  HAS(r.out, "BAR0       256 MiB   mem 64-bit prefetchable");
  HAS(r.out, "link       16.0 GT/s PCIe x16");
  HAS(r.out, fmt(want, sizeof(want), "owner      pid %d (gpu_holder)", h));
  HAS(r.out, "0000:41:00.0  NVIDIA 10de:2335");
  HAS(r.out, "owner      none");
  HAS(r.out, "3 GPUs on PCI");
  run_free(&r);

  r = run_smi((const char *const[]){"list", "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, fmt(want, sizeof(want), "\"owner_pid\": %d", h));
  HAS(r.out, "\"owner_process\": \"gpu_holder\"");
  HAS(r.out, "\"in_use\": true");
  HAS(r.out, "\"in_use\": false");
  HAS(r.out, "\"owner_pid\": null");
  HAS(r.out, "\"driver\": \"amdgpu\"");
  run_free(&r);

  /* A PCI address selects that function, whatever its class. */
  r = run_smi((const char *const[]){"list", "--dev", "41:00.0", NULL});
  STATUS(r, 0);
  HAS(r.out, NV_BDF);
  HASNT(r.out, AMD_BDF);
  HAS(r.out, "USB: not searched (--dev 41:00.0 is a PCI address)");
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", NIC_BDF, "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"driver\": \"e1000e\"");
  HAS(r.out, "0000:00:1f.6 is not a GPU");
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", "0000:09:00.0", NULL});
  STATUS(r, 0);
  HAS(r.out, "no PCI function 0000:09:00.0");
  run_free(&r);
}
END_TEST

/* ---------------- pids ---------------- */

START_TEST(pids_lists_holders) {
  char want[128];
  pid_t h = holder_start((const char *const[]){AMD_BDF, NULL}, "gpu_holder", false);
  run_result r = run_smi((const char *const[]){"pids", NULL});
  STATUS(r, 0);
  HAS(r.out, "DEVICE         PID      PROCESS");
  snprintf(want, sizeof(want), "%-14s %-8d %s", AMD_BDF, (int)h, "gpu_holder");
  HAS(r.out, want);
  HAS(r.out, "1 device held");
  run_free(&r);

  r = run_smi((const char *const[]){"pids", "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"command\": \"pids\"");
  HAS(r.out, "\"bdf\": \"0000:03:00.0\"");
  HAS(r.out, fmt(want, sizeof(want), "\"pid\": %d", h));
  HAS(r.out, "\"process\": \"gpu_holder\"");
  HAS(r.out, "\"count\": 1");
  run_free(&r);

  r = run_smi((const char *const[]){"pids", "--dev", "PCI+AMD:0", "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"count\": 1");
  run_free(&r);
  r = run_smi((const char *const[]){"pids", NV_BDF, NULL});
  STATUS(r, 0);
  HAS(r.out, "no process holds 0000:41:00.0");
  run_free(&r);

  /* BG_PROC_ROOT names processes first (the tree's proc/). */
  char path[1024];
  snprintf(path, sizeof(path), "%s/proc/%d", mock_sysfs_root(tree), (int)h);
  ck_assert_int_eq(mkdir(path, 0755), 0);
  strcat(path, "/comm");
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("renamed\n", f);
  fclose(f);
  r = run_smi((const char *const[]){"pids", NULL});
  STATUS(r, 0);
  HAS(r.out, "renamed");
  run_free(&r);
}
END_TEST

/* ---------------- kill_pids ---------------- */

START_TEST(kill_pids_sigterm) {
  char want[160];
  pid_t amd = holder_start((const char *const[]){AMD_BDF, NULL}, "gpu_holder", false);
  pid_t nv = holder_start((const char *const[]){NV_BDF, NULL}, "nv_holder", false);
  run_result r = run_smi((const char *const[]){"kill_pids", "--dev", "NV", NULL});
  STATUS(r, 0);
  snprintf(want, sizeof(want), "pid %d (nv_holder) holding 0000:41:00.0: SIGTERM, exited after", (int)nv);
  HAS(r.out, want);
  HAS(r.out, "kill_pids: 1 of 1 process stopped");
  run_free(&r);
  ck_assert_int_eq(holder_reap(nv), SIGTERM);
  ck_assert(holder_running(amd));

  r = run_smi((const char *const[]){"kill_pids", "--json", "--grace", "10", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, fmt(want, sizeof(want), "\"pid\": %d", amd));
  HAS(r.out, "\"devices\": [\n        \"0000:03:00.0\"\n      ]");
  HAS(r.out, "\"sigterm\": true");
  HAS(r.out, "\"sigkill\": false");
  HAS(r.out, "\"outcome\": \"exited\"");
  HAS(r.out, "\"stopped\": 1");
  HAS(r.out, "\"failed\": 0");
  run_free(&r);
  ck_assert_int_eq(holder_reap(amd), SIGTERM);

  r = run_smi((const char *const[]){"pids", NULL});
  STATUS(r, 0);
  HAS(r.out, "no process holds a GPU");
  run_free(&r);
  r = run_smi((const char *const[]){"kill_pids", NULL});
  STATUS(r, 0);
  HAS(r.out, "nothing to kill");
  run_free(&r);
}
END_TEST

START_TEST(kill_pids_sigkill_after_grace) {
  char want[200];
  pid_t h = holder_start((const char *const[]){AMD_BDF, NV_BDF, NULL}, "stubborn", true);
  run_result r = run_smi((const char *const[]){"kill_pids", "--grace", "0.2", NULL});
  STATUS(r, 0);
  snprintf(want, sizeof(want),
           "pid %d (stubborn) holding 0000:03:00.0 0000:41:00.0: SIGTERM, still holding after 0.20 s; SIGKILL, killed",
           (int)h);
  HAS(r.out, want);
  run_free(&r);
  ck_assert_int_eq(holder_reap(h), SIGKILL);

  h = holder_start((const char *const[]){AMD_BDF, NULL}, "stubborn", true);
  r = run_smi((const char *const[]){"kill_pids", "--json", "--grace=0", AMD_BDF, NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"sigkill\": true");
  HAS(r.out, "\"outcome\": \"killed\"");
  HAS(r.out, "\"grace_ms\": 0");
  run_free(&r);
  ck_assert_int_eq(holder_reap(h), SIGKILL);
}
END_TEST

/* Before hcq_smi runs, its holder's lock file is made to name hcq_smi's own pid. */
static void claim_for(pid_t smi, void *user) {
  holder *h = holder_of(*(pid_t *)user);
  ck_assert_int_eq(write(h->cmd, &smi, sizeof(smi)), (ssize_t)sizeof(smi));
  char c = 0;
  ck_assert_int_eq(read(h->ack, &c, 1), 1);
}

START_TEST(kill_pids_never_itself) {
  pid_t h = holder_start((const char *const[]){AMD_BDF, NULL}, "gpu_holder", false);
  run_opts o = {.before_exec = claim_for, .user = &h};
  run_result r = run_smi_ex((const char *const[]){"kill_pids", "--grace", "0", NULL}, &o);
  ck_assert_msg(r.signal == 0, "hcq_smi killed itself with signal %d", r.signal);
  STATUS(r, 0);
  HAS(r.out, "is hcq_smi itself");
  HAS(r.out, "0 of 1 process stopped");
  run_free(&r);
  ck_assert(holder_running(h));
}
END_TEST

/* ---------------- unbind, bind ---------------- */

START_TEST(unbind_bind_switch_driver) {
  mock_pci *amd = mock_sysfs_find(tree, AMD_BDF), *nv = mock_sysfs_find(tree, NV_BDF);
  smi_kernel_expect(kern, AMD_UNBIND, AMD_BDF);
  run_result r = run_smi((const char *const[]){"unbind", AMD_BDF, NULL});
  STATUS(r, 0);
  HAS(r.out, "0000:03:00.0: unbound from amdgpu; hand it back with: hcq_smi bind 0000:03:00.0 --driver amdgpu");
  run_free(&r);
  ck_assert_uint_eq(smi_kernel_writes(kern, AMD_UNBIND), 1);
  ck_assert_str_eq(mock_pci_driver(amd), "");
  ck_assert_str_eq(driver_link(AMD_BDF), "");

  r = run_smi((const char *const[]){"unbind", "03:00.0", NULL});
  STATUS(r, 0);
  HAS(r.out, "0000:03:00.0: no kernel driver bound; nothing to do");
  run_free(&r);
  r = run_smi((const char *const[]){"list", "--dev", AMD_BDF, NULL});
  HAS(r.out, "driver     none");
  run_free(&r);

  smi_kernel_expect(kern, AMD_BIND, AMD_BDF);
  r = run_smi((const char *const[]){"bind", "--dev", "PCI+AMD:0", "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"command\": \"bind\"");
  HAS(r.out, "\"driver_before\": null");
  HAS(r.out, "\"driver_requested\": \"amdgpu\"");
  HAS(r.out, "\"driver_after\": \"amdgpu\"");
  HAS(r.out, "\"changed\": true");
  run_free(&r);
  ck_assert_str_eq(mock_pci_driver(amd), "amdgpu");
  ck_assert_str_eq(driver_link(AMD_BDF), "../../bus/pci/drivers/amdgpu");
  r = run_smi((const char *const[]){"bind", AMD_BDF, NULL});
  STATUS(r, 0);
  HAS(r.out, "already bound to amdgpu; nothing to do");
  run_free(&r);

  /* NVIDIA's default driver is nvidia; another one must wait for an unbind. */
  smi_kernel_expect(kern, NV_BIND, NV_BDF);
  r = run_smi((const char *const[]){"bind", "NV", NULL});
  STATUS(r, 0);
  HAS(r.out, "0000:41:00.0: bound to nvidia");
  run_free(&r);
  ck_assert_str_eq(mock_pci_driver(nv), "nvidia");
  r = run_smi((const char *const[]){"bind", "--driver", "nouveau", NV_BDF, NULL});
  STATUS(r, 1);
  HAS(r.err, "bound to nvidia: unbind it before binding nouveau");
  run_free(&r);
  smi_kernel_expect(kern, NV_UNBIND, NV_BDF);
  r = run_smi((const char *const[]){"unbind", "--json", "--dev", NV_BDF, NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"driver_before\": \"nvidia\"");
  HAS(r.out, "\"driver_after\": null");
  run_free(&r);
  r = run_smi((const char *const[]){"bind", "--driver=nouveau", NV_BDF, NULL});
  STATUS(r, 1);
  HAS(r.err, "kernel driver nouveau is not loaded");
  run_free(&r);
  ck_assert_str_eq(mock_pci_driver(nv), "");
}
END_TEST

/* ---------------- reset ---------------- */

START_TEST(reset_writes_reset_file) {
  mock_pci *nv = mock_sysfs_find(tree, NV_BDF);
  smi_kernel_expect(kern, NV_RESET, "1");
  run_result r = run_smi((const char *const[]){"reset", NV_BDF, NULL});
  STATUS(r, 0);
  HAS(r.out, "0000:41:00.0: function reset done (driver none)");
  run_free(&r);
  ck_assert_uint_eq(smi_kernel_writes(kern, NV_RESET), 1); /* (served: the model has seen it) */
  ck_assert_uint_eq(mock_pci_resets(nv), 1);

  smi_kernel_expect(kern, NV_RESET, "1");
  r = run_smi((const char *const[]){"reset", "--dev", "NV:0", "--json", NULL});
  STATUS(r, 0);
  assert_valid_json(&r);
  HAS(r.out, "\"command\": \"reset\"");
  HAS(r.out, "\"ok\": true");
  run_free(&r);
  ck_assert_uint_eq(smi_kernel_writes(kern, NV_RESET), 2);
  ck_assert_uint_eq(mock_pci_resets(nv), 2);

  /* A regular file (not served): what was written stays in it. */
  r = run_smi((const char *const[]){"reset", "--dev", "PCI+AMD:0", NULL});
  STATUS(r, 0);
  run_free(&r);
  char path[1024], buf[8] = "";
  snprintf(path, sizeof(path), "%s/devices/%s/reset", mock_sysfs_root(tree), AMD_BDF);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
  fclose(f);
  ck_assert_str_eq(buf, "1");

  r = run_smi((const char *const[]){"reset", "--json", AMD2_BDF, NULL});
  STATUS(r, 1);
  assert_valid_json(&r);
  HAS(r.out, "\"error_kind\": \"not_supported\"");
  HAS(r.err, "no reset method");
  run_free(&r);
}
END_TEST

/* ---------------- refusals and errors ---------------- */

START_TEST(refuses_device_in_use) {
  char want[128];
  pid_t h = holder_start((const char *const[]){AMD_BDF, NULL}, "gpu_holder", false);
  snprintf(want, sizeof(want), "device 0000:03:00.0 is in use by pid %d (gpu_holder)", (int)h);
  run_result r = run_smi((const char *const[]){"unbind", AMD_BDF, NULL});
  STATUS(r, 1);
  HAS(r.err, want);
  HAS(r.err, "hcq_smi kill_pids 0000:03:00.0");
  run_free(&r);
  ck_assert_str_eq(mock_pci_driver(mock_sysfs_find(tree, AMD_BDF)), "amdgpu");
  ck_assert_uint_eq(smi_kernel_writes(kern, AMD_UNBIND), 0);

  r = run_smi((const char *const[]){"reset", "--json", AMD_BDF, NULL});
  STATUS(r, 1);
  assert_valid_json(&r);
  HAS(r.out, "\"error_kind\": \"in_use\"");
  HAS(r.err, want);
  run_free(&r);
  r = run_smi((const char *const[]){"bind", "--driver", "amdgpu", "--dev", "PCI+AMD:0", NULL});
  STATUS(r, 1);
  HAS(r.err, want);
  run_free(&r);
  ck_assert(holder_running(h));
}
END_TEST

START_TEST(unknown_devices_and_usage) {
  run_result r = run_smi((const char *const[]){"unbind", "0000:09:00.0", NULL});
  STATUS(r, 2);
  HAS(r.err, "hcq_smi: unbind: unknown device '0000:09:00.0': no GPU at 0000:09:00.0; GPUs on PCI:");
  HAS(r.err, "  0000:03:00.0  AMD 1002:744c navi31, driver amdgpu");
  HAS(r.err, "  0000:0a:00.0  AMD 1002:744c navi31, driver none");
  HAS(r.err, "  0000:41:00.0  NVIDIA 10de:2335 GH100, driver none");
  HASNT(r.err, NIC_BDF);
  run_free(&r);

  static const struct {
    const char *args[6];
    const char *msg;
  } cases[] = {
    {{"reset", "--dev", "AMD"}, "'AMD' matches 2 GPUs"},
    {{"pids", "--dev", "NV:3"}, "unknown device 'NV:3'"},
    {{"kill_pids", NIC_BDF}, "no GPU at 0000:00:1f.6"},
    {{"unbind"}, "name a device"},
    {{"unbind", "usb:1-2"}, "usb:1-2 is a USB bridge"},
    {{"reset", "--dev", "USB+AMD"}, "names ASM24 USB bridges"},
    {{"bind", "0000:zz:00.0"}, "bad PCI address '0000:zz:00.0'"},
    {{"unbind", AMD_BDF, "--dev", "AMD"}, "give the device once"},
    {{"list", "--driver", "amdgpu"}, "list does not take --driver"},
    {{"pids", "--grace", "1"}, "pids does not take --grace"},
    {{"kill_pids", "--grace", "-1"}, "not a number of seconds"},
    {{"kill_pids", "--grace"}, "--grace needs a value"},
    {{"bind", "--driver", "a/b", AMD_BDF}, "bad kernel driver name"},
    {{"pids", "--dev", "FOO"}, "unknown device kind"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    r = run_smi(cases[i].args);
    ck_assert_msg(r.status == 2, "case %zu (%s): status %d, stderr: %s", i, cases[i].msg, r.status, r.err);
    ck_assert_msg(strncmp(r.err, "hcq_smi: ", 9) == 0, "case %zu: %s", i, r.err);
    HAS(r.err, cases[i].msg);
    ck_assert_msg(r.out[0] == '\0', "case %zu printed on stdout: %s", i, r.out);
    run_free(&r);
  }
  /* --all: every GPU a selector matches (the no-reset one fails, the others reset). */
  smi_kernel_expect(kern, NV_RESET, "1");
  r = run_smi((const char *const[]){"reset", "--all", "--json", NULL});
  STATUS(r, 1);
  assert_valid_json(&r);
  HAS(r.out, "\"failed\": 1");
  run_free(&r);
  ck_assert_uint_eq(smi_kernel_writes(kern, NV_RESET), 1); /* (served: the model has seen it) */
  ck_assert_uint_eq(mock_pci_resets(mock_sysfs_find(tree, NV_BDF)), 1);
}
END_TEST

START_TEST(not_root_says_run_as_root) {
  run_opts o = {0};
  if (geteuid() == 0) {
    ck_assert_int_eq(chmod(mock_sysfs_root(tree), 0755), 0); /* mkdtemp made it 0700 */
    o.as_nobody = true;
  } else {
    /* The owner of a read-only file cannot open it for writing either. */
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", mock_sysfs_root(tree), NV_RESET);
    ck_assert_int_eq(chmod(path, 0444), 0);
    snprintf(path, sizeof(path), "%s/%s", mock_sysfs_root(tree), AMD_UNBIND);
    ck_assert_int_eq(chmod(path, 0444), 0);
  }
  run_result r = run_smi_ex((const char *const[]){"reset", NV_BDF, NULL}, &o);
  STATUS(r, 1);
  HAS(r.err, "run as root");
  HAS(r.err, "hcq_smi: reset needs root");
  run_free(&r);
  ck_assert_uint_eq(mock_pci_resets(mock_sysfs_find(tree, NV_BDF)), 0);
  r = run_smi_ex((const char *const[]){"unbind", "--json", AMD_BDF, NULL}, &o);
  STATUS(r, 1);
  assert_valid_json(&r);
  HAS(r.out, "\"error_kind\": \"permission\"");
  HAS(r.err, "run as root");
  run_free(&r);
  ck_assert_str_eq(mock_pci_driver(mock_sysfs_find(tree, AMD_BDF)), "amdgpu");
  if (geteuid() != 0) return;
  /* Another user's process cannot be signalled. */
  pid_t h = holder_start((const char *const[]){NV_BDF, NULL}, "gpu_holder", false);
  r = run_smi_ex((const char *const[]){"kill_pids", "--grace", "0", NULL}, &o);
  STATUS(r, 1);
  HAS(r.err, "not permitted to signal pid");
  HAS(r.err, "as root");
  run_free(&r);
  ck_assert(holder_running(h));
}
END_TEST

TCase *tcase_smi_emul(void) {
  TCase *tc = tcase_create("emulated_tree");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, list_shows_driver_bars_owner);
  tcase_add_test(tc, pids_lists_holders);
  tcase_add_test(tc, kill_pids_sigterm);
  tcase_add_test(tc, kill_pids_sigkill_after_grace);
  tcase_add_test(tc, kill_pids_never_itself);
  tcase_add_test(tc, unbind_bind_switch_driver);
  tcase_add_test(tc, reset_writes_reset_file);
  tcase_add_test(tc, refuses_device_in_use);
  tcase_add_test(tc, unknown_devices_and_usage);
  tcase_add_test(tc, not_root_says_run_as_root);
  return tc;
}
