/* tests/unit/pci/test_vfio.c: the VFIO backend (platform/vfio*.c, platform/pci_vfio.c) against the emulated VFIO of
 * tests/mockgpu/mock_vfio.c: each refusal a real system gives and its message, open and close leaving no fd behind,
 * regions and BAR maps through the device fd, DMA through the type1 container (IOVAs) and in no-IOMMU mode, MSI and
 * INTx into the eventfd, reset, the in-use group from another thread and process, and the emulated kernel's checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mock_vfio.h"
#include "pci_test.h"
#include "platform/pci.h"
#include "platform/pci_admin.h"
#include "platform/pci_hook.h"
#include "platform/pci_topology.h"
#include "platform/vfio.h"

/* A function of its own group (9) with no MSI capability and no reset method. */
#define PLAIN_BDF "0000:05:00.0"
static const mock_pci_cfg plain_cfg = {.bdf = PLAIN_BDF, .vendor = 0x1002, .device = 0x744c, .class_code = 0x030000,
                                       .bars = {[0] = {.size = 1u << 20}}, .no_reset = true, .no_msi = true,
                                       .iommu_group = 9};

static const unsigned OPEN_FLAGS = BG_PCI_VFIO | BG_PCI_UNBIND_DRIVER | BG_PCI_REMOVE_SIBLINGS;

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

static void vfio_tree(unsigned extra) { ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE | MOCK_VFIO_DEVNODES | extra), 0); }

/* The AMD function bound to vfio-pci and its group (7) viable: its audio sibling removed. */
static void take_amd(void) {
  char was[64];
  OK(bg_pci_unbind(AMD_BDF, was, sizeof(was)));
  OK(bg_pci_remove_siblings(AMD_BDF));
  OK(bg_vfio_bind(AMD_BDF));
}

/* ---------------- what a real system refuses ---------------- */

START_TEST(err_module_not_loaded) {
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d), BG_ENOTSUP, "the vfio module is not loaded");
  ck_assert(strstr(bg_last_error(), "modprobe vfio-pci") != NULL);
}
END_TEST

START_TEST(err_no_iommu_group) {
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(NV_BDF, BG_PCI_VFIO, &d), BG_ENOTSUP, "0000:41:00.0: no IOMMU group");
  ck_assert(strstr(bg_last_error(), "the IOMMU is off") != NULL);
  ck_assert(strstr(bg_last_error(), "intel_iommu=on or amd_iommu=on") != NULL);
  ck_assert(strstr(bg_last_error(), "enable_unsafe_noiommu_mode") != NULL);
}
END_TEST

START_TEST(err_noiommu_disabled) {
  vfio_tree(MOCK_VFIO_NOIOMMU_OFF);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d), BG_ENOTSUP, "no-IOMMU mode is disabled");
  ck_assert(strstr(bg_last_error(), "enable_unsafe_noiommu_mode reads 0") != NULL);
  ck_assert(strstr(bg_last_error(), "echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode") != NULL);
}
END_TEST

START_TEST(err_group_not_viable) {
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, BG_PCI_VFIO | BG_PCI_UNBIND_DRIVER, &d), BG_EBUSY,
        "IOMMU group 7 is not viable: 0000:03:00.1 is bound to snd_hda_intel");
  ck_assert(strstr(bg_last_error(), "bind every device of the group to vfio-pci") != NULL);
}
END_TEST

START_TEST(err_no_devnodes) {
  ck_assert_int_eq(mock_sysfs_add_vfio(fx, MOCK_VFIO_MODULE), 0);
  char dev[4200];
  snprintf(dev, sizeof(dev), "%s/nodev", mock_sysfs_root(fx));
  setenv("BG_DEV_ROOT", dev, 1);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d), BG_ENOTSUP, "/nodev/vfio/vfio: No such file or directory");
  /* What the failed open changed is said. */
  ck_assert(strstr(bg_last_error(), "kernel driver amdgpu stays unbound: hcq_smi bind 0000:03:00.0 amdgpu") != NULL);
}
END_TEST

/* Injection: one ioctl of the emulated VFIO answers ret (the tree's hooks with a wrapped system-call table). */
static unsigned long inject_req;
static int inject_ret;
static bg_vfio_sys wrapped_sys;
static bg_pci_hooks wrapped_hooks;

static int wrapped_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg) {
  return req == inject_req ? inject_ret : mock_vfio_syscalls.ioctl(ctx, fd, req, arg);
}

static void inject_ioctl(unsigned long req, int ret) {
  void *ctx = NULL;
  const bg_pci_hooks *h = bg_pci_hooks_current(&ctx);
  ck_assert_ptr_nonnull(h);
  wrapped_sys = mock_vfio_syscalls;
  wrapped_sys.ioctl = wrapped_ioctl;
  wrapped_hooks = *h;
  wrapped_hooks.vfio = &wrapped_sys;
  inject_req = req;
  inject_ret = ret;
  OK(bg_pci_set_hooks(mock_sysfs_root(fx), &wrapped_hooks, ctx));
}

START_TEST(err_wrong_api_version) {
  vfio_tree(MOCK_VFIO_TYPE1);
  inject_ioctl(VFIO_GET_API_VERSION, 1);
  bg_pci_dev *d;
  FAILS(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d), BG_ENOTSUP, "speaks the wrong API version (1, expected 0)");
}
END_TEST

START_TEST(err_device_fd_busy) {
  vfio_tree(MOCK_VFIO_TYPE1);
  inject_ioctl(VFIO_GROUP_GET_DEVICE_FD, -EBUSY);
  bg_pci_dev *d;
  int before = open_fds();
  FAILS(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d), BG_EBUSY, "0000:03:00.0: device in use: VFIO_GROUP_GET_DEVICE_FD");
  ck_assert_int_eq(open_fds(), before);
  ck_assert_uint_eq(mock_vfio_open_files(fx), 0);
}
END_TEST

/* The group held by another thread, then by another process: EBUSY from the group open, said as "in use". */
typedef struct busy_try {
  int r;
  char msg[1024];
} busy_try;

static void *try_open(void *arg) {
  busy_try *t = arg;
  bg_vfio v;
  t->r = bg_vfio_open(AMD_BDF, &v);
  snprintf(t->msg, sizeof(t->msg), "%s", bg_last_error());
  if (t->r == 0) bg_vfio_close(&v);
  return NULL;
}

START_TEST(err_in_use_thread_and_process) {
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  bg_vfio v;
  OK(bg_vfio_open(AMD_BDF, &v));
  busy_try t = {0};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, try_open, &t), 0);
  pthread_join(th, NULL);
  ck_assert_msg(t.r == -BG_EBUSY && strstr(t.msg, "device in use: IOMMU group 7") != NULL, "%d: %s", t.r, t.msg);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    try_open(&t);
    _exit(t.r == -BG_EBUSY && strstr(t.msg, "is open elsewhere") != NULL ? 0 : 1);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other process's open was not refused as in use");
  bg_vfio_close(&v);
  /* Released: the group opens again. */
  try_open(&t);
  ck_assert_msg(t.r == 0, "%s", t.msg);
}
END_TEST

/* ---------------- open, close, regions ---------------- */

START_TEST(open_close_leaves_nothing_open) {
  vfio_tree(MOCK_VFIO_TYPE1);
  int before = open_fds();
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  ck_assert(bg_pci_has_irq(d));
  ck_assert_uint_eq(mock_vfio_open_files(fx), 3); /* container, group, device */
  ck_assert_int_ge(open_fds(), before + 5);       /* and the eventfd and the lock file */
  bg_pci_close(d);
  ck_assert_int_eq(open_fds(), before);
  ck_assert_uint_eq(mock_vfio_open_files(fx), 0);
  /* Bound to vfio-pci now: a plain open prefers VFIO. */
  OK(bg_pci_open_sysfs(AMD_BDF, 0, &d));
  ck_assert(bg_pci_has_irq(d));
  bg_pci_close(d);
  ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(regions_and_bar_maps) {
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  bg_pci_bar b;
  OK(bg_pci_bar_info(d, 0, &b));
  ck_assert_uint_eq(b.size, 256u << 20);
  ck_assert(b.base != 0 && b.is_64 && b.prefetch && !b.is_io);
  OK(bg_pci_bar_info(d, 4, &b));
  ck_assert(b.is_io && b.size == 256);
  OK(bg_pci_bar_info(d, 1, &b));
  ck_assert_uint_eq(b.size, 0);
  bg_mmio v;
  FAILS(bg_pci_map_bar(d, 4, 0, 0, 0, &v), BG_EINVAL, "BAR4 is an I/O BAR");
  FAILS(bg_pci_map_bar(d, 2, 4096, 2u << 20, 0, &v), BG_EINVAL, "not page-aligned inside");
  OK(bg_pci_map_bar(d, 2, 4096, 8192, 0, &v));
  ck_assert_uint_eq(mock_pci_bar_views(m, 2), 1);
  ck_assert(strstr(mock_sysfs_last_open(fx), "resource2") == NULL); /* through the device fd, not sysfs */
  OK(bg_mmio_write(&v, 0x10, "vfio", 4));
  ck_assert_int_eq(memcmp((uint8_t *)mock_pci_bar_mem(m, 2) + 4096 + 0x10, "vfio", 4), 0);
  bg_pci_unmap_bar(d, &v);
  ck_assert_uint_eq(mock_pci_bar_views(m, 2), 0);
  /* Config space through the config region. */
  uint32_t id, cmd;
  OK(bg_pci_cfg_read(d, 0, 4, &id));
  ck_assert_uint_eq(id, 0x744c1002);
  OK(bg_pci_cfg_write(d, 0x3c, 1, 0x55));
  ck_assert_uint_eq(mock_pci_config(m)[0x3c], 0x55);
  OK(bg_pci_cfg_read(d, 4, 2, &cmd));
  ck_assert_uint_eq(cmd & 6, 6); /* memory decoding and bus mastering on */
  bg_pci_close(d);
}
END_TEST

/* ---------------- DMA ---------------- */

START_TEST(dma_type1_iovas) {
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(d, 3 * 4096, 0, NULL, &s));
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 1);
  ck_assert_uint_eq(s.bus[0], 1ull << 32);
  for (size_t i = 1; i < s.npages; i++) ck_assert_uint_eq(s.bus[i], s.bus[0] + i * 4096);
  /* The device's DMA to the IOVA lands in the host page. */
  OK(mock_pci_dma_write(m, s.bus[2] + 8, "iova", 4));
  ck_assert_int_eq(memcmp((uint8_t *)s.view.ptr + 2 * 4096 + 8, "iova", 4), 0);
  /* A CPU buffer mapped for the device gets the next free IOVA. */
  void *buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  uint64_t bus[2] = {0, 0};   /* one bus address per page */
  OK(bg_pci_dma_map(d, buf, 8192, bus));
  ck_assert_uint_eq(bus[0], s.bus[0] + 3 * 4096);
  ck_assert_uint_eq(bus[1], bus[0] + 4096);
  uint64_t bus0 = s.bus[0];
  bg_pci_free_sysmem(d, &s);
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 1);
  /* The freed IOVA range is reused first (first fit). */
  OK(bg_pci_alloc_sysmem(d, 4096, 0, NULL, &s));
  ck_assert_uint_eq(s.bus[0], bus0);
  bg_pci_free_sysmem(d, &s);
  bg_pci_dma_unmap(d, buf, 8192);
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 0);
  /* Unmapped: the IOMMU blocks the device. */
  ck_assert_int_ne(mock_pci_dma_write(m, bus0, "x", 1), 0);
  expect_failures(1, "DMA to unmapped bus address");
  munmap(buf, 8192);
  bg_pci_close(d);
}
END_TEST

START_TEST(dma_noiommu_physical) {
  vfio_tree(0);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(d, 4096, 0, NULL, &s));
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 0);  /* no container mapping: physical (the tree's pagemap) */
  ck_assert_uint_eq(mock_sysfs_dma_ranges(fx), 1);
  bg_pci_free_sysmem(d, &s);
  ck_assert_uint_eq(mock_sysfs_dma_ranges(fx), 0);
  bg_pci_close(d);
}
END_TEST

/* Two devices share the process's container: memory one maps is at the same IOVA for the other. */
START_TEST(dma_shared_container) {
  ck_assert(mock_sysfs_add(fx, &plain_cfg) != NULL);
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *a, *b;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &a));
  OK(bg_pci_open_sysfs(PLAIN_BDF, BG_PCI_VFIO, &b));
  ck_assert_uint_eq(mock_vfio_open_files(fx), 5); /* one container, two groups, two devices */
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(a, 4096, 0, NULL, &s));
  OK(mock_pci_dma_write(mock_sysfs_find(fx, PLAIN_BDF), s.bus[0] + 16, "both", 4));
  ck_assert_int_eq(memcmp((uint8_t *)s.view.ptr + 16, "both", 4), 0);
  bg_pci_close(a); /* with a's mapping still there: unmapped for the group that stays */
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 0);
  ck_assert_int_ne(mock_pci_dma_write(mock_sysfs_find(fx, PLAIN_BDF), s.bus[0], "x", 1), 0);
  expect_failures(1, "DMA to unmapped bus address");
  bg_sysmem_free(&s);
  bg_pci_close(b);
  ck_assert_uint_eq(mock_vfio_open_files(fx), 0);
}
END_TEST

/* Behind the IOMMU a peer's BAR is not reachable (its physical address is no IOVA of the container): the topology
 * says so, and the emulated device's DMA there faults. */
START_TEST(p2p_behind_iommu) {
  ck_assert(mock_sysfs_add(fx, &plain_cfg) != NULL);
  char why[256];
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *a, *b;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &a));
  OK(bg_pci_open_sysfs(PLAIN_BDF, BG_PCI_VFIO, &b));
  FAILS(bg_pci_p2p_distance(PLAIN_BDF, AMD_BDF, why, sizeof(why)), BG_ENOTSUP,
        "0000:05:00.0 is behind an IOMMU (VFIO type1 group 9): peer BARs are not mapped into its container");
  bg_pci_bar bar;
  OK(bg_pci_bar_info(a, 2, &bar));
  ck_assert_int_ne(mock_pci_dma_write(mock_sysfs_find(fx, PLAIN_BDF), bar.base, "p2p", 3), 0);
  expect_failures(1, "DMA to unmapped bus address");
  bg_pci_close(b);
  bg_pci_close(a);
}
END_TEST

/* The emulated type1 backend refuses what vfio_iommu_type1.c refuses. */
START_TEST(map_dma_checks) {
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  bg_vfio v;
  OK(bg_vfio_open(AMD_BDF, &v));
  uint8_t *buf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct vfio_iommu_type1_dma_map mp = {.argsz = sizeof(mp), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
                                        .vaddr = (uintptr_t)buf, .iova = 1ull << 32, .size = 8192};
#define MAP(field, val, want)                                                                               \
  do {                                                                                                      \
    struct vfio_iommu_type1_dma_map x = mp;                                                                 \
    x.field = val;                                                                                          \
    ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.container, VFIO_IOMMU_MAP_DMA, (unsigned long)&x), want); \
  } while (0)
  MAP(argsz, 8, -EINVAL);
  MAP(flags, 0x80, -EINVAL);
  MAP(flags, 0, -EINVAL);
  MAP(iova, (1ull << 32) + 512, -EINVAL);
  MAP(size, 0, -EINVAL);
  MAP(iova, 0xfee00000ull, -EINVAL);  /* the MSI window */
  MAP(iova, UINT64_MAX & ~4095ull, -EINVAL);
  munmap(buf + 3 * 4096, 4096);
  MAP(vaddr, (uintptr_t)buf + 2 * 4096, -EFAULT);  /* its second page is not mapped */
  MAP(size, 8192, 0);
  MAP(iova, (1ull << 32) + 4096, -EEXIST);
  struct vfio_iommu_type1_dma_unmap um = {.argsz = sizeof(um), .iova = (1ull << 32) + 4096, .size = 4096};
  ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.container, VFIO_IOMMU_UNMAP_DMA, (unsigned long)&um), -EINVAL);
  um = (struct vfio_iommu_type1_dma_unmap){.argsz = sizeof(um), .iova = 1ull << 32, .size = 8192};
  ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.container, VFIO_IOMMU_UNMAP_DMA, (unsigned long)&um), 0);
  ck_assert_uint_eq(um.size, 8192);
  munmap(buf, 3 * 4096);
  bg_vfio_close(&v);
#undef MAP
}
END_TEST

/* ---------------- the IOMMU's IOVA ranges, page sizes and mapping limit ---------------- */

/* Address space without memory behind it: the emulated kernel only checks that it is mapped (msync). */
static void *vspace(uint64_t size) {
  void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert(p != MAP_FAILED);
  return p;
}

/* The AMD function opened through bare VFIO with MOCKGPU_VFIO_IOVA=iova (NULL: unset). */
static void open_iova(const char *iova, bg_vfio *v) {
  if (iova) setenv("MOCKGPU_VFIO_IOVA", iova, 1);
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  OK(bg_vfio_open(AMD_BDF, v));
}

/* A 39-bit IOMMU (many VT-d units): nothing is mapped at or above 2^39; once the space from 4 GiB to 2^39 is full,
 * what remains goes below 4 GiB. */
START_TEST(iova_39bit_width) {
  bg_vfio v;
  open_iova("39", &v);
  const uint64_t top = 1ull << 39, big = top - (1ull << 32) - (2u << 20);
  uint8_t *a = vspace(big), *b = vspace(4u << 20);
  uint64_t ia, ib, ic;
  OK(bg_vfio_dma_map(&v, AMD_BDF, a, big, true, &ia));
  ck_assert_uint_eq(ia, 1ull << 32);
  OK(bg_vfio_dma_map(&v, AMD_BDF, b, 4u << 20, false, &ib));  /* 2 MiB left above 4 GiB: below it */
  ck_assert_uint_lt(ib + (4u << 20), 0xfee00000ull);
  ck_assert_uint_ne(ib, 0);
  OK(bg_vfio_dma_map(&v, AMD_BDF, b, 2u << 20, false, &ic));  /* exactly the last 2 MiB */
  ck_assert_uint_eq(ic + (2u << 20), top);
  ck_assert_uint_eq(mock_vfio_dma_maps(fx), 3);
  bg_vfio_close(&v);
  munmap(a, big);
  munmap(b, 4u << 20);
}
END_TEST

/* A hole in the ranges (a reserved region): a mapping goes to the next range rather than across it, and first fit
 * still fills the space before the hole. */
START_TEST(iova_hole_not_straddled) {
  bg_vfio v;
  open_iova("0x100000000-0x1003fffff,0x100500000-0x1ffffffff", &v);
  uint8_t *buf = vspace(3u << 20);
  uint64_t i1, i2, i3;
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 3u << 20, false, &i1));
  ck_assert_uint_eq(i1, 0x100000000ull);
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 2u << 20, false, &i2));  /* 1 MiB left before the hole */
  ck_assert_uint_eq(i2, 0x100500000ull);
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 1u << 20, false, &i3));
  ck_assert_uint_eq(i3, 0x100300000ull);
  bg_vfio_close(&v);
  munmap(buf, 3u << 20);
}
END_TEST

/* An IOMMU with ranges only below 4 GiB: DMA still works there (never at 0, never in the MSI window), and what fits
 * nowhere is refused naming the device, the size and the ranges. */
START_TEST(iova_below_4g_only) {
  setenv("MOCKGPU_VFIO_IOVA", "32", 1);
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  bg_sysmem s;
  OK(bg_pci_alloc_sysmem(d, 3 * 4096, 0, NULL, &s));
  ck_assert(s.bus[0] != 0 && s.bus[0] + 3 * 4096 <= 0xfee00000ull);
  OK(mock_pci_dma_write(mock_sysfs_find(fx, AMD_BDF), s.bus[1], "low", 3));
  ck_assert_int_eq(memcmp((uint8_t *)s.view.ptr + 4096, "low", 3), 0);
  bg_pci_free_sysmem(d, &s);
  bg_pci_close(d);
  bg_vfio v;
  OK(bg_vfio_open(AMD_BDF, &v));  /* bound to vfio-pci now */
  uint8_t *buf = vspace(1u << 20);
  uint64_t iova;
  FAILS(bg_vfio_dma_map(&v, AMD_BDF, buf, 5ull << 30, false, &iova), BG_ENOMEM,
        "0000:03:00.0: no free IOVA range of 0x140000000 bytes");
  ck_assert(strstr(bg_last_error(), "the IOMMU's ranges are 0x0-0xfedfffff, 0xfef00000-0xffffffff") != NULL);
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 1u << 20, true, &iova));
  ck_assert_uint_eq(iova, 2u << 20);  /* the first 2 MiB-aligned IOVA past page 0 */
  bg_vfio_close(&v);
  munmap(buf, 1u << 20);
}
END_TEST

/* A kernel that reports no IOVA ranges (before Linux 5.4): the fixed window [4 GiB, 2^47). */
START_TEST(iova_no_capability) {
  bg_vfio v;
  open_iova("none", &v);
  ck_assert(!v.c->iova_reported && !v.c->dma_limit_known);
  ck_assert_uint_eq(v.c->niova, 1);
  ck_assert(v.c->iova[0].start == 1ull << 32 && v.c->iova[0].end == (1ull << 47) - 1);
  uint8_t *buf = vspace(4096);
  uint64_t iova;
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 4096, false, &iova));
  ck_assert_uint_eq(iova, 1ull << 32);
  /* Refused before the kernel is asked: the size needs no memory behind it. */
  FAILS(bg_vfio_dma_map(&v, AMD_BDF, buf, (1ull << 47) - (1ull << 32), false, &iova), BG_ENOMEM,
        "the kernel reports no IOVA ranges; the fixed window is 0x100000000-0x7fffffffffff");
  bg_vfio_close(&v);
  munmap(buf, 4096);
}
END_TEST

/* The smallest IOMMU page above 4 KiB (MOCKGPU_VFIO_PGSIZES): IOVAs aligned to it, smaller maps refused clearly. */
START_TEST(iova_page_size) {
  setenv("MOCKGPU_VFIO_PGSIZES", "0x10000", 1);
  bg_vfio v;
  open_iova("0x100001000-0x1ffffffff", &v);
  ck_assert_uint_eq(v.c->pgsize, 0x10000);
  uint8_t *raw = vspace(0x30000), *buf = (uint8_t *)(((uintptr_t)raw + 0xffff) & ~(uintptr_t)0xffff);
  uint64_t iova;
  FAILS(bg_vfio_dma_map(&v, AMD_BDF, buf, 4096, false, &iova), BG_EINVAL, "the IOMMU's smallest page is 0x10000");
  OK(bg_vfio_dma_map(&v, AMD_BDF, buf, 0x10000, false, &iova));
  ck_assert_uint_eq(iova, 0x100010000ull);
  bg_vfio_close(&v);
  munmap(raw, 0x30000);
}
END_TEST

/* vfio_iommu_type1.dma_entry_limit reached: a message naming it, whether the kernel reported the limit
 * (VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL: checked before the ioctl) or only answers ENOSPC. */
START_TEST(dma_entry_limit) {
  setenv("MOCKGPU_VFIO_DMA_LIMIT", "3", 1);
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  for (int old = 0; old < 2; old++) {
    bg_vfio v;
    if (old) setenv("MOCKGPU_VFIO_IOVA", "none", 1);
    OK(bg_vfio_open(AMD_BDF, &v));
    uint8_t *buf = vspace(4 * 4096);
    uint64_t iova;
    for (int i = 0; i < 3; i++) OK(bg_vfio_dma_map(&v, AMD_BDF, buf + i * 4096, 4096, false, &iova));
    FAILS(bg_vfio_dma_map(&v, AMD_BDF, buf + 3 * 4096, 4096, false, &iova), BG_ENOMEM,
          "0000:03:00.0: VFIO DMA map of 0x1000 bytes: the container holds 3 mappings, the most the type1 IOMMU "
          "allows (the vfio_iommu_type1.dma_entry_limit module parameter");
    ck_assert(strstr(bg_last_error(), old ? "parameter)" : "parameter, 3 here)") != NULL);
    OK(bg_vfio_dma_unmap(&v, AMD_BDF, buf, 4096));
    OK(bg_vfio_dma_map(&v, AMD_BDF, buf + 3 * 4096, 4096, false, &iova));
    ck_assert_uint_eq(iova, 1ull << 32);
    bg_vfio_close(&v);
    munmap(buf, 4 * 4096);
  }
}
END_TEST

/* VFIO_IOMMU_GET_INFO of the emulated type1 backend, as vfio_iommu_type1_get_info answers. */
START_TEST(get_info_argsz) {
  bg_vfio v;
  open_iova(NULL, &v);
  uint64_t raw[32];
  struct vfio_iommu_type1_info *info = (struct vfio_iommu_type1_info *)raw;
  const size_t need = sizeof(*info) + 32 + 16 + 16 + 2 * sizeof(struct vfio_iova_range);
#define GET_INFO(size, want)                                                                          \
  do {                                                                                                \
    memset(raw, 0xa5, sizeof(raw));                                                                   \
    info->argsz = (size);                                                                             \
    ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.container, VFIO_IOMMU_GET_INFO, (unsigned long)info), \
                     want);                                                                           \
  } while (0)
  GET_INFO(15, -EINVAL);
  GET_INFO(16, 0);  /* only the first 16 bytes are written */
  ck_assert_uint_eq(info->argsz, need);
  ck_assert_uint_eq(info->flags, VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS);
  ck_assert_uint_eq(info->iova_pgsizes, 0x40201000);
  ck_assert_uint_eq(info->cap_offset, 0xa5a5a5a5);
  GET_INFO(need - 8, 0);  /* the chain does not fit: the size it needs, no chain */
  ck_assert_uint_eq(info->argsz, need);
  ck_assert_uint_eq(info->cap_offset, 0);
  ck_assert_uint_eq(raw[3], 0xa5a5a5a5a5a5a5a5ull);
  GET_INFO(need, 0);
  ck_assert_uint_eq(info->argsz, need);
  ck_assert_uint_eq(info->cap_offset, sizeof(*info));
  const uint8_t *b = (const uint8_t *)raw;
  const struct vfio_info_cap_header *h = (const void *)(b + info->cap_offset);
  ck_assert(h->id == VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION && h->next == sizeof(*info) + 32);
  h = (const void *)(b + h->next);
  ck_assert(h->id == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL && h->next == sizeof(*info) + 48);
  ck_assert_uint_eq(((const struct vfio_iommu_type1_info_dma_avail *)h)->avail, 65535);
  const struct vfio_iommu_type1_info_cap_iova_range *r = (const void *)(b + h->next);
  ck_assert(r->header.id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE && r->header.next == 0 && r->nr_iovas == 2);
  ck_assert(r->iova_ranges[0].start == 0 && r->iova_ranges[0].end == 0xfedfffffull);
  ck_assert(r->iova_ranges[1].start == 0xfef00000ull && r->iova_ranges[1].end == (1ull << 48) - 1);
  /* MAP_DMA outside the ranges: EINVAL (vfio_iommu_iova_dma_valid). */
  struct vfio_iommu_type1_dma_map mp = {.argsz = sizeof(mp), .flags = VFIO_DMA_MAP_FLAG_READ,
                                        .vaddr = (uintptr_t)raw & ~4095ull, .iova = 1ull << 48, .size = 4096};
  ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.container, VFIO_IOMMU_MAP_DMA, (unsigned long)&mp), -EINVAL);
  bg_vfio_close(&v);
  /* A kernel before 5.4: page sizes, no capabilities, argsz left alone. */
  setenv("MOCKGPU_VFIO_IOVA", "none", 1);
  OK(bg_vfio_open(AMD_BDF, &v));
  GET_INFO(sizeof(*info), 0);
  ck_assert_uint_eq(info->argsz, sizeof(*info));
  ck_assert_uint_eq(info->flags, VFIO_IOMMU_INFO_PGSIZES);
  ck_assert_uint_eq(info->cap_offset, 0);
  bg_vfio_close(&v);
#undef GET_INFO
}
END_TEST

/* Container and group rules of container.c and group.c, driven by hand. */
START_TEST(container_group_rules) {
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  void *ctx;
  const bg_vfio_sys *sys = bg_vfio_sys_current(&ctx);
  char path[4300];
  snprintf(path, sizeof(path), "%s/vfio/vfio", bg_vfio_dev_root());
  int c = sys->open(ctx, path, O_RDWR);
  ck_assert_int_ge(c, 0);
  int c2 = sys->open(ctx, path, O_RDWR); /* a second container, for the one-container-per-group rule */
  snprintf(path, sizeof(path), "%s/vfio/7", bg_vfio_dev_root());
  int g = sys->open(ctx, path, O_RDWR);
  ck_assert(c >= 0 && c2 >= 0 && g >= 0);
  ck_assert_int_eq(sys->open(ctx, path, O_RDWR), -EBUSY);
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_GET_API_VERSION, 0), VFIO_API_VERSION);
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU), 1);
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU), -EINVAL); /* no group yet */
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_GET_DEVICE_FD, (unsigned long)AMD_BDF), -EINVAL);
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_SET_CONTAINER, (unsigned long)&c), 0);
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_SET_CONTAINER, (unsigned long)&c2), -EINVAL); /* one container */
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_GET_DEVICE_FD, (unsigned long)AMD_BDF), -EINVAL); /* no IOMMU */
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU), -ENODEV);
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU), 0);
  ck_assert_int_eq(sys->ioctl(ctx, c, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU), -EINVAL); /* only once */
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_GET_DEVICE_FD, (unsigned long)NV_BDF), -ENODEV);
  int dev = sys->ioctl(ctx, g, VFIO_GROUP_GET_DEVICE_FD, (unsigned long)AMD_BDF);
  ck_assert_int_ge(dev, 0);
  struct vfio_group_status st = {.argsz = sizeof(st)};
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_GET_STATUS, (unsigned long)&st), 0);
  ck_assert_uint_eq(st.flags, VFIO_GROUP_FLAGS_VIABLE | VFIO_GROUP_FLAGS_CONTAINER_SET);
  struct vfio_device_info info = {.argsz = 8};
  ck_assert_int_eq(sys->ioctl(ctx, dev, VFIO_DEVICE_GET_INFO, (unsigned long)&info), -EINVAL);
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_UNSET_CONTAINER, 0), -EBUSY); /* a device is open */
  sys->close(ctx, dev);
  ck_assert_int_eq(sys->ioctl(ctx, g, VFIO_GROUP_UNSET_CONTAINER, 0), 0);
  sys->close(ctx, g);
  sys->close(ctx, c2);
  sys->close(ctx, c);
  ck_assert_uint_eq(mock_vfio_open_files(fx), 0);
}
END_TEST

/* ---------------- interrupts, reset ---------------- */

START_TEST(msi_eventfd) {
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  FAILS(bg_pci_wait_irq(d, 10), BG_ETIMEDOUT, "no interrupt within 10 ms");
  ck_assert_int_eq(mock_vfio_irq(fx, AMD_BDF), 1);
  OK(bg_pci_wait_irq(d, 1000));
  ck_assert_int_eq(mock_vfio_irq(fx, AMD_BDF), 1); /* MSI does not mask itself */
  ck_assert_int_eq(mock_vfio_irq(fx, AMD_BDF), 1);
  OK(bg_pci_wait_irq(d, 1000)); /* both counted in one read */
  FAILS(bg_pci_wait_irq(d, 10), BG_ETIMEDOUT, "no interrupt");
  bg_pci_close(d);
  ck_assert_int_eq(mock_vfio_irq(fx, AMD_BDF), -ENODEV);
}
END_TEST

START_TEST(intx_unmask) {
  ck_assert(mock_sysfs_add(fx, &plain_cfg) != NULL);
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(PLAIN_BDF, BG_PCI_VFIO, &d));
  ck_assert_int_eq(mock_vfio_irq(fx, PLAIN_BDF), 1);
  ck_assert_int_eq(mock_vfio_irq(fx, PLAIN_BDF), 0); /* masked until the unmask: pending */
  OK(bg_pci_wait_irq(d, 1000));                      /* reads it and unmasks: the pending one fires */
  OK(bg_pci_wait_irq(d, 1000));
  FAILS(bg_pci_wait_irq(d, 10), BG_ETIMEDOUT, "no interrupt");
  ck_assert_int_eq(mock_vfio_irq(fx, PLAIN_BDF), 1);
  OK(bg_pci_wait_irq(d, 1000));
  bg_pci_close(d);
}
END_TEST

/* SET_IRQS validation of vfio_main.c and vfio_pci_intrs.c. */
START_TEST(set_irqs_checks) {
  vfio_tree(MOCK_VFIO_TYPE1);
  take_amd();
  bg_vfio v;
  OK(bg_vfio_open(AMD_BDF, &v));
  ck_assert(!v.intx);
  struct vfio_irq_set s = {.argsz = sizeof(s), .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK,
                           .index = VFIO_PCI_MSI_IRQ_INDEX, .count = 1};
#define SET(want) ck_assert_int_eq(v.sys->ioctl(v.sys_ctx, v.device, VFIO_DEVICE_SET_IRQS, (unsigned long)&s), want)
  SET(-ENOTTY); /* MSI cannot be masked */
  s.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_ACTION_TRIGGER;
  SET(-EINVAL);
  s.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
  s.start = 1;
  SET(-EINVAL); /* one MSI vector */
  s.start = 0;
  s.argsz = 8;
  SET(-EINVAL);
  s.argsz = sizeof(s);
  s.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER; /* no room for the fd */
  SET(-EINVAL);
  s.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK;
  s.index = VFIO_PCI_INTX_IRQ_INDEX;
  SET(-EINVAL); /* INTx is not the enabled type */
  s.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
  s.index = VFIO_PCI_MSI_IRQ_INDEX;
  SET(0); /* loopback */
  OK(bg_vfio_wait_irq(&v, AMD_BDF, 1000));
#undef SET
  bg_vfio_close(&v);
}
END_TEST

START_TEST(reset_through_vfio) {
  ck_assert(mock_sysfs_add(fx, &plain_cfg) != NULL);
  vfio_tree(MOCK_VFIO_TYPE1);
  bg_pci_dev *d;
  OK(bg_pci_open_sysfs(AMD_BDF, OPEN_FLAGS, &d));
  mock_pci *m = mock_sysfs_find(fx, AMD_BDF);
  unsigned n = mock_pci_resets(m);
  ck_assert_uint_eq(n, 1); /* vfio-pci resets the function when it is first opened */
  OK(bg_pci_reset(d));
  ck_assert_uint_eq(mock_pci_resets(m), n + 1);
  uint32_t cmd;
  OK(bg_pci_cfg_read(d, 4, 2, &cmd));
  ck_assert_uint_eq(cmd & 6, 6);
  bg_pci_close(d);
  OK(bg_pci_open_sysfs(PLAIN_BDF, BG_PCI_VFIO, &d));
  FAILS(bg_pci_reset(d), BG_ENOTSUP, "no VFIO_DEVICE_FLAGS_RESET");
  bg_pci_close(d);
}
END_TEST

TCase *tcase_vfio(void) {
  TCase *tc = fx_tcase("vfio");
  tcase_add_test(tc, err_module_not_loaded);
  tcase_add_test(tc, err_no_iommu_group);
  tcase_add_test(tc, err_noiommu_disabled);
  tcase_add_test(tc, err_group_not_viable);
  tcase_add_test(tc, err_no_devnodes);
  tcase_add_test(tc, err_wrong_api_version);
  tcase_add_test(tc, err_device_fd_busy);
  tcase_add_test(tc, err_in_use_thread_and_process);
  tcase_add_test(tc, open_close_leaves_nothing_open);
  tcase_add_test(tc, regions_and_bar_maps);
  tcase_add_test(tc, dma_type1_iovas);
  tcase_add_test(tc, dma_noiommu_physical);
  tcase_add_test(tc, dma_shared_container);
  tcase_add_test(tc, p2p_behind_iommu);
  tcase_add_test(tc, map_dma_checks);
  tcase_add_test(tc, iova_39bit_width);
  tcase_add_test(tc, iova_hole_not_straddled);
  tcase_add_test(tc, iova_below_4g_only);
  tcase_add_test(tc, iova_no_capability);
  tcase_add_test(tc, iova_page_size);
  tcase_add_test(tc, dma_entry_limit);
  tcase_add_test(tc, get_info_argsz);
  tcase_add_test(tc, container_group_rules);
  tcase_add_test(tc, msi_eventfd);
  tcase_add_test(tc, intx_unmask);
  tcase_add_test(tc, set_irqs_checks);
  tcase_add_test(tc, reset_through_vfio);
  return tc;
}
