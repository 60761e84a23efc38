/* tests/unit/mocknv/test_mocknv_rm.c: the emulated RM / UVM: the object graph in the driver's order succeeds on both
 * configurations, and each strictness rule rejects once with the status the real driver returns. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mocknv_env.h"
#include "mocknv_tests.h"

START_TEST(graph_hopper_and_ada) {
  mnv e;
  mnv_start(&e, _i ? "ada" : "hopper");
  mnv_graph_full(&e);
  ck_assert_uint_ne(e.token[0], e.token[1]);
  /* GR info: the SM version of the configuration, one GPC/TPC/SM, 48 warps. */
  uint32_t list[10] = {0x0c, 0, 0x0d, 0, 0x14, 0, 0x17, 0, 0x20, 0};
  uint8_t gi[32] = {0};
  p32(gi, 0, 5);
  p64(gi, 8, (uint64_t)(uintptr_t)list);
  ck_assert_uint_eq(mnv_control(&e, e.subdev, 0x20801201, gi, sizeof gi), 0);
  ck_assert_uint_eq(list[1], _i ? 0x809 : 0x900);
  ck_assert_uint_eq(list[3], 48);
  ck_assert_uint_eq(list[5] * list[7] * list[9], 1);
  /* hcq_smi's controls: name, FB total/free, pstate. */
  uint8_t nm[132] = {0};
  ck_assert_uint_eq(mnv_control(&e, e.subdev, 0x20800110, nm, sizeof nm), 0);
  ck_assert_ptr_nonnull(strstr((char *)nm + 4, _i ? "4090" : "H200"));
  uint8_t fb[1028] = {0};
  p32(fb, 0, 2);
  p32(fb, 4, 0x08);
  p32(fb, 12, 0x16);
  ck_assert_uint_eq(mnv_control(&e, e.subdev, 0x20801303, fb, sizeof fb), 0);
  ck_assert_uint_eq(g32(fb, 8), 4u << 20);
  ck_assert_uint_lt(g32(fb, 16), 4u << 20); /* three video-memory objects are allocated */
  /* Freeing the TSG frees its channels and engines (recursively): their handles are gone. */
  ck_assert_uint_eq(mnv_free(&e, e.device, e.tsg), 0);
  uint32_t tok = 0;
  ck_assert_uint_eq(mnv_control(&e, e.ch[0], 0xc36f0108, &tok, 4), 0x33); /* NV_ERR_INVALID_OBJECT_HANDLE */
  ck_assert_uint_eq(mnv_free(&e, e.ch[0], e.eng[0]), 0x57);               /* NV_ERR_OBJECT_NOT_FOUND */
  ck_assert_uint_eq(mock_nv_failures(NULL, 0), 0);
  mock_nv_stop();
}
END_TEST

/* Another generation's class, or no class at all: NV_ERR_INVALID_CLASS. */
START_TEST(wrong_class) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  uint32_t h = 0xa1000001u;
  ck_assert_uint_eq(mnv_alloc(&e, e.ch[0], &h, 0xc9c0, NULL, 0), ST_INVALID_CLASS); /* Ada compute on Hopper */
  ck_assert_uint_eq(mnv_alloc(&e, e.subdev, &h, 0xc461, NULL, 0), ST_INVALID_CLASS); /* Turing usermode */
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0xdead, NULL, 0), ST_INVALID_CLASS);
  mock_nv_stop();
}
END_TEST

/* Parameters of another size than the 580 driver's struct: NV_ERR_INVALID_ARGUMENT; missing required params too. */
START_TEST(wrong_params_size) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_base(&e);
  uint8_t vs[56] = {0};
  p32(vs, 4, 0x48);
  uint32_t h = 0xa1000001u;
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x90f1, vs, 48), ST_INVALID_ARGUMENT); /* the 570 layout */
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x90f1, NULL, 0), ST_INVALID_ARGUMENT);
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x90f1, vs, 56), ST_OK);
  /* A control of the wrong size: GPFIFO_SCHEDULE is 3 bytes on 580. */
  uint8_t tp[20] = {0};
  uint32_t tsg = 0xa1000002u;
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &tsg, 0xa06c, tp, sizeof tp), ST_OK);
  uint8_t sch[3] = {1, 0, 0};
  ck_assert_uint_eq(mnv_control(&e, tsg, 0xa06c0101, sch, 2), ST_INVALID_ARGUMENT);
  ck_assert_uint_eq(mnv_control(&e, tsg, 0xa06c0101, sch, 3), ST_OK);
  /* A control the model does not know, or one the object's class does not export: NV_ERR_NOT_SUPPORTED. */
  ck_assert_uint_eq(mnv_control(&e, e.subdev, 0x20801399, sch, 3), ST_NOT_SUPPORTED);
  ck_assert_uint_eq(mnv_control(&e, e.device, 0x20801201, sch, 3), ST_NOT_SUPPORTED);
  mock_nv_stop();
}
END_TEST

START_TEST(wrong_parent) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_base(&e);
  uint32_t sd = 0, h = 0xa1000001u;
  ck_assert_uint_eq(mnv_alloc(&e, e.root, &h, 0x2080, &sd, 4), ST_INVALID_PARENT);        /* subdevice under client */
  ck_assert_uint_eq(mnv_alloc(&e, e.subdev, &h, 0x90f1, NULL, 0), ST_INVALID_ARGUMENT);   /* params checked first */
  uint8_t vs[56] = {0};
  ck_assert_uint_eq(mnv_alloc(&e, e.subdev, &h, 0x90f1, vs, 56), ST_INVALID_PARENT);      /* VA space under subdevice */
  ck_assert_uint_eq(mnv_alloc(&e, 0xa0fffff0u, &h, 0x90f1, vs, 56), ST_INVALID_PARENT);   /* no such parent */
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0xc661, NULL, 0), ST_INVALID_PARENT);     /* usermode under device */
  mock_nv_stop();
}
END_TEST

START_TEST(duplicate_and_generated_handles) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_base(&e);
  uint8_t vm[24] = {0};
  p64(vm, 8, 0xffffffffull);
  uint32_t h = e.virtmem;
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x70, vm, sizeof vm), ST_DUPLICATE);
  uint32_t a = 0, b = 0; /* hObjectNew 0: RM picks handles (RS_UNIQUE_HANDLE_BASE upwards) */
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &a, 0x70, vm, sizeof vm), ST_OK);
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &b, 0x70, vm, sizeof vm), ST_OK);
  ck_assert_uint_ne(a, 0);
  ck_assert_uint_ne(a, b);
  ck_assert_uint_ge(a, 0xcaf00000u);
  mock_nv_stop();
}
END_TEST

/* UVM calls before UVM_INITIALIZE: NV_ERR_ILLEGAL_ACTION; a VA space for an unregistered GPU: NV_ERR_INVALID_DEVICE. */
START_TEST(uvm_order) {
  mnv e;
  mnv_start(&e, "hopper");
  uint32_t h = 0;
  ck_assert_uint_eq(mnv_alloc(&e, 0, &h, 0x41, NULL, 0), ST_OK);
  e.root = h;
  uint8_t rg[40] = {0};
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 37, rg, 36), ST_ILLEGAL_ACTION);
  uint8_t cr[24] = {0};
  p64(cr, 0, 0x1000000000ull);
  p64(cr, 8, 0x1000);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 73, cr, 16), ST_ILLEGAL_ACTION);
  uint8_t init[16] = {0};
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 0x30000001, init, 8), ST_OK);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 73, cr, 16), ST_OK);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 73, cr, 16), ST_UVM_IN_USE); /* overlapping external range */
  uint8_t rv[32] = {0};
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 25, rv, 28), ST_INVALID_DEVICE); /* REGISTER_GPU_VASPACE before REGISTER_GPU */
  uint8_t fr[24] = {0};
  p64(fr, 0, 0x1000000000ull + 0x1000);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 34, fr, 16), ST_INVALID_ADDRESS);
  p64(fr, 0, 0x1000000000ull);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 34, fr, 16), ST_OK);
  mock_nv_stop();
}
END_TEST

/* The _IOC size must be the 580 struct's: NVOS46 is 64 bytes (56 was 570's), NVOS21 32. */
START_TEST(ioctl_size_mismatch) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_base(&e);
  uint8_t md[64] = {0};
  errno = 0;
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.ctl, NV_IOWR(0x57, 56), md), -1);
  ck_assert_int_eq(errno, EINVAL);
  uint8_t a[48] = {0};
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.ctl, NV_IOWR(0x2b, 48), a), -1);
  ck_assert_int_eq(errno, EINVAL);
  /* RM escapes other than ALLOC_MEMORY go to /dev/nvidiactl only. */
  uint8_t c[32] = {0};
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.dev, NV_IOWR(0x2a, 32), c), 0);
  ck_assert_uint_eq(g32(c, 28), ST_INVALID_ARGUMENT);
  mock_nv_stop();
}
END_TEST

/* Memory: 2 MiB pages need 2 MiB multiples; a fixed DMA offset must lie in the virtual-memory object; MAP_EXTERNAL
 * outside every external range is refused; nodes other than the nvidia ones do not exist. */
START_TEST(memory_rules) {
  mnv e;
  mnv_start(&e, "ada");
  mnv_graph_base(&e);
  uint8_t mp[128] = {0};
  p32(mp, 24, 3u << 27 | 3u << 23);
  p32(mp, 28, 1u << 20 | 1u << 2 | 1);
  p64(mp, 64, 3u << 20);
  uint32_t h = 0xa1000001u;
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x40, mp, sizeof mp), ST_INVALID_ARGUMENT);
  p64(mp, 64, 4u << 20);
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x40, mp, sizeof mp), ST_OK);
  uint8_t vm[24] = {0};
  p64(vm, 0, 0x1000000000ull);
  p64(vm, 8, 0x1fffffffffull);
  uint32_t v = 0xa1000002u;
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &v, 0x70, vm, sizeof vm), ST_OK);
  uint8_t md[64] = {0};
  p32(md, 0, e.root);
  p32(md, 4, e.device);
  p32(md, 8, v);
  p32(md, 12, h);
  p64(md, 24, 4u << 20);
  p32(md, 32, 0x8110);
  p64(md, 48, 0x2000000000ull);
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.ctl, NV_IOWR(0x57, 64), md), 0);
  ck_assert_uint_eq(g32(md, 56), ST_INVALID_OFFSET);
  static uint8_t mx[9264];
  memset(mx, 0, sizeof mx);
  p64(mx, 0, 0x3000000000ull);
  p64(mx, 8, 4u << 20);
  memcpy(mx + 24, e.uuid, 16);
  p64(mx, 9240, 1);
  p32(mx, 9248, (uint32_t)e.ctl);
  p32(mx, 9252, e.root);
  p32(mx, 9256, h);
  ck_assert_uint_eq(mnv_uvm(&e, e.uvm, 33, mx, 9260), ST_INVALID_ADDRESS);
  errno = 0;
  ck_assert_int_eq(e.sys->open(e.sys->ctx, "/dev/nvidia1", O_RDWR), -1);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_int_eq(e.sys->open(e.sys->ctx, "/dev/nvidia-modeset", O_RDWR), -1);
  char buf[256];
  ck_assert_int_gt(e.sys->read_file(e.sys->ctx, "/proc/driver/nvidia/version", buf, sizeof buf), 0);
  ck_assert_ptr_nonnull(strstr(buf, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06"));
  mock_nv_stop();
}
END_TEST

START_TEST(config_errors) {
  setenv("MOCKGPU_NV", "volta", 1);
  bg_mock_devices d;
  char err[256] = "";
  ck_assert_int_ne(mock_nv_start(&d, err, sizeof err), 0);
  ck_assert_ptr_nonnull(strstr(err, "volta"));
  ck_assert_ptr_nonnull(strstr(err, "hopper or ada"));
}
END_TEST

/* A doorbell store at the wrong register or with a token no channel has: a recorded failure. */
START_TEST(bad_doorbell) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  e.sys->doorbell(e.sys->ctx, (volatile uint32_t *)(e.um + 0x94), e.token[0]);
  ck_assert_uint_eq(mock_nv_failures(NULL, 0), 1);
  e.sys->doorbell(e.sys->ctx, (volatile uint32_t *)(e.um + 0x90), 0x7777);
  char f[4096];
  ck_assert_uint_eq(mock_nv_failures(f, sizeof f), 2);
  ck_assert_ptr_nonnull(strstr(f, "token 0x7777"));
  mock_nv_stop();
}
END_TEST

/* GPFIFO channel parameters: a context share of another kind, a ring VA outside hObjectBuffer's GPU mapping; one
 * engine object per channel; the video-memory budget; CHECK_VERSION_STR. */
START_TEST(channel_and_memory_limits) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  uint8_t cp[368] = {0};
  p32(cp, 4, e.area);
  p64(cp, 8, e.area_va);
  p32(cp, 16, 0x400);
  p32(cp, 24, e.tsg); /* not a context share */
  p32(cp, 32, e.area);
  p64(cp, 64, 0x2000);
  uint32_t h = 0xa2000001u;
  ck_assert_uint_eq(mnv_alloc(&e, e.tsg, &h, e.gpfifo_cls, cp, sizeof cp), 0x33); /* NV_ERR_INVALID_OBJECT_HANDLE */
  p32(cp, 24, e.ctxshare);
  p64(cp, 8, e.cmdq_va); /* mapped, but not hObjectBuffer's memory */
  ck_assert_uint_eq(mnv_alloc(&e, e.tsg, &h, e.gpfifo_cls, cp, sizeof cp), ST_INVALID_OFFSET);
  p64(cp, 8, e.area_va + 0x200000 - 0x1000); /* runs past the area */
  ck_assert_uint_eq(mnv_alloc(&e, e.tsg, &h, e.gpfifo_cls, cp, sizeof cp), ST_INVALID_OFFSET);
  /* A second engine object under a channel. */
  uint32_t eng = 0xa2000002u;
  ck_assert_uint_eq(mnv_alloc(&e, e.ch[1], &eng, e.compute_cls, NULL, 0), 0x40); /* NV_ERR_INVALID_STATE */
  /* 5 GiB of video memory on a 4 GiB GPU. */
  uint8_t mp[128] = {0};
  p64(mp, 64, 5ull << 30);
  ck_assert_uint_eq(mnv_alloc(&e, e.device, &h, 0x40, mp, sizeof mp), 0x51); /* NV_ERR_NO_MEMORY */
  /* NV_ESC_CHECK_VERSION_STR: the query returns the version; another version is refused. */
  uint8_t v[72] = {0};
  p32(v, 0, '2');
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.ctl, NV_IOWR(210, 72), v), 0);
  ck_assert_str_eq((char *)v + 8, "580.65.06");
  ck_assert_uint_eq(g32(v, 4), 1);
  memset(v, 0, sizeof v);
  memcpy(v + 8, "570.124.04", 10);
  ck_assert_int_eq(e.sys->ioctl(e.sys->ctx, e.ctl, NV_IOWR(210, 72), v), -1);
  mock_nv_stop();
}
END_TEST

/* A fork()ed child's stop (the plugin's destructor at its exit) leaves the parent's GPUs alone. */
START_TEST(fork_child_stop) {
  mnv e;
  mnv_start(&e, "hopper");
  mnv_graph_full(&e);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* the child's stop is a no-op: no join of threads it does not have, the table stays */
    mock_nv_stop();
    const bg_nv_sys *sys = NULL;
    char err[128];
    _exit(mock_nv_plugin_sys(&sys, err, sizeof err) == 0 && sys == e.sys ? 0 : 3);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  uint64_t s0 = e.sig_va;
  uint32_t rel[] = {1u << 29 | 5u << 16 | 0x5cu >> 2, (uint32_t)s0, (uint32_t)(s0 >> 32), 42, 0, 0x01000001u};
  mnv_submit(&e, 0, rel, 6);
  ck_assert_int_eq(mnv_wait64(e.sig_cpu, 42), 0);
  uint32_t tok = 0;
  ck_assert_uint_eq(mnv_control(&e, e.ch[0], 0xc36f0108, &tok, 4), 0);
  mock_nv_stop();
}
END_TEST

void mocknv_add_rm(Suite *s) {
  TCase *tc = tcase_create("rm");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, graph_hopper_and_ada, 0, 2);
  tcase_add_test(tc, wrong_class);
  tcase_add_test(tc, wrong_params_size);
  tcase_add_test(tc, wrong_parent);
  tcase_add_test(tc, duplicate_and_generated_handles);
  tcase_add_test(tc, uvm_order);
  tcase_add_test(tc, ioctl_size_mismatch);
  tcase_add_test(tc, memory_rules);
  tcase_add_test(tc, config_errors);
  tcase_add_test(tc, bad_doorbell);
  tcase_add_test(tc, channel_and_memory_limits);
  tcase_add_test(tc, fork_child_stop);
  suite_add_tcase(s, tc);
}
