/* tests/unit/nv/test_nv_dev.c: the NVK open path (nv/nv_dev.c), memory (nv_mem.c) and GPFIFO submission
 * (nv_submit.c) against a fake system-call table that plays the nvidia kernel module: it keeps RM's object table
 * (parents must exist; an object is freed only after its children), UVM's external ranges, the fds and mappings, and
 * answers from a script (driver version, refused classes and controls, the k-th RM_ALLOC failing). The fake GPU
 * advances GPGet on a doorbell, or not at all. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../check_helpers.h"
#include "bg_config.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_hcq.h"
#include "nv/nv_query.h"
#include "nv/nv_status.h"

#define MAXOBJ 512
#define ROOT_HANDLE 0xc1d00042u

typedef struct {
  uint32_t h, parent, cls;
  bool live;
} fobj;

static struct {
  /* script */
  const char *version;        /* GET_BUILD_VERSION_V2 answer; NULL: refused */
  const char *proc;           /* /proc/driver/nvidia/version; NULL: unreadable */
  const char *check_version;  /* NV_ESC_CHECK_VERSION_STR */
  uint32_t refuse_class, refuse_class_status;
  uint32_t refuse_ctrl;
  int fail_alloc_at;          /* the k-th RM_ALLOC (1-based) fails with NV_ERR_INSUFFICIENT_PERMISSIONS */
  bool no_ctl;
  bool gpu_runs;              /* the doorbell moves GPGet to GPPut */
  /* state */
  fobj o[MAXOBJ];
  int nobj, nalloc;
  int next_fd, open_fds;
  int maps, ranges;
  /* records */
  uint32_t vaspace_size, channel_size, sched_size, mem_attr_huge, mem_align_2m;
  int order_violation;
  char violation[256];
  int map_dma_calls, alloc_memory_calls;
  unsigned doorbells;
  int nchan;
  struct {
    uint32_t h, token;
    uint64_t userd;
  } chan[2];
  uint32_t classes_order[64];
  uint32_t parents_order[64];
  int norder;
} F;

static fobj *find(uint32_t h) {
  for (int i = 0; i < F.nobj; i++)
    if (F.o[i].live && F.o[i].h == h) return &F.o[i];
  return NULL;
}

static int live_objects(void) {
  int n = 0;
  for (int i = 0; i < F.nobj; i++) n += F.o[i].live;
  return n;
}

static int f_open(void *ctx, const char *path, int flags) {
  (void)ctx, (void)flags;
  if (F.no_ctl && strcmp(path, "/dev/nvidiactl") == 0) return errno = ENOENT, -1;
  F.open_fds++;
  return F.next_fd++;
}

static int f_close(void *ctx, int fd) {
  (void)ctx, (void)fd;
  F.open_fds--;
  return 0;
}

static uint32_t add_obj(uint32_t parent, uint32_t h, uint32_t cls) {
  if (parent && !find(parent)) {
    snprintf(F.violation, sizeof F.violation, "alloc of 0x%x under missing parent 0x%x", cls, parent);
    F.order_violation++;
    return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  ck_assert_int_lt(F.nobj, MAXOBJ);
  F.o[F.nobj++] = (fobj){h, parent, cls, true};
  if (F.norder < 64) F.classes_order[F.norder] = cls, F.parents_order[F.norder++] = parent ? find(parent)->cls : 0;
  return NV_OK;
}

static uint32_t rm_alloc(bg_nv_os21_alloc *a) {
  F.nalloc++;
  if (F.fail_alloc_at && F.nalloc == F.fail_alloc_at) return NV_ERR_INSUFFICIENT_PERMISSIONS;
  if (a->hClass == F.refuse_class) return F.refuse_class_status;
  if ((a->pAllocParms == 0) != (a->paramsSize == 0)) return NV_ERR_INVALID_ARGUMENT;
  if (a->hClass == NV01_ROOT_CLIENT) {
    a->hObjectNew = ROOT_HANDLE;
    return add_obj(0, ROOT_HANDLE, NV01_ROOT_CLIENT);
  }
  if (a->hRoot != ROOT_HANDLE || a->hObjectNew < NV_RM_HANDLE_BASE || find(a->hObjectNew)) return NV_ERR_INVALID_ARGUMENT;
  const uint8_t *p = (const uint8_t *)(uintptr_t)a->pAllocParms;
  if (a->hClass == FERMI_VASPACE_A) F.vaspace_size = a->paramsSize;
  if (a->hClass == NV1_MEMORY_USER) {
    const bg_nv_memory_alloc *m = (const void *)p;
    if (a->paramsSize != sizeof *m) return NV_ERR_INVALID_ARGUMENT;
    if (((m->attr >> 23) & 3) == NVOS32_ATTR_PAGE_SIZE_HUGE) F.mem_attr_huge++;
    if (m->alignment == (2u << 20)) F.mem_align_2m++;
  }
  if (a->hClass == HOPPER_CHANNEL_GPFIFO_A || a->hClass == AMPERE_CHANNEL_GPFIFO_A) {
    F.channel_size = a->paramsSize;
    uint64_t off;
    uint32_t entries;
    memcpy(&off, p + 8, 8);
    memcpy(&entries, p + 16, 4);
    ck_assert_int_lt(F.nchan, 2);
    F.chan[F.nchan].h = a->hObjectNew;
    F.chan[F.nchan++].userd = off + (uint64_t)entries * 8;
  }
  return add_obj(a->hObjectParent, a->hObjectNew, a->hClass);
}

static const uint32_t hopper_classes[] = {0x41, 0x80, 0x2080, AMPERE_CHANNEL_GPFIFO_A, HOPPER_CHANNEL_GPFIFO_A,
                                          HOPPER_USERMODE_A, HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A,
                                          KEPLER_CHANNEL_GROUP_A, FERMI_CONTEXT_SHARE_A, FERMI_VASPACE_A};

static uint32_t rm_control(bg_nv_os54_control *c) {
  void *p = (void *)(uintptr_t)c->params;
  if (c->cmd == F.refuse_ctrl) return NV_ERR_NOT_SUPPORTED;
  if (!find(c->hObject)) return NV_ERR_INVALID_OBJECT_HANDLE;
  switch (c->cmd) {
  case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2:
    if (!F.version) return NV_ERR_NOT_SUPPORTED;
    snprintf(((bg_nv0000_build_version_v2 *)p)->driverVersionBuffer, 256, "%s", F.version);
    return NV_OK;
  case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: ((bg_nv0000_gpu_id_info_v2 *)p)->deviceInstance = 0; return NV_OK;
  case NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
    bg_nv0080_classlist *cl = p;
    uint32_t n = sizeof hopper_classes / sizeof hopper_classes[0];
    if (cl->classList) memcpy((void *)(uintptr_t)cl->classList, hopper_classes, sizeof hopper_classes);
    cl->numClasses = n;
    return NV_OK;
  }
  case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
    bg_nv2080_gid_info *gi = p;
    for (int i = 0; i < 16; i++) gi->data[i] = (uint8_t)(0xa0 + i);
    gi->length = 16;
    return NV_OK;
  }
  case NV2080_CTRL_CMD_GR_GET_INFO: {
    bg_nv2080_gr_get_info *gr = p;
    bg_nv2080_gr_info *l = (void *)(uintptr_t)gr->grInfoList;
    for (uint32_t i = 0; i < gr->grInfoListSize; i++)
      l[i].data = l[i].index == NV2080_GR_INFO_INDEX_SM_VERSION ? 0x900 : l[i].index == NV2080_GR_INFO_INDEX_MAX_WARPS_PER_SM ? 64 : 2;
    return NV_OK;
  }
  case NV2080_CTRL_CMD_PERF_BOOST: return NV_OK;
  case NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2: {
    bg_nv2080_thermal_execute_v2 *t = p;
    if (c->paramsSize != sizeof *t || t->clientInstructionSizeOf != 44 || t->instructionListSize != 1 ||
        t->instructionList[0].opcode != NV2080_THERMAL_SYSTEM_GET_STATUS_SENSOR_READING_OPCODE)
      return NV_ERR_INVALID_ARGUMENT;
    t->instructionList[0].executed = 1;
    t->instructionList[0].operands[1] = 47;
    t->successfulInstructions = 1;
    return NV_OK;
  }
  case NV2080_CTRL_CMD_FB_GET_INFO_V2: {
    bg_nv2080_fb_get_info_v2 *fb = p;
    if (c->paramsSize != 1028) return NV_ERR_INVALID_ARGUMENT; /* 580 layout */
    for (uint32_t i = 0; i < fb->fbInfoListSize; i++)
      fb->fbInfoList[i].data = fb->fbInfoList[i].index == NV2080_FB_INFO_INDEX_TOTAL_RAM_SIZE ? 1u << 20 : 1u << 19;
    return NV_OK;
  }
  case NV83DE_CTRL_CMD_DEBUG_READ_ALL_SM_ERROR_STATES: {
    bg_nv83de_read_all_sm_error_states *st = p;
    if (c->paramsSize != sizeof *st || st->hTargetChannel != F.chan[0].h) return NV_ERR_INVALID_ARGUMENT;
    st->smErrorStateArray[3].hwwGlobalEsr = 0x10;
    st->smErrorStateArray[3].hwwWarpEsr = 0x2f;
    st->smErrorStateArray[3].hwwWarpEsrPc64 = 0x7f00001230;
    st->mmuFaultValid = 1;
    return NV_OK;
  }
  case NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO: {
    bg_nv83de_read_mmu_fault_info *mf = p;
    mf->mmuFaultInfoList[0] = (bg_nv83de_mmu_fault_entry){0xdead0000, 2, 1};
    mf->count = 1;
    return NV_OK;
  }
  case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: F.sched_size = c->paramsSize; return NV_OK;
  case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN:
    for (int i = 0; i < F.nchan; i++)
      if (F.chan[i].h == c->hObject) ((bg_nvc36f_work_submit_token *)p)->workSubmitToken = F.chan[i].token = 30u + (uint32_t)i;
    return NV_OK;
  default: return NV_ERR_NOT_SUPPORTED;
  }
}

static uint32_t rm_free(bg_nv_os00_free *f) {
  fobj *o = find(f->hObjectOld);
  if (!o) return NV_ERR_INVALID_OBJECT_HANDLE;
  for (int i = 0; i < F.nobj; i++)
    if (F.o[i].live && F.o[i].parent == o->h) {
      snprintf(F.violation, sizeof F.violation, "free of 0x%x (class 0x%x) before its child 0x%x (class 0x%x)", o->h, o->cls,
               F.o[i].h, F.o[i].cls);
      F.order_violation++;
    }
  o->live = false;
  return NV_OK;
}

static int f_ioctl(void *ctx, int fd, unsigned long req, void *arg) {
  (void)ctx, (void)fd;
  uint32_t nr = req & 0xff, size = (uint32_t)(req >> 16) & 0x3fff;
  if ((req & 0xc0000000u) == 0xc0000000u && ((req >> 8) & 0xff) == 'F') {
    switch (nr) {
    case NV_ESC_RM_ALLOC: ((bg_nv_os21_alloc *)arg)->status = rm_alloc(arg); return 0;
    case NV_ESC_RM_CONTROL: ((bg_nv_os54_control *)arg)->status = rm_control(arg); return 0;
    case NV_ESC_RM_FREE: ((bg_nv_os00_free *)arg)->status = rm_free(arg); return 0;
    case NV_ESC_RM_MAP_MEMORY: {
      bg_nv_os33_with_fd *m = arg;
      m->params.status = find(m->params.hMemory) ? NV_OK : NV_ERR_INVALID_OBJECT_HANDLE;
      return 0;
    }
    case NV_ESC_RM_MAP_MEMORY_DMA: {
      F.map_dma_calls++;
      uint32_t st = NV_OK;
      memcpy((uint8_t *)arg + (size == 64 ? 56 : 48), &st, 4);
      return 0;
    }
    case NV_ESC_RM_ALLOC_MEMORY: {
      bg_nv_os02_with_fd *a = arg;
      F.alloc_memory_calls++;
      a->params.status = add_obj(a->params.hObjectParent, a->params.hObjectNew, a->params.hClass);
      return 0;
    }
    case NV_ESC_CARD_INFO: {
      bg_nv_card_info *c = arg;
      ck_assert_uint_eq(size, sizeof(bg_nv_card_info) * NV_CARD_INFO_MAX);
      c[0] = (bg_nv_card_info){.valid = 1, .bus = 0x41, .vendor_id = 0x10de, .device_id = 0x2335, .gpu_id = 0x4100,
                               .minor_number = 0, .fb_size = 1ull << 30};
      return 0;
    }
    case NV_ESC_REGISTER_FD: return 0;
    case NV_ESC_CHECK_VERSION_STR: {
      bg_nv_rm_api_version *v = arg;
      v->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
      snprintf(v->versionString, sizeof v->versionString, "%s", F.check_version ? F.check_version : "580.65.06");
      return 0;
    }
    default: return errno = EINVAL, -1;
    }
  }
  /* UVM: the raw request; rmStatus is the last u32 before the padding */
  switch (req) {
  case NV_UVM_CREATE_EXTERNAL_RANGE: F.ranges++; ((bg_nv_uvm_create_external_range *)arg)->rmStatus = 0; return 0;
  case NV_UVM_FREE:
    F.ranges--;
    return 0; /* status already 0 */
  default: return 0;
  }
}

static void *f_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  (void)ctx, (void)fd, (void)off;
  void *p = mmap(addr, len, prot, (flags & MAP_FIXED) | MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) F.maps++;
  return p;
}

static int f_munmap(void *ctx, void *addr, size_t len) {
  (void)ctx;
  F.maps--;
  return munmap(addr, len);
}

static long f_read_file(void *ctx, const char *path, char *buf, size_t cap) {
  (void)ctx, (void)path;
  if (!F.proc) return errno = ENOENT, -1;
  snprintf(buf, cap, "%s", F.proc);
  return (long)strlen(buf);
}

static void f_doorbell(void *ctx, volatile uint32_t *reg, uint32_t token) {
  (void)ctx, (void)reg;
  F.doorbells++;
  if (!F.gpu_runs) return;
  for (int i = 0; i < F.nchan; i++)
    if (F.chan[i].token == token) {
      volatile uint32_t *u = (volatile uint32_t *)(uintptr_t)F.chan[i].userd;
      u[0x88 / 4] = u[0x8c / 4];
    }
}

static const bg_nv_sys fake = {NULL, f_open, f_close, f_ioctl, f_mmap, f_munmap, f_read_file, f_doorbell};

static void reset(const char *version) {
  memset(&F, 0, sizeof F);
  F.version = version;
  F.next_fd = 100;
  F.gpu_runs = true;
}

/* Nothing of an open is left: objects, fds, mappings, UVM ranges; frees went children first. */
static void assert_clean(void) {
  ck_assert_msg(live_objects() == 0, "%d RM objects left", live_objects());
  ck_assert_int_eq(F.open_fds, 0);
  ck_assert_int_eq(F.maps, 0);
  ck_assert_int_eq(F.ranges, 0);
  ck_assert_msg(F.order_violation == 0, "%s", F.violation);
}

static int index_of(uint32_t cls) {
  for (int i = 0; i < F.norder; i++)
    if (F.classes_order[i] == cls) return i;
  return -1;
}

START_TEST(open_close_hopper) {
  reset("580.65.06");
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  ck_assert_uint_eq(g->cls.compute, HOPPER_COMPUTE_A);
  ck_assert_uint_eq(g->cls.copy, HOPPER_DMA_COPY_A);
  ck_assert_uint_eq(g->cls.gpfifo, HOPPER_CHANNEL_GPFIFO_A);
  ck_assert_uint_eq(g->sm, 90);
  ck_assert_str_eq(g->ver.text, "580.65.06");
  ck_assert_str_eq(g->bdf, "0000:41:00.0");
  ck_assert(g->have_virtmem && g->perf_boost);
  /* parents (RM's object graph) and the order of the steps */
  ck_assert_uint_eq(F.parents_order[index_of(NV01_DEVICE_0)], NV01_ROOT_CLIENT);
  ck_assert_uint_eq(F.parents_order[index_of(HOPPER_USERMODE_A)], NV20_SUBDEVICE_0);
  ck_assert_uint_eq(F.parents_order[index_of(HOPPER_CHANNEL_GPFIFO_A)], KEPLER_CHANNEL_GROUP_A);
  ck_assert_uint_eq(F.parents_order[index_of(FERMI_CONTEXT_SHARE_A)], KEPLER_CHANNEL_GROUP_A);
  ck_assert_uint_eq(F.parents_order[index_of(HOPPER_COMPUTE_A)], HOPPER_CHANNEL_GPFIFO_A);
  ck_assert_uint_eq(F.parents_order[index_of(GT200_DEBUGGER)], NV01_DEVICE_0);
  ck_assert_int_lt(index_of(FERMI_VASPACE_A), index_of(KEPLER_CHANNEL_GROUP_A));
  ck_assert_int_lt(index_of(FERMI_CONTEXT_SHARE_A), index_of(HOPPER_CHANNEL_GPFIFO_A));
  ck_assert_int_lt(index_of(HOPPER_COMPUTE_A), index_of(GT200_DEBUGGER));
  /* 580 layouts */
  ck_assert_uint_eq(F.vaspace_size, 56);
  ck_assert_uint_eq(F.channel_size, 368);
  ck_assert_uint_eq(F.sched_size, 3);
  ck_assert_int_eq(F.nchan, 2);
  ck_assert_uint_eq(g->q[BG_QUEUE_COMPUTE]->token, 30);
  ck_assert(F.map_dma_calls > 0); /* virtmem present: buffers also go through RM_MAP_MEMORY_DMA */
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

START_TEST(family_layouts) {
  static const struct {
    const char *v;
    uint32_t vas, chan, sched;
  } fam[] = {{"570.124.04", 48, 368, 2}, {"580.65.06", 56, 368, 3}, {"610.43.03", 56, 376, 3}};
  for (int i = 0; i < 3; i++) {
    reset(fam[i].v);
    nv_gpu *g = NULL;
    OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
    ck_assert_uint_eq(F.vaspace_size, fam[i].vas);
    ck_assert_uint_eq(F.channel_size, fam[i].chan);
    ck_assert_uint_eq(F.sched_size, fam[i].sched);
    bg_nv_gpu_close(g);
    assert_clean();
  }
}
END_TEST

START_TEST(optional_steps) {
  /* virtmem and PERF_BOOST refused: open works, buffers are mapped through UVM only */
  reset("580.65.06");
  F.refuse_class = NV01_MEMORY_VIRTUAL;
  F.refuse_class_status = NV_ERR_INSUFFICIENT_PERMISSIONS;
  F.refuse_ctrl = NV2080_CTRL_CMD_PERF_BOOST;
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  ck_assert(!g->have_virtmem && !g->perf_boost);
  ck_assert_int_eq(F.map_dma_calls, 0);
  bg_nv_gpu_close(g);
  assert_clean();
  /* version control refused: /proc, then NV_ESC_CHECK_VERSION_STR */
  reset(NULL);
  F.proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.04  Release Build\n";
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  ck_assert_str_eq(g->version_source, "/proc/driver/nvidia/version");
  ck_assert_uint_eq(F.vaspace_size, 48);
  bg_nv_gpu_close(g);
  assert_clean();
  reset(NULL);
  F.check_version = "610.43.03";
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  ck_assert_str_eq(g->version_source, "NV_ESC_CHECK_VERSION_STR");
  ck_assert_uint_eq(F.channel_size, 376);
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

START_TEST(required_refused) {
  reset("580.65.06");
  F.refuse_class = KEPLER_CHANNEL_GROUP_A;
  F.refuse_class_status = NV_ERR_INVALID_CLASS;
  nv_gpu *g = NULL;
  FAILS(bg_nv_gpu_open(&fake, 0, "NVK", &g), BG_ENOTSUP, "open step 'channel group'");
  ck_assert_ptr_null(g);
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "0xa06c (KEPLER_CHANNEL_GROUP_A)"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "NV_ERR_INVALID_CLASS"));
  assert_clean();
  /* a driver of no known family */
  reset("590.44.01");
  FAILS(bg_nv_gpu_open(&fake, 0, "NVK", &g), BG_ENOTSUP, "590.44.01");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "570.x, 580.x, 610.x"));
  assert_clean();
}
END_TEST

/* Every RM_ALLOC of an open may fail: the open names its step and leaves nothing behind. */
START_TEST(failed_open_frees_everything) {
  reset("580.65.06");
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  bg_nv_gpu_close(g);
  int total = F.nalloc;
  ck_assert_int_gt(total, 15);
  for (int k = 1; k <= total; k++) {
    reset("580.65.06");
    F.fail_alloc_at = k;
    int e = bg_nv_gpu_open(&fake, 0, "NVK", &g);
    if (k == 4) { /* NV01_MEMORY_VIRTUAL: optional */
      ck_assert_int_eq(e, 0);
      bg_nv_gpu_close(g);
    } else {
      ck_assert_msg(e == -BG_EPERM, "alloc %d: %d %s", k, e, bg_last_error());
      ck_assert_msg(strstr(bg_last_error(), "open step '") && strstr(bg_last_error(), "NV_ERR_INSUFFICIENT_PERMISSIONS"),
                    "alloc %d: %s", k, bg_last_error());
    }
    assert_clean();
  }
}
END_TEST

START_TEST(no_driver) {
  reset("580.65.06");
  F.no_ctl = true;
  ck_assert_int_eq(bg_nv_card_count(&fake), 0);
  nv_gpu *g = NULL;
  FAILS(bg_nv_gpu_open(&fake, 0, "NVK", &g), BG_ENODEV, "/dev/nvidiactl");
  assert_clean();
  reset("580.65.06");
  ck_assert_int_eq(bg_nv_card_count(&fake), 1);
  FAILS(bg_nv_gpu_open(&fake, 1, "NVK", &g), BG_ENODEV, "GPU 1 of 1");
  assert_clean();
}
END_TEST

START_TEST(memory) {
  reset("580.65.06");
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  int huge0 = F.mem_attr_huge, am0 = F.alloc_memory_calls;
  bg_mem big, small, host;
  OK(bg_nv_mem_alloc(g, 16u << 20, 0, &big));
  ck_assert_int_eq(F.mem_attr_huge, huge0 + 1);
  ck_assert_int_eq(F.mem_align_2m, 1);
  ck_assert_uint_eq(big.va % (2u << 20), 0);
  ck_assert_ptr_null(big.cpu);
  OK(bg_nv_mem_alloc(g, 100, BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &small));
  ck_assert_int_eq(F.mem_attr_huge, huge0 + 1);
  ck_assert_ptr_eq(small.cpu, (void *)(uintptr_t)small.va); /* GPU VA == CPU VA */
  ((volatile uint8_t *)small.cpu)[99] = 7;
  OK(bg_nv_mem_alloc(g, 5000, BG_BUF_HOST | BG_BUF_CPU_ACCESS | BG_BUF_UNCACHED, &host));
  ck_assert_int_eq(F.alloc_memory_calls, am0 + 1); /* NV01_MEMORY_SYSTEM_OS_DESCRIPTOR on the GPU fd */
  ck_assert_ptr_eq(host.cpu, (void *)(uintptr_t)host.va);
  bg_nv_mem_free(g, &big);
  /* a freed range is handed out again (first fit), reserved in between: the window does not run out */
  uint64_t va0 = small.va;
  bg_nv_mem_free(g, &small);
  ck_assert_int_eq(mincore((void *)(uintptr_t)va0, 4096, (unsigned char[1]){0}), 0); /* still mapped (PROT_NONE) */
  OK(bg_nv_mem_alloc(g, 4096, BG_BUF_CPU_ACCESS, &small));
  ck_assert_uint_eq(small.va, va0);
  bg_nv_mem_free(g, &small);
  bg_nv_mem_free(g, &host);
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

/* The GPU never reads: the ring fills and the next submit says so instead of overwriting an unread entry. */
START_TEST(submit_never_overruns) {
  reset("580.65.06");
  setenv("BG_WAIT_TIMEOUT_MS", "50", 1);
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  bg_queue_hw *q = g->q[BG_QUEUE_COPY];
  uint32_t cmd[4] = {0x20010000u, 0, 0, 0};
  OK(bg_nv_submit(NULL, q, cmd, sizeof cmd));
  uint64_t e = q->ring[q->put - 1];
  ck_assert_uint_eq(e & 0xfffffffffcull, q->cmdq.va + (q->cmdq_put - sizeof cmd) % q->cmdq.size);
  ck_assert_uint_eq((e >> 42) & 0x1fffff, 4);  /* LENGTH in dwords */
  ck_assert_uint_eq((e >> 41) & 1, 1);         /* LEVEL */
  ck_assert_uint_eq(q->userd[0x8c / 4], q->put);
  ck_assert_uint_eq(F.doorbells, 1);
  F.gpu_runs = false;
  unsigned n = 0;
  while (n < q->entries - 1) {
    OK(bg_nv_submit(NULL, q, cmd, sizeof cmd));
    n++;
    if ((q->put + 1) % q->entries == q->userd[0x88 / 4]) break;
  }
  FAILS(bg_nv_submit(NULL, q, cmd, sizeof cmd), BG_EHANG, "GPFIFO entry");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "copy channel"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "GPGet"));
  /* pushbuffer bytes: a submit bigger than what the GPU has released waits the same way */
  q->userd[0x88 / 4] = q->put; /* the GPU read everything */
  F.gpu_runs = false;
  size_t big = (size_t)q->cmdq.size / 2 + 4;
  uint32_t *b = calloc(1, big);
  OK(bg_nv_submit(NULL, q, b, big));
  FAILS(bg_nv_submit(NULL, q, b, big), BG_EHANG, "pushbuffer space");
  free(b);
  F.gpu_runs = true;
  q->userd[0x88 / 4] = q->put;
  unsetenv("BG_WAIT_TIMEOUT_MS");
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

/* fault_check: idle 0, work pending 1, a written error notifier -BG_EHANG with the debugger's readout. */
START_TEST(fault_readout) {
  reset("580.65.06");
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  bg_dev d;
  memset(&d, 0, sizeof d);
  d.priv = g;
  ck_assert_int_eq(bg_nv_fault_check(&d), 0);
  F.gpu_runs = false;
  uint32_t cmd[2] = {0x20010000u, 0};
  OK(bg_nv_submit(NULL, g->q[BG_QUEUE_COMPUTE], cmd, sizeof cmd));
  ck_assert_int_eq(bg_nv_fault_check(&d), 1);
  volatile bg_nv_notification *n = g->q[BG_QUEUE_COMPUTE]->notifier.cpu;
  n->info32 = 31;
  n->status = 0xffff;
  FAILS(bg_nv_fault_check(&d), BG_EHANG, "MMU fault at address 0xdead0000 (fault type 2, access type 1)");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "SM 3: global ESR 0x10, warp ESR 0x2f at PC 0x7f00001230"));
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "compute channel"));
  FAILS(bg_nv_sleep(&d, 0), BG_EHANG, "error 31");
  g->q[BG_QUEUE_COMPUTE]->userd[0x88 / 4] = g->q[BG_QUEUE_COMPUTE]->put;
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

/* What tools read: memory from FB_GET_INFO_V2 (KiB), temperature from the thermal instruction list; -1 when refused. */
START_TEST(query_info) {
  reset("580.65.06");
  nv_gpu *g = NULL;
  OK(bg_nv_gpu_open(&fake, 0, "NVK", &g));
  static const bg_backend_ops ops = {.kind = "NV"};
  bg_dev d;
  memset(&d, 0, sizeof d);
  d.ops = &ops;
  d.priv = g;
  bg_nv_query q;
  OK(bg_nv_query_info(&d, &q));
  ck_assert_uint_eq(q.vram_total, 1ull << 30);
  ck_assert_uint_eq(q.vram_free, 1ull << 29);
  ck_assert_int_eq(q.temp_c, 47);
  ck_assert_str_eq(q.arch, "sm_90");
  ck_assert_uint_eq(q.sm, 90);
  ck_assert_uint_eq(q.family, 580);
  ck_assert_str_eq(q.uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  F.refuse_ctrl = NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2;
  OK(bg_nv_query_info(&d, &q));
  ck_assert_int_eq(q.temp_c, -1);
  bg_nv_gpu_close(g);
  assert_clean();
}
END_TEST

/* Two bg_devs of one GPU share its nv_gpu (one client, one set of channels); the GPU lives until the last closes. */
START_TEST(shared_gpu) {
#if BG_HAVE_MOCK
  bg_dev *a = NULL, *b = NULL;
  OK(bg_dev_open("MOCKNVK+NV", &a));
  OK(bg_dev_open("MOCKNVK+NV:0", &b));
  ck_assert_ptr_eq(a->priv, b->priv);
  ck_assert_str_eq(bg_dev_arch(a), "sm_90");
  nv_gpu *g = a->priv;
  ck_assert_uint_eq(g->ndevs, 2);
  bg_dev_close(a);
  ck_assert_uint_eq(g->ndevs, 1);
  bg_buf *buf = NULL;
  OK(bg_buf_alloc(b, 4096, BG_BUF_CPU_ACCESS, &buf)); /* the GPU is still open for b */
  bg_buf_free(buf);
  bg_dev_close(b);
#endif
  /* DEV=NV is NVK (the emulation only when named): a GPU of the kernel module, or no device through NVK */
  bg_dev *n = NULL;
  if (bg_dev_open("NV", &n) == 0) {
    ck_assert_str_eq(((nv_gpu *)n->priv)->key, "NVK:0");
    bg_dev_close(n);
  } else {
    ck_assert_msg(strstr(bg_last_error(), "NVK") && !strstr(bg_last_error(), "MOCKNVK"), "%s", bg_last_error());
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("nv-dev");
  TCase *tc = tcase_create("dev");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, open_close_hopper);
  tcase_add_test(tc, family_layouts);
  tcase_add_test(tc, optional_steps);
  tcase_add_test(tc, required_refused);
  tcase_add_test(tc, failed_open_frees_everything);
  tcase_add_test(tc, no_driver);
  tcase_add_test(tc, memory);
  tcase_add_test(tc, submit_never_overruns);
  tcase_add_test(tc, fault_readout);
  tcase_add_test(tc, shared_gpu);
  tcase_add_test(tc, query_info);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
