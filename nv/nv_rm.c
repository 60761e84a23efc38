/* nv/nv_rm.c: RM escape and UVM ioctl wrappers (nv_rm.h). The escapes and their parameter blocks are those of
 * open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/escape.c (RmIoctl): the request's size field must equal
 * the block's size, and RM's verdict comes back in the block's status field while ioctl() returns 0. */
#include "nv_rm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "baregpu/error.h"
#include "nv_classes.h"
#include "nv_status.h"

static int sys_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  (void)ctx;
  int r;
  do r = ioctl(fd, request, arg);
  while (r < 0 && errno == EINTR);
  return r;
}

const bg_nv_ioctl_ops bg_nv_sys_ioctl = {sys_ioctl, NULL};

void bg_nv_rm_init(bg_nv_rm *rm, int ctl_fd, const bg_nv_ioctl_ops *ops) {
  memset(rm, 0, sizeof *rm);
  rm->ops = ops ? *ops : bg_nv_sys_ioctl;
  rm->ctl_fd = ctl_fd;
}

void bg_nv_rm_init_rpc(bg_nv_rm *rm, const bg_nv_rm_rpc *rpc) {
  bg_nv_rm_init(rm, -1, NULL);
  rm->rpc = rpc;
}

/* An escape only the kernel module has, asked of RM over RPC. */
static int no_escape(const char *what) {
  return bg_error(BG_ENOTSUP, "nv: %s: the kernel module's escape; RM over GSP RPC has no such call", what);
}

int bg_nv_rm_new_handle(bg_nv_rm *rm, uint32_t *handle) {
  if (rm->next_handle >= NV_RM_HANDLE_COUNT - 1)
    return bg_error(BG_ENOMEM, "nv: client 0x%x used up its %u object handles (0x%x..0x%x)", rm->root,
                    NV_RM_HANDLE_COUNT - 1, NV_RM_HANDLE_BASE + 1, NV_RM_HANDLE_BASE + NV_RM_HANDLE_COUNT - 1);
  *handle = NV_RM_HANDLE_BASE + ++rm->next_handle;
  return 0;
}

static const struct {
  uint32_t cmd;
  const char *name;
} ctrl_names[] = {
    {NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2"},
    {NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2"},
    {NV0080_CTRL_CMD_GPU_GET_CLASSLIST, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST"},
    {NV2080_CTRL_CMD_GPU_GET_GID_INFO, "NV2080_CTRL_CMD_GPU_GET_GID_INFO"},
    {NV2080_CTRL_CMD_GR_GET_INFO, "NV2080_CTRL_CMD_GR_GET_INFO"},
    {NV2080_CTRL_CMD_PERF_BOOST, "NV2080_CTRL_CMD_PERF_BOOST"},
    {NV2080_CTRL_CMD_GPU_GET_NAME_STRING, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING"},
    {NV2080_CTRL_CMD_FB_GET_INFO_V2, "NV2080_CTRL_CMD_FB_GET_INFO_V2"},
    {NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE, "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE"},
    {NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE"},
    {NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN"},
};

static const char *ctrl_name(uint32_t cmd) {
  for (size_t i = 0; i < sizeof ctrl_names / sizeof ctrl_names[0]; i++)
    if (ctrl_names[i].cmd == cmd) return ctrl_names[i].name;
  return "control";
}

static const char *class_name(uint32_t cls) {
  const char *n = bg_nv_class_name(cls);
  return n ? n : "unnamed class";
}

/* Sends one escape of `size` bytes; on failure records "<what> failed: ioctl 0x.. on fd N: <strerror>". */
static int do_ioctl(const bg_nv_ioctl_ops *ops, int fd, uint32_t request, void *arg, const char *what) {
  if (ops->ioctl(ops->ctx, fd, request, arg) < 0) {
    int e = errno;
    return bg_error(e == EPERM || e == EACCES ? BG_EPERM : BG_EIO, "nv: %s failed: ioctl 0x%x on fd %d: %s", what,
                    (unsigned)request, fd, strerror(e));
  }
  return 0;
}

/* RM's verdict: "<what> failed: NV_ERR_... (0x..)". */
static int rm_status(const char *what, uint32_t status) {
  if (status == NV_OK) return 0;
  int code = status == NV_ERR_INSUFFICIENT_PERMISSIONS ? BG_EPERM
             : status == NV_ERR_NOT_SUPPORTED || status == NV_ERR_INVALID_CLASS ? BG_ENOTSUP
                                                                                : BG_EIO;
  return bg_error(code, "nv: %s failed: %s (0x%x)", what, bg_nv_status_str(status), status);
}

static int rm_send(bg_nv_rm *rm, int fd, uint32_t nr, void *arg, size_t size, const uint32_t *status, const char *what) {
  int r = do_ioctl(&rm->ops, fd, NV_IOWR(nr, size), arg, what);
  return r ? r : rm_status(what, *status);
}

int bg_nv_rm_alloc_root(bg_nv_rm *rm) {
  if (rm->rpc) {
    /* NV0000_ALLOC_PARAMETERS (120 bytes, zeroed): the client handle is the host's (tinygrad PCIIface.__init__) */
    uint8_t params[120] = {0};
    int r = rm->rpc->alloc(rm->rpc->ctx, rm->rpc->client, 0, rm->rpc->client, NV01_ROOT_CLIENT, params, sizeof params);
    if (r) return bg_error_context(r, "nv: RM_ALLOC of class 0x41 (NV01_ROOT_CLIENT) over RPC: ");
    rm->root = rm->rpc->client;
    rm->next_handle = 0;
    return 0;
  }
  bg_nv_os21_alloc a = {.hClass = NV01_ROOT_CLIENT};
  int r = rm_send(rm, rm->ctl_fd, NV_ESC_RM_ALLOC, &a, sizeof a, &a.status, "RM_ALLOC of class 0x41 (NV01_ROOT_CLIENT)");
  if (r) return r;
  if (a.hObjectNew == 0) return bg_error(BG_EIO, "nv: RM_ALLOC of class 0x41 (NV01_ROOT_CLIENT) returned handle 0");
  rm->root = a.hObjectNew;
  rm->next_handle = 0;
  return 0;
}

static int check_params(const char *what, const void *params, uint32_t size) {
  if ((params == NULL) != (size == 0))
    return bg_error(BG_EINVAL, "nv: %s: params %s with paramsSize %u (a parameter block needs its exact size)", what,
                    params ? "given" : "NULL", size);
  return 0;
}

int bg_nv_rm_alloc(bg_nv_rm *rm, uint32_t parent, uint32_t cls, void *params, uint32_t size, uint32_t *handle) {
  char what[128];
  snprintf(what, sizeof what, "RM_ALLOC of class 0x%x (%s) under 0x%x", cls, class_name(cls), parent);
  if (!rm->root) return bg_error(BG_EINVAL, "nv: %s: no root client (bg_nv_rm_alloc_root first)", what);
  int r = check_params(what, params, size);
  if (r) return r;
  uint32_t h = 0;
  if ((r = bg_nv_rm_new_handle(rm, &h))) return r;
  if (rm->rpc) {
    if ((r = rm->rpc->alloc(rm->rpc->ctx, rm->root, parent, h, cls, params, size))) return bg_error_context(r, "nv: %s: ", what);
    *handle = h;
    return 0;
  }
  bg_nv_os21_alloc a = {.hRoot = rm->root, .hObjectParent = parent, .hObjectNew = h, .hClass = cls,
                     .pAllocParms = (uint64_t)(uintptr_t)params, .paramsSize = size};
  if ((r = rm_send(rm, rm->ctl_fd, NV_ESC_RM_ALLOC, &a, sizeof a, &a.status, what))) return r;
  if (a.hObjectNew != h)
    return bg_error(BG_EIO, "nv: %s: RM answered handle 0x%x for the requested 0x%x", what, a.hObjectNew, h);
  *handle = h;
  return 0;
}

int bg_nv_rm_control(bg_nv_rm *rm, uint32_t object, uint32_t cmd, void *params, uint32_t size) {
  char what[160];
  snprintf(what, sizeof what, "RM_CONTROL 0x%x (%s) on 0x%x", cmd, ctrl_name(cmd), object);
  int r = check_params(what, params, size);
  if (r) return r;
  if (rm->rpc) {
    r = rm->rpc->control(rm->rpc->ctx, rm->root, object, cmd, params, size);
    return r ? bg_error_context(r, "nv: %s: ", what) : 0;
  }
  bg_nv_os54_control c = {.hClient = rm->root, .hObject = object, .cmd = cmd, .params = (uint64_t)(uintptr_t)params,
                       .paramsSize = size};
  return rm_send(rm, rm->ctl_fd, NV_ESC_RM_CONTROL, &c, sizeof c, &c.status, what);
}

int bg_nv_rm_free(bg_nv_rm *rm, uint32_t parent, uint32_t object) {
  char what[96];
  snprintf(what, sizeof what, "RM_FREE of 0x%x under 0x%x", object, parent);
  if (rm->rpc) {
    /* the client itself is freed as {client, 0, client} (rpc_free_v) */
    int r = rm->rpc->free(rm->rpc->ctx, rm->root, parent, object);
    if (r) return bg_error_context(r, "nv: %s: ", what);
    if (parent == 0 && object == rm->root) rm->root = 0;
    return 0;
  }
  bg_nv_os00_free f = {.hRoot = rm->root, .hObjectParent = parent, .hObjectOld = object};
  int r = rm_send(rm, rm->ctl_fd, NV_ESC_RM_FREE, &f, sizeof f, &f.status, what);
  if (r == 0 && parent == 0 && object == rm->root) rm->root = 0;
  return r;
}

int bg_nv_rm_map_memory(bg_nv_rm *rm, int map_fd, uint32_t device, uint32_t memory, uint64_t offset, uint64_t length,
                     uint32_t flags, uint64_t *linear) {
  if (rm->rpc) return no_escape("RM_MAP_MEMORY");
  char what[96];
  snprintf(what, sizeof what, "RM_MAP_MEMORY of 0x%x on device 0x%x", memory, device);
  bg_nv_os33_with_fd m = {.params = {.hClient = rm->root, .hDevice = device, .hMemory = memory, .offset = offset,
                                  .length = length, .flags = flags},
                       .fd = map_fd};
  int r = rm_send(rm, rm->ctl_fd, NV_ESC_RM_MAP_MEMORY, &m, sizeof m, &m.params.status, what);
  if (r == 0 && linear) *linear = m.params.pLinearAddress;
  return r;
}

int bg_nv_rm_unmap_memory(bg_nv_rm *rm, uint32_t device, uint32_t memory, uint64_t linear, uint32_t flags) {
  if (rm->rpc) return no_escape("RM_UNMAP_MEMORY");
  char what[96];
  snprintf(what, sizeof what, "RM_UNMAP_MEMORY of 0x%x on device 0x%x", memory, device);
  bg_nv_os34_unmap_memory u = {.hClient = rm->root, .hDevice = device, .hMemory = memory, .pLinearAddress = linear,
                            .flags = flags};
  return rm_send(rm, rm->ctl_fd, NV_ESC_RM_UNMAP_MEMORY, &u, sizeof u, &u.status, what);
}

int bg_nv_rm_alloc_memory(bg_nv_rm *rm, int gpu_fd, uint32_t parent, uint32_t cls, uint32_t flags, uint64_t va,
                       uint64_t size, uint32_t *handle) {
  if (rm->rpc) return no_escape("RM_ALLOC_MEMORY");
  char what[128];
  snprintf(what, sizeof what, "RM_ALLOC_MEMORY of class 0x%x (%s) under 0x%x", cls, class_name(cls), parent);
  if (size == 0) return bg_error(BG_EINVAL, "nv: %s: size 0", what);
  uint32_t h = 0;
  int r = bg_nv_rm_new_handle(rm, &h);
  if (r) return r;
  bg_nv_os02_with_fd a = {.params = {.hRoot = rm->root, .hObjectParent = parent, .hObjectNew = h, .hClass = cls,
                                  .flags = flags, .pMemory = va, .limit = size - 1},
                       .fd = -1};
  if ((r = rm_send(rm, gpu_fd, NV_ESC_RM_ALLOC_MEMORY, &a, sizeof a, &a.params.status, what))) return r;
  *handle = h;
  return 0;
}

int bg_nv_rm_map_memory_dma(bg_nv_rm *rm, const bg_nv_abi_layout *abi, uint32_t device, uint32_t dma, uint32_t memory,
                         uint64_t offset, uint64_t length, uint32_t flags, uint64_t *dma_offset) {
  if (rm->rpc) return no_escape("RM_MAP_MEMORY_DMA");
  char what[128];
  snprintf(what, sizeof what, "RM_MAP_MEMORY_DMA of 0x%x into 0x%x", memory, dma);
  if (!abi || !dma_offset) return bg_error(BG_EINVAL, "nv: %s: NULL layout or dma_offset", what);
  union {
    bg_nv_os46_map_dma_570 v570;
    bg_nv_os46_map_dma_580 v580;
  } p;
  memset(&p, 0, sizeof p);
  /* the fields before flags are common to both layouts */
  p.v580.hClient = rm->root, p.v580.hDevice = device, p.v580.hDma = dma, p.v580.hMemory = memory;
  p.v580.offset = offset, p.v580.length = length, p.v580.flags = flags;
  uint8_t *b = (uint8_t *)&p;
  memcpy(b + abi->os46_dma_offset_off, dma_offset, sizeof *dma_offset);
  uint32_t status;
  int r = do_ioctl(&rm->ops, rm->ctl_fd, NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, abi->os46_size), &p, what);
  if (r) return r;
  memcpy(&status, b + abi->os46_status_off, sizeof status);
  if ((r = rm_status(what, status))) return r;
  memcpy(dma_offset, b + abi->os46_dma_offset_off, sizeof *dma_offset);
  return 0;
}

int bg_nv_rm_query_version(bg_nv_rm *rm, bg_nv_driver_version *out) {
  if (rm->rpc) return no_escape("NV_ESC_CHECK_VERSION_STR");
  bg_nv_rm_api_version v = {.cmd = NV_RM_API_VERSION_CMD_QUERY};
  const char *what = "NV_ESC_CHECK_VERSION_STR (query)";
  int r = do_ioctl(&rm->ops, rm->ctl_fd, NV_IOWR(NV_ESC_CHECK_VERSION_STR, sizeof v), &v, what);
  if (r) return r;
  if (v.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED)
    return bg_error(BG_EIO, "nv: %s: the driver did not recognise the request (reply %u)", what, v.reply);
  if (!memchr(v.versionString, '\0', sizeof v.versionString))
    return bg_error(BG_EFORMAT, "nv: %s: version string is not terminated within %d bytes", what,
                    NV_RM_API_VERSION_STRING_LENGTH);
  return bg_nv_version_parse(v.versionString, out);
}

int bg_nv_uvm_ioctl(const bg_nv_ioctl_ops *ops, int uvm_fd, uint32_t request, const char *name, void *params, size_t size,
                 size_t status_off) {
  if (!ops) ops = &bg_nv_sys_ioctl;
  if (!params || status_off + sizeof(uint32_t) > size)
    return bg_error(BG_EINVAL, "nv: %s: rmStatus at %zu is outside the %zu-byte parameter block", name, status_off, size);
  char what[96];
  snprintf(what, sizeof what, "%s (UVM ioctl %u)", name, request);
  int r = do_ioctl(ops, uvm_fd, request, params, what);
  if (r) return r;
  uint32_t status;
  memcpy(&status, (const uint8_t *)params + status_off, sizeof status);
  return rm_status(what, status);
}
