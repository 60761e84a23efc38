/* nv/nv_dev.c: opening an NVIDIA GPU through the nvidia kernel module's RM and UVM ioctls, and closing it.
 *
 * The object graph and call order are tinygrad's (tinygrad/runtime/ops_nv.py NVKIface.__init__, NVDevice.__init__,
 * NVDevice._new_gpu_fifo) with Hopper's classes and these differences: every RM_ALLOC carries its exact paramsSize and
 * a handle from the client's range (nv_rm.h); the driver version falls back to /proc and NV_ESC_CHECK_VERSION_STR when
 * NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 is refused; NV01_MEMORY_VIRTUAL and PERF_BOOST are optional (a sandboxed
 * driver such as gVisor's nvproxy refuses them to compute clients); a failed open frees what it allocated.
 *
 *   root client -> device (0x80) -> subdevice (0x2080) -> [virtmem 0x70] -> class list -> usermode (under subdevice,
 *   CPU-mapped: doorbell) -> [PERF_BOOST] -> VA space 0x90f1 -> GID/UUID -> UVM_REGISTER_GPU, _GPU_VASPACE -> TSG
 *   0xa06c -> GPFIFO area -> ctxshare 0x9067 -> compute channel (+ compute object, debugger 0x83de) and copy channel
 *   (+ copy object), tokens, UVM_REGISTER_CHANNEL -> GPFIFO_SCHEDULE on the TSG -> GR info (sm_XY). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "baregpu/error.h"
#include "nv/nv_abi_dev.h"
#include "nv/nv_hcq.h"
#include "nv/nv_pci_hcq.h"

#define NV_USERMODE_SIZE 0x10000u
#define NV_GPFIFO_AREA_SIZE 0x200000u  /* compute ring @0, copy ring @0x100000, each with its USERD after it */
#define NV_GPFIFO_ENTRIES 0x400u
#define NV_CMDQ_SIZE (1u << 20)        /* per-channel pushbuffer ring */
#define NV_NOTIFIER_SIZE 0x1000u
#define NV_UVM_CHANNEL_RANGE 0x4000000u /* UVM_REGISTER_CHANNEL length (tinygrad setup_gpfifo_vm) */

static int rm_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  const bg_nv_sys *sys = ctx;
  return sys->ioctl(sys->ctx, fd, request, arg);
}

/* A failed step: the message says which. */
static int step_fail(nv_gpu *g, int e, const char *step) {
  return bg_error_context(e, "%s: open step '%s': ", g->name, step);
}

static int ctl_open(const bg_nv_sys *sys, int *fd) {
  *fd = sys->open(sys->ctx, "/dev/nvidiactl", O_RDWR | O_CLOEXEC);
  return *fd < 0 ? -1 : 0;
}

static int card_info(const bg_nv_sys *sys, int ctl, bg_nv_card_info *cards) {
  memset(cards, 0, sizeof(bg_nv_card_info) * NV_CARD_INFO_MAX);
  if (sys->ioctl(sys->ctx, ctl, NV_IOWR(NV_ESC_CARD_INFO, sizeof(bg_nv_card_info) * NV_CARD_INFO_MAX), cards) < 0)
    return bg_error(BG_EIO, "nv: NV_ESC_CARD_INFO on /dev/nvidiactl failed: %s", strerror(errno));
  return 0;
}

int bg_nv_card_count(const bg_nv_sys *sys) {
  int ctl;
  if (ctl_open(sys, &ctl) < 0) return 0; /* no nvidia kernel module: no devices */
  bg_nv_card_info *cards = calloc(NV_CARD_INFO_MAX, sizeof *cards);
  int n = 0;
  if (!cards) n = bg_error(BG_ENOMEM, "nv: out of host memory");
  else if (card_info(sys, ctl, cards) < 0) n = 0;
  else
    for (int i = 0; i < NV_CARD_INFO_MAX; i++) n += cards[i].valid != 0;
  free(cards);
  sys->close(sys->ctx, ctl);
  return n;
}

/* /dev/nvidia<minor> registered with the control fd (tinygrad NVKIface._new_gpu_fd). */
static int new_gpu_fd(nv_gpu *g, int *out) {
  char path[32];
  snprintf(path, sizeof path, "/dev/nvidia%u", g->minor);
  int fd = g->sys->open(g->sys->ctx, path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return bg_error(errno == EACCES || errno == EPERM ? BG_EPERM : BG_ENODEV, "nv: open %s: %s", path,
                              strerror(errno));
  bg_nv_register_fd r = {.ctl_fd = g->ctl_fd};
  if (g->sys->ioctl(g->sys->ctx, fd, NV_IOWR(NV_ESC_REGISTER_FD, sizeof r), &r) < 0) {
    int e = errno;
    g->sys->close(g->sys->ctx, fd);
    return bg_error(BG_EIO, "nv: NV_ESC_REGISTER_FD on %s failed: %s", path, strerror(e));
  }
  *out = fd;
  return 0;
}

/* Driver version: the V2 control, else /proc/driver/nvidia/version, else NV_ESC_CHECK_VERSION_STR. A version that
 * was read but belongs to no known family is an error at once (no fallback hides it). */
static int driver_version(nv_gpu *g) {
  bg_nv0000_build_version_v2 *bv = calloc(1, sizeof *bv);
  if (!bv) return bg_error(BG_ENOMEM, "nv: out of host memory");
  int e = bg_nv_rm_control(&g->rm, g->rm.root, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, bv, sizeof *bv);
  if (e == 0) {
    bv->driverVersionBuffer[sizeof bv->driverVersionBuffer - 1] = '\0';
    e = bg_nv_version_parse(bv->driverVersionBuffer, &g->ver);
    free(bv);
    if (e == 0) snprintf(g->version_source, sizeof g->version_source, "GET_BUILD_VERSION_V2");
    return e;
  }
  free(bv);
  BG_LOG(1, "%s: %s; trying /proc/driver/nvidia/version", g->name, bg_last_error());
  char text[1024];
  long n = g->sys->read_file(g->sys->ctx, "/proc/driver/nvidia/version", text, sizeof text);
  if (n > 0) {
    e = bg_nv_version_parse_proc(text, &g->ver);
    if (e == 0) snprintf(g->version_source, sizeof g->version_source, "/proc/driver/nvidia/version");
    return e;
  }
  BG_LOG(1, "%s: /proc/driver/nvidia/version unreadable; trying NV_ESC_CHECK_VERSION_STR", g->name);
  e = bg_nv_rm_query_version(&g->rm, &g->ver);
  if (e == 0) snprintf(g->version_source, sizeof g->version_source, "NV_ESC_CHECK_VERSION_STR");
  return e;
}

static int uvm(nv_gpu *g, int fd, uint32_t req, const char *name, void *p, size_t size, size_t status_off) {
  return bg_nv_uvm_ioctl(&g->rm.ops, fd, req, name, p, size, status_off);
}

/* GSP-RM takes no pointer inside a control's parameters: the class list inline (V2). */
static int class_list_v2(nv_gpu *g) {
  bg_nv0080_classlist_v2 cl;
  memset(&cl, 0, sizeof cl);
  int e = bg_nv_rm_control(&g->rm, g->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &cl, sizeof cl);
  if (e) return e;
  if (cl.numClasses == 0 || cl.numClasses > NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE)
    return bg_error(BG_EIO, "nv: NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 reports %u classes (expected 1..%u)",
                    cl.numClasses, NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE);
  memcpy(g->classes, cl.classList, cl.numClasses * sizeof cl.classList[0]);
  g->nclasses = cl.numClasses;
  return bg_nv_classes_select(g->classes, g->nclasses, &g->cls);
}

static int class_list(nv_gpu *g) {
  if (g->pci) return class_list_v2(g);
  bg_nv0080_classlist cl = {0};
  int e = bg_nv_rm_control(&g->rm, g->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl);
  if (e) return e;
  if (cl.numClasses == 0 || cl.numClasses > sizeof g->classes / sizeof g->classes[0])
    return bg_error(BG_EIO, "nv: NV0080_CTRL_CMD_GPU_GET_CLASSLIST reports %u classes (expected 1..%zu)", cl.numClasses,
                    sizeof g->classes / sizeof g->classes[0]);
  uint32_t n = cl.numClasses;
  cl.classList = (uint64_t)(uintptr_t)g->classes;
  if ((e = bg_nv_rm_control(&g->rm, g->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl))) return e;
  if (cl.numClasses > n)
    return bg_error(BG_EIO, "nv: NV0080_CTRL_CMD_GPU_GET_CLASSLIST grew from %u to %u classes", n, cl.numClasses);
  g->nclasses = cl.numClasses;
  return bg_nv_classes_select(g->classes, g->nclasses, &g->cls);
}

/* The doorbell page: usermode object under the subdevice, mapped through its own /dev/nvidiaN. */
static int usermode(nv_gpu *g) {
  if (g->pci) return 0; /* bare metal: the doorbell is BAR0's NV_VIRTUAL_FUNCTION_DOORBELL (bg_nv_pci_doorbell) */
  int e = bg_nv_rm_alloc(&g->rm, g->hsubdevice, g->cls.usermode, NULL, 0, &g->husermode);
  if (e || (e = new_gpu_fd(g, &g->usermode_fd))) return e;
  if ((e = bg_nv_rm_map_memory(&g->rm, g->usermode_fd, g->hdevice, g->husermode, 0, NV_USERMODE_SIZE, 0, NULL))) return e;
  void *p = g->sys->mmap(g->sys->ctx, NULL, NV_USERMODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, g->usermode_fd, 0);
  if (p == MAP_FAILED) return bg_error(BG_EIO, "nv: mmap of the usermode page failed: %s", strerror(errno));
  g->usermode = p;
  return 0;
}

static int vaspace(nv_gpu *g) {
  /* 580 appended pasid (0) to the 570 layout: the 570 block is this one's first vaspace_alloc_size bytes */
  bg_nv_vaspace_alloc_580 p = {.flags = NV_VASPACE_FLAGS_IS_EXTERNALLY_OWNED | NV_VASPACE_FLAGS_ENABLE_PAGE_FAULTING,
                               .vaSize = 0x1fffffb000000ull, .vaBase = 0x1000};
  _Static_assert(offsetof(bg_nv_vaspace_alloc_580, vaBase) == offsetof(bg_nv_vaspace_alloc_570, vaBase) &&
                     sizeof(bg_nv_vaspace_alloc_570) <= sizeof p,
                 "the 570 VA-space block is a prefix of the 580 one");
  int e = bg_nv_rm_alloc(&g->rm, g->hdevice, FERMI_VASPACE_A, &p, g->abi.vaspace_alloc_size, &g->hvaspace);
  /* bare metal: the VA space walks the driver's own page tables (UVM owns them on the ioctl path) */
  if (e == 0 && g->pci) e = bg_nv_pci_set_page_directory(g->pci->d, g->rm.root, g->hdevice, g->hvaspace);
  return e;
}

static int gid(nv_gpu *g) {
  bg_nv2080_gid_info gi = {.index = 0, .flags = NV2080_GID_FLAGS_FORMAT_BINARY, .length = 16};
  int e = bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gi, sizeof gi);
  if (e) return e;
  if (gi.length < 16) return bg_error(BG_EIO, "nv: NV2080_CTRL_CMD_GPU_GET_GID_INFO returned %u bytes (want 16)", gi.length);
  memcpy(g->uuid, gi.data, 16);
  return 0;
}

static int uvm_register(nv_gpu *g) {
  bg_nv_uvm_register_gpu rg = {.rmCtrlFd = -1};
  memcpy(rg.gpu_uuid.uuid, g->uuid, 16);
  int e = uvm(g, g->uvm_fd, NV_UVM_REGISTER_GPU, "UVM_REGISTER_GPU", &rg, sizeof rg,
              offsetof(bg_nv_uvm_register_gpu, rmStatus));
  if (e) return e;
  g->uvm_gpu_registered = true;
  bg_nv_uvm_register_gpu_vaspace rv = {.rmCtrlFd = g->ctl_fd, .hClient = g->rm.root, .hVaSpace = g->hvaspace};
  memcpy(rv.gpuUuid.uuid, g->uuid, 16);
  return uvm(g, g->uvm_fd, NV_UVM_REGISTER_GPU_VASPACE, "UVM_REGISTER_GPU_VASPACE", &rv, sizeof rv,
             offsetof(bg_nv_uvm_register_gpu_vaspace, rmStatus));
}

static void put32(uint8_t *b, uint32_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void put64(uint8_t *b, uint32_t off, uint64_t v) { memcpy(b + off, &v, 8); }

static int channel_views(nv_gpu *g, bg_queue_hw *q, uint32_t ring_off);

/* One GPFIFO channel (tinygrad NVDevice._new_gpu_fifo): error notifier, channel under the TSG with its ring and USERD
 * in the GPFIFO area (NV_CHANNEL_ALLOC_PARAMS in the family's layout), engine object, debugger (compute), token,
 * UVM registration, pushbuffer ring. */
static int channel(nv_gpu *g, enum bg_queue_kind kind, uint32_t ring_off) {
  bg_queue_hw *q = calloc(1, sizeof *q);
  if (!q) return bg_error(BG_ENOMEM, "nv: out of host memory");
  g->q[kind] = q; /* freed by close from here on */
  q->g = g;
  q->kind = kind;
  q->entries = NV_GPFIFO_ENTRIES;
  q->ring_off = ring_off;
  bool compute = kind == BG_QUEUE_COMPUTE;
  uint32_t engine_cls = compute ? g->cls.compute : g->cls.copy;
  uint64_t userd_off = ring_off + (uint64_t)q->entries * 8;
  const nv_alloc *area = g->gpfifo_area.meta;
  int e;
  if (g->pci) { /* bare metal: GSP-RM is handed the memory by address; no error notifier (faults come as events) */
    if (area->host) return bg_error(BG_EINVAL, "nv: the GPFIFO area must lie in VRAM (USERD is given by VRAM address)");
    bg_nv_gsp_channel_alloc c;
    if ((e = bg_nv_pci_channel_params(g, g->gpfifo_area.va + ring_off, q->entries, userd_off,
                                      area->pm->vram_pa + userd_off, g->hctxshare, &c)))
      return e;
    if ((e = bg_nv_rm_alloc(&g->rm, g->htsg, g->cls.gpfifo, &c, sizeof c, &q->hchannel))) return e;
  } else {
    if ((e = bg_nv_mem_alloc(g, NV_NOTIFIER_SIZE, BG_BUF_UNCACHED | BG_BUF_CPU_ACCESS | BG_BUF_ZERO, &q->notifier)))
      return e;
    uint8_t params[512];
    memset(params, 0, sizeof params);
    const nv_alloc *notif = q->notifier.meta;
    put32(params, 0, notif->hmem);                            /* hObjectError */
    put32(params, 4, area->hmem);                             /* hObjectBuffer */
    put64(params, 8, g->gpfifo_area.va + ring_off);           /* gpFifoOffset */
    put32(params, 16, q->entries);                            /* gpFifoEntries */
    put32(params, 24, g->hctxshare);                          /* hContextShare */
    put32(params, g->abi.channel_userd_mem_off, area->hmem);  /* hUserdMemory[0] */
    put64(params, g->abi.channel_userd_offset_off, userd_off); /* userdOffset[0] */
    put32(params, g->abi.channel_engine_type_off, 0);
    if ((e = bg_nv_rm_alloc(&g->rm, g->htsg, g->cls.gpfifo, params, g->abi.channel_alloc_size, &q->hchannel))) return e;
  }
  if ((e = bg_nv_rm_alloc(&g->rm, q->hchannel, engine_cls, NULL, 0, &q->hengine))) return e;
  if (compute && g->pci && (e = bg_nv_pci_promote_compute(g, q->hchannel))) return e;
  if (compute) {
    bg_nv_debugger_alloc dp = {.hAppClient = g->rm.root, .hClass3dObject = q->hengine};
    if ((e = bg_nv_rm_alloc(&g->rm, g->hdevice, GT200_DEBUGGER, &dp, sizeof dp, &g->hdebugger))) return e;
  }
  bg_nvc36f_work_submit_token tok = {.workSubmitToken = 0xffffffffu};
  if ((e = bg_nv_rm_control(&g->rm, q->hchannel, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &tok, sizeof tok)))
    return e;
  q->token = g->pci ? bg_nv_pci_token(g, tok.workSubmitToken) : tok.workSubmitToken;
  if (g->pci) return channel_views(g, q, ring_off);
  uint64_t base;
  if ((e = bg_nv_va_low(NV_UVM_CHANNEL_RANGE, 0x1000, &base))) return e;
  q->uvm_base = base; /* given back at close */
  bg_nv_uvm_register_channel rc = {.rmCtrlFd = g->ctl_fd, .hClient = g->rm.root, .hChannel = q->hchannel, .base = base,
                                   .length = NV_UVM_CHANNEL_RANGE};
  memcpy(rc.gpuUuid.uuid, g->uuid, 16);
  if ((e = uvm(g, g->uvm_fd, NV_UVM_REGISTER_CHANNEL, "UVM_REGISTER_CHANNEL", &rc, sizeof rc,
               offsetof(bg_nv_uvm_register_channel, rmStatus))))
    return e;
  return channel_views(g, q, ring_off);
}

/* The channel's ring and USERD in the GPFIFO area's CPU view, its pushbuffer ring, its name. */
static int channel_views(nv_gpu *g, bg_queue_hw *q, uint32_t ring_off) {
  bool compute = q->kind == BG_QUEUE_COMPUTE;
  int e;
  uint8_t *cpu = g->gpfifo_area.cpu;
  if ((e = bg_nv_mem_alloc(g, NV_CMDQ_SIZE, BG_BUF_CPU_ACCESS, &q->cmdq))) return e;
  if (cpu && q->cmdq.cpu) {
    q->ring = (volatile uint64_t *)(void *)(cpu + ring_off);
    q->userd = (volatile uint32_t *)(void *)(cpu + ring_off + (size_t)q->entries * 8);
  } else if (!g->pci) {
    return bg_error(BG_EINVAL, "nv: the GPFIFO area and pushbuffer ring have no CPU view");
  } else if ((e = bg_nv_pci_cpu_view(g, &g->gpfifo_area, &q->area_view, &q->area_base)) < 0 ||
             (e = bg_nv_pci_cpu_view(g, &q->cmdq, &q->cmdq_view, &q->cmdq_base)) < 0) {
    return e; /* behind the bridge: through BAR1 */
  }
  /* a GPFIFO entry holds address bits 39:2 (clc56f.h NVC56F_GP_ENTRY0_GET, ENTRY1_GET_HI) */
  if (q->cmdq.va + NV_CMDQ_SIZE > (1ull << 40) || g->gpfifo_area.va + NV_GPFIFO_AREA_SIZE > (1ull << 40))
    return bg_error(BG_ENOMEM, "nv: the pushbuffer ring (0x%" PRIx64 ") and GPFIFO area (0x%" PRIx64 ") must lie below 2^40 "
                    "(GPFIFO entries hold 40 address bits); the low VA window landed above it", q->cmdq.va,
                    g->gpfifo_area.va);
  if (!(q->entry_end = calloc(q->entries, sizeof *q->entry_end))) return bg_error(BG_ENOMEM, "nv: out of host memory");
  snprintf(q->name, sizeof q->name, "%s channel (%s, token %u)", compute ? "compute" : "copy",
           bg_nv_class_name(g->cls.gpfifo) ? bg_nv_class_name(g->cls.gpfifo) : "GPFIFO", q->token);
  return 0;
}

/* GR info inline (GSP-RM takes no pointer inside a control's parameters): GR engine 0's list, {index, data} at index. */
static int gr_info_kgr(nv_gpu *g) {
  bg_nv2080_kgr_info *k = calloc(1, sizeof *k);
  if (!k) return bg_error(BG_ENOMEM, "nv: out of host memory");
  int e = bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_INTERNAL_STATIC_KGR_GET_INFO, k, sizeof *k);
  if (e == 0) {
    g->sm_version = k->engineInfo[0][NV2080_GR_INFO_INDEX_SM_VERSION].data;
    g->max_warps_per_sm = k->engineInfo[0][NV2080_GR_INFO_INDEX_MAX_WARPS_PER_SM].data;
    g->gpcs = k->engineInfo[0][NV2080_GR_INFO_INDEX_LITTER_NUM_GPCS].data;
    g->tpc_per_gpc = k->engineInfo[0][NV2080_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC].data;
    g->sm_per_tpc = k->engineInfo[0][NV2080_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC].data;
  }
  free(k);
  return e;
}

static int gr_info_check(nv_gpu *g);

static int gr_info(nv_gpu *g) {
  if (g->pci) {
    int e = gr_info_kgr(g);
    if (e) return e;
    return gr_info_check(g);
  }
  bg_nv2080_gr_info list[5] = {{NV2080_GR_INFO_INDEX_SM_VERSION, 0},
                               {NV2080_GR_INFO_INDEX_MAX_WARPS_PER_SM, 0},
                               {NV2080_GR_INFO_INDEX_LITTER_NUM_GPCS, 0},
                               {NV2080_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, 0},
                               {NV2080_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, 0}};
  bg_nv2080_gr_get_info p = {.grInfoListSize = 5, .grInfoList = (uint64_t)(uintptr_t)list};
  int e = bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_GR_GET_INFO, &p, sizeof p);
  if (e) return e;
  g->sm_version = list[0].data;
  g->max_warps_per_sm = list[1].data;
  g->gpcs = list[2].data;
  g->tpc_per_gpc = list[3].data;
  g->sm_per_tpc = list[4].data;
  return gr_info_check(g);
}

static int gr_info_check(nv_gpu *g) {
  if (!g->gpcs || !g->tpc_per_gpc || !g->sm_per_tpc || !g->max_warps_per_sm)
    return bg_error(BG_EIO, "nv: NV2080_CTRL_CMD_GR_GET_INFO: GPCs %u, TPCs per GPC %u, SMs per TPC %u, warps per SM %u "
                    "(each must be non-zero)", g->gpcs, g->tpc_per_gpc, g->sm_per_tpc, g->max_warps_per_sm);
  return bg_nv_sm_arch(g->sm_version, &g->sm, NULL, 0);
}

/* Steps from the control fd to the card (process-wide in tinygrad; per GPU here, each with its own client). */
static int open_card(nv_gpu *g, int index) {
  const bg_nv_sys *sys = g->sys;
  const char *step = "open /dev/nvidiactl";
  if (ctl_open(sys, &g->ctl_fd) < 0)
    return step_fail(g, bg_error(errno == ENOENT ? BG_ENODEV : errno == EACCES ? BG_EPERM : BG_EIO,
                                 "nv: /dev/nvidiactl: %s (is the nvidia kernel module loaded?)", strerror(errno)), step);
  bg_nv_ioctl_ops ops = {rm_ioctl, (void *)sys};
  bg_nv_rm_init(&g->rm, g->ctl_fd, &ops);
  step = "open /dev/nvidia-uvm";
  if ((g->uvm_fd = sys->open(sys->ctx, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC)) < 0 ||
      (g->uvm_fd2 = sys->open(sys->ctx, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC)) < 0)
    return step_fail(g, bg_error(BG_ENODEV, "nv: /dev/nvidia-uvm: %s (is nvidia-uvm loaded?)", strerror(errno)), step);
  int e;
  if ((e = bg_nv_rm_alloc_root(&g->rm))) return step_fail(g, e, "root client");
  if ((e = driver_version(g))) return step_fail(g, e, "driver version");
  const bg_nv_abi_layout *abi = bg_nv_abi_layout_of(g->ver.family);
  if (!abi) return step_fail(g, bg_error(BG_ENOTSUP, "nv: no layout for family %u", g->ver.family), "driver version");
  g->abi = *abi;
  bg_nv_uvm_initialize ui = {0};
  if ((e = uvm(g, g->uvm_fd, NV_UVM_INITIALIZE, "UVM_INITIALIZE", &ui, sizeof ui, offsetof(bg_nv_uvm_initialize, rmStatus))))
    return step_fail(g, e, "UVM_INITIALIZE");
  /* CUDA gets an error here too (tinygrad NVKIface.__init__): not fatal */
  bg_nv_uvm_mm_initialize mi = {.uvmFd = g->uvm_fd};
  if (uvm(g, g->uvm_fd2, NV_UVM_MM_INITIALIZE, "UVM_MM_INITIALIZE", &mi, sizeof mi,
          offsetof(bg_nv_uvm_mm_initialize, rmStatus)))
    BG_LOG(2, "%s: %s (tolerated)", g->name, bg_last_error());
  bg_nv_card_info *cards = calloc(NV_CARD_INFO_MAX, sizeof *cards);
  if (!cards) return bg_error(BG_ENOMEM, "nv: out of host memory");
  if ((e = card_info(sys, g->ctl_fd, cards))) {
    free(cards);
    return step_fail(g, e, "NV_ESC_CARD_INFO");
  }
  int seen = 0, found = -1;
  for (int i = 0; i < NV_CARD_INFO_MAX && found < 0; i++)
    if (cards[i].valid && seen++ == index) found = i;
  if (found < 0) {
    free(cards);
    return step_fail(g, bg_error(BG_ENODEV, "nv: GPU %d of %d does not exist", index, seen), "NV_ESC_CARD_INFO");
  }
  const bg_nv_card_info *c = &cards[found];
  g->minor = c->minor_number;
  g->gpu_id = c->gpu_id;
  g->pci_vendor = c->vendor_id;
  g->pci_device = c->device_id;
  g->fb_size = c->fb_size;
  snprintf(g->bdf, sizeof g->bdf, "%04x:%02x:%02x.%x", c->domain & 0xffffu, c->bus, c->slot, c->function & 7u);
  free(cards);
  char nm[sizeof g->name];
  snprintf(nm, sizeof nm, "%s GPU %d (%04x:%04x at %s)", g->key[0] == 'M' ? "MOCKNVK" : "NVK", index, g->pci_vendor,
           g->pci_device, g->bdf);
  memcpy(g->name, nm, sizeof g->name);
  if ((e = new_gpu_fd(g, &g->gpu_fd))) return step_fail(g, e, "per-GPU fd");
  bg_nv0000_gpu_id_info_v2 id = {.gpuId = g->gpu_id};
  if ((e = bg_nv_rm_control(&g->rm, g->rm.root, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id, sizeof id)))
    return step_fail(g, e, "GPU id info");
  g->gpu_instance = id.deviceInstance;
  return 0;
}

int bg_nv_gpu_objects(nv_gpu *g) {
  int e;
  bg_nv_device_alloc dv = {.deviceId = g->gpu_instance, .hClientShare = g->rm.root,
                           .vaMode = NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES};
  if ((e = bg_nv_rm_alloc(&g->rm, g->rm.root, NV01_DEVICE_0, &dv, sizeof dv, &g->hdevice))) return step_fail(g, e, "device");
  bg_nv_subdevice_alloc sd = {0};
  if ((e = bg_nv_rm_alloc(&g->rm, g->hdevice, NV20_SUBDEVICE_0, &sd, sizeof sd, &g->hsubdevice)))
    return step_fail(g, e, "subdevice");
  /* Only the hDma of RM_MAP_MEMORY_DMA, which UVM's mappings make unnecessary: optional (reference section 9). */
  bg_nv_memory_virtual_alloc vm = {.limit = 0x1ffffffffffffull};
  if (bg_nv_rm_alloc(&g->rm, g->hdevice, NV01_MEMORY_VIRTUAL, &vm, sizeof vm, &g->hvirtmem) == 0) g->have_virtmem = true;
  else BG_LOG(1, "%s: %s; buffers are mapped through UVM only", g->name, bg_last_error());
  if ((e = class_list(g))) return step_fail(g, e, "class list");
  if ((e = usermode(g))) return step_fail(g, e, "usermode page");
  bg_nv2080_perf_boost pb = {.flags = NV2080_PERF_BOOST_FLAGS_CUDA_MAX, .duration = NV2080_PERF_BOOST_DURATION_INFINITE};
  if (bg_nv_rm_control(&g->rm, g->hsubdevice, NV2080_CTRL_CMD_PERF_BOOST, &pb, sizeof pb) == 0) g->perf_boost = true;
  else BG_LOG(1, "%s: %s (clocks stay as the driver sets them)", g->name, bg_last_error());
  if ((e = vaspace(g))) return step_fail(g, e, "VA space");
  if ((e = gid(g))) return step_fail(g, e, "GPU UUID");
  if (!g->pci && (e = uvm_register(g))) return step_fail(g, e, "UVM registration");
  bg_nv_channel_group_alloc tg = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
  if ((e = bg_nv_rm_alloc(&g->rm, g->hdevice, KEPLER_CHANNEL_GROUP_A, &tg, sizeof tg, &g->htsg)))
    return step_fail(g, e, "channel group");
  if ((e = bg_nv_mem_alloc(g, NV_GPFIFO_AREA_SIZE, BG_BUF_CPU_ACCESS | BG_BUF_CONTIGUOUS | BG_BUF_ZERO, &g->gpfifo_area)))
    return step_fail(g, e, "GPFIFO area");
  g->hgpfifo_area = ((const nv_alloc *)g->gpfifo_area.meta)->hmem;
  bg_nv_ctxshare_alloc cs = {.hVASpace = g->hvaspace, .flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC};
  if ((e = bg_nv_rm_alloc(&g->rm, g->htsg, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &g->hctxshare)))
    return step_fail(g, e, "context share");
  if ((e = channel(g, BG_QUEUE_COMPUTE, 0))) return step_fail(g, e, "compute channel");
  if ((e = channel(g, BG_QUEUE_COPY, NV_GPFIFO_AREA_SIZE / 2))) return step_fail(g, e, "copy channel");
  uint8_t sched[8] = {1}; /* bEnable = 1, bSkipSubmit = 0 (, bSkipEnable = 0 from 580 on) */
  if ((e = bg_nv_rm_control(&g->rm, g->htsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, sched, g->abi.gpfifo_schedule_size)))
    return step_fail(g, e, "GPFIFO schedule");
  if ((e = gr_info(g))) return step_fail(g, e, "GR info");
  return 0;
}

nv_gpu *bg_nv_gpu_new(const bg_nv_sys *sys, int index, const char *name_prefix) {
  nv_gpu *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&g->lock, &ma);
  pthread_mutexattr_destroy(&ma);
  g->sys = sys;
  g->index = index;
  g->ctl_fd = g->gpu_fd = g->uvm_fd = g->uvm_fd2 = g->usermode_fd = -1;
  snprintf(g->key, sizeof g->key, "%s:%d", name_prefix ? name_prefix : "NVK", index);
  snprintf(g->name, sizeof g->name, "%s GPU %d", name_prefix ? name_prefix : "NVK", index);
  return g;
}

int bg_nv_gpu_open(const bg_nv_sys *sys, int index, const char *name_prefix, nv_gpu **out) {
  *out = NULL;
  if (!sys || index < 0) return bg_error(BG_EINVAL, "nv: open: no system-call table or negative index %d", index);
  nv_gpu *g = bg_nv_gpu_new(sys, index, name_prefix);
  if (!g) return bg_error(BG_ENOMEM, "nv: out of host memory");
  int e = open_card(g, index);
  if (e == 0) e = bg_nv_gpu_objects(g);
  if (e) {
    bg_nv_gpu_close(g);
    return e;
  }
  BG_LOG(1, "%s: driver %s (%s), %s %s, sm_%u, QMD v%d", g->name, g->ver.text, g->version_source, g->cls.generation,
         bg_nv_class_name(g->cls.compute), g->sm, g->cls.qmd_version);
  *out = g;
  return 0;
}

/* RM_FREE that only logs (close never stops half-way). */
static void rm_free(nv_gpu *g, uint32_t parent, uint32_t *h) {
  if (!*h) return;
  if (bg_nv_rm_free(&g->rm, parent, *h)) BG_LOG(1, "%s: close: %s", g->name, bg_last_error());
  *h = 0;
}

static void close_fd(nv_gpu *g, int *fd) {
  if (*fd >= 0) g->sys->close(g->sys->ctx, *fd);
  *fd = -1;
}

static void channel_free(nv_gpu *g, bg_queue_hw *q) {
  if (!q) return;
  if (q->kind == BG_QUEUE_COMPUTE) rm_free(g, g->hdevice, &g->hdebugger); /* it names the compute object */
  rm_free(g, q->hchannel, &q->hengine);
  rm_free(g, g->htsg, &q->hchannel); /* UVM drops the channel's registration with it */
  if (q->uvm_base) bg_nv_va_free(q->uvm_base, NV_UVM_CHANNEL_RANGE);
  if (q->cmdq.meta) bg_nv_mem_free(g, &q->cmdq);
  if (q->notifier.meta) bg_nv_mem_free(g, &q->notifier);
  free(q->entry_end);
  free(q);
}

void bg_nv_gpu_close(nv_gpu *g) {
  if (!g) return;
  for (int k = 0; k < 2; k++) {
    channel_free(g, g->q[k]);
    g->q[k] = NULL;
  }
  rm_free(g, g->htsg, &g->hctxshare);
  rm_free(g, g->hdevice, &g->htsg);
  if (g->local_mem.meta) bg_nv_mem_free(g, &g->local_mem);
  if (g->staging.meta) bg_nv_mem_free(g, &g->staging);
  if (g->gpfifo_area.meta) bg_nv_mem_free(g, &g->gpfifo_area);
  g->hgpfifo_area = 0;
  if (g->uvm_gpu_registered) {
    bg_nv_uvm_unregister_gpu ug = {0};
    memcpy(ug.gpu_uuid.uuid, g->uuid, 16);
    if (uvm(g, g->uvm_fd, NV_UVM_UNREGISTER_GPU, "UVM_UNREGISTER_GPU", &ug, sizeof ug,
            offsetof(bg_nv_uvm_unregister_gpu, rmStatus)))
      BG_LOG(1, "%s: close: %s", g->name, bg_last_error());
    g->uvm_gpu_registered = false;
  }
  rm_free(g, g->hdevice, &g->hvaspace);
  if (g->usermode) g->sys->munmap(g->sys->ctx, (void *)(uintptr_t)g->usermode, NV_USERMODE_SIZE);
  g->usermode = NULL;
  rm_free(g, g->hsubdevice, &g->husermode);
  close_fd(g, &g->usermode_fd);
  rm_free(g, g->hdevice, &g->hvirtmem);
  rm_free(g, g->hdevice, &g->hsubdevice);
  rm_free(g, g->rm.root, &g->hdevice);
  if (g->rm.root) {
    uint32_t root = g->rm.root;
    if (bg_nv_rm_free(&g->rm, 0, root)) BG_LOG(1, "%s: close: %s", g->name, bg_last_error());
  }
  close_fd(g, &g->gpu_fd);
  close_fd(g, &g->uvm_fd2);
  close_fd(g, &g->uvm_fd);
  close_fd(g, &g->ctl_fd);
  if (g->pci) bg_nv_pci_gpu_fini(g); /* golden context, GSP-RM unload, the device */
  pthread_mutex_destroy(&g->lock);
  free(g);
}
