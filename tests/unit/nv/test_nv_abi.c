/* tests/unit/nv/test_nv_abi.c: the nvidia kernel-interface layer (nv/nv_abi*.h, nv_version.c, nv_classes.c,
 * nv_status.c, nv_rm.c) without a GPU: structure sizes and ioctl numbers against open-gpu-kernel-modules, driver
 * version parsing, class selection from real chips' class lists, status names, and the RM/UVM wrappers over a fake
 * ioctl that stands in for the kernel. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check_helpers.h"
#include "baregpu/error.h"
#include "nv/nv_abi.h"
#include "nv/nv_abi_family.h"
#include "nv/nv_classes.h"
#include "nv/nv_rm.h"
#include "nv/nv_status.h"
#include "nv/nv_version.h"

/* ---- sizes: the values are what sizeof/offsetof give on the real headers of open-gpu-kernel-modules tags
 * 570.124.04 and 580.65.06 (x86_64); files named per line. 610: tinygrad/runtime/autogen/nv_610.py. */
START_TEST(struct_sizes) {
  ck_assert_uint_eq(sizeof(bg_nv_os21_alloc), 32);               /* nvos.h NVOS21_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_os54_control), 32);             /* nvos.h NVOS54_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_os00_free), 16);                /* nvos.h NVOS00_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_os33_with_fd), 56);             /* nv-unix-nvos-params-wrappers.h */
  ck_assert_uint_eq(offsetof(bg_nv_os33_with_fd, fd), 48);
  ck_assert_uint_eq(sizeof(bg_nv_os34_unmap_memory), 32);        /* nvos.h NVOS34_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_os02_with_fd), 56);             /* nv-unix-nvos-params-wrappers.h */
  ck_assert_uint_eq(sizeof(bg_nv_card_info), 72);                /* nv-ioctl.h nv_ioctl_card_info_t */
  ck_assert_uint_eq(offsetof(bg_nv_card_info, minor_number), 56);
  ck_assert_uint_eq(sizeof(bg_nv_register_fd), 4);               /* nv-ioctl.h nv_ioctl_register_fd_t */
  ck_assert_uint_eq(sizeof(bg_nv_rm_api_version), 72);           /* nv-ioctl.h nv_ioctl_rm_api_version_t */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_initialize), 16);           /* uvm_linux_ioctl.h UVM_INITIALIZE_PARAMS */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_mm_initialize), 8);         /* uvm_ioctl.h UVM_MM_INITIALIZE_PARAMS */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_register_gpu), 40);         /* uvm_ioctl.h UVM_REGISTER_GPU_PARAMS */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_register_gpu_vaspace), 32); /* UVM_REGISTER_GPU_VASPACE_PARAMS */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_register_channel), 56);     /* UVM_REGISTER_CHANNEL_PARAMS */
  ck_assert_uint_eq(sizeof(bg_nv_uvm_create_external_range), 24);
  ck_assert_uint_eq(sizeof(bg_nv_uvm_map_external_allocation), 9264);
  ck_assert_uint_eq(offsetof(bg_nv_uvm_map_external_allocation, rmStatus), 9260);
  ck_assert_uint_eq(sizeof(bg_nv_uvm_enable_peer_access), 36);
  ck_assert_uint_eq(sizeof(bg_nv_device_alloc), 56);             /* class/cl0080.h NV0080_ALLOC_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_memory_virtual_alloc), 24);     /* class/cl0070.h */
  ck_assert_uint_eq(sizeof(bg_nv_channel_group_alloc), 20);      /* nvos.h NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_ctxshare_alloc), 12);           /* nvos.h NV_CTXSHARE_ALLOCATION_PARAMETERS */
  ck_assert_uint_eq(sizeof(bg_nv_debugger_alloc), 12);           /* class/cl83de.h */
  ck_assert_uint_eq(sizeof(bg_nv0000_build_version_v2), 1032);   /* ctrl/ctrl0000/ctrl0000system.h */
  ck_assert_uint_eq(sizeof(bg_nv0000_gpu_id_info_v2), 32);       /* ctrl/ctrl0000/ctrl0000gpu.h */
  ck_assert_uint_eq(sizeof(bg_nv0080_classlist), 16);            /* ctrl/ctrl0080/ctrl0080gpu.h */
  ck_assert_uint_eq(sizeof(bg_nv2080_gid_info), 268);            /* ctrl/ctrl2080/ctrl2080gpu.h */
  ck_assert_uint_eq(sizeof(bg_nv2080_gr_get_info), 32);          /* ctrl/ctrl2080/ctrl2080gr.h */
  ck_assert_uint_eq(sizeof(bg_nv2080_perf_boost), 8);            /* ctrl/ctrl2080/ctrl2080perf.h */
  ck_assert_uint_eq(sizeof(bg_nv2080_perf_current_pstate), 4);   /* ctrl/ctrl2080/ctrl2080perf.h */
  ck_assert_uint_eq(sizeof(bg_nv2080_gpu_name_string), 132);     /* ctrl/ctrl2080/ctrl2080gpu.h (580) */
  ck_assert_uint_eq(sizeof(bg_nv2080_fb_get_info_v2), 1028);     /* ctrl/ctrl2080/ctrl2080fb.h (580) */
}
END_TEST

/* Per family: NVOS46 (nvos.h) 56 -> 64, FERMI_VASPACE_A params (nvos.h) 48 -> 56, GPFIFO_SCHEDULE
 * (ctrla06fgpfifo.h) 2 -> 3 from 570 to 580; channel params (alloc/alloc_channel.h) 368 on 570/580, 376 on 610;
 * UVM_FREE_PARAMS (uvm_ioctl.h) 24 on 570/580, 16 on 610; FB_GET_INFO_V2 (ctrl2080fb.h) 460 on 570, 1028 on 580;
 * GET_NAME_STRING (ctrl2080gpu.h) 132 on 570/580, 68 in 595.45.04 (taken for 610). */
START_TEST(layout_per_family) {
  static const struct {
    enum bg_nv_family f;
    uint32_t os46, os46_status, os46_dma, vas, sched, chan, userd_mem, userd_off, engine, uvm_free, fb, name;
  } want[] = {
      {NV_FAMILY_570, 56, 48, 40, 48, 2, 368, 32, 64, 128, 24, 460, 132},
      {NV_FAMILY_580, 64, 56, 48, 56, 3, 368, 32, 64, 128, 24, 1028, 132},
      {NV_FAMILY_610, 64, 56, 48, 56, 3, 376, 36, 72, 136, 16, 1028, 68},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const bg_nv_abi_layout *l = bg_nv_abi_layout_of(want[i].f);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->family, want[i].f);
    ck_assert_msg(l->os46_size == want[i].os46 && l->os46_status_off == want[i].os46_status &&
                      l->os46_dma_offset_off == want[i].os46_dma,
                  "%d: NVOS46 %u/%u/%u", want[i].f, l->os46_size, l->os46_status_off, l->os46_dma_offset_off);
    ck_assert_msg(l->vaspace_alloc_size == want[i].vas, "%d: vaspace %u", want[i].f, l->vaspace_alloc_size);
    ck_assert_msg(l->gpfifo_schedule_size == want[i].sched, "%d: schedule %u", want[i].f, l->gpfifo_schedule_size);
    ck_assert_msg(l->channel_alloc_size == want[i].chan && l->channel_userd_mem_off == want[i].userd_mem &&
                      l->channel_userd_offset_off == want[i].userd_off && l->channel_engine_type_off == want[i].engine,
                  "%d: channel %u/%u/%u/%u", want[i].f, l->channel_alloc_size, l->channel_userd_mem_off,
                  l->channel_userd_offset_off, l->channel_engine_type_off);
    ck_assert_msg(l->uvm_free_size == want[i].uvm_free, "%d: UVM_FREE %u", want[i].f, l->uvm_free_size);
    ck_assert_msg(l->fb_info_v2_size == want[i].fb, "%d: FB_GET_INFO_V2 %u", want[i].f, l->fb_info_v2_size);
    ck_assert_msg(l->gpu_name_string_size == want[i].name, "%d: GET_NAME_STRING %u", want[i].f, l->gpu_name_string_size);
  }
  ck_assert_ptr_null(bg_nv_abi_layout_of((enum bg_nv_family)595));
}
END_TEST

/* The request numbers tinygrad's ops_nv.py sends (reference table: _IOWR('F', nr, size)). */
START_TEST(ioctl_numbers) {
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_ALLOC, sizeof(bg_nv_os21_alloc)), 0xC020462Bu);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_CONTROL, sizeof(bg_nv_os54_control)), 0xC020462Au);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_FREE, sizeof(bg_nv_os00_free)), 0xC0104629u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_MAP_MEMORY, sizeof(bg_nv_os33_with_fd)), 0xC038464Eu);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, bg_nv_abi_layout_of(NV_FAMILY_570)->os46_size), 0xC0384657u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, bg_nv_abi_layout_of(NV_FAMILY_580)->os46_size), 0xC0404657u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_RM_ALLOC_MEMORY, sizeof(bg_nv_os02_with_fd)), 0xC0384627u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_CARD_INFO, sizeof(bg_nv_card_info) * NV_CARD_INFO_MAX), 0xD20046C8u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_REGISTER_FD, sizeof(bg_nv_register_fd)), 0xC00446C9u);
  ck_assert_uint_eq(NV_IOWR(NV_ESC_CHECK_VERSION_STR, sizeof(bg_nv_rm_api_version)), 0xC04846D2u);
  ck_assert_uint_eq(NV_UVM_INITIALIZE, 0x30000001u);
  ck_assert_uint_eq(NV_UVM_REGISTER_GPU, 37);
  ck_assert_uint_eq(NV_UVM_CREATE_EXTERNAL_RANGE, 73);
  ck_assert_uint_eq(NV_UVM_MAP_EXTERNAL_ALLOCATION, 33);
}
END_TEST

/* ---- driver versions ---- */
START_TEST(version_parse) {
  bg_nv_driver_version v;
  OK(bg_nv_version_parse("570.124.04", &v));
  ck_assert_int_eq(v.family, NV_FAMILY_570);
  ck_assert_uint_eq(v.major, 570);
  ck_assert_uint_eq(v.minor, 124);
  ck_assert_uint_eq(v.patch, 4);
  ck_assert_str_eq(v.text, "570.124.04");
  OK(bg_nv_version_parse("580.65.06\n", &v));
  ck_assert_int_eq(v.family, NV_FAMILY_580);
  ck_assert_uint_eq(v.minor, 65);
  ck_assert_uint_eq(v.patch, 6);
  OK(bg_nv_version_parse("610.43.03", &v));
  ck_assert_int_eq(v.family, NV_FAMILY_610);
  OK(bg_nv_version_parse("570.144", &v));
  ck_assert_int_eq(v.family, NV_FAMILY_570);
  ck_assert_uint_eq(v.minor, 144);
  ck_assert_uint_eq(v.patch, 0);

  FAILS(bg_nv_version_parse("999.1", &v), BG_ENOTSUP, "999.1");
  ck_assert_msg(strstr(bg_last_error(), "570.x, 580.x, 610.x"), "known families missing: %s", bg_last_error());
  FAILS(bg_nv_version_parse("595.45.04", &v), BG_ENOTSUP, "595.45.04"); /* UVM_FREE already changed, channel not */
  FAILS(bg_nv_version_parse("580", &v), BG_EFORMAT, "'580'");
  FAILS(bg_nv_version_parse("580.65.06-beta", &v), BG_EFORMAT, "MAJOR.MINOR");
  FAILS(bg_nv_version_parse("", &v), BG_EFORMAT, "MAJOR.MINOR");
}
END_TEST

START_TEST(version_proc) {
  bg_nv_driver_version v;
  /* the open module's text (kernel-open/nvidia/nv-procfs.c) and the proprietary module's */
  OK(bg_nv_version_parse_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
                           "(dvs-builder@U16-I3-B03-4-3)  Tue Jul 15 2025\nGCC version:  gcc version 12.2.0\n",
                           &v));
  ck_assert_int_eq(v.family, NV_FAMILY_580);
  ck_assert_str_eq(v.text, "580.65.06");
  OK(bg_nv_version_parse_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.04  Fri Feb 21 2025\n", &v));
  ck_assert_int_eq(v.family, NV_FAMILY_570);
  FAILS(bg_nv_version_parse_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  999.1  Mon Jan 1\n", &v), BG_ENOTSUP,
        "999.1");
  FAILS(bg_nv_version_parse_proc("GCC version: 12.2\n", &v), BG_EFORMAT, "NVRM version:");
  FAILS(bg_nv_version_parse_proc("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n", &v), BG_EFORMAT, "NVRM version");

  char path[] = "/tmp/bg-nv-version-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char text[] = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  610.43.03  Release Build\n";
  ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  OK(bg_nv_version_read_proc(path, &v));
  ck_assert_int_eq(v.family, NV_FAMILY_610);
  unlink(path);
  FAILS(bg_nv_version_read_proc(path, &v), BG_ENODEV, path);
}
END_TEST

/* ---- classes: subsets of the chips' lists in open-gpu-kernel-modules src/nvidia/generated/g_gpu_class_list.c
 * (595.45.04), older classes first so that list order and preference differ. Other classes: 0x90f1 FERMI_VASPACE_A,
 * 0xa06c KEPLER_CHANNEL_GROUP_A, 0x9067 FERMI_CONTEXT_SHARE_A, 0xc36f/0xc361 VOLTA_CHANNEL_GPFIFO_A/USERMODE_A,
 * 0xc46f/0xc461 TURING_CHANNEL_GPFIFO_A/USERMODE_A, 0xc561 AMPERE_USERMODE_A. */
static const uint32_t ga100[] = {0x90f1, 0xa06c, 0x9067, 0xc36f, 0xc361, 0xc46f, 0xc461, 0xc561, 0xc56f, 0xc6b5, 0xc6c0};
static const uint32_t ga102[] = {0x90f1, 0xa06c, 0x9067, 0xc36f, 0xc361, 0xc46f, 0xc461, 0xc561, 0xc56f, 0xc7b5, 0xc7c0};
static const uint32_t ad102[] = {0x90f1, 0xa06c, 0x9067, 0xc36f, 0xc361, 0xc46f, 0xc461, 0xc561, 0xc56f, 0xc7b5, 0xc9c0};
static const uint32_t gh100[] = {0x90f1, 0xa06c, 0x9067, 0xc36f, 0xc361, 0xc46f, 0xc461, 0xc561,
                                 0xc56f, 0xc661, 0xc86f, 0xc8b5, 0xcbc0};
static const uint32_t gb202[] = {0x90f1, 0xa06c, 0x9067, 0xc36f, 0xc361, 0xc46f, 0xc461, 0xc561, 0xc56f,
                                 0xc661, 0xc761, 0xc86f, 0xc96f, 0xca6f, 0xcab5, 0xcec0};
static const uint32_t gb100[] = {0x90f1, 0xa06c, 0x9067, 0xc46f, 0xc461, 0xc561, 0xc56f, 0xc661, 0xc86f, 0xc96f,
                                 0xc9b5, 0xcdc0};

#define SELECT(list, comp, cp, fifo, um, qmd, gen)                                                          \
  do {                                                                                                      \
    bg_nv_class_choice c_;                                                                                     \
    OK(bg_nv_classes_select((list), sizeof(list) / sizeof((list)[0]), &c_));                                   \
    ck_assert_msg(c_.compute == (comp) && c_.copy == (cp) && c_.gpfifo == (fifo) && c_.usermode == (um),    \
                  #list ": compute 0x%x copy 0x%x gpfifo 0x%x usermode 0x%x", c_.compute, c_.copy, c_.gpfifo, \
                  c_.usermode);                                                                             \
    ck_assert_int_eq(c_.qmd_version, (qmd));                                                                \
    ck_assert_str_eq(c_.generation, (gen));                                                                 \
  } while (0)

START_TEST(class_select) {
  SELECT(gh100, HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A, HOPPER_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A, 4, "Hopper");
  SELECT(ad102, ADA_COMPUTE_A, AMPERE_DMA_COPY_B, AMPERE_CHANNEL_GPFIFO_A, TURING_USERMODE_A, 3, "Ada");
  SELECT(ga102, AMPERE_COMPUTE_B, AMPERE_DMA_COPY_B, AMPERE_CHANNEL_GPFIFO_A, TURING_USERMODE_A, 3, "Ampere");
  SELECT(ga100, AMPERE_COMPUTE_A, AMPERE_DMA_COPY_A, AMPERE_CHANNEL_GPFIFO_A, TURING_USERMODE_A, 3, "Ampere");
  SELECT(gb202, BLACKWELL_COMPUTE_B, BLACKWELL_DMA_COPY_B, BLACKWELL_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A, 5,
         "Blackwell");
  SELECT(gb100, BLACKWELL_COMPUTE_A, BLACKWELL_DMA_COPY_A, BLACKWELL_CHANNEL_GPFIFO_A, HOPPER_USERMODE_A, 5,
         "Blackwell");

  bg_nv_class_choice c;
  /* a Turing-like list: no compute class baregpu knows */
  static const uint32_t turing[] = {0xc46f, 0xc461, 0xc5b5, 0xc5c0};
  FAILS(bg_nv_classes_select(turing, 4, &c), BG_ENOTSUP, "no compute class");
  ck_assert_msg(strstr(bg_last_error(), "0xcbc0") && strstr(bg_last_error(), "0xc5c0"), "%s", bg_last_error());
  static const uint32_t no_copy[] = {0xc56f, 0xc461, 0xcbc0};
  FAILS(bg_nv_classes_select(no_copy, 3, &c), BG_ENOTSUP, "no copy class");
  FAILS(bg_nv_classes_select(NULL, 0, &c), BG_ENOTSUP, "no classes");

  ck_assert_str_eq(bg_nv_class_name(0xcbc0), "HOPPER_COMPUTE_A");
  ck_assert_str_eq(bg_nv_class_name(0xc8b5), "HOPPER_DMA_COPY_A");
  ck_assert_ptr_null(bg_nv_class_name(0x1234));
}
END_TEST

START_TEST(qmd_and_sm) {
  static const struct {
    uint32_t cls;
    int qmd;
  } q[] = {{0xc6c0, 3}, {0xc7c0, 3}, {0xc9c0, 3}, {0xcbc0, 4}, {0xcdc0, 5}, {0xcec0, 5}};
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) ck_assert_int_eq(bg_nv_qmd_version(q[i].cls), q[i].qmd);
  FAILS(bg_nv_qmd_version(0xc56f), BG_ENOTSUP, "0xc56f");

  static const struct {
    uint32_t v;
    unsigned sm;
    const char *name;
  } s[] = {{0x800, 80, "sm_80"}, {0x806, 86, "sm_86"},   {0x809, 89, "sm_89"},  {0x900, 90, "sm_90"},
           {0xa00, 100, "sm_100"}, {0xa04, 120, "sm_120"}, {0xc00, 120, "sm_120"}, {0x705, 75, "sm_75"}};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    unsigned sm = 0;
    char buf[16];
    OK(bg_nv_sm_arch(s[i].v, &sm, buf, sizeof buf));
    ck_assert_msg(sm == s[i].sm, "0x%x -> %u, want %u", s[i].v, sm, s[i].sm);
    ck_assert_str_eq(buf, s[i].name);
  }
  FAILS(bg_nv_sm_arch(0, NULL, NULL, 0), BG_ENOTSUP, "0x0");
  FAILS(bg_nv_sm_arch(0x9ab, NULL, NULL, 0), BG_ENOTSUP, "0x9ab");
}
END_TEST

/* ---- status names (nvstatuscodes.h) ---- */
START_TEST(status_names) {
  ck_assert_str_eq(bg_nv_status_name(0x0), "NV_OK");
  ck_assert_str_eq(bg_nv_status_name(0x22), "NV_ERR_INVALID_CLASS");
  ck_assert_str_eq(bg_nv_status_name(0x1f), "NV_ERR_INVALID_ARGUMENT");
  ck_assert_str_eq(bg_nv_status_name(0x1a), "NV_ERR_INSUFFICIENT_RESOURCES");
  ck_assert_str_eq(bg_nv_status_name(0x33), "NV_ERR_INVALID_OBJECT_HANDLE");
  ck_assert_str_eq(bg_nv_status_name(0x56), "NV_ERR_NOT_SUPPORTED");
  ck_assert_str_eq(bg_nv_status_name(0x68), "NV_ERR_UVM_ADDRESS_IN_USE");
  ck_assert_str_eq(bg_nv_status_name(0xffff), "NV_ERR_GENERIC");
  ck_assert_str_eq(bg_nv_status_name(0x10005), "NV_WARN_MORE_PROCESSING_REQUIRED");
  ck_assert_ptr_null(bg_nv_status_name(0xdeadbeef));
  ck_assert_str_eq(bg_nv_status_str(0xdeadbeef), "unknown NV_STATUS");
}
END_TEST

/* ---- the wrappers over a fake kernel ---- */
typedef struct {
  int calls;
  unsigned long last_request;
  int last_fd;
  uint32_t fail_class;   /* RM_ALLOC of this class answers fail_status */
  uint32_t fail_status;
  uint32_t fail_cmd;     /* RM_CONTROL of this command fails the ioctl with errno fail_errno */
  int fail_errno;
  bg_nv_os21_alloc last_alloc;
  bg_nv_os54_control last_control;
  bg_nv_os00_free last_free;
  bg_nv_os33_with_fd last_map;
  bg_nv_os02_with_fd last_alloc_memory;
  uint8_t last_os46[64];
  uint32_t uvm_status;
  const char *version;
} fake_rm;

static int fake_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  fake_rm *f = ctx;
  f->calls++;
  f->last_request = request, f->last_fd = fd;
  if ((request >> 8 & 0xff) != 'F') { /* a UVM ioctl: rmStatus is the 4 bytes before the end for the ones tested */
    if (request == NV_UVM_REGISTER_GPU) ((bg_nv_uvm_register_gpu *)arg)->rmStatus = f->uvm_status;
    return 0;
  }
  unsigned nr = request & 0xff, size = (unsigned)(request >> 16) & 0x3fff;
  switch (nr) {
  case NV_ESC_RM_ALLOC: {
    ck_assert_uint_eq(size, sizeof(bg_nv_os21_alloc));
    bg_nv_os21_alloc *a = arg;
    f->last_alloc = *a;
    if (a->hClass == NV01_ROOT_CLIENT) a->hObjectNew = 0xc1d00042u; /* RM picks the client handle */
    a->status = a->hClass == f->fail_class ? f->fail_status : 0;
    return 0;
  }
  case NV_ESC_RM_CONTROL: {
    ck_assert_uint_eq(size, sizeof(bg_nv_os54_control));
    bg_nv_os54_control *c = arg;
    f->last_control = *c;
    if (c->cmd == f->fail_cmd) {
      errno = f->fail_errno;
      return -1;
    }
    if (c->cmd == NV2080_CTRL_CMD_GR_GET_INFO) {
      bg_nv2080_gr_get_info *p = (bg_nv2080_gr_get_info *)(uintptr_t)c->params;
      ((bg_nv2080_gr_info *)(uintptr_t)p->grInfoList)[0].data = 0x900;
    }
    c->status = 0;
    return 0;
  }
  case NV_ESC_RM_FREE:
    ck_assert_uint_eq(size, sizeof(bg_nv_os00_free));
    f->last_free = *(bg_nv_os00_free *)arg;
    ((bg_nv_os00_free *)arg)->status = 0;
    return 0;
  case NV_ESC_RM_MAP_MEMORY:
    ck_assert_uint_eq(size, sizeof(bg_nv_os33_with_fd));
    f->last_map = *(bg_nv_os33_with_fd *)arg;
    ((bg_nv_os33_with_fd *)arg)->params.pLinearAddress = 0x7f0000001000u;
    ((bg_nv_os33_with_fd *)arg)->params.status = 0;
    return 0;
  case NV_ESC_RM_ALLOC_MEMORY:
    ck_assert_uint_eq(size, sizeof(bg_nv_os02_with_fd));
    f->last_alloc_memory = *(bg_nv_os02_with_fd *)arg;
    ((bg_nv_os02_with_fd *)arg)->params.status = 0;
    return 0;
  case NV_ESC_RM_MAP_MEMORY_DMA:
    ck_assert_uint_le(size, sizeof f->last_os46);
    memcpy(f->last_os46, arg, size);
    return 0; /* status stays 0; dmaOffset stays what was asked (DMA_OFFSET_FIXED) */
  case NV_ESC_CHECK_VERSION_STR: {
    ck_assert_uint_eq(size, sizeof(bg_nv_rm_api_version));
    bg_nv_rm_api_version *v = arg;
    ck_assert_uint_eq(v->cmd, NV_RM_API_VERSION_CMD_QUERY);
    v->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
    snprintf(v->versionString, sizeof v->versionString, "%s", f->version);
    return 0;
  }
  default:
    errno = ENOTTY;
    return -1;
  }
}

/* The fake reads these through its ctx pointer: set them through a call so the reads are visible. */
static void fail_with(fake_rm *f, uint32_t status) { f->fail_status = status; }
static void uvm_answers(fake_rm *f, uint32_t status) { f->uvm_status = status; }

static bg_nv_rm rm_with(fake_rm *f) {
  bg_nv_ioctl_ops ops = {fake_ioctl, f};
  bg_nv_rm rm;
  bg_nv_rm_init(&rm, 7, &ops);
  return rm;
}

START_TEST(rm_handles) {
  fake_rm f = {0};
  bg_nv_rm rm = rm_with(&f);
  uint32_t h;
  FAILS(bg_nv_rm_alloc(&rm, 0, NV01_DEVICE_0, NULL, 0, &h), BG_EINVAL, "no root client");
  OK(bg_nv_rm_alloc_root(&rm));
  ck_assert_uint_eq(rm.root, 0xc1d00042u); /* the handle RM returned, not one baregpu chose */
  ck_assert_uint_eq(f.last_alloc.hObjectNew, 0);
  ck_assert_uint_eq(f.last_request, 0xC020462Bu);
  ck_assert_int_eq(f.last_fd, 7);

  bg_nv_device_alloc dev = {.hClientShare = rm.root};
  uint32_t hdev, hsub, hvm;
  OK(bg_nv_rm_alloc(&rm, rm.root, NV01_DEVICE_0, &dev, sizeof dev, &hdev));
  ck_assert_uint_eq(f.last_alloc.hRoot, rm.root);
  ck_assert_uint_eq(f.last_alloc.hObjectParent, rm.root);
  ck_assert_uint_eq(f.last_alloc.hObjectNew, hdev);
  ck_assert_uint_eq(f.last_alloc.hClass, NV01_DEVICE_0);
  ck_assert_uint_eq(f.last_alloc.paramsSize, sizeof dev); /* never the size-0 form */
  ck_assert_uint_eq(f.last_alloc.pAllocParms, (uint64_t)(uintptr_t)&dev);
  bg_nv_subdevice_alloc sub = {0};
  OK(bg_nv_rm_alloc(&rm, hdev, NV20_SUBDEVICE_0, &sub, sizeof sub, &hsub));
  OK(bg_nv_rm_alloc_memory(&rm, 9, hdev, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, 0x40001010u, 0x1000000000u, 0x2000, &hvm));
  ck_assert_int_eq(f.last_fd, 9); /* on the per-GPU fd */
  ck_assert_uint_eq(f.last_alloc_memory.params.hObjectNew, hvm);
  ck_assert_uint_eq(f.last_alloc_memory.params.limit, 0x1fff);
  ck_assert_uint_eq(f.last_alloc_memory.params.pMemory, 0x1000000000u);
  ck_assert_int_eq(f.last_alloc_memory.fd, -1);
  uint32_t hs[] = {hdev, hsub, hvm};
  for (int i = 0; i < 3; i++) {
    ck_assert_msg(hs[i] > NV_RM_HANDLE_BASE && hs[i] < NV_RM_HANDLE_BASE + NV_RM_HANDLE_COUNT, "handle 0x%x", hs[i]);
    for (int j = 0; j < i; j++) ck_assert_msg(hs[i] != hs[j], "handle 0x%x given twice", hs[i]);
  }

  /* params and size go together */
  FAILS(bg_nv_rm_alloc(&rm, hdev, FERMI_VASPACE_A, &dev, 0, &h), BG_EINVAL, "paramsSize 0");
  FAILS(bg_nv_rm_control(&rm, hsub, NV2080_CTRL_CMD_PERF_BOOST, NULL, 8), BG_EINVAL, "NV2080_CTRL_CMD_PERF_BOOST");

  OK(bg_nv_rm_free(&rm, hdev, hsub));
  ck_assert_uint_eq(f.last_free.hRoot, rm.root);
  ck_assert_uint_eq(f.last_free.hObjectParent, hdev);
  ck_assert_uint_eq(f.last_free.hObjectOld, hsub);
  OK(bg_nv_rm_free(&rm, 0, rm.root));
  ck_assert_uint_eq(rm.root, 0);

  rm.root = 0xc1d00042u;
  rm.next_handle = NV_RM_HANDLE_COUNT - 2;
  OK(bg_nv_rm_new_handle(&rm, &h));
  ck_assert_uint_eq(h, NV_RM_HANDLE_BASE + NV_RM_HANDLE_COUNT - 1);
  FAILS(bg_nv_rm_new_handle(&rm, &h), BG_ENOMEM, "object handles");
}
END_TEST

START_TEST(rm_errors) {
  fake_rm f = {.fail_class = HOPPER_COMPUTE_A, .fail_status = 0x22, .fail_cmd = NV2080_CTRL_CMD_GR_GET_INFO,
               .fail_errno = EPERM};
  bg_nv_rm rm = rm_with(&f);
  OK(bg_nv_rm_alloc_root(&rm));
  uint32_t h, hch = 0xa0000003u;
  FAILS(bg_nv_rm_alloc(&rm, hch, HOPPER_COMPUTE_A, NULL, 0, &h), BG_ENOTSUP,
        "RM_ALLOC of class 0xcbc0 (HOPPER_COMPUTE_A) under 0xa0000003 failed: NV_ERR_INVALID_CLASS (0x22)");
  fail_with(&f, 0x1f);
  FAILS(bg_nv_rm_alloc(&rm, hch, HOPPER_COMPUTE_A, NULL, 0, &h), BG_EIO, "NV_ERR_INVALID_ARGUMENT (0x1f)");
  fail_with(&f, 0x1b);
  FAILS(bg_nv_rm_alloc(&rm, hch, HOPPER_COMPUTE_A, NULL, 0, &h), BG_EPERM, "NV_ERR_INSUFFICIENT_PERMISSIONS");
  fail_with(&f, 0x12345);
  FAILS(bg_nv_rm_alloc(&rm, hch, HOPPER_COMPUTE_A, NULL, 0, &h), BG_EIO, "unknown NV_STATUS (0x12345)");

  bg_nv2080_gr_info info[1] = {{NV2080_GR_INFO_INDEX_SM_VERSION, 0}};
  bg_nv2080_gr_get_info gi = {.grInfoListSize = 1, .grInfoList = (uint64_t)(uintptr_t)info};
  FAILS(bg_nv_rm_control(&rm, 0xa0000002u, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi), BG_EPERM,
        "RM_CONTROL 0x20801201 (NV2080_CTRL_CMD_GR_GET_INFO) on 0xa0000002 failed: ioctl 0xc020462a on fd 7: ");
  ck_assert_msg(strstr(bg_last_error(), strerror(EPERM)), "%s", bg_last_error());
  f.fail_cmd = 0;
  OK(bg_nv_rm_control(&rm, 0xa0000002u, NV2080_CTRL_CMD_GR_GET_INFO, &gi, sizeof gi));
  ck_assert_uint_eq(info[0].data, 0x900);
  ck_assert_uint_eq(f.last_control.hClient, rm.root);
  ck_assert_uint_eq(f.last_control.hObject, 0xa0000002u);
  ck_assert_uint_eq(f.last_control.paramsSize, sizeof gi);

  /* UVM: raw request numbers, rmStatus read at the offset given */
  bg_nv_uvm_register_gpu reg = {.rmCtrlFd = -1};
  bg_nv_ioctl_ops ops = {fake_ioctl, &f};
  uvm_answers(&f, 0x56);
  FAILS(bg_nv_uvm_ioctl(&ops, 11, NV_UVM_REGISTER_GPU, "UVM_REGISTER_GPU", &reg, sizeof reg,
                     offsetof(bg_nv_uvm_register_gpu, rmStatus)),
        BG_ENOTSUP, "UVM_REGISTER_GPU (UVM ioctl 37) failed: NV_ERR_NOT_SUPPORTED (0x56)");
  ck_assert_uint_eq(f.last_request, 37);
  ck_assert_int_eq(f.last_fd, 11);
  uvm_answers(&f, 0);
  OK(bg_nv_uvm_ioctl(&ops, 11, NV_UVM_REGISTER_GPU, "UVM_REGISTER_GPU", &reg, sizeof reg,
                  offsetof(bg_nv_uvm_register_gpu, rmStatus)));
  FAILS(bg_nv_uvm_ioctl(&ops, 11, NV_UVM_REGISTER_GPU, "UVM_REGISTER_GPU", &reg, sizeof reg, sizeof reg), BG_EINVAL,
        "outside");
}
END_TEST

START_TEST(rm_map_and_version) {
  fake_rm f = {.version = "580.65.06"};
  bg_nv_rm rm = rm_with(&f);
  OK(bg_nv_rm_alloc_root(&rm));
  uint64_t lin = 0;
  OK(bg_nv_rm_map_memory(&rm, 12, 0xa0000001u, 0xa0000005u, 0, 0x200000, 0x1000000u, &lin));
  ck_assert_uint_eq(lin, 0x7f0000001000u);
  ck_assert_int_eq(f.last_map.fd, 12);
  ck_assert_uint_eq(f.last_map.params.hMemory, 0xa0000005u);
  ck_assert_uint_eq(f.last_map.params.length, 0x200000);
  ck_assert_uint_eq(f.last_map.params.flags, 0x1000000u);

  /* NVOS46: the request size and the dmaOffset/status positions follow the family */
  uint64_t va = 0x2000000000u;
  OK(bg_nv_rm_map_memory_dma(&rm, bg_nv_abi_layout_of(NV_FAMILY_570), 1, 2, 3, 0, 0x1000, 0x8110, &va));
  ck_assert_uint_eq(f.last_request, 0xC0384657u);
  bg_nv_os46_map_dma_570 p570;
  memcpy(&p570, f.last_os46, sizeof p570);
  ck_assert_uint_eq(p570.dmaOffset, 0x2000000000u);
  ck_assert_uint_eq(p570.flags, 0x8110);
  ck_assert_uint_eq(p570.hMemory, 3);
  OK(bg_nv_rm_map_memory_dma(&rm, bg_nv_abi_layout_of(NV_FAMILY_580), 1, 2, 3, 0, 0x1000, 0x8110, &va));
  ck_assert_uint_eq(f.last_request, 0xC0404657u);
  bg_nv_os46_map_dma_580 p580;
  memcpy(&p580, f.last_os46, sizeof p580);
  ck_assert_uint_eq(p580.dmaOffset, 0x2000000000u);
  ck_assert_uint_eq(p580.kindOverride, 0);
  ck_assert_uint_eq(va, 0x2000000000u);

  bg_nv_driver_version v;
  OK(bg_nv_rm_query_version(&rm, &v));
  ck_assert_int_eq(v.family, NV_FAMILY_580);
  ck_assert_uint_eq(f.last_request, 0xC04846D2u);
  f.version = "999.1";
  FAILS(bg_nv_rm_query_version(&rm, &v), BG_ENOTSUP, "999.1");
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-abi");
  TCase *tc = tcase_create("abi");
  tcase_add_test(tc, struct_sizes);
  tcase_add_test(tc, layout_per_family);
  tcase_add_test(tc, ioctl_numbers);
  tcase_add_test(tc, version_parse);
  tcase_add_test(tc, version_proc);
  tcase_add_test(tc, class_select);
  tcase_add_test(tc, qmd_and_sm);
  tcase_add_test(tc, status_names);
  tcase_add_test(tc, rm_handles);
  tcase_add_test(tc, rm_errors);
  tcase_add_test(tc, rm_map_and_version);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
